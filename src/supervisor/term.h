/* term.h - the agent's terminal on the host side during a session: which
 * host fds the sandbox's pty stands for, the user's terminal made raw
 * while its keys are relayed, and the relay itself as sources of the loop
 * (the agent's output through the filter to the user's terminal, the
 * user's keys to the agent or to a question on the screen, or, while the
 * sandbox is frozen, its interrupt key to the signals' stopper). */
#pragma once
#include <stdbool.h>

#include "../common/bytebuf.h"
#include "../common/err.h"
#include "../control/termask.h"
#include "../sandbox/sandbox.h"
#include "../common/loop.h"
#include "pty.h"
#include "stop.h"

/* The user's keys the agent's pty has not taken yet, at most (the rest
 * dropped, said at the end). */
#define TERM_KEYS_MAX (1024 * 1024)
/* At the end, how long a terminal that takes none of the output is
 * waited for (ms). */
#define TERM_STALL_MS 5000

struct term {
	int master;       /* the agent's pty master, or -1: no pty */
	int tty;          /* the user's terminal it mirrors (window size) */
	int out;          /* where its output goes */
	int wout;         /* out opened again, not blocking (a file description of its own), or -1 */
	bool relay_input; /* the user's keys go in (stdin is the terminal, warden in its foreground) */
	/* What the other side has not taken yet. While the user's terminal
	 * does not read (a stalled link, a stopped emulator), the agent's
	 * output waits in outq and no more is read from the pty (the agent's
	 * writes wait, as on a terminal of its own): the loop goes on serving
	 * the rest of the session. While the agent does not read its input,
	 * the user's keys wait in inq, up to TERM_KEYS_MAX. */
	struct bytebuf outq, inq;
	unsigned long long keys_dropped; /* past TERM_KEYS_MAX */
	size_t out_dropped;      /* output the terminal took none of at the end (term_drain) */
	struct loop *loop;       /* the relay's (term_watch) */
	bool master_watched;     /* the pty is a source of loop */
	struct host_tty host;    /* the user's terminal while raw */
	struct pty_sink sink;    /* where the output goes: out, or a question holding it */
	struct ttyfilter filter; /* on the way */
	struct termask *ask;     /* a question on the screen takes the keys, holds the output */
	struct stopper *stop;    /* the user's interrupt key while frozen goes here (borrowed) */
};

/* Set up the pty (master, may be -1; s->pty_fds says which of fds 0-2
 * are terminals) and the user's terminal (init, waiting with a pty, is
 * then told to go on: launched_go). */
void term_start(struct term *t, const struct sandbox_spec *s, int master);
/* Questions on the user's screen from now on (ask NULL: none), the
 * interrupt key of a frozen sandbox to stop (stop.h: the user's SIGINT:
 * nothing inside can read the key, nor obey the signal the pty would
 * queue), and the relay watched by l. */
int term_watch(struct term *t, struct termask *ask, struct stopper *stop, struct loop *l,
	       struct werr *e);
/* What the command wrote before it ended, drained to the user: waited
 * for while the terminal takes some of it every TERM_STALL_MS, the rest
 * dropped once it takes none for that long (said by term_end, if the
 * terminal takes that). */
void term_drain(struct term *t);
/* n bytes to the user's terminal after the output waiting for it (a
 * question drawn: termask_out's put; ctx the term). */
void term_put(void *ctx, const char *buf, size_t n);
/* Warden about to stop itself (jobctl.c): what output waits for the
 * user's terminal written as far as it takes it now, the terminal's modes
 * given back. Whether it was raw (term_continue's raw). */
bool term_suspend(struct term *t);
/* Warden continued: in its terminal's foreground (then true), the
 * terminal raw again when it was (raw), its size passed on (changed
 * meanwhile, as a rule); in the background, false and nothing done. */
bool term_continue(struct term *t, bool raw);
/* The user's terminal was resized. */
void term_resize(struct term *t);
/* The user's terminal as it was. */
void term_end(struct term *t);
