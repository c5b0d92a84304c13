# t_agent_codex.sh - the real Codex CLI (npm @openai/codex), installed under
# the fake HOME as `npm install -g --prefix ~/.npm-global` leaves it, run by
# name under warden as `codex exec` against the mock of the OpenAI Responses
# API (tests/agents/mock_openai.py) on the host's loopback. The mock's script
# makes the agent run its shell tool: it writes a marker in the workspace and
# tries to read files outside it. Skipped when the client cannot be installed
# (tests/agents/install.sh --package codex) or python3 is missing. No warden
# flags: the API's URL is in the user's own ~/.codex/config.toml, as Codex
# reads it, and the built-in profile for codex does the rest; a second
# session resumes the first.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# codex_install: the real client under ~/.npm-global (agent_install, lib.sh).
# Sets CODEX_BIN, or skips.
codex_install() {
	agent_install codex codex "Codex"
	CODEX_BIN=$AGENT_BIN
}

# openai_mock_start COMMAND: the mock on a port the OS picks, its tool call
# running COMMAND. Sets MOCK_PORT, MOCK_LOG, MOCK_RESULTS.
openai_mock_start() {
	MOCK_LOG=$T_TMP/mock.log MOCK_RESULTS=$T_TMP/mock.results
	python3 "$AGENTS_DIR/mock_openai.py" --port-file "$T_TMP/mock.port" \
		--log "$MOCK_LOG" --results "$MOCK_RESULTS" --command "$1" --keys "$T_TMP/mock.keys" \
		>"$T_TMP/mock.out" 2>&1 &
	bg_track $!
	wait_for "$T_TMP/mock.port" '^[0-9]+$' 10 || fatal "the mock did not start: $(excerpt "$(cat "$T_TMP/mock.out")")"
	MOCK_PORT=$(<"$T_TMP/mock.port")
}

# A key shaped like OpenAI's.
CODEX_KEY=sk-proj-e2eTESTkey0123456789abcdefghijklmnopqrstuvwxyzABCDEF

test_codex_exec() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	codex_install
	local outside=$T_TMP/outside-secret.txt
	echo "OUTSIDE-SECRET-$$" >"$outside"
	chmod 0644 "$outside"
	# The tool also prints every environment it can read: the key must be
	# in none of them.
	openai_mock_start "echo e2e-marker > marker.txt; cat $outside $HOME/.ssh/id_rsa; env; cat /proc/[0-9]*/environ | tr '\\0' '\\n'"

	# The user's own Codex configuration: the API at the mock (Codex 0.169
	# ignores OPENAI_BASE_URL; openai_base_url keeps the built-in provider and
	# its WebSocket transport). warden allows that host:port, imports the key
	# into its state for codex, and switches Codex's own sandbox, plugins,
	# analytics and update check off there. The key: codex exec sends
	# CODEX_API_KEY as the bearer token.
	mkdir -p "$HOME/.codex"
	printf 'openai_base_url = "http://127.0.0.1:%s/v1"\n' "$MOCK_PORT" >"$HOME/.codex/config.toml"
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	PATH=$CODEX_BIN:$PATH CODEX_API_KEY=$CODEX_KEY \
		wrun -- codex exec --skip-git-repo-check "do the task"
	local err=$ERR
	note "mock log: $(cut -c1-300 "$MOCK_LOG" 2>/dev/null)"
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"

	assert_rc 0 "codex exec"
	assert_out_has "done" "codex exec"
	# The mock saw the conversation (a turn is a POST or a WebSocket message
	# on /v1/responses): the first offered the shell tool, a later one carried
	# its output. The key went along.
	[[ $(grep -cE '"method": "(POST|WS)", "path": "/v1/responses"' "$MOCK_LOG" 2>/dev/null) -ge 2 ]] ||
		fail "the mock saw fewer than two /v1/responses turns: $(excerpt "$(cut -c1-200 "$MOCK_LOG" 2>/dev/null)")"
	grep -q '"authorization": "Bearer <redacted>"' "$MOCK_LOG" 2>/dev/null ||
		fail "no request to the mock carried the API key (CODEX_API_KEY)"
	# The key: outside the sandbox, put in by the proxy. The mock received
	# the real one, only; the tool's environment holds the phantom.
	grep -q "^authorization: Bearer $CODEX_KEY\$" "$T_TMP/mock.keys" 2>/dev/null ||
		fail "the mock did not receive the real key: $(excerpt "$(sort -u "$T_TMP/mock.keys" 2>/dev/null)")"
	grep -v "^authorization: Bearer $CODEX_KEY\$" "$T_TMP/mock.keys" 2>/dev/null | grep . >/dev/null &&
		fail "the mock received another key too: $(excerpt "$(sort -u "$T_TMP/mock.keys")")"
	grep -qF "$CODEX_KEY" "$MOCK_RESULTS" && fail "the real key is in a tool output"
	grep -q 'CODEX_API_KEY=sk-proj-' "$MOCK_RESULTS" ||
		note "the tool output lacks the phantom CODEX_API_KEY (Codex keeps key-named variables from its commands)"
	# The tool ran, in the workspace.
	assert_host_file "$WS/marker.txt" e2e-marker "the shell tool's marker"
	# ... inside the sandbox: files outside the workspace stayed out of reach,
	# and the tool output the model got says so.
	if [[ ! -s $MOCK_RESULTS ]]; then
		fail "no tool output reached the mock"
	else
		grep -q "OUTSIDE-SECRET" "$MOCK_RESULTS" && fail "the tool read $outside: $(excerpt "$(<"$MOCK_RESULTS")")"
		grep -q "$BAIT" "$MOCK_RESULTS" && fail "the tool read ~/.ssh/id_rsa: $(excerpt "$(<"$MOCK_RESULTS")")"
		grep -q "outside-secret.txt: No such file or directory" "$MOCK_RESULTS" ||
			fail "the tool output lacks the refused read of $outside: $(excerpt "$(<"$MOCK_RESULTS")")"
	fi
	# With its own sandbox off, codex made no namespace of its own, and with
	# the switches above it contacted nothing but the mock.
	[[ $err != *"refused during this session"* ]] ||
		fail "refused (a host codex contacts, or its own sandbox): $(excerpt "${err#*refused during this session}")"
	[[ $err == *"Codex's own sandbox is off"* ]] || fail "the inner sandbox note was not said: $(excerpt "$err")"
	# The audit log has the shell command's execs.
	wardenc log show --event exec --json
	grep -qF 'echo e2e-marker > marker.txt' <<<"$OUT" ||
		fail "the audit log has no exec of the shell running the tool's command: $(excerpt "$OUT")"
	grep -qF "\"argv\":[\"cat\",\"$outside\"" <<<"$OUT" ||
		fail "the audit log has no exec of the tool's cat $outside: $(excerpt "$OUT")"

	# A second session resumes the first: Codex's sessions persist in
	# warden's state for codex, and the resumed turn carries the first
	# prompt.
	local sessions
	sessions=$(find "$HOME/.local/share/warden/agents/codex/.codex/sessions" -name 'rollout-*.jsonl' 2>/dev/null | wc -l)
	((sessions >= 1)) || fail "no Codex session file in warden's state for codex"
	PATH=$CODEX_BIN:$PATH CODEX_API_KEY=$CODEX_KEY \
		wrun -- codex exec --skip-git-repo-check resume --last "the second task"
	assert_rc 0 "codex exec resume --last"
	[[ $ERR != *"own sandbox is off"* ]] || fail "the inner sandbox note said twice: $(excerpt "$ERR")"
	grep -F 'the second task' "$MOCK_LOG" | grep -F 'do the task' >/dev/null ||
		fail "resume: no request carried both the first and the second prompt: $(excerpt "$(grep -F 'the second task' "$MOCK_LOG" | cut -c1-300)")"
	return 0
}

