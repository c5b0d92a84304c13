# t_schema.sh - the audit log's documented format (doc/schema/events-v1.json,
# a JSON Schema): sessions that make most kinds of event (execs, direct
# connections refused, connections through the proxy allowed and refused,
# file events, refused syscalls, alerts, the risk score, the detector's
# freeze and a kill on request, a question answered, a limit reached, a
# signal passed on, tool calls a hook reported, session.start and
# session.end) and every line of every
# log they wrote validated against the schema, which describes each kind's
# fields and no more: a field or a kind it does not know fails the test.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

SC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the tree's doc/, or a copy beside integration/ (scripts/test's
# unprivileged run copies it there)
SC_SCHEMA=$SC_DIR/../../doc/schema/events-v1.json
[[ -f $SC_SCHEMA ]] || SC_SCHEMA=$SC_DIR/../doc/schema/events-v1.json

sc_need() {
	have python3 || skip 'python3 is not installed'
	python3 -c 'import jsonschema' 2>/dev/null || skip 'python3-jsonschema is not installed (scripts/deps)'
	[[ -f $SC_SCHEMA ]] || fatal "no schema at $SC_DIR/../../doc/schema/events-v1.json nor beside integration/"
}

# sc_validate: every line of every log of this test's HOME; sets SC_KINDS
# (the kinds seen).
sc_validate() {
	local logs=("$HOME/.local/state/warden/"*.jsonl)
	[[ -f ${logs[0]} ]] || fatal 'no session log'
	local out rc=0
	out=$(python3 "$SC_DIR/schema_check.py" "$SC_SCHEMA" --kinds-of event "${logs[@]}" 2>"$T_TMP/schema.err") || rc=$?
	((rc == 0)) || fail "lines the schema does not describe ($rc): $(head -c 1500 "$T_TMP/schema.err")"
	SC_KINDS=" ${out#kinds: } "
	note "kinds seen: $SC_KINDS"
}

sc_covers() {
	local k
	for k; do
		[[ $SC_KINDS == *" $k "* ]] || fail "no $k event was made: the schema of $k went untested"
	done
}

# escape attempts: syscall refusals, alerts, the risk score, the
# detector's freeze; then `warden kill`: an action by control
sc_session_freeze_kill() {
	printf 'freeze timeout 1m\n' >"$T_TMP/fz.profile" # no terminal: else killed at once
	warden_bg "$T_TMP/fz.out" --profile "$T_TMP/fz.profile" -- sh -c './wprobe unshare user; ./wprobe ptrace 1; ./wprobe bpf; sleep 60'
	local i st='' sid
	for ((i = 0; i < 100; i++)); do
		st=$("$WARDEN" status 2>/dev/null | grep -F "$WS" || true)
		[[ $st == *frozen* ]] && break
		sleep 0.1
	done
	[[ $st == *frozen* ]] || fail "not frozen after three escape attempts: $(excerpt "$st")"
	sid=$("$WARDEN" status --json | grep -F "\"workspace\":\"$WS\"" | sed -n 's/.*"session":"\([^"]*\)".*/\1/p')
	"$WARDEN" kill "$sid" >/dev/null 2>&1 || fail "warden kill $sid failed"
	wait "$TPID"
}

