/* review.h - `warden run --review`: what the session wrote, left in its
 * overlay's upper directory (files and symlinks written, directories made
 * or changed, whiteouts for what was removed, opaque directories for what
 * was replaced), read as changes to the checkpoint taken at its start: the
 * tree the session would have left, as a manifest (its files stored), which
 * `warden apply` brings the workspace to. What the end-of-session sweep
 * would quarantine or remove is left out of it (reviewdrop.h: a new or
 * changed .git, a new protected name, a bare-repository lookalike, inside
 * a git directory all but git's objects, refs, logs and HEAD files; what
 * the start had where a change is left out stays as it was), and
 * setuid/setgid bits of what was written are cleared. A FIFO, socket or
 * device the session left is not content: nothing stands at its path in
 * the result (what it replaced is removed), and it is named. */
#pragma once
#include <jansson.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/util.h"
#include "manifest.h"
#include "reviewdrop.h"
#include "store.h"

/* A FIFO, socket or device the session left, which apply does not write. */
struct review_special {
	char *path;
	const char *kind;            /* "FIFO", "socket", "device" */
	bool replaced;               /* the start had something there: apply removes it */
};

struct review_result {
	struct manifest m;           /* the tree after the session (sorted) */
	char hash[SHA256_HEX_LEN];   /* its manifest in the store */
	struct strv dropped;         /* paths left out, each at its top (the sweep's reasons) */
	struct review_drops drops;   /* each with why, and directories whose mode was set back */
	struct strv cleared;         /* files whose setuid/setgid bits were cleared */
	struct review_special *special; /* sorted by path */
	size_t nspecial;
};

/* Read the upper directory (upperfd) over start; protected: the names the
 * sweep moves aside when new (the plan's names), may be NULL. */
int review_collect(struct store *st, const struct manifest *start, int upperfd,
		   const struct strv *protected, struct review_result *r, struct werr *e);
void review_result_free(struct review_result *r);

/* A session's review directory dir (its upper/) read over its start
 * manifest (start_hash), stored and referenced as the session's end (ws:
 * its workspace), what was left out or cleared named on stderr and, with
 * log (may be NULL), each thing left out recorded as an alert (the rule
 * the live sweep's would be: swept.c), then dir removed. out gets the manifest's hash; *field (when field is not NULL)
 * the checkpoint field of session.end: {"manifest": H, "review": true,
 * "entries": N, "dropped": [...], "cleared": [...], "special": [...]}, the
 * paths kept losslessly ("escaped", escape.h). */
int review_record(struct store *st, const char *start_hash, const char *dir,
		  const struct strv *protected, const char *session, const char *ws,
		  struct audit *log, char out[SHA256_HEX_LEN], json_t **field, struct werr *e);
