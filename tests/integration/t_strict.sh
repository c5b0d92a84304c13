# t_strict.sh - strict exec mode (`exec strict`) and `exec allow-writable
# PATH`: with strict mode nothing the agent can write runs (a binary in the
# workspace, /tmp, the home, a read-write path or an agent's state; the
# dynamic loader handed a copy; a shared object loaded or a file mapped
# executable by hand), while a script handed to its interpreter by name
# still runs; an allow-writable directory, created when missing, runs what
# is put there (in /tmp also without strict mode); a denied system program
# is hidden (unreadable, its hard links beside it too) in strict mode and
# readable without it; without strict mode the workspace runs what it
# holds; an allow-writable path outside the writable places, through a
# symlink, onto a file or in a protected path is an error (exit 125) before
# anything runs.
# shellcheck shell=bash

strict_start() { grep '"event":"session.start"' "$(latest_log)"; }

# The dynamic loader of this machine, or nothing.
strict_ld() { ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1; }

test_strict_noexec_writable() {
	local ld
	ld=$(strict_ld)
	cp /bin/true copy && chmod 755 copy
	printf 'exec strict\n' >"$T_TMP/strict.profile"
	no_detect_actions "$T_TMP/strict.profile" >/dev/null
	wrun --profile "$T_TMP/strict.profile" -- sh -c '
		try() { l=$1; shift; "$@" 2>/dev/null; echo "$l=$?"; }
		try ws ./copy
		cp copy /tmp/copy; try tmp /tmp/copy
		cp copy /dev/shm/copy; try shm /dev/shm/copy
		cp copy "$HOME/copy"; try home "$HOME/copy"
		'"${ld:+try ld $ld ./copy}"'
		printf "echo by-name-ran\n" >s.sh; chmod 755 s.sh
		sh s.sh; try script ./s.sh
		try system /bin/true
		grep " '"$PWD"' " /proc/self/mountinfo | head -n 1'
	assert_rc 0
	local w
	for w in ws tmp shm home; do
		assert_out_line "$w=126" "a binary copied to the $w ran"
	done
	[[ -n $ld ]] && { grep -qxE 'ld=(1|126|127)' <<<"$OUT" || fail "ld.so ./copy was not refused: $(excerpt "$OUT")"; }
	assert_out_line by-name-ran 'a script handed to its interpreter by name'
	assert_out_line 'script=126' 'a script run as ./s.sh (exec of a file on a noexec mount)'
	assert_out_line 'system=0' 'a system binary'
	grep -E " $PWD " <<<"$OUT" | grep noexec >/dev/null || fail "the workspace is not mounted noexec: $(excerpt "$OUT")"
	strict_start | grep '"exec":{"strict":true' >/dev/null || fail 'session.start does not record strict mode'
	# a read-write path of the profile and an agent's state: noexec too
	mkdir -p "$T_TMP/rw"
	printf 'exec strict\nread-write %s\n' "$T_TMP/rw" >"$T_TMP/rw.profile"
	wrun --quiet --agent claude --state "$T_TMP/state" --profile "$T_TMP/rw.profile" -- sh -c '
		cp copy '"$T_TMP"'/rw/copy; '"$T_TMP"'/rw/copy 2>/dev/null; echo "rw=$?"
		cp copy ~/.claude/copy; ~/.claude/copy 2>/dev/null; echo "state=$?"'
	assert_out_line 'rw=126' 'a binary copied to a read-write path ran'
	assert_out_line 'state=126' "a binary copied to the agent's state ran"
	# without strict mode the workspace runs what it holds (no regression)
	wrun -- sh -c './copy; echo "ws=$?"'
	assert_out_line 'ws=0' 'without exec strict, the workspace copy'
	strict_start | grep '"exec":{"strict":false' >/dev/null || fail 'session.start does not record strict mode off'
}

