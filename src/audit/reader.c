/* reader.c - reading session audit logs: the log directory and its sessions,
 * a line reader that can follow a growing file, event parsing, the hash
 * chain verifier, filters, and display-safe one-line summaries. */
#include "reader.h"
#include "../common/hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char zeros[65] = "0000000000000000000000000000000000000000000000000000000000000000";

/* ---- a small growable string --------------------------------------------- */

struct sbuf {
	char *p;
	size_t n, cap;
};

static void sb_put(struct sbuf *b, const char *s, size_t len)
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

static void sb_puts(struct sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static char *sb_take(struct sbuf *b)
{
	if (!b->p)
		return xstrdup("");
	return b->p;
}

/* ---- session ids and times ------------------------------------------------ */

bool audit_session_id_valid(const char *s)
{
	if (!s)
		return false;
	size_t n = strlen(s);
	if (n == 0 || n > 200 || s[0] == '.')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* n decimal digits at s (stops at the NUL: it is not a digit). */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int month_days(int y, int m)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return m == 2 && leap(y) ? 29 : d[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int make_time(int Y, int M, int D, int h, int m, int s, long nsec, struct audit_time *t)
{
	if (Y < 1 || M < 1 || M > 12 || D < 1 || D > month_days(Y, M) || h > 23 || m > 59 || s > 59)
		return -1;
	t->sec = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + s;
	t->nsec = nsec;
	return 0;
}

/* ".F{1,9}" at *p (if there): the fraction as nanoseconds. */
static int fraction(const char **p, long *nsec)
{
	*nsec = 0;
	if (**p != '.')
		return 0;
	const char *s = *p + 1;
	int n = 0;
	long v = 0;
	while (s[n] >= '0' && s[n] <= '9') {
		if (n == 9)
			return -1;
		v = v * 10 + (s[n] - '0');
		n++;
	}
	if (n == 0)
		return -1;
	for (int i = n; i < 9; i++)
		v *= 10;
	*nsec = v;
	*p = s + n;
	return 0;
}

/* "YYYY-MM-DD", then 'T' (or ' ') and "HH:MM", then ":SS" and a fraction,
 * then 'Z'. `strict`: all of it, with 'T' and 'Z' (the log's own format);
 * otherwise the time, seconds and 'Z' are optional. */
static int parse_datetime(const char *s, bool strict, struct audit_time *t)
{
	int Y, M, D, h = 0, m = 0, sec = 0;
	long nsec = 0;
	if (!digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
	    !digits(s + 8, 2, &D))
		return -1;
	const char *p = s + 10;
	if (*p == 'T' || (!strict && *p == ' ' && p[1])) {
		if (!digits(p + 1, 2, &h) || p[3] != ':' || !digits(p + 4, 2, &m))
			return -1;
		p += 6;
		if (*p == ':') {
			if (!digits(p + 1, 2, &sec))
				return -1;
			p += 3;
			if (fraction(&p, &nsec) < 0)
				return -1;
		} else if (strict) {
			return -1;
		}
	} else if (strict) {
		return -1;
	}
	if (*p == 'Z')
		p++;
	else if (strict)
		return -1;
	if (*p)
		return -1;
	return make_time(Y, M, D, h, m, sec, nsec, t);
}

int audit_parse_ts(const char *s, struct audit_time *t)
{
	return s ? parse_datetime(s, true, t) : -1;
}

int audit_parse_time_arg(const char *s, const struct audit_time *now, struct audit_time *t)
{
	if (!s || !*s)
		return -1;
	if (strcmp(s, "now") == 0) {
		*t = *now;
		return 0;
	}
	const char *p = s[0] == '@' || s[0] == '-' ? s + 1 : s;
	int64_t v = 0;
	int n = 0;
	while (p[n] >= '0' && p[n] <= '9') {
		if (n == 12)
			return -1;
		v = v * 10 + (p[n] - '0');
		n++;
	}
	if (n > 0 && s[0] == '@') {
		const char *q = p + n;
		long nsec;
		if (fraction(&q, &nsec) < 0 || *q)
			return -1;
		t->sec = v;
		t->nsec = nsec;
		return 0;
	}
	if (n > 0 && p[n] && !p[n + 1] && strchr("smhd", p[n])) {
		int64_t mult = p[n] == 's' ? 1 : p[n] == 'm' ? 60 : p[n] == 'h' ? 3600 : 86400;
		t->sec = now->sec - v * mult;
		t->nsec = now->nsec;
		return 0;
	}
	if (s[0] == '-' || s[0] == '@')
		return -1;
	return parse_datetime(s, false, t);
}

int audit_time_cmp(const struct audit_time *a, const struct audit_time *b)
{
	if (a->sec != b->sec)
		return a->sec < b->sec ? -1 : 1;
	if (a->nsec != b->nsec)
		return a->nsec < b->nsec ? -1 : 1;
	return 0;
}

void audit_format_time(const struct audit_time *t, char *buf, size_t len)
{
	time_t sec = (time_t)t->sec;
	struct tm tm;
	char base[64];
	if (!gmtime_r(&sec, &tm) || !strftime(base, sizeof base, "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(buf, len, "@%lld", (long long)t->sec);
		return;
	}
	snprintf(buf, len, "%s.%03ld", base, t->nsec / 1000000);
}

/* ---- display-safe strings ------------------------------------------------- */

/* Code points that must not reach a terminal raw: C1 controls, bidi
 * controls and invisible format characters, line/paragraph separators. */
static bool dangerous_cp(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0xad || cp == 0x61c || cp == 0x180e ||
	       (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);
}

/* Decode one UTF-8 sequence at s; returns its length (0: invalid). */
static size_t utf8_decode(const unsigned char *s, unsigned *cp)
{
	unsigned c = s[0];
	size_t n;
	unsigned v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

static char *display(const char *str, size_t max, bool may_quote)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	struct sbuf b = { 0 };
	bool quote = !*s;
	size_t shown = 0;
	sb_put(&b, "", 0);
	for (size_t i = 0; s[i];) {
		if (shown == max) {
			sb_puts(&b, "...");
			break;
		}
		unsigned cp;
		size_t n = utf8_decode(s + i, &cp);
		char esc[16];
		if (n == 0) {
			snprintf(esc, sizeof esc, "\\x%02x", s[i]);
			sb_puts(&b, esc);
			quote = true;
			n = 1;
		} else if (cp == '\n' || cp == '\t' || cp == '\r') {
			sb_puts(&b, cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : "\\r");
			quote = true;
		} else if (cp < 0x20 || cp == 0x7f) {
			snprintf(esc, sizeof esc, "\\x%02x", cp);
			sb_puts(&b, esc);
			quote = true;
		} else if (dangerous_cp(cp)) {
			snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
			sb_puts(&b, esc);
			quote = true;
		} else if (cp == '"' || cp == '\\') {
			sb_puts(&b, cp == '"' ? "\\\"" : "\\\\");
			quote = true;
		} else {
			if (cp < 0x80 && strchr(" '=[]{}#;$`|&<>()*?!~", (int)cp))
				quote = true;
			sb_put(&b, (const char *)s + i, n);
		}
		i += n;
		shown++;
	}
	if (!quote || !may_quote)
		return sb_take(&b);
	struct sbuf q = { 0 };
	sb_puts(&q, "\"");
	sb_puts(&q, b.p);
	sb_puts(&q, "\"");
	free(b.p);
	return sb_take(&q);
}

char *audit_display_string(const char *s, size_t max)
{
	return display(s, max, true);
}

#define DISPLAY_STR_MAX 160
#define DISPLAY_ITEMS_MAX 64

char *audit_display_argv(json_t *argv)
{
	struct sbuf b = { 0 };
	sb_put(&b, "", 0);
	size_t i;
	json_t *v;
	json_array_foreach(argv, i, v) {
		if (i == DISPLAY_ITEMS_MAX) {
			sb_printf(&b, " ...(%zu more)", json_array_size(argv) - i);
			break;
		}
		if (i)
			sb_puts(&b, " ");
		if (json_is_string(v)) {
			char *s = audit_display_string(json_string_value(v), DISPLAY_STR_MAX);
			sb_puts(&b, s);
			free(s);
		} else {
			sb_puts(&b, "?");
		}
	}
	return sb_take(&b);
}

static void put_value(struct sbuf *b, json_t *v, int depth)
{
	switch (json_typeof(v)) {
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = strlen(s);
		char *d;
		if (n == 64 && strspn(s, "0123456789abcdef") == 64)
			d = audit_display_string(s, 16); /* a digest: its head is enough here */
		else
			d = audit_display_string(s, DISPLAY_STR_MAX);
		sb_puts(b, d);
		free(d);
		break;
	}
	case JSON_INTEGER:
		sb_printf(b, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL: {
		char tmp[64];
		snprintf(tmp, sizeof tmp, "%.3f", json_real_value(v));
		if (strchr(tmp, '.') && !strpbrk(tmp, "eni")) {
			size_t n = strlen(tmp);
			while (tmp[n - 1] == '0')
				tmp[--n] = '\0';
			if (tmp[n - 1] == '.')
				tmp[--n] = '\0';
		}
		sb_puts(b, tmp);
		break;
	}
	case JSON_TRUE: sb_puts(b, "true"); break;
	case JSON_FALSE: sb_puts(b, "false"); break;
	case JSON_NULL: sb_puts(b, "null"); break;
	case JSON_ARRAY: {
		if (depth > 3) {
			sb_puts(b, "[...]");
			break;
		}
		sb_puts(b, "[");
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			if (i == DISPLAY_ITEMS_MAX) {
				sb_printf(b, " ...(%zu more)", json_array_size(v) - i);
				break;
			}
			if (i)
				sb_puts(b, " ");
			put_value(b, x, depth + 1);
		}
		sb_puts(b, "]");
		break;
	}
	case JSON_OBJECT: {
		if (depth > 3) {
			sb_puts(b, "{...}");
			break;
		}
		sb_puts(b, "{");
		const char *k;
		json_t *x;
		size_t i = 0;
		json_object_foreach(v, k, x) {
			if (i == DISPLAY_ITEMS_MAX) {
				sb_printf(b, " ...(%zu more)", json_object_size(v) - i);
				break;
			}
			if (i++)
				sb_puts(b, " ");
			char *dk = audit_display_string(k, 64);
			sb_puts(b, dk);
			free(dk);
			sb_puts(b, "=");
			put_value(b, x, depth + 1);
		}
		sb_puts(b, "}");
		break;
	}
	}
}

/* Per kind: the fields shown first, and fields too noisy for one line. */
static const struct {
	const char *event;
	const char *first[6];
	const char *hide[5];
} layouts[] = {
	{ "session.start", { "argv", "workspace", "profiles" }, { "version", "policy_digest", "kernel", "uid" } },
	{ "session.end", { "exit", "duration_ms", "error", "counts" }, { 0 } },
	{ "exec", { "decision", "pid", "ppid", "argv", "path" }, { 0 } },
	{ "file", { "decision", "pid", "op", "path" }, { 0 } },
	{ "net", { "decision", "host", "port", "method", "status" }, { 0 } },
	{ "syscall", { "decision", "pid", "name" }, { 0 } },
	{ "approval", { "decision", "by" }, { 0 } },
	{ "alert", { "rule", "path" }, { 0 } },
};

static const char *const header_keys[] = { "v", "ts", "session", "seq", "event", "prev" };

static bool in_list(const char *const *list, size_t n, const char *k)
{
	for (size_t i = 0; i < n && list[i]; i++)
		if (strcmp(list[i], k) == 0)
			return true;
	return false;
}

static void put_field(struct sbuf *b, const char *k, json_t *v)
{
	if (b->n)
		sb_puts(b, " ");
	char *dk = audit_display_string(k, 64);
	sb_puts(b, dk);
	free(dk);
	sb_puts(b, "=");
	put_value(b, v, 0);
}

char *audit_event_summary(json_t *ev)
{
	struct sbuf b = { 0 };
	if (!json_is_object(ev))
		return xstrdup("");
	const char *kind = json_string_value(json_object_get(ev, "event"));
	const char *const *first = NULL, *const *hide = NULL;
	size_t nfirst = 0, nhide = 0;
	for (size_t i = 0; kind && i < ARRAY_LEN(layouts); i++) {
		if (strcmp(layouts[i].event, kind) == 0) {
			first = layouts[i].first;
			nfirst = ARRAY_LEN(layouts[i].first);
			hide = layouts[i].hide;
			nhide = ARRAY_LEN(layouts[i].hide);
		}
	}
	for (size_t i = 0; i < nfirst && first[i]; i++) {
		json_t *v = json_object_get(ev, first[i]);
		if (v)
			put_field(&b, first[i], v);
	}
	const char *k;
	json_t *v;
	json_object_foreach(ev, k, v) {
		if (in_list(header_keys, ARRAY_LEN(header_keys), k) || in_list(first, nfirst, k) ||
		    in_list(hide, nhide, k))
			continue;
		put_field(&b, k, v);
	}
	return sb_take(&b);
}

/* ---- the log directory ---------------------------------------------------- */

int audit_dir_open(const char *dir, struct werr *e)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int err = errno;
	struct stat st;
	if (err == ENOENT)
		return werr_set(e, ENOENT, "no sessions: cannot open the audit log directory %s", dir);
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
		return werr_set(e, 0, "audit log directory %s is a symbolic link, refusing to read it", dir);
	return werr_set(e, err, "cannot open audit log directory %s", dir);
}

int audit_log_open(int dfd, const char *dir, const char *id, struct werr *e)
{
	if (!audit_session_id_valid(id))
		return werr_set(e, 0, "invalid session id");
	_cleanup_free_ char *name = xasprintf("%s.jsonl", id);
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			return werr_set(e, 0, "%s/%s is a symbolic link, refusing to read it", dir, name);
		if (errno == ENOENT)
			return werr_set(e, 0, "no session %s in %s", id, dir);
		return werr_errno(e, "cannot open %s/%s", dir, name);
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int err = errno;
		close(fd);
		return werr_set(e, err, "cannot stat %s/%s", dir, name);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return werr_set(e, 0, "%s/%s is not a regular file, refusing to read it", dir, name);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

/* The id of a directory entry that names a session log, or NULL. */
static char *entry_id(int dfd, const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	if (n <= 6 || strcmp(d->d_name + n - 6, ".jsonl") != 0)
		return NULL;
	if (d->d_type == DT_LNK)
		return NULL;
	if (d->d_type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			return NULL;
	} else if (d->d_type != DT_REG) {
		return NULL;
	}
	char *id = xasprintf("%.*s", (int)(n - 6), d->d_name);
	if (!audit_session_id_valid(id)) {
		free(id);
		return NULL;
	}
	return id;
}

/* Every session id in the directory (unsorted). */
static int scan_ids(int dfd, const char *dir, struct strv *ids, struct werr *e)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return werr_errno(e, "cannot read audit log directory %s", dir);
	}
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		char *id = entry_id(dfd, de);
		if (id)
			strv_push_owned(ids, id);
		errno = 0;
	}
	int err = errno;
	closedir(d);
	if (err)
		return werr_set(e, err, "cannot read audit log directory %s", dir);
	return 0;
}

