/* flushcost.c - what a page copied on write costs with a second CPU to
 * flush, measured once a boot and kept (flushcost.h). */
#include "flushcost.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpupin.h"
#include "util.h"

#define MAGIC "warden-flushcost 1 "
#define PAGES 32
#define PAGE 4096
#define ROUNDS 3
#define SPIN_MAX_NS 500000000ull /* a spinner's longest life, should its parent stop */
#define WAIT_S 2                  /* the measuring process's */

static int on_cpu(pid_t pid, int cpu)
{
	cpu_set_t s = cpupin_one(cpu);
	return sched_setaffinity(pid, sizeof s, &s);
}

static void reap_killed(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A fork busy on cpu until killed (or SPIN_MAX_NS), returned once it runs
 * there; -1 when it could not be had. */
static pid_t spinner(int cpu)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (on_cpu(0, cpu) < 0)
			_exit(1);
		(void)!write(p[1], "s", 1);
		uint64_t end = mono_ns() + SPIN_MAX_NS;
		while (mono_ns() < end)
			;
		_exit(0);
	}
	close(p[1]);
	char c;
	ssize_t n = pid > 0 ? read(p[0], &c, 1) : -1;
	close(p[0]);
	if (pid > 0 && n != 1) {
		reap_killed(pid);
		return -1;
	}
	return pid;
}

/* Nanoseconds a page: each page of m written while shared, copy on write,
 * with a spinner on cpu; the cheapest of ROUNDS, 0 when no spinner. */
static unsigned long copies(volatile char *m, int cpu)
{
	uint64_t best = UINT64_MAX;
	for (int r = 0; r < ROUNDS; r++) {
		pid_t s = spinner(cpu);
		if (s < 0)
			return 0;
		uint64_t t0 = mono_ns();
		for (size_t i = 0; i < PAGES; i++)
			m[i * PAGE]++;
		uint64_t t = (mono_ns() - t0) / PAGES;
		reap_killed(s);
		if (t < best)
			best = t;
	}
	return best ? (unsigned long)best : 1;
}

static void *nothing(void *arg)
{
	return arg;
}

/* A thread of this process run on cpu, and ended. */
static bool thread_on(int cpu)
{
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0)
		return false;
	cpu_set_t s = cpupin_one(cpu);
	pthread_t t;
	bool ok = pthread_attr_setaffinity_np(&a, sizeof s, &s) == 0 &&
		  pthread_create(&t, &a, nothing, NULL) == 0;
	pthread_attr_destroy(&a);
	return ok && pthread_join(t, NULL) == 0;
}

/* The measuring process's body (on one CPU since birth): its figures to
 * fd. */
static void measure_child(int fd, int other)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct flushcost fc = { 0 };
	char *m = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		memset(m, 1, PAGES * PAGE);
		fc.local_ns = copies(m, other);
		if (fc.local_ns && thread_on(other))
			fc.remote_ns = copies(m, other);
	}
	(void)!write(fd, &fc, sizeof fc);
	_exit(0);
}

/* Another CPU than cpu in set, or -1. */
static int other_cpu(const cpu_set_t *set, int cpu)
{
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (i != cpu && CPU_ISSET(i, set))
			return i;
	return -1;
}

bool flushcost_measure(struct flushcost *fc)
{
	*fc = (struct flushcost){ 0 };
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) < 0 || CPU_COUNT(&set) < 2)
		return false;
	int cpu = cpupin_current(&set);
	int other = cpu >= 0 ? other_cpu(&set, cpu) : -1;
	int p[2];
	if (other < 0 || pipe2(p, O_CLOEXEC) < 0)
		return false;
	/* born on cpu alone: no CPU but that one has run its memory. The
	 * caller's set narrowed around the fork, and given back. */
	pid_t pid = -1;
	if (on_cpu(0, cpu) == 0) {
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			measure_child(p[1], other);
		}
		(void)sched_setaffinity(0, sizeof set, &set);
	}
	close(p[1]);
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	bool got = false;
	if (pid > 0) {
		struct timespec end = mono_now();
		end.tv_sec += WAIT_S;
		int r;
		while ((r = poll(&pf, 1, (int)ms_left(&end))) < 0 && errno == EINTR)
			;
		got = r == 1 && read(p[0], fc, sizeof *fc) == (ssize_t)sizeof *fc;
		reap_killed(pid);
	}
	close(p[0]);
	return got && fc->local_ns && fc->remote_ns;
}

bool flushcost_pin_pays(const struct flushcost *fc)
{
	return fc->remote_ns >= 2 * fc->local_ns;
}

void flushcost_format(char *buf, size_t len, const char *boot, const struct flushcost *fc)
{
	snprintf(buf, len, MAGIC "%s %lu %lu\n", boot, fc->local_ns, fc->remote_ns);
}

int flushcost_parse(const char *text, const char *boot, struct flushcost *fc)
{
	size_t m = strlen(MAGIC), b = strlen(boot);
	if (!b || strchr(boot, ' ') || strncmp(text, MAGIC, m) != 0 ||
	    strncmp(text + m, boot, b) != 0 || text[m + b] != ' ')
		return -1;
	const char *p = text + m + b + 1;
	unsigned long v[2];
	for (int i = 0; i < 2; i++) {
		size_t n = strspn(p, "0123456789");
		if (n == 0 || n > 12)
			return -1;
		v[i] = strtoul(p, NULL, 10);
		p += n;
		if (v[i] == 0 || *p++ != (i == 0 ? ' ' : '\n'))
			return -1;
	}
	if (*p)
		return -1;
	*fc = (struct flushcost){ .local_ns = v[0], .remote_ns = v[1] };
	return 0;
}

bool flushcost_get(const char *dir, struct flushcost *fc)
{
	char boot[64];
	_cleanup_close_ int dirfd = -1;
	if (dir && kernel_boot_id(boot, sizeof boot) && mkdir_p(dir, 0700, NULL) == 0)
		dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd >= 0) {
		size_t len;
		_cleanup_free_ char *kept = read_regular_at(dirfd, FLUSHCOST_FILE, O_NOFOLLOW, 160,
							     &len, NULL);
		if (kept && flushcost_parse(kept, boot, fc) == 0)
			return true;
	}
	if (!flushcost_measure(fc))
		return false;
	if (dirfd >= 0) {
		char text[160];
		flushcost_format(text, sizeof text, boot, fc);
		(void)replace_beneath(dirfd, FLUSHCOST_FILE, text);
	}
	return true;
}