# A shared object or a hand-made executable mapping of a file in the
# workspace: refused (mmap PROT_EXEC fails on a noexec mount).
test_strict_shared_object() {
	[[ -x /usr/bin/python3 ]] || skip 'no /usr/bin/python3'
	local so
	so=$(ls /usr/lib/*-linux-gnu/libz.so.1 /lib/*-linux-gnu/libz.so.1 2>/dev/null | head -n 1)
	[[ -n $so ]] || skip 'no libz.so.1 to copy'
	cp "$so" x.so
	printf 'exec strict\n' >"$T_TMP/strict.profile"
	local py='
import ctypes, mmap, os, sys
try:
    ctypes.CDLL(sys.argv[1]); print("load=ok")
except OSError as e:
    print("load=refused", e)
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    mmap.mmap(fd, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC); print("map=ok")
except OSError as e:
    print("map=refused", e.errno)
'
	printf '%s' "$py" >load.py
	wrun --profile "$T_TMP/strict.profile" -- /usr/bin/python3 load.py ./x.so
	assert_rc 0
	assert_out_match '^load=refused' 'ctypes.CDLL of a .so in the workspace'
	assert_out_line 'map=refused 1' 'mmap PROT_EXEC of a workspace file (EPERM)'
	wrun -- /usr/bin/python3 load.py ./x.so
	assert_out_line 'load=ok' 'without exec strict, the .so loads'
}

# `exec allow-writable`: a directory of the workspace (created) and one in
# /tmp run what is put there; the rest stays noexec. In /tmp it holds
# without strict mode too.
test_strict_allow_writable() {
	cp /bin/true copy && chmod 755 copy
	cp /bin/true denied && printf 'warden-strict-deny-test' >>denied && chmod 755 denied
	printf 'exec strict\nexec allow-writable target/bin\nexec allow-writable /tmp/build\nexec deny %s\n' \
		"$PWD/denied" >"$T_TMP/aw.profile"
	assert_host_absent target 'target before the session'
	wrun --profile "$T_TMP/aw.profile" -- sh -c '
		try() { l=$1; shift; "$@" 2>/dev/null; echo "$l=$?"; }
		cp copy target/bin/t; try target target/bin/t
		mkdir -p target/bin/sub && cp copy target/bin/sub/t; try sub target/bin/sub/t
		cp copy /tmp/build/t; try tmp /tmp/build/t
		cp copy target/t; try beside target/t
		cp copy /tmp/t; try tmp-beside /tmp/t
		cp denied target/bin/d; try denied target/bin/d
		rm -f target/bin/t target/bin/d target/bin/sub/t && rmdir target/bin/sub
		rmdir target/bin 2>/dev/null; echo "rmdir=$?"
		grep -E " ('"$PWD"'/target/bin|/tmp/build) " /proc/self/mountinfo'
	assert_rc 0
	assert_out_line 'target=0' 'a binary in the allow-writable workspace directory'
	assert_out_line 'sub=0' 'a binary below it'
	assert_out_line 'tmp=0' 'a binary in the allow-writable /tmp directory'
	assert_out_line 'beside=126' 'a binary beside it in the workspace'
	assert_out_line 'tmp-beside=126' 'a binary beside it in /tmp'
	assert_out_line 'denied=126' 'a denied program in the allow-writable directory'
	grep -qxE 'rmdir=[1-9][0-9]*' <<<"$OUT" || fail "the allow-writable directory was removed inside: $(excerpt "$OUT")"
	grep -E " $PWD/target/bin " <<<"$OUT" | grep noexec >/dev/null && fail "target/bin is mounted noexec"
	grep -E " $PWD/target/bin " <<<"$OUT" | grep nosuid >/dev/null || fail "target/bin lost nosuid: $(excerpt "$OUT")"
	[[ -d target/bin && ! -L target/bin ]] || fail 'target/bin was not created on the host'
	local start
	start=$(strict_start)
	[[ $start == *'"allow_writable":['*"\"$PWD/target/bin\""* && $start == *'"/tmp/build"'* ]] ||
		fail "session.start does not list the allow-writable paths: $(excerpt "$start")"
	# /tmp is noexec in every mode: allow-writable opens a directory there
	printf 'exec allow-writable /tmp/bin\nexec allow-writable /home/agent/bin\n' >"$T_TMP/tmp.profile"
	wrun --profile "$T_TMP/tmp.profile" -- sh -c '
		cp copy /tmp/bin/t; /tmp/bin/t; echo "tmp=$?"
		cp copy /tmp/t; /tmp/t 2>/dev/null; echo "tmp-beside=$?"
		cp copy ~/bin/t; ~/bin/t; echo "home=$?"
		cp copy ~/t; ~/t 2>/dev/null; echo "home-beside=$?"'
	assert_out_line 'tmp=0' 'without strict mode, a binary in an allow-writable /tmp directory'
	assert_out_line 'tmp-beside=126' 'without strict mode, /tmp beside it'
	assert_out_line 'home=0' 'without strict mode, a binary in an allow-writable home directory'
	assert_out_line 'home-beside=126' 'without strict mode, the home beside it'
}

# A program denied by `exec deny FILE` in the system directories: in strict
# mode unreadable (not copied, not read through a symlink or a hard link
# beside it), not run; without strict mode readable, still not run.
test_strict_hides_denied() {
	local b
	for b in /usr/bin/od /usr/bin/cksum /usr/bin/tac; do
		[[ -f $b && ! -L $b ]] && break
		b=
	done
	[[ -n $b ]] || skip 'none of od, cksum, tac in /usr/bin'
	local size
	size=$(wc -c <"$b")
	printf 'exec strict\nexec deny %s\n' "$b" >"$T_TMP/hide.profile"
	printf 'exec deny %s\n' "$b" >"$T_TMP/deny.profile"
	local script='
		n=$(cat '"$b"' 2>/dev/null | wc -c); echo "read=$n"
		cp '"$b"' copy 2>/dev/null; echo "cp=$?"
		ln -s '"$b"' lnk; n=$(cat lnk 2>/dev/null | wc -c); echo "link=$n"
		n=$(cat /bin/'"${b##*/}"' 2>/dev/null | wc -c); echo "bin=$n"
		'"$b"' /dev/null 2>/dev/null; echo "run=$?"'
	wrun --profile "$T_TMP/hide.profile" -- sh -c "$script"
	assert_rc 0
	assert_out_line 'read=0' "strict: $b read"
	assert_out_line 'link=0' "strict: $b read through a symlink"
	assert_out_line 'bin=0' "strict: $b read through /bin"
	grep -qxE 'cp=[1-9][0-9]*' <<<"$OUT" || fail "strict: $b was copied: $(excerpt "$OUT")"
	[[ -s copy ]] && fail "strict: a copy of $b holds bytes"
	assert_out_line 'run=126' "strict: $b ran"
	strict_start | grep -F "\"hidden\":[\"$b\"" >/dev/null || fail "session.start does not list $b as hidden"
	wardenc policy show --profile "$T_TMP/hide.profile"
	assert_out_match '"strict": true' 'policy show: strict mode'
	grep -A1 '"deny_files": \[' <<<"$OUT" | grep -F "\"$b\"" >/dev/null ||
		fail "policy show does not list $b in deny_files: $(excerpt "$OUT")"
	# a hard link beside the denied file is the same bytes: hidden too
	if [[ -f /usr/bin/bzip2 && /usr/bin/bzcat -ef /usr/bin/bzip2 ]]; then
		printf 'exec strict\nexec deny /usr/bin/bzip2\n' >"$T_TMP/links.profile"
		wrun --profile "$T_TMP/links.profile" -- sh -c 'n=$(cat /usr/bin/bzcat 2>/dev/null | wc -c); echo "bzcat=$n"'
		assert_out_line 'bzcat=0' 'strict: a hard link of a denied file beside it was read'
	else
		note 'no /usr/bin/bzcat linked to /usr/bin/bzip2: hard links not tried'
	fi
	rm -f copy lnk
	wrun --profile "$T_TMP/deny.profile" -- sh -c "$script"
	assert_out_line "read=$size" "without strict: $b is readable"
	assert_out_line 'cp=0' "without strict: $b can be copied"
	assert_out_line 'run=126' "without strict: $b ran"
}

