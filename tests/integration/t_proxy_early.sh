# t_proxy_early.sh - bytes a client sends to warden's proxy in the same write
# as its request: a CONNECT head or a SOCKS5 greeting and request followed by
# the tunnel's first bytes (plain, or a TLS ClientHello), a plain request
# followed by the start of a pipelined second one. They go upstream as soon
# as the upstream is connected (and a tunnel's TLS name is checked), as if
# they had been sent later: the client is answered without sending more, a
# wrong TLS name is refused at once, and the `net` event's bytes_out is what
# the upstream received. The same for a tunnel whose TLS warden terminates
# (a secret bound to its host).
#
# Servers are the tests' own, on the host's loopback only (the proxy dials a
# port a rule names as 127.0.0.1:PORT), so these run unprivileged too.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# How long a client waits for each answer (seconds): the proxy answers in
# milliseconds; one that holds the early bytes never answers.
EARLY_WAIT=5

# early_upstream: a raw HTTP server on 127.0.0.1 that answers each request
# once it has read the whole of it (head and Content-Length body): 200 with
# the body "GOT <bytes read so far> <request line>". When the connection
# ends it logs "END <bytes received> <request line> <bytes of its first
# request>" to $T_TMP/early.err.
# Sets EARLY_PORT.
early_upstream() {
	nh_python
	cat >"$T_TMP/early_srv.py" <<'PY'
import os, socket, sys, threading, time
threading.Thread(target=lambda: (time.sleep(float(os.environ.get('NH_LIFETIME', '90'))), os._exit(0)),
                 daemon=True).start()
ls = socket.socket()
ls.bind(('127.0.0.1', 0))
ls.listen(64)
print('LISTENING', ls.getsockname()[1], flush=True)

def request_end(buf):
    """The length of the whole request at the start of buf, or None."""
    if b'\r\n\r\n' not in buf:
        return None
    head, _, _ = buf.partition(b'\r\n\r\n')
    n = 0
    for line in head.split(b'\r\n')[1:]:
        k, _, v = line.partition(b':')
        if k.strip().lower() == b'content-length':
            n = int(v)
    end = len(head) + 4 + n
    return end if len(buf) >= end else None

def serve(c):
    c.settimeout(20)
    buf, answered = b'', False
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            buf += d
            if not answered and request_end(buf) is not None:
                body = b'GOT %d %s' % (len(buf), buf.split(b'\r\n')[0])
                c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s'
                          % (len(body), body))
                answered = True
    except OSError:
        pass
    sys.stderr.write('END %d %s %s\n' % (len(buf), buf.split(b'\r\n')[0].decode('latin-1'),
                                          request_end(buf) or '-'))
    sys.stderr.flush()
    c.close()

while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	env NH_LIFETIME="$NH_LIFETIME" timeout -k 2 "$NH_LIFETIME" "$NH_PY" "$T_TMP/early_srv.py" \
		>"$T_TMP/early.out" 2>"$T_TMP/early.err" &
	local pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/early.out" '^LISTENING' 10 ||
		fatal "the upstream did not start: $(excerpt "$(cat "$T_TMP/early.err")")"
	EARLY_PORT=$(awk '/^LISTENING/ { print $2; exit }' "$T_TMP/early.out")
}

