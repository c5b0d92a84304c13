# t_tree.sh - every repository and tool configuration in the workspace, at
# any depth: protected names in subprojects, other agents' and editors'
# settings, nested repositories present at start, .git files, secrets inside
# .git, and directories made to look like bare repositories during the
# session (src/workspace/workspace.c, src/policy/builtin.c).
# shellcheck shell=bash

# tree_alert RULE PATH: the latest session's log has an alert of RULE for
# PATH (workspace-relative).
tree_alert() {
	local rule=$1 path=$2 saved_out=${OUT-} saved_err=${ERR-} saved_rc=${RC-}
	wardenc log show --event alert --json
	grep -F "\"path\":\"$path\"" <<<"$OUT" | grep -F "\"rule\":\"$rule\"" >/dev/null ||
		fail "no $rule alert for $path in the log: $(excerpt "$OUT")"
	OUT=$saved_out ERR=$saved_err RC=$saved_rc
}

test_protected_any_depth() {
	# The protected names apply in subprojects too: present at start they
	# are read-only (and cannot be renamed away); made during the session
	# they are moved aside at the end, each with an alert.
	mkdir -p packages/app/.vscode packages/app/.claude packages/lib
	echo '{"host":1}' >packages/app/.vscode/tasks.json
	echo '{"host":2}' >packages/app/.claude/settings.json
	echo 'export HOST=3' >packages/app/.envrc
	wbatch 'tasks|write packages/app/.vscode/tasks.json' 'newtask|write packages/app/.vscode/launch.json' \
		'settings|write packages/app/.claude/settings.json' 'envrc|write packages/app/.envrc' \
		'ok|write packages/app/ok.txt'
	for p in tasks newtask settings envrc; do
		bexpect "$p" denied EROFS,EACCES,EPERM
	done
	bexpect ok allowed
	wsh 'mv packages/app/.vscode packages/app/v2 2>/dev/null && echo moved-vscode
	     rm -rf packages/app/.claude 2>/dev/null; mv packages/app packages/app2 2>/dev/null && echo moved-app
	     mkdir -p packages/lib/.vscode && echo "{\"agent\":1}" > packages/lib/.vscode/tasks.json &&
	     echo "export AGENT=1" > packages/lib/.envrc && echo planted; true'
	assert_out_lacks moved-vscode 'a protected directory in a subproject was renamed'
	assert_out_lacks moved-app 'the directory above a protected one was renamed'
	assert_out_has planted
	assert_host_file packages/app/.vscode/tasks.json '{"host":1}' 'tasks.json in a subproject'
	assert_host_file packages/app/.claude/settings.json '{"host":2}' 'settings.json in a subproject'
	assert_host_file packages/app/.envrc 'export HOST=3' '.envrc in a subproject'
	assert_host_absent packages/lib/.vscode 'a .vscode the agent made in a subproject stayed in place'
	assert_host_absent packages/lib/.envrc 'an .envrc the agent made in a subproject stayed in place'
	compgen -G 'packages/lib/.vscode.warden-quarantine-*' >/dev/null ||
		fail "the agent's .vscode was not moved aside: $(ls -a packages/lib)"
	[[ $ERR == *"packages/lib/.envrc, a configuration that tools on your host read"* ]] ||
		fail "no word on stderr about the moved .envrc: $(excerpt "$ERR")"
	tree_alert config.created-in-sandbox packages/lib/.vscode
	tree_alert config.created-in-sandbox packages/lib/.envrc
}

test_protected_other_agents() {
	# Other agents' and editors' workspace settings that start commands or
	# MCP servers on the host: read-only when present, not creatable when
	# missing.
	mkdir -p .cursor && echo '{"mcpServers":{}}' >.cursor/mcp.json
	local names=(.gemini .codex .devcontainer .zed .windsurf .continue .amazonq .roo) n specs=()
	for n in "${names[@]}"; do
		specs+=("${n#.}|write $n/settings.json")
	done
	WBATCH_PRE="mkdir -p ${names[*]} 2>/dev/null" wbatch "${specs[@]}" 'cursor|write .cursor/mcp.json' \
		'cursornew|write .cursor/rules' 'devjson|write .devcontainer.json' 'ok|write ok.txt'
	for n in "${names[@]}" .cursor .cursornew .devjson; do
		bexpect "${n#.}" denied
	done
	bexpect ok allowed
	assert_host_file .cursor/mcp.json '{"mcpServers":{}}' '.cursor/mcp.json'
	for n in "${names[@]}" .devcontainer.json; do
		assert_host_absent "$n" 'placeholder left behind (or made by the agent)'
	done
}

