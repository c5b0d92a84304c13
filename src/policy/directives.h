/* directives.h - the profile's grammar as one table: each directive's name,
 * the handler the parser runs for its lines, how many tokens a line of it
 * may have and its synopsis. The profile's equivalent of src/cli/cmdtab.h:
 * the parser dispatches from it and the man pages' test
 * (tests/docs/man_pages.sh) reads the names from its rows in parser.c, so
 * the grammar, its documentation and the parser cannot drift.
 *
 * Adding a directive: its handler in the parse_*.c file of its topic
 * (declared in parse.h), then its row in policy_directives[]
 * (parser.c) and its entry in warden-profile(5). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Words after a directive's name on one line, at most: a longer line is
 * refused, whatever the directive ("NAME: too many arguments (max 63)");
 * `warden import` writes no longer one. */
#define POLICY_LINE_WORDS_MAX 63

struct parser;
struct line;

struct policy_directive {
	const char *name;       /* the line's first token: "read-only" */
	int (*run)(struct parser *ps, const struct line *l);
	size_t min_tokens;      /* tokens on a valid line, the name included */
	size_t max_tokens;      /* 0: none but POLICY_LINE_WORDS_MAX's */
	bool counted;           /* the parser checks the count before the handler
				   runs (min_tokens == max_tokens: "NAME: missing
				   argument", "NAME: unexpected argument 'X'");
				   otherwise the handler does, in words of its own */
	const char *synopsis;   /* what follows the name, as warden-profile(5) shows it */
};

extern const struct policy_directive policy_directives[]; /* ends with { 0 } */

/* The directive called name, or NULL. */
const struct policy_directive *policy_directive_find(const char *name);
