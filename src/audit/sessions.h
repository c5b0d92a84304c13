/* sessions.h - the audit log directory: opening it and a session's log
 * without following symbolic links, listing its sessions, and resolving a
 * session argument (an id or a unique prefix, never a path). */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "times.h"

/* Open the log directory (O_DIRECTORY|O_NOFOLLOW). -1 with e->errnum ENOENT
 * when it does not exist yet (no session was ever logged). */
int audit_dir_open(const char *dir, struct werr *e);

/* Open DIR/ID.jsonl for reading: O_NOFOLLOW, never blocking on a FIFO, a
 * regular file or refused. `dir` is only for messages. */
int audit_log_open(int dfd, const char *dir, const char *id, struct werr *e);

struct audit_session_info {
	char *id;
	json_t *start;           /* the first line if it is a session.start event */
	json_t *end;             /* the last line if it is a session.end event */
	unsigned long events;    /* seq of the last complete line, else lines */
	struct audit_time t;     /* ts of the first line (when has_time) */
	bool has_time;
};

/* Every DIR/ID.jsonl with a valid id (symlinks and non-regular files skipped),
 * sorted by start time, then id. Reads the first and the last line of each. */
int audit_list_sessions(int dfd, const char *dir, struct audit_session_info **out, size_t *n,
			struct werr *e);
void audit_sessions_free(struct audit_session_info *s, size_t n);

/* The session `arg` names: NULL = the latest; an exact id; or a prefix of
 * exactly one id. *id is malloc'd. Errors say what is wrong (an empty id,
 * which is never the latest; invalid id, no such session, ambiguous prefix
 * and its matches, no sessions at all). */
int audit_resolve_session(int dfd, const char *dir, const char *arg, char **id, struct werr *e);
