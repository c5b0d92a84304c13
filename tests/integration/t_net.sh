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
