# t_etc.sh - the sandbox's curated /etc and the per-user cache it is bound
# from: the right content inside, the cache out of the agent's reach,
# rebuilt when missing, stale versions removed, and a session without a
# usable cache directory still getting its /etc.
# shellcheck shell=bash

# etc_inside: what the agent sees of /etc (a few telling entries).
etc_inside() {
	wsh 'tail -n 2 /etc/passwd; cat /etc/hostname; ls /etc/ssl/certs | head -n 1 >/dev/null && echo certs-ok;
	     test -e /etc/ld.so.cache && echo ldcache-ok; test -e /etc/shadow || echo no-shadow;
	     test -e /etc/ssh || echo no-ssh; touch /etc/wardentest 2>/dev/null || echo etc-ro'
	assert_rc 0
	assert_out_line 'agent:x:1000:1000:warden agent:/home/agent:/bin/sh' '/etc/passwd'
	assert_out_line warden '/etc/hostname'
	for l in certs-ok ldcache-ok no-shadow no-ssh etc-ro; do
		assert_out_line "$l" "/etc: $l"
	done
}

test_etc_cache() {
	export XDG_CACHE_HOME="$T_TMP/cache"
	etc_inside
	local versions
	mapfile -t versions < <(cd "$XDG_CACHE_HOME/warden" && ls -d etc-*)
	((${#versions[@]} == 1)) || fatal "expected one cached /etc, found: ${versions[*]}"
	[[ $(stat -c %a "$XDG_CACHE_HOME/warden") == 700 ]] ||
		fail "cache directory mode $(stat -c %a "$XDG_CACHE_HOME/warden"), expected 700"
	[[ -f $XDG_CACHE_HOME/warden/${versions[0]}/passwd ]] || fail 'the cached /etc has no passwd'
	# the session's /etc is the cached one (what is written there shows),
	# and the mount table does not name the cache
	echo "# wardentest-cached-marker" >>"$XDG_CACHE_HOME/warden/${versions[0]}/hosts"
	wsh 'cat /etc/hosts; grep " /etc " /proc/self/mountinfo'
	assert_out_line '# wardentest-cached-marker' 'the session has the cached /etc'
	assert_out_lacks "${versions[0]}" 'the mount table names the cached /etc'
	assert_out_lacks "$XDG_CACHE_HOME" 'the mount table names the cache directory'
	# a stale version nobody holds goes when a new one is built; a missing
	# one is rebuilt
	mkdir "$XDG_CACHE_HOME/warden/etc-00000000000000000000000000000000"
	echo old >"$XDG_CACHE_HOME/warden/etc-00000000000000000000000000000000/passwd"
	rm -rf "${XDG_CACHE_HOME:?}/warden/${versions[0]}"
	etc_inside
	mapfile -t versions < <(cd "$XDG_CACHE_HOME/warden" && ls -d etc-*)
	[[ ${versions[*]} == "${versions[0]}" && ${versions[0]} != etc-00000000000000000000000000000000 ]] ||
		fail "after a rebuild: expected the one current version, found: ${versions[*]}"
}

test_etc_cache_held() {
	# A version a running session holds is not removed under it.
	export XDG_CACHE_HOME="$T_TMP/cache"
	wrun -- true
	local held
	held=$(cd "$XDG_CACHE_HOME/warden" && ls -d etc-*)
	warden_bg "$T_TMP/bg.out" -- sh -c 'echo ready; while [ ! -e go ]; do sleep 0.05; done; cat /etc/hostname'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	# pretend the host's /etc changed: the held version is now stale
	mv "$XDG_CACHE_HOME/warden/$held" "$XDG_CACHE_HOME/warden/etc-11111111111111111111111111111111"
	wrun -- true
	assert_rc 0
	touch go
	wait "$TPID"
	[[ -d $XDG_CACHE_HOME/warden/etc-11111111111111111111111111111111 ]] ||
		fail 'a version held by a running session was removed'
	grep -qx warden "$T_TMP/bg.out" || fail "the running session lost its /etc: $(excerpt "$(<"$T_TMP/bg.out")")"
}

test_etc_cache_private() {
	# A profile that opens ~/.cache read-write must not let the agent touch
	# the cached /etc of later sessions; nor may a profile path or the
	# workspace lie inside it.
	export XDG_CACHE_HOME="$HOME/.cache"
	mkdir -p "$HOME/.cache/other"
	wrun -- true
	local v
	v=$(cd "$HOME/.cache/warden" && ls -d etc-*)
	printf 'read-write %s/.cache\n' "$HOME" >"$T_TMP/cache.profile"
	wsh "ls $HOME/.cache/warden; echo planted > $HOME/.cache/warden/$v/hosts || echo write-denied;
	     rm -rf $HOME/.cache/warden 2>/dev/null; mv $HOME/.cache/warden $HOME/.cache/w2 || echo move-denied;
	     echo ok > $HOME/.cache/other/f" --profile "$T_TMP/cache.profile"
	assert_rc 0
	assert_out_line write-denied 'writing into the cached /etc'
	assert_out_line move-denied 'moving the cache away'
	assert_host_file "$HOME/.cache/other/f" ok 'the rest of ~/.cache is writable'
	assert_out_lacks "$v" 'cache listed inside'
	grep -q planted "$HOME/.cache/warden/$v/hosts" && fail 'the agent wrote into the cached /etc'
	[[ -d $HOME/.cache/warden/$v ]] || fail 'the agent removed the cached /etc'
	printf 'read-only %s/.cache/warden/%s\n' "$HOME" "$v" >"$T_TMP/inside.profile"
	wrun --profile "$T_TMP/inside.profile" -- true
	assert_rc 125 'a profile path inside the cache'
	assert_err_match "inside warden's cache directory"
	wrun --workspace "$HOME/.cache/warden" -- true
	assert_rc 125 'the cache as workspace'
}

test_etc_without_cache() {
	# No usable cache directory: the session copies /etc itself.
	export XDG_CACHE_HOME=/proc/wardentest-no-such-dir
	etc_inside
}

test_etc_cache_concurrent() {
	# Sessions starting together with no cache: each gets its /etc, and one
	# version is left (no half-built or temporary directories).
	export XDG_CACHE_HOME="$T_TMP/cache"
	local i pids=()
	for i in 1 2 3 4; do
		timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- sh -c 'tail -n 1 /etc/group' \
			</dev/null >"$T_TMP/c$i.out" 2>"$T_TMP/c$i.err" &
		pids+=($!)
	done
	for i in 1 2 3 4; do
		wait "${pids[i - 1]}" || fail "session $i failed: $(<"$T_TMP/c$i.err")"
		grep -qx 'nogroup:x:65534:' "$T_TMP/c$i.out" || fail "session $i: /etc/group: $(<"$T_TMP/c$i.out")"
	done
	# (beside it the kept seccomp filter, t_seccache.sh, and the kept exec
	# hashes, t_exec.sh: whole files only)
	local entries
	entries=$(ls -A "$XDG_CACHE_HOME/warden" | grep -vxE 'seccomp-[0-9a-f]{32}-[0-9a-f]|exec-hashes')
	[[ $entries =~ ^etc-[0-9a-f]{32}$ ]] || fail "cache after concurrent sessions: $entries"
}
