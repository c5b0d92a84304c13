# t_execid.sh - the real program in every exec event (issue 38, item 4):
# the loader run as a program (`ld.so PROGRAM`, with options) records the
# program's path, hash and code hash beside the loader's, with or without
# exec rules; a script records its interpreter's path, hash and code hash
# (`#!/usr/bin/env python3`: env, then python3's own exec with the script);
# an execute-only file (mode 0111) run unprivileged is hashed all the same
# (a helper in the sandbox's user namespace reads it); and the code hash
# (src/common/elfhash.h: the loaded segments), checked here against an
# independent reading of its definition (elfcode.py), makes a copy of a
# program denied by `exec deny code:FILE` with bytes appended, or stripped
# of its symbols, the same program: refused.
# shellcheck shell=bash

EI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ei_code() { python3 "$EI_DIR/elfcode.py" "$1"; }
ei_loader() { ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1; }

# the exec events of log f whose "path" is p
ei_events() { grep '"event":"exec"' "$1" | grep -F "\"path\":\"$2\""; }

# ld.so PROGRAM: the program's path, hash and code hash beside the
# loader's, with no exec rule and with one.
test_execid_loader_program() {
	local ld want code ldsha rules f
	ld=$(ei_loader)
	[[ -n $ld ]] || skip 'no known dynamic loader here'
	have python3 || skip 'no python3 on the host'
	want=$(sha256sum /bin/true | cut -d' ' -f1)
	code=$(ei_code /bin/true)
	ldsha=$(sha256sum "$(readlink -f "$ld")" | cut -d' ' -f1)
	printf 'exec deny sha256:%064d\n' 0 >"$T_TMP/rules.profile"
	for rules in '' "$T_TMP/rules.profile"; do
		local opts=()
		[[ -z $rules ]] || opts=(--profile "$rules")
		cp /bin/true copy
		wsh "$ld ./copy && $ld --argv0 renamed --library-path /nowhere ./copy && echo loaded" "${opts[@]}"
		assert_rc 0
		assert_out_line loaded
		f=$(latest_log)
		[[ $(ei_events "$f" "$ld" | grep -F '"program":"./copy"' | grep -F "\"program_sha256\":\"$want\"" |
			grep -F "\"program_code_sha256\":\"$code\"" | grep -cF "\"sha256\":\"$ldsha\"") == 2 ]] ||
			fail "rules ${rules:-none}: the loader's program not recorded with its hash and code hash beside the loader's: $(excerpt "$(ei_events "$f" "$ld")")"
	done
}

# A script: its interpreter's path, hash and code hash; through env, env's
# and then python3's own exec, which names the script as its program.
test_execid_script_interpreter() {
	local sh shsha shcode envsha f
	have python3 || skip 'no python3 on the host'
	sh=$(readlink -f /bin/sh)
	shsha=$(sha256sum "$sh" | cut -d' ' -f1)
	shcode=$(ei_code "$sh")
	printf '#!/bin/sh\ntrue\n' >s.sh && chmod +x s.sh
	printf '#!/usr/bin/env python3\nprint("py ran")\n' >s.py && chmod +x s.py
	wsh './s.sh && ./s.py && echo done'
	assert_rc 0
	assert_out_line done
	f=$(latest_log)
	ei_events "$f" ./s.sh | grep -F "\"interpreter_sha256\":\"$shsha\"" | grep -F "\"interpreter_code_sha256\":\"$shcode\"" |
		grep -F "\"interpreter_resolved\":\"$sh\"" >/dev/null ||
		fail "the script's interpreter not recorded with its path, hash and code hash: $(excerpt "$(ei_events "$f" ./s.sh)")"
	[[ -x /usr/bin/python3 ]] || return 0
	assert_out_line 'py ran'
	envsha=$(sha256sum "$(readlink -f /usr/bin/env)" | cut -d' ' -f1)
	ei_events "$f" ./s.py | grep -F '"interpreter":"/usr/bin/env python3"' | grep -F "\"interpreter_sha256\":\"$envsha\"" |
		grep -F '"interpreter_resolved":"/usr/bin/env"' >/dev/null ||
		fail "the env interpreter not recorded: $(excerpt "$(ei_events "$f" ./s.py)")"
	grep '"event":"exec"' "$f" | grep -F '"argv":["python3","./s.py"]' | grep -F '"program":"./s.py"' |
		grep -E '"sha256":"[0-9a-f]{64}"' | grep -E '"code_sha256":"[0-9a-f]{64}"' >/dev/null ||
		fail "env's exec of python3 with the script not recorded: $(excerpt "$(grep -F 's.py' "$f")")"
}

