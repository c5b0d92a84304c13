/* linesrv.h - a listening unix socket and its clients, one JSON object a
 * line each way, on an epoll set of its own that the supervisor's loop
 * watches as one fd: the control socket of `warden approve` (control.c)
 * and the hook socket inside the sandbox (hook.c) are each one. Reads and
 * writes never block; every write is a send with MSG_NOSIGNAL (a client
 * gone must raise no SIGPIPE: the supervisor would take it for its own
 * output gone and pass it to the sandbox); a client's queue past its cap,
 * or a line past its limit, is the client's end. Clients are numbered by
 * their slot (0 to max-1) while they are connected. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct linesrv;

struct linesrv_ops {
	/* A connection came: true to serve it in slot; peer holds the
	 * kernel's word on who it is. slot SIZE_MAX: every slot is taken, it
	 * will be closed whatever the answer. Refusing, it may write its
	 * reason to fd first (send with MSG_NOSIGNAL); the server closes it. */
	bool (*accept)(void *ctx, int fd, size_t slot, const struct ucred *peer);
	/* A whole line from slot (without its newline). line NULL: a line
	 * longer than the server takes (len: what it holds so far). */
	void (*line)(void *ctx, size_t slot, const char *line, size_t len);
	/* slot's client went away (or was closed): forget what it held. */
	void (*gone)(void *ctx, size_t slot);
	void *ctx;
};

struct linesrv_limits {
	size_t clients;            /* at once, at most 64 */
	size_t line_max;           /* bytes of a line */
	size_t out_max;            /* bytes queued to a client */
	bool creds;                /* each read's sender pid from SCM_CREDENTIALS */
};

/* Serve listener (taken). NULL when the epoll set cannot be had. */
struct linesrv *linesrv_new(int listener, const struct linesrv_limits *lim, const struct linesrv_ops *ops);
/* Every client closed (gone called), then the listener. */
void linesrv_free(struct linesrv *s);
int linesrv_fd(const struct linesrv *s);
void linesrv_dispatch(struct linesrv *s);

/* Queue one line of j (taken) to slot. */
void linesrv_send(struct linesrv *s, size_t slot, json_t *j);
/* Close slot once what is queued is sent (read nothing more). */
void linesrv_close_after(struct linesrv *s, size_t slot);
/* Stop reading slot (its lines wait; only its hang-up is watched), or go
 * on: lines already read are handed over then. */
void linesrv_hold(struct linesrv *s, size_t slot, bool hold);
/* Is slot connected (and not closing)? */
bool linesrv_alive(const struct linesrv *s, size_t slot);
/* The host pid of slot's last sender (limits.creds), 0 when unknown. */
pid_t linesrv_pid(const struct linesrv *s, size_t slot);
/* Call fn for each connected slot. */
void linesrv_each(struct linesrv *s, void (*fn)(void *ctx, size_t slot), void *ctx);
