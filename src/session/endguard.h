/* endguard.h - a signal that would end warden while it finishes a session
 * (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 once the sandbox is
 * gone: the placeholders' removal, the last checkpoint, session.end, the
 * log's close) waits for that end, and then ends warden as it would have,
 * by the signal itself (a shell's loop stops on it, as on an interrupted
 * command). A second one ends warden at once, without the rest of the
 * record: the way out of an end that takes too long (the last checkpoint
 * of a large workspace). A signal the caller ignores stays ignored.
 * SIGPIPE is ignored meanwhile: a stderr whose reader is gone (`| head`)
 * makes warden's last words fail, not end it before its record.
 *
 * endguard_hold blocks the signals before the supervisor runs (it takes
 * them through its signalfd meanwhile and gives the mask back as it was
 * held); endguard_arm, once it has returned, catches them and unblocks
 * them (one that came between the two is caught now); endguard_release,
 * after the end, gives everything back and raises the signal caught. */
#pragma once
#include <signal.h>
#include <stdbool.h>

#define ENDGUARD_N 6

struct endguard {
	bool held, armed;
	sigset_t old;                          /* the mask before endguard_hold */
	struct sigaction prev[ENDGUARD_N];     /* the actions endguard_arm replaced */
	struct sigaction prev_pipe;            /* and SIGPIPE's */
};

void endguard_hold(struct endguard *g);
void endguard_arm(struct endguard *g);
/* The signal caught since endguard_arm, or 0. */
int endguard_caught(const struct endguard *g);
/* No return when a signal was caught: warden ends by it. */
void endguard_release(struct endguard *g);
