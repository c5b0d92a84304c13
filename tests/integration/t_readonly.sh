# t_readonly.sh - a read-only workspace (run --read-only, profile `workspace
# read-only`, src/session/layout.c): writes in the tree fail with EROFS and
# are logged and named on stderr with a hint; the scratch directory
# ($WARDEN_SCRATCH) and each --output directory, inside the workspace or
# outside, take writes; nothing else in the tree changes; outputs that would
# expose what the sandbox hides are refused.
# shellcheck shell=bash

# ro_tree_hash [EXCLUDED-DIR]: names, modes, sizes and contents of the
# workspace, one hash.
ro_tree_hash() {
	local ex=${1:-/nonexistent}
	{
		find . -path "./$ex" -prune -o -printf '%p %y %m %s\n' | LC_ALL=C sort
		find . -path "./$ex" -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
	} | sha256sum
}

# ro_log_of_last: the latest session's events (JSON lines) in OUT.
ro_log_of_last() {
	wardenc log show --json
}

test_readonly_writes() {
	mkdir -p src && echo original >src/a.txt && echo keep >top.txt
	local before
	before=$(ro_tree_hash out)
	local outside=$T_TMP/out-outside
	wrun --read-only --output out --output "$outside" -- sh -c 'for w in "echo x > src/a.txt" "echo y > new.txt" "mkdir d" "rm top.txt" \
		"mv top.txt moved.txt" "ln -s x link" "touch src/a.txt.new"; do
			if sh -c "$w" 2>/dev/null; then echo "WROTE: $w"; fi
		done
		echo o1 > out/made-inside.txt && echo o2 > "$0/made-outside.txt" &&
		mkdir -p out/deep/er && echo o3 > out/deep/er/f &&
		echo s > "$WARDEN_SCRATCH/s.txt" && cat "$WARDEN_SCRATCH/s.txt" &&
		echo "SCRATCH=$WARDEN_SCRATCH"; echo x 2>&1 > src/a.txt; true' "$outside"
	assert_rc 0
	assert_out_lacks WROTE 'a write in the read-only tree went through'
	[[ $(<src/a.txt) == original ]] || fail "src/a.txt changed: $(excerpt "$(<src/a.txt)")"
	[[ $(ro_tree_hash out) == "$before" ]] || fail 'the tree outside out/ changed'
	assert_host_file out/made-inside.txt o1 'an --output inside the workspace'
	assert_host_file out/deep/er/f o3 'a directory made in an --output'
	assert_out_has 'SCRATCH=' 'no $WARDEN_SCRATCH inside'
	local scratch
	scratch=$(sed -n 's/^SCRATCH=//p' <<<"$OUT")
	[[ -n $scratch ]] || fail 'WARDEN_SCRATCH was empty'
	[[ -n $scratch && ! -e $scratch ]] || fail "the session's scratch directory $scratch stayed"
	# stderr: each refused write named, with the hint
	[[ $ERR == *"src/a.txt"*"read-only"*"--output"* ]] ||
		fail "no hint naming --output on stderr: $(excerpt "$ERR")"
	ro_log_of_last
	local ev
	ev=$(grep '"event":"file"' <<<"$OUT" | grep '"decision":"deny"')
	for p in src/a.txt new.txt d top.txt link; do
		grep -qF "\"path\":\"$WS/$p\"" <<<"$ev" || fail "no refused file event for $p: $(excerpt "$ev")"
	done
	grep '"event":"file"' <<<"$OUT" | grep '"decision":"deny"' | grep 'made-inside\|made-outside\|s.txt' >/dev/null &&
		fail 'a write to an output or the scratch directory was logged as refused'
	local start
	start=$(grep '"event":"session.start"' <<<"$OUT")
	[[ $start == *'"read_only":true'* && $start == *"\"outputs\":[\"$WS/out\",\"$outside\"]"* &&
		$start == *"\"scratch\":\"$scratch\""* ]] ||
		fail "session.start does not carry the layout: $(excerpt "$start")"
}

test_readonly_outside_output() {
	# an --output outside the workspace, missing, is made; the agent's file
	# lands there (root: idmapped like the workspace, so the owner is the
	# directory's)
	local outside=$T_TMP/new/out
	wrun --read-only --output "$outside" -- sh -c 'echo hello > "$0/f.txt" && echo done' "$outside"
	assert_rc 0
	assert_out_has done
	assert_host_file "$outside/f.txt" hello 'an --output outside the workspace'
	[[ $(stat -c %u "$outside/f.txt") == "$(id -u)" ]] ||
		fail "the output file is owned by $(stat -c %u "$outside/f.txt"), not $(id -u)"
}

