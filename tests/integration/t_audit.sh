# t_audit.sh - the session audit log: JSON Lines outside the sandbox, with
# session.start and session.end (exit status), hash-chained, never visible
# inside.
# shellcheck shell=bash

# check_log FILE EXIT: validate one session log.
AUDIT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check_log() {
	local f=$1 want_exit=$2 v first last
	v=$("$WPROBE" jsonl <"$f")
	[[ $v == VALID* ]] || { fail "$f: not JSON Lines ($v)"; return; }
	first=$(head -n 1 "$f")
	last=$(tail -n 1 "$f")
	grep -qE '"event" *: *"session\.start"' <<<"$first" || fail "first event is not session.start: $(excerpt "$first")"
	grep -qE '"event" *: *"session\.end"' <<<"$last" || fail "last event is not session.end: $(excerpt "$last")"
	grep -qE "\"exit\" *: *$want_exit *[,}]" <<<"$last" || fail "session.end does not record exit $want_exit: $(excerpt "$last")"
	# each line's fields and the hash chain, in one process (logcheck.py)
	local faults fault
	faults=$(python3 "$AUDIT_DIR/logcheck.py" "$f") || { fail "$f: logcheck.py could not read it"; return; }
	while IFS= read -r fault; do
		if [[ -n $fault ]]; then fail "$fault"; fi
	done <<<"$faults"
}

test_audit_log() {
	local dir="$HOME/.local/state/warden" files
	wrun -- cat /etc/shadow
	assert_rc_nonzero 'cat /etc/shadow'
	local denied_rc=$RC
	[[ -d $dir ]] || fatal "no log directory $dir"
	mapfile -t files < <(ls "$dir"/*.jsonl 2>/dev/null)
	((${#files[@]} == 1)) || fatal "expected 1 session log in $dir, found ${#files[@]}"
	cat "${files[0]}"
	check_log "${files[0]}" "$denied_rc"
	[[ $(stat -c %a "$dir") == 700 ]] || fail "log directory mode $(stat -c %a "$dir"), expected 700"
	[[ $(stat -c %a "${files[0]}") == 600 ]] || fail "log file mode $(stat -c %a "${files[0]}"), expected 600"
	# a second session gets its own file; its exit status is recorded
	wrun -- sh -c 'exit 0'
	mapfile -t files < <(ls -t "$dir"/*.jsonl 2>/dev/null)
	((${#files[@]} == 2)) || fatal "expected 2 session logs, found ${#files[@]}"
	check_log "${files[0]}" 0
}

test_audit_xdg_state_home() {
	export XDG_STATE_HOME="$T_TMP/state"
	wrun -- sh -c 'exit 4'
	assert_rc 4
	local files
	mapfile -t files < <(ls "$XDG_STATE_HOME"/warden/*.jsonl 2>/dev/null)
	((${#files[@]} == 1)) || fatal "expected 1 log under \$XDG_STATE_HOME/warden, found ${#files[@]}"
	check_log "${files[0]}" 4
	[[ ! -d $HOME/.local/state/warden ]] || fail 'logged under ~/.local/state despite XDG_STATE_HOME'
}

test_audit_log_hidden() {
	local dir="$HOME/.local/state/warden"
	wrun -- true # make sure the directory exists
	[[ -d $dir ]] || fatal "no log directory $dir"
	wbatch "dir|ls $dir" "state|ls $HOME/.local/state" 'agent|ls /home/agent/.local/state/warden'
	bexpect dir denied
	bexpect state denied
	bexpect agent denied
	wsh 'cat /proc/self/mountinfo'
	assert_out_lacks 'state/warden' 'log directory in the mount table'
	local n
	n=$(ls "$dir" | wc -l)
	wsh "ls $dir/*.jsonl; cat $dir/*.jsonl; echo tamper > $dir/x.jsonl; true"
	assert_out_lacks 'session.start' 'log content'
	assert_host_absent "$dir/x.jsonl"
	[[ $(ls "$dir" | wc -l) == $((n + 1)) ]] || fail "expected exactly one new session log"
}
