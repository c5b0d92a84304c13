# t_control.sh - the kill switch and the session's status, from the
# outside: every session has its control socket (no `ask` rule needed);
# `warden status` lists a running session (command, workspace, frozen);
# `warden freeze` stops every process of the sandbox (a counter the loop
# inside writes stops; the processes are in state T, or the session's
# cgroup is frozen; by signals, loops that fork and exit at once too),
# `warden resume` lets it go on, `warden kill` ends it at once (warden
# exits 137), frozen or not; each is an `action` event.
# A stopping signal to warden kills a frozen sandbox at once. An unknown or ambiguous session is an error (exit 2); another
# uid cannot use the socket (root only).
# shellcheck shell=bash


# ct_start [warden run args]: a session in the background whose loop
# appends a counter to $WS/counter, a line each time (a freeze between the
# truncation and the write of a rewrite would leave it empty; a marker in
# its command line to find its processes by); waits for the counter and the
# session's socket; sets CT_SESSION.
ct_start() {
	CT_MARK=$(unique)
	rm -f "$WS/counter"
	warden_bg "$T_TMP/ct.out" "$@" -- sh -c ": $CT_MARK; i=0; while :; do i=\$((i+1)); echo \$i >>counter; sleep 0.05; done"
	local i
	CT_SESSION=
	for ((i = 0; i < 200; i++)); do
		[[ -s $WS/counter ]] && CT_SESSION=$(ct_session_of "$WS") && [[ -n $CT_SESSION ]] && return 0
		sleep 0.05
	done
	fatal "the session did not start or is not in warden status: $(excerpt "$(cat "$T_TMP/ct.out"* 2>/dev/null)")"
}

# ct_session_of WORKSPACE: the id of the running session there (status --json).
ct_session_of() {
	"$WARDEN" status --json 2>/dev/null | grep -F "\"workspace\":\"$1\"" | head -n 1 |
		grep -oE '"session":"[^"]*"' | cut -d'"' -f4
}

# ct_any_session: the id of a running session (the test's only one), once
# warden status --json lists it (10 s at most; 1 when none).
ct_any_session() {
	local i sid
	for ((i = 0; i < 200; i++)); do
		sid=$("$WARDEN" status --json 2>/dev/null | grep -o '"session":"[^"]*"' | head -n 1 | cut -d'"' -f4)
		[[ -n $sid ]] && { echo "$sid"; return 0; }
		sleep 0.05
	done
	return 1
}

ct_counter() { tail -n 1 "$WS/counter" 2>/dev/null; }

# ct_actions ACTION: the action events of ACTION in the last session's log.
ct_actions() { grep '"event":"action"' "$(latest_log)" | grep -F "\"action\":\"$1\""; }

# The sandbox's processes (the loop's shell and its sleep), host pids: those
# with the marker in another pid namespace than the host's (timeout and
# warden carry it in their command lines too; an unprivileged test cannot
# read the namespace of the non-dumpable supervisor, nor of init).
ct_pids() {
	local pid own ns
	own=$(readlink /proc/self/ns/pid)
	for pid in $(pgrep -f "$CT_MARK"); do
		ns=$(readlink "/proc/$pid/ns/pid" 2>/dev/null)
		[[ -n $ns && $ns != "$own" ]] && echo "$pid"
	done
}

# The mount point of the cgroup v2 hierarchy ("" none): /sys/fs/cgroup, or
# /sys/fs/cgroup/unified on a hybrid host.
ct_cg2() { awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo; }

