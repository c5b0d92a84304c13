# t_terminal.sh - the user's terminal out of the agent's reach: whenever any
# of stdin, stdout, stderr is a terminal, the command gets the sandbox's own
# pty in its place (a pipe stays a pipe), so it can neither read the user's
# keys nor change the terminal's modes; the agent's output is filtered on
# its way (OSC 52 clipboard sequences dropped unless `terminal clipboard
# allow`, titles printable only, terminal queries dropped when their answers
# could not reach the sandbox); and the terminal's modes come back on every
# exit, SIGTERM and SIGHUP to warden included. Each test runs warden under
# script(1), which gives it a terminal of its own (tscript, lib.sh); W holds
# warden's path, quoted for the shell.
# shellcheck shell=bash

# stdin a pipe, stdout the user's terminal: the command reads the pipe, and
# its stdout is the sandbox's pty, not the terminal; what it does to the
# modes of its terminal stays there.
test_terminal_pipe_stdin() {
	have script || skip 'script(1) not installed'
	local W
	W=$(printf '%q' "$WARDEN")
	tscript "stty -g; echo piped | $W run -- sh -c 'cat; test -t 0 || echo stdin-not-tty; tty <&1; stty -echo -icanon <&1 && echo modes-changed'; stty -g"
	assert_out_line piped 'the pipe reaches the command'
	assert_out_line stdin-not-tty 'stdin stays a pipe'
	assert_out_line /dev/pts/0 "stdout is the sandbox's own pty"
	assert_out_line modes-changed 'the command changed its terminal'
	local before after
	before=$(sed -n 1p <<<"$OUT")
	after=$(tail -n 1 <<<"$OUT")
	[[ -n $before && $before == "$after" ]] ||
		fail "the user's terminal modes changed: before '$before' after '$after'"
}

# stdout a pipe, stderr the terminal: the same for stderr.
test_terminal_stderr_only() {
	have script || skip 'script(1) not installed'
	local W
	W=$(printf '%q' "$WARDEN")
	tscript "$W run -- sh -c 'test -t 1 || echo stdout-not-tty; tty <&2 >&2' </dev/null | cat"
	assert_out_line stdout-not-tty 'stdout stays a pipe'
	assert_out_line /dev/pts/0 "stderr is the sandbox's own pty"
}

# OSC 52 dropped, a title's control bytes dropped, a cursor-position query
# dropped when stdin is not the terminal (its answer would wait in the
# user's input for the shell), kept when it is; the clipboard allowed by the
# profile.
test_terminal_output_filter() {
	have script || skip 'script(1) not installed'
	local W seq
	W=$(printf '%q' "$WARDEN")
	# shellcheck disable=SC2016 # printf inside
	seq='A\033]52;c;aGVsbG8=\007B\033]2;ti\001tle\007C\033[6nD\n'
	tscript "echo | $W run -- printf '$seq'"
	assert_rc 0
	[[ $OUT == *AB$'\e]2;title\a'C* ]] || fail "clipboard not dropped or title not cleaned: $(printf %q "$OUT")"
	[[ $OUT == *CD* && $OUT != *$'\e[6n'* ]] || fail "the query passed with stdin a pipe: $(printf %q "$OUT")"
	tscript "$W run -- printf '$seq'"
	[[ $OUT == *$'\e[6n'* ]] || fail "the query was dropped with stdin the terminal: $(printf %q "$OUT")"
	[[ $OUT != *']52;'* ]] || fail "OSC 52 passed: $(printf %q "$OUT")"
	printf 'terminal clipboard allow\n' >"$T_TMP/clip.profile"
	tscript "echo | $W run --profile $(printf %q "$T_TMP/clip.profile") -- printf '$seq'"
	[[ $OUT == *$'\e]52;c;aGVsbG8=\a'* ]] || fail "OSC 52 dropped with terminal clipboard allow: $(printf %q "$OUT")"
}

