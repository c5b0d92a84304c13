/* fdlimit.h - the limit of open files. warden's own soft limit is raised
 * to the hard one at start (main): a session holds descriptors for its
 * walls' pieces, its services, each exec it judges and each connection the
 * proxy relays, and a shell's soft limit (`ulimit -n`) below what that
 * needs made sessions fail midway with EMFILE, or an exec denied for want
 * of a descriptor. The command warden runs gets the soft limit back. */
#pragma once
#include <sys/resource.h>

#include "err.h"

/* What a session needs at least: the 72 or so an agent's session holds,
 * with room for the execs it judges at once and the proxy's connections
 * (the proxy leaves the supervisor this many: src/net/proxy.c). */
#define FDLIMIT_MIN 256

/* Raise this process's soft limit to its hard one; the first call notes
 * the soft limit it had (what fdlimit_user returns). */
void fdlimit_raise(void);

/* The soft limit warden was started with (RLIM_INFINITY when unknown). */
rlim_t fdlimit_user(void);

/* -1 with a message naming what to change when the hard limit is below
 * FDLIMIT_MIN. */
int fdlimit_check(struct werr *e);
