# t_agent_claude.sh - the real Claude Code CLI (npm @anthropic-ai/claude-code),
# installed under the fake HOME as `npm install -g --prefix ~/.npm-global`
# leaves it, run by name under warden against the mock of the Anthropic
# Messages API (tests/agents/mock_anthropic.py): on the host's loopback, or
# over HTTPS from a network namespace the test creates (root), with a
# certificate of a test CA the client is told to trust. The mock's script
# makes the agent run its shell tool (Bash): it writes a marker in the
# workspace and tries to read files outside it. The interactive UI is driven
# in a detached tmux session: first-run dialogs, a prompt, /exit, and a second
# session that resumes the first. Skipped when the client cannot be installed
# (tests/agents/install.sh). No warden flags anywhere: the client's own
# variables, as a user sets them, and the built-in profile for claude.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# claude_install: the real client under ~/.npm-global (agent_install, lib.sh).
# Sets CLAUDE_BIN, or skips.
claude_install() {
	agent_install claude claude "Claude Code"
	CLAUDE_BIN=$AGENT_BIN
}

# mock_start COMMAND [MOCK-OPTION...]: the mock on a port the OS picks, its
# tool_use running COMMAND; options such as --bind ADDR --tls-cert F
# --tls-key F go to the mock. With MOCK_NS set, it runs in that network
# namespace. Sets MOCK_PORT, MOCK_LOG, MOCK_RESULTS.
mock_start() {
	local cmd=$1 pre=() pid
	shift
	[[ -n ${MOCK_NS:-} ]] && pre=(ip netns exec "$MOCK_NS")
	MOCK_LOG=$T_TMP/mock.log MOCK_RESULTS=$T_TMP/mock.results
	"${pre[@]}" python3 "$AGENTS_DIR/mock_anthropic.py" --port-file "$T_TMP/mock.port" \
		--log "$MOCK_LOG" --results "$MOCK_RESULTS" --command "$cmd" "$@" \
		>"$T_TMP/mock.out" 2>&1 &
	pid=$!
	bg_track "$pid"
	# before the namespace goes (nh_cleanup runs in reverse order)
	[[ -n ${MOCK_NS:-} ]] && nh_on_exit "kill $pid"
	wait_for "$T_TMP/mock.port" '^[0-9]+$' 10 || fatal "the mock did not start: $(excerpt "$(cat "$T_TMP/mock.out")")"
	MOCK_PORT=$(<"$T_TMP/mock.port")
}


# A key shaped like Anthropic's.
CLAUDE_KEY=sk-ant-api03-e2eTESTkey0123456789abcdefghijklmnopqrstuvwxyzAB

# claude_check_key: the mock received the real key, every time; the tool's
# output (its environment and every /proc/*/environ it could read) holds
# the phantom, never the key; the audit log names the substitution.
claude_check_key() {
	[[ -s $T_TMP/mock.keys ]] || { fail "the mock received no key"; return; }
	grep -q "^x-api-key: $CLAUDE_KEY\$" "$T_TMP/mock.keys" ||
		fail "the mock did not receive the real key: $(excerpt "$(sort -u "$T_TMP/mock.keys")")"
	grep -v "^x-api-key: $CLAUDE_KEY\$" "$T_TMP/mock.keys" | grep . >/dev/null &&
		fail "the mock received another key too: $(excerpt "$(sort -u "$T_TMP/mock.keys")")"
	grep -qF "$CLAUDE_KEY" "$MOCK_RESULTS" &&
		fail "the real key is in a tool result: $(excerpt "$(grep -F "$CLAUDE_KEY" "$MOCK_RESULTS" | head -c 300)")"
	grep -q 'ANTHROPIC_API_KEY=sk-ant-' "$MOCK_RESULTS" ||
		fail "the tool's environment lacks the phantom ANTHROPIC_API_KEY: $(excerpt "$(head -c 400 "$MOCK_RESULTS")")"
	wardenc log show --event net --json
	grep -q '"secret":"ANTHROPIC_API_KEY","header":"x-api-key"' <<<"${OUT// /}" ||
		fail "no net event names the key's substitution: $(excerpt "$OUT")"
}

