/* wildmatch.h - git's wildmatch with WM_PATHNAME, as includeIf's gitdir
 * and onbranch conditions take it (src/workspace/gitident.c): '*' and '?'
 * within one component of a path, "**" between slashes (or at an end of
 * the pattern) across them, a bracket expression ("[a-z]", "[!x]",
 * "[[:digit:]]") as fnmatch's for one character but never '/', a
 * backslash escaping the next character. A match that would take more
 * than a bounded number of steps (a pattern of many stars) fails. */
#pragma once
#include <stdbool.h>

/* text matches pattern; icase: ASCII letters of either case alike (the
 * condition "gitdir/i:"). */
bool wildmatch(const char *pattern, const char *text, bool icase);
