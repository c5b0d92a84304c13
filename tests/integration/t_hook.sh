# t_hook.sh - the tool-call gate (issue 15, items 4 and 5): `warden hook`
# inside a session, fed Claude Code's hook input, reports each tool call over
# the hook socket (/.warden/hook.sock) and prints warden's decision. A call a
# `tool deny` rule matches is denied (the documented JSON answer) and
# recorded as a `tool` event; a `tool ask` call waits until the test, from a
# second process, answers it with `warden approve`; the hook socket refuses
# an answer the sandbox tries to give itself (alert hook.refused, the
# question still open); the execs and proxied connections between a call's
# pre and post reports carry its id, and a program the command does not name
# that connects raises tool.intent-mismatch. Then the real Claude Code (and
# Codex) against the mock APIs: the call a rule denies does not run, the one
# it asks about waits for `warden approve`. The clients are skipped when they
# cannot be installed. Every test fails on a tree without the gate (no
# `warden hook`, no tool events).
# shellcheck shell=bash

# hook_input FILE EVENT TOOL KEY VALUE [TOOL_USE_ID]: a hook input as Claude
# Code writes it on the hook's stdin, into FILE (in the workspace).
hook_input() {
	local file=$1 event=$2 tool=$3 key=$4 value=$5 id=${6:-toolu_test1}
	printf '{"session_id":"sess-1","transcript_path":"/home/agent/.claude/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"%s","tool_name":"%s","tool_input":{"%s":"%s"},"tool_use_id":"%s"}\n' \
		"$WS" "$event" "$tool" "$key" "$value" "$id" >"$file"
}

# log_events KIND: the latest session's events of KIND (JSON lines) in OUT.
log_events() { wardenc log show --event "$1" --json; }

# approve_wait WHAT SECONDS: the id of the open question whose summary has
# WHAT, once `warden approve` lists it (QID); 1 when none comes in time.
approve_wait() {
	local i
	QID=
	for ((i = 0; i < $2 * 5; i++)); do
		QID=$("$WARDEN" approve 2>/dev/null | grep -F -- "$1" | awk '{ print $1; exit }')
		[[ -n $QID ]] && return 0
		sleep 0.2
	done
	return 1
}

# A Bash call that a `tool deny` rule matches: the deny decision as Claude
# Code reads it (hookSpecificOutput, permissionDecision deny, the rule in
# the reason), exit 0; an allowed call: nothing, exit 0; both recorded as
# tool events (phase pre, reported, the rule, the agent's ids). The hook
# socket unreachable: exit 2 with the reason (fail closed); outside a
# sandbox too.
test_hook_deny_bash() {
	printf 'tool deny Bash rm -rf *\n' >"$T_TMP/p.profile"
	hook_input deny.json PreToolUse Bash command 'rm -rf /tmp/victim' toolu_deny
	hook_input allow.json PreToolUse Bash command 'ls -la' toolu_allow
	wsh '/.warden/warden hook <deny.json; echo "rc=$?"
	     /.warden/warden hook <allow.json; echo "rc=$?"
	     /.warden/warden hook --socket /.warden/nothing.sock <deny.json 2>&1; echo "rc=$?"' \
		--profile "$T_TMP/p.profile"
	assert_rc 0 'the session'
	local first=${OUT%%rc=*}
	[[ $first == *'"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"warden: denied by the policy (tool deny Bash rm -rf * ('* ]] ||
		fail "the denied call's answer is not Claude Code's deny: $(excerpt "$OUT")"
	assert_out_match '^rc=0$' 'the denied call: exit 0 with the JSON answer'
	[[ $OUT == *$'rc=0\nrc=0\n'* ]] || fail "the allowed call printed something or failed: $(excerpt "$OUT")"
	assert_out_match "cannot be reached.*the tool call is refused" 'no hook socket: refused'
	assert_out_match '^rc=2$' 'no hook socket: exit 2'
	log_events tool
	grep -q '"id":"t1","phase":"pre","client":"claude","tool":"Bash","what":"rm -rf /tmp/victim","decision":"deny","rule":"tool deny Bash rm -rf \* ([^"]*p.profile:1)"' <<<"$OUT" ||
		fail "no tool event for the denied call: $(excerpt "$OUT")"
	grep -q '"what":"ls -la","decision":"allow","rule":null,"reported":true,"pid":[0-9]*,"session_id":"sess-1","tool_use_id":"toolu_allow"' <<<"$OUT" ||
		fail "no tool event for the allowed call: $(excerpt "$OUT")"
	# outside a sandbox there is no hook socket: the call is refused
	local rc=0
	"$WARDEN" hook <deny.json >"$T_TMP/outside.out" 2>&1 || rc=$?
	[[ $rc == 2 ]] || fail "warden hook outside a sandbox: exit $rc, not 2: $(excerpt "$(<"$T_TMP/outside.out")")"
}

