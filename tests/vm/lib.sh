# tests/vm/lib.sh - what the qemu guest scripts of tests/vm share: the host's
# tools, Debian 12's kernel unpacked from its package, a minimal Debian 12
# root (debootstrap) with warden's run-time libraries, the guest's
# initramfs (that root plus this tree at the same path, and the first stage
# of init), the common part of the second stage (the guest's file systems),
# the boot, and reading the guest's test summary off its console.
#
# The caller sets, before sourcing it, VMDIR (where the kernel and the root
# are kept between runs), VM_RUN (where this run's initramfs and console
# go; may be VMDIR), repo (this tree) and VM_NAME (for messages).
# shellcheck shell=bash disable=SC2034,SC2154 # VM_* and repo are the callers'

vm_say() { printf '# %s: %s\n' "$VM_NAME" "$*" >&2; }
vm_die() { vm_say "$*"; exit 1; }

# vm_host_ready: root, the tree built, qemu, debootstrap and cpio installed.
vm_host_ready() {
	(($(id -u) == 0)) || vm_die "needs root (debootstrap, the guest's files owned by root)"
	[[ -x $repo/build/warden && -x $repo/build/tests/helpers/wprobe ]] ||
		vm_die "build the tree first (scripts/build): no build/warden or build/tests/helpers/wprobe"
	local need=()
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	command -v debootstrap >/dev/null || need+=(debootstrap)
	command -v cpio >/dev/null || need+=(cpio)
	if ((${#need[@]})); then
		vm_say "installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
	fi
}

# vm_kernel: Debian 12's kernel (6.1) unpacked in $VMDIR/kernel (nothing
# installed in /boot); sets VM_VMLINUZ, VM_CONFIG and VM_KVER.
vm_kernel() {
	if ! ls "$VMDIR"/kernel/boot/vmlinuz-* >/dev/null 2>&1; then
		local pkg
		pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' |
			awk '{ print $1 }' | sort -V | tail -n 1)
		[[ -n $pkg ]] || vm_die "no linux-image-6.1.0-*-amd64-unsigned package (apt-get update?)"
		vm_say "kernel: $pkg"
		(cd "$VMDIR" && rm -f ./*.deb && apt-get download "$pkg" >/dev/null 2>&1) ||
			vm_die "apt-get download $pkg failed"
		rm -rf "$VMDIR/kernel"
		dpkg -x "$VMDIR/$pkg"_*.deb "$VMDIR/kernel"
		rm -f "$VMDIR"/*.deb
	fi
	VM_VMLINUZ=$(ls "$VMDIR"/kernel/boot/vmlinuz-* | head -n 1)
	VM_CONFIG=$(ls "$VMDIR"/kernel/boot/config-* | head -n 1)
	VM_KVER=$(basename "$(ls -d "$VMDIR"/kernel/lib/modules/*/ | head -n 1)")
}

# vm_kernel_has OPTION...: the guest kernel's config has each (CONFIG_X=y).
vm_kernel_has() {
	local opt
	for opt; do
		grep -qx "$opt" "$VM_CONFIG" || vm_die "the guest kernel lacks $opt"
	done
}

# vm_rootfs: a minimal Debian 12 in $VMDIR/rootfs with what warden and the
# tests use, plus the run-time libraries this build links.
vm_rootfs() {
	local root=$VMDIR/rootfs
	if [[ ! -f $root/.complete ]]; then
		rm -rf "$root"
		vm_say "debootstrap (a few minutes)"
		debootstrap --variant=minbase \
			--include=libbpf1,libelf1,zlib1g,bpftool,python3,gcc,libc6-dev,ninja-build,bubblewrap,procps,git,strace,kmod \
			bookworm "$root" http://deb.debian.org/debian >"$VMDIR/debootstrap.log" 2>&1 ||
			vm_die "debootstrap failed: see $VMDIR/debootstrap.log"
		rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/locale
		touch "$root/.complete"
	fi
	local missing tool
	missing=$(for f in "$repo/build/warden" "$repo/build/tests/helpers/wprobe"; do
		ldd "$f" | awk '/=>/ { print $3 }'
	done | sort -u | while read -r lib; do
		[[ -e $root$lib || -e $root$(readlink -f "$lib") ]] || dpkg -S "$(readlink -f "$lib")" 2>/dev/null
	done | cut -d: -f1 | sort -u | tr '\n' ' ')
	# git and strace, which some tests use, and kmod (depmod, for
	# vm_ext4_modules), which minbase leaves out (a root made before they
	# were listed)
	for tool in git strace; do
		[[ -x $root/usr/bin/$tool ]] || missing+=" $tool"
	done
	[[ -x $root/sbin/depmod || -x $root/usr/sbin/depmod || -x $root/usr/bin/depmod ]] || missing+=" kmod"
	if [[ -n ${missing// /} ]]; then
		vm_say "into the root: $missing"
		# shellcheck disable=SC2086 # a list of package names
		chroot "$root" apt-get install -y --no-install-recommends $missing >/dev/null
	fi
}

# vm_ext4_modules: the modules for overlayfs, loop and ext4 (the kernel's
# package builds them as modules) into the root, with their dependencies,
# for vm_guest_ext4_tmp.
vm_ext4_modules() {
	local src=$VMDIR/kernel/lib/modules/$VM_KVER dst=$VMDIR/rootfs/lib/modules/$VM_KVER sub
	[[ -f $dst/modules.dep ]] && return 0
	vm_say "modules of $VM_KVER into the root (overlay, loop, ext4)"
	mkdir -p "$dst/kernel"
	cp "$src"/modules.builtin "$src"/modules.builtin.modinfo "$src"/modules.order "$dst/"
	for sub in fs/overlayfs fs/ext4 fs/jbd2 fs/mbcache.ko drivers/block/loop.ko lib crypto arch; do
		mkdir -p "$dst/kernel/$(dirname "$sub")"
		cp -a "$src/kernel/$sub" "$dst/kernel/$(dirname "$sub")/"
	done
	chroot "$VMDIR/rootfs" depmod "$VM_KVER" || vm_die "depmod in the root failed"
}

# vm_stage STAGE2_SCRIPT: the guest's tree in $VM_RUN/stage: the root, this
# tree at the same path (build.ninja names its sources by absolute path), the
# first stage of init and STAGE2_SCRIPT as the second. The caller may add to
# it before vm_pack.
vm_stage() {
	VM_STAGE=$VM_RUN/stage
	rm -rf "$VM_STAGE"
	mkdir -p "$VM_STAGE"
	cp -a "$VMDIR/rootfs/." "$VM_STAGE/"
	mkdir -p "$VM_STAGE$repo"
	(cd "$repo" && tar --exclude=.git -cf - .) | (cd "$VM_STAGE$repo" && tar -xpf -)
	mkdir -p "$VM_STAGE/newroot" "$VM_STAGE/dev"
	[[ -c $VM_STAGE/dev/console ]] || mknod -m 600 "$VM_STAGE/dev/console" c 5 1
	cat >"$VM_STAGE/init" <<-'EOF'
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
	cp "$1" "$VM_STAGE/stage2"
	# bench/exec runs ninja first: the build came from this host, and the
	# guest has not what a rebuild needs, so there ninja is a no-op
	mkdir -p "$VM_STAGE/usr/local/bin"
	printf '#!/bin/sh\n# the build came from the host (tests/vm): nothing to do\nexit 0\n' \
		>"$VM_STAGE/usr/local/bin/ninja"
	chmod 755 "$VM_STAGE/init" "$VM_STAGE/stage2" "$VM_STAGE/usr/local/bin/ninja"
}

# vm_guest_mounts [CGROUP2_OPTIONS]: the lines of the second stage that
# mount the guest's file systems (cgroup2 alone at /sys/fs/cgroup: every
# controller in the unified hierarchy), for the caller's stage2 script.
vm_guest_mounts() {
	cat <<-EOF
	export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
	ln -sf /proc/self/fd /dev/fd
	ln -sf /proc/self/fd/0 /dev/stdin && ln -sf /proc/self/fd/1 /dev/stdout && ln -sf /proc/self/fd/2 /dev/stderr
	mount -t cgroup2 ${1:+-o $1} cgroup2 /sys/fs/cgroup
	mount -t securityfs securityfs /sys/kernel/security
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null
	mount -t tmpfs tmp /tmp
	EOF
}

# vm_guest_ext4_tmp MB: the lines of the second stage that put the guest's
# /tmp on an ext4 file system of MB on a loop device (its image in a tmpfs,
# overlayfs loaded), after vm_guest_mounts: for root's idmapped mounts of a
# workspace in /tmp, which tmpfs takes only from 6.3 (vm_ext4_modules first).
vm_guest_ext4_tmp() {
	cat <<-EOF
	modprobe -a overlay loop ext4 || echo "=== modprobe failed"
	mkdir -p /var/lib/ext4tmp && mount -t tmpfs ext4img /var/lib/ext4tmp
	truncate -s ${1}M /var/lib/ext4tmp/tmp.img &&
		mkfs.ext4 -q /var/lib/ext4tmp/tmp.img &&
		mount -o loop /var/lib/ext4tmp/tmp.img /tmp && chmod 1777 /tmp ||
		echo "=== /tmp on ext4 failed"
	echo "=== /tmp: \$(stat -f -c %T /tmp)"
	EOF
}

# vm_guest_end: the last lines of the second stage (power off).
vm_guest_end() {
	cat <<-'EOF'
	echo "=== GUEST END"
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
	EOF
}

# vm_pack: $VM_STAGE into $VM_RUN/initramfs.cpio (the stage removed).
vm_pack() {
	vm_say "packing the initramfs"
	(cd "$VM_STAGE" && find . -print0 | cpio --null -o -H newc --quiet) >"$VM_RUN/initramfs.cpio"
	rm -rf "$VM_STAGE"
}

# vm_boot MEM SMP TIMEOUT SHELL APPEND: boot the kernel with the initramfs
# (KVM when /dev/kvm is usable, else TCG), the console printed and kept in
# $VM_RUN/console.log; with SHELL non-empty, no timeout and stdin passed.
vm_boot() {
	local mem=$1 smp=$2 timeout=$3 shell=$4 append=$5
	local qcmd=(qemu-system-x86_64 -machine q35 -cpu max -m "$mem" -smp "$smp"
		-kernel "$VM_VMLINUZ" -initrd "$VM_RUN/initramfs.cpio" -nographic -no-reboot -nic none
		-append "console=ttyS0 panic=-1 quiet $append")
	# shellcheck disable=SC2054 # (one argument of qemu)
	if [[ $VM_ACCEL == tcg ]]; then qcmd+=(-accel tcg,thread=multi); else qcmd+=(-accel kvm); fi
	vm_say "booting $(basename "$VM_VMLINUZ") ($VM_ACCEL, ${mem} MB, $smp CPUs); the console follows"
	if [[ -n $shell ]]; then
		"${qcmd[@]}" | tee "$VM_RUN/console.log"
	else
		timeout "$timeout" "${qcmd[@]}" </dev/null | tee "$VM_RUN/console.log"
	fi
}

# VM_ACCEL=tcg in the environment forces TCG (a nested hypervisor may offer
# a /dev/kvm that cannot boot the guest)
if [[ ${VM_ACCEL:-} != tcg ]]; then
	VM_ACCEL=tcg
	[[ -w /dev/kvm ]] && VM_ACCEL=kvm
fi

# vm_summaries: the guest's test summaries ("N passed, N failed"), one a
# line, from its console; exits with a message when the guest did not finish.
vm_summaries() {
	grep -aq '^=== GUEST END' "$VM_RUN/console.log" ||
		vm_die "the guest did not finish (see $VM_RUN/console.log)"
	grep -aE '^[0-9]+ passed, [0-9]+ failed' "$VM_RUN/console.log" | tr -d '\r'
}
