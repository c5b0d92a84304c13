/* chain.c - reading a session log (see chain.h): the line reader, parsing
 * a line as an event, the hash chain verifier (which line changed, which was
 * removed), and the filters. */
#include "chain.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/hash.h"
#include "events.h"
#include "format.h"

/* ---- lines --------------------------------------------------------------- */

void audit_reader_init(struct audit_reader *r, int fd)
{
	memset(r, 0, sizeof *r);
	r->fd = fd;
}

void audit_reader_free(struct audit_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->start = r->len = r->cap = 0;
}

#define READ_CHUNK 65536

int audit_reader_next(struct audit_reader *r, struct audit_line *l, bool flush, struct werr *e)
{
	for (;;) {
		char *base = r->buf ? r->buf + r->start : NULL; /* no NULL + 0 */
		size_t pending = r->len - r->start;
		char *nl = pending ? memchr(base, '\n', pending) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - base);
			r->start += n + 1;
			if (r->skipping) {
				r->skipping = false;
				continue;
			}
			*l = (struct audit_line){ .text = base, .len = n, .lineno = ++r->lineno, .complete = true };
			return 1;
		}
		if (r->skipping) {
			r->start = r->len = 0;
			pending = 0;
		} else if (pending >= AUDIT_LINE_MAX) {
			*l = (struct audit_line){ .text = base, .len = pending, .lineno = ++r->lineno, .too_long = true };
			r->skipping = true;
			r->start = r->len;
			return 1;
		}
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, pending);
			r->start = 0;
			r->len = pending;
		}
		if (r->cap - r->len < READ_CHUNK) {
			r->cap = r->cap ? r->cap * 2 : 2 * READ_CHUNK;
			r->buf = xrealloc(r->buf, r->cap);
		}
		ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return werr_errno(e, "cannot read the audit log");
		}
		if (got == 0) {
			if (flush && pending > 0 && !r->skipping) {
				*l = (struct audit_line){ .text = r->buf, .len = pending, .lineno = ++r->lineno };
				r->start = r->len;
				return 1;
			}
			return 0;
		}
		r->len += (size_t)got;
	}
}

/* ---- events and the chain ------------------------------------------------ */

json_t *audit_parse_line(const char *text, size_t len, char *why, size_t whylen)
{
	size_t ws = 0;
	while (ws < len && (text[ws] == ' ' || text[ws] == '\t' || text[ws] == '\r'))
		ws++;
	if (ws == len) {
		snprintf(why, whylen, "empty line");
		return NULL;
	}
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		char *d = audit_display_plain(je.text, 120);
		snprintf(why, whylen, "not valid JSON (column %d: %s)", je.column, d);
		free(d);
		return NULL;
	}
	const char *bad = NULL;
	struct audit_time t;
	json_t *v = json_object_get(o, "v"), *seq = json_object_get(o, "seq");
	const char *ev = json_string_value(json_object_get(o, "event"));
	if (!json_is_object(o))
		bad = "not a JSON object";
	else if (!json_is_integer(v) || json_integer_value(v) != 1)
		bad = "\"v\" is missing or not 1";
	else if (audit_parse_ts(json_string_value(json_object_get(o, "ts")), &t) < 0)
		bad = "\"ts\" is missing or not a UTC time like 2026-01-02T03:04:05.123456Z";
	else if (!json_is_string(json_object_get(o, "session")))
		bad = "\"session\" is missing or not a string";
	else if (!json_is_integer(seq) || json_integer_value(seq) < 1)
		bad = "\"seq\" is missing or not a positive integer";
	else if (!ev || !ev[0])
		bad = "\"event\" is missing or empty";
	else if (!json_is_string(json_object_get(o, "prev")) ||
		 !sha256_hex_ok(json_string_value(json_object_get(o, "prev"))))
		bad = "\"prev\" is missing or not 64 lowercase hex digits";
	if (bad) {
		snprintf(why, whylen, "%s", bad);
		json_decref(o);
		return NULL;
	}
	return o;
}

void audit_chain_init(struct audit_chain *c, const char *session)
{
	memset(c, 0, sizeof *c);
	snprintf(c->session, sizeof c->session, "%s", session ? session : "");
	snprintf(c->last_hash, sizeof c->last_hash, "%s", AUDIT_PREV_FIRST);
}