# claude_check_tool OUTSIDE: what the mock's tool_use did in the latest
# session. The Bash tool ran in the workspace (its marker is on the host),
# inside the sandbox (OUTSIDE and ~/.ssh/id_rsa stayed unreadable, and the
# tool result the model got says so), and the audit log has its execs.
# Overwrites OUT, ERR and RC.
claude_check_tool() {
	local outside=$1
	# The mock saw the conversation: the first turn offered the Bash tool, the
	# second carried its result.
	[[ $(grep -c '"path": "/v1/messages' "$MOCK_LOG" 2>/dev/null) -ge 2 ]] ||
		fail "the mock saw fewer than two /v1/messages requests: $(excerpt "$(cut -c1-200 "$MOCK_LOG" 2>/dev/null)")"
	assert_host_file "$WS/marker.txt" e2e-marker "the Bash tool's marker"
	if [[ ! -s $MOCK_RESULTS ]]; then
		fail "no tool_result reached the mock"
	else
		grep -q "OUTSIDE-SECRET" "$MOCK_RESULTS" && fail "the tool read $outside: $(excerpt "$(<"$MOCK_RESULTS")")"
		grep -q "$BAIT" "$MOCK_RESULTS" && fail "the tool read ~/.ssh/id_rsa: $(excerpt "$(<"$MOCK_RESULTS")")"
		grep -q "outside-secret.txt: No such file or directory" "$MOCK_RESULTS" ||
			fail "the tool_result lacks the refused read of $outside: $(excerpt "$(<"$MOCK_RESULTS")")"
	fi
	wardenc log show --event exec --json
	grep -qF 'echo e2e-marker > marker.txt' <<<"$OUT" ||
		fail "the audit log has no exec of the shell running the tool's command: $(excerpt "$OUT")"
	grep -qF "\"argv\":[\"cat\",\"$outside\"" <<<"$OUT" ||
		fail "the audit log has no exec of the tool's cat $outside: $(excerpt "$OUT")"
}

# claude_outside: a file outside the workspace the tool must not read; prints
# its path.
claude_outside() {
	local outside=$T_TMP/outside-secret.txt
	echo "OUTSIDE-SECRET-$$" >"$outside"
	chmod 0644 "$outside"
	printf '%s' "$outside"
}

test_claude_code_print() {
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	local outside err
	outside=$(claude_outside)
	# The tool also prints every environment it can read: the key must be
	# in none of them.
	mock_start "echo e2e-marker > marker.txt; cat $outside $HOME/.ssh/id_rsa; env; cat /proc/[0-9]*/environ | tr '\\0' '\\n'" \
		--keys "$T_TMP/mock.keys"

	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	# As a user types it: the built-in profile for claude allows the base
	# URL's port on the host's loopback, passes the variables, and keeps the
	# key outside (a phantom inside; the proxy puts the key in toward the
	# base URL's port).
	PATH=$CLAUDE_BIN:$PATH \
		ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT ANTHROPIC_API_KEY=$CLAUDE_KEY \
		wrun -- claude -p "do the task" --dangerously-skip-permissions
	err=$ERR
	note "mock log: $(cut -c1-300 "$MOCK_LOG" 2>/dev/null)"
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"

	assert_rc 0 "claude -p"
	assert_out_has "done" "claude -p"
	claude_check_tool "$outside"
	claude_check_key
	# The profile's quieting switches: the client tried nothing else.
	[[ $err != *"refused during this session"* ]] ||
		fail "the client tried destinations the profile refuses: $(excerpt "$err")"
	return 0
}

test_claude_code_worktree() {
	# `claude -p --worktree NAME`, no warden flags, in a repository with a
	# .claude directory: Claude Code makes its worktree in .claude/worktrees
	# (writable with claude's profile, the rest of .claude read-only), its
	# Bash tool runs there, and the worktree stays on the host after the
	# session, git's own.
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	have git || skip 'git not installed'
	claude_install
	git init -q . && mkdir .claude && echo '{}' >.claude/settings.json &&
		git add .claude && git -c user.name=u -c user.email=u@example.invalid commit -q -m start ||
		fatal 'could not make the repository'
	mock_start "echo e2e-marker > marker.txt; git rev-parse --abbrev-ref HEAD"
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	PATH=$CLAUDE_BIN:$PATH \
		ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT ANTHROPIC_API_KEY=$CLAUDE_KEY \
		wrun -- claude -p --worktree feat "do the task" --dangerously-skip-permissions
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"
	assert_rc 0 'claude -p --worktree'
	assert_host_file .claude/worktrees/feat/marker.txt e2e-marker "the Bash tool's marker in the worktree"
	grep -q 'worktree-feat' "$MOCK_RESULTS" ||
		fail "the tool did not run on the worktree's branch: $(excerpt "$(cat "$MOCK_RESULTS" 2>/dev/null)")"
	assert_host_file .claude/settings.json '{}' "the top's .claude"
	OUT=$(git -c safe.directory='*' -C .claude/worktrees/feat status -sb 2>&1)
	[[ $OUT == '## worktree-feat'* ]] || fail "git on the host does not work in the worktree: $(excerpt "$OUT")"
	[[ $ERR != *'moved to'* ]] || fail "something of the worktree was moved aside: $(excerpt "$ERR")"
	wardenc log show --event alert --json
	assert_out_lacks '"rule":"persist.startup-file"' "the worktree's checkout taken for a planted setting"
}

