# t_task.sh - a workspace per task (run --task NAME, warden task;
# src/session/task.c): in a git repository each task is a worktree on its
# own branch warden/NAME beside the repository; two sessions on two tasks
# commit on their own branches without touching each other or the main
# working tree; what the host's git would run (hooks, config, the gitfile,
# the other branches) cannot be planted or changed; one session per task;
# outside a repository a task is a copy.
# shellcheck shell=bash

# task_make_repo DIR: a repository with one commit and an identity in its config
# (its own: the repository's config wins over the identity warden writes
# into the sandbox's ~/.gitconfig, src/workspace/gitident.h).
task_make_repo() {
	have git || skip 'git not installed'
	git init -q "$1" && git -C "$1" config user.email agent@example.com &&
		git -C "$1" config user.name agent && echo base >"$1/base.txt" &&
		git -C "$1" add base.txt && git -C "$1" commit -qm base ||
		fatal "could not make the repository $1"
}

# task_host_git DIR ARGS...: git as the host runs it, no hooks of the repository
task_host_git() {
	local d=$1
	shift
	git -C "$d" -c core.hooksPath=/dev/null "$@"
}

# The agent's attempts at what would run or change things on the host.
TASK_PLANT='c=$(git rev-parse --git-common-dir);
	for w in "echo evil > $c/hooks/post-checkout" "echo \"[core] hooksPath = /tmp\" >> $c/config" \
		"mkdir $c/hooks/x" "echo gitdir: /tmp > .git" "echo x > $c/worktrees/\$OTHER/HEAD" \
		"git update-ref refs/heads/master HEAD" "git config core.fsmonitor evil" \
		"echo y > $c/info/attributes" \
		"echo \"[core] hooksPath = /tmp\" > $(git rev-parse --git-dir)/config.worktree"; do
		if sh -c "$w" 2>/dev/null; then echo "PLANTED: $w"; fi
	done
	# the other task branch: not in sight (a private refs/heads/warden),
	# so this lands nowhere that counts
	echo 0000000000000000000000000000000000000000 > $c/refs/heads/warden/$OTHER 2>/dev/null; true'

