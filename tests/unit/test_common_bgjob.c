/* test_common_bgjob.c - unit tests of a job on a thread of its own
 * (src/common/bgjob.c): its result and error reach the waiter; started
 * away from the caller's CPU when the caller may use another, it runs with
 * the caller's whole set of CPUs (never kept from one that is free), and
 * the caller's own set is left as it was; a caller bound to one CPU still
 * gets its job done, there. Its thread, and one of thread_create_blocked,
 * blocks every signal, and the caller's signal mask is left as it was. */
#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <string.h>

#include "src/common/bgjob.h"
#include "check.h"

struct seen {
	int cpu;           /* where the job's first instruction ran */
	cpu_set_t set;     /* its set of CPUs while it ran */
	int fail;          /* return -1 with this errno */
	atomic_bool ran;   /* set once it has looked */
};

static int job(void *arg, struct werr *e)
{
	struct seen *s = arg;
	s->cpu = sched_getcpu();
	sched_getaffinity(0, sizeof s->set, &s->set);
	atomic_store(&s->ran, true);
	if (s->fail)
		return werr_set(e, s->fail, "the job failed on purpose");
	return 0;
}

static void test_result(void)
{
	struct seen s = { .fail = EIO };
	struct bgjob j;
	struct werr e = { 0 };
	bgjob_start(&j, job, &s);
	CHECK(bgjob_wait(&j, &e) == -1 && e.errnum == EIO && strstr(e.msg, "on purpose"));
	s.fail = 0;
	bgjob_start(&j, job, &s);
	CHECK(bgjob_wait(&j, &e) == 0);
	/* waiting for a job never started, or a second time: 0 */
	struct bgjob none = { 0 };
	CHECK(bgjob_wait(&none, NULL) == 0 && bgjob_wait(&j, NULL) == 0);
}

static void test_cpus(void)
{
	cpu_set_t mine;
	CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0);
	int away = 0, rounds = 20;
	for (int i = 0; i < rounds; i++) {
		struct seen s = { .cpu = -1 };
		struct bgjob j;
		int here = sched_getcpu();
		bgjob_start(&j, job, &s);
		/* half the rounds wait for the job to have run before joining
		 * (it took its set back itself), half join at once (the join
		 * may give it back first) */
		for (int k = 0; i % 2 && k < 2000 && !atomic_load(&s.ran); k++)
			nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
		CHECK(bgjob_wait(&j, NULL) == 0);
		CHECK(CPU_EQUAL(&s.set, &mine)); /* the whole set, taken back */
		away += s.cpu != here;
		cpu_set_t now;
		CHECK(sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &mine));
	}
	/* with another CPU to go to, the jobs start there (a few may not:
	 * the caller itself can move between its look and the start) */
	if (CPU_COUNT(&mine) > 1)
		CHECK(away >= rounds * 3 / 4);
	else
		printf("# one CPU here: where a job starts is not checked\n");

	/* a caller bound to one CPU: the job runs there, with that set */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
	struct seen s = { .cpu = -1 };
	struct bgjob j;
	bgjob_start(&j, job, &s);
	CHECK(bgjob_wait(&j, NULL) == 0);
	CHECK(CPU_EQUAL(&s.set, &one) && CPU_ISSET(s.cpu, &one));
	CHECK(sched_setaffinity(0, sizeof mine, &mine) == 0);
}

/* Every signal that can be blocked is, in the thread. */
static bool all_blocked(void)
{
	sigset_t now;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && !sigismember(&now, sig))
			return false;
	return sigismember(&now, SIGRTMAX);
}

static int mask_job(void *arg, struct werr *e)
{
	(void)e;
	*(bool *)arg = all_blocked();
	return 0;
}

static void *mask_thread(void *arg)
{
	*(bool *)arg = all_blocked();
	return NULL;
}

static void test_signals(void)
{
	sigset_t usr1, before, after;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_SETMASK, &usr1, &before);
	bool blocked = false;
	struct bgjob j;
	bgjob_start(&j, mask_job, &blocked);
	CHECK(bgjob_wait(&j, NULL) == 0 && blocked);
	pthread_t t;
	blocked = false;
	CHECK(thread_create_blocked(&t, NULL, mask_thread, &blocked) == 0);
	CHECK(pthread_join(t, NULL) == 0 && blocked);
	/* the caller's mask as it was: SIGUSR1 only */
	pthread_sigmask(SIG_SETMASK, &before, &after);
	CHECK(sigismember(&after, SIGUSR1) && !sigismember(&after, SIGTERM) &&
	      !sigismember(&after, SIGCHLD));
}

int main(void)
{
	test_result();
	test_cpus();
	test_signals();
	return check_status();
}