/* The last complete line of the file, parsed (NULL if none parses). */
static json_t *last_event(int fd, off_t size)
{
	size_t window = 65536;
	for (;;) {
		off_t off = size > (off_t)window ? size - (off_t)window : 0;
		size_t n = (size_t)(size - off);
		char *buf = xmalloc(n + 1);
		ssize_t got = pread(fd, buf, n, off);
		if (got <= 0) {
			free(buf);
			return NULL;
		}
		n = (size_t)got;
		/* the end of the last complete line */
		size_t end = n;
		while (end > 0 && buf[end - 1] != '\n')
			end--;
		if (end == 0) {
			free(buf);
			if (off == 0 || window >= 2 * (size_t)AUDIT_LINE_MAX)
				return NULL;
			window *= 2;
			continue;
		}
		end--; /* on the newline */
		size_t start = end;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (start == 0 && off > 0 && window < 2 * (size_t)AUDIT_LINE_MAX) {
			free(buf);
			window *= 2;
			continue;
		}
		char why[8];
		json_t *ev = audit_parse_line(buf + start, end - start, why, sizeof why);
		free(buf);
		return ev;
	}
}

static unsigned long count_lines(int fd)
{
	char buf[65536];
	unsigned long n = 0;
	off_t off = 0;
	ssize_t got;
	while ((got = pread(fd, buf, sizeof buf, off)) > 0) {
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
		off += got;
	}
	return n;
}

