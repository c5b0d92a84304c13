# t_checkpoint.sh - workspace checkpoints (src/checkpoint/): taken before
# every session and at its end, `warden diff` and `warden undo` (the tree
# back byte for byte, modes and symlinks included, after rm -rf, git reset
# --hard, git clean -fdx, chmod -R 000, rewrites), the undo refusing to
# overwrite later changes and itself undoable, `checkpoint exclude` and
# `checkpoint off`, and a store that is a symlink, unwritable, full, or a
# workspace that changes while it is recorded: no session then (exit 125).
# shellcheck shell=bash

# tree_hash DIR: one hash of the whole tree: every path with its type and
# mode, each symlink's target, each file's content (the workspace's own
# wprobe included).
tree_hash() {
	(
		cd "$1" || exit 1
		find . -printf '%y %m %p -> %l\n' | LC_ALL=C sort
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
	) | sha256sum | cut -d' ' -f1
}

# A repository of five commits with a symlink, an executable, a private
# file, a directory of mode 0750, an untracked and an ignored file.
make_repo() {
	have git || skip 'git not installed'
	git init -q . || fatal 'git init'
	local i
	for i in 1 2 3 4 5; do
		mkdir -p "src/d$i"
		printf 'line %s\nsecond\n' "$i" >"src/d$i/f.txt"
		printf 'v%s\n' "$i" >VERSION
		git add -A src VERSION &&
			git -c user.name=host -c user.email=host@example.invalid commit -qm "c$i" ||
			fatal 'git commit'
	done
	ln -s src/d1/f.txt link
	printf '#!/bin/sh\necho run\n' >run.sh
	chmod 0755 run.sh
	printf 'secret\n' >private
	chmod 0600 private
	mkdir -p closed
	printf 'in closed\n' >closed/x
	chmod 0750 closed
	printf 'build/\n' >.gitignore
	mkdir -p build
	printf 'object\n' >build/out.o
	printf 'untracked\n' >notes.txt
}

ckpt_field() { # EVENT: the latest session's EVENT line
	wardenc log show --event "$1" --json
}

test_checkpoint_undo_git_damage() {
	make_repo
	local h0 h1
	h0=$(tree_hash "$WS")
	wsh 'printf "rewritten\n" > VERSION; for f in src/*/f.txt; do echo bad > "$f"; done;
	     git reset -q --hard HEAD~3 && { git clean -qfdx 2>/dev/null; echo done; }'
	assert_rc 0 'the damaging session'
	assert_out_has done
	h1=$(tree_hash "$WS")
	[[ $h1 != "$h0" ]] || fatal 'the session changed nothing'
	ckpt_field session.start
	assert_out_match '"checkpoint":\{"manifest":"[0-9a-f]{64}"' 'session.start names the manifest'
	ckpt_field session.end
	assert_out_match '"checkpoint":\{"manifest":"[0-9a-f]{64}"' 'session.end names the manifest'
	wardenc undo --yes
	assert_rc 0 'warden undo'
	assert_out_has 'undoes this undo'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'the tree after undo differs from before the session'
	OUT=$(git -c safe.directory='*' log --format=%s | tr '\n' ' ')
	[[ $OUT == 'c5 c4 c3 c2 c1 ' ]] || fail "history after undo: $(excerpt "$OUT")"
	OUT=$(git -c safe.directory='*' status --porcelain | tr '\n' ' ')
	[[ $OUT == '?? link ?? notes.txt ?? private ?? run.sh ?? wprobe ' || $OUT == *notes.txt* ]] ||
		fail "git status after undo: $(excerpt "$OUT")"
}

test_checkpoint_undo_rm_chmod() {
	make_repo
	local h0
	h0=$(tree_hash "$WS")
	wsh 'rm -rf ./* ; chmod -R 000 . 2>/dev/null; echo gone'
	assert_out_has gone
	[[ ! -e $WS/src ]] || fail 'rm -rf ./* left src'
	wardenc undo --yes
	assert_rc 0 'warden undo after rm -rf and chmod -R 000'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'the tree after undo differs from before the session'
	[[ $(stat -c %a "$WS/closed") == 750 && $(stat -c %a "$WS/private") == 600 &&
		$(stat -c %a "$WS/run.sh") == 755 && $(readlink "$WS/link") == src/d1/f.txt ]] ||
		fail 'modes or the symlink not restored'
}