# Names the sandbox chose reach warden's own messages on the terminal
# (the sweep's note on a .git it made, the refusals' summary) escaped: an
# OSC 52 in a directory's name sets no clipboard, as the filter above keeps
# it from doing in the agent's own output.
test_terminal_sandbox_names_shown() {
	have script || skip 'script(1) not installed'
	local W
	W=$(printf '%q' "$WARDEN")
	# shellcheck disable=SC2016 # the sandbox's script
	printf '%s\n' 'n=$(printf "x\033]52;c;aGk=\007y")' 'mkdir -p "$n/.git" && : >"$n/.git/HEAD"' \
		'true 2>/dev/null >"/usr/$n"' 'exit 0' >names.sh
	tscript "$W run -- sh ./names.sh"
	assert_rc 0
	[[ $OUT != *$'\e]52'* && $OUT != *$'\a'* ]] ||
		fail "an escape sequence in a name reached the terminal: $(printf %q "$OUT")"
	[[ $OUT == *'created '*'/x\x1b]52;c;aGk=\x07y/.git ('* ]] ||
		fail "the sweep's note does not show the name escaped: $(printf %q "$OUT")"
	[[ $OUT == *'open /usr/x\x1b]52;c;aGk=\x07y: '* ]] ||
		fail "the refusals' summary does not show the path escaped: $(printf %q "$OUT")"
}

# SIGTERM and SIGHUP to warden in the foreground of its terminal: the
# terminal's modes are back when it exits.
test_terminal_restored_on_signals() {
	have script || skip 'script(1) not installed'
	have pkill || skip 'pkill not installed'
	local W sig marker before after
	W=$(printf '%q' "$WARDEN")
	for sig in TERM HUP; do
		marker="31.$RANDOM"
		# anchored: script's and the shell's command lines hold the text too
		tscript "stty -g; (sleep 1.5; pkill -$sig -f '^[^ ]*warden run -- sleep $marker') & $W run -- sleep $marker; echo rc=\$?; stty -g"
		assert_out_match '^rc=[0-9]+$' "warden exited after SIG$sig"
		before=$(sed -n 1p <<<"$OUT")
		after=$(tail -n 1 <<<"$OUT")
		[[ -n $before && $before == "$after" ]] ||
			fail "SIG$sig: terminal modes not restored: before '$before' after '$after'"
	done
}

# Queries the command prints last (device attributes, the cursor position,
# the background colour), answered by the terminal after the command ended:
# warden reads the answers away before it gives the terminal back, so the
# shell after it does not read them as typed (issue 35). The terminal is
# ttyemu.py's, which answers as a terminal does, a little after each query.
test_terminal_answers_after_end() {
	have python3 || skip 'python3 not installed'
	local emu W q
	emu=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ttyemu.py
	W=$(printf '%q' "$WARDEN")
	for q in '\033[c' '\033]11;?\007\033[6n'; do
		OUT=$(timeout -k 5 "$WARDEN_TIMEOUT" python3 "$emu" run \
			"$W run -- printf 'x$q'; echo rc=\$?; python3 $(printf %q "$emu") read 0.5" 2>&1)
		RC=$?
		printf -- '--- %s\n%s\n' "$q" "$(cat -v <<<"$OUT")"
		assert_out_has 'rc=0' "warden ran printf '$q'"
		[[ $OUT == *"x$(printf "$q")"* ]] || fail "the query '$q' did not reach the terminal"
		assert_out_has "read:b''" "the shell after warden read nothing of the answers to '$q'"
	done
}

# The command's first exec made again as a fork (unprivileged, a file the
# agent can change: src/sandbox/init.c): the process that gave it up had
# the pty as its controlling terminal, and the command's output still
# reaches the user's terminal afterwards, for as long as it runs.
test_terminal_first_exec_made_again() {
	have script || skip 'script(1) not installed'
	local W
	W=$(printf '%q' "$WARDEN")
	printf '#!/bin/sh\ntty\nsleep 0.5\necho late-output\n' >late.sh && chmod 755 late.sh
	tscript "$W run -- $(printf %q "$PWD/late.sh")"
	assert_rc 0
	assert_out_line /dev/pts/0 "the command's stdout is the sandbox's pty"
	assert_out_line late-output 'what the command wrote later reached the terminal'
}

