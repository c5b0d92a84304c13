/* bgjob.c - one piece of setup on a thread of its own (bgjob.h). */
#include "bgjob.h"

#include <sched.h>
#include <signal.h>
#include <string.h>

static void *run(void *p)
{
	struct bgjob *j = p;
	if (j->steered) {
		pthread_setaffinity_np(pthread_self(), sizeof j->cpus, &j->cpus);
		atomic_store(&j->took_back, true);
	}
	j->r = j->fn(j->arg, &j->e);
	return NULL;
}

/* The attributes of a thread to start on a CPU of the caller's set other
 * than the one it runs on (bgjob.h); false when there is none. */
static bool steer(struct bgjob *j, pthread_attr_t *a)
{
	int cpu = sched_getcpu();
	if (cpu < 0 || sched_getaffinity(0, sizeof j->cpus, &j->cpus) < 0 ||
	    CPU_COUNT(&j->cpus) < 2 || !CPU_ISSET(cpu, &j->cpus))
		return false;
	cpu_set_t others = j->cpus;
	CPU_CLR(cpu, &others);
	return pthread_attr_setaffinity_np(a, sizeof others, &others) == 0;
}

int thread_create_blocked(pthread_t *t, pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_attr_t own;
	bool mine = !a && pthread_attr_init(&own) == 0;
	if (mine)
		a = &own;
	int r;
	if (a && pthread_attr_setsigmask_np(a, &all) == 0) {
		r = pthread_create(t, a, fn, arg);
	} else {
		sigset_t old;
		pthread_sigmask(SIG_SETMASK, &all, &old);
		r = pthread_create(t, a, fn, arg);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (mine)
		pthread_attr_destroy(&own);
	return r;
}

void bgjob_start(struct bgjob *j, int (*fn)(void *, struct werr *), void *arg)
{
	*j = (struct bgjob){ .fn = fn, .arg = arg };
	pthread_attr_t a;
	bool attr = pthread_attr_init(&a) == 0;
	j->steered = attr && steer(j, &a);
	j->running = thread_create_blocked(&j->t, attr ? &a : NULL, run, j) == 0;
	if (attr)
		pthread_attr_destroy(&a);
	if (!j->running)
		j->r = fn(arg, &j->e);
	j->started = true;
}

int bgjob_wait(struct bgjob *j, struct werr *e)
{
	if (!j->started)
		return 0;
	if (j->running) {
		/* not running yet: the caller's CPU, which now waits, is its
		 * too (should it run by now and be gone, the call can only
		 * give the caller its own whole set) */
		if (j->steered && !atomic_load(&j->took_back))
			pthread_setaffinity_np(j->t, sizeof j->cpus, &j->cpus);
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
