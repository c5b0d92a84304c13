/* leftover.h - review directories that --review sessions left behind: a
 * session killed (its warden gone before it could read its overlay's upper
 * directory), or one whose changes could not be recorded at its end, leaves
 * LOGDIR/review/SESSION/ with what the agent wrote. `warden apply` and
 * `warden diff` record such a directory into the store as the session's
 * end when they meet it (then it goes), `warden discard` removes it, and
 * `warden discard --list` names those that are left, so they do not
 * accumulate unseen. Nothing here runs while a session may still write the
 * directory: the workspace's lock (workspace_lock_open) is taken
 * exclusively first, as `warden undo` takes it. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"
#include "../common/util.h"
#include "checkpoint.h"
#include "store.h"

/* LOGDIR/review/SESSION (allocated). */
char *review_dir(const char *logdir, const char *session);

/* Take the lock of workspace ws exclusively, at once: its fd, or -1 with e
 * ("a warden session is running in WS: VERB when it has ended"). */
int review_lock_workspace(const char *logdir, const char *ws, const char *verb, struct werr *e);

/* For a --review session whose log records no end (r->end empty): the end
 * a reference in the store names (recorded by an earlier call), else its
 * review directory, when left, recorded now (review_record) under the
 * workspace's lock, and the placeholders the session left removed. r->end is set when either was found; 0 also when
 * neither was (a session killed before its overlay was made). */
int review_recover(struct store *st, const char *logdir, struct ckpt_record *r, struct werr *e);

/* The placeholders the killed session r left in its workspace removed
 * (workspace_remove_stale_placeholders); the caller holds the workspace's
 * lock exclusively. */
void review_clear_placeholders(const struct ckpt_record *r);

/* The sessions with a review directory under LOGDIR/review (sorted). */
int review_leftovers(const char *logdir, struct strv *ids, struct werr *e);

/* Remove LOGDIR/review/SESSION: 1 when removed, 0 when there was none, -1
 * with e. */
int review_remove_dir(const char *logdir, const char *session, struct werr *e);
