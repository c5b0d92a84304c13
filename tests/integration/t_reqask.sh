# t_reqask.sh - an ask request rule (`net ask HOST [METHODS] [PATH]`) on a
# request warden reads inside a connection it terminates, from the outside:
# HTTPS toward a host a secret is bound to (HTTP/1.1 and HTTP/2) or that the
# rules have warden inspect, and plain HTTP on a host loopback port with a
# secret (unprivileged too). The request waits, unsent, until `warden
# approve` answers: yes, it reaches the server and its answer comes back;
# no, that request alone gets a 403 naming the rule; a request an allow rule
# takes still goes on the same connection. Each asked request is a `net`
# event (method, path, decision, rule, the answer in its reason) and an
# `approval` question naming the request; in CI mode nobody can answer and
# it is refused at once; a server that closed the connection meanwhile makes
# it a 502. The servers are secrets_server.py (t_reqrules.sh's rr_srv), the
# questions answered as t_approve.sh's are.
# shellcheck shell=bash

# rq_profile HOST METHODS PATH: GET /echo allowed on HOST, an ask rule on
# METHODS PATH; prints the profile's path.
rq_profile() {
	local f=$T_TMP/rq.profile
	no_detect_actions "$f" >/dev/null
	printf 'net allow %s GET /echo\nnet ask %s %s %s\napprove timeout 40\n' "$1" "$1" "$2" "$3" >>"$f"
	echo "$f"
}

# The requests, one keep-alive connection: two asked POSTs, then an allowed
# GET; "CODE/NEW-CONNECTIONS" each, the headers of the second in hdr.b.
# $1: base URL, $2: the asked path (twice), the rest: curl options.
# shellcheck disable=SC2016 # expanded inside
RQ_SCRIPT='u=$1 p=$2; shift 2
	echo "chain=$(curl -sS -m 60 "$@" -o /dev/null -w "%{http_code}/%{num_connects} " --data one "$u$p" \
		--next -sS -m 60 "$@" -D hdr.b -o /dev/null -w "%{http_code}/%{num_connects} " --data two "$u$p" \
		--next -sS -m 60 "$@" -o /dev/null -w "%{http_code}/%{num_connects}" "$u/echo")"
	echo "reason=$(tr -d "\r" <hdr.b | sed -n "s/^x-warden-reason: //Ip")"
	echo done'

