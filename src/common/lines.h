/* lines.h - a text split into its lines, counted: the walk the profile
 * parser and the detection rules' parser share (lines.c). */
#pragma once
#include <stddef.h>

/* Called for each line: its bytes (s, n; the '\n' not included, and no NUL
 * added) and its number, from 1. A negative return stops the walk. */
typedef int (*lines_fn)(const char *s, size_t n, unsigned long lineno, void *ctx);

/* fn for each line of the len bytes at text, split at '\n'; a last line
 * without a newline is a line, an empty text has none. Returns the first
 * negative value fn returned, else 0. */
int lines_each(const char *text, size_t len, lines_fn fn, void *ctx);
