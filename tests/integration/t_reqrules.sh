# t_reqrules.sh - rules on method and path (`net allow|deny HOST [METHODS]
# [PATH-GLOB]`), from the outside, where warden sees the requests: plain HTTP
# on the host's loopback toward a port a secret is bound to, or one the rules
# alone name (intercepted, unprivileged too); HTTPS warden terminates for a
# bound host (HTTP/1.1 and HTTP/2) or for a host the rules name, no secret
# bound (the session CA in the sandbox's default trust store; a host no rule
# names stays a tunnel); and plain HTTP through the proxy, SOCKS5 to such a
# host being refused. Each refused request gets warden's answer on that
# request alone (the next one on the same connection goes), and its `net`
# event names method, path and rule. The servers are secrets_server.py
# (t_secrets.sh's), in a network namespace of the test's own for the root
# cases.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"
RR_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RR_SERVER=$RR_DIR/secrets_server.py

# rr_srv NAME [OPTION...]: the server (in the test namespace when RR_NS is
# set); sets RR_PORT and RR_LOG.
rr_srv() {
	local name=$1 pre=() pid
	shift
	nh_python
	[[ -n ${RR_NS:-} ]] && pre=(ip netns exec "$RR_NS")
	RR_LOG=$T_TMP/$name.log
	: >"$RR_LOG"
	"${pre[@]}" "$NH_PY" "$RR_SERVER" --port-file "$T_TMP/$name.port" --log "$RR_LOG" "$@" \
		>"$T_TMP/$name.out" 2>&1 &
	pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/$name.port" '^[0-9]+$' 10 || fatal "server $name did not start: $(excerpt "$(cat "$T_TMP/$name.out")")"
	RR_PORT=$(<"$T_TMP/$name.port")
}

# rr_profile HOST: GET under /repos/ allowed, POST /upload allowed, DELETE
# denied, on HOST; prints the profile's path.
rr_profile() {
	local f=$T_TMP/rr.profile
	no_detect_actions "$f" >/dev/null
	printf 'net allow %s GET,HEAD /repos/*\nnet allow %s POST /upload\nnet deny %s DELETE\n' \
		"$1" "$1" "$1" >>"$f"
	echo "$f"
}

# The requests each case makes, from inside, as one curl line each: status
# and how many new connections it took ("CODE CONNECTS"). The refused ones
# come first on a connection, an allowed one after: 0 new connections for it
# says the connection was kept. $1: base URL; $2: extra curl options.
# shellcheck disable=SC2016 # expanded inside
RR_SCRIPT='u=$1; shift
	echo "get=$(curl -sS -m 20 "$@" -o /dev/null -w "%{http_code}" "$u/repos/x")"
	echo "dotdot=$(curl -sS -m 20 --path-as-is "$@" -o /dev/null -w "%{http_code}" "$u/repos/../admin")"
	echo "enc=$(curl -sS -m 20 --path-as-is "$@" -o /dev/null -w "%{http_code}" "$u/repos%2F..%2Fadmin")"
	echo "deep=$(curl -sS -m 20 "$@" -o /dev/null -w "%{http_code}" "$u/repos/x/y")"
	echo "delete=$(curl -sS -m 20 "$@" -X DELETE -D - -o /dev/null "$u/repos/x" | tr -d "\r" | grep -i "^x-warden-reason:")"
	echo "trace=$(curl -sS -m 20 "$@" -X TRACE -o /dev/null -w "%{http_code}" "$u/repos/x")"
	echo "keep=$(curl -sS -m 20 "$@" -o /dev/null -w "%{http_code}/%{num_connects} " -X DELETE "$u/repos/x" \
		--next -sS -m 20 "$@" -o /dev/null -w "%{http_code}/%{num_connects} " --data "abc" "$u/admin" \
		--next -sS -m 20 "$@" -o /dev/null -w "%{http_code}/%{num_connects}" --data "abcdef" "$u/upload")"'

