# t_sweep.sh - the end-of-session sweep (src/workspace/sweep.c, src/common/walk.c):
# what the agent leaves that would run or gain privilege on the host (a new
# .git with hooks, a setuid bit) is moved aside or cleared, however deep it
# lies, inside what the agent made unreadable, and when the workspace was
# renamed on the host during the session; each is an alert in the log and a
# line on stderr.
# shellcheck shell=bash

# sweep_alert RULE PATH: the latest session's log has an alert of RULE for
# PATH (workspace-relative).
sweep_alert() {
	local rule=$1 path=$2 saved_out=${OUT-} saved_err=${ERR-} saved_rc=${RC-}
	wardenc log show --event alert --json
	grep -F "\"path\":\"$path\"" <<<"$OUT" | grep -F "\"rule\":\"$rule\"" >/dev/null ||
		fail "no $rule alert for $(excerpt "$path") in the log: $(excerpt "$OUT")"
	OUT=$saved_out ERR=$saved_err RC=$saved_rc
}

# deep_path N: "d/d/.../d" (N levels)
deep_path() {
	local p='' i
	for ((i = 0; i < $1; i++)); do p+=d/; done
	printf '%s' "${p%/}"
}

test_sweep_deep() {
	# A hook planted 3,000 levels down (a path far past PATH_MAX, deeper than
	# the fds a process may hold) is moved aside like one at the top.
	have perl || skip 'perl not installed (the agent makes the deep tree with it)'
	# shellcheck disable=SC2016 # perl's variables, for perl
	wsh 'perl -e '\''for (1 .. 3000) { mkdir "d" or die "mkdir: $!"; chdir "d" or die "chdir: $!" }
		mkdir ".git" or die; mkdir ".git/hooks" or die;
		open(my $f, ">", ".git/hooks/pre-commit") or die; print $f "#!/bin/sh\ntouch /tmp/pwned\n";
		close $f; chmod 0755, ".git/hooks/pre-commit"; print "planted\n"'\'
	assert_out_has planted
	local found quarantined
	found=$(find d -name .git 2>&1)
	quarantined=$(find d -name '.git.warden-quarantine-*' 2>&1)
	[[ -z $found ]] || fail "the deep .git stayed in place: $(excerpt "$found")"
	[[ -n $quarantined && $(wc -l <<<"$quarantined") == 1 ]] ||
		fail "no quarantined deep .git: $(excerpt "$quarantined")"
	[[ -n $(find d -path '*/.git.warden-quarantine-*/hooks/pre-commit' 2>/dev/null) ]] ||
		fail 'the quarantined .git lost its hook'
	[[ $ERR == *"was moved to"* ]] || fail "no word on stderr about the moved repository: $(excerpt "$ERR")"
	sweep_alert git.created-in-sandbox "$(deep_path 3000)/.git"
}

test_sweep_unreadable() {
	# A repository inside a directory the agent made unreadable (mode 000; it
	# runs as the user, who owns it) is looked at anyway and moved aside; the
	# directory keeps the mode the agent gave it.
	wsh 'mkdir -p hide/deeper/.git/hooks && echo "#!/bin/sh" > hide/deeper/.git/hooks/pre-commit &&
	     chmod 000 hide/deeper hide && echo planted'
	assert_out_has planted
	local mode
	mode=$(stat -c %a hide)
	[[ $mode == 0 ]] || fail "the sweep left hide with mode $mode, not the agent's 000"
	chmod 755 hide
	mode=$(stat -c %a hide/deeper)
	[[ $mode == 0 ]] || fail "the sweep left hide/deeper with mode $mode, not the agent's 000"
	chmod 755 hide/deeper
	assert_host_absent hide/deeper/.git 'the .git in the unreadable directory stayed in place'
	compgen -G 'hide/deeper/.git.warden-quarantine-*' >/dev/null ||
		fail "the .git in the unreadable directory was not moved aside: $(ls -a hide/deeper)"
	[[ $ERR != *"cannot look inside"* ]] || fail "the sweep passed the directory by: $(excerpt "$ERR")"
	[[ $ERR == *"was moved to"* ]] || fail "no word on stderr about the moved repository: $(excerpt "$ERR")"
	sweep_alert git.created-in-sandbox hide/deeper/.git
}

