/* execpath.c - exec paths and path strings that cannot change between
 * warden's check and the kernel's exec (execpath.h). The path is walked
 * one component at a time from the sandbox's root fd with statx, never
 * letting the kernel follow a symlink (each is read and expanded here), so
 * that every directory a lookup happens in is known, and its mount's
 * read-only flag is checked (cached by mount id: the sandbox's mounts are
 * fixed for the session). A path found stable is remembered with the file
 * it reached: the next exec of the same string that opens the same inode
 * is stable without the walk, as nothing inside can change a directory on
 * a read-only mount (a change made on the host, where such a mount comes
 * from, is not the agent's; and the inode warden opened is compared each
 * time). */
#include "execpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../target.h"
#include "immutable.h"
#include "linkwalk.h"

#define MAX_LINKS 40
#define MOUNTS 64
#define PAGE 4096ULL
#define STABLE_KEPT 32
#define LINKS_KEPT 64

struct stable {
	char *path;
	dev_t dev;
	ino_t ino;
	char *resolved;             /* where warden's open of path reached it */
};

struct mount_flags {
	uint64_t id;
	unsigned long flags;        /* statvfs's f_flag */
};

/* A hard-linked file's links searched for (linkwalk.h): the answer, kept
 * with the file as it was (a link made or removed since moves its ctime). */
struct links {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	struct timespec ctime;
	bool all_here;
};

struct execpath {
	struct mount_flags m[MOUNTS];
	size_t n;
	struct stable kept[STABLE_KEPT]; /* a ring, next: the slot to fill */
	size_t next;
	struct links links[LINKS_KEPT];  /* a ring, nlinks: how many were searched */
	size_t nlinks;
};

struct execpath *execpath_new(void)
{
	return xcalloc(1, sizeof(struct execpath));
}

void execpath_free(struct execpath *ep)
{
	if (!ep)
		return;
	for (size_t i = 0; i < STABLE_KEPT; i++) {
		free(ep->kept[i].path);
		free(ep->kept[i].resolved);
	}
	free(ep);
}

static const struct stable *kept_stable(const struct execpath *ep, const char *path, dev_t dev,
					ino_t ino)
{
	for (size_t i = 0; i < STABLE_KEPT; i++)
		if (ep->kept[i].path && ep->kept[i].ino == ino && ep->kept[i].dev == dev &&
		    strcmp(ep->kept[i].path, path) == 0)
			return &ep->kept[i];
	return NULL;
}

static bool keep_stable(struct execpath *ep, const char *path, dev_t dev, ino_t ino,
			const char *resolved)
{
	struct stable *k = &ep->kept[ep->next];
	ep->next = (ep->next + 1) % STABLE_KEPT;
	free(k->path);
	free(k->resolved);
	*k = (struct stable){ .path = xstrdup(path), .dev = dev, .ino = ino,
			      .resolved = resolved && resolved[0] ? xstrdup(resolved) : NULL };
	return true;
}

static const char *execpath_resolved(const struct execpath *ep, const char *path, dev_t dev,
				     ino_t ino)
{
	const struct stable *k = path[0] == '/' ? kept_stable(ep, path, dev, ino) : NULL;
	return k ? k->resolved : NULL;
}

bool execpath_mount_flags(struct execpath *ep, int fd, uint64_t id, unsigned long *flags)
{
	for (size_t i = 0; i < ep->n; i++)
		if (ep->m[i].id == id) {
			*flags = ep->m[i].flags;
			return true;
		}
	struct statvfs v;
	if (fstatvfs(fd, &v) < 0)
		return false;
	*flags = v.f_flag;
	if (ep->n < MOUNTS)
		ep->m[ep->n++] = (struct mount_flags){ .id = id, .flags = v.f_flag };
	return true;
}

/* statx's answer as struct stat */
static void stat_of(const struct statx *sx, struct stat *st)
{
	*st = (struct stat){ .st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor),
			     .st_ino = sx->stx_ino, .st_mode = sx->stx_mode, .st_nlink = sx->stx_nlink,
			     .st_uid = sx->stx_uid, .st_gid = sx->stx_gid,
			     .st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor),
			     .st_size = (off_t)sx->stx_size, .st_blksize = sx->stx_blksize,
			     .st_blocks = (blkcnt_t)sx->stx_blocks,
			     .st_atim = { sx->stx_atime.tv_sec, sx->stx_atime.tv_nsec },
			     .st_mtim = { sx->stx_mtime.tv_sec, sx->stx_mtime.tv_nsec },
			     .st_ctim = { sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec } };
}

