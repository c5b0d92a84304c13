/* initfreeze.h - sandbox init's freeze by signals, made to hold against
 * the processes it stops (initfreeze.c). */
#pragma once
#include <stdbool.h>
#include <time.h>

/* How long a freeze may look (ms), a millisecond between two looks: a
 * time, not a count of looks, as on a busy machine a look and its pause
 * take longer than their due, and a count (500, before) could outlast the
 * supervisor's wait for init's answer (supervisor/freeze.c, ANSWER_MS),
 * itself a time; this leaves half a second of that wait for the signal
 * to reach init and the answer to come back. */
#define FREEZE_BUDGET_MS 1500

/* How often a frozen sandbox is looked at again (ms). */
#define FREEZE_RECHECK_MS 100

/* SIGSTOP to every process of the namespace but init, until all have
 * stopped: 0, ESRCH when there is no other process, EAGAIN when some
 * would not stay stopped in FREEZE_BUDGET_MS (the freeze failed: the
 * supervisor then kills), or kill's errno. */
int initfreeze_stop(void);
/* While frozen: how long init may wait for a signal (ms) before its next
 * look at the sandbox, which is taken first when due (next: its time,
 * CLOCK_MONOTONIC, all 0 at the freeze's start). A look that found a
 * process running (stopped again) sets *escaped (INIT_MSG_ESCAPED). Timed
 * from the last look, not from the last signal: a stream of signals to
 * init does not put the looks off. */
long initfreeze_next(struct timespec *next, bool *escaped);
