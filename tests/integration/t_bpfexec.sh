# t_bpfexec.sh - the exec rules enforced in the kernel by BPF LSM (`exec
# kernel`, src/supervisor/exec/bpfexec.h), as root where the kernel runs BPF LSM
# programs: with `exec deny` of a bait and WITHOUT `exec strict` (writable
# mounts stay executable), the bait copied, renamed, handed to the loader,
# written to a memfd, or mapped executable by a hand-written loader (mmap,
# mprotect) is refused, the mappings with EPERM by the kernel, and each
# kernel refusal is an exec event saying so; what the agent builds itself
# still runs and maps. Many loaders at once, of files the kernel knows
# nothing of, all run. And `exec kernel on` refuses to start where it
# cannot be had, saying why.
# shellcheck shell=bash


# Skips unless this host enforces the exec rules in the kernel for warden.
bpf_need() {
	is_root || skip "in-kernel exec enforcement needs root"
	printf 'exec kernel on\nexec deny sha256:%064d\n' 0 >"$T_TMP/probe.profile"
	wrun --profile "$T_TMP/probe.profile" -- true
	if ((RC != 0)); then
		grep -q 'cannot be enforced in the kernel here' <<<"$ERR" &&
			skip "in-kernel exec enforcement is not available here: $(excerpt "$ERR")"
		fatal "warden run with exec kernel on failed: $(excerpt "$ERR")"
	fi
}

test_bpfexec_bypasses() {
	bpf_need
	local ld
	ld=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1)
	cp /bin/true bait && printf 'warden-bpfexec-test' >>bait && chmod 755 bait
	printf 'exec deny %s\nexec kernel on\n' "$PWD/bait" >"$T_TMP/deny.profile"
	no_detect_actions "$T_TMP/deny.profile" >/dev/null
	wrun --profile "$T_TMP/deny.profile" -- sh -c '
		try() { "$@" >/dev/null 2>&1; echo "$1=$?"; }
		cp bait copy; try ./copy
		mv copy renamed; try ./renamed
		'"${ld:+try $ld ./renamed}"'
		for how in mmap mprotect memfd memfd-mprotect; do
			echo "map-$how: $(./wprobe map-exec ./renamed $how)"
		done
		echo "map-bait: $(./wprobe map-exec ./bait mmap)"
		if [ -x /usr/bin/python3 ]; then
		  /usr/bin/python3 -c "import os; fd=os.memfd_create(\"x\", 0); os.write(fd, open(\"renamed\",\"rb\").read()); os.execv(\"/proc/self/fd/%d\" % fd, [\"memfd\"])" 2>/dev/null; echo "memfd=$?"
		fi
		printf "int main(void) { return 7; }\n" >own.c
		if command -v cc >/dev/null; then cc -o own own.c && ./own; echo "own=$?"
		  printf "int own(void) { return 7; }\n" >lib.c && cc -shared -fPIC -o lib.so lib.c &&
		  echo "map-own: $(./wprobe map-exec ./lib.so mmap)"
		fi
		try /bin/true'
	assert_rc 0
	local p
	for p in ./copy ./renamed ${ld:+"$ld"}; do
		grep -qxE "$(printf '%s' "$p" | sed 's/[.[\*^$/]/\\&/g')=(126|127|1)" <<<"$OUT" ||
			fail "$p was not refused: $(excerpt "$OUT")"
	done
	for p in mmap mprotect memfd memfd-mprotect; do
		grep -qx "map-$p: DENIED EPERM .*" <<<"$OUT" ||
			fail "the hand-written loader ($p) was not refused with EPERM: $(excerpt "$OUT")"
	done
	assert_out_match '^map-bait: DENIED EPERM ' 'the bait itself mapped'
	[[ -x /usr/bin/python3 ]] && { grep -qx 'memfd=1' <<<"$OUT" || fail "the memfd was not refused: $(excerpt "$OUT")"; }
	assert_out_line '/bin/true=0' 'another program still runs'
	if grep -q '^own=' <<<"$OUT"; then
		assert_out_line 'own=7' 'a program built in the workspace runs'
		assert_out_match '^map-own: ALLOWED ' 'a shared object built in the workspace maps executable'
	else
		note "no cc here: the workspace's own program and library were not tried"
	fi
	local f n
	f=$(latest_log)
	n=$(grep '"event":"exec"' "$f" | grep '"enforced_by":"bpf-lsm"' | grep -c '"decision":"deny"')
	((n >= 5)) || fail "expected a kernel refusal event for each mapping, found $n"
	for p in mmap_file file_mprotect; do
		grep '"event":"exec"' "$f" | grep '"enforced_by":"bpf-lsm"' | grep "\"hook\":\"$p\"" |
			grep -q '"reason":"exec deny sha256:' || fail "no kernel refusal at $p naming the rule"
	done
	grep '"event":"session.end"' "$f" | grep '"kernel":{"by":"bpf-lsm"' >/dev/null ||
		fail "session.end does not say the rules were in the kernel"
}

