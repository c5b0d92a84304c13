# t_agent_state.sh - the built-in agent profiles and the state they keep,
# with fake clients named claude and codex installed under the fake HOME (an
# npm-style prefix): the profile picked by the command's name (and
# --agent), the state that persists across sessions in warden's directory
# while the user's real ~/.claude and ~/.codex stay out of reach, the said-once
# note, `warden state reset`, the API endpoint taken from the client's
# variable or the user's own settings (never from the agent's state), the
# CA file exposed, and the refusals of a state directory warden cannot trust.
# shellcheck shell=bash

STATE_CLAUDE_REL=.local/share/warden/agents/claude

# A fake Claude Code: prints what the profile gave it, counts its sessions
# in its state, rewrites ~/.claude.json, and tries the user's real config.
fake_claude() {
	mkdir -p "$HOME/.npm-global/bin"
	cat >"$HOME/.npm-global/bin/claude" <<-EOS
	#!/bin/sh
	echo "home=\$HOME"
	echo "vars base=\${ANTHROPIC_BASE_URL:-unset} telemetry=\${DISABLE_TELEMETRY:-unset} traffic=\${CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC:-unset} model=\${ANTHROPIC_MODEL:-unset}"
	n=\$(cat "\$HOME/.claude/count" 2>/dev/null || echo 0)
	n=\$((n + 1))
	echo "\$n" >"\$HOME/.claude/count" 2>/dev/null || echo "count not writable"
	echo "count=\$n"
	echo "json=\$(cat "\$HOME/.claude.json" 2>/dev/null | tr -d '\n ')"
	echo "settings=\$(cat "\$HOME/.claude/settings.json" 2>/dev/null | tr -d '\n ')"
	printf '{"session":%s}\n' "\$n" >"\$HOME/.claude.json" || echo "json not writable"
	echo pwned >"$HOME/.claude/settings.json" 2>/dev/null && echo REAL-WRITTEN
	cat "$HOME/.claude/settings.json" 2>/dev/null && echo REAL-READ
	[ -n "\$1" ] && sh -c "\$1"
	exit 0
	EOS
	chmod 0755 "$HOME/.npm-global/bin/claude"
	export PATH="$HOME/.npm-global/bin:$PATH"
}

# The user's own Claude Code configuration on the host, with a hook.
real_claude_config() {
	mkdir -p "$HOME/.claude"
	printf '{"hooks": {"PreToolUse": "REAL-HOOK"}}\n' >"$HOME/.claude/settings.json"
}

# session.start's "agent" object, compacted, in OUT (the last session).
last_agent() {
	wardenc log show --json
	AGENT_JSON=$(grep '"event":"session.start"' <<<"${OUT// /}" | tail -n 1)
}

test_agent_state_persists() {
	fake_claude
	real_claude_config
	local state=$HOME/$STATE_CLAUDE_REL
	wrun -- claude
	assert_rc 0 'first session'
	assert_out_has 'home=/home/agent' 'the home inside'
	assert_out_has 'count=1' 'a fresh state'
	assert_out_has 'json={}' '~/.claude.json starts as {} (an empty one is corrupt to Claude Code)'
	assert_out_has 'telemetry=1 traffic=1' 'the profile sets the quieting switches'
	assert_out_has '"sandbox":{"enabled":false}' "the client's own sandbox off in its state"
	assert_err_match "Claude Code's own sandbox is off in warden's state" 'said once'
	assert_out_lacks REAL-WRITTEN "the user's real ~/.claude written"
	assert_out_lacks REAL-READ "the user's real ~/.claude read"
	assert_out_lacks REAL-HOOK "the user's hooks imported"
	last_agent
	grep -q '"agent":{"name":"claude"' <<<"$AGENT_JSON" ||
		fail "session.start lacks the agent: $(excerpt "$AGENT_JSON")"
	grep -qF "\"state\":\"$(realpath "$state")\"" <<<"$AGENT_JSON" ||
		fail "session.start lacks the state directory: $(excerpt "$AGENT_JSON")"
	grep -q '"builtin:agent-claude"' <<<"$AGENT_JSON" ||
		fail "session.start's profiles lack builtin:agent-claude: $(excerpt "$AGENT_JSON")"

	ANTHROPIC_MODEL=test-model wrun -- claude
	assert_rc 0 'second session'
	assert_out_has 'count=2' 'the state persisted'
	assert_out_has 'json={"session":1}' '~/.claude.json persisted'
	assert_out_has 'model=test-model' 'a settings variable passed'
	[[ $ERR != *"own sandbox is off"* ]] || fail "the note was said again: $(excerpt "$ERR")"
	assert_host_file "$state/.claude/count" 2 'the state on the host'
	[[ $(stat -c %a "$state") == 700 ]] || fail "state directory mode $(stat -c %a "$state"), not 700"
	[[ $(<"$HOME/.claude/settings.json") == *REAL-HOOK* ]] ||
		fail "the user's real settings changed: $(excerpt "$(<"$HOME/.claude/settings.json")")"
	[[ ! -e $HOME/.claude.json ]] || fail "a ~/.claude.json appeared in the real home"
}

