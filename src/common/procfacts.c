/* procfacts.c - facts about a host process read from its /proc/PID/status
 * or stat, or translated by the kernel (procfacts.h). */
#include "procfacts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Linux 6.11's pid translation on a pid namespace's fd (not in every
 * distribution's headers yet) */
/* Linux 6.13's PIDFD_GET_INFO, its first size */
struct pidfd_info0 {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid, spare0;
};
#define PIDFD_GET_INFO0 _IOWR(0xFF, 11, struct pidfd_info0)
#define PIDFD_INFO_PID0 1ULL

#ifndef NS_GET_TGID_FROM_PIDNS
#define NS_GET_TGID_FROM_PIDNS _IOR(NSIO, 0x7, int)
#endif
#ifndef NS_GET_PID_IN_PIDNS
#define NS_GET_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#endif

/* /proc/HOST/NAME's text into buf (NUL-terminated); false when gone. */
static bool read_proc(pid_t host, const char *name, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)host, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

void target_status(pid_t host, long *inner, pid_t *ppid_host, pid_t *tgid, int *threads)
{
	char buf[4096];
	*inner = -1;
	if (ppid_host)
		*ppid_host = 0;
	if (tgid)
		*tgid = 0;
	if (threads)
		*threads = 0;
	if (!read_proc(host, "status", buf, sizeof buf))
		return;
	for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (ppid_host && strncmp(line, "PPid:", 5) == 0)
			*ppid_host = (pid_t)strtol(line + 5, NULL, 10);
		else if (tgid && strncmp(line, "Tgid:", 5) == 0)
			*tgid = (pid_t)strtol(line + 5, NULL, 10);
		else if (threads && strncmp(line, "Threads:", 8) == 0)
			*threads = (int)strtol(line + 8, NULL, 10);
		else if (strncmp(line, "NSpid:", 6) == 0) {
			char *end = strchr(line, '\n'), *last = line + 6;
			for (char *c = line + 6; c < (end ? end : line + strlen(line)); c++)
				if (*c == '\t' || *c == ' ')
					last = c + 1;
			*inner = strtol(last, NULL, 10);
			if (!threads)
				break; /* NSpid comes after the others but Threads */
		}
	}
}

void target_pid_info(pid_t host, long *inner, pid_t *ppid_host)
{
	target_status(host, inner, ppid_host, NULL, NULL);
}

void target_stat(pid_t host, pid_t *ppid_host, int *threads)
{
	char buf[1024];
	*ppid_host = 0;
	*threads = 0;
	if (!read_proc(host, "stat", buf, sizeof buf))
		return;
	/* "PID (COMM) S PPID ..." where COMM may hold anything, ')' too:
	 * the fields start after the last ')'; threads is the 20th field */
	char *f = strrchr(buf, ')');
	if (!f)
		return;
	f++;
	for (int field = 3; field <= 20 && f; field++) {
		f += strspn(f, " ");
		if (field == 4)
			*ppid_host = (pid_t)strtol(f, NULL, 10);
		else if (field == 20)
			*threads = (int)strtol(f, NULL, 10);
		f = strchr(f, ' ');
	}
}

bool proc_state_start(pid_t host, char *state, unsigned long long *start)
{
	char buf[1024];
	if (!read_proc(host, "stat", buf, sizeof buf))
		return false;
	char *f = strrchr(buf, ')'); /* as target_stat: COMM may hold ')' */
	if (!f || f[1] != ' ')
		return false;
	f += 2;
	if (state)
		*state = *f;
	for (int field = 3; field < 22 && f; field++) {
		f = strchr(f, ' ');
		f = f ? f + 1 : NULL;
	}
	if (!f || !*f)
		return false;
	if (start)
		*start = strtoull(f, NULL, 10);
	return true;
}

/* host's pid in pidns: > 0; -1: gone; -2: no translation here */
static long ns_pid(pid_t host, int pidns)
{
	int in = pidns >= 0 ? ioctl(pidns, NS_GET_PID_IN_PIDNS, (unsigned long)host) : -1;
	return in > 0 ? in : pidns >= 0 && errno == ESRCH ? -1 : -2;
}