# ct_frozen_check: every process of the loop stopped, as the freeze's `how` says.
ct_frozen_check() {
	local how pid st cg
	how=$(ct_actions freeze | tail -n 1 | grep -oE '"how":"[a-z]+"' | cut -d'"' -f4)
	note "frozen by $how"
	for pid in $(ct_pids); do
		if [[ $how == cgroup ]]; then
			cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
			grep -qx 'frozen 1' "$(ct_cg2)$cg/cgroup.events" 2>/dev/null ||
				fail "process $pid: its cgroup $cg is not frozen"
		else
			# SIGSTOP takes hold when the process leaves the kernel: one
			# in an uninterruptible wait (D) at the freeze stops as it
			# returns, so it is given 2 s; running or sleeping after that
			# is a failure. A shell that vforked its `sleep` waits in D
			# (wchan kernel_clone) for a child that was stopped before
			# its exec: it cannot run until the child does, so it is
			# held as well as the child.
			local i
			for ((i = 0; i < 20; i++)); do
				st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
				[[ $st != D ]] && break
				[[ $(cat "/proc/$pid/wchan" 2>/dev/null) == kernel_clone ]] && st=T && break
				sleep 0.1
			done
			[[ -z $st || $st == T ]] || fail "process $pid is in state $st, not T (stopped)"
		fi
	done
	[[ -n $(ct_pids) ]] || fail 'no process of the sandbox found to check'
}

# The whole run: status, freeze, resume, kill. $1: a profile or empty.
ct_cycle() {
	local args=() c1 c2 t0 t1 i
	[[ -n ${1:-} ]] && args=(--profile "$1")
	ct_start "${args[@]}"
	wardenc status
	assert_rc 0 'warden status'
	assert_out_has "$CT_SESSION" 'status lists the session'
	assert_out_has "$WS" 'status shows the workspace'
	assert_out_has "sh -c : $CT_MARK" 'status shows the command'
	assert_out_match "$CT_SESSION +[0-9a-z]+ +running " 'status says running'
	wardenc status --json
	assert_out_match "\"command\":\\[\"sh\",\"-c\",\": $CT_MARK" 'status --json: the command'
	assert_out_has "\"pid\":$WPID," 'status --json: the supervisor'"'"'s pid'

	# freeze, by a prefix of the id
	wardenc freeze "${CT_SESSION:0:20}" --reason 'a test'
	assert_rc 0 'warden freeze'
	assert_out_has "$CT_SESSION: frozen"
	sleep 0.3
	c1=$(ct_counter)
	sleep 1
	c2=$(ct_counter)
	[[ -n $c1 && $c1 == "$c2" ]] || fail "frozen, the counter went on: $c1 -> $c2"
	ct_frozen_check
	wardenc status
	assert_out_match "$CT_SESSION +[0-9a-z]+ +frozen " 'status says frozen'
	wardenc freeze "$CT_SESSION"
	assert_rc 1 'a second freeze'
	assert_err_match 'frozen already'

	wardenc resume "$CT_SESSION"
	assert_rc 0 'warden resume'
	for ((i = 0; i < 40; i++)); do
		[[ $(ct_counter) -gt $c2 ]] 2>/dev/null && break
		sleep 0.05
	done
	[[ $(ct_counter) -gt $c2 ]] 2>/dev/null || fail "resumed, the counter stays at $(ct_counter)"

	# kill, frozen: it must end all the same
	wardenc freeze "$CT_SESSION"
	assert_rc 0 'the second freeze'
	t0=$(date +%s%N)
	wardenc kill "$CT_SESSION" --reason 'enough'
	assert_rc 0 'warden kill'
	wait "$TPID"
	RC=$?
	t1=$(date +%s%N)
	((RC == 137)) || fail "killed, warden exited $RC (not 137)"
	(((t1 - t0) / 1000000 < 3000)) || fail "warden took $(((t1 - t0) / 1000000)) ms to end after the kill"
	[[ -z $(ct_pids) ]] || fail "processes of the sandbox outlived the kill: $(ct_pids)"
	[[ ! -e $(control_dir)/$CT_SESSION.sock ]] || fail 'the socket outlived the session'

	[[ $(ct_actions freeze | grep -c '"by":"control"') == 2 ]] || fail "not two freeze events: $(ct_actions freeze)"
	ct_actions freeze | head -n 1 | grep "\"uid\":$(id -u),\"reason\":\"a test\"" >/dev/null ||
		fail "the freeze event lacks the uid or the reason: $(ct_actions freeze | head -n 1)"
	[[ $(ct_actions resume | wc -l) == 1 ]] || fail 'no resume event'
	ct_actions kill | grep '"reason":"enough"' >/dev/null || fail "no kill event with its reason: $(ct_actions kill)"
	# the session's own terminal told of each, as of the freeze
	grep -F "the sandbox goes on: resumed by \`warden resume\` (uid $(id -u))" "$T_TMP/ct.out.err" >/dev/null ||
		fail "the session's stderr says nothing of the resume: $(excerpt "$(<"$T_TMP/ct.out.err")")"
	grep -F "the sandbox was killed by \`warden kill\` (uid $(id -u)): enough" "$T_TMP/ct.out.err" >/dev/null ||
		fail "the session's stderr says nothing of the kill: $(excerpt "$(<"$T_TMP/ct.out.err")")"
}

