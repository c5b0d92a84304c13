/* walk.c - an iterative walk of a directory tree from an open directory fd
 * (walk.h): an explicit stack of the directories on the way down, each with
 * the names of its subdirectories still to visit; one directory fd open at a
 * time (the way back up is "..", checked against the inode recorded on the
 * way down, or the names again from the root); directories the invoking
 * user owns but made unreadable opened up for the walk and given their mode
 * back when it leaves them. */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* One directory on the way from the root to where the walk is. */
struct frame {
	dev_t dev;
	ino_t ino;
	size_t rel_len;          /* its path's length in walk.rel */
	char *todo;              /* subdirectories still to visit: names, each NUL-terminated */
	size_t todo_len, todo_cap, todo_pos;
	mode_t restore;          /* opened up: the mode to give back */
	bool opened_up;
	bool tagged;             /* the callback tagged it or a directory above */
};

struct walk {
	const struct walk_ops *ops;
	void *ctx;
	int root;
	struct frame *f;
	size_t n, cap;
	char *rel;               /* the current directory's path, then "/NAME" of an entry */
	size_t rel_len, rel_cap;
	char *buf;               /* getdents64 */
};

#define DENTS_BUF (64 * 1024)

/* Put "/name" (or "name" at the root) after the current directory's path;
 * returns the new length. */
static size_t rel_put(struct walk *w, const char *name)
{
	size_t nl = strlen(name), len = w->rel_len + (w->rel_len ? 1 : 0) + nl;
	if (len + 1 > w->rel_cap) {
		w->rel_cap = (len + 1) * 2;
		w->rel = xrealloc(w->rel, w->rel_cap);
	}
	char *p = w->rel + w->rel_len;
	if (w->rel_len)
		*p++ = '/';
	memcpy(p, name, nl + 1);
	return len;
}

static void rel_cut(struct walk *w, size_t len)
{
	w->rel_len = len;
	w->rel[len] = '\0';
}

/* A subdirectory to visit: its name, after a byte saying whether it is
 * tagged. */
static void todo_add(struct frame *f, const char *name, bool tagged)
{
	size_t nl = strlen(name) + 2;
	if (f->todo_len + nl > f->todo_cap) {
		f->todo_cap = (f->todo_len + nl) * 2;
		f->todo = xrealloc(f->todo, f->todo_cap);
	}
	f->todo[f->todo_len] = tagged ? 'T' : '-';
	memcpy(f->todo + f->todo_len + 1, name, nl - 1);
	f->todo_len += nl;
}

static void push(struct walk *w, const struct frame *fr)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->f = xrealloc(w->f, w->cap * sizeof *w->f);
	}
	w->f[w->n++] = *fr;
}

/* Hand out every entry of the directory at the top of the stack (open as
 * fd), recording the subdirectories to visit, then dir_done. */
static int read_dir(struct walk *w, int fd, struct werr *e)
{
	size_t base = w->rel_len;
	bool tagged = w->f[w->n - 1].tagged;
	for (;;) {
		ssize_t got = getdents64(fd, w->buf, DENTS_BUF);
		if (got < 0)
			return werr_errno(e, "reading workspace directory %s", base ? w->rel : ".");
		if (got == 0)
			break;
		for (ssize_t off = 0; off < got;) {
			const struct dirent64 *d = (const struct dirent64 *)(w->buf + off);
			off += d->d_reclen;
			const char *name = d->d_name;
			if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
				continue;
			unsigned char type = d->d_type;
			if (type == DT_UNKNOWN) {
				struct stat st;
				if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue; /* gone since */
				type = IFTODT(st.st_mode);
			}
			rel_put(w, name);
			struct walk_entry we = { .dirfd = fd, .name = name, .rel = w->rel, .type = type,
						 .tagged = tagged };
			int a = w->ops->entry(w->ctx, &we, e);
			rel_cut(w, base);
			if (a < 0)
				return -1;
			if ((a == WALK_DESCEND || a == WALK_DESCEND_TAGGED) && type == DT_DIR)
				todo_add(&w->f[w->n - 1], name, tagged || a == WALK_DESCEND_TAGGED);
		}
	}
	return w->ops->dir_done ? w->ops->dir_done(w->ctx, fd, w->rel, tagged, e) : 0;
}

static void closed(struct walk *w, int err)
{
	if (w->ops->closed)
		w->ops->closed(w->ctx, w->rel, err);
}

