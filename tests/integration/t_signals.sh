# t_signals.sh - SIGINT, SIGTERM and SIGHUP sent to warden reach every
# process in the sandbox, not only the command; what outlives the grace
# period (`signal grace SECONDS`) is killed, and at once on a second
# stopping signal; a frozen sandbox ends at once on the first (or on Ctrl-C
# on its terminal), and one that comes while the sandbox is still being
# built ends the start at once; one that comes while warden finishes the
# session waits for session.end, then ends warden (a second, at once); each
# step is in the audit log.
# shellcheck shell=bash


# sig_gone PATTERN SECONDS: wait until no host process matches PATTERN
# (pgrep -f); 1 when some still do at the end.
sig_gone() {
	local i n=$(($2 * 10))
	for ((i = 0; i < n; i++)); do
		pgrep -f -- "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# sig_seen PATTERN COUNT: wait (up to 3 s) until COUNT host processes match
# PATTERN; 1 if they never do.
sig_seen() {
	local i
	for ((i = 0; i < 60; i++)); do
		[[ $(pgrep -fc -- "$1") == "$2" ]] && return 0
		sleep 0.05
	done
	return 1
}

# sig_kill PATTERN: SIGKILL, by pid, what a failed test left running.
sig_kill() {
	local pid
	for pid in $(pgrep -f -- "$1"); do
		kill -KILL "$pid" 2>/dev/null
	done
}

# sig_wait_warden SECONDS: wait for the warden started by warden_bg to end
# and set RC; on a timeout kill it (RC=timeout).
sig_wait_warden() {
	local i n=$(($1 * 10))
	for ((i = 0; i < n; i++)); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$WPID" 2>/dev/null; then
		kill -KILL "$WPID" 2>/dev/null
		wait "$TPID" 2>/dev/null
		RC=timeout
		return 1
	fi
	wait "$TPID"
	RC=$?
	return 0
}

# sig_reach SIG: the command traps SIG and waits for a foreground sleep;
# another sleep runs in the background with SIG at its default. Both must
# end within 5 s of SIG to warden (the grace period is 10 s: the signal
# ended them, not the kill), from the host's view; the command's trap ran;
# the log has the signal event, and no kill.
sig_reach() {
	local sig=$1 out="$T_TMP/reach-$1.out" bg fg left f
	bg="987.$RANDOM$RANDOM" fg="988.$RANDOM$RANDOM"
	warden_bg "$out" -- sh -c "env --default-signal=$sig sleep $bg & trap 'echo got-$sig' $sig; echo ready; sleep $fg; echo after"
	wait_for "$out" '^ready' 10 || { fail "$sig: command did not start ($(excerpt "$(cat "$out" "$out.err")"))"; return; }
	sig_seen "^sleep ($bg|$fg)\$" 2 || fatal "$sig: the two sleeps are not visible from the host (test bug?)"
	kill "-$sig" "$WPID"
	if ! sig_gone "^sleep ($bg|$fg)\$" 5; then
		left=$(pgrep -fa -- "^sleep ($bg|$fg)\$" | tr '\n' ';')
		fail "SIG$sig to warden: sandbox processes still alive 5 s later: $left"
		sig_kill "^sleep ($bg|$fg)\$"
	fi
	sig_wait_warden 10 || fail "SIG$sig: warden still running 10 s after it"
	cat "$out" "$out.err"
	grep -qx "got-$sig" "$out" || fail "SIG$sig did not reach the command's trap (rc=$RC)"
	grep -qx after "$out" || fail "SIG$sig: the command did not go on after its trap (rc=$RC)"
	[[ $RC == 0 ]] || fail "SIG$sig: exit status $RC, expected the command's 0"
	f=$(latest_log)
	grep -q "\"event\":\"signal\",\"signal\":\"SIG$sig\",\"to\":\"sandbox\",\"sender_pid\":[0-9]*,\"grace_s\":10," "$f" ||
		fail "SIG$sig: no signal event to the sandbox in the log: $(excerpt "$(grep -v '"exec"' "$f")")"
	! grep -q '"event":"kill"' "$f" || fail "SIG$sig: a kill event although everything ended on the signal"
}

test_signal_reaches_sandbox() {
	sig_reach TERM
	sig_reach INT
	sig_reach HUP
}

# A sandbox that ignores SIGTERM (the command and a background process) is
# still there during the grace period of the profile (2 s), then killed:
# exit 137, nothing left, and the log says signal, then kill, 2 s apart.
test_signal_grace_kill() {
	local out="$T_TMP/grace.out" bg t_sig t_kill f ms
	bg="989.$RANDOM$RANDOM"
	printf 'signal grace 2\n' >"$T_TMP/grace.profile"
	wardenc policy show --profile "$T_TMP/grace.profile"
	grep -A1 '"signal": {' <<<"$OUT" | grep -E '^ *"grace": 2$' >/dev/null ||
		fail "policy show: signal grace not 2: $(excerpt "$(grep -A2 '"signal"' <<<"$OUT")")"
	warden_bg "$out" --profile "$T_TMP/grace.profile" -- sh -c "trap '' TERM; sleep $bg & echo ready; wait"
	wait_for "$out" '^ready' 10 || fatal "command did not start ($(excerpt "$(cat "$out" "$out.err")"))"
	sig_seen "^sleep $bg\$" 1 || fatal 'the sleep is not visible from the host (test bug?)'
	kill -TERM "$WPID"
	sleep 0.7
	pgrep -f -- "^sleep $bg\$" >/dev/null || fail 'the sandbox ended before the grace period (it ignores SIGTERM)'
	if ! sig_gone "^sleep $bg\$" 6; then
		fail "sandbox processes ignoring SIGTERM still alive 6 s after it (grace 2 s): $(pgrep -fa -- "^sleep $bg\$" | tr '\n' ';')"
		sig_kill "^sleep $bg\$"
	fi
	sig_wait_warden 5 || fail 'warden still running after the sandbox was killed'
	[[ $RC == 137 ]] || fail "exit status $RC, expected 137 (killed)"
	f=$(latest_log)
	grep -v '"exec"' "$f"
	t_sig=$(grep -o '"ts":"[^"]*","session":"[^"]*","seq":[0-9]*,"event":"signal","signal":"SIGTERM","to":"sandbox","sender_pid":[0-9]*,"grace_s":2,' "$f" | head -n 1 | cut -d'"' -f4)
	t_kill=$(grep -o '"ts":"[^"]*","session":"[^"]*","seq":[0-9]*,"event":"kill","signal":"SIGKILL","to":"sandbox","reason":"grace period over","grace_s":2,' "$f" | head -n 1 | cut -d'"' -f4)
	[[ -n $t_sig ]] || fail "no signal event (SIGTERM to the sandbox, grace 2) in the log"
	[[ -n $t_kill ]] || fail "no kill event (grace period over) in the log"
	if [[ -n $t_sig && -n $t_kill ]]; then
		ms=$((($(date -d "$t_kill" +%s%N) - $(date -d "$t_sig" +%s%N)) / 1000000))
		((ms >= 1900 && ms < 4000)) || fail "kill ${ms} ms after the signal, expected about 2000"
	fi
}

# `signal grace 0`: the signal, then the kill at once.
test_signal_grace_zero() {
	local out="$T_TMP/zero.out" bg f start ms
	bg="990.$RANDOM$RANDOM"
	printf 'signal grace 0\n' >"$T_TMP/zero.profile"
	warden_bg "$out" --profile "$T_TMP/zero.profile" -- sh -c "trap '' TERM; sleep $bg & echo ready; wait"
	wait_for "$out" '^ready' 10 || fatal "command did not start ($(excerpt "$(cat "$out" "$out.err")"))"
	start=$(date +%s%N)
	kill -TERM "$WPID"
	sig_gone "^sleep $bg\$" 5 || { fail "grace 0: sandbox still alive 5 s after SIGTERM"; sig_kill "^sleep $bg\$"; }
	ms=$((($(date +%s%N) - start) / 1000000))
	((ms < 1500)) || fail "grace 0: the sandbox ended ${ms} ms after SIGTERM"
	sig_wait_warden 5 || fail 'warden still running after the sandbox was killed'
	[[ $RC == 137 ]] || fail "grace 0: exit status $RC, expected 137"
	f=$(latest_log)
	grep -q '"event":"signal","signal":"SIGTERM","to":"sandbox",.*"grace_s":0,' "$f" || fail 'grace 0: no signal event'
	grep -q '"event":"kill","signal":"SIGKILL","to":"sandbox","reason":"grace period over","grace_s":0,' "$f" ||
		fail 'grace 0: no kill event'
}

# Other signals go to the command alone, as before, and are logged so.
test_signal_usr1_to_command() {
	local out="$T_TMP/usr1.out" bg
	bg="991.$RANDOM$RANDOM"
	warden_bg "$out" -- sh -c "sleep $bg & trap 'echo got-USR1; exit 5' USR1; echo ready; while :; do sleep 0.1; done"
	wait_for "$out" '^ready' 10 || fatal "command did not start ($(excerpt "$(cat "$out" "$out.err")"))"
	kill -USR1 "$WPID"
	sig_wait_warden 10 || fail 'SIGUSR1: warden still running 10 s after it'
	grep -qx got-USR1 "$out" || fail "SIGUSR1 did not reach the command's trap (rc=$RC)"
	[[ $RC == 5 ]] || fail "SIGUSR1: exit status $RC, expected the command's 5"
	grep -q '"event":"signal","signal":"SIGUSR1","to":"command",' "$(latest_log)" ||
		fail 'SIGUSR1: no signal event to the command in the log'
}

# ---- a frozen sandbox (issue 35) ---------------------------------------------

# sig_frozen_cmd MARKER: three kinds of escape attempt, which freeze the
# sandbox at the default thresholds, then a sleep to find it by.
sig_frozen_cmd() { printf '%s' "./wprobe unshare user; ./wprobe ptrace 1; ./wprobe bpf; echo went-on; sleep $1"; }

# sig_wait_frozen SECONDS: until `warden status` says the session in $WS is
# frozen; 1 if it never does.
sig_wait_frozen() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		"$WARDEN" status --json 2>/dev/null | grep -F "\"workspace\":\"$WS\"" | matches -F '"frozen":true' && return 0
		sleep 0.1
	done
	return 1
}