# early_client: write early.py into the workspace. Inside the sandbox:
#   early.py http|socks5 PORT PATH BODYLEN [KEY]
#       one write: a CONNECT to 127.0.0.1:PORT (or a SOCKS5 greeting and
#       request) and a POST PATH with a body of BODYLEN bytes (and a header
#       "X-Key: KEY"); prints
#       "SENT <bytes after the proxy's request>", then "ANSWER <seconds>
#       <the upstream's body>" or "STALLED <seconds>" (no whole answer within
#       EARLY_WAIT) or "CLOSED <seconds>"
#   early.py plain PORT
#       one write: GET http://127.0.0.1:PORT/first and the start of a second
#       request; prints "ANSWER ..." as above
#   early.py tls http|socks5 PORT SNI|- CAFILE|-
#       one write: the tunnel's request and a TLS ClientHello (SNI - for
#       none; CAFILE - checks no certificate), then GET /token.txt; prints
#       "TLS <seconds> <body>", "STALLED <seconds> <where>" or "CLOSED
#       <seconds> <where>"
early_client() {
	cat >"$WS/early.py" <<PY
import socket, ssl, struct, sys, time
WAIT = $EARLY_WAIT
PY
	cat >>"$WS/early.py" <<'PY'

class Stalled(Exception):
    pass

class Closed(Exception):
    pass

def opening(mode, port):
    """The proxy's socket and the bytes of the tunnel's request."""
    if mode == 'http':
        s = socket.create_connection(('127.0.0.1', 3128))
        return s, b'CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n' % (port, port)
    s = socket.create_connection(('127.0.0.1', 1080))
    return s, b'\x05\x01\x00' + b'\x05\x01\x00\x01' + socket.inet_aton('127.0.0.1') + struct.pack('>H', port)

def recv(s, t0):
    left = WAIT - (time.time() - t0)
    if left <= 0:
        raise Stalled()
    s.settimeout(left)
    try:
        d = s.recv(65536)
    except socket.timeout:
        raise Stalled()
    if not d:
        raise Closed()
    return d

def proxy_answer(s, mode, t0):
    """Read the proxy's answer to the request; the bytes after it."""
    buf = b''
    if mode == 'http':
        while b'\r\n\r\n' not in buf:
            buf += recv(s, t0)
        head, _, rest = buf.partition(b'\r\n\r\n')
        if b' 200 ' not in head.split(b'\r\n')[0]:
            raise Closed('proxy: ' + head.split(b'\r\n')[0].decode())
        return rest
    while len(buf) < 12:  # the greeting's reply, the request's (IPv4)
        buf += recv(s, t0)
    if buf[3] != 0:
        raise Closed('SOCKS5 reply %d' % buf[3])
    return buf[12:]

def http_answer(buf, more):
    """A whole HTTP response (Content-Length framed) from buf, more() for more."""
    while b'\r\n\r\n' not in buf:
        buf += more()
    head, _, body = buf.partition(b'\r\n\r\n')
    n = 0
    for line in head.split(b'\r\n')[1:]:
        k, _, v = line.partition(b':')
        if k.strip().lower() == b'content-length':
            n = int(v)
    while len(body) < n:
        body += more()
    return body[:n].decode('latin-1')

def tunnel(mode, port, path, bodylen, key):
    s, req = opening(mode, port)
    key = b'X-Key: %s\r\n' % key.encode() if key else b''
    payload = b'POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n%s' % (
        path.encode(), key, bodylen, b'x' * bodylen)
    print('SENT', len(payload), flush=True)
    t0 = time.time()
    s.sendall(req + payload)
    rest = proxy_answer(s, mode, t0)
    body = http_answer(rest, lambda: recv(s, t0))
    print('ANSWER %.2f %s' % (time.time() - t0, body))

def plain(port):
    s = socket.create_connection(('127.0.0.1', 3128))
    t0 = time.time()
    s.sendall(b'GET http://127.0.0.1:%d/first HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n'
              b'GET http://127.0.0.1:%d/second HTTP/1.1\r\nHo' % (port, port, port))
    body = http_answer(b'', lambda: recv(s, t0))
    print('ANSWER %.2f %s' % (time.time() - t0, body))

def tls(mode, port, sni, ca):
    ctx = ssl.create_default_context(cafile=None if ca == '-' else ca)
    ctx.check_hostname = False
    if ca == '-':
        ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    t = ctx.wrap_bio(inc, out, server_hostname=None if sni == '-' else sni)
    try:
        t.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s, req = opening(mode, port)
    t0 = time.time()
    s.sendall(req + out.read())  # the ClientHello with the request
    where = 'the proxy'
    try:
        inc.write(proxy_answer(s, mode, t0))
        where = 'the TLS handshake'
        while True:
            try:
                t.do_handshake()
                break
            except ssl.SSLWantReadError:
                s.sendall(out.read())
                inc.write(recv(s, t0))
        t.write(b'GET /token.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n' % port)
        s.sendall(out.read())
        where = 'the response'

        def more():
            while True:
                try:
                    d = t.read(65536)
                except ssl.SSLWantReadError:
                    inc.write(recv(s, t0))
                    continue
                if not d:
                    raise Closed()
                return d
        body = http_answer(b'', more)
        print('TLS %.2f %s' % (time.time() - t0, body.strip()))
    except Stalled:
        print('STALLED %.2f %s' % (time.time() - t0, where))
    except (Closed, ssl.SSLError, ConnectionError) as e:
        print('CLOSED %.2f %s %s' % (time.time() - t0, where, e))

try:
    if sys.argv[1] == 'tls':
        tls(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif sys.argv[1] == 'plain':
        plain(int(sys.argv[2]))
    else:
        tunnel(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]),
               sys.argv[5] if len(sys.argv) > 5 else '')
except Stalled:
    print('STALLED')
except (Closed, ConnectionError) as e:
    print('CLOSED', e)
PY
}

# early_end PATH: the bytes the upstream received on the connection whose
# first request line names PATH ("" when it has not ended), waiting a while
# for the connection's end.
early_end() {
	wait_for "$T_TMP/early.err" "^END [0-9]+ [A-Z]+ $1 " 10
	awk -v p="$1" '$1 == "END" && $4 == p { print $2; exit }' "$T_TMP/early.err"
}

