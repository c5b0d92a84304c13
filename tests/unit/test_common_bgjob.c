/* test_common_bgjob.c - unit tests of the jobs run on a worker thread
 * (src/common/bgjob.c): a job's result and error reach the waiter; the
 * worker runs the jobs in the order they were started, and a job not begun
 * when it is waited for is run by the waiter instead; a job may start and
 * wait for another; once every job has been waited for no thread is left
 * (what the session makes sure of before it forks); the worker starts away
 * from the caller's CPU when the caller may use another, runs with the
 * caller's whole set of CPUs (never kept from one that is free), and the
 * caller's own set is left as it was; a caller bound to one CPU gets its
 * job done at once, in itself (no worker: no thread is made); with no
 * thread to be had, each job runs in its starter. The worker, and a thread of thread_create_blocked,
 * block every signal (a job the waiter runs has the waiter's mask), and
 * the caller's signal mask is left as it was. */
#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/bgjob.h"
#include "check.h"

struct seen {
	int cpu;           /* where the job's first instruction ran */
	cpu_set_t set;     /* its set of CPUs while it ran */
	pthread_t by;      /* the thread that ran it */
	int fail;          /* return -1 with this errno */
	atomic_bool *hold; /* when set: wait until it is false */
	atomic_int *order; /* when set: the job's turn, from this counter */
	int turn;
	atomic_bool ran;   /* set once it has looked */
	atomic_int runs;   /* how many times it ran */
};

static int threads(void);

static void pause_ms(long ms)
{
	nanosleep(&(struct timespec){ .tv_nsec = ms * 1000 * 1000 }, NULL);
}

static int job(void *arg, struct werr *e)
{
	struct seen *s = arg;
	s->cpu = sched_getcpu();
	s->by = pthread_self();
	atomic_fetch_add(&s->runs, 1);
	sched_getaffinity(0, sizeof s->set, &s->set);
	if (s->order)
		s->turn = atomic_fetch_add(s->order, 1);
	for (int k = 0; s->hold && k < 5000 && atomic_load(s->hold); k++)
		pause_ms(1);
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
		/* half the rounds wait for the worker to have run the job
		 * (it took its set back itself), half wait at once (the wait
		 * runs it, or gives the worker its set back first) */
		for (int k = 0; i % 2 && k < 2000 && !atomic_load(&s.ran); k++)
			pause_ms(1);
		CHECK(bgjob_wait(&j, NULL) == 0);
		CHECK(CPU_EQUAL(&s.set, &mine)); /* the whole set, taken back */
		if (i % 2)
			away += s.cpu != here;
		cpu_set_t now;
		CHECK(sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &mine));
	}
	/* with another CPU to go to, the worker starts there (a few may
	 * not: the caller itself can move between its look and the start) */
	if (CPU_COUNT(&mine) > 1)
		CHECK(away >= rounds / 2 * 3 / 4);
	else
		printf("# one CPU here: where a job starts is not checked\n");

	/* a caller bound to one CPU: the job runs there, with that set */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
	struct seen s = { .cpu = -1 };
	struct bgjob j;
	int before = threads();
	bgjob_start(&j, job, &s);
	CHECK(atomic_load(&s.ran) && threads() == before); /* run in the starter */
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

struct masked {
	bool blocked;
	atomic_bool ran;
};

static int mask_job(void *arg, struct werr *e)
{
	(void)e;
	struct masked *m = arg;
	m->blocked = all_blocked();
	atomic_store(&m->ran, true);
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
	struct masked m = { .blocked = false };
	struct bgjob j;
	bgjob_start(&j, mask_job, &m);
	/* run by the worker (a job the waiter runs has the waiter's mask) */
	for (int k = 0; k < 5000 && !atomic_load(&m.ran); k++)
		pause_ms(1);
	CHECK(bgjob_wait(&j, NULL) == 0 && m.blocked);
	pthread_t t;
	bool blocked = false;
	CHECK(thread_create_blocked(&t, NULL, mask_thread, &blocked) == 0);
	CHECK(pthread_join(t, NULL) == 0 && blocked);
	/* the caller's mask as it was: SIGUSR1 only */
	pthread_sigmask(SIG_SETMASK, &before, &after);
	CHECK(sigismember(&after, SIGUSR1) && !sigismember(&after, SIGTERM) &&
	      !sigismember(&after, SIGCHLD));
}

/* The threads of this process, from /proc/self/status. */
static int threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* Only the caller's thread left: a joined thread is gone for pthread_join
 * (its tid cleared) a moment before the kernel counts it out of the
 * process, so the count is given that moment. */