# The mock over HTTPS at 10.77.N.2 in a namespace of the test's own, with a
# server certificate for that address signed by a CA the test makes. The
# client trusts the CA through NODE_EXTRA_CA_CERTS (the native binary reads
# it: it appends that file to its bundled and system roots) and reaches the
# mock only through warden's proxy: a CONNECT, recorded as an allowed `net`
# event.
test_claude_code_https_netns() {
	nh_need_root
	nh_need openssl curl
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	nh_netns
	local outside url ca err
	outside=$(claude_outside)
	nh_ca "$T_TMP/ca" "warden test CA $$"
	# Only the certificate is shown to the sandbox, never the CA's key.
	mkdir -p "$T_TMP/trust"
	ca=$T_TMP/trust/test-ca.pem
	cp "$T_TMP/ca/ca.pem" "$ca"
	chmod -R a+rX "$T_TMP/trust"
	nh_cert_signed "$T_TMP/mock-tls" "$NH_IP" "IP:$NH_IP" "$T_TMP/ca"
	MOCK_NS=$NH_NS mock_start "echo e2e-marker > marker.txt; cat $outside $HOME/.ssh/id_rsa" \
		--bind "$NH_IP" --tls-cert "$T_TMP/mock-tls/cert.pem" --tls-key "$T_TMP/mock-tls/key.pem"
	url=https://$NH_IP:$MOCK_PORT
	nh_host_check --cacert "$ca" "$url/v1/models"

	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=120
	# No warden flags: the profile allows the base URL's host (a private
	# address: the user configured it) and shows the CA file
	# NODE_EXTRA_CA_CERTS names, read-only.
	export PATH=$CLAUDE_BIN:$PATH ANTHROPIC_BASE_URL=$url ANTHROPIC_API_KEY=sk-ant-test-e2e-0000

	# Without the CA the client refuses the mock's certificate: it does check,
	# so the run below trusts the mock through the CA file seen inside.
	# (CLAUDE_CODE_MAX_RETRIES=0 spares the retries with backoff: a test
	# device, not a flag a user needs.)
	wrun --env CLAUDE_CODE_MAX_RETRIES=0 -- claude -p "do the task" --dangerously-skip-permissions
	assert_rc_nonzero "claude -p without the test CA"
	[[ $OUT$ERR == *[Cc]ertificate* ]] ||
		fail "claude -p without the test CA: no certificate error (rc=$RC, stdout: $(excerpt "$OUT"); stderr: $(excerpt "$ERR"))"
	assert_host_absent "$WS/marker.txt" "claude -p without the test CA"

	NODE_EXTRA_CA_CERTS=$ca wrun -- claude -p "do the task" --dangerously-skip-permissions
	err=$ERR
	note "mock log: $(cut -c1-300 "$MOCK_LOG" 2>/dev/null)"
	note "tool results: $(cat "$MOCK_RESULTS" 2>/dev/null)"
	assert_rc 0 "claude -p over HTTPS"
	assert_out_has "done" "claude -p over HTTPS"
	# Through the proxy: an allowed CONNECT to the mock's address.
	net_expect "the client's connection to the mock" method=CONNECT host="$NH_IP" port="$MOCK_PORT" \
		address="$NH_IP" decision=allow status=200 'bytes_in>0'
	claude_check_tool "$outside"
	[[ $err != *"refused during this session"* ]] ||
		fail "the client tried destinations the profile refuses: $(excerpt "$err")"
	return 0
}

