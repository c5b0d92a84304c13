# t_audit.sh - the session audit log: JSON Lines outside the sandbox, with
# session.start and session.end (exit status), hash-chained, never visible
# inside.
# shellcheck shell=bash

# check_log FILE EXIT: validate one session log.
check_log() {
	local f=$1 want_exit=$2 v first last n prev line want_prev session
	v=$("$WPROBE" jsonl <"$f")
	[[ $v == VALID* ]] || { fail "$f: not JSON Lines ($v)"; return; }
	first=$(head -n 1 "$f")
	last=$(tail -n 1 "$f")
	grep -qE '"event" *: *"session\.start"' <<<"$first" || fail "first event is not session.start: $(excerpt "$first")"
	grep -qE '"event" *: *"session\.end"' <<<"$last" || fail "last event is not session.end: $(excerpt "$last")"
	grep -qE "\"exit\" *: *$want_exit *[,}]" <<<"$last" || fail "session.end does not record exit $want_exit: $(excerpt "$last")"
	session=$(basename "$f" .jsonl)
	n=0 prev=''
	while IFS= read -r line; do
		n=$((n + 1))
		for k in v ts session seq event prev; do
			grep -qE "\"$k\" *:" <<<"$line" || fail "line $n lacks \"$k\""
		done
		grep -qE "\"session\" *: *\"$session\"" <<<"$line" || fail "line $n: session is not the file name $session"
		grep -qE "\"seq\" *: *[0-9]+" <<<"$line" || fail "line $n: seq is not a number"
		if [[ -n $prev ]]; then
			want_prev=$(printf '%s' "$prev" | sha256sum | cut -d' ' -f1)
			local with_nl
			with_nl=$(printf '%s\n' "$prev" | sha256sum | cut -d' ' -f1)
			grep -qE "\"prev\" *: *\"($want_prev|$with_nl)\"" <<<"$line" ||
				fail "line $n: prev is not the SHA-256 of line $((n - 1))"
		fi
		prev=$line
	done <"$f"
	# seq strictly increasing
	local seqs
	seqs=$(grep -oE '"seq" *: *[0-9]+' "$f" | grep -oE '[0-9]+$' | tr '\n' ' ')
	awk -v s="$seqs" 'BEGIN { n = split(s, a, " "); for (i = 2; i <= n; i++) if (a[i] + 0 <= a[i-1] + 0) exit 1 }' ||
		fail "seq not increasing: $seqs"
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