test_nested_repo_protected() {
	# A repository nested in the workspace at start (a vendored one) has its
	# hooks and config protected like the top one's, a missing hooks
	# directory included.
	have git || skip 'git not installed'
	{ git init -q vendor/lib && git init -q vendor/bare-hooks; } || fatal 'git init on the host failed'
	rm -rf vendor/bare-hooks/.git/hooks
	local cfg
	cfg=$(cksum <vendor/lib/.git/config)
	WBATCH_PRE='mkdir -p vendor/bare-hooks/.git/hooks 2>/dev/null' wbatch --profile "$(no_detect_actions)" -- \
		'hook|write vendor/lib/.git/hooks/pre-commit' 'config|write vendor/lib/.git/config' \
		'missing|write vendor/bare-hooks/.git/hooks/pre-commit' 'desc|write vendor/lib/.git/description'
	bexpect hook denied EROFS,EACCES,EPERM
	bexpect config denied EROFS,EACCES,EPERM
	bexpect missing denied
	bexpect desc allowed
	assert_host_absent vendor/lib/.git/hooks/pre-commit
	assert_host_absent vendor/bare-hooks/.git/hooks 'placeholder left in the nested repository'
	[[ $(cksum <vendor/lib/.git/config) == "$cfg" ]] || fail 'the nested .git/config changed on the host'
}

test_git_file_readonly() {
	# A .git file (a submodule's, a worktree's: "gitdir: PATH") tells git
	# where the repository is; the agent must not point it elsewhere.
	mkdir sub
	echo 'gitdir: ../.git/modules/sub' >sub/.git
	echo 'gitdir: /nonexistent/worktrees/w' >.git
	wbatch 'sub|write sub/.git' 'top|write .git'
	bexpect sub denied EROFS,EACCES,EPERM
	bexpect top denied EROFS,EACCES,EPERM
	wsh 'rm -f sub/.git .git 2>/dev/null; mv sub/.git sub/old 2>/dev/null; mv sub sub2 2>/dev/null
	     echo "gitdir: /tmp/evil" > sub/.git 2>/dev/null; echo "gitdir: /tmp/evil" > .git 2>/dev/null; echo finished'
	assert_out_has finished
	assert_host_file sub/.git 'gitdir: ../.git/modules/sub' 'the submodule .git file'
	assert_host_file .git 'gitdir: /nonexistent/worktrees/w' 'the top .git file'
}

test_git_bare_lookalike() {
	# A directory the agent makes look like a repository (HEAD, objects/,
	# refs/: git takes it for a bare one and runs its config and hooks) is
	# defused after the session: its HEAD moved aside, with an alert. One
	# there at start stays, its hooks protected.
	have git || skip 'git not installed'
	git init -q --bare keep.git || fatal 'git init --bare on the host failed'
	local mark="$T_TMP/pwned"
	wsh "mkdir -p fake/objects fake/refs && echo 'ref: refs/heads/main' > fake/HEAD &&
	     printf '[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = touch $mark #\n' > fake/config &&
	     mkdir objects refs && echo 'ref: refs/heads/main' > HEAD && echo planted;
	     echo x > keep.git/hooks/pre-receive 2>/dev/null && echo hook-written; true"
	assert_out_has planted
	assert_out_lacks hook-written 'a hook of a bare repository present at start was written'
	assert_host_absent fake/HEAD 'the lookalike kept its HEAD'
	assert_host_absent HEAD 'the workspace made a lookalike kept its HEAD'
	compgen -G 'fake/HEAD.warden-quarantine-*' >/dev/null || fail "fake/HEAD was not moved aside: $(ls -a fake)"
	[[ -f keep.git/HEAD ]] || fail 'the bare repository present at start lost its HEAD'
	(cd fake && git status >/dev/null 2>&1)
	assert_host_absent "$mark" "the lookalike's core.fsmonitor ran on the host"
	tree_alert git.bare-created-in-sandbox fake/HEAD
	tree_alert git.bare-created-in-sandbox HEAD
}

test_masked_inside_git() {
	# Secret names inside .git are masked like anywhere else.
	have git || skip 'git not installed'
	git init -q . || fatal 'git init on the host failed'
	echo SECRET-CRED >.git/.git-credentials
	mkdir -p .git/keys && echo SECRET-KEY >.git/keys/deploy.key
	wbatch 'cred|read .git/.git-credentials' 'key|read .git/keys/deploy.key' 'head|read .git/HEAD'
	bexpect cred denied EACCES
	bexpect key denied EACCES
	bexpect head allowed
	assert_host_file .git/.git-credentials SECRET-CRED '.git/.git-credentials on the host'
}

