/* bytebuf.h - a growable queue of bytes: appended at the end, consumed from
 * the front (off), compacted or grown when an append does not fit. The
 * proxy's intercepted connections queue what waits for a socket or for
 * nghttp2 in it; the terminal's relay and warden's notes what waits for a
 * descriptor that does not block (bytebuf_write, bytebuf_flush), or for a
 * socket sent to without blocking while its file's flags are another's
 * (bytebuf_send_write, bytebuf_send_flush: send(2) with MSG_DONTWAIT). */
#pragma once
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

struct bytebuf {
	char *p;
	size_t off, len, cap; /* queued: p[off..len) */
};

static inline size_t bytebuf_pending(const struct bytebuf *b)
{
	return b->len - b->off;
}

/* Append n bytes; the first allocation is at least first_cap. */
static inline void bytebuf_put(struct bytebuf *b, const void *d, size_t n, size_t first_cap)
{
	if (b->off == b->len)
		b->off = b->len = 0;
	if (b->len + n > b->cap) {
		if (b->off) {
			memmove(b->p, b->p + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		while (b->len + n > b->cap)
			b->cap = b->cap ? 2 * b->cap : first_cap;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static inline void bytebuf_free(struct bytebuf *b)
{
	free(b->p);
	*b = (struct bytebuf){ 0 };
}

/* One write of n bytes to fd: send(2) with sendflags when they are not 0
 * (a socket), else write(2). */
static inline ssize_t bytebuf_out(int fd, const void *p, size_t n, int sendflags)
{
	return sendflags ? send(fd, p, n, sendflags) : write(fd, p, n);
}

/* What q holds, written to fd as far as it takes it: 1 all written, 0 some
 * left (EAGAIN: fd does not block), -1 with errno when fd fails. A socket
 * with sendflags (bytebuf_out), else 0. */
static inline int bytebuf_send_flush(int fd, struct bytebuf *q, int sendflags)
{
	while (bytebuf_pending(q)) {
		ssize_t w = bytebuf_out(fd, q->p + q->off, bytebuf_pending(q), sendflags);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		q->off += (size_t)w;
	}
	return 1;
}

static inline int bytebuf_flush(int fd, struct bytebuf *q)
{
	return bytebuf_send_flush(fd, q, 0);
}

/* n bytes to fd, which does not block: what it takes now written, the rest
 * queued in q after what q holds already (fd is written to only once q is
 * empty). 0, or -1 with errno when fd fails (not EAGAIN). sendflags as
 * bytebuf_send_flush's. */
static inline int bytebuf_send_write(int fd, struct bytebuf *q, const void *buf, size_t n,
				     int sendflags)
{
	const char *p = buf;
	size_t done = 0;
	while (!bytebuf_pending(q) && done < n) {
		ssize_t w = bytebuf_out(fd, p + done, n - done, sendflags);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -1;
			break;
		}
		done += (size_t)w;
	}
	if (done < n)
		bytebuf_put(q, p + done, n - done, 16384);
	return 0;
}

static inline int bytebuf_write(int fd, struct bytebuf *q, const void *buf, size_t n)
{
	return bytebuf_send_write(fd, q, buf, n, 0);
}

/* q cut to at most max bytes, the newest dropped: how many were. */
static inline size_t bytebuf_bound(struct bytebuf *q, size_t max)
{
	size_t n = bytebuf_pending(q);
	if (n <= max)
		return 0;
	q->len -= n - max;
	return n - max;
}