# The refusals said at the end of a session list the tool calls warden
# refused, in the style of the others: the tool and what it would have
# done (cut past 80 bytes), then the reason the agent was given, the rule
# in it; an allowed call is not listed [test_hook_deny_in_summary].
test_hook_deny_in_summary() {
	local long
	long="rm -rf /tmp/$(printf 'x%.0s' {1..100})"
	printf 'tool deny Bash rm -rf *\n' >"$T_TMP/p.profile"
	hook_input deny.json PreToolUse Bash command 'rm -rf /tmp/victim' toolu_deny
	hook_input long.json PreToolUse Bash command "$long" toolu_long
	hook_input allow.json PreToolUse Bash command 'ls -la' toolu_allow
	wsh '/.warden/warden hook <deny.json >/dev/null; /.warden/warden hook <deny.json >/dev/null
	     /.warden/warden hook <long.json >/dev/null; /.warden/warden hook <allow.json; echo done' \
		--profile "$T_TMP/p.profile"
	assert_rc 0 'the session'
	assert_out_line 'done'
	assert_err_match '^warden: refused during this session:$' 'the summary'
	assert_err_match '^  tool Bash rm -rf /tmp/victim \(2 times\): denied by the policy \(tool deny Bash rm -rf \* \([^)]*p\.profile:1\)\)$' \
		'the denied call, once, with its rule'
	assert_err_match "^  tool Bash ${long:0:80}\\.\\.\\.: denied by the policy " 'a long call, cut'
	[[ $ERR != *'ls -la'* ]] || fail "an allowed call is listed: $(excerpt "$ERR")"
	wsh '/.warden/warden hook <deny.json >/dev/null; echo done' --profile "$T_TMP/p.profile" --quiet
	[[ $ERR != *'refused during'* ]] || fail "--quiet still lists the tool call: $(excerpt "$ERR")"
}

