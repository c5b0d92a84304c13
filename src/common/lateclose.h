/* lateclose.h - fds whose close waits on the kernel, closed on a thread of
 * their own while the caller goes on: an fsync waits for the disk, and
 * closing an inotify instance destroys
 * its marks and waits for their SRCU grace period (a flush of the kernel's
 * mark reaper), a millisecond or more on a busy or virtual machine, in the
 * closing thread; a session closes two (the workspace's watch, the
 * decoys') and has other work to do meanwhile (limits, placeholders,
 * sweep, checkpoint, the log and its fsync). Joined before the process
 * forks anything (bgjob.h), and at the latest where the holder goes out of
 * scope. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "bgjob.h"

#define LATE_CLOSE_MAX 8

struct late_close {
	int fd[LATE_CLOSE_MAX];
	bool sync[LATE_CLOSE_MAX]; /* fsync'ed first */
	size_t n;
	struct bgjob job;
};

/* Take fd (ignored when < 0) to close later; closed at once when the list
 * is full or the thread already started. */
void late_close_add(struct late_close *l, int fd);
/* The same, fd fsync'ed before it is closed (a file that must be on disk
 * before the process ends: the holder waits for the thread). */
void late_close_add_synced(struct late_close *l, int fd);
/* Close what was added, on a thread (or now, when none can be made). */
void late_close_start(struct late_close *l);
/* Wait until all is closed (what was never started is closed now). */
void late_close_wait(struct late_close *l);
