# t_netprog.sh - each proxied connection tied to the program that made it:
# the `net` event names the program (its executable inside, pid inside,
# SHA-256), and `net allow HOST program NAME|sha256:HEX` lets that program
# through and refuses another (curl) to the same host; a socket held by two
# processes (inherited by a fork) names no program (program_unknown) and a
# program-scoped rule does not match it.
#
# The server is the test's own, on the host's loopback (a rule naming
# 127.0.0.1:PORT: the proxy dials it), so these run unprivileged too.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# np_server: a served directory with token.txt (NP_TOKEN) on the host's
# loopback at NP_PORT; the sandbox's client np.py in the workspace:
#   python3 np.py PORT [fork|pass]   an absolute-form GET through the proxy
#   (fork: a child keeps the socket open meanwhile; pass: a child is handed
#   it over a unix socket, SCM_RIGHTS, and keeps it), prints "py STATUS".
np_server() {
	nh_need curl
	nh_python
	NP_TOKEN=$(unique)
	mkdir -p "$T_TMP/www"
	printf '%s\n' "$NP_TOKEN" >"$T_TMP/www/token.txt"
	chmod -R a+rX "$T_TMP/www"
	nh_web http "$T_TMP/www" 127.0.0.1 0
	NP_PORT=$PORT
	NP_PY=$(readlink -f "$NH_PY")
	NP_SHA=$(sha256sum "$NP_PY" | cut -d' ' -f1)
	cat >"$WS/np.py" <<'PY'
import os, socket, sys, time
port = int(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else ''
child = 0
if mode == 'pass':  # a child that is handed the socket over a unix socket
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    child = os.fork()
    if child == 0:  # receives it (SCM_RIGHTS), keeps it, sends nothing
        a.close()
        msg, fds, _, _ = socket.recv_fds(b, 16, 1)
        b.sendall(b'k')
        time.sleep(3)
        os._exit(0)
    b.close()
s = socket.create_connection(('127.0.0.1', 3128))
if mode == 'fork':
    child = os.fork()
    if child == 0:  # keeps the socket, sends nothing
        time.sleep(3)
        os._exit(0)
if mode == 'pass':
    socket.send_fds(a, [b'f'], [s.fileno()])
    a.recv(1)  # the child holds it now
s.sendall(b'GET http://127.0.0.1:%d/token.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
          b'Connection: close\r\n\r\n' % (port, port))
data = b''
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
line = data.split(b'\r\n', 1)[0].decode('latin-1')
print('py', line.split(' ')[1] if ' ' in line else 'none', flush=True)
if child:
    os.kill(child, 9)
    os.waitpid(child, 0)
PY
}

# np_run PROFILE-LINE: python3 then curl to the server, through the proxy.
np_run() {
	printf '%s\n' "$1" >"$T_TMP/np.profile"
	wsh "unset NO_PROXY no_proxy
	     $NH_PY np.py $NP_PORT
	     printf 'curl %s\n' \"\$(curl -sS -m 15 -o /dev/null -w '%{http_code}' http://127.0.0.1:$NP_PORT/token.txt 2>/dev/null)\"" \
		--profile "$T_TMP/np.profile"
}

test_net_program_scope() {
	np_server
	local by
	for by in name path sha256; do
		case $by in
		name) np_run "net allow 127.0.0.1:$NP_PORT program python3*" ;;
		path) np_run "net allow 127.0.0.1:$NP_PORT program /usr/*/python3*" ;;
		sha256) np_run "net allow 127.0.0.1:$NP_PORT program sha256:$NP_SHA" ;;
		esac
		assert_rc 0 "$by"
		assert_out_line 'py 200' "$by: python3 is the program the rule names: let through"
		assert_out_line 'curl 403' "$by: curl to the same host: refused"
		net_expect "$by: python3's event names it" method=GET port="$NP_PORT" decision=allow \
			program="$NP_PY" program_sha256="$NP_SHA" 'program_pid>1' 'rule~program'
		net_expect "$by: curl's event names curl and the scoped rule" method=GET port="$NP_PORT" \
			decision=deny 'program~/curl$' 'program_sha256?' 'reason~for program .*/curl.*names another'
	done
}

test_net_program_passed_socket() {
	np_server
	# the socket inherited by a fork, or passed with SCM_RIGHTS: two
	# holders, no program told
	printf '%s\n' "net allow 127.0.0.1:$NP_PORT program python3*" >"$T_TMP/np.profile"
	local how
	for how in fork pass; do
		wsh "unset NO_PROXY no_proxy; $NH_PY np.py $NP_PORT $how" --profile "$T_TMP/np.profile"
		assert_rc 0 "$how"
		assert_out_line 'py 403' "$how: a socket two processes hold: the program-scoped rule does not match"
		net_expect "$how: the event says the program is unknown" method=GET port="$NP_PORT" \
			decision=deny 'program!' 'program_unknown~several processes' 'reason~program cannot be told'
	done
	# the same without the scope: allowed, still unknown
	printf '%s\n' "net allow 127.0.0.1:$NP_PORT" >"$T_TMP/np.profile"
	wsh "unset NO_PROXY no_proxy; $NH_PY np.py $NP_PORT fork" --profile "$T_TMP/np.profile"
	assert_out_line 'py 200' 'an unscoped rule: allowed'
	net_expect 'unscoped: program unknown on the event' method=GET port="$NP_PORT" decision=allow \
		'program_unknown~several processes'
}