# Without a limit: as root, the session's own cgroup v2 (made even on a
# hybrid host, whose v2 hierarchy has no controllers); unprivileged, in the
# cgroup v2 systemd delegates to the user (user@UID.service) when warden
# runs below it (doctor says "session cgroup"), else by signals.
test_control_freeze_resume_kill() {
	local delegated=''
	if ! is_root; then
		wardenc doctor
		delegated=$(grep -E '^OK +session cgroup ' <<<"$OUT")
		note "doctor: ${delegated:-no session cgroup}"
	fi
	ct_cycle
	if [[ -n $delegated ]] || { is_root && [[ -n $(ct_cg2) ]]; }; then
		ct_actions freeze | head -n 1 | grep '"how":"cgroup"' >/dev/null ||
			fail "with a session cgroup v2 at $(ct_cg2), the freeze was not by it: $(ct_actions freeze | head -n 1)"
		ct_actions kill | grep '"how":"cgroup"' >/dev/null || fail "the kill was not by the cgroup: $(ct_actions kill)"
	elif ! is_root; then
		ct_actions freeze | grep '"how":"signals","processes":[1-9]\|"how":"cgroup"' >/dev/null ||
			fail "the freeze is neither by signals nor by a cgroup: $(ct_actions freeze)"
	fi
}

# With a limit, the session's cgroup v2 when there is a usable one (else,
# or cgroup v1, by signals).
test_control_freeze_resume_kill_cgroup() {
	printf 'limit memory 1G\n' >"$T_TMP/p"
	ct_cycle "$T_TMP/p"
	if grep -q '"memory":{[^}]*"by":"cgroup","detail":"[^"]*cgroup v2' "$(latest_log)"; then
		ct_actions freeze | head -n 1 | grep '"how":"cgroup"' >/dev/null ||
			fail "a session cgroup v2, but the freeze was not by it: $(ct_actions freeze | head -n 1)"
		ct_actions kill | grep '"how":"cgroup"' >/dev/null || fail "the kill was not by the cgroup: $(ct_actions kill)"
	else
		note 'no session cgroup v2 here: by signals'
	fi
}

# ct_hop: the last count a pid-hopping loop wrote ("" none yet).
ct_hop() { cat "$WS/hop" 2>/dev/null; }