# The key the profile binds serves the model API only: with ANTHROPIC_API_KEY
# set, the API host (here the base URL's, on the host's loopback: warden
# reads its requests there) is narrowed to the paths Claude Code calls. A
# request with the phantom key to the Files API or for a batch gets warden's
# 403 and a `net` event with decision deny, and never reaches the server; a
# profile line for the same host widens it; `policy show` names the rules'
# origin, under a base URL's path prefix; without a key nothing is narrowed.
# No client needed: the profile is picked with --agent claude.
test_claude_key_narrowed() {
	nh_need curl
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	mock_start true --keys "$T_TMP/mock.keys"
	local u=http://127.0.0.1:$MOCK_PORT hp=127.0.0.1:$MOCK_PORT
	local probe=(sh -c "$AGENT_PROBE" sh "x-api-key: " ANTHROPIC_API_KEY "messages=POST:$u/v1/messages?beta=true"
		"files=GET:$u/v1/files" "batches=POST:$u/v1/messages/batches")
	ANTHROPIC_BASE_URL=$u ANTHROPIC_API_KEY=$CLAUDE_KEY wrun --agent claude -- "${probe[@]}"
	assert_rc 0 "the session"
	assert_out_line 'messages=200' 'POST /v1/messages, the client own, allowed'
	assert_out_line 'files=403' 'GET /v1/files with the key refused'
	assert_out_match "^files-reason=X-Warden-Reason: no rule allows GET /v1/files on $hp; its rules allow POST /v1/messages, " \
		'the refusal says why, and what the host is narrowed to'
	assert_out_line 'batches=403' 'POST /v1/messages/batches with the key refused'
	grep -q '"path": "/v1/messages?beta=true"' "$MOCK_LOG" ||
		fail "the allowed request did not reach the mock: $(excerpt "$(cut -c1-300 "$MOCK_LOG")")"
	grep -Eq '/v1/files|/batches' "$MOCK_LOG" && fail "a refused request reached the mock: $(excerpt "$(cut -c1-300 "$MOCK_LOG")")"
	grep -qx "x-api-key: $CLAUDE_KEY" "$T_TMP/mock.keys" || fail "the mock did not get the real key for the allowed request"
	net_expect 'GET /v1/files refused' method=GET path=/v1/files decision=deny status=403 \
		"reason~^no rule allows GET /v1/files on $hp; its rules allow POST /v1/messages, POST /v1/messages/count_tokens, GET /v1/models, GET /v1/models/\\*$"
	net_expect 'the batch refused' method=POST path=/v1/messages/batches decision=deny status=403

	# A profile line for the same host widens it: the Files API's GET goes.
	local prof=$T_TMP/widen.profile
	printf 'net allow %s GET /v1/files\n' "$hp" >"$prof"
	ANTHROPIC_BASE_URL=$u ANTHROPIC_API_KEY=$CLAUDE_KEY wrun --agent claude --profile "$prof" -- "${probe[@]}"
	assert_out_line 'files=404' 'GET /v1/files with a profile line allowing it reaches the mock (its 404)'
	assert_out_line 'batches=403' 'the batch, which the line does not allow, still refused'

	# Where the rules come from, and a base URL's path under them.
	ANTHROPIC_BASE_URL=$u/gw/ ANTHROPIC_API_KEY=$CLAUDE_KEY wardenc policy show --agent claude
	assert_rc 0 "policy show"
	python3 -c 'import json, sys
want = {"action": "allow", "pattern": sys.argv[1], "methods": "POST", "path": "/gw/v1/messages", "origin": "agent claude"}
sys.exit(not any(want.items() <= r.items() for r in json.load(sys.stdin)["net"]))' "$hp" <<<"$OUT" ||
		fail "policy show lacks POST /gw/v1/messages of origin agent claude: $(excerpt "$OUT")"
	# Signed in with an account (no key): no secret, no request rule.
	env -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN "$WARDEN" policy show --agent claude >"$T_TMP/nokey.json" 2>&1
	grep -q '"methods"' "$T_TMP/nokey.json" && fail "request rules without a key: $(excerpt "$(<"$T_TMP/nokey.json")")"
	return 0
}

# ---- the interactive UI in tmux -----------------------------------------

