/* ttyfilter.h - what the agent writes to its terminal, filtered on the way
 * to the user's: escape sequences that reach past the screen are dropped or
 * defanged before the real terminal sees them.
 *
 * - OSC 52 (set or read the clipboard): dropped, unless allowed (`terminal
 *   clipboard` in the profile);
 * - OSC 0, 1, 2 (window and icon titles): passed with printable text only
 *   (no control characters, no bytes of other sequences smuggled in);
 * - terminal queries, when the user's answers would not reach the sandbox
 *   (its input is not the terminal): the terminal would write its answer to
 *   its own input queue, for the user's shell to read once the session
 *   ends. Dropped: device status and cursor position reports (CSI ... n),
 *   device attributes (CSI c, CSI > c, CSI = c), window reports (CSI 11, 13,
 *   14, 16, 18, 19, 20, 21 t), mode reports (CSI ... $ p), DCS requests
 *   (DECRQSS, XTGETTCAP) and OSC colour queries (a "?" parameter).
 *   Passed otherwise, and counted (asked): pty.c reads away the answers
 *   the agent left when its session ends.
 *
 * Everything else passes byte for byte, in order. A sequence split across
 * writes is held until it ends (at most TTYFILTER_HOLD bytes; a longer one
 * that is neither an OSC 52 nor a query passes as it came, a longer OSC 52
 * is dropped whole). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define TTYFILTER_HOLD 4096

struct ttyfilter {
	bool allow_clipboard;   /* OSC 52 passes */
	bool drop_queries;      /* the user's terminal answers would be lost */
	/* the sequence being read */
	int state;
	char held[TTYFILTER_HOLD];
	size_t nheld;
	bool overflow;          /* longer than held: passed (or dropped) as it goes */
	bool dropping;          /* the overflowing sequence is dropped */
	unsigned long dropped;  /* sequences dropped so far */
	/* queries passed to the terminal (its answers come as the user's keys),
	 * and of them device attributes (CSI c, CSI 0 c, ESC Z), answered
	 * CSI ? ... c */
	unsigned long asked, asked_da;
};

void ttyfilter_init(struct ttyfilter *f, bool allow_clipboard, bool drop_queries);

/* Filter n bytes of the agent's output into out (room for n +
 * TTYFILTER_HOLD bytes: held bytes may come out with these); returns how
 * many went to out. */
size_t ttyfilter_run(struct ttyfilter *f, const char *in, size_t n, char *out);

/* What is still held (a sequence cut off by the end of the output), into
 * out (room for TTYFILTER_HOLD): passed as it is unless it would be
 * dropped. */
size_t ttyfilter_flush(struct ttyfilter *f, char *out);
