/* control.h - the session's control socket: a unix socket outside the
 * sandbox, in warden's runtime directory (ctldir.h: RUNTIME/warden/control/
 * SESSION.sock, else the state directory's DIR/control/SESSION.sock; the
 * directory mode 0700, the socket 0600), never mounted in; only a client of
 * the same uid as warden is served (SO_PEERCRED). `warden approve` talks to
 * it, and `warden status|freeze|resume|kill`: one JSON object a line each
 * way. Every session has one; a session whose policy asks nothing has no
 * questions (list and follow: none; answer: an error).
 *
 *   {"op":"status"}               -> {"ok":true,"session":S,"command":[ARGV...],"workspace":W,
 *                                    "started":ISO 8601,"age_s":N,"pid":the supervisor's,
 *                                    "frozen":BOOL, "freeze_left_s":N (frozen: the seconds
 *                                    before its `freeze timeout` kills it),
 *                                    ...what the status extension adds}
 *   {"op":"freeze"|"resume"|"kill","reason":R}
 *                                 -> {"ok":true} | {"ok":false,"error":E} (an `action`
 *                                    event, by "control", the client's uid)
 *   {"op":"list"}                 -> {"ok":true,"session":S,"questions":[Q...]}
 *   {"op":"answer","id":ID,"decision":"allow"|"deny","scope":"once"|"session"|"pattern",
 *    "pattern":P,"ttl":SECONDS,"reason":R}
 *                                 -> {"ok":true} | {"ok":false,"error":E}
 *   {"op":"follow"}               -> the list, then {"event":"asked","question":Q} and
 *                                    {"event":"ended","id":ID,"decision":D,"by":B} as they come
 *
 * Q: {"id","kind","subject","summary","detail","asked" (ISO 8601),"timeout_s","remaining_s"}.
 * A client that sends more than a line of 64 KiB, or anything but these,
 * gets {"ok":false,"error":...} (and, past the size, the door). */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "approval.h"

struct control;

/* warden's control directory under the audit directory logdir, where each
 * session's socket is when there is no runtime directory (ctldir.h;
 * malloc'd). */
char *control_dir_of(const char *logdir);

/* The kill switch behind freeze, resume and kill (the supervisor's,
 * src/supervisor/freeze.h); without one, those ops are errors. uid: the
 * client's; reason: the request's, or NULL. */
struct control_actions {
	int (*freeze)(void *ctx, long uid, const char *reason, struct werr *e);
	int (*resume)(void *ctx, long uid, struct werr *e);
	int (*kill)(void *ctx, long uid, const char *reason, struct werr *e);
	bool (*frozen)(void *ctx);
	bool (*suspended)(void *ctx); /* Ctrl-Z: suspended as a job of the user's shell */
	long (*freeze_left)(void *ctx); /* seconds before a freeze's timeout kills; -1: not frozen */
	void *ctx;
};

/* What the control socket works with, given when it is made. */
struct control_cfg {
	const char *dir;        /* warden's control directory (ctldir.h) */
	const char *session;    /* the session's id: the socket is dir/SESSION.sock */
	struct approvals *approvals; /* whose questions it serves; NULL: the session asks none */
	struct audit *log;
	/* What status says of the session: its command (copied,
	 * NULL-terminated), workspace (copied) and start (wall clock; 0: when
	 * the socket was made). */
	char *const *argv;
	const char *workspace;
	time_t started;
	/* the kill switch (copied); NULL: none */
	const struct control_actions *actions;
	/* An extension of status (the detector's risk and alerts): fn returns
	 * an object (a new reference, or NULL) whose members are added to each
	 * status reply; the keys status has already keep their values. NULL:
	 * none. */
	json_t *(*status_fn)(void *ctx);
	void *status_ctx;
};

/* Listen at dir/SESSION.sock. NULL with e set when the directory or the
 * socket cannot be made safely. */
struct control *control_new(const struct control_cfg *cfg, struct werr *e);
/* Stop listening, close the clients, remove the socket. */
void control_free(struct control *c);
/* Serve the listener and every client (one epoll fd) once. */
void control_dispatch(struct control *c);
/* The socket and its clients watched by l (control_dispatch); -1 with e
 * naming it when l cannot take it. */
int control_watch(struct loop *l, struct control *c, struct werr *e);
/* The socket's path. */
const char *control_path(const struct control *c);
/* The marker beside c's socket that its warden is stopped (on: about to
 * stop, Ctrl-Z; off: continued), ctldir_marker's: a stopped warden accepts
 * nothing, and `warden status|kill` find it by the marker once the
 * socket's backlog is full. */
void control_mark_stopped(const struct control *c, bool on);

/* A question as the protocol writes it (new reference). */
json_t *control_question_json(const struct question *q);
