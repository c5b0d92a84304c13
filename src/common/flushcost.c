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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define MAGIC "warden-flushcost 1 "
#define PAGES 32
#define PAGE 4096
#define ROUNDS 3
#define SPIN_MAX_NS 500000000ull /* a spinner's longest life, should its parent stop */
#define WAIT_MS 2000             /* the measuring process's */

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int on_cpu(pid_t pid, int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
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
		uint64_t end = now_ns() + SPIN_MAX_NS;
		while (now_ns() < end)
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
		uint64_t t0 = now_ns();
		for (size_t i = 0; i < PAGES; i++)
			m[i * PAGE]++;
		uint64_t t = (now_ns() - t0) / PAGES;
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
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
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
	int cpu = sched_getcpu();
	int other = cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set) ? other_cpu(&set, cpu) : -1;
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
		uint64_t end = now_ns() + WAIT_MS * 1000000ull;
		int r;
		do {
			uint64_t t = now_ns();
			r = t >= end ? 0 : poll(&pf, 1, (int)((end - t) / 1000000ull) + 1);
		} while (r < 0 && errno == EINTR);
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

/* dir/FLUSHCOST_FILE read when it is a regular file: its text, or "". */
static void read_kept(int dirfd, char *buf, size_t len)
{
	buf[0] = '\0';
	_cleanup_close_ int fd = openat(dirfd, FLUSHCOST_FILE,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	ssize_t n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

bool flushcost_get(const char *dir, struct flushcost *fc)
{
	char boot[64];
	_cleanup_close_ int dirfd = -1;
	if (dir && kernel_boot_id(boot, sizeof boot) && mkdir_p(dir, 0700, NULL) == 0)
		dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char text[160];
	if (dirfd >= 0) {
		read_kept(dirfd, text, sizeof text);
		if (flushcost_parse(text, boot, fc) == 0)
			return true;
	}
	if (!flushcost_measure(fc))
		return false;
	if (dirfd >= 0) {
		flushcost_format(text, sizeof text, boot, fc);
		(void)replace_beneath(dirfd, FLUSHCOST_FILE, text);
	}
	return true;
}
