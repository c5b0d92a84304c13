#!/usr/bin/env bash
# tests/vm/cgroup2.sh - warden's limits and its freeze and kill on a pure
# cgroup v2 host (every controller in the unified hierarchy, as Debian 12
# boots), in a qemu guest, for hosts like a cgroup-hybrid one whose memory,
# pids and cpu controllers are bound to cgroup v1 so that warden's v2 paths
# (memory.max, memory.oom.group, pids.max, cpu.max, memory.events and
# pids.events, cgroup.freeze, cgroup.kill, the delegated user@UID.service
# subtree) never run there.
#
# Manual, not part of CI: needs root and, under TCG (no /dev/kvm), some
# 10-20 minutes. It shares the kernel (Debian 12's 6.1, unpacked from its
# package) and the debootstrapped root with tests/vm/bpf-lsm.sh (both kept
# in $VMDIR, default /var/tmp/warden-bpf-vm; made there when missing, about
# 300 MB of downloads); this run's initramfs and console go to
# $VMDIR/cgroup2. The tree must be built (build/warden,
# build/tests/helpers/wprobe).
#
# The guest: cgroup2 alone at /sys/fs/cgroup (nsdelegate,
# memory_recursiveprot, as systemd mounts it), cpu, memory and pids enabled
# in the root's cgroup.subtree_control and down to the user slices. Then
# the integration tests matching --only (default 'limits|control'):
#  - as root, from /user.slice/user-0.slice/session-1.scope (where a root
#    login lands): warden makes the session's cgroup at the hierarchy's root;
#  - as an unprivileged user (wardenci, uid 1000), from
#    /user.slice/user-1000.slice/user@1000.service/app.slice/tests.scope,
#    user@1000.service delegated the way systemd delegates it (the directory
#    and its cgroup.procs, cgroup.threads and cgroup.subtree_control owned
#    by the user, the controllers enabled in its parent, none in it, and
#    what is below it the user's): warden finds it from /proc/self/cgroup
#    and makes the session's cgroup in it.
# The guest's /tmp (where the tests make their workspaces) is an ext4 file
# system on a loop device, as root's idmapped mount of the workspace needs
# (tmpfs takes one only from 6.3); --ext4-tmp MB sets its size (default
# 1024), 0 leaves /tmp a tmpfs.
# Each run's ok/not ok lines are printed (with --verbose's log of a failure
# and the notes of every test) and summed up at the end; exit 0 when both
# passed entirely. Under TCG warden is some 20 times slower than natively:
# WARDEN_TIMEOUT (each warden run's limit in the tests) is 300 s and
# WARDEN_EXEC_KERNEL_WAIT_MS (root's in-kernel exec checks, as in
# tests/vm/bpf-lsm.sh) 2000.
#
#   tests/vm/cgroup2.sh [--only REGEX] [--mem MB] [--smp N] [--timeout S]
#                       [--ext4-tmp MB] [--fresh] [--shell] [--no-root] [--no-user]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VMDIR=${VMDIR:-/var/tmp/warden-bpf-vm}
only='limits|control' mem=4096 smp=2 timeout=3600 fresh= shell= as_root=1 as_user=1 ext4_tmp=1024
while (($#)); do
	case $1 in
	--only) only=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--fresh) fresh=1; shift ;;
	--shell) shell=1; shift ;;
	--no-root) as_root=; shift ;;
	--no-user) as_user=; shift ;;
	--ext4-tmp) ext4_tmp=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "cgroup2.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
VM_NAME=cgroup2.sh VM_RUN=$VMDIR/cgroup2
# shellcheck source=tests/vm/lib.sh disable=SC2034 # VM_* are read by lib.sh
source "$repo/tests/vm/lib.sh"

vm_host_ready
[[ -n $fresh ]] && rm -rf "$VMDIR"
mkdir -p "$VMDIR" "$VM_RUN"
vm_kernel
vm_kernel_has CONFIG_CGROUPS=y CONFIG_MEMCG=y CONFIG_CGROUP_PIDS=y CONFIG_CFS_BANDWIDTH=y
vm_rootfs
((ext4_tmp > 0)) && vm_ext4_modules

wt=300 wait_ms=2000
[[ $VM_ACCEL == kvm ]] && wt=60 wait_ms=
started=$(date +%s)