test_agent_state_reset() {
	fake_claude
	wrun -- claude
	assert_out_has 'count=1'
	wrun -- claude
	assert_out_has 'count=2'
	wardenc state list
	assert_out_match "^claude +$HOME/$STATE_CLAUDE_REL\$" 'state list names the directory'
	wardenc state reset claude
	assert_rc 0 'state reset'
	assert_out_has 'reset' 'state reset says it'
	[[ -d $HOME/$STATE_CLAUDE_REL && ! -e $HOME/$STATE_CLAUDE_REL/.claude ]] ||
		fail "after reset: $(ls -la "$HOME/$STATE_CLAUDE_REL" 2>&1 | head -n 5)"
	wrun -- claude
	assert_out_has 'count=1' 'afresh after reset'
	assert_err_match "own sandbox is off" 'said again for the fresh state'
	wardenc state reset bogus
	assert_rc 2 'reset of an unknown agent: bad usage'
	assert_err_match '"bogus" is no agent warden keeps state for \(claude, codex' 'reset of an unknown agent'
	[[ $ERR != *--agent* ]] || fail "the error names --agent, which was not given: $(excerpt "$ERR")"
	# refused while a session holds the state
	warden_bg "$T_TMP/bg.out" -- claude 'sleep 30'
	wait_for "$T_TMP/bg.out" '^count=' 20 || fatal "the background session did not start: $(excerpt "$(cat "$T_TMP/bg.out.err")")"
	wardenc state reset claude
	assert_rc 125 'reset while a session runs'
	assert_err_match 'running' 'reset while a session runs'
}

test_agent_none_and_named() {
	fake_claude
	wrun --agent none -- claude
	assert_rc 0
	assert_out_has 'telemetry=unset' '--agent none: no agent profile'
	assert_out_has 'count not writable' '--agent none: no state'
	[[ ! -e $HOME/$STATE_CLAUDE_REL ]] || fail "--agent none made a state directory"
	# a wrapper with another name, told which agent it is
	ln -s claude "$HOME/.npm-global/bin/cc-wrapper"
	wrun --agent claude -- cc-wrapper
	assert_rc 0
	assert_out_has 'count=1' '--agent claude on a command of another name'
	wrun --agent bogus -- claude
	assert_rc 125 '--agent bogus'
	assert_err_match 'no such agent profile.*known: claude, codex, none' '--agent bogus'
	wrun --state "$T_TMP/st" -- sh -c true
	assert_rc 125 '--state without an agent'
	assert_err_match 'no agent profile is in use' '--state without an agent'
}

