# t_net.sh - the network namespace: nothing but lo, so a server on the host's
# loopback is unreachable while loopback inside the sandbox works.
# shellcheck shell=bash

# listener_start: a one-shot TCP server on the host's 127.0.0.1; sets LPORT.
listener_start() {
	"$WPROBE" listen 127.0.0.1 0 20 >"$T_TMP/listen.out" 2>&1 &
	bg_track $!
	LPID=$!
	wait_for "$T_TMP/listen.out" '^LISTENING' 5 || fatal "host listener did not start: $(<"$T_TMP/listen.out")"
	LPORT=$(awk '/^LISTENING/ { print $3 }' "$T_TMP/listen.out")
}

test_host_loopback_tcp() {
	listener_start
	wbatch "tcp|connect 127.0.0.1 $LPORT" "tcp_local|connect localhost $LPORT"
	bexpect tcp denied ECONNREFUSED
	bexpect tcp_local denied ECONNREFUSED,EADDRNOTAVAIL,ENETUNREACH,EAI
	# the server was there all along: the host reaches it
	probe_host connect 127.0.0.1 "$LPORT"
	[[ $HRC == 0 ]] || fail "host could not reach its own listener: $HOUT"
	wait "$LPID"
	grep -qx ACCEPTED "$T_TMP/listen.out" || fail "host listener: $(excerpt "$(<"$T_TMP/listen.out")")"
}

test_no_route_out() {
	wbatch 'tcp|connect 192.0.2.1 80' 'udp|udp 192.0.2.1 53' 'tcp6|connect 2001:db8::1 80'
	bexpect tcp denied ENETUNREACH,EHOSTUNREACH,ETIMEDOUT
	bexpect udp denied ENETUNREACH,EHOSTUNREACH
	bexpect tcp6 denied ENETUNREACH,EHOSTUNREACH,EAFNOSUPPORT,EADDRNOTAVAIL,ETIMEDOUT
}

# Socket families past the network namespace: AF_VSOCK (in no namespace:
# the hypervisor and the host's vsock services) refused, its family with
# high bits set too (the kernel reads an int), AF_ALG, AF_XDP and AF_TIPC
# (kernel attack surface) refused; each refusal recorded. Unix, IP and
# netlink sockets are made.
test_socket_families() {
	wbatch 'vsock|socket 40 1' 'vsock_hi|socket 0x100000028 1' 'alg|socket 38 5' \
		'xdp|socket 44 3' 'tipc|socket 30 5' 'unix|socket 1 1' 'inet|socket 2 1' \
		'inet6|socket 10 2' 'netlink|socket 16 3'
	local l
	for l in vsock vsock_hi alg xdp tipc; do bexpect "$l" denied EPERM; done
	for l in unix inet inet6 netlink; do bexpect "$l" allowed; done
	local log
	log=$(latest_log)
	[[ $(grep -F '"event":"syscall"' "$log" | grep -F '"name":"socket"' |
		grep -c '"decision":"deny"') -ge 5 ]] ||
		fail "the refusals are not recorded: $(excerpt "$(grep -F '"name":"socket"' "$log")")"
	grep -F '"name":"socket"' "$log" | matches -F '"args":["0x100000028"' ||
		fail 'the family with high bits set not recorded as called'
}

test_only_lo() {
	wsh 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	assert_rc 0
	assert_out_eq lo 'interfaces inside'
	# lo is up: a server and a client inside the sandbox talk over it
	wsh './wprobe listen 127.0.0.1 0 5 > l.out & for i in $(seq 100); do
	       grep -q LISTENING l.out 2>/dev/null && break; sleep 0.05; done
	     ./wprobe connect 127.0.0.1 "$(cut -d" " -f3 l.out | head -n1)"; wait; tail -n1 l.out'
	assert_out_match '^ALLOWED connected' 'connect over lo inside'
	assert_out_line ACCEPTED 'accept over lo inside'
}

# The sandbox's lo is tuned for the tool-to-proxy traffic it carries (Reno,
# 256 KiB segments: the tunnel throughput of bench/proxy), in the sandbox's
# namespace only: the host's setting is what it was.
test_lo_tuned_inside_only() {
	local host_cc
	host_cc=$(</proc/sys/net/ipv4/tcp_congestion_control)
	wsh 'cat /proc/sys/net/ipv4/tcp_congestion_control; ip -d link show lo 2>/dev/null | grep -o "gso_max_size [0-9]*" || echo no-ip'
	assert_rc 0
	assert_out_line reno 'congestion control inside'
	if ! grep -qx no-ip <<<"$OUT"; then
		assert_out_line 'gso_max_size 262144' 'lo segment size inside'
	fi
	[[ $(</proc/sys/net/ipv4/tcp_congestion_control) == "$host_cc" ]] ||
		fail "the host's congestion control changed: $host_cc -> $(</proc/sys/net/ipv4/tcp_congestion_control)"
}