long target_inner(pid_t host, int pidns)
{
	long in = ns_pid(host, pidns);
	if (in == -2)
		target_pid_info(host, &in, NULL);
	return in;
}

static void pidns_open(pid_t host, int *pidns)
{
	if (*pidns == -2) {
		char np[64];
		snprintf(np, sizeof np, "/proc/%d/ns/pid", (int)host);
		*pidns = open(np, O_RDONLY | O_CLOEXEC);
	}
}

long target_inner_ns(pid_t host, int *pidns)
{
	pidns_open(host, pidns);
	long in = ns_pid(host, *pidns);
	if (in == -2) {
		if (*pidns >= 0)
			close(*pidns);
		*pidns = -1;
		target_pid_info(host, &in, NULL);
	}
	return in;
}

void target_facts(pid_t host, int *pidns, long *inner, pid_t *ppid_host, pid_t *tgid, int *threads,
		  int *pidfd)
{
	*pidfd = -1;
	pidns_open(host, pidns);
	long in = ns_pid(host, *pidns);
	if (in == -2) {
		if (*pidns >= 0)
			close(*pidns); /* a kernel before 6.11: status from now on */
		*pidns = -1;
		target_status(host, inner, ppid_host, tgid, threads);
		return;
	}
	int tg = in > 0 ? ioctl(*pidns, NS_GET_TGID_FROM_PIDNS, (unsigned long)in) : -1;
	*inner = in;
	*tgid = tg > 0 ? tg : 0;
	if (in > 0) {
		target_stat_fresh(host, ppid_host, threads, pidfd);
	} else {
		*ppid_host = 0;
		*threads = 0;
	}
}

/* The parent from pidfd (PIDFD_GET_INFO) and the threads from the link
 * count of /proc/PID/task: 1; 0 where they cannot be had (no pidfd, the
 * process gone); -1 where the kernel has no PIDFD_GET_INFO. */
static int stat_of_pidfd(pid_t host, int pidfd, pid_t *ppid_host, int *threads)
{
	struct pidfd_info0 in = { .mask = PIDFD_INFO_PID0 };
	char p[64];
	struct statx sx;
	if (pidfd < 0)
		return 0;
	if (ioctl(pidfd, PIDFD_GET_INFO0, &in) != 0)
		return errno == ENOTTY || errno == EINVAL ? -1 : 0;
	snprintf(p, sizeof p, "/proc/%d/task", (int)host);
	/* the task directory's links: 2 and one per thread */
	if (!(in.mask & PIDFD_INFO_PID0) || in.pid != (uint32_t)host ||
	    statx(AT_FDCWD, p, 0, STATX_NLINK, &sx) != 0 || !(sx.stx_mask & STATX_NLINK) ||
	    sx.stx_nlink <= 2)
		return 0;
	*ppid_host = (pid_t)in.ppid;
	*threads = (int)(sx.stx_nlink - 2);
	return 1;
}

void target_stat_pidfd(pid_t host, int pidfd, pid_t *ppid_host, int *threads)
{
	if (stat_of_pidfd(host, pidfd, ppid_host, threads) != 1)
		target_stat(host, ppid_host, threads);
}

void target_stat_fresh(pid_t host, pid_t *ppid_host, int *threads, int *keep)
{
	if (keep)
		*keep = -1;
	/* false once the kernel said it has no PIDFD_GET_INFO: stat from
	 * then on */
	static bool info = true;
	if (info) {
		int pidfd = (int)syscall(SYS_pidfd_open, host, 0);
		int r = stat_of_pidfd(host, pidfd, ppid_host, threads);
		if (pidfd >= 0 && keep)
			*keep = pidfd;
		else if (pidfd >= 0)
			close(pidfd);
		if (r == 1)
			return;
		info = r == 0;
	}
	target_stat(host, ppid_host, threads);
}