# The small hook client warden installs for the clients,
# /.warden/warden-hook (src/hookbin): the same answers as `warden hook`
# (deny JSON, allow silent, no socket: exit 2), the same tool events, run
# as a client runs it (its arguments, no shell); the file is warden's,
# read-only inside, and not warden's whole binary (no `hook` argument
# needed, a fraction of the size).
test_hook_client_binary() {
	printf 'tool deny Bash rm -rf *\n' >"$T_TMP/p.profile"
	hook_input deny.json PreToolUse Bash command 'rm -rf /tmp/victim' toolu_deny
	hook_input allow.json PreToolUse Bash command 'ls -la' toolu_allow
	wsh '/.warden/warden-hook --client claude <deny.json; echo "rc=$?"
	     /.warden/warden-hook --client claude <allow.json; echo "rc=$?"
	     /.warden/warden-hook --socket /.warden/nothing.sock <deny.json 2>&1; echo "rc=$?"
	     echo x >/.warden/warden-hook 2>/dev/null && echo "hook client written"
	     cp allow.json /.warden/warden-hook 2>/dev/null && echo "hook client replaced"
	     echo "sizes $(wc -c </.warden/warden-hook) $(wc -c </.warden/warden)"' \
		--profile "$T_TMP/p.profile"
	assert_rc 0 'the session'
	[[ ${OUT%%rc=*} == *'"permissionDecision":"deny","permissionDecisionReason":"warden: denied by the policy (tool deny Bash rm -rf * ('* ]] ||
		fail "the hook client's answer to a denied call is not Claude Code's deny: $(excerpt "$OUT")"
	[[ $OUT == *$'rc=0\nrc=0\n'* ]] || fail "the allowed call printed something or failed: $(excerpt "$OUT")"
	assert_out_match "cannot be reached.*the tool call is refused" 'no hook socket: refused'
	assert_out_match '^rc=2$' 'no hook socket: exit 2'
	assert_out_lacks 'hook client written' 'the hook client is read-only'
	assert_out_lacks 'hook client replaced' 'the hook client cannot be replaced'
	local hsize wsize
	read -r _ hsize wsize < <(grep '^sizes ' <<<"$OUT")
	((hsize > 10000 && hsize * 4 < wsize)) || fail "the hook client is not a small binary of its own: $hsize bytes against warden's $wsize"
	log_events tool
	grep -q '"what":"rm -rf /tmp/victim","decision":"deny"' <<<"$OUT" ||
		fail "no tool event for the call the hook client reported: $(excerpt "$OUT")"
	grep -q '"what":"ls -la","decision":"allow"' <<<"$OUT" ||
		fail "no tool event for the allowed call: $(excerpt "$OUT")"
}

# `tool ask WebFetch`: the hook waits while a human is asked; the test, a
# second process outside, answers with `warden approve ID allow` and the
# call goes through (no deny printed, exit 0), then a second call answered
# deny is denied with the answer as the reason. The tool events name the
# question; the approval events say it was a tool call, reported.
test_hook_ask_approve() {
	printf 'tool ask WebFetch\n' >"$T_TMP/p.profile"
	hook_input ask1.json PreToolUse WebFetch url 'https://example.com/one' toolu_a1
	hook_input ask2.json PreToolUse WebFetch url 'https://example.com/two' toolu_a2
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=60
	warden_bg "$T_TMP/ask.out" --profile "$T_TMP/p.profile" -- sh -c \
		'/.warden/warden hook <ask1.json >one.out 2>one.err; echo "rc=$?" >>one.out
		 /.warden/warden hook <ask2.json >two.out 2>two.err; echo "rc=$?" >>two.out'
	approve_wait 'example.com/one' 20 || fatal "no question for the first call: $(excerpt "$(cat "$T_TMP/ask.out.err")")"
	sleep 1
	[[ ! -s $WS/one.out ]] || fail "the hook did not wait for the answer: $(excerpt "$(<"$WS/one.out")")"
	grep -q "waits for a human: warden approve $QID" "$WS/one.err" 2>/dev/null ||
		fail "the hook did not say what it waits for: $(excerpt "$(cat "$WS/one.err" 2>/dev/null)")"
	wardenc approve "$QID" allow
	assert_rc 0 "warden approve $QID allow"
	approve_wait 'example.com/two' 20 || fatal "no question for the second call"
	wardenc approve "$QID" deny --reason 'not today'
	assert_rc 0 "warden approve $QID deny"
	wait "$TPID"
	assert_host_file "$WS/one.out" 'rc=0' 'the approved call: nothing printed, exit 0'
	grep -q '"permissionDecision":"deny","permissionDecisionReason":"warden: denied by approve: not today"' "$WS/two.out" ||
		fail "the call answered deny is not denied: $(excerpt "$(cat "$WS/two.out")")"
	log_events tool
	grep -q '"tool":"WebFetch","what":"https://example.com/one","decision":"allow","rule":"tool ask WebFetch ([^"]*)","question":"[^"]*"' <<<"$OUT" ||
		fail "no tool event for the approved call: $(excerpt "$OUT")"
	grep -q '"what":"https://example.com/two","decision":"deny",.*"question":"' <<<"$OUT" ||
		fail "no tool event for the denied call: $(excerpt "$OUT")"
	log_events approval
	grep -q '"kind":"tool","phase":"asked","subject":"WebFetch: https://example.com/one".*"reported":true' <<<"$OUT" ||
		fail "no approval event for the tool call: $(excerpt "$OUT")"
}

