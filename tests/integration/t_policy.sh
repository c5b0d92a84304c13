# t_policy.sh - profiles: `policy show`, errors naming FILE:LINE:COL, and the
# directives doing what they say inside the sandbox.
# shellcheck shell=bash

test_policy_show() {
	wardenc policy show
	assert_rc 0 'policy show'
	local v
	v=$("$WPROBE" json <<<"$OUT")
	[[ $v == VALID ]] || fail "policy show: not valid JSON: $(excerpt "$OUT")"
	assert_out_has '.git/hooks' 'default protects .git/hooks'
	assert_out_has '.env' 'default masks .env'
	printf 'mask *.wardentest\nprotect wardentest-dir\nenv pass WARDENTEST_PASS\n' >"$T_TMP/p.profile"
	wardenc policy show --profile "$T_TMP/p.profile"
	assert_rc 0 'policy show --profile'
	v=$("$WPROBE" json <<<"$OUT")
	[[ $v == VALID ]] || fail "policy show --profile: not valid JSON: $(excerpt "$OUT")"
	assert_out_has '*.wardentest' 'profile mask in the effective policy'
	assert_out_has 'wardentest-dir' 'profile protect in the effective policy'
	assert_out_has 'WARDENTEST_PASS' 'profile env pass in the effective policy'
}

# A profile, its include, its rules file and its hash list that lie in the
# workspace are read-only inside: the agent could loosen its next session
# by appending `net allow` to the profile or disabling a detection rule
# (both writes went through); each refusal is recorded.
test_profile_in_workspace_protected() {
	mkdir -p conf
	printf 'include conf/inc.profile\nrules %s/my.rules\nexec deny hashes:%s/conf/h.sha256\n' "$WS" "$WS" \
		>warden.profile
	printf 'env set WARDENTEST_INC=1\n' >conf/inc.profile
	printf '\n' >my.rules
	printf '%s  x\n' "$(printf x | sha256sum | cut -d' ' -f1)" >conf/h.sha256
	wsh 'for f in warden.profile conf/inc.profile my.rules conf/h.sha256; do
	       (echo "net allow 127.0.0.1:1" >>"$f") 2>/dev/null; echo "$f=$?"; done
	     mv warden.profile moved 2>/dev/null; echo "mv=$?"; echo ok >other; echo "other=$?"' \
		--profile "$(no_detect_actions "$WS/warden.profile")"
	assert_rc 0
	local f
	for f in warden.profile conf/inc.profile my.rules conf/h.sha256; do
		assert_out_match "^$f=[1-9]" "$f written from inside"
		matches -F 'net allow' <"$f" && fail "$f changed: $(excerpt "$(<"$f")")"
	done
	assert_out_match '^mv=[1-9]' 'the profile moved away'
	assert_out_line 'other=0' 'the rest of the workspace is writable'
	grep -F '"event":"file"' "$(latest_log)" | grep -F "\"path\":\"$WS/warden.profile\"" |
		matches -F '"decision":"deny"' || fail 'the refused write is not recorded'
}

# An option with a value given twice is refused, not silently the last one
# counting (a second -p dropped the first profile's masks without a word),
# for `run` and `policy show` alike; the repeatable ones add up.
test_option_given_twice() {
	printf 'mask a.txt\n' >"$T_TMP/p1.profile"
	printf 'mask b.txt\n' >"$T_TMP/p2.profile"
	wrun -p "$T_TMP/p1.profile" -p "$T_TMP/p2.profile" -- echo ran
	assert_rc 125 '-p twice'
	assert_out_lacks ran 'the command ran with one of the two profiles'
	assert_err_match "--profile given twice .*p1.profile.*p2.profile.*include" 'said, with include'
	wardenc policy show -p "$T_TMP/p1.profile" -p "$T_TMP/p2.profile"
	assert_rc 2 'policy show -p twice'
	local twice
	for twice in "-w $WS" "--state $T_TMP/s1" "--agent none" "--scratch $T_TMP/s2" "--task t1"; do
		# shellcheck disable=SC2086
		wrun $twice $twice -- echo ran
		assert_rc 125 "$twice twice"
		assert_out_lacks ran "$twice twice"
		assert_err_match 'given twice' "$twice twice said"
	done
	# an empty path: said as such (it was "warden: : cannot open")
	wrun --workspace= -- echo ran
	assert_rc 125 'an empty --workspace'
	assert_err_match '--workspace: an empty directory name' 'the empty workspace said'
	wrun -p '' -- echo ran
	assert_err_match '--profile: an empty file name' 'the empty profile said'
	wrun --stream "ocsf=$T_TMP/o1" --stream "ocsf=$T_TMP/o2" -- echo ran
	assert_rc 125 'ocsf twice'
	assert_err_match 'given twice for ocsf' 'ocsf twice said'
	wrun -p "$T_TMP/p1.profile" -n a.example -n b.example -e A=1 -e B=2 -- sh -c 'echo "$A$B"'
	assert_rc 0 'the repeatable ones'
	assert_out_line 12
}