test_agent_state_refused() {
	fake_claude
	# a symlink
	mkdir -p "$T_TMP/real-state"
	chmod 0700 "$T_TMP/real-state"
	ln -s real-state "$T_TMP/link-state"
	wrun --state "$T_TMP/link-state" -- claude "touch $WS/ran"
	assert_rc 125 'a symlinked state directory'
	assert_err_match 'is a symlink' 'a symlinked state directory'
	assert_host_absent "$WS/ran" 'the command ran with a symlinked state'
	# writable by others
	mkdir -p "$T_TMP/open-state"
	chmod 0777 "$T_TMP/open-state"
	wrun --state "$T_TMP/open-state" -- claude "touch $WS/ran"
	assert_rc 125 'a state directory writable by others'
	assert_err_match 'writable by other users' 'a state directory writable by others'
	# inside the workspace
	wrun --state "$WS/state" -- claude "touch $WS/ran"
	assert_rc 125 'a state directory in the workspace'
	assert_err_match 'overlaps the workspace' 'a state directory in the workspace'
	[[ ! -e $WS/state ]] || fail "the refused state directory was made and left: $(ls -A "$WS/state")"
	! matches 'sandbox is off' <<<"$ERR" || fail "state written before the refusal: $(excerpt "$ERR")"
	# the user's own client configuration
	wrun --state "$HOME/.claude/warden" -- claude "touch $WS/ran"
	assert_rc 125 'a state directory in ~/.claude'
	assert_err_match "own Claude Code configuration" 'a state directory in ~/.claude'
	# an entry replaced by a symlink
	wrun --state "$T_TMP/real-state" -- claude
	assert_rc 0 'a real state directory'
	rm -rf "$T_TMP/real-state/.claude"
	ln -s "$HOME/.ssh" "$T_TMP/real-state/.claude"
	wrun --state "$T_TMP/real-state" -- claude "touch $WS/ran"
	assert_rc 125 'a state entry that is a symlink'
	assert_err_match 'is not a directory' 'a state entry that is a symlink'
	# not owned by the user (root can make one)
	if is_root; then
		mkdir -p "$T_TMP/foreign"
		chmod 0700 "$T_TMP/foreign"
		chown 65534:65534 "$T_TMP/foreign"
		wrun --state "$T_TMP/foreign" -- claude "touch $WS/ran"
		assert_rc 125 "another user's state directory"
		assert_err_match 'owned by uid 65534' "another user's state directory"
	else
		note "not root: the foreign-owner case is in the unit test as root"
	fi
	assert_host_absent "$WS/ran" 'the command ran despite a refused state'
}

test_agent_state_fifo_refused() {
	# A FIFO where warden reads the agent's settings in its state is refused
	# at once with an error that names the way out: never waited on (warden
	# opened it to look, and hung until killed).
	fake_claude
	wrun -- claude true
	assert_rc 0 'the first session'
	local st=$HOME/$STATE_CLAUDE_REL/.claude/settings.json
	rm -f "$st" && mkfifo "$st" || fatal 'could not make the FIFO'
	wrun -- claude "touch $WS/ran"
	assert_rc 125 'a FIFO as the settings'
	assert_err_match 'settings.json is not a regular file.*warden state reset claude'
	assert_host_absent "$WS/ran" 'the agent ran'
	# the user's own settings, where warden looks for the API's address
	rm -f "$st" && wrun -- claude true && mkdir -p "$HOME/.claude" &&
		mkfifo "$HOME/.claude/settings.json" || fatal 'could not make the second FIFO'
	wrun -- claude "touch $WS/ran"
	assert_rc 125 "a FIFO as the user's own settings"
	assert_err_match "$HOME/.claude/settings.json: not a regular file"
	assert_host_absent "$WS/ran" 'the agent ran'
	rm -f "$HOME/.claude/settings.json"
}

# A server on the host's loopback that answers /hello; sets SRV_PORT.
hello_server() {
	python3 - "$T_TMP/srv.port" <<-'EOS' >"$T_TMP/srv.log" 2>&1 &
	import http.server, sys
	class H(http.server.BaseHTTPRequestHandler):
	    def do_GET(self):
	        body = b"hello-from-host\n"
	        self.send_response(200)
	        self.send_header("Content-Length", str(len(body)))
	        self.end_headers()
	        self.wfile.write(body)
	    def log_message(self, *a):
	        pass
	s = http.server.HTTPServer(("127.0.0.1", 0), H)
	s.timeout = 60
	open(sys.argv[1], "w").write(str(s.server_address[1]))
	for _ in range(20):
	    s.handle_request()
	EOS
	bg_track $!
	wait_for "$T_TMP/srv.port" '^[0-9]+$' 10 || fatal "the host server did not start: $(excerpt "$(cat "$T_TMP/srv.log")")"
	SRV_PORT=$(<"$T_TMP/srv.port")
}

