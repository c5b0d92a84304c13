/* client.h - the client side of the sessions' control sockets (control.h),
 * shared by `warden approve` and `warden status|freeze|resume|kill`:
 * finding warden's control directories (ctldir.h) and the sockets in them,
 * connecting
 * (a socket nobody listens on any more, a session that was killed, is
 * removed; a suspended session's stopped warden found by its marker,
 * ctldir.h), a session named by a prefix of its id, and one JSON object a
 * line each way. */
#pragma once
#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "../common/err.h"

#define CONTROL_NAME_MAX 96
#define CONTROL_SOCKETS_MAX 256 /* sockets looked at in the directory, at most */

struct strv;

/* The directories this user's sessions' sockets may be in (ctldir.h: the
 * runtime directory, then the state directory's), those there are, onto
 * dirs; how many. */
size_t control_client_dirs(struct strv *dirs);

/* The sockets in dirs ("DIR/SESSION.sock", each name shorter than
 * CONTROL_NAME_MAX) pushed onto paths, up to max; how many. */
size_t control_client_sockets(const struct strv *dirs, struct strv *paths, size_t max);

/* The name of a socket's path: "SESSION.sock". */
const char *control_client_name(const char *path);

/* A connection to the socket at path, or -1 (a stale socket is removed;
 * one whose listener's backlog is full is passed over at once). */
int control_client_connect(const char *path);

/* Every running session in dirs asked {"op": op}: fn called with each
 * one's reply (NULL when none came; fn may keep it with json_incref) and
 * ctx. A socket nobody answers on is skipped (and removed when stale). */
void control_client_each(const struct strv *dirs, const char *op,
			 void (*fn)(json_t *reply, void *ctx), void *ctx);

/* The running session in dirs whose id is session or starts with it: a
 * connection, its id in id (len bytes), *stopped the pid of its warden
 * when a marker says it is stopped (ctldir_marked_stopped), else 0.
 * CONTROL_FIND_MARKED when it is found by that marker alone (a stopped
 * warden whose socket's backlog is full: no connection); -1 with e set
 * when none is, or several are. */
#define CONTROL_FIND_MARKED (-2)
int control_client_find(const struct strv *dirs, const char *session, char *id, size_t len,
			pid_t *stopped, struct werr *e);

/* Send j (taken) as one line. -1 on error. */
int control_client_send(int fd, json_t *j);

/* One line from fd, parsed, with buf (cap bytes, *have used) holding what
 * came after it; NULL at the end, after timeout_ms without a line, or when
 * the line is not JSON. */
json_t *control_client_read(int fd, char *buf, size_t cap, size_t *have, int timeout_ms);

/* The pid of the session's warden on fd when it is stopped (Ctrl-Z in its
 * terminal: the session suspended, jobctl.c; it can answer nothing), else
 * 0. */
pid_t control_client_stopped(int fd);

/* The reply a suspended session's warden, pid, cannot give itself:
 * {"ok": false, "suspended": true, "pid": pid, "error": why}. */
json_t *control_client_suspended(pid_t pid);

/* Send req (taken), and the reply line (within 5 s), or NULL. When the
 * session's warden is stopped, nothing is sent: the reply is {"ok": false,
 * "suspended": true, "pid": N, "error": "..."} at once. */
json_t *control_client_request(int fd, json_t *req);
