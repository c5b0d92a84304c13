/* test_common_lines.c - unit tests of lines_each (src/common/lines.h): the
 * lines of a text with and without a final newline, empty lines, an empty
 * text, bytes after a NUL kept, numbers from 1, and a walk stopped by its
 * callback with the callback's value. */
#include <stdio.h>
#include <string.h>

#include "src/common/lines.h"
#include "check.h"

struct seen {
	char text[256];           /* the lines, each followed by '|' */
	unsigned long last;       /* the last line number */
	unsigned long stop_at;    /* return -7 on this line; 0: never */
};

static int collect(const char *s, size_t n, unsigned long lineno, void *ctx)
{
	struct seen *w = ctx;
	size_t k = strlen(w->text);
	CHECK(lineno == w->last + 1);
	w->last = lineno;
	if (k + n + 2 < sizeof w->text) {
		memcpy(w->text + k, s, n);
		for (size_t i = 0; i < n; i++) /* a NUL inside a line shows as '0' */
			if (w->text[k + i] == '\0')
				w->text[k + i] = '0';
		w->text[k + n] = '|';
		w->text[k + n + 1] = '\0';
	}
	return lineno == w->stop_at ? -7 : 0;
}

static void expect(const char *text, size_t len, unsigned long stop_at, int rc, const char *lines,
		   unsigned long last)
{
	struct seen w = { .stop_at = stop_at };
	CHECK(lines_each(text, len, collect, &w) == rc);
	CHECK_STR(w.text, lines);
	CHECK(w.last == last);
}

int main(void)
{
	expect("", 0, 0, 0, "", 0);
	expect("a", 1, 0, 0, "a|", 1);
	expect("a\n", 2, 0, 0, "a|", 1);
	expect("a\nb", 3, 0, 0, "a|b|", 2);
	expect("a\n\nb\n", 5, 0, 0, "a||b|", 3);
	expect("\n", 1, 0, 0, "|", 1);
	expect("x\0y\nz", 5, 0, 0, "x0y|z|", 2);
	expect("a\nb\nc\n", 6, 2, -7, "a|b|", 2);
	expect("a\nb\nc", 3, 0, 0, "a|b|", 2); /* len bounds the text */
	return check_status();
}
