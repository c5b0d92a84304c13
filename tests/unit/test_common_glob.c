/* test_common_glob.c - unit tests of glob_match (src/common/glob.h): the
 * same answer as fnmatch(pattern, s, 0) for patterns of literal bytes and
 * stars (ends, pieces in order, overlapping ends, empty pieces, repeats),
 * and for the patterns it hands to fnmatch ('?', '[', '\'); then random
 * patterns and texts over a small alphabet, each compared with fnmatch. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/glob.h"
#include "check.h"

static void same(const char *p, const char *s)
{
	bool want = fnmatch(p, s, 0) == 0;
	if (glob_match(p, s) != want)
		fprintf(stderr, "glob_match(\"%s\", \"%s\") != fnmatch's %d\n", p, s, want);
	CHECK(glob_match(p, s) == want);
}

int main(void)
{
	static const char *const pats[] = {
		"", "*", "**", "a", "abc", "a*", "*a", "*a*", "a*b", "a*b*c", "*/find", "*/ld-*.so",
		"*warden*", "*warden/*.jsonl*", "*.local/state/warden*", "ab*ba", "aba*aba", "a**b",
		"*ab*ab*", "/proc/*/fd/*", "x?z", "[ab]*", "a\\*b", "*[*?]*.jsonl*", "python*",
	};
	static const char *const texts[] = {
		"", "a", "b", "ab", "aba", "abba", "ababa", "abcabc", "abc", "acb", "xyz", "a*b",
		"/usr/bin/find", "/usr/lib/ld-2.31.so", "/home/u/.local/state/warden/x.jsonl",
		"warden", "wardenwarden", "/proc/12/fd/3", "/proc/12/fd", "python3.12", "*.jsonl",
	};
	for (size_t i = 0; i < sizeof pats / sizeof *pats; i++)
		for (size_t k = 0; k < sizeof texts / sizeof *texts; k++)
			same(pats[i], texts[k]);
	CHECK(glob_match("*/find", "/usr/bin/find"));
	CHECK(!glob_match("aba*aba", "ababa")); /* the ends may not overlap */
	CHECK(glob_match("ab*ba", "aba") == false);
	CHECK(glob_match("a*b*c", "aXbYc"));
	CHECK(!glob_match("a*b*c", "aXcYb"));

	srand(38);
	static const char alpha[] = "ab*/.";
	for (int n = 0; n < 200000; n++) {
		char p[8], s[10];
		int pl = rand() % 7, sl = rand() % 9;
		for (int i = 0; i < pl; i++)
			p[i] = alpha[rand() % 5];
		for (int i = 0; i < sl; i++)
			s[i] = alpha[rand() % 5];
		p[pl] = s[sl] = '\0';
		same(p, s);
	}
	return check_status();
}
