# t_mcp.sh - MCP over HTTP, from the outside: a server on the host's
# loopback speaking streamable HTTP (mcp_server.py), a client inside on one
# keep-alive connection (mcp_client.py). With `mcp` rules for the server:
# initialize and tools/list pass; tools/call of an allowed tool reaches the
# server and its event stream arrives event by event; a denied tool gets a
# JSON-RPC error from warden (HTTP 200, code -32001) and never reaches the
# server, the connection kept; an asked tool waits for `warden approve`
# (allowed once, denied once).
# Each message is an `mcp` event. Over HTTPS (root: a server in a network
# namespace of the test's own) warden terminates the server's TLS for its
# mcp rules, a secret bound to it or not. The loopback cases run
# unprivileged too.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"
MCP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)


# mcp_start: the server on 127.0.0.1; sets MCP_PORT, MCP_LOG.
mcp_start() {
	nh_python
	MCP_LOG=$T_TMP/mcp.log
	: >"$MCP_LOG"
	"$NH_PY" "$MCP_DIR/mcp_server.py" --port-file "$T_TMP/mcp.port" --log "$MCP_LOG" \
		>"$T_TMP/mcp.out" 2>&1 &
	local pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/mcp.port" '^[0-9]+$' 10 || fatal "the MCP server did not start: $(excerpt "$(cat "$T_TMP/mcp.out")")"
	MCP_PORT=$(<"$T_TMP/mcp.port")
}

# mcp_events STRING...: the session's mcp events holding every STRING
mcp_events() {
	local line ok s n=0
	while IFS= read -r line; do
		ok=1
		for s; do [[ $line == *"$s"* ]] || ok=0; done
		((ok)) && n=$((n + 1))
	done < <(grep '"event":"mcp"' "$(latest_log)")
	printf '%s\n' "$n"
}