test_sweep_workspace_renamed() {
	# The user renames the workspace on the host while the agent works: the
	# sweep still finds the repository the agent planted, in the directory
	# under its new name, and says where it is now.
	local moved=$T_TMP/renamed-ws
	warden_bg "$T_TMP/bg.out" -- sh -c 'mkdir -p .git/hooks && echo "#!/bin/sh" > .git/hooks/pre-commit &&
		echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	mv "$WS" "$moved" || fatal 'could not rename the workspace on the host'
	touch "$moved/go"
	wait "$TPID"
	cd "$moved" || fatal "cd $moved"
	assert_host_absent .git 'the .git planted before the rename stayed in place'
	compgen -G '.git.warden-quarantine-*' >/dev/null || fail "no quarantined .git: $(ls -a)"
	grep -qF "was moved to $moved/.git.warden-quarantine-" "$T_TMP/bg.out.err" ||
		fail "stderr does not name the new place: $(excerpt "$(<"$T_TMP/bg.out.err")")"
	sweep_alert git.created-in-sandbox .git
	assert_host_absent .mcp.json 'a placeholder left in the renamed workspace'
	assert_host_absent .claude 'a placeholder left in the renamed workspace'
}

test_sweep_git_odd_files() {
	# A FIFO, a symlink to a device or a socket the agent leaves inside a
	# repository's .git would be opened by the host's next git command (git
	# waits on a FIFO forever): the sweep removes each, says so and logs it.
	# A FIFO inside a directory moved in whole, older than the session, is
	# removed too (git makes none); a symlink there before the session stays
	# (a `repo` checkout links its .git's parts).
	have git || skip 'git not installed'
	have python3 || skip 'python3 not installed (the agent makes the socket with it)'
	git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m base ||
		fatal 'could not make the repository'
	mkdir -p old/sub && mkfifo old/sub/fifo && ln -s ../HEAD .git/host-link ||
		fatal 'could not make the old FIFO and link'
	sleep 0.05 # past the clock tick: a link made in the start's own counts as the session's
	wsh 'mkfifo .git/refs/heads/evil && ln -s /dev/zero .git/refs/tags/zero &&
		mkdir .git/objects/zz && mkfifo .git/objects/zz/deep &&
		mkfifo "$(ls -d .git/objects/[0-9a-f][0-9a-f] | head -n1)/fifo" &&
		python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\".git/logs/sock\")" &&
		mv old .git/refs/old &&
		echo planted'
	assert_rc 0
	assert_out_has planted
	local p
	for p in .git/refs/heads/evil .git/refs/tags/zero .git/objects/zz/deep .git/logs/sock \
		.git/refs/old/sub/fifo; do
		assert_host_absent "$p" 'the sweep left it'
		sweep_alert git.odd-file-in-sandbox "$p"
	done
	if compgen -G '.git/objects/[0-9a-f][0-9a-f]/fifo' >/dev/null; then
		fail 'the FIFO in an object directory of the start stayed'
	fi
	[[ -L .git/host-link ]] || fail 'the symlink the host made before the session was removed'
	assert_err_match 'removed a FIFO at .*/\.git/refs/heads/evil after the session'
	assert_err_match 'removed a symlink at .*/\.git/refs/tags/zero -> /dev/zero'
	timeout 10 git branch >/dev/null || fail "the host's git branch did not answer (rc $?)"
}

# A FIFO at a name git reads in the working tree (every directory's
# .gitignore, .gitattributes) hung the host's `git status`: the sweep
# removes it, says so and logs it. A FIFO at another name stays, shown by
# `warden diff` and removed by `warden undo`.
test_sweep_tree_fifo_at_git_names() {
	have git || skip 'git not installed'
	mkdir sub && printf 'x\n' >sub/f && git init -q . && git add -A &&
		git -c user.email=a@b -c user.name=a commit -q -m base || fatal 'could not make the repository'
	wsh 'mkfifo sub/.gitignore .gitattributes sub/.mailmap other && echo planted'
	assert_out_has planted
	local p
	for p in sub/.gitignore .gitattributes sub/.mailmap; do
		assert_host_absent "$p" 'the sweep left it'
		sweep_alert git.odd-file-in-sandbox "$p"
	done
	assert_err_match 'removed a FIFO at .*/sub/\.gitignore after the session: git on your host reads'
	[[ -p other ]] || fail 'the FIFO at another name was removed'
	timeout 10 git status >/dev/null || fail "the host's git status did not answer (rc $?)"
	wardenc diff --list
	assert_out_line '  added     other (FIFO)'
	wardenc undo --yes
	assert_rc 0 'undo'
	[[ ! -e other ]] || fail 'undo left the FIFO'
}