# A unix socket a host tool bound in the workspace (an editor's language
# server, a dev server, an agent's socket) cannot be reached from inside:
# EPERM and a `net` event naming it, and the host server never sees a
# connection, also when the agent made itself non-dumpable or names the
# socket through a symlink. Sockets bound inside the sandbox (in /tmp, in
# the workspace) work as ever, a missing one is ENOENT and a file that is no
# socket ECONNREFUSED, as the kernel says.
test_host_unix_socket_refused() {
	[[ -x /usr/bin/python3 ]] || skip '/usr/bin/python3 not installed'
	/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").write("LISTENING\n")
s.settimeout(25)
try:
    while True:
        c, _ = s.accept(); open(sys.argv[2], "a").write("ACCEPTED\n")
except OSError:
    pass' "$WS/host.sock" "$T_TMP/host.out" &
	bg_track $!
	wait_for "$T_TMP/host.out" '^LISTENING' 5 || fatal "the host's unix server did not start"
	ln -s host.sock "$WS/link.sock"
	wrun -- /usr/bin/python3 -c '
import ctypes, os, socket
def try_(label, path):
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(path); print(label, "connected")
    except OSError as e:
        print(label, e.errno)
try_("host", "host.sock")
try_("host-abs", os.path.abspath("host.sock"))
try_("link", "link.sock")
libc = ctypes.CDLL(None)
print("set-dumpable", libc.prctl(4, 0, 0, 0, 0))  # PR_SET_DUMPABLE 0: "done"
print("dumpable", libc.prctl(3, 0, 0, 0, 0))      # PR_GET_DUMPABLE: still 1
try_("nondumpable", "host.sock")
for where in ("/tmp/in.sock", "ws-in.sock"):
    s = socket.socket(socket.AF_UNIX); s.bind(where); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(where); a, _ = s.accept()
    c.send(b"hi"); print("inside", where, a.recv(2).decode())
    os.unlink(where)
open("plain", "w").close()
try_("missing", "nope.sock")
try_("notsock", "plain")'
	assert_rc 0
	assert_out_line 'host 1' 'the host socket by a relative path: EPERM'
	assert_out_line 'host-abs 1' 'by its absolute path'
	assert_out_line 'link 1' 'through a symlink'
	assert_out_line 'set-dumpable 0' 'prctl(PR_SET_DUMPABLE, 0) answered success'
	assert_out_line 'dumpable 1' 'and not done'
	assert_out_line 'nondumpable 1' 'from a process that asked to be non-dumpable'
	assert_out_line 'inside /tmp/in.sock hi' 'a socket bound inside, in /tmp'
	assert_out_line 'inside ws-in.sock hi' 'a socket bound inside, in the workspace'
	assert_out_line 'missing 2' 'a missing socket: ENOENT'
	assert_out_line 'notsock 111' 'a file that is no socket: ECONNREFUSED'
	grep -q ACCEPTED "$T_TMP/host.out" && fail "the host's server accepted a connection from inside"
	# the summary names the socket (not "?:0" refused by method/path rules)
	assert_err_match "^  unix socket $WS/host\\.sock( \\([0-9]+ times\\))?: a unix socket of the host\$" \
		'the refusal summary names the socket'
	[[ $ERR != *'method/path'* ]] || fail "a unix socket summarised as a request: $(excerpt "$ERR")"
	wardenc log show --event net --json
	local n
	n=$(grep -c '"method":"unix".*"decision":"deny"' <<<"${OUT// /}")
	((n >= 4)) || fail "expected 4 refused unix connects in the log, got $n: $(excerpt "$OUT")"
	grep -q "\"resolved\":\"$WS/host.sock\"" <<<"${OUT// /}" ||
		fail "the net event does not name the socket: $(excerpt "$OUT")"
	wardenc log show --event syscall --json
	grep -q '"name":"prctl".*"decision":"ignore"' <<<"${OUT// /}" ||
		fail "no syscall event for the ignored prctl: $(excerpt "$OUT")"
}

# Datagrams sent with an address: to a unix datagram socket of the host,
# EPERM and a `net` event (the host never gets it); to one bound inside,
# delivered whole; UDP to an address outside, refused by the kernel (no
# route) and on the record as a `net` event with `method` `sendto`.
test_datagrams() {
	[[ -x /usr/bin/python3 ]] || skip '/usr/bin/python3 not installed'
	/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
open(sys.argv[2], "w").write("LISTENING\n")
s.settimeout(20)
try:
    d = s.recv(100); open(sys.argv[2], "a").write("GOT %r\n" % d)
except OSError:
    pass' "$WS/host.dgram" "$T_TMP/dgram.out" &
	bg_track $!
	wait_for "$T_TMP/dgram.out" '^LISTENING' 5 || fatal "the host's datagram socket did not start"
	wrun -- /usr/bin/python3 -c '
import socket
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    print("host", c.sendto(b"leak", "host.dgram"))
except OSError as e:
    print("host", e.errno)
r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind("/tmp/in.dgram")
print("inside", c.sendto(b"hello", "/tmp/in.dgram"), r.recv(10).decode())
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"x", ("192.0.2.7", 53)); print("udp sent")
except OSError as e:
    print("udp", e.errno)'
	assert_rc 0
	assert_out_line 'host 1' 'a datagram to the host: EPERM'
	assert_out_line 'inside 5 hello' 'a datagram to a socket bound inside'
	assert_out_line 'udp 101' 'UDP out: ENETUNREACH'
	grep -q GOT "$T_TMP/dgram.out" && fail "the host's socket got a datagram from inside: $(<"$T_TMP/dgram.out")"
	wardenc log show --event net --json
	grep -q '"method":"unix".*"path":"host.dgram"' <<<"${OUT// /}" ||
		fail "no net event for the datagram to the host: $(excerpt "$OUT")"
	grep -q '"method":"sendto","address":"192.0.2.7"' <<<"${OUT// /}" ||
		fail "no net event for the UDP datagram: $(excerpt "$OUT")"
}

