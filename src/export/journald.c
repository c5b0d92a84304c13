/* journald.c - the audit stream's events as structured entries of the
 * systemd journal, in journald's native protocol over its datagram socket
 * (journald.h says what an entry holds). */
#include "journald.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../audit/escape.h"
#include "../common/hash.h"
#include "../common/sbuf.h"
#include "../common/util.h"
#include "dgram.h"

struct journald {
	struct dgram *d;         /* the socket and what waits for it */
	struct audit *log;       /* for the line's hashes; NULL until attached */
	struct bytebuf buf;      /* the entry being sent */
};

/* ---- the encoding ------------------------------------------------------ */

/* The fields journald_encode sets itself: an event's field mapped to one of
 * these gets a '_' appended. */
static const char *const own_fields[] = {
	"WARDEN_SESSION", "WARDEN_SEQ", "WARDEN_TS", "WARDEN_EVENT", "WARDEN_PREV",
	"WARDEN_LINE_SHA256", "WARDEN_ESCAPED", "WARDEN_FIELDS_LEFT_OUT",
};

void journald_field_name(const char *prefix, const char *key, char out[JOURNALD_NAME_MAX + 1])
{
	size_t np = strlen(prefix), nk = strlen(key), n = 0;
	for (size_t i = 0; i < np + nk; i++) {
		unsigned char c = (unsigned char)(i < np ? prefix[i] : key[i - np]);
		char m = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A')
			 : (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? (char)c
			 : '_';
		if (n == JOURNALD_NAME_MAX) {
			/* too long: the first 55, '_', 8 hex digits of the whole */
			_cleanup_free_ char *whole = xasprintf("%s%s", prefix, key);
			char hex[SHA256_HEX_LEN];
			sha256_hex(whole, strlen(whole), hex);
			snprintf(out + JOURNALD_NAME_MAX - 9, 10, "_%.8s", hex);
			return;
		}
		out[n++] = m;
	}
	out[n] = '\0';
}

void journald_put_field(struct bytebuf *b, const char *name, const void *val, size_t n)
{
	bytebuf_put(b, name, strlen(name), 4096);
	if (!memchr(val, '\n', n)) {
		bytebuf_put(b, "=", 1, 4096);
		bytebuf_put(b, val, n, 4096);
	} else {
		unsigned char le[8];
		for (int i = 0; i < 8; i++)
			le[i] = (unsigned char)((uint64_t)n >> (8 * i));
		bytebuf_put(b, "\n", 1, 4096);
		bytebuf_put(b, le, sizeof le, 4096);
		bytebuf_put(b, val, n, 4096);
	}
	bytebuf_put(b, "\n", 1, 4096);
}

static void put_str(struct bytebuf *b, const char *name, const char *s)
{
	journald_put_field(b, name, s, strlen(s));
}

static bool str_is(json_t *v, const char *s)
{
	const char *t = json_string_value(v);
	return t && strcmp(t, s) == 0;
}

int journald_priority(const struct event *ev)
{
	const char *k = ev->kind;
	json_t *f = ev->fields;
	if (strcmp(k, "alert") == 0) {
		json_t *sev = json_object_get(f, "severity");
		return str_is(sev, "critical") ? 2 : str_is(sev, "high") ? 3 : 4;
	}
	if (strcmp(k, "log.failed") == 0 ||
	    (strcmp(k, "session.end") == 0 && json_object_get(f, "error")))
		return 3;
	static const char *const warn[] = { "kill", "limit", "risk", "action",
					    "syscall.suppressed" };
	for (size_t i = 0; i < ARRAY_LEN(warn); i++)
		if (strcmp(k, warn[i]) == 0)
			return 4;
	json_t *d = json_object_get(f, "decision");
	return str_is(d, "deny") ? 4 : str_is(d, "ignore") ? 5 : 6;
}

/* The facts MESSAGE gives of each kind, in order; other kinds: their first
 * few fields that are not arrays or objects. */
static const struct {
	const char *kind;
	const char *keys[7];
} facts[] = {
	{ "session.start", { "workspace", "uid", "version" } },
	{ "session.end", { "exit", "error", "duration_ms" } },
	{ "exec", { "path", "pid", "decision", "reason" } },
	{ "net", { "method", "host", "address", "port", "decision", "reason" } },
	{ "file", { "op", "path", "path2", "decision", "reason" } },
	{ "syscall", { "name", "pid", "decision", "path", "reason" } },
	{ "syscall.suppressed", { "suppressed" } },
	{ "alert", { "rule", "severity", "path", "host", "action", "detail" } },
	{ "signal", { "signal", "to" } },
	{ "kill", { "reason" } },
	{ "action", { "action", "by", "reason" } },
	{ "limit", { "kind", "limit", "detail" } },
	{ "risk", { "level", "score", "rule" } },
	{ "approval", { "phase", "kind", "subject", "decision" } },
	{ "tool", { "phase", "tool", "what", "decision" } },
	{ "log.failed", { "lost", "reason" } },
};

#define MESSAGE_VALUE_MAX 160

/* " key=value" to m: a scalar only (a real to one decimal), on one line,
 * cut at MESSAGE_VALUE_MAX bytes; quoted when it holds a space. */
static bool message_fact(struct sbuf *m, const char *key, json_t *v)
{
	if (!v || json_is_null(v) || json_is_array(v) || json_is_object(v))
		return false;
	_cleanup_free_ char *text = json_is_string(v) ? xstrdup(json_string_value(v))
				    : json_is_real(v) ? xasprintf("%.1f", json_real_value(v))
				    : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (!text)
		return false;
	size_t n = strlen(text);
	bool cut = n > MESSAGE_VALUE_MAX;
	if (cut)
		n = MESSAGE_VALUE_MAX;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	bool quote = !n || memchr(text, ' ', n);
	sb_printf(m, " %s=%s%.*s%s%s", key, quote ? "\"" : "", (int)n, text, cut ? "..." : "",
		  quote ? "\"" : "");
	return true;
}

char *journald_message(const struct event *ev)
{
	struct sbuf m = { 0 };
	sb_puts(&m, ev->kind);
	for (size_t i = 0; i < ARRAY_LEN(facts); i++) {
		if (strcmp(ev->kind, facts[i].kind) != 0)
			continue;
		for (size_t j = 0; j < ARRAY_LEN(facts[i].keys) && facts[i].keys[j]; j++)
			message_fact(&m, facts[i].keys[j], json_object_get(ev->fields, facts[i].keys[j]));
		return sb_take(&m);
	}
	const char *k;
	json_t *v;
	int n = 0;
	json_object_foreach(ev->fields, k, v)
		if (n < 4 && message_fact(&m, k, v))
			n++;
	return sb_take(&m);
}

/* Flattening an event's fields. */
struct flat {
	struct bytebuf *b;
	json_t *escaped;         /* the event's "escaped", or NULL */
	json_t *still_escaped;   /* the arrays sent as JSON text with escaped strings */
	unsigned fields, left_out;
};

static bool listed(json_t *arr, const char *key)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		if (str_is(v, key))
			return true;
	return false;
}

