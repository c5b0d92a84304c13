/* connowner.c - the program behind a proxied connection's client socket
 * (connowner.h): sock_diag for the socket's inode, a walk of sandbox init's
 * descendants reading their descriptors, and the one holder's executable,
 * pid inside and SHA-256; which step runs on which thread is connowner.h's. */
#include "connowner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/hash.h"
#include "../common/procfacts.h"
#include "../common/util.h"
#include "../net/sockdiag.h"
#include "exec/execs.h"

#define OWN_CACHE 64 /* executables this module hashed itself */
#define HASH_TIMEOUT_MS 500

struct own_hash {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char hex[SHA256_HEX_LEN];
};

struct connowner {
	int diag;
	pid_t init;
	struct execs *x;
	struct own_hash cache[OWN_CACHE];
	size_t ncache, next;
};

struct connowner *connowner_new(int diag, pid_t init, struct execs *x)
{
	struct connowner *o = xcalloc(1, sizeof *o);
	o->diag = diag;
	o->init = init;
	o->x = x;
	return o;
}

void connowner_free(struct connowner *o)
{
	free(o);
}

/* ---- the walk --------------------------------------------------------- */

struct walk {
	pid_t *queue;               /* host pids, breadth first from init */
	size_t n, at;
	pid_t holder[2];            /* the first two that hold the socket */
	size_t nholders;
	unsigned long fds;          /* descriptors read so far */
	bool cut;                   /* a bound was reached: the walk is not whole */
	ino_t ino;                  /* the client socket's inode */
};

/* Does pid hold w->want? Its descriptors read within the walk's budget. */
static bool holds(struct walk *w, pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return false; /* gone, or a thread of another */
	int dfd = dirfd(d);
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || de->d_type != DT_LNK)
			continue;
		if (++w->fds > CONNOWNER_FDS_MAX) {
			w->cut = true;
			break;
		}
		struct stat st; /* the socket's own inode, through the magic link */
		found = fstatat(dfd, de->d_name, &st, 0) == 0 && S_ISSOCK(st.st_mode) &&
			st.st_ino == w->ino;
	}
	closedir(d);
	return found;
}

static void queue(struct walk *w, pid_t pid)
{
	if (w->n >= CONNOWNER_PROCS_MAX)
		w->cut = true;
	else
		w->queue[w->n++] = pid;
}

/* Queue pid's children (of each of its threads). */
static void children(struct walk *w, pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%.16s/children", (int)pid, de->d_name);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
		char buf[4096];
		ssize_t n;
		long c = 0;
		bool in = false;
		while (fd >= 0 && !w->cut && (n = read(fd, buf, sizeof buf)) > 0)
			for (ssize_t i = 0; i < n; i++) { /* "PID PID ... " */
				if (buf[i] >= '0' && buf[i] <= '9') {
					c = c * 10 + (buf[i] - '0');
					in = true;
				} else if (in) {
					queue(w, (pid_t)c);
					c = 0;
					in = false;
				}
			}
		if (in)
			queue(w, (pid_t)c);
	}
	closedir(d);
}

static void walk(struct walk *w, pid_t init)
{
	w->queue[w->n++] = init;
	for (; w->at < w->n && !w->cut; w->at++) {
		pid_t p = w->queue[w->at];
		/* init is warden's own: its descriptors are the listeners */
		if (p != init && holds(w, p) && w->nholders++ < 2)
			w->holder[w->nholders - 1] = p;
		children(w, p);
	}
}

/* ---- the executable's hash ---------------------------------------------- */

static struct own_hash *own_find(struct connowner *o, const struct stat *st)
{
	for (size_t i = 0; i < o->ncache; i++) {
		struct own_hash *c = &o->cache[i];
		if (c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
		    c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
		    c->ctime.tv_sec == st->st_ctim.tv_sec && c->ctime.tv_nsec == st->st_ctim.tv_nsec)
			return c;
	}
	return NULL;
}

