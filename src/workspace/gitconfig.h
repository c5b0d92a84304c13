/* gitconfig.h - reading a git configuration file's text the way git's own
 * parser does, for the settings that decide where the host's git finds
 * code to run: core.hooksPath, and the files it includes (include.path,
 * includeIf.<condition>.path) that can set it. Text only: following the
 * includes, and what is protected for them, is src/workspace/gitprotect.c. */
#pragma once
#include <stddef.h>

enum gitcfg_kind {
	GITCFG_HOOKS_PATH,   /* core.hooksPath */
	GITCFG_INCLUDE,      /* include.path */
	GITCFG_INCLUDE_IF,   /* includeIf.<condition>.path, whatever the condition */
};

/* Called for each of those settings, in the order they come, with the
 * value as git takes it (quotes, escapes and comments done; a NUL inside
 * ends it, as in git). One of them without "=" (no value) is a line git
 * refuses. */
typedef void (*gitcfg_fn)(void *ctx, enum gitcfg_kind kind, const char *value);

/* Scan text (len bytes, need not be NUL-terminated): 0 when git would
 * read all of it, -1 at the first line git refuses ("bad config line"),
 * after reporting the settings before it (git refuses the whole
 * configuration then, and runs nothing). */
int gitcfg_scan(const char *text, size_t len, gitcfg_fn fn, void *ctx);