test_profile_errors() {
	local p="$T_TMP/broken.profile" inc="$T_TMP/inc.profile" main="$T_TMP/main.profile"
	printf '# a comment\nread-only /usr\nwardentest-bogus-directive foo\n' >"$p"
	wrun --profile "$p" -- touch ran-with-broken-profile
	assert_rc 125 'run with a broken profile'
	assert_err_match "$p:3:[0-9]+:" 'error names FILE:LINE:COL'
	assert_host_absent ran-with-broken-profile 'the command must not run'
	wardenc policy show --profile "$p"
	assert_rc_nonzero 'policy show with a broken profile'
	assert_err_match "$p:3:[0-9]+:" 'policy show names FILE:LINE:COL'
	# an error in an included file names that file
	printf 'mask *.x\nunprotect\n' >"$inc"
	printf '# main\ninclude %s\n' "$inc" >"$main"
	wrun --profile "$main" -- true
	assert_rc 125 'error in an included profile'
	assert_err_match "$inc:2:[0-9]+:" 'included file named with line 2'
	# a missing include and a missing profile
	printf 'include %s/wardentest-missing.profile\n' "$T_TMP" >"$main"
	wrun --profile "$main" -- true
	assert_rc 125 'missing include'
	assert_err_match "$main:1:[0-9]+:" 'missing include names the including line'
	wrun --profile "$T_TMP/wardentest-no-such.profile" -- true
	assert_rc 125 'missing profile'
	# a line of more words than a directive takes: refused, not read past
	# (a `tool deny Bash` pattern of 70 words crashed the parser)
	{
		printf 'tool deny Bash'
		printf ' w%d' $(seq 70)
		printf '\n'
	} >"$p"
	wrun --profile "$p" -- touch ran-with-long-line
	assert_rc 125 'a line of 73 words'
	assert_err_match "$p:1:[0-9]+: tool: too many arguments \\(max 63\\)" 'the long line refused, said'
	assert_host_absent ran-with-long-line 'the command must not run'
}

test_profile_directives() {
	mkdir -p "$T_TMP/ro" "$T_TMP/rw" notes
	echo RO-CONTENT >"$T_TMP/ro/f"
	echo note >notes/n.txt
	echo SECRET-DATA >data.wardensecret
	cat >"$T_TMP/d.profile" <<-EOF
		# extra paths, protect, mask, env
		read-only $T_TMP/ro
		read-write $T_TMP/rw
		protect notes
		mask *.wardensecret
		env pass WARDENTEST_PASS
		env set WARDENTEST_SET=hello
	EOF
	export WARDENTEST_PASS=passed WARDENTEST_NOPASS=nope
	wbatch --profile "$T_TMP/d.profile" -- "ro_read|read $T_TMP/ro/f" "ro_write|write $T_TMP/ro/new" \
		"rw_write|write $T_TMP/rw/new" 'notes|write notes/x' 'notes_old|write notes/n.txt' \
		'masked|read data.wardensecret' 'other|write other.txt'
	bexpect ro_read allowed
	bexpect ro_write denied
	bexpect rw_write allowed
	bexpect notes denied
	bexpect notes_old denied
	bexpect masked denied EACCES
	bexpect other allowed
	assert_host_absent "$T_TMP/ro/new"
	assert_host_file "$T_TMP/rw/new" x 'read-write path'
	assert_host_file notes/n.txt note 'protected file'
	wrun --profile "$T_TMP/d.profile" -- env
	assert_out_line WARDENTEST_PASS=passed 'env pass'
	assert_out_line WARDENTEST_SET=hello 'env set'
	assert_out_lacks WARDENTEST_NOPASS 'not passed'
	# without the profile none of it applies
	wbatch "ro_read|read $T_TMP/ro/f" 'masked|read data.wardensecret'
	bexpect ro_read denied
	bexpect masked allowed
}

test_profile_unprotect() {
	printf 'unprotect .vscode\n' >"$T_TMP/u.profile"
	WBATCH_PRE='mkdir -p .claude 2>/dev/null' wbatch --profile "$T_TMP/u.profile" -- 'vscode|mkdir .vscode' 'tasks|write .vscode/tasks.json' 'claude|write .claude/x'
	bexpect vscode allowed
	bexpect tasks allowed
	bexpect claude denied
	assert_host_file .vscode/tasks.json x 'unprotected path written'
	assert_host_absent .claude
}

