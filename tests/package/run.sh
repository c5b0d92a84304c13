#!/usr/bin/env bash
# tests/package/run.sh - the Debian package installs and works on a fresh
# Debian 12: builds it (scripts/package, or takes --deb), makes a Debian 12
# root with `debootstrap --variant=minbase bookworm` (the tarball cached in
# /var/cache/warden-ci/), and in a mount and pid namespace pivoted into it
# (not chroot(2): the kernel refuses user namespaces to a chrooted process)
# runs `apt install ./warden_*.deb` from the Debian mirror, then checks
# what the package put in place (binary, man pages, completions that load,
# the AppArmor profile shipped but, on a kernel without Ubuntu's
# restriction, not placed), `warden doctor` and `warden check` from the
# installed binary as root and as an unprivileged user made in that root, a
# session with a secret as that user (the TLS module and its libraries),
# and that `apt remove` takes it away. Ubuntu 24.04 is not tested here.
# Prints "ok - NAME" / "not ok - NAME (reason)" / "skipped - NAME (reason)",
# then "N passed, N failed"; exits 1 if anything failed. Needs root; skipped
# without it, without debootstrap, or when the mirror is unreachable.
#
#   tests/package/run.sh [--deb FILE]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
deb=
while (($#)); do
	case $1 in
	--deb) deb=${2:-}; shift 2 || exit 2 ;;
	*) echo "usage: $0 [--deb FILE]" >&2; exit 2 ;;
	esac
