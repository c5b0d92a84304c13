/* restore.h - bringing a workspace back to a manifest: what differs is
 * removed, written again from the store (each file's content verified
 * against its hash as it is written, then renamed into place), modes,
 * symlinks and mtimes set; directories made writable for the work get their
 * recorded modes last, deepest first. Never through a symlink: every
 * parent is opened beneath the workspace without following one. FIFOs,
 * sockets and devices are removed where the target has none, never made:
 * one the target names and the tree lacks stays missing (restore_unmade);
 * one in the way of a directory is removed for it. */
#pragma once
#include "../common/err.h"
#include "changes.h"
#include "manifest.h"
#include "store.h"

/* Before anything is written: every blob the changes ch (cur -> target,
 * changes_compute) would write back, read and checked against its hash
 * (store_blob_verify). -1 with e naming the first path whose stored
 * content is missing, not a regular file, of another size, or damaged. */
int restore_verify(const struct store *st, const struct changes *ch, struct werr *e);
/* The changes ch (cur -> target) as restore_tree makes them: one that would
 * make a FIFO, socket or device is not (an added one dropped, one in place
 * of something else the removal of that), its path into out. */
void restore_unmade(struct changes *ch, struct strv *out);
/* How many of left (target -> the tree after restore_tree) are differences
 * that count: what restore_unmade named is not. */
size_t restore_left(const struct changes *left);
/* Bring the tree below rootfd (open for reading; see snapshot_open_root)
 * from cur (a manifest just taken of it, same exclude patterns) to target.
 * Returns 0, or -1 with e at the first failure (what was done stays done:
 * the caller took a checkpoint of cur first, and brings the tree back to
 * it with a second call, from a fresh manifest of the tree, to cur). */
int restore_tree(int rootfd, const struct store *st, const struct manifest *cur,
		 const struct manifest *target, struct werr *e);