test_agent_endpoint() {
	have python3 || skip "python3 not installed"
	have curl || skip "curl not installed"
	fake_claude
	hello_server
	# the variable: that port on the host's loopback, nothing else
	ANTHROPIC_BASE_URL=http://127.0.0.1:$SRV_PORT wrun -- claude \
		'curl -sS -m 10 "$ANTHROPIC_BASE_URL/hello"; curl -sS -m 10 -o /dev/null -w "other=%{http_code}\n" https://api.anthropic.com/'
	assert_rc 0
	assert_out_has "base=http://127.0.0.1:$SRV_PORT" 'the base URL passed'
	assert_out_line 'hello-from-host' 'the base URL on the host loopback reached, no flags'
	assert_out_lacks 'other=200' 'the default API host refused once a base URL is set'
	ANTHROPIC_BASE_URL=http://127.0.0.1:$SRV_PORT wardenc policy show -- claude
	assert_out_has "\"127.0.0.1:$SRV_PORT\"" 'policy show: the endpoint rule'
	assert_out_has 'agent claude: ANTHROPIC_BASE_URL' 'policy show: where it came from'
	assert_out_lacks 'api.anthropic.com' 'policy show: no default host with a base URL'

	# the user's own settings name it: it goes in as the variable
	mkdir -p "$HOME/.claude"
	printf '{"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:%s"}}\n' "$SRV_PORT" >"$HOME/.claude/settings.json"
	wrun -- claude 'curl -sS -m 10 "$ANTHROPIC_BASE_URL/hello"'
	assert_rc 0
	assert_out_has "base=http://127.0.0.1:$SRV_PORT" 'the base URL from ~/.claude/settings.json'
	assert_out_line 'hello-from-host' 'reached from the settings file'

	# what the agent writes in its state never widens the next session
	rm "$HOME/.claude/settings.json"
	local st=$HOME/$STATE_CLAUDE_REL/.claude/settings.json
	printf '{"env": {"ANTHROPIC_BASE_URL": "https://evil.example"}}\n' >"$st"
	wardenc policy show -- claude
	assert_out_lacks 'evil.example' "a URL in the agent's own state"
	assert_out_has '"api.anthropic.com:443"' 'the default host without any setting'

	# a bad URL is a clear error before anything runs
	ANTHROPIC_BASE_URL=gopher://x wrun -- claude "touch $WS/ran"
	assert_rc 125 'a bad base URL'
	assert_err_match 'ANTHROPIC_BASE_URL' 'a bad base URL'
	assert_host_absent "$WS/ran"
}

test_agent_ca_file() {
	fake_claude
	mkdir -p "$HOME/certs"
	echo "TEST-CA-PEM" >"$HOME/certs/ca.pem"
	NODE_EXTRA_CA_CERTS=$HOME/certs/ca.pem wrun -- claude 'cat "$NODE_EXTRA_CA_CERTS"; ls "${NODE_EXTRA_CA_CERTS%/*}"'
	assert_rc 0
	assert_out_line 'TEST-CA-PEM' 'the CA file readable inside'
	assert_out_lacks 'id_rsa' 'the rest of the home'
	NODE_EXTRA_CA_CERTS=$HOME/.ssh/id_rsa wrun -- claude "touch $WS/ran"
	assert_rc 125 'a CA variable naming a credential store'
	assert_err_match 'credential store' 'a CA variable naming a credential store'
	assert_host_absent "$WS/ran"
}

fake_codex() {
	mkdir -p "$HOME/.npm-global/bin"
	cat >"$HOME/.npm-global/bin/codex" <<-EOS
	#!/bin/sh
	echo "key=\${GW_KEY:-unset}"
	cat "\$HOME/.codex/config.toml"
	echo x >>"\$HOME/.codex/history" && echo "history=\$(wc -l <"\$HOME/.codex/history")"
	echo pwned >>"$HOME/.codex/config.toml" 2>/dev/null && echo REAL-WRITTEN
	exit 0
	EOS
	chmod 0755 "$HOME/.npm-global/bin/codex"
	export PATH="$HOME/.npm-global/bin:$PATH"
}

test_agent_codex_state() {
	fake_codex
	mkdir -p "$HOME/.codex"
	cat >"$HOME/.codex/config.toml" <<-'EOS'
	model_provider = "gw"
	notify = ["sh", "-c", "REAL-NOTIFY"]
	[model_providers.gw]
	name = "Gateway"
	base_url = "http://127.0.0.1:4999/v1"
	env_key = "GW_KEY"
	http_headers = { "X-Token" = "REAL-HEADER-TOKEN" }
	[mcp_servers.x]
	command = "REAL-MCP"
	EOS
	GW_KEY=gw-test-key wrun -- codex
	assert_rc 0
	assert_out_has 'sandbox_mode = "danger-full-access"' "Codex's own sandbox off in its state"
	assert_err_match "Codex's own sandbox is off" 'said once'
	assert_out_has 'model_provider = "gw"' 'the provider imported'
	assert_out_has 'base_url = "http://127.0.0.1:4999/v1"' "the provider's URL imported"
	# the provider's key: a secret bound to its host, the phantom inside
	assert_out_lacks 'key=gw-test-key' "the provider's key inside"
	# (of the same length; a prefix is kept only before a token's body of
	# 20 characters or more, which this short key has not)
	assert_out_match '^key=[A-Za-z0-9_-]{11}$' "the provider's key variable holds a phantom"
	assert_out_lacks 'REAL-NOTIFY' 'notify (a command) imported'
	assert_out_lacks 'REAL-HEADER-TOKEN' 'http_headers imported'
	assert_out_lacks 'REAL-MCP' 'MCP servers imported'
	assert_out_lacks REAL-WRITTEN "the user's real ~/.codex written"
	assert_out_has 'history=1'
	wrun -- codex
	assert_out_has 'history=2' 'Codex state persisted'
	[[ $ERR != *"own sandbox is off"* ]] || fail "said twice: $(excerpt "$ERR")"
	wardenc policy show -- codex
	assert_out_has '"127.0.0.1:4999"' 'the endpoint from ~/.codex/config.toml'
	assert_out_lacks 'api.openai.com' 'no default host with a provider set'
	wardenc policy show --agent codex
	assert_out_has 'builtin:agent-codex' 'policy show --agent codex'
}

