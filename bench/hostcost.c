/* hostcost.c - what this host charges for the things a sandbox's start is
 * made of, so that startup ratios measured on different machines can be
 * read side by side (bench/startup prints it; bench/README.md, "Noon,
 * 2026-12-01"):
 *
 *   hostcost
 *
 * prints one line, "syscall_ns fault_ns touch_ns cow_ns", each the median
 * of 9 trials:
 *   syscall_ns  one getppid(2);
 *   fault_ns    one new anonymous page written: the page fault, the page
 *               zeroed, and its first use;
 *   touch_ns    the first write to an anonymous page whose page table
 *               entry is already there (MADV_POPULATE_WRITE beforehand): on
 *               bare metal and most VMs a few nanoseconds; where the
 *               hypervisor keeps shadow page tables, microseconds (seen on
 *               a PVM guest); -1
 *               when the kernel has no MADV_POPULATE_WRITE (before 5.14);
 *   cow_ns      one page written that a forked child still shares (copy on
 *               write): what a process pays for each page it writes while a
 *               fork of it lives (warden's init and file-read helper are
 *               forks of the supervisor).
 * Exits 1 when memory or a process cannot be had. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define TRIALS 9
#define PAGES 256
#define CALLS 20000

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

static long long median(long long *v)
{
	qsort(v, TRIALS, sizeof *v, cmp_ll);
	return v[TRIALS / 2];
}

static long long syscall_ns(void)
{
	long long t0 = now_ns();
	for (int i = 0; i < CALLS; i++)
		(void)getppid();
	return (now_ns() - t0) / CALLS;
}

/* Each of the PAGES pages of m written with v: the time per page. */
static long long write_pages(volatile char *m, long page, char v)
{
	long long t0 = now_ns();
	for (size_t o = 0; o < (size_t)page * PAGES; o += (size_t)page)
		m[o] = v;
	return (now_ns() - t0) / PAGES;
}

/* Each page of a fresh mapping written once; populate: mapped first.
 * The time per page, or -1 (errno) when it cannot be measured. */
static long long page_ns(long page, int populate)
{
	size_t len = (size_t)page * PAGES;
	volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	if (populate && madvise((void *)m, len, MADV_POPULATE_WRITE) < 0) {
		int err = errno;
		munmap((void *)m, len);
		errno = err;
		return -1;
	}
	long long ns = write_pages(m, page, 1);
	munmap((void *)m, len);
	return ns;
}

/* Each page of a mapping written before a fork, written again while the
 * child lives: the time per page, or -1 (errno). */
static long long cow_ns(long page)
{
	size_t len = (size_t)page * PAGES;
	volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	write_pages(m, page, 1);
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	long long ns = -1;
	if (pid > 0) {
		ns = write_pages(m, page, 2);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	munmap((void *)m, len);
	return ns;
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	long long sc[TRIALS], fault[TRIALS], touch[TRIALS], cow[TRIALS];
	int have_touch = 1;
	for (int i = 0; i < TRIALS; i++) {
		sc[i] = syscall_ns();
		if ((fault[i] = page_ns(page, 0)) < 0 || (cow[i] = cow_ns(page)) < 0) {
			perror("hostcost: mmap or fork");
			return 1;
		}
		if (have_touch && (touch[i] = page_ns(page, 1)) < 0) {
			if (errno != EINVAL) {
				perror("hostcost: mmap");
				return 1;
			}
			have_touch = 0; /* no MADV_POPULATE_WRITE here */
		}
	}
	printf("%lld %lld %lld %lld\n", median(sc), median(fault), have_touch ? median(touch) : -1,
	       median(cow));
	return 0;
}
