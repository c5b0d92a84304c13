/* snapshot.c - taking a checkpoint of a workspace into the store
 * (snapshot.h). */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/walk.h"
#include "prefetch.h"

struct snap_ctx {
	const struct snap_opts *o;
	struct snap_result *r;
	struct mcache old, now;
	long long t0_ns;              /* when the walk began (CLOCK_REALTIME) */
	char *closed;                 /* a directory the walk could not look inside */
	char *buf;                    /* STORE_SMALL_MAX + 1 bytes: a small file's */
	struct prefetch pf;           /* the small files of the directory walked */
	bool pf_on;
	unsigned seen;                /* entries, for o->interrupted */
};

/* How often the walk asks o->interrupted: a question costs a system call
 * (a pending signal looked for), a few microseconds per 64 entries. */
#define SNAP_ASK_EVERY 64

static void on_closed(void *ctx, const char *rel, int err)
{
	struct snap_ctx *c = ctx;
	if (!c->closed)
		c->closed = xasprintf("%s: %s", rel, strerror(err));
}

bool snapshot_excluded(const struct strv *exclude, const char *rel, const char *name)
{
	for (size_t i = 0; exclude && i < exclude->n; i++) {
		const char *p = exclude->v[i];
		if (strchr(p, '/') ? fnmatch(p, rel, FNM_PATHNAME | FNM_PERIOD) == 0
				   : fnmatch(p, name, FNM_PERIOD) == 0)
			return true;
	}
	return false;
}

static int changed(struct werr *e, const char *rel)
{
	return werr_set(e, EAGAIN, "checkpoint: the workspace changed while it was being "
			"recorded (%s); retry when nothing else writes to it, or `checkpoint "
			"exclude` what keeps changing", rel);
}

/* Open a regular file for reading; one of the user's own without u+r is
 * given it for the moment (*chmodded set). */
static int open_file(int dirfd, const char *name, const struct stat *s, bool *chmodded)
{
	*chmodded = false;
	int fd = openat(dirfd, name, CKPT_OPEN_FLAGS);
	if (fd >= 0 || errno != EACCES || s->st_uid != geteuid())
		return fd;
	if (fchmodat(dirfd, name, (s->st_mode & 07777) | 0400, 0) < 0)
		return -1;
	fd = openat(dirfd, name, CKPT_OPEN_FLAGS);
	int err = errno;
	(void)!fchmodat(dirfd, name, s->st_mode & 07777, 0);
	*chmodded = true;
	errno = err;
	return fd;
}

/* The content of fd (the walk's lstat s) hashed into en->hash: a small
 * file (by s) read once into c->buf (*n its length), bounded, the fstat
 * after saying whether it was this file; a larger one checked to be the
 * same regular file first, then hashed from fd (*n -1). The fstat after
 * (*b): the same inode and a regular file, its size, mtime and (unless
 * chmodded) ctime unchanged, else the workspace changed under the walk. */
static int hash_content(struct snap_ctx *c, int fd, const struct walk_entry *we,
			const struct stat *s, bool chmodded, struct mf_entry *en, ssize_t *n,
			struct stat *b, struct werr *e)
{
	*n = -1;
	if (s->st_size <= STORE_SMALL_MAX) {
		*n = pf_read_small(fd, c->buf, (size_t)s->st_size);
		if (*n < 0)
			return errno == ESPIPE || errno == EISDIR ? changed(e, we->rel)
				: werr_errno(e, "checkpoint: reading %s", we->rel);
	} else {
		struct stat a;
		if (fstat(fd, &a) < 0)
			return werr_errno(e, "checkpoint: cannot read %s", we->rel);
		if (a.st_ino != s->st_ino || a.st_dev != s->st_dev || !S_ISREG(a.st_mode))
			return changed(e, we->rel);
		if (sha256_fd(fd, en->hash) < 0)
			return werr_errno(e, "checkpoint: reading %s", we->rel);
	}
	if (fstat(fd, b) < 0)
		return werr_errno(e, "checkpoint: %s", we->rel);
	if (!pf_unchanged(s, b, *n, chmodded))
		return changed(e, we->rel);
	if (*n >= 0)
		sha256_hex(c->buf, (size_t)*n, en->hash);
	return 0;
}