# ttyrelay ARGS...: ttyrelay.py (a terminal slow to read or to be read)
# under a timeout: its output in $T_TMP/tty.out, and in OUT without the
# lines of `yes` (1,500,000 of them are counted, not matched in a string).
ttyrelay() {
	have python3 || skip 'python3 not installed'
	timeout -k 5 90 python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ttyrelay.py" "$@" \
		>"$T_TMP/tty.out" 2>&1
	RC=$?
	OUT=$(grep -av $'^y\r*$' "$T_TMP/tty.out")
}

# A paste larger than the agent's pty takes (200,000 bytes) while the
# command does not read its input: the keys wait in warden and reach the
# command once it reads, all of them, in order. Before, the relay's write
# to the full pty failed and the user's keys were no longer read for the
# rest of the session: the paste cut at some 16 KB, Ctrl-C dead too.
test_terminal_paste_unread() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyrelay paste 200000 "$W run -- sh -c 'stty -icanon -echo; echo ready; sleep 2; head -c 200000 | cksum'"
	assert_rc 0 'the terminal'
	assert_out_has 'typed 200000' 'the whole paste typed'
	local want
	want=$(python3 -c 'import sys; sys.stdout.buffer.write(bytes(ord("a") + i % 26 for i in range(200000)))' | cksum)
	assert_out_has "$want" 'the command read the whole paste, in order'
	assert_out_has 'rc=0' 'warden ended with the command'
}

# A paste past what warden keeps for a command that never reads its input
# (1 MiB): the rest is dropped, not waited for, and said when the session
# ends; the session ends with the command.
test_terminal_paste_dropped() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyrelay paste 1300000 "$W run -- sh -c 'stty -icanon -echo; echo ready; sleep 3'"
	assert_rc 0 'the terminal'
	assert_out_has 'typed 1300000' 'the whole paste typed'
	assert_out_match 'warden: [0-9]+ bytes typed were dropped: the command did not read its input, and warden keeps at most 1024 KiB of it' \
		'the drop said'
	assert_out_has 'rc=0' 'warden ended with the command'
}

# The user's terminal stops reading (a stalled link) while the command
# writes 3 MB: the agent's writes wait, as on a terminal of its own, and
# warden goes on serving the session: `warden status` from another
# terminal answers, and 40 rounds of `warden freeze` and `warden resume`,
# whose notes (some 8 KB) wait for the terminal after the output before
# them. Before, the relay's write blocked warden's loop, and with it the
# control socket (status, kill), the execs and the proxy; then a note on
# the stalled terminal did. Once the terminal reads again, the rest of the
# output comes, and the notes.
test_terminal_stalled_serves() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyrelay stall 2 "timeout 5 $W status && S=\$($W status | awk 'NR == 2 { print \$1 }') && i=0 &&
		while [ \$i -lt 40 ]; do timeout 5 $W freeze \$S >/dev/null && timeout 5 $W resume \$S >/dev/null ||
		{ echo failed at round \$i; exit 1; }; i=\$((i + 1)); done; echo rounds \$i" \
		"$W run -- sh -c 'echo ready; yes | head -c 3000000; echo; echo finished'"
	assert_rc 0 'the terminal'
	assert_out_has 'side rc=0' '`warden status`, `freeze` and `resume` answered within 5 s each'
	assert_out_match '[0-9]+T[0-9]+Z-[0-9a-f]+ .* running .*yes \| head' 'the session listed as running'
	assert_out_has 'rounds 40' 'the 40 rounds of freeze and resume'
	assert_out_match '^finished.?$' 'the output after the stall'
	assert_out_has 'rc=0' 'warden ended with the command'
	# a line "y" and its CR LF; a note (CR LF first) that came between
	# the two halves of a read, after "y\r", leaves "y\r\r" (whole on the
	# screen); `yes` under the harness's pty says "yes: ... Broken pipe"
	# (Python hands its children SIGPIPE ignored): not counted
	local ys
	ys=$(grep -ac $'^y\r*$' "$T_TMP/tty.out")
	((ys == 1500000)) || fail "not every line of the output reached the terminal: $ys of 1500000"
	[[ $(grep -c 'warden: the sandbox is frozen' <<<"$OUT") == 40 ]] ||
		fail "not the 40 notes of the freezes: $(grep -c 'warden: the sandbox is frozen' <<<"$OUT")"
}