/* Are all the links of st (on the read-only mount mnt_id, at resolved) on
 * that mount? Searched once a file as it is. */
static bool links_all_here(struct execpath *ep, int root, const char *resolved,
			   const struct stat *st, uint64_t mnt_id)
{
	for (size_t i = 0; i < ep->nlinks && i < LINKS_KEPT; i++) {
		const struct links *l = &ep->links[i];
		if (l->dev == st->st_dev && l->ino == st->st_ino && l->nlink == st->st_nlink &&
		    l->ctime.tv_sec == st->st_ctim.tv_sec && l->ctime.tv_nsec == st->st_ctim.tv_nsec)
			return l->all_here;
	}
	bool all = linkwalk_all_here(root, resolved, st, mnt_id);
	ep->links[ep->nlinks++ % LINKS_KEPT] = (struct links){ .dev = st->st_dev, .ino = st->st_ino,
		.nlink = st->st_nlink, .ctime = st->st_ctim, .all_here = all };
	return all;
}

int execpath_file(struct execpath *ep, int root, int fd, const char *path, const dev_t *wdev,
		  size_t nwdev, struct stat *st, char **resolved, bool *immutable, bool *noexec)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &sx) < 0)
		return -1;
	stat_of(&sx, st);
	const char *known = path ? execpath_resolved(ep, path, st->st_dev, st->st_ino) : NULL;
	if (known) {
		*resolved = xstrdup(known);
	} else {
		char self[64], buf[PATH_MAX];
		snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(self, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = '\0';
		*resolved = xstrdup(buf);
	}
	unsigned long flags = 0;
	bool have = (sx.stx_mask & STATX_MNT_ID) ? execpath_mount_flags(ep, fd, sx.stx_mnt_id, &flags)
						 : exec_mount_flags(fd, &flags);
	*noexec = have && (flags & ST_NOEXEC);
	*immutable = have && S_ISREG(st->st_mode) &&
		     exec_immutable_rule(flags, st, *resolved, wdev, nwdev);
	/* a hard link on a read-only mount, all of whose links are on it */
	if (!*immutable && have && S_ISREG(st->st_mode) && (flags & ST_RDONLY) &&
	    st->st_nlink > 1 && wdev && (sx.stx_mask & STATX_MNT_ID))
		*immutable = links_all_here(ep, root, *resolved, st, sx.stx_mnt_id);
	return 0;
}

/* Is the mount of the directory at rel (from root; "" for root itself),
 * whose mount id is id, read-only? */