static bool only_this_thread(void)
{
	for (int k = 0; k < 2000; k++) {
		if (threads() == 1)
			return true;
		pause_ms(1);
	}
	return false;
}

/* In order on the worker; one waited for before the worker reached it is
 * run by the waiter; no thread left once all are waited for. */
static void test_order(void)
{
	atomic_bool hold = true;
	atomic_int order = 0;
	struct seen a = { .hold = &hold, .order = &order }, b = { .order = &order },
		    c = { .order = &order }, d = { .order = &order };
	struct bgjob ja, jb, jc, jd;
	bgjob_start(&ja, job, &a);
	bgjob_start(&jb, job, &b);
	bgjob_start(&jc, job, &c);
	bgjob_start(&jd, job, &d);
	for (int k = 0; k < 5000 && atomic_load(&order) == 0; k++)
		pause_ms(1); /* a begun */
	/* a holds the worker: c, waited for, runs here at once */
	CHECK(bgjob_wait(&jc, NULL) == 0 && atomic_load(&c.ran));
	CHECK(pthread_equal(c.by, pthread_self()) && !atomic_load(&b.ran));
	atomic_store(&hold, false);
	for (int k = 0; k < 5000 && !atomic_load(&d.ran); k++)
		pause_ms(1);
	/* then a, b and d on the worker, in their order */
	CHECK(atomic_load(&d.ran) && !pthread_equal(b.by, pthread_self()) &&
	      pthread_equal(a.by, b.by) && pthread_equal(b.by, d.by));
	CHECK(a.turn == 0 && c.turn == 1 && b.turn == 2 && d.turn == 3);
	CHECK(bgjob_wait(&ja, NULL) == 0 && bgjob_wait(&jb, NULL) == 0);
	CHECK(bgjob_wait(&jd, NULL) == 0);
	CHECK(only_this_thread());
}

/* A job that starts another and waits for it. */
static int parent_job(void *arg, struct werr *e)
{
	(void)e;
	struct seen *child = arg;
	struct bgjob j;
	bgjob_start(&j, job, child);
	return bgjob_wait(&j, NULL);
}

static void test_nested(void)
{
	struct seen child = { 0 };
	struct bgjob j;
	bgjob_start(&j, parent_job, &child);
	CHECK(bgjob_wait(&j, NULL) == 0 && atomic_load(&child.ran));
	CHECK(only_this_thread());
}

/* No thread to be had (RLIMIT_NPROC at 0, as nobody when root: root is
 * not held to it): each job runs in its starter, its result kept; a
 * child process tries it. */
static void test_no_thread(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(3);
		struct rlimit was;
		if (getrlimit(RLIMIT_NPROC, &was) < 0 || was.rlim_max == 0 ||
		    setrlimit(RLIMIT_NPROC, &(struct rlimit){ 0, was.rlim_max }) < 0)
			_exit(3);
		struct seen a = { .fail = EPERM }, b = { 0 }, c = { 0 };
		struct bgjob ja, jb, jc;
		struct werr e = { 0 };
		bgjob_start(&ja, job, &a);
		bgjob_start(&jb, job, &b);
		bool here = atomic_load(&a.ran) && atomic_load(&b.ran) &&
			    pthread_equal(a.by, pthread_self()) && pthread_equal(b.by, pthread_self());
		bool results = bgjob_wait(&ja, &e) == -1 && e.errnum == EPERM &&
			       bgjob_wait(&jb, NULL) == 0;
		/* threads again: a worker runs what it is given, and nothing
		 * of the jobs that ran in their starter is left for it */
		if (setrlimit(RLIMIT_NPROC, &(struct rlimit){ was.rlim_max, was.rlim_max }) < 0)
			_exit(3);
		bgjob_start(&jc, job, &c);
		for (int k = 0; k < 5000 && !atomic_load(&c.ran); k++)
			pause_ms(1);
		bool later = bgjob_wait(&jc, NULL) == 0 && !pthread_equal(c.by, pthread_self()) &&
			     a.runs == 1 && b.runs == 1 && c.runs == 1;
		_exit(here && results && later && only_this_thread() ? 0 : 1);
	}
	int st = -1;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		printf("# no thread: could not drop to nobody or set RLIMIT_NPROC here: not checked\n");
	else
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	test_result();
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < 2) {
		/* a caller on one CPU gets no worker (bgjob.h) */
		printf("# one CPU here: no worker; its order, mask and limits are not checked\n");
		test_nested();
		test_cpus();
		return check_status();
	}
	test_no_thread();
	test_order();
	test_nested();
	test_cpus();
	test_signals();
	return check_status();
}
