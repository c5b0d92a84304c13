/* checkpoint.h - a session's checkpoints: the store opened and the
 * workspace recorded before the command starts (its manifest's hash goes
 * into session.start, tying the manifest to the hash-chained log), recorded
 * again when it has ended (session.end), and the retention applied; and the
 * way back from a session id to its verified manifests, for `warden diff`
 * and `warden undo`. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../common/err.h"
#include "../policy/policy.h"
#include "manifest.h"
#include "store.h"

struct ckpt_session {
	bool on;
	struct store st;
	char *ws;
	char start[SHA256_HEX_LEN];
};

/* Before the command starts: with `checkpoint off`, *field is {"off": true};
 * else the store is opened (made when missing) and the workspace (ws_fd, a
 * directory fd of it) recorded, but for the paths in unrecorded (the
 * placeholders; may be NULL), left out as if absent, and
 * stopped (EINTR) once interrupted (may be NULL) says so; *field
 * says what was recorded (manifest hash, counts, what was excluded), and
 * what the exclude patterns left out is named once on stderr. A failure is
 * an error: the session must not start without its checkpoint. */
int ckpt_session_start(struct ckpt_session *cs, const struct policy *pol, const char *store_path,
		       const char *ws, int ws_fd, const struct strv *unrecorded,
		       bool (*interrupted)(void), const char *session, json_t **field,
		       struct werr *e);
/* After the command ended: the workspace recorded again (but for the
 * paths in unrecorded: the placeholders another session there still uses;
 * may be NULL), its reference made, the retention applied. The field for
 * session.end: {"manifest": H} or {"error": WHY} (also on stderr); NULL
 * when checkpoints are off. */
json_t *ckpt_session_end(struct ckpt_session *cs, const struct policy *pol, int ws_fd,
			 const struct strv *unrecorded, const char *session);
/* --review: the session's writes (the overlay's upper directory, upper)
 * read as the tree it would have left (review.h), stored and referenced as
 * the session's end; the review directory (upper's parent) is then
 * removed; what it leaves out recorded as alerts in log (the session's).
 * The field for session.end: {"manifest": H, "review": true, "dropped":
 * [...], "cleared": [...]} or {"error": WHY, "kept": DIR}. */
struct audit;
json_t *ckpt_review_end(struct ckpt_session *cs, const char *upper,
			const struct strv *protected, const char *session, struct audit *log);
void ckpt_session_free(struct ckpt_session *cs);

/* A session's checkpoints as its log records them. */
struct ckpt_record {
	char *session;
	char *workspace;
	char start[SHA256_HEX_LEN];   /* "" when the session has none */
	char end[SHA256_HEX_LEN];     /* "" when none was recorded at its end */
	char *end_error;              /* why not, when the log says */
	bool review;                  /* a --review session: end is what it would have left */
	struct strv protected;        /* --review: the names its end leaves out when new */
	struct strv placeholders;     /* --review: those it made in the workspace */
	char *undo_of;                /* the session this one was `warden undo` (or apply,
				       * undo_of_apply) of; NULL for a session run */
	bool undo_of_apply;
	bool rolled_back;             /* an undo that failed and put everything back */
};
/* Find the session: `arg` an id or a unique prefix, or NULL for the newest
 * session with a checkpoint whose workspace is cwd or holds it (review_only:
 * the newest run with --review; an undo that failed and was rolled back,
 * and a session that failed and changed nothing, are passed over). Its log's
 * hash chain is verified before anything of it is believed. */
int ckpt_find(const char *logdir, const char *arg, const char *cwd, bool review_only,
	      struct ckpt_record *r, struct werr *e);
void ckpt_record_free(struct ckpt_record *r);
/* The `warden apply` whose writing of session's changes to its workspace
 * stands (*by its id, malloc'd), or *by NULL: none did, the one that did
 * failed and was rolled back, or a `warden undo` of it took them out. */
int ckpt_applied_by(const char *logdir, const char *session, char **by, struct werr *e);