# Bad allow-writable paths: outside the writable places, through a symlink,
# onto a file, in a protected path. Each an error naming the path and what
# is wrong, exit 125, nothing run or made.
test_strict_allow_writable_refused() {
	mkdir -p "$T_TMP/outside"
	ln -s "$T_TMP/outside" lnk
	printf 'x\n' >afile
	local -a bad=('/etc' 'lnk/bin' 'afile' '/usr/local/bin' '.vscode/bin')
	local -a why=('not in a place the sandbox writes' 'symlink' 'not a directory'
		'not in a place the sandbox writes' 'read-only in the sandbox')
	local i
	for i in "${!bad[@]}"; do
		printf 'exec strict\nexec allow-writable %s\n' "${bad[i]}" >"$T_TMP/bad$i.profile"
		wrun --profile "$T_TMP/bad$i.profile" -- touch "ran$i"
		[[ $RC == 125 ]] || fail "allow-writable ${bad[i]}: expected exit 125, got $RC"
		[[ $ERR == *"exec allow-writable ${bad[i]}"*"${why[i]}"* ]] ||
			fail "allow-writable ${bad[i]}: the error does not say what is wrong: $(excerpt "$ERR")"
		assert_host_absent "ran$i" "allow-writable ${bad[i]}: the command ran"
	done
	assert_host_absent "$T_TMP/outside/bin" 'a directory was made through the symlink'
	[[ $(<afile) == x ]] || fail 'the file was changed'
}