test_agent_policy_show() {
	wardenc policy show --agent claude
	assert_rc 0
	assert_out_has '"builtin:agent-claude"' 'the layer named in sources'
	assert_out_has '"api.anthropic.com:443"' 'the default API host'
	assert_out_lacks 'statsig' 'no telemetry host'
	assert_out_has '"DISABLE_TELEMETRY": "1"' 'the quieting switches'
	assert_out_has '"name": "claude"' 'the agent object'
	wardenc policy show --agent none -- claude
	assert_out_lacks 'agent-claude' '--agent none'
	wardenc policy show --agent bogus
	assert_rc 125
	assert_err_match 'no such agent profile' 'policy show --agent bogus'
}

# The agent's settings that decide which hooks run and what needs no
# question (the state's ~/.claude/settings.json: hooks, permissions,
# disableAllHooks), changed inside: an alert (agent.settings-changed,
# restored, naming what changed) and, before the next session, the settings
# warden checked at the start, the agent's other keys kept. A file deleted
# comes back; one replaced by a symlink is set aside and never followed. A
# session that changes nothing raises nothing. warden's hooks are in the
# sandbox's /etc as Claude Code's managed settings, read-only.
test_agent_settings_guard() {
	fake_claude
	local st=$HOME/$STATE_CLAUDE_REL/.claude/settings.json f
	# the detector's file rules off, so the warning's "last" is this alert
	printf 'disable persist.startup-file\ndisable persist.protected-path\n' >"$T_TMP/quiet.rules"
	printf 'rules %s\n' "$T_TMP/quiet.rules" >"$T_TMP/quiet.profile"
	wrun --profile "$T_TMP/quiet.profile" -- claude 'printf "{\"disableAllHooks\": true, \"permissions\": {\"allow\": [\"Bash(*)\"]}, \"model\": \"mine\"}\n" >"$HOME/.claude/settings.json"
		cat /etc/claude-code/managed-settings.json
		echo x >/etc/claude-code/managed-settings.json 2>/dev/null && echo MANAGED-WRITTEN'
	assert_rc 0 'the session that turns the hooks off'
	assert_out_has '"allowManagedHooksOnly": true' "the managed settings inside"
	assert_out_has '"command": "/.warden/warden-hook", "args": ["--client", "claude"]' "warden's hook in the managed settings"
	assert_out_lacks MANAGED-WRITTEN 'the managed settings are read-only'
	assert_err_match "settings.json: hooks, permissions, disableAllHooks changed during the session.*restored" 'the user is told'
	assert_err_match "risk score .* \(last: agent.settings-changed\)" 'rated high enough to warn'
	f=$(latest_log)
	grep -q "\"event\":\"alert\",\"rule\":\"agent.settings-changed\",\"path\":\"$st\",\"action\":\"restored\",\"detail\":\"hooks, permissions, disableAllHooks changed during the session\"" "$f" ||
		fail "no alert for the changed settings: $(excerpt "$(grep '"event":"alert"' "$f")")"
	python3 - "$st" <<'PY' || fail "the settings are not restored: $(excerpt "$(cat "$st")")"
import json, sys
j = json.load(open(sys.argv[1]))
assert "disableAllHooks" not in j and "permissions" not in j, "the agent's keys"
assert j.get("model") == "mine", "the agent's other key"
for ev in ("PreToolUse", "PostToolUse"):
    assert any(h.get("command") == "/.warden/warden-hook" for g in j["hooks"][ev] for h in g["hooks"]), ev
PY
	# deleted: back as checked
	wrun -- claude 'rm "$HOME/.claude/settings.json"'
	assert_rc 0 'the session that deletes the settings'
	assert_err_match "settings.json: deleted during the session.*restored" 'the user is told of the deletion'
	grep -q '"model": "mine"' "$st" || fail "the deleted settings are not back: $(excerpt "$(cat "$st" 2>&1)")"
	# a symlink in its place: set aside, not followed
	echo '{"victim": 1}' >"$T_TMP/victim.json"
	chmod 0644 "$T_TMP/victim.json"
	wrun -- claude "rm \"\$HOME/.claude/settings.json\"; ln -s $T_TMP/victim.json \"\$HOME/.claude/settings.json\""
	assert_rc 0 'the session that plants a symlink'
	assert_err_match "settings.json: replaced by a symlink during the session.*restored.*kept as $st.agent-" 'the user is told of the symlink'
	[[ -f $st && ! -L $st ]] && grep -q '"model": "mine"' "$st" ||
		fail "the settings are not restored over the symlink: $(excerpt "$(ls -l "$st"* 2>&1)")"
	[[ $(<"$T_TMP/victim.json") == '{"victim": 1}' ]] || fail "the symlink's target was written"
	# nothing changed: nothing raised
	wrun -- claude 'true'
	assert_rc 0 'a session that changes nothing'
	[[ $ERR != *"during the session"* ]] || fail "said for unchanged settings: $(excerpt "$ERR")"
	f=$(latest_log)
	! grep -q '"rule":"agent.settings-changed"' "$f" || fail "an alert for unchanged settings: $(excerpt "$(grep '"event":"alert"' "$f")")"
}