/* A file recorded (s its stat, hash its content's): in the next cache,
 * unless it changed too lately to be trusted. */
static void remember_file(struct snap_ctx *c, const char *rel, const struct stat *s,
			  const char *hash)
{
	/* an inode changed within the last second may change again within
	 * the same timestamp: read it next time */
	long long cns = (long long)s->st_ctim.tv_sec * 1000000000LL + s->st_ctim.tv_nsec;
	long long mns = (long long)s->st_mtim.tv_sec * 1000000000LL + s->st_mtim.tv_nsec;
	if (cns < c->t0_ns - 1000000000LL && mns < c->t0_ns - 1000000000LL)
		mcache_add(&c->now, rel, s, hash);
	c->r->files++;
}

/* size more bytes of file content (of rel): within `checkpoint max-size`?
 * The file that passed it is named: a large one (a disk image, a sparse
 * database file counted at its full size) is often the one to exclude. */
static int count_bytes(struct snap_ctx *c, const char *rel, unsigned long long size,
		       struct werr *e)
{
	c->r->bytes += size;
	if (c->o->max_size && c->r->bytes > c->o->max_size)
		return werr_set(e, 0, "checkpoint: the workspace holds more than `checkpoint "
				"max-size` allows (%llu bytes), passed at %s (%llu bytes); raise it, "
				"`checkpoint exclude` what need not be recorded (build output, "
				"dependencies, large files), or set `checkpoint off`",
				c->o->max_size, rel, size);
	return 0;
}

static int add_entry(struct snap_ctx *c, const struct mf_entry *en, struct werr *e)
{
	if (c->r->m.n >= MF_MAX_ENTRIES)
		return werr_set(e, 0, "checkpoint: more than %u entries", MF_MAX_ENTRIES);
	manifest_add(&c->r->m, en);
	return 0;
}

/* A regular file by its directory entry's word (d_type) that the cache
 * does not name, so one that will be read: opened first and looked at
 * through the open file (*s its fstat), which spares a lookup by name per
 * file. The walls are today's: opened never through a symlink, without
 * blocking or taking a terminal, as open_file does; what was opened is
 * what is recorded (s is its fstat, not a name's), and hash_content's
 * fstat after the read still says whether it changed meanwhile. Anything
 * else (not a regular file by the time it is open, an open refused, a
 * directory entry that said nothing) gives -1, and on_entry looks by name
 * as it does for every other entry. */
static int open_walked_file(struct snap_ctx *c, const struct walk_entry *we, struct stat *s)
{
	if (we->type != DT_REG || mcache_has(&c->old, we->rel))
		return -1;
	int fd = openat(we->dirfd, we->name, CKPT_OPEN_FLAGS);
	if (fd >= 0 && (fstat(fd, s) < 0 || !S_ISREG(s->st_mode)))
		closep(&fd);
	return fd;
}

/* The file's hash into en, read (from fd when on_entry opened it, else
 * opened here) unless the cache knows it, and stored. */
static int record_file(struct snap_ctx *c, const struct walk_entry *we, struct stat *s,
		       int opened, struct mf_entry *en, struct werr *e)
{
	const struct snap_opts *o = c->o;
	const char *h = opened < 0 ? mcache_lookup(&c->old, we->rel, s) : NULL;
	/* the cache names only blobs stored (the removal of unreferenced ones
	 * keeps what a cache names) */
	if (h) {
		memcpy(en->hash, h, SHA256_HEX_LEN);
		c->r->cached++;
	} else {
		bool chmodded = false;
		_cleanup_close_ int own = opened < 0 ? open_file(we->dirfd, we->name, s, &chmodded) : -1;
		int fd = opened < 0 ? own : opened;
		struct stat b;
		ssize_t n;
		if (fd < 0)
			return werr_errno(e, "checkpoint: cannot read %s", we->rel);
		if (hash_content(c, fd, we, s, chmodded, en, &n, &b, e) < 0)
			return -1;
		bool pack = n >= 0 && o->store_blobs && o->st->small_max &&
			    (unsigned long long)n <= o->st->small_max;
		if (o->store_blobs &&
		    (pack ? store_put_small(o->st, en->hash, c->buf, (size_t)n, e)
			  : store_put_blob(o->st, fd, en->hash, e)) < 0)
			return errno == EAGAIN || e->errnum == EAGAIN ? changed(e, we->rel)
								      : werr_wrap(e, "checkpoint of %s", we->rel);
		c->r->read += (unsigned long long)s->st_size;
		if (chmodded)
			*s = b;
	}
	remember_file(c, we->rel, s, en->hash);
	return 0;
}

