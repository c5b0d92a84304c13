# t_log.sh - `warden log list|show|verify|prune` over real sessions: the
# table and JSON Lines, filters, session ids and prefixes (never paths), the
# chain verdict on a copy of a log with one line edited or removed, --follow
# on a live session ending by itself at session.end, and what prune keeps.
# shellcheck shell=bash

# log_ids: the session ids of this test's HOME, oldest first (by list).
log_ids() { "$WARDEN" log list --json 2>/dev/null | grep -oE '"session":"[^"]*"' | cut -d'"' -f4; }

# same_events FILTER-OUTPUT FILE JQ-SELECT GREP-ERE: OUT holds exactly the
# lines of FILE that the filter selects (jq when present, grep otherwise).
same_events() {
	local label=$1 f=$2 sel=$3 ere=$4 want got
	if have jq; then
		want=$(jq -c "select($sel)" "$f")
		got=$(printf '%s\n' "$OUT" | jq -c .)
		[[ -z $OUT ]] && got=''
	else
		want=$(grep -E -- "$ere" "$f")
		got=$OUT
	fi
	[[ $got == "$want" ]] || fail "$label: got '$(excerpt "$got")', expected '$(excerpt "$want")'"
}

test_log_list_show() {
	local dir="$HOME/.local/state/warden" ids first second f
	wrun -- sh -c 'echo one; exit 3'
	assert_rc 3
	wrun -- sh -c '/bin/true; exit 0'
	assert_rc 0
	mapfile -t ids < <(log_ids)
	((${#ids[@]} == 2)) || fatal "expected 2 sessions in log list --json, got ${#ids[@]}"
	first=${ids[0]} second=${ids[1]}
	f="$dir/$first.jsonl"

	# list: a header, one row per session, oldest first
	wardenc log list
	assert_rc 0 'log list'
	assert_out_match "^SESSION +START \(UTC\) +EXIT +EVENTS +WORKSPACE +COMMAND$" 'list header'
	assert_out_match "^$first +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} +3 +[0-9]+ +$WS +sh -c \"echo one; exit 3\"$" 'list row 1'
	assert_out_match "^$second .* 0 +[0-9]+ +$WS +sh -c \"/bin/true; exit 0\"$" 'list row 2'
	[[ $(sed -n 2p <<<"$OUT") == "$first "* ]] || fail "list is not sorted by time: $(excerpt "$OUT")"
	# --json: one valid object per session, with the counts of the files
	wardenc log list --json
	assert_rc 0 'log list --json'
	[[ $("$WPROBE" jsonl <<<"$OUT") == 'VALID 2 lines' ]] || fail "list --json is not 2 JSON lines: $(excerpt "$OUT")"
	if have jq; then
		[[ $(jq -r '.exit' <<<"$OUT" | tr '\n' ' ') == '3 0 ' ]] || fail "list --json exits: $(excerpt "$OUT")"
		[[ $(jq -r "select(.session == \"$first\") | .events" <<<"$OUT") == $(wc -l <"$f") ]] ||
			fail "list --json event count is not the line count of $f"
		[[ $(jq -r "select(.session == \"$first\") | .argv | join(\" \")" <<<"$OUT") == 'sh -c echo one; exit 3' ]] ||
			fail "list --json argv: $(excerpt "$OUT")"
	fi

	# show: the latest by default, as a table
	wardenc log show
	assert_rc 0 'log show'
	assert_out_line "session $second"
	assert_out_match '^TIME \(UTC\) +SEQ +EVENT +DETAILS$' 'show header'
	assert_out_match '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\.[0-9]{3} +1  session\.start +argv=\[sh -c "/bin/true; exit 0"\]' 'show session.start row'
	assert_out_match '  session\.end +exit=0 ' 'show session.end row'
	# a unique prefix names a session
	wardenc log show "${first:0:${#first}-2}"
	assert_rc 0 'show by prefix'
	assert_out_line "session $first"
	assert_out_match '  session\.end +exit=3 ' 'show of the first session'
	# --json: the lines exactly as logged
	wardenc log show --json "$first"
	assert_rc 0 'show --json'
	[[ $OUT == "$(<"$f")" ]] || fail "show --json is not the log itself: $(excerpt "$OUT")"
	[[ $("$WPROBE" jsonl <<<"$OUT") == VALID* ]] || fail 'show --json is not JSON Lines'

	# filters
	wardenc log show --json --event session.end "$first"
	assert_rc 0
	[[ $(wc -l <<<"$OUT") == 1 && $OUT == *'"event":"session.end"'* ]] || fail "--event session.end: $(excerpt "$OUT")"
	wardenc log show --json --event session "$first"
	same_events '--event session' "$f" '.event | startswith("session.")' '"event":"session\.'
	wardenc log show --json --event exec --event session.start "$first"
	same_events '--event exec --event session.start' "$f" '.event == "exec" or .event == "session.start"' '"event":"(exec|session\.start)"'
	wardenc log show --json --event nothing.such "$first"
	assert_rc 0
	assert_out_eq '' '--event of no kind'
	wardenc log show --json --since 2099-01-01 "$first"
	assert_out_eq '' '--since the future'
	wardenc log show --json --until '2000-01-01 00:00' "$first"
	assert_out_eq '' '--until the past'
	wardenc log show --json --since 1h --until now "$first"
	[[ $OUT == "$(<"$f")" ]] || fail "--since 1h --until now lost events: $(excerpt "$OUT")"
	wardenc log show --json --decision deny "$first"
	same_events '--decision deny' "$f" '.decision == "deny"' '"decision":"deny"'
	local pid
	pid=$(grep -oE '"pid":[0-9]+' "$f" | head -n 1 | cut -d: -f2)
	if [[ -n $pid ]]; then
		wardenc log show --json --pid "$pid" "$first"
		same_events "--pid $pid" "$f" ".pid == $pid" "\"pid\":$pid[,}]"
		[[ -n $OUT ]] || fail "--pid $pid matched nothing"
	fi
	wardenc log show --pid 99999999 "$first"
	assert_rc 0
	[[ $(wc -l <<<"$OUT") == 2 ]] || fail "--pid of no process printed rows: $(excerpt "$OUT")"

	# usage errors: 2 with a message; bad sessions: 125
	wardenc log show --decision maybe
	assert_rc 2 '--decision maybe'
	wardenc log show --since yesterday
	assert_rc 2 '--since yesterday'
	assert_err_match "cannot read time 'yesterday'"
	wardenc log show --pid x
	assert_rc 2 '--pid x'
	wardenc log frobnicate
	assert_rc 2 'log frobnicate'
	# the error stays on the screen: the synopsis and a pointer, not the
	# whole help after it
	wardenc log show --bogus
	assert_rc 2 'log show --bogus'
	assert_err_match "unrecognized option '--bogus'"
	assert_err_match 'warden log --help says more'
	(($(wc -l <<<"$ERR") <= 12)) || fail "a bad option said in $(wc -l <<<"$ERR") lines: $(excerpt "$ERR")"
	wardenc log
	assert_rc 2 'log alone'
	wardenc log --help
	assert_rc 0 'log --help'
	assert_out_has 'warden log verify'
	wardenc log show nosuchsession
	assert_rc 125 'unknown session'
	assert_err_match '^warden: no session nosuchsession in '
	# both ids start with the date: a shared prefix is ambiguous
	wardenc log show "${first:0:4}"
	assert_rc 125 'ambiguous prefix'
	assert_err_match "ambiguous: it matches ($first, $second|$second, $first)"
	local bad
	for bad in "../warden/$first" "$dir/$first" ".." "." "a/b" ".hidden" "x y"; do
		wardenc log show "$bad"
		assert_rc 125 "show '$bad'"
		assert_err_match 'invalid session id' "show '$bad'"
		wardenc log verify "$bad"
		assert_rc 125 "verify '$bad'"
	done
}

# Logs pruned by the user (doc/audit-log.md, "How long logs are kept"):
# each is a chain of its own, so the others still verify with one removed.
test_log_verify_after_one_removed() {
	local ids
	for _ in 1 2 3; do
		wrun -- true
		assert_rc 0
	done
	mapfile -t ids < <(log_ids | tail -n 3)
	((${#ids[@]} == 3)) || fatal "sessions logged: ${ids[*]}"
	rm "$HOME/.local/state/warden/${ids[1]}.jsonl"
	wardenc log verify --all
	assert_rc 0 'verify --all with a log removed'
	assert_out_match "^${ids[0]}: chain ok" 'the first session'
	assert_out_match "^${ids[2]}: chain ok" 'the third session'
	assert_out_lacks "${ids[1]}" 'the removed session'
}

test_log_verify_tampered() {
	wrun -- sh -c '/bin/true; /bin/true; echo x | cat >/dev/null; exit 0'
	assert_rc 0
	local id src n k state="$T_TMP/state" d
	id=$(log_ids | tail -n 1)
	src="$HOME/.local/state/warden/$id.jsonl"
	[[ -f $src ]] || fatal "no log for session '$id'"
	n=$(wc -l <"$src")
	((n >= 2)) || fatal "a session of $n line(s)"

	wardenc log verify
	assert_rc 0 'verify the latest'
	assert_out_eq "chain ok ($n events)"
	wardenc log verify "$id"
	assert_out_eq "chain ok ($n events)"
	wardenc log verify --all
	assert_rc 0 'verify --all'
	assert_out_eq "$id: chain ok ($n events)"

	# Copies in another state directory: edited, removed, cut, symlinked.
	export XDG_STATE_HOME=$state
	d=$state/warden
	mkdir -p "$d" && chmod 700 "$state" "$d"
	# a middle line if there is one: the chain, not only the field checks,
	# must catch it (the event's first letter, one byte, becomes X)
	k=$((n >= 3 ? 2 : 1))
	cp "$src" "$d/$id.jsonl"
	sed -i -E "${k}s/(\"event\":\")./\1X/" "$d/$id.jsonl"
	cmp -s "$src" "$d/$id.jsonl" && fatal 'the edit changed nothing'
	[[ $(cmp -l "$src" "$d/$id.jsonl" | wc -l) == 1 ]] || fail 'the edit changed more than one byte'
	wardenc log verify "$id"
	assert_rc 1 'verify, line edited'
	assert_out_match "^$id: line $k: changed after it was written" 'verify names the edited line'

	cp "$src" "$d/$id.jsonl"
	sed -i "${k}d" "$d/$id.jsonl"
	wardenc log verify "$id"
	assert_rc 1 'verify, line removed'
	assert_out_match "^$id: line $k: seq is $((k + 1)), expected $k \(a line before it was removed, or lines were moved\)$" 'verify names the removed line'
	# two lines swapped: not said to be a removal only
	cp "$src" "$d/$id.jsonl"
	sed -i -n "${k}{h;n;p;x;p;b};p" "$d/$id.jsonl"
	cmp -s "$src" "$d/$id.jsonl" && fatal 'the swap changed nothing'
	wardenc log verify "$id"
	assert_rc 1 'verify, lines swapped'
	assert_out_match "^$id: line $k: seq is $((k + 1)), expected $k \(.*lines were moved\)$" 'verify of swapped lines'

	# the last line without its newline
	head -c -1 "$src" >"$d/$id.jsonl"
	wardenc log verify "$id"
	assert_rc 1 'verify, cut'
	assert_out_match "^$id: line $n: cut short" 'verify names the cut line'

	# a second, intact copy under another name is another session: its
	# lines name the first one
	cp "$src" "$d/other-1.jsonl"
	wardenc log verify other-1
	assert_rc 1 'verify, renamed'
	assert_out_match "^other-1: line 1: session is $id, not other-1" 'verify of a renamed log'

	# --all: every session, exit 1 if any is broken
	cp "$src" "$d/$id.jsonl"
	wardenc log verify --all
	assert_rc 1 'verify --all with one broken'
	assert_out_line "$id: chain ok ($n events)"
	assert_out_match '^other-1: line 1: '

	# symlinks in the log directory are neither listed nor read
	rm "$d/other-1.jsonl"
	ln -s "$src" "$d/link-1.jsonl"
	wardenc log verify link-1
	assert_rc 125 'verify a symlink'
	assert_err_match 'symbolic link'
	wardenc log list
	assert_out_lacks 'link-1'
	# a FIFO does not hang anything
	mkfifo "$d/fifo-1.jsonl"
	wardenc log verify fifo-1
	assert_rc 125 'verify a FIFO'
	assert_err_match 'not a regular file'
	wardenc log list
	assert_rc 0 'list with a FIFO'

	# no log directory at all
	export XDG_STATE_HOME=$T_TMP/none
	wardenc log list
	assert_rc 0 'list without a directory'
	wardenc log verify
	assert_rc 125 'verify without sessions'
	assert_err_match 'no sessions'
	wardenc log show
	assert_rc 125 'show without sessions'
}

# The logs of sessions that never started (warden killed before its first
# line, a full disk that took none): a 0-byte file, one holding only the
# log.failed of its first record, one whose first record is cut short. Each
# is said as such and is no failure, alone or in --all, which verifies the
# rest; a log whose intact chain begins with something else than a
# session.start, or a changed line, still fails.
test_log_verify_never_started() {
	local d=$HOME/.local/state/warden zeros id real
	wrun -- true
	assert_rc 0
	real=$(log_ids | tail -n 1)
	[[ -n $real ]] || fatal 'no session'
	zeros=$(printf '0%.0s' {1..64})
	: >"$d/20261121T120000Z-00000000.jsonl"
	printf '{"v":1,"ts":"2026-11-21T12:00:01.000000Z","session":"20261121T120001Z-00000001","seq":1,"event":"log.failed","lost":"session.start","reason":"cannot write the audit log: No space left on device","prev":"%s"}\n' \
		"$zeros" >"$d/20261121T120001Z-00000001.jsonl"
	printf '{"v":1,"ts":"2026-11-21T12:00:02.000000Z","session":"20261121T120002Z-00000002","seq":1,"event":"session.st' \
		>"$d/20261121T120002Z-00000002.jsonl"
	chmod 600 "$d"/2026112*.jsonl
	wardenc log verify 20261121T120000Z-00000000
	assert_rc 0 'verify an empty log'
	assert_out_match '^20261121T120000Z-00000000: never started \(no session\.start record\): the log is empty' 'an empty log'
	wardenc log verify 20261121T120001Z-00000001
	assert_rc 0 'verify a log of only a log.failed'
	assert_out_match '^20261121T120001Z-00000001: never started \(no session\.start record\): its first record could not be written: cannot write the audit log: No space left on device$' 'a log of only a log.failed'
	wardenc log verify 20261121T120002Z-00000002
	assert_rc 0 'verify a log of a cut first line'
	assert_out_match '^20261121T120002Z-00000002: never started .*cut short' 'a cut first line'
	wardenc log verify --all
	assert_rc 0 'verify --all with sessions that never started'
	assert_out_match "^$real: chain ok \([0-9]+ events\)$" 'the real session verified'
	[[ $(grep -c 'never started' <<<"$OUT") == 3 ]] || fail "not three sessions that never started: $OUT"

	# a log.failed first, then more: not a session that never started
	id=20261121T120003Z-00000003
	local l1 h
	l1=$(printf '{"v":1,"ts":"2026-11-21T12:00:03.000000Z","session":"%s","seq":1,"event":"log.failed","lost":"exec","reason":"x","prev":"%s"}' "$id" "$zeros")
	h=$(printf '%s' "$l1" | sha256sum | cut -d' ' -f1)
	printf '%s\n{"v":1,"ts":"2026-11-21T12:00:03.000000Z","session":"%s","seq":2,"event":"session.end","prev":"%s"}\n' \
		"$l1" "$id" "$h" >"$d/$id.jsonl"
	chmod 600 "$d/$id.jsonl"
	wardenc log verify --all
	assert_rc 1 'verify --all with a log that does not begin with a session.start'
	assert_out_match "^$id: line 1: not a session\.start" 'it is named'
	assert_out_match "^$real: chain ok" 'the rest still verified'
	rm "$d/$id.jsonl"
	# a changed line in the real session: broken, whatever the others
	sed -i '2s/"seq":2/"seq":2 /' "$d/$real.jsonl"
	wardenc log verify --all
	assert_rc 1 'verify --all with a changed line'
	assert_out_match "^$real: line [0-9]+: " 'the changed log named'
	[[ $(grep -c 'never started' <<<"$OUT") == 3 ]] || fail "the others not said: $OUT"
}

# start_live SECONDS: a session sleeping that long in the background; sets
# LIVE to its id once its log exists.
start_live() {
	local before after i
	before=$(log_ids | sort)
	warden_bg "$T_TMP/live.out" -- sh -c "sleep $1"
	LIVE=
	for ((i = 0; i < 200; i++)); do
		after=$(comm -13 <(printf '%s\n' "$before") <(log_ids | sort) | grep .)
		[[ -n $after ]] && { LIVE=$after; return 0; }
		sleep 0.05
	done
	fatal 'the background session left no log'
}

test_log_follow() {
	local t0 t1 frc
	start_live 1
	t0=$(date +%s%N)
	timeout -k 5 20 env --default-signal=INT,TERM "$WARDEN" log show --follow "${LIVE:0:${#LIVE}-3}" \
		>"$T_TMP/follow.out" 2>"$T_TMP/follow.err" </dev/null
	frc=$?
	t1=$(date +%s%N)
	OUT=$(<"$T_TMP/follow.out")
	cat "$T_TMP/follow.out" "$T_TMP/follow.err"
	((frc == 0)) || fail "follow exited $frc (124: it did not stop at session.end): $(excerpt "$(<"$T_TMP/follow.err")")"
	assert_out_line "session $LIVE"
	assert_out_match '  session\.start ' 'follow shows session.start'
	assert_out_match '  session\.end +exit=0 ' 'follow shows session.end'
	[[ $(tail -n 1 <<<"$OUT") == *' session.end '* ]] || fail 'follow printed past session.end'
	# it really waited for the live session
	(((t1 - t0) / 1000000 >= 300)) || fail "follow returned after $(((t1 - t0) / 1000000)) ms: it did not wait"
	wait "$TPID"

	# --json: JSON Lines ending with session.end
	start_live 1
	timeout -k 5 20 env --default-signal=INT,TERM "$WARDEN" log show -f --json "$LIVE" \
		>"$T_TMP/follow.out" 2>"$T_TMP/follow.err" </dev/null
	frc=$?
	OUT=$(<"$T_TMP/follow.out")
	((frc == 0)) || fail "follow --json exited $frc"
	[[ $("$WPROBE" jsonl <<<"$OUT") == VALID* ]] || fail "follow --json is not JSON Lines: $(excerpt "$OUT")"
	[[ $(tail -n 1 <<<"$OUT") == *'"event":"session.end"'* ]] || fail 'follow --json does not end with session.end'
	[[ $(head -n 1 <<<"$OUT") == *'"event":"session.start"'* ]] || fail 'follow --json does not start with session.start'
	wait "$TPID"
	# the file as followed is the file as written
	[[ $OUT == "$(<"$HOME/.local/state/warden/$LIVE.jsonl")" ]] || fail 'follow --json differs from the log'

	# an ended session: follow returns at once
	wardenc log show --follow "$LIVE"
	assert_rc 0 'follow of an ended session'
	assert_out_match '  session\.end ' 'follow of an ended session'

	# SIGINT ends it: exit 130, no partial line
	start_live 20
	# A file of its own: the earlier follow.out holds a session.start too, and
	# the job truncates its output only after the fork, so waiting on that
	# name could see the old one and send SIGINT before warden runs.
	env --default-signal=INT "$WARDEN" log show --follow "$LIVE" >"$T_TMP/follow-int.out" 2>&1 </dev/null &
	local fpid=$!
	bg_track "$fpid"
	wait_for "$T_TMP/follow-int.out" 'session\.start' 10 || fail 'follow printed no session.start'
	kill -INT "$fpid"
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$fpid" 2>/dev/null && fail 'follow did not end on SIGINT'
	wait "$fpid"
	frc=$?
	((frc == 130)) || fail "follow ended by SIGINT exited $frc, expected 130"
	kill -TERM "$WPID" 2>/dev/null
}

# --follow of a session whose warden was killed (no session.end will come,
# its control socket is gone) stops, says so and exits 1: it waited for
# ever. A live session that writes nothing for longer is still followed
# (test_log_follow's SIGINT case: 20 s of sleep).
test_log_follow_killed() {
	local t0 frc
	start_live 60
	wait_for "$HOME/.local/state/warden/$LIVE.jsonl" '"event":"exec"' 10 || fatal 'the session did not start'
	kill -KILL "$WPID"
	wait "$TPID" 2>/dev/null
	t0=$SECONDS
	timeout -k 5 30 "$WARDEN" log show --follow "$LIVE" >"$T_TMP/follow.out" 2>"$T_TMP/follow.err" </dev/null
	frc=$?
	((frc == 1)) || fail "follow of a killed session exited $frc (124: it waited): $(excerpt "$(<"$T_TMP/follow.err")")"
	((SECONDS - t0 < 20)) || fail "it took $((SECONDS - t0)) s"
	matches 'has no session.end and does not run' <"$T_TMP/follow.err" ||
		fail "not said: $(excerpt "$(<"$T_TMP/follow.err")")"
	matches '  session\.start ' <"$T_TMP/follow.out" || fail 'the events were not shown first'
}

# A workspace, an argument and a profile's path that are not UTF-8:
# session.start keeps them, escaped (each backslash doubled, each stray byte
# \xHH, the fields listed in "escaped"); `log list` shows the bytes, and
# `warden diff` and `undo` find the session's checkpoint by its workspace.
# The line used to be written with no field at all: `log list` showed '-',
# and the session could not be undone. The exports take such fields.
test_log_non_utf8_workspace() {
	local ws prof f line
	ws="$T_TMP/$(printf 'ws-\377')"
	prof="$T_TMP/$(printf 'p\376.profile')"
	mkdir "$ws" && cd "$ws" || fatal "cannot make $ws"
	printf 'risk warn off\n' >"$prof"
	wrun --profile "$prof" -- sh -c 'echo x >f' "$(printf 'a\375b\\c')"
	assert_rc 0 'the session'
	f=$(latest_log)
	line=$(head -n 1 "$f")
	grep -qF "\"workspace\":\"$T_TMP/ws-"'\\xFF"' <<<"$line" || fail "no workspace, its bytes escaped: $(excerpt "$line")"
	grep -qF '"argv":["sh","-c","echo x >f","a\\xFDb\\\\c"]' <<<"$line" || fail "no argv, its bytes escaped: $(excerpt "$line")"
	grep -qF 'p\\xFE.profile"]' <<<"$line" || fail "no profile, its bytes escaped: $(excerpt "$line")"
	grep -qF '"escaped":["argv","workspace","profiles"]' <<<"$line" || fail "the escaped fields are not listed: $(excerpt "$line")"
	grep -qE '"checkpoint":\{"manifest":"[0-9a-f]{64}"' <<<"$line" || fail "no checkpoint: $(excerpt "$line")"

	wardenc log list
	assert_rc 0 'log list'
	assert_out_match '  "[^"]*/ws-\\xff"  sh -c "echo x >f" "a\\xfdb\\\\c"$' 'the workspace and the command listed as their bytes'
	wardenc log list --json
	assert_out_has '"workspace":"' 'log list --json'
	assert_out_has '"escaped":["argv","workspace"]' 'log list --json says what is escaped'
	wardenc log show
	assert_out_match 'session\.start +argv=\[sh -c "echo x >f" "a\\xfdb\\\\c"\] workspace="[^"]*/ws-\\xff"' 'log show'

	wardenc log export --format ocsf
	assert_rc 0 'export --format ocsf'
	[[ $("$WPROBE" jsonl <<<"$OUT") == VALID* ]] || fail "the OCSF export is not JSON lines: $(excerpt "$OUT")"
	wardenc log export --format otlp
	assert_rc 0 'export --format otlp'
	[[ $("$WPROBE" jsonl <<<"$OUT") == VALID* ]] || fail "the OTLP export is not JSON: $(excerpt "$OUT")"
	if have python3 && python3 -c 'import jsonschema' 2>/dev/null && [[ -f ${SC_SCHEMA-} ]]; then
		python3 "$SC_DIR/schema_check.py" "$SC_SCHEMA" "$f" 2>"$T_TMP/schema.err" >/dev/null ||
			fail "lines the schema does not describe: $(head -c 1500 "$T_TMP/schema.err")"
	else
		note 'schema not checked: no python3-jsonschema'
	fi

	wardenc diff
	assert_rc 1 'warden diff: changes'
	assert_out_match '^ +added +f$' 'warden diff'
	wardenc undo --yes
	assert_rc 0 'warden undo'
	[[ -e f ]] && fail 'undo left f'
	wardenc log list
	assert_out_match '  "[^"]*/ws-\\xff"  warden undo ' 'the undo logged in that workspace'
}

# A log directory warden refuses (a symbolic link, or one others may
# write) is refused before anything of the session is made in it: the
# workspace's lock and the placeholders' stash live there too.
test_log_dir_refused_first() {
	local d=$HOME/.local/state/warden elsewhere=$T_TMP/elsewhere
	mkdir -p "$HOME/.local/state" "$elsewhere"
	rm -rf "$d"
	ln -s "$elsewhere" "$d"
	wrun -- true
	assert_rc 125 'a log directory that is a symbolic link'
	assert_err_match 'is a symbolic link, refusing to use it'
	[[ -z $(ls -A "$elsewhere") ]] || fail "made in the link's target: $(ls -A "$elsewhere")"
	rm "$d"
	mkdir "$d"
	chmod 0777 "$d"
	wrun -- true
	assert_rc 125 'a log directory others may write'
	assert_err_match 'writable by group or others'
	[[ -z $(ls -A "$d") ]] || fail "made in the refused directory: $(ls -A "$d")"
	rmdir "$d"
}

test_log_prune() {
	# `warden log prune --older-than`: the logs last written before the time
	# go, one line each; never a running session's, never one whose
	# checkpoint the store still keeps (diff and undo read it), never a
	# newer one, never through a symlink; --dry-run removes nothing.
	local dir="$HOME/.local/state/warden" ids old ckpt recent running f
	printf 'checkpoint off\n' >"$T_TMP/nock"
	wrun --profile "$T_TMP/nock" -- true
	wrun -- sh -c 'echo kept > f'
	wrun --profile "$T_TMP/nock" -- true
	mapfile -t ids < <(log_ids)
	((${#ids[@]} == 3)) || fatal "expected 3 sessions, got ${#ids[@]}"
	old=${ids[0]} ckpt=${ids[1]} recent=${ids[2]}
	warden_bg "$T_TMP/bg.out" --profile "$T_TMP/nock" -- sleep 20
	local i
	for ((i = 0; i < 200; i++)); do
		[[ $(log_ids | wc -l) == 4 ]] && "$WARDEN" status 2>/dev/null | matches -F 'sleep 20' && break
		sleep 0.05
	done
	((i < 200)) || fatal 'the running session has no log, or is not in warden status'
	running=$(log_ids | grep -vxF -e "$old" -e "$ckpt" -e "$recent")
	for f in "$old" "$ckpt" "$running"; do touch -d '40 days ago' "$dir/$f.jsonl"; done
	printf 'not a log\n' >"$T_TMP/elsewhere" && touch -d '40 days ago' "$T_TMP/elsewhere"
	ln -s "$T_TMP/elsewhere" "$dir/20260101T000000Z-deadbeef.jsonl"

	wardenc log prune --older-than 30d --dry-run
	assert_rc 0 'prune --dry-run'
	assert_out_line "would remove 1 of 4 sessions' logs"
	assert_out_match "^would remove $old \(last written "
	[[ -f $dir/$old.jsonl ]] || fail '--dry-run removed the log'

	wardenc log prune --older-than 30d
	assert_rc 0 'prune'
	assert_out_match "^removed $old \(last written "
	assert_out_line "kept $running: the session is running"
	assert_out_line "kept $ckpt: its checkpoint is kept (warden diff and undo read this log)"
	assert_out_line "removed 1 of 4 sessions' logs"
	[[ ! -e $dir/$old.jsonl ]] || fail 'the old log stayed'
	for f in "$ckpt" "$recent" "$running"; do
		[[ -f $dir/$f.jsonl ]] || fail "prune removed $f's log"
	done
	[[ -L $dir/20260101T000000Z-deadbeef.jsonl && -f $T_TMP/elsewhere ]] ||
		fail 'prune went through the symlink'
	wardenc diff "$ckpt" --list
	[[ $RC != 125 ]] || fail "diff of the kept checkpoint after prune: $(excerpt "$ERR")"
	assert_out_match "^session $ckpt: "

	wardenc log prune --older-than 'last tuesday'
	assert_rc 2 'a time prune cannot read'
	assert_err_match "not a time: 'last tuesday'"
	wardenc log prune
	assert_rc 2 'prune without --older-than'
	assert_err_match 'prune needs --older-than'
}

# `log list -w DIR`: the sessions of one workspace (and of those within it,
# a task's worktree), a workspace gone named by its absolute path;
# `--since TIME`: those started since; both together; nothing matching is
# said on stderr, exit 0 [test_log_list_filters].
test_log_list_filters() {
	local other="$T_TMP/other" gone="$T_TMP/gone" t
	mkdir -p sub "$other" "$gone"
	wrun -- true
	(cd "$other" && wrun -- true)
	(cd "$gone" && wrun -- true)
	rmdir "$gone"
	sleep 1.1
	t=$(date +%s)
	(cd sub && wrun -- sh -c 'exit 4')
	wardenc log list
	[[ $(grep -c '^20' <<<"$OUT") == 4 ]] || fatal "expected 4 sessions: $(excerpt "$OUT")"
	wardenc log list -w "$WS"
	assert_rc 0 'list -w the workspace'
	[[ $(grep -c '^20' <<<"$OUT") == 2 ]] || fail "-w $WS: not its 2 sessions: $(excerpt "$OUT")"
	assert_out_match " $WS +true\$" 'the workspace itself'
	assert_out_match " $WS/sub +sh -c \"exit 4\"\$" 'a workspace within it'
	assert_out_lacks "$other"
	wardenc log list --workspace "$other" --json
	[[ $(wc -l <<<"$OUT") == 1 && $OUT == *"\"workspace\":\"$other\""* ]] || fail "--workspace other --json: $(excerpt "$OUT")"
	wardenc log list -w "$gone"
	assert_rc 0 'a workspace gone'
	[[ $(grep -c '^20' <<<"$OUT") == 1 ]] || fail "-w of a workspace gone: $(excerpt "$OUT")"
	wardenc log list --since "@$t"
	[[ $(grep -c '^20' <<<"$OUT") == 1 ]] || fail "--since @$t: $(excerpt "$OUT")"
	assert_out_match " $WS/sub +sh -c" 'the session since'
	wardenc log list --since "@$t" -w "$other"
	assert_rc 0 'nothing matches'
	[[ -z $OUT ]] || fail "nothing matches, yet: $(excerpt "$OUT")"
	assert_err_match '^warden: no session is of that workspace or started since that time$'
	wardenc log list -w relative/gone
	assert_rc 2 'a relative workspace that is not there'
	assert_err_match "^warden log: --workspace: 'relative/gone' is no directory here"
}
