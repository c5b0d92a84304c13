/* bytebuf.h - a growable queue of bytes: appended at the end, consumed from
 * the front (off), compacted or grown when an append does not fit. The
 * proxy's intercepted connections queue what waits for a socket or for
 * nghttp2 in it. */
#pragma once
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
