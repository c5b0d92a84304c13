# t_shim.sh - `warden shim install|remove|list`: a client typed by name in a
# new login shell runs under warden once its shim is installed (its
# session.start is in the log), the real client is found past the shim,
# removing the shim leaves PATH as it was, and nothing but a shim is ever
# written over or removed. The real Claude Code through its shim is in
# t_agent_claude.sh (test_claude_shim).
# shellcheck shell=bash

# shim_client NAME: a client on a directory of its own ($T_TMP/bin, put on
# PATH by the fake HOME's ~/.profile before Debian's own lines, so that
# ~/.local/bin comes first as on a user's machine). It prints its
# arguments and what PID 1 is: warden-init inside the sandbox.
shim_client() {
	mkdir -p "$T_TMP/bin"
	printf '#!/bin/sh\necho "REAL $*"\ntr "\\0" " " </proc/1/cmdline; echo\n' >"$T_TMP/bin/$1"
	chmod 0755 "$T_TMP/bin/$1"
	{
		printf 'PATH="%s:$PATH"\n' "$T_TMP/bin"
		if [[ -r /etc/skel/.profile ]]; then
			cat /etc/skel/.profile
		else # Debian's lines, should skel lack them
			printf 'if [ -d "$HOME/.local/bin" ] ; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n'
		fi
	} >"$HOME/.profile"
}

# login_sh SCRIPT: SCRIPT in a new login shell of the fake HOME, in the
# workspace, as a user's terminal starts one. Sets OUT, RC.
login_sh() {
	OUT=$(cd "$WS" && timeout -k 5 "$WARDEN_TIMEOUT" env -i HOME="$HOME" LANG=C.UTF-8 \
		PATH=/usr/local/bin:/usr/bin:/bin bash -lc "$1" 2>&1 </dev/null)
	RC=$?
	printf '$ bash -lc %s\n-> rc=%s\n%s\n' "$1" "$RC" "$OUT"
}

nlogs() { find "$HOME/.local/state/warden" -maxdepth 1 -name '*.jsonl' 2>/dev/null | wc -l; }

test_shim_runs_sandboxed() {
	shim_client wshimtool
	login_sh 'echo "$PATH"'
	local path_before=$OUT
	[[ ! -e $HOME/.local/bin ]] || fatal "the fake HOME already has ~/.local/bin"
	wardenc shim install wshimtool
	assert_rc 0 'shim install'
	assert_out_has "$HOME/.local/bin/wshimtool" 'install names the shim'
	assert_out_has 'a new login shell puts it first' 'install says when PATH takes it'
	local before after
	before=$(nlogs)
	login_sh 'wshimtool hello there'
	assert_rc 0 'the client by name, through the shim'
	assert_out_has 'REAL hello there' 'the real client ran, past the shim'
	assert_out_has 'warden-init' 'inside warden'
	after=$(nlogs)
	((after == before + 1)) || fail "no new session log ($before before, $after after)"
	local log
	log=$(latest_log)
	grep '"event":"session.start"' "$log" | matches 'wshimtool' ||
		fail "session.start does not name the client: $(excerpt "$(head -c 400 "$log")")"
	wardenc shim list
	assert_out_match "^wshimtool +$HOME/.local/bin/wshimtool" 'list shows the shim'

	wardenc shim remove wshimtool
	assert_rc 0 'shim remove'
	[[ ! -e $HOME/.local/bin ]] || fail "~/.local/bin (made for the shim) is still there"
	login_sh 'echo "$PATH"'
	[[ $OUT == "$path_before" ]] || fail "PATH after remove: $OUT; before install: $path_before"
	before=$(nlogs)
	login_sh 'wshimtool again'
	assert_out_has 'REAL again' 'the client runs itself once the shim is gone'
	assert_out_lacks 'warden-init' 'no longer under warden'
	(($(nlogs) == before)) || fail "a session ran after the shim was removed"
}

test_shim_leaves_others_alone() {
	shim_client wshimtool
	mkdir -p "$HOME/.local/bin"
	printf '#!/bin/sh\necho mine\n' >"$HOME/.local/bin/wshimtool"
	chmod 0755 "$HOME/.local/bin/wshimtool"
	wardenc shim install wshimtool
	assert_rc 125 'install over a file that is not a shim'
	assert_err_match 'exists and is not a warden shim' 'says why'
	grep -q 'echo mine' "$HOME/.local/bin/wshimtool" || fail "the user's file was overwritten"
	wardenc shim remove wshimtool
	assert_rc 125 'remove of a file that is not a shim'
	[[ -f $HOME/.local/bin/wshimtool ]] || fail "the user's file was removed"
	wardenc shim remove wnosuchshim
	assert_rc 125 'remove of a shim that is not there'
	assert_err_match 'no shim wnosuchshim' 'says which'
	[[ -d $HOME/.local/bin ]] || fail "~/.local/bin, the user's own, was removed"
	local bad
	for bad in ../x -x .hidden 'a b' warden; do
		wardenc shim install -- "$bad"
		assert_rc 125 "install '$bad'"
		assert_err_match 'not a command name a shim can take' "install '$bad' says why"
	done
	wardenc shim install
	assert_rc 2 'install with no name'
	wardenc shim bogus
	assert_rc 2 'an unknown subcommand'
	if ! is_root; then
		wardenc shim install --system wshimtool
		assert_rc 125 '--system as a user'
		assert_err_match 'run it as root' '--system says who may'
	fi
}

test_shim_alone_on_path() {
	mkdir -p "$T_TMP/shims"
	wardenc shim install --dir "$T_TMP/shims" wshimonly
	assert_rc 0 'install into --dir'
	assert_out_has 'is not on PATH' 'install says the directory is not on PATH'
	PATH=$T_TMP/shims:$PATH wrun -- wshimonly
	assert_rc 125 'the shim with no client past it'
	assert_err_match "the only wshimonly on PATH is warden's shim" 'says so'
	wrun -- "$T_TMP/shims/wshimonly"
	assert_rc 125 'the shim run by its path'
	assert_err_match "is warden's shim, not the client" 'says so'
	((RC == 125)) && [[ ! -e $WS/.ran ]] || fail 'the shim ran'
}
