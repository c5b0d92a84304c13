# t_hints.sh - a container engine or a GPU tool run inside, npm with the
# project's .npmrc masked, or Claude
# Code's worktree refused under .claude, gets one line at the session's end
# saying what warden does not offer and what to do, rather than only the
# tool's own "cannot connect" or EROFS; --quiet leaves it out. (The tools
# here are stand-ins by name: the hint reads the exec and file records.)
# shellcheck shell=bash

hint_tool() {
	mkdir -p "$WS/bin"
	printf '#!/bin/sh\necho "%s: cannot connect" >&2\nexit 1\n' "$1" >"$WS/bin/$1"
	chmod 0755 "$WS/bin/$1"
}

test_hint_container_engine() {
	hint_tool docker
	hint_tool podman
	wsh './bin/docker ps; ./bin/podman run x; ./bin/docker ps; true'
	assert_rc 0
	assert_err_match '^warden: docker ran inside: warden offers no container engine inside .*--publish PORT' 'the docker line'
	assert_err_match '^warden: podman ran inside: warden offers no container engine inside' 'the podman line'
	[[ $(grep -c 'docker ran inside' <<<"$ERR") == 1 ]] || fail "the docker line is not said once: $(excerpt "$ERR")"
	wsh './bin/docker ps; true' --quiet
	assert_out_lacks 'ran inside' 'stdout never has it'
	grep -q 'ran inside' <<<"$ERR" && fail "--quiet still says it: $(excerpt "$ERR")"
	wsh 'true'
	grep -q 'ran inside' <<<"$ERR" && fail "said when no such tool ran: $(excerpt "$ERR")"
	return 0
}

test_hint_gpu() {
	hint_tool nvidia-smi
	wsh './bin/nvidia-smi; true'
	assert_err_match '^warden: nvidia-smi ran inside: no GPU is inside the sandbox' 'the GPU line'
}

test_hint_claude_worktree() {
	# Claude Code's --worktree (or its EnterWorktree tool) makes
	# .claude/worktrees, which the protected .claude refuses with EROFS: one
	# line at the end says why and what works. Another refused write in
	# .claude does not bring it.
	wsh 'mkdir -p .claude/worktrees/feat; mkdir .claude/worktrees; true'
	assert_rc 0
	assert_err_match "^warden: Claude Code's worktree \(\.claude/worktrees\) was refused: .*warden run --task NAME -- claude" \
		'the worktree line'
	[[ $(grep -c "Claude Code's worktree" <<<"$ERR") == 1 ]] || fail "the line is not said once: $(excerpt "$ERR")"
	wsh 'echo {} > .claude/settings.json; mkdir .claude/worktreesX; true'
	[[ $ERR == *'refused during this session'* ]] || fail "the writes were not refused: $(excerpt "$ERR")"
	[[ $ERR != *"Claude Code's worktree"* ]] || fail "said for another write in .claude: $(excerpt "$ERR")"
	wsh 'mkdir -p .claude/worktrees/feat; true' --quiet
	[[ $ERR != *"Claude Code's worktree"* ]] || fail "--quiet still says it: $(excerpt "$ERR")"
}

# The project's .npmrc names a registry, and the default profile masks it
# (it may hold tokens): npm inside used the public registry with no word
# of why, and warden's refusal named registry.npmjs.org to allow. Said
# now, with what keeps the token out; not said without a registry line,
# nor once the profile unmasks it.
test_hint_npmrc_masked() {
	hint_tool npm
	printf 'registry=http://127.0.0.1:4873/\n' >.npmrc
	wsh './bin/npm install; true'
	assert_err_match "^warden: the workspace's .npmrc is masked .*unmask .npmrc" 'the .npmrc line'
	printf 'unmask .npmrc\n' >"$T_TMP/u.profile"
	wsh './bin/npm install; true' --profile "$T_TMP/u.profile"
	[[ $ERR != *'.npmrc is masked'* ]] || fail "said with .npmrc unmasked: $(excerpt "$ERR")"
	printf '//npm.example/:_authToken=x\n' >.npmrc
	wsh './bin/npm install; true'
	[[ $ERR != *'.npmrc is masked'* ]] || fail "said of a .npmrc with no registry: $(excerpt "$ERR")"
}

# A program that looks a name up itself (glibc with no /etc/resolv.conf:
# DNS at the sandbox's own 127.0.0.1:53) fails with only "could not
# resolve"; warden says why and what does reach out, once a session,
# however many lookups: the end's summary and a refused net event at port
# 53.
test_hint_dns_lookup() {
	wsh 'getent hosts example.com; echo "rc=$?"; getent hosts example.org; echo "rc=$?"'
	assert_out_line 'rc=2' 'the lookup failed'
	assert_err_match 'a program looked a name up itself, and the sandbox has no resolver: .*HTTPS_PROXY.*--allow-net HOST:22'
	[[ $(grep -c '"event":"net".*"port":53,' "$(latest_log)") == 1 ]] ||
		fail "not one net event for the lookups: $(grep '"event":"net"' "$(latest_log)")"
}