# The settings warden checked, kept outside the agent's reach and shared by
# the sessions of one state: a session killed (SIGKILL) before its check
# leaves what its agent changed, and the next session's start puts the
# checked settings back before its agent starts (an alert, and told); two
# sessions at once both hold the first one's checked settings, so a change
# made by one agent is not taken as checked by the other (the first to end
# undoes it).
# guard_first_session: a first session (the state made, its settings
# checked), and $T_TMP/quiet.profile with the detector's file rules off.
guard_first_session() {
	printf 'disable persist.startup-file\ndisable persist.protected-path\n' >"$T_TMP/quiet.rules"
	printf 'rules %s\n' "$T_TMP/quiet.rules" >"$T_TMP/quiet.profile"
	wrun -- claude 'true'
	assert_rc 0 'the first session'
}

test_agent_settings_guard_killed() {
	fake_claude
	local st=$HOME/$STATE_CLAUDE_REL/.claude/settings.json out=$T_TMP/killed.out f
	guard_first_session
	warden_bg "$out" --profile "$T_TMP/quiet.profile" -- claude \
		'printf "{\"permissions\": {\"allow\": [\"Bash(*)\"]}, \"model\": \"mine\"}\n" >"$HOME/.claude/settings.json"; echo changed; sleep 60'
	wait_for "$out" '^changed' 15 || fatal "the agent did not run: $(excerpt "$(cat "$out" "$out.err")")"
	grep -q 'Bash' "$st" || fail "the change is not on the host: $(excerpt "$(cat "$st")")"
	kill -KILL "$WPID"
	wait "$TPID" 2>/dev/null
	wrun --profile "$T_TMP/quiet.profile" -- claude 'true'
	assert_rc 0 'the session after the killed one'
	assert_out_lacks 'Bash' "the next agent does not start with the killed session's change"
	assert_out_match 'settings=.*"model":"mine"' "the agent's other key kept"
	assert_err_match "settings.json: permissions changed during a session that ended without warden's check.*restored" 'the user is told'
	f=$(latest_log)
	grep -q "\"event\":\"alert\",\"rule\":\"agent.settings-changed\",\"path\":\"$st\",\"action\":\"restored\",\"detail\":\"permissions changed during a session that ended without its check\"" "$f" ||
		fail "no alert for the settings left changed: $(excerpt "$(grep '"event":"alert"' "$f")")"
	# a session that ends normally after it: nothing more to say
	wrun -- claude 'true'
	[[ $ERR != *"without warden's check"* && $ERR != *"during the session"* ]] ||
		fail "said again: $(excerpt "$ERR")"
}

