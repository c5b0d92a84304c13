/* toml.h - a strict reader for the subset of TOML that Codex's config.toml
 * uses, into a jansson tree (tables become objects), so that `warden
 * import codex` reads it with the same calls as the JSON settings.
 *
 * Read: comments, [table] and [a."b".c] headers, bare, quoted and dotted
 * keys, basic and literal strings (one line or multi-line, with TOML's
 * escapes), booleans, decimal integers (with '_' separators), simple
 * floats, arrays (of any of these, over several lines) and one-line inline
 * tables. Refused, with FILE:LINE:COL and what it is: arrays of tables
 * ([[x]]), dates and times, hex/octal/binary integers, inf and nan, a key
 * defined twice, a table header given twice, a value where a table is,
 * bytes that are not UTF-8, a NUL, nesting deeper than 32. */
#pragma once
#include <jansson.h>
#include <stddef.h>

#include "../common/err.h"

#define TOML_MAX_DEPTH 32

/* Parse text[0..len) (need not be NUL-terminated); `name` for messages.
 * A new object, or NULL with e saying "NAME:LINE:COL: what". */
json_t *toml_parse(const char *text, size_t len, const char *name, struct werr *e);
