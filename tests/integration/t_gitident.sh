# t_gitident.sh - the user's git identity inside (src/workspace/gitident.h):
# a commit made in the sandbox takes user.name and user.email as the host's
# git would take them for the workspace (the global file, what it
# includes, includeIf's gitdir and hasconfig:remote.*.url), and a
# repository made there starts on init.defaultBranch, from a ~/.gitconfig
# warden writes with nothing else of that configuration in it (no
# credential helper, no URL rewrite holding a token); a value the
# repository sets still wins; with none set on the host, or `git-identity
# off` in a profile, there is no ~/.gitconfig inside.
# shellcheck shell=bash

# gi_host_git ARGS...: git as the host runs it on the workspace: none of
# the repository's hooks, and a repository the sandbox's identity owns read
gi_host_git() { git -c safe.directory='*' -c core.hooksPath=/dev/null -C "$WS" "$@"; }

test_gitident_commit_takes_host_identity() {
	have git || skip 'git not installed'
	printf '[user]\n\tname = Host Person\n\temail = host@example.invalid\n[credential]\n\thelper = store --file %s/creds\n[url "https://%s@example.invalid/"]\n\tinsteadOf = https://example.invalid/\n[includeIf "gitdir:%s/"]\n\tpath = ws.inc\n' \
		"$HOME" "$BAIT" "$WS" >"$HOME/.gitconfig"
	printf '[user]\n\temail = ws@example.invalid\n' >"$HOME/ws.inc"
	git init -q . || fatal 'git init failed'
	wsh 'git commit -q --allow-empty -m inside && git log -1 --format="author %an <%ae>"
		echo "helper=$(git config credential.helper)"; echo "url=$(git config --get-regexp "^url\.")"
		cat ~/.gitconfig'
	assert_rc 0 'a commit inside'
	assert_out_line 'author Host Person <ws@example.invalid>'
	assert_out_line 'helper='
	assert_out_line 'url='
	assert_out_lacks "$BAIT" 'the URL rewrite with its token reached the sandbox'
	# the commit is on the host's repository, the user's
	[[ $(gi_host_git log -1 --format='%an <%ae> %s') == 'Host Person <ws@example.invalid> inside' ]] ||
		fail "the host sees: $(gi_host_git log -1 --format='%an <%ae> %s' 2>&1)"
}

# a repository the agent makes starts on the branch the user's git would
# start it on (init.defaultBranch), without git's long hint about it
test_gitident_default_branch() {
	have git || skip 'git not installed'
	printf '[init]\n\tdefaultBranch = trunk\n' >"$HOME/.gitconfig"
	wsh 'git init fresh 2>&1; git -C fresh symbolic-ref HEAD'
	assert_rc 0 'git init inside'
	assert_out_line 'refs/heads/trunk'
	assert_out_lacks 'hint:' "git's hint about the initial branch's name"
}

test_gitident_hasconfig_remote_url() {
	have git || skip 'git not installed'
	printf '[user]\n\tname = Host Person\n\temail = host@example.invalid\n[includeIf "hasconfig:remote.*.url:https://work.example.invalid/**"]\n\tpath = work.inc\n' >"$HOME/.gitconfig"
	printf '[user]\n\temail = work@example.invalid\n' >"$HOME/work.inc"
	git init -q . && git remote add origin https://work.example.invalid/org/repo.git || fatal 'git init failed'
	# the host's git picks the included email for this repository ...
	[[ $(gi_host_git config user.email) == work@example.invalid ]] ||
		fatal "the host's git gives $(gi_host_git config user.email 2>&1)"
	# ... and so does the sandbox's, from warden's ~/.gitconfig
	wsh 'git config user.email; cat ~/.gitconfig'
	assert_rc 0
	assert_out_line 'work@example.invalid'
	assert_out_lacks 'hasconfig' 'the condition itself reached the sandbox'
	# another remote: the global email on both sides
	git remote set-url origin https://other.example.invalid/org/repo.git
	[[ $(gi_host_git config user.email) == host@example.invalid ]] ||
		fatal "the host's git gives $(gi_host_git config user.email 2>&1)"
	wsh 'git config user.email'
	assert_out_line 'host@example.invalid'
}

test_gitident_repository_value_wins() {
	have git || skip 'git not installed'
	printf '[user]\n\tname = Host Person\n\temail = host@example.invalid\n' >"$HOME/.gitconfig"
	git init -q . && git config user.email repo@example.invalid || fatal 'git init failed'
	wsh 'git commit -q --allow-empty -m x && git log -1 --format="author %an <%ae>"'
	assert_rc 0 'a commit inside'
	assert_out_line 'author Host Person <repo@example.invalid>'
}

test_gitident_none_without_host_identity() {
	have git || skip 'git not installed'
	printf '[core]\n\teditor = vi\n' >"$HOME/.gitconfig"
	wsh '[ -e ~/.gitconfig ] && echo "gitconfig present" || echo "gitconfig absent"'
	assert_rc 0
	assert_out_line 'gitconfig absent'
}

test_gitident_off_by_profile() {
	have git || skip 'git not installed'
	printf '[user]\n\tname = Host Person\n\temail = host@example.invalid\n' >"$HOME/.gitconfig"
	printf 'git-identity off\n' >"$T_TMP/g.profile"
	wsh '[ -e ~/.gitconfig ] && echo "gitconfig present" || echo "gitconfig absent"' --profile "$T_TMP/g.profile"
	assert_rc 0
	assert_out_line 'gitconfig absent'
	# and without the line, the same host configuration gives one
	wsh '[ -e ~/.gitconfig ] && echo "gitconfig present" || echo "gitconfig absent"'
	assert_out_line 'gitconfig present'
}
