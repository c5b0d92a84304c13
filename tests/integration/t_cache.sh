# t_cache.sh - `cache ~/PATH`: a directory of the sandbox's home kept for
# the workspace's next sessions in warden's own data directory (never the
# host's ~/PATH), another workspace's apart, bound noexec, not kept under
# --review; and the places warden refuses to keep one in.
# shellcheck shell=bash

# The workspace's cache directory on the host (src/session/caches.h).
cache_root() { # [WORKSPACE]
	local sum
	sum=$(printf '%s' "$(realpath "${1:-$WS}")" | sha256sum)
	printf '%s/.local/share/warden/caches/%s' "$HOME" "${sum:0:32}"
}

cache_profile() {
	printf 'cache ~/.cargo/registry\ncache ~/.cache/go-build/\n' >"$T_TMP/cache.profile"
}

test_cache_kept_per_workspace() {
	cache_profile
	wsh 'echo crate >~/.cargo/registry/c; echo obj >~/.cache/go-build/o
	     echo gone >~/.cargo/elsewhere
	     cp /bin/true ~/.cargo/registry/t && ~/.cargo/registry/t; echo "exec=$?"' \
		--profile "$T_TMP/cache.profile"
	assert_rc 0 'first session'
	assert_out_line 'exec=126' 'a program in a cache runs (it must be noexec)'
	wardenc log show --json
	matches -F '"path":"/home/agent/.cargo/registry/t"' <<<"$OUT" &&
		matches -F '"decision":"deny","reason":"on a noexec mount' <<<"$OUT" ||
		fail "the refused exec in the cache is not on the log: $(excerpt "$OUT")"

	wsh 'cat ~/.cargo/registry/c ~/.cache/go-build/o; ls ~/.cargo; echo "home=$(ls -A ~ | tr "\n" " ")"' \
		--profile "$T_TMP/cache.profile"
	assert_rc 0 'second session'
	assert_out_line crate 'the cache kept for the next session'
	assert_out_line obj 'the second cache kept'
	assert_out_lacks elsewhere 'the rest of the home was kept too'
	local root
	root=$(cache_root)
	assert_host_file "$root/.cargo%2Fregistry/c" crate 'the cache on the host, in warden'"'"'s directory'
	[[ $(stat -c %a "$root") == 700 && $(stat -c %a "$root/.cargo%2Fregistry") == 700 ]] ||
		fail "cache directories not 0700: $(stat -c '%n %a' "$root" "$root"/*)"
	assert_host_absent "$HOME/.cargo" "the host's own ~/.cargo made"
	assert_host_file "$root/%workspace" "$(realpath "$WS")" 'the workspace named beside its caches'

	local other
	other=$(mktemp -d "$T_TMP/other.XXXXXX")
	cd "$other" || fatal "cd $other"
	wsh 'ls -A ~/.cargo/registry; echo listed' --profile "$T_TMP/cache.profile"
	cd "$WS" || fatal "cd $WS"
	assert_rc 0 'another workspace'
	assert_out_lacks crate "another workspace sees this one's cache"
	assert_out_line listed

	printf 'exec allow-writable /home/agent/.cargo/registry\n' >>"$T_TMP/cache.profile"
	wsh '~/.cargo/registry/t; echo "exec=$?"' --profile "$T_TMP/cache.profile"
	assert_out_line 'exec=0' 'a cache named by exec allow-writable runs its programs'

	wardenc log show --json
	local start
	start=$(grep '"event":"session.start"' <<<"$OUT" | tail -n 1)
	matches -F "\"caches\":{\"paths\":[\"~/.cargo/registry\",\"~/.cache/go-build\"],\"dir\":\"$(realpath "$root")\"}" <<<"$start" ||
		fail "session.start does not record the caches: $(excerpt "$start")"
	if have python3 && python3 -c 'import jsonschema' 2>/dev/null && [[ -f ${SC_SCHEMA-} ]]; then
		local f
		f=$(latest_log)
		python3 "$SC_DIR/schema_check.py" "$SC_SCHEMA" "$f" 2>"$T_TMP/schema.err" >/dev/null ||
			fail "lines the schema does not describe: $(head -c 1500 "$T_TMP/schema.err")"
	else
		note 'schema not checked: no python3-jsonschema'
	fi

	wardenc policy show --profile "$T_TMP/cache.profile"
	assert_out_has '"~/.cargo/registry"' 'policy show lists the caches'
}

test_cache_not_kept_in_review() {
	cache_profile
	wsh 'echo crate >~/.cargo/registry/c' --profile "$T_TMP/cache.profile"
	assert_rc 0 'first session'
	wsh 'cat ~/.cargo/registry/c; echo planted >~/.cargo/registry/p; echo done' --review \
		--profile "$T_TMP/cache.profile"
	assert_rc 0 '--review session'
	assert_out_lacks crate 'the cache shown to a --review session'
	assert_out_line done
	assert_err_match 'cache: not kept in a --review session' 'the note'
	wardenc log show --json
	grep '"event":"session.start"' <<<"$OUT" | tail -n 1 | matches -F '"dir":null}' ||
		fail 'session.start of a --review session does not say the caches were not kept'
	assert_host_absent "$(cache_root)/.cargo%2Fregistry/p" 'a --review session wrote the cache'
	wsh 'cat ~/.cargo/registry/c' --read-only --profile "$T_TMP/cache.profile"
	assert_out_lacks crate 'the cache shown with a read-only workspace'
	assert_err_match 'cache: not kept with a read-only workspace'
}

