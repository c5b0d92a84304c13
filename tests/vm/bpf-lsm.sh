#!/usr/bin/env bash
# tests/vm/bpf-lsm.sh - the in-kernel exec enforcement (BPF LSM,
# src/bpf/exec_lsm.bpf.c) tried on a kernel that runs BPF LSM programs, in a
# qemu guest, for hosts whose own kernel refuses them (no BPF LSM in its lsm=
# list, no ftrace for the trampolines).
#
# Manual, not part of CI: it downloads about 300 MB, needs root, and under
# TCG (no /dev/kvm) takes 10-20 minutes. What it needs: a Debian 12 host
# (apt-get; it installs qemu-system-x86 and debootstrap), root, and the tree
# built (build/warden, build/tests/helpers/wprobe; the object compiled with
# CO-RE, so the 6.1 guest runs what this host built).
#
# What it does: Debian 12's kernel (6.1, CONFIG_BPF_LSM, BTF) unpacked from
# its package; a minimal Debian 12 (debootstrap, with bpftool, python3, gcc,
# bubblewrap, ninja and warden's run-time libraries) plus this tree at the
# same path, packed as the guest's initramfs (no modules needed: the root
# is copied into a tmpfs, as pivot_root cannot leave the initramfs); booted
# with lsm=...,bpf; the guest runs `bpftool feature probe`, `warden doctor`,
# the integration tests matching --only (default bpfexec) and, with
# --bench, bench/exec --kernel; its console is printed and kept in
# $VMDIR/console.log. Exit 0 when the guest's tests all passed.
#
# Artefacts live in $VMDIR (default /var/tmp/warden-bpf-vm), outside git;
# the kernel and the root are kept between runs (--fresh rebuilds them).
#
# Under TCG warden answers the kernel some 20 times slower than natively (a
# verdict took up to a second: hashing libc), past the kernel's 50 ms wait,
# so the guest runs warden with WARDEN_EXEC_KERNEL_WAIT_MS=2000 unless
# --wait-ms says otherwise (with KVM: the default wait).
#
#   tests/vm/bpf-lsm.sh [--only REGEX] [--bench] [--bench-execs N] [--mem MB]
#                       [--smp N] [--timeout S] [--wait-ms MS] [--fresh] [--shell]
#                       [--lsm LIST]   (the guest's lsm=; without bpf: the same
#                                       tests with warden's own enforcement)
#                       [--ext4-tmp MB] (the guest's /tmp an ext4 file system of
#                                       MB on a loop device, overlayfs loaded:
#                                       for root's idmapped mounts, which tmpfs
#                                       takes only from 6.3, and --review;
#                                       e.g. --only checkpoint_review --ext4-tmp 1024;
#                                       warden's cache is put there too, and
#                                       --bench needs it now that root's
#                                       sessions idmap the workspace)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VMDIR=${VMDIR:-/var/tmp/warden-bpf-vm}
only=bpfexec bench= bench_execs=500 mem=4096 smp=2 timeout=3600 fresh= shell= wait_ms= lsm=lockdown,capability,landlock,bpf ext4_tmp=
while (($#)); do
	case $1 in
	--only) only=${2:?}; shift 2 ;;
	--bench) bench=1; shift ;;
	--bench-execs) bench_execs=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--fresh) fresh=1; shift ;;
	--shell) shell=1; shift ;;
	--wait-ms) wait_ms=${2:?}; shift 2 ;;
	--lsm) lsm=${2:?}; shift 2 ;;
	--ext4-tmp) ext4_tmp=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bpf-lsm.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
VM_NAME=bpf-lsm.sh VM_RUN=$VMDIR
# shellcheck source=tests/vm/lib.sh disable=SC2034 # VM_* are read by lib.sh
source "$repo/tests/vm/lib.sh"

vm_host_ready
grep -q '^#define WARDEN_BPF 1' "$repo/build/config.h" ||
	vm_die "this build has no BPF program (build/config.h: WARDEN_BPF is not 1)"

[[ -n $fresh ]] && rm -rf "$VMDIR"
mkdir -p "$VMDIR"
cd "$VMDIR"

vm_kernel
vm_kernel_has CONFIG_BPF_LSM=y CONFIG_DEBUG_INFO_BTF=y CONFIG_BPF_SYSCALL=y
vm_rootfs

[[ -n $ext4_tmp ]] && vm_ext4_modules

[[ -z $wait_ms && $VM_ACCEL == tcg ]] && wait_ms=2000

