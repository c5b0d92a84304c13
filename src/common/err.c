/* err.c - the error struct of err.h: fill, wrap, format and print. */
#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shown.h"

int werr_set(struct werr *e, int errnum, const char *fmt, ...)
{
	if (!e)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->errnum = errnum;
	return -1;
}

int werr_wrap(struct werr *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	char prefix[512], old[sizeof e->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	snprintf(old, sizeof old, "%s", e->msg);
	size_t pl = strlen(prefix);
	if (pl + 2 < sizeof e->msg) {
		memcpy(e->msg, prefix, pl);
		memcpy(e->msg + pl, ": ", 2);
		size_t room = sizeof e->msg - pl - 3;
		size_t ol = strnlen(old, room);
		memcpy(e->msg + pl + 2, old, ol);
		e->msg[pl + 2 + ol] = '\0';
	}
	return -1;
}

const char *werr_str(const struct werr *e, char *buf, unsigned long len)
{
	if (e->errnum)
		snprintf(buf, len, "%s: %s", e->msg, strerror(e->errnum));
	else
		snprintf(buf, len, "%s", e->msg);
	return buf;
}

void werr_print(const struct werr *e)
{
	char buf[sizeof e->msg + 128];
	char *shown = text_shown(werr_str(e, buf, sizeof buf));
	fprintf(stderr, "warden: %s\n", shown);
	free(shown);
}

/* Whether the user's terminal is raw now: one terminal per process, set
 * by the supervisor's main thread around its session (pty.c). */
static int terminal_raw;

void wnote_terminal_raw(int raw)
{
	terminal_raw = raw;
}

void wnote(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	/* the names in it may be the sandbox's: shown, never acting (shown.h) */
	char *shown = n >= 0 ? text_shown(text) : NULL;
	fputs(terminal_raw ? "\r\nwarden: " : "warden: ", stderr);
	fputs(shown ? shown : "(a note that could not be formatted)", stderr);
	fputs(terminal_raw ? "\r\n" : "\n", stderr);
	free(shown);
	free(text);
}