# rr_check HOST:PORT [VIA]: the answers and the server's log of RR_SCRIPT's
# requests, and their net events.
rr_check() {
	local hp=$1
	assert_out_line 'get=404' 'GET /repos/x, allowed (the server has no such page: its 404)'
	assert_out_line 'dotdot=403' 'GET /repos/../admin (read as /admin) refused'
	assert_out_line 'enc=400' 'GET /repos%2F..%2Fadmin (an encoded slash) refused'
	assert_out_line 'deep=403' "GET /repos/x/y ('*' stays within a segment) refused"
	assert_out_has "delete=X-Warden-Reason: DELETE /repos/x on $hp denied by rule ${hp%:*}" 'DELETE refused, the rule named'
	assert_out_line 'trace=405' 'TRACE toward the bound host refused with 405'
	assert_out_line 'keep=403/1 403/0 200/0' 'after two refusals the same connection carries an allowed request'
	grep -q '"path": "/repos/x"' "$RR_LOG" || fail "the allowed request did not reach the server: $(excerpt "$(<"$RR_LOG")")"
	grep -q '"/upload"' "$RR_LOG" || fail "the allowed POST after the refusals did not reach the server"
	grep -Eq 'admin|"DELETE"|"TRACE"|/repos/x/y' "$RR_LOG" &&
		fail "a refused request reached the server: $(excerpt "$(<"$RR_LOG")")"
	net_expect 'the DELETE refused' method=DELETE path=/repos/x decision=deny status=403 "rule~ DELETE\$" "reason~denied by rule"
	net_expect 'the dot-segment spelling refused' method=GET path=/admin decision=deny status=403 'reason~^no rule allows GET /admin on '
	net_expect 'the encoded slash refused' method=GET decision=deny status=400 'reason~encoded slash'
	net_expect 'TRACE refused' method=TRACE decision=deny status=405
	# the events as the documented schema has them
	local schema=$RR_DIR/../../doc/schema/events-v1.json
	[[ -f $schema ]] || schema=$RR_DIR/../doc/schema/events-v1.json
	if python3 -c 'import jsonschema' 2>/dev/null; then
		python3 "$RR_DIR/schema_check.py" "$schema" "$(latest_log)" >"$T_TMP/schema.out" 2>&1 ||
			fail "the session's events do not follow doc/schema: $(excerpt "$(<"$T_TMP/schema.out")")"
	fi
}

# Plain HTTP on the host's loopback to a port a secret is bound to: warden
# parses each request there; unprivileged too.
test_reqrules_loopback_bound() {
	nh_python
	nh_need curl
	rr_srv lo --bind 127.0.0.1
	local hp=127.0.0.1:$RR_PORT
	MYTOKEN=tok-live-0123456789abcdefghijklmnop wrun --profile "$(rr_profile "$hp")" \
		--secret "MYTOKEN@$hp" -- sh -c "$RR_SCRIPT" sh "http://$hp"
	assert_rc 0
	rr_check "$hp"
	# the session's summary of refusals says which rules, not "allow the host"
	[[ $ERR == *"requests refused by the profile's method/path rules"* && $ERR != *"allow it with --allow-net"* ]] ||
		fail "the summary misreads request refusals: $(excerpt "$ERR")"
}