test_sweep_quarantined_next_session() {
	# What a sweep moved aside waits for the user, and the next session runs
	# beside it: the quarantined .git (its config a symlink, which as a
	# repository's would refuse the workspace) is read-only inside, whole,
	# and cannot be moved back or away; the next sweep leaves it as it is.
	# One the agent names like a quarantine during a session is swept as any
	# new repository.
	wsh 'mkdir -p sub/.git/objects sub/.git/refs/heads &&
		echo "ref: refs/heads/main" > sub/.git/HEAD && ln -s /etc/hostname sub/.git/config &&
		echo "the agent wrote this" > sub/.git/description && echo planted'
	assert_out_has planted
	local q
	q=$(compgen -G 'sub/.git.warden-quarantine-*') || fatal "no quarantined .git: $(ls -a sub)"
	assert_host_absent sub/.git 'the .git stayed in place'
	wsh "cat $q/description
		echo x >> $q/description && echo appended
		rm -f $q/config && echo config-removed
		mkdir $q/refs/heads/new && echo ref-made
		mv $q sub/.git && echo moved-back
		mv sub sub2 && echo parent-moved
		mkdir -p fake.warden-quarantine-x/objects fake.warden-quarantine-x/refs fake.warden-quarantine-x/hooks &&
		echo ref: refs/heads/main > fake.warden-quarantine-x/HEAD && echo faked"
	assert_rc 0 'the session beside a quarantined .git with a symlinked config'
	assert_out_has 'the agent wrote this' 'the quarantined .git is not readable inside'
	assert_out_has faked
	local w
	for w in appended config-removed ref-made moved-back parent-moved; do
		assert_out_lacks "$w" "$w: the quarantined .git is writable inside"
	done
	[[ -L $q/config && $(readlink "$q/config") == /etc/hostname ]] || fail 'the quarantined config changed'
	[[ $(<"$q/description") == 'the agent wrote this' ]] || fail 'the quarantined description changed'
	assert_host_absent sub/.git 'the quarantined .git was moved back'
	[[ -f $q/HEAD ]] || fail "the next sweep moved the quarantined .git's HEAD aside: $(ls -a "$q")"
	[[ -z $(compgen -G "$q.*") ]] || fail "the quarantined .git was moved aside again: $(ls -a sub)"
	assert_host_absent fake.warden-quarantine-x/HEAD "the agent's quarantine lookalike kept its HEAD"
	compgen -G 'fake.warden-quarantine-x/HEAD.warden-quarantine-*' >/dev/null ||
		fail "the agent's quarantine lookalike was not swept: $(ls -a fake.warden-quarantine-x)"
}

test_sweep_setid() {
	# A setuid or setgid bit that appears in the workspace during the session
	# (set here from the host: the agent's own chmod is refused) is cleared
	# by the sweep; one a file had at start stays.
	{ echo x >kept && chmod 4755 kept; } || fatal 'cannot make a setuid file'
	sleep 0.05 # past the clock tick: a change in the start's own counts as the session's
	warden_bg "$T_TMP/bg.out" -- sh -c 'printf "#!/bin/sh\nid\n" > prog && chmod 755 prog && cp prog prog2 &&
		echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	{ chmod u+s prog && chmod g+s prog2; } || fatal 'the host could not set the bits'
	touch go
	wait "$TPID"
	local m
	m=$(stat -c %a prog)
	[[ $m == 755 ]] || fail "prog has mode $m after the sweep, not 755"
	m=$(stat -c %a prog2)
	[[ $m == 755 ]] || fail "prog2 has mode $m after the sweep, not 755"
	m=$(stat -c %a kept)
	[[ $m == 4755 ]] || fail "kept, setuid at start, has mode $m after the sweep"
	grep -q 'prog got the setuid bit' "$T_TMP/bg.out.err" ||
		fail "no word on stderr about prog: $(excerpt "$(<"$T_TMP/bg.out.err")")"
	grep -q 'prog2 got the setgid bit' "$T_TMP/bg.out.err" ||
		fail "no word on stderr about prog2: $(excerpt "$(<"$T_TMP/bg.out.err")")"
	sweep_alert setid.appeared-in-sandbox prog
	sweep_alert setid.appeared-in-sandbox prog2
}

