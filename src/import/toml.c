/* toml.c - the strict TOML subset reader of toml.h: text into a jansson
 * object, or an error naming NAME:LINE:COL. No TOML library is packaged
 * for C in Debian 12, and warden needs only what Codex's config.toml holds.
 * Recursion is bounded by TOML_MAX_DEPTH; the caller bounds the size. */
#include "toml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sbuf.h"
#include "../common/util.h"

struct tp {
	const char *p, *end, *bol; /* position, end, beginning of the line */
	unsigned long line;
	const char *name;
	struct werr *e;
	struct strv headers;       /* table headers seen, parts joined by '\x1f' */
};

__attribute__((format(printf, 2, 3)))
static int perr(struct tp *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return werr_set(t->e, 0, "%s:%lu:%lu: %s", t->name, t->line,
			(unsigned long)(t->p - t->bol) + 1, msg);
}

static bool at_end(const struct tp *t) { return t->p >= t->end; }
static int peek(const struct tp *t) { return at_end(t) ? -1 : (unsigned char)*t->p; }
static bool looking_at(const struct tp *t, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(t->end - t->p) >= n && memcmp(t->p, s, n) == 0;
}

static void skip_blanks(struct tp *t)
{
	while (peek(t) == ' ' || peek(t) == '\t')
		t->p++;
}

/* A newline at p ("\n" or "\r\n"): consumed, true. */
static bool eat_newline(struct tp *t)
{
	if (looking_at(t, "\r\n"))
		t->p++;
	if (peek(t) != '\n')
		return false;
	t->p++;
	t->line++;
	t->bol = t->p;
	return true;
}

static void skip_comment(struct tp *t)
{
	if (peek(t) == '#')
		while (!at_end(t) && *t->p != '\n' && !looking_at(t, "\r\n"))
			t->p++;
}

/* Blanks, comments and newlines (inside arrays). */
static void skip_space(struct tp *t)
{
	for (;;) {
		skip_blanks(t);
		skip_comment(t);
		if (!eat_newline(t))
			return;
	}
}

/* The rest of a line after a key/value pair or a header. */
static int end_of_line(struct tp *t)
{
	skip_blanks(t);
	skip_comment(t);
	if (at_end(t) || eat_newline(t))
		return 0;
	return perr(t, "expected the end of the line, found '%c'", *t->p);
}

static void put_utf8(struct sbuf *b, unsigned long c)
{
	char u[4];
	size_t n;
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (c >> 18));
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	sb_put(b, u, n);
}

/* An escape after '\' in a basic string into b. */
static int escape(struct tp *t, struct sbuf *b)
{
	int c = peek(t);
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	const char *k = c > 0 ? strchr(from, c) : NULL;
	if (k) {
		sb_put(b, &to[k - from], 1);
		t->p++;
		return 0;
	}
	if (c != 'u' && c != 'U')
		return perr(t, "unknown escape '\\%c' in a string", c < 0 ? ' ' : c);
	size_t n = c == 'u' ? 4 : 8;
	t->p++;
	unsigned long v = 0;
	for (size_t i = 0; i < n; i++) {
		int d = at_end(t) ? -1 : hex_digit((unsigned char)*t->p);
		if (d < 0)
			return perr(t, "\\%c needs %zu hex digits", c, n);
		v = v * 16 + (unsigned long)d;
		t->p++;
	}
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v == 0)
		return perr(t, "\\%c%0*lX is not a character warden reads", c, (int)n, v);
	put_utf8(b, v);
	return 0;
}

/* The closing quote(s) of a string at p: one quote, or three and up to two
 * more that end the content. */
static int string_close(struct tp *t, char q, bool multi, struct sbuf *b)
{
	if (!multi) {
		t->p++;
		return 0;
	}
	size_t n = 0;
	while (t->p + n < t->end && t->p[n] == q)
		n++;
	if (n > 5)
		return perr(t, "too many quotes closing a string");
	sb_put(b, t->p, n - 3); /* up to two quotes end the content */
	t->p += n;
	return 0;
}

/* In a multi-line basic string, after a backslash: a line-ending backslash
 * trims the whitespace after it, newlines included (true, p past it);
 * false when this one is not (an escape follows). */