static void own_put(struct connowner *o, const struct stat *st, const char *hex)
{
	struct own_hash *c = &o->cache[o->ncache < OWN_CACHE ? o->ncache++ : o->next++ % OWN_CACHE];
	*c = (struct own_hash){ .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
				.mtime = st->st_mtim, .ctime = st->st_ctim };
	snprintf(c->hex, sizeof c->hex, "%s", hex);
}

/* The SHA-256 of pid's executable into out->sha256, or why not into
 * out->sha_why. The file is the one the process runs (/proc/PID/exe
 * opened), so no path can be swapped under the check. One the owner thread
 * will not hash (too large, not a regular file) is left to the exec
 * record's cache (q->exe_ask: connowner_end, on the loop). */
static void exe_hash(struct connowner *o, pid_t pid, struct proxy_owner_query *q)
{
	struct net_program *out = &q->prog;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(out->sha_why, sizeof out->sha_why, "its executable cannot be read: %s",
			 strerror(errno));
		return;
	}
	const struct own_hash *c = own_find(o, &st);
	if (c) {
		memcpy(out->sha256, c->hex, sizeof out->sha256);
		return;
	}
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > CONNOWNER_HASH_MAX) {
		snprintf(out->sha_why, sizeof out->sha_why,
			 "not hashed: over %llu MiB and not in the exec record's cache",
			 CONNOWNER_HASH_MAX >> 20);
		q->exe = st;
		q->exe_ask = true;
		return;
	}
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += (long)HASH_TIMEOUT_MS * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	if (sha256_fd_bounded(fd, CONNOWNER_HASH_MAX, &dl, NULL, out->sha256) < 0) {
		out->sha256[0] = '\0';
		snprintf(out->sha_why, sizeof out->sha_why, "not hashed: %s", strerror(errno));
		return;
	}
	own_put(o, &st, out->sha256);
}

/* ---- the lookup ------------------------------------------------------- */

static void one_holder(struct connowner *o, pid_t pid, struct proxy_owner_query *q)
{
	struct net_program *out = &q->prog;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, out->path, sizeof out->path - 1);
	if (n <= 0) {
		out->path[0] = '\0';
		snprintf(out->unknown, sizeof out->unknown, "its process exited");
		return;
	}
	out->path[n] = '\0';
	long inner = -1;
	target_pid_info(pid, &inner, NULL);
	out->pid = inner;
	exe_hash(o, pid, q);
}

bool connowner_begin(void *ctx, int fd, struct proxy_owner_query *q)
{
	struct connowner *o = ctx;
	memset(q, 0, sizeof *q);
	if (o->diag < 0) {
		snprintf(q->prog.unknown, sizeof q->prog.unknown,
			 "warden has no sock_diag socket in the sandbox's network namespace");
		return false;
	}
	q->sock = sockdiag_peer_inode(o->diag, fd);
	if (!q->sock) {
		snprintf(q->prog.unknown, sizeof q->prog.unknown,
			 "the client's socket was not found (closed)");
		return false;
	}
	return true;
}

void connowner_find(void *ctx, struct proxy_owner_query *q)
{
	struct connowner *o = ctx;
	struct net_program *out = &q->prog;
	struct walk w = { .queue = xmalloc(CONNOWNER_PROCS_MAX * sizeof(pid_t)) };
	w.ino = (ino_t)q->sock;
	walk(&w, o->init);
	free(w.queue);
	if (w.nholders > 1)
		snprintf(out->unknown, sizeof out->unknown,
			 "its socket is held by several processes (passed or inherited)");
	else if (w.cut)
		snprintf(out->unknown, sizeof out->unknown,
			 "too many processes or descriptors to tell (%zu processes, %lu descriptors read)",
			 w.n, w.fds);
	else if (!w.nholders)
		snprintf(out->unknown, sizeof out->unknown,
			 "no process holds its socket any more (it exited or closed it)");
	else
		one_holder(o, w.holder[0], q);
}

void connowner_end(void *ctx, struct proxy_owner_query *q)
{
	struct connowner *o = ctx;
	if (q->exe_ask && o->x && execs_cached_hash(o->x, &q->exe, q->prog.sha256))
		q->prog.sha_why[0] = '\0';
}
