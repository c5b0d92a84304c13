# t_lifecycle.sh - exit statuses, the command line's errors, signal
# forwarding, and what happens to the sandbox when the supervisor dies.
# shellcheck shell=bash

test_exit_status() {
	printf 'echo hi\n' >notexec.sh
	chmod 0644 notexec.sh
	mkdir -p adir
	wrun -- true
	assert_rc 0 'true'
	wrun -- false
	assert_rc 1 'false'
	wrun -- sh -c 'exit 3'
	assert_rc 3 'exit 3'
	wrun -- wardentest-no-such-command
	assert_rc 127 'command not found in PATH'
	wrun -- /usr/bin/wardentest-no-such-command
	assert_rc 127 'absolute path not found'
	wrun -- ./notexec.sh
	assert_rc 126 'non-executable file'
	wrun -- ./adir
	assert_rc 126 'directory as command'
	wrun -- sh -c 'kill -INT $$'
	assert_rc 130 'killed by SIGINT'
	wrun -- sh -c 'kill -TERM $$'
	assert_rc 143 'killed by SIGTERM'
	wrun -- sh -c 'kill -KILL $$'
	assert_rc 137 'killed by SIGKILL'
	wrun --workspace "$T_TMP/wardentest-missing-dir" -- true
	assert_rc 125 'warden failure (missing workspace)'
	wrun --wardentest-bogus-option -- true
	assert_rc 125 'warden failure (unknown option)'
}

# `warden run --` names no command: an error, not a shell. `warden run` with
# no arguments at all (or only options) runs /bin/sh, as documented.
# What the command leaves in the background, deaf to SIGTERM and SIGHUP,
# ends with it: init kills and reaps it before it tells the supervisor the
# command's status, so the session's end (its last checkpoint, the sweep,
# session.end) never runs beside it. Nothing of it is left once warden
# returns, the file it kept appending to grows no more, and session.end
# has the command's status.
test_background_ends_with_command() {
	local tag log
	tag=$(unique)
	wsh "trap '' TERM HUP; sh -c 'while :; do echo x >>bg.txt; done' $tag & sleep 0.3; exit 4"
	assert_rc 4 'the command'
	[[ -s bg.txt ]] || fail 'the background writer never ran'
	local n0 n1
	n0=$(wc -c <bg.txt)
	sleep 0.3
	n1=$(wc -c <bg.txt)
	((n0 == n1)) || fail "bg.txt grew from $n0 to $n1 bytes after warden returned"
	pgrep -f "$tag" >/dev/null && fail "the background process outlived the session: $(pgrep -af "$tag")"
	log=$(latest_log)
	tail -n 1 "$log" | matches '"event":"session.end".*"exit":4' ||
		fail "session.end: $(excerpt "$(tail -n 1 "$log")")"
}

# A workspace on a file system of its own (a USB stick, a tmpfs a CI job
# made): once warden returns, nothing of the session holds it, and it
# unmounts at the first try. Before, warden's closing process (the watches'
# closes, which wait on the kernel some 15 ms) kept warden's working
# directory, the workspace, and `umount` said busy.
test_workspace_unmounts_after_return() {
	is_root || skip 'mounting a file system for the workspace needs root'
	local m=$T_TMP/mnt i=0 rc
	mkdir -p "$m"
	mount -t tmpfs tmpfs "$m" || skip 'cannot mount a tmpfs here'
	while ((i < 5)); do
		mkdir -p "$m/proj"
		(cd "$m/proj" && wrun -- true; echo "$RC" >"$T_TMP/rc")
		umount "$m" 2>"$T_TMP/umount.err"
		rc=$?
		((rc == 0)) || break
		i=$((i + 1))
		((i == 5)) || mount -t tmpfs tmpfs "$m" || fatal 'cannot mount the tmpfs again'
	done
	if ((i < 5)); then
		local j=0
		until umount "$m" 2>/dev/null || ((++j > 200)); do sleep 0.05; done
		fail "the workspace's file system was busy after warden returned (round $i): $(cat "$T_TMP/umount.err")"
	fi
	[[ $(<"$T_TMP/rc") == 0 ]] || fail "the session: exit $(<"$T_TMP/rc")"
}

test_run_unknown_option_short() {
	# An option warden does not know (a command's, put before `--`) is
	# named on a line that stays on the screen: a pointer to --help, not
	# the eighty lines of it.
	wrun --bogus -- true
	assert_rc 125 'an unknown option'
	assert_err_match "unrecognized option '--bogus'"
	assert_err_match 'warden run --help lists the options'
	local n
	n=$(wc -l <<<"$ERR")
	((n <= 3)) || fail "an unknown option said in $n lines: $(excerpt "$ERR")"
	wrun -w
	assert_rc 125 'an option without its argument'
	assert_err_match "requires an argument -- 'w'"
}

