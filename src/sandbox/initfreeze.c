/* initfreeze.c - init's freeze by signals that holds (sandbox.h,
 * SANDBOX_SIG_FREEZE; used without the session's cgroup, whose freezer is
 * the kernel's and needs none of this). One kill(-1, SIGSTOP) stops every
 * process of the namespace at once, but a process that has not stopped
 * yet (inside a system call when it came) can continue the others with a
 * SIGCONT of its own, and a process can have the kernel continue it later
 * (a POSIX timer or F_SETSIG whose signal is SIGCONT). So the freeze looks:
 * /proc read until every process but init has stopped (or ended, or waits
 * in the kernel, where it stops before it runs anything of its own), in
 * two reads a row, SIGSTOP sent again to all before each new look, for
 * FREEZE_BUDGET_MS at most; and while frozen init looks again every
 * FREEZE_RECHECK_MS: a process found
 * running then was continued by something set up to outlast a freeze (a
 * timer, an I/O signal set to SIGCONT), and init kills every process of
 * the sandbox at once and tells the supervisor (a freeze that does not
 * hold is no freeze; the supervisor may be stopped itself, suspended). */
#include "initfreeze.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"

/* Whether the thread whose stat is at path (beneath proc) is stopped: its
 * state (after the last ')', the name may hold any). One gone meanwhile
 * is; one that cannot be read is not (fail closed). */
static bool stopped(int proc, const char *path)
{
	char buf[512];
	int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	const char *end = strrchr(buf, ')');
	if (!end || end[1] != ' ')
		return false;
	/* T stopped, t traced, Z X ended, D in the kernel: it takes the
	 * SIGSTOP it has before it runs any code of its own again */
	return strchr("TtZXD", end[2]) != NULL;
}

/* Whether every thread of the process /proc/NAME is stopped: each one's,
 * not the process's stat alone, whose state is its first thread's (which
 * may have ended, a zombie, while the others run). */
static bool threads_stopped(int proc, const char *name)
{
	char path[300];
	snprintf(path, sizeof path, "%s/task", name);
	int fd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	bool all = true;
	struct dirent *de;
	while (all && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/stat", de->d_name);
		all = stopped(dirfd(d), path);
	}
	closedir(d);
	return all;
}

/* Every process of the namespace but init stopped (one that /proc cannot
 * show is not: fail closed). */
static bool all_stopped(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	bool all = true;
	struct dirent *de;
	while (all && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 1)
			continue;
		all = threads_stopped(dirfd(d), de->d_name);
	}
	closedir(d);
	return all;
}

static void pause_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

int initfreeze_stop(void)
{
	double t0 = mono_ms();
	if (kill(-1, SIGSTOP) < 0)
		return errno; /* ESRCH: nothing but init */
	int clean = 0;
	while (mono_ms() - t0 < FREEZE_BUDGET_MS) {
		if (all_stopped()) {
			if (++clean == 2)
				return 0;
		} else {
			clean = 0;
			kill(-1, SIGSTOP);
		}
		pause_ms(1);
	}
	return EAGAIN;
}

static bool initfreeze_recheck(void)
{
	if (all_stopped())
		return false;
	initfreeze_stop();
	return true;
}

long initfreeze_next(struct timespec *next, bool *escaped)
{
	*escaped = false;
	if (next->tv_sec == 0 && next->tv_nsec == 0)
		*next = mono_after_ms(FREEZE_RECHECK_MS);
	long left = ms_left(next);
	if (left > 0)
		return left;
	*escaped = initfreeze_recheck();
	*next = mono_after_ms(FREEZE_RECHECK_MS);
	return FREEZE_RECHECK_MS;
}