# sig_ms_until_gone PID: the milliseconds PID takes to end (up to 10 s;
# 99999 when it does not).
sig_ms_until_gone() {
	local start i
	start=$(date +%s%N)
	for ((i = 0; i < 200; i++)); do
		kill -0 "$1" 2>/dev/null || { echo $((($(date +%s%N) - start) / 1000000)); return 0; }
		sleep 0.05
	done
	echo 99999
}

# sig_frozen_killed SIG LOG: the session's log says: frozen by the detector,
# then killed by the signal (an action, the signal its reason), no grace.
sig_frozen_killed() {
	grep -F '"event":"action"' "$2" | grep -F '"action":"freeze"' | matches -F '"by":"detector"' ||
		fail "SIG$1: no freeze by the detector in the log"
	grep -F '"event":"action"' "$2" | grep -F '"action":"kill"' | grep -F '"by":"signal"' |
		grep -qF "\"reason\":\"SIG$1 while frozen\"" ||
		fail "SIG$1: no kill action by the signal: $(excerpt "$(grep -F '"event":"action"' "$2")")"
	grep -q '"event":"kill"' "$2" && fail "SIG$1: the grace period ran (a kill event) although frozen"
	return 0
}

# SIGTERM, SIGINT, SIGHUP to a warden whose sandbox is frozen (a pipe, no
# terminal: `freeze timeout 1m` keeps it frozen): the session ends within a
# second, warden exits 137, the log has the kill with the signal as reason.
test_signal_frozen_pipe() {
	local sig out mark ms
	printf 'freeze timeout 1m\n' >"$T_TMP/fz.profile"
	for sig in TERM INT HUP; do
		out="$T_TMP/fz-$sig.out" mark="992.$RANDOM$RANDOM"
		warden_bg "$out" --profile "$T_TMP/fz.profile" -- sh -c "$(sig_frozen_cmd "$mark")"
		sig_wait_frozen 10 || fatal "SIG$sig: not frozen after three escape attempts: $(excerpt "$(cat "$out.err")")"
		kill "-$sig" "$WPID"
		ms=$(sig_ms_until_gone "$WPID")
		((ms < 1000)) || fail "SIG$sig to a frozen session: warden still ran ${ms} ms later"
		sig_wait_warden 5 || fail "SIG$sig: warden still running"
		[[ $RC == 137 ]] || fail "SIG$sig to a frozen session: exit status $RC, expected 137"
		pgrep -f -- "^sleep $mark\$" >/dev/null && { fail "SIG$sig: the frozen sandbox outlived warden"; sig_kill "^sleep $mark\$"; }
		grep -qx went-on "$out" && fail "SIG$sig: the sandbox went on after its freeze"
		sig_frozen_killed "$sig" "$(latest_log)"
	done
}

