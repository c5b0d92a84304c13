/* lateclose.h - fds whose close waits on the kernel, closed while the
 * caller goes on. Two kinds:
 *
 * - An inotify instance: closing it destroys its marks and waits for their
 *   SRCU grace period (a flush of the kernel's mark reaper), 15-20 ms on a
 *   virtual machine with lazy RCU, in the closing task; a session closes
 *   two (the workspace's watch, the decoys'). Nothing needs that wait to
 *   be over, so these go to a closing process of their own (late_close_add):
 *   it shares the caller's memory (no page table is copied), holds a copy
 *   of the caller's fd table, closes every other fd at once (it keeps no
 *   pipe, terminal or lock open past warden's own end), then these, and
 *   ends; nobody waits for it. It may outlive warden by that grace period,
 *   holding the watches' inodes (an unmount of the workspace's file system
 *   in that window says busy).
 * - A file that must be on disk before the process ends (the log): fsync'ed
 *   and closed on a thread (late_close_add_synced), joined before the
 *   process forks anything (bgjob.h), and at the latest where the holder
 *   goes out of scope. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "bgjob.h"

#define LATE_CLOSE_MAX 8

struct late_close {
	int fd[LATE_CLOSE_MAX];
	bool sync[LATE_CLOSE_MAX]; /* fsync'ed first, on the thread */
	size_t n;
	struct bgjob job;
	bool started;
};

/* Take fd (ignored when < 0) to close later, in the closing process; closed
 * at once when the list is full or it was started already. */
void late_close_add(struct late_close *l, int fd);
/* The same, fd fsync'ed before it is closed, on a thread the holder waits
 * for. */
void late_close_add_synced(struct late_close *l, int fd);
/* Close what was added: the closing process started (or, when none can
 * be made, these closed on the thread), the thread started. */
void late_close_start(struct late_close *l);
/* Wait until the thread's work is done (what was never started is started
 * now); the closing process is not waited for. */
void late_close_wait(struct late_close *l);
