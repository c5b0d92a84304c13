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
#                                       e.g. --only checkpoint_review --ext4-tmp 1024)
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
	-h | --help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bpf-lsm.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
say() { printf '# bpf-lsm.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

(($(id -u) == 0)) || die "needs root (debootstrap, the guest's files owned by root)"
[[ -x $repo/build/warden && -x $repo/build/tests/helpers/wprobe ]] ||
	die "build the tree first (scripts/build): no build/warden or build/tests/helpers/wprobe"
grep -q '^#define WARDEN_BPF 1' "$repo/build/config.h" ||
	die "this build has no BPF program (build/config.h: WARDEN_BPF is not 1)"

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v cpio >/dev/null || need+=(cpio)
if ((${#need[@]})); then
	say "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
fi

[[ -n $fresh ]] && rm -rf "$VMDIR"
mkdir -p "$VMDIR"
cd "$VMDIR"

# ---- the kernel: Debian 12's, unpacked (nothing installed in /boot) ----
if ! ls kernel/boot/vmlinuz-* >/dev/null 2>&1; then
	pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' |
		awk '{ print $1 }' | sort -V | tail -n 1)
	[[ -n $pkg ]] || die "no linux-image-6.1.0-*-amd64-unsigned package (apt-get update?)"
	say "kernel: $pkg"
	rm -f ./*.deb
	apt-get download "$pkg" >/dev/null 2>&1 || die "apt-get download $pkg failed"
	rm -rf kernel
	dpkg -x ./"$pkg"_*.deb kernel
	rm -f ./*.deb
fi
vmlinuz=$(ls kernel/boot/vmlinuz-* | head -n 1)
config=$(ls kernel/boot/config-* | head -n 1)
for opt in CONFIG_BPF_LSM=y CONFIG_DEBUG_INFO_BTF=y CONFIG_BPF_SYSCALL=y; do
	grep -qx "$opt" "$config" || die "the guest kernel lacks $opt"
done

# ---- the root: a minimal Debian 12 with what warden and the tests use ----
if [[ ! -f rootfs/.complete ]]; then
	rm -rf rootfs
	say "debootstrap (a few minutes)"
	debootstrap --variant=minbase \
		--include=libbpf1,libelf1,zlib1g,bpftool,python3,gcc,libc6-dev,ninja-build,bubblewrap,procps,git,strace \
		bookworm rootfs http://deb.debian.org/debian >debootstrap.log 2>&1 ||
		die "debootstrap failed: see $VMDIR/debootstrap.log"
	rm -rf rootfs/var/cache/apt/archives/*.deb rootfs/usr/share/doc rootfs/usr/share/man rootfs/usr/share/locale
	touch rootfs/.complete
fi
# warden's own run-time libraries, whatever this build links
missing=$(for f in "$repo/build/warden" "$repo/build/tests/helpers/wprobe"; do
	ldd "$f" | awk '/=>/ { print $3 }'
done | sort -u | while read -r lib; do
	[[ -e rootfs$lib || -e rootfs$(readlink -f "$lib") ]] || dpkg -S "$(readlink -f "$lib")" 2>/dev/null
done | cut -d: -f1 | sort -u | tr '\n' ' ')
# git and strace, which some tests use (a root made before they were listed)
for tool in git strace; do
	[[ -x rootfs/usr/bin/$tool ]] || missing+=" $tool"
done
if [[ -n ${missing// /} ]]; then
	say "into the root: $missing"
	chroot rootfs apt-get install -y --no-install-recommends $missing >/dev/null
fi

# --ext4-tmp: the modules for overlayfs, loop and ext4 (the kernel's
# package builds them as modules) into the root, with their dependencies
kver=$(basename "$(ls -d kernel/lib/modules/*/ | head -n 1)")
if [[ -n $ext4_tmp && ! -f rootfs/lib/modules/$kver/modules.dep ]]; then
	say "modules of $kver into the root (overlay, loop, ext4)"
	src=kernel/lib/modules/$kver dst=rootfs/lib/modules/$kver
	mkdir -p "$dst/kernel"
	cp "$src"/modules.builtin "$src"/modules.builtin.modinfo "$src"/modules.order "$dst/"
	for sub in fs/overlayfs fs/ext4 fs/jbd2 fs/mbcache.ko drivers/block/loop.ko lib crypto arch; do
		mkdir -p "$dst/kernel/$(dirname "$sub")"
		cp -a "$src/kernel/$sub" "$dst/kernel/$(dirname "$sub")/"
	done
	chroot rootfs depmod "$kver" || die "depmod in the root failed"
fi

accel=tcg
[[ -w /dev/kvm ]] && accel=kvm
[[ -z $wait_ms && $accel == tcg ]] && wait_ms=2000

# ---- the guest's initramfs: the root, this tree, the two stages of init ----
stage=$VMDIR/stage
rm -rf "$stage"
mkdir -p "$stage"
cp -a rootfs/. "$stage/"
mkdir -p "$stage$repo"
# the same path as here: build.ninja names its sources by absolute path
(cd "$repo" && tar --exclude=.git -cf - .) | (cd "$stage$repo" && tar -xpf -)
mkdir -p "$stage/newroot" "$stage/dev"
[[ -c $stage/dev/console ]] || mknod -m 600 "$stage/dev/console" c 5 1
cat >"$stage/init" <<'EOF'
#!/bin/sh
# stage 1: the initramfs cannot be pivot_root'ed out of (warden's sandbox
# does), so its files move into a tmpfs that becomes the root
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t tmpfs -o mode=0755 root /newroot
for d in /*; do
	case $d in /proc | /newroot | /init) continue ;; esac
	cp -a "$d" /newroot/ 2>/dev/null
done
mkdir -p /newroot/proc /newroot/sys /newroot/dev
cp /stage2 /newroot/init
umount /proc
exec switch_root /newroot /init
EOF
cat >"$stage/stage2" <<EOF
#!/bin/bash
# stage 2: the guest's file systems, then what bpf-lsm.sh asked for
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin && ln -sf /proc/self/fd/1 /dev/stdout && ln -sf /proc/self/fd/2 /dev/stderr
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t securityfs securityfs /sys/kernel/security
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t tmpfs tmp /tmp
if [ -n '$ext4_tmp' ]; then
	modprobe -a overlay loop ext4 || echo "=== modprobe failed"
	mkdir -p /var/lib/ext4tmp && mount -t tmpfs ext4img /var/lib/ext4tmp
	truncate -s ${ext4_tmp:-0}M /var/lib/ext4tmp/tmp.img &&
		mkfs.ext4 -q /var/lib/ext4tmp/tmp.img &&
		mount -o loop /var/lib/ext4tmp/tmp.img /tmp && chmod 1777 /tmp ||
		echo "=== /tmp on ext4 failed"
	echo "=== /tmp: \$(stat -f -c %T /tmp)"
fi
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
WARDEN_BPF_DEBUG=1 XDG_STATE_HOME=/tmp/state build/warden run --profile /tmp/kernel.profile -- sh -c 'echo RAN; /bin/true' 2>&1
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
	bench/exec --kernel --execs $bench_execs --runs 3 2>&1
	echo "=== bench rc=\$?"
fi
if [ -n '$shell' ]; then
	echo "=== a shell (exit to power off)"
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi
echo "=== GUEST END"
sync
echo o >/proc/sysrq-trigger
sleep 10
EOF
# bench/exec runs ninja first: the build came from this host, and the guest
# has not what a rebuild needs, so there ninja is a no-op
mkdir -p "$stage/usr/local/bin"
printf '#!/bin/sh\n# the build came from the host (tests/vm/bpf-lsm.sh): nothing to do\nexit 0\n' \
	>"$stage/usr/local/bin/ninja"
chmod 755 "$stage/init" "$stage/stage2" "$stage/usr/local/bin/ninja"
say "packing the initramfs"
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) >initramfs.cpio
rm -rf "$stage"

# ---- the boot ----
say "booting $(basename "$vmlinuz") ($accel, ${mem} MB, $smp CPUs); the console follows"
qcmd=(qemu-system-x86_64 -machine q35 -cpu max -m "$mem" -smp "$smp"
	-kernel "$vmlinuz" -initrd initramfs.cpio -nographic -no-reboot -nic none
	-append "console=ttyS0 lsm=$lsm panic=-1 quiet")
if [[ $accel == tcg ]]; then qcmd+=(-accel tcg,thread=multi); else qcmd+=(-accel kvm); fi
if [[ -n $shell ]]; then
	"${qcmd[@]}" | tee console.log
else
	timeout "$timeout" "${qcmd[@]}" </dev/null | tee console.log
fi
grep -aq '^=== GUEST END' console.log || die "the guest did not finish (see $VMDIR/console.log)"
summary=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' console.log | tail -n 1 | tr -d '\r')
[[ -n $summary ]] || die "the guest's tests did not finish (see $VMDIR/console.log)"
[[ $summary =~ ^([0-9]+)\ passed,\ 0\ failed ]] && ((BASH_REMATCH[1] > 0)) ||
	die "the guest's tests: $summary (see $VMDIR/console.log)"
say "the guest's tests: $summary"