# The key the profile binds serves the model API only: with CODEX_API_KEY
# set, the base URL's host is narrowed to the paths Codex calls under the
# base URL's path (/v1 here). A request with the phantom key to the Files or
# Batches API gets warden's 403 and a `net` event with decision deny, and
# never reaches the server; the model list goes. No client needed: the
# profile is picked with --agent codex.
test_codex_key_narrowed() {
	have curl || skip "curl not installed"
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	openai_mock_start true
	local u=http://127.0.0.1:$MOCK_PORT/v1 hp=127.0.0.1:$MOCK_PORT
	mkdir -p "$HOME/.codex"
	printf 'openai_base_url = "%s"\n' "$u" >"$HOME/.codex/config.toml"
	CODEX_API_KEY=$CODEX_KEY wrun --agent codex -- sh -c "$AGENT_PROBE" sh "Authorization: Bearer " CODEX_API_KEY \
		"models=GET:$u/models" "files=GET:$u/files" "batches=POST:$u/batches"
	assert_rc 0 "the session"
	assert_out_line 'models=200' 'GET /v1/models, the client own, allowed'
	assert_out_line 'files=403' 'GET /v1/files with the key refused'
	assert_out_match "^files-reason=X-Warden-Reason: no rule allows GET /v1/files on $hp; its rules allow " \
		'the refusal says why, and what the host is narrowed to'
	assert_out_line 'batches=403' 'POST /v1/batches with the key refused'
	grep -q '"path": "/v1/models"' "$MOCK_LOG" || fail "the allowed request did not reach the mock"
	grep -Eq '/v1/files|/v1/batches' "$MOCK_LOG" && fail "a refused request reached the mock: $(excerpt "$(cut -c1-300 "$MOCK_LOG")")"
	grep -qx "authorization: Bearer $CODEX_KEY" "$T_TMP/mock.keys" || fail "the mock did not get the real key"
	net_expect 'GET /v1/files refused' method=GET path=/v1/files decision=deny status=403 "reason~^no rule allows GET /v1/files on $hp"
	net_expect 'the batch refused' method=POST path=/v1/batches decision=deny status=403
	return 0
}