# ui_start NAME [CLAUDE-ARG...]: `warden run -- claude ARGS` in a detached 200x50 tmux session NAME, on a tmux server of the
# test's own (its socket in T_TMP), with the variables of UI_ENV
# (NAME=VALUE...) exported and the options of UI_WARDEN_ARGS (none unless
# set) before the --. warden's stderr goes to T_TMP/NAME.err and its
# exit status, once it exits, to T_TMP/NAME.rc. Sets UI_NAME.
ui_start() {
	UI_NAME=$1
	shift
	local script=$T_TMP/$UI_NAME.sh v
	{
		printf 'cd %q || exit 1\n' "$WS"
		for v in "${UI_ENV[@]}"; do
			printf 'export %q\n' "$v"
		done
		# --foreground: warden stays in the terminal's foreground process
		# group (it reads the terminal only there)
		printf 'timeout --foreground -k 5 %q %q run' "$UI_TIMEOUT" "$WARDEN"
		printf ' %q' "${UI_WARDEN_ARGS[@]}" -- claude "$@"
		printf ' 2>%q\n' "$T_TMP/$UI_NAME.err"
		printf 'echo $? >%q\n' "$T_TMP/$UI_NAME.rc"
	} >"$script"
	UI_SOCK=$T_TMP/tmux.sock
	# remain-on-exit: the last screen stays to be read once warden exits
	tmux -S "$UI_SOCK" -f /dev/null new-session -d -s "$UI_NAME" -x 200 -y 50 "bash $(printf %q "$script")" \; \
		set-option -g remain-on-exit on >"$T_TMP/tmux.out" 2>&1 ||
		fatal "tmux new-session failed: $(excerpt "$(<"$T_TMP/tmux.out")")"
	nh_on_exit "tmux -S '$UI_SOCK' kill-server"
	UI_DIALOGS=() UI_LAST_DIALOG='' UI_LAST_AT=0
	: >"$T_TMP/$UI_NAME.screen"
}

# ui_capture: the session's screen now, in T_TMP/NAME.screen (the last one
# stays there once the session is gone).
ui_capture() {
	tmux -S "$UI_SOCK" capture-pane -p -t "$UI_NAME" >"$T_TMP/$UI_NAME.screen.new" 2>/dev/null &&
		mv "$T_TMP/$UI_NAME.screen.new" "$T_TMP/$UI_NAME.screen"
}

# ui_has ERE: the last screen has a line matching ERE.
ui_has() { grep -qE -- "$1" "$T_TMP/$UI_NAME.screen"; }

# ui_shows: the last screen's lines with text (not blank, not only a rule,
# not tmux's "Pane is dead"), for a failure reason.
ui_shows() { excerpt "$(grep -vE '^([[:space:]─╌]*|Pane is dead.*)$' "$T_TMP/$UI_NAME.screen" | tail -n 14)"; }

# ui_keys KEY...: tmux send-keys (key names: Enter, Escape, ...).
ui_keys() { tmux -S "$UI_SOCK" send-keys -t "$UI_NAME" "$@"; }

# ui_answer: when the screen shows one of the client's dialogs, answer it the
# way a user accepting the defaults would (each answer is a key press; none
# is pre-seeded in ~/.claude.json) and append its name to UI_DIALOGS. The
# same dialog is not answered twice within 3 s (the screen may lag the key).
ui_answer() {
	local d key
	if ui_has 'Choose the text style'; then
		d=theme key=Enter # "Dark mode" is preselected
	elif ui_has 'Detected a custom API key'; then
		d=api-key key=1 # "1. Yes" (the default is "No"); 1 selects and confirms
	elif ui_has 'Security notes:'; then
		d=security-notes key=Enter # "Press Enter to continue"
	elif ui_has 'Yes, I trust this folder'; then
		d=trust-folder key=Enter # "1. Yes, I trust this folder" is preselected
	elif ui_has "Use Claude Code.s terminal setup"; then
		d=terminal-setup key=Escape # skip
	elif ui_has 'Do you want to proceed\?'; then
		d=tool-permission key=Enter # "1. Yes" is preselected
	else
		return 1
	fi
	if [[ $d == "$UI_LAST_DIALOG" ]] && ((SECONDS - UI_LAST_AT < 3)); then
		return 0
	fi
	UI_LAST_DIALOG=$d UI_LAST_AT=$SECONDS
	UI_DIALOGS+=("$d")
	ui_keys "$key"
}