# A freeze by signals stops loops that fork and have the parent exit at
# once ("pid hopping": no process of one lives longer than its one fork,
# so a scan of /proc that signals each process it finds is a step behind,
# and 64 of them ran on after such a freeze): `wprobe hop 64`, whose count
# (one of the loops', every 200 forks) stays as it is for 2 s (from half
# a second after `warden freeze` returns), changes again after `warden
# resume`, and stops with the kill. As root, warden runs where no cgroup
# is mounted (a mount namespace of its own, a tmpfs over /sys/fs/cgroup)
# so that the freeze is by signals there too; unprivileged it is by
# signals unless systemd delegates a cgroup v2 (then the test skips).
test_control_freeze_pid_hopping() {
	local c1 c2 i
	WARDEN=$(ct_nocgroup) warden_bg "$T_TMP/hop.out" --profile "$(no_detect_actions)" -- ./wprobe hop 64
	wait_for "$WS/hop" '^[0-9]+ [0-9]+$' 20 || fatal "the loops wrote no count: $(excerpt "$(cat "$T_TMP/hop.out"*)")"
	CT_SESSION=$(ct_session_of "$WS")
	[[ -n $CT_SESSION ]] || fatal 'the session is not in warden status'

	wardenc freeze "$CT_SESSION" --reason 'pid hopping'
	assert_rc 0 'warden freeze'
	if ! ct_actions freeze | matches '"how":"signals"'; then
		wardenc kill "$CT_SESSION"
		skip "the freeze was not by signals (a session cgroup): $(ct_actions freeze)"
	fi
	# a rename under way at the freeze ends before its process stops
	# (SIGSTOP takes hold as it leaves the kernel): given 0.5 s
	sleep 0.5
	c1=$(ct_hop)
	sleep 2
	c2=$(ct_hop)
	[[ -n $c1 && $c1 == "$c2" ]] || fail "frozen by signals, the pid-hopping loops went on: '$c1' -> '$c2' in 2 s"
	wardenc status
	assert_out_match "$CT_SESSION +[0-9a-z]+ +frozen " 'status says frozen'

	wardenc resume "$CT_SESSION"
	assert_rc 0 'warden resume'
	for ((i = 0; i < 100; i++)); do
		[[ $(ct_hop) != "$c2" ]] && break
		sleep 0.05
	done
	[[ $(ct_hop) != "$c2" ]] || fail "resumed, the count stays at '$c2'"
	ct_actions resume | matches '"how":"signals"' || fail "no resume by signals: $(ct_actions resume)"

	wardenc kill "$CT_SESSION"
	assert_rc 0 'warden kill'
	wait "$TPID"
	RC=$?
	((RC == 137)) || fail "killed, warden exited $RC (not 137)"
	c1=$(ct_hop)
	sleep 0.5
	[[ $(ct_hop) == "$c1" ]] || fail "killed, the loops went on: '$c1' -> '$(ct_hop)'"
}

# ct_nocgroup: where warden runs with no session cgroup as root (a mount
# namespace of its own, a tmpfs over /sys/fs/cgroup), so that its freeze
# is by signals: a wrapper's path; warden itself unprivileged.
ct_nocgroup() {
	if ! is_root; then
		printf '%s' "$WARDEN"
		return
	fi
	have unshare || skip 'no unshare(1) to hide the cgroups from warden'
	local w=$T_TMP/nocgroup-warden
	printf '#!/bin/sh\nexec unshare -m --propagation private sh -c '"'"'mount -t tmpfs none /sys/fs/cgroup && exec "$0" "$@"'"'"' %q "$@"\n' \
		"$WARDEN" >"$w"
	chmod +x "$w"
	printf '%s' "$w"
}

# ct_sigcont_frozen ARGS...: `wprobe sigcont ARGS` in a session where the
# freeze is by signals (ct_nocgroup), frozen once it counts (CT_SESSION,
# TPID set); skips when the freeze was by a cgroup after all.
ct_sigcont_frozen() {
	WARDEN=$(ct_nocgroup) warden_bg "$T_TMP/sc.out" --profile "$(no_detect_actions)" -- ./wprobe sigcont "$@"
	wait_for "$WS/counter" '^[0-9]+$' 20 || fatal "no count: $(excerpt "$(cat "$T_TMP/sc.out"*)")"
	CT_SESSION=$(ct_session_of "$WS")
	[[ -n $CT_SESSION ]] || fatal 'the session is not in warden status'
	wardenc freeze "$CT_SESSION" --reason 'sigcont'
	assert_rc 0 'warden freeze'
	if ! ct_actions freeze | matches '"how":"signals"'; then
		wardenc kill "$CT_SESSION"
		skip "the freeze was not by signals (a session cgroup): $(ct_actions freeze)"
	fi
}

# A freeze by signals holds against processes that send SIGCONT to every
# process they can, without end (`wprobe sigcont 8`): one inside a system
# call when the SIGSTOP came would continue the others; init sends it
# again until all have stopped. The counter stays as it is for 2 s.
test_control_freeze_sigcont_loop() {
	ct_sigcont_holds 'SIGCONT loops' 8
}