test_readonly_profile() {
	printf 'workspace read-only\n' >"$T_TMP/ro.profile"
	wsh 'echo x > f 2>/dev/null && echo WROTE; echo end' --profile "$T_TMP/ro.profile"
	assert_rc 0
	assert_out_lacks WROTE 'the profile did not make the workspace read-only'
	assert_host_absent f
	printf 'workspace sideways\n' >"$T_TMP/bad.profile"
	wsh true --profile "$T_TMP/bad.profile"
	assert_rc 125
	assert_err_match 'bad.profile:1:.*read-only or read-write'
}

test_readonly_scratch_kept() {
	local s=$T_TMP/myscratch
	wsh 'echo kept > "$WARDEN_SCRATCH/k" && echo ok' --read-only --scratch "$s"
	assert_rc 0
	assert_host_file "$s/k" kept '--scratch DIR keeps what was written'
	wsh true --read-only --scratch sub/deep
	assert_rc 125
	assert_err_match 'scratch.*lies in the workspace'
	# refused before anything is made: the refusal left sub/deep behind
	assert_host_absent sub 'a refused --scratch made its directory'
	# ./DIR is DIR (it was refused for its '.')
	wsh 'echo kept > "$WARDEN_SCRATCH/k"' --read-only --scratch "./../$(basename "$T_TMP")/s2"
	assert_rc 125 'a .. in --scratch'
	assert_err_match "without '\.\.' components"
	(cd "$T_TMP" && wsh 'echo kept > "$WARDEN_SCRATCH/k"' -w "$WS" --read-only --scratch ./s3)
	[[ -f $T_TMP/s3/k ]] || fail '--scratch ./DIR was not taken as DIR'
}

test_readonly_refused_outputs() {
	mkdir -p real .git "$T_TMP/elsewhere" && ln -s real linked && ln -s "$T_TMP/elsewhere" away &&
		echo 'SECRET=1' >.env
	local bad
	for bad in linked away/x .git/x . / /etc/out "$HOME" "$HOME/.config/x" .env "$WS/.."; do
		wrun --read-only --output "$bad" -- true
		[[ $RC == 125 ]] || fail "--output $bad was not refused (rc $RC)"
		[[ $ERR == *"refusing --output"* || $ERR == *"--output"* ]] ||
			fail "--output $bad: no word naming it: $(excerpt "$ERR")"
	done
	assert_host_absent "$T_TMP/elsewhere/x"
	assert_host_absent .git/x
}

test_readonly_outputs_swept() {
	# a repository the agent makes in an output outside the workspace (or
	# in a kept --scratch DIR) would run its hooks on the host's next git
	# command there: the end-of-session sweep moves it aside, as in the
	# workspace
	local out=$T_TMP/swept-out scr=$T_TMP/swept-scratch
	wrun --read-only --output "$out" --scratch "$scr" -- sh -c \
		'for d in "$0" "$0/sub" "$WARDEN_SCRATCH"; do
			mkdir -p "$d/.git/hooks" && echo "#!/bin/sh" > "$d/.git/hooks/pre-commit" || exit 1
		done; echo planted' "$out"
	assert_rc 0
	assert_out_has planted
	local d
	for d in "$out" "$out/sub" "$scr"; do
		[[ ! -e $d/.git ]] || fail "the .git made in $d stayed"
		compgen -G "$d/.git.warden-quarantine-*" >/dev/null || fail "no quarantined .git in $d"
	done
	[[ $ERR == *"was moved to"* ]] || fail "no word on stderr about the moved repositories: $(excerpt "$ERR")"
}

# A read-only session's scratch directory is made outside the workspace
# even when TMPDIR names the workspace (it was made in it: in a directory
# the session keeps read-only, and one the agent's scratch files then
# mixed into); a TMPDIR where none can be made is named as TMPDIR, not as
# a --scratch the user did not pass.
test_readonly_scratch_tmpdir() {
	TMPDIR=$WS wsh 'echo "scratch=$WARDEN_SCRATCH"; echo x >"$WARDEN_SCRATCH/f" && echo wrote' --read-only
	assert_rc 0
	assert_out_line wrote 'the scratch directory is writable'
	local d
	d=$(sed -n 's/^scratch=//p' <<<"$OUT")
	[[ -n $d && $d != "$WS"* ]] || fail "the scratch directory lies in the workspace: $d"
	[[ -z $(find "$WS" -maxdepth 1 -name 'warden-scratch-*') ]] || fail 'a scratch directory left in the workspace'
	TMPDIR=/proc wsh 'echo ran' --read-only
	assert_rc 125
	assert_out_lacks ran
	assert_err_match 'scratch directory in /proc \(\$TMPDIR\)' 'TMPDIR named'
}
