# t_exec.sh - exec control by content (`exec deny TARGET`): a program
# denied by its hash stays denied copied, renamed, hard-linked, symlinked,
# spelled through /proc/self/root or /proc/self/fd, handed to the dynamic
# loader, or written to a memfd; each refusal is an exec event with
# decision deny and an exec.denied alert. Bad rules are errors naming file
# and line before anything starts.
# shellcheck shell=bash


test_exec_deny_bypasses() {
	local ld
	ld=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1)
	cp /bin/true denied && printf 'warden-exec-deny-test' >>denied && chmod 755 denied
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/deny.profile"
	no_detect_actions "$T_TMP/deny.profile" >/dev/null
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
	grep '"event":"exec"' "$f" | grep -F "\"program\":\"./renamed\"" | grep '"decision":"deny"' >/dev/null ||
		fail "the loader's program was not what was refused"
}

# The loader handed a denied program every way a tester found: past an
# option that takes a value warden did not know (--glibc-hwcaps-prepend:
# the option's value was judged, the program ran), as a byte-identical copy
# under another name, as a script's interpreter with the program on its
# #! line, and by a name without a '/' (the loader searches the library
# path: refused, warden cannot tell what it would find). Under `exec
# default deny` the same. The loader still runs what is allowed, and says
# its version.
test_exec_deny_loader_ways() {
	local ld
	ld=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1)
	[[ -n $ld ]] || skip 'no glibc loader here'
	cp /bin/true denied && printf 'warden-exec-deny-loader' >>denied && chmod 755 denied
	printf '#!%s %s\n' "$ld" "$PWD/denied" >sb.sh && chmod 755 sb.sh
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/deny.profile"
	no_detect_actions "$T_TMP/deny.profile" >/dev/null
	local script='
		try() { "$@" 2>/dev/null; echo "$1 $2=$?"; }
		try '"$ld"' --glibc-hwcaps-prepend x ./denied
		try '"$ld"' --glibc-hwcaps-mask x --inhibit-cache ./denied
		cp '"$ld"' ./myld; try ./myld ./denied
		try ./sb.sh
		try '"$ld"' --library-path . denied
		try '"$ld"' /bin/true
		'"$ld"' --version >/dev/null; echo "version=$?"'
	wrun --profile "$T_TMP/deny.profile" -- sh -c "$script"
	assert_rc 0
	local w
	for w in "$ld --glibc-hwcaps-prepend" "$ld --glibc-hwcaps-mask" './myld ./denied' './sb.sh ' \
		"$ld --library-path"; do
		assert_out_line "$w=126" "$w refused"
	done
	assert_out_line "$ld /bin/true=0" 'the loader runs an allowed program'
	assert_out_line 'version=0' 'the loader says its version'
	local f
	f=$(latest_log)
	grep -F '"event":"exec"' "$f" | grep -F '"path":"./myld"' | grep -F '"program":"./denied"' |
		matches -F '"decision":"deny"' || fail "the loader's copy: $(excerpt "$(grep -F myld "$f")")"
	grep -F '"event":"exec"' "$f" | grep -F '"path":"./sb.sh"' | grep -F "\"program\":\"$PWD/denied\"" |
		matches -F '"decision":"deny"' || fail "the #! loader: $(excerpt "$(grep -F sb.sh "$f")")"
	grep -F '"event":"exec"' "$f" | matches -F 'a name without a' || fail 'the library path search not said'
	# exec default deny: the loader's program must be allowed, however given
	printf 'exec default deny\nexec allow /usr\nexec allow /bin\nexec allow /lib\nexec allow /lib64\n' \
		>"$T_TMP/allow.profile"
	no_detect_actions "$T_TMP/allow.profile" >/dev/null
	wrun --profile "$T_TMP/allow.profile" -- sh -c "$script"
	for w in "$ld --glibc-hwcaps-prepend" "$ld --glibc-hwcaps-mask" './sb.sh ' "$ld --library-path"; do
		assert_out_line "$w=126" "default deny: $w refused"
	done
	assert_out_line "$ld /bin/true=0" 'default deny: the loader runs an allowed program'
}

