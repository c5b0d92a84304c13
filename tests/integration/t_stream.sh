# t_stream.sh - `warden run --stream`: the audit events sent live to an
# OTLP/HTTP collector (the stand-in otlp_collector.py, on 127.0.0.1) and
# appended to an OCSF file. A collector stopped and started again in the
# middle of the session (a graceful stop) gets every event once, in order;
# a collector that is not there, refuses TLS, answers 500 or hangs, and an
# OCSF file on a full disk, are named at the end (stderr and session.end)
# while the command runs as it would (its exit status, its time) and the
# log keeps every event.
# shellcheck shell=bash

ST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)


# st_collector MODE PORT [args]: the stand-in on PORT (0: any), its records
# appended to ST_RECV; sets ST_PORT and ST_PID.
st_collector() {
	local mode=$1 port=$2 out=$T_TMP/coll.$RANDOM
	shift 2
	: "${ST_RECV:=$T_TMP/recv.jsonl}"
	touch "$ST_RECV"
	python3 "$ST_DIR/otlp_collector.py" "$ST_RECV" "$mode" 60 --port "$port" "$@" >"$out.out" 2>"$out.err" &
	ST_PID=$!
	bg_track "$ST_PID"
	wait_for "$out.out" '^LISTENING' 10 || fatal "the collector did not start: $(excerpt "$(<"$out.err")")"
	ST_PORT=$(awk '/^LISTENING/ { print $2; exit }' "$out.out")
}

# st_seqs RECV: the warden.seq of each record received, one a line, in the
# order received
st_seqs() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    for rl in json.loads(l)["body"]["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                print(next(a["value"]["intValue"] for a in r["attributes"] if a["key"] == "warden.seq"))' "$1"
}

# st_end_field LOG PATH...: a field of session.end's stream (JSON)
st_end_field() {
	tail -n 1 "$1" | python3 -c 'import json, sys
v = json.load(sys.stdin)["stream"]
for k in sys.argv[1:]:
    v = v.get(k) if isinstance(v, dict) else None
print(json.dumps(v))' "${@:2}"
}

test_stream_collector_restarted() {
	have python3 || skip 'python3 is not installed'
	st_collector ok 0
	local port=$ST_PORT
	# a session making execs all along; the collector stopped for 1.5 s of
	# it, then started again on the same port; the session goes on making
	# execs until the collector is back (the file "back", at most 60 s),
	# then for a second more
	(wsh 'i=0; while [ ! -e back ] && [ $i -lt 600 ]; do /bin/true; sleep 0.1; i=$((i+1)); done
	      i=0; while [ $i -lt 10 ]; do /bin/true; sleep 0.1; i=$((i+1)); done; exit 3' \
		--stream "otlp=http://127.0.0.1:$port"
	 echo "$RC" >"$T_TMP/rc") &
	local w=$!
	sleep 1
	kill "$ST_PID"
	wait "$ST_PID" 2>/dev/null
	local before
	before=$(st_seqs "$ST_RECV" | wc -l)
	sleep 1.5
	st_collector ok "$port"
	touch back
	wait "$w"
	RC=$(<"$T_TMP/rc")
	ERR=$(<"$T_TMP/.err")
	assert_rc 3 'the command'
	local log
	log=$(latest_log)
	((before > 0)) || fail 'nothing arrived before the collector was stopped'
	# every line of the log, once, in order
	st_seqs "$ST_RECV" >"$T_TMP/got"
	seq 1 "$(wc -l <"$log")" >"$T_TMP/want"
	cmp -s "$T_TMP/got" "$T_TMP/want" ||
		fail "the events received are not the log's, once each, in order: $(diff "$T_TMP/want" "$T_TMP/got" | head -c 400)"
	[[ $(grep -c '"event":"exec"' "$log") -ge 30 ]] || fail 'the execs are not in the log'
	[[ $(st_end_field "$log" otlp unsent) == 0 ]] || fail "session.end: $(st_end_field "$log")"
	[[ $ERR != *'not sent'* ]] || fail "stderr says events were not sent: $(excerpt "$ERR")"
}