/* "20261121T123456Z-..." : the time in the id, for logs without a start. */
static bool id_time(const char *id, struct audit_time *t)
{
	int Y, M, D, h, m, s;
	if (!digits(id, 4, &Y) || !digits(id + 4, 2, &M) || !digits(id + 6, 2, &D) || id[8] != 'T' ||
	    !digits(id + 9, 2, &h) || !digits(id + 11, 2, &m) || !digits(id + 13, 2, &s) || id[15] != 'Z')
		return false;
	return make_time(Y, M, D, h, m, s, 0, t) == 0;
}

static void session_info(int dfd, const char *dir, struct audit_session_info *si)
{
	struct werr e;
	_cleanup_close_ int fd = audit_log_open(dfd, dir, si->id, &e);
	if (fd >= 0) {
		struct audit_reader r;
		struct audit_line l;
		audit_reader_init(&r, fd);
		if (audit_reader_next(&r, &l, false, &e) == 1 && l.complete) {
			char why[8];
			json_t *ev = audit_parse_line(l.text, l.len, why, sizeof why);
			if (ev && audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &si->t) == 0)
				si->has_time = true;
			if (ev && strcmp(json_string_value(json_object_get(ev, "event")), "session.start") == 0)
				si->start = ev;
			else
				json_decref(ev);
		}
		audit_reader_free(&r);
		struct stat st;
		json_t *last = fstat(fd, &st) == 0 ? last_event(fd, st.st_size) : NULL;
		if (last) {
			si->events = (unsigned long)json_integer_value(json_object_get(last, "seq"));
			if (strcmp(json_string_value(json_object_get(last, "event")), "session.end") == 0)
				si->end = json_incref(last);
			json_decref(last);
		} else {
			si->events = count_lines(fd);
		}
	}
	if (!si->has_time && id_time(si->id, &si->t))
		si->has_time = true;
}