test_hooks_path_protected() {
	# The directory a repository's core.hooksPath names (.githooks, .husky)
	# is where the host's git finds the hooks it runs: read-only when it is
	# there, and not to be made when it is not (a placeholder holds its
	# first missing part). Also for a nested repository.
	have git || skip 'git not installed'
	{ git init -q . && git config core.hooksPath .githooks && mkdir .githooks &&
		git init -q vendor/x && git -C vendor/x config core.hooksPath '.husky/_'; } ||
		fatal 'git on the host failed'
	wbatch 'top|write .githooks/pre-commit' 'nested|mkdir vendor/x/.husky' \
		'other|write notes.txt'
	bexpect top denied EROFS,EACCES,EPERM
	bexpect nested denied
	bexpect other allowed
	assert_host_absent .githooks/pre-commit
	assert_host_absent vendor/x/.husky 'the placeholder, after the session'
}

test_hooks_husky_scripts_protected() {
	# husky 9 sets core.hooksPath .husky/_, whose hooks run the script of
	# their name one directory up (.husky/pre-commit): that directory is
	# protected too, its scripts and the names not there yet. The refusal
	# is on the record.
	have git || skip 'git not installed'
	{ git init -q . && git config core.hooksPath .husky/_ && mkdir -p .husky/_ &&
		echo 'exec sh -e "$(dirname "$(dirname "$0")")/$(basename "$0")"' > .husky/_/h &&
		echo 'npm test' > .husky/pre-commit; } || fatal 'git on the host failed'
	wbatch 'script|write .husky/pre-commit' 'new|write .husky/pre-push' 'other|write notes.txt'
	bexpect script denied EROFS,EACCES,EPERM
	bexpect new denied EROFS,EACCES,EPERM
	bexpect other allowed
	assert_host_file .husky/pre-commit 'npm test'
	assert_host_absent .husky/pre-push
	wardenc log show --event file --json
	matches -F "\"path\":\"$PWD/.husky/pre-commit\"" <<<"$OUT" ||
		fail "the refused write is not on the record: $(excerpt "$OUT")"
}

test_pre_commit_config_protected() {
	# A pre-commit hook (pre-commit's own template) runs what its
	# configuration says, from the working tree: that file (the hook's
	# --config=, here quoted as pre-commit may write it) is protected like the
	# hook, held by a placeholder when missing; a hook of another kind
	# protects nothing more.
	have git || skip 'git not installed'
	git init -q . || fatal 'git init failed'
	printf '%s\n' '#!/usr/bin/env bash' '# File generated by pre-commit: https://pre-commit.com' \
		"ARGS=(hook-impl '--config=ci/pc.yaml' --hook-type=pre-commit)" \
		>.git/hooks/pre-commit && mkdir ci && echo 'repos: []' >ci/pc.yaml ||
		fatal 'could not install the hook'
	wbatch 'cfg|write ci/pc.yaml' 'default|write .pre-commit-config.yaml'
	bexpect cfg denied EROFS,EACCES,EPERM
	bexpect default allowed
	assert_host_file ci/pc.yaml 'repos: []'
	rm .pre-commit-config.yaml
	printf '%s\n' '#!/bin/sh' '# File generated by pre-commit: https://pre-commit.com' \
		'ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-push)' \
		>.git/hooks/pre-push || fatal 'could not install the second hook'
	wbatch 'missing|write .pre-commit-config.yaml'
	bexpect missing denied
	assert_host_absent .pre-commit-config.yaml 'the placeholder, after the session'
}

test_gitfile_target_protected() {
	# A .git file names the repository ("gitdir: PATH", as git init
	# --separate-git-dir, submodules and worktrees write it): that
	# repository's hooks and config are protected like the top one's, and
	# its core.hooksPath is taken from the working tree the .git file is in.
	have git || skip 'git not installed'
	{ mkdir store && git init -q --separate-git-dir=store/sub.git sub &&
		git -C sub config core.hooksPath hooks-here && mkdir sub/hooks-here; } ||
		fatal 'git init --separate-git-dir on the host failed'
	local cfg
	cfg=$(cksum <store/sub.git/config)
	wbatch 'hook|write store/sub.git/hooks/pre-commit' 'cfg|write store/sub.git/config' \
		'hookspath|write sub/hooks-here/pre-commit'
	bexpect hook denied EROFS,EACCES,EPERM
	bexpect cfg denied EROFS,EACCES,EPERM
	bexpect hookspath denied EROFS,EACCES,EPERM
	assert_host_absent store/sub.git/hooks/pre-commit
	assert_host_absent sub/hooks-here/pre-commit
	[[ $(cksum <store/sub.git/config) == "$cfg" ]] || fail "the repository's config changed on the host"
}