# ---- the guest's second stage ----
{
	echo '#!/bin/bash'
	echo "# stage 2: the guest's file systems, the cgroups, the tests as root and as uid 1000"
	vm_guest_mounts nsdelegate,memory_recursiveprot
	((ext4_tmp > 0)) && vm_guest_ext4_tmp "$ext4_tmp"
	cat <<EOF
mount -t tmpfs run /run
hostname warden-vm
sysctl -qw kernel.unprivileged_userns_clone=1 2>/dev/null
export WARDEN_TIMEOUT=$wt
${wait_ms:+export WARDEN_EXEC_KERNEL_WAIT_MS=$wait_ms}
cg=/sys/fs/cgroup
on='+cpu +memory +pids'
echo "=== GUEST BEGIN"
echo "=== uname: \$(uname -r); cgroup mounts: \$(awk '\$9 ~ /^cgroup/ { print \$5, \$9, \$6 }' /proc/self/mountinfo | tr '\n' ';')"
# as systemd: the controllers enabled down to the slices, a leaf for each login
echo "\$on" >\$cg/cgroup.subtree_control
mkdir -p \$cg/user.slice/user-0.slice/session-1.scope \$cg/user.slice/user-1000.slice/user@1000.service
echo "\$on" >\$cg/user.slice/cgroup.subtree_control
echo "\$on" >\$cg/user.slice/user-0.slice/cgroup.subtree_control
echo "\$on" >\$cg/user.slice/user-1000.slice/cgroup.subtree_control
u=\$cg/user.slice/user-1000.slice/user@1000.service
mkdir -p \$u/app.slice/tests.scope
chown 1000:1000 \$u \$u/cgroup.procs \$u/cgroup.threads \$u/cgroup.subtree_control
chown -R 1000:1000 \$u/app.slice
echo "=== root cgroup: controllers '\$(cat \$cg/cgroup.controllers)', subtree_control '\$(cat \$cg/cgroup.subtree_control)'"
echo "=== user@1000.service: controllers '\$(cat \$u/cgroup.controllers)', subtree_control '\$(cat \$u/cgroup.subtree_control)'"
echo "=== owners in user@1000.service: \$(cd \$u && stat -c '%n %u' . cgroup.procs cgroup.threads cgroup.subtree_control cgroup.freeze | tr '\n' ' ')"
cd $repo

# the tests' log: the ok/not ok lines as they come, the notes of each test
run_tests() {
	local out=\$1; shift
	"\$@" 2>&1 | tee "\$out"
	echo "=== tests rc=\${PIPESTATUS[0]}"
	sed -n 's/^#   kept: T_TMP=\([^ ]*\) WS=.*/\1/p' "\$out" | while read -r tmp; do
		grep -q '^# ' "\$tmp/.log" 2>/dev/null || continue
		echo "|  notes in \$tmp:"
		grep '^# ' "\$tmp/.log" | sed 's/^/|    /' | cut -c 1-400
	done
}

if [ -n '$as_root' ]; then
	echo "=== as root, in /user.slice/user-0.slice/session-1.scope: warden doctor"
	(
		echo \$BASHPID >\$cg/user.slice/user-0.slice/session-1.scope/cgroup.procs
		build/warden doctor 2>&1 | grep -iE 'cgroup|limit|  (pids|memory|cpu|tmp|home) '
		echo "=== tests as root: --only '$only'"
		run_tests /tmp/root.out bash tests/integration/run.sh --warden build/warden \
			--wprobe build/tests/helpers/wprobe --only '$only' --verbose --keep
	)
	echo "=== ROOT SUMMARY: \$(grep -aE '^[0-9]+ passed, [0-9]+ failed' /tmp/root.out | tail -n 1)"
fi

if [ -n '$as_user' ]; then
	echo 'wardenci:x:1000:1000:warden CI:/home/wardenci:/bin/bash' >>/etc/passwd
	echo 'wardenci:x:1000:' >>/etc/group
	mkdir -p /home/wardenci && chown 1000:1000 /home/wardenci
	d=/tmp/warden-ci && mkdir -p \$d
	cp build/warden build/tests/helpers/wprobe \$d/
	cp -r tests/integration tests/agents \$d/
	[ -d doc ] && cp -r doc \$d/doc
	chmod -R a+rX \$d
	asuser() {
		setpriv --reuid=1000 --regid=1000 --clear-groups env -i \
			PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
			HOME=/home/wardenci LANG=C.UTF-8 WARDEN_TIMEOUT=$wt \
			${wait_ms:+WARDEN_EXEC_KERNEL_WAIT_MS=$wait_ms} "\$@" </dev/null
	}
	echo "=== as uid 1000, in \${u#\$cg}/app.slice/tests.scope: warden doctor"
	(
		echo \$BASHPID >\$u/app.slice/tests.scope/cgroup.procs
		asuser \$d/warden doctor 2>&1 | grep -iE 'cgroup|limit|  (pids|memory|cpu|tmp|home) '
		echo "=== tests as uid 1000: --only '$only'"
		run_tests /tmp/user.out asuser bash \$d/integration/run.sh --warden \$d/warden \
			--wprobe \$d/wprobe --only '$only' --verbose --keep
	)
	echo "=== USER SUMMARY: \$(grep -aE '^[0-9]+ passed, [0-9]+ failed' /tmp/user.out | tail -n 1)"
	echo "=== left in user@1000.service: \$(cd \$u && find . -mindepth 1 -maxdepth 1 -type d | tr '\n' ' ')"
fi
echo "=== left at the root: \$(cd \$cg && find . -mindepth 1 -maxdepth 1 -type d -name 'warden-*' | tr '\n' ' ')"
if [ -n '$shell' ]; then
	echo "=== a shell (exit to power off)"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi
EOF
	vm_guest_end
} >"$VM_RUN/stage2.sh"
vm_stage "$VM_RUN/stage2.sh"
rm -f "$VM_RUN/stage2.sh"
vm_pack

# ---- the boot (the default lsm= of bpf-lsm.sh: landlock for warden) ----
vm_boot "$mem" "$smp" "$timeout" "$shell" "lsm=lockdown,capability,landlock,bpf"
vm_summaries >/dev/null
vm_say "the run took $(($(date +%s) - started)) s ($VM_ACCEL)"
echo "---- results ----"
grep -aE '^=== tests as|^(not )?ok - |^[0-9]+ passed, [0-9]+ failed' "$VM_RUN/console.log" | tr -d '\r' | cut -c 1-300
rc=0
for who in ROOT USER; do
	line=$(grep -a "^=== $who SUMMARY:" "$VM_RUN/console.log" | tr -d '\r') || continue
	vm_say "${line#=== }"
	[[ $line =~ ([0-9]+)\ passed,\ 0\ failed ]] && ((BASH_REMATCH[1] > 0)) || rc=1
done
exit "$rc"
