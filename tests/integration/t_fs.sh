# t_fs.sh - the filesystem boundary: host secrets unreachable, nothing
# writable outside the workspace, protected paths read-only (and not
# creatable), secret files masked (certificates read as a copy), a
# minimal root, refused workspaces.
# shellcheck shell=bash

test_etc_shadow() {
	wbatch 'shadow|read /etc/shadow' 'gshadow|read /etc/gshadow' 'sudoers|read /etc/sudoers' \
		'ssh|ls /etc/ssh' 'passwd|read /etc/passwd' 'group|read /etc/group'
	bexpect shadow denied
	bexpect gshadow denied
	bexpect sudoers denied
	bexpect ssh denied
	bexpect passwd allowed
	bexpect group allowed
	wrun -- cat /etc/shadow
	assert_rc_nonzero 'cat /etc/shadow'
	[[ -z $OUT ]] || fail "cat /etc/shadow printed: $(excerpt "$OUT")"
	wrun -- cat /etc/passwd
	assert_rc 0 'cat /etc/passwd'
	assert_out_match '^agent:[^:]*:1000:1000:' '/etc/passwd has agent'
	if ! is_root; then
		assert_out_lacks "$(id -un):" '/etc/passwd hides the invoking user'
	fi
}

# The README's first command, as it is written there (its `warden run`
# part, with the warden under test), does what the README says: a key
# planted at ~/.ssh/id_rsa and /etc/shadow are not there, the command
# finishes, and warden's first line is the risk warning of the reach for
# the key, on the record as an alert.
test_readme_first_command() {
	local readme line args
	readme=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../README.md
	[[ -f $readme ]] || readme=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../README.md
	[[ -f $readme ]] || fatal "no README.md beside the tests"
	line=$(grep -m1 '^\./scripts/build && \./build/warden run -- ' "$readme")
	[[ -n $line ]] || fatal "the README's first command is not where it was: $(head -n 15 "$readme")"
	args=${line#./scripts/build && ./build/warden }
	mkdir -p "$HOME/.ssh"
	printf 'README-PLANTED-KEY\n' >"$HOME/.ssh/id_rsa"
	chmod 600 "$HOME/.ssh/id_rsa"
	eval "set -- $args"
	wrun "${@:2}"
	assert_rc 0 "the README's command"
	assert_out_line done 'the command finished'
	assert_out_lacks README-PLANTED-KEY 'the key is not there'
	assert_err_match '^cat: /home/agent/\.ssh/id_rsa: No such file or directory' 'the key is not there'
	assert_err_match '^cat: /etc/shadow: No such file or directory' '/etc/shadow is not there'
	[[ ${ERR%%$'\n'*} =~ ^warden:\ warning:\ risk\ score\ [0-9]+\ reached\ the\ warn\ threshold\ [0-9]+\ \(last:\ recon\.credentials\)$ ]] ||
		fail "warden's first line is not the risk warning: $(excerpt "$ERR")"
	grep '"event":"alert"' "$(latest_log)" | matches -F '"rule":"recon.credentials"' ||
		fail 'the reach for the key is not on the record'
}

test_home_bait() {
	local real_home
	real_home=$(getent passwd "$(id -u)" | cut -d: -f6)
	echo 'workspace content' >readme.txt
	PATH=$(path_without_home_tools) wbatch "id_rsa|read $HOME/.ssh/id_rsa" "aws|read $HOME/.aws/credentials" \
		"fakehome|ls $HOME" "realhome|ls ${real_home:-/nonexistent}" 'root|ls /root' \
		'readme|read readme.txt'
	bexpect id_rsa denied
	bexpect aws denied
	bexpect fakehome denied
	if [[ -n $real_home && $real_home != /home/agent ]]; then
		bexpect realhome denied
	fi
	bexpect root denied
	bexpect readme allowed
	wsh "cat $HOME/.ssh/id_rsa $HOME/.aws/credentials; cat readme.txt"
	assert_out_lacks "$BAIT" 'bait reachable'
	assert_out_has 'workspace content' 'workspace file readable'
	wsh "grep -rIl -- '$BAIT' /home /root /tmp /run /mnt /media /srv /opt /var/tmp 2>/dev/null; true"
	[[ -z $OUT ]] || fail "files holding the bait are visible inside: $(excerpt "$OUT")"
	wsh 'ls -A /home 2>/dev/null; true'
	[[ -z $OUT || $OUT == agent ]] || fail "/home inside lists more than agent: $(excerpt "$OUT")"
}

test_write_outside() {
	local parent name
	parent=$(dirname "$WS")
	name=$(unique)
	wbatch "usr|write /usr/$name" "etc|write /etc/$name" "home|write $HOME/$name" \
		"root|write /$name" "usrlib|mkdir /usr/lib/$name" "parent|write $parent/$name" \
		"tmp|write /tmp/$name.tmp" "inside|write $WS/$name.in" "rel|write ./$name.rel"
	bexpect usr denied
	bexpect etc denied
	bexpect home denied
	bexpect root denied
	bexpect usrlib denied
	bexpect inside allowed
	bexpect rel allowed
	bexpect tmp allowed # tmpfs /tmp: writable, but must not reach the host
	assert_host_absent "/usr/$name"
	assert_host_absent "/etc/$name"
	assert_host_absent "$HOME/$name"
	assert_host_absent "/$name"
	assert_host_absent "/usr/lib/$name"
	assert_host_absent "$parent/$name" 'parent of the workspace'
	assert_host_absent "/tmp/$name.tmp" 'sandbox /tmp'
	assert_host_file "$WS/$name.in" x 'write inside the workspace'
	assert_host_file "$WS/$name.rel" x 'write inside the workspace'
	# if the sandbox leaked, do not leave litter on the host
	rm -f "/usr/$name" "/etc/$name" "/$name" "$parent/$name" "/tmp/$name.tmp" 2>/dev/null
	rmdir "/usr/lib/$name" 2>/dev/null
	return 0
}

test_symlink_escape() {
	# Links planted in the workspace that point outside it resolve inside the
	# sandbox's own root, where the targets do not exist.
	echo 'host original' >"$T_TMP/victim"
	ln -s "$T_TMP/victim" victim-link
	ln -s "$HOME/.ssh/id_rsa" key-link
	ln -s "$HOME" home-link
	wbatch 'wlink|write victim-link' 'rkey|read key-link' 'wdir|write home-link/planted'
	bexpect wlink denied
	bexpect rkey denied
	bexpect wdir denied
	assert_host_file "$T_TMP/victim" 'host original' 'symlink target'
	assert_host_absent "$HOME/planted"
}

test_git_hooks() {
	have git || skip 'git not installed'
	git init -q . || fatal 'git init on the host failed'
	local cfg_before
	cfg_before=$(cksum <.git/config)
	# the walls under test, not the detector (whose persistence rules these
	# writes raise, t_detect_files.sh)
	wbatch --profile "$(no_detect_actions)" -- 'hook|write .git/hooks/x' 'precommit|write .git/hooks/pre-commit' \
		'hookdir|mkdir .git/hooks/sub' 'config|write .git/config' \
		'desc|write .git/description' 'other|write .git/wardentest' 'info|write .git/info/exclude'
	bexpect hook denied EROFS,EACCES,EPERM
	bexpect precommit denied EROFS,EACCES,EPERM
	bexpect hookdir denied EROFS,EACCES,EPERM
	bexpect config denied EROFS,EACCES,EPERM
	bexpect desc allowed
	bexpect other allowed
	bexpect info allowed
	assert_host_absent .git/hooks/x
	assert_host_absent .git/hooks/pre-commit
	assert_host_absent .git/hooks/sub
	[[ $(cksum <.git/config) == "$cfg_before" ]] || fail '.git/config changed on the host'
	assert_host_file .git/wardentest x 'other file in .git'
}

test_git_hooks_bypass() {
	# Renaming or deleting the protected paths (or their parent) and putting
	# attacker-controlled ones in their place must not work.
	have git || skip 'git not installed'
	git init -q . || fatal 'git init on the host failed'
	local cfg_before
	cfg_before=$(cksum <.git/config)
	wsh 'mv .git .git-moved; mv .git/hooks .git/hooks-moved; rm -rf .git/hooks .git/config;
	     mkdir -p .git/hooks; echo "#!/bin/sh" > .git/hooks/pre-commit;
	     echo "[core] hooksPath = /tmp" > .git/config; ln -s /tmp .git/hooks/link; true'
	assert_host_absent .git-moved
	assert_host_absent .git/hooks-moved
	assert_host_absent .git/hooks/pre-commit
	assert_host_absent .git/hooks/link
	[[ -f .git/config && $(cksum <.git/config) == "$cfg_before" ]] || fail '.git/config replaced or changed on the host'
	[[ -f .git/HEAD ]] || fail '.git/HEAD gone on the host (repository moved away)'
}

test_git_commondir_bypass() {
	# In a host repository, .git/commondir redirects git to another directory
	# for config and hooks: an agent-written one must not bring its own
	# core.fsmonitor/hooks to the user's next git command on the host.
	have git || skip 'git not installed'
	git init -q . || fatal 'git init on the host failed'
	echo x >f && git add f && git -c user.name=h -c user.email=h@example.invalid commit -qm init ||
		fatal 'host commit failed'
	local mark="$T_TMP/pwned"
	wsh "cp -r .git evil-common 2>/dev/null;
	     printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch $mark-fsmonitor #\\n\\thooksPath = $WS/evil-hooks\\n' > evil-common/config;
	     mkdir -p evil-hooks && printf '#!/bin/sh\\ntouch $mark-hook\\n' > evil-hooks/pre-commit && chmod +x evil-hooks/pre-commit;
	     echo ../evil-common > .git/commondir && echo commondir-planted; true"
	git status >/dev/null 2>&1
	echo y >>f && git add f >/dev/null 2>&1
	git -c user.name=u -c user.email=u@example.invalid commit -qm t >/dev/null 2>&1
	assert_host_absent "$mark-fsmonitor" 'core.fsmonitor from an agent-written .git/commondir ran on the host'
	assert_host_absent "$mark-hook" 'a hook from an agent-written .git/commondir ran on the host'
	[[ $OUT == *commondir-planted* ]] && note '.git/commondir was writable'
	return 0
}

test_git_nested_repo() {
	# A nested repository the agent creates (sub/.git with its own config)
	# and records as a gitlink: the host's `git status` recurses into it and
	# runs its core.fsmonitor. The protection of .git/config is only worth
	# something if this does not work either.
	have git || skip 'git not installed'
	git init -q . || fatal 'git init on the host failed'
	echo x >f && git add f && git -c user.name=h -c user.email=h@example.invalid commit -qm init ||
		fatal 'host commit failed'
	local mark="$T_TMP/pwned"
	wsh "git init -q sub && cd sub && echo y > g && git add g &&
	     git -c user.name=a -c user.email=a@example.invalid commit -qm s &&
	     git config core.fsmonitor 'touch $mark #' && cd .. && git add sub 2>/dev/null && echo nested-planted; true"
	git status >/dev/null 2>&1
	assert_host_absent "$mark" "core.fsmonitor of an agent-made nested repository ran on the host's git status"
	[[ $OUT == *nested-planted* ]] && note 'nested repository with a gitlink was created'
	return 0
}

test_protected_create() {
	echo 'export HOST=1' >.bashrc
	# an agent would create the parent directories first
	WBATCH_PRE='mkdir -p .claude .vscode .idea .warden 2>/dev/null' wbatch 'claude|write .claude/settings.json' 'claude_dir|mkdir .claude/agents' \
		'mcp|write .mcp.json' 'vscode|write .vscode/tasks.json' 'idea|write .idea/workspace.xml' \
		'warden|write .warden/profile' 'gitmodules|write .gitmodules' 'profile|write .profile' \
		'zshrc|write .zshrc' 'bashrc|write .bashrc' 'ok|write ok.txt'
	for p in claude claude_dir mcp vscode idea warden gitmodules profile zshrc bashrc; do
		bexpect "$p" denied
	done
	bexpect ok allowed
	# the placeholders are gone once the session is over
	for p in .claude .mcp.json .vscode .idea .warden .gitmodules .profile .zshrc; do
		assert_host_absent "$p" 'placeholder left behind'
	done
	assert_host_file .bashrc 'export HOST=1' '.bashrc'
	assert_host_file ok.txt x 'ordinary file'
}

test_git_hooks_no_repo() {
	# In a workspace that is not a git repository, the agent plants a .git
	# whose hooks and config would run on the host at the user's next git
	# command. Nothing of it may survive the session.
	have git || skip 'git not installed'
	local mark="$T_TMP/pwned"
	wsh "mkdir -p .git/hooks && printf '#!/bin/sh\ntouch $mark-hook\n' > .git/hooks/pre-commit &&
	     chmod +x .git/hooks/pre-commit && echo hook-planted;
	     printf '[core]\n\tfsmonitor = touch $mark-fsmonitor #\n' > .git/config && echo config-planted; true"
	# warden moves a repository made in the sandbox aside once the sandbox is
	# gone, says so, and records an alert
	assert_host_absent .git 'the planted .git is still in place after the session'
	compgen -G '.git.warden-quarantine-*' >/dev/null || fail 'no quarantined .git on the host'
	[[ $ERR == *"was moved to"* ]] || fail "no warning about the moved repository: $(excerpt "$ERR")"
	grep -rq '"event":"alert".*"path":".git"' "$HOME/.local/state/warden/" ||
		fail 'no alert event for the moved repository in the audit log'
	# what the user would do next on the host
	git init -q . >/dev/null 2>&1
	echo x >f && git add f >/dev/null 2>&1
	git -c user.name=u -c user.email=u@example.invalid commit -qm t >/dev/null 2>&1
	git status >/dev/null 2>&1
	assert_host_absent "$mark-hook" 'a hook the agent planted ran on the host'
	assert_host_absent "$mark-fsmonitor" 'a core.fsmonitor the agent planted ran on the host'
}

test_protected_symlinks() {
	# Protected and masked paths that are symlinks out of the workspace: warden
	# must not mount their targets into the sandbox nor create anything
	# through them on the host.
	ln -s "$HOME/.ssh" .claude
	ln -s "$HOME/.aws/credentials" .mcp.json
	ln -s "$HOME/.aws" .vscode
	ln -s "$T_TMP/made-through-link" .idea
	ln -s "$HOME/.ssh/id_rsa" .env
	wsh "cat .claude/id_rsa .mcp.json .vscode/credentials .env 2>&1; ls -A .claude .vscode .idea 2>&1; true"
	assert_out_lacks "$BAIT" 'host secret reachable through a protected symlink'
	assert_out_lacks 'id_rsa' 'host ~/.ssh listed through a protected symlink'
	assert_host_absent "$T_TMP/made-through-link" 'warden created a placeholder through a symlink'
	[[ -L .claude && $(readlink .claude) == "$HOME/.ssh" ]] || fail '.claude symlink changed'
	[[ -L .idea ]] || fail '.idea symlink changed'
	assert_host_file "$HOME/.aws/credentials" "$(printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s' "$BAIT" "$BAIT")" 'bait file'
}

test_init_memory() {
	# The sandbox's pid 1 (warden's init) is not open to the agent's processes.
	wbatch 'environ|read /proc/1/environ' 'mem_w|write /proc/1/mem' 'mem_r|read /proc/1/mem' \
		'ptrace1|ptrace 1' 'self|read /proc/self/environ'
	bexpect environ denied
	bexpect mem_w denied
	bexpect mem_r denied
	bexpect ptrace1 denied
	bexpect self allowed
}

test_protected_replace() {
	# rm/mv of a missing protected path's placeholder, then creating it.
	wsh 'rm -f .mcp.json; rmdir .mcp.json; mv .claude .claude-x; rm -rf .vscode; echo "{}" > .mcp.json;
	     mkdir -p .claude .vscode; echo "{}" > .claude/settings.json; echo "{}" > .vscode/tasks.json; true'
	for p in .mcp.json .claude .claude-x .vscode; do
		assert_host_absent "$p"
	done
}

test_placeholders_out_of_git() {
	# The entries holding missing protected paths never reach a commit, from
	# inside or from the host while the session runs, and read as nothing.
	have git || skip 'git not installed'
	git init -q . && echo x >f && git add -A &&
		git -c user.name=h -c user.email=h@example.invalid commit -qm init || fatal 'host commit failed'
	warden_bg "$T_TMP/bg.out" -- sh -c 'git add -A && git status --porcelain; echo "inside:$(cat .mcp.json 2>&1)";
		echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	[[ -S .mcp.json && -d .claude ]] || fail "no placeholders on the host during the session: $(ls -la)"
	local host_status
	host_status=$(git status --porcelain)
	touch go
	wait "$TPID"
	[[ -z $host_status ]] || fail "git on the host sees placeholders: $host_status"
	grep -v -e '^ready$' -e '^inside:' "$T_TMP/bg.out" | grep . >/dev/null &&
		fail "git inside sees placeholders: $(excerpt "$(<"$T_TMP/bg.out")")"
	grep -q '^inside:.*No such device' "$T_TMP/bg.out" ||
		fail "a placeholder read as something: $(excerpt "$(<"$T_TMP/bg.out")")"
	assert_host_absent .mcp.json 'placeholder left behind'
}

test_placeholder_replaced_on_host() {
	# The user replaces a placeholder on the host during the session: warden
	# removes only what it made, and says so.
	warden_bg "$T_TMP/bg.out" -- sh -c 'echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	[[ -d .claude ]] || fatal "no .claude placeholder: $(ls -la)"
	rmdir .claude && mkdir .claude && echo keep >.claude/settings.json || fatal 'host could not replace .claude'
	touch go
	wait "$TPID"
	assert_host_file .claude/settings.json keep 'the user'"'"'s replacement'
	grep -q 'placeholder .*\.claude was replaced' "$T_TMP/bg.out.err" ||
		fail "no note about the replaced placeholder: $(excerpt "$(<"$T_TMP/bg.out.err")")"
	assert_host_absent .mcp.json 'placeholder left behind'
}

test_placeholder_dir() {
	# A missing protected name that is a directory by convention (.claude,
	# which Claude Code expects to be one) is an empty read-only directory
	# inside: nothing can be created in it, nothing reaches the host, and it
	# is gone after the session. (The tries, by four programs, are what the
	# detector's seq.refused-write-other-program looks for: its actions
	# off, or it freezes the sandbox, which nobody here can answer.)
	warden_bg "$T_TMP/bg.out" --profile "$(no_detect_actions)" -- sh -c '[ -d .claude ] && echo claude-dir; [ -d .vscode ] && echo vscode-dir
		[ -z "$(ls -A .claude)" ] && echo claude-empty
		mkdir .claude/agents 2>/dev/null && echo mkdir-ok; touch .claude/settings.json 2>/dev/null && echo touch-ok
		chmod 755 .claude 2>/dev/null && echo chmod-ok; rmdir .claude 2>/dev/null && echo rmdir-ok
		echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	local host
	host=$([[ -d .claude ]] && find .claude -mindepth 1 2>&1 || echo 'not a directory')
	touch go
	wait "$TPID"
	for w in claude-dir vscode-dir claude-empty; do
		grep -qx "$w" "$T_TMP/bg.out" || fail "inside: no $w: $(excerpt "$(<"$T_TMP/bg.out")")"
	done
	for w in mkdir-ok touch-ok chmod-ok rmdir-ok; do
		grep -qx "$w" "$T_TMP/bg.out" && fail "inside, the .claude placeholder is writable: $w"
	done
	[[ -z $host ]] || fail "on the host during the session, .claude is not an empty directory: $host"
	assert_host_absent .claude 'placeholder left behind'
	assert_host_absent .vscode 'placeholder left behind'
}

test_placeholder_stash() {
	# Directory placeholders wait between sessions in warden's state
	# directory and are renamed into the workspace and back: the next
	# session's .claude is the inode the last one put away; the workspace is
	# clean after each session, and the stash holds only empty directories,
	# bounded: a user's of mode 700 (a directory moved to another parent
	# must be writable), root's of the placeholder mode 1555 (moved as it
	# is: no mode changed at either end); and the socket placeholder, mode
	# 444, linked to each socket name at start (no inode made each time).
	local stash="$HOME/.local/state/warden/locks/placeholders" ino i
	wrun -- true
	assert_rc 0
	assert_host_absent .claude 'placeholder left behind'
	[[ -d $stash && $(stat -c %a "$stash") == 700 ]] || fatal "no stash directory of mode 700: $(ls -la "$stash" 2>&1)"
	local before
	before=$(find "$stash" -mindepth 1 -maxdepth 1 -printf '%i\n' | sort)
	[[ -n $before ]] || fatal "nothing stashed after a session: $(ls -la "$stash")"
	warden_bg "$T_TMP/bg.out" -- sh -c 'echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	ino=$(stat -c %i .claude)
	touch go
	wait "$TPID"
	grep -qx "$ino" <<<"$before" || fail "the session's .claude ($ino) was not taken from the stash ($(tr '\n' ' ' <<<"$before"))"
	assert_host_absent .claude 'placeholder left behind'
	for i in 1 2 3; do wrun -- true; done
	local bad n
	local mode=700
	((EUID == 0)) && mode=1555
	bad=$(find "$stash" -mindepth 1 -not \( -name s-socket -type s -perm 444 -maxdepth 1 \) \
		\( -not -type d -o -not -perm "$mode" -o -mindepth 2 \) 2>&1)
	[[ -S $stash/s-socket ]] || fail "no socket placeholder kept in the stash: $(ls -la "$stash")"
	[[ -z $bad ]] || fail "the stash holds something else than empty placeholders: $(excerpt "$bad")"
	n=$(find "$stash" -mindepth 1 -maxdepth 1 | wc -l)
	((n <= 64)) || fail "the stash grew to $n entries"
}

test_placeholder_dir_filled() {
	# The user puts a file in the .claude placeholder from the host during
	# the session: the directory is theirs now, kept with its content.
	warden_bg "$T_TMP/bg.out" -- sh -c 'echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	[[ -d .claude ]] || fatal "no .claude placeholder: $(ls -la)"
	chmod u+w .claude && echo keep >.claude/settings.json || fatal 'host could not write in .claude'
	touch go
	wait "$TPID"
	assert_host_file .claude/settings.json keep 'the user'"'"'s file in the placeholder'
	grep -q 'placeholder .*\.claude .*left as it is' "$T_TMP/bg.out.err" ||
		fail "no note about the kept placeholder: $(excerpt "$(<"$T_TMP/bg.out.err")")"
	assert_host_absent .idea 'placeholder left behind'
}

test_workspace_unchanged() {
	# A session that does nothing leaves the workspace exactly as it was.
	have git && git init -q .
	echo data >file.txt
	local before after
	before=$(find . -printf '%y %m %p\n' | sort)
	wrun -- true
	assert_rc 0
	after=$(find . -printf '%y %m %p\n' | sort)
	[[ $before == "$after" ]] || fail "workspace changed: $(excerpt "$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')")"
}

test_masked_secrets() {
	mkdir -p sub/dir
	echo SECRET-ENV >.env
	echo SECRET-NESTED >sub/dir/.env
	echo SECRET-LOCAL >.env.local
	echo SECRET-PEM >key.pem
	echo SECRET-KEY >sub/server.key
	echo SECRET-ID >id_rsa
	echo SECRET-ED >sub/id_ed25519
	echo SECRET-NPM >.npmrc
	echo SECRET-PYPI >.pypirc
	echo SECRET-NETRC >.netrc
	echo SECRET-GITCRED >.git-credentials
	echo 'plain text' >plain.txt
	echo 'nested plain' >sub/dir/plain.txt
	wbatch 'env|read .env' 'nested|read sub/dir/.env' 'local|read .env.local' 'pem|read key.pem' \
		'key|read sub/server.key' 'id_rsa|read id_rsa' 'ed|read sub/id_ed25519' 'npmrc|read .npmrc' \
		'pypirc|read .pypirc' 'netrc|read .netrc' 'gitcred|read .git-credentials' \
		'plain|read plain.txt' 'plain2|read sub/dir/plain.txt'
	for p in env nested local pem key id_rsa ed npmrc pypirc netrc gitcred; do
		bexpect "$p" denied EACCES
	done
	bexpect plain allowed
	bexpect plain2 allowed
	wsh 'cat .env sub/dir/.env key.pem; grep -rh SECRET . 2>/dev/null; cat plain.txt'
	assert_out_lacks SECRET 'masked content leaked'
	assert_out_has 'plain text'
	assert_host_file .env SECRET-ENV '.env intact on the host'
	assert_host_file sub/dir/.env SECRET-NESTED 'nested .env intact on the host'
}

# A *.pem of certificates alone is public: the sandbox reads a copy of its
# certificates, made at the start (src/workspace/certcopy.c), so a Python
# virtual environment's certifi bundle works inside; the text around them
# does not come in. One with a private key in it, a key alone, and a key's
# DER framed as a certificate stay masked; the copy is read-only, and a
# write to it refused and recorded as such; session.start lists the copies.
# A profile masking a certificate file by another pattern keeps it masked.
test_masked_pem_certificates() {
	have openssl || skip 'openssl not installed'
	local d=.venv/lib/python3.11/site-packages/certifi i
	mkdir -p "$d"
	for i in 1 2; do
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_TMP/k$i.pem" -out "$T_TMP/c$i.pem" \
			-subj "/CN=warden test $i" -days 2 2>/dev/null || fatal 'openssl req failed'
	done
	{ echo '# Issuer: CN=warden test 1 SECRET-COMMENT'; cat "$T_TMP/c1.pem"; echo
	  echo '# Issuer: CN=warden test 2'; cat "$T_TMP/c2.pem"; } >"$d/cacert.pem"
	cat "$T_TMP/c1.pem" "$T_TMP/k1.pem" >both.pem
	cp "$T_TMP/k2.pem" key.pem
	{ echo '-----BEGIN CERTIFICATE-----'
	  openssl pkey -in "$T_TMP/k2.pem" -outform DER | base64 -w 64
	  echo '-----END CERTIFICATE-----'; } >disguised.pem
	chmod 644 ./*.pem "$d/cacert.pem"
	wbatch --profile "$(no_detect_actions)" -- "bundle|read $d/cacert.pem" 'both|read both.pem' \
		'key|read key.pem' 'disguised|read disguised.pem' "write|write $d/cacert.pem"
	bexpect bundle allowed
	for i in both key disguised; do
		bexpect "$i" denied EACCES
	done
	bexpect write denied EACCES,EROFS
	fl_events
	fl_has "$WS/$d/cacert.pem" deny 'protected path'
	# on the record: which files the sandbox read as certificates
	local start
	start=$(grep -F '"event":"session.start"' "$(latest_log)")
	[[ $start == *"\"certificates\":[\"$d/cacert.pem\"]"* ]] ||
		fail "session.start does not list the bundle alone as certificates: $(excerpt "$start")"
	wsh "python3 -c 'import ssl; c = ssl.create_default_context(cafile=\"$d/cacert.pem\")
print(\"certs\", len(c.get_ca_certs()))'; cat $d/cacert.pem both.pem key.pem disguised.pem"
	assert_out_line 'certs 2' 'the two certificates of the bundle loaded inside'
	assert_out_lacks SECRET-COMMENT 'the text around the certificates read inside'
	assert_out_lacks 'PRIVATE KEY' 'a private key read inside'
	assert_out_has "$(sed -n 2p "$T_TMP/c2.pem")" 'the certificate read inside'
	grep -q SECRET-COMMENT "$d/cacert.pem" || fail 'the bundle on the host changed'
	# a profile that masks a certificate file by another pattern than *.pem
	# keeps it masked whole
	cp "$T_TMP/c1.pem" internal-ca.pem && chmod 644 internal-ca.pem
	printf 'mask internal-*.pem\n' >"$T_TMP/certs.profile"
	wbatch --profile "$T_TMP/certs.profile" -- 'named|read internal-ca.pem' "bundle|read $d/cacert.pem"
	bexpect named denied EACCES
	bexpect bundle allowed
}

test_unmask_profile() {
	echo SECRET-ENV >.env
	mkdir -p sub/dir
	echo SECRET-NESTED >sub/dir/.env
	echo SECRET-PEM >key.pem
	printf '# let the agent read .env files\nunmask .env\n' >"$T_TMP/unmask.profile"
	wbatch --profile "$T_TMP/unmask.profile" -- 'env|read .env' 'nested|read sub/dir/.env' 'pem|read key.pem'
	bexpect env allowed
	bexpect nested allowed
	bexpect pem denied EACCES
	wrun --profile "$T_TMP/unmask.profile" -- cat .env
	assert_rc 0 'cat .env with unmask'
	assert_out_eq SECRET-ENV 'cat .env with unmask'
}

# The templates a repository commits for others to copy (.env.example,
# .env.sample, .env.template, .env.dist) are read inside, at any depth,
# while .env.* around them stays masked, those the host writes during the
# session too; a profile takes an exception back (`unmask !.env.example`)
# or adds one (`mask !.env.test`).
test_mask_exceptions() {
	mkdir -p sub
	echo 'API_KEY=' >.env.example
	echo 'DB_URL=' >sub/.env.sample
	echo 'X=' >.env.template
	echo 'Y=' >.env.dist
	echo SECRET-PROD >.env.production
	echo SECRET-TEST >.env.test
	warden_bg "$T_TMP/me.out" --profile "$(no_detect_actions)" -- sh -c 'while [ ! -e GO ]; do sleep 0.05; done
	     cat .env.example sub/.env.sample .env.template .env.dist .env.production .env.test
	     cat later/.env.example later/.env.local; echo done'
	sleep 0.3 # the watch is up once the command runs
	mkdir later && echo 'LATER=' >later/.env.example && echo SECRET-LATER >later/.env.local
	sleep 0.5
	touch GO
	wait "$TPID"
	RC=$?
	OUT=$(<"$T_TMP/me.out")
	printf '%s\n--- stderr\n%s\n' "$OUT" "$(<"$T_TMP/me.out.err")"
	assert_out_line done
	local l
	for l in API_KEY= DB_URL= X= Y= LATER=; do
		assert_out_line "$l" "the template with $l read inside"
	done
	assert_out_lacks SECRET 'a masked .env.* read inside'
	printf 'unmask !.env.example\nmask !.env.test\n' >"$T_TMP/exc.profile"
	wsh 'cat .env.example; echo "example=$?"; cat .env.test; cat .env.production; echo done' \
		--profile "$T_TMP/exc.profile"
	assert_out_line 'example=1' '.env.example masked again by unmask !.env.example'
	assert_out_lacks API_KEY '.env.example read with its exception taken back'
	assert_out_line SECRET-TEST '.env.test read with mask !.env.test'
	assert_out_lacks SECRET-PROD '.env.production read'
}

test_fs_layout() {
	PATH=$(path_without_home_tools) wbatch 'run|ls /run' 'varrun|ls /var/run' 'mnt|ls /mnt' 'media|ls /media' 'root|ls /root' \
		'sysrq|write /proc/sysrq-trigger' 'kcore|read /proc/kcore' 'devnull|write /dev/null' \
		'usr|ls /usr/bin' 'tmp|write /tmp/x' 'procsys|write /proc/sys/kernel/domainname' \
		'timerlist|read /proc/timer_list' 'comm|write /proc/self/comm'
	# comm: the process's own file on a writable /proc mount: only Landlock
	# (the second wall) refuses it
	for p in run varrun mnt media root sysrq kcore procsys timerlist comm; do
		bexpect "$p" denied
	done
	bexpect devnull allowed
	bexpect usr allowed
	bexpect tmp allowed
	wsh 'ls -A /dev; echo ==; head -c 8 /dev/urandom | wc -c; ls -A /home'
	assert_rc 0 'ls /dev'
	local dev extra='' e
	dev=$(sed '/^==$/,$d' <<<"$OUT")
	for e in $dev; do
		case $e in
		null | zero | full | random | urandom | tty | pts | ptmx | shm | fd | stdin | stdout | stderr | console | core | mqueue) ;;
		*) extra+=" $e" ;;
		esac
	done
	[[ -z $extra ]] || fail "/dev has more than the minimal set:$extra"
	for e in null zero full random urandom tty pts ptmx shm; do
		grep -qx "$e" <<<"$dev" || fail "/dev/$e missing"
	done
	assert_out_line 8 'read /dev/urandom'
	# /dev/shm is the sandbox's own
	if [[ -d /dev/shm && -w /dev/shm ]]; then
		local shm
		shm=/dev/shm/$(unique)
		echo host >"$shm"
		wsh "ls -A /dev/shm; echo x > /dev/shm/inside-$(basename "$shm")"
		rm -f "$shm"
		assert_out_lacks "$(basename "$shm")" 'host /dev/shm visible'
		assert_host_absent "/dev/shm/inside-$(basename "$shm")" 'sandbox /dev/shm reached the host'
		rm -f "/dev/shm/inside-$(basename "$shm")"
	fi
}

test_workspace_refused() {
	local d
	cd "$T_TMP" || fatal cd
	for d in / "$HOME" /usr /usr/share /etc /proc /tmp "$(dirname "$HOME")" /root /home; do
		[[ -d $d ]] || continue
		wrun --workspace "$d" -- true
		assert_rc 125 "--workspace $d"
		[[ -n $ERR ]] || fail "--workspace $d: refused without a message"
	done
	cd "$HOME" || fatal cd
	wrun -- true
	assert_rc 125 'cwd = $HOME'
	# a tree holding a credential store
	mkdir -p "$T_TMP/looks-like-home/.ssh"
	wrun --workspace "$T_TMP/looks-like-home" -- true
	assert_rc 125 'workspace holding .ssh/'
	# the home's .config (many programs' tokens) and the credential stores
	# in it, as the store, in it or holding it (a store itself, ~/.aws, too);
	# a directory of ~/.config that is no store is a workspace
	local h=$T_TMP/cfghome tok=gho_wardentestPLANTEDtoken
	mkdir -p "$h/.config/gh/sub" "$h/.config/gcloud" "$h/.config/someproject" "$h/.aws"
	printf 'github.com:\n    oauth_token: %s\n' "$tok" >"$h/.config/gh/hosts.yml"
	printf '{"refresh_token": "%s"}\n' "$tok" >"$h/.config/gcloud/application_default_credentials.json"
	for d in .config .config/gh .config/gh/sub .config/gcloud .aws; do
		HOME=$h wrun --workspace "$h/$d" -- sh -c 'cat gh/hosts.yml hosts.yml application_default_credentials.json 2>/dev/null; true'
		assert_rc 125 "--workspace ~/$d"
		assert_err_match 'credential store|settings and tokens' "--workspace ~/$d: why"
		[[ $OUT != *"$tok"* ]] || fail "--workspace ~/$d: the planted token was read"
	done
	HOME=$h wrun --workspace "$h/.config/someproject" -- pwd -P
	assert_rc 0 '--workspace ~/.config/someproject (no credential store)'
	# a copy of a .config elsewhere, holding gh
	mkdir -p "$T_TMP/copy/.config/gh"
	wrun --workspace "$T_TMP/copy/.config" -- true
	assert_rc 125 'a .config holding gh/'
	# the allowed thing: an explicit workspace, reached through a symlink
	cd "$T_TMP" || fatal cd
	ln -s "$WS" ws-link
	wrun --workspace ws-link -- pwd -P
	assert_rc 0 '--workspace via symlink'
	assert_out_eq "$(realpath "$WS")" 'starts in the real workspace path'
	cd "$WS" && wrun -- sh -c 'pwd -P'
	assert_out_eq "$(realpath "$WS")" 'cwd workspace'
}

test_workspace_inside_repository_said() {
	# Run from a subdirectory of a repository, warden takes that directory
	# for the workspace and git inside finds no repository: a note says so
	# and names the repository to run from. Not at the repository's top,
	# not with -w (chosen), not for a home kept in git (every workspace).
	have git || skip 'git not installed'
	git init -q . || fatal 'git init'
	mkdir -p src/deep
	cd src/deep || fatal cd
	wrun -- sh -c 'git status >/dev/null 2>&1; echo git=$?'
	assert_out_line 'git=128' 'git inside finds no repository'
	assert_err_match "the workspace $WS/src/deep lies inside the git repository $WS, .*run warden in $WS, or with -w $WS"
	wrun -w . -- true
	[[ $ERR != *'lies inside'* ]] || fail "a note with -w: $(excerpt "$ERR")"
	HOME=$WS wrun -- true
	[[ $ERR != *'lies inside'* ]] || fail "a note for a home kept in git: $(excerpt "$ERR")"
	cd "$WS" || fatal cd
	wrun -- true
	[[ $ERR != *'lies inside'* ]] || fail "a note at the repository's top: $(excerpt "$ERR")"
}

test_git_symlink_repo() {
	# A .git the agent makes as a symlink (git follows it) or as a gitdir file
	# pointing at a repository it controls is a new repository too.
	have git || skip 'git not installed'
	wsh 'git init -q --bare evil.git >/dev/null && ln -s evil.git .git &&
	     mkdir sub && echo "gitdir: ../evil.git" > sub/.git && echo planted'
	assert_out_has planted
	assert_host_absent .git 'a .git symlink made in the sandbox stayed in place'
	assert_host_absent sub/.git 'a .git file made in the sandbox stayed in place'
	compgen -G '.git.warden-quarantine-*' >/dev/null || fail 'the .git symlink was not moved aside'
}

test_placeholders_shared() {
	# Two sessions in one workspace: the first to end must not take the
	# placeholders (and with them the protection) from the one still
	# running; the last one out removes them. A placeholder left by a
	# killed session is taken over and removed too.
	warden_bg "$T_TMP/a.out" -- sh -c 'echo ready; while [ ! -e go-a ]; do sleep 0.05; done'
	local tpid_a=$TPID
	wait_for "$T_TMP/a.out" '^ready' 20 || fatal "session A did not get ready: $(<"$T_TMP/a.out.err")"
	warden_bg "$T_TMP/b.out" -- sh -c 'echo ready; while [ ! -e go-b ]; do sleep 0.05; done
		echo x > .mcp.json 2>/dev/null && echo mcp-created; mkdir .claude/x 2>/dev/null && echo claude-created
		rmdir .claude 2>/dev/null; [ -d .claude ] || echo claude-gone
		rm -f .vscode 2>/dev/null; [ -e .vscode ] || echo vscode-gone; echo done'
	local tpid_b=$TPID
	wait_for "$T_TMP/b.out" '^ready' 20 || fatal "session B did not get ready: $(<"$T_TMP/b.out.err")"
	touch go-a
	wait "$tpid_a"
	[[ -S .mcp.json && -d .claude ]] || fail 'session A removed the placeholders while session B ran'
	touch go-b
	wait "$tpid_b"
	grep -q '^done' "$T_TMP/b.out" || fail "session B did not finish: $(excerpt "$(<"$T_TMP/b.out.err")")"
	for w in mcp-created claude-created claude-gone vscode-gone; do
		grep -qx "$w" "$T_TMP/b.out" && fail "after session A ended, session B's agent: $w"
	done
	assert_host_absent .mcp.json 'placeholder left after the last session'
	assert_host_absent .claude 'placeholder left after the last session'
	# a leftover of a killed session is adopted and removed
	python3 -c 'import os, stat; os.mknod(".envrc", stat.S_IFSOCK | 0o444)' 2>/dev/null ||
		skip 'python3 cannot make a socket entry'
	wrun -- sh -c 'echo x > .envrc 2>/dev/null && echo envrc-created; true'
	assert_out_lacks envrc-created 'a leftover placeholder'
	assert_host_absent .envrc 'leftover placeholder not removed'
	# and a leftover directory placeholder
	mkdir .idea && chmod 1555 .idea || fatal 'cannot make a leftover directory placeholder'
	wrun -- sh -c 'mkdir .idea/x 2>/dev/null && echo idea-filled; true'
	assert_out_lacks idea-filled 'a leftover directory placeholder'
	assert_host_absent .idea 'leftover directory placeholder not removed'
}

test_git_sweep_shared() {
	# Session A's agent plants a repository; session B starts after that, so
	# to B it was there at start. A ends and moves it aside; B's agent makes
	# a new one under the same name. B's sweep must move that one too.
	warden_bg "$T_TMP/a.out" -- sh -c 'mkdir -p .git/hooks && echo planted-a > .git/hooks/pre-commit
		echo ready; while [ ! -e go-a ]; do sleep 0.05; done'
	local tpid_a=$TPID
	wait_for "$T_TMP/a.out" '^ready' 20 || fatal "session A did not get ready: $(<"$T_TMP/a.out.err")"
	warden_bg "$T_TMP/b.out" -- sh -c 'echo ready; while [ ! -e go-b ]; do sleep 0.05; done
		mkdir -p .git/hooks && echo planted-b > .git/hooks/pre-commit && echo replanted'
	local tpid_b=$TPID
	wait_for "$T_TMP/b.out" '^ready' 20 || fatal "session B did not get ready: $(<"$T_TMP/b.out.err")"
	touch go-a
	wait "$tpid_a"
	[[ -e .git ]] && fatal "session A did not move its agent's .git aside"
	touch go-b
	wait "$tpid_b"
	grep -qx replanted "$T_TMP/b.out" || skip "session B's agent could not recreate .git: $(<"$T_TMP/b.out.err")"
	assert_host_absent .git "the .git session B's agent made after A's sweep"
	grep -rqs planted-b .git.warden-quarantine-*/hooks/pre-commit || fail 'B did not quarantine the new .git'
}

test_placeholders_umask() {
	# A private umask must not leave placeholders behind (they are
	# recognised by their mode).
	umask 0077
	wrun -- sh -c 'test -S .mcp.json && echo placeholder-seen; test -d .claude && echo dir-placeholder-seen'
	assert_rc 0
	assert_out_line placeholder-seen 'placeholder inside'
	assert_out_line dir-placeholder-seen 'directory placeholder inside'
	local left
	left=$(find . -mindepth 1 -maxdepth 1 \( -type s -o -type d -perm -1000 \))
	[[ -z $left ]] || fail "placeholders left behind with umask 0077: $left"
}

test_private_dirs_through_symlink() {
	# HOME reached through a symlink: the audit log directory and the cache
	# are named through it, the workspace by its resolved path. A workspace
	# over them, or a profile path covering them by the resolved name, would
	# hand the agent its own log (to rewrite) and the cached /etc.
	local real="$T_TMP/realhome" link="$T_TMP/homelink"
	mkdir -p "$real/.local/state" "$real/.cache"
	ln -s "$real" "$link"
	# a HOME that is a symlink works at all (the cached /etc is bound by its
	# resolved path: init reads paths in a root where the symlink's target
	# is not)
	HOME=$link wrun -- echo ran
	assert_rc 0 'HOME through a symlink'
	assert_out_eq ran
	HOME=$link wrun --workspace "$real/.local" -- sh -c 'ls -a "$PWD/state" 2>&1'
	assert_rc 125 'a workspace over the log directory, named by its resolved path'
	assert_err_match 'overlaps the audit log directory'
	HOME=$link wrun --workspace "$real/.cache" -- true
	assert_rc 125 'a workspace over the cache, named by its resolved path'
	assert_err_match "overlaps warden's cache directory"
	printf 'read-only %s\n' "$real/.local" >"$T_TMP/p.profile"
	HOME=$link wrun --profile "$T_TMP/p.profile" -- true
	assert_rc 125 'a profile path covering the log directory through a symlink'
	assert_err_match 'through a symlink it covers the audit log directory'
	# named by the same path as HOME: allowed, and the log directory masked
	printf 'read-only %s\n' "$link/.local" >"$T_TMP/p2.profile"
	HOME=$link wrun --profile "$T_TMP/p2.profile" -- sh -c "ls -A '$link/.local/state/warden' 2>&1; echo rc=\$?"
	assert_rc 0 'a profile path named through HOME as written'
	assert_out_has 'rc='
	[[ $OUT == *.jsonl* ]] && fail "the log directory is readable inside: $(excerpt "$OUT")"
}

# The control sockets' directory (XDG_RUNTIME_DIR/warden) is warden's own
# as the log directory is. With XDG_RUNTIME_DIR inside the workspace the
# agent could move the session's socket aside and put its own there: the
# host's `warden kill` then said "killed" to the agent's socket while the
# session ran on. Such a workspace is refused; a profile path covering the
# runtime directory gets it masked.
test_private_runtime_dir() {
	local rt=$WS/.rt
	mkdir -m 700 "$rt" || fatal "could not make $rt"
	XDG_RUNTIME_DIR=$rt wrun -- sh -c 'echo RAN'
	assert_rc 125 'a workspace over the runtime directory'
	assert_out_lacks RAN
	assert_err_match "overlaps warden's runtime directory \\(XDG_RUNTIME_DIR/warden"
	local out=$T_TMP/rt
	mkdir -m 700 "$out" "$out/warden" || fatal "could not make $out"
	printf 'read-write %s\n' "$out" >"$T_TMP/rt.profile"
	XDG_RUNTIME_DIR=$out wrun --profile "$T_TMP/rt.profile" -- sh -c \
		"touch '$out/mine' && echo WROTE; echo entries=\$(ls -A '$out/warden' 2>/dev/null | wc -l); mkdir '$out/warden/control/x' 2>/dev/null; echo END"
	assert_rc 0 'a profile path covering the runtime directory'
	assert_out_has WROTE
	assert_out_has entries=0 'the control directory is in sight inside'
	[[ ! -e $out/warden/control/x ]] || fail 'the agent wrote into the control directory'
}

# A profile path that exposes a credential store of the home (`read-only
# ~/.aws`) is the user's choice, but not a silent one: a workspace there is
# refused, and a profile may come with a project. warden says so at the
# start, naming the line and what to use instead.
test_profile_store_exposed_said() {
	mkdir -p "$HOME/.aws" && echo 'aws_secret_access_key = x' >"$HOME/.aws/credentials" ||
		fatal 'no ~/.aws'
	printf 'read-only %s\n' "$HOME/.aws" >"$T_TMP/aws.profile"
	wrun --profile "$T_TMP/aws.profile" -- cat "$HOME/.aws/credentials"
	assert_rc 0
	assert_out_has aws_secret_access_key 'the store a profile names is not readable inside'
	assert_err_match "aws.profile:1\\) is your ~/.aws, a credential store: .*--secret" 'not said'
	printf 'read-only %s\n' "$T_TMP" >"$T_TMP/other.profile"
	wrun --profile "$T_TMP/other.profile" -- true
	assert_rc 0
	[[ $ERR != *'credential store'* ]] || fail "said of a path holding no store: $(excerpt "$ERR")"
}
