# t_export.sh - `warden log export`: the chain verified before anything
# leaves (a changed line: refused, nothing written or sent); OCSF 1.3.0
# events on stdout, each validated against the class schemas transcribed in
# tests/integration/ocsf/ (execs as Process Activity, connections as
# Network Activity, file events as File System Activity, alerts and risk
# as Detection Finding); OpenTelemetry log records over OTLP/HTTP (JSON) to
# a collector stand-in on 127.0.0.1 (otlp_collector.py), plain and over
# TLS with a certificate the test makes (trusted with --ca; refused
# without), every line of the log arriving once, in batches; a collector
# that fails (500: at once; 503: tried again), hangs, answers garbage or
# is not there: a clear error within the timeout.
# shellcheck shell=bash

EX_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ex_need_py() {
	have python3 || skip 'python3 is not installed'
	python3 -c 'import jsonschema' 2>/dev/null || skip 'python3-jsonschema is not installed (scripts/deps)'
}

ex_logs() { ls -tr "$HOME/.local/state/warden/"*.jsonl; }

# ex_session: a session making execs, a direct connect refused, file events
# and an alert; its log in EX_LOG.
ex_session() {
	printf 'risk warn off\nrisk freeze off\nrisk kill off\naudit files\n' >"$T_TMP/ex.profile"
	# an extended attribute and an ACL set (what setfacl writes)
	{
		printf '%s' "$PY_ACL"
		cat <<'EOF'
import os
os.setxattr("f1", "user.k", b"1")
os.setxattr("f1", "system.posix_acl_access", acl(os.getuid()))
EOF
	} >xa.py
	wsh 'echo x >f1; chmod 600 f1; touch -d @0 f1; python3 xa.py; mv f1 f2; rm f2
		./wprobe connect 192.0.2.1 80; ./wprobe mount; true' --profile "$T_TMP/ex.profile"
	assert_rc 0 'the session'
	EX_LOG=$(ex_logs | tail -n 1)
	[[ -n $EX_LOG ]] || fatal 'no session log'
}

# ex_collector MODE [--tls CERT KEY]: the stand-in; sets EX_PORT, EX_RECV.
ex_collector() {
	local out=$T_TMP/coll.$RANDOM
	EX_RECV=$out.recv.jsonl
	: >"$EX_RECV"
	timeout -k 2 120 python3 "$EX_DIR/otlp_collector.py" "$EX_RECV" "$@" >"$out.out" 2>"$out.err" &
	bg_track $!
	wait_for "$out.out" '^LISTENING' 10 || fatal "the collector did not start: $(excerpt "$(<"$out.err")")"
	EX_PORT=$(awk '/^LISTENING/ { print $2; exit }' "$out.out")
}