# The same with warden on a terminal of its own (script(1)), its default
# `freeze timeout auto`: stderr on the terminal, the freeze waits (10
# minutes) and says how it ends; each signal ends it within a second.
test_signal_frozen_pty() {
	have script || skip 'script(1) not installed'
	local sig out mark ms pid sleeper W tpid
	W=$(printf '%q' "$WARDEN")
	for sig in TERM INT HUP; do
		out="$T_TMP/fzt-$sig.out" mark="993.$RANDOM$RANDOM"
		exec {sleeper}< <(exec sleep "$WARDEN_TIMEOUT")
		bg_track $!
		timeout -k 5 "$WARDEN_TIMEOUT" script -qec "$W run -- sh -c '$(sig_frozen_cmd "$mark")'; echo rc=\$?" /dev/null \
			<&"$sleeper" >"$out" 2>&1 &
		tpid=$!
		bg_track "$tpid"
		exec {sleeper}<&-
		sig_wait_frozen 10 || fatal "SIG$sig: not frozen on a terminal: $(excerpt "$(cat "$out")")"
		pid=$(warden_pid "^[^ ]*warden run -- sh -c .*sleep $mark")
		[[ -n $pid ]] || fatal "SIG$sig: warden's pid not found (test bug?)"
		grep -q 'Ctrl-C' "$out" || fail "SIG$sig: the user is not told how a freeze ends: $(excerpt "$(cat "$out")")"
		kill "-$sig" "$pid"
		ms=$(sig_ms_until_gone "$pid")
		((ms < 1000)) || fail "SIG$sig to a frozen session on a terminal: warden still ran ${ms} ms later"
		wait "$tpid"
		tr -d '\r' <"$out" | matches -x 'rc=137' || fail "SIG$sig on a terminal: not exit 137: $(excerpt "$(cat "$out")")"
		pgrep -f -- "^sleep $mark\$" >/dev/null && { fail "SIG$sig: the frozen sandbox outlived warden"; sig_kill "^sleep $mark\$"; }
		sig_frozen_killed "$sig" "$(latest_log)"
	done
}

