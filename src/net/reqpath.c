/* reqpath.c - a request's path read one way for method/path rules: the
 * normaliser shared by rules and requests, and the glob match (reqpath.h). */
#include "reqpath.h"

#include <string.h>

#include "../common/util.h"

/* Decode s[0..len) once into d (len bytes at most), refusing what two
 * readers would split differently. Returns the decoded length or -1. */
static long decode(const char *s, size_t len, bool glob, char *d, const char **why)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			int hi = i + 2 < len ? hex_digit((unsigned char)s[i + 1]) : -1;
			int lo = hi >= 0 ? hex_digit((unsigned char)s[i + 2]) : -1;
			if (hi < 0 || lo < 0) {
				*why = "bad percent-escape";
				return -1;
			}
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
			if (c == '/' || c == '.' || c == '\\') {
				*why = c == '/' ? "encoded slash (%2F)" : c == '.' ? "encoded dot (%2E)"
									: "encoded backslash (%5C)";
				return -1;
			}
		} else if (c == '\\') {
			*why = "backslash";
			return -1;
		} else if (glob && c == '?') {
			*why = "'?' (a query is not matched: write the path only)";
			return -1;
		}
		if (c < 0x20 || c == 0x7f) {
			*why = "control byte";
			return -1;
		}
		d[n++] = (char)c;
	}
	return (long)n;
}

/* What servers read two ways in a decoded path: a dot segment with a
 * parameter (`/..;/`, `/.;x/`: Tomcat and others drop the parameter and
 * climb), and an overlong UTF-8 form (0xC0 0xAE for '.', 0xE0 0x80 0xAF for
 * '/': never UTF-8, taken for the character by lenient decoders). NULL, or
 * why. */
static const char *split_two_ways(const char *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i], c1 = i + 1 < n ? (unsigned char)d[i + 1] : 0;
		if (c == 0xC0 || c == 0xC1 || (c == 0xE0 && c1 < 0xA0) || (c == 0xF0 && c1 < 0x90))
			return "an overlong UTF-8 form (%C0%AE: a dot or a slash to some servers)";
		if ((i == 0 || d[i - 1] == '/') && c == '.') {
			size_t k = i + 1 < n && d[i + 1] == '.' ? i + 2 : i + 1;
			if (k < n && d[k] == ';')
				return "a dot segment with a parameter (/..;/: a climb to some servers)";
		}
	}
	return NULL;
}

/* The decoded path d[0..n) into out: empty and "." segments dropped, ".."
 * taking the one before it away; '/' at the end of a path ending in '/',
 * "/." or "/..". Returns the length, or -1 when cap is too small. */
static long segments(const char *d, size_t n, char *out, size_t cap)
{
	size_t o = 0, i = 0;
	out[o++] = '/';
	while (i < n) {
		while (i < n && d[i] == '/')
			i++;
		size_t st = i;
		while (i < n && d[i] != '/')
			i++;
		size_t sl = i - st;
		if (sl == 0 || (sl == 1 && d[st] == '.'))
			continue;
		if (sl == 2 && d[st] == '.' && d[st + 1] == '.') {
			while (o > 1 && out[o - 1] != '/') /* back over "/segment" */
				o--;
			if (o > 1)
				o--;
			continue;
		}
		if (o + sl + 3 > cap)
			return -1;
		if (o > 1)
			out[o++] = '/';
		memcpy(out + o, d + st, sl);
		o += sl;
	}
	const char *last = memrchr(d, '/', n);
	size_t ll = n - (size_t)(last + 1 - d);
	bool dir = ll == 0 || (ll == 1 && d[n - 1] == '.') ||
		   (ll == 2 && d[n - 1] == '.' && d[n - 2] == '.');
	if (dir && o > 1)
		out[o++] = '/';
	out[o] = '\0';
	return (long)o;
}

int reqpath_normalise(const char *s, size_t len, bool glob, char *out, size_t cap,
		      const char **why)
{
	const char *q = glob ? NULL : memchr(s, '?', len);
	if (q)
		len = (size_t)(q - s);
	if (len == 0 || s[0] != '/') {
		*why = "does not start with '/'";
		return -1;
	}
	if (len >= REQPATH_MAX || cap < 2) {
		*why = "too long";
		return -1;
	}
	char d[REQPATH_MAX];
	long dn = decode(s, len, glob, d, why);
	if (dn < 0 || (*why = split_two_ways(d, (size_t)dn)))
		return -1;
	if (segments(d, (size_t)dn, out, cap) < 0) {
		*why = "too long";
		return -1;
	}
	return 0;
}

/* The glob as tokens: a byte, '*' (T_STAR) or '**' (T_DSTAR). */
enum { T_STAR = 256, T_DSTAR = 257 };

bool reqpath_match(const char *glob, const char *path)
{
	int tok[REQGLOB_MAX];
	size_t m = 0;
	for (size_t i = 0; glob[i] && m < REQGLOB_MAX; i++) {
		if (glob[i] == '*' && glob[i + 1] == '*') {
			while (glob[i + 1] == '*')
				i++;
			tok[m++] = T_DSTAR;
		} else {
			tok[m++] = glob[i] == '*' ? T_STAR : (unsigned char)glob[i];
		}
	}
	/* states: how many tokens are matched; a set of them, stars closed */
	bool cur[REQGLOB_MAX + 1] = { false }, next[REQGLOB_MAX + 1];
	cur[0] = true;
	for (size_t k = 0; k < m && cur[k] && tok[k] >= T_STAR; k++)
		cur[k + 1] = true;
	for (const char *p = path; *p; p++) {
		memset(next, 0, (m + 1) * sizeof *next);
		bool any = false;
		for (size_t k = 0; k < m; k++) {
			if (!cur[k])
				continue;
			if (tok[k] == T_DSTAR || (tok[k] == T_STAR && *p != '/'))
				next[k] = any = true;
			else if (tok[k] == (unsigned char)*p)
				next[k + 1] = any = true;
		}
		if (!any)
			return false;
		for (size_t k = 0; k < m; k++)
			if (next[k] && tok[k] >= T_STAR)
				next[k + 1] = true;
		memcpy(cur, next, (m + 1) * sizeof *cur);
	}
	return cur[m];
}