int walk_open_dir(int dirfd, const char *name, mode_t *restore, struct stat *st)
{
	*restore = WALK_KEEP_MODE;
	uid_t euid = geteuid();
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err != EACCES && err != EPERM)
			return -1;
		if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
			return -1;
		if (!S_ISDIR(st->st_mode)) {
			errno = ENOTDIR;
			return -1;
		}
		if (st->st_uid != euid) {
			errno = err;
			return -1;
		}
		mode_t was = st->st_mode & 07777;
		if (fchmodat(dirfd, name, was | S_IRUSR | S_IXUSR, AT_SYMLINK_NOFOLLOW) < 0)
			return -1;
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat now;
		if (fd < 0 || fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
			/* replaced in between: give the mode back by name, as taken */
			err = fd < 0 ? errno : EAGAIN;
			if (fd >= 0)
				close(fd);
			if (fchmodat(dirfd, name, was, AT_SYMLINK_NOFOLLOW) < 0)
				wnote("could not give a directory its mode %04o back: %s", (unsigned)was,
				      strerror(errno));
			errno = err;
			return -1;
		}
		*restore = was;
		return fd;
	}
	if (fstat(fd, st) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	/* readable, not searchable: its entries could not be looked at */
	if (euid != 0 && st->st_uid == euid && !(st->st_mode & S_IXUSR)) {
		mode_t was = st->st_mode & 07777;
		if (fchmod(fd, was | S_IRUSR | S_IXUSR) < 0) {
			int err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		*restore = was;
	}
	return fd;
}

void walk_close_dir(int fd, mode_t restore, const char *rel)
{
	if (restore != WALK_KEEP_MODE && fchmod(fd, restore) < 0)
		wnote("could not give %s its mode %04o back: %s", rel, (unsigned)restore,
		      strerror(errno));
	close(fd);
}

/* Open the subdirectory name of dfd (whose path is in w->rel now) for the
 * walk, fr recording what it is and the mode to give back. Returns the fd,
 * -2 to pass it by, -1 on error. */
static int open_child(struct walk *w, int dfd, const char *name, struct frame *fr, struct werr *e)
{
	struct stat st;
	mode_t restore;
	int fd = walk_open_dir(dfd, name, &restore, &st);
	if (fd < 0) {
		int err = errno;
		/* gone since it was read, or replaced by something else */
		if (err == ENOENT || err == ENOTDIR || err == ELOOP)
			return -2;
		if (err != EACCES && err != EPERM && err != EAGAIN)
			return werr_errno(e, "opening workspace directory %s", w->rel);
		closed(w, err);
		return -2;
	}
	fr->opened_up = restore != WALK_KEEP_MODE;
	fr->restore = restore;
	fr->dev = st.st_dev;
	fr->ino = st.st_ino;
	return fd;
}

/* The directory of frame k, opened again from the root by the names on the
 * way, each checked to be the directory the walk went down through. */
static int reopen(struct walk *w, size_t k, struct werr *e)
{
	int fd = openat(w->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "opening the workspace again");
	for (size_t i = 1; i <= k; i++) {
		size_t from = w->f[i - 1].rel_len + (i > 1 ? 1 : 0);
		_cleanup_free_ char *comp = strndup(w->rel + from, w->f[i].rel_len - from);
		if (!comp)
			abort();
		int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		bool same = next >= 0 && fstat(next, &st) == 0 && st.st_dev == w->f[i].dev &&
			    st.st_ino == w->f[i].ino;
		close(fd);
		if (!same) {
			if (next >= 0)
				close(next);
			return werr_set(e, 0, "workspace directory %.*s was moved or replaced while "
					"warden was scanning below it", (int)w->f[k].rel_len, w->rel);
		}
		fd = next;
	}
	return fd;
}

/* Leave the top directory (open as cur) for its parent: returns the
 * parent's fd, or -1 (e filled). The top's mode is given back either way. */
static int go_up(struct walk *w, int cur, struct werr *e)
{
	const struct frame *top = &w->f[w->n - 1], *parent = &w->f[w->n - 2];
	int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (up >= 0 && (fstat(up, &st) < 0 || st.st_dev != parent->dev || st.st_ino != parent->ino)) {
		close(up);
		up = -1;
	}
	if (top->opened_up && fchmod(cur, top->restore) < 0)
		wnote("could not give %s its mode %04o back: %s", w->rel, (unsigned)top->restore,
		      strerror(errno));
	if (up < 0)
		up = reopen(w, w->n - 2, e);
	return up;
}

int walk_tree(int rootfd, const struct walk_ops *ops, void *ctx, struct werr *e)
{
	struct walk w = { .ops = ops, .ctx = ctx, .root = rootfd };
	/* the root itself made unreadable: opened up like any directory */
	struct stat st;
	if (fstat(rootfd, &st) < 0)
		return werr_errno(e, "opening the workspace");
	mode_t root_mode = WALK_KEEP_MODE;
	if (geteuid() != 0 && st.st_uid == geteuid() &&
	    (st.st_mode & (S_IRUSR | S_IXUSR)) != (S_IRUSR | S_IXUSR)) {
		if (fchmod(rootfd, (st.st_mode & 07777) | S_IRUSR | S_IXUSR) < 0)
			return werr_errno(e, "opening up the workspace (mode %04o)",
					  (unsigned)(st.st_mode & 07777));
		root_mode = st.st_mode & 07777;
	}
	int cur = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0 || fstat(cur, &st) < 0) {
		int r = werr_errno(e, "opening the workspace");
		if (cur >= 0)
			close(cur);
		if (root_mode != WALK_KEEP_MODE)
			fchmod(rootfd, root_mode);
		return r;
	}
	w.buf = xmalloc(DENTS_BUF);
	w.rel_cap = 256;
	w.rel = xmalloc(w.rel_cap);
	w.rel[0] = '\0';
	push(&w, &(struct frame){ .dev = st.st_dev, .ino = st.st_ino });
	int r = read_dir(&w, cur, e);
	while (w.n > 0) {
		struct frame *top = &w.f[w.n - 1];
		/* after an error, only the way back up (giving modes back) */
		if (r == 0 && top->todo_pos < top->todo_len) {
			bool tagged = top->todo[top->todo_pos] == 'T';
			const char *name = top->todo + top->todo_pos + 1;
			top->todo_pos += strlen(name) + 2;
			size_t base = w.rel_len, len = rel_put(&w, name);
			struct frame child = { .rel_len = len, .tagged = tagged };
			int fd = open_child(&w, cur, name, &child, e);
			if (fd < 0) {
				rel_cut(&w, base);
				if (fd == -1)
					r = -1;
				continue;
			}
			close(cur);
			cur = fd;
			w.rel_len = len;
			push(&w, &child);
			r = read_dir(&w, cur, e);
			continue;
		}
		if (w.n == 1) {
			free(top->todo);
			w.n = 0;
			break;
		}
		struct werr ue = { 0 };
		int up = go_up(&w, cur, r == 0 ? e : &ue);
		close(cur);
		cur = up;
		free(top->todo);
		w.n--;
		rel_cut(&w, w.f[w.n - 1].rel_len);
		if (up < 0) {
			r = -1;
			/* no way back to them: say which directories keep the mode
			 * the walk gave them */
			for (size_t i = w.n; i-- > 0;) {
				if (w.f[i].opened_up)
					wnote("could not give %.*s its mode %04o back (the walk lost its "
					      "way to it)", (int)w.f[i].rel_len, w.rel,
					      (unsigned)w.f[i].restore);
				free(w.f[i].todo);
			}
			w.n = 0;
		}
	}
	if (cur >= 0)
		close(cur);
	if (root_mode != WALK_KEEP_MODE && fchmod(rootfd, root_mode) < 0)
		wnote("could not give the workspace its mode %04o back: %s", (unsigned)root_mode,
		      strerror(errno));
	free(w.f);
	free(w.rel);
	free(w.buf);
	return r;
}

