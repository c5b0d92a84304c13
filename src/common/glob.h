/* glob.h - fnmatch(3) with no flags, its common patterns without it: a
 * pattern of literal bytes and '*' only (no '?', '[' or '\') is matched
 * here directly, its first and last pieces compared in place and the
 * pieces between found in order, leftmost first; anything else goes to
 * fnmatch. The same answer as fnmatch(pattern, s, 0) == 0 in the C locale
 * (warden sets no other), where both compare bytes. A pattern used many
 * times is looked at once (glob_compile), a text's length taken once by
 * the caller (glob_run). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

enum glob_kind { GLOB_LITERAL, GLOB_STARS, GLOB_OTHER };

struct glob {
	const char *pat;         /* the pattern (not owned) */
	enum glob_kind kind;
	size_t len;              /* the pattern's length */
	size_t pre, tail;        /* GLOB_STARS: the bytes before its first star, after its last */
};

void glob_compile(struct glob *g, const char *pattern);
/* s (len bytes, NUL-terminated) matches g */
bool glob_run(const struct glob *g, const char *s, size_t len);
bool glob_match(const char *pattern, const char *s);