int mf_entry_from_stat(int dirfd, const char *name, const char *rel, const struct stat *s,
		       const char *who, struct mf_entry *en, char **target, struct werr *e)
{
	*target = NULL;
	*en = (struct mf_entry){ .path = (char *)rel, .mode = s->st_mode & 07777,
				 .mtime_sec = s->st_mtim.tv_sec, .mtime_nsec = s->st_mtim.tv_nsec };
	if (S_ISDIR(s->st_mode)) {
		en->type = MF_DIR;
	} else if (S_ISREG(s->st_mode)) {
		en->type = MF_FILE;
		en->size = (unsigned long long)s->st_size;
	} else if (S_ISLNK(s->st_mode)) {
		en->type = MF_LINK;
		size_t cap = (size_t)s->st_size + 2;
		if (cap > MF_MAX_PATH + 2)
			return werr_set(e, 0, "%s: %s: a symlink target too long", who, rel);
		*target = xmalloc(cap);
		ssize_t n = readlinkat(dirfd, name, *target, cap);
		if (n < 0)
			return werr_errno(e, "%s: %s", who, rel);
		if ((size_t)n >= cap - 1)
			return MF_STAT_RACE;
		(*target)[n] = '\0';
		en->target = *target;
		en->size = (unsigned long long)n;
	} else {
		return 0;
	}
	return 1;
}

/* The manifest type of a FIFO, socket or device; 0 for anything else. */
static char special_type(mode_t m)
{
	return S_ISFIFO(m) ? MF_FIFO : S_ISSOCK(m) ? MF_SOCK : S_ISCHR(m) ? MF_CHR
		: S_ISBLK(m) ? MF_BLK : 0;
}

/* An entry looked at by name (or through the file open_walked_file
 * opened): its manifest entry, a file's content read unless the cache
 * knows it; a FIFO, socket or device by its name, type and mode (never
 * opened: not content, but what `diff` shows and `undo` removes). */