# ui_wait ERE SECONDS LABEL: poll the screen until a line matches ERE,
# answering dialogs on the way. Fails (and returns 1) on a "Settings Error"
# (warden once put a file where the client expects the directory .claude),
# when warden exits first, or after SECONDS.
ui_wait() {
	local want=$1 label=$3 i n=$(($2 * 5))
	for ((i = 0; i < n; i++)); do
		ui_capture
		if ui_has 'Settings Error'; then
			fail "$label: the client shows a Settings Error: $(ui_shows)"
			return 1
		fi
		ui_has "$want" && return 0
		ui_answer && { sleep 0.3; continue; }
		if [[ -s $T_TMP/$UI_NAME.rc ]]; then
			sleep 0.5
			ui_capture
			fail "$label: warden exited (status $(<"$T_TMP/$UI_NAME.rc")) before the screen showed /$want/ (dialogs answered: ${UI_DIALOGS[*]:-none}); stderr: $(excerpt "$(cat "$T_TMP/$UI_NAME.err" 2>/dev/null)"); screen: $(ui_shows)"
			return 1
		fi
		sleep 0.2
	done
	fail "$label: no /$want/ on the screen within $2 s (dialogs answered: ${UI_DIALOGS[*]:-none}); screen: $(ui_shows)"
	return 1
}

# The prompt is ready for input: its footer, or its empty input line.
UI_READY='for shortcuts|^❯.?$'

# ui_type TEXT LABEL: type TEXT into the prompt once it shows, then Enter.
ui_type() {
	ui_wait "$UI_READY" 60 "$2: the prompt" || return 1
	ui_keys -l "$1"
	# shellcheck disable=SC2001 # a bracket expression: clearer with sed
	ui_wait "$(sed 's/[][\.*^$?+(){}|]/\\&/g' <<<"$1")" 10 "$2: the typed text" || return 1
	ui_keys Enter
}

# ui_exit LABEL: /exit, then wait for warden to exit; sets RC.
ui_exit() {
	local i
	ui_type /exit "$1" || return 1
	for ((i = 0; i < 150; i++)); do
		[[ -s $T_TMP/$UI_NAME.rc ]] && break
		sleep 0.2
	done
	ui_capture
	if [[ ! -s $T_TMP/$UI_NAME.rc ]]; then
		fail "$1: warden still runs 30 s after /exit; screen: $(ui_shows)"
		return 1
	fi
	RC=$(<"$T_TMP/$UI_NAME.rc")
}

