/* loop.h - the event loop the supervisor serves a session with: a table of
 * sources, each an fd (readable, or writable where asked: loop_want), the
 * handler to call when it is ready and the object that handler works on
 * (epoll underneath). Each module whose fds
 * are served adds them itself, with its own handler (X_watch(loop, X, e),
 * declared in its header); a source the loop cannot take (epoll refuses the
 * fd, the table is full) is an error naming it: the caller stops the
 * session rather than run with a source never served (fail closed). Served
 * in the order epoll reports them ready, not by priority. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "../common/err.h"

struct loop;
struct source;
typedef void (*source_fn)(struct loop *l, const struct source *src, uint32_t events);

struct source {
	const char *name; /* for the error when it cannot be added */
	int fd;
	source_fn handle;
	void *ctx;
};

/* The sessions' loop holds this many sources (a session with every
 * service uses some 24: room for what comes next). */
#define LOOP_CAPACITY 32

/* A loop that holds at most capacity sources; NULL with e filled. */
struct loop *loop_new(size_t capacity, struct werr *e);
void loop_free(struct loop *l);
void loop_freep(struct loop **l);

/* Watch fd (readable) as the source name; -1 with e naming it when the
 * table is full or epoll refuses the fd. */
int loop_add(struct loop *l, const char *name, int fd, source_fn handle, void *ctx,
	     struct werr *e);
/* What the loop waits for on fd, a source's: EPOLLIN (as loop_add made
 * it), EPOLLOUT, both or neither (a hang-up or an error is reported
 * whatever is asked). -1 with errno when fd is no source (any more). */
int loop_want(struct loop *l, int fd, uint32_t events);
/* No longer watch src (it hung up, or its work is over). */
void loop_remove(struct loop *l, const struct source *src);
/* End loop_run once the handler that calls this returns, with status. */
void loop_quit(struct loop *l, int status);
/* Serve the sources until a handler calls loop_quit: its status, or -1
 * with e filled when waiting fails. */
int loop_run(struct loop *l, struct werr *e);
