/* loop.c - the event loop (loop.h): a fixed table of
 * {fd, handler, context} sources over one epoll instance. */
#include "loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>


struct loop {
	int ep;
	size_t nsrc, cap;
	bool done;
	int status;
	struct source src[]; /* cap of them: epoll holds pointers into it */
};

struct loop *loop_new(size_t capacity, struct werr *e)
{
	struct loop *l = calloc(1, sizeof *l + capacity * sizeof l->src[0]);
	if (!l) {
		werr_errno(e, "supervisor: the event loop");
		return NULL;
	}
	l->cap = capacity;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0) {
		werr_errno(e, "supervisor: epoll");
		free(l);
		return NULL;
	}
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	close(l->ep);
	free(l);
}

void loop_freep(struct loop **l)
{
	loop_free(*l);
}

int loop_add(struct loop *l, const char *name, int fd, source_fn handle, void *ctx,
	     struct werr *e)
{
	if (l->nsrc == l->cap)
		return werr_set(e, 0, "supervisor: the event loop cannot watch %s: its table of %zu "
				"sources is full", name, l->cap);
	struct source *src = &l->src[l->nsrc];
	*src = (struct source){ .name = name, .fd = fd, .handle = handle, .ctx = ctx };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return werr_errno(e, "supervisor: the event loop cannot watch %s (fd %d)", name, fd);
	l->nsrc++;
	return 0;
}

int loop_want(struct loop *l, int fd, uint32_t events)
{
	/* the latest source of fd: an earlier one was removed, its fd closed
	 * and its number given again */
	for (size_t i = l->nsrc; i-- > 0;)
		if (l->src[i].fd == fd) {
			struct epoll_event ev = { .events = events, .data.ptr = &l->src[i] };
			return epoll_ctl(l->ep, EPOLL_CTL_MOD, fd, &ev);
		}
	errno = ENOENT;
	return -1;
}

void loop_remove(struct loop *l, const struct source *src)
{
	epoll_ctl(l->ep, EPOLL_CTL_DEL, src->fd, NULL);
}

void loop_quit(struct loop *l, int status)
{
	l->done = true;
	l->status = status;
}

int loop_run(struct loop *l, struct werr *e)
{
	for (;;) {
		struct epoll_event evs[8];
		int n = epoll_wait(l->ep, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return werr_errno(e, "supervisor: epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			const struct source *src = evs[i].data.ptr;
			src->handle(l, src, evs[i].events);
			if (l->done)
				return l->status;
		}
	}
}
