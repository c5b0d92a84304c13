/* fuzz_cfgwrite.c - libFuzzer target for the judgement of git's rewrite
 * of a protected repository config (src/supervisor/cfgwrite.c:
 * cfgwrite_judge), whose new text is the sandbox's. The input is the old
 * text, a NUL, and the new one (no NUL: the new text is the whole input
 * against an empty old one). Invariants: what is always a string within
 * its bound; a text judged against itself is accepted, "unchanged",
 * exactly when git's syntax reads all of it and it holds no NUL; and a
 * new text accepted against the old one is accepted against itself. Linked
 * with replay.c it is fuzz-cfgwrite-replay, which replays the seed corpus
 * without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/supervisor/cfgwrite.h"
#include "src/workspace/gitconfig.h"

static int any(void *ctx, char *var, const char *value)
{
	(void)ctx, (void)var, (void)value;
	return 0;
}

static void bounded(const char what[CFGWRITE_WHAT_MAX])
{
	if (!memchr(what, '\0', CFGWRITE_WHAT_MAX))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nul = memchr(text, '\0', size);
	const char *old = nul ? text : "", *new = nul ? nul + 1 : text;
	size_t olen = nul ? (size_t)(nul - text) : 0, nlen = nul ? size - olen - 1 : size;
	char what[CFGWRITE_WHAT_MAX];
	memset(what, 'x', sizeof what);
	bool ok = cfgwrite_judge(old, olen, new, nlen, what);
	bounded(what);
	bool readable = !memchr(new, '\0', nlen) && gitcfg_each(new, nlen, any, NULL) == 0;
	memset(what, 'x', sizeof what);
	bool self = cfgwrite_judge(new, nlen, new, nlen, what);
	bounded(what);
	if (self != readable || (self && strcmp(what, "unchanged") != 0) || (ok && !self))
		abort();
	return 0;
}
