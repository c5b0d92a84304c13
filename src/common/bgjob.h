/* bgjob.h - one piece of setup run on a thread of its own while the
 * caller goes on with other setup, then joined: for work that takes
 * milliseconds and needs nothing the caller does meanwhile (the canary key
 * pair's libcrypto setup, the seccomp filter's compilation). Joined before
 * the process forks or clones anything: no thread survives into a child.
 * When no thread can be made, the work runs at once, in the caller. */
#pragma once
#include <pthread.h>
#include <stdbool.h>

#include "err.h"

struct bgjob {
	int (*fn)(void *arg, struct werr *e); /* 0, or -1 with e filled */
	void *arg;
	pthread_t t;
	bool running; /* a thread runs fn, not yet joined */
	bool started; /* fn started: r and e hold its result once joined */
	int r;
	struct werr e;
};

/* Start fn(arg) on a thread (or run it now). */
void bgjob_start(struct bgjob *j, int (*fn)(void *, struct werr *), void *arg);
/* Wait for it; its result (e filled on -1). A job never started: 0. */
int bgjob_wait(struct bgjob *j, struct werr *e);
/* For a cleanup path: wait, the result dropped. */
void bgjob_join(struct bgjob *j);
