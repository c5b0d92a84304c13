/* store.c - the content-addressed checkpoint store: opening and checking
 * it, storing blobs (small ones into a pack, others cloned or copied,
 * verified), manifests (verified by their hash) (store.h). References are
 * refs.c, retention store_gc.c, the metadata cache mcache.c, reading blobs
 * back blob.c. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../common/filecopy.h"
#include "../common/sbuf.h"
#include "pack.h"
#include "store_int.h"

#define MANIFEST_MAX (4ULL << 30)

char *store_default_path(const char *home)
{
	_cleanup_free_ char *base = xdg_warden_dir("XDG_DATA_HOME", home, ".local/share");
	return base ? xasprintf("%s/store", base) : NULL;
}

/* A directory of the store opened, made first when it is missing (opened
 * first: in a store that exists, as it does after the first session, a
 * mkdir would fail with EEXIST every time). */
static int subdir(struct store *st, const char *name, int *out, struct werr *e)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	*out = openat(st->fd, name, flags);
	if (*out >= 0)
		return 0;
	if (errno != ENOENT)
		return werr_errno(e, "checkpoint store %s: cannot open %s", st->path, name);
	if (mkdirat(st->fd, name, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store %s: cannot create %s", st->path, name);
	*out = openat(st->fd, name, flags);
	if (*out < 0)
		return werr_errno(e, "checkpoint store %s: cannot open %s", st->path, name);
	return 0;
}

/* The store's directories, made when missing, the ones it reads opened. */
static int subdirs(struct store *st, bool create, struct werr *e)
{
	if (subdir(st, "blobs", &st->blobs_fd, e) < 0 ||
	    subdir(st, "manifests", &st->manifests_fd, e) < 0 || subdir(st, "tmp", &st->tmp_fd, e) < 0)
		return -1;
	/* (a store from before packs, read only: none is fine) */
	if (subdir(st, "packs", &st->packs_fd, e) < 0 && create)
		return -1;
	if (mkdirat(st->fd, "refs", 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store %s: cannot create refs", st->path);
	if (mkdirat(st->fd, "cache", 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store %s: cannot create cache", st->path);
	return 0;
}

/* The store's directory, with its missing parents. */
static int make(const char *path, struct werr *e)
{
	_cleanup_free_ char *parent = xstrdup(path);
	char *sl = strrchr(parent, '/');
	if (sl && sl != parent) {
		*sl = '\0';
		if (mkdir_p(parent, 0700, NULL) < 0)
			return werr_errno(e, "checkpoint store: cannot create %s", parent);
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store: cannot create %s", path);
	return 0;
}

int store_open(struct store *st, const char *path, bool create, struct werr *e)
{
	*st = (struct store){ .fd = -1, .lock_fd = -1, .blobs_fd = -1, .manifests_fd = -1,
			      .tmp_fd = -1, .packs_fd = -1, .small_max = STORE_SMALL_MAX,
			      .path = xstrdup(path) };
	/* opened first: it is there after the first session */
	st->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->fd < 0 && errno == ENOENT && create) {
		if (make(path, e) < 0)
			return -1;
		st->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	struct stat s;
	if (st->fd < 0) {
		if ((errno == ELOOP || errno == ENOTDIR) && lstat(path, &s) == 0 && S_ISLNK(s.st_mode))
			return werr_set(e, 0, "checkpoint store %s is a symbolic link: refused (warden "
					"keeps checkpoints only in a directory of its own; remove the "
					"link, or set `checkpoint off` in the profile)", path);
		return werr_errno(e, "checkpoint store %s: cannot open it", path);
	}
	if (fstat(st->fd, &s) < 0)
		return werr_errno(e, "checkpoint store %s", path);
	if (s.st_uid != geteuid())
		return werr_set(e, 0, "checkpoint store %s belongs to uid %u, not to you: refused",
				path, (unsigned)s.st_uid);
	if (s.st_mode & 022)
		return werr_set(e, 0, "checkpoint store %s is writable by others (mode %04o): "
				"refused", path, (unsigned)(s.st_mode & 07777));
	if (subdirs(st, create, e) < 0)
		return -1;
	/* (the kernel's answer, with EROFS for a read-only mount: a file made
	 * and removed to see cost an inode each session; a full disk is said
	 * by the first write, before anything runs) */
	if (create && faccessat(st->tmp_fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return werr_errno(e, "checkpoint store %s is not writable", path);
	st->lock_fd = openat(st->fd, "lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
				     O_CLOEXEC, 0600);
	if (st->lock_fd < 0 && !create)
		st->lock_fd = openat(st->fd, "lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (st->lock_fd < 0)
		return werr_errno(e, "checkpoint store %s: its lock", path);
	while (flock(st->lock_fd, LOCK_SH) < 0)
		if (errno != EINTR)
			return werr_errno(e, "checkpoint store %s: locking", path);
	return 0;
}

void store_close(struct store *st)
{
	if (!st->path)
		return; /* never opened: its fds are not its own */
	closep(&st->fd);
	closep(&st->lock_fd);
	closep(&st->blobs_fd);
	closep(&st->manifests_fd);
	if (st->pw)
		pack_writer_abort(st->pw, st->tmp_fd); /* never named by a manifest */
	free(st->pw);
	st->pw = NULL;
	if (st->packs)
		pack_set_free(st->packs);
	free(st->packs);
	st->packs = NULL;
	closep(&st->tmp_fd);
	closep(&st->packs_fd);
	strv_free(&st->unsynced);
	free(st->path);
	st->path = NULL;
}

bool store_hash_ok(const char *h)
{
	return sha256_hex_ok(h);
}

static void blob_name(const char *hash, char dir[3], char name[70])
{
	snprintf(dir, 3, "%.2s", hash);
	snprintf(name, 70, "%.2s/%s", hash, hash + 2);
}

struct pack_set *store_packs(const struct store *st)
{
	struct store *w = (struct store *)st; /* the index is a cache */
	if (!w->packs) {
		w->packs = xcalloc(1, sizeof *w->packs);
		pack_set_load(w->packs_fd, w->packs);
	}
	return w->packs;
}

void store_packs_stale(struct store *st)
{
	if (st->packs)
		pack_set_free(st->packs);
	free(st->packs);
	st->packs = NULL;
}

bool store_has_blob(const struct store *st, const char *hash)
{
	char dir[3], name[70];
	if (!store_hash_ok(hash))
		return false;
	if ((st->pw && pack_writer_has(st->pw, hash)) || pack_set_find(store_packs(st), hash))
		return true;
	blob_name(hash, dir, name);
	struct stat s;
	return fstatat(st->blobs_fd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
}

int store_put_small(struct store *st, const char *hash, const void *data, size_t len,
		    struct werr *e)
{
	if (!store_hash_ok(hash))
		return werr_set(e, EINVAL, "checkpoint store: bad hash");
	/* (a loose copy, from before packs, is not looked for: one stat a
	 * small file saved; the content is then stored twice) */
	/* (one in the pack being written is found by pack_writer_add) */
	if (pack_set_find(store_packs(st), hash))
		return 0;
	if (!st->pw) {
		st->pw = xmalloc(sizeof *st->pw);
		*st->pw = (struct pack_writer){ .fd = -1 };
	}
	if (pack_writer_add(st->pw, st->tmp_fd, hash, data, len, e) < 0)
		return werr_wrap(e, "checkpoint store %s", st->path);
	if (st->pw->off < PACK_MAX)
		return 0;
	char name[SHA256_HEX_LEN];
	if (pack_writer_finish(st->pw, st->tmp_fd, st->packs_fd, name, e) < 0)
		return werr_wrap(e, "checkpoint store %s", st->path);
	store_packs_stale(st);
	return 0;
}

/* A small file's bytes read whole (from offset 0, at most max), hashed
 * again and packed. */
static int put_small_fd(struct store *st, int fd, const char *hash, size_t max, struct werr *e)
{
	_cleanup_free_ char *buf = xmalloc(max + 1);
	size_t n = 0;
	for (;;) {
		ssize_t r = pread(fd, buf + n, max + 1 - n, (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return werr_errno(e, "checkpoint store %s: reading a file", st->path);
		if (r == 0 || (n += (size_t)r) > max)
			break;
	}
	char again[SHA256_HEX_LEN];
	sha256_hex(buf, n, again);
	if (n > max || strcmp(again, hash) != 0)
		return werr_set(e, EAGAIN, "the file changed while it was being recorded");
	return store_put_small(st, hash, buf, n, e);
}

static unsigned long tmp_counter;

static char *tmp_name(const char *what)
{
	return xasprintf("%s.%d.%lu", what, (int)getpid(), ++tmp_counter);
}

int store_put_blob(struct store *st, int fd, const char *hash, struct werr *e)
{
	if (!store_hash_ok(hash))
		return werr_set(e, EINVAL, "checkpoint store: bad hash");
	if (store_has_blob(st, hash))
		return 0;
	struct stat fs;
	if (fstat(fd, &fs) < 0)
		return werr_errno(e, "checkpoint store %s: a file to store", st->path);
	if (st->small_max && (unsigned long long)fs.st_size <= st->small_max)
		return put_small_fd(st, fd, hash, (size_t)st->small_max, e);
	_cleanup_free_ char *tmp = tmp_name("b");
	_cleanup_close_ int out = openat(st->tmp_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return werr_errno(e, "checkpoint store %s: cannot write", st->path);
	/* a clone where the file system shares extents, else a copy of the
	 * data, the holes left (the copy is hashed again below: a file that
	 * changed meanwhile is caught there) */
	if (ioctl(out, FICLONE, fd) < 0 && copy_sparse(fd, 0, fs.st_size, out) < 0) {
		int err = errno;
		unlinkat(st->tmp_fd, tmp, 0);
		return werr_set(e, err, "checkpoint store %s: copying a file into it", st->path);
	}
	char again[SHA256_HEX_LEN];
	if (lseek(out, 0, SEEK_SET) < 0 || sha256_fd(out, again) < 0) {
		int err = errno;
		unlinkat(st->tmp_fd, tmp, 0);
		return werr_set(e, err, "checkpoint store %s: reading a copy back", st->path);
	}
	if (strcmp(again, hash) != 0) {
		unlinkat(st->tmp_fd, tmp, 0);
		return werr_set(e, EAGAIN, "the file changed while it was being recorded");
	}
	char dir[3], name[70];
	blob_name(hash, dir, name);
	if (fchmod(out, 0444) < 0 || (mkdirat(st->blobs_fd, dir, 0700) < 0 && errno != EEXIST)) {
		int err = errno;
		unlinkat(st->tmp_fd, tmp, 0);
		return werr_set(e, err, "checkpoint store %s", st->path);
	}
	if (renameat2(st->tmp_fd, tmp, st->blobs_fd, name, RENAME_NOREPLACE) < 0) {
		int err = errno;
		unlinkat(st->tmp_fd, tmp, 0);
		if (err != EEXIST)
			return werr_set(e, err, "checkpoint store %s: storing a file", st->path);
	}
	/* (one stored by another session meanwhile too: it may not be synced
	 * yet when our manifest names it) */
	strv_push(&st->unsynced, name);
	return 0;
}

static int fsync_at(int dirfd, const char *name)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -1 : fsync(fd);
}

/* The blobs stored since the last manifest, on disk: each fsynced, then
 * the directories their names went into (blobs/XX, and blobs for a new
 * XX); past STORE_SYNC_EACH_MAX, one syncfs does it for all (on a first
 * checkpoint of a large tree, much cheaper than a journal commit each). */
static int sync_blobs(struct store *st, struct werr *e)
{
	if (!st->unsynced.n)
		return 0;
	if (st->unsynced.n > STORE_SYNC_EACH_MAX) {
		if (syncfs(st->blobs_fd) < 0)
			return werr_errno(e, "checkpoint store %s: syncing it to disk", st->path);
		strv_free(&st->unsynced);
		return 0;
	}
	_cleanup_strv_ struct strv dirs = { 0 };
	for (size_t i = 0; i < st->unsynced.n; i++) {
		const char *name = st->unsynced.v[i];
		if (fsync_at(st->blobs_fd, name) < 0)
			return werr_errno(e, "checkpoint store %s: syncing blobs/%s to disk", st->path,
					  name);
		_cleanup_free_ char *dir = xasprintf("%.2s", name);
		if (!strv_contains(&dirs, dir))
			strv_push(&dirs, dir);
	}
	for (size_t i = 0; i < dirs.n; i++)
		if (fsync_at(st->blobs_fd, dirs.v[i]) < 0)
			return werr_errno(e, "checkpoint store %s: syncing blobs/%s to disk", st->path,
					  dirs.v[i]);
	if (fsync(st->blobs_fd) < 0)
		return werr_errno(e, "checkpoint store %s: syncing blobs to disk", st->path);
	strv_free(&st->unsynced);
	return 0;
}

/* Write text as dirfd/name, atomically (tmp/ then rename), mode; durable:
 * the file fsynced before the rename, its directory after. */
int store_write_atomic(struct store *st, int dirfd, const char *name, const char *text,
			size_t len, mode_t mode, bool replace, bool durable, struct werr *e)
{
	_cleanup_free_ char *tmp = tmp_name("w");
	_cleanup_close_ int fd = openat(st->tmp_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return werr_errno(e, "checkpoint store %s: cannot write", st->path);
	if (write_all(fd, text, len) < 0 || (durable && fsync(fd) < 0)) {
		int err = errno;
		unlinkat(st->tmp_fd, tmp, 0);
		return werr_set(e, err, "checkpoint store %s: writing %s", st->path, name);
	}
	int r = replace ? renameat(st->tmp_fd, tmp, dirfd, name)
			: renameat2(st->tmp_fd, tmp, dirfd, name, RENAME_NOREPLACE);
	if (r < 0) {
		int err = errno;
		unlinkat(st->tmp_fd, tmp, 0);
		if (err != EEXIST)
			return werr_set(e, err, "checkpoint store %s: writing %s", st->path, name);
	}
	if (durable && fsync(dirfd) < 0)
		return werr_errno(e, "checkpoint store %s: syncing %s to disk", st->path, name);
	return 0;
}

int store_put_manifest(struct store *st, const char *text, size_t len,
		       char out[SHA256_HEX_LEN], struct werr *e)
{
	/* what it names on disk before it is: the pack of small blobs (fsynced
	 * as it is finished), the loose ones */
	char pname[SHA256_HEX_LEN] = "";
	if (st->pw && pack_writer_finish(st->pw, st->tmp_fd, st->packs_fd, pname, e) < 0)
		return werr_wrap(e, "checkpoint store %s", st->path);
	if (pname[0])
		store_packs_stale(st);
	if (sync_blobs(st, e) < 0)
		return -1;
	sha256_hex(text, len, out);
	struct stat s;
	if (fstatat(st->manifests_fd, out, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode) &&
	    (size_t)s.st_size == len)
		return 0; /* the same tree again: its manifest is there (verified when read) */
	return store_write_atomic(st, st->manifests_fd, out, text, len, 0444, false, true, e);
}

int store_get_manifest(const struct store *st, const char *hash, struct manifest *m,
		       struct werr *e)
{
	if (!store_hash_ok(hash))
		return werr_set(e, 0, "checkpoint: '%.80s' is not a manifest hash", hash);
	size_t len = 0;
	_cleanup_free_ char *text =
		read_regular_at(st->manifests_fd, hash, O_NOFOLLOW, MANIFEST_MAX, &len, NULL);
	if (!text)
		return werr_errno(e, "checkpoint store %s: manifest %.16s", st->path, hash);
	char sum[SHA256_HEX_LEN];
	sha256_hex(text, len, sum);
	if (strcmp(sum, hash) != 0)
		return werr_set(e, 0, "checkpoint store %s: manifest %.16s does not match its hash "
				"(it was changed or damaged): not trusted", st->path, hash);
	if (manifest_parse(text, len, m, e) < 0)
		return werr_wrap(e, "checkpoint store %s: manifest %.16s", st->path, hash);
	return 0;
}