static int record_entry(struct snap_ctx *c, const struct walk_entry *we, struct werr *e)
{
	struct stat s;
	_cleanup_close_ int fd = open_walked_file(c, we, &s);
	if (fd < 0 && fstatat(we->dirfd, we->name, &s, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? changed(e, we->rel) : werr_errno(e, "checkpoint: %s", we->rel);
	struct mf_entry en;
	_cleanup_free_ char *target = NULL;
	int r = mf_entry_from_stat(we->dirfd, we->name, we->rel, &s, "checkpoint", &en, &target, e);
	if (r == MF_STAT_RACE)
		return changed(e, we->rel);
	if (r < 0)
		return -1;
	if (r == 0 && !(en.type = special_type(s.st_mode)))
		return WALK_SKIP;
	if (en.type == MF_FILE) {
		if (count_bytes(c, we->rel, en.size, e) < 0 || record_file(c, we, &s, fd, &en, e) < 0)
			return -1;
		en.mtime_sec = s.st_mtim.tv_sec;
		en.mtime_nsec = s.st_mtim.tv_nsec;
	}
	if (add_entry(c, &en, e) < 0)
		return -1;
	return en.type == MF_DIR ? WALK_DESCEND : WALK_SKIP;
}

/* A file the batch read (j, its bytes data): recorded as record_entry
 * would have. */
static int record_read(struct snap_ctx *c, const struct walk_entry *we, const struct pf_job *j,
		       const char *data, struct werr *e)
{
	if (j->status == PF_CHANGED)
		return changed(e, we->rel);
	if (j->status == PF_FAILED) {
		errno = j->err;
		return werr_errno(e, "checkpoint: reading %s", we->rel);
	}
	struct mf_entry en;
	char *target;
	if (mf_entry_from_stat(we->dirfd, we->name, we->rel, &j->s, "checkpoint", &en, &target,
			       e) != 1 || count_bytes(c, we->rel, en.size, e) < 0)
		return -1;
	memcpy(en.hash, j->hash, SHA256_HEX_LEN);
	if (c->o->store_blobs && store_put_small(c->o->st, en.hash, data, j->n, e) < 0)
		return e->errnum == EAGAIN ? changed(e, we->rel)
					   : werr_wrap(e, "checkpoint of %s", we->rel);
	c->r->read += en.size;
	remember_file(c, we->rel, &j->s, en.hash);
	return add_entry(c, &en, e);
}

/* The batch of the directory open as dirfd read (on two threads), then
 * each of its files recorded in turn. */
static int read_batch(struct snap_ctx *c, int dirfd, struct werr *e)
{
	prefetch_run(&c->pf, dirfd);
	int r = 0;
	for (size_t i = 0; i < c->pf.n && r >= 0; i++) {
		struct walk_entry we = { .dirfd = dirfd, .name = prefetch_name(&c->pf, i),
					 .rel = prefetch_rel(&c->pf, i), .type = DT_REG };
		const struct pf_job *j = &c->pf.v[i];
		r = j->status == PF_BY_NAME ? record_entry(c, &we, e)
					    : record_read(c, &we, j, prefetch_data(&c->pf, i), e);
	}
	prefetch_clear(&c->pf);
	return r < 0 ? -1 : 0;
}

static int on_entry(void *ctx, const struct walk_entry *we, struct werr *e)
{
	struct snap_ctx *c = ctx;
	if (c->o->interrupted && ++c->seen % SNAP_ASK_EVERY == 0 && c->o->interrupted())
		return werr_set(e, EINTR, "checkpoint: stopped by a signal while the workspace was "
				"recorded (at %s)", we->rel);
	/* a placeholder is a directory or a socket: a file is not looked up */
	if (c->o->unrecorded && (we->type == DT_DIR || we->type == DT_SOCK ||
				 we->type == DT_UNKNOWN) && strv_contains(c->o->unrecorded, we->rel))
		return WALK_SKIP;
	/* Longer than a manifest holds (a tree nested that deep): left out,
	 * with what is under it, and said. Recorded, it would make the
	 * manifest unreadable, and with it `warden undo` of this and every
	 * later session. The directory above is recorded: an undo that
	 * removes it removes what is under it too. */
	if (strlen(we->rel) > MF_MAX_PATH) {
		if (!c->r->too_deep++)
			c->r->too_deep_first = xstrdup(we->rel);
		return WALK_SKIP;
	}
	if (snapshot_excluded(c->o->exclude, we->rel, we->name)) {
		strv_push(&c->r->excluded, we->rel);
		return WALK_SKIP;
	}
	/* a regular file by its directory entry that will be read: with the
	 * directory's others, in a batch (what it turns out to be is looked
	 * at then, while the directory is still open) */
	if (c->pf_on && we->type == DT_REG && !mcache_has(&c->old, we->rel)) {
		prefetch_add(&c->pf, we->name, we->rel);
		return prefetch_full(&c->pf) ? read_batch(c, we->dirfd, e) : WALK_SKIP;
	}
	return record_entry(c, we, e);
}

static int on_dir_done(void *ctx, int dirfd, const char *rel, bool tagged, struct werr *e)
{
	(void)rel, (void)tagged;
	struct snap_ctx *c = ctx;
	return c->pf.n ? read_batch(c, dirfd, e) : 0;
}

int snapshot_take(int rootfd, const struct snap_opts *o, struct snap_result *r, struct werr *e)
{
	*r = (struct snap_result){ 0 };
	struct stat s;
	if (fstat(rootfd, &s) < 0)
		return werr_errno(e, "checkpoint: the workspace");
	r->m.root_mode = o->root_mode_set ? o->root_mode & 07777 : s.st_mode & 07777;
	for (size_t i = 0; o->exclude && i < o->exclude->n; i++)
		strv_push(&r->m.exclude, o->exclude->v[i]);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct snap_ctx c = { .o = o, .r = r,
			      .t0_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec };
	mcache_load(o->st, o->ws, &c.old);
	c.buf = xmalloc(STORE_SMALL_MAX + 1);
	/* about the size of the last time: no array copied as it grows */
	if (c.old.n) {
		c.now.cap = c.old.n + 64;
		c.now.v = xmalloc(c.now.cap * sizeof *c.now.v);
		r->m.cap = c.old.n + c.old.n / 8 + 64;
		r->m.v = xmalloc(r->m.cap * sizeof *r->m.v);
	}
	/* the small files read on two threads: those packed, or all when
	 * nothing is stored (without packs a file is copied from its fd) */
	c.pf_on = !o->store_blobs || o->st->small_max;
	if (c.pf_on)
		prefetch_init(&c.pf, o->store_blobs && o->st->small_max < STORE_SMALL_MAX
					     ? (size_t)o->st->small_max : STORE_SMALL_MAX);
	struct walk_ops ops = { .entry = on_entry, .dir_done = on_dir_done, .closed = on_closed };
	int ret = walk_tree(rootfd, &ops, &c, e);
	if (c.pf_on)
		prefetch_free(&c.pf);
	if (ret == 0 && c.closed)
		ret = werr_set(e, 0, "checkpoint: cannot look inside %s", c.closed);
	free(c.closed);
	if (ret == 0) {
		manifest_sort(&r->m);
		if (o->store_blobs) {
			size_t len;
			_cleanup_free_ char *text = manifest_format(&r->m, &len);
			if (store_put_manifest(o->st, text, len, r->hash, e) < 0)
				ret = -1;
			struct werr ce = { 0 };
			/* unchanged when every entry came from it and none went */
			bool same = c.r->cached == c.old.n && c.now.n == c.old.n;
			if (ret == 0 && !same)
				mcache_save(o->st, o->ws, &c.now, &ce); /* only a cost when lost */
		}
	}
	mcache_free(&c.old);
	mcache_free(&c.now);
	free(c.buf);
	return ret;
}

void snap_result_free(struct snap_result *r)
{
	manifest_free(&r->m);
	strv_free(&r->excluded);
	free(r->too_deep_first);
	r->too_deep_first = NULL;
}

int snapshot_open_root(int anyfd, mode_t *restore, struct werr *e)
{
	*restore = (mode_t)-1;
	struct stat s;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", anyfd);
	if (fstat(anyfd, &s) < 0 || !S_ISDIR(s.st_mode))
		return werr_errno(e, "the workspace");
	if (s.st_uid == geteuid() && (s.st_mode & 0700) != 0700) {
		if (chmod(self, (s.st_mode & 07777) | 0700) < 0)
			return werr_errno(e, "opening up the workspace directory");
		*restore = s.st_mode & 07777;
	}
	int fd = open(self, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (*restore != (mode_t)-1)
			(void)!chmod(self, *restore);
		return werr_set(e, err, "opening the workspace directory");
	}
	return fd;
}

void snapshot_close_root(int fd, mode_t restore)
{
	if (fd >= 0 && restore != (mode_t)-1)
		(void)!fchmod(fd, restore);
	if (fd >= 0)
		close(fd);
}

int snapshot_take_dir(int anyfd, const struct snap_opts *o, struct snap_result *r,
		      struct werr *e)
{
	mode_t restore;
	*r = (struct snap_result){ 0 };
	int fd = snapshot_open_root(anyfd, &restore, e);
	if (fd < 0)
		return -1;
	struct snap_opts oo = *o;
	oo.root_mode_set = restore != (mode_t)-1;
	oo.root_mode = restore;
	int ret = snapshot_take(fd, &oo, r, e);
	snapshot_close_root(fd, restore);
	return ret;
}
