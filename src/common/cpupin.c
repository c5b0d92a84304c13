/* cpupin.c - the supervisor on one CPU, the sandbox on all of the user's
 * (cpupin.h). */
#include "cpupin.h"

#include <sched.h>
#include <stdbool.h>

static cpu_set_t kept;
static bool pinned;
static int own = -1; /* the CPU pinned to (pinned: never -1) */

void cpupin_start(void)
{
	if (pinned || sched_getaffinity(0, sizeof kept, &kept) < 0 || CPU_COUNT(&kept) < 2)
		return;
	int cpu = cpupin_current(&kept);
	if (cpu < 0)
		return;
	cpu_set_t one = cpupin_one(cpu);
	pinned = sched_setaffinity(0, sizeof one, &one) == 0;
	own = pinned ? cpu : -1;
}

cpu_set_t cpupin_one(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return s;
}

int cpupin_current(const cpu_set_t *set)
{
	int cpu = sched_getcpu();
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, set) ? cpu : -1;
}

void cpupin_release(pid_t pid)
{
	if (pinned)
		(void)sched_setaffinity(pid, sizeof kept, &kept);
}

void cpupin_apart(pid_t pid)
{
	if (!pinned)
		return;
	cpu_set_t other = kept;
	CPU_CLR(own, &other);
	(void)sched_setaffinity(pid, sizeof other, CPU_COUNT(&other) ? &other : &kept);
}

bool cpupin_clone_begin(void)
{
	return pinned && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
					    &(struct sched_param){ .sched_priority = 1 }) == 0;
}

void cpupin_clone_end(bool began)
{
	if (began)
		(void)sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ .sched_priority = 0 });
}

void cpupin_widen(void)
{
	if (pinned)
		(void)sched_setaffinity(0, sizeof kept, &kept);
}

void cpupin_thread_attr(pthread_attr_t *a)
{
	if (pinned)
		(void)pthread_attr_setaffinity_np(a, sizeof kept, &kept);
}