test_task_two_concurrent() {
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	local main_before hooks_before config_before master_before
	main_before=$(cd "$repo" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
	hooks_before=$(find "$repo/.git/hooks" -printf '%P %s %T@\n' | sort | sha256sum)
	config_before=$(sha256sum <"$repo/.git/config")
	master_before=$(task_host_git "$repo" rev-parse master)
	# the worktrees exist before the race, so each agent can try the other's
	(cd "$repo" && timeout 60 "$WARDEN" run -q --task alpha -- true) || fatal 'task alpha not made'
	(cd "$repo" && timeout 60 "$WARDEN" run -q --task beta -- true) || fatal 'task beta not made'
	local t
	for t in alpha beta; do
		local other=beta
		[[ $t == beta ]] && other=alpha
		(cd "$repo" && OTHER=$other timeout 90 "$WARDEN" run -q --task "$t" --env OTHER \
			--profile "$(no_detect_actions "$T_TMP/$t.profile")" -- sh -c "
			echo $t > $t.txt && git add $t.txt && git commit -qm 'work on $t' &&
			sleep 2 && echo $t-2 >> $t.txt && git commit -qam 'more $t' && echo COMMITTED
			$TASK_PLANT" >"$T_TMP/$t.out" 2>"$T_TMP/$t.err"; echo $? >"$T_TMP/$t.rc") &
		bg_track $!
	done
	wait
	for t in alpha beta; do
		[[ $(<"$T_TMP/$t.rc") == 0 ]] || fail "task $t: rc $(<"$T_TMP/$t.rc"): $(excerpt "$(<"$T_TMP/$t.err")")"
		grep -q COMMITTED "$T_TMP/$t.out" || fail "task $t did not commit: $(excerpt "$(<"$T_TMP/$t.out")")"
		grep PLANTED "$T_TMP/$t.out" && fail "task $t planted: $(excerpt "$(grep PLANTED "$T_TMP/$t.out")")"
		local files
		files=$(task_host_git "$repo" ls-tree --name-only "warden/$t" | sort | tr '\n' ' ')
		[[ $files == "$t.txt base.txt " || $files == "base.txt $t.txt " ]] ||
			fail "branch warden/$t holds: $files"
		[[ $(task_host_git "$repo" rev-list --count "master..warden/$t") == 2 ]] ||
			fail "branch warden/$t does not have its 2 commits"
		[[ -f $repo.warden-tasks/$t/$t.txt ]] || fail "the worktree of $t lacks $t.txt"
	done
	[[ ! -e $repo.warden-tasks/alpha/beta.txt && ! -e $repo.warden-tasks/beta/alpha.txt ]] ||
		fail 'a task saw the other task files'
	# the host's git: both branches, the main tree and master as they were,
	# no hook or config planted
	local branches
	branches=$(task_host_git "$repo" branch --format='%(refname:short)' | sort | tr '\n' ' ')
	[[ $branches == "master warden/alpha warden/beta " ]] || fail "branches: $branches"
	[[ $(task_host_git "$repo" rev-parse master) == "$master_before" ]] || fail 'master moved'
	[[ $(cd "$repo" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum) == "$main_before" ]] ||
		fail 'the main working tree changed'
	[[ -z $(task_host_git "$repo" status --porcelain) ]] || fail "the main tree is not clean: $(task_host_git "$repo" status --porcelain)"
	[[ $(find "$repo/.git/hooks" -printf '%P %s %T@\n' | sort | sha256sum) == "$hooks_before" ]] || fail 'the hooks directory changed'
	[[ $(sha256sum <"$repo/.git/config") == "$config_before" ]] || fail 'the repository config changed'
	[[ ! -e $repo/.git/info/attributes ]] || fail 'info/attributes was planted'
	for t in alpha beta; do
		[[ $(<"$repo.warden-tasks/$t/.git") == "gitdir: $repo/.git/worktrees/$t" ]] ||
			fail "the gitfile of $t changed: $(<"$repo.warden-tasks/$t/.git")"
		[[ $(task_host_git "$repo.warden-tasks/$t" rev-parse --abbrev-ref HEAD) == "warden/$t" ]] ||
			fail "the worktree of $t is not on warden/$t"
	done
	# the log: the task in session.start's layout
	wardenc log show --event session.start --json
	grep -Eq '"task":\{[^}]*"name":"(alpha|beta)"' <<<"$OUT" &&
		grep -Eq '"task":\{[^}]*"branch":"warden/(alpha|beta)"' <<<"$OUT" ||
		fail "session.start does not name the task: $(excerpt "$OUT")"
	# warden task list and diff
	wardenc task list -w "$repo"
	[[ $OUT == *"alpha	warden/alpha	2 ahead	idle	$repo.warden-tasks/alpha"* ]] ||
		fail "task list: $(excerpt "$OUT")"
	wardenc task diff alpha -w "$repo"
	[[ $OUT == *"+alpha"* && $OUT != *"beta.txt"* ]] || fail "task diff alpha: $(excerpt "$OUT")"
}

test_task_one_session_per_task() {
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	(cd "$repo" && timeout 60 "$WARDEN" run -q --task busy -- sh -c 'echo started; sleep 30' \
		>"$T_TMP/busy.out" 2>&1) &
	bg_track $!
	wait_for "$T_TMP/busy.out" started 30
	wrun -w "$repo" --task busy -- true
	assert_rc 125
	assert_err_match 'task busy is in use by another session'
	wardenc task remove busy -w "$repo"
	assert_rc 125
	[[ -d $repo.warden-tasks/busy ]] || fail 'a task in use was removed'
}

test_task_remove_keeps_branch() {
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	wrun -q -w "$repo" --task gone -- sh -c 'echo g > g && git add g && git commit -qm g'
	assert_rc 0
	wardenc task remove gone -w "$repo"
	assert_rc 0
	[[ ! -e $repo.warden-tasks/gone ]] || fail 'the worktree stayed'
	# the last task gone, nothing of warden's is left beside the repository
	# (the task's private gitdir and refs in .warden/gone used to stay)
	[[ ! -e $repo.warden-tasks ]] || fail "left after the last task: $(find "$repo.warden-tasks" | head -n 5)"
	task_host_git "$repo" rev-parse --verify -q warden/gone >/dev/null || fail 'the branch went too'
	# reused: the branch checked out again, with its commit
	wrun -q -w "$repo" --task gone -- cat g
	assert_rc 0
	assert_out_eq g 'the reused task lacks its branch commit'
}

test_task_copy() {
	mkdir -p "$T_TMP/plain" && echo p >"$T_TMP/plain/p.txt"
	wrun -q -w "$T_TMP/plain" --task c1 -- sh -c 'echo q > q.txt; echo changed > p.txt; pwd'
	assert_rc 0
	assert_out_eq "$T_TMP/plain.warden-tasks/c1" 'the session did not run in the copy'
	[[ $(<"$T_TMP/plain/p.txt") == p && ! -e $T_TMP/plain/q.txt ]] || fail 'the original changed'
	assert_host_file "$T_TMP/plain.warden-tasks/c1/q.txt" q 'the copy'
	wardenc task diff c1 -w "$T_TMP/plain"
	[[ $OUT == *"+changed"* && $OUT == *"+q"* ]] || fail "task diff of a copy: $(excerpt "$OUT")"
}

test_task_bad_names() {
	# the name that would climb out of the tasks' directory (beside the
	# workspace: $WS.warden-tasks/NAME) names a path of this test's own,
	# not a shared one such as $TMPDIR/x that anyone may make
	local n up
	up=$(basename "$WS").escaped
	[[ ! -e $WS/../$up ]] || fatal "$WS/../$up is there before the test"
	for n in "../$up" .hidden -x a/b x.lock ''; do
		wrun --task "$n" -- true
		[[ $RC == 125 ]] || fail "--task '$n' was not refused (rc $RC)"
	done
	[[ ! -e $WS/../$up ]] || fail 'a task name escaped'
}

test_task_branch_not_a_commit() {
	# what the session leaves as its branch must be a commit of the
	# repository; anything else leaves the branch where it was
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	local base
	base=$(task_host_git "$repo" rev-parse master)
	wrun -w "$repo" --task odd -- sh -c \
		'echo "ref: refs/heads/master" > "$(git rev-parse --git-common-dir)/refs/heads/warden/odd"'
	assert_rc 0
	assert_err_match 'task odd: the session left .* not a commit'
	[[ $(task_host_git "$repo" rev-parse warden/odd) == "$base" ]] || fail 'the branch moved'
	wrun -w "$repo" --task odd -- sh -c \
		'echo 0123456789012345678901234567890123456789 > "$(git rev-parse --git-common-dir)/refs/heads/warden/odd"'
	assert_rc 0
	assert_err_match 'task odd: moving warden/odd'
	[[ $(task_host_git "$repo" rev-parse warden/odd) == "$base" ]] || fail 'the branch moved to a missing commit'
}

test_task_branch_moved_before_lock() {
	# A reused task's session starts from its branch as it stands under the
	# task's lock. Here a git wrapper moves the branch just after warden's
	# first git has answered (as another session of the task finishing
	# then would): the session must start from the moved commit. Then the
	# branch packed (no loose ref): the session starts from it as well, and
	# its commit is carried back.
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	wrun -q -w "$repo" --task mv -- sh -c 'echo a > a && git add a && git commit -qm a'
	assert_rc 0
	local c1 c2 real
	c1=$(task_host_git "$repo" rev-parse warden/mv)
	c2=$(task_host_git "$repo" commit-tree -p "$c1" -m moved "$c1^{tree}") || fatal 'commit-tree failed'
	real=$(command -v git)
	mkdir -p "$T_TMP/bin"
	cat >"$T_TMP/bin/git" <<-WRAP
		#!/bin/sh
		"$real" "\$@"; rc=\$?
		case "\$*" in *--git-common-dir*--verify*)
			"$real" update-ref refs/heads/warden/mv $c2 $c1 2>/dev/null ;;
		esac
		exit \$rc
	WRAP
	chmod +x "$T_TMP/bin/git"
	PATH=$T_TMP/bin:$PATH wrun -q -w "$repo" --task mv -- git rev-parse HEAD
	assert_rc 0
	[[ $(task_host_git "$repo" rev-parse warden/mv) == "$c2" ]] || fatal 'the wrapper did not move the branch'
	assert_out_eq "$c2" 'the session started from the branch before it moved'
	task_host_git "$repo" pack-refs --all || fatal 'pack-refs failed'
	[[ ! -e $repo/.git/refs/heads/warden/mv ]] || fatal 'the branch is still a loose ref'
	wrun -q -w "$repo" --task mv -- sh -c 'git rev-parse HEAD; echo b > b && git add b && git commit -qm b'
	assert_rc 0
	assert_out_eq "$c2" 'the session did not start from the packed branch'
	[[ $(task_host_git "$repo" rev-parse warden/mv^) == "$c2" ]] ||
		fail 'the commit on the packed branch was not carried back'
}

test_task_git_stuck_ends() {
	# A git that never answers (here a FIFO as the branch's ref: git blocks
	# opening it) ends the task's start with an error that says so within
	# warden's bound of 10 s, nothing started, no git left behind, and it
	# is not taken for "no repository here" (which would make a copy).
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	mkdir -p "$repo/.git/refs/heads/warden" && mkfifo "$repo/.git/refs/heads/warden/stuck" ||
		fatal 'could not make the FIFO'
	local t0=$SECONDS
	wrun -w "$repo" --task stuck -- sh -c 'echo STARTED'
	assert_rc 125
	assert_err_match 'git rev-parse in .* did not answer within 10 s and was stopped'
	assert_out_lacks STARTED
	((SECONDS - t0 < 40)) || fail "warden took $((SECONDS - t0)) s to give up"
	[[ ! -e $repo.warden-tasks/stuck ]] || fail 'a copy or a worktree was made'
	if pgrep -f 'refs/heads/warden/stuck' >/dev/null; then
		fail 'git was left running'
	fi
}

test_task_git_odd_files_removed() {
	# What a task's session can write of the repository's git directory (its
	# objects, its logs, the worktree's own directory) is swept as a
	# workspace's .git is: a FIFO or a symlink left there, which the host's
	# git would open, is removed, said and logged.
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	wrun -w "$repo" --task odd -- sh -c 'c=$(git rev-parse --git-common-dir) &&
		mkdir -p "$c/objects/zz" && mkfifo "$c/objects/zz/f" && mkfifo "$c/logs/f" &&
		ln -s /dev/zero "$(git rev-parse --git-dir)/odd-link" && echo planted'
	assert_rc 0
	assert_out_has planted
	local admin
	admin=$(find "$repo/.git/worktrees" -mindepth 1 -maxdepth 1 -type d | head -n1)
	[[ -n $admin ]] || fatal 'no worktree directory'
	assert_host_absent "$repo/.git/objects/zz/f" 'a FIFO in objects stayed'
	assert_host_absent "$repo/.git/logs/f" 'a FIFO in logs stayed'
	assert_host_absent "$admin/odd-link" "a symlink in the worktree's directory stayed"
	assert_err_match "removed a FIFO at $repo/.git/objects/zz/f"
	assert_err_match "removed a symlink at $admin/odd-link -> /dev/zero"
	wardenc log show --event alert --json
	[[ $(grep -c '"rule":"git.odd-file-in-sandbox"' <<<"$OUT") == 3 ]] ||
		fail "not three git.odd-file-in-sandbox alerts: $(excerpt "$OUT")"
	timeout 10 git -C "$repo" worktree list >/dev/null || fail "the host's git worktree list did not answer"
}

# --task in a repository with no commit yet: said so, with what to do
# (git's own "not a valid object name: 'HEAD'" was all it said).
test_task_no_commit() {
	have git || skip 'git is not installed'
	git init -q .
	wrun --task t1 -- echo ran
	assert_rc 125
	assert_out_lacks ran
	assert_err_match 'has no commit yet.*commit once' 'said'
}

# `warden task diff` while the task's session runs: the worktree's git
# state is the agent's to write until the end's sweep, so git runs there as
# for untrusted input. An embedded repository whose own config names a
# clean filter, committed as a submodule and left dirty, had the host's
# `git status` run that filter as the user; its submodules are not looked
# into now (their gitlink still shows in the committed diff).
test_task_diff_submodule_not_run() {
	local repo=$T_TMP/repo mark=$T_TMP/filter-ran
	task_make_repo "$repo"
	(cd "$repo" && MARK=$mark timeout 90 "$WARDEN" run -q --task sub --env MARK \
		--profile "$(no_detect_actions "$T_TMP/sub.profile")" -- sh -c '
		mkdir sub && cd sub && git init -q . && echo x > f &&
		printf "* filter=pwn\n" > .gitattributes &&
		git config filter.pwn.clean "sh -c \"touch $MARK; cat\"" &&
		git config filter.pwn.smudge cat && git add . &&
		git -c user.email=a@b -c user.name=a commit -qm s &&
		sleep 1.1 && echo y >> f && cd .. && git add sub && git commit -qm "add sub" &&
		echo READY; sleep 6' >"$T_TMP/sub.out" 2>"$T_TMP/sub.err") &
	local pid=$!
	bg_track $pid
	wait_for "$T_TMP/sub.out" READY 60
	rm -f "$mark"
	wardenc task diff sub -w "$repo"
	assert_rc 0
	[[ ! -e $mark ]] || fail "task diff ran the submodule's clean filter on the host"
	# the session's commits reach the branch at its end: the gitlink shown
	wait "$pid" || fail "the session failed: $(excerpt "$(cat "$T_TMP/sub.err")")"
	wardenc task diff sub -w "$repo"
	assert_rc 0
	assert_out_has 'Subproject commit' 'the committed gitlink is not shown'
	[[ ! -e $mark ]] || fail "task diff ran the submodule's clean filter on the host"
}

# `warden task diff` on a terminal shows what the agent wrote escaped
# (shown.h), as `warden diff` does: a file's escape sequences (clear the
# screen, retitle the window, OSC 52 to the clipboard) reached the user's
# terminal raw. Piped, the patch keeps its bytes.
test_task_diff_escaped_on_terminal() {
	have script || skip 'script (util-linux) is not installed'
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	wrun -q -w "$repo" --task esc -- sh -c \
		'printf "l1\033[2J\033]52;c;ZWNobw==\007FAKE warden: nothing changed\n" > esc.txt &&
		git add esc.txt && git commit -qm x'
	assert_rc 0
	local shown
	shown=$(cd "$repo" && timeout -k 5 60 script -qec "$(printf '%q ' "$WARDEN") task diff esc" /dev/null)
	[[ $shown == *'+l1\x1b[2J\x1b]52;c;ZWNobw==\x07FAKE'* ]] ||
		fail "the escape is not shown escaped on a terminal: $(excerpt "$shown")"
	[[ $shown != *$'\033'* && $shown != *$'\007'* ]] ||
		fail "an escape reached the terminal raw: $(excerpt "$shown")"
	wardenc task diff esc -w "$repo"
	assert_rc 0
	[[ $OUT == *$'\033[2J'* ]] || fail "piped, the patch lost its bytes: $(excerpt "$OUT")"
}

# A directory the agent closed (chmod 000) in its worktree: `git worktree
# remove` fails on it after dropping the worktree's entry, and the task
# could then be removed neither by warden (a second try said "not a working
# tree") nor without chmod by hand. warden removes the tree itself then.
test_task_remove_closed_dir() {
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	wrun -q -w "$repo" --task rmt -- sh -c 'mkdir -p locked/inner && touch locked/inner/f && chmod 000 locked/inner locked'
	assert_rc 0
	wardenc task remove rmt -w "$repo"
	assert_rc 0
	[[ ! -e $repo.warden-tasks/rmt ]] || fail "the task's worktree stayed: $(ls -A "$repo.warden-tasks/rmt" 2>&1 | head -n 3)"
	task_host_git "$repo" worktree list >"$T_TMP/wt" || fail 'git worktree list failed'
	if grep -q rmt "$T_TMP/wt"; then
		fail "git still lists the worktree: $(cat "$T_TMP/wt")"
	fi
	task_host_git "$repo" rev-parse --verify -q warden/rmt >/dev/null || fail 'the branch went too'
}

# A repository with a hook: a commit in the task's worktree runs it (from the
# repository's own, read-only .git/hooks) by its absolute path, which
# persist.named took for a hook named on a command line: a high alert for
# every commit, and `--ci --fail-on high` failed the job (123). git's own
# run of a hook raises nothing; writing one is still refused and alerted.
test_task_hook_no_alert() {
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	printf '#!/bin/sh\necho HOOK-RAN\n' >"$repo/.git/hooks/pre-commit" && chmod +x "$repo/.git/hooks/pre-commit" ||
		fatal 'could not make the hook'
	wrun -w "$repo" --task hk -- git commit -q --allow-empty -m c
	assert_rc 0
	assert_err_match HOOK-RAN 'the hook did not run'
	wardenc log show --event alert --json
	[[ $OUT != *persist.named* ]] || fail "git running its hook raised persist.named: $(excerpt "$OUT")"
	wrun -w "$repo" --task hk -- sh -c 'echo evil > "$(git rev-parse --git-common-dir)/hooks/post-commit"'
	wardenc log show --event alert --json
	assert_out_has persist.startup-file 'a hook written raised nothing'
}

# git in a task writing the shared refs (a rebase deleting a pseudo-ref
# locks .git/packed-refs; a tag): refused, as the layout wants, and said
# once at the end with what to do, so that git's "Unable to create
# packed-refs.lock" after a rebase that worked is not a mystery.
test_task_git_refs_hint() {
	local repo=$T_TMP/repo base
	task_make_repo "$repo"
	base=$(git -C "$repo" branch --show-current)
	wrun -w "$repo" --task rb -- sh -c "git commit -q --allow-empty -m c; git rebase $base; git tag v1; true"
	assert_rc 0
	assert_err_match "in a task only its branch \(warden/NAME\)" 'the shared refs refused without a hint'
	[[ -z $(git -C "$repo" tag) ]] || fail 'a tag was made in the repository from the task'
	wrun -w "$repo" -- sh -c 'git commit -q --allow-empty -m plain'
	[[ $ERR != *'shared refs'* ]] || fail "the hint in a session that wrote no shared ref: $(excerpt "$ERR")"
}

# The agent's forgeries of an object the repository holds (forge_object.py).
TASK_FORGE_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/forge_object.py

test_task_object_forged() {
	# The object store is shared and writable: the agent replaces the loose
	# object of a committed file with other content under the same id (git
	# never hashes an object again when it reads it), so that the host's
	# `git checkout` would write the agent's bytes under a clean `git
	# status`. The end's check hashes what the session wrote, moves the
	# forged object aside, says so on stderr and logs it: the checkout then
	# fails (the object is missing) rather than write the forged content.
	have python3 || skip 'python3 not installed (the agent forges the object with it)'
	local repo=$T_TMP/repo id
	task_make_repo "$repo"
	id=$(git -C "$repo" rev-parse HEAD:base.txt)
	wrun -w "$repo" --task forge -- python3 -c "$(<"$TASK_FORGE_PY")" rename base.txt
	assert_rc 0
	assert_out_has "forged $id"
	assert_err_match "forged git object $id in $repo/\.git"
	assert_err_match 'warden undo'
	assert_host_absent "$repo/.git/objects/${id:0:2}/${id:2}" 'the forged object stayed in place'
	compgen -G "$repo/.git/objects/${id:0:2}/${id:2}.warden-quarantine-*" >/dev/null ||
		fail 'the forged object was not moved aside'
	rm -f "$repo/base.txt"
	task_host_git "$repo" checkout -q base.txt 2>/dev/null
	[[ ! -e $repo/base.txt || $(<"$repo/base.txt") == base ]] ||
		fail "the host's checkout wrote the forged content: $(excerpt "$(<"$repo/base.txt")")"
	wardenc log show --event alert --json
	python3 - "$OUT" "$id" "$repo" <<'PY' || fail "no git.object-forged alert: $(excerpt "$OUT")"
import json, sys
out, oid, repo = sys.argv[1:]
alerts = [json.loads(l) for l in out.splitlines() if l.strip()]
hit = [a for a in alerts if a.get("rule") == "git.object-forged"]
assert len(hit) == 1, hit
a = hit[0]
assert a["severity"] == "high" and a["action"] == "quarantined", a
assert a["path"] == f"{repo}/.git/objects/{oid[:2]}/{oid[2:]}", a
assert oid in a["detail"] and f"{repo}/.git" in a["detail"], a
assert a["moved_to"].startswith(a["path"] + ".warden-quarantine-"), a
PY
}

test_task_objects_written_no_alert() {
	# A session that commits on its task's branch writes new objects into the
	# shared store: each is checked, none is taken for a forgery.
	local repo=$T_TMP/repo
	task_make_repo "$repo"
	wrun -w "$repo" --task work -- sh -c 'echo more > more.txt && git add more.txt &&
		git commit -qm more && echo committed'
	assert_rc 0
	assert_out_has committed
	[[ $ERR != *forged* && $ERR != *"could not check"* ]] || fail "a word of forgery: $(excerpt "$ERR")"
	wardenc log show --event alert --json
	[[ $OUT != *git.object-* ]] || fail "an object alert for an honest commit: $(excerpt "$OUT")"
	[[ $(task_host_git "$repo" cat-file -p warden/work:more.txt) == more ]] ||
		fail "the task's commit is not on its branch"
}
