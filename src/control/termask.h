/* termask.h - the user's terminal as a channel of the question broker
 * (approval.h): when warden relays the agent's pty and the user's
 * keys (stdin is the terminal, warden in its foreground), a question put to
 * the humans is drawn over the bottom lines of the user's terminal and
 * answered there, by a key. The agent has no part in it: while a question
 * is up its output is held back (bounded) instead of reaching the screen,
 * and the user's keys go to the question instead of to the agent's pty;
 * nothing of the question is written to the agent's pty.
 *
 * On the screen (the bottom lines; the cursor and its attributes saved
 * first): a header with the question's kind, id, the seconds left and how
 * many more wait; the summary, whole (bytes outside printable ASCII shown
 * as \xNN, wrapped over as many lines as it needs, cut only when the
 * screen has too few lines); the keys, and how much of the agent's output
 * is held (and dropped, past TERMASK_HOLD_MAX). One question at a time,
 * the others queued in the order they came; redrawn each second and when
 * the terminal is resized.
 *
 * Keys, once the question has been up TERMASK_ARM_MS (what was typed
 * before, meant for the agent, or a terminal's late answer to what the
 * agent printed, answers nothing):
 *   y  yes, this once            s  yes, for this subject for the rest of the session
 *   n, Enter, Escape, Ctrl-C     no (this once)
 * Anything else (other keys, escape sequences the terminal sends: arrows,
 * mouse reports, focus events, a bracketed paste, answers to queries) is
 * ignored; what follows an answering key in the same read is dropped.
 * An answer goes to approvals_answer with by "terminal" (who: the
 * terminal's name).
 *
 * When the question ends (answered here or elsewhere, timed out, its
 * action gone): the lines drawn are cleared, the cursor restored, the held
 * output written, and the agent's pty resized to one row less and back
 * (SIGWINCH twice: full-screen programs redraw what the question covered). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "../common/loop.h"
#include "approval.h"

#define TERMASK_ARM_MS 500
#define TERMASK_HOLD_MAX (1024 * 1024)

struct termask;

/* Where a question is drawn (and the output held meanwhile written, once
 * it is down): through put(ctx, bytes, n) when given (the relay's queue
 * toward the user's terminal, term.h: after the output before it, never
 * waiting on a terminal that does not read), else to fd. */
struct termask_out {
	int fd;
	void (*put)(void *ctx, const char *buf, size_t n);
	void *ctx;
};

/* A channel of a's drawing on out (a terminal's), sizing by tty (the
 * user's terminal), nudging master (the agent's pty); registered with a.
 * NULL with e set when its timer cannot be had. Free it after a: a's last
 * `ended` calls come here. */
struct termask *termask_new(struct approvals *a, const struct termask_out *out, int tty,
			    int master, struct werr *e);
/* A question still up is taken down, the held output written. */
void termask_free(struct termask *t);

/* A question is on the screen: the user's keys are for termask_keys, the
 * agent's output for termask_hold. false for NULL. */
bool termask_up(const struct termask *t);
/* Read the user's keys from fd and act on them: 1 (read, or nothing yet),
 * 0 end of file, -1 error. */
int termask_keys(struct termask *t, int fd);
/* The pty sink's hold (pty.h): while a question is up, the agent's output
 * is kept (up to TERMASK_HOLD_MAX, the rest dropped and counted) and true
 * returned; false otherwise. */
bool termask_hold(void *t, const char *buf, size_t n);
/* The user's terminal was resized: the question is drawn again. NULL is
 * fine. */
void termask_resize(struct termask *t);

/* The loop's source: the redraw timer (each second, and once the keys
 * count). */
int termask_timer_fd(const struct termask *t);
void termask_on_timer(struct termask *t);
/* The timer watched by l (termask_on_timer); -1 with e naming it when l
 * cannot take it. */
int termask_watch(struct loop *l, struct termask *t, struct werr *e);