# tree_git_hooks_path [DIR]: core.hooksPath as the host's git takes it in
# DIR (every value, includes followed), one a line.
tree_git_hooks_path() {
	git -C "${1:-.}" config --includes --get-all core.hooksPath 2>/dev/null
}

# tree_file_event PATH: the latest session's log has a write intent on
# PATH (workspace-relative) in it (`audit files`: a write the read-only
# mount refused leaves no other trace, doc/audit-log.md "Which refusals
# are on the record").
tree_file_event() {
	local path=$1 saved_out=${OUT-} saved_err=${ERR-} saved_rc=${RC-}
	wardenc log show --event file --json
	grep -qF "\"path\":\"$WS/$path\"" <<<"$OUT" || fail "no file event for $path in the log: $(excerpt "$OUT")"
	OUT=$saved_out ERR=$saved_err RC=$saved_rc
}

test_hooks_path_include() {
	# core.hooksPath set in a file the repository's config includes
	# (include.path: relative to the including file's directory, "~/"
	# from the home directory, absolute): the hooks directory is
	# protected, and so is the included file, which the host's git reads
	# as configuration. The agent's writes fail, and with `audit files`
	# each attempt is on the record.
	have git || skip 'git not installed'
	{ git init -q . && mkdir .githooks more &&
		printf '[include]\n\tpath = ../.gitconfig-hooks\n[include]\n\tpath = ~/../%s/more/tilde.cfg\n' \
			"${WS##*/}" >>.git/config &&
		printf '[core]\n\thooksPath = .githooks\n[include]\n\tpath = %s/more/abs.cfg\n' "$WS" >.gitconfig-hooks &&
		printf '[core]\n\thooksPath = tilde-hooks\n' >more/tilde.cfg &&
		printf '[core]\n\thooksPath = abs-hooks\n' >more/abs.cfg; } || fatal 'git on the host failed'
	[[ $(tree_git_hooks_path | tr '\n' ' ') == '.githooks abs-hooks tilde-hooks ' ]] ||
		fatal "the host's git does not take the included hooksPath: $(tree_git_hooks_path)"
	printf 'audit files\n' >"$T_TMP/files.profile"
	wbatch --profile "$T_TMP/files.profile" -- 'hook|write .githooks/pre-commit' \
		'cfg|write .gitconfig-hooks' 'tilde|mkdir tilde-hooks' 'tildecfg|write more/tilde.cfg' \
		'abs|mkdir abs-hooks' 'abscfg|write more/abs.cfg' 'other|write notes.txt'
	bexpect hook denied EROFS,EACCES,EPERM
	for p in cfg tildecfg abscfg; do
		bexpect $p denied EROFS,EACCES,EPERM
	done
	bexpect tilde denied
	bexpect abs denied
	bexpect other allowed
	assert_host_absent .githooks/pre-commit
	assert_host_absent tilde-hooks 'the placeholder, after the session'
	assert_host_absent abs-hooks 'the placeholder, after the session'
	[[ $(<.gitconfig-hooks) == '[core]'* ]] || fail "the included configuration changed: $(excerpt "$(<.gitconfig-hooks)")"
	assert_host_file more/tilde.cfg $'[core]\n\thooksPath = tilde-hooks' 'the configuration included by ~/'
	tree_file_event .githooks/pre-commit
	tree_file_event .gitconfig-hooks
}

test_hooks_path_include_writable_outside() {
	# An include outside the workspace is not read (the host's file, out
	# of the sandbox's reach); one where the sandbox can write (an
	# --output outside the workspace) would let the agent set the host's
	# git running its commands: the session is refused.
	have git || skip 'git not installed'
	mkdir -p "$T_TMP/out" "$T_TMP/elsewhere"
	{ git init -q . && printf '[include]\n\tpath = %s/elsewhere/x.cfg\n' "$T_TMP" >>.git/config; } ||
		fatal 'git on the host failed'
	wrun --output "$T_TMP/out" -- echo ran-outside-include
	assert_rc 0
	assert_out_has ran-outside-include
	printf '[include]\n\tpath = %s/out/git.cfg\n' "$T_TMP" >>.git/config
	wrun --output "$T_TMP/out" -- echo ran
	assert_rc_nonzero 'a session whose repository includes a file in an --output'
	assert_out_lacks ran
	[[ $ERR == *"includes $T_TMP/out/git.cfg, which the sandbox can write (--output)"* ]] ||
		fail "no reason on stderr: $(excerpt "$ERR")"
	assert_host_absent "$T_TMP/out/git.cfg"
}

