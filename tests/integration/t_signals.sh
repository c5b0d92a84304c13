# t_signals.sh - SIGINT, SIGTERM and SIGHUP sent to warden reach every
# process in the sandbox, not only the command; what outlives the grace
# period (`signal grace SECONDS`) is killed; each step is in the audit log.
# shellcheck shell=bash

# sig_log: the newest session log of this test's HOME.
sig_log() { ls -t "$HOME/.local/state/warden/"*.jsonl 2>/dev/null | head -n 1; }

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
	f=$(sig_log)
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
	f=$(sig_log)
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
	f=$(sig_log)
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
	grep -q '"event":"signal","signal":"SIGUSR1","to":"command",' "$(sig_log)" ||
		fail 'SIGUSR1: no signal event to the command in the log'
}