# The agent trying to answer its own question through the hook socket: a
# raw line like `warden approve`'s answer ({"op":"answer","id":QID,...}) and
# a report carrying a decision are refused (an error back, the connection
# closed, an alert hook.refused, reported); the question stays open until
# the test answers it, and the hook then gets that answer.
test_hook_refuses_answers() {
	have python3 || skip "python3 not installed (the raw client needs it)"
	printf 'tool ask WebFetch\n' >"$T_TMP/p.profile"
	hook_input ask.json PreToolUse WebFetch url 'https://example.com/self' toolu_self
	cat >raw.py <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/.warden/hook.sock")
s.sendall(sys.argv[1].encode() + b"\n")
print(s.makefile().readline().strip())
EOF
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=60
	warden_bg "$T_TMP/self.out" --profile "$T_TMP/p.profile" -- sh -c \
		'/.warden/warden hook <ask.json >hook.out 2>hook.err & hook=$!
		 while ! grep -q "warden approve" hook.err 2>/dev/null; do sleep 0.1; done
		 qid=$(sed -n "s/.*warden approve \([^ ]*\) .*/\1/p" hook.err)
		 python3 raw.py "{\"op\":\"answer\",\"id\":\"$qid\",\"decision\":\"allow\"}" >raw.out
		 python3 raw.py "{\"op\":\"pre\",\"tool_name\":\"WebFetch\",\"tool_input\":{},\"id\":\"$qid\",\"decision\":\"allow\"}" >>raw.out
		 touch raw.done
		 wait $hook; echo "rc=$?" >>hook.out'
	approve_wait 'example.com/self' 20 || fatal "no question: $(excerpt "$(cat "$T_TMP/self.out.err")")"
	wait_for "$WS/raw.out" 'error' 20 || fail "the raw client got no answer"
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -e $WS/raw.done ]] && break
		sleep 0.1
	done
	[[ $(grep -c '"error"' "$WS/raw.out") == 2 ]] || fail "the raw answers were not refused: $(excerpt "$(cat "$WS/raw.out")")"
	# still open: the sandbox's answer changed nothing
	local open=$QID
	approve_wait 'example.com/self' 2 && [[ $QID == "$open" ]] ||
		fail "the question is no longer open after the sandbox's answer"
	[[ ! -s $WS/hook.out ]] || fail "the hook was answered by the sandbox: $(excerpt "$(<"$WS/hook.out")")"
	wardenc approve "$open" deny
	wait "$TPID"
	grep -q '"permissionDecision":"deny"' "$WS/hook.out" || fail "the hook did not get the test's answer: $(excerpt "$(cat "$WS/hook.out")")"
	log_events alert
	[[ $(grep -c '"rule":"hook.refused"' <<<"$OUT") == 2 ]] || fail "not two hook.refused alerts: $(excerpt "$OUT")"
	grep -q '"rule":"hook.refused","path":"/.warden/hook.sock","action":"op \\"answer\\": the hook socket takes reports of tool calls only.*"reported":true' <<<"$OUT" ||
		fail "the alert does not say why: $(excerpt "$OUT")"
	log_events approval
	grep -q '"phase":"answered","subject":"WebFetch: https://example.com/self".*"by":"approve"' <<<"$OUT" ||
		fail "the question was not answered by warden approve: $(excerpt "$OUT")"
}

