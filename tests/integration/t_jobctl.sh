# t_jobctl.sh - Ctrl-Z: with the user's keys relayed (stdin the terminal,
# warden in its foreground) the command's Ctrl-Z suspends the whole
# session as one job of the user's shell: the rest of the sandbox stopped
# first (nothing of it runs while warden, stopped, watches nothing), the
# terminal given back, `fg` continuing it all; `bg` leaves it suspended;
# `warden status` says so; `warden kill` ends it; each step an `action`
# event. Each test types at an interactive bash on a terminal of its own
# (ttyjob, lib.sh). The command, count.sh, leaves a counter running in a
# session of its own (which Ctrl-Z does not reach: only the suspension
# holds it) and waits. The counter renames each count into place: stopped
# between a truncation and its write, `count` would read empty while
# suspended (a CI run saw one count of three).
# shellcheck shell=bash

jc_setup() {
	W=$(printf '%q' "$WARDEN")
	cat >count.sh <<'EOF'
setsid sh -c 'i=0; while :; do i=$((i+1)); echo $i > count.new; mv -f count.new count; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
echo ready
exec sleep 1000
EOF
}

# The counts the steps' `run=cat count` printed, one a line.
jc_counts() { printf '%s\n' "$OUT" | grep -E '^[0-9]+$'; }

jc_actions() { grep '"event":"action"' "$(latest_log)" | grep -F "\"action\":\"$1\""; }