# A script whose #! interpreter is a script too: the kernel runs that
# one's interpreter in turn, up to four scripts deep. A red team ran a
# denied program (and a denied interpreter) that way: only the first link
# was judged, the event named the middle script as the interpreter. Every
# link is judged now: the denied program at the end is refused, however
# deep, and so is a denied script in the middle; the event names the
# program at the end as the interpreter and the scripts between. Allowed,
# a chain as deep as the kernel follows runs; one deeper is refused as
# the kernel refuses it.
test_exec_deny_nested_interpreter() {
	cp /bin/echo denied && printf 'warden-nested' >>denied && chmod 755 denied
	printf '#!%s nested-ran\n' "$PWD/denied" >b && printf '#!%s\n' "$PWD/b" >a
	printf '#!/bin/echo mid-ran\n' >mid && printf '#!%s\n' "$PWD/mid" >a2
	local i prev=/bin/echo
	for i in 1 2 3 4 5 6; do
		printf '#!%s\n' "$prev" >"l$i" && prev=$PWD/l$i
	done
	chmod 755 a b mid a2 l1 l2 l3 l4 l5 l6
	{ printf 'exec deny %s\n' "$PWD/denied"; printf 'exec deny sha256:%s\n' "$(sha256sum mid | cut -d' ' -f1)"; } \
		>"$T_TMP/deny.profile"
	local script='for f in ./a ./b ./a2 ./l5 ./l6; do "$f" deep-ran 2>/dev/null; echo "$f=$?"; done'
	wrun --profile "$(no_detect_actions "$T_TMP/deny.profile")" -- sh -c "$script"
	assert_rc 0
	assert_out_lacks 'nested-ran' 'the denied program at the end of the chain ran'
	assert_out_lacks 'mid-ran' 'a denied script in the middle of the chain ran'
	assert_out_line './a=126' 'the chain ending in a denied program refused'
	assert_out_line './b=126' 'the denied program as the first interpreter refused'
	assert_out_line './a2=126' 'a denied script as an interpreter refused'
	assert_out_match "deep-ran\$" 'four scripts as interpreters did not run'
	assert_out_line './l5=0' 'four scripts as interpreters refused'
	assert_out_lacks './l6=0' 'five scripts as interpreters ran (the kernel refuses it)'
	local f
	f=$(latest_log)
	grep -F '"event":"exec"' "$f" | grep -F '"path":"./a"' | grep -F "\"interpreter_resolved\":\"$PWD/denied\"" |
		grep -F "\"interpreter_scripts\":[\"$PWD/b\"]" | matches -F '"decision":"deny"' ||
		fail "the refusal does not name the chain: $(excerpt "$(grep -F '"path":"./a"' "$f")")"
	grep -F '"event":"alert"' "$f" | matches -F '"rule":"exec.denied"' || fail 'no exec.denied alert'
	grep -F '"event":"exec"' "$f" | grep -F '"path":"./l5"' | grep -F "\"interpreter_resolved\":\"$(readlink -f /bin/echo)\"" |
		grep -F "\"interpreter_scripts\":[\"$PWD/l4\",\"$PWD/l3\",\"$PWD/l2\",\"$PWD/l1\"]" |
		matches -F '"decision":"allow"' || fail "the deep chain's event: $(excerpt "$(grep -F '"path":"./l5"' "$f")")"
	# `exec ask` of the program at the end asks (here, in CI mode with
	# nobody to answer: refused at once)
	printf 'exec ask %s\napprove timeout 30\n' "$PWD/denied" >"$T_TMP/ask.profile"
	(
		export CI=true RUNNER_TEMP=$T_TMP/runner GITHUB_STEP_SUMMARY=$T_TMP/summary.md
		mkdir -p "$RUNNER_TEMP"
		wrun --profile "$(no_detect_actions "$T_TMP/ask.profile")" -- sh -c './a 2>/dev/null; echo "ask=$?"'
		assert_out_line 'ask=126' 'the question about the program at the end was not asked'
		grep -F '"event":"approval"' "$(latest_log)" | matches -F "$PWD/denied" ||
			fail 'no question naming the program at the end'
	) || exit 1
	# no rules: recorded with the program at the end
	wrun -- sh -c './a x'
	assert_rc 0
	assert_out_match "^nested-ran $PWD/b ./a x\$" 'the chain ran without rules'
	grep -F '"event":"exec"' "$(latest_log)" | grep -F '"path":"./a"' |
		matches -F "\"interpreter_resolved\":\"$PWD/denied\"" || fail 'the program at the end not on the record'
}

# valgrind maps the program it is given itself, as the loader does: the
# program is judged (a red team ran a denied one under a deny list and
# under `exec default deny`), a bare name refused while rules need its
# hash, and the event names it.
test_exec_deny_valgrind() {
	have valgrind || skip 'no valgrind'
	cp /bin/true denied && printf 'warden-valgrind' >>denied && chmod 755 denied
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/deny.profile"
	local script='
		valgrind -q --tool=none ./denied 2>/dev/null; echo "denied=$?"
		valgrind -q --tool=none true 2>/dev/null; echo "bare=$?"
		valgrind -q --tool=none /bin/true; echo "true=$?"'
	wrun --profile "$(no_detect_actions "$T_TMP/deny.profile")" -- sh -c "$script"
	assert_rc 0
	assert_out_lacks 'denied=0' 'valgrind ran a denied program'
	assert_out_lacks 'bare=0' 'valgrind ran a program by a bare name under deny rules'
	assert_out_line 'true=0' 'valgrind runs an allowed program'
	local f
	f=$(latest_log)
	grep -F '"event":"exec"' "$f" | grep -F '"program":"./denied"' | matches -F '"decision":"deny"' ||
		fail "the refusal does not name the program: $(excerpt "$(grep -F denied "$f")")"
	grep -F '"event":"exec"' "$f" | matches -F 'which valgrind looks for in PATH' || fail 'the bare name not said'
	printf 'exec default deny\nexec allow /usr\nexec allow /bin\nexec allow /lib\nexec allow /lib64\n' >"$T_TMP/allow.profile"
	wrun --profile "$(no_detect_actions "$T_TMP/allow.profile")" -- sh -c "$script"
	assert_out_lacks 'denied=0' 'default deny: valgrind ran a program not allowed'
	assert_out_line 'true=0' 'default deny: valgrind runs an allowed program'
}

# A denied program run as another ELF's interpreter (PT_INTERP: the
# kernel maps and runs it first): the ELF naming it is refused, the event
# naming the interpreter. It ran ("EVIL RAN", the exec an allow). A
# program naming the system's loader runs as before.
test_exec_deny_elf_interp() {
	have cc || skip 'no C compiler'
	[[ $(uname -m) == x86_64 ]] || skip 'the test program is x86_64 code'
	cat >evil.c <<'C'
void _start(void)
{
	static const char m[] = "EVIL RAN\n";
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(1), "D"(1), "S"(m), "d"(sizeof m - 1) : "rcx", "r11", "memory");
	__asm__ volatile("syscall" : : "a"(60), "D"(0) : "rcx", "r11", "memory");
	for (;;)
		;
}
C
	printf 'int main(void) { return 0; }\n' >w.c
	cc -static-pie -nostdlib -fno-stack-protector -O2 -o evil evil.c 2>/dev/null &&
		cc -o wrap w.c 2>/dev/null || skip 'the test programs did not build'
	cp evil i
	python3 - "$PWD/i" <<'PY' || skip 'cannot patch the interpreter'