test_hooks_path_writable_outside() {
	# A core.hooksPath outside the workspace where the sandbox can write
	# (an --output): the agent would choose what the host's git runs, so
	# the session is refused; one the sandbox cannot write is left alone.
	have git || skip 'git not installed'
	mkdir -p "$T_TMP/out/hooks" "$T_TMP/elsewhere"
	{ git init -q . && git config core.hooksPath "$T_TMP/elsewhere"; } || fatal 'git on the host failed'
	wrun --output "$T_TMP/out" -- echo ran-elsewhere
	assert_rc 0
	assert_out_has ran-elsewhere
	git config core.hooksPath "$T_TMP/out/hooks"
	wrun --output "$T_TMP/out" -- sh -c "echo ran; echo x > $T_TMP/out/hooks/pre-commit"
	assert_rc_nonzero 'a session whose hooksPath is in an --output'
	assert_out_lacks ran
	[[ $ERR == *"names $T_TMP/out/hooks as core.hooksPath, which the sandbox can write (--output)"* ]] ||
		fail "no reason on stderr: $(excerpt "$ERR")"
	assert_host_absent "$T_TMP/out/hooks/pre-commit"
}

test_hooks_path_include_if() {
	# includeIf's files count whatever their condition says now: the
	# branch and the repository's place can change after the session.
	# Their hooks directories, missing here, cannot be made.
	have git || skip 'git not installed'
	{ git init -q . && printf '%s\n' '[includeIf "onbranch:release/**"]' '	path = ../ci/release.cfg' \
		'[includeIf "gitdir:/nowhere/"]' '	path = ../ci/moved.cfg' >>.git/config && mkdir ci &&
		printf '[core]\n\thooksPath = release-hooks\n' >ci/release.cfg &&
		printf '[core]\n\thooksPath = "moved-hooks"/x # a comment\n' >ci/moved.cfg; } ||
		fatal 'git on the host failed'
	git checkout -q -b release/1 && [[ $(tree_git_hooks_path) == release-hooks ]] ||
		fatal "the host's git does not take the includeIf hooksPath on release/1"
	git checkout -q -b main || fatal 'git checkout on the host failed'
	wbatch 'release|mkdir release-hooks' 'moved|mkdir moved-hooks' \
		'cfg|write ci/release.cfg' 'other|write ci/notes.txt'
	bexpect release denied
	bexpect moved denied
	bexpect cfg denied EROFS,EACCES,EPERM
	bexpect other allowed
	assert_host_absent release-hooks 'the placeholder, after the session'
	assert_host_absent moved-hooks 'the placeholder, after the session'
}

test_hooks_path_include_nested() {
	# Includes of includes, relative to each including file, as deep as
	# git goes (10): the last one's core.hooksPath is protected, and every
	# file on the way is read-only.
	have git || skip 'git not installed'
	{ git init -q . && printf '[include]\n\tpath = ../conf/c1.cfg\n' >>.git/config; } ||
		fatal 'git init on the host failed'
	local i dir=conf
	mkdir -p conf
	for i in 1 2 3 4 5 6 7 8 9; do
		# each one in the directory below the one before
		mkdir -p "$dir/d$i"
		printf '[include]\n\tpath = d%s/c%s.cfg\n' "$i" "$((i + 1))" >"$dir/c$i.cfg"
		dir+=/d$i
	done
	printf '[core]\n\thooksPath = deep-hooks\n' >"$dir/c10.cfg"
	mkdir deep-hooks
	[[ $(tree_git_hooks_path) == deep-hooks ]] ||
		fatal "the host's git does not take the hooksPath 10 includes deep: $(tree_git_hooks_path)"
	wbatch 'hook|write deep-hooks/pre-push' 'c1|write conf/c1.cfg' \
		"c10|write $dir/c10.cfg" 'other|write conf/notes.txt'
	bexpect hook denied EROFS,EACCES,EPERM
	bexpect c1 denied EROFS,EACCES,EPERM
	bexpect c10 denied EROFS,EACCES,EPERM
	bexpect other allowed
	assert_host_absent deep-hooks/pre-push
}

