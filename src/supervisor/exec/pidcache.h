/* pidcache.h - the pids, as the sandbox numbers them, of the processes
 * that exec children (a shell, make), kept while each process lives: an
 * exec's event names its parent's pid inside ("ppid"), and reading the
 * parent's /proc/PID/status for it on every exec was a tenth of the time an
 * exec waits for the supervisor. An entry holds a pidfd of the process it
 * was read from; while that process holds its pid (running or a zombie not
 * yet reaped) the host pid names no other, so the entry is right. */
#pragma once
#include <sys/types.h>

struct pidcache;

struct pidcache *pidcache_new(void);
void pidcache_free(struct pidcache *c);

/* The pid inside of host process host (as target_pid_info says; -1 when
 * gone): from the cache while the process it was read from still holds
 * host, else read now (and kept, where a pidfd can be had); pidns: the
 * sandbox's pid namespace, for target_facts (-1: none). */
long pidcache_inner(struct pidcache *c, pid_t host, int pidns);

/* The pidfd kept for host (-1: none), as pidcache_inner left it. */
int pidcache_pidfd(const struct pidcache *c, pid_t host);
