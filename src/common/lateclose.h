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
 *   holding the watches' inodes, which hold no mount; it leaves warden's
 *   working directory (the workspace, mostly) for / first, since a cwd
 *   does: the workspace's file system would say busy to an unmount right
 *   after warden returns.
 * - A file that must be on disk before the process ends (the log): its
 *   writeback begun when it is handed over (sync_file_range), so that its
 *   pages go to the disk while the caller frees the rest; its fsync, which
 *   then waits for little more than the inode, and its close are the
 *   caller's, at late_close_wait (late_close_add_synced). A thread for
 *   that fsync cost more to start, on a supervisor kept to one CPU, than
 *   the wait it overlapped (bench/README.md, "Afternoon, 2026-12-03"). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define LATE_CLOSE_MAX 8

struct late_close {
	int fd[LATE_CLOSE_MAX];
	bool sync[LATE_CLOSE_MAX]; /* fsync'ed first, by the waiter */
	size_t n;
	bool started;
};

/* Take fd (ignored when < 0) to close later, in the closing process; closed
 * at once when the list is full or it was started already. */
void late_close_add(struct late_close *l, int fd);
/* The same for a file: its writeback begun now, fsync'ed and closed by
 * late_close_wait. */
void late_close_add_synced(struct late_close *l, int fd);
/* Close what was added but the synced fds: the closing process started
 * (when none can be made, these are left to late_close_wait). */
void late_close_start(struct late_close *l);
/* Start what was not, then fsync and close the synced fds (and any the
 * closing process could not take) here; the closing process is not waited
 * for. */
void late_close_wait(struct late_close *l);
