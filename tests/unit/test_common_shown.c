/* test_common_shown.c - unit tests of text_shown and path_shown
 * (src/common/shown.h): what a sandboxed program chose, shown on the
 * user's terminal without acting on it. Escape sequences (OSC 52, CSI),
 * every other control character and DEL as \xHH; C1 controls, bidi and
 * invisible format characters as \uHHHH; bytes that are not UTF-8 (a lone
 * CSI byte, overlong forms of ESC, surrogates) as \xHH; printable text and
 * other UTF-8 as it is; backslashes shown only by path_shown, whose
 * result reads back to the bytes; line_shown keeps tabs and stops at its
 * length. */
#include <stdlib.h>
#include <string.h>

#include "src/common/shown.h"
#include "check.h"

static void expect(char *(*fn)(const char *), const char *in, const char *want)
{
	char *got = fn(in);
	CHECK_STR(got, want);
	/* nothing a terminal acts on is left: no C0 byte, no DEL, no C1 */
	for (const unsigned char *p = (const unsigned char *)got; p && *p; p++) {
		CHECK(*p >= 0x20 && *p != 0x7f);
		CHECK(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f));
	}
	free(got);
}

int main(void)
{
	/* as it is */
	expect(text_shown, "", "");
	expect(text_shown, NULL, "");
	expect(text_shown, "src/main.c: 3 \"quoted\" words", "src/main.c: 3 \"quoted\" words");
	expect(text_shown, "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82",
	       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82");
	expect(text_shown, "a\\b", "a\\b");
	/* escape sequences and other controls */
	expect(text_shown, "x\033]52;c;aGk=\007y", "x\\x1b]52;c;aGk=\\x07y");
	expect(text_shown, "\033[2J\033[H", "\\x1b[2J\\x1b[H");
	expect(text_shown, "line\nwarden: all clear\r\t", "line\\x0awarden: all clear\\x0d\\x09");
	expect(text_shown, "del\x7f", "del\\x7f");
	/* C1 controls: UTF-8 encoded (U+009B CSI, U+009D OSC) and raw bytes */
	expect(text_shown, "\xc2\x9b" "31m", "\\u009b31m");
	expect(text_shown, "\xc2\x9d" "0;t\xc2\x9c", "\\u009d0;t\\u009c");
	expect(text_shown, "\x9b" "31m", "\\x9b31m");
	/* not UTF-8: overlong ESC, a surrogate, a truncated sequence */
	expect(text_shown, "\xc0\x9b", "\\xc0\\x9b");
	expect(text_shown, "\xe0\x80\x9b", "\\xe0\\x80\\x9b");
	expect(text_shown, "\xed\xa0\x80", "\\xed\\xa0\\x80");
	expect(text_shown, "a\xe2\x80", "a\\xe2\\x80");
	/* bidi and invisible format characters (Trojan Source) */
	expect(text_shown, "ok\xe2\x80\xaegnp.exe", "ok\\u202egnp.exe");
	expect(text_shown, "zero\xe2\x80\x8bwidth", "zero\\u200bwidth");
	expect(text_shown, "tag\xf3\xa0\x80\x81", "tag\\U000e0001");
	/* path_shown: backslashes too, so that it reads back */
	expect(path_shown, "a\\x1b", "a\\x5cx1b");
	expect(path_shown, "d/\033[31mred", "d/\\x1b[31mred");
	expect(path_shown, "caf\xc3\xa9", "caf\xc3\xa9");
	/* line_shown: a line of text, tabs kept, its length bounding it (a
	 * sequence cut by the end is not read past it) */
	char *l = line_shown("a\tb\r\033[1Ac\xc3\xa9\xc3", 12);
	CHECK_STR(l, "a\tb\\x0d\\x1b[1Ac\xc3\xa9\\xc3");
	free(l);
	l = line_shown("\xe2\x80\xae", 2);
	CHECK_STR(l, "\\xe2\\x80");
	free(l);
	return check_status();
}