static void put_value(struct flat *fl, const char *name, const void *val, size_t n)
{
	if (fl->fields >= JOURNALD_FIELDS_MAX) {
		fl->left_out++;
		return;
	}
	char safe[JOURNALD_NAME_MAX + 2];
	snprintf(safe, sizeof safe, "%s", name);
	for (size_t i = 0; i < ARRAY_LEN(own_fields); i++)
		if (strcmp(name, own_fields[i]) == 0) {
			size_t l = strlen(safe);
			safe[l] = '_';
			safe[l + 1] = '\0';
		}
	journald_put_field(fl->b, safe, val, n);
	fl->fields++;
}

/* The value v at path (the keys from the top joined by '_'); top: a field
 * of the event itself. */
static void flatten(struct flat *fl, const char *path, json_t *v, int depth, bool top)
{
	char name[JOURNALD_NAME_MAX + 1];
	journald_field_name("WARDEN_", path, name);
	if (json_is_object(v) && json_object_size(v) && depth < JOURNALD_DEPTH_MAX) {
		const char *k;
		json_t *sub;
		json_object_foreach(v, k, sub) {
			_cleanup_free_ char *p = xasprintf("%s_%s", path, k);
			flatten(fl, p, sub, depth + 1, false);
		}
		return;
	}
	if (json_is_null(v))
		return;
	if (json_is_string(v)) {
		size_t len;
		_cleanup_free_ char *raw = top && listed(fl->escaped, path)
						   ? utf8_unescape(json_string_value(v), &len)
						   : NULL;
		if (raw)
			put_value(fl, name, raw, len);
		else
			put_value(fl, name, json_string_value(v), json_string_length(v));
		return;
	}
	/* numbers as the log writes them, true, false, arrays, {} */
	_cleanup_free_ char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		return;
	if (top && json_is_array(v) && listed(fl->escaped, path))
		json_array_append_new(fl->still_escaped, json_string(path));
	put_value(fl, name, text, strlen(text));
}