test_hooks_path_include_loop() {
	# Files that include each other: git refuses such a configuration;
	# warden reads each once, says so, protects the hooksPath they name,
	# and the session runs.
	have git || skip 'git not installed'
	{ git init -q . && printf '[include]\n\tpath = ../a.cfg\n' >>.git/config &&
		printf '[include]\n\tpath = b.cfg\n' >a.cfg &&
		printf '[core]\n\thooksPath = loop-hooks\n[include]\n\tpath = ./a.cfg\n' >b.cfg &&
		mkdir loop-hooks; } || fatal 'git on the host failed'
	git status >/dev/null 2>&1 && fatal "the host's git took a configuration that includes itself"
	wbatch 'hook|write loop-hooks/pre-commit' 'other|write notes.txt'
	assert_rc 0
	bexpect hook denied EROFS,EACCES,EPERM
	bexpect other allowed
	[[ $ERR == *"a.cfg, which includes it again"* ]] || fail "no word on stderr about the loop: $(excerpt "$ERR")"
	assert_host_absent loop-hooks/pre-commit
}

test_hooks_path_include_missing() {
	# An include of a file that does not exist (git skips it): the agent
	# must not make it, or the host's git would take its settings. A
	# placeholder holds it for the session (git stops at it, and warden
	# says so); a missing directory on its way is held instead, which git
	# skips.
	have git || skip 'git not installed'
	{ git init -q . && printf '%s\n' '[include]' '	path = ../local.cfg' \
		'[includeIf "onbranch:x"]' '	path = ../cfgdir/x.cfg' >>.git/config; } ||
		fatal 'git on the host failed'
	git status >/dev/null || fatal "the host's git does not skip a missing include"
	wbatch 'local|write local.cfg' 'dir|mkdir cfgdir' 'other|write notes.txt'
	bexpect local denied
	bexpect dir denied
	bexpect other allowed
	[[ $ERR == *"includes local.cfg, which does not exist"* ]] ||
		fail "no word on stderr about the missing include: $(excerpt "$ERR")"
	[[ $ERR != *"cfgdir/x.cfg, which does not exist"* ]] ||
		fail "a missing directory, which git passes by, said to stop git: $(excerpt "$ERR")"
	assert_host_absent local.cfg 'the placeholder, after the session'
	assert_host_absent cfgdir 'the placeholder, after the session'
	git status >/dev/null || fail "the host's git fails after the session"
}

test_worktree_gitdir_readonly() {
	# A linked worktree in the workspace: its .git file names
	# .git/worktrees/NAME, whose commondir (and config.worktree, when the
	# repository reads one) redirect the host's git. .git/worktrees and
	# NAME are pinned and writable (a commit in the worktree, `git worktree
	# add`); commondir stays read-only, the gitdir's hooks are held; a
	# config.worktree made there is moved aside at the end; with
	# extensions.worktreeConfig on, the whole of .git/worktrees stays
	# read-only, as does the administrative directory of a worktree outside
	# the workspace. The repository's relative core.hooksPath names a
	# directory in the linked worktree too, where git runs hooks for a
	# commit there.
	have git || skip 'git not installed'
	{ git init -q . && git -c user.name=t -c user.email=t@t.invalid commit -q --allow-empty -m start &&
		git worktree add -q wt && git worktree add -q "$T_TMP/out" && git config core.hooksPath .githooks; } ||
		fatal 'git worktree add on the host failed'
	[[ $(git -C wt rev-parse --git-path hooks) == .githooks ]] ||
		fatal "git does not look for the worktree's hooks in wt/.githooks: $(git -C wt rev-parse --git-path hooks)"
	[[ -f .git/worktrees/wt/commondir ]] || fatal 'git worktree add made no .git/worktrees/wt/commondir'
	local common
	common=$(<.git/worktrees/wt/commondir)
	wbatch --profile "$(no_detect_actions)" -- 'commondir|write .git/worktrees/wt/commondir' \
		'cfg|write .git/worktrees/wt/config.worktree' \
		'hook|write .git/worktrees/wt/hooks/post-checkout' 'wthooks|mkdir wt/.githooks' \
		'other|write wt/notes.txt' 'head|write .git/worktrees/wt/ORIG_HEAD' \
		'outside|write .git/worktrees/out/ORIG_HEAD'
	bexpect wthooks denied
	bexpect commondir denied EROFS,EACCES,EPERM
	bexpect cfg allowed
	bexpect hook denied
	bexpect other allowed
	bexpect head allowed
	bexpect outside denied EROFS,EACCES,EPERM
	assert_host_file .git/worktrees/wt/commondir "$common" "the worktree's commondir"
	assert_host_absent .git/worktrees/wt/config.worktree 'the config.worktree made inside, after the session'
	assert_err_match 'created .*/\.git/worktrees/wt/config\.worktree; .* moved to'
	assert_host_absent wt/.githooks 'the placeholder, after the session'

	git config extensions.worktreeConfig true || fatal 'git config failed'
	wbatch 'cfg|write .git/worktrees/wt/config.worktree' 'head|write .git/worktrees/wt/ORIG_HEAD'
	bexpect cfg denied EROFS,EACCES,EPERM
	bexpect head denied EROFS,EACCES,EPERM
}

