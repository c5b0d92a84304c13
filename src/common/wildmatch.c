/* wildmatch.c - git's wildmatch with WM_PATHNAME (wildmatch.h), by
 * backtracking, bounded in steps. */
#include "wildmatch.h"

#include <fnmatch.h>
#include <string.h>

#define MATCH_STEPS_MAX 100000

static bool same(char a, char b, bool icase)
{
	if (icase && a >= 'A' && a <= 'Z')
		a = (char)(a - 'A' + 'a');
	if (icase && b >= 'A' && b <= 'Z')
		b = (char)(b - 'A' + 'a');
	return a == b;
}

/* A bracket expression at p ("[...]"), for one character: its length in
 * *len, whether c is in it; false with *len 0 when it does not close (then
 * '[' is itself). */
static bool bracket(const char *p, char c, bool icase, size_t *len)
{
	size_t i = 1;
	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')
		i++;
	while (p[i] && p[i] != ']') {
		const char *cls_end = p[i] == '[' && p[i + 1] == ':' ? strstr(p + i + 2, ":]") : NULL;
		i = cls_end ? (size_t)(cls_end - p) + 2 : i + 1; /* "[:alpha:]" whole */
	}
	*len = 0;
	if (!p[i])
		return false;
	*len = i + 1;
	char cls[256], s[2] = { c, '\0' };
	if (*len >= sizeof cls)
		return false;
	memcpy(cls, p, *len);
	cls[*len] = '\0';
	if (cls[1] == '^')
		cls[1] = '!';
	return c != '/' && fnmatch(cls, s, FNM_PATHNAME | (icase ? FNM_CASEFOLD : 0)) == 0;
}

/* A match's pattern (where it starts: "**" is special only after a '/'
 * or there), its case, and the steps it has taken. */
struct wmctx {
	const char *p0;
	bool icase;
	unsigned steps;
};

static bool wm(const char *p, const char *t, struct wmctx *c);

/* p at a "**" between slashes (or at an end of the pattern): the rest of
 * the text t matched across them. */
static bool wm_stars(const char *p, const char *t, struct wmctx *c)
{
	p += 2;
	if (!*p)
		return true; /* "**" at the end: all that is left */
	/* "**" "/": no directory, or any number of them */
	for (const char *s = t;; s++) {
		if ((s == t || s[-1] == '/') && wm(p + 1, s, c))
			return true;
		if (!*s)
			return false;
	}
}

static bool wm(const char *p, const char *t, struct wmctx *c)
{
	for (; *p; p++, t++) {
		if (++c->steps > MATCH_STEPS_MAX)
			return false;
		if (p[0] == '*' && p[1] == '*' && (p == c->p0 || p[-1] == '/') &&
		    (p[2] == '\0' || p[2] == '/'))
			return wm_stars(p, t, c);
		if (*p == '*') {
			for (const char *s = t;; s++) { /* within one component */
				if (wm(p + 1, s, c))
					return true;
				if (!*s || *s == '/')
					return false;
			}
		}
		if (!*t)
			return false;
		size_t len = 0; /* a bracket expression's, when it closes */
		bool in = *p == '[' && bracket(p, *t, c->icase, &len);
		if (*p == '?') {
			if (*t == '/')
				return false;
		} else if (len) {
			if (!in)
				return false;
			p += len - 1;
		} else {
			if (*p == '\\' && p[1])
				p++;
			if (!same(*p, *t, c->icase))
				return false;
		}
	}
	return !*t;
}

bool wildmatch(const char *pattern, const char *text, bool icase)
{
	struct wmctx c = { .p0 = pattern, .icase = icase };
	return wm(pattern, text, &c);
}