# Ctrl-Z: the shell has its prompt back, the job stopped; the counter in
# the sandbox's background stands still while suspended, `warden status`
# says suspended; `fg` continues it, Ctrl-C then ends the command.
test_jobctl_ctrl_z_suspends_whole_sandbox() {
	local W c
	jc_setup
	ttyjob "PS1='PROMPT> ' bash --norc -i" 'expect=PROMPT> ' "send=$W run -- sh count.sh\\r" \
		'expect=ready' 'sleep=0.5' 'send=\x1a' 'expect=Stopped' 'expect=PROMPT> ' \
		"run=cat count; sleep 1; cat count; $W status" 'send=fg\r' 'sleep=1' 'run=cat count' \
		'send=\x03' 'expect=PROMPT> ' 'send=echo rc=$?\r' 'expect=rc=[0-9]+' 'send=exit\r'
	[[ $OUT != *'failed: '* ]] || fail "Ctrl-Z did not give the shell its prompt back: $(excerpt "$OUT")"
	mapfile -t c < <(jc_counts)
	((${#c[@]} == 3)) || fail "not three counts: ${c[*]}"
	[[ ${c[0]} == "${c[1]}" ]] || fail "the sandbox ran on while suspended: ${c[0]} then ${c[1]}"
	((c[2] > c[1])) || fail "fg did not continue the sandbox: ${c[1]} then ${c[2]}"
	assert_out_match ' suspended ' 'warden status while suspended'
	assert_out_has 'rc=130' "warden's status after Ctrl-C"
	jc_actions suspend | matches -F '"by":"terminal","uid":'"$(id -u)"',"reason":"the command stopped (SIGTSTP)"' ||
		fail "no suspend event: $(grep '"event":"action"' "$(latest_log)")"
	jc_actions continue | matches '"by":"terminal"' || fail 'no continue event'
}

# `bg`: warden runs on in the background, but the sandbox stays stopped
# (its keys cannot reach it there); a later `fg` continues it.
test_jobctl_bg_stays_suspended() {
	local W c
	jc_setup
	ttyjob "PS1='PROMPT> ' bash --norc -i" 'expect=PROMPT> ' "send=$W run -- sh count.sh\\r" \
		'expect=ready' 'sleep=0.5' 'send=\x1a' 'expect=Stopped' 'expect=PROMPT> ' \
		'send=bg\r' 'expect=PROMPT> ' 'sleep=0.5' 'run=cat count; sleep 1; cat count' \
		'send=jobs\r' 'expect=Running' 'send=fg\r' 'sleep=1' 'run=cat count' \
		'send=\x03' 'expect=PROMPT> ' 'send=exit\r'
	[[ $OUT != *'failed: '* ]] || fail "bg or fg failed: $(excerpt "$OUT")"
	mapfile -t c < <(jc_counts)
	((${#c[@]} == 3)) || fail "not three counts: ${c[*]}"
	[[ ${c[0]} == "${c[1]}" ]] || fail "the sandbox ran after bg: ${c[0]} then ${c[1]}"
	((c[2] > c[1])) || fail "fg after bg did not continue the sandbox: ${c[1]} then ${c[2]}"
}

# `warden kill` from elsewhere ends a suspended session (its warden,
# stopped, is continued to serve it): the job ends 137, the kill on the
# record.
test_jobctl_kill_while_suspended() {
	local W id
	jc_setup
	ttyjob "PS1='PROMPT> ' bash --norc -i" 'expect=PROMPT> ' "send=$W run -- sh count.sh\\r" \
		'expect=ready' 'sleep=0.5' 'send=\x1a' 'expect=Stopped' 'expect=PROMPT> ' \
		"run=$W kill \$($W status --json | sed -n 's/.*\"session\":\"\\([^\"]*\\)\".*/\\1/p')" \
		'sleep=1' 'send=\r' 'expect=Exit 137' 'send=exit\r'
	[[ $OUT != *'failed: '* ]] || fail "the suspended session was not killed: $(excerpt "$OUT")"
	assert_out_match ': killed' 'warden kill'
	jc_actions kill | matches '"by":"control"' || fail 'no kill event by control'
}

# The same once the stopped warden's socket has a full backlog (it accepts
# nothing while stopped: a `watch warden status` fills it in seconds):
# `warden status` still lists it suspended and `warden kill` still ends
# it, by the marker warden leaves beside its socket before it stops.
test_jobctl_suspended_full_backlog() {
	have python3 || skip 'python3 not installed'
	local W
	jc_setup
	backlog_filler fill.py
	cat >fullkill.sh <<EOF
id=\$($W status --json | sed -n 's/.*"session":"\([^"]*\)".*/\1/p')
python3 fill.py "\$XDG_RUNTIME_DIR/warden/control/\$id.sock" full.flag 30 &
for i in \$(seq 100); do [ -e full.flag ] && break; sleep 0.05; done
[ -e full.flag ] && echo backlog full
$W status
$W kill "\$id"
kill \$! 2>/dev/null
EOF
	ttyjob "PS1='PROMPT> ' bash --norc -i" 'expect=PROMPT> ' "send=$W run -- sh count.sh\\r" \
		'expect=ready' 'sleep=0.5' 'send=\x1a' 'expect=Stopped' 'expect=PROMPT> ' \
		'run=bash fullkill.sh' 'sleep=1' 'send=\r' 'expect=Exit 137' 'send=exit\r'
	[[ $OUT != *'failed: '* ]] || fail "the suspended session was not killed: $(excerpt "$OUT")"
	assert_out_has 'backlog full' "the control socket's backlog filled"
	assert_out_match ' suspended ' 'warden status beside the full backlog'
	assert_out_match ': killed' 'warden kill beside the full backlog'
	jc_actions kill | matches '"by":"control"' || fail 'no kill event by control'
}

# A command that stops itself (kill -TSTP $$) suspends the session as
# Ctrl-Z does; fg and it goes on where it stopped.
test_jobctl_command_stops_itself() {
	local W
	W=$(printf '%q' "$WARDEN")
	ttyjob "PS1='PROMPT> ' bash --norc -i" 'expect=PROMPT> ' \
		"send=$W run -- sh -c 'echo ready; kill -TSTP \$\$; echo went on'\\r" \
		'expect=Stopped' 'expect=PROMPT> ' 'send=fg\r' 'expect=went on' 'expect=PROMPT> ' \
		'send=echo rc=$?\r' 'expect=rc=[0-9]+' 'send=exit\r'
	[[ $OUT != *'failed: '* ]] || fail "no stop and go on: $(excerpt "$OUT")"
	assert_out_has 'rc=0' "warden's status"
}

# Without a terminal there is no job control: a stop the command sends
# itself is dropped by the kernel (its process group is orphaned) and the
# session goes on, never waiting for a `fg` nobody can type.
test_jobctl_no_terminal_no_stop() {
	wsh 'kill -TSTP $$; echo went on'
	assert_rc 0
	assert_out_has 'went on'
}