# Many processes loading libraries the kernel has no verdict for, at once
# (a parallel build's first loads): each loader gets its own copies of a
# program's libraries (new files, unknown to the kernel), and all of them,
# and a burst of system programs beside, run at the same moment. None may
# be refused: the supervisor gives the kernel each file's verdict before
# the mapping (the seccomp notification of an executable mmap), so no task
# waits in the kernel, where only one per spare CPU may.
test_bpfexec_parallel_loaders() {
	bpf_need
	command -v ldd >/dev/null || skip "no ldd here to list a program's libraries"
	printf 'exec deny sha256:%064d\nexec kernel on\n' 0 >"$T_TMP/par.profile"
	no_detect_actions "$T_TMP/par.profile" >/dev/null
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=300
	wrun --profile "$T_TMP/par.profile" -- sh -c '
		libs=$(ldd /bin/ls | sed -n "s/.*=> \(\/[^ ]*\) .*/\1/p")
		[ -n "$libs" ] || { echo "NOLIBS"; exit 0; }
		i=0; while [ $i -lt 8 ]; do mkdir l$i && cp $libs l$i/ || exit 9; i=$((i+1)); done
		i=0; while [ $i -lt 8 ]; do
			( j=0; while [ $j -lt 3 ]; do
				LD_LIBRARY_PATH=$PWD/l$i ls -d / >/dev/null 2>err.$i.$j ||
					echo "FAIL loader $i.$j rc=$?: $(head -c 200 err.$i.$j)"
				j=$((j+1)); done ) &
			i=$((i+1)); done
		k=0; while [ $k -lt 8 ]; do
			( for p in "grep -c root /etc/passwd" "sort /etc/passwd" "sed -n 1p /etc/passwd" \
				"awk {print} /etc/passwd" "date" "id -u" "wc -l /etc/passwd" "head -1 /etc/passwd"; do
				$p >/dev/null 2>&1 || echo "FAIL burst $k: $p rc=$?"; done ) &
			k=$((k+1)); done
		wait
		echo "loaded=$(ls -d l? | wc -l)"'
	assert_rc 0
	grep -qx NOLIBS <<<"$OUT" && skip "ldd lists no libraries of /bin/ls (a static build?)"
	assert_out_line 'loaded=8' 'the loaders ran'
	grep -q '^FAIL' <<<"$OUT" && fail "processes were refused: $(grep '^FAIL' <<<"$OUT" | head -n 5)"
	local f n end
	f=$(latest_log)
	n=$(grep '"event":"exec"' "$f" | grep '"enforced_by":"bpf-lsm"' | grep -c '"decision":"deny"')
	((n == 0)) || fail "the kernel refused $n mappings or execs: $(grep '"enforced_by":"bpf-lsm"' "$f" | head -n 2)"
	end=$(grep '"event":"session.end"' "$f" | grep -o '"kernel":{[^}]*}')
	grep -q '"timeouts":0[,}]' <<<"$end" || fail "tasks were refused waiting in the kernel: $end"
	[[ $end =~ \"premapped\":([0-9]+) ]] && ((BASH_REMATCH[1] > 0)) ||
		fail "no mapping went by the supervisor first: $end"
	note "the kernel's stats: $end"
}

# `exec kernel on` where it cannot be had: no session, the reason said.
test_bpfexec_on_unprivileged() {
	is_root || skip "needs root to run warden as another user"
	local user=nobody
	id "$user" >/dev/null 2>&1 || skip "no user $user"
	printf 'exec kernel on\n' >"$T_TMP/on.profile"
	chmod 755 "$T_TMP" && chmod 644 "$T_TMP/on.profile"
	local home=$T_TMP/nobody-home
	mkdir -p "$home/ws" && chown -R "$user" "$home"
	(cd "$home/ws" && timeout -k 5 "$WARDEN_TIMEOUT" runuser -u "$user" -- env HOME="$home" \
		XDG_STATE_HOME="$home/state" "$WARDEN" run --profile "$T_TMP/on.profile" -- \
		sh -c 'echo RAN' </dev/null >"$T_TMP/.out" 2>"$T_TMP/.err")
	RC=$? OUT=$(<"$T_TMP/.out") ERR=$(<"$T_TMP/.err")
	((RC == 125)) || fail "expected exit 125, got $RC: $(excerpt "$ERR")"
	grep -q RAN <<<"$OUT" && fail "the command ran"
	grep -q 'exec kernel on: the exec rules cannot be enforced in the kernel here: .*needs root' <<<"$ERR" ||
		fail "no clear reason: $(excerpt "$ERR")"
}

# As root on a host that cannot: the same, with the host's reason; where it
# can, the session runs.
test_bpfexec_on_root() {
	is_root || skip "needs root"
	printf 'exec kernel on\n' >"$T_TMP/on.profile"
	wrun --profile "$T_TMP/on.profile" -- sh -c 'echo RAN'
	if ((RC == 0)); then
		assert_out_line RAN 'the session runs where the kernel enforces'
		return
	fi
	((RC == 125)) || fail "expected exit 0 or 125, got $RC"
	grep -q RAN <<<"$OUT" && fail "the command ran"
	grep -q 'exec kernel on: the exec rules cannot be enforced in the kernel here: ' <<<"$ERR" ||
		fail "no clear reason: $(excerpt "$ERR")"
	note "not available here: $(excerpt "$ERR")"
}
