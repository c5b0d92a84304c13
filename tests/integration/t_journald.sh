# t_journald.sh - `warden run --log journald`: each event of the session a
# structured entry of the systemd journal, read back with `journalctl -o
# json`; refused when no journal listens; journald going away mid-session
# costs entries, counted in session.end and said once. A real
# systemd-journald runs for each test in a mount namespace of the test's
# own (tmpfs on /run/systemd and /run/log, Storage=volatile), so that a
# journal of the host, if any, is left alone: root only.
# shellcheck shell=bash

JD_BIN=/lib/systemd/systemd-journald
JD_SOCKET=/run/systemd/journal/socket


# jd_needs: skip unless a journald of the test's own can run here.
jd_needs() {
	is_root || skip 'needs root to run a journald of its own (a mount namespace)'
	[[ -x $JD_BIN ]] || skip "no $JD_BIN"
	have journalctl || skip 'no journalctl'
	have unshare || skip 'no unshare'
	have jq || skip 'no jq'
	[[ -d /run/systemd && -d /run/log ]] || skip 'no /run/systemd and /run/log to put a private journal over'
}

# jd_run SNIPPET: run the bash SNIPPET in a mount namespace of its own where
# a systemd-journald listens on $JD_SOCKET (its pid in JD_PID); then its
# entries of warden in $T_TMP/journal.json (journalctl -o json --all, one
# per line) and what it said in $T_TMP/journald.out. RC, OUT and ERR of a
# wrun in SNIPPET are set here after.
jd_run() {
	export -f wrun fail excerpt bg_track
	export JD_BIN JD_SOCKET WARDEN_TIMEOUT JD_SNIPPET=$1
	: >"$T_TMP/journal.json"
	# shellcheck disable=SC2016
	unshare -m --propagation private bash -c '
		set -u
		mount -t tmpfs -o mode=0755 tmpfs /run/systemd || exit 90
		mount -t tmpfs -o mode=0755 tmpfs /run/log || exit 90
		if [[ -d /var/log/journal ]]; then mount -t tmpfs tmpfs /var/log/journal || exit 90; fi
		# the host'"'"'s settings would not do (persistent storage, forwarding)
		printf "[Journal]\nStorage=volatile\nForwardToSyslog=no\nForwardToKMsg=no\nForwardToConsole=no\nForwardToWall=no\n" >"$T_TMP/journald.conf"
		if [[ -f /etc/systemd/journald.conf ]]; then mount --bind "$T_TMP/journald.conf" /etc/systemd/journald.conf || exit 90; fi
		for d in /etc/systemd/journald.conf.d /usr/lib/systemd/journald.conf.d; do
			if [[ -d $d ]]; then mount -t tmpfs tmpfs "$d" || exit 90; fi
		done
		mkdir -p /run/systemd/journal /run/log/journal
		env -u NOTIFY_SOCKET -u WATCHDOG_PID -u WATCHDOG_USEC "$JD_BIN" >"$T_TMP/journald.out" 2>&1 &
		JD_PID=$!
		bg_track "$JD_PID"
		trap "kill \$JD_PID 2>/dev/null" EXIT
		for ((i = 0; i < 100; i++)); do [[ -S $JD_SOCKET ]] && break; sleep 0.05; done
		[[ -S $JD_SOCKET ]] || exit 91
		eval "$JD_SNIPPET"
		printf "RC=%q OUT=%q ERR=%q\n" "${RC-}" "${OUT-}" "${ERR-}" >"$T_TMP/.jd_vars"
		timeout 10 journalctl --sync 2>/dev/null
		timeout 10 journalctl --directory=/run/log/journal -o json --all SYSLOG_IDENTIFIER=warden \
			>"$T_TMP/journal.json"
	'
	local rc=$?
	((rc == 90)) && fatal 'could not mount the private journal directories'
	((rc == 91)) && fatal "systemd-journald did not start: $(excerpt "$(cat "$T_TMP/journald.out" 2>/dev/null)")"
	# shellcheck disable=SC1091
	[[ -s $T_TMP/.jd_vars ]] && source "$T_TMP/.jd_vars"
	return 0
}

# jd_entries SESSION: the journal's entries of SESSION (JSON, one a line).
jd_entries() { jq -c --arg s "$1" 'select(.WARDEN_SESSION == $s)' "$T_TMP/journal.json"; }