test_run_without_command() {
	printf 'echo shell-ran\n' >"$T_TMP/sh-in"
	WSTDIN=$T_TMP/sh-in wrun --
	assert_rc 125 "'warden run --'"
	assert_out_lacks shell-ran "'warden run --' ran a shell"
	assert_err_match "no command after '--'" "'warden run --': a clear message"
	WSTDIN=$T_TMP/sh-in wrun --env X=1 --
	assert_rc 125 "'warden run --env X=1 --'"
	WSTDIN=$T_TMP/sh-in wrun
	assert_rc 0 "'warden run'"
	assert_out_eq shell-ran "'warden run' runs /bin/sh"
	WSTDIN=$T_TMP/sh-in wrun --env X=1
	assert_out_eq shell-ran "'warden run --env X=1' runs /bin/sh"
	wrun -- sh -c 'echo "[$1]"' sh --
	assert_out_eq '[--]' "a '--' after the command is the command's"
}

# Every way `warden run` stops before the session (a bad option, a bad
# --env, --help, '--' alone) releases what the options took: valgrind
# finds no lost memory.
test_run_option_errors_release_memory() {
	have valgrind || skip 'no valgrind'
	local args rc
	for args in '--log nope' '--env =x' '--wardentest-bogus-option' '--help' '--'; do
		# shellcheck disable=SC2086 # the options are words
		timeout -k 5 120 valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--error-exitcode=99 "$WARDEN" run --allow-net a.example --allow-net b.example \
			--env X=1 --profile /dev/null $args </dev/null >"$T_TMP/vg.out" 2>&1
		rc=$?
		cat "$T_TMP/vg.out"
		if [[ $args == --help ]]; then
			((rc == 0)) || fail "$args: exit $rc under valgrind: $(excerpt "$(grep -m 3 'lost' "$T_TMP/vg.out")")"
		else
			((rc == 125)) || fail "$args: exit $rc under valgrind, expected 125: $(excerpt "$(grep -m 3 'lost' "$T_TMP/vg.out")")"
		fi
	done
}

# forward SIG TRAPPED: send SIG to warden while the command waits.
forward_one() {
	local sig=$1 out="$T_TMP/fwd-$1.out" rc
	warden_bg "$out" -- sh -c "trap 'echo got-$sig; exit 7' $sig; echo ready; while :; do sleep 0.1; done"
	wait_for "$out" '^ready' 10 || { fail "$sig: command did not start ($(excerpt "$(cat "$out" "$out.err")"))"; return; }
	kill "-$sig" "$WPID"
	wait "$TPID"
	rc=$?
	cat "$out" "$out.err"
	grep -qx "got-$sig" "$out" || fail "SIG$sig did not reach the command's trap (rc=$rc)"
	((rc == 7)) || fail "SIG$sig: exit status $rc, expected the command's 7"
}

test_signal_forwarding() {
	forward_one TERM
	forward_one INT
	forward_one HUP
	# an untrapped SIGTERM kills the command: 143
	local out="$T_TMP/untrapped.out" rc
	warden_bg "$out" -- sh -c 'echo ready; exec sleep 60'
	wait_for "$out" '^ready' 10 || fatal 'command did not start'
	sleep 0.2
	kill -TERM "$WPID"
	wait "$TPID"
	rc=$?
	((rc == 143)) || fail "untrapped SIGTERM: exit $rc, expected 143"
}

