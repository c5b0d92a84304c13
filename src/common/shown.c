/* shown.c - text made safe for the user's terminal (shown.h). */
#include "shown.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

size_t utf8_seq(const unsigned char *s, size_t n_max, unsigned *cp)
{
	if (n_max == 0)
		return 0;
	unsigned c = s[0], v, min;
	size_t n;
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
	if (n > n_max)
		return 0;
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

bool cp_unsafe(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0xad || cp == 0x61c || cp == 0x180e ||
	       (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);
}

/* The shown form of p[0..n) into out (room for 4 * n + 1), NUL-ended. */
static void shown_into(char *out, const unsigned char *p, size_t n, bool backslash, bool tab)
{
	char *o = out;
	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t k = utf8_seq(p + i, n - i, &cp);
		if (k == 0 || (cp < 0x20 && !(tab && cp == '\t')) || cp == 0x7f ||
		    (backslash && cp == '\\')) {
			/* at most four characters a byte: \xHH for one, \uHHHH
			 * for two or three, \UHHHHHHHH for four */
			o += sprintf(o, "\\x%02x", p[i]);
			k = 1;
		} else if (cp_unsafe(cp)) {
			o += sprintf(o, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		} else {
			memcpy(o, p + i, k);
			o += k;
		}
		i += k;
	}
	*o = '\0';
}

static char *shown(const char *s, size_t n, bool backslash, bool tab)
{
	char *out = xmalloc(4 * n + 1);
	shown_into(out, (const unsigned char *)s, n, backslash, tab);
	return out;
}

char *text_shown(const char *s)
{
	return shown(s ? s : "", s ? strlen(s) : 0, false, false);
}

char *path_shown(const char *p)
{
	return shown(p ? p : "", p ? strlen(p) : 0, true, false);
}

char *line_shown(const char *s, size_t n)
{
	return shown(s, n, false, true);
}