# As root, in a workspace owned by a user: what undo brings back is the
# user's, as the agent's files are (t_hostid.sh), never root's.
test_checkpoint_undo_owner_root() {
	is_root || skip 'root restores files of another owner'
	mkdir -p sub
	echo a >f.txt
	echo b >sub/g.txt
	ln -s f.txt l
	chown -Rh 4321:4321 "$WS"
	wsh 'rm -rf f.txt sub l; echo gone'
	assert_out_has gone
	wardenc undo --yes
	assert_rc 0 'warden undo as root'
	local p
	for p in f.txt sub sub/g.txt l; do
		[[ $(stat -c %u:%g "$WS/$p" 2>/dev/null) == 4321:4321 ]] ||
			fail "$p came back owned by $(stat -c %u:%g "$WS/$p" 2>/dev/null), not the workspace's owner 4321:4321"
	done
}

test_checkpoint_diff() {
	printf 'one\ntwo\nthree\n' >a.txt
	printf 'keep\n' >b.txt
	ln -s a.txt l
	wsh 'printf "one\nTWO\nthree\n" > a.txt; rm b.txt; echo new > c.txt; chmod 700 wprobe; ln -sfn b.txt l'
	assert_rc 0
	wardenc diff
	assert_rc 1 'warden diff with changes'
	assert_out_line '  modified  a.txt'
	assert_out_line '  removed   b.txt'
	assert_out_line '  added     c.txt'
	assert_out_line '  mode      wprobe (0755 -> 0700)'
	assert_out_line '  modified  l -> b.txt'
	assert_out_line '-two'
	assert_out_line '+TWO'
	assert_out_line '+++ b/c.txt'
	wardenc diff --list
	assert_out_lacks '+TWO' '--list'
	wardenc log list --json
	local first
	first=$(head -n 1 <<<"$OUT" | grep -oE '"session":"[^"]+"' | cut -d'"' -f4)
	wardenc undo --yes
	assert_rc 0
	wardenc diff "$first"
	assert_rc 0 'diff against the first session after its undo'
	assert_out_has 'nothing changed'
}

test_checkpoint_undo_refuses_later_changes() {
	printf 'before\n' >a.txt
	wsh 'echo agent > a.txt; echo agent > b.txt'
	assert_rc 0
	printf 'user edit\n' >a.txt
	wardenc undo --yes
	assert_rc 125 'undo over a later change'
	assert_err_match 'changed after session'
	assert_err_match 'a\.txt'
	assert_host_file "$WS/a.txt" 'user edit' 'the refused undo left the file'
	wardenc undo --yes --force
	assert_rc 0 'undo --force'
	assert_host_file "$WS/a.txt" before
	assert_host_absent "$WS/b.txt"
	# the undo is a checkpointed session of its own: undone in turn
	wardenc undo --yes
	assert_rc 0 'undo of the undo'
	assert_host_file "$WS/a.txt" 'user edit'
	assert_host_file "$WS/b.txt" agent
}

test_checkpoint_undo_without_terminal() {
	printf 'x\n' >a.txt
	wsh 'echo y > a.txt'
	wardenc undo
	assert_rc 125 'undo unconfirmed'
	assert_err_match 'not confirmed'
	assert_host_file "$WS/a.txt" y
}

test_checkpoint_exclude() {
	mkdir -p node_modules/pkg
	printf 'dep\n' >node_modules/pkg/index.js
	printf 'src\n' >main.js
	printf 'checkpoint exclude node_modules\n' >"$T_TMP/p"
	wsh 'echo changed > main.js; echo agent > node_modules/pkg/index.js' --profile "$T_TMP/p"
	assert_rc 0
	assert_err_match 'checkpoint: not recorded \(checkpoint exclude\): node_modules'
	ckpt_field session.start
	assert_out_has '"excluded":["node_modules"]'
	wardenc undo --yes
	assert_rc 0
	assert_host_file "$WS/main.js" src
	assert_host_file "$WS/node_modules/pkg/index.js" agent 'excluded paths are left alone'
}

