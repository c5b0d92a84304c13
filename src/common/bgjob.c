/* bgjob.c - one piece of setup on a thread of its own (bgjob.h). */
#include "bgjob.h"

#include <signal.h>
#include <string.h>

static void *run(void *p)
{
	struct bgjob *j = p;
	j->r = j->fn(j->arg, &j->e);
	return NULL;
}

void bgjob_start(struct bgjob *j, int (*fn)(void *, struct werr *), void *arg)
{
	*j = (struct bgjob){ .fn = fn, .arg = arg };
	/* the thread blocks every signal: they stay the main thread's (the
	 * supervisor reads them from a signalfd) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	j->running = pthread_create(&j->t, NULL, run, j) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!j->running)
		j->r = fn(arg, &j->e);
	j->started = true;
}

int bgjob_wait(struct bgjob *j, struct werr *e)
{
	if (!j->started)
		return 0;
	if (j->running) {
		pthread_join(j->t, NULL);
		j->running = false;
	}
	if (j->r < 0 && e)
		*e = j->e;
	return j->r;
}

void bgjob_join(struct bgjob *j)
{
	bgjob_wait(j, NULL);
}