# The terminal never reads again and the session is killed from another
# terminal: the kill switch answers, and warden ends within the wait for
# a terminal that takes nothing (TERM_STALL_MS, 5 s), its session.end on
# the log, rather than waiting for that terminal for good.
test_terminal_stalled_killed() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyrelay stall-gone 2 "S=\$($W status | awk 'NR == 2 { print \$1 }'); timeout 5 $W kill \$S" \
		"$W run -- sh -c 'echo ready; yes | head -c 3000000; echo finished'"
	assert_rc 0 'the terminal'
	assert_out_match 'side rc=0' '`warden kill` answered'
	assert_out_match '^exited after [0-9.]+ s' 'warden ended with the terminal still stalled'
	assert_out_has 'rc=137' 'the command killed'
	local log
	log=$(latest_log)
	matches -F '"event":"session.end","exit":137' "$log" || fail "no session.end: $(tail -c 300 "$log")"
}

# stall_rounds: while the session's stderr is not read, `warden status`
# and 40 rounds of `warden freeze` and `resume` answer (S set to the
# session's name).
stall_rounds() {
	local i=0
	sleep 1
	S=$(timeout 5 "$WARDEN" status | awk 'NR == 2 { print $1 }')
	[[ -n $S ]] || fail '`warden status` did not answer on a stalled stderr'
	while ((i < 40)); do
		timeout 5 "$WARDEN" freeze "$S" >/dev/null && timeout 5 "$WARDEN" resume "$S" >/dev/null ||
			break
		i=$((i + 1))
	done
	((i == 40)) || fail "freeze and resume stopped answering at round $i"
}

# stalled_said FILE: the session ended well, its output's end and the 40
# freezes' notes in FILE (what its stderr said once read).
stalled_said() {
	local said
	OUT=$(<"$1")
	assert_rc 0 'warden'
	assert_out_line finished 'the output after the stall'
	said=$(grep -c 'warden: the sandbox is frozen' "$1")
	((said == 40)) || fail "not the 40 notes of the freezes: $said"
}

# The command that fills its stderr once the session has started.
STALL_CMD='echo ready >&2; yes | head -c 3000000 >&2; echo finished >&2'

# warden's stderr a pipe nobody reads for a while (`2>&1 | less`, the
# pager paused) while the command fills it: the session goes on, and 40
# rounds of `warden freeze` and `resume` answer, their notes kept by warden
# (not written while the pipe is full) and there once it is read. Before,
# the first note waited on the full pipe, and with it warden's loop: the
# resume never came.
test_terminal_stderr_pipe_stalled() {
	mkfifo "$T_TMP/err" || fatal 'mkfifo'
	timeout -k 5 90 "$WARDEN" run -- sh -c "$STALL_CMD" </dev/null >/dev/null 2>"$T_TMP/err" &
	local tpid=$! line S
	exec 3<"$T_TMP/err"
	IFS= read -r line <&3
	[[ $line == ready ]] || fatal "the session did not start: $line"
	stall_rounds
	grep -av '^y$' <&3 >"$T_TMP/err.rest"
	exec 3<&-
	wait "$tpid"
	RC=$?
	stalled_said "$T_TMP/err.rest"
}

