# nethost.sh - helpers for the proxy tests (sourced by t_proxy.sh and
# t_agent_claude.sh; not a t_* file, so run.sh does not look for tests in
# it): servers of the tests' own on this machine only, either on the host's
# loopback (works unprivileged) or in a network namespace the test creates
# (root) and reaches over a veth pair with addresses in 10.77.N.0/24;
# throwaway certificates (self-signed, or a test CA and a server certificate
# it signs), git repositories, an sshd; a raw HTTP/SOCKS5 client for inside
# the sandbox; queries on the `net` events of the session log.
#
# Everything a helper starts or changes is undone by nh_cleanup, which the
# first helper that needs it installs as the test subshell's EXIT trap (so it
# runs on success, fail, fatal and skip alike). Every server runs under
# timeout(1) and also stops itself after NH_LIFETIME seconds.
# shellcheck shell=bash

NH_LIFETIME=${NH_LIFETIME:-90}
NH_CLEANUP=()
NH_TRAP=0

# ---- cleanup ------------------------------------------------------------

# nh_on_exit CMD: run the shell snippet CMD when the test ends (reverse order).
nh_on_exit() {
	NH_CLEANUP+=("$1")
	if ((!NH_TRAP)); then
		trap nh_cleanup EXIT
		NH_TRAP=1
	fi
}

