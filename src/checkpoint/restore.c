/* restore.c - bringing a workspace back to a manifest (restore.h). */
#include "restore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory holding path (opened beneath rootfd, no symlink on the
 * way), *name its last component. */
static int parent_of(int rootfd, const char *path, const char **name)
{
	const char *sl = strrchr(path, '/');
	if (!sl) {
		*name = path;
		return fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	}
	*name = sl + 1;
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(sl - path), path);
	return open_beneath(rootfd, dir, O_RDONLY | O_DIRECTORY, 0);
}

static unsigned long tmp_seq;

/* As root: what is restored belongs to the workspace's owner, as what the
 * agent made does (src/sandbox/hostid.h), not to root; -1: leave it. */
static uid_t own_uid = (uid_t)-1;
static gid_t own_gid = (gid_t)-1;

static int own(int dirfd, const char *name)
{
	if (own_uid == (uid_t)-1)
		return 0;
	return fchownat(dirfd, name, own_uid, own_gid, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH));
}

static int write_blob_file(int pfd, const char *name, const struct store *st, const struct mf_entry *en,
		      struct werr *e)
{
	_cleanup_free_ char *tmp = xasprintf(".warden-undo.%d.%lu", (int)getpid(), ++tmp_seq);
	_cleanup_close_ int fd = openat(pfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					0600);
	if (fd < 0)
		return werr_errno(e, "undo: writing %s", en->path);
	if (store_blob_copy(st, en->hash, en->size, fd, e) < 0) {
		unlinkat(pfd, tmp, 0);
		return werr_wrap(e, "undo: %s", en->path);
	}
	char sum[SHA256_HEX_LEN];
	if (lseek(fd, 0, SEEK_SET) < 0 || sha256_fd(fd, sum) < 0) {
		int err = errno;
		unlinkat(pfd, tmp, 0);
		return werr_set(e, err, "undo: writing %s", en->path);
	}
	if (strcmp(sum, en->hash) != 0) {
		unlinkat(pfd, tmp, 0);
		return werr_set(e, 0, "undo: the stored content of %s does not match its hash "
				"(the store is damaged): not restored", en->path);
	}
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_sec = en->mtime_sec, .tv_nsec = en->mtime_nsec } };
	if (own(fd, "") < 0 || fchmod(fd, en->mode) < 0 || futimens(fd, ts) < 0 ||
	    renameat(pfd, tmp, pfd, name) < 0) {
		int err = errno;
		unlinkat(pfd, tmp, 0);
		return werr_set(e, err, "undo: %s", en->path);
	}
	return 0;
}

static int write_link(int pfd, const char *name, const struct mf_entry *en, struct werr *e)
{
	_cleanup_free_ char *tmp = xasprintf(".warden-undo.%d.%lu", (int)getpid(), ++tmp_seq);
	if (symlinkat(en->target, pfd, tmp) < 0)
		return werr_errno(e, "undo: the symlink %s", en->path);
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_sec = en->mtime_sec, .tv_nsec = en->mtime_nsec } };
	(void)!utimensat(pfd, tmp, ts, AT_SYMLINK_NOFOLLOW);
	if (own(pfd, tmp) < 0 || renameat(pfd, tmp, pfd, name) < 0) {
		int err = errno;
		unlinkat(pfd, tmp, 0);
		return werr_set(e, err, "undo: the symlink %s", en->path);
	}
	return 0;
}

/* A directory's mode and mtime, set once nothing more is written in it. */
static int set_dir(int rootfd, const struct mf_entry *en, struct werr *e)
{
	const char *name;
	_cleanup_close_ int pfd = parent_of(rootfd, en->path, &name);
	_cleanup_close_ int fd = pfd < 0 ? -1 : openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
							    O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "undo: %s", en->path);
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_sec = en->mtime_sec, .tv_nsec = en->mtime_nsec } };
	if (utimensat(AT_FDCWD, self, ts, 0) < 0 || chmod(self, en->mode) < 0)
		return werr_errno(e, "undo: the mode of %s", en->path);
	return 0;
}