# Plain HTTP on the host's loopback to a port request rules name, no
# secret bound: the rules alone have warden parse each request there;
# unprivileged too.
test_reqrules_loopback_inspected() {
	nh_python
	nh_need curl
	rr_srv lo --bind 127.0.0.1 --ok /repos/
	local hp=127.0.0.1:$RR_PORT f=$T_TMP/rri.profile
	no_detect_actions "$f" >/dev/null
	printf 'net allow %s GET /repos/**\nnet deny %s DELETE\n' "$hp" "$hp" >>"$f"
	# shellcheck disable=SC2016 # expanded inside
	wrun --profile "$f" --allow-net "$hp" -- sh -c '
		echo "get=$(curl -sS -m 20 -o /dev/null -w "%{http_code}" "http://$1/repos/x")"
		echo "delete=$(curl -sS -m 20 -X DELETE -o /dev/null -w "%{http_code}" "http://$1/repos/x")"
		echo "other=$(curl -sS -m 20 -o /dev/null -w "%{http_code}" "http://$1/admin")"' sh "$hp"
	assert_rc 0
	assert_out_line 'get=200' 'GET /repos/x allowed'
	assert_out_line 'delete=403' 'DELETE refused'
	assert_out_line 'other=403' 'GET /admin, which no rule allows, refused'
	grep -Eq 'admin|"DELETE"' "$RR_LOG" && fail "a refused request reached the server: $(excerpt "$(<"$RR_LOG")")"
	net_expect 'the allowed GET, its path and rule' method=GET path=/repos/x decision=allow "rule=$hp GET /repos/**"
	net_expect 'the DELETE refused' method=DELETE path=/repos/x decision=deny status=403 "rule=$hp DELETE"
	net_expect 'the connection read' method=tcp intercepted=true
}

# HTTPS warden terminates for a host a secret is bound to, over HTTP/1.1.
test_reqrules_https_bound() {
	nh_need_root
	nh_need openssl curl
	nh_netns
	local name
	name=$(nh_name rr)
	nh_hosts_add "$name" "$NH_IP"
	nh_ca "$T_TMP/ca" "warden reqrules test CA $$"
	nh_cert_signed "$T_TMP/tls" "$name" "DNS:$name" "$T_TMP/ca"
	RR_NS=$NH_NS rr_srv tls --bind "$NH_IP" --tls-cert "$T_TMP/tls/cert.pem" --tls-key "$T_TMP/tls/key.pem"
	local hp=$name:$RR_PORT
	MYTOKEN=tok-live-0123456789abcdefghijklmnop NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem \
		wrun --profile "$(rr_profile "$hp")" --allow-net "$hp private" --secret "MYTOKEN@$name" \
		-- sh -c "$RR_SCRIPT" sh "https://$hp" --http1.1
	assert_rc 0
	rr_check "$hp"
}

# The same over HTTP/2: a refused stream answered alone, the others go on.
test_reqrules_https_h2() {
	nh_python
	"$NH_PY" -c 'import h2' 2>/dev/null || skip 'python3-h2 is not installed (scripts/deps)'
	nh_need_root
	nh_need openssl curl
	nh_netns
	local name
	name=$(nh_name rr2)
	nh_hosts_add "$name" "$NH_IP"
	nh_ca "$T_TMP/ca" "warden reqrules test CA $$"
	nh_cert_signed "$T_TMP/tls" "$name" "DNS:$name" "$T_TMP/ca"
	RR_NS=$NH_NS rr_srv tls2 --bind "$NH_IP" --tls-cert "$T_TMP/tls/cert.pem" --tls-key "$T_TMP/tls/key.pem" --h2
	local hp=$name:$RR_PORT
	# shellcheck disable=SC2016 # expanded inside
	MYTOKEN=tok-live-0123456789abcdefghijklmnop NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem \
		wrun --profile "$(rr_profile "$hp")" --allow-net "$hp private" --secret "MYTOKEN@$name" -- sh -c '
		u=$1
		curl -sS -m 20 -o /dev/null -w "h2=%{http_version} %{http_code}/%{num_connects} " -X DELETE "$u/repos/x" \
			--next -sS -m 20 -o /dev/null -w "%{http_code}/%{num_connects} " "$u/repos/../admin" \
			--next -sS -m 20 -o /dev/null -w "%{http_code}/%{num_connects}\n" --data abc "$u/upload"' \
		sh "https://$hp"
	assert_rc 0
	assert_out_line 'h2=2 403/1 403/0 200/0' 'refused streams answered alone, the connection kept'
	grep -q '"/upload"' "$RR_LOG" || fail "the allowed POST did not reach the server"
	grep -Eq 'admin|"DELETE"' "$RR_LOG" && fail "a refused request reached the server: $(excerpt "$(<"$RR_LOG")")"
	net_expect 'the DELETE refused' method=DELETE path=/repos/x decision=deny status=403
}

