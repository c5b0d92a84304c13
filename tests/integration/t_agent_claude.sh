# t_agent_claude.sh - the real Claude Code CLI (npm @anthropic-ai/claude-code),
# installed under the fake HOME as `npm install -g --prefix ~/.npm-global`
# leaves it, run by name under warden against the mock of the Anthropic
# Messages API (tests/agents/mock_anthropic.py) on the host's loopback. The
# mock's script makes the agent run its shell tool (Bash): it writes a marker
# in the workspace and tries to read files outside it. Skipped when the
# client cannot be installed (tests/agents/install.sh). No warden flags: the
# built-in profile for claude does what they did.
# shellcheck shell=bash

# tests/agents, beside this directory (scripts/test copies both for the
# unprivileged run).
AGENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" 2>/dev/null && pwd)

# claude_install: the installed prefix copied to ~/.npm-global as a user has
# it (hard links when the cache allows them). Sets CLAUDE_BIN, or skips.
claude_install() {
	local prefix rc
	[[ -n $AGENTS_DIR && -x $AGENTS_DIR/install.sh ]] || skip "tests/agents/install.sh not found beside tests/integration"
	prefix=$("$AGENTS_DIR/install.sh" 2>"$T_TMP/install.err")
	rc=$?
	if ((rc == 3)); then
		skip "Claude Code could not be installed: $(excerpt "$(tail -n 3 "$T_TMP/install.err")")"
	fi
	((rc == 0)) || fatal "install.sh failed (exit $rc): $(excerpt "$(<"$T_TMP/install.err")")"
	mkdir -p "$HOME/.npm-global"
	cp -al "$prefix/." "$HOME/.npm-global/" 2>/dev/null ||
		{ rm -rf "$HOME/.npm-global" && cp -a "$prefix/." "$HOME/.npm-global/"; } ||
		fatal "could not copy $prefix to $HOME/.npm-global"
	CLAUDE_BIN=$HOME/.npm-global/bin
	[[ -x $CLAUDE_BIN/claude ]] || fatal "$CLAUDE_BIN/claude missing after the copy"
}

# mock_start COMMAND: the mock on a port the OS picks, its tool_use running
# COMMAND. Sets MOCK_PORT, MOCK_LOG, MOCK_RESULTS.
mock_start() {
	MOCK_LOG=$T_TMP/mock.log MOCK_RESULTS=$T_TMP/mock.results
	python3 "$AGENTS_DIR/mock_anthropic.py" --port-file "$T_TMP/mock.port" \
		--log "$MOCK_LOG" --results "$MOCK_RESULTS" --command "$1" \
		>"$T_TMP/mock.out" 2>&1 &
	bg_track $!
	wait_for "$T_TMP/mock.port" '^[0-9]+$' 10 || fatal "the mock did not start: $(excerpt "$(cat "$T_TMP/mock.out")")"
	MOCK_PORT=$(<"$T_TMP/mock.port")
}

test_claude_code_print() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	local outside=$T_TMP/outside-secret.txt
	echo "OUTSIDE-SECRET-$$" >"$outside"
	chmod 0644 "$outside"
	mock_start "echo e2e-marker > marker.txt; cat $outside $HOME/.ssh/id_rsa"

	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	# As a user types it: the client's own variables, no warden flags (the
	# built-in profile for claude allows the base URL's port on the host's
	# loopback and passes the variables).
	PATH=$CLAUDE_BIN:$PATH \
		ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT ANTHROPIC_API_KEY=sk-ant-test-e2e-0000 \
		wrun -- claude -p "do the task" --dangerously-skip-permissions
	note "mock log: $(cut -c1-300 "$MOCK_LOG" 2>/dev/null)"
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"

	assert_rc 0 "claude -p"
	assert_out_has "done" "claude -p"
	# The mock saw the conversation: the first turn offered the Bash tool, the
	# second carried its result.
	[[ $(grep -c '"path": "/v1/messages' "$MOCK_LOG" 2>/dev/null) -ge 2 ]] ||
		fail "the mock saw fewer than two /v1/messages requests: $(excerpt "$(cut -c1-200 "$MOCK_LOG" 2>/dev/null)")"
	# The tool ran, in the workspace.
	assert_host_file "$WS/marker.txt" e2e-marker "the Bash tool's marker"
	# ... inside the sandbox: files outside the workspace stayed out of reach,
	# and the tool result the model got says so.
	if [[ ! -s $MOCK_RESULTS ]]; then
		fail "no tool_result reached the mock"
	else
		grep -q "OUTSIDE-SECRET" "$MOCK_RESULTS" && fail "the tool read $outside: $(excerpt "$(<"$MOCK_RESULTS")")"
		grep -q "$BAIT" "$MOCK_RESULTS" && fail "the tool read ~/.ssh/id_rsa: $(excerpt "$(<"$MOCK_RESULTS")")"
		grep -q "outside-secret.txt: No such file or directory" "$MOCK_RESULTS" ||
			fail "the tool_result lacks the refused read of $outside: $(excerpt "$(<"$MOCK_RESULTS")")"
	fi
	# The audit log has the shell command's execs.
	wardenc log show --event exec --json
	grep -qF 'echo e2e-marker > marker.txt' <<<"$OUT" ||
		fail "the audit log has no exec of the shell running the tool's command: $(excerpt "$OUT")"
	grep -qF "\"argv\":[\"cat\",\"$outside\"" <<<"$OUT" ||
		fail "the audit log has no exec of the tool's cat $outside: $(excerpt "$OUT")"
	# The profile's quieting switches: the client tried nothing else.
	[[ $ERR != *"refused during this session"* ]] ||
		fail "the client tried destinations the profile refuses: $(excerpt "$ERR")"
	return 0
}