# rq_run HOSTPORT PATH URL [warden run args...] -- [curl options]: the
# script in the background (ap_inside's output file), the first question
# answered yes once the request is seen held, the second no.
rq_run() {
	local hp=$1 path=$2 url=$3 args=() id
	shift 3
	while (($#)) && [[ $1 != -- ]]; do
		args+=("$1")
		shift
	done
	shift
	warden_bg "$T_TMP/ap.out" "${args[@]}" -- sh -c "$RQ_SCRIPT" sh "$url" "$path" "$@"
	id=$(ap_question net 30) || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	"$WARDEN" approve >"$T_TMP/list"
	grep -q "$id .*POST .*$hp$path" "$T_TMP/list" ||
		fail "warden approve does not name the request: $(<"$T_TMP/list")"
	sleep 0.5
	grep -q '"POST"' "$RR_LOG" && fail "the asked POST reached the server before an answer"
	ap_answer "$id" allow
	id=$(ap_question net 30) || fatal "no second question: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	ap_answer "$id" deny --reason 'not this one'
	ap_wait_done
}

# rq_check HOSTPORT PATH GLOB CHAIN: the answers, the server's log, the
# events (GLOB: the ask rule's path).
rq_check() {
	local hp=$1 path=$2 rule="$1 POST $3"
	assert_out_line "chain=$4" 'yes: sent and answered; no: 403 on that request; the GET after it on the same connection'
	assert_out_has "reason=POST $path on $hp asked by rule $rule: denied by approve" \
		'the refusal names the rule and the answer'
	[[ $(grep -c '"POST"' "$RR_LOG") == 1 ]] || fail "not one POST at the server: $(excerpt "$(<"$RR_LOG")")"
	grep -q '"body": "one"' "$RR_LOG" || fail "the allowed POST's body did not reach the server"
	grep -q '"path": "/echo"' "$RR_LOG" || fail 'the GET after the refusal did not reach the server'
	net_expect 'the POST answered yes' method=POST "path=$path" decision=allow "rule=$rule" 'reason~asked by rule .*: allowed by approve'
	net_expect 'the POST answered no' method=POST "path=$path" decision=deny status=403 "rule=$rule" 'reason~denied by approve: not this one'
	[[ $(ap_events '"phase":"asked"' '"method":"POST"' "\"path\":\"$path\"") == 2 ]] ||
		fail 'the approval events do not name the method and path'
	[[ $(ap_events '"phase":"answered"' '"decision":"allow"' '"by":"approve"') == 1 ]] ||
		fail 'no approval event for the yes'
}

# rq_https NAME [--h2]: a server of its own on HTTPS in the test's network
# namespace, NAME resolving to it; sets RR_PORT, RR_LOG, RQ_NAME.
rq_https() {
	nh_need_root
	nh_need openssl curl
	nh_netns
	RQ_NAME=$(nh_name "$1")
	shift
	nh_hosts_add "$RQ_NAME" "$NH_IP"
	nh_ca "$T_TMP/ca" "warden reqask test CA $$"
	nh_cert_signed "$T_TMP/tls" "$RQ_NAME" "DNS:$RQ_NAME" "$T_TMP/ca"
	RR_NS=$NH_NS rr_srv tls --bind "$NH_IP" --tls-cert "$T_TMP/tls/cert.pem" --tls-key "$T_TMP/tls/key.pem" "$@"
}

# HTTPS warden terminates (a secret bound to the host), HTTP/1.1.
test_reqask_https() {
	rq_https rq
	local hp=$RQ_NAME:$RR_PORT
	MYTOKEN=tok-live-0123456789abcdefghijklmnop NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem rq_run "$hp" /items/a "https://$hp" \
		--profile "$(rq_profile "$hp" POST '/items/**')" --allow-net "$hp private" \
		--secret "MYTOKEN@$RQ_NAME" -- --http1.1
	rq_check "$hp" /items/a '/items/**' '200/1 403/0 200/0'
}

# HTTPS warden terminates only for the rules (no secret bound: the host is
# inspected), HTTP/1.1.
test_reqask_https_inspected() {
	rq_https rqi
	local hp=$RQ_NAME:$RR_PORT
	NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem rq_run "$hp" /items/a "https://$hp" \
		--profile "$(rq_profile "$hp" POST '/items/**')" --allow-net "$hp private" -- --http1.1
	rq_check "$hp" /items/a '/items/**' '200/1 403/0 200/0'
}

# The same over HTTP/2: the asked stream waits (the connection with it).
test_reqask_https_h2() {
	nh_python
	"$NH_PY" -c 'import h2' 2>/dev/null || skip 'python3-h2 is not installed (scripts/deps)'
	rq_https rq2 --h2
	local hp=$RQ_NAME:$RR_PORT
	MYTOKEN=tok-live-0123456789abcdefghijklmnop NODE_EXTRA_CA_CERTS=$T_TMP/ca/ca.pem rq_run "$hp" /upload "https://$hp" \
		--profile "$(rq_profile "$hp" POST /upload)" --allow-net "$hp private" \
		--secret "MYTOKEN@$RQ_NAME" -- --http2
	rq_check "$hp" /upload /upload '200/1 403/0 200/0'
	grep -q '"version": "2"' "$RR_LOG" || fail "not HTTP/2 at the server: $(excerpt "$(<"$RR_LOG")")"
}

# rq_lo [OPTION...]: the server on the host's loopback (rr_srv's options);
# sets RQ_HP, the profile (an ask rule on POST /items/** there) in RQ_PROFILE.
rq_lo() {
	nh_python
	nh_need curl
	rr_srv lo --bind 127.0.0.1 "$@"
	RQ_HP=127.0.0.1:$RR_PORT
	RQ_PROFILE=$(rq_profile "$RQ_HP" POST '/items/**')
}

# rq_bg SCRIPT: warden in the background (ap_inside's output file), a
# secret bound to RQ_HP, running sh -c SCRIPT sh URL /items/a.
rq_bg() {
	MYTOKEN=tok-live-0123456789abcdefghijklmnop warden_bg "$T_TMP/ap.out" --profile "$RQ_PROFILE" \
		--secret "MYTOKEN@$RQ_HP" -- sh -c "$1" sh "http://$RQ_HP" /items/a
}

# rq_refused OUTLINE REASON STATUS: the client's line OUTLINE, the reason
# it was given matching REASON, no POST at the server, and the net event of
# the refusal (STATUS, REASON).
rq_refused() {
	assert_out_line "$1" "the answers: $1"
	assert_out_match "^reason=$2" 'the reason the client was given'
	grep -q '"POST"' "$RR_LOG" && fail "a refused POST reached the server"
	net_expect 'the refused POST' method=POST path=/items/a decision=deny "status=$3" "reason~$2"
}

# Plain HTTP on a host loopback port with a secret (warden parses it);
# unprivileged too.
test_reqask_loopback() {
	rq_lo
	MYTOKEN=tok-live-0123456789abcdefghijklmnop rq_run "$RQ_HP" /items/a "http://$RQ_HP" \
		--profile "$RQ_PROFILE" --secret "MYTOKEN@$RQ_HP" --
	rq_check "$RQ_HP" /items/a '/items/**' '200/1 403/0 200/0'
}

# CI mode, nobody to answer: refused at once, saying so; the GET goes on.
test_reqask_ci_refused() {
	rq_lo
	local hp=$RQ_HP t0=$SECONDS
	CI=true RUNNER_TEMP=$T_TMP/runner MYTOKEN=tok-live-0123456789abcdefghijklmnop \
		wrun --profile "$RQ_PROFILE" --secret "MYTOKEN@$hp" -- sh -c "$RQ_SCRIPT" sh "http://$hp" /items/a
	((SECONDS - t0 < 30)) || fail "the questions took $((SECONDS - t0)) s: not refused at once"
	# both POSTs refused, the GET after them goes; the reason says nobody could answer
	rq_refused 'chain=403/1 403/0 200/0' "POST /items/a on $hp asked by rule $hp POST /items/\*\*: denied by ci" 403
}

# `warden kill` while a request's question is open: the waiting thread
# wakes (the session ends, or the killed client closes first), warden ends
# at once, the request never sent; unprivileged too.
test_reqask_kill_while_asked() {
	local sid rc t0
	rq_lo
	rq_bg "$RQ_SCRIPT"
	ap_question net 30 >/dev/null || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	sid=$("$WARDEN" status --json | grep -F "\"workspace\":\"$WS\"" | sed -n 's/.*"session":"\([^"]*\)".*/\1/p')
	t0=$SECONDS
	"$WARDEN" kill "$sid" >/dev/null 2>&1 || fail "warden kill $sid failed"
	wait "$TPID"
	rc=$?
	((SECONDS - t0 < 15)) || fail "warden took $((SECONDS - t0)) s to end with a question open"
	[[ $rc == 137 ]] || fail "warden ended with $rc after the kill, not 137"
	grep -q '"POST"' "$RR_LOG" && fail "the asked POST reached the server"
	net_expect 'the asked POST refused as the session ended' method=POST path=/items/a decision=deny 'reason~(session ended|client closed the connection) before an answer'
}

# An answer for the session covers the same request again on that
# connection (the subject is the request's, as for plain HTTP).
test_reqask_remembered() {
	local id
	rq_lo
	rq_bg "$RQ_SCRIPT"
	id=$(ap_question net 30) || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	ap_answer "$id" allow --session
	ap_wait_done
	assert_out_line 'chain=200/1 200/0 200/0' 'the second POST allowed by the answer for the session'
	[[ $(grep -c '"POST"' "$RR_LOG") == 2 ]] || fail "not both POSTs at the server: $(excerpt "$(<"$RR_LOG")")"
	[[ $(ap_events '"phase":"asked"') == 1 ]] || fail 'asked more than once'
	[[ $(ap_events '"phase":"remembered"' '"decision":"allow"') == 1 ]] || fail 'no remembered answer'
	net_expect 'the remembered answer on the record' method=POST path=/items/a decision=allow 'reason~an earlier answer'
}

# The server closes its idle connection before the answer comes: the yes
# cannot send the request there, and the client is told so (502, send it
# again) instead of an empty reply; unprivileged too.
test_reqask_server_closed_meanwhile() {
	local id
	rq_lo --idle 2
	# shellcheck disable=SC2016 # expanded inside
	rq_bg 'echo "code=$(curl -sS -m 60 -D hdr -o /dev/null -w "%{http_code}" --data one "$1$2")"
		echo "reason=$(tr -d "\r" <hdr | sed -n "s/^x-warden-reason: //Ip")"
		echo done'
	id=$(ap_question net 30) || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	sleep 3.5
	ap_answer "$id" allow
	ap_wait_done
	rq_refused code=502 'POST /items/a on .*: allowed by approve, but the server closed the connection .*send the request again' 502
}

# The client gives up while its request's question is open: the question is
# withdrawn (cancelled on the record), as for a plain connection's.
test_reqask_client_gone() {
	local i open=1
	rq_lo
	# shellcheck disable=SC2016 # expanded inside
	rq_bg 'echo "code=$(curl -sS -m 2 -o /dev/null -w "%{http_code}" --data one "$1$2")"
		sleep 4
		echo done'
	ap_question net 30 >/dev/null || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	wait_for "$T_TMP/ap.out" '^code=' 20 || fatal 'curl did not give up'
	for ((i = 0; i < 30; i++)); do
		"$WARDEN" approve --json 2>/dev/null | matches '"kind": "net"' || { open=0; break; }
		sleep 0.1
	done
	((open == 0)) || fail 'the question stayed open after the client went away'
	ap_wait_done
	[[ $(ap_events '"phase":"cancelled"') == 1 ]] || fail 'no cancelled approval event'
	grep -q '"POST"' "$RR_LOG" && fail 'the POST reached the server'
	net_expect 'the request refused, the client gone' method=POST path=/items/a decision=deny 'reason~client closed the connection before an answer'
}