test_sweep_setid_clock_set_back() {
	# The host's wall clock set back 2 s during the session (an
	# administrator, NTP), a setuid bit set while it is behind, the clock
	# set forward again before the session ends: the bit's ctime is older
	# than the start, and the sweep still clears it (it counts from as far
	# back as the clock went). Root only: setting the clock needs it.
	is_root || { skip 'setting the clock needs root'; return; }
	warden_bg "$T_TMP/bg.out" -- sh -c 'printf "#!/bin/sh\nid\n" > prog && chmod 755 prog &&
		echo ready; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/bg.out" '^ready' 20 || fatal "session did not get ready: $(<"$T_TMP/bg.out.err")"
	sleep 0.1
	date -s '2 seconds ago' >/dev/null || fatal 'the clock could not be set back'
	chmod u+s prog
	sleep 0.3 # the session sees the clock behind
	date -s '2 seconds' >/dev/null || fatal 'THE CLOCK IS 2 s BEHIND: it could not be set forward'
	touch go
	wait "$TPID"
	local m
	m=$(stat -c %a prog)
	[[ $m == 755 ]] || fail "prog, made setuid while the clock was behind, has mode $m after the sweep"
	grep -q 'prog got the setuid bit' "$T_TMP/bg.out.err" ||
		fail "no word on stderr about prog: $(excerpt "$(<"$T_TMP/bg.out.err")")"
	sweep_alert setid.appeared-in-sandbox prog
	wardenc log verify
	assert_rc 0 'the log of a session whose clock went back verifies'
}

test_sweep_placeholders_concurrent() {
	# Two sessions started together on one workspace, 20 rounds: each makes
	# the placeholders it gets to first and adopts those the other made,
	# neither plans while the other makes them, and whichever ends last
	# removes them all: after each round the workspace is as it was (8
	# rounds of 30 used to leave sockets and directories behind).
	local before left i a b ra rb
	before=$(ls -A)
	for ((i = 1; i <= 20; i++)); do
		timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- true </dev/null >"$T_TMP/a.out" 2>"$T_TMP/a.err" &
		a=$!
		timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- true </dev/null >"$T_TMP/b.out" 2>"$T_TMP/b.err" &
		b=$!
		wait "$a"
		ra=$?
		wait "$b"
		rb=$?
		((ra == 0 && rb == 0)) ||
			fatal "round $i: the sessions ended $ra and $rb: $(excerpt "$(cat "$T_TMP/a.err" "$T_TMP/b.err")")"
		grep -h 'placeholder' "$T_TMP/a.err" "$T_TMP/b.err" &&
			fail "round $i: a note on the placeholders: $(excerpt "$(cat "$T_TMP/a.err" "$T_TMP/b.err")")"
		left=$(ls -A)
		[[ $left == "$before" ]] ||
			fatal "round $i: left in the workspace: $(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$left") | tr '\n' ' ')"
	done
	wardenc log list
	assert_rc 0 'log list'
	(($(grep -c 'true$' <<<"$OUT") == 40)) || fail "not 40 sessions in the log: $(excerpt "$OUT")"
}

# sweep_repo: the workspace a git repository with one commit, made on the
# host (there at start).
sweep_repo() {
	have git || skip 'git not installed'
	git init -q . && git -c user.name=u -c user.email=u@example.invalid commit -q --allow-empty -m first ||
		fatal 'git init on the host failed'
}