static bool mount_ro(struct execpath *ep, int root, const char *rel, uint64_t id)
{
	unsigned long flags;
	for (size_t i = 0; i < ep->n; i++)
		if (ep->m[i].id == id)
			return (ep->m[i].flags & ST_RDONLY) != 0;
	_cleanup_close_ int fd = openat(root, rel[0] ? rel : ".", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && execpath_mount_flags(ep, fd, id, &flags) && (flags & ST_RDONLY);
}

static bool stat_at(int root, const char *rel, struct statx *sx)
{
	unsigned mask = STATX_TYPE | STATX_INO | STATX_MNT_ID;
	int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (rel[0] ? 0 : AT_EMPTY_PATH);
	return statx(root, rel, flags, mask, sx) == 0 && (sx->stx_mask & STATX_MNT_ID) &&
	       (sx->stx_mask & STATX_TYPE) && (sx->stx_mask & STATX_INO);
}

static bool walk_stable(struct execpath *ep, int root, const char *path, dev_t dev, ino_t ino);

bool execpath_stable(struct execpath *ep, int root, const char *path, dev_t dev, ino_t ino,
		     const char *resolved)
{
	if (root < 0 || path[0] != '/')
		return false;
	if (kept_stable(ep, path, dev, ino))
		return true;
	return walk_stable(ep, root, path, dev, ino) && keep_stable(ep, path, dev, ino, resolved);
}

static bool walk_stable(struct execpath *ep, int root, const char *path, dev_t dev, ino_t ino)
{
	/* done: the resolved directories, from root, without symlinks (so the
	 * kernel, given it, follows none); todo: what is left to resolve */
	char done[PATH_MAX] = "", todo[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
	if (snprintf(todo, sizeof todo, "%s", path) >= (int)sizeof todo)
		return false;
	struct statx dir;
	if (!stat_at(root, "", &dir))
		return false;
	int links = 0;
	char *p = todo;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return false; /* a path that ends in a directory is no program */
		char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if ((len == 2 && p[0] == '.' && p[1] == '.') || len > NAME_MAX)
			return false;
		/* the lookup of this name happens in done: read-only? */
		if (!S_ISDIR(dir.stx_mode) || !mount_ro(ep, root, done, dir.stx_mnt_id))
			return false;
		size_t dl = strlen(done);
		if (dl + 1 + len + 1 > sizeof done)
			return false;
		char cand[PATH_MAX];
		memcpy(cand, done, dl);
		if (dl)
			cand[dl++] = '/';
		memcpy(cand + dl, p, len);
		cand[dl + len] = '\0';
		struct statx sx;
		if (!stat_at(root, cand, &sx))
			return false;
		const char *after = end ? end : p + len;
		if (S_ISLNK(sx.stx_mode)) {
			if (++links > MAX_LINKS)
				return false;
			ssize_t n = readlinkat(root, cand, link, sizeof link - 1);
			if (n <= 0)
				return false;
			link[n] = '\0';
			/* its target, then what followed it */
			if (snprintf(next, sizeof next, "%s%s", link, after) >= (int)sizeof next)
				return false;
			memcpy(todo, next, strlen(next) + 1);
			p = todo;
			if (link[0] == '/') {
				done[0] = '\0';
				if (!stat_at(root, "", &dir))
					return false;
			}
			continue;
		}
		p = (char *)after;
		while (*p == '/')
			p++;
		if (!*p)
			return sx.stx_ino == ino && makedev(sx.stx_dev_major, sx.stx_dev_minor) == dev &&
			       S_ISREG(sx.stx_mode);
		memcpy(done, cand, strlen(cand) + 1);
		dir = sx;
	}
}

bool execpath_string_private(const struct execpath_proc *pr, pid_t init, uint64_t addr, size_t len)
{
	pid_t pid = pr->pid, ppid = pr->ppid;
	if (pr->threads != 1 || ppid <= 0 || len == 0)
		return false;
	/* A vfork child runs on its parent's memory (kcmp: 0, the same):
	 * the parent's thread waits in vfork until the child's exec, so the
	 * memory is still this thread's alone if the parent has no other
	 * thread; and so on up a chain of vforks. */
	pid_t child = pid, parent = ppid;
	for (int depth = 0;; depth++) {
		/* sandbox init only forks (and, not dumpable, is out of kcmp's
		 * reach when warden runs unprivileged) */
		if (parent == init)
			break;
		long r = syscall(SYS_kcmp, child, parent, KCMP_VM, 0UL, 0UL);
		if (r == 1 || r == 2)
			break;
		if (r != 0 || depth == 8)
			return false;
		pid_t up;
		int n;
		target_stat_pidfd(parent, depth == 0 ? pr->ppidfd : -1, &up, &n);
		if (n != 1 || up <= 0)
			return false;
		child = parent;
		parent = up;
	}
	/* child: the last of the chain on this memory (the vfork parent's
	 * pagemap, whose /proc entry outlives its children, is the same) */
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/pagemap", (int)child);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	uint64_t first = addr / PAGE, last = (addr + len - 1) / PAGE;
	if (last < first || last - first >= 2)
		return false; /* a path is at most PATH_MAX: two pages */
	uint64_t e[2];
	size_t want = (size_t)(last - first + 1) * sizeof e[0];
	if (pread(fd, e, want, (off_t)(first * sizeof e[0])) != (ssize_t)want)
		return false;
	for (size_t i = 0; i <= last - first; i++) {
		bool present = (e[i] >> 63) & 1, file_or_shared = (e[i] >> 61) & 1;
		if (!present || file_or_shared)
			return false;
	}
	return true;
}