# Bad input on the hook socket never hangs nor crashes the supervisor: a
# line past 512 KiB, junk, more than 64 clients at once, and a client that
# sends 2,000 reports and never reads its answers; each refused client gets
# an error and the door, and afterwards `warden hook` is answered as
# before and the session ends normally.
test_hook_bad_input() {
	have python3 || skip "python3 not installed (the raw client needs it)"
	printf 'tool allow *\n' >"$T_TMP/p.profile"
	hook_input ok.json PreToolUse Bash command 'ls' toolu_ok
	cat >bad.py <<'PY'
import socket, time
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.connect("/.warden/hook.sock")
    return s
def answer(s):
    s.settimeout(10)
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode()
s = conn()
try:
    s.sendall(b"x" * (600 * 1024))
except OSError:
    pass
print("huge:", answer(s).strip()[:60])
s = conn()
s.sendall(b"{not json\n")
print("junk:", answer(s).strip()[:60])
many = [conn() for _ in range(70)]
time.sleep(0.5)
refused = 0
for c in many:
    c.setblocking(False)
    try:
        if b"too many" in c.recv(1000):
            refused += 1
    except BlockingIOError:
        pass
print("refused of 70:", refused)
for c in many:
    c.close()
s = conn()
line = b'{"op":"post","tool_name":"Bash","tool_input":{"command":"ls"}}\n'
s.setblocking(False)
sent = 0
for _ in range(2000):
    try:
        s.send(line)
        sent += 1
    except BlockingIOError:
        time.sleep(0.01)
print("sent unread:", sent)
s.close()
PY
	wsh 'python3 bad.py; /.warden/warden hook <ok.json; echo "hook rc=$?"' --profile "$T_TMP/p.profile"
	assert_rc 0 'the session'
	assert_out_match '^huge: \{"error":"a line longer than the hook socket takes"\}' 'a line past 512 KiB'
	assert_out_match '^junk: \{"error":"not a JSON object' 'junk'
	assert_out_match '^refused of 70: [1-9]' 'more than 64 clients'
	assert_out_match '^sent unread: [0-9]' 'a client that never reads'
	assert_out_line 'hook rc=0' 'warden hook afterwards'
	log_events alert
	grep -q '"rule":"hook.refused".*more than 64 hook clients' <<<"$OUT" || fail "no alert for the clients past 64: $(excerpt "$OUT")"
	wardenc log show --event session.end --json
	assert_out_match '"exit":0' 'session.end'
}