/* Every directory of the user's opened to them (u+rwx) for the work. */
static int open_dirs(int rootfd, const struct manifest *cur, struct werr *e)
{
	for (size_t i = 0; i < cur->n; i++) {
		const struct mf_entry *en = &cur->v[i];
		if (en->type != MF_DIR || (en->mode & 0700) == 0700)
			continue;
		const char *name;
		_cleanup_close_ int pfd = parent_of(rootfd, en->path, &name);
		if (pfd < 0 || fchmodat(pfd, name, en->mode | 0700, 0) < 0)
			return werr_errno(e, "undo: opening up %s", en->path);
	}
	return 0;
}

static bool goes(const struct change *c)
{
	return c->kind == CH_REMOVED || c->kind == CH_TYPE;
}

/* Is path's parent one of dirs (n paths in strcmp order, as the changes
 * are): a directory that goes whole, taking path with it? */
static bool parent_goes(const char *const *dirs, size_t n, const char *path)
{
	const char *sl = strrchr(path, '/');
	size_t pl = sl ? (size_t)(sl - path) : 0, lo = 0, hi = n;
	while (sl && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(dirs[mid], path, pl);
		if (c == 0)
			c = dirs[mid][pl] != '\0'; /* longer: after the parent */
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* What goes (removed, or of another type now): each at the top of what
 * goes, the rest with it. One by one from the deepest, a tree nested
 * thousands deep cost the square of its depth in path walks. */
static int remove_gone(int rootfd, const struct changes *ch, struct werr *e)
{
	_cleanup_free_ const char **dirs = xcalloc(ch->n + 1, sizeof *dirs);
	size_t nd = 0;
	for (size_t k = 0; k < ch->n; k++)
		if (goes(&ch->v[k]) && ch->v[k].a->type == MF_DIR)
			dirs[nd++] = ch->v[k].a->path;
	for (size_t k = ch->n; k-- > 0;) {
		const struct change *c = &ch->v[k];
		if (!goes(c) || parent_goes(dirs, nd, c->a->path))
			continue;
		const char *name;
		_cleanup_close_ int pfd = parent_of(rootfd, c->a->path, &name);
		if (pfd < 0) {
			if (errno == ENOENT)
				continue; /* its parent went first */
			return werr_errno(e, "undo: %s", c->a->path);
		}
		if (remove_tree_at(pfd, name) < 0 && errno != ENOENT)
			return werr_errno(e, "undo: removing %s", c->a->path);
	}
	return 0;
}

/* A directory made at name in pfd. A FIFO, socket or device in the way
 * (what a manifest does not hold, so no change removed it: an `rm -rf
 * dir; mkfifo dir`) is removed first: unlinkat acts on the name itself,
 * beneath pfd, never through a symlink; anything else there stays, and
 * the mkdir fails. */
static int make_dir(int pfd, const char *name)
{
	if (mkdirat(pfd, name, 0700) == 0)
		return 0;
	struct stat s;
	if (errno != EEXIST || fstatat(pfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !(S_ISFIFO(s.st_mode) || S_ISSOCK(s.st_mode) || S_ISCHR(s.st_mode) ||
	      S_ISBLK(s.st_mode))) {
		errno = EEXIST;
		return -1;
	}
	if (unlinkat(pfd, name, 0) < 0)
		return -1;
	return mkdirat(pfd, name, 0700);
}

/* The mtime of the file or symlink name in pfd set back (the name's own,
 * never through a symlink), for a change of its mtime or mode alone. One
 * of another owner's (a file the session could write to, moving its mtime,
 * but whose mtime only its owner sets) is written anew, as a change of its
 * content would be: the file is then the workspace user's. */
static int set_mtime(int pfd, const char *name, const struct store *st, const struct mf_entry *en,
		     struct werr *e)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_sec = en->mtime_sec, .tv_nsec = en->mtime_nsec } };
	if (utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno == EPERM)
		return en->type == MF_FILE ? write_blob_file(pfd, name, st, en, e)
					   : write_link(pfd, name, en, e);
	return werr_errno(e, "undo: the mtime of %s", en->path);
}