test_checkpoint_store_symlink() {
	mkdir -p "$HOME/.local/share/warden" "$T_TMP/elsewhere"
	ln -s "$T_TMP/elsewhere" "$HOME/.local/share/warden/store"
	wsh 'touch ran'
	assert_rc 125 'a store that is a symlink'
	assert_err_match 'checkpoint store .* is a symbolic link'
	assert_host_absent "$WS/ran" 'the command did not run'
	# `checkpoint off`: no checkpoint, and the session runs
	printf 'checkpoint off\n' >"$T_TMP/p"
	wsh 'touch ran' --profile "$T_TMP/p"
	assert_rc 0 'checkpoint off'
	[[ -e $WS/ran ]] || fail 'the command did not run with checkpoint off'
	ckpt_field session.start
	assert_out_has '"checkpoint":{"off":true}'
}

# `checkpoint off` with no store yet (a fresh HOME): warden used the store's
# path after freeing it and freed it again at the end (an abort, "double
# free", that glibc's allocator shows only now and then; its checking
# allocator, where the system has it, every time).
test_checkpoint_off_without_store() {
	local dbg
	dbg=$(ls /lib/*/libc_malloc_debug.so.0 /usr/lib/*/libc_malloc_debug.so.0 2>/dev/null | head -n 1)
	[[ -n $dbg ]] || note 'no libc_malloc_debug.so.0 here: the double free may go unseen'
	[[ ! -e $HOME/.local/share/warden/store ]] || fatal 'the fresh HOME has a store'
	printf 'checkpoint off\n' >"$T_TMP/p"
	LD_PRELOAD=$dbg MALLOC_CHECK_=3 wsh 'touch ran' --profile "$T_TMP/p"
	assert_rc 0 'checkpoint off without a store'
	[[ $ERR != *free* ]] || fail "warden's allocator complained: $(excerpt "$ERR")"
	[[ -e $WS/ran ]] || fail 'the command did not run with checkpoint off'
	[[ ! -e $HOME/.local/share/warden/store ]] || fail '`checkpoint off` made a store'
	ckpt_field session.start
	assert_out_has '"checkpoint":{"off":true}'
}

test_checkpoint_store_unwritable() {
	is_root && skip 'root writes whatever the mode'
	mkdir -p "$HOME/.local/share/warden/store"
	chmod 0500 "$HOME/.local/share/warden/store"
	wsh 'touch ran'
	chmod 0700 "$HOME/.local/share/warden/store"
	assert_rc 125 'an unwritable store'
	assert_err_match 'checkpoint store'
	assert_host_absent "$WS/ran" 'the command did not run'
}

test_checkpoint_store_full() {
	is_root || skip 'mounting a small file system needs root'
	mkdir -p "$HOME/.local/share/warden/store"
	mount -t tmpfs -o size=256k,mode=0700 tmpfs "$HOME/.local/share/warden/store" 2>/dev/null ||
		skip 'cannot mount a tmpfs here'
	head -c 2000000 /dev/urandom >big
	wsh 'touch ran'
	umount "$HOME/.local/share/warden/store"
	assert_rc 125 'a full store'
	assert_err_match 'No space left on device'
	assert_host_absent "$WS/ran" 'the command did not run'
}

test_checkpoint_max_size() {
	head -c 2000000 /dev/zero >big
	printf 'checkpoint max-size 1M\n' >"$T_TMP/p"
	wsh 'touch ran' --profile "$T_TMP/p"
	assert_rc 125 'a workspace larger than max-size'
	assert_err_match 'checkpoint max-size'
	assert_host_absent "$WS/ran"
}

test_checkpoint_workspace_changing() {
	# a file appended to all the time while warden records it
	head -c 64000000 /dev/zero >grow
	(while :; do printf x >>grow; done) &
	bg_track $!
	sleep 0.2
	wsh 'touch ran'
	kill $! 2>/dev/null
	assert_rc 125 'a workspace changing during the checkpoint'
	assert_err_match 'changed while it was being recorded'
	assert_host_absent "$WS/ran"
}