# Ctrl-C typed on warden's terminal while the sandbox is frozen (the keys
# are relayed raw: nothing inside could read it): the user's SIGINT, the
# session ends within a second.
test_signal_frozen_ctrl_c() {
	have script || skip 'script(1) not installed'
	local out="$T_TMP/fzc.out" mark="994.$RANDOM$RANDOM" keys="$T_TMP/keys" ms pid W tpid kfd
	W=$(printf '%q' "$WARDEN")
	mkfifo "$keys"
	timeout -k 5 "$WARDEN_TIMEOUT" script -qec "$W run -- sh -c '$(sig_frozen_cmd "$mark")'; echo rc=\$?" /dev/null \
		<"$keys" >"$out" 2>&1 &
	tpid=$!
	bg_track "$tpid"
	exec {kfd}>"$keys"
	sig_wait_frozen 10 || fatal "not frozen on a terminal: $(excerpt "$(cat "$out")")"
	pid=$(warden_pid "^[^ ]*warden run -- sh -c .*sleep $mark")
	[[ -n $pid ]] || fatal "warden's pid not found (test bug?)"
	printf 'x\003' >&"$kfd"
	ms=$(sig_ms_until_gone "$pid")
	((ms < 1000)) || fail "Ctrl-C on the terminal of a frozen session: warden still ran ${ms} ms later"
	exec {kfd}>&-
	wait "$tpid"
	tr -d '\r' <"$out" | matches -x 'rc=137' || fail "Ctrl-C: not exit 137: $(excerpt "$(cat "$out")")"
	pgrep -f -- "^sleep $mark\$" >/dev/null && { fail "Ctrl-C: the frozen sandbox outlived warden"; sig_kill "^sleep $mark\$"; }
	grep -F '"event":"signal","signal":"SIGINT","to":"sandbox","sender_pid":0,' "$(latest_log)" >/dev/null ||
		fail 'Ctrl-C: no SIGINT from the terminal in the log'
	sig_frozen_killed INT "$(latest_log)"
}

