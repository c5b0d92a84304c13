/* selflimits.h - warden's own resource limits, raised at start (main)
 * where the user's are below what a session needs, and the user's kept for
 * the command it runs (init gives them back before its exec).
 * - Open files: the soft limit raised to the hard one. A session holds
 *   descriptors for its walls' pieces, its services, each exec it judges
 *   and each connection the proxy relays; a shell's `ulimit -Sn` below that
 *   made sessions fail midway with EMFILE, or an exec denied for want of a
 *   descriptor.
 * - Stack: a soft limit under SELFLIMITS_STACK_MIN raised to
 *   SELFLIMITS_STACK (or the hard limit), the threads' default stack with
 *   it: under `ulimit -s 80` warden crashed (SIGSEGV) in its checkpoint. */
#pragma once
#include <stddef.h>
#include <sys/resource.h>

#include "err.h"

/* What a session needs at least: the 72 or so an agent's session holds,
 * with room for the execs it judges at once and the relays' connections
 * (the proxy and the published ports leave the supervisor this many:
 * selflimits_conns). */
#define SELFLIMITS_NOFILE_MIN 256
#define SELFLIMITS_FD_RESERVE 256
/* The stack a session has been seen to need is under 100 KiB; below this
 * the limit is raised, to SELFLIMITS_STACK (glibc's usual default). */
#define SELFLIMITS_STACK_MIN (1024 * 1024)
#define SELFLIMITS_STACK (8 * 1024 * 1024)

/* The user's limits, as warden was started with them (RLIM_INFINITY
 * before selflimits_raise or when unknown). */
struct user_limits {
	rlim_t nofile; /* soft RLIMIT_NOFILE */
	rlim_t stack;  /* soft RLIMIT_STACK */
};

/* Raise this process's limits as the top says, before any thread; the
 * first call notes the user's (selflimits_user). */
void selflimits_raise(void);

/* The limits warden was started with. */
struct user_limits selflimits_user(void);

/* Put the user's limits back in a process about to exec the command
 * (lowering needs no privilege); nothing for a field RLIM_INFINITY or 0. */
void selflimits_give_back(const struct user_limits *u);

/* How many connections a relay of the supervisor's (the proxy, the
 * published ports) may hold at once, each taking fds_per_conn descriptors:
 * its share (1 of shares) of the open-file limit past
 * SELFLIMITS_FD_RESERVE, at most ceiling, at least 16. The relays share
 * the supervisor's descriptors: their shares together leave the reserve
 * to its own work (the exec record above all). */
size_t selflimits_conns(unsigned fds_per_conn, unsigned shares, size_t ceiling);

/* -1 with a message naming what to change when a hard limit is below what
 * a session needs. */
int selflimits_check(struct werr *e);
