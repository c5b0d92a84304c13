/* shown.h - text made safe for the user's terminal.
 *
 * What a sandboxed program chose (a file name, a host, a command line, a
 * path it tried) reaches warden's messages, its end-of-session summary and
 * the listings of `warden approve`, `warden diff` and `warden status`.
 * Written raw, an escape sequence in such a name would act on the user's
 * terminal: set the clipboard (OSC 52, which the terminal filter drops
 * from the agent's own output: ttyfilter.h), retitle the window, move the
 * cursor, clear what warden said, or reorder what follows (bidirectional
 * controls). Shown, it only reads: control characters, DEL, C1 controls,
 * bytes that are not UTF-8, and bidirectional and invisible format
 * characters are escaped (\x1b, \u202e); everything else passes as it is. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence at s, within its first n bytes
 * (its code point to *cp), or 0 when s does not start one (overlong forms
 * and surrogates included). */
size_t utf8_seq(const unsigned char *s, size_t n, unsigned *cp);
/* Whether code point cp must not reach a terminal raw although it is not a
 * C0 control: C1 controls, bidirectional and invisible format characters,
 * line and paragraph separators. */
bool cp_unsafe(unsigned cp);

/* s for the terminal, malloc'd: the escapes above, \xHH for a control
 * character, DEL or a byte that is not UTF-8, \uHHHH (\UHHHHHHHH) for the
 * rest. NULL shows as "". */
char *text_shown(const char *s);
/* The same, with each backslash shown as \x5c too, so that the result
 * reads back to exactly the bytes of p (`warden diff`'s paths). */
char *path_shown(const char *p);
/* A line of a file's text (s[0..n), no NUL in it; its newline included)
 * for the terminal: as text_shown, tabs kept (`warden diff` on a
 * terminal, where a carriage return or a cursor move in what the agent
 * wrote could hide a line from the reviewer). */
char *line_shown(const char *s, size_t n);
