/* reviewdrop.h - what a --review session's result leaves out of what
 * `warden apply` writes (reviewdrop.c), judged on the manifests alone: the
 * tree the session left against the checkpoint taken at its start. */
#pragma once
#include <stdbool.h>

#include "../common/util.h"
#include "manifest.h"

/* One path left out: what is at and below it in the session's tree is not
 * written; what the start had there (changed) is kept as it was. */
struct review_drop {
	char *path;
	const char *why;             /* in words: what git or a tool would run */
	const char *rule;            /* the alert's rule (swept.c's own) */
	bool changed;                /* the start had it: apply leaves that as it was */
	bool mode_only;              /* a directory's mode alone, set back: what is
					below it is judged on its own */
};

struct review_drops {
	struct review_drop *v;
	size_t n, cap;
};

/* Judge every entry of all (the session's tree, sorted) that is new or
 * changed against start: a .git new or changed, a protected name new (one
 * of protected, may be NULL), a directory made to look like a repository,
 * and inside a git directory there at start what is not git's ordinary
 * data (objects, refs, logs, the index and the HEAD files). A directory
 * whose mode alone changed gets the start's mode back in all; everything
 * else left out is named once, at its top, in out (sorted by path). */
void review_drops_judge(const struct manifest *start, struct manifest *all,
			const struct strv *protected, struct review_drops *out);
void review_drops_free(struct review_drops *d);

/* path itself (with self) or one of its ancestors is in v (n, sorted) */
bool review_self_or_above(char *const *v, size_t n, const char *path, bool self);
