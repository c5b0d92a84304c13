# t_llaudit.sh - Landlock's denials on the record: as root, with the kernel's
# audit on, each Landlock denial of the session's processes is a `file`,
# `net` or `signal` event with "by":"landlock", the path as the process saw
# it and its pid (inside and on the host); a denial of a process that is not
# in the session is not in its log. warden never turns audit on itself: these
# tests do, for their own run, and put back what was there (wprobe
# audit-enabled). Unprivileged, session.start says why they are off.
# shellcheck shell=bash


# ll_audit_on: root, audit on for this test (restored when it ends), and
# warden's own verdict "on"; else skip saying why.
ll_audit_on() {
	[[ $(id -u) == 0 ]] || skip 'Landlock audit records are read as root only'
	local st
	st=$("$WPROBE" audit-enabled) || skip "the audit netlink socket: $st"
	[[ $st == *' failure=2 '* ]] && skip "audit's failure mode is panic here: warden leaves the logs off"
	if [[ $st == *'enabled=0 '* ]]; then
		"$WPROBE" audit-enabled 1 >/dev/null || skip 'audit cannot be enabled here'
		# shellcheck disable=SC2064
		trap "'$WPROBE' audit-enabled 0 >/dev/null" EXIT
		note 'audit turned on for this test (off again at its end)'
	fi
	wardenc doctor
	local line
	line=$(grep 'Landlock denials on the record' <<<"$OUT")
	[[ $line == *' on: '* ]] || skip "warden says: $line"
}