test_hooks_path_top() {
	# A core.hooksPath naming the workspace's top ("." here, ".." from a
	# repository one level down): the top stays writable, but no name git
	# runs as a hook can be made or changed there; an existing hook stays
	# read-only.
	have git || skip 'git not installed'
	{ git init -q . && git config core.hooksPath . && mkdir sub && git -C sub init -q . &&
		git -C sub config core.hooksPath .. && printf 'host\n' >pre-push; } ||
		fatal 'git on the host failed'
	[[ $(tree_git_hooks_path) == . ]] || fatal "the host's git does not take hooksPath '.'"
	wbatch 'commit|write pre-commit' 'checkout|write post-checkout' 'push|write pre-push' \
		'other|write notes.txt'
	bexpect commit denied EROFS,EACCES,EPERM,ENOTDIR,EISDIR,ENXIO
	bexpect checkout denied EROFS,EACCES,EPERM,ENOTDIR,EISDIR,ENXIO
	bexpect push denied EROFS,EACCES,EPERM
	bexpect other allowed
	assert_host_absent pre-commit
	assert_host_absent post-checkout
	assert_host_file pre-push host
}

test_hooks_path_global() {
	# A core.hooksPath in the user's own git configuration (global, here
	# through a file ~/.gitconfig includes) applies to every repository: a
	# relative one names a directory in each repository's top, which the
	# agent must not fill. The repository itself sets nothing.
	have git || skip 'git not installed'
	git init -q . || fatal 'git init on the host failed'
	printf '[include]\n\tpath = .gitconfig.local\n' >"$HOME/.gitconfig"
	printf '[core]\n\thooksPath = .githooks\n' >"$HOME/.gitconfig.local"
	[[ $(git config --get core.hooksPath) == .githooks ]] ||
		fatal "the host's git does not take the global hooksPath"
	wbatch 'dir|mkdir .githooks' 'hook|write .githooks/pre-commit' 'other|write notes.txt'
	bexpect dir denied EEXIST,EROFS,EACCES,EPERM
	bexpect hook denied EROFS,EACCES,EPERM,ENOTDIR
	bexpect other allowed
	assert_host_absent .githooks/pre-commit
}

test_hooks_path_in_masked_dir() {
	# A hooksPath, or an included configuration, inside a masked
	# directory: out of the sandbox's sight already (an empty tmpfs in its
	# place), so nothing is mounted below the mask and the session starts.
	have git || skip 'git not installed'
	{ git init -q . && mkdir -p certs.pem/hooks && git config core.hooksPath certs.pem/hooks &&
		printf '[include]\n\tpath = ../certs.pem/git.cfg\n' >>.git/config &&
		printf '[core]\n\thooksPath = certs.pem/more\n' >certs.pem/git.cfg; } ||
		fatal 'git on the host failed'
	wsh 'ls certs.pem >/dev/null 2>&1 || echo hidden; echo x > certs.pem/hooks/pre-commit 2>/dev/null || echo refused; echo started'
	assert_rc 0
	assert_out_has started
	assert_out_has hidden
	assert_host_absent certs.pem/hooks/pre-commit
	assert_host_absent certs.pem/more 'a placeholder made in the masked directory'
}