test_supervisor_death() {
	local marker num out="$T_TMP/death.out" i left
	marker=$(unique)
	num="987.$RANDOM$RANDOM"
	warden_bg "$out" -- sh -c "sleep $num & echo ready; wait; : $marker"
	wait_for "$out" '^ready' 10 || fatal "command did not start: $(excerpt "$(cat "$out" "$out.err")")"
	sleep 0.2
	pgrep -f "sleep $num" >/dev/null || fatal 'marker process not visible from the host (test bug?)'
	if ! is_root; then
		# non-dumpable: the same unprivileged user cannot ptrace it or read its environ
		probe_host ptrace "$WPID"
		[[ $HRC != 0 ]] || fail "supervisor is ptrace-able by its own user: $HOUT"
		cat "/proc/$WPID/environ" >/dev/null 2>&1 && fail 'supervisor /proc/PID/environ readable (dumpable)'
	fi
	kill -KILL "$WPID"
	wait "$TPID" 2>/dev/null
	left=''
	for ((i = 0; i < 50; i++)); do
		left=$(pgrep -f -- "sleep $num|$marker")
		[[ -z $left ]] && break
		sleep 0.1
	done
	if [[ -n $left ]]; then
		fail "sandbox processes survived SIGKILL of warden: $(ps -o pid=,args= -p "${left//$'\n'/,}" | tr '\n' ';')"
		kill -KILL $left 2>/dev/null
	fi
}

# warden run inside a warden session: refused (sandboxes do not nest),
# saying so; the command does not run.
test_nested_session_refused() {
	mkdir -p bin && cp "$WARDEN" bin/warden
	wsh './bin/warden run -- touch ran-nested; echo "inner rc=$?"'
	assert_out_match '^inner rc=125$' 'the inner warden'
	assert_err_match 'sandboxes do not nest' 'the inner warden'
	[[ $ERR != *sysctls* ]] || fail "the inner warden points at the sysctls: $(excerpt "$ERR")"
	assert_host_absent ran-nested 'the command of a nested warden ran'
}

# warden doctor under a seccomp filter that refuses clone3 (a container
# with Docker's default profile): it tries the call a session makes, fails
# the row, and names the filter and the profile, not the sysctls; its row
# for a filter around warden says one is there (and none without one).
test_doctor_names_outer_filter() {
	"$WPROBE" deny clone3 timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" doctor </dev/null >"$T_TMP/dr.out" 2>&1
	RC=$? OUT=$(<"$T_TMP/dr.out")
	((RC != 0)) || fail "doctor passed with clone3 refused: $(excerpt "$OUT")"
	grep -E '^FAIL +(unprivileged )?user namespaces' <<<"$OUT" | matches 'seccomp filter outside warden' &&
		grep -q 'make-seccomp-profile' <<<"$OUT" ||
		fail "doctor does not name the filter: $(excerpt "$(grep -i namespaces <<<"$OUT")")"
	grep -qE '^OK +seccomp filter around warden +present: warden runs under a seccomp filter set outside it' <<<"$OUT" ||
		fail "doctor does not say it runs under a filter: $(excerpt "$(grep -i 'around warden' <<<"$OUT")")"
	# and without one (as this shell runs: /proc/self/status), none
	local want=none
	grep -qE '^Seccomp:[[:space:]]+0$' /proc/self/status || want=present
	timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" doctor </dev/null >"$T_TMP/dr.out" 2>&1
	grep -qE "^OK +seccomp filter around warden +$want" "$T_TMP/dr.out" ||
		fail "doctor's filter row, expected $want: $(excerpt "$(grep -i 'around warden' "$T_TMP/dr.out")")"
}

test_fail_closed() {
	# A layer the kernel cannot provide stops warden (125, naming the layer);
	# the command never runs with fewer layers.
	"$WPROBE" deny landlock timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- touch ran-landlock \
		</dev/null >"$T_TMP/ll.out" 2>"$T_TMP/ll.err"
	RC=$? OUT=$(<"$T_TMP/ll.out") ERR=$(<"$T_TMP/ll.err")
	assert_rc 125 'without Landlock'
	grep -qi landlock <<<"$ERR" || fail "without Landlock: the error does not name Landlock: $(excerpt "$ERR")"
	assert_host_absent ran-landlock 'command ran without Landlock'
	"$WPROBE" deny seccomp timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- touch ran-seccomp \
		</dev/null >"$T_TMP/sc.out" 2>"$T_TMP/sc.err"
	RC=$? OUT=$(<"$T_TMP/sc.out") ERR=$(<"$T_TMP/sc.err")
	assert_rc 125 'without seccomp'
	grep -qi seccomp <<<"$ERR" || fail "without seccomp: the error does not name seccomp: $(excerpt "$ERR")"
	assert_host_absent ran-seccomp 'command ran without seccomp'
	# clone3 refused with ENOSYS, as Docker's and containerd's default
	# seccomp profiles do in a container: the error names the filter and
	# the profile to run with, not the sysctls
	"$WPROBE" deny clone3 timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- touch ran-clone3 \
		</dev/null >"$T_TMP/c3.out" 2>"$T_TMP/c3.err"
	RC=$? ERR=$(<"$T_TMP/c3.err")
	assert_rc 125 'clone3 refused by a filter outside'
	grep -q 'a seccomp filter outside warden refuses sandbox init.s clone' <<<"$ERR" &&
		grep -q 'make-seccomp-profile' <<<"$ERR" && ! grep -q 'sysctls' <<<"$ERR" ||
		fail "clone3 refused: the error does not name the filter and the profile: $(excerpt "$ERR")"
	assert_host_absent ran-clone3 'command ran without its namespaces'
	# the network namespace refused to its maker (unshare, beside init): no
	# sandbox with the host's network
	"$WPROBE" deny netns timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- touch ran-netns \
		</dev/null >"$T_TMP/nn.out" 2>"$T_TMP/nn.err"
	RC=$? ERR=$(<"$T_TMP/nn.err")
	assert_rc 125 'without a network namespace'
	grep -q 'network namespace: the kernel refused' <<<"$ERR" ||
		fail "without a network namespace: the error does not name it: $(excerpt "$ERR")"
	grep -q 'unshare(CLONE_NEWNET)' <<<"$ERR" ||
		fail "without a network namespace: the error does not say what refused it: $(excerpt "$ERR")"
	assert_host_absent ran-netns 'command ran without a network namespace'
	# user namespaces refused (user.max_user_namespaces=0 in a namespace of our own)
	if have unshare && unshare -U -r true 2>/dev/null; then
		unshare -U -r sh -c 'echo 0 > /proc/sys/user/max_user_namespaces &&
			exec timeout -k 5 "$1" "$2" run -- touch ran-userns' sh "$WARDEN_TIMEOUT" "$WARDEN" \
			</dev/null >"$T_TMP/un.out" 2>"$T_TMP/un.err"
		RC=$? ERR=$(<"$T_TMP/un.err")
		assert_rc 125 'without user namespaces'
		grep -qi 'namespace' <<<"$ERR" || fail "without user namespaces: the error does not name them: $(excerpt "$ERR")"
		assert_host_absent ran-userns 'command ran without a user namespace'
	else
		note 'unshare -U -r unavailable: user namespace case not tested'
	fi
}

# When warden fails after it has put the user's terminal in raw mode, the
# terminal comes back as it was. The failure is a lack of file descriptors
# (the fault injector's WFAULT_EVENTFD: the Nth eventfd and those after it
# fail with EMFILE), which the supervisor meets making exec control and the
# proxy, after the terminal went raw; the test walks N up until a session
# succeeds (and sets the terminal back after each run, so each is judged
# alone). (It once lowered `ulimit -Hn` instead: warden now refuses a hard
# limit too low for a session before it touches the terminal.)
test_pty_restored_on_failure() {
	have script || skip 'script(1) not installed'
	wfault_lib
	local w f sleeper line n rc after before hits=0
	w=$(printf '%q' "$WARDEN")
	f=$(printf '%q' "$WFAULT")
	exec {sleeper}< <(exec sleep "$WARDEN_TIMEOUT")
	bg_track $!
	OUT=$(timeout -k 5 "$WARDEN_TIMEOUT" script -qec "b=\$(stty -g); echo \$b
		for n in \$(seq 1 12); do
			(WFAULT_EVENTFD=\$n LD_PRELOAD=$f exec $w run -- true) >/dev/null 2>'$T_TMP/err.'\$n
			rc=\$?
			echo \"n=\$n rc=\$rc \$(stty -g)\"
			stty \$b
			[ \$rc = 0 ] && break
		done" /dev/null <&"$sleeper" 2>&1)
	exec {sleeper}<&-
	OUT=${OUT//$'\r'/}
	echo "$OUT"
	before=$(sed -n 1p <<<"$OUT")
	[[ -n $before ]] || fatal "no terminal settings from script: $(excerpt "$OUT")"
	while read -r line; do
		[[ $line =~ ^n=([0-9]+)\ rc=([0-9]+)\ (.*)$ ]] || continue
		n=${BASH_REMATCH[1]} rc=${BASH_REMATCH[2]} after=${BASH_REMATCH[3]}
		cat "$T_TMP/err.$n"
		((rc == 125)) && grep -q 'Too many open files' "$T_TMP/err.$n" && hits=$((hits + 1))
		[[ $after == "$before" ]] ||
			fail "eventfd $n failing (exit $rc, $(excerpt "$(<"$T_TMP/err.$n")")): terminal left changed: before '$before' after '$after'"
	done <<<"$OUT"
	grep -q '^n=[0-9]* rc=0 ' <<<"$OUT" || fail "no session succeeded with eventfds failing from the 12th on: $(excerpt "$OUT")"
	((hits > 0)) || fail 'no eventfd that failed made warden fail after the terminal went raw'
}