void journald_encode(struct bytebuf *b, const struct event *ev, const char *prev, const char *hash)
{
	_cleanup_free_ char *msg = journald_message(ev);
	put_str(b, "MESSAGE", msg);
	char num[32];
	snprintf(num, sizeof num, "%d", journald_priority(ev));
	put_str(b, "PRIORITY", num);
	put_str(b, "SYSLOG_IDENTIFIER", "warden");
	put_str(b, "SYSLOG_FACILITY", "10");
	put_str(b, "WARDEN_SESSION", ev->session ? ev->session : "");
	snprintf(num, sizeof num, "%lu", ev->seq);
	put_str(b, "WARDEN_SEQ", num);
	if (ev->ts)
		put_str(b, "WARDEN_TS", ev->ts);
	put_str(b, "WARDEN_EVENT", ev->kind);
	if (prev)
		put_str(b, "WARDEN_PREV", prev);
	if (hash)
		put_str(b, "WARDEN_LINE_SHA256", hash);

	_cleanup_json_ json_t *still = json_array();
	if (!still)
		abort();
	struct flat fl = { .b = b, .still_escaped = still };
	fl.escaped = json_object_get(ev->fields, "escaped");
	if (!json_is_array(fl.escaped))
		fl.escaped = NULL;
	const char *k;
	json_t *v;
	json_object_foreach(ev->fields, k, v)
		if (!fl.escaped || strcmp(k, "escaped") != 0)
			flatten(&fl, k, v, 0, true);
	if (json_array_size(still)) {
		_cleanup_free_ char *s = json_dumps(still, JSON_COMPACT);
		if (s)
			put_str(b, "WARDEN_ESCAPED", s);
	}
	if (fl.left_out) {
		snprintf(num, sizeof num, "%u", fl.left_out);
		put_str(b, "WARDEN_FIELDS_LEFT_OUT", num);
	}
}

/* ---- sending ------------------------------------------------------------ */

static struct dgram_target journal_at(const char *path)
{
	return (struct dgram_target){
		.path = path, .name = "journald", .noun = "journal socket",
		.hint = "is systemd-journald running?", .memfd = true,
	};
}

int journald_probe(const char *path, struct werr *e)
{
	struct dgram_target t = journal_at(path);
	return dgram_probe(&t, e);
}

int journald_open(struct journald **out, const char *path, struct werr *e)
{
	*out = NULL;
	struct dgram_target t = journal_at(path);
	struct dgram *d;
	if (dgram_open(&d, &t, e) < 0)
		return -1;
	struct journald *j = xcalloc(1, sizeof *j);
	j->d = d;
	*out = j;
	return 0;
}

/* The subscriber: never refuses an event (the log has it). The entry is
 * sent now, or queued behind those waiting for journald's queue to have
 * room, or lost (counted, said once). */
static int send_event(void *ctx, const struct event *ev, struct werr *e)
{
	(void)e;
	struct journald *j = ctx;
	j->buf.off = j->buf.len = 0;
	journald_encode(&j->buf, ev, audit_last_line_prev(j->log), audit_last_line_hash(j->log));
	dgram_send(j->d, j->buf.p + j->buf.off, bytebuf_pending(&j->buf), ev->seq, ev->kind);
	return 0;
}

void journald_attach(struct journald *j, struct audit *a)
{
	j->log = a;
	audit_subscribe(a, send_event, j);
}

void journald_flush(struct journald *j, int timeout_ms)
{
	dgram_flush(j->d, timeout_ms);
}

void journald_end(struct journald *j)
{
	dgram_end(j->d, JOURNALD_END_WAIT_MS);
}

json_t *journald_stats(const struct journald *j)
{
	return dgram_stats(j->d);
}

unsigned long journald_dropped(const struct journald *j)
{
	return dgram_dropped(j->d);
}

void journald_free(struct journald *j)
{
	if (!j)
		return;
	dgram_free(j->d, JOURNALD_END_WAIT_MS);
	bytebuf_free(&j->buf);
	free(j);
}

void journald_freep(struct journald **j)
{
	journald_free(*j);
}