__attribute__((format(printf, 3, 4)))
static bool chain_break(struct audit_chain *c, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	c->broken = line;
	c->pending = 0;
	return false;
}

/* Line p's prev did not match line p-1. If line p+1's prev matches line p,
 * line p is as written and line p-1 was changed; if not, line p was changed
 * (its prev, hence its own hash). Without line p+1, it cannot be told. */
static bool settle(struct audit_chain *c, const char *next_prev)
{
	unsigned long p = c->pending;
	if (next_prev && strcmp(next_prev, c->last_hash) == 0)
		return chain_break(c, p - 1, "changed after it was written: its SHA-256 is not the prev recorded on line %lu", p);
	if (next_prev)
		return chain_break(c, p, "changed after it was written: its prev does not match line %lu, and line %lu's prev does not match it",
				   p - 1, p + 1);
	return chain_break(c, p - 1, "its SHA-256 is not the prev recorded on line %lu (line %lu or line %lu was changed)",
			   p, p - 1, p);
}

bool audit_chain_feed(struct audit_chain *c, const struct audit_line *l, json_t **evp)
{
	char why[400];
	json_t *ev = NULL;
	unsigned long n = ++c->lines;
	if (l->too_long)
		snprintf(why, sizeof why, "longer than %u bytes", AUDIT_LINE_MAX);
	else if (!l->complete)
		snprintf(why, sizeof why, "cut short: no newline at its end (the writer was interrupted, or the file was cut)");
	else
		ev = audit_parse_line(l->text, l->len, why, sizeof why);
	if (n == 1 && !l->complete && !l->too_long)
		snprintf(c->never, sizeof c->never, "its first record is cut short (warden stopped, "
			 "or the disk filled, while writing it)");
	if (evp)
		*evp = ev ? json_incref(ev) : NULL;
	if (c->broken)
		goto out;
	if (!ev) {
		if (c->pending)
			settle(c, NULL);
		else
			chain_break(c, n, "%s", why);
		goto out;
	}
	const char *prev = json_string_value(json_object_get(ev, "prev"));
	if (c->pending) {
		settle(c, prev);
		goto out;
	}
	if (c->ended) {
		chain_break(c, n, "a line after the session.end of line %lu", n - 1);
		goto out;
	}
	const char *session = json_string_value(json_object_get(ev, "session"));
	if (strcmp(session, c->session) != 0) {
		char *d = audit_display_string(session, 80);
		chain_break(c, n, "session is %s, not %s as the file name says", d, c->session);
		free(d);
		goto out;
	}
	json_int_t seq = json_integer_value(json_object_get(ev, "seq"));
	if (seq != (json_int_t)n) {
		chain_break(c, n, "seq is %lld, expected %lu%s", (long long)seq, n,
			    seq > (json_int_t)n ? " (a line before it was removed, or lines were moved)"
						: " (a line was repeated, inserted or moved before it)");
		goto out;
	}
	struct audit_time ts;
	audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &ts);
	if (n == 1) {
		if (strcmp(prev, AUDIT_PREV_FIRST) != 0) {
			chain_break(c, 1, "prev is not 64 zeros, as on a log's first line");
			goto out;
		}
	} else if (strcmp(prev, c->last_hash) != 0) {
		c->pending = n; /* the next line says which line changed */
	} else if (audit_time_cmp(&ts, &c->last_ts) < 0) {
		chain_break(c, n, "ts %s is earlier than line %lu's", json_string_value(json_object_get(ev, "ts")), n - 1);
		goto out;
	}
	c->last_ts = ts;
	const char *kind = json_string_value(json_object_get(ev, "event"));
	if (n == 1)
		c->started = strcmp(kind, "session.start") == 0;
	if (n == 1 && strcmp(kind, "log.failed") == 0) {
		_cleanup_free_ char *r = audit_display_plain(
			json_string_value(json_object_get(ev, "reason")) ?: "no reason given", 200);
		snprintf(c->never, sizeof c->never, "its first record could not be written: %s", r);
	}
	c->ended = strcmp(kind, "session.end") == 0;
	c->failed = strcmp(kind, "log.failed") == 0;
	sha256_hex(l->text, l->len, c->last_hash);