# Each refusal of strict mode is on the record, with the reason: the
# program in the workspace, the loader handed a copy, a memfd run, a shared
# object the agent wrote mapped as code (the kernel refuses the mapping and
# tells no one: the supervisor records it).
test_strict_refusals_logged() {
	local ld f
	ld=$(strict_ld)
	cp /bin/true copy && chmod 755 copy
	printf 'exec strict\n' >"$T_TMP/strict.profile"
	no_detect_actions "$T_TMP/strict.profile" >/dev/null
	wrun --profile "$T_TMP/strict.profile" -- sh -c '
		./copy 2>/dev/null; echo "ws=$?"
		'"${ld:+$ld ./copy 2>/dev/null; echo \"ld=\$?\"}"'
		if [ -x /usr/bin/python3 ]; then
		  /usr/bin/python3 -c "import os; fd=os.memfd_create(\"x\", 0); os.write(fd, open(\"copy\",\"rb\").read()); os.execv(\"/proc/self/fd/%d\" % fd, [\"memfd\"])" 2>/dev/null; echo "memfd=$?"
		  lib=$(ls /usr/lib/*-linux-gnu/libz.so.1 /lib/*-linux-gnu/libz.so.1 2>/dev/null | head -n 1)
		  cp "$lib" x.so
		  /usr/bin/python3 -c "import ctypes; ctypes.CDLL(\"./x.so\")" 2>/dev/null; echo "so=$?"
		fi'
	assert_rc 0
	assert_out_line 'ws=126' 'the program in the workspace'
	f=$(latest_log)
	grep '"event":"exec"' "$f" | grep -F '"path":"./copy"' | grep '"decision":"deny","reason":"exec strict' >/dev/null ||
		fail 'the workspace program is not refused on the record with exec strict'
	grep '"rule":"exec.denied"' "$f" | grep 'exec strict' >/dev/null || fail 'no exec.denied alert naming exec strict'
	if [[ -n $ld ]]; then
		grep '"event":"exec"' "$f" | grep -F '"program":"./copy"' | grep '"reason":"exec strict: the program given to the loader' >/dev/null ||
			fail 'the loader handed a copy is not refused on the record'
	fi
	if [[ -x /usr/bin/python3 ]]; then
		assert_out_line 'memfd=1' 'a memfd run'
		grep '"event":"exec"' "$f" | grep -F '"argv":["memfd"]' | grep '"reason":"exec strict' >/dev/null ||
			fail 'the memfd is not refused on the record'
		assert_out_line 'so=1' 'a shared object the agent wrote'
		grep '"event":"syscall"' "$f" | grep '"name":"mmap"' | grep -F "$PWD/x.so" | grep '"reason":"exec strict' >/dev/null ||
			fail 'the refused mapping of x.so is not on the record'
	fi
}