test_sweep_worktree_kept() {
	# `git worktree add` inside: its .git/worktrees/NAME (git's own entries,
	# commondir ../..) and the new worktree's .git file naming it stay
	# after the session, kept on the record, and git on the host works in
	# the worktree.
	sweep_repo
	wsh 'git worktree add -q wt1 -b b1 && cd wt1 &&
		git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m inside &&
		echo made'
	assert_rc 0 'git worktree add inside'
	assert_out_line made
	[[ -f wt1/.git && -d .git/worktrees/wt1 ]] || fail "the worktree moved aside: $(ls -a . wt1 .git)"
	[[ $ERR != *'moved to'* ]] || fail "a worktree reported moved: $(excerpt "$ERR")"
	OUT=$(git -c safe.directory='*' -C wt1 log --format=%s -1 2>&1)
	[[ $OUT == inside ]] || fail "git on the host does not work in the worktree: $(excerpt "$OUT")"
	wardenc log show --event alert --json
	matches -F '"path":".git/worktrees","action":"kept","severity":"low"' <<<"$OUT" ||
		fail "the kept worktrees/ are not on the record: $(excerpt "$OUT")"
	matches -F '"path":"wt1/.git","action":"kept","severity":"low"' <<<"$OUT" ||
		fail "the kept .git file is not on the record: $(excerpt "$OUT")"
	assert_out_lacks '"action":"quarantined"' 'something quarantined'
}

test_sweep_worktree_refused() {
	# A worktree with anything git does not keep there, or sent elsewhere,
	# is moved aside as any new .git: a config.worktree, a commondir toward
	# another repository, a .git file naming a repository the agent made, a
	# worktree of a repository whose config sets core.hooksPath (relative:
	# from the new worktree's top, which the agent wrote).
	sweep_repo
	wsh 'git worktree add -q wt1 -b b1 && echo "[core]" > .git/worktrees/wt1/config.worktree && echo made' \
		--profile "$(no_detect_actions)"
	assert_out_line made
	assert_host_absent .git/worktrees 'worktrees with a config.worktree stayed'
	assert_host_absent wt1/.git "the .git file naming them stayed"
	assert_err_match 'worktrees/wt1 has config.worktree'
	sweep_alert git.created-in-sandbox .git/worktrees
	rm -rf .git/worktrees.warden-quarantine-* wt1

	wsh 'mkdir -p evil/.git && git worktree add -q wt2 -b b2 && echo ../../../evil/.git > .git/worktrees/wt2/commondir &&
		echo made' --profile "$(no_detect_actions)"
	assert_out_line made
	assert_host_absent .git/worktrees 'a commondir toward another repository stayed'
	assert_err_match 'commondir does not name its own repository'
	rm -rf .git/worktrees.warden-quarantine-* wt2

	wsh 'mkdir -p fake/.git/worktrees/x evil && git init -q fake2 &&
		echo "../../.." > fake/.git/worktrees/x/commondir &&
		echo "gitdir: $PWD/fake/.git/worktrees/x" > evil/.git && echo made' --profile "$(no_detect_actions)"
	assert_out_line made
	assert_host_absent evil/.git "a .git file toward a repository the agent made stayed"
	assert_err_match 'evil/.git .*which was not there at start'
	rm -rf evil fake fake2

	git config core.hooksPath .githooks
	wsh 'git worktree add -q wt3 -b b3 && echo made' --profile "$(no_detect_actions)"
	assert_out_line made
	assert_host_absent wt3/.git 'a worktree of a repository with core.hooksPath stayed'
	assert_err_match 'core.hooksPath'
}

test_sweep_worktree_later_session() {
	# A worktree from an earlier session (or the host) works in the next:
	# a commit in it, a new `git worktree add` beside it (judged and kept as
	# git's own), while an administrative directory the agent forges there
	# (its commondir toward another repository) is moved aside.
	sweep_repo
	wsh 'git worktree add -q wt1 -b b1 && echo made'
	assert_out_line made
	wsh 'cd wt1 && git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m later &&
		cd .. && git worktree add -q wt2 -b b2 && mkdir -p .git/worktrees/evil other/.git &&
		echo ../../../other/.git > .git/worktrees/evil/commondir && echo done' \
		--profile "$(no_detect_actions)"
	assert_rc 0 'a commit in the earlier worktree, a new one beside it'
	assert_out_line done
	OUT=$(git -c safe.directory='*' -C wt1 log --format=%s -1 2>&1)
	[[ $OUT == later ]] || fail "the commit in the earlier worktree is not there: $(excerpt "$OUT")"
	OUT=$(git -c safe.directory='*' -C wt2 status -sb 2>&1)
	[[ $OUT == '## b2'* ]] || fail "git on the host does not work in the new worktree: $(excerpt "$OUT")"
	assert_host_absent .git/worktrees/evil 'a forged administrative directory stayed'
	assert_err_match 'worktrees/evil/commondir does not name its own repository'
	sweep_alert git.created-in-sandbox .git/worktrees/evil
	wardenc log show --event alert --json
	matches -F '"path":".git/worktrees/wt2","action":"kept","severity":"low"' <<<"$OUT" ||
		fail "the new worktree's administrative directory is not on the record as kept: $(excerpt "$OUT")"
}