out:
	json_decref(ev);
	return !c->broken;
}

bool audit_chain_finish(struct audit_chain *c)
{
	if (!c->broken && c->pending)
		settle(c, NULL);
	return !c->broken;
}

int audit_verify_fd(int fd, const char *session, struct audit_chain *c, struct werr *e)
{
	struct audit_reader r;
	struct audit_line l;
	int got;
	audit_chain_init(c, session);
	audit_reader_init(&r, fd);
	while ((got = audit_reader_next(&r, &l, true, e)) == 1)
		if (!audit_chain_feed(c, &l, NULL))
			break;
	audit_reader_free(&r);
	if (got < 0)
		return -1;
	return audit_chain_finish(c) ? 0 : 1;
}

int audit_verify_log(int fd, const char *session, struct audit_chain *c, struct werr *e)
{
	int r = audit_verify_fd(fd, session, c, e);
	/* c->never holds only for a first line that is all there is (feed
	 * sets it for a cut one, or a whole log.failed) */
	if (r < 0 || c->started || c->lines > 1)
		c->never[0] = '\0';
	if (r < 0 || c->started)
		return r;
	if (c->lines == 0)
		snprintf(c->never, sizeof c->never, "the log is empty (warden stopped before its first "
			 "record, or the file was emptied)");
	if (r == 1)
		return 1;
	if (c->lines == 0)
		chain_break(c, 1, "the log is empty: no session.start (warden stopped before writing "
			    "it, or the file was emptied)");
	else
		chain_break(c, 1, "not a session.start: a log begins with one (its first lines were "
			    "replaced)");
	return 1;
}

int audit_verify_buffer(const char *buf, size_t len, const char *session, struct audit_chain *c)
{
	audit_chain_init(c, session);
	size_t i = 0;
	while (i < len && !c->broken) {
		const char *nl = memchr(buf + i, '\n', len - i);
		struct audit_line l = { .text = buf + i, .lineno = c->lines + 1 };
		l.len = nl ? (size_t)(nl - (buf + i)) : len - i;
		l.complete = nl != NULL;
		if (l.len >= AUDIT_LINE_MAX) {
			l.len = AUDIT_LINE_MAX;
			l.complete = false;
			l.too_long = true;
		}
		audit_chain_feed(c, &l, NULL);
		if (!nl)
			break;
		i = (size_t)(nl - buf) + 1;
	}
	return audit_chain_finish(c) ? 0 : 1;
}

/* ---- filters ------------------------------------------------------------- */

bool audit_filter_match(const struct audit_filter *f, json_t *ev)
{
	const char *kind = json_string_value(json_object_get(ev, "event"));
	if (!kind)
		return false;
	if (f->events.n) {
		bool any = false;
		for (size_t i = 0; i < f->events.n && !any; i++) {
			size_t n = strlen(f->events.v[i]);
			any = strcmp(kind, f->events.v[i]) == 0 ||
			      (n && strncmp(kind, f->events.v[i], n) == 0 && kind[n] == '.');
		}
		if (!any)
			return false;
	}
	if (f->has_pid) {
		json_t *p = json_object_get(ev, "pid");
		if (!json_is_integer(p) || json_integer_value(p) != f->pid)
			return false;
	}
	if (f->decision) {
		const char *d = json_string_value(json_object_get(ev, "decision"));
		if (!d || strcmp(d, f->decision) != 0)
			return false;
	}
	if (f->tool) {
		const char *t = json_string_value(json_object_get(ev, "tool"));
		const char *id = strcmp(kind, "tool") == 0 ? json_string_value(json_object_get(ev, "id")) : NULL;
		if (!(t && strcmp(t, f->tool) == 0) && !(id && strcmp(id, f->tool) == 0))
			return false;
	}
	if (f->has_since || f->has_until) {
		struct audit_time t;
		if (audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &t) < 0)
			return false;
		if (f->has_since && audit_time_cmp(&t, &f->since) < 0)
			return false;
		if (f->has_until && audit_time_cmp(&t, &f->until) > 0)
			return false;
	}
	return true;
}

void audit_filter_free(struct audit_filter *f)
{
	strv_free(&f->events);
}

