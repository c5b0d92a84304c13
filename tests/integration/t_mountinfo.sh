# t_mountinfo.sh - the sandbox's mount table (/proc/self/mountinfo) names
# no host path beyond what the sandbox shows at that same path: not the
# invoking user's home, nor warden's cache, state or log directories, in a
# plain session, with TLS terminated by warden (the session's trust store),
# under `warden check` and whenever a destination is allowed (warden's own
# binary, a cached copy), and when the kernel refuses
# the overlay the cached /etc comes through (then /etc is copied).
# shellcheck shell=bash

# mi_check LABEL: OUT is a mount table; fail on any line whose source path
# (field 4, when it differs from the mount point, field 5) or file-system
# options (after " - ") name a host path that must stay hidden.
mi_check() {
	local label=$1 line root point super h hidden=() pw_home n=0
	pw_home=$(getent passwd "$(id -un)" | cut -d: -f6)
	hidden=("$HOME" "$HOME/.cache/warden" "$HOME/.local/state/warden" "$HOME/.local/share/warden")
	[[ -n $pw_home && $pw_home != / ]] && hidden+=("$pw_home")
	[[ -n $OUT ]] || { fail "$label: empty mount table (rc=$RC, stderr: $(excerpt "$ERR"))"; return; }
	while read -r line; do
		[[ $line =~ ^[0-9]+\ [0-9]+\ [0-9]+:[0-9]+\  ]] || continue
		n=$((n + 1))
		read -r _ _ _ root point _ <<<"$line"
		super=${line#* - }
		# the paths as the kernel escapes them (\040 a space), decoded
		root=$(printf '%b' "$root") point=$(printf '%b' "$point") super=$(printf '%b' "$super")
		for h in "${hidden[@]}"; do
			if [[ $root != "$point" && ($root == "$h" || $root == "$h"/*) ]] ||
				[[ $super == *"$h"/* || $super == *"$h" || $super == *"$h",* || $super == *"$h":* ]]; then
				fail "$label: the mount table names $h: $line"
			fi
		done
	done <<<"$OUT"
	((n > 5)) || fail "$label: only $n mount lines: $(excerpt "$OUT")"
}

test_mountinfo_no_host_paths() {
	# the default cache (~/.cache/warden): the cached /etc is used
	wrun -- cat /proc/self/mountinfo
	assert_rc 0
	mi_check 'default session'
	[[ -n $(find "$HOME/.cache/warden" -maxdepth 1 -name 'etc-*' 2>/dev/null) ]] ||
		fail 'no cached /etc was made (the test would not cover it)'
	# a cache directory elsewhere
	XDG_CACHE_HOME="$HOME/xdg-cache" wrun -- cat /proc/self/mountinfo
	assert_rc 0
	mi_check 'XDG_CACHE_HOME in the home'
	[[ -n $(find "$HOME/xdg-cache/warden" -maxdepth 1 -name 'etc-*' 2>/dev/null) ]] ||
		fail 'no cached /etc was made in XDG_CACHE_HOME'
}

# TLS terminated by warden (a secret by reference): the session's trust
# store is in warden's cache on the host.
test_mountinfo_trust_store() {
	WARDENTEST_SECRET=not-a-real-value wrun --secret WARDENTEST_SECRET@api.example.com -- \
		sh -c 'cat /proc/self/mountinfo; test -s /.warden/ca-bundle.pem && echo bundle-ok;
		       grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt >/dev/null && echo system-ok'
	assert_rc 0
	assert_out_line bundle-ok 'the trust store is inside'
	assert_out_line system-ok 'the system bundle is readable'
	mi_check 'session with a trust store'
}

# The kernel refuses the overlay: /etc is copied, and still named nowhere.
test_mountinfo_etc_overlay_refused() {
	"$WPROBE" deny overlay timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- \
		sh -c 'cat /proc/self/mountinfo; tail -n 1 /etc/group; test -e /etc/ld.so.cache && echo ldcache-ok' \
		</dev/null >"$T_TMP/ov.out" 2>"$T_TMP/ov.err"
	RC=$? OUT=$(<"$T_TMP/ov.out") ERR=$(<"$T_TMP/ov.err")
	assert_rc 0 'without overlayfs'
	assert_out_line 'nogroup:x:65534:' 'without overlayfs: /etc/group'
	assert_out_line ldcache-ok 'without overlayfs: /etc/ld.so.cache'
	grep -q ' /etc .* - overlay ' <<<"$OUT" && fail "without overlayfs: /etc is still an overlay: $(excerpt "$OUT")"
	mi_check 'without overlayfs'
}

# warden check, installed in the home as a user may have it: its own binary
# is inside (a copy: a bind would show its host path), and its probe of the
# mount table holds.
test_mountinfo_check_probe() {
	mkdir -p "$HOME/bin"
	cp "$WARDEN" "$HOME/bin/warden"
	timeout -k 5 "$WARDEN_TIMEOUT" "$HOME/bin/warden" check </dev/null >"$T_TMP/check.out" 2>"$T_TMP/check.err"
	RC=$? OUT=$(<"$T_TMP/check.out") ERR=$(<"$T_TMP/check.err")
	grep -E '^ *mountinfo-host-paths ' <<<"$OUT"
	grep -qE '^ *mountinfo-host-paths +denied +denied' <<<"$OUT" ||
		fail "warden check: the mountinfo probe did not hold: $(excerpt "$(grep -E 'mountinfo' <<<"$OUT")")"
	[[ $RC == 0 ]] || fail "warden check failed (rc=$RC): $(excerpt "$(grep -A3 'did not hold' <<<"$OUT")")"
}

# The paths of the mount table as the kernel writes them (\040 for a space)
# are read decoded: outside any sandbox, in a mount namespace of the
# test's own, a bind of a home whose name has a space is found by `warden
# check`'s probe (it can fail; before, it read the escaped text and found
# nothing). Then a session and `warden check` with that home: the mount
# table names it nowhere.
test_mountinfo_escaped_home() {
	local home="$T_TMP/a home" out
	mkdir -p "$home/proj" "$T_TMP/elsewhere" "$T_TMP/pws" "$T_TMP/pout"
	out=$(unshare -Urm sh -c 'mount --bind "$1" "$2" && exec "$3" __probe --only mountinfo-host-paths --ws "$4" --out "$5" --token 00 --home "$1"' \
		sh "$home" "$T_TMP/elsewhere" "$WARDEN" "$T_TMP/pws" "$T_TMP/pout" 2>&1)
	[[ $out == *'"probe"'* ]] || skip "no mount namespace of the test's own here: $(excerpt "$out")"
	grep -q '"probe":"mountinfo-host-paths","observed":"allowed"' <<<"$out" ||
		fail "the probe did not find a bind of '$home': $(excerpt "$out")"
	grep -qF "names $home" <<<"$out" || fail "the probe's finding does not name the home: $(excerpt "$out")"
	(cd "$home/proj" && HOME="$home" timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- cat /proc/self/mountinfo \
		</dev/null >"$T_TMP/sp.out" 2>"$T_TMP/sp.err")
	RC=$? OUT=$(<"$T_TMP/sp.out") ERR=$(<"$T_TMP/sp.err")
	assert_rc 0 'a home with a space'
	grep -qF 'a\040home' <<<"$OUT" || fail "the workspace under '$home' is not in the table (the check would not cover it): $(excerpt "$OUT")"
	local HOME="$home"
	mi_check 'a home with a space'
	(cd "$home/proj" && HOME="$home" timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" check </dev/null >"$T_TMP/spc.out" 2>&1)
	RC=$? OUT=$(<"$T_TMP/spc.out")
	grep -qE '^ *mountinfo-host-paths +denied +denied' <<<"$OUT" ||
		fail "warden check with a home with a space: the mountinfo probe did not hold: $(excerpt "$(grep -E 'mountinfo' <<<"$OUT")")"
	assert_rc 0 'warden check with a home with a space'
}

# A home on a file system of its own (/home a partition): the mount table
# spells a bind from it by the path within that file system ("/user/sub",
# never "/home/user/sub"), so the probe matches on the home's device too.
# The runner is told that spelling (--home-fs); `warden check` works it out
# on the host, and its outside column must see the bind the text alone
# missed, while the sandbox's table still names nothing.
test_mountinfo_home_own_fs() {
	local fsroot="$T_TMP/fsroot" out
	mkdir -p "$fsroot" "$T_TMP/elsewhere" "$T_TMP/pws" "$T_TMP/pout"
	out=$(unshare -Urm sh -c 'mount -t tmpfs home "$1" && mkdir -p "$1/user/proj" "$1/user/sub" &&
		mount --bind "$1/user/sub" "$2" &&
		dev=$(awk -v p="$1" '"'"'$5 == p { print $3 }'"'"' /proc/self/mountinfo) &&
		exec "$3" __probe --only mountinfo-host-paths --ws "$4" --out "$5" --token 00 \
			--home "$1/user" --home-fs "$dev:5:/user$1/user"' \
		sh "$fsroot" "$T_TMP/elsewhere" "$WARDEN" "$T_TMP/pws" "$T_TMP/pout" 2>&1)
	[[ $out == *'"probe"'* ]] || skip "no mount namespace of the test's own here: $(excerpt "$out")"
	grep -q '"probe":"mountinfo-host-paths","observed":"allowed"' <<<"$out" ||
		fail "the probe did not find a bind from a home on its own file system: $(excerpt "$out")"
	grep -qF "names $fsroot/user: /user/sub on " <<<"$out" ||
		fail "the probe's finding does not name the home and the path within its file system: $(excerpt "$out")"
	# a spelling the runner cannot read fails the probe, never a look by
	# the text alone
	out=$("$WARDEN" __probe --only mountinfo-host-paths --ws "$T_TMP/pws" --out "$T_TMP/pout" --token 00 \
		--home "$fsroot/user" --home-fs "0:1:/user" 2>&1)
	grep -q '"probe":"mountinfo-host-paths","observed":"allowed","detail":"not tried: ' <<<"$out" ||
		fail "a malformed --home-fs did not fail the probe: $(excerpt "$out")"
	# the whole check, in a mount namespace where the home is that tmpfs;
	# it needs root: in a user namespace of the test's own the sandbox
	# cannot drop supplementary groups
	[[ $(id -u) == 0 ]] || return 0
	# with the default profile; then with a profile path in that home,
	# bound inside at its own place (no finding), the home given as it is
	# and as a symbolic link to it (as /home is to /var/home on some
	# systems), the path spelt through the home or by its real path; the
	# row must hold in each (read-only ~/sub fails home-dir)
	ln -s "$fsroot/user" "$T_TMP/homelink"
	printf 'read-only ~/sub\n' >"$T_TMP/sub.profile"
	printf 'read-only %s/user/sub\n' "$fsroot" >"$T_TMP/realsub.profile"
	local run home label want prof
	for run in "$fsroot/user 0" "$fsroot/user 1 $T_TMP/sub.profile" "$T_TMP/homelink 1 $T_TMP/sub.profile" \
		"$T_TMP/homelink 0 $T_TMP/realsub.profile"; do
		read -r home want prof <<<"$run"
		label="warden check, the home $home on its own file system${prof:+, profile ${prof##*/}}"
		unshare -m sh -c 'mount -t tmpfs home "$1" && mkdir -p "$1/user/proj" "$1/user/sub" &&
			mount --bind "$1/user/sub" "$2" && cd "$1/user/proj" && HOME="$3" &&
			shift 3 && exec "$@"' \
			sh "$fsroot" "$T_TMP/elsewhere" "$home" \
			timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" check --compare ${prof:+--profile "$prof"} \
			</dev/null >"$T_TMP/fsc.out" 2>&1
		RC=$? OUT=$(<"$T_TMP/fsc.out")
		assert_rc "$want" "$label"
		grep -qE '^ *mountinfo-host-paths +denied +allowed: mount at ' <<<"$OUT" ||
			fail "$label: the bind from the home's file system is not seen outside: $(excerpt "$(grep -E 'mountinfo' <<<"$OUT")")"
		grep -qE '^ *mountinfo-host-paths +denied +allowed: .* +denied: [0-9]+ mounts, none naming.* yes$' <<<"$OUT" ||
			fail "$label: the sandbox's mount table names the home's file system: $(excerpt "$(grep -E 'mountinfo' <<<"$OUT")")"
	done
}

# warden's own binary inside (ssh's ProxyCommand, whenever a destination is
# allowed): a copy cached once per build in warden's cache under an overlay,
# reused by the next session, the copies of other builds removed; named
# nowhere in the mount table; copied onto the root when the kernel refuses
# the overlay.
test_mountinfo_self_binary() {
	local cache="$HOME/.cache/warden" first second
	wrun --allow-net example.com -- sh -c 'cat /proc/self/mountinfo; /.warden/warden __connect 2>&1 | head -n 1'
	assert_rc 0
	assert_out_line 'usage: warden __connect HOST PORT' "warden's binary runs inside"
	mi_check 'session with warden inside'
	first=$(find "$cache" -maxdepth 2 -path '*/self-*/warden' -printf '%i\n')
	[[ -n $first && $(wc -l <<<"$first") == 1 ]] || fail "not one cached copy of warden: $(ls -la "$cache")"
	wrun --allow-net example.com -- true
	second=$(find "$cache" -maxdepth 2 -path '*/self-*/warden' -printf '%i\n')
	[[ $second == "$first" ]] || fail "the cached copy was not reused ($first, then $second)"
	# another build: its copy replaces the first
	mkdir -p "$HOME/bin" && cp "$WARDEN" "$HOME/bin/warden-other"
	timeout -k 5 "$WARDEN_TIMEOUT" "$HOME/bin/warden-other" run --allow-net example.com -- true </dev/null ||
		fail 'the other build failed'
	second=$(find "$cache" -maxdepth 2 -path '*/self-*/warden' -printf '%i\n')
	[[ -n $second && $(wc -l <<<"$second") == 1 && $second != "$first" ]] ||
		fail "the other build's copy did not replace the first: $(ls -la "$cache")"
	"$WPROBE" deny overlay timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run --allow-net example.com -- \
		sh -c 'cat /proc/self/mountinfo; /.warden/warden __connect 2>&1 | head -n 1' \
		</dev/null >"$T_TMP/ov.out" 2>"$T_TMP/ov.err"
	RC=$? OUT=$(<"$T_TMP/ov.out") ERR=$(<"$T_TMP/ov.err")
	assert_rc 0 'without overlayfs'
	assert_out_line 'usage: warden __connect HOST PORT' "without overlayfs: warden's binary runs inside"
	mi_check 'without overlayfs, warden inside'
}
