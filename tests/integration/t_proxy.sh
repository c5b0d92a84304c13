# t_proxy.sh - network egress through warden's proxy: the proxy environment
# inside, HTTP (absolute-form GET and CONNECT) and SOCKS5 to allowed hosts,
# git over HTTPS and over ssh through the proxy, refusals (403 with a reason,
# SOCKS5 reply 2) for unknown and denied hosts and for names that resolve to
# loopback, private or this host's addresses, direct TCP/UDP/DNS failing, and
# a `net` event in the session log for every case; host loopback ports
# (--allow-net 127.0.0.1:PORT reached from inside as 127.0.0.1:PORT).
#
# Servers are the tests' own and on this machine only: the host's loopback
# (the proxy dials it for a rule naming 127.0.0.1:PORT explicitly; these tests
# run unprivileged too) or a network namespace the test makes over a veth pair
# (10.77.N.2; root only, skipped otherwise). Names for the test host go into
# /etc/hosts for the test's duration (root). Destinations that must be refused
# are names under .invalid or ports of this machine's loopback, so a proxy that
# wrongly let them through still sends nothing off this machine.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

PX_DENIED=denied.wardentest.invalid

# px_www: a served directory $T_TMP/www with token.txt = PX_TOKEN.
px_www() {
	PX_TOKEN=$(unique)
	mkdir -p "$T_TMP/www"
	printf '%s\n' "$PX_TOKEN" >"$T_TMP/www/token.txt"
	chmod -R a+rX "$T_TMP/www"
}

# px_tls SAN: a certificate for the test servers ($T_TMP/tls) and its copy the
# sandbox trusts, $WS/testca.crt (not *.pem: the default profile masks those).
px_tls() {
	nh_cert "$T_TMP/tls" wardentest "$1"
	cp "$T_TMP/tls/cert.pem" "$WS/testca.crt"
}

# px_loopback: HTTP and HTTPS servers of $T_TMP/www on the host's loopback,
# plus a decoy HTTP server no rule allows. Sets HTTP_PORT, HTTPS_PORT,
# DECOY_PORT.
px_loopback() {
	px_www
	px_tls IP:127.0.0.1
	nh_web http "$T_TMP/www" 127.0.0.1 0
	HTTP_PORT=$PORT
	nh_web https "$T_TMP/www" 127.0.0.1 0 "$T_TMP/tls/cert.pem" "$T_TMP/tls/key.pem"
	HTTPS_PORT=$PORT
	mkdir -p "$T_TMP/decoy"
	nh_web decoy "$T_TMP/decoy" 127.0.0.1 0
	DECOY_PORT=$PORT
	nh_host_check "http://127.0.0.1:$HTTP_PORT/token.txt"
	nh_host_check --cacert "$T_TMP/tls/cert.pem" "https://127.0.0.1:$HTTPS_PORT/token.txt"
}

# px_netns: the test network with HTTP on $NH_IP:8080 and HTTPS on :8443 (a
# certificate for PX_NAME and NH_IP); PX_NAME resolves to NH_IP through
# /etc/hosts. Root only (skips otherwise).
px_netns() {
	nh_need_root
	nh_need openssl curl
	nh_netns
	px_www
	PX_NAME=$(nh_name host)
	nh_hosts_add "$PX_NAME" "$NH_IP"
	px_tls "DNS:$PX_NAME,IP:$NH_IP"
	NH_WHERE=ns nh_web http "$T_TMP/www" "$NH_IP" 8080
	NH_WHERE=ns nh_web https "$T_TMP/www" "$NH_IP" 8443 "$T_TMP/tls/cert.pem" "$T_TMP/tls/key.pem"
	nh_host_check "http://$NH_IP:8080/token.txt"
	nh_host_check --cacert "$T_TMP/tls/cert.pem" "https://$PX_NAME:8443/token.txt"
}

# px_inside SCRIPT [warden run options]: run SCRIPT (sh) in the sandbox from
# a file in the workspace, with these helpers defined first:
#   fetch LABEL CURL-ARGS...  prints "LABEL rc=N BODY" (curl's error on failure)
#   code LABEL CURL-ARGS...   prints "LABEL rc=N HTTP_CODE CONNECT_CODE"
#   raw ARGS...               the raw proxy client (nh_raw), output prefixed
# ("LABEL " given as RAWLABEL=...).
px_inside() {
	local script=$1
	shift
	nh_raw
	{
		cat <<'SH'
fetch() { l=$1; shift; o=$(curl -sS -m 15 "$@" 2>&1); r=$?; printf '%s rc=%s %s\n' "$l" "$r" "$(printf '%s' "$o" | tr '\n' ' ' | sed 's/ *$//')"; }
code() { l=$1; shift; o=$(curl -sS -m 15 -o /dev/null -w '%{http_code} %{http_connect}' "$@" 2>/dev/null); r=$?; printf '%s rc=%s %s\n' "$l" "$r" "$o"; }
raw() { l=$1; shift; /usr/bin/python3 proxyraw.py "$@" | sed "s/^/$l /"; }
SH
		printf '%s\n' "$script"
	} >"$WS/inside.sh"
	wrun "$@" -- sh ./inside.sh
}

# px_log_ok: the session log is whole (chain, start, end, exit 0) and every
# proxy event carries its fields.
px_log_ok() {
	local f
	f=$(latest_log)
	[[ -n $f ]] || { fail 'no session log'; return 0; }
	if declare -F check_log >/dev/null; then
		check_log "$f" 0
	fi
	net_fields 'net event fields'
}

# px_requests NAME: how many requests the server NAME has logged so far.
px_requests() { grep -c '^REQUEST' "$T_TMP/$1.err" 2>/dev/null; }

# px_no_request NAME [BEFORE]: the server NAME saw no request (after BEFORE).
px_no_request() {
	local n
	n=$(px_requests "$1")
	((n == ${2:-0})) ||
		fail "the $1 server was reached: $(excerpt "$(grep '^REQUEST' "$T_TMP/$1.err" | tail -n $((n - ${2:-0})))")"
}

# ---- without root: the environment, refusals, loopback servers ------------

test_proxy_env() {
	nh_python
	# the host's own proxy settings never reach the sandbox
	export HTTP_PROXY=http://192.0.2.9:9 https_proxy=http://192.0.2.9:9 NO_PROXY='*'
	local script='env | grep -E "^(HTTP_PROXY|HTTPS_PROXY|ALL_PROXY|NO_PROXY|http_proxy|https_proxy|all_proxy|no_proxy|GIT_SSH_COMMAND)=" | sort
	              test -x /.warden/warden && echo "self executable"
	              raw http3128 listening 3128; raw socks1080 listening 1080'
	local rules
	for rules in none some; do
		if [[ $rules == none ]]; then
			px_inside "$script"
		else
			px_inside "$script" --allow-net wardentest.invalid
		fi
		assert_rc 0 "$rules"
		local v
		for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; do
			assert_out_line "$v=http://127.0.0.1:3128" "$rules"
		done
		for v in ALL_PROXY all_proxy; do
			assert_out_line "$v=socks5h://127.0.0.1:1080" "$rules"
		done
		for v in NO_PROXY no_proxy; do
			assert_out_line "$v=localhost,127.0.0.1,::1" "$rules"
		done
		assert_out_line 'http3128 LISTEN yes' "$rules: HTTP proxy listener inside"
		assert_out_line 'socks1080 LISTEN yes' "$rules: SOCKS5 listener inside"
	done
	# with a rule, git over ssh is routed through the proxy by warden's own
	# binary (without any, warden leaves both out: there is nowhere to go)
	assert_out_match "^GIT_SSH_COMMAND=ssh .*ProxyCommand=.?/\.warden/warden __connect %h %p" 'GIT_SSH_COMMAND'
	assert_out_line 'self executable' '/.warden/warden'
	unset HTTP_PROXY https_proxy NO_PROXY
}

