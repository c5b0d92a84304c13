/* bgjob.c - pieces of setup on a worker thread (bgjob.h): one thread at a
 * time runs the jobs started, in order; a job not yet begun when it is
 * waited for is run by the waiter instead; the thread ends when none is
 * left and is joined by the last wait. */
#include "bgjob.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

enum { JOB_QUEUED = 1, JOB_RUNNING, JOB_DONE };

/* The worker and its queue, under mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER; /* a job done, the worker ending */
static struct bgjob *head, *tail;
static size_t pending; /* started and not done: queued or running */
static pthread_t worker;
static bool alive;     /* a worker thread exists, not yet joined */
static bool ending;    /* it found nothing left and is returning */
static bool steered;   /* it started away from its creator's CPU */
static atomic_bool took_back; /* it has the whole set again */
static cpu_set_t cpus;  /* the creator's whole set, when steered */

/* j, off the queue, run by the calling thread (mu held; dropped while it
 * runs), then done: its waiters are told. */
static void run_here(struct bgjob *j)
{
	j->state = JOB_RUNNING;
	pthread_mutex_unlock(&mu);
	j->r = j->fn(j->arg, &j->e);
	pthread_mutex_lock(&mu);
	j->state = JOB_DONE;
	pending--;
	pthread_cond_broadcast(&changed);
}

static void *work(void *unused)
{
	(void)unused;
	if (steered) {
		pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
		atomic_store(&took_back, true);
	}
	pthread_mutex_lock(&mu);
	while (head) {
		struct bgjob *j = head;
		head = j->next;
		if (!head)
			tail = NULL;
		run_here(j);
	}
	ending = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* The attributes of a thread to start on a CPU of the caller's set (cpus,
 * of more than one) other than the one it runs on (bgjob.h); false when
 * that CPU is not known. */
static bool steer(pthread_attr_t *a)
{
	int cpu = sched_getcpu();
	if (cpu < 0 || !CPU_ISSET(cpu, &cpus))
		return false;
	cpu_set_t others = cpus;
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

/* A worker that is returning joined (mu held; dropped meanwhile). */
static void join_ended(void)
{
	if (!alive || !ending)
		return;
	pthread_t t = worker;
	alive = ending = false;
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	pthread_mutex_lock(&mu);
}

/* A worker for the queue (mu held): false when none can be made, or
 * when it could run only on the caller's CPU (bgjob.h). */
static bool worker_up(void)
{
	join_ended();
	if (alive)
		return true;
	bool known = sched_getaffinity(0, sizeof cpus, &cpus) == 0;
	if (known && CPU_COUNT(&cpus) < 2)
		return false;
	pthread_attr_t a;
	bool attr = pthread_attr_init(&a) == 0;
	steered = attr && known && steer(&a);
	atomic_store(&took_back, false);
	alive = thread_create_blocked(&worker, attr ? &a : NULL, work, NULL) == 0;
	if (attr)
		pthread_attr_destroy(&a);
	return alive;
}

/* j taken off the queue (mu held). */
static void unqueue(struct bgjob *j)
{
	struct bgjob **p = &head, *prev = NULL;
	while (*p && *p != j) {
		prev = *p;
		p = &(*p)->next;
	}
	if (!*p)
		return;
	*p = j->next;
	if (tail == j)
		tail = prev;
}

void bgjob_start(struct bgjob *j, int (*fn)(void *, struct werr *), void *arg)
{
	*j = (struct bgjob){ .fn = fn, .arg = arg, .started = true, .state = JOB_QUEUED };
	pthread_mutex_lock(&mu);
	if (tail)
		tail->next = j;
	else
		head = j;
	tail = j;
	pending++;
	if (!worker_up()) {
		/* no thread to be had, or none worth its start: the work
		 * runs now, in the caller */
		unqueue(j);
		run_here(j);
	}
	pthread_mutex_unlock(&mu);
}

/* The worker not running yet: the caller's CPU, which now waits, is its
 * too (bgjob.h; mu held). */
static void give_back(void)
{
	if (alive && steered && !atomic_load(&took_back))
		pthread_setaffinity_np(worker, sizeof cpus, &cpus);
}

int bgjob_wait(struct bgjob *j, struct werr *e)
{
	if (!j->started)
		return 0;
	pthread_mutex_lock(&mu);
	if (j->state == JOB_QUEUED) {
		/* not begun: the waiter runs it rather than wait for the
		 * jobs before it */
		unqueue(j);
		run_here(j);
	} else if (j->state == JOB_RUNNING) {
		give_back();
		while (j->state != JOB_DONE)
			pthread_cond_wait(&changed, &mu);
	}
	/* nothing left: the worker joined, so that no thread of it
	 * survives into a fork that follows (bgjob.h) */
	if (!pending && alive) {
		give_back(); /* (it may not have begun: every job ran here) */
		while (!ending)
			pthread_cond_wait(&changed, &mu);
		join_ended();
	}
	pthread_mutex_unlock(&mu);
	if (j->r < 0 && e)
		*e = j->e;
	return j->r;
}

void bgjob_join(struct bgjob *j)
{
	bgjob_wait(j, NULL);
}

bool bgjob_idle(void)
{
	pthread_mutex_lock(&mu);
	bool idle = !alive && !pending;
	pthread_mutex_unlock(&mu);
	return idle;
}