static bool line_ending_backslash(struct tp *t)
{
	const char *s = t->p;
	while (s < t->end && (*s == ' ' || *s == '\t'))
		s++;
	if (!(s < t->end && (*s == '\n' || (*s == '\r' && s + 1 < t->end && s[1] == '\n'))))
		return false;
	t->p = s;
	while (eat_newline(t) || peek(t) == ' ' || peek(t) == '\t')
		if (peek(t) == ' ' || peek(t) == '\t')
			t->p++;
	return true;
}

/* A string at p (quote included): basic or literal, one line or
 * multi-line. */
static char *string(struct tp *t)
{
	char q = *t->p;
	bool multi = looking_at(t, q == '"' ? "\"\"\"" : "'''");
	t->p += multi ? 3 : 1;
	if (multi)
		eat_newline(t); /* a newline right after the opening is trimmed */
	struct sbuf b = { 0 };
	for (;;) {
		if (at_end(t)) {
			perr(t, "a string is not closed");
			goto fail;
		}
		char c = *t->p;
		if (c == q && (!multi || looking_at(t, q == '"' ? "\"\"\"" : "'''"))) {
			if (string_close(t, q, multi, &b) < 0)
				goto fail;
			break;
		}
		if (c == '\n' || looking_at(t, "\r\n")) {
			if (!multi) {
				perr(t, "a string is not closed on its line");
				goto fail;
			}
			sb_puts(&b, "\n");
			eat_newline(t);
			continue;
		}
		if ((unsigned char)c < 0x20 && c != '\t') {
			perr(t, "a control character (0x%02x) in a string", (unsigned)c);
			goto fail;
		}
		if (c == 0x7f) {
			perr(t, "a control character (0x7f) in a string");
			goto fail;
		}
		if (c == '\\' && q == '"') {
			t->p++;
			if ((!multi || !line_ending_backslash(t)) && escape(t, &b) < 0)
				goto fail;
			continue;
		}
		sb_put(&b, &c, 1);
		t->p++;
	}
	return sb_take(&b);
fail:
	free(b.p);
	return NULL;
}

static bool bare_key_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* A dotted key into parts. */
static int key(struct tp *t, struct strv *parts)
{
	for (;;) {
		skip_blanks(t);
		int c = peek(t);
		if (c == '"' || c == '\'') {
			if (looking_at(t, "\"\"\"") || looking_at(t, "'''"))
				return perr(t, "a multi-line string cannot be a key");
			char *s = string(t);
			if (!s)
				return -1;
			strv_push_owned(parts, s);
		} else if (bare_key_char(c)) {
			const char *s = t->p;
			while (bare_key_char(peek(t)))
				t->p++;
			char *k = xmalloc((size_t)(t->p - s) + 1);
			memcpy(k, s, (size_t)(t->p - s));
			k[t->p - s] = '\0';
			strv_push_owned(parts, k);
		} else {
			return perr(t, c < 0 ? "a key is missing" : "'%c' cannot start a key", c);
		}
		skip_blanks(t);
		if (peek(t) != '.')
			return 0;
		t->p++;
	}
}

static char *joined(const struct strv *parts, size_t n, char sep)
{
	struct sbuf b = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_put(&b, &sep, 1);
		sb_puts(&b, parts->v[i]);
	}
	return sb_take(&b);
}

/* The table the first n parts name under root, made where missing. */
static json_t *walk(struct tp *t, json_t *root, const struct strv *parts, size_t n)
{
	json_t *cur = root;
	for (size_t i = 0; i < n; i++) {
		json_t *next = json_object_get(cur, parts->v[i]);
		if (!next) {
			next = json_object();
			json_object_set_new(cur, parts->v[i], next);
		} else if (!json_is_object(next)) {
			_cleanup_free_ char *k = joined(parts, i + 1, '.');
			perr(t, "'%.200s' is a value already, not a table", k);
			return NULL;
		}
		cur = next;
	}
	return cur;
}

static json_t *value(struct tp *t, unsigned depth);

/* key = value into table. */
static int keyval(struct tp *t, json_t *table, unsigned depth)
{
	_cleanup_strv_ struct strv parts = { 0 };
	const char *start = t->p;
	if (key(t, &parts) < 0)
		return -1;
	if (peek(t) != '=') {
		t->p = t->p > start ? t->p : start;
		return perr(t, "expected '=' after the key");
	}
	t->p++;
	skip_blanks(t);
	json_t *tbl = walk(t, table, &parts, parts.n - 1);
	if (!tbl)
		return -1;
	const char *last = parts.v[parts.n - 1];
	if (json_object_get(tbl, last)) {
		_cleanup_free_ char *k = joined(&parts, parts.n, '.');
		return perr(t, "'%.200s' is defined twice", k);
	}
	json_t *v = value(t, depth + 1);
	if (!v)
		return -1;
	json_object_set_new(tbl, last, v);
	return 0;
}

