/* bgjob.h - pieces of setup run on a worker thread while the caller goes
 * on with other setup, then waited for: for work that takes milliseconds
 * and needs nothing the caller does meanwhile (the decoys and the session
 * CA; as root, the host identity's lookups; the session's cgroups:
 * src/session/prepjobs.h).
 *
 * One worker runs the jobs started, in the order they were started: the
 * jobs of a session's start are started together, and one thread beside
 * the caller uses the second CPU of a small machine as well as one thread
 * each did, without a thread's start (a quarter of a millisecond on a
 * paravirtualised VM) and its stack's new pages for each job (bench/README.md,
 * "Noon, 2026-12-01"). A job not begun when it is waited for is run by the
 * waiter, which would otherwise wait for the jobs before it. The worker ends
 * when no job is left, and the wait that leaves none joins it: once every
 * job started has been waited for, no thread of them is left, which is
 * what the caller makes sure of before it forks or clones anything (no
 * thread survives into a child). When no thread can be made,
 * the work runs at once, in the caller. A job may start and wait for
 * others; it must not wait for a job that waits for it.
 *
 * The worker starts on another CPU than the caller's when the caller may
 * use more than one: a scheduler that packs a new thread onto its
 * creator's CPU (seen on a VM whose guest keeps a vCPU idle until a load
 * balance, up to a tick later) would run the jobs only while the caller
 * waits for them. Once running, the worker takes back the caller's whole
 * set, and bgjob_wait gives it back should it not have run yet: it is
 * never kept from a CPU that is free. The worker blocks every signal; a
 * job its waiter runs has the waiter's signal mask.
 *
 * A caller that may use one CPU only (a session's supervisor, kept to one
 * as root and unprivileged: cpupin.h; a user's taskset) gets no worker:
 * the job runs at once in the caller, as when no thread can be had. There
 * a worker overlapped only what blocks (a lookup's I/O, a cgroup's grace
 * period), and its start (a stack, a clone, the scheduler's hand-over on
 * one CPU) cost more than that on the project's VM: 0.35 ms of a session
 * unprivileged, 0.5 as root (bench/README.md, "Afternoon, 2026-12-03"). */
#pragma once
#include <pthread.h>
#include <stdbool.h>

#include "err.h"

struct bgjob {
	int (*fn)(void *arg, struct werr *e); /* 0, or -1 with e filled */
	void *arg;
	struct bgjob *next; /* in the worker's queue */
	int state; /* queued, running or done (bgjob.c) */
	bool started; /* bgjob_start was called: r and e hold its result once waited */
	int r;
	struct werr e;
};

/* pthread_create with every signal blocked in the new thread (they stay
 * the caller's: the supervisor reads them from a signalfd), given through
 * the attributes (a may be NULL): the caller's own mask is not changed
 * and put back around it. pthread_create's result. */
int thread_create_blocked(pthread_t *t, pthread_attr_t *a, void *(*fn)(void *), void *arg);

/* Start fn(arg) on the worker (or run it now, when no thread can be
 * made). */
void bgjob_start(struct bgjob *j, int (*fn)(void *, struct werr *), void *arg);
/* Wait for it, or run it here if the worker has not begun it; its result
 * (e filled on -1). A job never started: 0. */
int bgjob_wait(struct bgjob *j, struct werr *e);
/* For a cleanup path: wait, the result dropped. */
void bgjob_join(struct bgjob *j);
/* No job pending and no worker thread: what a clone made without libc's
 * fork needs (sandbox init: a lock of libc's a thread held then would stay
 * held in the child). */
bool bgjob_idle(void);