test_checkpoint_unchanged_tree_is_cheap() {
	mkdir -p d
	head -c 3000000 /dev/urandom >d/blob
	sleep 1.5 # older than the metadata cache's one-second margin
	wsh 'true'
	assert_rc 0
	wsh 'true'
	ckpt_field session.start
	assert_out_match '"bytes_read":0[,}]' 'the second checkpoint read nothing'
	local n
	n=$(find "$HOME/.local/share/warden/store/blobs" -type f | wc -l)
	OUT=$n
	wsh 'true'
	[[ $(find "$HOME/.local/share/warden/store/blobs" -type f | wc -l) == "$n" ]] ||
		fail 'unchanged content stored again'
}

# The store's durability, watched from outside (strace of warden itself, not
# of the sandbox): before the log's first line (session.start, which names
# the manifest) the new blobs are fsynced (a few: each, then its directory;
# many: one syncfs), then the manifest's directory.
strace_start() { # LABEL: trace one `warden run -- true`; sets TRACE (the lines up to the log's first write)
	strace -y -qq -e trace=fsync,syncfs,write -s 40 -o "$T_TMP/trace" \
		"$WARDEN" run -q -- true </dev/null >/dev/null 2>"$T_TMP/trace.err" ||
		skip "strace of warden failed here: $(tail -n 1 "$T_TMP/trace.err")"
	TRACE=$(sed '/\.jsonl>, "{/q' "$T_TMP/trace")
	grep -q '\.jsonl>, "{' <<<"$TRACE" || fatal "$1: no write of the log in the trace"
	printf -- '--- trace to the first log line (%s)\n%s\n' "$1" "$TRACE"
}

test_checkpoint_store_durable() {
	have strace || skip 'strace not installed'
	printf 'one\n' >a.txt
	printf 'two\n' >b.txt
	strace_start 'two new files'
	local h
	for f in a.txt b.txt; do
		h=$(sha256sum "$f" | cut -c1-64)
		grep -qE "^fsync\([0-9]+<[^>]*/store/blobs/${h:0:2}/${h:2}>\) = 0" <<<"$TRACE" ||
			fail "the blob of $f was not fsynced before session.start was logged"
		grep -qE "^fsync\([0-9]+<[^>]*/store/blobs/${h:0:2}>\) = 0" <<<"$TRACE" ||
			fail "the directory of $f's blob was not fsynced before session.start was logged"
	done
	grep -qE '^fsync\([0-9]+<[^>]*/store/manifests>\) = 0' <<<"$TRACE" ||
		fail 'the manifests directory was not fsynced before session.start was logged'
	# many new files: one syncfs
	local i
	for i in $(seq 1 80); do printf 'file %s\n' "$i" >"many$i"; done
	strace_start '80 new files'
	grep -qE '^syncfs\([0-9]+<[^>]*/store/blobs>\) = 0' <<<"$TRACE" ||
		fail '80 new blobs: no syncfs of the store before session.start was logged'
	grep -qE '^fsync\([0-9]+<[^>]*/store/manifests>\) = 0' <<<"$TRACE" ||
		fail '80 new blobs: the manifests directory was not fsynced before session.start'
	# the tree unchanged: nothing to sync
	strace_start 'unchanged tree'
	! grep -qE '^(fsync|syncfs)\([0-9]+<[^>]*/store/' <<<"$TRACE" ||
		fail 'an unchanged tree synced the store (it costs every session start)'
}

# ---- --review: the workspace an overlay; apply or discard -------------------

review_script='printf "rewritten\n" > VERSION; rm -rf src/d2; mkdir src/d2; echo n > src/d2/new;
	rm link; echo x > added; chmod 700 run.sh; rm -rf closed; git rm -q --cached VERSION; echo done'

test_checkpoint_review_discard() {
	make_repo
	local h0
	h0=$(tree_hash "$WS")
	wsh "$review_script; mkdir -p sub/.git; cat VERSION" --review
	assert_rc 0 'the --review session'
	assert_out_has rewritten 'the session sees its own writes'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'a --review session wrote to the workspace'
	assert_err_match 'review: sub/\.git was created in the session; it is left out'
	wardenc diff
	assert_rc 1 'diff of a --review session'
	assert_out_has 'to apply (--review)'
	assert_out_line '  modified  VERSION'
	assert_out_line '  added     src/d2/new'
	assert_out_line '  removed   link -> src/d1/f.txt'
	assert_out_lacks 'sub/.git'
	wardenc discard
	assert_rc 0 'discard'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'discard changed the workspace'
	wardenc apply --yes
	assert_rc 125 'apply after discard'
	assert_err_match 'discarded'
	[[ -z $(ls "$HOME/.local/state/warden/review" 2>/dev/null) ]] ||
		fail "the overlay's upper directory was left behind"
}