test_proxy_empty_allowlist() {
	nh_need curl
	px_loopback
	local before
	before=$(px_requests http)
	# no rule at all: everything refused, even a server that is there
	px_inside "raw get http GET http://$PX_DENIED/ $PX_DENIED
	           raw connect http CONNECT $PX_DENIED:443 $PX_DENIED:443
	           raw lo http CONNECT 127.0.0.1:$HTTP_PORT 127.0.0.1:$HTTP_PORT
	           raw socks socks5 $PX_DENIED 443
	           raw socks-lo socks5 127.0.0.1 $HTTP_PORT
	           code curl-http http://$PX_DENIED/
	           code curl-https https://$PX_DENIED/"
	assert_rc 0
	assert_out_match '^get STATUS 403 ' 'GET to an unknown host'
	assert_out_match '^get REASON .' 'GET: X-Warden-Reason'
	assert_out_match '^connect STATUS 403 ' 'CONNECT to an unknown host'
	assert_out_match '^connect REASON .' 'CONNECT: X-Warden-Reason'
	assert_out_match '^lo STATUS 403 ' 'CONNECT to a listening loopback port'
	assert_out_line 'socks REPLY 2' 'SOCKS5 to an unknown host'
	assert_out_line 'socks-lo REPLY 2' 'SOCKS5 to a listening loopback port'
	assert_out_match '^curl-http rc=0 403 ' 'curl http'
	assert_out_match '^curl-https rc=[1-9][0-9]* 000 403$' 'curl https (CONNECT refused)'
	# the status phrase carries the reason, not just "Forbidden"
	local phrase
	phrase=$(sed -n 's/^get STATUS 403 //p' <<<"$OUT")
	[[ ${#phrase} -gt 9 && ${phrase,,} != forbidden ]] || fail "403 status phrase carries no reason: '$phrase'"
	px_no_request http "$before"
	net_expect 'GET refused' method=GET host=$PX_DENIED decision=deny status=403 'reason~.'
	# nothing left the sandbox for a refusal: no bytes either way
	net_expect_none 'refusals carry no bytes' decision=deny 'bytes_out>0'
	net_expect_none 'refusals carry no bytes' decision=deny 'bytes_in>0'
	net_expect 'CONNECT refused' method=CONNECT host=$PX_DENIED port=443 decision=deny status=403
	net_expect 'CONNECT loopback refused' method=CONNECT host=127.0.0.1 port="$HTTP_PORT" decision=deny
	net_expect 'SOCKS5 refused' method=socks5 host=$PX_DENIED port=443 decision=deny
	net_expect 'SOCKS5 loopback refused' method=socks5 host=127.0.0.1 port="$HTTP_PORT" decision=deny
	net_expect_none 'empty allowlist' decision=allow
	px_log_ok
}

test_proxy_refusals() {
	nh_need curl
	px_loopback
	cat >"$T_TMP/net.profile" <<EOF
net allow *.wardentest.invalid
net deny $PX_DENIED
net allow localhost
net allow 127.0.0.1:$HTTP_PORT
EOF
	local before
	before=$(px_requests http)
	px_inside "raw deny http GET http://$PX_DENIED/ $PX_DENIED
	           raw deny-c http CONNECT $PX_DENIED:443 $PX_DENIED:443
	           raw deny-s socks5 $PX_DENIED 443
	           raw unknown http CONNECT elsewhere.example.invalid:443 elsewhere.example.invalid:443
	           raw port http CONNECT 127.0.0.1:$DECOY_PORT 127.0.0.1:$DECOY_PORT
	           raw port-s socks5 127.0.0.1 $DECOY_PORT
	           raw v6 http CONNECT [::1]:$HTTP_PORT [::1]:$HTTP_PORT
	           raw localhost http GET http://localhost:$HTTP_PORT/token.txt localhost:$HTTP_PORT
	           raw localhost-c http CONNECT localhost:$HTTP_PORT localhost:$HTTP_PORT
	           raw localhost-s socks5 localhost $HTTP_PORT
	           raw origin send 'GET /token.txt HTTP/1.1\\r\\nHost: 127.0.0.1:$HTTP_PORT\\r\\n\\r\\n'
	           raw garbage send 'HELLO THERE\\r\\n\\r\\n'
	           raw ftp http GET ftp://127.0.0.1:$HTTP_PORT/ 127.0.0.1:$HTTP_PORT
	           raw allowed http GET http://127.0.0.1:$HTTP_PORT/token.txt 127.0.0.1:$HTTP_PORT" \
		--profile "$T_TMP/net.profile"
	assert_rc 0
	local l
	for l in deny deny-c unknown port v6 localhost localhost-c; do
		assert_out_match "^$l STATUS 403 " "$l"
		assert_out_match "^$l REASON ." "$l: X-Warden-Reason"
	done
	for l in deny-s port-s localhost-s; do
		assert_out_line "$l REPLY 2" "$l"
	done
	grep -qiE '^localhost (STATUS 403|REASON) .*loopback' <<<"$OUT" ||
		fail "localhost: the refusal does not say loopback: $(excerpt "$(grep '^localhost ' <<<"$OUT")")"
	# requests the proxy does not serve: a 4xx/5xx of its own, never forwarded
	assert_out_match '^origin STATUS [45][0-9][0-9] ' 'origin-form request'
	assert_out_match '^garbage STATUS [45][0-9][0-9] ' 'malformed request'
	assert_out_match '^ftp STATUS [45][0-9][0-9] ' 'ftp:// request'
	assert_out_match '^allowed STATUS 200 ' 'GET to the allowed host:port'
	px_no_request decoy
	(($(px_requests http) == before + 1)) ||
		fail "the allowed server saw $(($(px_requests http) - before)) requests, expected 1 (the allowed GET)"
	# deny wins over the wildcard, and the log names the deny rule
	net_expect 'deny rule' method=GET host=$PX_DENIED decision=deny rule=$PX_DENIED status=403
	net_expect 'deny rule (CONNECT)' method=CONNECT host=$PX_DENIED decision=deny rule=$PX_DENIED
	net_expect 'deny rule (SOCKS5)' method=socks5 host=$PX_DENIED decision=deny rule=$PX_DENIED
	net_expect 'unknown host' method=CONNECT host=elsewhere.example.invalid decision=deny
	net_expect 'other port' method=CONNECT host=127.0.0.1 port="$DECOY_PORT" decision=deny
	net_expect 'localhost resolves to loopback, the address named' method=GET host=localhost decision=deny \
		'reason~resolves to loopback \((127\.0\.0\.1|::1)\)'
	net_expect 'localhost (SOCKS5)' method=socks5 host=localhost decision=deny 'reason~loopback'
	net_expect_none 'refusals carry no bytes' decision=deny 'bytes_out>0'
	net_expect 'allowed GET' method=GET host=127.0.0.1 port="$HTTP_PORT" decision=allow status=200 \
		rule=127.0.0.1:"$HTTP_PORT"
	px_log_ok

	# patterns that would match everything are refused before the session
	wrun --allow-net '*' -- true
	assert_rc 125 "--allow-net '*'"
	wrun --allow-net '*.com' -- true
	assert_rc 125 "--allow-net '*.com'"
	# and the unspecified address, which reaches nothing (it was taken,
	# never to match)
	wrun --allow-net 0.0.0.0 -- true
	assert_rc 125 '--allow-net 0.0.0.0'
	assert_err_match 'the unspecified address is no destination' 'said why'
	printf 'net allow *\n' >"$T_TMP/star.profile"
	wrun --profile "$T_TMP/star.profile" -- true
	assert_rc 125 "net allow *"
	assert_err_match 'star\.profile:1' 'the error names the profile line'
}

# One reading of a host name (issue 39): case and a trailing dot folded for
# allow and deny rules alike, a NUL in a SOCKS5 name (the 2025 bug: a check
# reading "attacker\0.allowed" apart from the resolver) and a
# percent-encoded authority refused, each with a net event.
test_proxy_host_names() {
	nh_need curl
	px_loopback
	cat >"$T_TMP/net.profile" <<EOF
net allow localhost
net allow allowed.wardentest.invalid
net allow *.bad.wardentest.invalid
net deny bad.wardentest.invalid
EOF
	local before l
	before=$(px_requests http)
	px_inside "raw up http CONNECT LOCALHOST.:$HTTP_PORT LOCALHOST.:$HTTP_PORT
	           raw up-s socks5 LocalHost. $HTTP_PORT
	           raw bad http CONNECT BAD.wardentest.invalid.:443 BAD.wardentest.invalid.:443
	           raw bad-g http GET http://Bad.WardenTest.invalid./ Bad.WardenTest.invalid.
	           raw bad-s socks5 BAD.wardentest.invalid. 443
	           raw nul socks5 'attacker.wardentest.invalid\\0.allowed.wardentest.invalid' 443
	           raw pct http CONNECT %61llowed.wardentest.invalid:443 %61llowed.wardentest.invalid:443
	           raw pct-g http GET http://%61llowed.wardentest.invalid/ allowed.wardentest.invalid
	           raw num http CONNECT 0x7f.1:$HTTP_PORT 0x7f.1:$HTTP_PORT" \
		--profile "$T_TMP/net.profile"
	assert_rc 0
	# the allow rule names LOCALHOST. too: refused only for where it leads
	net_expect 'upper case and a dot, allow rule' method=CONNECT host=localhost rule=localhost \
		'reason~loopback'
	net_expect 'upper case and a dot, allow rule (SOCKS5)' method=socks5 host=localhost \
		rule=localhost 'reason~loopback'
	for l in bad bad-g; do
		assert_out_match "^$l STATUS 403 " "$l: a deny rule for bad.wardentest.invalid"
	done
	assert_out_line 'bad-s REPLY 2' 'BAD.wardentest.invalid. over SOCKS5'
	net_expect 'deny rule, upper case and a dot' method=CONNECT host=bad.wardentest.invalid \
		decision=deny rule=bad.wardentest.invalid
	net_expect 'deny rule, GET' method=GET host=bad.wardentest.invalid decision=deny \
		rule=bad.wardentest.invalid
	net_expect 'deny rule, SOCKS5' method=socks5 host=bad.wardentest.invalid decision=deny \
		rule=bad.wardentest.invalid
	assert_out_line 'nul REPLY 4' 'a NUL in a SOCKS5 name'
	net_expect 'a NUL in a SOCKS5 name, logged' method=socks5 decision=deny 'reason~control byte'
	assert_out_match '^pct STATUS 400 ' 'a percent-encoded CONNECT authority'
	assert_out_match '^pct REASON .*percent-encoding' 'the reason names percent-encoding'
	assert_out_match '^pct-g STATUS 400 ' 'a percent-encoded URL authority'
	assert_out_match '^num STATUS 400 ' '0x7f.1, an address to inet_aton'
	net_expect_none 'nothing reaches allowed.wardentest.invalid' host=allowed.wardentest.invalid
	net_expect_none 'refusals carry no bytes' decision=deny 'bytes_out>0'
	px_no_request http "$before"
	px_log_ok
}

# px_tlsvia: write tlsvia.py into the workspace. Inside the sandbox:
#   [TLSVIA_CCS=1] /usr/bin/python3 tlsvia.py http|socks5 HOST PORT SNI|- CAFILE
# (TLSVIA_CCS: a change_cipher_spec record sent before the ClientHello;
# TLSVIA_V2SPLIT: no TLS, but SSLv2's form of a ClientHello, its first three
# bytes in a write of their own, then what came back counted: "V2 closed N")
#       a tunnel through the proxy (CONNECT or SOCKS5 with a domain name or an
#       address) to HOST:PORT, then TLS with SNI (- for none) without checking
#       the name, then GET /token.txt; prints "TLS ok BODY" or "TLS failed WHAT"
px_tlsvia() {
	cat >"$WS/tlsvia.py" <<'PY'
import ipaddress, os, socket, ssl, struct, sys, time
mode, host, port, sni, ca = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
try:
    if mode == 'http':
        s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
        s.sendall(('CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n' % (host, port, host, port)).encode())
        head = b''
        while b'\r\n\r\n' not in head:
            d = s.recv(1)
            if not d:
                raise OSError('no answer to CONNECT')
            head += d
        if b' 200 ' not in head.split(b'\r\n')[0]:
            raise OSError(head.split(b'\r\n')[0].decode())
    else:
        s = socket.create_connection(('127.0.0.1', 1080), timeout=10)
        s.sendall(b'\x05\x01\x00')
        s.recv(2)
        try:
            ip = ipaddress.ip_address(host)
            addr = (b'\x01' if ip.version == 4 else b'\x04') + ip.packed
        except ValueError:
            addr = b'\x03' + bytes([len(host)]) + host.encode()
        s.sendall(b'\x05\x01\x00' + addr + struct.pack('>H', port))
        r = s.recv(262)
        if len(r) < 2 or r[1] != 0:
            raise OSError('SOCKS5 reply %s' % (r[1] if len(r) >= 2 else 'none'))
    if os.environ.get('TLSVIA_V2SPLIT'):
        body = b'\x01\x03\x03' + struct.pack('>HHH', 6, 0, 16) + b'\x00\x00\x2f\x00\xc0\x2f' + b'\x11' * 16
        hello = bytes([0x80 | len(body) >> 8, len(body) & 0xff]) + body
        s.sendall(hello[:3])
        time.sleep(0.3)
        s.sendall(hello[3:])
        got = b''
        try:
            while True:
                d = s.recv(4096)
                if not d:
                    break
                got += d
        except OSError:
            pass
        print('V2 closed', len(got))
        sys.exit(0)
    if os.environ.get('TLSVIA_CCS'):
        s.sendall(b'\x14\x03\x03\x00\x01\x01')   # a change_cipher_spec record first
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = False
    t = ctx.wrap_socket(s, server_hostname=None if sni == '-' else sni)
    t.sendall(b'GET /token.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    body = b''
    while True:
        d = t.recv(4096)
        if not d:
            break
        body += d
    print('TLS ok', body.split(b'\r\n\r\n', 1)[-1].decode().strip())
except Exception as e:
    print('TLS failed', type(e).__name__, str(e).replace('\n', ' ')[:200])
PY
}

# A client that closes while the proxy still has the answer to send it
# (`curl ... | head -c 10`): the proxy's write into the closed socket made
# the kernel send warden a SIGPIPE, which it passed on to the command as if
# a user had sent it, and the session ended with 141. It is warden's own
# (its EPIPE handled where it was written): the command goes on, and no
# signal is on the record.
test_proxy_client_closes_early() {
	nh_need curl
	px_loopback
	head -c 8000000 /dev/zero >"$T_TMP/www/big.bin"
	printf 'net allow 127.0.0.1:%s\n' "$HTTP_PORT" >"$T_TMP/net.profile"
	px_inside "for i in \$(seq 30); do
		curl -s -x http://127.0.0.1:3128 http://127.0.0.1:$HTTP_PORT/big.bin | head -c 10 >/dev/null
	done
	echo survived" --profile "$T_TMP/net.profile"
	assert_rc 0
	assert_out_line survived 'the command did not outlive its clients closing early'
	! grep -F '"event":"signal"' "$(latest_log)" | matches -F SIGPIPE ||
		fail "a SIGPIPE of warden's own passed on"
}

# A tunnel's TLS is held to the name it was allowed for (issue 39): a
# ClientHello whose SNI names another host is refused before a byte goes
# upstream, with a net event; no SNI (an address) and non-TLS bytes pass.
test_proxy_sni() {
	nh_need curl
	px_loopback
	px_tlsvia
	printf 'net allow 127.0.0.1:%s\n' "$HTTPS_PORT" >"$T_TMP/net.profile"
	local before
	before=$(px_requests https)
	px_inside "t() { l=\$1; shift; /usr/bin/python3 tlsvia.py \"\$@\" testca.crt | sed \"s/^/\$l /\"; }
	           t other-c http 127.0.0.1 $HTTPS_PORT other.wardentest.invalid
	           t other-s socks5 127.0.0.1 $HTTPS_PORT other.wardentest.invalid
	           t none-c http 127.0.0.1 $HTTPS_PORT -
	           t none-s socks5 127.0.0.1 $HTTPS_PORT -
	           TLSVIA_CCS=1 t ccs-c http 127.0.0.1 $HTTPS_PORT other.wardentest.invalid" \
		--profile "$T_TMP/net.profile"
	assert_rc 0
	# a record of another kind before the ClientHello (a red team's way past
	# the check: a lenient server could take the hello after it)
	net_expect 'TLS not begun by its ClientHello' method=CONNECT host=127.0.0.1 decision=deny \
		'reason~other than the ClientHello first' 'bytes_out=0'
	assert_out_match '^other-c TLS failed ' 'CONNECT, TLS naming another host'
	assert_out_match '^other-s TLS failed ' 'SOCKS5, TLS naming another host'
	assert_out_line "none-c TLS ok $PX_TOKEN" 'CONNECT, TLS without SNI to an address'
	assert_out_line "none-s TLS ok $PX_TOKEN" 'SOCKS5, TLS without SNI to an address'
	net_expect 'SNI refused (CONNECT)' method=CONNECT host=127.0.0.1 decision=deny \
		'reason~other.wardentest.invalid' 'bytes_out=0'
	net_expect 'SNI refused (SOCKS5)' method=socks5 host=127.0.0.1 decision=deny \
		'reason~other.wardentest.invalid' 'bytes_out=0'
	(($(px_requests https) == before + 2)) ||
		fail "the TLS server saw $(($(px_requests https) - before)) requests, expected 2 (no SNI)"
	px_log_ok

	# `net sni required`: no server name is refused too
	printf 'net sni required\nnet allow 127.0.0.1:%s\n' "$HTTP_PORT" >>"$T_TMP/net.profile"
	px_inside "t() { l=\$1; shift; /usr/bin/python3 tlsvia.py \"\$@\" testca.crt | sed \"s/^/\$l /\"; }
	           t none-r http 127.0.0.1 $HTTPS_PORT -
	           fetch plain-r -p -x http://127.0.0.1:3128 http://127.0.0.1:$HTTP_PORT/token.txt" \
		--profile "$T_TMP/net.profile"
	assert_rc 0
	assert_out_match '^none-r TLS failed ' 'net sni required: TLS without SNI'
	assert_out_line "plain-r rc=0 $PX_TOKEN" 'net sni required: a tunnel without TLS passes'
	net_expect 'net sni required, refused' method=CONNECT decision=deny 'reason~net sni required' \
		'bytes_out=0'

	# SSLv2's form of a ClientHello (no name), its first three bytes sent
	# apart: held until the fourth tells, then refused as naming no host
	# (read alone, the first write passed as not TLS, and the hello after it)
	px_inside "TLSVIA_V2SPLIT=1 /usr/bin/python3 tlsvia.py http 127.0.0.1 $HTTPS_PORT - testca.crt" \
		--profile "$T_TMP/net.profile"
	assert_rc 0
	assert_out_line 'V2 closed 0' 'net sni required: an SSLv2 hello in two writes reached no server'
	net_expect 'net sni required, an SSLv2 hello in two writes refused' method=CONNECT \
		decision=deny 'reason~net sni required' 'bytes_out=0'
}

# The same with names (root: the test network): the name the tunnel was
# allowed for passes, another is refused.
test_proxy_netns_sni() {
	px_netns
	px_tlsvia
	printf 'net allow %s private\n' "$PX_NAME" >"$T_TMP/net.profile"
	px_inside "t() { l=\$1; shift; /usr/bin/python3 tlsvia.py \"\$@\" testca.crt | sed \"s/^/\$l /\"; }
	           t same-c http $PX_NAME 8443 $PX_NAME
	           t upper-s socks5 $PX_NAME 8443 $(tr a-z A-Z <<<"$PX_NAME").
	           t other-c http $PX_NAME 8443 other.wardentest.invalid
	           t other-s socks5 $PX_NAME 8443 other.wardentest.invalid" \
		--profile "$T_TMP/net.profile"
	assert_rc 0
	assert_out_line "same-c TLS ok $PX_TOKEN" 'CONNECT, SNI the tunnel name'
	assert_out_line "upper-s TLS ok $PX_TOKEN" 'SOCKS5, SNI the tunnel name in upper case with a dot'
	assert_out_match '^other-c TLS failed ' 'CONNECT, TLS naming another host'
	assert_out_match '^other-s TLS failed ' 'SOCKS5, TLS naming another host'
	net_expect 'SNI refused (CONNECT)' method=CONNECT host="$PX_NAME" decision=deny \
		'reason~other.wardentest.invalid' 'bytes_out=0'
	net_expect 'SNI matches' method=CONNECT host="$PX_NAME" decision=allow 'bytes_in>0'
	px_log_ok
}

test_proxy_loopback_http_https() {
	nh_need curl
	px_loopback
	# NO_PROXY lists 127.0.0.1 (the sandbox's own loopback); these requests
	# are for the host's loopback, so they must go through the proxy.
	px_inside "unset NO_PROXY no_proxy
	           fetch http http://127.0.0.1:$HTTP_PORT/token.txt
	           fetch https --cacert testca.crt https://127.0.0.1:$HTTPS_PORT/token.txt
	           code missing http://127.0.0.1:$HTTP_PORT/missing.txt" \
		--allow-net "127.0.0.1:$HTTP_PORT" --allow-net "127.0.0.1:$HTTPS_PORT"
	assert_rc 0
	assert_out_line "http rc=0 $PX_TOKEN" 'HTTP GET through the proxy'
	assert_out_line "https rc=0 $PX_TOKEN" 'HTTPS through a CONNECT tunnel'
	assert_out_line 'missing rc=0 404 000' 'the upstream status passes through'
	net_expect 'GET' method=GET host=127.0.0.1 port="$HTTP_PORT" address=127.0.0.1 decision=allow \
		status=200 'bytes_in>0' 'bytes_out>0' rule=127.0.0.1:"$HTTP_PORT" 'duration_ms?'
	net_expect 'GET 404' method=GET port="$HTTP_PORT" decision=allow status=404
	net_expect 'CONNECT' method=CONNECT host=127.0.0.1 port="$HTTPS_PORT" address=127.0.0.1 decision=allow \
		'bytes_in>0' 'bytes_out>0' rule=127.0.0.1:"$HTTPS_PORT"
	px_log_ok
}

# ---- host loopback ports: --allow-net 127.0.0.1:PORT -----------------------

test_host_loopback_port() {
	nh_need curl
	px_loopback
	local before
	before=$(px_requests decoy)
	# NO_PROXY lists 127.0.0.1: curl connects to the sandbox's own loopback,
	# where warden listens on the allowed port and relays to the host's.
	px_inside "fetch direct http://127.0.0.1:$HTTP_PORT/token.txt
	           fetch again http://127.0.0.1:$HTTP_PORT/token.txt
	           code other http://127.0.0.1:$DECOY_PORT/
	           code tls --cacert testca.crt https://127.0.0.1:$HTTPS_PORT/token.txt" \
		--allow-net "127.0.0.1:$HTTP_PORT"
	assert_rc 0
	assert_out_line "direct rc=0 $PX_TOKEN" 'the host port reached from inside as 127.0.0.1:PORT'
	assert_out_line "again rc=0 $PX_TOKEN" 'a second connection'
	assert_out_match '^other rc=7 ' 'another host port stays unreachable'
	assert_out_match '^tls rc=7 ' 'a host port no rule names stays unreachable'
	px_no_request decoy "$before"
	net_expect 'host loopback port' method=tcp via=loopback host=127.0.0.1 port="$HTTP_PORT" \
		address=127.0.0.1 decision=allow rule=127.0.0.1:"$HTTP_PORT" 'bytes_in>0' 'bytes_out>0'
	local n
	n=$(net_events method=tcp via=loopback port="$HTTP_PORT" && wc -l <<<"$NET_EVENTS")
	[[ $n == 2 ]] || fail "expected one net event per connection (2), got ${n:-0}"
	net_expect_none 'no event for the other ports' via=loopback port="$DECOY_PORT"
	px_log_ok

	# the same from a profile line, and localhost:PORT (inside as localhost)
	printf 'net allow localhost:%s\n' "$HTTP_PORT" >"$T_TMP/lo.profile"
	px_inside "fetch name http://localhost:$HTTP_PORT/token.txt
	           fetch v4 http://127.0.0.1:$HTTP_PORT/token.txt" --profile "$T_TMP/lo.profile"
	assert_rc 0
	assert_out_line "name rc=0 $PX_TOKEN" 'localhost:PORT from a profile'
	assert_out_line "v4 rc=0 $PX_TOKEN" 'localhost:PORT listens on 127.0.0.1'
	net_expect 'localhost port' method=tcp via=loopback host=localhost port="$HTTP_PORT" \
		decision=allow rule=localhost:"$HTTP_PORT"
}

test_host_loopback_port_closed() {
	# An allowed host port nothing listens on: the connection inside is
	# reset, as a closed port is answered, not ended as if a server had
	# closed it without a word (curl said "Empty reply from server"); the
	# end says it could not be reached (an agent's API client retried for
	# minutes with nothing on the terminal).
	nh_need curl
	have python3 || skip 'python3 is not installed (it finds a free port)'
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# curl 56 ("Recv failure") when the reset comes after its connect is
	# seen through; 7 when it comes first (the reset is at once: under
	# load, before curl looks at its connect's result); never 52, "Empty
	# reply from server"
	wsh "curl -sSv http://127.0.0.1:$port/; echo rc=\$?" --allow-net "127.0.0.1:$port"
	assert_out_match '^rc=(56|7)$' 'the connection reset (curl 56 or 7), not an empty reply (52)'
	assert_err_match 'Connection reset by peer'
	[[ $ERR != *'Empty reply'* ]] || fail "an empty reply, not a reset: $(excerpt "$ERR")"
	# and said at the end: the agent's own client may retry in silence
	assert_err_match "127\.0\.0\.1:$port, allowed, could not be reached \(cannot connect to the destination; 1 time\): is its server running\?"
}

test_host_loopback_port_hinted() {
	# A port of the host's loopback tried on the sandbox's own, where
	# nothing listens (a database on the host's localhost): the client's
	# bare "connection refused" is joined by a line at the end naming the
	# flag that would reach it, once for the port however often it is
	# tried, and a net deny in the log. A port nothing listens on at the
	# host, and one a server inside listens on (the host too), are not.
	nh_need curl
	have python3 || skip 'python3 is not installed'
	python3 -c 'import socket,time
a=socket.socket(); a.bind(("127.0.0.1",0)); a.listen()
b=socket.socket(); b.bind(("127.0.0.1",0)); b.listen()
print(a.getsockname()[1], b.getsockname()[1], flush=True); time.sleep(60)' >"$T_TMP/ports" &
	bg_track $!
	wait_for "$T_TMP/ports" '^[0-9]' 10 || fatal 'no host listeners'
	local port both free
	read -r port both <"$T_TMP/ports"
	free=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	wsh "for i in 1 2 3; do curl -s -m 3 http://127.0.0.1:$port/; done; curl -s -m 3 http://127.0.0.1:$free/
	     python3 -c 'import socket
s=socket.socket(); s.bind((\"127.0.0.1\",$both)); s.listen(); c=socket.create_connection((\"127.0.0.1\",$both)); print(\"inside-ok\")' 2>&1; echo done"
	assert_out_line done
	assert_out_line inside-ok 'the server inside answered'
	assert_err_match "^  127\\.0\\.0\\.1:$port: nothing listens at port $port inside; .*--allow-net 127\\.0\\.0\\.1:$port\$" 'the hint'
	[[ $ERR != *"127.0.0.1:$port ("* ]] || fail "the port hinted more than once: $(excerpt "$ERR")"
	[[ $ERR != *":$free"* ]] || fail "a port nothing listens on at the host was hinted: $(excerpt "$ERR")"
	[[ $ERR != *":$both"* ]] || fail "a port a server inside listens on was hinted: $(excerpt "$ERR")"
	local n
	n=$(grep '"event":"net"' "$(latest_log)" | grep -c "\"port\":$port,.*nothing listens")
	[[ $n == 1 ]] || fail "not one net event for the port: $n"
}

test_host_loopback_port_errors() {
	local pat
	for pat in 127.0.0.1 '[::1]' 127.0.0.2 '::1'; do
		wrun --allow-net "$pat" -- true
		assert_rc 125 "--allow-net $pat"
		assert_err_match 'needs a port' "--allow-net $pat: the error says a port is needed"
	done
	for pat in 127.0.0.1:3128 localhost:1080 '[::1]:3128'; do
		wrun --allow-net "$pat" -- true
		assert_rc 125 "--allow-net $pat"
		assert_err_match "warden's own proxy" "--allow-net $pat: the error names the proxy's port"
	done
	printf 'net allow 127.0.0.1\n' >"$T_TMP/lo.profile"
	wrun --profile "$T_TMP/lo.profile" -- true
	assert_rc 125 'net allow 127.0.0.1'
	assert_err_match 'lo\.profile:1' 'the error names the profile line'
	local args=() p
	for p in $(seq 40001 40017); do args+=(--allow-net "127.0.0.1:$p"); done
	wrun "${args[@]}" -- true
	assert_rc 125 '17 host loopback ports'
	assert_err_match 'at most 16' 'the error names the limit'
	# the command never started in any of these
	wrun --allow-net 127.0.0.1 -- sh -c 'echo started'
	assert_out_eq '' 'nothing ran'
}

test_proxy_loopback_large_transfer() {
	nh_need curl
	px_loopback
	# 16 MiB each way through a CONNECT tunnel and a plain GET: nothing lost
	head -c 16777216 /dev/urandom >"$T_TMP/www/big.bin"
	local want
	want=$(sha256sum <"$T_TMP/www/big.bin" | cut -d' ' -f1)
	px_inside "unset NO_PROXY no_proxy
	           curl -sS -m 60 --cacert testca.crt https://127.0.0.1:$HTTPS_PORT/big.bin | sha256sum | sed 's/^/tls /'
	           curl -sS -m 60 http://127.0.0.1:$HTTP_PORT/big.bin | sha256sum | sed 's/^/plain /'" \
		--allow-net "127.0.0.1:$HTTP_PORT" --allow-net "127.0.0.1:$HTTPS_PORT"
	assert_out_line "tls $want  -" '16 MiB through CONNECT'
	assert_out_line "plain $want  -" '16 MiB through GET'
	net_expect 'CONNECT bytes' method=CONNECT port="$HTTPS_PORT" decision=allow 'bytes_in>16777216'
	net_expect 'GET bytes' method=GET port="$HTTP_PORT" decision=allow 'bytes_in>16777215'
}

test_proxy_loopback_socks5() {
	nh_need curl
	px_loopback
	px_inside "unset NO_PROXY no_proxy
	           fetch socks-ip --socks5 127.0.0.1:1080 http://127.0.0.1:$HTTP_PORT/token.txt
	           fetch socks-h --socks5-hostname 127.0.0.1:1080 --cacert testca.crt https://127.0.0.1:$HTTPS_PORT/token.txt
	           env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY sh -c '
	               o=\$(curl -sS -m 15 http://127.0.0.1:$HTTP_PORT/token.txt 2>&1); echo \"all-proxy rc=\$? \$o\"'
	           raw ok socks5 127.0.0.1 $HTTP_PORT
	           raw no socks5 127.0.0.1 $DECOY_PORT
	           raw v6 socks5 ::1 $HTTP_PORT" \
		--allow-net "127.0.0.1:$HTTP_PORT" --allow-net "127.0.0.1:$HTTPS_PORT"
	assert_rc 0
	assert_out_line "socks-ip rc=0 $PX_TOKEN" 'curl --socks5 (IPv4 address)'
	assert_out_line "socks-h rc=0 $PX_TOKEN" 'curl --socks5-hostname, TLS inside'
	assert_out_line "all-proxy rc=0 $PX_TOKEN" 'curl with ALL_PROXY only'
	assert_out_line 'ok METHOD 0' 'SOCKS5 no-auth method'
	assert_out_line 'ok REPLY 0' 'SOCKS5 CONNECT to the allowed host:port'
	assert_out_line 'no REPLY 2' 'SOCKS5 CONNECT to another port'
	assert_out_line 'v6 REPLY 2' 'SOCKS5 CONNECT to ::1'
	px_no_request decoy
	net_expect 'SOCKS5 allowed' method=socks5 host=127.0.0.1 port="$HTTP_PORT" decision=allow 'bytes_in>0' \
		address=127.0.0.1
	net_expect 'SOCKS5 TLS' method=socks5 port="$HTTPS_PORT" decision=allow 'bytes_in>0'
	net_expect 'SOCKS5 refused' method=socks5 port="$DECOY_PORT" decision=deny
	px_log_ok
}

test_proxy_hostile_clients() {
	nh_need curl
	px_loopback
	# Stalled clients (half a request head, half a SOCKS5 greeting) and an
	# oversized head do not keep others from being served.
	px_inside "unset NO_PROXY no_proxy
	           /usr/bin/python3 proxyraw.py hold 100 12 > hold.out 2>&1 & hp=\$!
	           i=0; while ! grep -q HOLDING hold.out 2>/dev/null && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
	           sed 's/^/hold /' hold.out
	           fetch during -m 8 http://127.0.0.1:$HTTP_PORT/token.txt
	           fetch during-tls -m 8 --cacert testca.crt https://127.0.0.1:$HTTPS_PORT/token.txt
	           fetch during-socks -m 8 --socks5 127.0.0.1:1080 http://127.0.0.1:$HTTP_PORT/token.txt
	           raw big bighead 1024 http://127.0.0.1:$HTTP_PORT/token.txt 127.0.0.1:$HTTP_PORT
	           fetch after -m 8 http://127.0.0.1:$HTTP_PORT/token.txt
	           kill \$hp 2>/dev/null; wait" \
		--allow-net "127.0.0.1:$HTTP_PORT" --allow-net "127.0.0.1:$HTTPS_PORT"
	assert_rc 0
	assert_out_line 'hold HOLDING 200' 'stalled connections opened'
	assert_out_line "during rc=0 $PX_TOKEN" 'GET while 200 clients stall'
	assert_out_line "during-tls rc=0 $PX_TOKEN" 'CONNECT while 200 clients stall'
	assert_out_line "during-socks rc=0 $PX_TOKEN" 'SOCKS5 while 200 clients stall'
	assert_out_match '^big (STATUS [45][0-9][0-9] |ERROR (ConnectionResetError|BrokenPipeError|empty response))' \
		'a 1 MiB request head is refused'
	assert_out_line "after rc=0 $PX_TOKEN" 'GET after the oversized head'
	px_log_ok
}

test_proxy_loopback_git_https() {
	nh_need git curl
	px_loopback
	nh_git_repo "$T_TMP/www/repo.git" "$PX_TOKEN"
	px_inside "unset NO_PROXY no_proxy
	           GIT_SSL_CAINFO=\$PWD/testca.crt git clone -q https://127.0.0.1:$HTTPS_PORT/repo.git cloned 2>&1
	           echo \"clone rc=\$?\"; cat cloned/token.txt" \
		--allow-net "127.0.0.1:$HTTPS_PORT"
	assert_out_line 'clone rc=0' 'git clone over HTTPS'
	assert_out_line "$PX_TOKEN" 'the cloned file'
	net_expect 'git CONNECT' method=CONNECT port="$HTTPS_PORT" decision=allow 'bytes_in>0'
	px_log_ok
}

test_proxy_direct_fails() {
	nh_need curl
	px_loopback
	# An address of this host's own (not loopback): a server there is reached
	# through the proxy (a rule names the address) but not directly. Every
	# direct attempt below is for this machine only.
	local addr addr6 before
	addr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	addr6=$(ip -6 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[[ -n $addr ]] || skip 'this host has no global IPv4 address to serve on'
	nh_web own "$T_TMP/www" "$addr" 0
	local own_port=$PORT
	nh_host_check "http://$addr:$own_port/token.txt"
	before=$(px_requests http)
	local v6probe=''
	[[ -n $addr6 ]] && v6probe="./wprobe connect $addr6 $own_port | sed 's/^/tcp6 /'"
	# Allowed through the proxy, yet unreachable directly: the sandbox's
	# loopback is its own and there is no route out; no DNS either.
	# (127.0.0.1:$HTTP_PORT is a host loopback port now, reached directly by
	# design: test_host_loopback_port; the decoy's port no rule names.)
	local decoy_before
	decoy_before=$(px_requests decoy)
	px_inside "fetch no-proxy-env http://127.0.0.1:$DECOY_PORT/token.txt
	           fetch noproxy --noproxy '*' http://127.0.0.1:$DECOY_PORT/token.txt
	           fetch own-direct --noproxy '*' http://$addr:$own_port/token.txt
	           ./wprobe connect $addr $own_port | sed 's/^/tcp /'
	           ./wprobe udp $addr 53 | sed 's/^/udp /'
	           $v6probe
	           timeout 10 getent hosts example.invalid; echo \"dns rc=\$?\"
	           timeout 10 getent ahosts wardentest.example.com; echo \"dns2 rc=\$?\"
	           fetch own-proxied http://$addr:$own_port/token.txt
	           unset NO_PROXY no_proxy
	           fetch proxied http://127.0.0.1:$HTTP_PORT/token.txt" \
		--allow-net "127.0.0.1:$HTTP_PORT" --allow-net "$addr:$own_port"
	assert_rc 0
	# NO_PROXY names 127.0.0.1: curl goes direct, to the sandbox's own lo
	assert_out_match '^no-proxy-env rc=[1-9]' 'direct to 127.0.0.1 (NO_PROXY) reached the host'
	assert_out_match '^noproxy rc=[1-9]' "curl --noproxy '*' reached the host's loopback"
	px_no_request decoy "$decoy_before"
	assert_out_match '^own-direct rc=[1-9]' "curl --noproxy '*' reached the host's address"
	assert_out_match '^tcp DENIED (ENETUNREACH|EHOSTUNREACH)' 'direct TCP'
	assert_out_match '^udp DENIED (ENETUNREACH|EHOSTUNREACH)' 'direct UDP'
	[[ -z $addr6 ]] || assert_out_match '^tcp6 DENIED ' 'direct TCP over IPv6'
	assert_out_match '^dns rc=[1-9]' 'DNS lookup'
	assert_out_match '^dns2 rc=[1-9]' 'DNS lookup (ahosts)'
	assert_out_line "own-proxied rc=0 $PX_TOKEN" "the host's address through the proxy (a rule names it)"
	assert_out_line "proxied rc=0 $PX_TOKEN" 'the same server through the proxy'
	(($(px_requests http) == before + 1)) ||
		fail "the loopback server saw $(($(px_requests http) - before)) requests, expected 1 (the proxied one)"
	(($(px_requests own) == 2)) ||
		fail "the server on $addr saw $(($(px_requests own) - 1)) requests from the sandbox, expected 1 (the proxied one)"
	net_expect 'direct connect' method=connect address="$addr" port="$own_port" decision=deny
	net_expect 'proxied GET' method=GET port="$HTTP_PORT" decision=allow
	net_expect 'proxied GET to this host' method=GET host="$addr" port="$own_port" decision=allow
	px_log_ok
}

# ---- as root: a test host in a network namespace of the test's own -------

test_proxy_netns_http_https() {
	px_netns
	local loopname selfname mixname
	loopname=$(nh_name loop)
	selfname=$(nh_name self)
	mixname=$(nh_name mix)
	nh_hosts_add "$loopname" 127.0.0.1
	nh_hosts_add "$selfname" "$NH_HOSTIP"
	# a name with a refused and an allowed address: only the allowed one is dialed
	nh_hosts_add "$mixname" 127.0.0.1
	nh_hosts_add "$mixname" "$NH_IP"

	# an IP literal a rule names: allowed, though private
	px_inside "fetch http http://$NH_IP:8080/token.txt
	           fetch https --cacert testca.crt https://$NH_IP:8443/token.txt" \
		--allow-net "$NH_IP"
	assert_out_line "http rc=0 $PX_TOKEN" 'HTTP to an allowed IP'
	assert_out_line "https rc=0 $PX_TOKEN" 'HTTPS to an allowed IP'
	net_expect 'GET by IP' method=GET host="$NH_IP" port=8080 address="$NH_IP" decision=allow status=200 rule="$NH_IP"
	net_expect 'CONNECT by IP' method=CONNECT host="$NH_IP" port=8443 address="$NH_IP" decision=allow 'bytes_in>0'
	px_log_ok

	# a name resolving to a private address, with `private`: allowed
	printf 'net allow %s private\n' "$PX_NAME" >"$T_TMP/private.profile"
	px_inside "fetch http http://$PX_NAME:8080/token.txt
	           fetch https --cacert testca.crt https://$PX_NAME:8443/token.txt" \
		--profile "$T_TMP/private.profile"
	assert_out_line "http rc=0 $PX_TOKEN" 'HTTP to a name allowed with private'
	assert_out_line "https rc=0 $PX_TOKEN" 'HTTPS to a name allowed with private'
	net_expect 'GET by name' method=GET host="$PX_NAME" port=8080 address="$NH_IP" decision=allow status=200 \
		rule="$PX_NAME"
	net_expect 'CONNECT by name' method=CONNECT host="$PX_NAME" port=8443 address="$NH_IP" decision=allow \
		'bytes_in>0' 'bytes_out>0'
	px_log_ok

	# the same from the command line: --allow-net 'NAME private'
	px_inside "fetch http http://$PX_NAME:8080/token.txt" --allow-net "$PX_NAME private"
	assert_rc 0 "--allow-net '$PX_NAME private'"
	assert_out_line "http rc=0 $PX_TOKEN" "HTTP to a name allowed with --allow-net 'NAME private'"
	wrun --allow-net "$PX_NAME public" -- true
	assert_rc 125 "--allow-net 'NAME public'"
	assert_err_match 'PATTERN private' 'the error says what --allow-net takes'

	# the same name without `private`: refused, and the reason says so
	local before
	before=$(px_requests http)
	px_inside "raw get http GET http://$PX_NAME:8080/token.txt $PX_NAME:8080
	           code curl-https --cacert testca.crt https://$PX_NAME:8443/token.txt
	           raw socks socks5 $PX_NAME 8080" \
		--allow-net "$PX_NAME"
	assert_out_match '^get STATUS 403 ' 'a name resolving to a private address'
	grep -qiE '^get (STATUS|REASON) .*private' <<<"$OUT" ||
		fail "the refusal does not say private: $(excerpt "$(grep '^get ' <<<"$OUT")")"
	assert_out_match '^curl-https rc=[1-9][0-9]* 000 403$' 'CONNECT to a name resolving to a private address'
	assert_out_line 'socks REPLY 2' 'SOCKS5 to a name resolving to a private address'
	px_no_request http "$before"
	net_expect 'private refused' method=GET host="$PX_NAME" decision=deny 'reason~private' address="$NH_IP"
	net_expect 'private refused (CONNECT)' method=CONNECT host="$PX_NAME" decision=deny 'reason~private'
	net_expect 'private refused (SOCKS5)' method=socks5 host="$PX_NAME" decision=deny 'reason~private'
	px_log_ok

	# names resolving to loopback or to this host, even with `private`;
	# a port rule; deny wins over allow
	cat >"$T_TMP/mixed.profile" <<EOF
net allow $loopname private
net allow $selfname private
net allow $mixname private
net allow $NH_IP
net deny $NH_IP:8443
EOF
	px_inside "raw loop http GET http://$loopname:8080/ $loopname:8080
	           raw self http GET http://$selfname:8080/ $selfname:8080
	           raw loop-s socks5 $loopname 8080
	           fetch ok http://$NH_IP:8080/token.txt
	           fetch mix http://$mixname:8080/token.txt
	           code denied --cacert testca.crt https://$NH_IP:8443/token.txt" \
		--profile "$T_TMP/mixed.profile"
	assert_out_match '^loop STATUS 403 ' 'a name resolving to 127.0.0.1'
	grep -qiE '^loop (STATUS|REASON) .*loopback' <<<"$OUT" || fail 'the loopback refusal does not say loopback'
	assert_out_match '^self STATUS 403 ' "a name resolving to this host's address"
	assert_out_line 'loop-s REPLY 2' 'SOCKS5 to a name resolving to 127.0.0.1'
	assert_out_line "ok rc=0 $PX_TOKEN" 'the allowed port'
	assert_out_line "mix rc=0 $PX_TOKEN" 'a name with a loopback and a private address'
	net_expect 'mixed name dials the allowed address' method=GET host="$mixname" decision=allow address="$NH_IP"
	net_expect_none 'mixed name' host="$mixname" address=127.0.0.1 decision=allow
	assert_out_match '^denied rc=[1-9][0-9]* 000 403$' 'deny wins over allow'
	net_expect 'loopback name' host="$loopname" decision=deny 'reason~loopback' address=127.0.0.1
	net_expect 'host address name' host="$selfname" decision=deny address="$NH_HOSTIP"
	net_expect 'deny wins' method=CONNECT host="$NH_IP" port=8443 decision=deny rule="$NH_IP:8443"
	px_log_ok
}

test_proxy_netns_socks5() {
	px_netns
	printf 'net allow %s private\n' "$PX_NAME" >"$T_TMP/private.profile"
	px_inside "fetch socks-h --socks5-hostname 127.0.0.1:1080 http://$PX_NAME:8080/token.txt
	           env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY sh -c '
	               o=\$(curl -sS -m 15 --cacert testca.crt https://$PX_NAME:8443/token.txt 2>&1); echo \"all-proxy rc=\$? \$o\"'
	           raw name socks5 $PX_NAME 8080
	           raw ip socks5 $NH_IP 8080" \
		--profile "$T_TMP/private.profile"
	assert_rc 0
	assert_out_line "socks-h rc=0 $PX_TOKEN" 'curl --socks5-hostname by name'
	assert_out_line "all-proxy rc=0 $PX_TOKEN" 'curl over ALL_PROXY (socks5h), TLS inside'
	assert_out_line 'name REPLY 0' 'SOCKS5 CONNECT by domain name'
	assert_out_line 'ip REPLY 2' 'SOCKS5 CONNECT by an address no rule names'
	net_expect 'SOCKS5 by name' method=socks5 host="$PX_NAME" port=8080 address="$NH_IP" decision=allow 'bytes_in>0'
	net_expect 'SOCKS5 TLS by name' method=socks5 host="$PX_NAME" port=8443 decision=allow 'bytes_in>0'
	net_expect 'SOCKS5 by IP refused' method=socks5 host="$NH_IP" decision=deny
	px_log_ok
}

test_proxy_netns_git_https() {
	px_netns
	nh_need git
	nh_git_repo "$T_TMP/www/repo.git" "$PX_TOKEN"
	printf 'net allow %s:8443 private\n' "$PX_NAME" >"$T_TMP/git.profile"
	# git finds the proxy in the environment by itself (the name is not in NO_PROXY)
	px_inside "GIT_SSL_CAINFO=\$PWD/testca.crt git clone -q https://$PX_NAME:8443/repo.git cloned 2>&1
	           echo \"clone rc=\$?\"; cat cloned/token.txt
	           git -c http.sslCAInfo=\$PWD/testca.crt clone -q http://$PX_NAME:8080/repo.git plain 2>&1
	           echo \"plain rc=\$?\"" \
		--profile "$T_TMP/git.profile"
	assert_out_line 'clone rc=0' 'git clone over HTTPS by name'
	assert_out_line "$PX_TOKEN" 'the cloned file'
	assert_out_match '^plain rc=[1-9]' 'git clone over plain HTTP on a port no rule allows'
	net_expect 'git CONNECT' method=CONNECT host="$PX_NAME" port=8443 address="$NH_IP" decision=allow 'bytes_in>0'
	net_expect 'git plain refused' method=GET host="$PX_NAME" port=8080 decision=deny
	px_log_ok
}

test_proxy_netns_git_ssh() {
	px_netns
	nh_need git ssh
	mkdir -p "$T_TMP/git"
	nh_git_repo "$T_TMP/git/repo.git" "$PX_TOKEN"
	# the client key lives in the workspace under a name the profile does not mask
	nh_sshd "$T_TMP/client"
	cp "$T_TMP/client/id_ed25519" "$WS/sshkey"
	chmod 0600 "$WS/sshkey"
	# the server and key work from the host, without warden
	local hout
	hout=$(timeout 30 git -c core.sshCommand="ssh -i $WS/sshkey -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10" \
		ls-remote "ssh://root@$NH_IP$T_TMP/git/repo.git" 2>&1) ||
		fatal "git over ssh does not work from the host: $(excerpt "$hout") / sshd: $(excerpt "$(tail -n 5 "$SSHD_LOG")")"
	printf 'net allow %s:22 private\n' "$PX_NAME" >"$T_TMP/ssh.profile"
	px_inside "[ -n \"\$GIT_SSH_COMMAND\" ] || echo 'no GIT_SSH_COMMAND'
	           banner=\$(sleep 3 | timeout 10 /.warden/warden __connect $PX_NAME 22 2>&1 | head -c 8)
	           echo \"banner \$banner\"
	           export GIT_SSH_COMMAND=\"\$GIT_SSH_COMMAND -i \$PWD/sshkey -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10\"
	           timeout 60 git clone -q ssh://root@$PX_NAME$T_TMP/git/repo.git cloned 2>&1
	           echo \"clone rc=\$?\"; cat cloned/token.txt
	           timeout 30 git ls-remote ssh://root@$NH_IP$T_TMP/git/repo.git >/dev/null 2>&1; echo \"by-ip rc=\$?\"" \
		--profile "$T_TMP/ssh.profile"
	assert_out_lacks 'no GIT_SSH_COMMAND'
	assert_out_match '^banner SSH-2\.0' '/.warden/warden __connect relays the ssh banner'
	assert_out_line 'clone rc=0' 'git clone over ssh through the proxy'
	assert_out_line "$PX_TOKEN" 'the cloned file'
	assert_out_match '^by-ip rc=[1-9]' 'ssh to an address no rule names'
	grep -q 'Accepted publickey for root' "$SSHD_LOG" || fail "sshd did not accept the key: $(excerpt "$(tail -n 5 "$SSHD_LOG")")"
	net_expect 'ssh CONNECT' method=CONNECT host="$PX_NAME" port=22 address="$NH_IP" decision=allow 'bytes_in>0' 'bytes_out>0'
	net_expect 'ssh by IP refused' method=CONNECT host="$NH_IP" port=22 decision=deny
	px_log_ok
}

test_proxy_netns_direct_fails() {
	px_netns
	# allowed through the proxy, reachable from the host, unreachable directly
	px_inside "fetch noproxy --noproxy '*' -m 5 http://$NH_IP:8080/token.txt
	           ./wprobe connect $NH_IP 8080 | sed 's/^/tcp /'
	           ./wprobe udp $NH_IP 53 | sed 's/^/udp /'
	           timeout 10 getent hosts example.invalid; echo \"dns rc=\$?\"
	           fetch proxied http://$NH_IP:8080/token.txt" \
		--allow-net "$NH_IP"
	assert_rc 0
	assert_out_match '^noproxy rc=[1-9]' "curl --noproxy '*' reached the test host"
	assert_out_match '^tcp DENIED (ENETUNREACH|EHOSTUNREACH)' 'direct TCP to the test host'
	assert_out_match '^udp DENIED (ENETUNREACH|EHOSTUNREACH)' 'direct UDP to the test host'
	assert_out_match '^dns rc=[1-9]' 'DNS lookup'
	assert_out_line "proxied rc=0 $PX_TOKEN" 'the same host through the proxy'
	net_expect 'direct connect' method=connect address="$NH_IP" port=8080 decision=deny
	net_expect 'proxied GET' method=GET host="$NH_IP" port=8080 decision=allow
	px_log_ok
}

test_connect_wildcard_stays_inside() {
	# A connect or a datagram to 0.0.0.0, ::, or a loopback address mapped
	# into IPv6 reaches the sandbox's own loopback (the kernel takes the
	# unspecified address for it): no refused way out, in the summary or in
	# the log. glibc's getaddrinfo does it for every passive lookup (a dev
	# server's), which ended each `python3 -m http.server` session with two
	# false refusals. An IPv6 address that does lead out is listed in
	# brackets, [ADDR]:PORT.
	wsh './wprobe udp 0.0.0.0 8000; ./wprobe udp :: 8000; ./wprobe connect ::ffff:127.0.0.1 9;
		./wprobe connect ::ffff:0.0.0.0 9; ./wprobe connect 2001:db8::1 443; echo done'
	assert_out_line done
	assert_err_match '^  \[2001:db8::1\]:443: a direct connection' 'an IPv6 way out, bracketed'
	local n
	n=$(grep -c '^  .*: a direct connection' <<<"$ERR")
	((n == 1)) || fail "$n direct connections listed, not 1: $(excerpt "$ERR")"
	n=$(grep -F '"method":"connect"' "$(latest_log)" | grep -c '"event":"net"')
	((n == 1)) || fail "$n connect events in the log, not 1 (2001:db8::1's)"
	if have python3; then
		wsh 'python3 -c "import socket; socket.getaddrinfo(None, 8000, type=socket.SOCK_STREAM,
			flags=socket.AI_PASSIVE)"; echo done'
		assert_out_line done
		[[ $ERR != *'direct connection'* ]] || fail "a passive lookup listed as refused: $(excerpt "$ERR")"
	fi
}

test_refusal_summary_fix_first() {
	# The summary's ten lines: those that carry a fix (a flag that would
	# allow it) come first, so a refusal the user can act on is not cut to
	# "and N more" behind writes nothing allows; fontconfig's read-only
	# system cache (it falls back to ~/.cache) is not listed at all.
	# A host's loopback port tried inside (the server the command meant)
	# comes before a refused host's --allow-net.
	nh_need curl
	have python3 || skip 'python3 is not installed'
	python3 -c 'import socket,time
a=socket.socket(); a.bind(("127.0.0.1",0)); a.listen()
print(a.getsockname()[1], flush=True); time.sleep(60)' >"$T_TMP/ports" &
	bg_track $!
	wait_for "$T_TMP/ports" '^[0-9]' 10 || fatal 'no host listener'
	local port
	read -r port <"$T_TMP/ports"
	wsh "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do true >/usr/wtest\$i; done 2>/dev/null
		mkdir -p /var/cache/fontconfig 2>/dev/null; true 2>/dev/null >/var/cache/fontconfig/wtest-le64.cache-9
		curl -s -o /dev/null http://fixme.wardentest.invalid/; curl -s -m 3 http://127.0.0.1:$port/; echo done"
	assert_out_line done
	assert_err_match '^warden: refused during this session:$' 'summary header'
	local lines
	lines=$(grep -A2 '^warden: refused during this session:' <<<"$ERR" | tail -n 2)
	[[ $lines == "  127.0.0.1:$port: nothing listens at port $port inside; "*"--allow-net 127.0.0.1:$port"$'\n''  fixme.wardentest.invalid:80: no rule allows it; allow it with --allow-net fixme.wardentest.invalid' ]] ||
		fail "the lines with a fix are not first: $(excerpt "$ERR")"
	assert_err_match '^  open /usr/wtest1: read-only mount$' 'the plain refusals after them'
	assert_err_match '^  and 4 more refusals$' 'the rest counted'
	[[ $ERR != *'/var/cache'* ]] || fail "fontconfig's system cache listed: $(excerpt "$ERR")"
	grep -F '"event":"file"' "$(latest_log)" | matches -F '/var/cache' ||
		fail 'the font cache refusals are not in the log'
}

test_refusal_summary() {
	# At the end of a session, stderr lists each refused thing once, with the
	# reason and the flag that would allow it; --quiet drops the list, and a
	# session with nothing refused prints none. Requests the proxy would not
	# parse (no host to name) are a line per reason, a SOCKS5 one among
	# them.
	nh_need curl
	local name=refused.wardentest.invalid n
	wsh "curl -s https://$name/; curl -s https://$name/again; ./wprobe connect 192.0.2.1 80; ./wprobe ptrace-child; ./wprobe udp 192.0.2.7 53; printf 'GET http://127.0.0.1:9/ HTTP/1.1\\r\\nHost: other.example\\r\\n\\r\\n' | curl -s --max-time 5 telnet://\${HTTP_PROXY#http://} >/dev/null; printf 'POST http://127.0.0.1:9/ HTTP/1.1\\r\\nHost: 127.0.0.1:9\\r\\nContent-Length: 1\\r\\nContent-Length: 1\\r\\n\\r\\nx' | curl -s --max-time 5 telnet://\${HTTP_PROXY#http://} >/dev/null; printf '\\005\\001\\000\\005\\001\\000\\003\\003a\\000b\\001\\273' | curl -s --max-time 5 telnet://\${ALL_PROXY#socks5h://} >/dev/null; /proc/1/root/bin/true 2>/dev/null; echo done"
	assert_out_line done
	assert_err_match '^warden: refused during this session:$' 'summary header'
	assert_err_match "^  $name:443 \\(2 times\\): no rule allows it; allow it with --allow-net $name\$" \
		'refused destination, once, with its flag'
	assert_err_match '^  192\.0\.2\.1:80: a direct connection' 'direct connection'
	assert_err_match '^  syscall ptrace: refused' 'refused syscall'
	assert_err_match '^  192\.0\.2\.7:53: a direct connection' 'a datagram sent out'
	assert_err_match "^  a request to warden's proxy: Host header disagrees with URL" 'a request the proxy refused to parse'
	assert_err_match "^  a request to warden's proxy: duplicate Content-Length\$" 'another reason, its own line'
	assert_err_match "^  a SOCKS5 request to warden's proxy: bad domain name" 'a SOCKS5 request the proxy refused to parse'
	# an exec through init's root: resolved to the file it reaches where
	# warden may read init's links (root; the kernel then refuses it, init
	# is not dumpable), else refused and named by the path tried; the
	# alert for a spelling through /proc either way
	if grep -F '"event":"exec"' "$(latest_log)" | grep -F '"path":"/proc/1/root/bin/true"' |
		matches -F '"resolved":"/usr/bin/true"'; then
		[[ $ERR != *'exec /proc/1/root/bin/true'* ]] || fail "a resolved exec listed as refused: $(excerpt "$ERR")"
	else
		assert_err_match '^  exec /proc/1/root/bin/true: warden could not resolve it' 'an exec not resolved, by the path tried'
	fi
	grep -F '"event":"alert"' "$(latest_log)" | matches -F '"rule":"exec.proc-self"' ||
		fail 'no alert for the exec through /proc'
	n=$(grep -c "$name" <<<"$ERR")
	((n == 1)) || fail "the destination is listed $n times, not once: $(excerpt "$ERR")"
	wsh "curl -s https://$name/; echo done" --quiet
	assert_out_line done
	[[ $ERR != *'refused during'* ]] || fail "--quiet still prints the summary: $(excerpt "$ERR")"
	wsh 'echo done'
	assert_out_line done
	[[ -z $ERR ]] || fail "a session with nothing refused prints: $(excerpt "$ERR")"
}