test_cache_refused_places() {
	cache_profile
	local root elsewhere
	root=$(cache_root)
	elsewhere=$(mktemp -d "$T_TMP/elsewhere.XXXXXX")
	mkdir -p "$(dirname "$root")"
	ln -s "$elsewhere" "$root"
	wsh 'echo ran' --profile "$T_TMP/cache.profile"
	assert_rc_nonzero 'a cache directory that is a symlink'
	assert_out_lacks ran
	assert_err_match "cache directory $root"
	[[ -z $(ls -A "$elsewhere") ]] || fail "something made through the symlink: $(ls -A "$elsewhere")"
	rm "$root"

	mkdir -p "$root" && chmod 0777 "$root"
	wsh 'echo ran' --profile "$T_TMP/cache.profile"
	assert_rc_nonzero 'a cache directory others can write'
	assert_err_match 'writable by other users .*chmod go-w'
	chmod 0700 "$root"

	ln -s /etc "$root/.cargo%2Fregistry"
	wsh 'echo ran' --profile "$T_TMP/cache.profile"
	assert_rc_nonzero 'a cache that is a symlink'
	assert_err_match 'cache ~/.cargo/registry'
	rm "$root/.cargo%2Fregistry"

	mkfifo "$root/.cargo%2Fregistry"
	wsh 'echo ran' --profile "$T_TMP/cache.profile"
	assert_rc 125 'a cache that is a FIFO'
	assert_err_match 'cache ~/.cargo/registry: .*Not a directory'
	wardenc cache list
	assert_out_match '^  ~/\.cargo/registry +\(not a directory' 'list says so, without blocking'
	rm "$root/.cargo%2Fregistry"

	wsh 'ls ~/.cargo/registry >/dev/null && echo ran' --profile "$T_TMP/cache.profile"
	assert_rc 0 'the place mended'
	assert_out_line ran

	fake_claude
	printf 'cache ~/.claude/projects\n' >"$T_TMP/agent.profile"
	wrun --profile "$T_TMP/agent.profile" -- claude
	assert_rc 125 "a cache within the agent's state"
	assert_out_lacks count= 'the client ran'
	assert_err_match "cache ~/.claude/projects: ~/.claude is the agent's state"

	printf 'cache ~/../x\n' >"$T_TMP/bad.profile"
	wsh 'echo ran' --profile "$T_TMP/bad.profile"
	assert_rc 125 'a cache path with ..'
	assert_err_match "cache: name a directory below ~"
}

test_cache_command() {
	printf 'cache ~/.cargo/registry\ncache ~/workspace\n' >"$T_TMP/cache.profile"
	wardenc cache list
	assert_rc 0 'list with no caches yet'
	assert_out_has 'no caches'
	wsh 'head -c 300000 /dev/zero >~/.cargo/registry/crate; echo w >~/workspace/f; echo ok' \
		--profile "$T_TMP/cache.profile"
	assert_rc 0 'a cache named like the file that names the workspace'
	assert_out_line ok
	local gone
	gone=$(mktemp -d "$T_TMP/gone.XXXXXX")
	cd "$gone" || fatal "cd $gone"
	wsh 'echo g >~/.cargo/registry/g' --profile "$T_TMP/cache.profile"
	cd "$WS" || fatal "cd $WS"
	rm -r "$gone"
	wardenc cache list
	assert_rc 0 'list'
	assert_out_line "$(realpath "$WS")" 'the workspace listed'
	assert_out_line "$gone (gone)" 'a workspace removed since'
	assert_out_match '^  ~/\.cargo/registry +(29[0-9]\.[0-9]|3[0-9][0-9]\.[0-9]) KiB$' "the cache's size"
	assert_out_match '^  ~/workspace +' 'the cache ~/workspace'

	# refused while a session uses them
	warden_bg "$T_TMP/bg.out" --profile "$T_TMP/cache.profile" -- sh -c 'echo started; sleep 30'
	wait_for "$T_TMP/bg.out" '^started' 20 ||
		fatal "the background session did not start: $(excerpt "$(cat "$T_TMP/bg.out.err")")"
	wardenc cache clear
	assert_rc 125 'clear while a session runs'
	assert_err_match 'a running session uses them'
	[[ $(stat -c %s "$(cache_root)/.cargo%2Fregistry/crate" 2>&1) == 300000 ]] ||
		fail 'the cache went while the session ran'
	kill "$WPID" 2>/dev/null
	wait "$TPID" 2>/dev/null

	wardenc cache clear "$WS"
	assert_rc 0 'clear'
	assert_out_has "cleared the caches of $(realpath "$WS")"
	assert_host_absent "$(cache_root)" 'the caches left on the disk'
	wsh 'ls -A ~/.cargo/registry | wc -l' --profile "$T_TMP/cache.profile"
	assert_out_line 0 'the next session starts the cache afresh'
	wardenc cache clear "$gone"
	assert_rc 0 'clear a workspace that is gone'
	assert_out_has "cleared the caches of $gone"
	wardenc cache clear "$gone"
	assert_out_has 'no caches for'
}