test_checkpoint_review_apply_equals_live() {
	make_repo
	local h0 live
	h0=$(tree_hash "$WS")
	# the same session, live, in a copy of the tree
	cp -a "$WS" "$T_TMP/live"
	(cd "$T_TMP/live" && "$WARDEN" run -q -- sh -c "$review_script" </dev/null >/dev/null 2>&1) ||
		fatal 'the live session failed'
	live=$(tree_hash "$T_TMP/live")
	[[ $live != "$h0" ]] || fatal 'the live session changed nothing'
	wsh "$review_script" --review
	assert_rc 0
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'a --review session wrote to the workspace'
	wardenc apply --yes
	assert_rc 0 'apply'
	[[ $(tree_hash "$WS") == "$live" ]] || fail 'apply left a different tree than the live session'
	# the apply is undoable
	wardenc undo --yes
	assert_rc 0 'undo of the apply'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'undo of the apply did not bring the tree back'
}

test_checkpoint_review_apply_refuses_later_changes() {
	printf 'before\n' >a.txt
	wsh 'echo agent > a.txt' --review
	assert_rc 0
	printf 'user\n' >a.txt
	wardenc apply --yes
	assert_rc 125 'apply over a change made since'
	assert_err_match 'changed after session .* started'
	assert_host_file "$WS/a.txt" user
	wardenc apply --yes --force
	assert_rc 0 'apply --force'
	assert_host_file "$WS/a.txt" agent
}

# As root the sandbox sees the workspace through a mount idmapped to its
# owner (hostid.h); the review overlay's layers are idmapped the same way,
# so what the agent writes belongs to the workspace's owner, in the upper
# directory and after `warden apply`.
test_checkpoint_review_owner_root() {
	is_root || skip 'root runs the sandbox under a host identity of its own'
	mkdir -p sub
	echo a >f.txt
	echo b >sub/g.txt
	chown -R 4321:4321 "$WS"
	local h0
	h0=$(tree_hash "$WS")
	wsh 'echo new > n.txt; mkdir d; echo x > d/y; echo A > f.txt; rm sub/g.txt; ln -s f.txt l; stat -c "inside %u" n.txt' --review
	assert_rc 0 'the --review session as root'
	assert_out_has 'inside 1000' 'what the agent writes is its own inside'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'a --review session as root wrote to the workspace'
	wardenc apply --yes
	assert_rc 0 'apply as root'
	assert_host_file "$WS/f.txt" A
	assert_host_file "$WS/d/y" x
	assert_host_absent "$WS/sub/g.txt"
	local p
	for p in n.txt d d/y f.txt l; do
		[[ $(stat -c %u:%g "$WS/$p" 2>/dev/null) == 4321:4321 ]] ||
			fail "$p was applied owned by $(stat -c %u:%g "$WS/$p" 2>/dev/null), not the workspace's owner 4321:4321"
	done
}

# A kernel whose overlayfs cannot stack on idmapped mounts (before 5.19):
# --review as root is refused by name, never run on weaker terms. The
# release is made to read 2.6.x (setarch --uname-2.6).
test_checkpoint_review_root_old_kernel() {
	is_root || skip 'only a root session shows the workspace through idmapped mounts'
	have setarch || skip 'setarch not installed'
	setarch "$(uname -m)" --uname-2.6 true 2>/dev/null || skip 'setarch --uname-2.6 refused here'
	echo a >f.txt
	timeout -k 5 "$WARDEN_TIMEOUT" setarch "$(uname -m)" --uname-2.6 "$WARDEN" run --review -- \
		sh -c 'echo ran; echo b > f.txt' </dev/null >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	OUT=$(<"$T_TMP/.out")
	ERR=$(<"$T_TMP/.err")
	assert_rc 125 '--review as root on a kernel reading 2.6'
	assert_err_match 'needs Linux 5\.19 or later \(overlayfs on the idmapped mounts'
	assert_out_lacks ran 'the command ran anyway'
	assert_host_file "$WS/f.txt" a
	[[ -z $(ls "$HOME/.local/state/warden/review" 2>/dev/null) ]] ||
		fail 'the refused session left a review directory'
}

