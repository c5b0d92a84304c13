/* glob.c - fnmatch(3) without flags, '*'-only patterns matched directly
 * (glob.h). */
#include "glob.h"

#include <fnmatch.h>
#include <string.h>

void glob_compile(struct glob *g, const char *pattern)
{
	*g = (struct glob){ .pat = pattern, .len = strlen(pattern) };
	const char *star = strchr(pattern, '*');
	if (strpbrk(pattern, "?[\\"))
		g->kind = GLOB_OTHER;
	else if (!star)
		g->kind = GLOB_LITERAL;
	else {
		g->kind = GLOB_STARS;
		g->pre = (size_t)(star - pattern);
		g->tail = g->len - (size_t)(strrchr(pattern, '*') - pattern) - 1;
	}
}

/* The first n bytes of piece in [at, end), or NULL. A piece is a few bytes
 * and a text a few dozen: its first byte found, then the rest compared. */
static const char *find(const char *at, const char *end, const char *piece, size_t n)
{
	while ((size_t)(end - at) >= n) {
		const char *c = memchr(at, piece[0], (size_t)(end - at) - n + 1);
		if (!c)
			return NULL;
		if (memcmp(c + 1, piece + 1, n - 1) == 0)
			return c;
		at = c + 1;
	}
	return NULL;
}

bool glob_run(const struct glob *g, const char *s, size_t len)
{
	if (g->kind == GLOB_OTHER)
		return fnmatch(g->pat, s, 0) == 0;
	if (g->kind == GLOB_LITERAL)
		return len == g->len && memcmp(g->pat, s, len) == 0;
	if (len < g->pre + g->tail || memcmp(g->pat, s, g->pre) != 0 ||
	    memcmp(g->pat + g->len - g->tail, s + len - g->tail, g->tail) != 0)
		return false;
	/* the pieces between the first and the last star, each leftmost
	 * after the one before, within what the ends left */
	const char *at = s + g->pre, *end = s + len - g->tail;
	const char *q = g->pat + g->pre + 1, *last = g->pat + g->len - g->tail - 1;
	while (q < last) {
		const char *next = memchr(q, '*', (size_t)(last - q) + 1);
		size_t n = (size_t)(next - q);
		if (n) {
			const char *f = find(at, end, q, n);
			if (!f)
				return false;
			at = f + n;
		}
		q = next + 1;
	}
	return true;
}

bool glob_match(const char *pattern, const char *s)
{
	struct glob g;
	glob_compile(&g, pattern);
	return glob_run(&g, s, strlen(s));
}