# A CONNECT head or a SOCKS5 greeting and request with the tunnel's first
# bytes in the same write; a plain request with the start of the next.
test_proxy_early_data() {
	early_upstream
	early_client
	local p=$EARLY_PORT
	# (a body larger than the proxy's first read of the request: part of
	# it is read with the head, the rest is still in the socket)
	wrun --allow-net "127.0.0.1:$p" -- sh -c "unset NO_PROXY no_proxy
		/usr/bin/python3 early.py http $p /connect 5 | sed 's/^/connect /'
		/usr/bin/python3 early.py socks5 $p /socks 5 | sed 's/^/socks /'
		/usr/bin/python3 early.py http $p /connect-big 20000 | sed 's/^/connect-big /'
		/usr/bin/python3 early.py socks5 $p /socks-big 20000 | sed 's/^/socks-big /'
		/usr/bin/python3 early.py plain $p | sed 's/^/plain /'"
	assert_rc 0
	local label sent got
	for label in connect socks connect-big socks-big; do
		sent=$(awk -v l="$label" '$1 == l && $2 == "SENT" { print $3; exit }' <<<"$OUT")
		assert_out_match "^$label ANSWER [0-9.]+ GOT $sent POST /$label HTTP/1.1\$" \
			"$label: the upstream's answer within ${EARLY_WAIT}s, the early bytes all read"
		got=$(early_end "/$label")
		[[ -n $sent && $got == "$sent" ]] ||
			fail "$label: the upstream received ${got:-nothing} bytes, the client sent ${sent:-?} after its request"
		if [[ $label == connect* ]]; then
			net_expect "$label: bytes_out is what went upstream" method=CONNECT port="$p" \
				decision=allow status=200 "bytes_out=${sent:-?}" 'bytes_in>0'
		else
			net_expect "$label: bytes_out is what went upstream" method=socks5 port="$p" \
				decision=allow "bytes_out=${sent:-?}" 'bytes_in>0'
		fi
	done
	# the plain request answered; the pipelined one never goes upstream
	assert_out_match '^plain ANSWER [0-9.]+ GOT [0-9]+ GET /first HTTP/1.1$' \
		"plain: the first request answered within ${EARLY_WAIT}s"
	got=$(early_end /first)
	net_expect 'plain: bytes_out is what went upstream' method=GET port="$p" \
		decision=allow status=200 "bytes_out=${got:-?}"
	awk '$1 == "END" && $4 == "/first" && $2 == $6 { ok = 1 } END { exit !ok }' "$T_TMP/early.err" ||
		fail "the upstream received more than the first request: $(excerpt "$(<"$T_TMP/early.err")")"
	net_fields 'net event fields'
}

# A TLS ClientHello in the same write as the tunnel's request: its name
# checked and the handshake carried on at once, a wrong name refused at once;
# the same through a tunnel whose TLS warden terminates (a secret bound to
# the host).
test_proxy_early_data_tls() {
	nh_need openssl
	nh_python
	early_client
	mkdir -p "$T_TMP/www"
	local token
	token=$(unique)
	printf '%s\n' "$token" >"$T_TMP/www/token.txt"
	chmod -R a+rX "$T_TMP/www"
	nh_ca "$T_TMP/ca" "warden early data test CA $$"
	nh_cert_signed "$T_TMP/tls" 127.0.0.1 IP:127.0.0.1 "$T_TMP/ca"
	cp "$T_TMP/ca/ca.pem" "$WS/testca.crt"
	nh_web https "$T_TMP/www" 127.0.0.1 0 "$T_TMP/tls/cert.pem" "$T_TMP/tls/key.pem"
	local p=$PORT t="/usr/bin/python3 early.py tls"
	wrun --allow-net "127.0.0.1:$p" -- sh -c "unset NO_PROXY no_proxy
		$t http $p - testca.crt | sed 's/^/tls-c /'
		$t socks5 $p - testca.crt | sed 's/^/tls-s /'
		$t http $p other.wardentest.invalid - | sed 's/^/other-c /'
		$t socks5 $p other.wardentest.invalid - | sed 's/^/other-s /'"
	assert_rc 0
	assert_out_match "^tls-c TLS [0-9.]+ $token\$" \
		"CONNECT and a ClientHello in one write: the handshake and the answer within ${EARLY_WAIT}s"
	assert_out_match "^tls-s TLS [0-9.]+ $token\$" \
		"SOCKS5 and a ClientHello in one write: the handshake and the answer within ${EARLY_WAIT}s"
	assert_out_match '^other-c CLOSED [0-9.]+ the TLS handshake' \
		"CONNECT and a ClientHello naming another host: refused within ${EARLY_WAIT}s"
	assert_out_match '^other-s CLOSED [0-9.]+ the TLS handshake' \
		"SOCKS5 and a ClientHello naming another host: refused within ${EARLY_WAIT}s"
	net_expect 'CONNECT, the early ClientHello passed' method=CONNECT port="$p" decision=allow \
		'bytes_out>0' 'bytes_in>0'
	net_expect 'SOCKS5, the early ClientHello passed' method=socks5 port="$p" decision=allow \
		'bytes_out>0' 'bytes_in>0'
	net_expect 'CONNECT, the early ClientHello refused' method=CONNECT port="$p" decision=deny \
		'reason~other.wardentest.invalid' 'bytes_out=0'
	net_expect 'SOCKS5, the early ClientHello refused' method=socks5 port="$p" decision=deny \
		'reason~other.wardentest.invalid' 'bytes_out=0'
	net_fields 'net event fields'

	# warden terminates the TLS (a secret bound there): the early
	# ClientHello is the start of its handshake with the client
	MYTOKEN=tok-live-0123456789abcdefghijklmnopqrstuv NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem \
		wrun --secret "MYTOKEN@127.0.0.1:$p" --allow-net "127.0.0.1:$p" -- sh -c "unset NO_PROXY no_proxy
		$t http $p - - | sed 's/^/icpt /'"
	assert_rc 0
	assert_out_match "^icpt TLS [0-9.]+ $token\$" \
		"an intercepted CONNECT and a ClientHello in one write: answered within ${EARLY_WAIT}s"
	net_expect 'intercepted, the early ClientHello taken' method=CONNECT port="$p" decision=allow \
		intercepted=true requests=1 'bytes_out>0' 'bytes_in>0'
}

