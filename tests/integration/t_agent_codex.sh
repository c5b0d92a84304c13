# t_agent_codex.sh - the real Codex CLI (npm @openai/codex), installed under
# the fake HOME as `npm install -g --prefix ~/.npm-global` leaves it, run by
# name under warden as `codex exec` against the mock of the OpenAI Responses
# API (tests/agents/mock_openai.py) on the host's loopback. The mock's script
# makes the agent run its shell tool: it writes a marker in the workspace and
# tries to read files outside it. Skipped when the client cannot be installed
# (tests/agents/install.sh --package codex) or python3 is missing. Until a
# built-in codex profile exists, the test passes the flags a user needs today
# (CODEX_TODAY_* below).
# shellcheck shell=bash

# tests/agents, beside this directory (scripts/test copies both for the
# unprivileged run).
AGENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" 2>/dev/null && pwd)

# codex_install: the installed prefix copied to ~/.npm-global as a user has
# it (hard links when the cache allows them). Sets CODEX_BIN, or skips.
codex_install() {
	local prefix rc
	[[ -n $AGENTS_DIR && -x $AGENTS_DIR/install.sh ]] || skip "tests/agents/install.sh not found beside tests/integration"
	prefix=$("$AGENTS_DIR/install.sh" --package codex 2>"$T_TMP/install.err")
	rc=$?
	if ((rc == 3)); then
		skip "Codex could not be installed: $(excerpt "$(tail -n 3 "$T_TMP/install.err")")"
	fi
	((rc == 0)) || fatal "install.sh --package codex failed (exit $rc): $(excerpt "$(<"$T_TMP/install.err")")"
	mkdir -p "$HOME/.npm-global"
	cp -al "$prefix/." "$HOME/.npm-global/" 2>/dev/null ||
		{ rm -rf "$HOME/.npm-global" && cp -a "$prefix/." "$HOME/.npm-global/"; } ||
		fatal "could not copy $prefix to $HOME/.npm-global"
	CODEX_BIN=$HOME/.npm-global/bin
	[[ -x $CODEX_BIN/codex ]] || fatal "$CODEX_BIN/codex missing after the copy"
}

# openai_mock_start COMMAND: the mock on a port the OS picks, its tool call
# running COMMAND. Sets MOCK_PORT, MOCK_LOG, MOCK_RESULTS.
openai_mock_start() {
	MOCK_LOG=$T_TMP/mock.log MOCK_RESULTS=$T_TMP/mock.results
	python3 "$AGENTS_DIR/mock_openai.py" --port-file "$T_TMP/mock.port" \
		--log "$MOCK_LOG" --results "$MOCK_RESULTS" --command "$1" \
		>"$T_TMP/mock.out" 2>&1 &
	bg_track $!
	wait_for "$T_TMP/mock.port" '^[0-9]+$' 10 || fatal "the mock did not start: $(excerpt "$(cat "$T_TMP/mock.out")")"
	MOCK_PORT=$(<"$T_TMP/mock.port")
}

test_codex_exec() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	codex_install
	local outside=$T_TMP/outside-secret.txt
	echo "OUTSIDE-SECRET-$$" >"$outside"
	chmod 0644 "$outside"
	openai_mock_start "echo e2e-marker > marker.txt; cat $outside $HOME/.ssh/id_rsa"

	# ---- what a user passes today; a built-in codex profile makes these go.
	# warden: pass the key (codex exec sends CODEX_API_KEY as the bearer
	# token; it does not read OPENAI_API_KEY).
	local CODEX_TODAY_WARDEN=(--env CODEX_API_KEY)
	# codex (config.toml keys, here as -c): its own sandbox (bwrap) needs user
	# namespaces, which warden refuses, so it runs commands as they are, in
	# warden's sandbox; no approval questions; no OTLP metrics to
	# ab.chatgpt.com; no plugin sync (git ls-remote github.com/openai/plugins,
	# api.github.com/repos/openai/plugins, chatgpt.com/backend-api/plugins);
	# no model catalog from chatgpt.com/backend-api/codex/models with an API
	# key (skipped anyway with a custom openai_base_url); no update check (the
	# TUI's api.github.com/repos/openai/codex/releases/latest).
	local CODEX_TODAY_CODEX=(
		-c 'sandbox_mode="danger-full-access"'
		-c 'approval_policy="never"'
		-c 'analytics.enabled=false'
		-c 'features.plugins=false'
		-c 'features.api_key_model_discovery=false'
		-c 'check_for_update_on_startup=false'
	)
	# ---- the test's own: the mock as the API (codex 0.169 ignores
	# OPENAI_BASE_URL; openai_base_url keeps the built-in provider and its
	# WebSocket transport), and a workspace that is not a git repository.
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	PATH=$CODEX_BIN:$PATH CODEX_API_KEY=sk-test-e2e-0000 \
		wrun --allow-net "127.0.0.1:$MOCK_PORT" "${CODEX_TODAY_WARDEN[@]}" \
		-- codex exec "${CODEX_TODAY_CODEX[@]}" \
		-c "openai_base_url=\"http://127.0.0.1:$MOCK_PORT/v1\"" --skip-git-repo-check \
		"do the task"
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
		fail "no request to the mock carried the API key (--env CODEX_API_KEY)"
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
	[[ $ERR != *"refused during this session"* ]] ||
		fail "refused (a host codex contacts, or its own sandbox): $(excerpt "${ERR#*refused during this session}")"
	# The audit log has the shell command's execs.
	wardenc log show --event exec --json
	grep -qF 'echo e2e-marker > marker.txt' <<<"$OUT" ||
		fail "the audit log has no exec of the shell running the tool's command: $(excerpt "$OUT")"
	grep -qF "\"argv\":[\"cat\",\"$outside\"" <<<"$OUT" ||
		fail "the audit log has no exec of the tool's cat $outside: $(excerpt "$OUT")"
	return 0
}
