# t_secrets.sh - secrets by reference, from the outside: a value named with
# --secret never enters the sandbox (the variable holds a phantom of the
# same shape; `env`, /proc/*/environ and files inside lack the real value),
# warden's proxy puts the real value in request headers toward the bound
# host only (HTTPS it terminated with the session CA, verified upstream; or
# plain HTTP on the host's loopback), and the phantom anywhere else (an
# unbound host, a URL, a body, a clear stream) is refused and alerted; over
# HTTP/1.1 and HTTP/2 (a server that offers h2 gets it, and so does curl
# inside). The
# HTTPS server runs in a network namespace of the test's own, behind a name
# in /etc/hosts (root); the loopback cases run unprivileged too.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"
SECRETS_SERVER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/secrets_server.py

REAL=tok-live-0123456789abcdefghijklmnopqrstuv

# srv_start NAME [OPTION...]: the secrets server (in the test namespace when
# SRV_NS is set); sets SRV_PORT and SRV_LOG.
srv_start() {
	local name=$1 pre=() pid
	shift
	nh_python
	[[ -n ${SRV_NS:-} ]] && pre=(ip netns exec "$SRV_NS")
	SRV_LOG=$T_TMP/$name.log
	: >"$SRV_LOG"
	"${pre[@]}" "$NH_PY" "$SECRETS_SERVER" --port-file "$T_TMP/$name.port" --log "$SRV_LOG" "$@" \
		>"$T_TMP/$name.out" 2>&1 &
	pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/$name.port" '^[0-9]+$' 10 || fatal "server $name did not start: $(excerpt "$(cat "$T_TMP/$name.out")")"
	SRV_PORT=$(<"$T_TMP/$name.port")
}

# The bound host: an HTTPS server at a name in the test's namespace, its
# certificate from a test CA that warden is told of the way a user's
# company CA would be (NODE_EXTRA_CA_CERTS on the host, set by each test).
# Sets HOSTNAME_B, CA, SRV_PORT, SRV_LOG.
bound_https() {
	nh_need_root
	nh_need openssl curl
	nh_netns
	HOSTNAME_B=$(nh_name bound)
	nh_hosts_add "$HOSTNAME_B" "$NH_IP"
	nh_ca "$T_TMP/ca" "warden secrets test CA $$"
	nh_cert_signed "$T_TMP/tls" "$HOSTNAME_B" "DNS:$HOSTNAME_B" "$T_TMP/ca"
	CA=$T_TMP/ca/ca.pem
	SRV_NS=$NH_NS srv_start bound --bind "$NH_IP" --tls-cert "$T_TMP/tls/cert.pem" \
		--tls-key "$T_TMP/tls/key.pem" "$@"
}

# alerts_for SECRET: the session's alert events for SECRET, in ALERTS.
alerts_for() {
	wardenc log show --event alert --json
	ALERTS=$(grep -F "\"secret\":\"$1\"" <<<"${OUT// /}")
}

