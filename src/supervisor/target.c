/* target.c - opening a path the way a sandboxed process sees it, and the
 * files mapped in its memory (target.h). */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../common/util.h"
#include "../workspace/plan.h"

#define ARGV_MAX TARGET_ARGV_MAX
#define ARG_MAX_LEN TARGET_ARG_MAX_LEN
#define ARGV_TOTAL TARGET_ARGV_TOTAL

void target_cwd(pid_t pid, char *buf, size_t len)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/cwd", (int)pid);
	ssize_t n = readlink(p, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* path made absolute (from the process's cwd) with ".", ".." and empty
 * components taken out, as text: what it names whatever the symlinks on
 * the way (malloc'd). */
char *target_lexical_path(pid_t pid, const char *path)
{
	char cwd[PATH_MAX] = "";
	if (path[0] != '/') {
		target_cwd(pid, cwd, sizeof cwd);
		if (!cwd[0])
			return NULL; /* never taken from somewhere else */
	}
	_cleanup_free_ char *all = xasprintf("%s/%s", cwd, path);
	return ws_join_lexically("/", all);
}

/* A magic link of /proc that a path (absolute, inside the sandbox) starts
 * with, as process pid sees it. */
struct proc_link {
	const char *what; /* "fd", "exe", "cwd" or "root" */
	int fd;           /* what "fd": which; else -1 */
	bool own;         /* the process's own: /proc/self, /proc/thread-self,
			     /proc/PID with its own pid as the sandbox numbers
			     it, /dev/fd/N, /dev/std{in,out,err} */
	char host[128];   /* the link on the host: /proc/HOSTPID/..., or for another
			     process of the sandbox /proc/HOSTPID/root/proc/ID/... */
};

/* The part of /proc/ID/... after ID (rest) against the names of magic
 * links: *l filled, and what comes after the link returned; NULL when rest
 * starts with none. */
static const char *link_name(const char *rest, struct proc_link *l)
{
	l->fd = -1;
	static const char *const names[] = { "exe", "cwd", "root" };
	for (int i = 0; i < 3; i++) {
		size_t len = strlen(names[i]);
		if (strncmp(rest, names[i], len) == 0 && (rest[len] == '\0' || rest[len] == '/')) {
			l->what = names[i];
			return rest + len + (rest[len] == '/');
		}
	}
	if (strncmp(rest, "fd/", 3) == 0 && rest[3] >= '0' && rest[3] <= '9') {
		char *end;
		long fd = strtol(rest + 3, &end, 10);
		if ((*end != '\0' && *end != '/') || fd > 1 << 30)
			return NULL;
		l->fd = (int)fd, l->what = "fd";
		return end + (*end == '/');
	}
	return NULL;
}

/* l->host for the link l of process pid (host pid): its own through the
 * host's /proc, another's (the sandbox's process id, a thread tid, 0: none)
 * through the sandbox's /proc, in its root. */
static void link_host(pid_t pid, struct proc_link *l, long id, long tid)
{
	char tail[48];
	if (l->fd >= 0)
		snprintf(tail, sizeof tail, "fd/%d", l->fd);
	else
		snprintf(tail, sizeof tail, "%s", l->what);
	l->own = l->own && !tid;
	if (l->own)
		snprintf(l->host, sizeof l->host, "/proc/%d/%s", (int)pid, tail);
	else if (tid)
		snprintf(l->host, sizeof l->host, "/proc/%d/root/proc/%ld/task/%ld/%s", (int)pid, id,
			 tid, tail);
	else
		snprintf(l->host, sizeof l->host, "/proc/%d/root/proc/%ld/%s", (int)pid, id, tail);
}

/* If full (absolute, inside the sandbox) starts with a magic link of
 * /proc -- the process's own (struct proc_link), or /proc/ID/... of
 * another process or thread of the sandbox (/proc/ID/task/TID/...) -- the
 * part after it, *l filled. The sandbox's procfs resolves "self" by the
 * reader, which the supervisor is not, and openat2 refuses the magic links
 * these are, so such paths go through the host's /proc/PID instead
 * (another process's through the sandbox's own /proc, in its root). NULL
 * otherwise. pid 0: the text only (l->host not filled, l->own a guess). */
static const char *proc_link_of(pid_t pid, const char *full, struct proc_link *l)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	*l = (struct proc_link){ .fd = -1, .own = true };
	for (int i = 0; i < 3; i++)
		if (strcmp(full, std[i]) == 0) {
			l->fd = i, l->what = "fd";
			snprintf(l->host, sizeof l->host, "/proc/%d/fd/%d", (int)pid, i);
			return "";
		}
	const char *rest = NULL;
	long id = 0, inner = -1;
	bool tasks = false; /* a /proc/ID/, which has task/ */
	if (strncmp(full, "/dev/fd/", 8) == 0) {
		rest = full + 5; /* "fd/N..." */
	} else if (strncmp(full, "/proc/self/", 11) == 0) {
		rest = full + 11, tasks = true;
	} else if (strncmp(full, "/proc/thread-self/", 18) == 0) {
		rest = full + 18;
	} else if (strncmp(full, "/proc/", 6) == 0 && full[6] >= '1' && full[6] <= '9') {
		char *end;
		id = strtol(full + 6, &end, 10);
		if (*end != '/' || id > 1 << 30)
			return NULL;
		rest = end + 1, tasks = true;
	} else {
		return NULL;
	}
	/* a thread's: /proc/ID/task/TID/..., through the sandbox's /proc */
	long tid = 0;
	if (tasks && strncmp(rest, "task/", 5) == 0 && rest[5] >= '1' && rest[5] <= '9') {
		char *end;
		tid = strtol(rest + 5, &end, 10);
		if (*end != '/' || tid > 1 << 30)
			return NULL;
		rest = end + 1;
	}
	const char *more = link_name(rest, l);
	if (!more || pid <= 0) {
		l->own = l->own && !id;
		return more;
	}
	if (id || tid) /* what the sandbox numbers the process: read once a link is named */
		target_pid_info(pid, &inner, NULL);
	if (id)
		l->own = id == inner;
	link_host(pid, l, tid && !id ? inner : id, tid);
	return more;
}

bool target_own_fd(pid_t pid, const char *full, int *fd)
{
	struct proc_link l;
	const char *more = proc_link_of(pid, full, &l);
	*fd = l.fd;
	return more && !*more && l.own && strcmp(l.what, "fd") == 0;
}

/* The path inside the sandbox of what the link l of process pid names, in
 * base: "/" for its root (no process inside can change its root: chroot
 * and pivot_root are refused), else the link's text when that path, looked
 * up inside, is that very file (not a pipe's "pipe:[N]", not a deleted
 * file's, not a file handed in from outside that the sandbox has no name
 * for, nor a directory whose name is past PATH_MAX). */
static bool link_inside(pid_t pid, const struct proc_link *l, char base[PATH_MAX])
{
	if (strcmp(l->what, "root") == 0 && l->own) {
		snprintf(base, PATH_MAX, "/");
		return true;
	}
	ssize_t k = readlink(l->host, base, PATH_MAX - 1);
	if (k <= 0 || base[0] != '/')
		return false;
	base[k] = '\0';
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/root", (int)pid);
	_cleanup_close_ int root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS };
	_cleanup_close_ int fd = root < 0 ? -1 : (int)syscall(SYS_openat2, root, base, &how, sizeof how);
	struct stat named, there;
	return fd >= 0 && fstat(fd, &there) == 0 && stat(l->host, &named) == 0 &&
	       named.st_dev == there.st_dev && named.st_ino == there.st_ino;
}

int target_proc_resolve(pid_t pid, const char *full, char **out)
{
	*out = NULL;
	_cleanup_free_ char *cur = xstrdup(full);
	for (int depth = 0; depth < 8; depth++) {
		struct proc_link l;
		const char *more = proc_link_of(pid, cur, &l);
		if (!more) {
			if (depth == 0)
				return 0;
			*out = cur;
			cur = NULL;
			return 1;
		}
		char base[PATH_MAX];
		if (!link_inside(pid, &l, base))
			return -1;
		_cleanup_free_ char *joined = xasprintf("%s/%s", base, more);
		free(cur);
		cur = path_lexical(joined, false); /* base has no symlink: ".." in more kept */
	}
	return -1;
}

bool target_proc_magic(const char *full, bool *beyond)
{
	struct proc_link l;
	const char *more = proc_link_of(0, full, &l);
	if (beyond)
		*beyond = more && *more;
	return more != NULL;
}

static int open_in_root(int rootfd, pid_t pid, const char *full, int oflags, int depth);

/* full through the host's /proc/PID (proc_link_of); -2 when it is not
 * such a path. */
static int open_own_proc(int rootfd, pid_t pid, const char *full, int oflags, int depth)
{
	struct proc_link l;
	const char *more = proc_link_of(pid, full, &l);
	if (!more)
		return -2;
	if (!*more && strcmp(l.what, "root") != 0)
		return open(l.host, oflags); /* the magic link itself: what the process holds */
	/* below a directory it holds: that directory's path inside, then on */
	char base[PATH_MAX] = "/";
	if (strcmp(l.what, "root") != 0 || !l.own) {
		ssize_t n = readlink(l.host, base, sizeof base - 1);
		if (n <= 0)
			return -1;
		base[n] = '\0';
	}
	char next[PATH_MAX * 2 + 2];
	snprintf(next, sizeof next, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", more);
	return open_in_root(rootfd, pid, next, oflags, depth + 1);
}

/* full (absolute, as the process sees it) opened inside its root (rootfd,
 * or its /proc/PID/root when -1). */
static int open_in_root(int rootfd, pid_t pid, const char *full, int oflags, int depth)
{
	if (depth > 8) {
		errno = ELOOP;
		return -1;
	}
	int fd = open_own_proc(rootfd, pid, full, oflags, depth);
	if (fd != -2)
		return fd;
	_cleanup_close_ int own = -1;
	if (rootfd < 0) {
		char p[64];
		snprintf(p, sizeof p, "/proc/%d/root", (int)pid);
		own = rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0)
			return -1;
	}
	struct open_how how = { .flags = (unsigned)oflags, .resolve = RESOLVE_IN_ROOT };
	return (int)syscall(SYS_openat2, rootfd, full, &how, sizeof how);
}

/* rel (relative) from the directory the process starts it at (its cwd,
 * or its fd from) when that directory has no name warden can read or the
 * whole is past PATH_MAX (a tree nested that deep): opened from that
 * directory itself, beneath it, with no symlink and no ".." out of it on
 * the way. Anything else fails with ENAMETOOLONG: never resolved from
 * somewhere else (before, an unreadable cwd was taken for the root). */
static int open_from_unnamed(pid_t pid, int from, const char *rel, int oflags)
{
	char p[64];
	if (from == AT_FDCWD)
		snprintf(p, sizeof p, "/proc/%d/cwd", (int)pid);
	else
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, from);
	_cleanup_close_ int dir = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	struct open_how how = {
		.flags = (unsigned)oflags | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dir, rel, &how, sizeof how);
	if (fd < 0 && (errno == ELOOP || errno == EXDEV))
		errno = ENAMETOOLONG; /* it would need the name warden cannot read */
	return fd;
}