test_journald_events() {
	jd_needs
	# a program whose name holds a newline and a byte that is not UTF-8
	cp /bin/true "$WS/"$'odd\nname\xff'
	local profile
	profile=$(no_detect_actions)
	# shellcheck disable=SC2016
	jd_run 'wrun --log journald --profile "'"$profile"'" -- sh -c "./wprobe connect 192.0.2.1 80; ./odd*; true"
		"$WARDEN" doctor >"$T_TMP/doctor.out" 2>&1'
	assert_rc 0 'the session'
	grep -qE '^OK +journal socket +/run/systemd/journal/socket' "$T_TMP/doctor.out" ||
		fail "doctor does not see the journal: $(excerpt "$(grep journal "$T_TMP/doctor.out")")"
	local f sid
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	sid=$(basename "$f" .jsonl)
	local entries n lines
	entries=$(jd_entries "$sid")
	n=$(grep -c . <<<"$entries")
	lines=$(wc -l <"$f")
	[[ $n == "$lines" ]] || fail "$lines lines in the log, $n entries in the journal"

	# each entry is its line: seq, kind, prev, the line's own hash
	local line got want
	want=$(paste -d' ' <(jq -r '[.seq, .event, .prev] | map(tostring) | join(" ")' "$f") \
		<(while IFS= read -r line; do printf '%s' "$line" | sha256sum | cut -d' ' -f1; done <"$f") |
		sed 's/$/ warden/')
	got=$(jq -r '[.WARDEN_SEQ, .WARDEN_EVENT, .WARDEN_PREV, .WARDEN_LINE_SHA256, .SYSLOG_IDENTIFIER] |
		join(" ")' <<<"$entries" | sort -n)
	[[ $got == "$want" ]] || fail "the entries (seq event prev line-hash identifier) are not the log's lines: got $(excerpt "$got"), expected $(excerpt "$want")"

	local kinds kind
	kinds=" $(jq -r .WARDEN_EVENT <<<"$entries" | sort -u | tr '\n' ' ')"
	for kind in session.start exec net session.end; do
		[[ $kinds == *" $kind "* ]] || fail "no $kind entry (kinds:$kinds)"
	done
	# jd_of FILTER: FILTER's fields of the entries it selects, joined by '|'
	jd_of() { jq -r "select($1) | [$2] | map(tostring) | join(\"|\")" <<<"$entries"; }
	got=$(jd_of '.WARDEN_EVENT == "session.start"' '.WARDEN_WORKSPACE, .PRIORITY, .WARDEN_KERNEL_SECCOMP_NOTIFY')
	# (kernel.seccomp_notify, nested, is WARDEN_KERNEL_SECCOMP_NOTIFY)
	[[ $got == "$WS|6|true" ]] || fail "session.start: workspace|priority|kernel.seccomp_notify is '$got', expected '$WS|6|true'"

	# the refusal: its fields as fields of the journal, a warning
	got=$(jd_of '.WARDEN_EVENT == "net" and .WARDEN_ADDRESS == "192.0.2.1"' \
		'.WARDEN_PORT, .WARDEN_DECISION, .WARDEN_METHOD, .WARDEN_REASON, .PRIORITY,
		 (has("WARDEN_PID") and has("WARDEN_HOST_PID")), .MESSAGE')
	want='80|deny|connect|direct connection: the sandbox has no route out|4|true|net method=connect address=192.0.2.1 port=80 decision=deny reason="direct connection: the sandbox has no route out"'
	[[ $got == "$want" ]] || fail "the refused connect's entry: '$(excerpt "$got")', expected '$want'"

	# the odd name's bytes, newline and all (journalctl gives bytes that
	# are not UTF-8 as an array of numbers)
	want=$(printf './odd\nname\xff' | od -An -tu1 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
	got=$(jq -r 'select(.WARDEN_EVENT == "exec" and (.WARDEN_PATH | type) == "array") |
		.WARDEN_PATH | map(tostring) | join(" ")' <<<"$entries")
	[[ $got == "$want" ]] || fail "the odd name's bytes in the journal: [$got], expected [$want]"
	grep -q '"event":"exec".*"path":"./odd\\nname\\\\xFF".*"escaped":\["path"' "$f" ||
		fail 'the log does not keep the odd name escaped'

	# session.end says what was sent
	got=$(jd_of '.WARDEN_EVENT == "session.end"' '.WARDEN_JOURNALD_SENT, .WARDEN_JOURNALD_DROPPED')
	[[ $got == "$((lines - 1))|0" ]] || fail "session.end: journald sent|dropped is '$got', expected '$((lines - 1))|0'"
	tail -n 1 "$f" | grep "\"journald\":{\"sent\":$((lines - 1)),\"dropped\":0}" >/dev/null ||
		fail "the log's session.end lacks journald's counts: $(excerpt "$(tail -n 1 "$f")")"
	[[ $ERR != *journald* ]] || fail "warden said something of journald: $(excerpt "$ERR")"
}

test_journald_gone() {
	# journald stops mid-session: the session goes on, the entries after
	# are lost, counted in session.end, said once on stderr
	jd_needs
	# shellcheck disable=SC2016
	jd_run '
		(wrun --log journald -- sh -c "while [ ! -e go ]; do sleep 0.05; done; /bin/true; /bin/true"
		 printf "RC=%q OUT=%q ERR=%q\n" "$RC" "$OUT" "$ERR" >"$T_TMP/.jd_bg_vars") &
		bgp=$!
		for ((i = 0; i < 200; i++)); do
			grep -qs "\"event\":\"exec\"" "$HOME"/.local/state/warden/*.jsonl && break
			sleep 0.05
		done
		timeout 10 journalctl --sync 2>/dev/null
		kill -TERM "$JD_PID"; wait "$JD_PID"
		touch "$WS/go"
		wait "$bgp"
		timeout 10 journalctl --directory=/run/log/journal -o json --all SYSLOG_IDENTIFIER=warden \
			>"$T_TMP/journal.json"
		exit 0'
	# shellcheck disable=SC1091
	source "$T_TMP/.jd_bg_vars" 2>/dev/null || fatal 'the session did not end'
	assert_rc 0 'the session, journald gone'
	local f last sent dropped lines
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	lines=$(wc -l <"$f")
	last=$(tail -n 1 "$f")
	sent=$(jq -r .journald.sent <<<"$last")
	dropped=$(jq -r .journald.dropped <<<"$last")
	{ [[ $dropped =~ ^[0-9]+$ ]] && ((dropped >= 2)); } || fail "session.end: journald.dropped is '$dropped', expected at least 2 (/bin/true twice)"
	{ [[ $sent =~ ^[0-9]+$ ]] && ((sent >= 1 && sent + dropped == lines - 1)); } ||
		fail "session.end: sent $sent + dropped $dropped is not the $((lines - 1)) events before it"
	local notes
	notes=$(grep -c 'journald' <<<"$ERR")
	[[ $notes == 1 ]] || fail "said $notes times on stderr, expected once: $(excerpt "$ERR")"
	assert_err_match '^warden: journald: the entry of event [0-9]+ \(exec\) was not sent to /run/systemd/journal/socket: .*session\.end'
	jq -s -e 'any(.[]; .WARDEN_EVENT == "session.start")' "$T_TMP/journal.json" >/dev/null ||
		fail 'session.start, sent before journald stopped, is not in the journal'
}

test_journald_refused() {
	# what --log takes
	wrun --log journald,nowhere -- true
	assert_rc 125 '--log journald,nowhere'
	assert_err_match "--log 'journald,nowhere': takes syslog, journald or syslog,journald"
	wrun --log syslog, -- true
	assert_rc 125 '--log syslog,'
	# no journal listening: refused before the session starts (no log)
	# shellcheck disable=SC2016
	local snippet='wrun --log journald -- true; R1=$RC E1=$ERR; wrun --log syslog,journald -- true; R2=$RC E2=$ERR
		printf "R1=%q E1=%q R2=%q E2=%q\n" "$R1" "$E1" "$R2" "$E2" >"$T_TMP/.jd_refused"'
	if [[ -e $JD_SOCKET ]]; then
		{ is_root && have unshare; } || skip "a journal listens at $JD_SOCKET, and only root may hide it"
		export -f wrun fail excerpt
		export WARDEN_TIMEOUT
		# shellcheck disable=SC2016
		JD_SNIPPET=$snippet unshare -m --propagation private bash -c \
			'mount -t tmpfs tmpfs /run/systemd && eval "$JD_SNIPPET"' || fatal 'could not hide the journal'
	else
		eval "$snippet"
	fi
	local R1 E1 R2 E2
	# shellcheck disable=SC1091
	source "$T_TMP/.jd_refused" || fatal 'the runs did not happen'
	[[ $R1 == 125 ]] || fail "--log journald without a journal: exit $R1, expected 125"
	[[ $E1 == "warden: --log journald: no journal socket at $JD_SOCKET (is systemd-journald running?): No such file or directory" ]] ||
		fail "--log journald without a journal says: $(excerpt "$E1")"
	[[ $R2 == 125 && $E2 == *'no journal socket'* ]] || fail "--log syslog,journald without a journal: exit $R2: $(excerpt "$E2")"
	[[ -z $(latest_log) ]] || fail "a session log was made: $(latest_log)"
}

test_journald_doctor_without() {
	# doctor says when no journal listens (a WARN: not a wall of the sandbox)
	[[ ! -e $JD_SOCKET ]] || skip "a journal listens at $JD_SOCKET"
	wardenc doctor
	grep -qE "^WARN +journal socket +no journal socket at $JD_SOCKET .*--log journald. is refused here" <<<"$OUT" ||
		fail "doctor's journal line: $(excerpt "$(grep journal <<<"$OUT")")"
}
