# t_exec.sh - exec control by content (`exec deny TARGET`): a program
# denied by its hash stays denied copied, renamed, hard-linked, symlinked,
# spelled through /proc/self/root or /proc/self/fd, handed to the dynamic
# loader, or written to a memfd; each refusal is an exec event with
# decision deny and an exec.denied alert. Bad rules are errors naming file
# and line before anything starts.
# shellcheck shell=bash

latest_log() { ls -t "$HOME/.local/state/warden/"*.jsonl 2>/dev/null | head -n 1; }

test_exec_deny_bypasses() {
	local ld
	ld=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1)
	cp /bin/true denied && printf 'warden-exec-deny-test' >>denied && chmod 755 denied
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/deny.profile"
	wrun --profile "$T_TMP/deny.profile" -- sh -c '
		try() { "$@" 2>/dev/null; echo "$1=$?"; }
		try ./denied
		cp denied copy; try ./copy
		mv copy renamed; try ./renamed
		ln denied hard; try ./hard
		ln -s denied soft; try ./soft
		try /proc/self/root'"$PWD"'/renamed
		exec 3<renamed; try /proc/self/fd/3
		'"${ld:+try $ld ./renamed}"'
		if [ -x /usr/bin/python3 ]; then
		  /usr/bin/python3 -c "import os; fd=os.memfd_create(\"x\", 0); os.write(fd, open(\"renamed\",\"rb\").read()); os.execv(\"/proc/self/fd/%d\" % fd, [\"memfd\"])" 2>/dev/null; echo "memfd=$?"
		fi
		try /bin/true'
	assert_rc 0
	local p
	for p in ./denied ./copy ./renamed ./hard ./soft "/proc/self/root$PWD/renamed" /proc/self/fd/3 ${ld:+"$ld"}; do
		grep -qxE "$(printf '%s' "$p" | sed 's/[.[\*^$/]/\\&/g')=(126|1|127)" <<<"$OUT" ||
			fail "$p was not refused: $(excerpt "$OUT")"
	done
	[[ -x /usr/bin/python3 ]] && { grep -qx 'memfd=1' <<<"$OUT" || fail "the memfd was not refused: $(excerpt "$OUT")"; }
	assert_out_line '/bin/true=0' 'another program still runs'
	local f n
	f=$(latest_log)
	n=$(grep -c '"event":"alert".*"rule":"exec.denied"' "$f")
	((n >= 8)) || fail "expected an exec.denied alert for each attempt, found $n"
	grep -q '"event":"exec".*"decision":"deny","reason":"exec deny sha256:' "$f" ||
		fail 'no exec event with decision deny and the rule'
	grep '"event":"exec"' "$f" | grep -F "\"program\":\"./renamed\"" | grep -q '"decision":"deny"' ||
		fail "the loader's program was not what was refused"
}

# A rule by hash and a file of hashes; bad rules refused before anything runs.
test_exec_deny_rules() {
	cp /bin/true denied && printf 'warden-exec-deny-test-2' >>denied
	local h
	h=$(sha256sum denied | cut -d' ' -f1)
	printf 'exec deny sha256:%s\n' "${h^^}" >"$T_TMP/hash.profile"
	wrun --profile "$T_TMP/hash.profile" -- sh -c './denied; echo "rc=$?"'
	assert_out_match '^rc=126$' 'denied by sha256:HEX'
	printf '# a list\n%s  denied\n\n' "$h" >"$T_TMP/list.sha256"
	printf 'exec deny hashes:%s\n' "$T_TMP/list.sha256" >"$T_TMP/list.profile"
	wrun --profile "$T_TMP/list.profile" -- sh -c './denied; echo "rc=$?"'
	assert_out_match '^rc=126$' 'denied by a file of hashes'
	wardenc policy show --profile "$T_TMP/list.profile"
	assert_out_has "$h" 'policy show lists the hash'
	# bad input: each an error naming the file and line, nothing run
	printf 'exec deny %s/missing\n' "$PWD" >"$T_TMP/bad1.profile"
	printf '\nexec deny sha256:1234\n' >"$T_TMP/bad2.profile"
	printf '%s  ok\nnot-a-hash  x\n' "$h" >"$T_TMP/bad.sha256"
	printf 'exec deny hashes:%s\n' "$T_TMP/bad.sha256" >"$T_TMP/bad3.profile"
	printf 'exec deny %s\n' "$PWD" >"$T_TMP/bad4.profile"
	local b
	for b in 1 2 3 4; do
		wrun --profile "$T_TMP/bad$b.profile" -- touch ran$b
		[[ $RC == 125 ]] || fail "bad rule $b: expected exit 125, got $RC"
		[[ $ERR == *"bad$b.profile:"[0-9]* ]] || fail "bad rule $b: the error does not name the file and line: $(excerpt "$ERR")"
		assert_host_absent ran$b "bad rule $b: the command ran"
	done
	wrun --profile "$T_TMP/bad3.profile" -- true
	[[ $ERR == *"bad.sha256:2"* ]] || fail "the hash file's bad line is not named: $(excerpt "$ERR")"
}

# A script denied by its hash, handed to its interpreter by name: refused;
# code given inline and another script still run.
test_exec_deny_script_by_name() {
	printf 'echo denied-ran\n' >denied.sh
	printf 'print("denied-ran")\n' >denied.py
	printf 'echo other-ran\n' >other.sh
	{ sha256sum denied.sh denied.py; } >"$T_TMP/scripts.sha256"
	printf 'exec deny hashes:%s\n' "$T_TMP/scripts.sha256" >"$T_TMP/scripts.profile"
	wrun --profile "$T_TMP/scripts.profile" -- sh -c '
		sh denied.sh 2>/dev/null; echo "sh=$?"
		bash -e ./denied.sh 2>/dev/null; echo "bash=$?"
		[ -x /usr/bin/python3 ] && { /usr/bin/python3 -u denied.py 2>/dev/null; echo "py=$?"; }
		sh -c "echo inline-ran"; sh other.sh'
	assert_rc 0
	assert_out_lacks denied-ran 'a denied script ran'
	assert_out_line 'sh=126' 'sh denied.sh'
	have bash && assert_out_line 'bash=126' 'bash -e ./denied.sh'
	[[ -x /usr/bin/python3 ]] && assert_out_line 'py=126' 'python3 -u denied.py'
	assert_out_line inline-ran 'inline code'
	assert_out_line other-ran 'another script'
	grep -q '"event":"exec".*"program":"denied.sh".*"decision":"deny"' "$(latest_log)" ||
		fail 'no exec event refusing the script by name'
}