# Plain HTTP through the proxy (absolute-form): each request decided before
# it is dialled; a tunnel to the same host is inspected (warden terminates
# its TLS for the rules, no secret bound), so plain HTTP inside it fails the
# handshake, the event saying so; SOCKS5 to the host, which warden does not
# terminate, refused: it could carry any path.
test_reqrules_plain_proxy() {
	nh_need_root
	nh_need curl
	nh_netns
	local name
	name=$(nh_name rrp)
	nh_hosts_add "$name" "$NH_IP"
	RR_NS=$NH_NS rr_srv plain --bind "$NH_IP"
	local hp=$name:$RR_PORT
	# shellcheck disable=SC2016 # expanded inside
	wrun --profile "$(rr_profile "$hp")" --allow-net "$hp private" -- sh -c '
		u=$1
		echo "get=$(curl -sS -m 20 -o /dev/null -w "%{http_code}" "$u/repos/x")"
		echo "dotdot=$(curl -sS -m 20 --path-as-is -o /dev/null -w "%{http_code}" "$u/repos/../admin")"
		echo "enc=$(curl -sS -m 20 --path-as-is -o /dev/null -w "%{http_code}" "$u/repos%2F..%2Fadmin")"
		echo "delete=$(curl -sS -m 20 -X DELETE -o /dev/null -w "%{http_code}" "$u/repos/x")"
		echo "tunnel=$(curl -sS -m 20 -p -o /dev/null -w "%{http_code}" "$u/repos/x" 2>&1 | tail -n 1)"
		echo "socks=$(curl -sS -m 20 --proxy socks5h://127.0.0.1:1080 -o /dev/null -w "%{http_code}" "$u/repos/x" 2>&1 | tail -n 1)"' \
		sh "http://$hp"
	assert_rc 0
	assert_out_line 'get=404' 'GET /repos/x allowed through the proxy'
	assert_out_line 'dotdot=403' 'GET /repos/../admin refused'
	assert_out_line 'enc=400' 'an encoded slash refused'
	assert_out_line 'delete=403' 'DELETE refused'
	assert_out_match '^tunnel=.*(403|000)' 'plain HTTP in a tunnel to the host refused'
	assert_out_match '^socks=.*(000|SOCKS|socks)' 'SOCKS5 to the host refused'
	grep -Eq 'admin|"DELETE"' "$RR_LOG" && fail "a refused request reached the server: $(excerpt "$(<"$RR_LOG")")"
	net_expect 'the plain DELETE refused' method=DELETE path=/repos/x decision=deny status=403
	net_expect 'the allowed GET, its path and rule' method=GET path=/repos/x decision=allow "rule=$hp GET,HEAD /repos/*"
	net_expect 'the tunnel terminated for the rules' method=CONNECT intercepted=true \
		"reason~client TLS handshake.*warden terminated the TLS to $hp for rule"
	net_expect 'SOCKS5 refused' method=socks5 decision=deny 'reason~does not see the requests of this SOCKS5 connection'
}

