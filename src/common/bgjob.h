/* bgjob.h - one piece of setup run on a thread of its own while the
 * caller goes on with other setup, then joined: for work that takes
 * milliseconds and needs nothing the caller does meanwhile (the decoys and
 * the session CA, the seccomp filter's compilation; as root, the host
 * identity's lookups; the session's cgroups, the detection rules:
 * src/session/prepjobs.h). Joined before the process forks or clones anything:
 * no thread survives into a child (limits_warm's one thread, which never
 * ends, is the exception its file explains).
 * When no thread can be made, the work runs at once, in the caller.
 *
 * The thread starts on another CPU than the caller's when the caller may
 * use more than one: a scheduler that packs a new thread onto its
 * creator's CPU (seen on a VM whose guest keeps a vCPU idle until a load
 * balance, up to a tick later) would run the job only while the caller
 * waits for it. Once running, the job takes back the caller's whole set,
 * and bgjob_wait gives it back should it not have run yet: it is never
 * kept from a CPU that is free. */
#pragma once
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "err.h"

struct bgjob {
	int (*fn)(void *arg, struct werr *e); /* 0, or -1 with e filled */
	void *arg;
	pthread_t t;
	bool running; /* a thread runs fn, not yet joined */
	bool started; /* fn started: r and e hold its result once joined */
	bool steered; /* started away from the caller's CPU: cpus is the whole set */
	atomic_bool took_back; /* the thread has its whole set again */
	cpu_set_t cpus;
	int r;
	struct werr e;
};

/* pthread_create with every signal blocked in the new thread (they stay
 * the caller's: the supervisor reads them from a signalfd), given through
 * the attributes (a may be NULL): the caller's own mask is not changed
 * and put back around it. pthread_create's result. */
int thread_create_blocked(pthread_t *t, pthread_attr_t *a, void *(*fn)(void *), void *arg);

/* Start fn(arg) on a thread (or run it now). */
void bgjob_start(struct bgjob *j, int (*fn)(void *, struct werr *), void *arg);
/* Wait for it; its result (e filled on -1). A job never started: 0. */
int bgjob_wait(struct bgjob *j, struct werr *e);
/* For a cleanup path: wait, the result dropped. */
void bgjob_join(struct bgjob *j);