# What came with the request is shown to the secrets guard as what comes
# later is: a decoy credential's token (a canary) or the phantom of a secret
# bound elsewhere, sent in the same write as a CONNECT or a SOCKS5 request,
# is refused before it goes upstream, with its alert.
test_proxy_early_data_guarded() {
	early_upstream
	early_client
	local p=$EARLY_PORT
	printf 'risk freeze off\nrisk kill off\n' >"$T_TMP/cq.profile"
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=tok-live-0123456789abcdefghijklmnopqrstuv wrun --profile "$T_TMP/cq.profile" \
		--secret MYTOKEN@127.0.0.1:9 --allow-net "127.0.0.1:$p" -- sh -c 'unset NO_PROXY no_proxy
		id=$(sed -n "s/^aws_access_key_id = //p" ~/.aws/credentials)
		e() { l=$1; shift; /usr/bin/python3 early.py "$@" | sed "s/^/$l /"; }
		e canary-c http '"$p"' /canary-c 5 "$id"
		e canary-s socks5 '"$p"' /canary-s 5 "$id"
		e phantom-c http '"$p"' /phantom-c 5 "$MYTOKEN"
		e phantom-s socks5 '"$p"' /phantom-s 5 "$MYTOKEN"
		e clean http '"$p"' /clean 5'
	assert_rc 0
	local label
	for label in canary-c canary-s phantom-c phantom-s; do
		assert_out_match "^$label CLOSED" "$label: refused within ${EARLY_WAIT}s"
		assert_out_lacks "$label ANSWER" "$label: the upstream answered"
	done
	assert_out_match "^clean ANSWER [0-9.]+ GOT [0-9]+ POST /clean HTTP/1.1\$" 'a tunnel without a token'
	wait_for "$T_TMP/early.err" '^END [0-9]+ POST /clean ' 10
	grep -qE 'AKIA|tok-live|/canary|/phantom' "$T_TMP/early.err" &&
		fail "a token reached the upstream: $(excerpt "$(<"$T_TMP/early.err")")"
	local log n
	log=$(latest_log)
	n=$(grep -F '"event":"alert"' "$log" | grep -cF '"rule":"canary.token"')
	[[ $n == 2 ]] || fail "expected two canary.token alerts, got $n"
	n=$(grep -F '"event":"alert"' "$log" | grep -cF '"rule":"secret.phantom"')
	[[ $n == 2 ]] || fail "expected two secret.phantom alerts, got $n"
	net_expect 'CONNECT with a token refused' method=CONNECT port="$p" decision=deny 'bytes_out=0' \
		'reason~credential'
	net_expect 'SOCKS5 with a token refused' method=socks5 port="$p" decision=deny 'bytes_out=0' \
		'reason~credential'
	net_expect 'CONNECT with a phantom refused' method=CONNECT port="$p" decision=deny 'bytes_out=0' \
		'reason~phantom'
	net_expect 'SOCKS5 with a phantom refused' method=socks5 port="$p" decision=deny 'bytes_out=0' \
		'reason~phantom'
}