test_hooks_path_include_via_link() {
	# An included configuration, or the hooks directory, reached through a
	# symbolic link in the workspace: the target is protected; the link
	# cannot be bound read-only, so what replaced it is moved aside after
	# the session, with an alert. A link left alone stays.
	have git || skip 'git not installed'
	{ git init -q . && mkdir -p conf shared/hooks && ln -s conf/real.cfg hooks.cfg && ln -s shared/hooks hooks-link &&
		ln -s conf/other.cfg other.cfg &&
		printf '[include]\n\tpath = ../hooks.cfg\n[include]\n\tpath = ../other.cfg\n' >>.git/config &&
		printf '[core]\n\thooksPath = hooks-link\n' >conf/real.cfg && printf '[user]\n\tname = x\n' >conf/other.cfg; } ||
		fatal 'git on the host failed'
	[[ $(tree_git_hooks_path) == hooks-link ]] || fatal "the host's git does not take the hooksPath: $(tree_git_hooks_path)"
	wsh 'echo x > conf/real.cfg 2>/dev/null && echo wrote-real; echo x > shared/hooks/pre-commit 2>/dev/null && echo wrote-hook
	     rm -f hooks.cfg hooks-link && printf "[core]\n\thooksPath = evil\n" > hooks.cfg && mkdir hooks-link &&
	     echo "#!/bin/sh" > hooks-link/pre-commit && echo replaced'
	assert_out_lacks wrote-real 'the included configuration behind the link was written'
	assert_out_lacks wrote-hook 'the hooks directory behind the link was written'
	assert_out_has replaced
	[[ -L other.cfg ]] || fail 'a link left alone was moved'
	[[ ! -e hooks.cfg || -L hooks.cfg ]] || fail "the agent's hooks.cfg stayed in place"
	[[ ! -e hooks-link || -L hooks-link ]] || fail "the agent's hooks-link stayed in place"
	compgen -G 'hooks.cfg.warden-quarantine-*' >/dev/null || fail "the agent's hooks.cfg was not moved aside: $(ls -a)"
	[[ $(tree_git_hooks_path) != evil ]] || fail "the host's git takes the agent's hooksPath"
	tree_alert config.created-in-sandbox hooks.cfg
	tree_alert config.created-in-sandbox hooks-link
}

# A workspace that is a linked worktree of a repository outside it (`git
# worktree add ../wt`, a session started inside `claude --worktree`'s):
# the repository is shown inside as a --task's is (src/session/task.c),
# its refs writable as a repository's own are in a workspace, so git
# works and a commit lands on the worktree's branch; its hooks, config,
# info and other worktrees stay read-only, nothing can be planted beside
# them (commondir, modules), the view goes with the session. With
# --read-only nothing of the repository is writable: git fails inside, and
# warden says why at the start, naming where to run instead.
test_linked_worktree() {
	have git || skip 'git not installed'
	local main="$T_TMP/main"
	{ git init -q -b main "$main" &&
		git -C "$main" -c user.name=h -c user.email=h@example.invalid commit -q --allow-empty -m first &&
		git -C "$main" worktree add -q "$WS/wt" -b feat; } || fatal 'git worktree add on the host failed'
	local cfg
	cfg=$(cksum <"$main/.git/config")
	# a view left by a session that was killed (no such pid runs)
	mkdir -p "$HOME/.local/state/warden/gitviews/2147483640/refs"
	cd "$WS/wt" || fatal 'no worktree'
	wsh "echo a > a.txt && git add a.txt && git -c user.name=a -c user.email=a@example.invalid commit -qm in-worktree;
	     echo \"commit=\$?\"; git status --short | grep -v wprobe; git worktree list | wc -l
	     echo x > $main/.git/hooks/pre-commit; echo \"hook=\$?\"
	     echo x >> $main/.git/config; echo \"config=\$?\"
	     echo ../x > $main/.git/commondir; echo \"commondir=\$?\"
	     mkdir $main/.git/modules; echo \"modules=\$?\"
	     echo x > $main/.git/info/attributes; echo \"info=\$?\"
	     echo x > $main/.git/worktrees/wt/commondir; echo \"own=\$?\"; echo done" \
		--profile "$(no_detect_actions)"
	assert_out_line 'commit=0' 'git commit in the linked worktree'
	assert_out_line done
	local w
	for w in hook config commondir modules info own; do
		assert_out_match "^$w=[1-9]" "the write $w refused"
	done
	[[ $ERR == *'lies outside the workspace'* ]] && fail "a note though git works: $(excerpt "$ERR")"
	OUT=$(git -C "$main" log --format=%s feat 2>&1)
	[[ $OUT == in-worktree* ]] || fail "the commit is not on the host's branch: $(excerpt "$OUT")"
	[[ $(cksum <"$main/.git/config") == "$cfg" ]] || fail "the repository's config changed"
	assert_host_absent "$main/.git/hooks/pre-commit"
	assert_host_absent "$main/.git/commondir"
	assert_host_absent "$main/.git/modules"
	[[ -z $(ls -A "$HOME/.local/state/warden/gitviews" 2>/dev/null) ]] ||
		fail "a view left behind, this session's or a killed one's: $(ls -A "$HOME/.local/state/warden/gitviews")"
	wsh 'git status >/dev/null 2>&1; echo "status=$?"' --read-only
	assert_out_line 'status=128' 'git in a read-only linked worktree'
	[[ $ERR == *"$WS/wt is a linked git worktree whose repository $main/.git lies outside the workspace"* &&
		$ERR == *"Run the session in $main, or \`warden run --task NAME\` there"* ]] ||
		fail "no note naming the repository and where to run: $(excerpt "$ERR")"
}