# The client's interactive UI on a terminal (tmux), against the mock on the
# host's loopback: no "Settings Error", the first-run dialogs answered by
# keys, a prompt whose Bash tool asks for permission and writes the marker,
# the mock's reply on the screen, /exit, warden's session.end. Then a second
# session resumes the first (`claude --continue`): the client's state
# (~/.claude, ~/.claude.json) persists in warden's per-agent state directory
# (${XDG_DATA_HOME:-~/.local/share}/warden/agents/claude).
test_claude_code_interactive() {
	have tmux || skip "tmux not installed"
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	mock_start "echo e2e-tty > marker.txt"

	# ANTHROPIC_AUTH_TOKEN, as with a gateway: with ANTHROPIC_API_KEY alone
	# the first run checks api.anthropic.com and platform.claude.com before
	# anything else and quits when they cannot be reached (the profile allows
	# only the base URL's host once one is set). No warden flags: the
	# profile passes the variables and sets the quieting switches.
	UI_ENV=(PATH="$CLAUDE_BIN:$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}"
		ANTHROPIC_BASE_URL="http://127.0.0.1:$MOCK_PORT" ANTHROPIC_AUTH_TOKEN=sk-ant-test-e2e-0000)
	UI_TIMEOUT=240
	local state=${XDG_DATA_HOME:-$HOME/.local/share}/warden/agents/claude

	# ---- the first session
	ui_start first
	if ui_type "do the task" "first session"; then
		ui_wait '● done' 60 "first session: the mock's reply" &&
			note "first-run dialogs answered: ${UI_DIALOGS[*]}"
		assert_host_file "$WS/marker.txt" e2e-tty "the Bash tool's marker (interactive)"
		[[ " ${UI_DIALOGS[*]} " == *" tool-permission "* ]] ||
			fail "first session: the Bash tool ran without asking for permission (dialogs: ${UI_DIALOGS[*]})"
		ui_exit "first session" && assert_rc 0 "warden after /exit"
	fi
	note "first session's last screen: $(ui_shows)"
	note "first session's stderr: $(excerpt "$(cat "$T_TMP/first.err" 2>/dev/null)")"
	wardenc log show --event session.end --json
	grep -q '"event":"session.end"' <<<"$OUT" ||
		fail "first session: no session.end in its log: $(excerpt "$OUT$ERR")"
	net_expect "first session: the client's connection to the mock" method=tcp via=loopback \
		host=127.0.0.1 port="$MOCK_PORT" decision=allow
	net_events decision=deny &&
		fail "first session: the client tried destinations the profile refuses: $(excerpt "$NET_EVENTS")"
	tmux -S "$UI_SOCK" kill-server >/dev/null 2>&1

	# ---- the second session resumes the first (persistent agent state)
	[[ -d $state ]] || fail "resume: no per-agent state directory $state after the first session"
	ui_start second --continue
	if ui_wait "$UI_READY" 60 "resume: the second session's prompt"; then
		[[ -z ${UI_DIALOGS[*]} ]] ||
			fail "resume: first-run dialogs again (${UI_DIALOGS[*]}): ~/.claude.json did not persist"
		if ! { ui_has 'do the task' && ui_has 'Bash\(echo e2e-tty > marker\.txt\)' && ui_has '● done'; }; then
			fail "resume: claude --continue does not show the first session's conversation: $(ui_shows)"
		fi
		if ui_type "now the second task" "resume"; then
			local i
			for ((i = 0; i < 150; i++)); do
				grep -F '"/v1/messages' "$MOCK_LOG" | grep -F 'now the second task' | grep -F 'do the task' >/dev/null && break
				sleep 0.2
			done
			((i < 150)) ||
				fail "resume: the mock got no request carrying both the first and the second prompt"
			# the second reply: a second "● done" on the screen
			for ((i = 0; i < 300; i++)); do
				ui_capture
				(($(grep -c '● done' "$T_TMP/$UI_NAME.screen") >= 2)) && break
				sleep 0.2
			done
			((i < 300)) || fail "resume: no reply to the second prompt on the screen: $(ui_shows)"
			ui_exit "resume" && assert_rc 0 "warden after /exit (second session)"
		fi
	fi
	note "second session's last screen: $(ui_shows)"
	return 0
}