test_secret_https_bound() {
	bound_https
	local url=https://$HOSTNAME_B:$SRV_PORT
	# shellcheck disable=SC2016 # expanded inside
	# Inside, everything a process could read the value from is printed:
	# the test looks for the value in that output, on the host.
	# (it reads every file it can, the decoy credentials too: the detector
	# only records)
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --profile "$(no_detect_actions)" --secret "MYTOKEN@$HOSTNAME_B" --allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c '
		echo "inside=$MYTOKEN"
		curl -sS -m 20 -H "Authorization: Bearer $MYTOKEN" -H "X-Api-Key: $MYTOKEN" '"$url"'/echo >echo.out
		curl -sS -m 20 --http1.1 -H "Authorization: Bearer $MYTOKEN" '"$url"'/echo
		echo "--- env"; env
		echo "--- environ"; cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n"
		echo "--- files"; find /tmp /home/agent /.warden . -type f 2>/dev/null | grep -v "^./echo.out" |
			while read -r f; do cat "$f" 2>/dev/null; done'
	assert_rc 0
	local inside
	inside=$(sed -n 's/^inside=//p' <<<"$OUT")
	[[ -n $inside && $inside != "$REAL" ]] || fail "inside, MYTOKEN is the real value or empty: '$inside'"
	[[ ${#inside} == "${#REAL}" && $inside == tok-live-* ]] ||
		fail "the phantom is not shaped like the value (same prefix and length): '$inside'"
	# The server got the real value in both headers (its log) ...
	grep -q "\"x-api-key\": \"$REAL\"" "$SRV_LOG" ||
		fail "the server's log lacks the real value in X-Api-Key: $(excerpt "$(<"$SRV_LOG")")"
	# ... and its echo of them reached the sandbox with the phantom again
	assert_host_file "$WS/echo.out" "auth=Bearer $inside key=$inside" 'an echo of the value, masked'
	assert_out_has "auth=Bearer $inside" 'the echo over HTTP/1.1, masked'
	# nothing the sandbox could read holds the real value
	grep -qF "$REAL" <<<"$OUT" &&
		fail "the real value inside (env, /proc/*/environ, a file or a response): $(excerpt "$(grep -F "$REAL" <<<"$OUT" | head -n 3)")"
	grep -qF "$REAL" "$WS/echo.out" && fail "the real value in a response inside"
	grep -q "^MYTOKEN=$inside\$" <<<"$OUT" || fail "env inside lacks MYTOKEN=phantom"
	grep -q "\"authorization\": \"Bearer $REAL\"" "$SRV_LOG" || fail "the server's log lacks the real value"
	# the net event: intercepted, the substitutions named (never the value)
	net_expect 'the intercepted connection' method=CONNECT host="$HOSTNAME_B" port="$SRV_PORT" decision=allow
	wardenc log show --event net --json
	grep -q '"intercepted":true' <<<"${OUT// /}" || fail "no net event says intercepted: $(excerpt "$OUT")"
	grep -q '"secret":"MYTOKEN","header":"Authorization"' <<<"${OUT// /}" ||
		fail "the net event does not name the substitution: $(excerpt "$OUT")"
	grep -q '"secret":"MYTOKEN","response":"masked"' <<<"${OUT// /}" ||
		fail "the net event does not say a response was masked: $(excerpt "$OUT")"
	wardenc log show --json
	assert_out_lacks "$REAL" 'the real value in the audit log'
}

# A tunnel warden terminates (a host a secret is bound to) whose ClientHello
# names another host (SNI): refused before anything goes upstream, a deny
# with both names, as a tunnel it only relays is (warden answered with the
# bound host's certificate whatever the name, and the lie left no trace);
# the bound host's own name, in upper case, passes.
test_secret_sni_other_refused() {
	bound_https
	have openssl || skip 'openssl is not installed'
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --profile "$(no_detect_actions)" --secret "MYTOKEN@$HOSTNAME_B" \
		--allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c "
		echo | openssl s_client -proxy 127.0.0.1:3128 -connect $HOSTNAME_B:$SRV_PORT -servername other.example >/dev/null 2>&1; echo other=\$?
		echo | openssl s_client -proxy 127.0.0.1:3128 -connect $HOSTNAME_B:$SRV_PORT -servername ${HOSTNAME_B^^} >/dev/null 2>&1; echo same=\$?"
	assert_rc 0
	assert_out_line 'same=0' 'the bound host by its own name'
	assert_out_line 'other=1' 'a handshake naming another host was completed'
	wardenc log show --event net --json
	grep -F '"decision":"deny"' <<<"$OUT" | matches -F "TLS asks for other.example (SNI), not $HOSTNAME_B" ||
		fail "no deny naming both hosts: $(excerpt "$OUT")"
	[[ $(grep -c 'GET\|POST' "$SRV_LOG") == 0 ]] || fail "a request reached the server: $(excerpt "$(<"$SRV_LOG")")"
}

test_secret_phantom_refused() {
	bound_https
	local url=https://$HOSTNAME_B:$SRV_PORT
	# an unbound host, allowed, in the clear on the host's loopback
	NH_WHERE=host nh_web other "$T_TMP" 127.0.0.1 0
	local other=$PORT
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --secret "MYTOKEN@$HOSTNAME_B" \
		--allow-net "$HOSTNAME_B:$SRV_PORT private" --allow-net "127.0.0.1:$other" -- sh -c '
		echo "url=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" "'"$url"'/echo?k=$MYTOKEN")"
		echo "bound-body=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" --data "key=$MYTOKEN" "'"$url"'/upload")"
		echo "body=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" --data "key=$MYTOKEN" http://127.0.0.1:'"$other"'/upload)"
		pct=$(printf %s "$MYTOKEN" | od -An -tx1 | tr -d " \n" | sed "s/../%&/g")
		echo "pct-body=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" --data "key=$pct" http://127.0.0.1:'"$other"'/upload)"
		echo "other=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $MYTOKEN" http://127.0.0.1:'"$other"'/)"
		echo "clean=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" http://127.0.0.1:'"$other"'/)"'
	assert_out_lacks 'url=200' 'the phantom in a URL went through'
	# the refusals in the end's list (a warning of the risk score was all
	# the session's terminal said of one sent to an unbound host)
	assert_err_match "^  127\.0\.0\.1:$other.*: the phantom of secret MYTOKEN in the .* which it is not bound to" \
		'the phantom sent to an unbound host in the refusal summary'
	grep -q '^body=200' <<<"$OUT" && fail 'the phantom in a body to an unbound host went through'
	# (refused, the connection ends with no status; reaching the server,
	# whose /upload takes no POST, it was a 501)
	assert_out_line 'pct-body=000' 'the phantom percent-encoded in a body to an unbound host refused'
	# to the bound host a body may hold the phantom (a conversation that
	# quotes the agent's environment): it stays a phantom
	assert_out_has 'bound-body=200' 'a body to the bound host holding the phantom'
	grep -q "\"body\": \"key=$REAL" "$SRV_LOG" && fail "the phantom in a body was replaced by the value"
	assert_out_lacks 'other=200' 'the phantom to an unbound host went through'
	assert_out_has 'clean=200' 'the unbound host without the phantom'
	grep -q "$REAL" "$SRV_LOG" && fail "the real value reached the server in a refused request: $(excerpt "$(<"$SRV_LOG")")"
	alerts_for MYTOKEN
	grep -q '"where":"url"' <<<"$ALERTS" || fail "no alert for the phantom in a URL: $(excerpt "$ALERTS")"
	grep -q '"host":"127.0.0.1","where":"stream"' <<<"$ALERTS" || grep '"where":"stream"' <<<"$ALERTS" >/dev/null ||
		fail "no alert for the phantom in a body to an unbound host: $(excerpt "$ALERTS")"
	grep -q '"rule":"secret.phantom"' <<<"$ALERTS" || fail "alerts lack their rule: $(excerpt "$ALERTS")"
	[[ $(grep -c '"secret":"MYTOKEN"' <<<"$ALERTS") -ge 3 ]] ||
		fail "expected three alerts (url, body, unbound host): $(excerpt "$ALERTS")"
}

test_secret_bad_upstream_cert() {
	bound_https
	# the server's CA is not trusted anywhere: warden refuses the upstream
	MYTOKEN=$REAL wrun --secret "MYTOKEN@$HOSTNAME_B" --allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c \
		'curl -sS -m 20 -o /dev/null -w "code=%{http_code}\n" -H "Authorization: Bearer $MYTOKEN" https://'"$HOSTNAME_B:$SRV_PORT"'/echo'
	assert_out_lacks 'code=200' 'a request to an upstream with an untrusted certificate'
	grep -q "$REAL" "$SRV_LOG" && fail "the real value reached an unverified server"
	wardenc log show --event net --json
	grep -qi 'certificate' <<<"$OUT" || fail "the net event does not name the certificate failure: $(excerpt "$OUT")"
}

# A response that ends in the value's first bytes: warden holds them back
# in case the value follows (to mask it whole), but never past the end of
# the response, which reaches the client at once while the server keeps
# the connection open (it hung until the server's idle timeout before).
# Two requests on one connection.
test_secret_response_tail() {
	bound_https
	local url=https://$HOSTNAME_B:$SRV_PORT
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --secret "MYTOKEN@$HOSTNAME_B" --allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c '
		start=$(printf %s "$MYTOKEN" | cut -c1-6)
		curl -sS -m 10 -H "X-Tail: $start" -w " code=%{http_code} connects=%{num_connects}\n" '"$url/tail $url/tail"
	assert_rc 0
	[[ $(grep -c '^tok-li code=200 ' <<<"$OUT") == 2 ]] ||
		fail "the two responses ending in the value's start did not both arrive: $(excerpt "$OUT")"
	assert_out_has 'connects=0' 'the second request on the same connection'
}

# A bound host that quotes the credentials back, as they came and encoded
# (base64, URL-safe base64 unpadded, hex in both cases: the value at each
# of base64's three alignments), its body in pieces of 1 to 11 bytes, each
# its own TLS record (or HTTP/2 DATA frame when python3-h2 is there), so
# that forms are split across reads: what the agent reads holds its phantom
# in every form and the real value in none, Basic credentials that warden
# itself encoded with the value included. A TLS server on the host's
# loopback, so that the test runs unprivileged too. The agent's
# Accept-Encoding reaches the server as identity.
test_secret_mask_encoded() {
	nh_python
	nh_need openssl curl
	nh_ca "$T_TMP/ca" "warden mask test CA $$"
	nh_cert_signed "$T_TMP/tls" 127.0.0.1 IP:127.0.0.1 "$T_TMP/ca"
	local h2=() url
	"$NH_PY" -c 'import h2' 2>/dev/null && h2=(--h2)
	srv_start lo --bind 127.0.0.1 --tls-cert "$T_TMP/tls/cert.pem" --tls-key "$T_TMP/tls/key.pem" "${h2[@]}"
	url=https://127.0.0.1:$SRV_PORT/echo-enc
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem wrun --secret "MYTOKEN@127.0.0.1:$SRV_PORT" \
		--allow-net "127.0.0.1:$SRV_PORT" -- sh -c '
		echo "inside=$MYTOKEN"
		for v in --http1.1 --http2; do
			echo "== $v bearer"
			curl -sS -m 20 --noproxy "" -x "$HTTPS_PROXY" $v -H "Authorization: Bearer $MYTOKEN" \
				-H "X-Api-Key: $MYTOKEN" -H "Accept-Encoding: gzip" "$1" || echo "curl failed: $?"
			echo "== $v basic"
			curl -sS -m 20 --noproxy "" -x "$HTTPS_PROXY" $v -u "user:$MYTOKEN" "$1" || echo "curl failed: $?"
		done' sh "$url"
	assert_rc 0
	assert_out_lacks 'curl failed'
	[[ $(grep -c "\"x-api-key\": \"$REAL\"" "$SRV_LOG") == 2 ]] ||
		fail "the server did not get the real value in both bearer requests: $(excerpt "$(<"$SRV_LOG")")"
	# every form decoded once: the phantom, never the value
	local verdict
	printf '%s\n' "$OUT" >"$T_TMP/inside.out"
	verdict=$("$NH_PY" - "$REAL" "$T_TMP/inside.out" 2>&1 <<'EOF_PY'
import base64, sys
real = sys.argv[1].encode()
lines = open(sys.argv[2]).read().splitlines()
phantom = [l[7:] for l in lines if l.startswith("inside=")][0].encode()
decode = {"b64": base64.b64decode, "HEX": bytes.fromhex, "hex": bytes.fromhex,
          "b64url": lambda v: base64.urlsafe_b64decode(v + "=" * (-len(v) % 4))}
bad, seen, ae = [], 0, []
for line in lines:
    name, eq, v = line.partition("=")
    if not name or not eq or name == "inside":
        continue
    if name == "accept-encoding":
        ae.append(v)
        continue
    form = name.partition("-")[2]
    if form:
        d = decode[form](v)
    elif v.startswith("Basic "):
        d = base64.b64decode(v[6:])
    else:
        d = v.encode()
    if d == b"-":  # no such header
        continue
    seen += 1
    if real in d or phantom not in d:
        bad.append("%s=%s -> %r" % (name, v, d))
print("seen=%d" % seen)
print("accept-encoding=%s" % ",".join(ae))
for b in bad:
    print("LEAK " + b)
EOF_PY
)
	printf '%s\n' "$verdict"
	matches -x 'seen=30' <<<"$verdict" || fail "not every form came back: $(excerpt "$verdict")"
	matches '^LEAK' <<<"$verdict" && fail "the real value, or no phantom, in: $(excerpt "$(grep '^LEAK' <<<"$verdict")")"
	matches -x 'accept-encoding=identity,-,identity,-' <<<"$verdict" ||
		fail "Accept-Encoding did not reach the server as identity: $(excerpt "$verdict")"
	wardenc log show --event net --json
	grep -q '"secret":"MYTOKEN","response":"masked"' <<<"${OUT// /}" ||
		fail "the net event does not count the masking: $(excerpt "$OUT")"
	return 0
}

test_secret_git_clone() {
	nh_need git
	nh_git_repo "$T_TMP/repo.git" "GIT-TOKEN-$$"
	bound_https --repo "$T_TMP/repo.git" --token "$REAL"
	# shellcheck disable=SC2016 # expanded inside
	GITTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --secret "GITTOKEN@$HOSTNAME_B" --allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c \
		'GIT_TRACE_CURL=$PWD/.curl-trace GIT_TRACE_CURL_NO_DATA=1 git clone -q "https://x:$GITTOKEN@'"$HOSTNAME_B:$SRV_PORT"'/repo.git" cloned && cat cloned/token.txt'
	assert_out_line "GIT-TOKEN-$$" 'the clone has the repository'
	if [[ $RC != 0 ]]; then
		# what each side saw, for a failure that does not repeat: the
		# server's stderr and its requests (method, path, whether they
		# carried the value), git's own trace of its last exchanges
		# (headers only, Authorization redacted by git), warden's events
		local srv_err srv_reqs git_trace rc=$RC
		srv_err=$(<"$T_TMP/bound.out")
		srv_reqs=$("$NH_PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); a = r["headers"].get("Authorization", r["headers"].get("authorization", ""))
    print(r["method"], r["path"], "auth=" + ("value" if sys.argv[2] in a else "other" if a else "none"))' "$SRV_LOG" "$REAL" 2>&1)
		git_trace=$(grep -E '^[0-9:.]+ http.c:[0-9]+ +(=> Send header: (GET|HEAD|POST)|<= Recv header: HTTP|== Info: (Re-using|Connected|Connection|Closing|Operation|Recv failure|Send failure|Found|Issue|Server auth))' \
			"$WS/.curl-trace" 2>/dev/null | tail -n 16)
		printf -- '--- the server saw\n%s\n--- git saw (last exchanges)\n%s\n' "$srv_reqs" "$git_trace"
		wardenc log show --event net
		fail "git clone with a bound token: rc $rc; the server said: $(excerpt "$srv_err"); it saw: $(excerpt "$(tail -n 4 <<<"$srv_reqs")"); git saw last: $(excerpt "$(tail -n 6 <<<"$git_trace")"); warden's last net events: $(tail -n 4 <<<"$OUT")"
	fi
}

test_secret_sse_streams() {
	bound_https
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --secret "MYTOKEN@$HOSTNAME_B" --allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c \
		'curl -sS -N -m 20 -H "Authorization: Bearer $MYTOKEN" https://'"$HOSTNAME_B:$SRV_PORT"'/sse |
		 while IFS= read -r line; do [ -n "$line" ] && echo "$line got=$(date +%s.%N)"; done; true'
	assert_rc 0
	# the first event was read before the last was written: not buffered
	assert_streamed '^data: one' '^data: three' || exit 1
	local first_sent
	first_sent=$(awk '/^data: one/ { print $3 }' <<<"$OUT")
	[[ -n $first_sent ]] || fail "the first event lacks its time stamp: $(excerpt "$OUT")"
}

# HTTP/2 end to end: the server offers h2, so warden takes it upstream and
# answers h2 to curl inside (it prefers h2 when offered): the value in the
# headers the server gets, the echo masked, a body holding the phantom
# left as it is, and a streamed response event by event.
test_secret_https_h2() {
	nh_python
	"$NH_PY" -c 'import h2' 2>/dev/null || skip 'python3-h2 is not installed (scripts/deps)'
	bound_https --h2
	local url=https://$HOSTNAME_B:$SRV_PORT
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL NODE_EXTRA_CA_CERTS=$CA wrun --secret "MYTOKEN@$HOSTNAME_B" --allow-net "$HOSTNAME_B:$SRV_PORT private" -- sh -c '
		echo "inside=$MYTOKEN"
		curl -sS -m 20 -w "version=%{http_version}\n" -H "Authorization: Bearer $MYTOKEN" -H "X-Api-Key: $MYTOKEN" '"$url"'/echo
		echo "upload=$(curl -sS -m 20 -o /dev/null -w "%{http_version} %{http_code}" --data "key=$MYTOKEN" '"$url"'/upload)"
		curl -sS -N -m 20 '"$url"'/sse |
			while IFS= read -r line; do [ -n "$line" ] && echo "$line got=$(date +%s.%N)"; done; true'
	assert_rc 0
	local inside
	inside=$(sed -n 's/^inside=//p' <<<"$OUT")
	[[ -n $inside && $inside != "$REAL" ]] || fail "inside, MYTOKEN is the real value or empty: '$inside'"
	assert_out_has 'version=2' 'curl inside speaking HTTP/2 to warden'
	grep "\"authorization\": \"Bearer $REAL\"" "$SRV_LOG" | grep '"version": "2"' >/dev/null ||
		fail "the server did not get the real value over HTTP/2: $(excerpt "$(<"$SRV_LOG")")"
	grep -q "\"x-api-key\": \"$REAL\"" "$SRV_LOG" || fail "the server's log lacks the real value in x-api-key"
	assert_out_has "auth=Bearer $inside key=$inside" 'the echo over HTTP/2, masked'
	assert_out_lacks "$REAL" 'the real value inside (or in the echo)'
	assert_out_has 'upload=2 200' 'a body over HTTP/2 to the bound host'
	grep -q "\"body\": \"key=$inside\"" "$SRV_LOG" || fail "the body did not reach the server as sent"
	assert_streamed '^data: one' '^data: three' || exit 1
	wardenc log show --event net --json
	grep -qi '"secret":"MYTOKEN","header":"authorization"' <<<"${OUT// /}" ||
		fail "the net event does not name the substitution: $(excerpt "$OUT")"
}

# Plain HTTP on the host's loopback: the value put in (no TLS needed there),
# unprivileged too.
test_secret_loopback_plain() {
	nh_python
	srv_start lo --bind 127.0.0.1
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL wrun --secret "MYTOKEN@127.0.0.1:$SRV_PORT" --allow-net "127.0.0.1:$SRV_PORT" -- sh -c \
		'echo "inside=$MYTOKEN"; curl -sS -m 10 -H "X-Api-Key: $MYTOKEN" http://127.0.0.1:'"$SRV_PORT"'/echo'
	assert_rc 0
	grep -q "\"x-api-key\": \"$REAL\"" "$SRV_LOG" || fail "the server on the loopback port lacks the real value"
	assert_out_lacks "$REAL" 'the real value inside (or in the echo)'
	wardenc log show --event net --json
	grep -q '"secret":"MYTOKEN","header":"X-Api-Key"' <<<"${OUT// /}" ||
		fail "the net event does not name the substitution: $(excerpt "$OUT")"
	# the session CA's key was never written, and its trust store is gone
	local written
	written=$(grep -rlE 'BEGIN (EC )?PRIVATE KEY' "$HOME/.cache" "$HOME/.local" "$WS" 2>/dev/null)
	[[ -z $written ]] || fail "a private key on disk after the session: $written"
	[[ -z $(find "$HOME/.cache/warden/trust" -type f 2>/dev/null) ]] ||
		fail "the session's trust store outlived it: $(find "$HOME/.cache/warden/trust" -type f)"
	grep -rqF "$REAL" "$HOME/.cache" "$HOME/.local" 2>/dev/null &&
		fail "the real value written under warden's directories"
	return 0
}

# A plain absolute-form request through warden's proxy to a loopback host
# a secret is bound to (a client that ignores NO_PROXY, or one that means
# to): refused with a 403 saying where to go, nothing reaching the server.
# It was substituted and its answer relayed unread: a server that reflects
# its request gave the agent the real value, TRACE included.
test_secret_loopback_via_proxy_refused() {
	nh_python
	srv_start lo --bind 127.0.0.1
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL wrun --secret "MYTOKEN@127.0.0.1:$SRV_PORT" --allow-net "127.0.0.1:$SRV_PORT" -- python3 -c '
import os, socket, sys
k = os.environ["MYTOKEN"].encode()
for m in (b"GET", b"TRACE"):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(m + b" http://127.0.0.1:" + sys.argv[1].encode() + b"/echo HTTP/1.1\r\nHost: 127.0.0.1:"
              + sys.argv[1].encode() + b"\r\nX-Api-Key: " + k + b"\r\n\r\n")
    got = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    print(got.decode("latin-1"))' "$SRV_PORT"
	assert_rc 0
	assert_out_lacks "$REAL" 'the real value came back through the proxy'
	[[ $(grep -c '^HTTP/1.1 403 plain HTTP through warden' <<<"$OUT") == 2 ]] ||
		fail "not refused twice: $(excerpt "$OUT")"
	[[ ! -s $SRV_LOG ]] || fail "the server got something: $(excerpt "$(<"$SRV_LOG")")"
}

# HTTPS straight to a host loopback port bound to a secret (NO_PROXY
# sends a client there): warden reads that port as plain HTTP, so the
# handshake is refused with a reason that says so and what to do, a deny
# (it was an allow, "malformed request: NUL byte in request head", and the
# client's "wrong version number"); nothing reaches the server.
test_secret_loopback_tls_said() {
	nh_python
	srv_start lo --bind 127.0.0.1
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$REAL wrun --secret "MYTOKEN@127.0.0.1:$SRV_PORT" --allow-net "127.0.0.1:$SRV_PORT" -- sh -c \
		'curl -sS -m 10 -k -H "X-Api-Key: $MYTOKEN" https://127.0.0.1:'"$SRV_PORT"'/echo; echo "rc=$?"'
	assert_out_lacks 'rc=0' 'the TLS request went through'
	wardenc log show --event net --json
	grep -F '"decision":"deny"' <<<"$OUT" | matches -F 'TLS on a connection warden reads as plain HTTP' ||
		fail "no deny saying why: $(excerpt "$OUT")"
	[[ ! -s $SRV_LOG ]] || fail "the server got something: $(excerpt "$(<"$SRV_LOG")")"
}

# The session's trust store (warden's cache, public certificates only)
# after warden was killed: left, and removed by the next session that makes
# one; a store of a session still running is not touched.
test_secret_trust_store_stale() {
	nh_python
	srv_start lo --bind 127.0.0.1
	local trust=$HOME/.cache/warden/trust
	MYTOKEN=$REAL warden_bg "$T_TMP/a.out" --secret "MYTOKEN@127.0.0.1:$SRV_PORT" -- sh -c 'echo ready; sleep 60'
	wait_for "$T_TMP/a.out" '^ready' 20 || fatal "the first session did not start: $(excerpt "$(cat "$T_TMP/a.out.err")")"
	local killed
	killed=$(find "$trust" -name '*.pem' 2>/dev/null)
	[[ -n $killed ]] || fatal "no trust store while the session runs: $(ls -la "$trust" 2>&1)"
	kill -KILL "$WPID"
	wait "$TPID" 2>/dev/null
	[[ -e $killed ]] || fatal 'SIGKILL left no store to remove (the test would prove nothing)'
	MYTOKEN=$REAL warden_bg "$T_TMP/b.out" --secret "MYTOKEN@127.0.0.1:$SRV_PORT" -- sh -c 'echo ready; sleep 60'
	wait_for "$T_TMP/b.out" '^ready' 20 || fatal "the second session did not start: $(excerpt "$(cat "$T_TMP/b.out.err")")"
	local live
	live=$(find "$trust" -name '*.pem' 2>/dev/null)
	[[ ! -e $killed ]] || fail "the killed session's trust store is still there: $killed"
	[[ -n $live ]] || fail 'the running session has no trust store'
	MYTOKEN=$REAL wrun --secret "MYTOKEN@127.0.0.1:$SRV_PORT" -- true
	assert_rc 0 'a third session'
	[[ -e $live ]] || fail "a running session's trust store was removed by another session: $live"
	kill -TERM "$WPID"
	wait "$TPID" 2>/dev/null
	[[ -z $(find "$trust" -name '*.pem' 2>/dev/null) ]] || fail "stores left: $(ls "$trust")"
}

# The phantom's end: the same last 20 characters in every session for the
# same value (so Claude Code keeps a key the user approved by its end), the
# rest new each session, the end not the value's; the key behind it in
# warden's data directory, 0600, out of the sandbox's sight; and no stable
# end when that key would be in sight (XDG_DATA_HOME in the workspace).
test_secret_phantom_end() {
	local long=sk-ant-api03-$(printf 'Zq8xV3%.0s' {1..13})Kw0-tailOfTheRealKey_xyz1
	local key=${XDG_DATA_HOME:-$HOME/.local/share}/warden/phantom-key
	local a b
	# shellcheck disable=SC2016 # expanded inside
	MYKEY=$long wrun --secret "MYKEY@127.0.0.1:9" -- sh -c 'echo "p=$MYKEY"; cat "$1" >/dev/null 2>&1 && echo KEY-READ; true' sh "$key"
	assert_rc 0
	assert_out_lacks KEY-READ 'the tail key read inside'
	a=$(sed -n 's/^p=//p' <<<"$OUT")
	# shellcheck disable=SC2016 # expanded inside
	MYKEY=$long wrun --secret "MYKEY@127.0.0.1:9" -- sh -c 'echo "p=$MYKEY"'
	b=$(sed -n 's/^p=//p' <<<"$OUT")
	[[ ${#a} == "${#long}" && ${#b} == "${#long}" ]] || fatal "phantoms of the wrong length: '$a' '$b'"
	[[ $a != "$b" ]] || fail "two sessions, one phantom: $a"
	[[ ${a: -20} == "${b: -20}" ]] || fail "the ends differ between sessions: ${a: -20} ${b: -20}"
	[[ ${a: -20} != "${long: -20}" ]] || fail "the phantom ends like the real value"
	[[ $a == sk-ant-api03-* ]] || fail "the phantom lost its prefix: $a"
	[[ -f $key && $(stat -c %a "$key") == 600 && $(stat -c %s "$key") == 32 ]] ||
		fail "the tail key: $(ls -l "$key" 2>&1)"
	# the key where the sandbox would see it: no stable end, said (no
	# checkpoint: its store would be in the workspace too, which is refused)
	mkdir -p "$WS/data"
	printf 'checkpoint off\n' >"$T_TMP/nockpt.profile"
	# shellcheck disable=SC2016 # expanded inside
	MYKEY=$long XDG_DATA_HOME=$WS/data wrun --profile "$T_TMP/nockpt.profile" --secret "MYKEY@127.0.0.1:9" -- sh -c 'echo "p=$MYKEY"'
	assert_rc 0
	assert_err_match "phantom-key would be in the sandbox's sight \\(the workspace\\)" 'the note'
	b=$(sed -n 's/^p=//p' <<<"$OUT")
	[[ -n $b && ${a: -20} != "${b: -20}" ]] || fail "a stable end with the key in sight: $b"
	[[ ! -e $WS/data/warden/phantom-key ]] || fail "the key was made in the workspace"
}

test_secret_password_keeps_nothing() {
	# A password or a passphrase as a secret: its phantom keeps none of it
	# (the prefix kept for a vendor's token, sk-ant-api03-, used to take
	# "correct-horse-" and "admin_2024_" inside).
	# shellcheck disable=SC2016 # expanded inside
	DBPASS=correct-horse-battery-staple PW2='admin_2024_Winter-Sunshine!' \
		wrun --secret DBPASS@127.0.0.1:9 --secret PW2@127.0.0.1:9 -- sh -c 'echo "a=$DBPASS"; echo "b=$PW2"'
	assert_rc 0
	local a b
	a=$(sed -n 's/^a=//p' <<<"$OUT")
	b=$(sed -n 's/^b=//p' <<<"$OUT")
	[[ ${#a} == 28 && ${#b} == 27 ]] || fatal "phantoms of the wrong length: '$a' '$b'"
	[[ $a != correct* && $a != *staple && $a != *horse* && $a != *battery* ]] ||
		fail "the passphrase's phantom holds a part of it: $a"
	[[ $b != admin* && $b != *2024* && $b != *Sunshine* ]] || fail "the password's phantom holds a part of it: $b"
}

test_secret_bad_input() {
	unset MISSING_TOKEN
	wrun --secret MISSING_TOKEN@example.com -- sh -c 'echo started'
	assert_rc 125 'a secret whose variable is unset'
	assert_err_match 'MISSING_TOKEN' 'the error names the secret'
	assert_out_eq '' 'nothing ran'
	EMPTY_TOKEN='' wrun --secret EMPTY_TOKEN@example.com -- true
	assert_rc 125 'an empty secret'
	X=$REAL wrun --secret 'X@*.com' -- true
	assert_rc 125 'a host wider than one registrable domain'
	X=$REAL wrun --secret X -- true
	assert_rc 125 'a secret with no host'
	# sources in a profile: a command that fails, one that hangs, a FIFO
	printf 'secret X host example.com command false\n' >"$T_TMP/f.profile"
	wrun --profile "$T_TMP/f.profile" -- true
	assert_rc 125 'a command source that fails'
	assert_err_match 'X' 'the error names the secret'
	printf 'secret X host example.com command sleep 60\n' >"$T_TMP/h.profile"
	local t0=$SECONDS
	wrun --profile "$T_TMP/h.profile" -- true
	assert_rc 125 'a command source that hangs'
	assert_err_match 'timed out' 'the error says it timed out'
	((SECONDS - t0 < 30)) || fail "a hanging command source took $((SECONDS - t0)) s"
	mkfifo "$T_TMP/fifo"
	printf 'secret X host example.com file %s\n' "$T_TMP/fifo" >"$T_TMP/p.profile"
	t0=$SECONDS
	wrun --profile "$T_TMP/p.profile" -- true
	assert_rc 125 'a FIFO as a file source'
	((SECONDS - t0 < 10)) || fail "a FIFO source took $((SECONDS - t0)) s"
}

# TLS is a module of warden's own, loaded by what needs it
# (src/net/tlsmod.h): a session without TLS has none of it mapped in its
# supervisor; a session with a secret maps the copy in warden's cache
# directory, this user's and written by no one, and works the same when that
# copy is broken (loaded from a sealed memfd instead, the copy removed and
# written whole again next time) or writable by others (written again, never
# loaded), or when the cache directory is on a noexec mount (the memfd; and
# with vm.memfd_noexec = 2 as well, a clear refusal of that session). Root:
# a supervisor's maps are not readable to its own user once it is not
# dumpable.
test_secret_tls_module_by_need() {
	nh_need_root
	local mod
	# supervisor_maps [run args...]: the supervisor's mappings while its
	# command runs, in MAPS (the session then ends)
	supervisor_maps() {
		warden_bg "$T_TMP/bg.out" "$@" -- sh -c 'echo ready; exec sleep 30'
		wait_for "$T_TMP/bg.out" '^ready' 10 ||
			fatal "the session did not start: $(excerpt "$(cat "$T_TMP/bg.out" "$T_TMP/bg.out.err")")"
		MAPS=$(cat "/proc/$WPID/maps")
		kill -TERM "$WPID"
		wait "$TPID" 2>/dev/null
	}
	supervisor_maps
	grep -q 'tlsmod\|warden-tls' <<<"$MAPS" && fail "a session without TLS mapped the TLS module"
	grep -q 'libnghttp2' <<<"$MAPS" && fail "a session without TLS mapped nghttp2"
	MYTOKEN=$REAL supervisor_maps --secret MYTOKEN@example.com
	mod=$(find "$HOME/.cache/warden" -maxdepth 1 -name 'tlsmod-*.so')
	[[ -n $mod && $(stat -c '%a %U' "$mod") == "400 $(id -un)" ]] ||
		fail "no copy of the module, 0400 and the user's, in the cache: $(ls -l "$HOME/.cache/warden")"
	grep -q " $mod\$" <<<"$MAPS" || fail "the session with a secret did not map $mod"
	wardenc doctor
	assert_out_match '^OK +TLS module +loads, from the cache.s copy' 'doctor on the TLS module'
	# broken: loaded from a memfd, the copy made again for the next session
	chmod u+w "$mod" && head -c "$(stat -c %s "$mod")" /dev/zero >"$mod" && chmod 0400 "$mod"
	MYTOKEN=$REAL wrun --secret MYTOKEN@example.com -- sh -c 'echo "inside=$MYTOKEN"'
	assert_rc 0 'a session with a broken copy of the module in the cache'
	assert_out_match '^inside=.' 'the phantom inside'
	assert_out_lacks "$REAL"
	MYTOKEN=$REAL supervisor_maps --secret MYTOKEN@example.com
	grep -q " $mod\$" <<<"$MAPS" || fail "the broken copy was not written again: $(grep -E 'tls' <<<"$MAPS")"
	cmp -s <(head -c 4 "$mod") <(printf '\177ELF') || fail "the copy made again is not an ELF file"
	# writable by others: written again (0400), never loaded as it was
	chmod 0666 "$mod"
	MYTOKEN=$REAL supervisor_maps --secret MYTOKEN@example.com
	[[ $(stat -c '%a' "$mod") == 400 ]] || fail "a copy writable by others was kept: $(stat -c '%a' "$mod")"
	grep -q 'tlsmod\|warden-tls' <<<"$MAPS" || fail "the session with a secret mapped no TLS module"
	# a cache directory on a noexec mount: no copy there, the memfd each time
	mkdir -p "$T_TMP/nx" && mount -t tmpfs -o noexec,mode=0700 tmpfs "$T_TMP/nx" ||
		fatal "cannot mount a noexec tmpfs"
	nh_on_exit "umount -l '$T_TMP/nx'"
	XDG_CACHE_HOME=$T_TMP/nx MYTOKEN=$REAL supervisor_maps --secret MYTOKEN@example.com
	grep -q 'memfd:warden-tls' <<<"$MAPS" ||
		fail "a noexec cache directory: the module not from a memfd: $(grep -E 'tls' <<<"$MAPS")"
	[[ -z $(find "$T_TMP/nx" -name 'tlsmod-*') ]] || fail "a copy written to a noexec cache directory"
	XDG_CACHE_HOME=$T_TMP/nx wardenc doctor
	assert_out_match '^OK +TLS module +loads, from a sealed memfd' 'doctor on a noexec cache directory'
	# and where executable memfds are refused too (vm.memfd_noexec = 2, set in
	# a pid namespace of the test's own): the session is refused, saying
	# what to change; a session without TLS runs
	if [[ -e /proc/sys/vm/memfd_noexec ]]; then
		# shellcheck disable=SC2016 # expanded by the inner shell
		OUT=$(XDG_CACHE_HOME=$T_TMP/nx MYTOKEN=$REAL timeout 60 unshare -p -f --mount --mount-proc \
			sh -c 'echo 2 >/proc/sys/vm/memfd_noexec || exit 99
				"$WARDEN" run --secret MYTOKEN@example.com -- true; echo "rc=$?"
				"$WARDEN" run -- true; echo "plain=$?"' 2>&1)
		printf '%s\n' "$OUT"
		assert_out_line 'rc=125' 'a session with a secret and no way to load TLS'
		assert_out_has 'vm.memfd_noexec = 2: set it to 0 or 1, or give warden a cache directory' \
			'the refusal names the sysctl and the cache directory'
		assert_out_line 'plain=0' 'a session without TLS'
	else
		note "no vm.memfd_noexec on this kernel (before 6.3): its refusal is not tried"
	fi
	return 0
}