int target_open(pid_t pid, int dirfd_arg, bool at, const char *path, int at_flags, int oflags,
		const char *cwd, char *resolved, size_t rlen)
{
	return target_open_root(-1, pid, dirfd_arg, at, path, at_flags, oflags, cwd, resolved, rlen);
}

int target_open_root(int rootfd, pid_t pid, int dirfd_arg, bool at, const char *path, int at_flags,
		     int oflags, const char *cwd, char *resolved, size_t rlen)
{
	char p[PATH_MAX + 64];
	int fd = -1;
	if (at && (at_flags & AT_EMPTY_PATH) && !path[0]) {
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, dirfd_arg);
		fd = open(p, oflags);
	} else {
		char base[PATH_MAX] = "";
		int from = at && dirfd_arg != AT_FDCWD ? dirfd_arg : AT_FDCWD;
		if (path[0] != '/') {
			if (from != AT_FDCWD) {
				snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, from);
				ssize_t n = readlink(p, base, sizeof base - 1);
				base[n > 0 ? n : 0] = '\0';
			} else {
				snprintf(base, sizeof base, "%s", cwd);
			}
		}
		if (path[0] != '/' && (!base[0] || strlen(base) + 1 + strlen(path) >= PATH_MAX)) {
			fd = open_from_unnamed(pid, from, path, oflags);
		} else {
			char full[PATH_MAX * 2 + 2];
			snprintf(full, sizeof full, "%s%s%s", base, base[0] && path[0] != '/' ? "/" : "",
				 path);
			fd = open_in_root(rootfd, pid, full, oflags, 0);
		}
	}
	if (fd >= 0 && resolved) {
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		int saved = errno;
		ssize_t n = readlink(p, resolved, rlen - 1);
		resolved[n > 0 ? n : 0] = '\0';
		errno = saved;
	}
	return fd;
}