# kill_review OUTFILE SCRIPT: a --review session running SCRIPT, then a
# SIGKILL to warden's process group once SCRIPT printed "written"; waits
# until warden is gone. Sets LEFT: the review directory it left.
kill_review() {
	warden_bg "$1" --review -- sh -c "$2; echo written; exec sleep 600"
	wait_for "$1" '^written' 30 || fatal "the --review session did not start: $(cat "$1.err")"
	kill -KILL -- "-$TPID" 2>/dev/null || kill -KILL "$WPID"
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	LEFT=$(ls "$HOME/.local/state/warden/review" 2>/dev/null)
	[[ -n $LEFT && -d $HOME/.local/state/warden/review/$LEFT/upper ]] ||
		fatal 'the killed --review session left no review directory'
}

test_checkpoint_review_killed_apply() {
	printf 'before\n' >a.txt
	printf 'gone\n' >b.txt
	mkdir -p keep
	is_root && chown -R 4321:4321 "$WS"
	kill_review "$T_TMP/k.out" 'echo agent > a.txt; rm b.txt; echo new > keep/c.txt; mkdir -p sub/.git'
	# (its placeholders for protected names stay until apply or discard)
	assert_host_file "$WS/a.txt" before 'the killed --review session wrote to the workspace'
	assert_host_file "$WS/b.txt" gone 'the killed --review session wrote to the workspace'
	assert_host_absent "$WS/keep/c.txt" 'the killed --review session wrote to the workspace'
	if is_root; then
		[[ $(stat -c %u "$HOME/.local/state/warden/review/$LEFT/upper/keep/c.txt") == 4321 ]] ||
			fail 'what the agent wrote is not the workspace owner'"'"'s in the upper directory'
	fi
	wardenc discard --list
	assert_rc 0 'discard --list'
	assert_out_match "^  $LEFT  " 'the left review directory listed'
	wardenc diff --list
	assert_rc 1 'diff of the killed --review session'
	assert_out_line '  modified  a.txt'
	assert_out_line '  removed   b.txt'
	assert_out_line '  added     keep/c.txt'
	assert_out_lacks 'sub/.git'
	assert_err_match 'ended without recording its changes'
	wardenc apply --yes
	assert_rc 0 'apply of the killed --review session'
	assert_host_file "$WS/a.txt" agent
	assert_host_absent "$WS/b.txt"
	assert_host_file "$WS/keep/c.txt" new
	assert_host_absent "$WS/sub/.git"
	if is_root; then
		[[ $(stat -c %u:%g "$WS/keep/c.txt") == 4321:4321 ]] ||
			fail 'apply as root wrote keep/c.txt not owned by the workspace owner'
	fi
	[[ ! -e $HOME/.local/state/warden/review/$LEFT ]] || fail 'the review directory is still there'
	[[ -z $(find "$WS" -perm 1555 -o -type s) ]] || fail "placeholders left: $(find "$WS" -perm 1555 -o -type s)"
	wardenc discard --list
	assert_out_has 'no review directory is left'
}

test_checkpoint_review_killed_discard() {
	printf 'before\n' >a.txt
	local h0
	h0=$(tree_hash "$WS")
	kill_review "$T_TMP/k.out" 'echo agent > a.txt; echo new > c.txt'
	# a later --review session names what is left
	wsh 'true' --review
	assert_rc 0
	assert_err_match 'review director(y|ies) of other --review sessions'
	wardenc discard "$LEFT"
	assert_rc 0 'discard of the killed session'
	assert_out_has 'review directory removed'
	[[ ! -e $HOME/.local/state/warden/review/$LEFT ]] || fail 'discard left the review directory'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'discard changed the workspace'
	wardenc apply --yes "$LEFT"
	assert_rc 125 'apply after discard'
	assert_err_match 'recorded no changes|discarded'
}