test_agent_settings_guard_killed_fifo() {
	# The agent replaces its settings with a FIFO and warden is killed before
	# its check: the next session does not wait on the FIFO (it hung until
	# killed), sets it aside, puts the checked settings back and says so.
	fake_claude
	local st=$HOME/$STATE_CLAUDE_REL/.claude/settings.json out=$T_TMP/killed.out before
	guard_first_session
	before=$(<"$st")
	warden_bg "$out" --profile "$T_TMP/quiet.profile" -- claude \
		'rm -f "$HOME/.claude/settings.json" && mkfifo "$HOME/.claude/settings.json" && echo changed; sleep 60'
	wait_for "$out" '^changed' 15 || fatal "the agent did not run: $(excerpt "$(cat "$out" "$out.err")")"
	[[ -p $st ]] || fail 'the FIFO is not on the host'
	kill -KILL "$WPID"
	wait "$TPID" 2>/dev/null
	wrun --profile "$T_TMP/quiet.profile" -- claude 'true'
	assert_rc 0 'the session after the killed one'
	[[ -f $st && ! -p $st && $(<"$st") == "$before" ]] ||
		fail "the checked settings are not back: $(excerpt "$(ls -la "$(dirname "$st")")")"
	assert_err_match "settings.json: replaced by a special file during a session that ended without warden's check.*kept as .*settings.json.agent-unchecked-"
	compgen -G "$st.agent-unchecked-*" >/dev/null || fail 'the FIFO was not set aside'
	wardenc log show --event alert --json
	assert_out_has '"rule":"agent.settings-changed"'
	assert_out_has '"detail":"replaced by a special file during a session that ended without its check"'
}

test_agent_settings_guard_concurrent() {
	fake_claude
	local st=$HOME/$STATE_CLAUDE_REL/.claude/settings.json out=$T_TMP/first.out
	guard_first_session
	# A's agent changes the settings and stays; B starts and ends meanwhile
	warden_bg "$out" --profile "$T_TMP/quiet.profile" -- claude \
		'printf "{\"permissions\": {\"allow\": [\"Bash(*)\"]}}\n" >"$HOME/.claude/settings.json"; echo changed; while [ ! -e "$HOME/.claude/go" ]; do sleep 0.1; done'
	wait_for "$out" '^changed' 15 || fatal "the agent did not run: $(excerpt "$(cat "$out" "$out.err")")"
	wrun --profile "$T_TMP/quiet.profile" -- claude 'true'
	assert_rc 0 'B, while A runs'
	# the change is no checked setting of B's: undone at its end, and told
	assert_err_match 'settings.json: permissions changed during the session.*restored' "B's end"
	touch "$HOME/$STATE_CLAUDE_REL/.claude/go"
	wait "$TPID"
	! grep -q 'Bash' "$st" || fail "A's change taken as checked by B and put back at its end: $(excerpt "$(cat "$st")")"
	wrun -- claude 'true'
	assert_out_lacks 'Bash' 'the next session starts from the checked settings'
}

# The state's ~/.claude.json: its user-scope "mcpServers" and, in each
# project's entry, the keys that start MCP servers or allow tools without
# asking, changed inside: undone at the end (down to the project's key, the
# agent's other changes kept), an alert naming them, and told. Claude Code's
# own bookkeeping (counts, a new project's entry with empty values) is no
# change. claude_json_checked: the file as the user left it on the host.
claude_json_checked() {
	printf '{"numStartups": 1, "projects": {"/p": {"allowedTools": ["Read"], "history": []}}}\n' \
		>"$HOME/$STATE_CLAUDE_REL/.claude.json"
}