# A profile shared between machines: `exec deny FILE` naming a program this
# machine does not have is a note at the start, saying that the line denies
# nothing here and how to deny by content anywhere, not an error; so is an
# `exec allow FILE` outside anything the sandbox writes. Fail closed still:
# a FILE there that cannot be hashed (a FIFO; unprivileged, one behind a
# directory that cannot be searched) stops the session, and an allowlist's
# `exec allow FILE` missing in the workspace, where the agent could make it
# for the next session to allow, is refused [test_profile_missing_exec_target].
test_profile_missing_exec_target() {
	local p="$T_TMP/shared.profile" gone=/nonexistent-wardentest
	printf 'exec deny %s/nc\nexec allow %s/tool\n' "$gone" "$gone" >"$p"
	wrun --profile "$p" -- sh -c 'echo ran'
	assert_rc 0 'a missing exec deny target'
	assert_out_line ran
	assert_err_match "^warden: $p:1: exec deny $gone/nc: no such file here, so this line denies nothing on this machine; \`exec deny sha256:HEX\` \\(its \`sha256sum\`\\) denies the program by its content on any machine\$" \
		'the deny said'
	assert_err_match "^warden: $p:2: exec allow $gone/tool: no such file here, so this line allows nothing on this machine\$" \
		'the allow said'
	wardenc policy show --profile "$p"
	assert_rc 0 'policy show'
	assert_err_match "$p:1: exec deny $gone/nc: no such file here" 'policy show says it'
	# there, but not a file to hash: an error, as before
	mkfifo "$T_TMP/fifo"
	printf 'exec deny %s\n' "$T_TMP/fifo" >"$p"
	wrun --profile "$p" -- touch ran-with-fifo
	assert_rc 125 'a FIFO as exec deny target'
	assert_err_match "cannot hash $T_TMP/fifo \\(not a regular file\\)"
	assert_host_absent ran-with-fifo
	if ! is_root; then
		mkdir -p "$T_TMP/shut/in"
		chmod 000 "$T_TMP/shut"
		printf 'exec deny %s/shut/in/prog\n' "$T_TMP" >"$p"
		wrun --profile "$p" -- touch ran-behind-shut
		chmod 700 "$T_TMP/shut"
		assert_rc 125 'a target that cannot be reached'
		assert_err_match "cannot hash $T_TMP/shut/in/prog: Permission denied"
		assert_host_absent ran-behind-shut
	fi
	# an allowlist's missing allow in the workspace: the agent could make it
	printf 'exec default deny\nexec allow /usr\nexec allow /bin\nexec allow %s/tools/build\n' "$WS" >"$p"
	wrun --profile "$p" -- /bin/sh -c 'mkdir -p tools; echo made >tools/build'
	assert_rc 125 'a missing allow where the agent writes'
	assert_err_match "exec allow $WS/tools/build: no such file when the profile was read, in a place the agent can write \\($WS is writable inside the sandbox\\)"
	assert_host_absent tools/build 'the command ran'
}

# `env pass` of a variable warden sets inside (HOME, a proxy variable) is
# said at the start with why, and `cache` over a decoy credential of the
# home is said with what it costs: the decoy left out
# [test_profile_lines_said].
test_profile_lines_said() {
	local p="$T_TMP/said.profile"
	printf 'env pass HOME\nenv pass HTTPS_PROXY\nenv pass LC_*\ncache ~/.ssh\ncache ~/.cargo\n' >"$p"
	wrun --profile "$p" -- sh -c 'echo "home=$HOME"; ls -A ~/.ssh; echo listed'
	assert_rc 0
	assert_out_line 'home=/home/agent'
	assert_out_lacks id_ed25519 'the decoy is left out under the cache'
	assert_err_match "^warden: $p:1: env pass HOME: warden sets HOME inside \\(the sandbox's own home, /home/agent; \`env set HOME=VALUE\` sets another\\), so this line passes nothing\$"
	assert_err_match "^warden: $p:2: env pass HTTPS_PROXY: warden sets HTTPS_PROXY inside to its own proxy"
	[[ $ERR != *'LC_*'* ]] || fail "a glob said: $(excerpt "$ERR")"
	assert_err_match "^warden: cache ~/\\.ssh takes the place of warden's decoy credential ~/\\.ssh/id_ed25519 \\(a canary: opening it is a critical alert\\): it is left out"
	[[ $ERR != *'cache ~/.cargo'* ]] || fail "a cache that holds no decoy said: $(excerpt "$ERR")"
	printf 'cache ~/.ssh\ncanary off\n' >"$p"
	wrun --profile "$p" -- true
	[[ $ERR != *'decoy'* ]] || fail "said with canary off: $(excerpt "$ERR")"
}