# The same against 4 processes of 16 threads each sending SIGCONT (a
# process stops only once each of its threads has, and a thread inside
# its kill(-1, SIGCONT) continues the others), which takes init more
# rounds than processes of one thread do. The counter stays as it is for
# 2 s.
test_control_freeze_sigcont_threads() {
	ct_sigcont_holds 'SIGCONT threads' 4 threads 16
}

# Frozen by signals against `wprobe sigcont ARGS...` (what: they, for the
# failure): the counter stands still for 2 s.
ct_sigcont_holds() {
	local what=$1 c1 c2
	shift
	ct_sigcont_frozen "$@"
	sleep 0.5
	c1=$(ct_counter)
	sleep 2
	c2=$(ct_counter)
	[[ -n $c1 && $c1 == "$c2" ]] || fail "frozen by signals, $what kept the sandbox running: '$c1' -> '$c2' in 2 s"
	wardenc kill "$CT_SESSION"
	wait "$TPID"
}

# A process that has the kernel continue it while frozen (a POSIX timer
# whose signal is SIGCONT, `wprobe sigcont 0 timer`) is found running at
# init's next look, and the sandbox is killed at once: warden exits 137, a
# kill by "escape" on the record. (A SIGSTOP that comes while the timer's
# signal is still queued drops it, and the kernel then arms the timer no
# more: the process stays stopped, the freeze holds, and that is as good:
# the count stands still.)
test_control_freeze_escape_killed() {
	ct_escape timer
}

# The same with the count kept by a second thread, the process's first
# thread ended: /proc shows the process a zombie, its threads are looked
# at one by one.
test_control_freeze_escape_thread_killed() {
	ct_escape thread
}

ct_escape() {
	local i c1 c2
	ct_sigcont_frozen 0 "$1"
	sleep 0.5
	c1=$(ct_counter)
	for ((i = 0; i < 40; i++)); do
		[[ -z $(ps -o stat= -p "$TPID") || $(ps -o stat= -p "$TPID") == Z* ]] && break
		sleep 0.05
	done
	c2=$(ct_counter)
	if [[ -n $(ps -o stat= -p "$TPID") && $(ps -o stat= -p "$TPID") != Z* ]]; then
		[[ -n $c1 && $c1 == "$c2" ]] || fail "frozen, a process continued by its timer ran on: '$c1' -> '$c2'"
		note 'the timer was dropped with its signal: the freeze held'
		wardenc kill "$CT_SESSION"
	fi
	wait "$TPID"
	RC=$?
	ct_actions kill | matches '"by":"escape"\|"by":"control"' || fail "no kill on the record: $(ct_actions kill)"
	if ct_actions kill | matches '"by":"escape"'; then
		((RC == 137)) || fail "killed by escape, warden exited $RC (not 137)"
		matches -F 'ran while it was held by signals' "$T_TMP/sc.out.err" || fail 'the kill is not said'
	fi
}

# A stopping signal to warden while frozen (`warden freeze`): nothing
# inside can obey it, and nobody waits on a session the user asked to stop:
# the kill at once (an action by the signal), not after the grace period.
test_control_frozen_signal_kills() {
	printf 'signal grace 30\n' >"$T_TMP/p"
	ct_start --profile "$T_TMP/p"
	wardenc freeze "$CT_SESSION"
	assert_rc 0 'warden freeze'
	kill -TERM "$WPID"
	local i
	for ((i = 0; i < 20; i++)); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$WPID" 2>/dev/null && fail 'a frozen sandbox outlived SIGTERM to warden by a second'
	wait "$TPID"
	RC=$?
	((RC == 137)) || fail "killed, warden exited $RC (not 137)"
	ct_actions kill | grep -F '"by":"signal"' | matches -F '"reason":"SIGTERM while frozen"' ||
		fail "no kill by the signal: $(excerpt "$(ct_actions kill)")"
	grep -q '"event":"kill"' "$(latest_log)" && fail 'the grace period ran although frozen'
	return 0
}