static json_t *array(struct tp *t, unsigned depth)
{
	json_t *a = json_array();
	t->p++;
	for (;;) {
		skip_space(t);
		if (peek(t) == ']') {
			t->p++;
			return a;
		}
		json_t *v = value(t, depth + 1);
		if (!v)
			goto fail;
		json_array_append_new(a, v);
		skip_space(t);
		if (peek(t) == ',') {
			t->p++;
			continue;
		}
		if (peek(t) == ']') {
			t->p++;
			return a;
		}
		perr(t, at_end(t) ? "an array is not closed" : "expected ',' or ']' in an array");
		goto fail;
	}
fail:
	json_decref(a);
	return NULL;
}

static json_t *inline_table(struct tp *t, unsigned depth)
{
	json_t *o = json_object();
	t->p++;
	skip_blanks(t);
	if (peek(t) == '}') {
		t->p++;
		return o;
	}
	for (;;) {
		if (keyval(t, o, depth) < 0)
			goto fail;
		skip_blanks(t);
		if (peek(t) == ',') {
			t->p++;
			skip_blanks(t);
			continue;
		}
		if (peek(t) == '}') {
			t->p++;
			return o;
		}
		perr(t, "expected ',' or '}' in an inline table (which stays on one line)");
		goto fail;
	}
fail:
	json_decref(o);
	return NULL;
}

/* inf, nan, hexadecimal, octal and binary integers, dates and times: -1
 * with the error, else 0. */
static int number_form_refused(struct tp *t, const char *tok)
{
	const char *u = tok + (tok[0] == '+' || tok[0] == '-');
	if (strcmp(u, "inf") == 0 || strcmp(u, "nan") == 0)
		return perr(t, "inf and nan are not read");
	if (u[0] == '0' && (u[1] == 'x' || u[1] == 'o' || u[1] == 'b'))
		return perr(t, "hexadecimal, octal and binary integers are not read");
	if (strchr(u, ':') || (strchr(u + 1, '-') && !strpbrk(u, "eE")) || strchr(u, 'T') ||
	    strchr(u, 'Z'))
		return perr(t, "dates and times are not read ('%.60s')", tok);
	return 0;
}

/* tok into clean without its '_'s, each of which must stand between two
 * digits; a sign only first or after an exponent's e; *is_float when a '.'
 * or an exponent is there. false: not a number's characters. */
static bool number_clean(const char *tok, char *clean, bool *is_float)
{
	size_t k = 0;
	for (size_t i = 0; tok[i]; i++) {
		char c = tok[i];
		if (c == '_') {
			if (!i || !(tok[i - 1] >= '0' && tok[i - 1] <= '9') ||
			    !(tok[i + 1] >= '0' && tok[i + 1] <= '9'))
				return false;
			continue;
		}
		if (c == '.' || c == 'e' || c == 'E')
			*is_float = true;
		else if (!(c >= '0' && c <= '9') && !((c == '+' || c == '-') && (i == 0 || tok[i - 1] == 'e' || tok[i - 1] == 'E')))
			return false;
		clean[k++] = c;
	}
	clean[k] = '\0';
	return true;
}