/* One change that brings something back (added, changed, of its type
 * again, its mode, its mtime). */
static int put_back(int rootfd, const struct store *st, const struct change *c, struct werr *e)
{
	const struct mf_entry *en = c->b;
	const char *name;
	_cleanup_close_ int pfd = parent_of(rootfd, en->path, &name);
	if (pfd < 0)
		return werr_errno(e, "undo: the directory of %s", en->path);
	if (en->type == MF_DIR) {
		if ((c->kind == CH_ADDED || c->kind == CH_TYPE) &&
		    (make_dir(pfd, name) < 0 || own(pfd, name) < 0))
			return werr_errno(e, "undo: making %s", en->path);
		return 0;
	}
	if (en->type == MF_FILE) {
		if (c->kind != CH_MODE && c->kind != CH_MTIME)
			return write_blob_file(pfd, name, st, en, e);
		if (c->kind == CH_MODE && fchmodat(pfd, name, en->mode, 0) < 0)
			return werr_errno(e, "undo: the mode of %s", en->path);
		return set_mtime(pfd, name, st, en, e);
	}
	if (mf_special(en->type)) { /* never made again: its mode only */
		if (c->kind == CH_MODE && fchmodat(pfd, name, en->mode, AT_SYMLINK_NOFOLLOW) < 0)
			return werr_errno(e, "undo: the mode of %s", en->path);
		return 0;
	}
	if (c->kind == CH_MTIME) /* the same target: the link's own mtime */
		return set_mtime(pfd, name, st, en, e);
	return write_link(pfd, name, en, e);
}

void restore_unmade(struct changes *ch, struct strv *out)
{
	size_t k = 0;
	for (size_t i = 0; i < ch->n; i++) {
		struct change c = ch->v[i];
		if (c.b && mf_special(c.b->type) && c.kind != CH_MODE) {
			strv_push(out, c.b->path);
			if (c.kind == CH_ADDED)
				continue;
			c = (struct change){ CH_REMOVED, c.a, NULL };
		}
		ch->v[k++] = c;
	}
	ch->n = k;
}

size_t restore_left(const struct changes *left)
{
	size_t n = left->root_mode;
	for (size_t i = 0; i < left->n; i++)
		n += !(left->v[i].kind == CH_REMOVED && mf_special(left->v[i].a->type));
	return n;
}

int restore_verify(const struct store *st, const struct changes *ch, struct werr *e)
{
	for (size_t k = 0; k < ch->n; k++) {
		const struct mf_entry *en = ch->v[k].b;
		if (!en || en->type != MF_FILE || ch->v[k].kind == CH_MODE ||
		    ch->v[k].kind == CH_MTIME)
			continue;
		if (store_blob_verify(st, en->hash, en->size, e) < 0)
			return werr_wrap(e, "%s", en->path);
	}
	return 0;
}

int restore_tree(int rootfd, const struct store *st, const struct manifest *cur,
		 const struct manifest *target, struct werr *e)
{
	struct stat rst;
	own_uid = (uid_t)-1;
	own_gid = (gid_t)-1;
	if (geteuid() == 0 && fstat(rootfd, &rst) == 0 && rst.st_uid != 0) {
		own_uid = rst.st_uid;
		own_gid = rst.st_gid;
	}
	if (open_dirs(rootfd, cur, e) < 0)
		return -1;
	struct changes ch;
	changes_compute(cur, target, &ch);
	int r = remove_gone(rootfd, &ch, e);
	/* what comes back, parents first */
	for (size_t k = 0; r == 0 && k < ch.n; k++)
		if (ch.v[k].kind != CH_REMOVED)
			r = put_back(rootfd, st, &ch.v[k], e);
	changes_free(&ch);
	/* directories' modes and mtimes, deepest first */
	for (size_t i = target->n; r == 0 && i-- > 0;)
		if (target->v[i].type == MF_DIR)
			r = set_dir(rootfd, &target->v[i], e);
	if (r == 0 && fchmod(rootfd, target->root_mode) < 0)
		r = werr_errno(e, "undo: the mode of the workspace directory");
	return r;
}