# A second stopping signal, the first one's grace period running (30 s):
# the kill at once, whichever the two signals, and the log says why.
test_signal_second_kills() {
	local first second out bg ms f
	printf 'signal grace 30\n' >"$T_TMP/g30.profile"
	for first in TERM HUP; do
		second=INT
		[[ $first == HUP ]] && second=TERM
		out="$T_TMP/second-$first.out" bg="995.$RANDOM$RANDOM"
		warden_bg "$out" --profile "$T_TMP/g30.profile" -- sh -c "trap '' TERM INT HUP; sleep $bg & echo ready; wait"
		wait_for "$out" '^ready' 10 || fatal "command did not start ($(excerpt "$(cat "$out" "$out.err")"))"
		kill "-$first" "$WPID"
		sleep 0.5
		kill -0 "$WPID" 2>/dev/null || fail "SIG$first alone ended a sandbox that ignores it (grace 30)"
		kill "-$second" "$WPID"
		ms=$(sig_ms_until_gone "$WPID")
		((ms < 1000)) || fail "SIG$first then SIG$second: warden still ran ${ms} ms after the second"
		sig_wait_warden 5 || fail 'warden still running after the second signal'
		[[ $RC == 137 ]] || fail "SIG$first then SIG$second: exit status $RC, expected 137"
		pgrep -f -- "^sleep $bg\$" >/dev/null && { fail "the sandbox outlived the second signal"; sig_kill "^sleep $bg\$"; }
		f=$(latest_log)
		grep -q "\"event\":\"kill\",\"signal\":\"SIGKILL\",\"to\":\"sandbox\",\"reason\":\"a second stopping signal (SIG$second)\",\"grace_s\":30," "$f" ||
			fail "no kill event for the second signal: $(excerpt "$(grep -F '"kill"' "$f")")"
	done
}

