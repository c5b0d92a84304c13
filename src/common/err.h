/* err.h - the one error convention of the tree.
 *
 * A function that can fail returns -1 (or NULL) and fills a struct werr with
 * the errno behind the failure (0 when there is none) and a message that says
 * what warden was doing. The error travels up to the CLI, which prints it once
 * as "warden: MESSAGE: STRERROR" and exits 125. */
#pragma once
#include <stdarg.h>
#include <stddef.h>

struct werr {
	int errnum;      /* errno of the failing call, 0 if none */
	char msg[1024];  /* what warden was doing, without the strerror part */
};

/* Fill e (may be NULL) and return -1. */
int werr_set(struct werr *e, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, with errnum taken from errno. */
#define werr_errno(e, ...) werr_set((e), errno, __VA_ARGS__)

/* Prefix the existing message with more context ("while X: <old>"). */
int werr_wrap(struct werr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add what the user can change to an error that goes only to the user:
 * "MESSAGE[: strerror]; HINT". The errno's words become part of the
 * message and e->errnum 0, so call it last, where no caller looks at
 * errnum again. */
int werr_hint(struct werr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A process warden makes (fork, clone) that could not be made, err its
 * errno: set as werr_set, and for EAGAIN with which limit was reached and
 * where to raise it (werr_hint). */
int werr_fork(struct werr *e, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Format "MESSAGE[: strerror]" into buf. */
const char *werr_str(const struct werr *e, char *buf, unsigned long len);

/* Print "warden: MESSAGE[: strerror]" on stderr. */
void werr_print(const struct werr *e);

/* Print "warden: MESSAGE" on stderr (for notes and warnings). While the
 * user's terminal is raw (the supervisor relays it to the agent's pty),
 * the note starts on a line of its own and ends with "\r\n". */
void wnote(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The user's terminal went raw (raw) or was put back: for wnote. */
void wnote_terminal_raw(int raw);
/* From now, the notes of the thread that calls this (the supervisor's
 * loop) never wait for stderr: through put(ctx, line, n) when given (the
 * relay's queue toward the terminal stderr is, after the output before
 * them), else, for a stderr that is a pipe, a terminal (a paused pager:
 * `2>&1 | less`) or a socket (a service's, to the journal), written without
 * waiting and what it does not take kept (up to 64 KiB, the rest counted)
 * for the next note. A regular file is written as before (a description of
 * its own would have its own offset). Other threads' notes are written as
 * before. */
void wnote_loop_begin(void (*put)(void *ctx, const char *buf, size_t n), void *ctx);
/* The loop is over: what was kept written, waiting, and notes as before. */
void wnote_loop_end(void);