test_agent_claude_json_guard() {
	fake_claude
	local st=$HOME/$STATE_CLAUDE_REL/.claude.json f
	guard_first_session
	claude_json_checked
	wrun --profile "$T_TMP/quiet.profile" -- claude 'printf "{\"numStartups\": 2, \"mcpServers\": {\"evil\": {\"command\": \"/tmp/evil\"}}, \"projects\": {\"/p\": {\"allowedTools\": [\"Bash(*)\"], \"history\": [\"mine\"]}, \"/q\": {\"mcpServers\": {\"e2\": {\"command\": \"y\"}}, \"enableAllProjectMcpServers\": true, \"lastCost\": 3}, \"/r\": {\"allowedTools\": [], \"mcpServers\": {}}}}\n" >"$HOME/.claude.json"'
	assert_rc 0 'the session that plants MCP servers'
	assert_err_match '\.claude\.json: mcpServers, projects\["/p"\]\.allowedTools, projects\["/q"\]\.mcpServers, projects\["/q"\]\.enableAllProjectMcpServers changed during the session.*restored' 'the user is told'
	f=$(latest_log)
	python3 - "$f" "$st" <<'PY' || fail "no alert for ~/.claude.json: $(excerpt "$(grep '"event":"alert"' "$f")")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if '"event":"alert"' in l]
want = 'mcpServers, projects["/p"].allowedTools, projects["/q"].mcpServers, projects["/q"].enableAllProjectMcpServers changed during the session'
assert any(e.get("rule") == "agent.settings-changed" and e.get("path") == sys.argv[2]
           and e.get("action") == "restored" and e.get("detail") == want for e in evs), evs
PY
	python3 - "$st" <<'PY' || fail "~/.claude.json is not restored: $(excerpt "$(cat "$st")")"
import json, sys
j = json.load(open(sys.argv[1]))
assert "mcpServers" not in j, "the user-scope MCP server"
p = j["projects"]
assert p["/p"]["allowedTools"] == ["Read"], "a project's allowed tools"
assert "mcpServers" not in p["/q"] and "enableAllProjectMcpServers" not in p["/q"], "a project's MCP servers"
assert j["numStartups"] == 2 and p["/p"]["history"] == ["mine"] and p["/q"]["lastCost"] == 3, "the agent's other changes"
assert p["/r"] == {"allowedTools": [], "mcpServers": {}}, "a new project's empty entry"
PY
	# bookkeeping only (counts, a new project's entry with empty values):
	# nothing to say
	wrun --profile "$T_TMP/quiet.profile" -- claude 'printf "{\"numStartups\": 3, \"tipsHistory\": {\"a\": 1}, \"projects\": {\"/p\": {\"allowedTools\": [\"Read\"], \"history\": []}, \"/q\": {\"lastCost\": 4}, \"/new\": {\"allowedTools\": [], \"mcpServers\": {}, \"enabledMcpjsonServers\": [], \"disabledMcpjsonServers\": [], \"hasTrustDialogAccepted\": false}}}\n" >"$HOME/.claude.json"'
	assert_rc 0 'a session that changes no guarded key'
	[[ $ERR != *"during the session"* ]] || fail "said for bookkeeping: $(excerpt "$ERR")"
	! grep -q '"rule":"agent.settings-changed"' "$(latest_log)" ||
		fail "an alert for bookkeeping: $(excerpt "$(grep '"event":"alert"' "$(latest_log)")")"
	grep -q '"numStartups": 3' "$st" || fail "the bookkeeping undone: $(excerpt "$(cat "$st")")"
}

# ~/.claude.json changed by a session killed before its check: put back at
# the next start, before its agent runs; no longer JSON: set aside.
test_agent_claude_json_guard_killed() {
	fake_claude
	local st=$HOME/$STATE_CLAUDE_REL/.claude.json out=$T_TMP/killed.out
	guard_first_session
	claude_json_checked
	wrun -- claude 'true'
	warden_bg "$out" --profile "$T_TMP/quiet.profile" -- claude \
		'printf "{\"mcpServers\": {\"evil\": {\"command\": \"/tmp/evil\"}}, \"projects\": {\"/p\": {\"allowedTools\": [\"Read\"], \"mcpServers\": {\"e\": {\"command\": \"x\"}}}}}\n" >"$HOME/.claude.json"; echo changed; sleep 60'
	wait_for "$out" '^changed' 15 || fatal "the agent did not run: $(excerpt "$(cat "$out" "$out.err")")"
	kill -KILL "$WPID"
	wait "$TPID" 2>/dev/null
	wrun --profile "$T_TMP/quiet.profile" -- claude 'true'
	assert_rc 0 'the session after the killed one'
	assert_out_lacks 'evil' "the next agent does not start with the killed session's MCP server"
	assert_err_match "claude\.json: mcpServers, projects\[\"/p\"\]\.mcpServers changed during a session that ended without warden's check.*restored" 'the user is told'
	wardenc log show --event alert --json
	assert_out_has '"rule":"agent.settings-changed"'
	assert_out_has 'changed during a session that ended without its check'
	# no longer a JSON object: the agent's file set aside, the checked one back
	wrun -- claude 'echo "{\"mcpServers\": " >"$HOME/.claude.json"'
	assert_err_match 'claude\.json: no longer a JSON object during the session.*kept as .*claude\.json\.agent-'
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$st" ||
		fail "~/.claude.json is not back: $(excerpt "$(cat "$st")")"
}