static int by_time(const void *pa, const void *pb)
{
	const struct audit_session_info *a = pa, *b = pb;
	int c = audit_time_cmp(&a->t, &b->t);
	return c ? c : strcmp(a->id, b->id);
}

int audit_list_sessions(int dfd, const char *dir, struct audit_session_info **out, size_t *n,
			struct werr *e)
{
	struct strv ids = { 0 };
	*out = NULL;
	*n = 0;
	if (scan_ids(dfd, dir, &ids, e) < 0) {
		strv_free(&ids);
		return -1;
	}
	struct audit_session_info *s = xcalloc(ids.n + 1, sizeof *s);
	for (size_t i = 0; i < ids.n; i++) {
		s[i].id = ids.v[i];
		ids.v[i] = NULL;
		session_info(dfd, dir, &s[i]);
	}
	qsort(s, ids.n, sizeof *s, by_time);
	*out = s;
	*n = ids.n;
	strv_free(&ids);
	return 0;
}

void audit_sessions_free(struct audit_session_info *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].id);
		json_decref(s[i].start);
		json_decref(s[i].end);
	}
	free(s);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int audit_resolve_session(int dfd, const char *dir, const char *arg, char **id, struct werr *e)
{
	*id = NULL;
	if (!arg) {
		struct audit_session_info *s;
		size_t n;
		if (audit_list_sessions(dfd, dir, &s, &n, e) < 0)
			return -1;
		if (n == 0) {
			audit_sessions_free(s, n);
			return werr_set(e, 0, "no sessions in %s", dir);
		}
		*id = s[n - 1].id;
		s[n - 1].id = NULL;
		audit_sessions_free(s, n);
		return 0;
	}
	if (!audit_session_id_valid(arg)) {
		char *d = audit_display_string(arg, 80);
		werr_set(e, 0, "invalid session id %s: a session id is letters, digits, '.', '_' and '-' (not starting with '.'), never a path", d);
		free(d);
		return -1;
	}
	_cleanup_free_ char *name = xasprintf("%s.jsonl", arg);
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		*id = xstrdup(arg);
		return 0;
	}
	struct strv ids = { 0 }, hits = { 0 };
	if (scan_ids(dfd, dir, &ids, e) < 0) {
		strv_free(&ids);
		return -1;
	}
	size_t al = strlen(arg);
	for (size_t i = 0; i < ids.n; i++)
		if (strncmp(ids.v[i], arg, al) == 0)
			strv_push(&hits, ids.v[i]);
	strv_free(&ids);
	int r = 0;
	if (hits.n == 1) {
		*id = xstrdup(hits.v[0]);
	} else if (hits.n == 0) {
		r = werr_set(e, 0, "no session %s in %s", arg, dir);
	} else {
		qsort(hits.v, hits.n, sizeof *hits.v, by_name);
		struct sbuf b = { 0 };
		for (size_t i = 0; i < hits.n && i < 5; i++) {
			sb_puts(&b, i ? ", " : "");
			sb_puts(&b, hits.v[i]);
		}
		if (hits.n > 5)
			sb_printf(&b, " and %zu more", hits.n - 5);
		r = werr_set(e, 0, "session prefix %s is ambiguous: it matches %s", arg, b.p);
		free(b.p);
	}
	strv_free(&hits);
	return r;
}

/* ---- lines ----------------------------------------------------------------- */

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
		char *base = r->buf + r->start;
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

/* ---- events and the chain ------------------------------------------------------ */

static bool is_hex64(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

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
		char *d = display(je.text, 120, false);
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
	else if (!is_hex64(json_string_value(json_object_get(o, "prev"))))
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
	memcpy(c->last_hash, zeros, sizeof zeros);
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
			    seq > (json_int_t)n ? " (a line before it was removed)"
						: " (a line was repeated or inserted before it)");
		goto out;
	}
	struct audit_time ts;
	audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &ts);
	if (n == 1) {
		if (strcmp(prev, zeros) != 0) {
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
	c->ended = strcmp(json_string_value(json_object_get(ev, "event")), "session.end") == 0;
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

/* ---- filters ------------------------------------------------------------------- */

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