# the network: a direct connect refused, the proxy allowing a rule's
# destination and refusing another, a `net ask` question answered; file
# events (`audit files`); a limit reached (tmp)
sc_session_net_files_limit() {
	nh_need curl
	mkdir -p "$T_TMP/www"
	echo token >"$T_TMP/www/t.txt"
	chmod -R a+rX "$T_TMP/www"
	nh_web http "$T_TMP/www" 127.0.0.1 0
	local p1=$PORT
	nh_web http2 "$T_TMP/www" 127.0.0.1 0
	local p2=$PORT
	printf 'risk warn off\nrisk freeze off\nrisk kill off\naudit files\nlimit tmp 2M\nnet allow 127.0.0.1:%s\nnet ask 127.0.0.1:%s\napprove timeout 20\n' \
		"$p1" "$p2" >"$T_TMP/net.profile"
	cat >"$WS/inside.sh" <<EOF
unset NO_PROXY no_proxy
curl -s -m 20 -o /dev/null -w 'allowed %{http_code}\n' http://127.0.0.1:$p1/t.txt
curl -s -m 20 -o /dev/null -w 'denied %{http_code}\n' http://192.0.2.7:81/
curl -s -m 30 -o /dev/null -w 'asked %{http_code}\n' http://127.0.0.1:$p2/t.txt
./wprobe connect 192.0.2.1 80
echo x >written; mv written moved; ln -s moved link; rm moved link
dd if=/dev/zero of=/tmp/fill bs=1M count=4 2>/dev/null; echo done
EOF
	warden_bg "$T_TMP/net.out" --profile "$T_TMP/net.profile" -- sh ./inside.sh
	local i id=''
	for ((i = 0; i < 300; i++)); do
		id=$("$WARDEN" approve --json 2>/dev/null | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
		[[ -n $id ]] && break
		sleep 0.1
	done
	if [[ -n $id ]]; then
		"$WARDEN" approve "$id" allow >/dev/null 2>&1 || fail "warden approve $id allow failed"
	else
		fail 'the net ask question never came'
	fi
	wait_for "$T_TMP/net.out" '^done' 60 || fail "the session did not finish: $(excerpt "$(cat "$T_TMP/net.out"*)")"
	wait "$TPID"
	grep -q '^allowed 200' "$T_TMP/net.out" || fail "the allowed fetch: $(excerpt "$(<"$T_TMP/net.out")")"
}

# a signal passed on: SIGTERM to warden, the sandbox given its grace period
sc_session_signal() {
	warden_bg "$T_TMP/sig.out" -- sh -c 'echo up; sleep 60'
	wait_for "$T_TMP/sig.out" '^up' 20 || fail 'the signal session did not start'
	kill -TERM "$WPID"
	wait "$TPID"
}

# tool calls an agent's hook reports: one a `tool deny` rule refuses, one
# allowed, and its post report; a script whose interpreter is a script
# (the exec event's interpreter_scripts); an extended attribute set (the
# file event's attr)
sc_session_tool() {
	printf '#!/bin/sh\n' >"$WS/n1" && printf '#!%s\n' "$WS/n1" >"$WS/n2" && chmod 755 "$WS/n1" "$WS/n2"
	printf 'tool deny Bash rm -rf *\n' >"$T_TMP/tool.profile"
	local ev cmd id
	local n=0
	for ev in 'PreToolUse|rm -rf /tmp/victim|toolu_1' 'PreToolUse|ls -la|toolu_2' 'PostToolUse|ls -la|toolu_2'; do
		IFS='|' read -r ev cmd id <<<"$ev"
		n=$((n + 1))
		printf '{"session_id":"s-1","cwd":"%s","hook_event_name":"%s","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"%s"}\n' \
			"$WS" "$ev" "$cmd" "$id" >"$WS/hook.$n.json"
	done
	wsh './n2; for f in hook.*.json; do /.warden/warden hook <"$f" >/dev/null; done
		python3 -c "import os; os.setxattr(\"n1\", \"user.schema\", b\"1\")"' --profile "$T_TMP/tool.profile"
}

# a read-only workspace with an output and a kept scratch directory: its
# layout in session.start, a write in the tree refused as a file event
sc_session_layout() {
	mkdir -p "$T_TMP/scratch"
	# a certificate of the workspace, read inside as a copy (session.start's
	# certificates)
	if have openssl; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout /dev/null \
			-out ca.pem -subj /CN=schema -days 2 2>/dev/null || fatal 'openssl req failed'
	fi
	wsh 'echo x >out/ok; echo y >"$WARDEN_SCRATCH/s"; echo z >refused 2>/dev/null; true' \
		--read-only --output "$WS/out" --scratch "$T_TMP/scratch"
}

test_schema_real_logs() {
	sc_need
	sc_session_layout
	sc_session_tool
	sc_session_freeze_kill
	sc_session_net_files_limit
	sc_session_signal
	sc_validate
	sc_covers session.start session.end exec net file syscall alert risk action approval limit signal tool
	# the shapes of net the sessions made: refused directly, allowed and
	# refused by the proxy (grep's output to /dev/null, not -q: under
	# pipefail, a -q that stops reading early fails the first grep with
	# SIGPIPE when the logs are larger than a pipe's buffer)
	local logs=("$HOME/.local/state/warden/"*.jsonl)
	grep -hF '"event":"net"' "${logs[@]}" | grep -F '"method":"connect"' | grep -F '"decision":"deny"' >/dev/null ||
		fail 'no direct connect refused'
	grep -hF '"event":"net"' "${logs[@]}" | grep -F '"via":"http"' | grep -F '"decision":"allow"' >/dev/null ||
		fail 'no connection allowed through the proxy'
	grep -hF '"event":"net"' "${logs[@]}" | grep -F '"via":"http"' | grep -F '"decision":"deny"' >/dev/null ||
		fail 'no connection refused by the proxy'
	grep -hF '"event":"exec"' "${logs[@]}" | grep -F '"interpreter_scripts":[' >/dev/null ||
		fail 'no exec through a script named as an interpreter'
	grep -hF '"event":"session.start"' "${logs[@]}" | grep -F '"read_only":true' >/dev/null ||
		fail 'no session.start with a read-only layout'
	if have openssl; then
		grep -hF '"event":"session.start"' "${logs[@]}" | grep -F '"certificates":["ca.pem"]' \
			>/dev/null || fail 'no session.start with certificates'
	fi
	grep -hF '"event":"file"' "${logs[@]}" | grep -F 'read-only' | grep -F '"decision":"deny"' >/dev/null ||
		fail 'no write refused in the read-only workspace'
	grep -hF '"event":"file"' "${logs[@]}" | grep -F '"op":"setxattr"' | grep -F '"attr":"user.schema"' >/dev/null ||
		fail 'no extended attribute set on the record'
}

# The test above can fail: a field the schema does not describe, a kind it
# does not know, a field of the wrong type, a header missing are each a
# failure of the validator. And a log of another format version is not
# taken for this one.
test_schema_refuses_unknown() {
	sc_need
	wrun -- true
	local log line
	log=$(latest_log)
	line=$(grep -F '"event":"exec"' "$log" | head -n 1)
	[[ -n $line ]] || fatal 'no exec event'
	python3 "$SC_DIR/schema_check.py" "$SC_SCHEMA" "$log" 2>"$T_TMP/ok.err" ||
		fail "a real log refused: $(excerpt "$(<"$T_TMP/ok.err")")"
	local bad i=0
	for bad in "${line/\"decision\":/\"surprise\":1,\"decision\":}" \
		"${line/\"event\":\"exec\"/\"event\":\"exec.new\"}" \
		"${line/\"pid\":/\"pid\":\"x\",\"was_pid\":}" \
		"${line/\"v\":1,/}"; do
		i=$((i + 1))
		printf '%s\n' "$bad" >"$T_TMP/bad$i.jsonl"
		if python3 "$SC_DIR/schema_check.py" "$SC_SCHEMA" "$T_TMP/bad$i.jsonl" 2>"$T_TMP/bad.err"; then
			fail "the schema accepts an altered line $i: $(excerpt "$bad")"
		fi
	done
	# a version this warden does not know: warden log verify refuses it
	sed -i '1s/^{"v":1,/{"v":2,/' "$log"
	wardenc log verify "$(basename "$log" .jsonl)"
	assert_rc 1 'a log of format version 2'
	assert_out_match 'line 1: "v" is missing or not 1' 'says the version'
}