/* renameat2 with RENAME_NOREPLACE, or where the file system lacks it, a
 * check then renameat. */
static int rename_noreplace(int dirfd, const char *from, const char *to)
{
	if (renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	struct stat st;
	if (fstatat(dirfd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(dirfd, from, dirfd, to);
}

static int rename_opening_up(int dirfd, const char *from, const char *to)
{
	if (rename_noreplace(dirfd, from, to) == 0)
		return 0;
	if (errno != EACCES && errno != EPERM)
		return -1;
	int err = errno;
	struct stat st;
	if (fstat(dirfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & S_IWUSR) ||
	    fchmod(dirfd, (st.st_mode & 07777) | S_IWUSR | S_IXUSR) < 0) {
		errno = err;
		return -1;
	}
	int r = rename_noreplace(dirfd, from, to);
	err = errno;
	if (fchmod(dirfd, st.st_mode & 07777) < 0)
		wnote("could not give a directory its mode %04o back after moving %s out of the "
		      "way: %s", (unsigned)(st.st_mode & 07777), from, strerror(errno));
	errno = err;
	return r;
}

char *walk_rename_aside(int dirfd, const char *name, const char *suffix)
{
	for (int i = 1; i <= 100; i++) {
		char *to = i == 1 ? xasprintf("%s.%s", name, suffix) : xasprintf("%s.%s.%d", name, suffix, i);
		if (rename_opening_up(dirfd, name, to) == 0)
			return to;
		int err = errno;
		free(to);
		if (err != EEXIST && err != ENOTEMPTY) {
			errno = err;
			return NULL;
		}
	}
	errno = EEXIST;
	return NULL;
}

bool walk_dir_empty(int dirfd, const char *name)
{
	/* getdents64 on the fd itself rather than fdopendir and readdir: no
	 * fstat, no two fcntl, no 32 KiB buffer per directory (this runs for
	 * each placeholder directory at the start and at the end of every
	 * session). A buffer of 1 KiB holds . and .. and any name there. */
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	_Alignas(struct dirent64) char buf[1024];
	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof buf);
		if (n == 0)
			return true;
		if (n < 0)
			return false;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				return false;
			off += de->d_reclen;
		}
	}
}

bool walk_dir_removed(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 0;
}