# A collector that answers each batch 200 ms after it took it: the session
# ends (the supervisor asks the sender for its figures, then stops it) while
# a batch is on its way. That batch is answered within the grace and not
# sent again: every event once, in order.
test_stream_collector_slow() {
	have python3 || skip 'python3 is not installed'
	st_collector slow:200 0
	wsh 'i=0; while [ $i -lt 30 ]; do /bin/true; sleep 0.05; i=$((i+1)); done; exit 3' \
		--stream "otlp=http://127.0.0.1:$ST_PORT"
	assert_rc 3 'the command'
	local log
	log=$(latest_log)
	st_seqs "$ST_RECV" >"$T_TMP/got"
	seq 1 "$(wc -l <"$log")" >"$T_TMP/want"
	cmp -s "$T_TMP/got" "$T_TMP/want" ||
		fail "the events received are not the log's, once each, in order: $(diff "$T_TMP/want" "$T_TMP/got" | head -c 400)"
	[[ $(st_end_field "$log" otlp unsent) == 0 ]] || fail "session.end: $(st_end_field "$log")"
	[[ $ERR != *'not sent'* ]] || fail "stderr says events were not sent: $(excerpt "$ERR")"
}

# st_fails URL WANT-ERR [args]: a session streaming to URL: its command
# unaffected (exit 3, within 12 s), stderr and session.end naming what was
# not sent and why, the log complete (verified).
st_fails() {
	local url=$1 want=$2 t0=$SECONDS log
	shift 2
	wsh '/bin/true; /bin/true; exit 3' --stream "otlp=$url" "$@"
	assert_rc 3 "$url: the command"
	((SECONDS - t0 <= 12)) || fail "$url: the session took $((SECONDS - t0)) s"
	assert_err_match "stream otlp https?://127\.0\.0\.1:[0-9]+: [0-9]+ events not sent \(seq 1 on; the last error: .*$want" "$url"
	log=$(latest_log)
	[[ $(st_end_field "$log" otlp unsent) -gt 0 ]] || fail "$url: session.end says all was sent: $(st_end_field "$log")"
	st_end_field "$log" otlp error | matches -E -- "$want" || fail "$url: session.end's error: $(st_end_field "$log")"
	[[ $(grep -c '"event":"exec"' "$log") -ge 2 ]] || fail "$url: the execs are not in the log"
	wardenc log verify "$(basename "$log" .jsonl)"
	assert_rc 0 "$url: the log verified"
}

test_stream_failures() {
	have python3 || skip 'python3 is not installed'
	# nobody there: a port just closed
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	st_fails "http://127.0.0.1:$port" 'Connection refused'
	st_collector status:500 0
	st_fails "http://127.0.0.1:$ST_PORT" 'answered 500'
	st_collector hang 0
	st_fails "http://127.0.0.1:$ST_PORT" 'waiting for the response|timed out|cancel'
	if have openssl; then
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
			-addext 'subjectAltName=IP:127.0.0.1' -keyout "$T_TMP/key.pem" -out "$T_TMP/cert.pem" 2>/dev/null ||
			fatal 'openssl req failed'
		st_collector ok 0 --tls "$T_TMP/cert.pem" "$T_TMP/key.pem"
		st_fails "https://127.0.0.1:$ST_PORT" 'certificate verify failed'
	else
		note 'openssl is not installed: the TLS case skipped'
	fi
	# bad usage: said before anything runs
	wsh 'echo ran' --stream "otlp=ftp://127.0.0.1/"
	assert_rc 125 'an ftp URL'
	assert_out_lacks ran 'an ftp URL'
	wsh 'echo ran' --stream 'kafka=x'
	assert_rc 125 'an unknown target'
	# a FIFO nothing reads, a device: refused at once, not waited on
	mkfifo "$T_TMP/fifo"
	wsh 'echo ran' --stream "ocsf=$T_TMP/fifo"
	assert_rc 125 'a FIFO nothing reads'
	assert_err_match 'a FIFO nothing reads' 'the FIFO said'
	wsh 'echo ran' --stream ocsf=/dev/null
	assert_rc 125 'a device'
	assert_err_match 'not a regular file' 'the device said'
	assert_out_lacks ran 'a device'
	# a symbolic link (one an agent left in a directory it could write)
	# is not followed, and a file in the workspace is refused: the agent
	# could rewrite what it streams, or plant such a link for the next
	printf 'mine\n' >"$T_TMP/victim"
	ln -s "$T_TMP/victim" "$T_TMP/link.jsonl"
	wsh 'echo ran' --stream "ocsf=$T_TMP/link.jsonl"
	assert_rc 125 'a symbolic link'
	assert_err_match 'a symbolic link' 'the link said'
	[[ $(<"$T_TMP/victim") == mine ]] || fail "appended through the link: $(excerpt "$(<"$T_TMP/victim")")"
	wsh 'echo ran' --stream ocsf=events.jsonl
	assert_rc 125 'a file in the workspace'
	assert_err_match 'lies in the workspace' 'the workspace said'
	[[ ! -e events.jsonl ]] || fail 'the file was made in the workspace'
	# none of these refused sessions left a log behind (empty ones were)
	local empty
	empty=$(find "$HOME/.local/state/warden" -maxdepth 1 -name '*.jsonl' -size 0 | head -n 3)
	[[ -z $empty ]] || fail "empty logs left: $empty"
}

