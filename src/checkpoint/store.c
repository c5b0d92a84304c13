/* store.c - the content-addressed checkpoint store: opening and checking
 * it, blobs (clone or copy, verified), manifests (verified by their hash),
 * references and retention, the metadata cache (store.h). */
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

#include "../common/sbuf.h"

#define MANIFEST_MAX (4ULL << 30)

char *store_default_path(const char *home)
{
	_cleanup_free_ char *base = xdg_warden_dir("XDG_DATA_HOME", home, ".local/share");
	return base ? xasprintf("%s/store", base) : NULL;
}

static int subdir(struct store *st, const char *name, int *out, struct werr *e)
{
	if (mkdirat(st->fd, name, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store %s: cannot create %s", st->path, name);
	*out = openat(st->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*out < 0)
		return werr_errno(e, "checkpoint store %s: cannot open %s", st->path, name);
	return 0;
}

int store_open(struct store *st, const char *path, bool create, struct werr *e)
{
	*st = (struct store){ .fd = -1, .lock_fd = -1, .blobs_fd = -1, .manifests_fd = -1,
			      .tmp_fd = -1, .path = xstrdup(path) };
	if (create) {
		_cleanup_free_ char *parent = xstrdup(path);
		char *sl = strrchr(parent, '/');
		if (sl && sl != parent) {
			*sl = '\0';
			if (mkdir_p(parent, 0700, NULL) < 0)
				return werr_errno(e, "checkpoint store: cannot create %s", parent);
		}
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return werr_errno(e, "checkpoint store: cannot create %s", path);
	}
	st->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
	if (subdir(st, "blobs", &st->blobs_fd, e) < 0 ||
	    subdir(st, "manifests", &st->manifests_fd, e) < 0 || subdir(st, "tmp", &st->tmp_fd, e) < 0)
		return -1;
	if (mkdirat(st->fd, "refs", 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store %s: cannot create refs", path);
	if (mkdirat(st->fd, "cache", 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "checkpoint store %s: cannot create cache", path);
	/* (the kernel's answer, with EROFS for a read-only mount: a file made
	 * and removed to see cost an inode each session; a full disk is said
	 * by the first write, before anything runs) */
	if (create && faccessat(st->tmp_fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return werr_errno(e, "checkpoint store %s is not writable", path);
	st->lock_fd = openat(st->fd, "lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (st->lock_fd < 0 && !create)
		st->lock_fd = openat(st->fd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
	closep(&st->tmp_fd);
	strv_free(&st->unsynced);
	free(st->path);
	st->path = NULL;
}

static bool hash_ok(const char *h)
{
	if (strlen(h) != 64)
		return false;
	for (; *h; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return false;
	return true;
}

static void blob_name(const char *hash, char dir[3], char name[70])
{
	snprintf(dir, 3, "%.2s", hash);
	snprintf(name, 70, "%.2s/%s", hash, hash + 2);
}

bool store_has_blob(const struct store *st, const char *hash)
{
	char dir[3], name[70];
	if (!hash_ok(hash))
		return false;
	blob_name(hash, dir, name);
	struct stat s;
	return fstatat(st->blobs_fd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
}

int store_open_blob(const struct store *st, const char *hash)
{
	char dir[3], name[70];
	if (!hash_ok(hash)) {
		errno = EINVAL;
		return -1;
	}
	blob_name(hash, dir, name);
	return openat(st->blobs_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* Copy fd (from offset 0) into out by reads and writes through buf. */
static int copy_by_reads(int fd, int out, char *buf, size_t len)
{
	for (off_t off = 0;;) {
		ssize_t n = pread(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (write_all(out, buf, (size_t)n) < 0)
			return -1;
		off += n;
	}
}

/* Copy fd (from offset 0) into out: copy_file_range (a clone or a server
 * side copy where the kernel can), else read and write. */
static int copy_fd(int fd, int out)
{
	loff_t in_off = 0;
	for (;;) {
		ssize_t n = copy_file_range(fd, &in_off, out, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
			return -1;
		break;
	}
	if (ftruncate(out, 0) < 0 || lseek(out, 0, SEEK_SET) < 0)
		return -1;
	enum { COPY_BUF = 1 << 17 };
	_cleanup_free_ char *buf = xmalloc(COPY_BUF);
	return copy_by_reads(fd, out, buf, COPY_BUF);
}

static unsigned long tmp_counter;

static char *tmp_name(const char *what)
{
	return xasprintf("%s.%d.%lu", what, (int)getpid(), ++tmp_counter);
}

int store_put_blob(struct store *st, int fd, const char *hash, struct werr *e)
{
	if (!hash_ok(hash))
		return werr_set(e, EINVAL, "checkpoint store: bad hash");
	if (store_has_blob(st, hash))
		return 0;
	_cleanup_free_ char *tmp = tmp_name("b");
	_cleanup_close_ int out = openat(st->tmp_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return werr_errno(e, "checkpoint store %s: cannot write", st->path);
	if (ioctl(out, FICLONE, fd) < 0 && copy_fd(fd, out) < 0) {
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
static int write_atomic(struct store *st, int dirfd, const char *name, const char *text,
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
	/* what it names on disk before it is */
	if (sync_blobs(st, e) < 0)
		return -1;
	sha256_hex(text, len, out);
	struct stat s;
	if (fstatat(st->manifests_fd, out, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode) &&
	    (size_t)s.st_size == len)
		return 0; /* the same tree again: its manifest is there (verified when read) */
	return write_atomic(st, st->manifests_fd, out, text, len, 0444, false, true, e);
}

/* The whole of dirfd/name (a regular file, never through a symlink), at
 * most max bytes. */
static char *read_at(int dirfd, const char *name, unsigned long long max, size_t *len)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat s;
	if (fd < 0 || fstat(fd, &s) < 0)
		return NULL;
	if (!S_ISREG(s.st_mode) || (unsigned long long)s.st_size > max) {
		errno = S_ISREG(s.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	struct sbuf b = { 0 };
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(b.p);
			return NULL;
		}
		if (n == 0)
			break;
		if (b.n + (size_t)n > max) {
			free(b.p);
			errno = EFBIG;
			return NULL;
		}
		sb_put(&b, buf, (size_t)n);
	}
	*len = b.n;
	return sb_take(&b);
}

int store_get_manifest(const struct store *st, const char *hash, struct manifest *m,
		       struct werr *e)
{
	if (!hash_ok(hash))
		return werr_set(e, 0, "checkpoint: '%.80s' is not a manifest hash", hash);
	size_t len = 0;
	_cleanup_free_ char *text = read_at(st->manifests_fd, hash, MANIFEST_MAX, &len);
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

static bool ref_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 100)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      *s == '-'))
			return false;
	return true;
}

int store_ref(struct store *st, const char *session, const char *kind, const char *hash,
	      const char *ws, struct werr *e)
{
	if (!ref_name_ok(session) || !ref_name_ok(kind) || !hash_ok(hash))
		return werr_set(e, EINVAL, "checkpoint store: bad reference");
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	_cleanup_free_ char *name = xasprintf("refs/%s.%s", session, kind);
	_cleanup_free_ char *text = xasprintf("%s %s %lld\n", hash, wsum, (long long)time(NULL));
	return write_atomic(st, st->fd, name, text, strlen(text), 0600, true, false, e);
}

bool store_ref_exists(const struct store *st, const char *session, const char *kind)
{
	if (!ref_name_ok(session) || !ref_name_ok(kind))
		return false;
	_cleanup_free_ char *name = xasprintf("refs/%s.%s", session, kind);
	struct stat s;
	return fstatat(st->fd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
}

/* "HASH WSHASH UNIXTIME", a reference's text: true with its fields */
static bool ref_parse(const char *text, char h[SHA256_HEX_LEN], char w[SHA256_HEX_LEN],
		      long long *t)
{
	return text && sscanf(text, "%64s %64s %lld", h, w, t) == 3 && hash_ok(h) && hash_ok(w);
}

int store_ref_read(const struct store *st, const char *session, const char *kind,
		   char out[SHA256_HEX_LEN])
{
	if (!ref_name_ok(session) || !ref_name_ok(kind)) {
		errno = EINVAL;
		return -1;
	}
	_cleanup_free_ char *name = xasprintf("refs/%s.%s", session, kind);
	size_t len = 0;
	_cleanup_free_ char *text = read_at(st->fd, name, 4096, &len);
	char h[SHA256_HEX_LEN], w[SHA256_HEX_LEN];
	long long t;
	if (!ref_parse(text, h, w, &t)) {
		if (text)
			errno = EINVAL;
		return -1;
	}
	memcpy(out, h, SHA256_HEX_LEN);
	return 0;
}

int store_unref(struct store *st, const char *session, const char *kind, struct werr *e)
{
	if (!ref_name_ok(session) || !ref_name_ok(kind))
		return werr_set(e, EINVAL, "checkpoint store: bad reference");
	_cleanup_free_ char *name = xasprintf("refs/%s.%s", session, kind);
	if (unlinkat(st->fd, name, 0) < 0)
		return werr_errno(e, "checkpoint store %s: %s", st->path, name);
	return 0;
}

/* ---- references and retention ---------------------------------------------- */

struct ref {
	char *file;              /* refs/NAME */
	char *session;
	char hash[SHA256_HEX_LEN];
	char ws[SHA256_HEX_LEN];
	long long t;
};

static void refs_free(struct ref *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].file);
		free(v[i].session);
	}
	free(v);
}

static int refs_list(struct store *st, struct ref **out, size_t *nout, struct werr *e)
{
	*out = NULL;
	*nout = 0;
	_cleanup_dir_ DIR *d = dir_open_at(st->fd, "refs", O_NOFOLLOW);
	if (!d)
		return werr_errno(e, "checkpoint store %s: refs", st->path);
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		if (de->d_name[0] == '.' || !dot)
			continue;
		size_t len = 0;
		_cleanup_free_ char *text = read_at(dirfd(d), de->d_name, 4096, &len);
		char h[SHA256_HEX_LEN], w[SHA256_HEX_LEN];
		long long t;
		if (!ref_parse(text, h, w, &t))
			continue;
		if (*nout == cap) {
			cap = cap ? cap * 2 : 32;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		struct ref *r = &(*out)[(*nout)++];
		r->file = xasprintf("refs/%s", de->d_name);
		r->session = xasprintf("%.*s", (int)(dot - de->d_name), de->d_name);
		memcpy(r->hash, h, sizeof r->hash);
		memcpy(r->ws, w, sizeof r->ws);
		r->t = t;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool in_sorted(char **v, size_t n, const char *s)
{
	return n && bsearch(&s, v, n, sizeof *v, cmp_str) != NULL;
}

/* Remove every entry of dirfd not in keep (sorted), prefix put in front of
 * each name before the lookup (the blobs' two-digit directories). */
static void sweep_dir(int dirfd, const char *prefix, char **keep, size_t nkeep)
{
	_cleanup_dir_ DIR *d = dir_open_at(dirfd, ".", 0);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		_cleanup_free_ char *full = xasprintf("%s%s", prefix, de->d_name);
		if (!in_sorted(keep, nkeep, full))
			unlinkat(dirfd, de->d_name, 0);
	}
}

/* The hashes every workspace's metadata cache names, into out. */
static void cache_hashes(struct store *st, struct strv *out)
{
	_cleanup_dir_ DIR *d = dir_open_at(st->fd, "cache", O_NOFOLLOW);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		size_t len = 0;
		_cleanup_free_ char *text = read_at(dirfd(d), de->d_name, 1ULL << 32, &len);
		for (char *line = text, *nl; line && (nl = memchr(line, '\n', len - (size_t)(line - text)));
		     line = nl + 1) {
			char *f = line;
			for (int k = 0; k < 5 && f && f < nl; k++) {
				f = memchr(f, ' ', (size_t)(nl - f));
				f = f ? f + 1 : NULL;
			}
			if (f && nl - f > 64 && f[64] == ' ') {
				char h[SHA256_HEX_LEN];
				memcpy(h, f, 64);
				h[64] = '\0';
				if (hash_ok(h))
					strv_push(out, h);
			}
		}
	}
}

/* store_gc's work, under the lock; what cannot be read keeps everything. */
static void gc_locked(struct store *st)
{
	struct ref *refs;
	size_t nrefs;
	struct werr e = { 0 };
	if (refs_list(st, &refs, &nrefs, &e) < 0)
		return;
	_cleanup_strv_ struct strv mans = { 0 }, blobs = { 0 };
	for (size_t i = 0; i < nrefs; i++)
		if (!strv_contains(&mans, refs[i].hash))
			strv_push(&mans, refs[i].hash);
	refs_free(refs, nrefs);
	for (size_t i = 0; i < mans.n; i++) {
		struct manifest m;
		if (store_get_manifest(st, mans.v[i], &m, &e) < 0)
			return; /* keep everything rather than guess */
		for (size_t j = 0; j < m.n; j++)
			if (m.v[j].type == MF_FILE)
				strv_push(&blobs, m.v[j].hash);
		manifest_free(&m);
	}
	/* a metadata cache names blobs without checking they are there: what
	 * it names stays */
	cache_hashes(st, &blobs);
	if (mans.n > 1)
		qsort(mans.v, mans.n, sizeof *mans.v, cmp_str);
	if (blobs.n > 1)
		qsort(blobs.v, blobs.n, sizeof *blobs.v, cmp_str);
	sweep_dir(st->manifests_fd, "", mans.v, mans.n);
	_cleanup_dir_ DIR *d = dir_open_at(st->blobs_fd, ".", 0);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) != 2)
			continue;
		int sub = openat(st->blobs_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		sweep_dir(sub, de->d_name, blobs.v, blobs.n);
		close(sub);
		unlinkat(st->blobs_fd, de->d_name, AT_REMOVEDIR); /* when empty */
	}
	sweep_dir(st->tmp_fd, "", NULL, 0);
}

/* What no reference reaches goes: manifests, then blobs. Under the
 * exclusive lock, so no checkpoint is being taken meanwhile. */
static void store_gc(struct store *st)
{
	if (flock(st->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return;
	gc_locked(st);
	flock(st->lock_fd, LOCK_SH);
}

struct sess_age {
	const char *session;
	long long t;
};

static int cmp_age_desc(const void *a, const void *b)
{
	const struct sess_age *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? 1 : -1;
	return -strcmp(x->session, y->session);
}

int store_prune(struct store *st, const char *ws, const char *current, unsigned keep,
		unsigned keep_days, struct werr *e)
{
	struct ref *refs;
	size_t nrefs;
	if (refs_list(st, &refs, &nrefs, e) < 0)
		return -1;
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	struct sess_age *ages = xcalloc(nrefs + 1, sizeof *ages);
	size_t n = 0;
	for (size_t i = 0; i < nrefs; i++) {
		if (strcmp(refs[i].ws, wsum) != 0)
			continue;
		size_t j = 0;
		while (j < n && strcmp(ages[j].session, refs[i].session) != 0)
			j++;
		if (j == n)
			ages[n++] = (struct sess_age){ refs[i].session, refs[i].t };
		else if (refs[i].t > ages[j].t)
			ages[j].t = refs[i].t;
	}
	qsort(ages, n, sizeof *ages, cmp_age_desc);
	long long oldest = (long long)time(NULL) - (long long)keep_days * 86400;
	int dropped = 0;
	for (size_t i = 0; i < n; i++) {
		if ((current && strcmp(ages[i].session, current) == 0) ||
		    (i < keep && (keep_days == 0 || ages[i].t >= oldest)))
			continue;
		for (size_t k = 0; k < nrefs; k++)
			if (strcmp(refs[k].session, ages[i].session) == 0 &&
			    strcmp(refs[k].ws, wsum) == 0)
				unlinkat(st->fd, refs[k].file, 0);
		dropped++;
	}
	free(ages);
	refs_free(refs, nrefs);
	/* the removal reads every manifest: at most once an hour */
	struct stat gs;
	bool due = fstatat(st->fd, "gc-stamp", &gs, AT_SYMLINK_NOFOLLOW) < 0 ||
		   gs.st_mtime < time(NULL) - 3600;
	if (dropped && due) {
		int fd = openat(st->fd, "gc-stamp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd >= 0)
			close(fd);
		store_gc(st);
	}
	return dropped;
}

bool store_prune_due(struct store *st, const char *ws, unsigned interval_s)
{
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	if (mkdirat(st->fd, "pruned", 0700) < 0 && errno != EEXIST)
		return true;
	_cleanup_free_ char *name = xasprintf("pruned/%s", wsum);
	time_t now = time(NULL);
	struct stat s;
	if (fstatat(st->fd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode) &&
	    s.st_mtime <= now && s.st_mtime > now - (time_t)interval_s)
		return false;
	int fd = openat(st->fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	return true;
}

/* ---- the metadata cache ---------------------------------------------------- */

static int cmp_mc(const void *a, const void *b)
{
	return strcmp(((const struct mcache_entry *)a)->path, ((const struct mcache_entry *)b)->path);
}

static void mc_push(struct mcache *c, const struct mcache_entry *en)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] = *en;
	c->sorted = false;
}

void mcache_load(const struct store *st, const char *ws, struct mcache *c)
{
	*c = (struct mcache){ 0 };
	char wsum[SHA256_HEX_LEN], name[80];
	sha256_hex(ws, strlen(ws), wsum);
	snprintf(name, sizeof name, "cache/%s", wsum);
	size_t len = 0;
	_cleanup_free_ char *text = read_at(st->fd, name, 1ULL << 32, &len);
	if (!text)
		return;
	size_t lines = 0;
	for (const char *q = text; (q = memchr(q, '\n', len - (size_t)(q - text))); q++)
		lines++;
	c->cap = lines + 1;
	c->v = xmalloc(c->cap * sizeof *c->v);
	for (char *line = text, *nl; (nl = memchr(line, '\n', len - (size_t)(line - text)));
	     line = nl + 1) {
		*nl = '\0';
		struct mcache_entry en = { 0 };
		char *q = line, *end;
		unsigned long long num[7];
		bool ok = true;
		/* DEV INO SIZE MSEC.MNSEC CSEC.CNSEC HASH PATH */
		for (int k = 0; k < 7 && ok; k++) {
			errno = 0;
			num[k] = strtoull(q, &end, 10);
			char want = k == 3 || k == 5 ? '.' : ' ';
			ok = end != q && *end == want && !errno;
			q = end + 1;
		}
		if (!ok || strlen(q) < 66 || q[64] != ' ')
			continue;
		memcpy(en.hash, q, 64);
		en.hash[64] = '\0';
		if (!hash_ok(en.hash) || num[4] >= 1000000000ULL || num[6] >= 1000000000ULL)
			continue;
		en.dev = num[0], en.ino = num[1], en.size = num[2];
		en.mtime_sec = (long long)num[3], en.mtime_nsec = (long)num[4];
		en.ctime_sec = (long long)num[5], en.ctime_nsec = (long)num[6];
		en.path = mf_unescape(q + 65);
		if (!en.path || !*en.path) {
			free(en.path);
			continue;
		}
		mc_push(c, &en);
	}
	size_t i = 1;
	while (i < c->n && strcmp(c->v[i - 1].path, c->v[i].path) < 0)
		i++;
	if (i < c->n) /* saved in order: only a file edited by hand is not */
		qsort(c->v, c->n, sizeof *c->v, cmp_mc);
	c->sorted = true;
}

const char *mcache_lookup(const struct mcache *c, const char *path, const struct stat *s)
{
	if (!c->sorted || !c->n)
		return NULL;
	struct mcache_entry key = { .path = (char *)path };
	const struct mcache_entry *en = bsearch(&key, c->v, c->n, sizeof *c->v, cmp_mc);
	if (!en || en->dev != (unsigned long long)s->st_dev || en->ino != (unsigned long long)s->st_ino ||
	    en->size != (unsigned long long)s->st_size || en->mtime_sec != s->st_mtim.tv_sec ||
	    en->mtime_nsec != s->st_mtim.tv_nsec || en->ctime_sec != s->st_ctim.tv_sec ||
	    en->ctime_nsec != s->st_ctim.tv_nsec)
		return NULL;
	return en->hash;
}

void mcache_add(struct mcache *c, const char *path, const struct stat *s, const char *hash)
{
	struct mcache_entry en = {
		.path = xstrdup(path), .dev = (unsigned long long)s->st_dev,
		.ino = (unsigned long long)s->st_ino, .size = (unsigned long long)s->st_size,
		.mtime_sec = s->st_mtim.tv_sec, .mtime_nsec = s->st_mtim.tv_nsec,
		.ctime_sec = s->st_ctim.tv_sec, .ctime_nsec = s->st_ctim.tv_nsec,
	};
	memcpy(en.hash, hash, sizeof en.hash);
	mc_push(c, &en);
}

static int cmp_mc_ptr(const void *a, const void *b)
{
	return cmp_mc(*(const struct mcache_entry *const *)a, *(const struct mcache_entry *const *)b);
}

int mcache_save(struct store *st, const char *ws, struct mcache *c, struct werr *e)
{
	struct sbuf b = { 0 };
	/* in path order, so that loading it needs no sort */
	const struct mcache_entry **order = xmalloc((c->n + 1) * sizeof *order);
	for (size_t i = 0; i < c->n; i++)
		order[i] = &c->v[i];
	if (c->n > 1)
		qsort(order, c->n, sizeof *order, cmp_mc_ptr);
	for (size_t i = 0; i < c->n; i++) {
		const struct mcache_entry *en = order[i];
		_cleanup_free_ char *p = mf_escape(en->path);
		sb_printf(&b, "%llu %llu %llu %lld.%09ld %lld.%09ld %s %s\n", en->dev, en->ino, en->size,
			  en->mtime_sec, en->mtime_nsec, en->ctime_sec, en->ctime_nsec, en->hash, p);
	}
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	_cleanup_free_ char *name = xasprintf("cache/%s", wsum);
	int r = write_atomic(st, st->fd, name, b.p ? b.p : "", b.n, 0600, true, false, e);
	free(b.p);
	free(order);
	return r;
}

void mcache_free(struct mcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	*c = (struct mcache){ 0 };
}