import sys
d = open("wrap", "rb").read()
old = b"/lib64/ld-linux-x86-64.so.2\0"
new = sys.argv[1].encode() + b"\0"
if old not in d or len(new) > len(old):
    sys.exit(1)
open("wrap2", "wb").write(d.replace(old, new + b"\0" * (len(old) - len(new)), 1))
PY
	chmod 755 wrap2
	printf 'exec deny %s\n' "$PWD/evil" >"$T_TMP/deny.profile"
	wrun --profile "$(no_detect_actions "$T_TMP/deny.profile")" -- sh -c './wrap2; echo "wrap2=$?"; ./wrap; echo "wrap=$?"'
	assert_rc 0
	assert_out_lacks 'EVIL RAN' 'the denied interpreter ran'
	assert_out_line 'wrap2=126' 'the ELF naming a denied interpreter refused'
	assert_out_line 'wrap=0' 'a program naming the system loader runs'
	grep -F '"event":"exec"' "$(latest_log)" | grep -F '"path":"./wrap2"' | grep -F "\"interpreter\":\"$PWD/i\"" |
		matches -F '"decision":"deny"' || fail "the refusal does not name the interpreter: $(excerpt "$(grep -F wrap2 "$(latest_log)")")"
}

# A rule by hash and a file of hashes; bad rules refused before anything runs.
test_exec_deny_rules() {
	cp /bin/true denied && printf 'warden-exec-deny-test-2' >>denied
	local h
	h=$(sha256sum denied | cut -d' ' -f1)
	printf 'exec deny sha256:%s\n' "${h^^}" >"$T_TMP/hash.profile"
	wrun --profile "$T_TMP/hash.profile" -- sh -c './denied; ./denied; echo "rc=$?"'
	assert_out_match '^rc=126$' 'denied by sha256:HEX'
	# the list of refusals at the end names the program and the rule, once
	# for each try
	assert_err_match "^  exec $PWD/denied \\(2 times\\): exec deny sha256:$h " 'the refused program in the refusals'\'' list'
	printf '# a list\n%s  denied\n\n' "$h" >"$T_TMP/list.sha256"
	printf 'exec deny hashes:%s\n' "$T_TMP/list.sha256" >"$T_TMP/list.profile"
	wrun --profile "$T_TMP/list.profile" -- sh -c './denied; echo "rc=$?"'
	assert_out_match '^rc=126$' 'denied by a file of hashes'
	wardenc policy show --profile "$T_TMP/list.profile"
	assert_out_has "$h" 'policy show lists the hash'
	# a program this machine does not have: said, not an error
	# (test_profile_missing_exec_target)
	printf 'exec deny %s/missing\n' "$PWD" >"$T_TMP/gone.profile"
	wrun --profile "$T_TMP/gone.profile" -- true
	assert_rc 0 'a missing program to deny'
	assert_err_match "gone\.profile:1: exec deny $PWD/missing: no such file here" 'a missing program said'
	# bad input: each an error naming the file and line, nothing run (a
	# list of hashes that is not there is what the line denies anywhere)
	printf 'exec deny hashes:%s/missing.sha256\n' "$PWD" >"$T_TMP/bad1.profile"
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

# A file swapped for a denied one between warden's look and the kernel's
# exec, back to back while the agent runs it a thousand times: the denied
# bytes never run (the stop after the exec shows what was loaded; it is
# killed there, before its first instruction), and each swap is an
# exec.swapped alert.
test_exec_deny_swap() {
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=180
	cp /usr/bin/touch denied && printf 'warden-swap-denied' >>denied
	cp /bin/true benign && printf 'warden-swap-benign' >>benign
	chmod 755 denied benign
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/swap.profile"
	no_detect_actions "$T_TMP/swap.profile" >/dev/null
	cp benign x
	wrun --profile "$T_TMP/swap.profile" -- sh -c '
		./wprobe swap benign denied x 300 >/dev/null & sw=$!
		i=0; while [ $i -lt 1000 ]; do ./x ran.$i 2>/dev/null; i=$((i+1)); done
		kill $sw; wait
		echo "ran=$(ls | grep -c "^ran\.")"'
	assert_rc 0
	assert_out_line 'ran=0' 'the denied program ran'
	local f swaps killed refused
	f=$(latest_log)
	swaps=$(grep -c '"event":"alert","rule":"exec.swapped"' "$f")
	killed=$(tail -n 1 "$f" | grep -o '"killed":[0-9]*' | cut -d: -f2)
	refused=$(grep '"event":"exec"' "$f" | grep -F '"path":"./x"' | grep -c '"decision":"deny"')
	[[ $swaps == "$killed" ]] || fail "$swaps exec.swapped alerts, $killed killed"
	((swaps > 0)) || note 'no swap fell between the check and the exec this time'
	note "1000 runs while the file was swapped: $refused refused at the check, $swaps swapped in after it and killed before they ran"
}

# From a cwd deeper than PATH_MAX (a name longer than the kernel gives
# warden), a relative exec is judged from that directory itself, not from
# the root: a copy of the denied program named bin/true is refused as what
# it is (before, warden judged /bin/true, and the copy was caught only
# after the exec, as a false exec.swapped, and killed), a plain program
# there runs, and a symlink on the way, which warden cannot follow without
# the directory's name, is refused with that reason on the record.
test_exec_deny_deep_cwd() {
	have python3 || skip 'python3 not installed'
	cp /bin/true denied && printf 'warden-exec-deep' >>denied && chmod 755 denied
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/deny.profile"
	no_detect_actions "$T_TMP/deny.profile" >/dev/null
	wrun --profile "$T_TMP/deny.profile" -- python3 -c '
import os, subprocess
data = open("denied", "rb").read()
for i in range(1500):
    os.mkdir("dd"); os.chdir("dd")
os.mkdir("bin")
with open("bin/true", "wb") as f: f.write(data)
os.chmod("bin/true", 0o755)
with open("bin/echo", "wb") as f: f.write(open("/bin/echo", "rb").read())
os.chmod("bin/echo", 0o755)
os.symlink("/bin/echo", "ln")
for cmd in (["bin/true"], ["bin/echo", "ran"], ["./ln", "ran"]):
    try:
        r = subprocess.run(cmd, capture_output=True)
        print(cmd[0], r.returncode, r.stdout.decode().strip())
    except OSError as e:
        print(cmd[0], "errno", e.errno)
'
	assert_rc 0
	assert_out_line 'bin/true errno 13' 'the denied copy under an allowed name'
	assert_out_line 'bin/echo 0 ran' 'a plain program in the deep directory'
	assert_out_line './ln errno 36' 'a symlink from a cwd warden cannot name'
	local f execs
	f=$(latest_log)
	execs=$(grep '"event":"exec"' "$f")
	[[ $(grep -F '"path":"bin/true"' <<<"$execs" | grep -c '"decision":"deny"') -gt 0 ]] ||
		fail 'the refusal of bin/true is not on the record'
	[[ $(grep -c '"event":"alert","rule":"exec.denied"' "$f") -gt 0 ]] || fail 'no exec.denied alert'
	[[ $(grep -c '"rule":"exec.swapped"' "$f") == 0 ]] ||
		fail 'exec.swapped raised: warden judged another file than the one the kernel ran'
	[[ $(grep -F '"path":"./ln"' <<<"$execs" | grep -c 'could not resolve it: File name too long') -gt 0 ]] ||
		fail 'the symlink refused without its reason on the record'
}

# Without rules, the record still says what ran: a true and a false swapped
# back to back; for each process, its last exec event holds the hash of the
# program whose exit status it gave.
test_exec_record_swap() {
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=180
	cp /bin/true a && printf 'warden-a' >>a
	cp /bin/false b && printf 'warden-b' >>b
	chmod 755 a b
	cp a x
	local hb nb recorded f
	hb=$(sha256sum b | cut -d' ' -f1)
	wrun -- sh -c '
		./wprobe swap a b x 300 >/dev/null & sw=$!
		i=0; nb=0; while [ $i -lt 600 ]; do ./x; [ $? = 1 ] && nb=$((nb+1)); i=$((i+1)); done
		kill $sw; wait
		echo "b=$nb"'
	assert_rc 0
	nb=$(sed -n 's/^b=//p' <<<"$OUT")
	f=$(latest_log)
	recorded=$(grep '"event":"exec"' "$f" | grep -F '"path":"./x"' | awk -v hb="$hb" '
		{ match($0, /"host_pid":[0-9]+/); pid = substr($0, RSTART + 11, RLENGTH - 11)
		  s = ""; if (match($0, /"sha256":"[0-9a-f]+"/)) s = substr($0, RSTART + 10, 64)
		  last[pid] = s }
		END { n = 0; for (p in last) if (last[p] == hb) n++; print n }')
	[[ -n $nb && $nb == "$recorded" ]] ||
		fail "the program b ran $nb times, the record says $recorded"
	note "b ran $nb of 600 times; $(grep -c '"swapped":true' "$f") swaps corrected on the record"
}

# A file rewritten in place (same inode, same size) between two runs: its
# hash is taken again, never served from a cache.
test_exec_deny_rewritten_in_place() {
	cp /bin/true a && printf 'warden-in-place-a' >>a
	cp /bin/true b && printf 'warden-in-place-b' >>b
	chmod 755 a
	printf 'exec deny %s\n' "$PWD/b" >"$T_TMP/inplace.profile"
	wrun --profile "$T_TMP/inplace.profile" -- sh -c '
		./a; echo "first=$?"
		dd if=b of=a conv=notrunc status=none; ./a 2>/dev/null; echo "second=$?"'
	assert_out_line 'first=0' 'the allowed program'
	assert_out_line 'second=126' 'the same file rewritten with the denied bytes'
}

# The hashes of files the agent cannot change are kept between sessions in
# warden's cache directory (src/supervisor/exec/hashdisk.h): the next
# session takes the kept hash instead of reading the file again, and it is
# the file's. A program rewritten in place between sessions, its mtime put
# back, is hashed again (its ctime moved) and judged by its new bytes.
kept_setup() {
	mkdir -p "$T_TMP/bin"
	cp /bin/true "$T_TMP/bin/prog" && printf 'warden-kept-a' >>"$T_TMP/bin/prog"
	cp /bin/true "$T_TMP/denied" && printf 'warden-kept-b' >>"$T_TMP/denied"
	printf 'read-only %s\n' "$T_TMP/bin" >"$T_TMP/kept.profile"
	printf 'read-only %s\nexec deny %s\n' "$T_TMP/bin" "$T_TMP/bin/prog" >"$T_TMP/deny-prog.profile"
}
kept_run() { # PROFILE: runs prog by sh; OUT has rc=N
	wrun --profile "$1" -- sh -c '"$0"; echo "rc=$?"' "$T_TMP/bin/prog"
}
# kept_twice LABEL: two sessions of kept_run; the second must take a kept
# hash; LOG is its log
kept_twice() {
	kept_run "$T_TMP/kept.profile"
	assert_out_line 'rc=0' "$1: the first session"
	kept_run "$T_TMP/kept.profile"
	assert_out_line 'rc=0' "$1: the second session"
	LOG=$(latest_log)
	grep -qE '"hash_cache":\{"hits":[1-9][0-9]*,"kept":[1-9]' "$LOG" ||
		fail "$1: the second session took no kept hash: $(grep -o '"hash_cache":{[^}]*}' "$LOG")"
}
test_exec_hash_kept_between_sessions() {
	kept_setup
	local want
	want=$(sha256sum "$T_TMP/bin/prog") && want=${want%% *}
	kept_twice 'one link'
	grep '"event":"exec"' "$LOG" | matches "\"sha256\":\"$want\"" ||
		fail "the second session's exec event lacks the program's own hash $want"
	touch -r "$T_TMP/bin/prog" "$T_TMP/mtime"
	dd if="$T_TMP/denied" of="$T_TMP/bin/prog" conv=notrunc status=none
	touch -r "$T_TMP/mtime" "$T_TMP/bin/prog"
	printf 'read-only %s\nexec deny %s\n' "$T_TMP/bin" "$T_TMP/denied" >"$T_TMP/deny.profile"
	kept_run "$T_TMP/deny.profile"
	assert_out_line 'rc=126' 'the program rewritten in place between sessions, its mtime put back'
	grep -q '"rule":"exec.denied"' "$(latest_log)" || fail 'no exec.denied alert for it'
}

# A program of two hard links, both in one read-only tree (as Claude Code's
# npm package links its 245 MB program under two names), on the device of
# the workspace: the agent can change it through neither, so its hash is
# kept between sessions as a file of one link's is (before, any hard link
# on a writable mount's device was read and hashed at every exec). With a
# third link in the workspace the agent can write the program through
# that: it is recorded as writable, keeps no hash, and a rewrite through
# the workspace's link is judged by its new bytes.
test_exec_hash_kept_hard_links() {
	kept_setup
	mkdir -p "$T_TMP/bin/lib" ws && cd ws || fatal 'no workspace'
	ln "$T_TMP/bin/prog" "$T_TMP/bin/lib/prog-link"
	[[ $(stat -c %d "$T_TMP/bin/prog") == "$(stat -c %d .)" ]] ||
		skip 'the program and the workspace are on two devices: no hard link between them could be'
	kept_twice 'two links, both read-only'
	local log=$LOG
	! grep '"event":"exec"' "$log" | matches '"writable":true' ||
		fail "two links, both read-only: the program was taken for writable"
	# a third link, in the workspace: the agent writes the program through it
	ln "$T_TMP/bin/prog" prog-ws
	printf 'read-only %s\nexec deny %s\n' "$T_TMP/bin" "$T_TMP/denied" >"$T_TMP/deny-b.profile"
	wrun --profile "$T_TMP/deny-b.profile" -- sh -c '"$0"; echo "first=$?"
		cp /bin/true /tmp/x && printf warden-kept-b >>/tmp/x && cat /tmp/x >./prog-ws
		"$0"; echo "rc=$?"' "$T_TMP/bin/prog"
	assert_out_line 'first=0' 'a third link in the workspace: the program as it was'
	assert_out_line 'rc=126' 'rewritten through the workspace'"'"'s link: judged by its new bytes'
	log=$(latest_log)
	grep '"event":"exec"' "$log" | grep -F "\"path\":\"$T_TMP/bin/prog\"" | head -n 1 |
		grep -q '"writable":true' || fail 'a third link in the workspace: the program was not taken for writable'
	grep -q '"rule":"exec.denied"' "$log" || fail 'no exec.denied alert for the rewritten program'
}

# A kept-hashes file that others may write, or that is not warden's, is not
# read: a hash planted there for a program is not taken.
test_exec_hash_kept_untrusted() {
	kept_setup
	kept_run "$T_TMP/kept.profile"
	assert_out_line 'rc=0' 'the first session'
	local f=$HOME/.cache/warden/exec-hashes
	[[ -f $f ]] || fatal "no kept hashes in $f"
	# the program's entry given another hash, the file writable by others
	sed -i -E 's/ [0-9a-f]{64} / 0000000000000000000000000000000000000000000000000000000000000000 /' "$f"
	chmod 666 "$f"
	kept_run "$T_TMP/deny-prog.profile"
	assert_out_line 'rc=126' 'denied by its real hash, the planted one not taken'
	# not warden's: read as empty, the session runs
	chmod 600 "$f" && printf 'not a cache\n' >"$f"
	kept_run "$T_TMP/kept.profile"
	assert_out_line 'rc=0' 'a file that is not a cache of warden'"'"'s'
	grep -q '"hash_cache":{"hits":[0-9]*,"kept":0' "$(latest_log)" || fail 'a garbage file gave a kept hash'
}

# `exec hash-limit`: a file past the size bound, or slower to hash than the
# time bound, is recorded without its hash and runs; with a deny rule it is
# refused. Meanwhile other execs go on (the hash is off the supervisor's
# loop), and the session ends normally.
test_exec_hash_limits() {
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=90
	cp /bin/true big && truncate -s 4G big
	cp /bin/true slow && printf 'warden-slow' >>slow && truncate -s 6G slow
	cp /bin/true denied && printf 'warden-hash-limits' >>denied
	# (10 GiB of sparse files: no checkpoint of them, t_checkpoint.sh tests that)
	printf 'exec hash-limit 8G 1\ncheckpoint off\n' >"$T_TMP/slow.profile"
	wrun --profile "$T_TMP/slow.profile" -- sh -c '
		./slow & t0=$(date +%s%N)
		i=0; while [ $i -lt 10 ]; do /bin/true; i=$((i+1)); done
		t1=$(date +%s%N); wait $!; echo "slow=$?"; echo "ten_ms=$(( (t1 - t0) / 1000000 ))"'
	assert_rc 0
	assert_out_line 'slow=0' 'a file too slow to hash, no rules'
	local ms
	ms=$(sed -n 's/^ten_ms=//p' <<<"$OUT")
	[[ -n $ms ]] && ((ms < 900)) || fail "ten execs took ${ms}ms while a hash was being taken"
	grep '"path":"./slow"' "$(latest_log)" | grep '"sha256":null,"hash_missing":"not read within the hash time limit' >/dev/null ||
		fail 'the slow file is not recorded as not hashed in time'
	printf 'checkpoint off\n' >"$T_TMP/nockpt.profile"
	wrun --profile "$T_TMP/nockpt.profile" -- sh -c './big; echo "big=$?"'
	assert_out_line 'big=0' 'a 4 GiB file, no rules'
	grep '"path":"./big"' "$(latest_log)" | grep '"hash_missing":"larger than the hash limit (1024 MiB)"' >/dev/null ||
		fail 'the 4 GiB file is not recorded as too large to hash'
	grep -q '"event":"session.end"' "$(latest_log)" || fail 'no session.end'
	printf 'exec deny %s\nexec hash-limit 8G 1\ncheckpoint off\n' "$PWD/denied" >"$T_TMP/rules.profile"
	wrun --profile "$T_TMP/rules.profile" -- sh -c './big 2>/dev/null; echo "big=$?"; ./slow 2>/dev/null; echo "slow=$?"'
	assert_out_line 'big=126' 'a file too large to hash, with rules'
	assert_out_line 'slow=126' 'a file too slow to hash, with rules'
}

# `exec default deny`: only what is allowed runs (by hash, or read-only
# under a directory allowed as a whole); a script runs when its interpreter
# is allowed; a directory the agent can write cannot be allowed as a whole.
test_exec_allowlist() {
	cp /bin/true mine && printf 'warden-allow-mine' >>mine
	cp /bin/true other && printf 'warden-allow-other' >>other
	chmod 755 mine other
	printf 'exec default deny\nexec allow /usr\nexec allow %s\n' "$PWD/mine" >"$T_TMP/allow.profile"
	wrun --profile "$T_TMP/allow.profile" -- sh -c '
		/bin/true; echo "sys=$?"; ./mine; echo "mine=$?"; ./other 2>/dev/null; echo "other=$?"
		cp mine copy; ./copy; echo "copy=$?"
		printf "#!/bin/sh\necho script-ran\n" >s.sh; chmod +x s.sh; ./s.sh; echo "script=$?"'
	assert_rc 0
	assert_out_line 'sys=0' 'a system program'
	assert_out_line 'mine=0' 'a program allowed by hash'
	assert_out_line 'other=126' 'a program not allowed'
	assert_out_line 'copy=0' 'a copy of an allowed program'
	assert_out_line script-ran 'a script whose interpreter is allowed'
	grep '"rule":"exec.denied"' "$(latest_log)" | grep 'exec default deny' >/dev/null ||
		fail 'no exec.denied alert naming exec default deny'
	printf 'exec default deny\nexec allow /usr\nexec allow %s\n' "$PWD" >"$T_TMP/bad.profile"
	wrun --profile "$T_TMP/bad.profile" -- touch ran
	assert_rc 125 'a writable directory allowed as a whole'
	assert_err_match 'the agent can write there' 'the error says why'
	assert_host_absent ran 'the command ran'
}

# The path's string rewritten by a second thread while the exec waits for
# warden's answer (in the process itself, and in the parent of a vfork
# child): the kernel reads the string again after warden's check, so a
# denied program named after it must still never run.
test_exec_deny_string_race() {
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=180
	cp /usr/bin/touch denied && printf 'warden-flip-denied' >>denied && chmod 755 denied
	printf 'exec deny %s\n' "$PWD/denied" >"$T_TMP/flip.profile"
	wrun --profile "$T_TMP/flip.profile" -- sh -c '
		./wprobe exec-flip /usr/bin/true "$PWD/denied" 400 >/dev/null 2>&1
		./wprobe exec-flip /usr/bin/true "$PWD/denied" 400 vfork >/dev/null 2>&1
		echo "ran=$(ls | grep -c "^flip\.")"'
	assert_rc 0
	assert_out_line 'ran=0' 'the denied program ran'
	note "string race: $(grep -c '"event":"alert","rule":"exec.swapped"' "$(latest_log)") execs that loaded the denied file killed before they ran"
}

# The arguments rewritten by a second thread after warden's look and before
# the kernel's copy: a human approved `echo status --short` and `echo push
# --force` ran, the question and the record showing the first; a script
# handed to sh by name switched to a denied one. At the stop after the exec
# the arguments it runs with are compared with those read: different, an
# exec.argv-swapped alert, and the process is killed before its first
# instruction.
test_exec_argv_swapped() {
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=180
	printf '#!/bin/sh\ncat >/dev/null\nsleep 1\necho "{\\"decision\\": \\"allow\\", \\"reason\\": \\"t\\"}"\n' \
		>"$T_TMP/rv" && chmod 755 "$T_TMP/rv"
	printf 'exec ask argv echo *\napprove timeout 30\napprove command %s\n' "$T_TMP/rv" >"$T_TMP/ask.profile"
	wrun --profile "$(no_detect_actions "$T_TMP/ask.profile")" -- sh -c '
		./wprobe exec-argflip /bin/echo "status --short" "push --force" 1 300
		./wprobe exec-argflip /bin/echo "status --short" "status --short" 1 300'
	assert_rc 0
	assert_out_lacks 'push --force' 'the arguments swapped after the answer ran'
	assert_out_line 'status --short' 'the arguments approved did not run'
	grep -F '"event":"alert"' "$(latest_log)" | grep -F '"rule":"exec.argv-swapped"' |
		matches -F 'killed before its first instruction' || fail 'no exec.argv-swapped alert'
	printf 'touch ran.$$\n' >denied.sh && printf 'true\n' >ok.sh
	printf 'exec deny sha256:%s\n' "$(sha256sum denied.sh | cut -d' ' -f1)" >"$T_TMP/deny.profile"
	wrun --profile "$(no_detect_actions "$T_TMP/deny.profile")" -- sh -c '
		./wprobe exec-argflip /bin/sh ok.sh denied.sh 300 >/dev/null 2>&1
		echo "ran=$(ls | grep -c "^ran\.")"'
	assert_rc 0
	assert_out_line 'ran=0' 'a denied script swapped in by its arguments ran'
	note "argument race: $(grep -c '"rule":"exec.argv-swapped"' "$(latest_log)") execs killed before they ran"
}

# Two processes running on one memory (clone with CLONE_VM, neither a
# thread nor a vfork child): refused and logged; threads and vfork work.
test_exec_clone_vm_refused() {
	wrun -- sh -c './wprobe clone-vm; echo "clone=$?"
		python3 -c "import subprocess; print(\"spawn\", subprocess.run([\"/bin/true\"]).returncode)" 2>/dev/null || echo "spawn 0"'
	assert_out_line 'clone=1' 'clone(CLONE_VM) of a process'
	assert_out_line 'spawn 0' 'a vfork spawn'
	grep '"event":"syscall"' "$(latest_log)" | grep '"name":"clone".*"decision":"deny"' >/dev/null ||
		fail 'the refused clone is not on the record'
}

# Each exec event names its parent as the sandbox numbers it ("ppid"), for
# a parent that execs many children, for more parents than the supervisor
# keeps (src/supervisor/exec/pidcache.h), and for a parent whose name holds
# ") " (its /proc/PID/stat read for the vfork check, whose name field ends
# at the last ")"): the execs of /bin/true by a vfork parent of one thread
# need no watch ("fixed" in session.end).
test_exec_record_parent() {
	cp /bin/sh 'p) 1 2 (q' && chmod 755 'p) 1 2 (q'
	wrun -- sh -c '
		echo "top $$" >parents; /bin/true top; /bin/true top
		i=0; while [ $i -lt 20 ]; do sh -c "echo \"p$i \$\$\" >>parents; /bin/true p$i"; i=$((i+1)); done
		"./p) 1 2 (q" -c "echo \"odd \$\$\" >>parents; /bin/true odd"'
	assert_rc 0
	local f tag pid n=0
	f=$(latest_log)
	while read -r tag pid; do
		n=$((n + 1))
		grep '"event":"exec"' "$f" | grep -F "\"argv\":[\"/bin/true\",\"$tag\"]" | matches "\"ppid\":$pid," ||
			fail "the exec of /bin/true by $tag (pid $pid inside) does not name it: $(grep -F "\"/bin/true\",\"$tag\"" "$f" | grep -o '"ppid":[0-9-]*' | head -n 1)"
	done <parents
	((n == 22)) || fail "expected 22 parents, found $n"
	wrun -- './p) 1 2 (q' -c '/bin/true; /bin/true; /bin/true'
	assert_rc 0
	local fixed
	fixed=$(tail -n 1 "$(latest_log)" | grep -o '"fixed":[0-9]*')
	[[ $fixed == '"fixed":3' ]] || fail "the execs of a vfork parent named 'p) 1 2 (q' were watched: $fixed"
}

# An exec from a directory deeper than PATH_MAX: its cwd cannot be named,
# nor a program given relative to it, and the event says null (not
# known), never "" (no directory); the program's hash is still taken, from
# the file itself.
test_exec_record_deep_cwd() {
	have python3 || skip 'no python3 on the host'
	wrun -- python3 -c '
import os, subprocess
n = "d" * 250
for i in range(20):
    os.mkdir(n); os.chdir(n)
open("deep.sh", "w").write("#!/bin/sh\necho ran\n"); os.chmod("deep.sh", 0o755)
subprocess.run(["/bin/true", "deep-abs"]); subprocess.run(["./deep.sh"])'
	assert_out_line ran
	local f abs rel
	f=$(latest_log)
	abs=$(grep '"event":"exec"' "$f" | grep -F '"argv":["/bin/true","deep-abs"]')
	rel=$(grep '"event":"exec"' "$f" | grep -F '"argv":["./deep.sh"]')
	[[ $abs == *'"cwd":null'* && $abs == *'"resolved":"/usr/bin/true"'* ]] ||
		fail "the exec by absolute path from a deep cwd: $(excerpt "$abs")"
	[[ $rel == *'"cwd":null'* && $rel == *'"resolved":null'* && $rel == *'"sha256":"'[0-9a-f]* ]] ||
		fail "the exec of ./deep.sh from a deep cwd: $(excerpt "$rel")"
	grep -F '"event":"exec"' "$f" | matches -F -e '"cwd":""' -e '"resolved":""' && fail 'an exec event says "" for a path'
	return 0
}

# Each exec event's "pid" and "ppid" are the sandbox's numbers (the kernel's
# translation, src/common/procfacts.h): for a process whose pid inside is
# not its host pid, for the children a parent of two threads spawns
# (posix_spawn: a vfork onto a memory another thread runs on, so each exec
# is watched to its stop, never "fixed"), and for an exec from a thread
# that is not the main one (its own id inside, its process's parent; the
# watch follows it to the process's pid).
test_exec_record_pids() {
	have python3 || skip 'no python3 on the host'
	cat >thr.py <<'PY'
import os, subprocess, sys, threading, time
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
with open("pids", "w") as f:
    f.write("self %d\nvfork %d\n" % (os.getpid(), sys.version_info >= (3, 10)))
for i in range(3):
    subprocess.run(["/bin/true", "threaded%d" % i])
stop.set()
t.join()
def child():
    with open("pids", "a") as f:
        f.write("thread %d\n" % threading.get_native_id())
    os.execv("/bin/true", ["/bin/true", "fromthread"])
threading.Thread(target=child).start()
time.sleep(30)
PY
	wrun -- python3 thr.py
	assert_rc 0
	local f self thread top ev i stats
	f=$(latest_log)
	self=$(awk '$1 == "self" { print $2 }' pids) thread=$(awk '$1 == "thread" { print $2 }' pids)
	[[ -n $self && -n $thread ]] || { fail "python did not say its pids: $(cat pids)"; return; }
	top=$(grep '"event":"exec"' "$f" | grep -F '"argv":["python3","thr.py"]' | head -n 1)
	[[ $top == *"\"pid\":$self,"* ]] || fail "python's own exec does not name its pid inside ($self): $(grep -o '"pid":[0-9-]*,"ppid":[0-9-]*,"host_pid":[0-9]*' <<<"$top")"
	[[ $top != *"\"host_pid\":$self,"* ]] || fail "python's pid inside equals its host pid ($self): no pid namespace to tell them apart"
	for i in 0 1 2; do
		ev=$(grep '"event":"exec"' "$f" | grep -F "\"argv\":[\"/bin/true\",\"threaded$i\"]")
		[[ $ev == *"\"ppid\":$self,"* ]] || fail "the spawn threaded$i does not name its threaded parent ($self): $(grep -o '"pid":[0-9-]*,"ppid":[0-9-]*' <<<"$ev")"
	done
	ev=$(grep '"event":"exec"' "$f" | grep -F '"argv":["/bin/true","fromthread"]')
	local pp=${top#*\"ppid\":}
	pp=${pp%%,*}
	[[ $ev == *"\"pid\":$thread,\"ppid\":$pp,"* ]] || fail "the exec from thread $thread (its process's parent $pp) is recorded as $(grep -o '"pid":[0-9-]*,"ppid":[0-9-]*' <<<"$ev")"
	stats=$(tail -n 1 "$f" | grep -o '"fixed":[0-9]*,"verified":[0-9]*')
	# the three spawns and the exec from a thread, each watched and verified
	if grep -qx 'vfork 1' pids; then
		[[ ${stats#*\"verified\":} -ge 4 ]] || fail "the execs of a threaded process (or its vfork children) were not watched: $stats"
	else
		note "python before 3.10 spawns with fork: the watch of vfork children is not checked"
	fi
}

# The command's first exec: unprivileged, init's own memory (a vfork) that
# warden cannot read, so init plans the exec and says it, and one that
# must be watched to its stop is made again as a fork (src/sandbox/init.c,
# src/supervisor/exec/execs.h). Whichever way it starts, the command runs
# once and its status is the session's: a program that ends with 125 (the
# status of init's own failures) is not started twice, a script in the
# workspace (watched) runs once with its arguments and its status, and its
# exec is on the record once, with its argv and the workspace as its cwd.
test_exec_first_runs_once() {
	wrun -- /bin/sh -c 'echo ran >>count1; exit 125'
	assert_rc 125
	[[ $(wc -l <count1) == 1 ]] || fail "the command ran $(wc -l <count1) times"
	grep -q '^warden:' <<<"$ERR" && fail "warden said something: $(excerpt "$ERR")"
	printf '#!/bin/sh\necho ran >>count2\necho "args=$*"\nexit 3\n' >first.sh && chmod 755 first.sh
	wrun -- "$PWD/first.sh" a 'b c'
	assert_rc 3
	assert_out_line 'args=a b c'
	[[ $(wc -l <count2) == 1 ]] || fail "the script ran $(wc -l <count2) times"
	local ev n
	ev=$(grep '"event":"exec"' "$(latest_log)" | grep -F "\"path\":\"$PWD/first.sh\"")
	n=$(grep -c . <<<"$ev")
	((n == 1)) || fail "the script's exec is on the record $n times"
	grep -qF "\"argv\":[\"$PWD/first.sh\",\"a\",\"b c\"]" <<<"$ev" ||
		fail "its argv is not on the record: $(excerpt "$ev")"
	grep -qF "\"cwd\":\"$PWD\"" <<<"$ev" || fail "its cwd is not the workspace: $(excerpt "$ev")"
}
