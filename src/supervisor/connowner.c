/* connowner.c - the program behind a proxied connection's client socket
 * (connowner.h): sock_diag for the socket's inode, a walk of the sandbox's
 * processes (its own /proc) reading their descriptors, and the one holder's
 * executable, pid inside and SHA-256; which step runs on which thread is
 * connowner.h's. */
#include "connowner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/hash.h"
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
	int proc; /* the sandbox's own /proc (sandbox_proc), -1 until opened */
	struct execs *x;
	struct own_hash cache[OWN_CACHE];
	size_t ncache, next;
};

struct connowner *connowner_new(int diag, pid_t init, struct execs *x)
{
	struct connowner *o = xcalloc(1, sizeof *o);
	o->diag = diag;
	o->init = init;
	o->proc = -1;
	o->x = x;
	return o;
}

void connowner_free(struct connowner *o)
{
	if (o && o->proc >= 0)
		close(o->proc);
	free(o);
}

/* ---- the walk ----------------------------------------------------------- */

struct walk {
	ino_t ino;                  /* the client socket's inode */
	size_t n;                   /* processes read so far */
	unsigned long fds;          /* descriptors read so far */
	pid_t holder[2];            /* the first two that hold the socket, pids inside */
	size_t nholders;
	bool cut;                   /* a bound was reached: the walk is not whole */
};

/* Each numeric name in the directory dfd (from its start) passed to fn
 * until fn returns false. getdents64 on the fd itself: no opendir's fstat
 * and buffer. */
static void each_number(int dfd, bool (*fn)(void *, int, const char *), void *arg)
{
	_Alignas(struct dirent64) char buf[8192];
	ssize_t n;
	while ((n = getdents64(dfd, buf, sizeof buf)) > 0)
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);
			off += de->d_reclen;
			if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && !fn(arg, dfd, de->d_name))
				return;
		}
}

struct pwalk {
	struct walk *w;
	bool found;
};

/* One descriptor of a process (its name in PID/fd): the socket? */
static bool fd_is_socket(void *arg, int dfd, const char *name)
{
	struct pwalk *pw = arg;
	if (++pw->w->fds > CONNOWNER_FDS_MAX) {
		pw->w->cut = true;
		return false;
	}
	struct stat st; /* the socket's own inode, through the magic link */
	pw->found = fstatat(dfd, name, &st, 0) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == pw->w->ino;
	return !pw->found;
}

/* One process of the sandbox (its pid inside, a name in its /proc): does
 * it hold the socket? The walk goes on until a second holder is found. */
static bool pid_holds(void *arg, int proc, const char *name)
{
	struct walk *w = arg;
	long pid = strtol(name, NULL, 10);
	if (pid <= 1) /* sandbox init, warden's own: its descriptors are the listeners */
		return true;
	if (++w->n > CONNOWNER_PROCS_MAX) {
		w->cut = true;
		return false;
	}
	char fds[32];
	snprintf(fds, sizeof fds, "%ld/fd", pid);
	_cleanup_close_ int dfd = openat(proc, fds, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return true; /* exited meanwhile */
	struct pwalk pw = { .w = w };
	each_number(dfd, fd_is_socket, &pw);
	if (pw.found && w->nholders++ < 2)
		w->holder[w->nholders - 1] = (pid_t)pid;
	return !w->cut && w->nholders < 2;
}

/* The sandbox's /proc, mounted by init for the sandbox's pid namespace:
 * its listing names exactly the sandbox's processes, by their pids inside,
 * in one read (following init's children instead reads two files a
 * process). Reached through the root of one of init's children (every
 * process inside has that root: chroot, pivot_root and mount are refused,
 * so nothing inside can put another file system there), and checked: not
 * a symbolic link (whose target would be read from warden's own root), a
 * procfs, of a pid namespace warden is not in (its `self` names no
 * process). Kept for the session; -1, with why, while it cannot be had
 * (no child yet, or the one read exited: tried again next time). */
static int sandbox_proc(struct connowner *o, char *why, size_t len)
{
	if (o->proc >= 0)
		return o->proc;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)o->init, (int)o->init);
	char buf[32] = "";
	_cleanup_close_ int cfd = open(path, O_RDONLY | O_CLOEXEC);
	long child = cfd >= 0 && read(cfd, buf, sizeof buf - 1) > 0 ? strtol(buf, NULL, 10) : 0;
	if (child <= 0) {
		snprintf(why, len, "the sandbox has no process to look through");
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%ld/root/proc", child);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statfs sf;
	if (fd < 0 || fstatfs(fd, &sf) < 0) {
		snprintf(why, len, "the sandbox's /proc cannot be opened: %s", strerror(errno));
		return -1;
	}
	char self[16];
	if (sf.f_type != PROC_SUPER_MAGIC || readlinkat(fd, "self", self, sizeof self) >= 0) {
		snprintf(why, len, "the sandbox's /proc is not its own procfs");
		return -1;
	}
	o->proc = fd;
	fd = -1;
	return o->proc;
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

/* The SHA-256 of an executable (path: PID/exe in the sandbox's /proc)
 * into out->sha256, or why not into out->sha_why. The file is the one the
 * process runs (the exe link opened), so no path can be swapped under the check. One the owner thread
 * will not hash (too large, not a regular file) is left to the exec
 * record's cache (q->exe_ask: connowner_end, on the loop). */
static void exe_hash(struct connowner *o, const char *path, struct proxy_owner_query *q)
{
	struct net_program *out = &q->prog;
	_cleanup_close_ int fd = openat(o->proc, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
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
	struct timespec dl = mono_after_ms(HASH_TIMEOUT_MS);
	if (sha256_fd_bounded(fd, CONNOWNER_HASH_MAX, &dl, NULL, out->sha256) < 0) {
		out->sha256[0] = '\0';
		snprintf(out->sha_why, sizeof out->sha_why, "not hashed: %s", strerror(errno));
		return;
	}
	own_put(o, &st, out->sha256);
}

/* ---- the lookup ------------------------------------------------------- */

/* The holder's executable and its pid inside (its name in the sandbox's
 * /proc). */
static void one_holder(struct connowner *o, pid_t pid, struct proxy_owner_query *q)
{
	struct net_program *out = &q->prog;
	char path[32];
	snprintf(path, sizeof path, "%d/exe", (int)pid);
	ssize_t n = readlinkat(o->proc, path, out->path, sizeof out->path - 1);
	if (n <= 0) {
		out->path[0] = '\0';
		snprintf(out->unknown, sizeof out->unknown, "its process exited");
		return;
	}
	out->path[n] = '\0';
	out->pid = pid;
	exe_hash(o, path, q);
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
	q->sock = sockdiag_pair_of(fd, &q->pair) ? sockdiag_inode(o->diag, &q->pair) : 0;
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
	int proc = sandbox_proc(o, out->unknown, sizeof out->unknown);
	if (proc < 0)
		return;
	if (lseek(proc, 0, SEEK_SET) < 0) {
		snprintf(out->unknown, sizeof out->unknown, "the sandbox's /proc cannot be read: %s",
			 strerror(errno));
		return;
	}
	/* A client that closed its socket before the walk (a short request,
	 * an answer read at once) leaves nothing to walk for: the socket, held
	 * by no process, has no inode any more. */
	if (sockdiag_released(o->diag, &q->pair, q->sock)) {
		snprintf(out->unknown, sizeof out->unknown,
			 "no process holds its socket any more (it exited or closed it)");
		return;
	}
	struct walk w = { .ino = (ino_t)q->sock };
	each_number(proc, pid_holds, &w);
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