# Linking: an agent (a script) reports a Bash call before it runs the
# command and after: the execs in between that descend from the agent carry
# the call's id, and so does the connection its program opens through the
# proxy (curl, which waits for the proxy's answer: a client gone before the
# proxy accepts cannot be found); the execs before and after, and the
# hook's own, carry none. The command says `ls`, yet curl runs and
# connects: tool.intent-mismatch; a second call whose command names curl
# raises none. A program refused by an exec rule under a call that does not
# name it: the alert too.
test_hook_links_execs() {
	have curl || skip "curl not installed"
	cp /usr/bin/tac "$T_TMP/tac-denied" 2>/dev/null || skip "no /usr/bin/tac"
	printf 'tool allow *\nexec deny %s\n' "$T_TMP/tac-denied" >"$T_TMP/p.profile"
	hook_input pre1.json PreToolUse Bash command 'ls' toolu_one
	hook_input post1.json PostToolUse Bash command 'ls' toolu_one
	hook_input pre2.json PreToolUse Bash command 'curl -s http://example.com/' toolu_two
	hook_input post2.json PostToolUse Bash command 'curl -s http://example.com/' toolu_two
	cat >agent.sh <<'EOF'
# a stand-in for the agent: report, run the call's command, report
true before
/.warden/warden hook <pre1.json
sh -c 'ls >/dev/null; curl -s -o /dev/null http://example.com/; tac /dev/null'
/.warden/warden hook <post1.json
/.warden/warden hook <pre2.json
sh -c 'curl -s -o /dev/null http://example.com/'
/.warden/warden hook <post2.json
true after
EOF
	wrun --profile "$T_TMP/p.profile" -- sh agent.sh
	assert_rc 0 'the agent'
	local f t1 t2
	f=$(latest_log)
	t1=$(grep '"event":"tool".*"phase":"pre".*"tool_use_id":"toolu_one"' "$f" | grep -o '"id":"t[0-9]*"' | cut -d'"' -f4)
	t2=$(grep '"event":"tool".*"phase":"pre".*"tool_use_id":"toolu_two"' "$f" | grep -o '"id":"t[0-9]*"' | cut -d'"' -f4)
	[[ -n $t1 && -n $t2 && $t1 != "$t2" ]] || fatal "no tool events for the two calls: $(excerpt "$(grep '"event":"tool"' "$f")")"
	grep -q "\"event\":\"tool\",\"id\":\"$t1\",\"phase\":\"post\"" "$f" || fail "the post report does not close $t1"
	grep -q '"event":"exec".*"argv":\["ls"\].*"tool":"'"$t1"'"' "$f" || fail "the exec of ls does not carry $t1"
	grep -q '"event":"exec".*"argv":\["curl","-s","-o","/dev/null","http://example.com/"\].*"tool":"'"$t1"'"' "$f" ||
		fail "the exec of curl under the first call does not carry $t1"
	grep -q '"event":"exec".*"argv":\["tac","/dev/null"\].*"decision":"deny".*"tool":"'"$t1"'"' "$f" ||
		fail "the refused exec of tac does not carry $t1: $(excerpt "$(grep '"argv":\["tac"' "$f")")"
	grep -q '"event":"net".*"tool":"'"$t1"'"' "$f" || fail "no net event carries $t1: $(excerpt "$(grep '"event":"net"' "$f")")"
	grep -q '"event":"net".*"tool":"'"$t2"'"' "$f" || fail "no net event carries $t2"
	grep '"event":"exec"' "$f" | grep -E '"argv":\["true","(before|after)"\]' | grep '"tool"' >/dev/null &&
		fail "an exec outside the calls carries a tool id"
	grep '"event":"exec"' "$f" | grep -F '"argv":["/.warden/warden","hook"]' | grep '"tool"' >/dev/null &&
		fail "the hook's own exec carries a tool id"
	grep -q '"event":"alert","rule":"tool.intent-mismatch",.*"action":"curl ran under tool call '"$t1"' (Bash: ls), whose command does not name it, and connected through warden.s proxy","tool":"'"$t1"'","reported":true' "$f" ||
		fail "no intent-mismatch alert for curl under $t1: $(excerpt "$(grep '"event":"alert"' "$f")")"
	grep -q '"event":"alert","rule":"tool.intent-mismatch",.*"action":"tac ran under tool call '"$t1"' (Bash: ls), whose command does not name it, and its exec was refused' "$f" ||
		fail "no intent-mismatch alert for the refused tac under $t1"
	grep -q '"rule":"tool.intent-mismatch".*"tool":"'"$t2"'"' "$f" && fail "an intent-mismatch alert under $t2, whose command names curl"
	[[ $(grep -c '"event":"alert","rule":"tool.intent-mismatch"' "$f") == 2 ]] || fail "not one alert per program: $(excerpt "$(grep '"rule":"tool.intent-mismatch"' "$f")")"
	# `warden log show --tool ID`: the call, then what it ran
	wardenc log show --tool "$t1"
	assert_rc 0 "log show --tool $t1"
	assert_out_match "tool +phase=pre id=$t1 " "log show --tool: the call"
	assert_out_match "exec +decision=allow .*argv=\[ls\]" "log show --tool: its execs"
	assert_out_match " net +decision=deny " "log show --tool: its connection"
	[[ $OUT != *"toolu_two"* ]] || fail "log show --tool $t1 shows the other call: $(excerpt "$OUT")"
}

