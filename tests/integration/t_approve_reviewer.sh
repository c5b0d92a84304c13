# t_approve_reviewer.sh - who answers an `ask` rule besides a human at the
# terminal (issue 15): the reviewer command (`approve command`), run on the
# host with the question as JSON on its stdin, whose answer on stdout allows
# or denies (approval event "by":"reviewer"), or hands the question to the
# humans (`ask`: then `warden approve` answers); a reviewer that hangs past
# its limit, crashes, prints junk or too much is a denial whose reason says
# which, and an alert. The webhook (`approve webhook`): an HTTP server of the
# test on the host's loopback receives the question and the `warden approve`
# command that answers it, and running that command answers; a webhook
# that answers 500, that nobody listens on, or whose TLS certificate the
# system does not trust (a throwaway CA) is an alert and leaves the
# question to `warden approve`; the same CA given to OpenSSL by SSL_CERT_DIR
# makes the delivery verified. And the agent can reach neither: the
# control socket's directory is not in the sandbox, the webhook's port is
# the host's. The questions come from `net ask example.invalid` (the proxy
# answers 403 when denied; allowed, the name fails to resolve later: 502)
# and `exec ask argv`. Runs as root and unprivileged alike.
# shellcheck shell=bash
# The reviewers' scripts are single-quoted: $0, $$ and $! are theirs.
# shellcheck disable=SC2016

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# The proxy's status for a request to example.invalid (403: denied, 502:
# allowed), as the command inside prints it.
AR_CURL='curl -s -o /dev/null -w "%{http_code}\n" -m 30 -x http://127.0.0.1:3128 http://example.invalid/'

# ar_reviewer NAME BODY: a reviewer script $T_TMP/rv/NAME (outside the
# workspace) that saves the question it was given in $T_TMP/rv/NAME.q, its
# pid in NAME.pid, then runs BODY (sh). Sets RV.
ar_reviewer() {
	mkdir -p "$T_TMP/rv"
	RV=$T_TMP/rv/$1
	printf '#!/bin/sh\ncat >"%s.q"\necho $$ >"%s.pid"\n%s\n' "$RV" "$RV" "$2" >"$RV"
	chmod 0755 "$RV"
}

# ar_profile LINE...: the session's profile, $T_TMP/p.profile: `net ask
# example.invalid` and the lines given. Sets PROF.
ar_profile() {
	PROF=$T_TMP/p.profile
	{
		echo 'net ask example.invalid'
		printf '%s\n' "$@"
	} >"$PROF"
}

# ar_events KIND: the last session's events of KIND (JSON Lines), in EV.
ar_events() {
	wardenc log show --event "$1" --json
	EV=$OUT
}

# ar_expect_answer DECISION BY [REASON-ERE]: the last session's question
# ended as DECISION by BY, its reason matching REASON-ERE.
ar_expect_answer() {
	local line
	ar_events approval
	line=$(grep -E '"phase":"(answered|timeout)"' <<<"$EV" | tail -n 1)
	[[ -n $line ]] || { fail "no approval answered in the log: $(excerpt "$EV")"; return 0; }
	[[ $line == *"\"decision\":\"$1\""* && $line == *"\"by\":\"$2\""* ]] ||
		fail "expected the decision $1 by $2, got: $(excerpt "$line")"
	if [[ -n ${3:-} ]]; then
		grep -qE -- "\"reason\":\".*$3" <<<"$line" || fail "the reason does not match /$3/: $(excerpt "$line")"
	fi
	return 0
}

# ar_question_id: the id of the one open question of a session, in QID
# (waits up to 10 s).
ar_question_id() {
	local i
	QID=
	for ((i = 0; i < 100; i++)); do
		QID=$("$WARDEN" approve --json 2>/dev/null | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
		[[ -n $QID ]] && return 0
		sleep 0.1
	done
	fatal "no open question appeared (warden approve --json: $("$WARDEN" approve --json 2>&1 | head -c 300))"
}

# ar_running PID: the process exists and is no zombie.
ar_running() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[[ ${st%% *} != Z ]]
}

# ar_wait_bg OUTFILE: wait for the background warden (warden_bg) to end;
# sets OUT and RC.
ar_wait_bg() {
	wait "$TPID"
	RC=$?
	OUT=$(<"$1")
	ERR=$(<"$1.err")
	printf -- '-> rc=%s\n--- stdout\n%s\n--- stderr\n%s\n' "$RC" "$OUT" "$ERR"
}