# HTTPS to a host that request rules name, no secret bound: the rules are
# the request to inspect it, so warden terminates its TLS with the session
# CA, which the sandbox's default trust store holds (curl is told of no CA
# file); GET under /repos/ goes, DELETE is refused naming the rule, each a
# `net` event with method and path. A host no rule names, at the same
# server, stays a tunnel (the server's own certificate, no interception);
# a client that does not trust the session CA fails its handshake, and the
# event says warden terminated the TLS for the rule.
test_reqrules_https_inspected() {
	nh_need_root
	nh_need openssl curl
	nh_netns
	local name other
	name=$(nh_name rri)
	other=$(nh_name rro)
	nh_hosts_add "$name" "$NH_IP"
	nh_hosts_add "$other" "$NH_IP"
	nh_ca "$T_TMP/ca" "warden reqrules test CA $$"
	nh_cert_signed "$T_TMP/tls" "$name" "DNS:$name,DNS:$other" "$T_TMP/ca"
	RR_NS=$NH_NS rr_srv tls --bind "$NH_IP" --tls-cert "$T_TMP/tls/cert.pem" --tls-key "$T_TMP/tls/key.pem" --ok /repos/
	local hp=$name:$RR_PORT op=$other:$RR_PORT f=$T_TMP/rri.profile
	no_detect_actions "$f" >/dev/null
	printf 'net allow %s GET /repos/**\nnet deny %s DELETE\n' "$hp" "$hp" >>"$f"
	cp "$T_TMP/ca/ca.pem" "$WS/test-ca.pem"
	# shellcheck disable=SC2016 # expanded inside
	NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem wrun --profile "$f" --allow-net "$hp private" \
		--allow-net "$op private" -- sh -c '
		unset CURL_CA_BUNDLE SSL_CERT_FILE
		echo "get=$(curl -sS -m 20 -o /dev/null -w "%{http_code}" "https://$1/repos/x")"
		echo "delete=$(curl -sS -m 20 -X DELETE -D - -o /dev/null "https://$1/repos/x" | tr -d "\r" | grep -i "^x-warden-reason:")"
		echo "issuer=$(curl -sS -m 20 -v -o /dev/null "https://$1/repos/y" 2>&1 | grep -i "issuer:" | head -n 1)"
		echo "other=$(curl -sS -m 20 -v -o /dev/null -w "%{http_code}" "https://$2/repos/z" 2>&1 | grep -iE "issuer:|^[0-9]+$" | tr "\n" " ")"
		echo "pinned=$(curl -sS -m 20 --cacert ./test-ca.pem -o /dev/null -w "%{http_code}" "https://$1/repos/p" 2>&1 | tail -n 1)"' \
		sh "$hp" "$op"
	assert_rc 0
	assert_out_line 'get=200' 'GET /repos/x through the inspected host'
	assert_out_has "delete=X-Warden-Reason: DELETE /repos/x on $hp denied by rule $hp DELETE" 'DELETE refused, the rule named'
	assert_out_match '^issuer=.*warden session CA' 'the inspected host shows a leaf of the session CA'
	assert_out_match "^other=.*issuer:.*warden reqrules test CA $$.* 200" 'the host no rule names keeps its own certificate (a tunnel)'
	assert_out_match '^pinned=.*(000|SSL|certificate)' 'a client trusting only the server'"'"'s CA fails its handshake'
	grep -q '"path": "/repos/x"' "$RR_LOG" || fail "the allowed GET did not reach the server: $(excerpt "$(<"$RR_LOG")")"
	grep -q '"/repos/z"' "$RR_LOG" || fail "the tunnelled GET did not reach the server"
	grep -q '"DELETE"' "$RR_LOG" && fail "the DELETE reached the server: $(excerpt "$(<"$RR_LOG")")"
	net_expect 'the allowed GET, its path and rule' method=GET path=/repos/x decision=allow "rule=$hp GET /repos/**"
	net_expect 'the DELETE refused' method=DELETE path=/repos/x decision=deny status=403 "rule=$hp DELETE"
	net_expect 'the inspected host intercepted' method=CONNECT "host=$name" decision=allow intercepted=true
	net_expect 'the other host a tunnel' method=CONNECT "host=$other" decision=allow 'intercepted!'
	net_expect_none 'the other host intercepted' "host=$other" intercepted=true
	net_expect 'the pinned client told why' method=CONNECT "host=$name" \
		"reason~client TLS handshake.*warden terminated the TLS to $hp for rule"
}