# The same with warden's stderr a socket (a service's, to the journal, with
# journald behind): a socket is not opened again as a pipe is, so warden's
# notes went to it as before and the first one waited, and with it the
# loop: the resume timed out and the sandbox stayed frozen until killed.
test_terminal_stderr_socket_stalled() {
	have python3 || skip 'python3 is not installed'
	local tpid S
	timeout -k 5 90 python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sockerr.py" \
		"$T_TMP/err" "$T_TMP/go" "$WARDEN" run -- sh -c "$STALL_CMD" &
	tpid=$!
	wait_for "$T_TMP/err.first" '^ready$' 20 ||
		fatal "the session did not start: $(cat "$T_TMP/err.first" 2>&1)"
	stall_rounds
	touch "$T_TMP/go"
	wait "$tpid"
	RC=$?
	stalled_said "$T_TMP/err"
}

# stdin the terminal, stdout a pipe to a process that writes to the same
# terminal (`warden run -- make | tee log`): warden makes the terminal's
# keys raw for the relay, but leaves its output processing on, so what
# the other process writes comes out with "\r\n" (before, "\n" alone: a
# staircase), and `stty` run meanwhile says opost. The terminal's modes
# are back at the end.
test_terminal_pipeline_keeps_opost() {
	local W
	W=$(printf '%q' "$WARDEN")
	# the reader waits for the command's first line: the terminal is set
	# up by then
	ttyjob "stty -g; $W run -- sh -c 'echo one; sleep 0.3; echo two' | (IFS= read -r l;
		stty -a </dev/tty | tr ' ;' '\\n\\n' | grep -xE -- '-?(opost|onlcr|icanon|echo)' | tr '\\n' ' ';
		echo; printf '%s\\n' \"\$l\"; cat); stty -g" 'expect=two'
	assert_out_has 'rc=0' 'the terminal'
	[[ $OUT == *'one\r\ntwo\r\n'* ]] ||
		fail "the pipeline's output on the terminal without its CRs: $(excerpt "$OUT")"
	[[ $OUT == *'\nopost onlcr -icanon -echo '* ]] ||
		fail "the terminal's modes during the run: not keys raw, output processed: $(excerpt "$OUT")"
	local before after
	before=$(grep -o "^screen: b'[^\\]*" <<<"$OUT")
	before=${before#screen: b\'}
	after=$(grep -oE '[0-9a-f:]+\\r\\n.$' <<<"$OUT")
	after=${after%%\\r\\n*}
	[[ -n $before && $before == "$after" ]] ||
		fail "the terminal's modes not back after the run: before '$before' after '$after'"
}

# The same pipeline with a full-screen program on the terminal (its
# stderr): while the command's own pty has output processing off, so has
# the user's terminal, as the program would have it without warden ("\n"
# moves down, not to the start of the line); on again once the program
# turns it back on.
test_terminal_pipeline_raw_program() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyjob "$W run -- sh -c 'stty -opost <&2; printf \"p\\nq\\n\" >&2; stty opost <&2; printf \"r\\ns\\n\" >&2' | cat; echo done" 'expect=done'
	assert_out_has 'rc=0' 'the terminal'
	[[ $OUT == *'p\nq\n'* ]] ||
		fail "the program's raw output processed on the terminal: $(excerpt "$OUT")"
	[[ $OUT == *'r\r'*'s\r'* ]] ||
		fail "the output processing not back on after the program: $(excerpt "$OUT")"
}

# The same pipeline: the keys still reach the command raw, through its
# pty, so Ctrl-C is the command's SIGINT there: it ends, warden with its
# status, and the reader at its end of the pipe.
test_terminal_pipeline_ctrl_c() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyjob "{ $W run -- sh -c 'echo ready; sleep 30'; echo \"rc=\$?\"; } | cat" \
		'expect=ready' 'sleep=0.3' 'send=\x03' 'expect=rc=[0-9]+'
	[[ $OUT != *'failed: '* ]] || fail "Ctrl-C did not end the pipeline: $(excerpt "$OUT")"
	assert_out_has 'rc=130' "warden's status after Ctrl-C"
}