test_export_ocsf() {
	ex_need_py
	ex_session
	wardenc log export --format ocsf
	assert_rc 0 'export --format ocsf'
	printf '%s\n' "$OUT" >"$T_TMP/ocsf.jsonl"
	python3 "$EX_DIR/schema_check.py" "$EX_DIR/ocsf/ocsf-1.3.0.json" "$T_TMP/ocsf.jsonl" 2>"$T_TMP/ocsf.err" ||
		fail "OCSF events the OCSF 1.3.0 class schemas refuse: $(head -c 1500 "$T_TMP/ocsf.err")"
	# one OCSF event per exec, net, file, alert, risk line; type_uid,
	# time and the decision as OCSF says them
	python3 - "$EX_LOG" "$T_TMP/ocsf.jsonl" >"$T_TMP/ocsf.check" 2>&1 <<'PY' || fail "$(head -c 1500 "$T_TMP/ocsf.check")"
import json, sys, datetime
log = [json.loads(l) for l in open(sys.argv[1])]
out = [json.loads(l) for l in open(sys.argv[2])]
want = [e for e in log if e["event"] in ("exec", "net", "file", "alert", "risk")]
assert len(out) == len(want), f"{len(out)} OCSF events for {len(want)} mapped lines"
cls = {"exec": 1007, "net": 4001, "file": 1001, "alert": 2004, "risk": 2004}
for e, o in zip(want, out):
    assert o["type_uid"] == o["class_uid"] * 100 + o["activity_id"], o
    assert o["class_uid"] == cls[e["event"]], (e["event"], o["class_uid"])
    assert o["metadata"]["uid"] == f'{e["session"]}:{e["seq"]}', o["metadata"]
    t = datetime.datetime.strptime(e["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    assert o["time"] == int(t.timestamp() * 1000) or abs(o["time"] - t.timestamp() * 1000) < 2, (o["time"], e["ts"])
    if "decision" in e:
        assert o["action_id"] == (1 if e["decision"] == "allow" else 2), o
exe = [o for o in out if o["class_uid"] == 1007 and o["process"].get("name") == "wprobe"]
assert exe and exe[0]["process"]["file"]["hashes"][0]["algorithm_id"] == 3, "no exec of wprobe with its SHA-256"
net = [o for o in out if o["class_uid"] == 4001 and o["dst_endpoint"].get("ip") == "192.0.2.1"]
assert net and net[0]["activity_id"] == 5 and net[0]["dst_endpoint"]["port"] == 80, "no refused connect to 192.0.2.1:80"
assert net[0]["action_id"] == 2 and set(net[0]["metadata"]["profiles"]) == {"host", "security_control"}, net[0]["metadata"]
assert any(o["class_uid"] == 1001 and o["activity_id"] == 5 for o in out), "no rename"
# a mode set: Set Security; a file's times: Set Attributes (they were Other)
assert any(o["class_uid"] == 1001 and o["activity_id"] == 7 and o["unmapped"]["op"] == "chmod" for o in out), "no chmod as Set Security"
assert any(o["class_uid"] == 1001 and o["activity_id"] == 6 and o["unmapped"]["op"] == "utime" for o in out), "no utime as Set Attributes"
# an extended attribute: Set Attributes; an ACL: Set Security
assert any(o["class_uid"] == 1001 and o["activity_id"] == 6 and o["unmapped"].get("attr") == "user.k" for o in out), "no setxattr as Set Attributes"
assert any(o["class_uid"] == 1001 and o["activity_id"] == 7 and o["unmapped"].get("attr") == "system.posix_acl_access" for o in out), "no ACL as Set Security"
assert any(o["class_uid"] == 2004 and o["finding_info"]["title"] == "escape.mount" for o in out), "no escape.mount finding"
PY
	assert_err_match 'not exported \(no OCSF class\):.*session\.start 1' 'the kinds left out are said'
}

# A line changed: the chain is broken, nothing is exported (nor sent).
test_export_broken_chain() {
	ex_session
	sed -i '3s/"pid":[0-9]*/"pid":4242/' "$EX_LOG"
	wardenc log export --format ocsf
	assert_rc 1 'export of a broken chain'
	assert_err_match 'line 3: .*the chain is broken, nothing exported' 'the refusal says where'
	[[ -z $OUT ]] || fail "something was exported: $(excerpt "$OUT")"
	have python3 || return 0
	ex_collector ok 60
	wardenc log export --format otlp --url "http://127.0.0.1:$EX_PORT"
	assert_rc 1 'otlp export of a broken chain'
	[[ ! -s $EX_RECV ]] || fail 'the collector was sent a broken log'
	# a line that is not JSON at all
	printf 'not json\n' >>"$EX_LOG"
	wardenc log export --format otlp
	assert_rc 1 'a malformed line'
}

# ex_check_otlp RECV LOG...: the requests are OTLP/HTTP JSON log exports to
# /v1/logs and every line of the logs arrived exactly once, as the body.
ex_check_otlp() {
	python3 - "$@" >"$T_TMP/otlp.check" 2>&1 <<'PY' || fail "$(head -c 1500 "$T_TMP/otlp.check")"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
lines = [l.rstrip("\n") for f in sys.argv[2:] for l in open(f)]
got = []
assert reqs, "no request"
for r in reqs:
    assert r["path"] == "/v1/logs", r["path"]
    assert r["content_type"] == "application/json", r["content_type"]
    rl = r["body"]["resourceLogs"]
    attrs = {a["key"]: a["value"] for a in rl[0]["resource"]["attributes"]}
    assert attrs["service.name"] == {"stringValue": "warden"}, attrs
    for sl in rl[0]["scopeLogs"]:
        assert sl["scope"]["name"] == "warden.audit"
        for rec in sl["logRecords"]:
            assert rec["timeUnixNano"].isdigit() and len(rec["timeUnixNano"]) >= 19, rec["timeUnixNano"]
            assert rec["severityNumber"] in (9, 13, 17, 21), rec["severityNumber"]
            body = rec["body"]["stringValue"]
            ev = json.loads(body)
            a = {x["key"]: x["value"] for x in rec["attributes"]}
            assert a["event.name"] == {"stringValue": "warden." + ev["event"]}, a["event.name"]
            assert a["warden.seq"] == {"intValue": str(ev["seq"])}, a["warden.seq"]
            got.append(body)
assert sorted(got) == sorted(lines), f"{len(got)} records for {len(lines)} lines; missing {set(lines) - set(got)}"
print(len(reqs), "requests")
PY
}

test_export_otlp_http() {
	have python3 || skip 'python3 is not installed'
	ex_session
	# a second session with more events than one batch holds (512)
	wsh 'i=0; while [ $i -lt 560 ]; do /bin/true; i=$((i+1)); done'
	assert_rc 0 'the session of many execs'
	local logs
	mapfile -t logs < <(ex_logs)
	ex_collector ok 60
	wardenc log export --format otlp --url "http://127.0.0.1:$EX_PORT/" "$(basename "${logs[0]}" .jsonl)" \
		"$(basename "${logs[1]}" .jsonl)"
	assert_rc 0 'otlp export'
	assert_err_match 'exported [0-9]+ events in [2-9] requests' 'sent in batches'
	ex_check_otlp "$EX_RECV" "${logs[@]}"
	# without --url: the requests on stdout, the same records
	wardenc log export --format otlp "$(basename "${logs[0]}" .jsonl)"
	assert_rc 0 'otlp to stdout'
	printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    print(json.dumps({"path": "/v1/logs", "content_type": "application/json", "body": json.loads(l)}))' >"$T_TMP/stdout.recv"
	ex_check_otlp "$T_TMP/stdout.recv" "${logs[0]}"
}

test_export_otlp_https() {
	have python3 || skip 'python3 is not installed'
	have openssl || skip 'openssl is not installed'
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext 'subjectAltName=IP:127.0.0.1' -keyout "$T_TMP/key.pem" -out "$T_TMP/cert.pem" 2>"$T_TMP/ossl.err" ||
		fatal "openssl req: $(excerpt "$(<"$T_TMP/ossl.err")")"
	ex_session
	ex_collector ok 60 --tls "$T_TMP/cert.pem" "$T_TMP/key.pem"
	# not trusted: refused, nothing sent
	wardenc log export --format otlp --url "https://127.0.0.1:$EX_PORT" --timeout 5
	assert_rc 125 'an untrusted certificate'
	assert_err_match 'certificate verify failed' 'says why'
	[[ ! -s $EX_RECV ]] || fail 'records sent to a server whose certificate failed'
	wardenc log export --format otlp --url "https://127.0.0.1:$EX_PORT" --ca "$T_TMP/cert.pem"
	assert_rc 0 'https with --ca'
	ex_check_otlp "$EX_RECV" "$EX_LOG"
}

# ex_fails MODE WANT-ERR MAX-SECONDS [export args]: the export fails (125)
# with WANT-ERR, within MAX-SECONDS.
ex_fails() {
	local mode=$1 want=$2 max=$3
	shift 3
	ex_collector "$mode" 60
	local t0=$SECONDS
	wardenc log export --format otlp --url "http://127.0.0.1:$EX_PORT" "$@"
	assert_rc 125 "collector $mode"
	assert_err_match "$want" "collector $mode"
	((SECONDS - t0 <= max)) || fail "collector $mode: the export took $((SECONDS - t0)) s"
}

test_export_otlp_failures() {
	have python3 || skip 'python3 is not installed'
	ex_session
	ex_fails status:500 'answered 500' 10
	[[ $(wc -l <"$EX_RECV") == 1 ]] || fail "a 500 was tried again ($(wc -l <"$EX_RECV") requests)"
	ex_fails status:503 'answered 503 \(tried 3 times\)' 15
	[[ $(wc -l <"$EX_RECV") == 3 ]] || fail "a 503 was not tried 3 times ($(wc -l <"$EX_RECV") requests)"
	ex_fails hang 'waiting for the response.*(tried 3 times)' 12 --timeout 2
	ex_fails garbage 'not HTTP/1.x' 10
	# nobody there: a port just closed
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	local t0=$SECONDS
	wardenc log export --format otlp --url "http://127.0.0.1:$port"
	assert_rc 125 'no collector'
	assert_err_match 'cannot connect to 127.0.0.1:[0-9]+: Connection refused \(tried 3 times\)' 'no collector'
	((SECONDS - t0 <= 10)) || fail 'no collector: too slow'
	# bad usage
	wardenc log export --format otlp --url "ftp://127.0.0.1/"
	assert_rc 125 'an ftp URL'
	assert_err_match 'not an http:// or https:// URL' 'an ftp URL'
	wardenc log export --format ocsf --url "http://127.0.0.1:1/"
	assert_rc 2 '--url with ocsf: bad usage'
	wardenc log export --format cef
	assert_rc 2 'an unknown format: bad usage'
}