test_control_unknown_session() {
	wardenc kill no-such-session
	assert_rc 2 'an unknown session'
	assert_err_match 'no running session no-such-session'
	ct_start
	local first=$CT_SESSION tpid1=$TPID ws2
	ws2=$(mktemp -d "$T_TMP/ws2.XXXX")
	chmod 755 "$ws2"
	(cd "$ws2" && exec timeout -k 5 "$WARDEN_TIMEOUT" env --default-signal=INT,QUIT,TERM,HUP \
		"$WARDEN" run -- sh -c 'sleep 60' </dev/null >"$T_TMP/ws2.out" 2>&1) &
	bg_track $!
	local i second=
	for ((i = 0; i < 200; i++)); do
		[[ -n $second ]] && break
		second=$(ct_session_of "$ws2")
		sleep 0.05
	done
	[[ -n $second ]] || fatal "the second session is not in warden status: $(excerpt "$(<"$T_TMP/ws2.out")")"
	# a prefix both ids share
	local p=
	for ((i = 1; i <= ${#first}; i++)); do
		[[ ${first:0:i} == "${second:0:i}" ]] || break
		p=${first:0:i}
	done
	[[ -n $p ]] || p=2 # (ids start with the year)
	wardenc freeze "$p"
	assert_rc 2 'an ambiguous prefix'
	assert_err_match 'several running sessions'
	wardenc status
	assert_out_match "$first +[0-9a-z]+ +running " 'the ambiguous freeze froze nothing'
	wardenc kill "$second"
	assert_rc 0 'the whole id'
	wardenc kill "$first"
	assert_rc 0 'the other'
	wait "$tpid1"
	wardenc kill "$first"
	assert_rc 2 'an ended session'
}

# A client of another uid cannot freeze or kill, even with the directory
# opened up: warden's client does not look in another's directory, and the
# socket's peer check refuses a client that connects all the same, and says
# so in an alert.
test_control_other_uid() {
	is_root || skip 'needs root to connect as another user'
	local user
	for user in wardenci nobody; do id "$user" >/dev/null 2>&1 && break; done
	ct_start
	local dir
	dir=$(control_dir)
	[[ $(stat -c %a "$dir") == 700 ]] || fail "the control directory is not 0700: $(stat -c %a "$dir")"
	[[ $(stat -c %a "$dir/..") == 700 ]] || fail "its parent is not 0700: $(stat -c %a "$dir/..")"
	[[ $(stat -c %a "$dir/$CT_SESSION.sock") == 600 ]] || fail 'the socket is not 0600'
	chmod 755 "$XDG_RUNTIME_DIR" "$dir/.." "$dir"
	chmod 666 "$dir"/*.sock
	runuser -u "$user" -- env HOME="$HOME" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$WARDEN" kill "$CT_SESSION" \
		>"$T_TMP/other" 2>&1 && fail "another uid killed the session: $(<"$T_TMP/other")"
	control_as "$user" "$dir/$CT_SESSION.sock" '{"op":"kill"}' >>"$T_TMP/other" 2>&1
	control_as "$user" "$dir/$CT_SESSION.sock" '{"op":"freeze"}' >>"$T_TMP/other" 2>&1
	grep -q '"ok": *true' "$T_TMP/other" && fail "another uid was obeyed: $(<"$T_TMP/other")"
	chmod 700 "$dir"
	local c1
	c1=$(ct_counter)
	sleep 0.5
	[[ $(ct_counter) -gt $c1 ]] 2>/dev/null || fail 'the session does not run on after the other uid'"'"'s tries'
	grep -q '"rule":"control.refused"' "$(latest_log)" || fail 'the refused client is not on the record'
	grep -q '"event":"action"' "$(latest_log)" && fail "an action on another uid's word"
	wardenc kill "$CT_SESSION"
	assert_rc 0 'warden kill'
	wait "$TPID"
}

# `warden kill` (freeze, resume) without a session: exit 2 and the usage of
# the command asked for on its first line, not another's.
test_control_action_usage() {
	local op err
	for op in kill freeze resume; do
		err=$("$WARDEN" "$op" 2>&1 >/dev/null)
		local rc=$?
		((rc == 2)) || fail "warden $op with no session exited $rc, not 2"
		[[ $(head -n 1 <<<"$err") == "usage: warden $op SESSION"* ]] ||
			fail "warden $op: the usage starts with '$(head -n 1 <<<"$err")'"
		grep -c '^ *\(usage: \)\{0,1\}warden \(freeze\|resume\|kill\) ' <<<"$err" | grep -x 3 >/dev/null ||
			fail "warden $op: the usage does not list the three commands: $err"
	done
}

# ct_gone_state DIR: a session (sleep, quiet) whose XDG_STATE_HOME is a
# directory of the test's, removed once it runs: `warden status`, from a
# shell with the default state directory, still lists it, and `warden
# kill` ends it (its log gone, the kill's record cannot be written: it ends
# on that, 125, or on the kill, 137). DIR: where its socket must be.
ct_gone_state() {
	local want=$1 state=$T_TMP/state i sid=
	XDG_STATE_HOME=$state warden_bg "$T_TMP/gone.out" -- sleep 600
	for ((i = 0; i < 200; i++)); do
		sid=$(ct_session_of "$WS")
		[[ -n $sid ]] && break
		sleep 0.05
	done
	[[ -n $sid ]] || fatal "the session is not in warden status: $(excerpt "$(cat "$T_TMP/gone.out"*)")"
	[[ -S $want/$sid.sock ]] || fail "its socket is not in $want: $(ls -la "$want" 2>&1)"
	[[ -e $state/warden/control ]] && fail "a control directory in the state directory: $(ls -la "$state/warden/control")"
	[[ $(stat -c '%a %U' "$want") == "700 $(id -un)" ]] ||
		fail "$want is not 0700 and the user's: $(stat -c '%a %U' "$want")"
	rm -rf "$state"
	wardenc status
	assert_out_match "^$sid +[0-9a-z]+ +running .*sleep 600" 'status lists the session whose state directory was removed'
	wardenc kill "$sid"
	assert_rc 0 'warden kill'
	assert_out_has "$sid: killed"
	wait "$TPID"
	RC=$?
	((RC == 137 || RC == 125)) || fail "killed, warden exited $RC"
	[[ ! -e $want/$sid.sock ]] || fail 'the socket outlived the session'
	wardenc status
	assert_out_lacks "$sid" 'the ended session is not listed'
}

# The control socket is in the runtime directory ($XDG_RUNTIME_DIR/warden/
# control, the test's own): a session whose state directory is removed
# while it runs is listed and killed all the same.
test_control_state_dir_removed() {
	ct_gone_state "$(control_dir)"
}

# Without XDG_RUNTIME_DIR: as root /run/warden/control; unprivileged
# /run/user/UID/warden/control when the login's directory is there, else
# the state directory's control/ (then a session whose state directory is
# removed cannot be reached: only where the socket is, and status, are
# checked).
test_control_runtime_default() {
	unset XDG_RUNTIME_DIR
	local u base='' st
	u=$(id -u)
	if is_root; then
		base=/run
	elif st=$(stat -c '%u %F %a' "/run/user/$u" 2>/dev/null) && [[ $st == "$u directory "?[0145]0 ]]; then
		base=/run/user/$u
	fi
	if [[ -n $base ]]; then
		note "runtime directory: $base/warden/control"
		ct_gone_state "$base/warden/control"
		return 0
	fi
	note "no runtime directory (no XDG_RUNTIME_DIR, no /run/user/$u): the state directory's"
	ct_start
	[[ -S $HOME/.local/state/warden/control/$CT_SESSION.sock ]] ||
		fail "the socket is not in the state directory: $(ls -la "$HOME/.local/state/warden/control" 2>&1)"
	wardenc kill "$CT_SESSION"
	assert_rc 0 'warden kill'
	wait "$TPID"
}

# A runtime directory that is a symbolic link (to a directory of the
# user's, even) is refused, said, and the state directory's used.
test_control_runtime_symlink() {
	mkdir -m 0700 "$T_TMP/elsewhere"
	ln -s "$T_TMP/elsewhere" "$XDG_RUNTIME_DIR/warden"
	ct_start
	grep -q "$XDG_RUNTIME_DIR/warden is a symbolic link; this session's socket is in $HOME/.local/state/warden/control" \
		"$T_TMP/ct.out.err" || fail "the refusal is not said: $(excerpt "$(<"$T_TMP/ct.out.err")")"
	[[ -S $HOME/.local/state/warden/control/$CT_SESSION.sock ]] || fail 'the socket is not in the state directory'
	[[ -z $(ls -A "$T_TMP/elsewhere") ]] || fail "something was made through the link: $(ls -A "$T_TMP/elsewhere")"
	wardenc kill "$CT_SESSION"
	assert_rc 0 'warden kill'
	wait "$TPID"
}

# A session whose workspace is not UTF-8 (a byte string like any path) is
# listed by `warden status`, its workspace escaped as the log escapes it,
# and `warden kill` ends it (status once said "no running sessions").
test_control_status_non_utf8_workspace() {
	local ws=$WS/$'ws-\xff' sid
	mkdir "$ws"
	(cd "$ws" && warden_bg "$T_TMP/nu.out" -q -- sleep 600 && echo "$TPID" >"$T_TMP/nu.pid")
	sid=$(ct_any_session) || fatal "the session is not in warden status --json"
	wardenc status --json
	grep -qF '"workspace":"'"$WS"'/ws-\\xFF"' <<<"$OUT" ||
		fail "status --json does not give the workspace escaped: $(excerpt "$OUT")"
	grep -qF '"escaped":["workspace"]' <<<"$OUT" || fail "status --json does not say it escaped it"
	wardenc status
	assert_out_match "^$sid +[0-9a-z]+ +running .*ws-\\\\xFF +sleep 600" 'status lists it'
	wardenc kill "$sid"
	assert_rc 0 'warden kill'
}

# `warden status` lists a session's workspace and command for the user's
# terminal: an escape sequence in either (a directory cloned with such a
# name, an argument) is shown escaped, never written raw, where it could
# retitle the window, set the clipboard or clear what was listed.
test_control_status_escapes_terminal_controls() {
	local ws=$WS/$'ws-\e]0;owned\a' sid
	mkdir "$ws"
	(cd "$ws" && warden_bg "$T_TMP/esc.out" -q -- sh -c 'sleep 600' $'\e[2J' && echo "$TPID" >"$T_TMP/esc.pid")
	sid=$(ct_any_session) || fatal "the session is not in warden status --json"
	wardenc status
	assert_rc 0 'warden status'
	[[ $OUT != *$'\e'* && $OUT != *$'\a'* ]] ||
		fail "warden status wrote a terminal control raw: $(printf '%q' "$OUT")"
	assert_out_match "^$sid +[0-9a-z]+ +running .*ws-\\\\x1b\\]0;owned\\\\x07 +sh -c sleep 600 \\\\x1b\\[2J" \
		'status lists them escaped'
	wardenc kill "$sid"
	assert_rc 0 'warden kill'
}

# A control socket whose listener accepts nothing and whose backlog is full
# (a suspended session's warden, stopped, after many `warden status`
# runs): `warden status` passes it by at once, where a blocking connect
# waited for ever.
test_control_status_full_backlog() {
	have python3 || skip 'python3 not installed'
	local sock py i
	mkdir -p "$(control_dir)"
	sock="$(control_dir)/20991231T000000Z-0000dead.sock"
	backlog_filler "$T_TMP/fill.py"
	python3 "$T_TMP/fill.py" "$sock" "$sock.full" 60 listen &
	py=$!
	bg_track "$py"
	for ((i = 0; i < 100; i++)); do
		[[ -e $sock.full ]] && break
		sleep 0.05
	done
	[[ -e $sock.full ]] || fatal 'the listener did not fill its backlog'
	WARDEN_TIMEOUT=10 wardenc status
	assert_rc 0 'warden status beside a listener that accepts nothing'
	kill "$py" 2>/dev/null
	rm -f "$sock" "$sock.full"
}