# A stopping signal while init is still building the sandbox ends the
# session at once, whatever holds the start (here strace's delay on init's
# pivot_root, standing for a mount on a server that does not answer):
# init killed, the command never run, exit 130 as for an interrupted
# command, and the log says signal then kill, seconds before the held call
# would have returned. (The run itself ends only with strace's delay:
# strace holds the killed init's exit until then.)
test_signal_before_ready() {
	have strace || skip 'strace not installed'
	strace -qq -o /dev/null true 2>/dev/null || skip 'strace cannot trace here'
	local out="$T_TMP/early.out" f t_start t_kill ms i wpid=
	rm -f "$HOME/.local/state/warden/"*.jsonl
	timeout -k 5 60 env --default-signal=INT,QUIT,TERM,HUP strace -qq -f -o /dev/null \
		-e trace=pivot_root -e inject=pivot_root:delay_enter=6000000:when=1 \
		"$WARDEN" run -- sh -c 'echo RAN' </dev/null >"$out" 2>"$out.err" &
	TPID=$!
	bg_track "$TPID"
	for ((i = 0; i < 100; i++)); do
		f=$(latest_log)
		[[ -n $f ]] && grep -q '"event":"session.start"' "$f" && break
		sleep 0.05
	done
	[[ -n $f ]] || fatal "no session log ($(excerpt "$(cat "$out.err")"))"
	wpid=$(warden_pid "^$WARDEN run -- sh -c echo RAN\$")
	[[ -n $wpid ]] || fatal 'warden is not running under strace (test bug?)'
	sleep 0.5
	kill -INT "$wpid"
	wait "$TPID"
	RC=$?
	cat "$out" "$out.err"
	grep -v '"exec"' "$f"
	[[ $RC == 130 ]] || fail "SIGINT before the sandbox was ready: exit status $RC, expected 130"
	! grep -q RAN "$out" || fail 'the command ran after a SIGINT that came before the sandbox was ready'
	grep -q 'SIGINT while the sandbox was being built' "$out.err" ||
		fail "warden did not say why it stopped: $(excerpt "$(cat "$out.err")")"
	t_start=$(grep -o '"ts":"[^"]*","session":"[^"]*","seq":1,"event":"session.start"' "$f" | cut -d'"' -f4)
	t_kill=$(grep -o '"ts":"[^"]*","session":"[^"]*","seq":[0-9]*,"event":"kill","signal":"SIGKILL","to":"sandbox","reason":"SIGINT before the sandbox was ready"' "$f" | cut -d'"' -f4)
	grep -q '"event":"signal","signal":"SIGINT","to":"sandbox"' "$f" || fail 'no signal event for the SIGINT'
	[[ -n $t_kill ]] || { fail 'no kill event (SIGINT before the sandbox was ready) in the log'; return; }
	ms=$((($(date -d "$t_kill" +%s%N) - $(date -d "$t_start" +%s%N)) / 1000000))
	printf -- '--- init killed %s ms after session.start (its pivot_root held for 6000)\n' "$ms"
	((ms < 3000)) || fail "init killed ${ms} ms after the session started: the held start was waited for"
}

# sig_end_start [gone]: warden run in the background under the fault
# injector (tests/helpers/wfault.c), its end held 3 s where sandbox init is
# killed as the run ends; the command's last act is a file `ended` in the workspace. With
# `gone`, warden's stderr is a pipe whose reader has exited. TPID and WPID
# (warden's own pid) set once the command has ended.
sig_end_start() {
	local i
	wfault_lib
	rm -f ended "$HOME/.local/state/warden/"*.jsonl
	: >"$T_TMP/end.err"
	if [[ ${1:-} == gone ]]; then
		timeout -k 5 60 env --default-signal=INT,QUIT,TERM,HUP,PIPE WFAULT_END_HOLD=3000 \
			LD_PRELOAD="$WFAULT" "$WARDEN" run -- sh -c 'echo x >ended' \
			</dev/null >"$T_TMP/end.out" 2> >(:) &
	else
		timeout -k 5 60 env --default-signal=INT,QUIT,TERM,HUP WFAULT_END_HOLD=3000 \
			LD_PRELOAD="$WFAULT" "$WARDEN" run -- sh -c 'echo x >ended' \
			</dev/null >"$T_TMP/end.out" 2>"$T_TMP/end.err" &
	fi
	TPID=$!
	bg_track "$TPID"
	for ((i = 0; i < 300; i++)); do
		[[ -e ended ]] && break
		sleep 0.05
	done
	[[ -e ended ]] || fatal "the command never ran ($(excerpt "$(cat "$T_TMP/end.err")"))"
	WPID=$(warden_pid "^$WARDEN run -- sh -c echo x >ended\$")
	[[ -n $WPID ]] || fatal 'warden is not running (test bug?)'
}