# The real Claude Code against the mock (tests/agents/mock_anthropic.py),
# with two Bash tool calls one after the other: the first a `tool deny`
# rule matches (it does not run: its marker is never made, the model gets
# warden's reason), the second a `tool ask` rule matches: it waits until
# the test answers `warden approve ID allow`, then runs, its execs carrying
# its id. warden installed the hook in the client's settings itself.
test_hook_claude_code() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	mock_start "echo denied > marker-deny.txt" --command "echo asked > marker-ask.txt"
	printf 'tool deny Bash echo denied*\ntool ask Bash echo asked*\n' >"$T_TMP/p.profile"
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=120
	PATH=$CLAUDE_BIN:$PATH ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT ANTHROPIC_API_KEY=$CLAUDE_KEY \
		warden_bg "$T_TMP/claude.out" --profile "$T_TMP/p.profile" -- \
		claude -p "do the task" --dangerously-skip-permissions
	approve_wait 'echo asked' 90 || fatal "no question for the asked call: $(excerpt "$(cat "$T_TMP/claude.out.err")")"
	[[ ! -e $WS/marker-ask.txt ]] || fail "the asked call ran before the answer"
	wardenc approve "$QID" allow
	assert_rc 0 "warden approve $QID allow"
	wait "$TPID"
	local rc=$?
	note "claude: rc=$rc $(excerpt "$(cat "$T_TMP/claude.out")"); stderr: $(excerpt "$(cat "$T_TMP/claude.out.err")")"
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"
	[[ $rc == 0 ]] || fail "claude -p exited $rc"
	assert_host_absent "$WS/marker-deny.txt" "the call the policy denies"
	assert_host_file "$WS/marker-ask.txt" asked "the call a human allowed"
	grep -q 'warden: denied by the policy (tool deny Bash echo denied\*' "$MOCK_RESULTS" ||
		fail "the model did not get warden's reason: $(excerpt "$(cat "$MOCK_RESULTS" 2>/dev/null)")"
	local f t
	f=$(latest_log)
	grep -q '"event":"tool","id":"t[0-9]*","phase":"pre","client":"claude","tool":"Bash","what":"echo denied > marker-deny.txt","decision":"deny"' "$f" ||
		fail "no tool event for the denied call: $(excerpt "$(grep '"event":"tool"' "$f")")"
	t=$(grep '"event":"tool".*"phase":"pre".*"what":"echo asked > marker-ask.txt","decision":"allow"' "$f" | grep -o '"id":"t[0-9]*"' | cut -d'"' -f4)
	[[ -n $t ]] || fail "no tool event for the asked call: $(excerpt "$(grep '"event":"tool"' "$f")")"
	grep -q '"event":"exec".*echo asked > marker-ask.txt.*"tool":"'"$t"'"' "$f" ||
		fail "the asked call's shell does not carry $t"
	grep -q "\"event\":\"tool\",\"id\":\"$t\",\"phase\":\"post\"" "$f" || fail "no post report of $t"
}

# The real Codex against its mock: warden's hook is a system-wide (managed)
# setting in the sandbox's /etc, which Codex runs without a review; the
# call a `tool deny` rule matches does not run.
test_hook_codex_deny() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	codex_install
	openai_mock_start "echo denied > marker-deny.txt"
	mkdir -p "$HOME/.codex"
	printf 'openai_base_url = "http://127.0.0.1:%s/v1"\n' "$MOCK_PORT" >"$HOME/.codex/config.toml"
	printf 'tool deny Bash echo denied*\n' >"$T_TMP/p.profile"
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	PATH=$CODEX_BIN:$PATH CODEX_API_KEY=$CODEX_KEY \
		wrun --profile "$T_TMP/p.profile" -- codex exec --skip-git-repo-check "do the task"
	assert_rc 0 "codex exec"
	assert_host_absent "$WS/marker-deny.txt" "the call the policy denies"
	log_events tool
	grep -q '"phase":"pre","client":"codex","tool":"Bash","what":"echo denied > marker-deny.txt","decision":"deny"' <<<"$OUT" ||
		fail "no tool event for codex's denied call: $(excerpt "$OUT")"
}

# The real Claude Code, whose tool calls turn warden's gate off in its own
# settings (~/.claude/settings.json, in warden's state for claude, writable
# inside): the first writes "disableAllHooks": true, the third takes the
# hook entries out. The call after each still reaches the gate, which
# denies it (`tool deny`), since warden's hooks are managed settings in the
# sandbox's read-only /etc (/etc/claude-code/managed-settings.json), which
# the user's settings cannot turn off; each call is reported once. At the
# end the change is an alert (agent.settings-changed, restored), and the
# settings are warden's again: the hooks back, disableAllHooks out, the
# agent's other key kept.
test_hook_claude_code_gate_kept() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	cat >off.py <<'PY'
import json, os, time
p = os.path.expanduser("~/.claude/settings.json")
j = json.load(open(p))
j["disableAllHooks"] = True
j["theme"] = "dark"
json.dump(j, open(p, "w"))
time.sleep(3)
PY
	cat >strip.py <<'PY'