# mcp_question: the id of the open question for the tool ask_me, waited for.
mcp_question() {
	local i id
	for ((i = 0; i < 300; i++)); do
		id=$("$WARDEN" approve --json 2>/dev/null | awk '/"id":/ { gsub(/[",]/, "", $2); id = $2 }
			/mcp 127.0.0.1:[0-9]+ tool ask_me/ { print id; exit }')
		[[ -n $id ]] && { printf '%s\n' "$id"; return 0; }
		grep -q '^done' "$T_TMP/ap.out" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

test_mcp_tools_allow_deny_ask() {
	mcp_start
	cp "$MCP_DIR/mcp_client.py" "$WS/"
	printf 'mcp 127.0.0.1:%s allow echo\nmcp 127.0.0.1:%s deny rm_*\nmcp 127.0.0.1:%s ask ask_me\napprove timeout 30\n' \
		"$MCP_PORT" "$MCP_PORT" "$MCP_PORT" >"$T_TMP/p"
	{
		echo 'unset NO_PROXY no_proxy'
		echo "$NH_PY ./mcp_client.py $MCP_PORT"
		echo 'echo done'
	} >"$WS/inside.sh"
	MCPTOK=tok-mcp-0123456789abcdef warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" \
		--secret "MCPTOK@127.0.0.1:$MCP_PORT" --allow-net "127.0.0.1:$MCP_PORT" -- sh ./inside.sh
	local id
	# the first call of the asked tool allowed, the second denied
	id=$(mcp_question) || fail "no question for the asked tool: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	"$WARDEN" approve "$id" allow >"$T_TMP/ap.answer" 2>&1 || fail "warden approve failed: $(<"$T_TMP/ap.answer")"
	id=$(mcp_question) || fail "no second question for the asked tool: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	"$WARDEN" approve "$id" deny --reason 'not this one' >"$T_TMP/ap.answer" 2>&1 ||
		fail "warden approve failed: $(<"$T_TMP/ap.answer")"
	wait_for "$T_TMP/ap.out" '^done' 60 || fail "the session did not finish: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	wait "$TPID"
	# shellcheck disable=SC2034 # RC and ERR: read by assert_rc (lib.sh)
	RC=$? ERR=$(<"$T_TMP/ap.out.err")
	OUT=$(<"$T_TMP/ap.out")
	assert_rc 0
	assert_out_match '^initialize 200 same-conn .*"serverInfo"' 'initialize passed'
	assert_out_match '^tools/list 200 same-conn .*"ask_me"' 'tools/list passed'
	assert_out_match '^echo 200 same-conn stream-end' 'the allowed tool ran'
	assert_out_match '^rm_all 200 same-conn .*"code": ?-32001.*warden: tool rm_all denied by rule mcp 127.0.0.1:[0-9]+ deny rm_\*' \
		'the denied tool answered with a JSON-RPC error, the connection kept'
	assert_out_match '^ask_me event got=.*RAN ask_me' 'the asked tool ran once allowed'
	assert_out_match '^ask_me 200 same-conn stream-end' 'the asked tool, same connection'
	assert_out_match '^again: ask_me 200 same-conn .*"code": ?-32001.*warden: tool ask_me denied by approve.*not this one' \
		'the asked tool denied by the human'
	# the stream came event by event: the first before the last was sent
	assert_streamed '^echo event.*progress' '^echo event.*RAN echo'
	# the server never saw the denied call, saw the others, on one connection
	grep -q '"rm_all"' <(grep '"tools/call"' "$MCP_LOG") && fail "the denied tool reached the server"
	grep -q '"name": "echo"' "$MCP_LOG" || fail "the allowed tool did not reach the server"
	grep -q '"name": "ask_me"' "$MCP_LOG" || fail "the asked tool did not reach the server"
	[[ $(sed -n 's/^{"peer": \([0-9]*\),.*/\1/p' "$MCP_LOG" | sort -u | wc -l) == 1 ]] ||
		fail "the server saw more than one connection: $(excerpt "$(<"$MCP_LOG")")"
	# the events
	[[ $(mcp_events '"mcp_method":"initialize"' '"decision":"allow"') == 1 ]] || fail "no mcp event for initialize"
	[[ $(mcp_events '"mcp_tool":"echo"' '"decision":"allow"' '"rule":"mcp 127.0.0.1:') == 1 ]] ||
		fail "no mcp event allowing echo"
	[[ $(mcp_events '"mcp_tool":"rm_all"' '"decision":"deny"' '"reason":"tool rm_all denied by rule') == 1 ]] ||
		fail "no mcp event denying rm_all"
	[[ $(mcp_events '"mcp_tool":"ask_me"' '"decision":"deny"' '"asked":true') == 1 ]] ||
		fail "no mcp event denying the asked tool: $(grep '"event":"mcp"' "$(latest_log)")"
	[[ $(grep -c '"name": "ask_me"' "$MCP_LOG") == 1 ]] || fail "the asked tool reached the server other than once"
	[[ $(mcp_events '"mcp_tool":"ask_me"' '"decision":"allow"' '"asked":true') == 1 ]] ||
		fail "no mcp event for the asked tool: $(grep '"event":"mcp"' "$(latest_log)")"
	# the refused calls in the end's list, by tool and server
	assert_err_match "^  mcp tool rm_all on 127\.0\.0\.1:$MCP_PORT: tool rm_all denied by rule"
	assert_err_match "^  mcp tool ask_me on 127\.0\.0\.1:$MCP_PORT: "
	# the log, mcp events included, holds to the published schema
	local schema=$MCP_DIR/../../doc/schema/events-v1.json
	[[ -f $schema ]] || schema=$MCP_DIR/../doc/schema/events-v1.json
	if python3 -c 'import jsonschema' 2>/dev/null && [[ -f $schema ]]; then
		python3 "$MCP_DIR/schema_check.py" "$schema" "$(latest_log)" >"$T_TMP/schema.out" 2>&1 ||
			fail "the log does not hold to the schema: $(excerpt "$(<"$T_TMP/schema.out")")"
	else
		note 'python3-jsonschema or the schema missing: the log not checked against it'
	fi
}

# A client that gives up while its tool call is asked about withdraws the
# question (an approval event cancelled); the call never reaches the server.
test_mcp_ask_client_gone() {
	mcp_start
	printf 'mcp 127.0.0.1:%s ask ask_me\napprove timeout 30\n' "$MCP_PORT" >"$T_TMP/p"
	local call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_me","arguments":{}}}'
	MCPTOK=tok-mcp-0123456789abcdef warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" \
		--secret "MCPTOK@127.0.0.1:$MCP_PORT" --allow-net "127.0.0.1:$MCP_PORT" -- sh -c '
		echo "code=$(curl -sS --noproxy "*" -m 2 -o /dev/null -w "%{http_code}" \
			-H "Content-Type: application/json" --data "$1" http://127.0.0.1:'"$MCP_PORT"'/mcp)"
		sleep 4
		echo done' sh "$call"
	mcp_question >/dev/null || fatal "no question for the asked tool: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	wait_for "$T_TMP/ap.out" '^code=' 20 || fatal 'curl did not give up'
	local i open=1
	for ((i = 0; i < 30; i++)); do
		mcp_question_open || { open=0; break; }
		sleep 0.1
	done
	((open == 0)) || fail 'the question stayed open after the client went away'
	ap_wait_done
	assert_rc 0
	[[ $(ap_events '"phase":"cancelled"') == 1 ]] || fail "no cancelled approval event: $(grep '"event":"approval"' "$(latest_log)")"
	grep -q '"ask_me"' "$MCP_LOG" && fail 'the asked call reached the server'
	return 0
}

# mcp_question_open: a question about the tool ask_me is open now.
mcp_question_open() { "$WARDEN" approve --json 2>/dev/null | matches 'mcp 127.0.0.1:[0-9]* tool ask_me'; }

# A body that is not JSON-RPC is refused (400, a parse error) with its
# event; one over 1 MiB gets 413.
test_mcp_malformed_refused() {
	mcp_start
	printf 'mcp 127.0.0.1:%s allow echo\n' "$MCP_PORT" >"$T_TMP/p"
	MCPTOK=tok-mcp-0123456789abcdef wrun --profile "$T_TMP/p" --secret "MCPTOK@127.0.0.1:$MCP_PORT" \
		--allow-net "127.0.0.1:$MCP_PORT" -- sh -c 'unset NO_PROXY no_proxy
		curl -sS --noproxy "*" -m 10 -w " code=%{http_code}" -H "Content-Type: application/json" \
			--data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":" http://127.0.0.1:'"$MCP_PORT"'/mcp
		echo
		head -c 1100000 /dev/zero | tr "\0" " " >big
		curl -sS --noproxy "*" -m 10 -H "Expect:" -w " big=%{http_code}" --data-binary @big \
			http://127.0.0.1:'"$MCP_PORT"'/mcp'
	assert_out_match '"code":-32700.*not JSON-RPC: not JSON.* code=400' 'the malformed body refused'
	assert_out_has 'request body over 1048576 bytes' 'the refusal of a body over 1 MiB says why'
	assert_out_has ' big=413' 'a body over 1 MiB refused'
	[[ -s $MCP_LOG ]] && fail "the malformed body reached the server: $(<"$MCP_LOG")"
	[[ $(mcp_events '"decision":"deny"' '"reason":"not JSON-RPC: not JSON"') == 1 ]] ||
		fail "no mcp event for the malformed body"
}

# mcp_https_start: the server over HTTPS at a name in a network namespace
# of the test's own (root), its certificate from a test CA; sets MCP_NAME,
# MCP_PORT, MCP_LOG, MCP_CA, and the rules in $T_TMP/p.
mcp_https_start() {
	nh_need_root
	nh_need openssl
	nh_python
	nh_netns
	MCP_NAME=$(nh_name mcp)
	nh_hosts_add "$MCP_NAME" "$NH_IP"
	nh_ca "$T_TMP/ca" "warden mcp test CA $$"
	nh_cert_signed "$T_TMP/tls" "$MCP_NAME" "DNS:$MCP_NAME" "$T_TMP/ca"
	MCP_CA=$T_TMP/ca/ca.pem
	MCP_LOG=$T_TMP/mcp.log
	: >"$MCP_LOG"
	ip netns exec "$NH_NS" "$NH_PY" "$MCP_DIR/mcp_server.py" --port-file "$T_TMP/mcp.port" --log "$MCP_LOG" \
		--bind "$NH_IP" --tls-cert "$T_TMP/tls/cert.pem" --tls-key "$T_TMP/tls/key.pem" >"$T_TMP/mcp.out" 2>&1 &
	local pid=$!
	bg_track "$pid"
	nh_on_exit "kill $pid"
	wait_for "$T_TMP/mcp.port" '^[0-9]+$' 10 || fatal "the MCP server did not start: $(excerpt "$(cat "$T_TMP/mcp.out")")"
	MCP_PORT=$(<"$T_TMP/mcp.port")
	cp "$MCP_DIR/mcp_client.py" "$WS/"
	printf 'mcp %s allow echo,ask_me\nmcp %s deny rm_*\n' "$MCP_NAME" "$MCP_NAME" >"$T_TMP/p"
}

# mcp_https_check: what mcp_client.py got (over HTTPS, or on the loopback
# with the same rules), and the server's log.
mcp_https_check() {
	assert_rc 0
	assert_out_match '^echo 200 same-conn stream-end' 'the allowed tool ran over HTTPS'
	assert_out_match '^rm_all 200 same-conn .*"code": ?-32001.*warden: tool rm_all denied by rule' 'the denied tool, over HTTPS'
	assert_streamed '^echo event.*progress' '^echo event.*RAN echo'
	grep '"tools/call"' "$MCP_LOG" | matches '"rm_all"' && fail "the denied tool reached the server"
	[[ $(mcp_events '"mcp_tool":"rm_all"' '"decision":"deny"') == 1 ]] || fail "no mcp event denying rm_all"
}

# Over HTTPS warden terminates for a secret bound to the server's name: the
# same rules, the denied tool answered by warden, the allowed one's stream
# event by event.
test_mcp_https() {
	mcp_https_start
	MCPTOK=tok-mcp-0123456789abcdef NODE_EXTRA_CA_CERTS=$MCP_CA wrun --profile "$T_TMP/p" \
		--secret "MCPTOK@$MCP_NAME" --allow-net "$MCP_NAME:$MCP_PORT private" -- "$NH_PY" ./mcp_client.py "$MCP_PORT" "$MCP_NAME"
	mcp_https_check
}

# Over HTTPS with no secret bound: the mcp rules are the request to inspect
# the server, so warden terminates its TLS with the session CA (which the
# sandbox's default trust store holds) and the rules apply.
test_mcp_https_inspected() {
	mcp_https_start
	NODE_EXTRA_CA_CERTS=$MCP_CA wrun --profile "$T_TMP/p" --allow-net "$MCP_NAME:$MCP_PORT private" \
		-- sh -c 'unset SSL_CERT_FILE REQUESTS_CA_BUNDLE; exec "$@"' sh "$NH_PY" ./mcp_client.py "$MCP_PORT" "$MCP_NAME"
	mcp_https_check
	grep -F "\"host\":\"$MCP_NAME\"" "$(latest_log)" | grep '"event":"net"' | matches '"intercepted":true' ||
		fail "no intercepted net event for the server"
}

# On the host's loopback with no secret bound: the mcp rules alone have
# warden read the server's requests there; unprivileged too.
test_mcp_loopback_inspected() {
	mcp_start
	cp "$MCP_DIR/mcp_client.py" "$WS/"
	printf 'mcp 127.0.0.1:%s allow echo,ask_me\nmcp 127.0.0.1:%s deny rm_*\n' "$MCP_PORT" "$MCP_PORT" >"$T_TMP/p"
	wrun --profile "$T_TMP/p" --allow-net "127.0.0.1:$MCP_PORT" -- sh -c 'unset NO_PROXY no_proxy; exec "$@"' \
		sh "$NH_PY" ./mcp_client.py "$MCP_PORT"
	mcp_https_check
}

# Plain HTTP through the proxy to an mcp server is not read: refused (403
# naming why), the server never reached.
test_mcp_plain_proxy_refused() {
	mcp_start
	printf 'mcp 127.0.0.1:%s allow echo\n' "$MCP_PORT" >"$T_TMP/p"
	MCPTOK=tok-mcp-0123456789abcdef wrun --profile "$T_TMP/p" --secret "MCPTOK@127.0.0.1:$MCP_PORT" \
		--allow-net "127.0.0.1:$MCP_PORT" -- sh -c 'unset NO_PROXY no_proxy
		curl -sS -m 10 -w " code=%{http_code}" -H "Content-Type: application/json" \
			--data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}" \
			http://127.0.0.1:'"$MCP_PORT"'/mcp'
	assert_out_has 'mcp server: warden reads it only over TLS' 'the refusal says why'
	assert_out_has ' code=403' 'plain HTTP through the proxy refused'
	[[ -s $MCP_LOG ]] && fail "the request reached the server: $(<"$MCP_LOG")"
	return 0
}

# An upgrade (a WebSocket) toward an mcp server is refused: its bytes would
# not be read as requests.
test_mcp_upgrade_refused() {
	mcp_start
	printf 'mcp 127.0.0.1:%s allow echo\n' "$MCP_PORT" >"$T_TMP/p"
	MCPTOK=tok-mcp-0123456789abcdef wrun --profile "$T_TMP/p" --secret "MCPTOK@127.0.0.1:$MCP_PORT" \
		--allow-net "127.0.0.1:$MCP_PORT" -- sh -c 'curl -sS --noproxy "*" -m 10 -w " code=%{http_code}" \
		-H "Connection: Upgrade" -H "Upgrade: websocket" http://127.0.0.1:'"$MCP_PORT"'/mcp'
	assert_out_has 'an upgrade toward an MCP server' 'the refusal says why'
	assert_out_has ' code=403' 'the upgrade refused'
	[[ $(mcp_events '"decision":"deny"' '"reason":"an upgrade toward an MCP server') == 1 ]] ||
		fail "no mcp event for the upgrade"
}