test_claude_worktree_writable() {
	# Claude Code's worktrees (.claude/worktrees/NAME: --worktree, its
	# EnterWorktree tool, a subagent's isolation) in a workspace that has
	# a .claude: with the claude agent's profile .claude/worktrees is
	# writable while the rest of .claude stays read-only. A worktree of a
	# repository that commits .claude/ keeps its checkout's .claude when it
	# holds only what the top's does (on the record as kept); one the
	# agent changed is moved aside. A later session commits there too.
	sweep_repo
	mkdir .claude && echo '{}' >.claude/settings.json && echo '{"a":1}' >.claude/settings.local.json &&
		git add .claude/settings.json && git -c user.name=u -c user.email=u@example.invalid commit -q -m claude ||
		fatal 'could not commit .claude'
	local g='git -c user.name=a -c user.email=a@example.invalid'
	wsh "git worktree add -q .claude/worktrees/feat -b worktree-feat && cd .claude/worktrees/feat &&
		echo one > f && git add f && $g commit -q -m one && cd ../../.. &&
		git worktree add -q .claude/worktrees/bad -b worktree-bad &&
		echo '{\"hooks\":{}}' > .claude/worktrees/bad/.claude/settings.json &&
		echo made; echo x > .claude/settings.json || echo refused" --agent claude --profile "$(no_detect_actions)"
	assert_rc 0
	assert_out_line made
	assert_out_line refused
	assert_host_file .claude/settings.json '{}' "the top's .claude"
	OUT=$(git -c safe.directory='*' -C .claude/worktrees/feat log --format=%s -1 2>&1)
	[[ $OUT == one ]] || fail "the commit in Claude Code's worktree is not there: $(excerpt "$OUT")"
	assert_host_file .claude/worktrees/feat/.claude/settings.json '{}' "the worktree's checkout of .claude"
	assert_host_absent .claude/worktrees/bad/.claude 'a changed .claude in a worktree stayed'
	wardenc log show --event alert --json
	matches -F '"path":".claude/worktrees/feat/.claude","action":"kept","severity":"low"' <<<"$OUT" ||
		fail "the kept checkout of .claude is not on the record: $(excerpt "$OUT")"
	sweep_alert config.created-in-sandbox .claude/worktrees/bad/.claude
	wsh "cd .claude/worktrees/feat && echo two > f && $g commit -q -am two && echo again" --agent claude
	assert_rc 0 'a commit in the worktree in a later session'
	assert_out_line again
	# without the agent's profile, .claude/worktrees is read-only as the rest
	wsh 'mkdir .claude/worktrees/other || echo refused'
	assert_out_line refused
}

# plant_rebase TODO [STRATEGY]: a shell script for inside that makes
# .git/rebase-merge look like an interactive rebase of the current branch
# stopped with TODO (printf format) left, and its strategy file when given.
plant_rebase() {
	printf '%s' 'd=.git/rebase-merge && mkdir $d && git rev-parse HEAD > $d/orig-head &&
		git rev-parse HEAD > $d/onto && git symbolic-ref HEAD > $d/head-name &&
		touch $d/interactive && : > $d/done && printf "'"$1"'" > $d/git-rebase-todo'
	[[ -z ${2-} ]] || printf ' && echo %q > $d/strategy' "$2"
}