nh_cleanup() {
	local i
	for ((i = ${#NH_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${NH_CLEANUP[i]}" >/dev/null 2>&1
	done
	NH_CLEANUP=()
}

# ---- tools --------------------------------------------------------------

# The system python (the sandbox sees /usr, not a per-user python).
nh_python() {
	if [[ -x /usr/bin/python3 ]]; then
		NH_PY=/usr/bin/python3
	else
		NH_PY=$(command -v python3) || skip 'python3 is not installed (scripts/deps)'
	fi
}

# nh_need TOOL...: skip when a tool is missing.
nh_need() {
	local t
	for t; do
		have "$t" || [[ -x $t ]] || skip "$t is not installed (scripts/deps)"
	done
}

# nh_need_root: skip unless root with ip(8) and network namespaces.
nh_need_root() {
	is_root || skip 'needs root to create a network namespace'
	nh_need ip
}

# ---- the test network ---------------------------------------------------

# nh_netns: a network namespace with lo and one end of a veth pair; the other
# end stays in the host's namespace. Sets NH_NS (name), NH_IP (the
# namespace's address, 10.77.N.2: not an address of this host, a private
# one) and NH_HOSTIP (10.77.N.1, the host's end: an address of this host).
nh_netns() {
	nh_need_root
	local n i hv pv
	for ((i = 0; i < 40; i++)); do
		n=$((RANDOM % 200 + 20))
		# a subnet nobody on this machine uses
		[[ -z $(ip -4 -o addr show to "10.77.$n.0/24" 2>/dev/null) ]] || continue
		[[ -z $(ip -4 route show "10.77.$n.0/24" 2>/dev/null) ]] || continue
		NH_NS="wt-proxy-$$-$n"
		hv="wtp${n}h$((RANDOM % 1000))"
		pv="wtp${n}n"
		if ! ip netns add "$NH_NS" 2>"$T_TMP/netns.err"; then
			grep -q 'File exists' "$T_TMP/netns.err" && continue
			skip "cannot create a network namespace: $(head -n 1 "$T_TMP/netns.err")"
		fi
		nh_on_exit "ip netns del '$NH_NS'"
		if ! ip link add "$hv" type veth peer name "$pv" netns "$NH_NS" 2>"$T_TMP/netns.err"; then
			fatal "ip link add veth failed: $(<"$T_TMP/netns.err")"
		fi
		nh_on_exit "ip link del '$hv'"
		if ! { ip addr add "10.77.$n.1/24" dev "$hv" &&
			ip link set "$hv" up &&
			ip -n "$NH_NS" addr add "10.77.$n.2/24" dev "$pv" &&
			ip -n "$NH_NS" link set "$pv" up &&
			ip -n "$NH_NS" link set lo up; }; then
			fatal "could not configure the test network 10.77.$n.0/24"
		fi
		NH_IP=10.77.$n.2
		NH_HOSTIP=10.77.$n.1
		note "test network: namespace $NH_NS at $NH_IP, host end $hv at $NH_HOSTIP"
		return 0
	done
	fatal 'no free 10.77.N.0/24 subnet or namespace name for the test network'
}

# nh_in_ns CMD...: run a command in the test namespace (foreground).
nh_in_ns() { ip netns exec "$NH_NS" "$@"; }

# nh_hosts_add NAME IP: a line in /etc/hosts for the test (root), removed at
# the end. Rewrites the file in place (it may be a bind mount).
nh_hosts_add() {
	is_root || skip 'needs root to edit /etc/hosts'
	local name=$1 ip=$2
	printf '%s %s # wardentest\n' "$ip" "$name" >>/etc/hosts 2>/dev/null || skip 'cannot edit /etc/hosts'
	nh_on_exit "nh_hosts_del '$name'"
	getent hosts "$name" >/dev/null || fatal "$name does not resolve after adding it to /etc/hosts"
}
nh_hosts_del() {
	local rest
	rest=$(grep -vF " $1 # wardentest" /etc/hosts)
	printf '%s\n' "$rest" >/etc/hosts
}

# nh_name TAG: a test host name nobody else uses (in .invalid: never a real one).
nh_name() { printf 'wt-%s-%s-%s.invalid' "$1" "$$" "$RANDOM"; }

# ---- certificates, repositories, keys ------------------------------------

# nh_cert DIR CN SAN: a throwaway self-signed certificate and key, DIR/cert.pem
# and DIR/key.pem; SAN like "DNS:name,IP:10.77.1.2".
nh_cert() {
	nh_need openssl
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=$2" -addext "subjectAltName=$3" -addext 'basicConstraints=critical,CA:TRUE' \
		-keyout "$1/key.pem" -out "$1/cert.pem" >"$T_TMP/openssl.out" 2>&1 ||
		fatal "openssl req failed: $(excerpt "$(<"$T_TMP/openssl.out")")"
	chmod 0644 "$1/cert.pem"
}

# nh_ca DIR NAME: a throwaway certificate authority, DIR/ca.pem and DIR/ca.key
# (a client trusts ca.pem alone: keep the key out of what a sandbox sees).
nh_ca() {
	nh_need openssl
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=$2" -addext 'basicConstraints=critical,CA:TRUE' \
		-addext 'keyUsage=critical,keyCertSign,cRLSign' \
		-keyout "$1/ca.key" -out "$1/ca.pem" >"$T_TMP/openssl.out" 2>&1 ||
		fatal "openssl req (CA) failed: $(excerpt "$(<"$T_TMP/openssl.out")")"
	chmod 0644 "$1/ca.pem"
}

# nh_cert_signed DIR CN SAN CADIR: a server certificate for SAN (like
# "IP:10.77.1.2" or "DNS:name") signed by the CA of nh_ca CADIR:
# DIR/cert.pem and DIR/key.pem.
nh_cert_signed() {
	nh_need openssl
	local dir=$1 cn=$2 san=$3 ca=$4
	mkdir -p "$dir"
	printf 'subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' \
		"$san" >"$dir/ext.cnf"
	{ openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-subj "/CN=$cn" -keyout "$dir/key.pem" -out "$dir/req.csr" &&
		openssl x509 -req -in "$dir/req.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" \
			-CAcreateserial -CAserial "$dir/ca.srl" -days 2 -extfile "$dir/ext.cnf" -out "$dir/cert.pem" &&
		openssl verify -CAfile "$ca/ca.pem" "$dir/cert.pem"; } >"$T_TMP/openssl.out" 2>&1 ||
		fatal "openssl (server certificate signed by the test CA) failed: $(excerpt "$(<"$T_TMP/openssl.out")")"
	chmod 0644 "$dir/cert.pem"
}

# nh_git_repo DIR TOKEN: a bare repository DIR (served by the dumb HTTP
# protocol: update-server-info) whose one commit holds token.txt = TOKEN.
nh_git_repo() {
	nh_need git
	local dir=$1 token=$2 src=$T_TMP/repo-src.$RANDOM
	mkdir -p "$src"
	(
		cd "$src" &&
			git init -q -b main . &&
			printf '%s\n' "$token" >token.txt &&
			git add token.txt &&
			git -c user.name=wardentest -c user.email=wardentest@invalid commit -qm token &&
			git clone -q --bare . "$dir" &&
			git -C "$dir" update-server-info
	) >"$T_TMP/git.out" 2>&1 || fatal "could not make the test repository: $(excerpt "$(<"$T_TMP/git.out")")"
	chmod -R a+rX "$dir"
}

# ---- servers ------------------------------------------------------------

# The python server: `web DIR ADDR PORT [CERT KEY]` serves DIR over HTTP (or
# HTTPS), thread per connection; prints "LISTENING PORT" once bound, logs each
# request on stderr, exits after NH_LIFETIME seconds.
nh_write_server() {
	[[ -f $T_TMP/nh_server.py ]] && return 0
	cat >"$T_TMP/nh_server.py" <<'PY'
import functools, os, socket, ssl, sys, threading, time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

lifetime = float(os.environ.get('NH_LIFETIME', '90'))
threading.Thread(target=lambda: (time.sleep(lifetime), os._exit(0)), daemon=True).start()
mode = sys.argv[1]
if mode == 'web':
    root, addr, port = sys.argv[2], sys.argv[3], int(sys.argv[4])
    ctx = None
    if len(sys.argv) > 6:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(sys.argv[5], sys.argv[6])

    class Handler(SimpleHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        def setup(self):
            self.request.settimeout(20)
            if ctx is not None:
                self.request = ctx.wrap_socket(self.request, server_side=True)
            super().setup()
        def log_message(self, fmt, *args):
            sys.stderr.write('REQUEST %s %s\n' % (self.client_address[0], fmt % args))
            sys.stderr.flush()

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ':' in addr else socket.AF_INET

    srv = Server((addr, port), functools.partial(Handler, directory=root))
    print('LISTENING', srv.server_address[1], flush=True)
    srv.serve_forever()
else:
    sys.exit('nh_server.py: unknown mode ' + mode)
PY
}

# nh_web NAME DIR ADDR PORT [CERT KEY]: start the python web server, on the
# host (NH_WHERE=host, the default) or in the test namespace (NH_WHERE=ns).
# Sets PORT (the port bound: pass 0 to let the kernel pick one).
nh_web() {
	local name=$1
	shift
	nh_python
	nh_write_server
	local pre=()
	[[ ${NH_WHERE:-host} == ns ]] && pre=(ip netns exec "$NH_NS")
	"${pre[@]}" env NH_LIFETIME="$NH_LIFETIME" timeout -k 2 "$NH_LIFETIME" "$NH_PY" "$T_TMP/nh_server.py" web "$@" \
		>"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
	local pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/$name.out" '^LISTENING' 10 ||
		fatal "server $name did not start: $(excerpt "$(cat "$T_TMP/$name.err")")"
	# shellcheck disable=SC2034 # for the caller
	PORT=$(awk '/^LISTENING/ { print $2; exit }' "$T_TMP/$name.out")
}

# nh_sshd DIR REPO_PARENT: an sshd in the test namespace on $NH_IP:22 with a
# throwaway host key, accepting only a throwaway client key for root; the
# client key is written to DIR/id_ed25519 (DIR: in the workspace, so the
# sandbox can read it). Sets SSHD_LOG.
nh_sshd() {
	nh_need /usr/sbin/sshd ssh-keygen
	local cdir=$1 sdir=$T_TMP/sshd
	mkdir -p "$sdir" "$cdir"
	ssh-keygen -q -t ed25519 -N '' -C wardentest-host -f "$sdir/host_ed25519" || fatal 'ssh-keygen (host key) failed'
	ssh-keygen -q -t ed25519 -N '' -C wardentest-client -f "$cdir/id_ed25519" || fatal 'ssh-keygen (client key) failed'
	cp "$cdir/id_ed25519.pub" "$sdir/authorized_keys"
	chmod 0600 "$cdir/id_ed25519" "$sdir/authorized_keys"
	cat >"$sdir/sshd_config" <<EOF
ListenAddress $NH_IP:22
HostKey $sdir/host_ed25519
AuthorizedKeysFile $sdir/authorized_keys
PermitRootLogin prohibit-password
AllowUsers root
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
LoginGraceTime 20
MaxStartups 10
LogLevel VERBOSE
EOF
	# privilege separation directory sshd insists on
	if [[ ! -d /run/sshd ]]; then
		mkdir -p /run/sshd && chmod 0755 /run/sshd
	fi
	/usr/sbin/sshd -t -f "$sdir/sshd_config" >"$T_TMP/sshd.test" 2>&1 ||
		fatal "sshd -t: $(excerpt "$(<"$T_TMP/sshd.test")")"
	SSHD_LOG=$T_TMP/sshd.log
	ip netns exec "$NH_NS" timeout -k 2 "$NH_LIFETIME" /usr/sbin/sshd -D -e -f "$sdir/sshd_config" \
		>"$SSHD_LOG" 2>&1 &
	local pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$SSHD_LOG" 'Server listening on' 10 || fatal "sshd did not start: $(excerpt "$(<"$SSHD_LOG")")"
}

# nh_host_check URL [curl args...]: the server answers from the host itself
# (outside any sandbox), so a failure inside is the sandbox's doing.
nh_host_check() {
	local out
	out=$(curl -sS -m 10 --noproxy '*' "$@" 2>&1) ||
		fatal "the test server is not reachable from the host: $* -> $(excerpt "$out")"
}

# ---- inside the sandbox: a raw proxy client -----------------------------

# nh_raw: write proxyraw.py into the workspace. Inside the sandbox:
#   /usr/bin/python3 proxyraw.py http METHOD TARGET HOST
#       one request to 127.0.0.1:3128; prints "STATUS <code> <phrase>" and,
#       when present, "REASON <X-Warden-Reason>"
#   /usr/bin/python3 proxyraw.py send TEXT   (\r\n written as \\r\\n in TEXT)
#   /usr/bin/python3 proxyraw.py socks5 HOST PORT
#       a SOCKS5 no-auth CONNECT (domain name, or IPv4/IPv6 for literals;
#       a backslash and 0 in HOST is a NUL byte); prints "METHOD <n>", "REPLY <n>" (0
#       success, 2 not allowed, 4 a name refused)
#   /usr/bin/python3 proxyraw.py listening PORT
#       "LISTEN yes|no": a listener on 127.0.0.1:PORT (from /proc/net/tcp)
#   /usr/bin/python3 proxyraw.py hold N SECONDS
#       N connections to each listener that send half a request head (HTTP)
#       or half a greeting (SOCKS5) and stall; "HOLDING n" once open, exits
#       after SECONDS
#   /usr/bin/python3 proxyraw.py bighead KIB TARGET HOST
#       a GET whose head carries a KIB KiB header; prints "STATUS ..." or
#       "ERROR ..." (a refusal may close the connection mid-send)
# Errors print "ERROR <what>". Always exits 0.
nh_raw() {
	cat >"$WS/proxyraw.py" <<'PY'
import ipaddress, socket, struct, sys

def head(s):
    buf = b''
    while b'\r\n\r\n' not in buf and len(buf) < 65536:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf.split(b'\r\n\r\n')[0].decode('latin-1')

def show(h):
    lines = h.split('\r\n')
    if not lines or not lines[0]:
        print('ERROR empty response')
        return
    parts = lines[0].split(' ', 1)
    print('STATUS', parts[1] if len(parts) > 1 else lines[0])
    for l in lines[1:]:
        k, _, v = l.partition(':')
        if k.strip().lower() == 'x-warden-reason':
            print('REASON', v.strip())

try:
    mode = sys.argv[1]
    if mode == 'listening':
        port = '%04X' % int(sys.argv[2])
        found = False
        for l in open('/proc/net/tcp').read().splitlines()[1:]:
            f = l.split()
            if f[1] == '0100007F:' + port and f[3] == '0A':
                found = True
        print('LISTEN', 'yes' if found else 'no')
    elif mode in ('http', 'send'):
        s = socket.create_connection(('127.0.0.1', 3128), timeout=15)
        if mode == 'http':
            m, target, host = sys.argv[2:5]
            req = '%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % (m, target, host)
        else:
            req = sys.argv[2].replace('\\r', '\r').replace('\\n', '\n')
        s.sendall(req.encode('latin-1'))
        show(head(s))
    elif mode == 'hold':
        import time
        n, secs = int(sys.argv[2]), float(sys.argv[3])
        held = []
        for i in range(n):
            a = socket.create_connection(('127.0.0.1', 3128), timeout=15)
            a.sendall(b'GET http://stall.invalid/ HTTP/1.1\r\nHo')
            b = socket.create_connection(('127.0.0.1', 1080), timeout=15)
            b.sendall(b'\x05')
            held += [a, b]
        print('HOLDING', len(held), flush=True)
        time.sleep(secs)
    elif mode == 'bighead':
        kib, target, host = int(sys.argv[2]), sys.argv[3], sys.argv[4]
        s = socket.create_connection(('127.0.0.1', 3128), timeout=15)
        req = 'GET %s HTTP/1.1\r\nHost: %s\r\nX-Pad: %s\r\n\r\n' % (target, host, 'a' * (kib * 1024))
        try:
            s.sendall(req.encode())
        except OSError as e:
            print('SENDERROR', type(e).__name__)
        show(head(s))
    elif mode == 'socks5':
        host, port = sys.argv[2], int(sys.argv[3])
        s = socket.create_connection(('127.0.0.1', 1080), timeout=15)
        s.sendall(b'\x05\x01\x00')
        r = s.recv(2)
        print('METHOD', r[1] if len(r) == 2 else 'none')
        try:
            ip = ipaddress.ip_address(host)
            addr = (b'\x01' if ip.version == 4 else b'\x04') + ip.packed
        except ValueError:
            name = host.encode().replace(b'\\0', b'\0')
            addr = b'\x03' + bytes([len(name)]) + name
        s.sendall(b'\x05\x01\x00' + addr + struct.pack('>H', port))
        r = s.recv(262)
        print('REPLY', r[1] if len(r) >= 2 else 'none')
    else:
        print('ERROR unknown mode', mode)
except Exception as e:
    print('ERROR', type(e).__name__, e)
PY
}

# ---- the session log's net events ---------------------------------------


nh_write_events() {
	[[ -f $T_TMP/nh_events.py ]] && return 0
	cat >"$T_TMP/nh_events.py" <<'PY'
# nh_events.py LOG match COND...   print the net events matching every COND
# nh_events.py LOG fields          print the proxy net events lacking a field
# nh_events.py LOG all             print every net event
# COND: key=value (exact, numbers as JSON text), key~regex (case-insensitive
# search), key>N (number greater than N), key? (present), key! (absent).
import json, re, sys

def events(path):
    for line in open(path, encoding='utf-8', errors='replace'):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get('event') == 'net':
            yield ev, line.rstrip('\n')

def text(v):
    return v if isinstance(v, str) else json.dumps(v)

def match(ev, cond):
    m = re.match(r'^([A-Za-z_][A-Za-z0-9_]*)(=|~|>|\?|!)(.*)$', cond, re.S)
    if not m:
        sys.exit('bad condition ' + cond)
    k, op, v = m.groups()
    if op == '!':
        return k not in ev
    if k not in ev:
        return False
    x = ev[k]
    if op == '?':
        return True
    if op == '=':
        return text(x) == v
    if op == '~':
        return re.search(v, text(x), re.I) is not None
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > float(v)

path, what = sys.argv[1], sys.argv[2]
if what == 'match':
    for ev, line in events(path):
        if all(match(ev, c) for c in sys.argv[3:]):
            print(line)
elif what == 'all':
    for ev, line in events(path):
        print(line)
elif what == 'fields':
    for ev, line in events(path):
        if ev.get('method') in ('connect', 'summary'):
            continue  # a direct connect refused by the kernel; refusals counted
        need = ['method', 'host', 'port', 'decision', 'bytes_out', 'bytes_in', 'duration_ms']
        need += ['address', 'rule'] if ev.get('decision') == 'allow' else ['reason']
        missing = [k for k in need if k not in ev]
        if ev.get('decision') not in ('allow', 'deny'):
            missing.append('decision=allow|deny')
        if missing:
            print('lacks %s: %s' % (','.join(missing), line[:300]))
PY
}

# net_events COND...: the net events of the newest log matching every COND
# (one per line) in NET_EVENTS; returns 0 when there is at least one.
net_events() {
	nh_python
	nh_write_events
	local f
	f=$(latest_log)
	NET_EVENTS=
	[[ -n $f ]] || return 1
	NET_EVENTS=$("$NH_PY" "$T_TMP/nh_events.py" "$f" match "$@")
	[[ -n $NET_EVENTS ]]
}

# net_expect LABEL COND...: fail unless some net event matches every COND.
net_expect() {
	local label=$1
	shift
	net_events "$@" && return 0
	local all
	all=$("$NH_PY" "$T_TMP/nh_events.py" "$(latest_log)" all 2>/dev/null)
	fail "$label: no net event with $* (net events: $(excerpt "${all:-none}"))"
}

# net_expect_none LABEL COND...: fail if some net event matches every COND.
net_expect_none() {
	local label=$1
	shift
	net_events "$@" || return 0
	fail "$label: unexpected net event $(excerpt "$NET_EVENTS")"
}

# net_fields LABEL: every proxy net event carries the documented fields.
net_fields() {
	nh_python
	nh_write_events
	local f out
	f=$(latest_log)
	[[ -n $f ]] || { fail "$1: no session log"; return 0; }
	out=$("$NH_PY" "$T_TMP/nh_events.py" "$f" fields)
	[[ -z $out ]] || fail "$1: net events lacking fields: $(excerpt "$out")"
}
