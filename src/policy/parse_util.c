/* parse_util.c - the checks every directive's handler shares (parse.h):
 * the error that names FILE:LINE:COL, the note that names FILE:LINE, the
 * token count, the room left in a list, a path expanded against the home.
 * A leaf: it calls nothing else of the parser. */
#include "parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 5, 6)))
int pol_lerr(struct werr *e, int errnum, const struct line *l, size_t off,
		const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return werr_set(e, errnum, "%s:%lu:%zu: %s", l->name, l->lineno, off + 1, msg);
}

__attribute__((format(printf, 3, 4)))
void pol_note(struct parser *ps, const struct line *l, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (ps->p->notes.n < MAX_ENTRIES)
		strv_push_owned(&ps->p->notes, xasprintf("%s:%lu: %s", l->name, l->lineno, msg));
}

/* Valid UTF-8 without control characters. */
static bool is_clean(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return utf8_invalid_at((const unsigned char *)s, n) == n;
}

bool pol_has_dotdot_component(const char *s)
{
	for (const char *p = s; *p;) {
		const char *end = strchrnul(p, '/');
		if (end - p == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

void pol_strip_trailing_slashes(char *s, size_t keep)
{
	size_t n = strlen(s);
	while (n > keep && s[n - 1] == '/')
		s[--n] = '\0';
}

/* Exactly `want` tokens, the directive included. */
int pol_want_tokens(struct parser *ps, const struct line *l, size_t want, const char *what)
{
	if (l->ntok < want)
		return pol_lerr(ps->e, 0, l, l->len, "%s: missing argument", what);
	if (l->ntok > want)
		return pol_lerr(ps->e, 0, l, l->off[want], "%s: unexpected argument '%.200s'", what,
				l->tok[want]);
	return 0;
}

int pol_room(struct parser *ps, const struct line *l, size_t n)
{
	if (n >= MAX_ENTRIES)
		return pol_lerr(ps->e, 0, l, l->off[0], "%s: too many entries (max %d)", l->tok[0],
				MAX_ENTRIES);
	return 0;
}

int pol_push_unique(struct parser *ps, const struct line *l, struct strv *s, const char *v)
{
	if (strv_contains(s, v))
		return 0;
	if (pol_room(ps, l, s->n) < 0)
		return -1;
	strv_push(s, v);
	return 0;
}

/* The absolute, normalised path a directive names at token `off`: "/..."
 * or "~" / "~/..." expanded against the home. *out malloc'd. */
int pol_expand_path(struct parser *ps, const struct line *l, size_t off, const char *d,
		       const char *t, char **out)
{
	bool tilde = strcmp(t, "~") == 0 || strncmp(t, "~/", 2) == 0;
	if (!tilde && t[0] != '/')
		return pol_lerr(ps->e, 0, l, off, "%s: path must be absolute or start with ~/: '%.200s'", d, t);
	_cleanup_free_ char *rest = xstrdup(tilde ? t + 1 : t);
	pol_strip_trailing_slashes(rest, tilde ? 0 : 1);
	if (path_has_dot_components(rest))
		return pol_lerr(ps->e, 0, l, off, "%s: '.', '..' and empty components are not allowed: '%.200s'",
				d, t);
	if (!tilde) {
		*out = steal_ptr(&rest);
		return 0;
	}
	if (!ps->home)
		return pol_lerr(ps->e, 0, l, off, "%s: '~' used but no home directory is known", d);
	_cleanup_free_ char *h = xstrdup(ps->home);
	pol_strip_trailing_slashes(h, 1);
	if (h[0] != '/' || path_has_dot_components(h) || !is_clean(h))
		return pol_lerr(ps->e, 0, l, off, "%s: the home directory '%.200s' is not an absolute normalised path",
				d, h);
	*out = strcmp(h, "/") == 0 ? xstrdup(rest[0] ? rest : "/") : xasprintf("%s%s", h, rest);
	return 0;
}

/* The words of a line from token `from` on, joined by one space (into
 * out); false when there are none. */
bool pol_rest_of_line(const struct line *l, size_t from, char *out, size_t len)
{
	out[0] = '\0';
	size_t n = 0;
	for (size_t i = from; i < l->ntok; i++) {
		int k = snprintf(out + n, len - n, "%s%s", n ? " " : "", l->tok[i]);
		if (k < 0 || (size_t)k >= len - n)
			return false;
		n += (size_t)k;
	}
	return n > 0;
}