# A probe for a way out at full speed (non-blocking connects to 2000
# addresses, each refused) leaves a bounded log that still names the
# destinations tried (a burst of new ones, then a rate) and counts the
# rest in `net` summaries; the alerts it raises are bounded too and
# summarised; the detector still sees the probing; and the session goes
# on as before.
test_net_refusals_flood_bounded() {
	local WARDEN_TIMEOUT=120
	wrun --profile "$(no_detect_actions)" -- sh -c \
		'./wprobe connect-flood 6 2000 && ./wprobe connect-flood 2 2000 && echo after-ok'
	assert_rc 0 'the flood session'
	assert_out_has after-ok
	local log total size recorded counted dests alerts asum
	log=$(latest_log)
	total=$(awk '/^ALLOWED [0-9]+ connects/ { s += $2 } END { print s + 0 }' <<<"$OUT")
	((total > 5000)) || fail "too few connects to flood anything: $total"
	size=$(stat -c %s "$log")
	((size < 2000000)) || fail "the log grew to $size bytes for $total refused connects"
	recorded=$(grep -F '"event":"net"' "$log" | grep -F '"method":"connect"' | grep -cF '"decision":"deny"')
	((recorded <= 1500)) || fail "$recorded net events one by one: the record is not bounded"
	dests=$(grep -F '"event":"net"' "$log" | grep -oE '"address":"10\.0\.[0-9]+\.[0-9]+"' | sort -u | wc -l)
	((dests >= 1000)) || fail "only $dests destinations named: the record does not say what was tried"
	counted=$(grep -F '"event":"net"' "$log" | grep -F '"method":"summary"' |
		sed -n 's/.*"count":\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	((counted > 0)) || fail 'no net summary with a count'
	((recorded + counted == total)) ||
		fail "events ($recorded) and summaries ($counted) are not the $total connects"
	grep -F '"method":"summary"' "$log" | matches -F '"summary":"refused connections out' ||
		fail "summary: $(excerpt "$(grep -F '"method":"summary"' "$log")")"
	# the detector saw the probing; its alerts bounded, the rest counted
	alerts=$(grep -F '"event":"alert"' "$log" | grep -F '"rule":"burst.net-refusals"' | grep -vcF '"count":')
	((alerts >= 1 && alerts <= 110)) || fail "$alerts burst.net-refusals alerts one by one"
	asum=$(grep -F '"event":"alert"' "$log" | grep -F '"rule":"burst.net-refusals"' | grep -F '"count":')
	[[ -n $asum && $asum == *'"summary":"alerts of this rule past'* ]] ||
		fail "no summary of the alerts past the bound: $(excerpt "$asum")"
	tail -n 1 "$log" | matches -F '"event":"session.end","exit":0' || fail 'no session.end with exit 0'
}

# The same through warden's proxy: CONNECTs to 2000 hosts no rule allows,
# each refused by the proxy, leave a bounded log that names the hosts
# tried and counts the rest.
test_net_proxy_refusals_flood_bounded() {
	local WARDEN_TIMEOUT=120
	wrun --profile "$(no_detect_actions)" -- sh -c './wprobe proxy-flood 8 2000 && echo after-ok'
	assert_rc 0 'the flood session'
	assert_out_has after-ok
	local log total size recorded counted hosts
	log=$(latest_log)
	total=$(awk '/^ALLOWED [0-9]+ connects/ { s += $2 } END { print s + 0 }' <<<"$OUT")
	((total > 2500)) || fail "too few connects to flood anything: $total"
	size=$(stat -c %s "$log")
	((size < 1500000)) || fail "the log grew to $size bytes for $total refused CONNECTs"
	recorded=$(grep -F '"event":"net"' "$log" | grep -F '"method":"CONNECT"' | grep -cF '"decision":"deny"')
	((recorded <= 1500)) || fail "$recorded net events one by one: the record is not bounded"
	hosts=$(grep -F '"event":"net"' "$log" | grep -oE '"host":"h[0-9]+\.example\.invalid"' | sort -u | wc -l)
	((hosts >= 1000)) || fail "only $hosts hosts named: the record does not say what was tried"
	counted=$(grep -F '"event":"net"' "$log" | grep -F '"method":"summary"' |
		sed -n 's/.*"count":\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	((recorded + counted == total)) ||
		fail "events ($recorded) and summaries ($counted) are not the $total CONNECTs"
	tail -n 1 "$log" | matches -F '"event":"session.end","exit":0' || fail 'no session.end with exit 0'
}
