/* linesrv.c - a line server on a unix socket (linesrv.h): the listener and
 * each client in one epoll set; a client is a line buffer in, a queue out,
 * whether it is held (not read) or closing, and its sender's pid. */
#include "linesrv.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "../common/util.h"

#define MAX_SLOTS 64

struct client {
	int fd;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	pid_t pid;
	bool closing, held, in_lines;
};

struct linesrv {
	int ep, listener;
	struct linesrv_limits lim;
	struct linesrv_ops ops;
	struct client *clients[MAX_SLOTS];
};

struct linesrv *linesrv_new(int listener, const struct linesrv_limits *lim, const struct linesrv_ops *ops)
{
	struct linesrv *s = xcalloc(1, sizeof *s);
	s->lim = *lim;
	if (s->lim.clients == 0 || s->lim.clients > MAX_SLOTS)
		s->lim.clients = MAX_SLOTS;
	s->ops = *ops;
	s->listener = listener;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
	if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, listener, &ev) < 0) {
		if (s->ep >= 0)
			close(s->ep);
		close(listener);
		free(s);
		return NULL;
	}
	return s;
}

static void client_close(struct linesrv *s, size_t i)
{
	struct client *cl = s->clients[i];
	if (!cl)
		return;
	s->clients[i] = NULL;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	free(cl->in);
	free(cl->out);
	free(cl);
	if (s->ops.gone)
		s->ops.gone(s->ops.ctx, i);
}

void linesrv_free(struct linesrv *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < MAX_SLOTS; i++)
		client_close(s, i);
	close(s->listener);
	close(s->ep);
	free(s);
}

int linesrv_fd(const struct linesrv *s)
{
	return s->ep;
}

/* What epoll watches of client i: its input unless held (then only its
 * hang-up), its output while some is queued. */
static void watch(struct linesrv *s, size_t i)
{
	struct client *cl = s->clients[i];
	uint32_t in = cl->closing ? 0 : cl->held ? EPOLLRDHUP : EPOLLIN;
	struct epoll_event ev = { .events = in | (cl->out_len > cl->out_off ? EPOLLOUT : 0),
				  .data.u64 = i + 1 };
	epoll_ctl(s->ep, EPOLL_CTL_MOD, cl->fd, &ev);
}

static void flush_out(struct client *cl)
{
	if (cl->out_off >= cl->out_len)
		return;
	ssize_t w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w > 0)
		cl->out_off += (size_t)w;
	else if (w < 0 && errno != EAGAIN && errno != EINTR)
		cl->closing = true, cl->out_off = cl->out_len;
}

/* Close i if it is closing and has sent all; else watch it anew. */
static void settle(struct linesrv *s, size_t i)
{
	struct client *cl = s->clients[i];
	if (!cl || cl->in_lines)
		return;
	if (cl->closing && cl->out_off >= cl->out_len)
		client_close(s, i);
	else
		watch(s, i);
}

void linesrv_send(struct linesrv *s, size_t slot, json_t *j)
{
	struct client *cl = slot < MAX_SLOTS ? s->clients[slot] : NULL;
	char *text = j && cl ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!text)
		return;
	size_t n = strlen(text);
	if (cl->out_len - cl->out_off + n + 1 > s->lim.out_max) {
		/* a client that does not read: what it did not take is dropped,
		 * and so is it */
		cl->closing = true;
		cl->out_off = cl->out_len;
		free(text);
		settle(s, slot);
		return;
	}
	if (cl->out_off) {
		memmove(cl->out, cl->out + cl->out_off, cl->out_len - cl->out_off);
		cl->out_len -= cl->out_off;
		cl->out_off = 0;
	}
	cl->out = xrealloc(cl->out, cl->out_len + n + 1);
	memcpy(cl->out + cl->out_len, text, n);
	cl->out[cl->out_len + n] = '\n';
	cl->out_len += n + 1;
	free(text);
	flush_out(cl);
	settle(s, slot);
}

void linesrv_close_after(struct linesrv *s, size_t slot)
{
	if (slot < MAX_SLOTS && s->clients[slot]) {
		s->clients[slot]->closing = true;
		settle(s, slot);
	}
}

bool linesrv_alive(const struct linesrv *s, size_t slot)
{
	return slot < MAX_SLOTS && s->clients[slot] && !s->clients[slot]->closing;
}

pid_t linesrv_pid(const struct linesrv *s, size_t slot)
{
	return slot < MAX_SLOTS && s->clients[slot] ? s->clients[slot]->pid : 0;
}