# A write outside the workspace that a mount allows and Landlock refuses
# (under /proc: writes elsewhere outside are refused by read-only mounts
# first, EROFS, which Landlock never sees).
test_llaudit_write_denied() {
	ll_audit_on
	wsh 'echo "inside=$$"; echo x > /proc/self/comm; echo "rc=$?"'
	assert_rc 0 'the script inside'
	assert_out_has 'rc=' 'the write ran'
	local pid f
	pid=$(sed -n 's/^inside=//p' <<<"$OUT")
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	grep -q '"landlock_audit":{"on":true' "$f" || fail 'session.start does not say Landlock audit is on'
	local ev
	ev=$(grep '"event":"file".*"by":"landlock"' "$f" | grep "\"path\":\"/proc/$pid/comm\"")
	[[ -n $ev ]] || fatal "no Landlock denial event for /proc/$pid/comm: $(excerpt "$(grep landlock "$f")")"
	[[ $ev == *"\"pid\":$pid,"* ]] || fail "the event's pid is not $pid (inside): $(excerpt "$ev")"
	[[ $ev =~ \"host_pid\":[1-9][0-9]*, ]] || fail "no host pid: $(excerpt "$ev")"
	[[ $ev == *'"fs.write_file"'* ]] || fail "fs.write_file not among the access refused: $(excerpt "$ev")"
	[[ $ev == *'"decision":"deny"'* ]] || fail "not a denial: $(excerpt "$ev")"
	[[ $ev == *'"syscall":"open'* ]] || fail "no syscall name: $(excerpt "$ev")"
	# as other file events: the reason, and the word that sums up the access
	[[ $ev == *'"reason":"landlock"'* && $ev == *'"write"]'* ]] ||
		fail "no reason landlock and access write: $(excerpt "$ev")"
	# and the supervisor's own record of the attempt, predicted
	grep '"event":"file"' "$f" | grep -v '"by":"landlock"' | grep -F '"path":"/proc/self/comm"' |
		grep -qF '"reason":"landlock"' || fail "the supervisor did not predict Landlock's refusal"
	check_log "$f" 0
}

# After an exec too (LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON): a program the
# shell ran, two execs down from init.
test_llaudit_after_exec() {
	ll_audit_on
	wsh './wprobe write /proc/self/attr/current; sh -c "./wprobe write /proc/self/comm"; true'
	local f
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	grep '"event":"file".*"by":"landlock"' "$f" | grep '"path":"/proc/[0-9]*/comm"' >/dev/null ||
		fail "no Landlock denial of a program run by the shell: $(excerpt "$(grep landlock "$f")")"
	grep '"event":"file".*"by":"landlock"' "$f" | grep '"comm":"wprobe"' >/dev/null ||
		fail 'the denial does not name the program (comm wprobe)'
}

# A signal out of a Landlock domain the agent stacked (signal scope, ABI 6):
# a `signal` event naming both processes.
test_llaudit_signal_denied() {
	ll_audit_on
	wsh 'echo "parent=$$"; ./wprobe landlock-signal; true'
	local f child
	f=$(latest_log)
	child=$(sed -n 's/^pid=//p' <<<"$OUT")
	[[ $OUT == *'DENIED EPERM'* ]] || skip "the stacked domain did not refuse the signal: $(excerpt "$OUT")"
	local ev
	ev=$(grep '"event":"signal".*"by":"landlock"' "$f")
	[[ -n $ev ]] || fatal "no Landlock signal denial event: $(excerpt "$(grep landlock "$f")")"
	# (a forked child that never executed: its pid inside is known only while it lives)
	[[ $ev == *"\"pid\":$child,"* || $ev == *"\"pid\":-1,"* ]] || fail "the sender is not $child (nor -1, gone): $(excerpt "$ev")"
	[[ $ev == *'"signal":"SIGCONT"'* ]] || fail "the signal is not named: $(excerpt "$ev")"
	[[ $ev == *'"scope.signal"'* ]] || fail "scope.signal not among the access refused: $(excerpt "$ev")"
	[[ $ev =~ \"to_pid\":[1-9] ]] || fail "no target pid inside: $(excerpt "$ev")"
}

# A Landlock denial of a process outside the session, while it runs, is not
# in its log.
test_llaudit_host_not_attributed() {
	ll_audit_on
	(
		wsh 'i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
		     echo x > /proc/self/comm; true'
	) >"$T_TMP/wrun.txt" 2>&1 &
	local bg=$!
	bg_track "$bg"
	sleep 1
	local host
	host=$("$WPROBE" landlock-write "/etc/.warden-llaudit-$$" 2>&1)
	: >"$WS/go"
	wait "$bg"
	local hpid f
	hpid=$(sed -n 's/^pid=//p' <<<"$host")
	[[ $host == *'DENIED'* ]] || fail "the host probe was not refused: $(excerpt "$host")"
	rm -f "/etc/.warden-llaudit-$$"
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	grep -q '"by":"landlock"' "$f" || fail 'the session logged no Landlock denial of its own'
	grep -q "\"host_pid\":$hpid," "$f" && fail "the host process $hpid's denial is in the session's log"
	grep '"by":"landlock"' "$f" | grep '"path":"/etc' >/dev/null && fail 'a denial on the host /etc is in the log'
	true
}

# Unprivileged: off, and session.start and doctor say why.
test_llaudit_unprivileged_off() {
	[[ $(id -u) != 0 ]] || skip 'as root the tests above cover it'
	wsh 'echo x > /proc/self/comm; true'
	local f
	f=$(latest_log)
	grep -q '"landlock_audit":{"on":false,"why":"off: warden is not running as root' "$f" ||
		fail "session.start does not say why Landlock audit is off: $(excerpt "$(grep -o '"landlock_audit":{[^}]*}' "$f")")"
	grep -q '"by":"landlock"' "$f" && fail 'a Landlock event without the reader'
	wardenc doctor
	assert_out_match 'Landlock denials on the record +off: warden is not running as root' 'doctor'
}

# A flood of denials: the events are bounded (a burst, then a rate) and one
# `landlock.suppressed` event counts the rest; the session still ends.
test_llaudit_flood_bounded() {
	ll_audit_on
	wsh 'i=0; while [ $i -lt 3000 ]; do echo x 2>/dev/null > /proc/self/comm; i=$((i+1)); done; echo done'
	assert_rc 0 'the script inside'
	assert_out_has done 'the loop ended'
	local f n
	f=$(latest_log)
	n=$(grep -c '"by":"landlock"' "$f")
	((n > 0)) || fail 'no Landlock denial event at all'
	((n <= 1000)) || fail "$n Landlock events for one flood: not bounded"
	grep -q '"event":"landlock.suppressed","suppressed":[1-9]' "$f" ||
		fail "no landlock.suppressed event counting the rest: $(excerpt "$(grep suppressed "$f")")"
	assert_err_match 'refused by Landlock \(' 'the summary on stderr'
	# (check_log reads each line with a dozen processes: too slow for 200)
	local v
	v=$("$WPROBE" jsonl <"$f")
	[[ $v == VALID* ]] || fail "not JSON Lines: $v"
}
