/* procfacts.h - facts about a host process from one read of its
 * /proc/PID/status (its parent and threads alone: of stat): its pid inside
 * its own pid namespace, its parent, its thread group and threads (used by
 * the supervisor's exec and syscall records and by the hook socket's
 * linking of tool calls). */
#pragma once
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
