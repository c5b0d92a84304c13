/* mem.c - the allocation and cleanup helpers of util.h (xmalloc and its
 * kin, which end warden on out of memory; freep, closep, closedirp), apart from the
 * rest of util.c so that the hook client (src/hookbin) links only these. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void freep(void *p) { free(*(void **)p); }

void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
	*fd = -1; /* closed once: a later closep (the cleanup of the same
		     variable) must not close the number again, reused by then */
}

void closedirp(DIR **d)
{
	if (*d) {
		int saved = errno;
		closedir(*d);
		errno = saved;
	}
	*d = NULL;
}

static void oom(void)
{
	fputs("warden: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		oom();
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom();
	return s;
}