# ar_server NAME [--status N] [--tls CERT KEY]: the test's webhook server
# on 127.0.0.1 (any port): each POST's body one line of $T_TMP/NAME.posts,
# its path in NAME.paths; answers N (200). Sets WH_PORT, WH_POSTS.
ar_server() {
	local name=$1 pid
	shift
	nh_python
	cat >"$T_TMP/wh_server.py" <<'PY'
import argparse, os, ssl, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument('--name', required=True)
ap.add_argument('--status', type=int, default=200)
ap.add_argument('--tls', nargs=2)
a = ap.parse_args()
threading.Thread(target=lambda: (time.sleep(90), os._exit(0)), daemon=True).start()

class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_POST(self):
        n = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(n).decode('utf-8', 'replace').replace('\n', ' ')
        with open(a.name + '.paths', 'a') as f:
            f.write(self.path + '\n')
        with open(a.name + '.posts', 'a') as f:
            f.write(body + '\n')
        self.send_response(a.status)
        self.send_header('Content-Length', '2')
        self.end_headers()
        self.wfile.write(b'ok')
    def log_message(self, fmt, *args):
        sys.stderr.write(fmt % args + '\n')

srv = ThreadingHTTPServer(('127.0.0.1', 0), H)
srv.daemon_threads = True
if a.tls:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(a.tls[0], a.tls[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(a.name + '.port.tmp', 'w') as f:
    f.write('%d\n' % srv.server_address[1])
os.rename(a.name + '.port.tmp', a.name + '.port')
srv.serve_forever()
PY
	"$NH_PY" "$T_TMP/wh_server.py" --name "$T_TMP/$name" "$@" >"$T_TMP/$name.out" 2>&1 &
	pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/$name.port" '^[0-9]+$' 10 || fatal "webhook server $name did not start: $(excerpt "$(cat "$T_TMP/$name.out")")"
	WH_PORT=$(<"$T_TMP/$name.port")
	WH_POSTS=$T_TMP/$name.posts
}

# ---- the reviewer command -----------------------------------------------

# Allow: the connection goes through, answered by the reviewer, which was
# given the question (id, kind, subject, session) on its stdin, ran in /
# with warden's environment.
test_reviewer_allows() {
	ar_reviewer allow 'pwd >"$0.cwd"; printf "%s\n" "${AR_MARK:-unset}" >"$0.env"
echo "{\"decision\": \"allow\", \"reason\": \"known test host\"}"'
	ar_profile 'approve timeout 20' "approve command $RV"
	AR_MARK=from-warden wsh "$AR_CURL" -p "$PROF"
	assert_rc 0
	assert_out_eq 502 'allowed by the reviewer (the name then fails to resolve)'
	ar_expect_answer allow reviewer 'known test host'
	local q
	q=$(cat "$RV.q" 2>/dev/null)
	[[ -n $q ]] || fatal 'the reviewer got no question on its stdin'
	[[ $(<"$RV.cwd") == / ]] || fail "the reviewer ran in $(<"$RV.cwd"), not /"
	[[ $(<"$RV.env") == from-warden ]] || fail "the reviewer did not get warden's environment"
	nh_python
	"$NH_PY" - "$RV.q" <<'PY' >"$T_TMP/q.check" 2>&1 || fail "the question on the reviewer's stdin: $(excerpt "$(<"$T_TMP/q.check")")"
import json, sys
q = json.load(open(sys.argv[1]))
assert q['kind'] == 'net', q
assert q['subject'] == 'example.invalid:80', q
assert q['session'].endswith('-' + q['id'].rsplit('-', 1)[0]), q
assert q['timeout_s'] == 20 and q['reviewer_timeout_s'] == 10, q
assert q['detail']['host'] == 'example.invalid', q
PY
	ar_events approval
	grep -qF "\"id\":\"$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$RV.q")\"" <<<"$EV" ||
		fail "the question's id on the reviewer's stdin is not the logged one"
}

# Deny: refused (403), answered by the reviewer with its reason.
test_reviewer_denies() {
	ar_reviewer deny 'printf "%s" "{\"decision\":\"deny\",\"reason\":\"not on my list\"}"'
	ar_profile 'approve timeout 20' "approve command $RV"
	wsh "$AR_CURL" -p "$PROF"
	assert_out_eq 403 'denied by the reviewer'
	ar_expect_answer deny reviewer 'not on my list'
	ar_events alert
	[[ $EV != *approval.reviewer-failed* ]] || fail "a reviewer that answers deny is not a failure: $(excerpt "$EV")"
}

# A reviewer that does not answer within its limit (min(timeout/2, 30 s):
# 3 s of a 6 s timeout) is killed, with what it started, and the question
# denied by the reviewer, not by the question's own timeout.
test_reviewer_timeout_denies() {
	ar_reviewer slow 'sleep 60 & echo $! >"$0.child"; wait'
	ar_profile 'approve timeout 6' "approve command $RV"
	local t0=$SECONDS
	wsh "$AR_CURL" -p "$PROF"
	assert_out_eq 403 'a reviewer past its limit'
	ar_expect_answer deny reviewer 'timed out: no answer within 3 s'
	((SECONDS - t0 < 6)) || fail "the denial took $((SECONDS - t0)) s: not the reviewer's 3 s limit"
	ar_events alert
	grep -qF '"rule":"approval.reviewer-failed"' <<<"$EV" || fail "no approval.reviewer-failed alert: $(excerpt "$EV")"
	local pid i
	while read -r pid; do
		# gone, or a zombie its new parent has not reaped yet (SIGKILL lands at once)
		for ((i = 0; i < 20; i++)); do
			ar_running "$pid" || break
			sleep 0.05
		done
		ar_running "$pid" && fail "the reviewer's process $pid still runs after the session"
	done < <(cat "$RV.pid" "$RV.child" 2>/dev/null)
	return 0
}

# Crash (exit 3, a message on stderr): a denial saying so, with the
# message's last line; never on warden's terminal.
test_reviewer_crash_denies() {
	ar_reviewer crash 'echo "Traceback: something" >&2; echo "ValueError: reviewer-boom" >&2; exit 3'
	ar_profile 'approve timeout 20' "approve command $RV"
	wsh "$AR_CURL" -p "$PROF"
	assert_out_eq 403 'a crashed reviewer'
	ar_expect_answer deny reviewer 'exited with status 3 \(stderr: ValueError: reviewer-boom\)'
	[[ $ERR != *reviewer-boom* ]] || fail "the reviewer's stderr reached warden's: $(excerpt "$ERR")"
}

# Junk, an unknown decision, more than 64 KiB, nothing, a signal: each a
# denial whose reason says which.
test_reviewer_junk_denies() {
	local body want
	while IFS='@' read -r body want; do
		ar_reviewer junk "$body"
		ar_profile 'approve timeout 20' "approve command $RV"
		wsh "$AR_CURL" -p "$PROF"
		assert_out_eq 403 "reviewer '$body'"
		ar_expect_answer deny reviewer "$want"
	done <<'EOF'
echo 'yes, allow it'@its output is not JSON
echo '{"decision":"maybe"}'@decision .maybe. is none of allow, deny, ask
echo '{"decision":"allow"} {"decision":"allow"}'@its output is not JSON
echo '{"decision":"allow","reason":7}'@is not a string
yes | head -c 70000; echo '{"decision":"allow"}'@printed more than 64 KiB
true@no answer on its output
kill -TERM $$@killed by signal 15 \(SIGTERM\)
EOF
}

# `ask`: the question goes to the humans; `warden approve ID allow`, from
# another process, answers it.
test_reviewer_ask_then_human() {
	ar_reviewer ask 'echo "{\"decision\":\"ask\",\"reason\":\"a human should see this\"}"'
	ar_profile 'approve timeout 20' "approve command $RV"
	warden_bg "$T_TMP/bg.out" -p "$PROF" -- sh -c "$AR_CURL"
	ar_question_id
	"$WARDEN" approve "$QID" allow >"$T_TMP/approve.out" 2>&1 || fail "warden approve $QID allow: $(<"$T_TMP/approve.out")"
	ar_wait_bg "$T_TMP/bg.out"
	assert_out_eq 502 'allowed by a human after the reviewer asked'
	ar_expect_answer allow approve
	grep -E '"phase":"reviewed"' <<<"$EV" | grep -F '"by":"reviewer"' >/dev/null ||
		fail "no 'reviewed' step by the reviewer: $(excerpt "$EV")"
}

# Twelve questions at once: one reviewer each, at most eight running (the
# others wait their turn), every one answered.
test_reviewer_bounded() {
	ar_reviewer many 'mkdir -p "$0.live"; touch "$0.live/$$"; ls "$0.live" | wc -l >>"$0.counts"; sleep 1; rm -f "$0.live/$$"; echo "{\"decision\":\"allow\"}"'
	ar_profile 'approve timeout 20' "approve command $RV"
	wsh "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do $AR_CURL & done; wait" -p "$PROF"
	if [[ $(grep -c '^502$' <<<"$OUT") != 12 ]]; then
		# what refused the others: an answer that was not allow, an alert
		local codes=$OUT
		ar_events approval
		local odd
		odd=$(grep '"phase":"answered"' <<<"$EV" | grep -v '"decision":"allow"')
		wardenc log show --event alert --json
		fail "expected 12 connections allowed: $(excerpt "$codes"); answers not allow: $(excerpt "$odd"); alerts: $(excerpt "$OUT")"
	fi
	local runs max
	runs=$(wc -l <"$RV.counts" 2>/dev/null)
	max=$(sort -n "$RV.counts" 2>/dev/null | tail -n 1)
	[[ $runs == 12 ]] || fail "expected 12 reviewer runs, saw ${runs:-none}"
	((max <= 8)) || fail "$max reviewers ran at once (at most 8)"
	((max >= 4)) || fail "the reviewers did not run side by side (at most $max at once)"
}

# exec ask argv: the reviewer is given the exec's question (kind exec, its
# argv in the subject) and allows one and denies the other.
test_reviewer_exec() {
	ar_reviewer execs 'if grep -q "touch good" "$0.q"; then echo "{\"decision\":\"allow\"}"; else echo "{\"decision\":\"deny\",\"reason\":\"bad file\"}"; fi'
	ar_profile 'approve timeout 20' "approve command $RV" 'exec ask argv touch *'
	wsh 'touch good; touch bad; echo finished' -p "$PROF"
	assert_out_has finished
	[[ -e $WS/good ]] || fail 'the exec the reviewer allowed did not run'
	[[ ! -e $WS/bad ]] || fail 'the exec the reviewer denied ran'
	ar_events approval
	grep '"phase":"answered"' <<<"$EV" | grep -F '"kind":"exec"' | grep -F '"by":"reviewer"' >/dev/null ||
		fail "no exec question answered by the reviewer: $(excerpt "$EV")"
	grep -qE '"kind":"exec".*"subject":"sha256:[0-9a-f]{64} touch bad @' "$RV.q" ||
		fail "the reviewer's last question is not the exec's (sha256, argv, cwd): $(excerpt "$(cat "$RV.q")")"
}

# A reviewer the agent could rewrite (in the workspace) is refused before
# the session starts.
test_reviewer_in_workspace_refused() {
	printf '#!/bin/sh\necho "{\\"decision\\":\\"allow\\"}"\n' >"$WS/judge.sh"
	chmod 0755 "$WS/judge.sh"
	ar_profile "approve command $WS/judge.sh"
	wsh 'echo ran' -p "$PROF"
	assert_rc 125
	assert_out_lacks ran
	assert_err_match 'approve command: .*judge.sh is where the agent can write'
}

# ---- the webhook --------------------------------------------------------

# The webhook gets the question and the command that answers it; that
# command answers it. The URL's path (a token, for chats) is never logged.
test_webhook_delivers() {
	ar_server hook
	ar_profile 'approve timeout 20' "approve webhook http://127.0.0.1:$WH_PORT/hooks/tok-secret-path?x=1"
	warden_bg "$T_TMP/bg.out" -p "$PROF" -- sh -c "$AR_CURL"
	wait_for "$WH_POSTS" 'approval.asked' 10 || fatal "the webhook got no POST: $(excerpt "$(cat "$T_TMP/hook.out")")"
	local cmd
	nh_python
	cmd=$("$NH_PY" -c '
import json, sys
b = json.loads(open(sys.argv[1]).readline())
q = b["question"]
assert q["kind"] == "net" and q["subject"] == "example.invalid:80", b
assert b["session"].endswith(q["id"].split("-")[0]), b
assert b["answer"]["deny"] == "warden approve %s deny" % q["id"], b
assert "warden approve %s allow" % q["id"] in b["text"], b
print(b["answer"]["allow"])' "$WH_POSTS" 2>"$T_TMP/py.err") || fail "the webhook's body: $(excerpt "$(<"$T_TMP/py.err")")"
	[[ $cmd == "warden approve "*" allow" ]] || fatal "no answer command in the webhook's body: '$cmd'"
	[[ $(<"$T_TMP/hook.paths") == "/hooks/tok-secret-path?x=1" ]] || fail "the POST's path: $(<"$T_TMP/hook.paths")"
	# the command as a human runs it, this build's warden for "warden"
	read -ra argv <<<"$cmd"
	"$WARDEN" "${argv[@]:1}" >"$T_TMP/approve.out" 2>&1 || fail "$cmd: $(<"$T_TMP/approve.out")"
	ar_wait_bg "$T_TMP/bg.out"
	assert_out_eq 502 'allowed by the command the webhook received'
	ar_expect_answer allow approve
	ar_events alert
	[[ $EV != *approval.webhook-failed* ]] || fail "a delivered question raised an alert: $(excerpt "$EV")"
	grep -rqF tok-secret-path "$HOME/.local/state/warden/" && fail "the webhook's path is in warden's logs"
	return 0
}

# A webhook that answers 500, or that nobody listens on: an alert, and the
# question is still `warden approve`'s to answer.
test_webhook_failure_alerts() {
	ar_server fail500 --status 500
	local url port
	# a port nobody listens on: one the kernel gave and took back
	port=$("$NH_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	for url in "http://127.0.0.1:$WH_PORT/hook" "http://127.0.0.1:$port/nobody"; do
		ar_profile 'approve timeout 20' "approve webhook $url"
		warden_bg "$T_TMP/bg.out" -p "$PROF" -- sh -c "$AR_CURL"
		ar_question_id
		# the alert comes while the question is open
		local i
		for ((i = 0; i < 50; i++)); do
			wardenc log show --event alert --json
			[[ $OUT == *approval.webhook-failed* ]] && break
			sleep 0.1
		done
		[[ $OUT == *approval.webhook-failed* ]] || fail "$url: no approval.webhook-failed alert while the question is open"
		if [[ $url == *nobody ]]; then
			[[ $OUT == *'cannot connect to 127.0.0.1'* ]] || fail "$url: the alert does not say the connection failed: $(excerpt "$OUT")"
		else
			[[ $OUT == *'the server answered 500'* ]] || fail "$url: the alert does not say 500: $(excerpt "$OUT")"
		fi
		[[ $OUT != *'/hook'* && $OUT != *'/nobody'* ]] || fail "$url: the alert holds the URL's path"
		"$WARDEN" approve "$QID" allow >"$T_TMP/approve.out" 2>&1 || fail "$url: warden approve $QID allow: $(<"$T_TMP/approve.out")"
		ar_wait_bg "$T_TMP/bg.out"
		assert_out_eq 502 "$url: still answerable by warden approve"
		ar_expect_answer allow approve
	done
	[[ -s $T_TMP/fail500.posts ]] || fail 'the 500 server got no POST'
}

# https: a server whose certificate a throwaway CA signed is refused (the
# CA is not in the system's store): an alert, nothing posted, the question
# answerable. Given that CA by SSL_CERT_DIR (OpenSSL's own variable, for
# the supervisor only), the delivery is verified and made.
test_webhook_https_verified() {
	nh_need openssl
	nh_ca "$T_TMP/ca" "warden webhook test CA $$"
	nh_cert_signed "$T_TMP/tls" 127.0.0.1 IP:127.0.0.1 "$T_TMP/ca"
	ar_server tls --tls "$T_TMP/tls/cert.pem" "$T_TMP/tls/key.pem"
	ar_profile 'approve timeout 20' "approve webhook https://127.0.0.1:$WH_PORT/hook"
	# not trusted
	warden_bg "$T_TMP/bg.out" -p "$PROF" -- sh -c "$AR_CURL"
	ar_question_id
	local i
	for ((i = 0; i < 50; i++)); do
		wardenc log show --event alert --json
		[[ $OUT == *approval.webhook-failed* ]] && break
		sleep 0.1
	done
	[[ $OUT == *'certificate verify failed'* ]] || fail "an untrusted certificate: no alert saying so: $(excerpt "$OUT")"
	"$WARDEN" approve "$QID" deny >"$T_TMP/approve.out" 2>&1 || fail "warden approve $QID deny: $(<"$T_TMP/approve.out")"
	ar_wait_bg "$T_TMP/bg.out"
	assert_out_eq 403 'denied by warden approve after the webhook failed'
	[[ ! -s $WH_POSTS ]] || fail "the server whose certificate is not trusted got the question: $(excerpt "$(<"$WH_POSTS")")"
	# trusted through SSL_CERT_DIR: a directory of the CA alone, hashed
	mkdir -p "$T_TMP/certs"
	cp "$T_TMP/ca/ca.pem" "$T_TMP/certs/"
	ln -s ca.pem "$T_TMP/certs/$(openssl x509 -hash -noout -in "$T_TMP/ca/ca.pem").0"
	SSL_CERT_DIR=$T_TMP/certs warden_bg "$T_TMP/bg.out" -p "$PROF" -- sh -c "$AR_CURL"
	wait_for "$WH_POSTS" 'approval.asked' 10 || fail "the trusted https webhook got no POST: $(excerpt "$(cat "$T_TMP/tls.out")")"
	ar_question_id
	"$WARDEN" approve "$QID" allow >"$T_TMP/approve.out" 2>&1 || fail "warden approve $QID allow: $(<"$T_TMP/approve.out")"
	ar_wait_bg "$T_TMP/bg.out"
	assert_out_eq 502 'allowed after a verified delivery'
	wardenc log show --event alert --json
	[[ $OUT != *approval.webhook-failed* ]] || fail "a verified delivery raised an alert: $(excerpt "$OUT")"
}

# ---- what the agent can reach -------------------------------------------

# Inside, nothing answers: the control socket's host path does not exist
# (its directory is not in the sandbox), the webhook's port is the host's
# (the sandbox's loopback is its own; the proxy refuses it), the reviewer
# is no process of the sandbox. The question, handed to the humans by the
# reviewer and posted to the webhook, ends by its timeout.
test_agent_cannot_answer() {
	nh_python
	ar_server inside
	ar_reviewer pass 'echo "{\"decision\":\"ask\"}"'
	ar_profile 'approve timeout 4' "approve command $RV" "approve webhook http://127.0.0.1:$WH_PORT/hook"
	cat >"$WS/reach.py" <<'PY'
import socket, sys
def attempt(what, fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(addr)
        print(what, 'CONNECTED')
    except OSError as e:
        print(what, 'REFUSED', type(e).__name__)
attempt('control', socket.AF_UNIX, open('sockpath').read().strip())
attempt('webhook', socket.AF_INET, ('127.0.0.1', int(sys.argv[1])))
PY
	warden_bg "$T_TMP/bg.out" -p "$PROF" -- sh -c "
		while [ ! -f go ]; do sleep 0.05; done
		/usr/bin/python3 reach.py $WH_PORT
		curl -s --noproxy '' -o /dev/null -w 'viaproxy %{http_code}\n' -m 10 -x http://127.0.0.1:3128 http://127.0.0.1:$WH_PORT/hook
		$AR_CURL"
	local i sock='' socks
	for ((i = 0; i < 100; i++)); do
		socks=("$(control_dir)"/*.sock)
		[[ -S ${socks[0]} ]] && sock=${socks[0]} && break
		sleep 0.05
	done
	[[ -n $sock ]] || fatal 'no control socket on the host'
	printf '%s\n' "$sock" >"$WS/sockpath"
	touch "$WS/go"
	ar_wait_bg "$T_TMP/bg.out"
	assert_out_match '^control REFUSED (FileNotFoundError|ConnectionRefusedError|PermissionError)' 'the control socket from inside'
	assert_out_match '^webhook REFUSED' "the webhook's port from inside"
	assert_out_line 'viaproxy 403' "the webhook's port through the proxy"
	assert_out_line 403 'the question, with nobody to answer it'
	ar_expect_answer deny timeout
	wait_for "$WH_POSTS" 'approval.asked' 1 || fail 'the webhook on the host got no question'
	grep -qF "$(basename "$sock" .sock)" "$WH_POSTS" || fail "the webhook's question is not this session's"
}