test_net_program_rule_errors() {
	printf 'net deny example.com program curl\n' >"$T_TMP/bad.profile"
	wsh 'true' --profile "$T_TMP/bad.profile"
	assert_rc_nonzero
	[[ $ERR == *"'program' is only for allow and ask rules"* ]] || fail "deny with program: $(excerpt "$ERR")"
	printf 'net allow example.com program sha256:abc\n' >"$T_TMP/bad.profile"
	wsh 'true' --profile "$T_TMP/bad.profile"
	assert_rc_nonzero
	[[ $ERR == *"64 hex digits"* ]] || fail "short sha256: $(excerpt "$ERR")"
}

NP_SECRETS_SERVER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/secrets_server.py

# A secret scoped to a program: its real value goes in for that program's
# requests only; curl's phantom to the same host is refused (a phantom in the
# clear where no secret of its program may go). On the host loopback port
# itself, as NO_PROXY sends clients (a plain request for it through the
# proxy is refused: test_secret_loopback_via_proxy_refused).
test_net_program_secret() {
	nh_need curl
	nh_python
	local real=tok-live-np-0123456789abcdefghijklmnop log=$T_TMP/np-srv.log
	: >"$log"
	"$NH_PY" "$NP_SECRETS_SERVER" --bind 127.0.0.1 --port-file "$T_TMP/np-srv.port" --log "$log" \
		>"$T_TMP/np-srv.out" 2>&1 &
	bg_track $!
	nh_on_exit "kill $!"
	wait_for "$T_TMP/np-srv.port" '^[0-9]+$' 10 || fatal "the server did not start: $(excerpt "$(cat "$T_TMP/np-srv.out")")"
	local port
	port=$(<"$T_TMP/np-srv.port")
	printf '%s\n' "secret MYTOKEN host 127.0.0.1:$port program python3*" "net allow 127.0.0.1:$port" \
		>"$T_TMP/np.profile"
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=$real wsh ':
		'"$NH_PY"' -c "import os, urllib.request as u; r = u.Request(\"http://127.0.0.1:'"$port"'/echo\", headers={\"X-Api-Key\": os.environ[\"MYTOKEN\"]}); print(\"py\", u.urlopen(r).status)"
		printf "curl %s\n" "$(curl -sS -m 15 -o /dev/null -w "%{http_code}" -H "X-Api-Key: $MYTOKEN" http://127.0.0.1:'"$port"'/echo 2>/dev/null)"' \
		--profile "$T_TMP/np.profile"
	assert_rc 0
	assert_out_line 'py 200' 'python3: its request went through'
	# (on the port itself the phantom ends the connection: no status)
	assert_out_line 'curl 000' "curl: its request with the phantom refused"
	local n
	n=$(grep -c "\"x-api-key\": \"$real\"" "$log")
	[[ $n == 1 ]] || fail "the real value reached the server $n times (want 1, python3's): $(excerpt "$(cat "$log")")"
	assert_out_lacks "$real" 'the real value inside'
	net_expect 'python3: allowed, named' method=tcp port="$port" decision=allow 'program~python3'
	net_expect 'curl: refused' method=tcp port="$port" decision=deny 'program~/curl$'
}

# With no rule or secret naming a program, the program is looked up once
# the client has its answer (off the CONNECT's wait), and still named: a
# plain request (python3) and a CONNECT tunnel (curl --proxytunnel).
test_net_program_named_unscoped() {
	np_server
	printf '%s\n' "net allow 127.0.0.1:$NP_PORT" >"$T_TMP/np.profile"
	wsh "unset NO_PROXY no_proxy
	     $NH_PY np.py $NP_PORT
	     printf 'tunnel %s\n' \"\$(curl -sS -m 15 -p -o /dev/null -w '%{http_code}' http://127.0.0.1:$NP_PORT/token.txt 2>/dev/null)\"" \
		--profile "$T_TMP/np.profile"
	assert_rc 0
	assert_out_line 'py 200' 'the plain request'
	assert_out_line 'tunnel 200' 'the request through a CONNECT tunnel'
	net_expect "python3's plain request names it" method=GET port="$NP_PORT" decision=allow \
		program="$NP_PY" program_sha256="$NP_SHA" 'program_pid>1'
	net_expect "curl's tunnel names curl" method=CONNECT port="$NP_PORT" decision=allow \
		'program~/curl$' 'program_sha256?' 'program_pid>1'
}

# With no rule naming a program, a connection is not held for its lookup,
# yet every event names the program: one refused (no rule allows its host),
# one whose dial fails (nothing listens at the allowed port), one refused in
# its handshake (a request warden cannot read): each event waits for its
# program's lookup, however soon the connection ends.
test_net_program_named_refused() {
	np_server
	printf '%s\n' "net allow 127.0.0.1:$NP_PORT" "net allow 127.0.0.1:1" >"$T_TMP/np.profile"
	wsh "unset NO_PROXY no_proxy
	     curl -sS -m 15 -p -o /dev/null http://127.0.0.2:$NP_PORT/ 2>/dev/null
	     curl -sS -m 15 -p -o /dev/null http://127.0.0.1:1/ 2>/dev/null
	     $NH_PY -c \"import socket; s = socket.create_connection(('127.0.0.1', 3128)); s.sendall(b'BOGUS\\r\\n\\r\\n'); print('bogus', s.recv(64).split(b' ')[1].decode())\"" \
		--profile "$T_TMP/np.profile"
	assert_out_line 'bogus 400' 'a request warden cannot read'
	net_expect 'a refused CONNECT names curl' method=CONNECT host=127.0.0.2 decision=deny \
		'program~/curl$' 'program_pid>1'
	net_expect 'a CONNECT whose dial failed names curl' method=CONNECT port=1 \
		'program~/curl$' 'program_pid>1'
	net_expect 'a request refused in its handshake names python3' 'method=?' status=400 \
		program="$NP_PY" 'program_pid>1'
}
