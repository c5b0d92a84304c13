/* changes.h - what differs between two manifests of one workspace (added,
 * removed, modified, mode changed, type changed, a file's or symlink's mtime
 * alone changed), and the unified diff of two texts that `warden diff`
 * prints for a modified text file. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "manifest.h"

/* CH_MTIME: a file or symlink the same in all but its mtime. A directory's
 * mtime is none (each entry made or removed in it moves it: restore_tree
 * sets it back after any other change), nor a FIFO's, socket's or
 * device's (what passes through one moves it). */
enum change_kind { CH_ADDED, CH_REMOVED, CH_MODIFIED, CH_MODE, CH_TYPE, CH_MTIME };

struct change {
	enum change_kind kind;
	const struct mf_entry *a;   /* in the old manifest (NULL: added) */
	const struct mf_entry *b;   /* in the new one (NULL: removed) */
};

struct changes {
	struct change *v;
	size_t n, cap;
	bool root_mode;             /* the workspace directory's own mode differs */
};

/* Compare old a with new b (both sorted); entries point into them. A
 * file's or symlink's mtime alone is a change (CH_MTIME; with its mode, a
 * CH_MODE whose mtime differs too); a directory's mtime is not. */
void changes_compute(const struct manifest *a, const struct manifest *b, struct changes *out);
void changes_free(struct changes *c);
const char *change_label(enum change_kind k); /* "added", "removed", ... */
/* a and b (of one type) differ in their mtime, and it is one a change
 * counts: a file's or a symlink's. */
bool change_mtime_differs(const struct mf_entry *a, const struct mf_entry *b);

/* The list, one change a line ("  modified  PATH"), control bytes of paths
 * shown as \\xNN; an mtime as its UTC date and time ("  mtime     PATH
 * (2020-02-02 02:02:02 -> 1999-09-09 00:00:00 UTC)", nanoseconds where
 * either side has some). */
void changes_print(FILE *out, const struct changes *c, const struct manifest *from,
		   const struct manifest *to);

/* Text enough for a line diff: no NUL byte and valid UTF-8. */
bool text_is_diffable(const char *s, size_t n);
/* A unified diff (3 lines of context) of old and new, with the labels on
 * its --- and +++ lines. Larger than the line budget: a note instead.
 * terminal: out is one, and each line's text is shown (shown.h: line_shown)
 * rather than written as it is. Returns the number of changed lines. */
size_t text_unified_diff(FILE *out, bool terminal, const char *label_a, const char *label_b,
			 const char *a, size_t na, const char *b, size_t nb);