test_sweep_rebase_runs() {
	# A rebase's state the agent leaves in .git runs on the host's next
	# `git rebase --continue`: its todo's exec lines by the shell, a merge
	# strategy that is not git's own as a program (`../../x` is the
	# worktree's ./x, behind a pick `git status` shows as harmless). Each
	# is moved aside whole, said and logged; the host's --continue then
	# runs nothing.
	sweep_repo
	git -c user.name=u -c user.email=u@example.invalid commit -q --allow-empty -m second ||
		fatal 'second commit failed'
	local mark=$T_TMP/ran
	wsh "$(plant_rebase "pick $(git rev-parse HEAD) second\\n  x touch $mark\\n") && echo planted" \
		--profile "$(no_detect_actions)"
	assert_out_line planted
	assert_host_absent .git/rebase-merge 'a todo with an exec line stayed'
	assert_err_match "rebase-merge, a rebase or cherry-pick in progress .*its todo runs \`touch $mark\`"
	sweep_alert git.rebase-runs-in-sandbox .git/rebase-merge
	timeout 10 git -c user.name=u -c user.email=u@example.invalid rebase --continue >/dev/null 2>&1
	[[ ! -e $mark ]] || fail "the host's git rebase --continue ran the agent's exec line"
	rm -rf .git/rebase-merge.warden-quarantine-*

	git checkout -q -b side && echo s > s && git add s &&
		git -c user.name=u -c user.email=u@example.invalid commit -q -m side &&
		git checkout -q - || fatal 'could not make the side branch'
	wsh "mkdir git-merge-.. && printf '#!/bin/sh\\ntouch $mark\\n' > x && chmod +x x &&
		$(plant_rebase "pick $(git rev-parse side) side\\n" ../../x) && echo planted" \
		--profile "$(no_detect_actions)"
	assert_out_line planted
	assert_host_absent .git/rebase-merge 'a strategy naming a program stayed'
	assert_err_match 'its merge strategy `../../x` is none of git.s own'
	timeout 10 git -c user.name=u -c user.email=u@example.invalid rebase --continue >/dev/null 2>&1
	[[ ! -e $mark ]] || fail "the host's git rebase --continue ran the agent's strategy"

	# a cherry-pick's options, in git's config syntax
	wsh "mkdir .git/sequencer && git rev-parse HEAD > .git/sequencer/head &&
		printf '[options]\\n\\tstrategy = ../../x\\n' > .git/sequencer/opts && echo planted" \
		--profile "$(no_detect_actions)"
	assert_out_line planted
	assert_host_absent .git/sequencer "a cherry-pick's strategy naming a program stayed"
	sweep_alert git.rebase-runs-in-sandbox .git/sequencer

	# no hang on a FIFO where the todo would be
	wsh 'mkdir .git/rebase-merge && mkfifo .git/rebase-merge/git-rebase-todo && echo planted' \
		--profile "$(no_detect_actions)"
	assert_out_line planted
	assert_host_absent .git/rebase-merge 'a FIFO for a todo stayed'
	assert_err_match 'git-rebase-todo: not a regular file'
}

test_sweep_rebase_kept() {
	# The user's own rebase, stopped on a conflict with exec lines left,
	# stays when the agent resolves the conflict inside (the lines there at
	# start, git's own strategy): the host's --continue then finishes it
	# and runs the user's exec line. Nothing is said or quarantined.
	sweep_repo
	local g='git -c user.name=u -c user.email=u@example.invalid' mark=$T_TMP/ran
	echo a > f && git add f && $g commit -q -m f && git checkout -q -b side &&
		echo b > f && $g commit -q -am b && git checkout -q - && echo c > f &&
		$g commit -q -am c || fatal 'could not make the two branches'
	git checkout -q side
	$g rebase -q -s ort --exec "touch $mark" master >/dev/null 2>&1 &&
		fatal 'the rebase did not stop on its conflict'
	[[ -d .git/rebase-merge ]] || fatal 'no rebase in progress'
	wsh 'echo resolved > f && git add f && echo done' --profile "$(no_detect_actions)"
	assert_rc 0
	assert_out_line done
	[[ -d .git/rebase-merge ]] || fail "the user's rebase was moved aside: $(excerpt "$ERR")"
	[[ $ERR != *'rebase or cherry-pick in progress'* ]] || fail "a rebase reported: $(excerpt "$ERR")"
	GIT_EDITOR=true timeout 10 $g rebase --continue >/dev/null 2>&1 ||
		fail 'the rebase did not finish on the host'
	[[ -e $mark ]] || fail "the user's own exec line did not run"
}

# The agent's forgeries of an object the repository holds (forge_object.py).
SWEEP_FORGE_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/forge_object.py

# sweep_repo: a repository in the workspace with one commit of base.txt
sweep_repo() {
	have git || skip 'git not installed'
	have python3 || skip 'python3 not installed (the agent forges objects with it)'
	git init -q . && echo base >base.txt && git add base.txt &&
		git -c user.email=a@b -c user.name=a commit -qm base || fatal 'could not make the repository'
}

