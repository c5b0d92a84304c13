/* fuzz_wildmatch.c - libFuzzer target for git's wildmatch as includeIf's
 * conditions take it (src/common/wildmatch.c). The input is a pattern, a
 * NUL, and a text (no NUL: the input is both). Invariants: the answer is
 * the same twice, and with icase whenever it is a match without; a
 * pattern without '*', '?', '[' or '\' matches exactly the same text; each
 * byte of the text escaped with a backslash is a pattern that matches the
 * text; "**" matches anything. Every call ends (the match is bounded in
 * steps). Linked with replay.c it is fuzz-wildmatch-replay, which replays
 * the seed corpus without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/common/wildmatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *buf = xmalloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = '\0';
	const char *pat = buf, *nul = memchr(buf, '\0', size);
	const char *text = nul ? nul + 1 : buf;
	bool a = wildmatch(pat, text, false), b = wildmatch(pat, text, false);
	if (a != b || (a && !wildmatch(pat, text, true)))
		abort();
	if (!strpbrk(pat, "*?[\\") && a != (strcmp(pat, text) == 0))
		abort();
	if (!wildmatch("**", text, false))
		abort();
	size_t n = strlen(text);
	char *esc = xmalloc(2 * n + 1), *o = esc;
	for (size_t i = 0; i < n; i++) {
		*o++ = '\\';
		*o++ = text[i];
	}
	*o = '\0';
	if (!wildmatch(esc, text, false))
		abort();
	free(esc);
	free(buf);
	return 0;
}