/* An integer or a float; dates, times, other bases, inf and nan refused. */
static json_t *number(struct tp *t)
{
	const char *s = t->p;
	while (!at_end(t) && (bare_key_char(*t->p) || *t->p == '+' || *t->p == '.' || *t->p == ':'))
		t->p++;
	size_t n = (size_t)(t->p - s);
	char tok[128];
	if (n >= sizeof tok) {
		t->p = s;
		perr(t, "a number too long");
		return NULL;
	}
	memcpy(tok, s, n);
	tok[n] = '\0';
	t->p = s;
	if (number_form_refused(t, tok) < 0)
		return NULL;
	char clean[128];
	bool is_float = false;
	if (!number_clean(tok, clean, &is_float))
		goto bad;
	const char *d = clean + (clean[0] == '+' || clean[0] == '-');
	if (!(d[0] >= '0' && d[0] <= '9') || (d[0] == '0' && d[1] >= '0' && d[1] <= '9'))
		goto bad;
	char *end;
	errno = 0;
	if (is_float) {
		const char *dot = strchr(d, '.');
		if (dot && !(dot[1] >= '0' && dot[1] <= '9'))
			goto bad;
		double v = strtod(clean, &end);
		if (*end || errno)
			goto bad;
		t->p = s + n;
		return json_real(v);
	}
	long long v = strtoll(clean, &end, 10);
	if (*end || errno) {
		perr(t, "'%.60s' is not an integer warden can hold", tok);
		return NULL;
	}
	t->p = s + n;
	return json_integer(v);
bad:
	perr(t, "'%.60s' is not a value warden reads", tok);
	return NULL;
}

static json_t *value(struct tp *t, unsigned depth)
{
	if (depth > TOML_MAX_DEPTH) {
		perr(t, "values nested deeper than %d", TOML_MAX_DEPTH);
		return NULL;
	}
	int c = peek(t);
	if (c == '"' || c == '\'') {
		char *s = string(t);
		if (!s)
			return NULL;
		json_t *v = json_string(s);
		free(s);
		if (!v)
			perr(t, "a string that is not UTF-8");
		return v;
	}
	if (c == '[')
		return array(t, depth);
	if (c == '{')
		return inline_table(t, depth);
	if (looking_at(t, "true") && !bare_key_char(t->p + 4 < t->end ? t->p[4] : ' ')) {
		t->p += 4;
		return json_true();
	}
	if (looking_at(t, "false") && !bare_key_char(t->p + 5 < t->end ? t->p[5] : ' ')) {
		t->p += 5;
		return json_false();
	}
	if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'i' || c == 'n')
		return number(t);
	perr(t, c < 0 || c == '\n' || c == '\r' ? "a value is missing" : "'%c' cannot start a value", c);
	return NULL;
}

/* [a.b.c]: the table it names, made where missing; each once. */
static json_t *header(struct tp *t, json_t *root)
{
	if (looking_at(t, "[[")) {
		perr(t, "arrays of tables ([[...]]) are not read");
		return NULL;
	}
	t->p++;
	_cleanup_strv_ struct strv parts = { 0 };
	if (key(t, &parts) < 0)
		return NULL;
	if (peek(t) != ']') {
		perr(t, "expected ']' closing the table header");
		return NULL;
	}
	t->p++;
	_cleanup_free_ char *id = joined(&parts, parts.n, '\x1f');
	if (strv_contains(&t->headers, id)) {
		_cleanup_free_ char *k = joined(&parts, parts.n, '.');
		perr(t, "table [%.200s] is given twice", k);
		return NULL;
	}
	strv_push(&t->headers, id);
	json_t *tbl = walk(t, root, &parts, parts.n);
	if (tbl && end_of_line(t) < 0)
		return NULL;
	return tbl;
}

json_t *toml_parse(const char *text, size_t len, const char *name, struct werr *e)
{
	struct tp t = { .p = text, .end = text + len, .bol = text, .line = 1, .name = name, .e = e };
	const char *nul = memchr(text, '\0', len);
	size_t bad = utf8_invalid_at((const unsigned char *)text, len);
	if (nul || bad < len) {
		const char *at = nul && (size_t)(nul - text) < bad ? nul : text + bad;
		for (const char *s = text; s < at; s++)
			if (*s == '\n') {
				t.line++;
				t.bol = s + 1;
			}
		t.p = at;
		perr(&t, nul == at ? "a NUL byte" : "bytes that are not UTF-8");
		return NULL;
	}
	if (looking_at(&t, "\xef\xbb\xbf"))
		t.p += 3, t.bol = t.p;
	json_t *root = json_object(), *cur = root;
	for (;;) {
		skip_blanks(&t);
		skip_comment(&t);
		if (at_end(&t))
			break;
		if (eat_newline(&t))
			continue;
		if (peek(&t) == '[')
			cur = header(&t, root);
		else if (keyval(&t, cur, 0) < 0 || end_of_line(&t) < 0)
			cur = NULL;
		if (!cur) {
			json_decref(root);
			strv_free(&t.headers);
			return NULL;
		}
	}
	strv_free(&t.headers);
	return root;
}