# `ANTHROPIC_API_KEY=… warden run -- claude` with no base URL, interactive:
# the default path. The mock stands in for api.anthropic.com and
# platform.claude.com (both names in /etc/hosts, at the test's namespace,
# on port 443, their certificate from a test CA the user trusts through
# NODE_EXTRA_CA_CERTS). The key is bound to the API host by default, so
# warden terminates TLS there and puts the real key in; inside, the client
# holds a phantom. The first session's onboarding asks whether to use the
# key ("Detected a custom API key", answered yes); the second session's
# phantom is another, but it ends the same way (the client remembers the
# approved key by its last 20 characters), so the client uses it without
# asking again. The only flags are the test's: the two public names resolve
# to a private address here.
test_claude_code_api_key_interactive() {
	local UI_WARDEN_ARGS
	nh_need_root
	nh_need openssl
	have tmux || skip "tmux not installed"
	command -v python3 >/dev/null || skip "python3 not installed (the mock needs it)"
	claude_install
	nh_netns
	nh_ca "$T_TMP/ca" "warden test CA $$"
	mkdir -p "$T_TMP/trust"
	local ca=$T_TMP/trust/test-ca.pem
	cp "$T_TMP/ca/ca.pem" "$ca"
	chmod -R a+rX "$T_TMP/trust"
	nh_cert_signed "$T_TMP/mock-tls" api.anthropic.com "DNS:api.anthropic.com,DNS:platform.claude.com" "$T_TMP/ca"
	MOCK_NS=$NH_NS mock_start "echo e2e-tty > marker.txt; env; cat /proc/[0-9]*/environ | tr '\\0' '\\n'" \
		--bind "$NH_IP" --port 443 --tls-cert "$T_TMP/mock-tls/cert.pem" \
		--tls-key "$T_TMP/mock-tls/key.pem" --keys "$T_TMP/mock.keys"
	nh_hosts_add api.anthropic.com "$NH_IP"
	nh_hosts_add platform.claude.com "$NH_IP"
	UI_ENV=(PATH="$CLAUDE_BIN:$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}"
		ANTHROPIC_API_KEY="$CLAUDE_KEY" NODE_EXTRA_CA_CERTS="$ca")
	UI_WARDEN_ARGS=(--allow-net 'api.anthropic.com:443 private' --allow-net 'platform.claude.com:443 private')
	UI_TIMEOUT=240

	ui_start first
	if ui_type "do the task" "first session"; then
		ui_wait '● done' 60 "first session: the mock's reply" &&
			note "first-run dialogs answered: ${UI_DIALOGS[*]}"
		[[ " ${UI_DIALOGS[*]} " == *" api-key "* ]] ||
			fail "first session: the client did not ask about the key (dialogs: ${UI_DIALOGS[*]})"
		ui_exit "first session" && assert_rc 0 "warden after /exit"
	fi
	tmux -S "$UI_SOCK" kill-server >/dev/null 2>&1
	local first_phantom
	first_phantom=$(grep -o 'ANTHROPIC_API_KEY=sk-ant-[A-Za-z0-9_-]*' "$MOCK_RESULTS" 2>/dev/null | head -n 1)
	: >"$MOCK_RESULTS"
	rm -f "$WS/marker.txt"

	ui_start second
	if ui_type "do the task" "second session"; then
		ui_wait '● done' 60 "second session: the mock's reply"
		[[ -z ${UI_DIALOGS[*]} || " ${UI_DIALOGS[*]} " != *" api-key "* ]] ||
			fail "second session: the client asked about the key again (dialogs: ${UI_DIALOGS[*]})"
		ui_exit "second session" && assert_rc 0 "warden after /exit (second session)"
	fi
	note "second session's last screen: $(ui_shows)"
	local second_phantom
	second_phantom=$(grep -o 'ANTHROPIC_API_KEY=sk-ant-[A-Za-z0-9_-]*' "$MOCK_RESULTS" 2>/dev/null | head -n 1)
	[[ -n $first_phantom && -n $second_phantom ]] ||
		fail "the tool's environment lacks the phantom: '$first_phantom' '$second_phantom'"
	[[ $first_phantom != "$second_phantom" ]] || fail "one phantom in both sessions: $first_phantom"
	[[ ${first_phantom: -20} == "${second_phantom: -20}" ]] ||
		fail "the phantoms end differently: $first_phantom $second_phantom"
	assert_host_file "$WS/marker.txt" e2e-tty "the Bash tool's marker (second session)"
	claude_check_key
}

# `warden shim install claude`: a plain `claude --version` in a new login
# shell runs inside warden with the agent profile (its session.start in the
# log names the agent); removing the shim puts PATH back as it was.
test_claude_shim() {
	claude_install
	{
		printf 'PATH="%s:$PATH"\n' "$CLAUDE_BIN"
		cat /etc/skel/.profile 2>/dev/null ||
			printf 'if [ -d "$HOME/.local/bin" ] ; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n'
	} >"$HOME/.profile"
	local lsh=(env -i HOME="$HOME" LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin bash -lc)
	local path_before out
	path_before=$(cd "$WS" && "${lsh[@]}" 'echo "$PATH"')
	wardenc shim install claude
	assert_rc 0 'shim install claude'
	out=$(cd "$WS" && timeout -k 5 "$WARDEN_TIMEOUT" "${lsh[@]}" 'claude --version' 2>&1 </dev/null)
	printf '$ claude --version\n%s\n' "$out"
	grep -q 'Claude Code' <<<"$out" || fail "claude --version through the shim: $(excerpt "$out")"
	local log
	log=$(latest_log)
	[[ -n $log ]] || fail 'no session log: claude did not run under warden'
	[[ -z $log ]] || grep '"event":"session.start"' "$log" | matches '"agent":{"name":"claude"' ||
		fail "session.start is not the claude profile's: $(excerpt "$(head -c 600 "$log")")"
	wardenc shim remove claude
	assert_rc 0 'shim remove claude'
	out=$(cd "$WS" && "${lsh[@]}" 'echo "$PATH"')
	[[ $out == "$path_before" ]] || fail "PATH after remove: $out; before: $path_before"
}
