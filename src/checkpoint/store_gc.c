/* store_gc.c - the checkpoint store's retention: the checkpoints of a
 * workspace beyond its limits dropped, then what no reference (and no
 * metadata cache) reaches removed: manifests, loose blobs, and packs
 * rewritten without their dead blobs (store.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pack.h"
#include "store_int.h"

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
		_cleanup_free_ char *text =
			read_regular_at(dirfd(d), de->d_name, O_NOFOLLOW, MCACHE_TEXT_MAX, &len, NULL);
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
				if (store_hash_ok(h))
					strv_push(out, h);
			}
		}
	}
}

#define PACK_FEW 1024 /* a pack with fewer blobs is merged with others like it */

/* The live blobs (sorted) of the packs marked in redo, into new packs. */
static int repack(struct store *st, struct pack_set *ps, const bool *redo, char **live,
		  size_t nlive, struct strv *made)
{
	struct pack_writer w = { .fd = -1 };
	struct werr e = { 0 };
	char name[SHA256_HEX_LEN];
	for (size_t i = 0; i < ps->n; i++) {
		const struct pack_ref *r = &ps->v[i];
		char hex[SHA256_HEX_LEN], sum[SHA256_HEX_LEN];
		pack_hash_hex(r->h, hex);
		if (!redo[r->pack] || !in_sorted(live, nlive, hex))
			continue;
		int fd = pack_set_fd(ps, st->packs_fd, r);
		_cleanup_free_ char *buf = xmalloc((size_t)r->size + 1);
		ssize_t n = fd < 0 ? -1 : pread(fd, buf, r->size, (off_t)r->off);
		if (n != (ssize_t)r->size)
			goto fail; /* unreadable: keep the old pack */
		sha256_hex(buf, r->size, sum);
		if (strcmp(sum, hex) != 0)
			continue; /* damaged: not copied (a reader would refuse it anyway) */
		if (pack_writer_add(&w, st->tmp_fd, hex, buf, r->size, &e) < 0)
			goto fail;
		if (w.off >= PACK_MAX) {
			if (pack_writer_finish(&w, st->tmp_fd, st->packs_fd, name, &e) < 0)
				goto fail;
			strv_push(made, name);
		}
	}
	if (pack_writer_finish(&w, st->tmp_fd, st->packs_fd, name, &e) < 0)
		goto fail;
	if (name[0])
		strv_push(made, name);
	return 0;
fail:
	pack_writer_abort(&w, st->tmp_fd);
	return -1;
}

/* Packs holding a blob nothing needs any more, and the small ones when
 * there are several: their live blobs rewritten into new packs (on disk
 * first), then they go. */
static void gc_packs(struct store *st, char **live, size_t nlive)
{
	struct pack_set ps;
	pack_set_load(st->packs_fd, &ps);
	bool *redo = xcalloc(ps.npacks + 1, sizeof *redo);
	size_t *count = xcalloc(ps.npacks + 1, sizeof *count), few = 0;
	bool any = false;
	for (size_t i = 0; i < ps.n; i++) {
		char hex[SHA256_HEX_LEN];
		pack_hash_hex(ps.v[i].h, hex);
		count[ps.v[i].pack]++;
		if (!in_sorted(live, nlive, hex))
			any = redo[ps.v[i].pack] = true;
	}
	for (size_t p = 0; p < ps.npacks; p++)
		few += count[p] < PACK_FEW;
	for (size_t p = 0; few > 1 && p < ps.npacks; p++)
		if (count[p] < PACK_FEW)
			any = redo[p] = true;
	_cleanup_strv_ struct strv made = { 0 };
	if (any && repack(st, &ps, redo, live, nlive, &made) == 0) {
		for (size_t p = 0; p < ps.npacks; p++) {
			if (!redo[p] || strv_contains(&made, ps.packs[p].name))
				continue;
			_cleanup_free_ char *f = xasprintf("%s.pack", ps.packs[p].name);
			unlinkat(st->packs_fd, f, 0);
		}
		store_packs_stale(st);
	}
	free(redo);
	free(count);
	pack_set_free(&ps);
}

/* store_gc's work, under the lock; what cannot be read keeps everything. */
static void gc_locked(struct store *st)
{
	struct store_refent *refs;
	size_t nrefs;
	struct werr e = { 0 };
	if (store_refs_all(st, &refs, &nrefs, &e) < 0)
		return;
	_cleanup_strv_ struct strv mans = { 0 }, blobs = { 0 };
	for (size_t i = 0; i < nrefs; i++)
		if (!strv_contains(&mans, refs[i].hash))
			strv_push(&mans, refs[i].hash);
	store_refs_free(refs, nrefs);
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
	gc_packs(st, blobs.v, blobs.n);
	sweep_dir(st->tmp_fd, "", NULL, 0);
}

/* What no reference reaches goes: manifests, then blobs. Under the
 * exclusive lock, so no checkpoint is being taken meanwhile. */
static void store_gc(struct store *st)
{
	if ((st->pw && !pack_writer_empty(st->pw)) || flock(st->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return; /* (our own pack unfinished: its temporary file stays) */
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
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	/* the workspace's own references, from its index (refs.c) */
	struct store_refent *refs;
	size_t nrefs;
	if (store_refs_of(st, wsum, &refs, &nrefs, e) < 0)
		return -1;
	struct sess_age *ages = xcalloc(nrefs + 1, sizeof *ages);
	size_t n = 0;
	for (size_t i = 0; i < nrefs; i++) {
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
			if (strcmp(refs[k].session, ages[i].session) == 0)
				store_ref_drop(st, &refs[k]);
		dropped++;
	}
	free(ages);
	store_refs_free(refs, nrefs);
	/* the removal reads every manifest: at most once an hour */
	struct stat gs;
	bool due = fstatat(st->fd, "gc-stamp", &gs, AT_SYMLINK_NOFOLLOW) < 0 ||
		   gs.st_mtime < time(NULL) - 3600;
	if (dropped && due) {
		int fd = openat(st->fd, "gc-stamp",
				O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
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
	_cleanup_free_ char *name = xasprintf("pruned/%s", wsum);
	time_t now = time(NULL);
	struct stat s;
	/* a stamp just made may read a second ahead of time(): the file's
	 * time is the kernel's fine-grained one, time() its coarse one */
	if (fstatat(st->fd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode) &&
	    s.st_mtime <= now + 1 && s.st_mtime > now - (time_t)interval_s)
		return false;
	/* (made only when the stamp is to be written: its being there is
	 * known when the stamp was) */
	if (mkdirat(st->fd, "pruned", 0700) < 0 && errno != EEXIST)
		return true;
	/* (without waiting: a FIFO put there is not written to) */
	int fd = openat(st->fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	return true;
}

