/* connowner.h - which program made a connection through warden's proxy
 * (the proxy's owner lookup, proxy.h): the client's socket found by its
 * addresses with sock_diag in the sandbox's network namespace (its inode),
 * then among the open descriptors of the sandbox's processes (listed by
 * the sandbox's own /proc, reached through a process inside and kept for
 * the session; PID/fd read for the socket's inode). One holder: its
 * executable (PID/exe, as the sandbox names it), its pid inside (its name
 * there), and the file's SHA-256 (the exec record's cache, this module's
 * own, else hashed at once up to a bound).
 * Several holders (a socket inherited by a fork, or passed with
 * SCM_RIGHTS), none (closed, exited), or more processes and descriptors
 * than the bound: unknown, with why.
 *
 * Once per connection, in the proxy's three steps (struct proxy_owner):
 * the socket's inode on the supervisor's loop (the sock_diag socket is the
 * loop's), the walk and the hash on the proxy's one owner thread (the
 * module's own hash cache is that thread's alone), the exec record's cache
 * asked on the loop again (it is the loop's). Bounded
 * (CONNOWNER_FDS_MAX descriptors read in all, CONNOWNER_PROCS_MAX
 * processes). */
#pragma once
#include <sys/types.h>

#include "../net/proxy.h"

#define CONNOWNER_PROCS_MAX 4096
#define CONNOWNER_FDS_MAX 65536
#define CONNOWNER_HASH_MAX (64ULL << 20) /* an executable hashed by the owner thread: 64 MiB at most */

struct connowner;
struct execs;

/* diag: the sandbox's sock_diag socket (borrowed; -1: no owner is ever
 * found); init: sandbox init's host pid; x: the exec record whose hash
 * cache is asked first (may be NULL). */
struct connowner *connowner_new(int diag, pid_t init, struct execs *x);
void connowner_free(struct connowner *o);

/* The proxy's owner steps (proxy_cfg.owner), ctx a struct connowner. */
bool connowner_begin(void *ctx, int fd, struct proxy_owner_query *q);
void connowner_find(void *ctx, struct proxy_owner_query *q);
void connowner_end(void *ctx, struct proxy_owner_query *q);
