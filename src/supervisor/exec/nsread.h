/* nsread.h - files the supervisor may not read, opened for reading all the
 * same: an execute-only file (mode 0111) the agent made, when warden runs
 * unprivileged. The supervisor owns the sandbox's user namespace; a helper
 * process forked into it (src/sandbox/nshelper.c) holds every capability
 * there, CAP_DAC_READ_SEARCH among them, over the files whose owner and
 * group the namespace maps: the agent's own. It is given an O_PATH fd and
 * gives back the same file opened O_RDONLY, nothing else. Started on first
 * use; thread-safe (the hash workers call it, one request at a time). */
#pragma once
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>

struct nsread;

/* A reader for the user namespace whose file is userns (duplicated; -1:
 * none, every open then fails with EACCES). */
struct nsread *nsread_new(int userns);
void nsread_free(struct nsread *r);

/* The file open at fd (O_PATH), opened O_RDONLY | O_NONBLOCK inside the
 * sandbox's user namespace; -1 with errno when it cannot be (EACCES: not
 * even there, ETIMEDOUT: no answer before deadline, CLOCK_MONOTONIC). */
int nsread_open(struct nsread *r, int fd, const struct timespec *deadline);

/* The file open at fd (O_PATH) opened O_RDONLY | O_NONBLOCK: directly
 * (/proc/self/fd), else, when that is refused (EACCES, EPERM) and r is
 * not NULL, through r as nsread_open. -1 with errno. */
static inline int nsread_reopen(struct nsread *r, int fd, const struct timespec *deadline)
{
	char self[32];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	int rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (rfd < 0 && (errno == EACCES || errno == EPERM) && r)
		rfd = nsread_open(r, fd, deadline);
	return rfd;
}