# An execute-only file: hashed all the same (unprivileged, by the helper in
# the sandbox's user namespace; as root the supervisor reads it itself).
test_execid_exec_only() {
	local want code f
	have python3 || skip 'no python3 on the host'
	want=$(sha256sum /bin/true | cut -d' ' -f1)
	code=$(ei_code /bin/true)
	wsh 'cp /bin/true xo && chmod 0111 xo && ./xo && echo ran; if cat xo >/dev/null 2>&1; then echo readable; fi'
	assert_rc 0
	assert_out_line ran
	is_root || assert_out_lacks readable 'the file is execute-only to its owner'
	f=$(latest_log)
	ei_events "$f" ./xo | grep -F "\"sha256\":\"$want\"" | grep -F "\"code_sha256\":\"$code\"" >/dev/null ||
		fail "the execute-only file not hashed: $(excerpt "$(ei_events "$f" ./xo)")"
	! ei_events "$f" ./xo | matches hash_missing || fail 'hash_missing on an execute-only file'
}

# A program denied by its code hash: a copy with bytes appended and a copy
# stripped of its symbols are refused too (their file hashes differ), and
# so is the program handed to the loader; another program runs. `warden
# rules show` lists the code hash.
test_execid_deny_padded_stripped() {
	local code ld f
	have cc && have strip && have python3 || skip 'needs cc, strip and python3 on the host'
	ld=$(ei_loader)
	printf 'int main(void) { return 0; }\n' >"$T_TMP/p.c"
	cc -g -O0 -o prog "$T_TMP/p.c" || skip 'cc cannot build a program here'
	cp prog padded && printf 'appended bytes' >>padded
	strip -o stripped prog
	[[ $(sha256sum <prog) != "$(sha256sum <padded)" && $(sha256sum <prog) != "$(sha256sum <stripped)" ]] ||
		fatal 'the copies have the same file hash'
	code=$(ei_code prog)
	[[ $(ei_code padded) == "$code" && $(ei_code stripped) == "$code" ]] ||
		fatal "the definition gives the copies another code hash"
	printf 'exec deny code:%s\n' "$PWD/prog" >"$T_TMP/code.profile"
	no_detect_actions "$T_TMP/code.profile" >/dev/null
	wrun --profile "$T_TMP/code.profile" -- sh -c '
		try() { "$@" 2>/dev/null; echo "$1=$?"; }
		try ./prog; try ./padded; try ./stripped
		'"${ld:+try $ld ./padded}"'
		try /bin/true'
	assert_rc 0
	local p
	for p in ./prog ./padded ./stripped ${ld:+"$ld"}; do
		assert_out_line "$p=126" "$p refused by its code hash"
	done
	assert_out_line '/bin/true=0' 'another program still runs'
	f=$(latest_log)
	for p in ./padded ./stripped; do
		ei_events "$f" "$p" | grep -F "\"code_sha256\":\"$code\"" |
			grep -F "\"reason\":\"exec deny code:$code" >/dev/null ||
			fail "$p: no exec event refused by the code hash: $(excerpt "$(ei_events "$f" "$p")")"
	done
	grep -F '"rule":"exec.denied"' "$f" | grep -F "code:$code" >/dev/null || fail 'no exec.denied alert naming the code hash'
	wardenc rules show --profile "$T_TMP/code.profile"
	assert_out_has "exec deny code:$code" 'rules show lists the code hash'
}

# `exec allow code:HEX` under `exec default deny`: a padded copy of an
# allowed program runs; bad code rules are errors naming the file and line.
test_execid_allow_code_and_bad_rules() {
	local code
	have python3 || skip 'no python3 on the host'
	cp /bin/true mine && printf 'padding' >>mine
	code=$(ei_code /bin/true)
	printf 'exec default deny\nexec allow /usr\nexec allow code:%s\n' "${code^^}" >"$T_TMP/allow.profile"
	wrun --profile "$T_TMP/allow.profile" -- sh -c './mine; echo "mine=$?"'
	assert_out_line 'mine=0' 'allowed by its code hash'
	printf 'exec default deny\nexec allow /usr\n' >"$T_TMP/noallow.profile"
	wrun --profile "$T_TMP/noallow.profile" -- sh -c './mine; echo "mine=$?"'
	assert_out_line 'mine=126' 'not allowed without the code hash'
	printf '#!/bin/sh\n' >script.sh
	printf 'exec deny code:1234\n' >"$T_TMP/bad1.profile"
	printf '\nexec deny code:%s\n' "$PWD/script.sh" >"$T_TMP/bad2.profile"
	printf 'exec ask code:%s\n' "$code" >"$T_TMP/bad3.profile"
	local b
	for b in 1 2 3; do
		wrun --profile "$T_TMP/bad$b.profile" -- touch ran$b
		[[ $RC == 125 ]] || fail "bad rule $b: expected exit 125, got $RC"
		[[ $ERR == *"bad$b.profile:"[0-9]* ]] || fail "bad rule $b: the error does not name the file and line: $(excerpt "$ERR")"
		assert_host_absent ran$b "bad rule $b: the command ran"
	done
	[[ $ERR == *"code hash asks nothing"* ]] || fail "exec ask code: not explained: $(excerpt "$ERR")"
}
