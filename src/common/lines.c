/* lines.c - a text split into its lines, counted (lines.h). */
#include "lines.h"

#include <string.h>

int lines_each(const char *text, size_t len, lines_fn fn, void *ctx)
{
	unsigned long lineno = 0;
	for (size_t pos = 0; pos < len;) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		int r = fn(s, n, ++lineno, ctx);
		if (r < 0)
			return r;
	}
	return 0;
}