import json, os, time
p = os.path.expanduser("~/.claude/settings.json")
j = json.load(open(p))
j.pop("hooks", None)
json.dump(j, open(p, "w"))
time.sleep(3)
PY
	mock_start "python3 off.py" --command "echo gate-one > gate-one.txt" \
		--command "python3 strip.py" --command "echo gate-two > gate-two.txt"
	printf 'tool deny Bash echo gate-*\n' >"$T_TMP/p.profile"
	no_detect_actions "$T_TMP/p.profile" >/dev/null # the gate is under test, not the detector
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	PATH=$CLAUDE_BIN:$PATH ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT ANTHROPIC_API_KEY=$CLAUDE_KEY \
		wrun --profile "$T_TMP/p.profile" -- claude -p "do the task" --dangerously-skip-permissions
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"
	assert_rc 0 "claude -p"
	local settings=$HOME/.local/share/warden/agents/claude/.claude/settings.json f
	[[ $(grep -c '"tool_use_id"' "$MOCK_RESULTS" 2>/dev/null) == 4 ]] ||
		fail "the mock did not get the results of all four calls: $(excerpt "$(cat "$MOCK_RESULTS" 2>/dev/null)")"
	assert_host_absent "$WS/gate-one.txt" "the call after disableAllHooks (the gate denies it)"
	assert_host_absent "$WS/gate-two.txt" "the call after the hook entries went (the gate denies it)"
	grep -q 'warden: denied by the policy (tool deny Bash echo gate-\*' "$MOCK_RESULTS" ||
		fail "the model did not get warden's reason: $(excerpt "$(cat "$MOCK_RESULTS" 2>/dev/null)")"
	f=$(latest_log)
	local what
	for what in 'python3 off.py' 'echo gate-one > gate-one.txt' 'python3 strip.py' 'echo gate-two > gate-two.txt'; do
		[[ $(grep -c "\"event\":\"tool\",\"id\":\"t[0-9]*\",\"phase\":\"pre\",\"client\":\"claude\",\"tool\":\"Bash\",\"what\":\"$what\"" "$f") == 1 ]] ||
			fail "the call \"$what\" is not reported to the gate once: $(excerpt "$(grep '"event":"tool"' "$f")")"
	done
	grep -q '"event":"tool",.*"what":"echo gate-two > gate-two.txt","decision":"deny"' "$f" ||
		fail "no deny for the call after the hooks went: $(excerpt "$(grep '"event":"tool"' "$f")")"
	# the change is an alert, and the settings are restored
	grep -q '"event":"alert",.*"rule":"agent.settings-changed",.*"action":"restored"' "$f" ||
		fail "no alert for the changed settings: $(excerpt "$(grep '"event":"alert"' "$f")")"
	grep -q '"rule":"agent.settings-changed",.*"detail":"[^"]*hooks[^"]*disableAllHooks' "$f" ||
		fail "the alert does not name hooks and disableAllHooks: $(excerpt "$(grep '"event":"alert"' "$f")")"
	python3 - "$settings" <<'PY' || fail "the state's settings are not restored: $(excerpt "$(cat "$settings")")"
import json, sys
j = json.load(open(sys.argv[1]))
assert "disableAllHooks" not in j, "disableAllHooks"
assert j.get("theme") == "dark", "the agent's other key"
assert j["sandbox"]["enabled"] is False, "the seed"
for ev in ("PreToolUse", "PostToolUse"):
    assert any(h.get("command") == "/.warden/warden-hook" for g in j["hooks"][ev] for h in g["hooks"]), ev
PY
	assert_err_match "settings.json.*restored" "the user is told"
}