test_sweep_object_forged_in_place() {
	# In a plain session the agent writes other content over the loose object
	# of a committed file, in place (chmod, write: its directory does not
	# change, only the file's own ctime): the end's check finds it, moves it
	# aside and logs it; the host's checkout does not write the forged bytes.
	sweep_repo
	local id
	id=$(git rev-parse HEAD:base.txt)
	wrun -- python3 -c "$(<"$SWEEP_FORGE_PY")" inplace base.txt
	assert_rc 0
	assert_out_has "forged $id"
	assert_err_match "forged git object $id in .*/\.git: "
	assert_host_absent ".git/objects/${id:0:2}/${id:2}" 'the forged object stayed in place'
	sweep_alert git.object-forged ".git/objects/${id:0:2}/${id:2}"
	rm -f base.txt
	git checkout -q base.txt 2>/dev/null
	[[ ! -e base.txt || $(<base.txt) == base ]] ||
		fail "the host's checkout wrote the forged content: $(excerpt "$(<base.txt)")"
}

test_sweep_object_forged_pack() {
	# The agent adds a pack whose index maps the id of a committed file to
	# other content (git looks in packs before loose objects): the pack and
	# its index are moved aside, and git reads the true loose object again.
	sweep_repo
	local id p=.git/objects/pack/pack-ffffffffffffffffffffffffffffffffffffffff
	id=$(git rev-parse HEAD:base.txt)
	wrun -- python3 -c "$(<"$SWEEP_FORGE_PY")" pack base.txt
	assert_rc 0
	assert_out_has "forged $id"
	assert_err_match "forged git object $id in .*/\.git: .*$p\.idx"
	assert_host_absent "$p.idx" 'the forged index stayed in place'
	assert_host_absent "$p.pack" 'the forged pack stayed in place'
	compgen -G "$p.pack.warden-quarantine-*" >/dev/null || fail 'the pack was not moved aside'
	sweep_alert git.object-forged "$p.idx"
	[[ $(git cat-file -p HEAD:base.txt) == base ]] || fail "git reads the forged content"
	rm -f base.txt && git checkout -q base.txt && assert_host_file base.txt base
}

test_sweep_objects_gc_no_alert() {
	# An honest session commits and runs `git gc`, which writes a pack of
	# every object and removes the loose ones: all of them are checked, none
	# is taken for a forgery, and nothing is moved aside.
	sweep_repo
	wsh 'echo more > more.txt && git add more.txt &&
		git -c user.email=a@b -c user.name=a commit -qm more && git gc -q && echo done'
	assert_rc 0
	assert_out_has done
	[[ $ERR != *forged* && $ERR != *"could not check"* ]] || fail "a word of forgery: $(excerpt "$ERR")"
	wardenc log show --event alert --json
	[[ $OUT != *git.object-* ]] || fail "an object alert for an honest gc: $(excerpt "$OUT")"
	[[ -z $(find .git -name '*warden-quarantine*') ]] || fail 'something was moved aside'
	compgen -G '.git/objects/pack/*.idx' >/dev/null || fail 'git gc wrote no pack'
	git fsck --no-progress >/dev/null 2>&1 || fail 'git fsck failed after the session'
}

test_sweep_object_index_refused() {
	# A pack index the end's check cannot read (a version git does not read
	# either) is not taken for a forgery: it stays, said on stderr with the
	# way to check the repository, and logged as unverified (rated medium).
	sweep_repo
	wsh 'printf "\377tOc\0\0\0\3" > .git/objects/pack/pack-x.idx && : > .git/objects/pack/pack-x.pack &&
		echo planted'
	assert_rc 0
	assert_out_has planted
	assert_err_match 'could not check the git objects in .*/pack-x\.idx.*an index version git does not read.*fsck'
	[[ -e .git/objects/pack/pack-x.idx ]] || fail 'the unreadable index was moved'
	sweep_alert git.object-unverified .git/objects/pack/pack-x.idx
	wardenc log show --event alert --json
	[[ $OUT == *'"rule":"git.object-unverified"'*'"severity":"medium"'* ]] ||
		fail "not rated medium: $(excerpt "$OUT")"
	[[ $OUT != *git.object-forged* ]] || fail "taken for a forgery: $(excerpt "$OUT")"
}