/* n bytes at addr: by pread of mem, or when mem is -1 from process pid
 * (struct target_chunk's pid). */
static ssize_t mem_read(int mem, pid_t pid, void *buf, size_t n, uint64_t addr)
{
	if (mem >= 0 || pid <= 0)
		return pread(mem, buf, n, (off_t)addr);
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

/* Read a NUL-terminated string at addr (up to max-1 bytes). 0 when complete,
 * 1 when cut at max, -1 when unreadable. Reads stop at page ends so a string
 * ending just before an unmapped page still reads. */
static int read_str(int mem, pid_t pid, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0;
	while (got + 1 < max) {
		size_t page_left = 4096 - (size_t)((addr + got) & 4095);
		size_t want = max - 1 - got < page_left ? max - 1 - got : page_left;
		ssize_t r = mem_read(mem, pid, buf + got, want, addr + got);
		if (r <= 0)
			return got ? (buf[got] = '\0', 1) : -1;
		char *nul = memchr(buf + got, '\0', (size_t)r);
		if (nul)
			return 0;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return 1;
}

int target_read_str(int mem, uint64_t addr, char *buf, size_t max)
{
	return read_str(mem, 0, addr, buf, max);
}

void target_args_init(struct target_args *t, pid_t pid, const unsigned long long *args)
{
	t->pid = pid;
	t->args = args;
	t->n = 0;
}

int target_arg_str(struct target_args *t, int arg, const char **s)
{
	*s = "";
	for (int i = 0; i < t->n; i++)
		if (t->idx[i] == arg) {
			*s = t->buf[i];
			return t->rc[i];
		}
	if (t->n == (int)ARRAY_LEN(t->idx) || arg < 0 || arg > 5)
		return -1;
	int i = t->n++;
	t->idx[i] = arg;
	t->rc[i] = read_str(-1, t->pid, t->args[arg], t->buf[i], sizeof t->buf[i]);
	if (t->rc[i] < 0)
		t->buf[i][0] = '\0';
	*s = t->buf[i];
	return t->rc[i];
}

/* Is [addr, addr + len) inside the chunk? */
static bool in_chunk(const struct target_chunk *c, uint64_t addr, size_t len)
{
	return c && c->len && addr >= c->base && addr - c->base <= c->len &&
	       len <= c->len - (size_t)(addr - c->base);
}

int target_read_str_chunk(int mem, struct target_chunk *c, uint64_t addr, char *buf, size_t max)
{
	if (!c || max == 0)
		return target_read_str(mem, addr, buf, max);
	pid_t pid = c->pid;
	if (!in_chunk(c, addr, 1)) {
		/* from the start of addr's page (mapped, as addr is: what lies
		 * just before, an argv array, often comes next); a read past
		 * the end of a mapping stops there */
		uint64_t base = addr & ~(uint64_t)4095;
		ssize_t r = mem_read(mem, pid, c->buf, sizeof c->buf, base);
		c->len = r > 0 ? (size_t)r : 0;
		c->base = base;
		if (!in_chunk(c, addr, 1))
			c->len = 0;
		if (!c->len)
			return read_str(mem, pid, addr, buf, max);
	}
	size_t off = (size_t)(addr - c->base), avail = c->len - off;
	const char *s = c->buf + off, *nul = memchr(s, '\0', avail < max ? avail : max);
	if (!nul)
		return read_str(mem, pid, addr, buf, max); /* longer than what is here */
	memcpy(buf, s, (size_t)(nul - s) + 1);
	return 0;
}

void target_read_argv(int mem, struct target_chunk *c, uint64_t addr, struct strv *v,
		      bool *truncated)
{
	size_t total = 0;
	char *buf = xmalloc(ARG_MAX_LEN);
	uint64_t ptrs[64];
	size_t have = 0, next = 0; /* ptrs[next..have) not used yet */
	for (int i = 0; addr; i++) {
		if (next == have) {
			/* the pointers up to the page's end in one read */
			uint64_t at = addr + (uint64_t)i * 8;
			size_t page_left = 4096 - (size_t)(at & 4095);
			size_t want = page_left < 8 ? 8 : page_left < sizeof ptrs ? page_left : sizeof ptrs;
			ssize_t r = (ssize_t)want;
			if (in_chunk(c, at, want))
				memcpy(ptrs, c->buf + (at - c->base), want);
			else
				r = mem_read(mem, c ? c->pid : 0, ptrs, want, at);
			if (r < 8)
				break;
			have = (size_t)r / 8;
			next = 0;
		}
		uint64_t p = ptrs[next++];
		if (!p)
			break;
		if (i == ARGV_MAX || total >= ARGV_TOTAL) {
			*truncated = true;
			break;
		}
		int r = target_read_str_chunk(mem, c, p, buf, ARG_MAX_LEN);
		if (r < 0)
			break;
		if (r > 0)
			*truncated = true;
		size_t len = strlen(buf);
		total += len;
		strv_push(v, buf);
		if (r > 0 && len < ARG_MAX_LEN - 1)
			break; /* cut by memory it could not read: the last one read */
	}
	free(buf);
}

/* The files mapped in [lo, lo + len) of process pid (its /proc/PID/maps),
 * opened O_PATH through map_files into fds (at most max). How many. */
size_t target_mapped_files(pid_t pid, uint64_t lo, uint64_t len, int *fds, size_t max)
{
	uint64_t hi = len > UINT64_MAX - lo ? UINT64_MAX : lo + len;
	char p[64], line[PATH_MAX + 128];
	snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(p, "re");
	size_t n = 0;
	while (f && n < max && fgets(line, sizeof line, f)) {
		unsigned long long start, end, ino;
		if (sscanf(line, "%llx-%llx %*s %*s %*s %llu", &start, &end, &ino) != 3)
			continue;
		if (start >= hi)
			break;
		if (end <= lo || !ino)
			continue; /* anonymous memory: no file to ask about */
		char mf[96];
		snprintf(mf, sizeof mf, "/proc/%d/map_files/%llx-%llx", (int)pid, start, end);
		int fd = open(mf, O_PATH | O_CLOEXEC);
		if (fd >= 0)
			fds[n++] = fd;
	}
	if (f)
		fclose(f);
	return n;
}
