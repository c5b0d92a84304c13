/* procfacts.h - facts about a host process: its pid inside its own pid
 * namespace, its parent, its thread group and threads, from one read of
 * its /proc/PID/status or stat, or from the kernel's pid translation and a
 * pidfd where the kernel has them (used by the supervisor's exec and
 * syscall records and by the hook socket's linking of tool calls). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

/* The process's pid inside its own pid namespace (last NSpid field; -1
 * when gone) and, when ppid_host is not NULL, its parent's host pid. */
void target_pid_info(pid_t host, long *inner, pid_t *ppid_host);
/* The same from one read of /proc/PID/status, and the thread's process
 * (tgid) and its number of threads, each when not NULL (0 when gone). */
void target_status(pid_t host, long *inner, pid_t *ppid_host, pid_t *tgid, int *threads);
/* The process's parent (host pid) and number of threads from one read of
 * /proc/PID/stat, shorter for the kernel to write than status (0 each when
 * gone). */
void target_stat(pid_t host, pid_t *ppid_host, int *threads);
/* The process's state (stat's third field: 'T' stopped, 'Z' a zombie...)
 * and its start time (the 22nd: clock ticks since boot, which tells it
 * from a later process given its pid), each when not NULL, from one read
 * of /proc/PID/stat; false when gone or unreadable. */
bool proc_state_start(pid_t host, char *state, unsigned long long *start);
/* The process's pid in the pid namespace of pidns (an fd of its
 * /proc/PID/ns/pid; -1: none) by the kernel's translation (Linux 6.11 and
 * later), else as target_pid_info says; -1 when gone. */
long target_inner(pid_t host, int pidns);
/* The same, *pidns opened from host's /proc/PID/ns/pid when -2 (host must
 * be in the namespace meant), and closed and set to -1 once the kernel
 * says it cannot translate (status from then on). */
long target_inner_ns(pid_t host, int *pidns);
/* What target_status says, of a process in the pid namespace of *pidns
 * (an fd of its /proc/PID/ns/pid; -2: opened here from host's, who must be
 * in it): its pid there and its thread group by the kernel's translation
 * (Linux 6.11 and later), its parent and threads as target_stat_fresh
 * says. Where the kernel cannot translate, *pidns is closed and set to -1,
 * and all of it is read from status, now and after. *pidfd: the pidfd
 * opened for it, the caller's to close (when it can wait until the process
 * has its answer), or -1. */
void target_facts(pid_t host, int *pidns, long *inner, pid_t *ppid_host, pid_t *tgid, int *threads,
		  int *pidfd);
/* What target_stat says, with pidfd a pidfd of host (-1: none): the parent
 * from the pidfd (PIDFD_GET_INFO, Linux 6.13 and later) and the threads
 * from the link count of /proc/PID/task (two and one per thread), which
 * the kernel answers without writing stat's text; from stat where the
 * kernel cannot. */
void target_stat_pidfd(pid_t host, int pidfd, pid_t *ppid_host, int *threads);
/* The same for a process warden holds no pidfd of (a new exec's): one
 * opened for the question where the kernel answers PIDFD_GET_INFO, which
 * costs less than the text of /proc/PID/stat (its memory and times); else
 * stat, and stat from then on where the kernel has no PIDFD_GET_INFO.
 * keep: NULL, the pidfd closed here; else set to it (or -1), to close. */
void target_stat_fresh(pid_t host, pid_t *ppid_host, int *threads, int *keep);
