/* pidcache.c - the inner pids of the execs' parents, kept while their
 * processes live (pidcache.h). A few entries, the least recently used
 * replaced: the parents of a session's execs are few at a time. */
#include "pidcache.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../common/procfacts.h"
#include "../../common/util.h"

#define ENTRIES 16

struct entry {
	pid_t host;    /* 0: free */
	long inner;
	int pidfd;
	unsigned long used;
};

struct pidcache {
	struct entry e[ENTRIES];
	unsigned long clock;
};

struct pidcache *pidcache_new(void)
{
	struct pidcache *c = xcalloc(1, sizeof *c);
	for (size_t i = 0; i < ENTRIES; i++)
		c->e[i].pidfd = -1;
	return c;
}

static void drop(struct entry *e)
{
	if (e->pidfd >= 0)
		close(e->pidfd);
	*e = (struct entry){ .pidfd = -1 };
}

void pidcache_free(struct pidcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < ENTRIES; i++)
		drop(&c->e[i]);
	free(c);
}

/* Does the process of pidfd still hold its pid? Signal 0 checks without
 * sending: ESRCH once it is reaped (EPERM: it is there, warden may not
 * signal it). */
static bool holds_pid(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

long pidcache_inner(struct pidcache *c, pid_t host, int pidns)
{
	struct entry *slot = &c->e[0];
	for (size_t i = 0; i < ENTRIES; i++) {
		struct entry *e = &c->e[i];
		if (e->host == host) {
			if (holds_pid(e->pidfd)) {
				e->used = ++c->clock;
				return e->inner;
			}
			drop(e);
		}
		if (e->used < slot->used)
			slot = e;
	}
	/* the pidfd first: if the process it names still holds the pid after
	 * the read, what was read is that process's */
	int pidfd = (int)syscall(SYS_pidfd_open, host, 0);
	long inner = target_inner(host, pidns);
	if (pidfd < 0)
		return inner;
	if (inner < 0 || !holds_pid(pidfd)) {
		close(pidfd);
		return inner;
	}
	drop(slot);
	*slot = (struct entry){ .host = host, .inner = inner, .pidfd = pidfd, .used = ++c->clock };
	return inner;
}

int pidcache_pidfd(const struct pidcache *c, pid_t host)
{
	for (size_t i = 0; i < ENTRIES; i++)
		if (c->e[i].host == host)
			return c->e[i].pidfd;
	return -1;
}