done
MIRROR=${WARDEN_CI_MIRROR:-http://deb.debian.org/debian}
CACHE=${WARDEN_CI_CACHE:-/var/cache/warden-ci}
TARBALL=$CACHE/debian-bookworm-minbase.tar.gz
TIMEOUT=${WARDEN_TIMEOUT:-600}

passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1 ($2)"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; ((failed == 0)); exit; }
skip_all() { echo "skipped - package ($1)"; finish; }

[[ $(id -u) == 0 ]] || skip_all "needs root (debootstrap, mount namespaces)"
command -v debootstrap >/dev/null || skip_all "debootstrap is not installed"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is missing"
curl -fsS -m 20 -o /dev/null "$MIRROR/dists/bookworm/Release" 2>/dev/null ||
	skip_all "the Debian mirror $MIRROR is unreachable"

# the package
if [[ -z $deb ]]; then
	deb=$("$src/scripts/package" 2>&1 | tail -n 1)
	[[ -f $deb ]] || { not_ok package_builds "scripts/package: $deb"; finish; }
	ok package_builds
fi
deb=$(realpath "$deb")

# the root: from the cached tarball, made once
T=$(mktemp -d /var/tmp/warden-pkgtest-XXXXXX)
cleanup() {
	# the namespace is gone with its processes; nothing is mounted here
	rm -rf --one-file-system "$T"
}
trap cleanup EXIT
[[ -z ${WARDEN_PKGTEST_KEEP:-} ]] || { trap - EXIT; echo "# kept: $T"; }
if [[ ! -s $TARBALL ]]; then
	mkdir -p "$CACHE"
	echo "# making the Debian 12 root (debootstrap, once; cached in $TARBALL)"
	if ! debootstrap --variant=minbase bookworm "$T/boot" "$MIRROR" >"$T/debootstrap.log" 2>&1; then
		tail -n 5 "$T/debootstrap.log"
		skip_all "debootstrap failed (mirror?)"
	fi
	tar --numeric-owner -C "$T/boot" -czf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
	rm -rf --one-file-system "$T/boot"
fi
# (not named "root": warden check finds the home path /root in its
# mountinfo, where the workspace mount's source is this directory's path)
R=$T/debian12
mkdir -p "$R"
tar --numeric-owner -C "$R" -xzf "$TARBALL" || { not_ok root_unpacks "tar"; finish; }
cp "$deb" "$R/tmp/"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
# the user the unprivileged check runs as
cat >"$R/tmp/inside.sh" <<'INSIDE'
# runs inside the new root, as root in its own mount and pid namespaces
set -u
export DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8 HOME=/root
step() { echo "=== $1"; }
step apt-install
apt-get update -qq >/tmp/apt.log 2>&1 && apt-get install -y -qq --no-install-recommends /tmp/warden_*.deb >>/tmp/apt.log 2>&1
echo "rc=$?"
tail -n 5 /tmp/apt.log
step version
/usr/bin/warden --version; echo "rc=$?"
step files
for f in /usr/share/man/man1/warden.1.gz /usr/share/man/man1/warden-run.1.gz \
	/usr/share/man/man5/warden-profile.5.gz /usr/share/man/man5/warden-events.5.gz \
	/usr/share/man/man1/warden-kill.1.gz /usr/share/zsh/vendor-completions/_warden \
	/usr/share/fish/vendor_completions.d/warden.fish /usr/share/doc/warden/copyright \
	/usr/share/doc/warden/README.md.gz /usr/share/doc/warden/doc/security-model.md.gz \
	/usr/share/warden/apparmor/warden; do
	[ -e "$f" ] || echo "missing $f"
done
zcat /usr/share/man/man1/warden-run.1.gz | grep -c 'allow\\-net\|allow-net'
step bash-completion
bash -c 'source /usr/share/bash-completion/completions/warden && complete -p warden'; echo "rc=$?"
step apparmor
echo "sysctl: $([ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ] && echo present || echo absent)"
echo "placed: $([ -e /etc/apparmor.d/warden ] && echo yes || echo no)"
step doctor
warden doctor; echo "rc=$?"
step check-root
cd /tmp && timeout 300 warden check; echo "rc=$?"
step check-user
useradd -m -s /bin/bash wci >/dev/null 2>&1
runuser -u wci -- env -i PATH=$PATH HOME=/home/wci LANG=C.UTF-8 sh -c 'cd && timeout 300 warden check'; echo "rc=$?"
step tls-user
runuser -u wci -- env -i PATH=$PATH HOME=/home/wci LANG=C.UTF-8 WCI_TOKEN=wci-token-0123456789 \
	sh -c 'mkdir -p ~/proj && cd ~/proj && timeout 60 warden run --secret WCI_TOKEN@example.com -- sh -c "echo seen-\$WCI_TOKEN"'; echo "rc=$?"
step shim-system
warden shim install --system claude; echo "rc=$?"
echo "found: $(runuser -u wci -- env -i HOME=/home/wci PATH=/usr/bin:/bin bash -lc 'command -v claude')"
step remove
apt-get remove -y -qq warden >/tmp/apt-remove.log 2>&1; echo "rc=$?"
[ -e /usr/bin/warden ] && echo "still there: /usr/bin/warden"
[ -e /usr/local/lib/warden/shims/claude ] && echo "still there: the system shim"
[ -e /etc/profile.d/warden-shims.sh ] && echo "still there: /etc/profile.d/warden-shims.sh"
step end
INSIDE

# Enter: a private mount namespace and a pid namespace; the root bind-mounted
# on itself (pivot_root needs a mount point), /proc of the new pid namespace,
# /sys and /dev bound from the host; pivot_root into it, the old root
# detached.
log=$T/inside.log
timeout -k 10 "$TIMEOUT" unshare --mount --pid --fork --propagation private /bin/bash -c '
	set -e
	R=$1
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --rbind /dev "$R/dev"
	mkdir -p "$R/.oldroot"
	cd "$R"
	pivot_root . .oldroot
	umount -l /.oldroot
	rmdir /.oldroot
	exec /bin/bash /tmp/inside.sh
' _ "$R" >"$log" 2>&1 </dev/null
rc=$?
(($rc == 0)) || { echo "# the namespace ended with $rc; its output:"; tail -n 30 "$log" | sed 's/^/#   /'; }

# section NAME: the lines of the log between "=== NAME" and the next "==="
section() { awk -v n="=== $1" '$0 == n { on = 1; next } /^=== / { on = 0 } on' "$log"; }
rc_of() { section "$1" | grep -E '^rc=[0-9]+$' | tail -n 1 | cut -d= -f2; }

[[ $(rc_of apt-install) == 0 ]] && ok apt_install_deb ||
	not_ok apt_install_deb "$(section apt-install | tail -n 4 | tr '\n' ' ')"
v=$(section version | head -n 1)
[[ $v == "warden "* && $(rc_of version) == 0 ]] && ok installed_binary_runs || not_ok installed_binary_runs "$v"
f=$(section files)
if ! grep -q missing <<<"$f" && [[ $(tail -n 1 <<<"$f") -ge 1 ]]; then
	ok man_pages_and_completions_installed
else
	not_ok man_pages_and_completions_installed "$(tr '\n' ' ' <<<"$f")"
fi
grep -q -- '-F _warden warden' <<<"$(section bash-completion)" && ok bash_completion_loads ||
	not_ok bash_completion_loads "$(section bash-completion | tr '\n' ' ')"
a=$(section apparmor)
if grep -q 'sysctl: absent' <<<"$a"; then
	grep -q 'placed: no' <<<"$a" && ok apparmor_profile_not_placed_without_restriction ||
		not_ok apparmor_profile_not_placed_without_restriction "$a"
else
	grep -q 'placed: yes' <<<"$a" && ok apparmor_profile_placed || not_ok apparmor_profile_placed "$a"
fi
d=$(section doctor)
if [[ $(rc_of doctor) == 0 ]] && grep -qE '^OK +kernel.apparmor_restrict_unprivileged_userns' <<<"$d"; then
	ok doctor_from_package
else
	not_ok doctor_from_package "rc $(rc_of doctor): $(grep -E '^(FAIL|WARN)' <<<"$d" | head -n 3 | tr '\n' ' ')"
fi
[[ $(rc_of check-root) == 0 ]] && ok check_from_package_as_root ||
	not_ok check_from_package_as_root "rc $(rc_of check-root): $(section check-root | grep -iE 'fail|error|warden:' | head -n 3 | tr '\n' ' ')"
[[ $(rc_of check-user) == 0 ]] && ok check_from_package_as_user ||
	not_ok check_from_package_as_user "rc $(rc_of check-user): $(section check-user | grep -iE 'fail|error|warden:' | head -n 3 | tr '\n' ' ')"
# a session with a secret loads the TLS module warden carries: its libraries
# (libnghttp2) came with the package's Depends
r=$(section tls-user)
[[ $(rc_of tls-user) == 0 ]] && grep -q '^seen-.' <<<"$r" && ! grep -q 'wci-token-0123456789' <<<"$r" &&
	ok tls_module_from_package ||
	not_ok tls_module_from_package "rc $(rc_of tls-user): $(grep -iE 'warden:|error' <<<"$r" | head -n 3 | tr '\n' ' ')"
r=$(section shim-system)
[[ $(rc_of shim-system) == 0 ]] && grep -q '^found: /usr/local/lib/warden/shims/claude$' <<<"$r" &&
	ok shim_system_first_on_login_path || not_ok shim_system_first_on_login_path "$(tr '\n' ' ' <<<"$r")"
r=$(section remove)
[[ $(rc_of remove) == 0 ]] && ! grep -q 'still there' <<<"$r" && ok apt_remove || not_ok apt_remove "$r"
echo "skipped - ubuntu_24_04 (only the Debian mirror is reachable from CI: the AppArmor profile's loading is not tested)"
finish