test_stream_ocsf() {
	have python3 || skip 'python3 is not installed'
	wsh '/bin/true; /bin/true; exit 3' --stream "ocsf=$T_TMP/ocsf.jsonl"
	assert_rc 3 'the command'
	local log
	log=$(latest_log)
	# one OCSF line per exec of the log, each naming its line
	[[ $(grep -c '"event":"exec"' "$log") == $(grep -c '"class_uid":1007' "$T_TMP/ocsf.jsonl") ]] ||
		fail "$(grep -c '"class_uid":1007' "$T_TMP/ocsf.jsonl") OCSF execs for $(grep -c '"event":"exec"' "$log") in the log"
	[[ $(st_end_field "$log" ocsf unsent) == 0 ]] || fail "session.end: $(st_end_field "$log")"
	[[ $(stat -c %a "$T_TMP/ocsf.jsonl") == 600 ]] || fail 'the OCSF file is not 0600'
}

# The OCSF file on a full disk (a small tmpfs: root only): named at the end,
# the command unaffected, no part of a line left in the file.
test_stream_ocsf_disk_full() {
	is_root || skip 'mounting a small tmpfs needs root'
	local d=$T_TMP/small
	mkdir -p "$d"
	mount -t tmpfs -o size=8k tmpfs "$d" || skip 'cannot mount a tmpfs here'
	head -c 6000 /dev/zero | tr '\0' x >"$d/fill"
	wsh 'i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done; exit 3' --stream "ocsf=$d/ocsf.jsonl"
	local partial=0
	[[ ! -s $d/ocsf.jsonl || $(tail -c 1 "$d/ocsf.jsonl" | od -An -c | tr -d ' ') == '\n' ]] || partial=1
	umount "$d"
	assert_rc 3 'the command'
	assert_err_match "stream ocsf $d/ocsf.jsonl: [0-9]+ events not written .*(No space left|only part)" 'the disk full'
	((partial == 0)) || fail 'a part of a line was left in the OCSF file'
	local log
	log=$(latest_log)
	[[ $(grep -c '"event":"exec"' "$log") -ge 20 ]] || fail 'the execs are not in the log'
}

# The profile's lines: `stream ocsf FILE` and `stream otlp URL`, shown by
# `warden policy show`, and --stream over them.
test_stream_profile() {
	have python3 || skip 'python3 is not installed'
	st_collector ok 0
	printf 'stream ocsf %s\nstream otlp http://127.0.0.1:%s\n' "$T_TMP/p.ocsf.jsonl" "$ST_PORT" >"$T_TMP/s.profile"
	wardenc policy show --profile "$T_TMP/s.profile"
	assert_rc 0 'policy show'
	[[ $(python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["stream"], sort_keys=True))' <<<"$OUT") == \
		"{\"ocsf\": \"$T_TMP/p.ocsf.jsonl\", \"otlp\": \"http://127.0.0.1:$ST_PORT\"}" ]] ||
		fail "policy show does not show the stream lines: $(excerpt "$OUT")"
	wsh '/bin/true; exit 3' --profile "$T_TMP/s.profile"
	assert_rc 3 'the command'
	local log
	log=$(latest_log)
	st_seqs "$ST_RECV" >"$T_TMP/got"
	seq 1 "$(wc -l <"$log")" >"$T_TMP/want"
	cmp -s "$T_TMP/got" "$T_TMP/want" || fail "the collector got: $(excerpt "$(<"$T_TMP/got")")"
	grep -q '"class_uid":1007' "$T_TMP/p.ocsf.jsonl" || fail 'no OCSF exec in the file'
	# the flag over the profile's line: the file of --stream written, not
	# the profile's
	rm -f "$T_TMP/p.ocsf.jsonl"
	wsh '/bin/true' --profile "$T_TMP/s.profile" --stream "ocsf=$T_TMP/f.ocsf.jsonl"
	assert_rc 0 'with --stream'
	[[ -s $T_TMP/f.ocsf.jsonl && ! -e $T_TMP/p.ocsf.jsonl ]] || fail '--stream did not replace the profile line'
	printf 'stream otlp ftp://x/\n' >"$T_TMP/bad.profile"
	wsh 'echo ran' --profile "$T_TMP/bad.profile"
	assert_rc 125 'a bad stream line'
	assert_err_match "stream otlp: 'ftp://x/' is not an http:// or https:// URL" 'a bad stream line'
}
