/* sbuf.h - a small growable string: the audit reader's messages and
 * summaries, the Codex configuration warden writes, the terminal's
 * question box, the checkpoint's manifests and caches. */
#pragma once
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct sbuf {
	char *p;
	size_t n, cap;
};

static inline void sb_put(struct sbuf *b, const char *s, size_t len)
{
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (b->n + len + 1 > cap)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = '\0';
}

static inline void sb_puts(struct sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static inline void sb_putc(struct sbuf *b, char c) { sb_put(b, &c, 1); }

/* v in base 8 or 10, at least width digits (zeros before), a '-' first
 * when negative (within width): what printf's "%0*lld" and "%0*llo" write,
 * without printf's cost where a file has a line per entry (the
 * checkpoint's manifests and caches). */
static inline void sb_put_num(struct sbuf *b, bool negative, unsigned long long v, unsigned base,
			      int width)
{
	char t[72], *q = t + sizeof t;
	do {
		*--q = (char)('0' + v % base);
		v /= base;
	} while (v);
	int digits = (int)(t + sizeof t - q), pad = width - digits - (negative ? 1 : 0);
	while (pad-- > 0 && q > t + 1)
		*--q = '0';
	if (negative)
		*--q = '-';
	sb_put(b, q, (size_t)(t + sizeof t - q));
}

static inline void sb_put_ull(struct sbuf *b, unsigned long long v) { sb_put_num(b, false, v, 10, 0); }

/* "%0*lld" */
static inline void sb_put_ll(struct sbuf *b, long long v, int width)
{
	sb_put_num(b, v < 0, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, 10, width);
}

/* A time as "%lld.%09ld": seconds, then nanoseconds */
static inline void sb_put_time(struct sbuf *b, long long sec, long nsec)
{
	sb_put_ll(b, sec, 0);
	sb_put(b, ".", 1);
	sb_put_ll(b, nsec, 9);
}

__attribute__((format(printf, 2, 3)))
static inline void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		sb_put(b, tmp, (size_t)n);
		return;
	}
	char *big = xmalloc((size_t)n + 1); /* longer than tmp: the whole of it */
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_put(b, big, (size_t)n);
	free(big);
}

/* The string (malloc'd; "" when nothing was put). */
static inline char *sb_take(struct sbuf *b)
{
	if (!b->p)
		return xstrdup("");
	return b->p;
}