# ---- the guest's second stage: its file systems, then what was asked ----
{
	echo '#!/bin/bash'
	echo "# stage 2: the guest's file systems, then what bpf-lsm.sh asked for"
	vm_guest_mounts
	[[ -n $ext4_tmp ]] && vm_guest_ext4_tmp "$ext4_tmp"
	cat <<EOF
mount -t tmpfs run /run
echo "+cpu +memory +pids" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
hostname warden-vm
${wait_ms:+export WARDEN_EXEC_KERNEL_WAIT_MS=$wait_ms}
mkdir -p /root
cd $repo
echo "=== GUEST BEGIN"
echo "=== uname: \$(uname -r); WARDEN_EXEC_KERNEL_WAIT_MS=\${WARDEN_EXEC_KERNEL_WAIT_MS:-unset}"
echo "=== lsm: \$(cat /sys/kernel/security/lsm)"
echo "=== bpftool feature probe | grep lsm"
bpftool feature probe 2>&1 | grep -i lsm
echo "=== warden doctor"
WARDEN_BPF_DEBUG=1 build/warden doctor 2>&1
echo "=== doctor rc=\$?"
echo "=== one session with exec kernel on: its end's kernel stats"
printf 'exec kernel on\nexec deny sha256:%064d\n' 0 >/tmp/kernel.profile
# (in /tmp: as root the workspace is idmapped, which 6.1's tmpfs refuses)
mkdir -p /tmp/one-session
(cd /tmp/one-session && WARDEN_BPF_DEBUG=1 XDG_STATE_HOME=/tmp/state XDG_CACHE_HOME=/tmp/.cache $repo/build/warden run \
	--profile /tmp/kernel.profile -- sh -c 'echo RAN; /bin/true' 2>&1)
echo "=== session rc=\$?"
tail -n 1 /tmp/state/warden/*.jsonl 2>/dev/null | grep -o '"kernel":{[^}]*}'
echo "=== tests: --only '$only'"
bash tests/integration/run.sh --warden build/warden --wprobe build/tests/helpers/wprobe \
	--only '$only' --verbose --keep 2>&1 | tee /tmp/tests.out
echo "=== tests rc=\${PIPESTATUS[0]}"
# what the tests saw: each one's log, and the kernel's refusals it logged
sed -n 's/^#   kept: T_TMP=\([^ ]*\) WS=[^ ]* HOME=\([^ ]*\)\$/\1 \2/p' /tmp/tests.out |
while read -r tmp home; do
	echo "=== log of the test in \$tmp"
	sed 's/^/|  /' "\$tmp/.log" | head -n 120
	echo "|  its sessions' enforcement: \$(cat "\$home"/.local/state/warden/*.jsonl 2>/dev/null |
		grep '"event":"session.end"' | grep -o '"kernel":{"by":"[^"]*"' | sort | uniq -c | tr '\n' ' ')"
	cat "\$home"/.local/state/warden/*.jsonl 2>/dev/null | grep '"enforced_by":"bpf-lsm"' |
		sed 's/^/|  event: /' | cut -c 1-400 | head -n 10
	echo "|  the kernel's refusals by call, path and reason:"
	cat "\$home"/.local/state/warden/*.jsonl 2>/dev/null | grep '"enforced_by":"bpf-lsm"' |
		sed -E 's/.*"syscall":"([^"]*)".*"path":"([^"]*)".*"reason":"([^"]{0,90}).*/\1 \2: \3/' |
		sort | uniq -c | sed 's/^/|  /' | head -n 30
done
if [ -n '$bench' ]; then
	echo "=== bench/exec --kernel --execs $bench_execs"
	# (root's sessions idmap warden's cached /etc: with --ext4-tmp, kept there)
	${ext4_tmp:+XDG_CACHE_HOME=/tmp/.cache} bench/exec --kernel --execs $bench_execs --runs 3 2>&1
	echo "=== bench rc=\$?"
fi
if [ -n '$shell' ]; then
	echo "=== a shell (exit to power off)"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi
EOF
	vm_guest_end
} >"$VMDIR/stage2.sh"
vm_stage "$VMDIR/stage2.sh"
rm -f "$VMDIR/stage2.sh"
vm_pack

# ---- the boot ----
vm_boot "$mem" "$smp" "$timeout" "$shell" "lsm=$lsm"
summary=$(vm_summaries | tail -n 1)
[[ -n $summary ]] || vm_die "the guest's tests did not finish (see $VMDIR/console.log)"
[[ $summary =~ ^([0-9]+)\ passed,\ 0\ failed ]] && ((BASH_REMATCH[1] > 0)) ||
	vm_die "the guest's tests: $summary (see $VMDIR/console.log)"
vm_say "the guest's tests: $summary"