void linesrv_each(struct linesrv *s, void (*fn)(void *ctx, size_t slot), void *ctx)
{
	for (size_t i = 0; i < MAX_SLOTS; i++)
		if (s->clients[i])
			fn(ctx, i);
}

/* The whole lines of client i, while it is neither held nor closing; each
 * leaves the buffer before it is handed over (handling it may hold the
 * client, or answer at once). */
static void lines(struct linesrv *s, size_t i)
{
	struct client *cl = s->clients[i];
	cl->in_lines = true;
	char *nl;
	while (s->clients[i] == cl && !cl->held && !cl->closing && (nl = memchr(cl->in, '\n', cl->in_len))) {
		size_t len = (size_t)(nl - cl->in);
		char *line = xmalloc(len + 1);
		memcpy(line, cl->in, len);
		line[len] = '\0';
		memmove(cl->in, nl + 1, cl->in_len - len - 1);
		cl->in_len -= len + 1;
		s->ops.line(s->ops.ctx, i, line, len);
		free(line);
	}
	if (s->clients[i] != cl)
		return;
	if (!cl->held && !cl->closing && cl->in_len >= s->lim.line_max) {
		s->ops.line(s->ops.ctx, i, NULL, cl->in_len);
		cl->closing = true;
	}
	cl->in_lines = false;
	settle(s, i);
}

void linesrv_hold(struct linesrv *s, size_t slot, bool hold)
{
	struct client *cl = slot < MAX_SLOTS ? s->clients[slot] : NULL;
	if (!cl)
		return;
	cl->held = hold;
	if (cl->in_lines)
		return; /* the loop in lines() goes on with it */
	if (!hold)
		lines(s, slot);
	else
		settle(s, slot);
}

/* Read what client i sent, with who sent it (fds passed along closed). */
static ssize_t read_in(struct linesrv *s, struct client *cl, char *buf, size_t len, bool *gone)
{
	union {
		char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(32 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			     .msg_controllen = sizeof u.b };
	ssize_t n = recvmsg(cl->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	*gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS && s->lim.creds &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof cr);
			cl->pid = cr.pid > 0 ? cr.pid : 0;
		} else if (c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t j = 0; j < k; j++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + j * sizeof(int), sizeof fd);
				close(fd);
			}
		}
	}
	return n;
}

static void on_client(struct linesrv *s, size_t i, uint32_t events)
{
	struct client *cl = s->clients[i];
	if (events & EPOLLOUT)
		flush_out(cl);
	if ((cl->held && (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) ||
	    (cl->closing && (events & (EPOLLHUP | EPOLLERR)))) {
		/* held: it gave up waiting; closing: it cannot take the rest */
		client_close(s, i);
		return;
	}
	if (!cl->held && !cl->closing && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		size_t room = s->lim.line_max + 1 - cl->in_len;
		char buf[65536];
		bool gone;
		ssize_t n = read_in(s, cl, buf, room < sizeof buf ? room : sizeof buf, &gone);
		if (gone) {
			client_close(s, i);
			return;
		}
		if (n > 0) {
			cl->in = xrealloc(cl->in, cl->in_len + (size_t)n);
			memcpy(cl->in + cl->in_len, buf, (size_t)n);
			cl->in_len += (size_t)n;
		}
		lines(s, i);
		return;
	}
	settle(s, i);
}

static void on_accept(struct linesrv *s)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(s->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cr = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		socklen_t crl = sizeof cr;
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl);
		size_t i = 0;
		while (i < s->lim.clients && s->clients[i])
			i++;
		bool full = i == s->lim.clients;
		/* a full server still lets the owner say so (slot SIZE_MAX) */
		if (!s->ops.accept(s->ops.ctx, fd, full ? SIZE_MAX : i, &cr) || full) {
			close(fd);
			continue;
		}
		if (s->lim.creds) {
			int one = 1;
			setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
		}
		struct client *cl = xcalloc(1, sizeof *cl);
		cl->fd = fd;
		cl->pid = cr.pid;
		s->clients[i] = cl;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i + 1 };
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			client_close(s, i);
	}
}

void linesrv_dispatch(struct linesrv *s)
{
	struct epoll_event evs[16];
	int n = epoll_wait(s->ep, evs, ARRAY_LEN(evs), 0);
	for (int k = 0; k < n; k++) {
		if (evs[k].data.u64 == 0)
			on_accept(s);
		else if (s->clients[evs[k].data.u64 - 1])
			on_client(s, (size_t)evs[k].data.u64 - 1, evs[k].events);
	}
}