# sig_end_wait: RC, warden's exit status once it has ended; its stderr shown.
sig_end_wait() {
	wait "$TPID"
	RC=$?
	cat "$T_TMP/end.err"
}

# A signal that would end warden while it finishes the session (Ctrl-C
# just after the command ended, during the last checkpoint of a large
# workspace): the end goes on, the placeholders removed and session.end
# written with the command's status, and warden then ends by the signal,
# as an interrupted command does (a shell's loop stops on it). It once
# ended warden at once: no session.end, every placeholder left in the
# workspace.
test_signal_during_end() {
	local f
	sig_end_start
	sleep 0.5
	kill -INT "$WPID"
	sig_end_wait
	f=$(latest_log)
	[[ $RC == 130 ]] || fail "exit status $RC, expected 130 (ended by the SIGINT once the end was over)"
	grep -q "SIGINT: the sandbox is gone; finishing the session's record first" "$T_TMP/end.err" ||
		fail "the user was not told why warden goes on: $(excerpt "$(cat "$T_TMP/end.err")")"
	if [[ -z $f ]] || ! grep -q '"event":"session.end","exit":0' "$f"; then
		fail "no session.end with the command's status 0: $(excerpt "$(grep -v '"exec"' "$f")")"
	fi
	[[ ! -e .envrc && ! -e .vscode ]] || fail 'the placeholders were left in the workspace'
}

# A second one ends warden at once, without the rest of the record: the
# way out of an end that takes too long. Here a SIGINT and then a SIGTERM
# come while the end is held: the first is noted, the second ends warden
# by SIGTERM before session.end. The placeholders left in the workspace go
# with the next session there.
test_signal_during_end_twice() {
	local f
	sig_end_start
	sleep 0.3
	kill -INT "$WPID"
	sleep 0.2
	kill -TERM "$WPID"
	sig_end_wait
	f=$(latest_log)
	[[ $RC == 143 ]] || fail "exit status $RC, expected 143 (ended by the second signal, SIGTERM)"
	[[ $(grep -c 'finishing the session' "$T_TMP/end.err") == 1 ]] ||
		fail "not told once: $(excerpt "$(cat "$T_TMP/end.err")")"
	[[ -n $f ]] || fail 'no session log'
	! grep -q '"event":"session.end"' "$f" || fail 'session.end written: the second signal waited for the end'
	# what it left is the next session's to remove
	[[ -e .envrc ]] || fail 'no placeholder left: the second signal waited for the end'
	wrun -- true
	assert_rc 0 'the next session'
	[[ ! -e .envrc && ! -e .vscode ]] || fail 'the next session left the placeholders in the workspace'
}

# The same with warden's stderr gone (`warden run ... 2>&1 | head -1`, then
# Ctrl-C): saying why it goes on must not end it by SIGPIPE before its
# record, as it did: SIGPIPE is ignored during the end.
test_signal_during_end_stderr_gone() {
	local f
	sig_end_start gone
	sleep 0.5
	kill -INT "$WPID"
	sig_end_wait
	f=$(latest_log)
	[[ $RC == 130 ]] || fail "exit status $RC, expected 130 (ended by the SIGINT once the end was over)"
	if [[ -z $f ]] || ! grep -q '"event":"session.end","exit":0' "$f"; then
		fail "no session.end with the command's status 0: $(excerpt "$(grep -v '"exec"' "$f")")"
	fi
	[[ ! -e .envrc && ! -e .vscode ]] || fail 'the placeholders were left in the workspace'
}
