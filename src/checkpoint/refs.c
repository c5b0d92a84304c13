/* refs.c - the checkpoint store's references (store.h): refs/SESSION.KIND,
 * "HASH WSHASH UNIXTIME", one a checkpoint, and the workspace index beside
 * them: wsrefs/WSHASH/SESSION.KIND, a hard link to each reference in the
 * directory of its workspace, so that retention (store_gc.c) reads the
 * references of one workspace and not those of every session of every
 * workspace the store has seen (19,000 on a development machine: half a
 * second a session end).
 *
 * The index is kept whole: a reference is linked into it as it is written
 * and unlinked with it; wsrefs/complete says every reference is in it.
 * Without that file (a store from before the index, a link that failed)
 * the first lookup reads refs/ whole, links what is missing, and makes it.
 * A crash between a reference's write and its link leaves the reference
 * out of the index until the next removal pass (store_refs_all, which links
 * every reference it reads): kept longer, never dropped early. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_int.h"

#define INDEX "wsrefs"
#define INDEX_COMPLETE "complete"   /* in INDEX */

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

/* "HASH WSHASH UNIXTIME", a reference's text: true with its fields */
bool store_ref_parse(const char *text, char h[SHA256_HEX_LEN], char w[SHA256_HEX_LEN],
		      long long *t)
{
	return text && sscanf(text, "%64s %64s %lld", h, w, t) == 3 && store_hash_ok(h) && store_hash_ok(w);
}

/* The index's directory, or its workspace wsum's in it (wsum not NULL),
 * never through a symbolic link; made when missing and create. -1 with
 * errno. */
static int index_open(struct store *st, const char *wsum, bool create)
{
	const int fl = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	_cleanup_close_ int top = openat(st->fd, INDEX, fl);
	if (top < 0 && errno == ENOENT && create && (mkdirat(st->fd, INDEX, 0700) == 0 || errno == EEXIST))
		top = openat(st->fd, INDEX, fl);
	if (top < 0 || !wsum)
		return top < 0 ? -1 : steal_fd(&top);
	int fd = openat(top, wsum, fl);
	if (fd < 0 && errno == ENOENT && create && (mkdirat(top, wsum, 0700) == 0 || errno == EEXIST))
		fd = openat(top, wsum, fl);
	return fd;
}

/* refs/name linked as wsrefs/wsum/name (a link already there replaced:
 * the reference was rewritten); -1 when it could not be. */
static int index_link(struct store *st, const char *wsum, const char *name)
{
	_cleanup_close_ int dir = index_open(st, wsum, true);
	if (dir < 0)
		return -1;
	_cleanup_free_ char *from = xasprintf("refs/%s", name);
	if (linkat(st->fd, from, dir, name, 0) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	struct stat a, b;
	if (fstatat(st->fd, from, &a, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		return 0;
	if (unlinkat(dir, name, 0) < 0 && errno != ENOENT)
		return -1;
	return linkat(st->fd, from, dir, name, 0);
}

/* A reference's link in the index gone (if it is there). */
static void index_unlink(struct store *st, const char *wsum, const char *name)
{
	_cleanup_close_ int dir = index_open(st, wsum, false);
	if (dir >= 0)
		unlinkat(dir, name, 0);
}

/* wsrefs/complete: made (the index is whole), removed, or looked for. */
static void index_whole(struct store *st, bool whole)
{
	_cleanup_close_ int top = index_open(st, NULL, whole);
	if (top < 0)
		return;
	if (!whole) {
		unlinkat(top, INDEX_COMPLETE, 0);
		return;
	}
	int fd = openat(top, INDEX_COMPLETE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			0600);
	if (fd >= 0)
		close(fd);
}

static bool index_is_whole(struct store *st)
{
	_cleanup_close_ int top = index_open(st, NULL, false);
	struct stat s;
	return top >= 0 && fstatat(top, INDEX_COMPLETE, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
}

int store_ref(struct store *st, const char *session, const char *kind, const char *hash,
	      const char *ws, struct werr *e)
{
	if (!ref_name_ok(session) || !ref_name_ok(kind) || !store_hash_ok(hash))
		return werr_set(e, EINVAL, "checkpoint store: bad reference");
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	_cleanup_free_ char *base = xasprintf("%s.%s", session, kind);
	_cleanup_free_ char *name = xasprintf("refs/%s", base);
	_cleanup_free_ char *text = xasprintf("%s %s %lld\n", hash, wsum, (long long)time(NULL));
	if (store_write_atomic(st, st->fd, name, text, strlen(text), 0600, true, false, e) < 0)
		return -1;
	/* not in the index: the index is no longer whole (the next lookup
	 * reads refs/ and mends it) */
	if (index_link(st, wsum, base) < 0)
		index_whole(st, false);
	return 0;
}

bool store_ref_exists(const struct store *st, const char *session, const char *kind)
{
	if (!ref_name_ok(session) || !ref_name_ok(kind))
		return false;
	_cleanup_free_ char *name = xasprintf("refs/%s.%s", session, kind);
	struct stat s;
	return fstatat(st->fd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
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
	_cleanup_free_ char *text = read_regular_at(st->fd, name, O_NOFOLLOW, 4096, &len, NULL);
	char h[SHA256_HEX_LEN], w[SHA256_HEX_LEN];
	long long t;
	if (!store_ref_parse(text, h, w, &t)) {
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
	_cleanup_free_ char *base = xasprintf("%s.%s", session, kind);
	_cleanup_free_ char *name = xasprintf("refs/%s", base);
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(st->fd, name, O_NOFOLLOW, 4096, &len, NULL);
	char h[SHA256_HEX_LEN], w[SHA256_HEX_LEN];
	long long t;
	if (store_ref_parse(text, h, w, &t))
		index_unlink(st, w, base);
	if (unlinkat(st->fd, name, 0) < 0)
		return werr_errno(e, "checkpoint store %s: %s", st->path, name);
	return 0;
}

/* ---- listing ----------------------------------------------------------------- */

void store_refs_free(struct store_refent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].session);
	}
	free(v);
}

/* The references in at/what (refs/ or one workspace's index), appended to
 * *out; only those of workspace wsum when it is not NULL. */
static int read_dir(int at, const char *what, const char *wsum, struct store_refent **out,
		    size_t *nout, size_t *cap, const struct store *st, struct werr *e)
{
	_cleanup_dir_ DIR *d = dir_open_at(at, what, O_NOFOLLOW);
	if (!d)
		return werr_errno(e, "checkpoint store %s: %s", st->path, what);
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		if (de->d_name[0] == '.' || !dot)
			continue;
		size_t len = 0;
		_cleanup_free_ char *text = read_regular_at(dirfd(d), de->d_name, O_NOFOLLOW, 4096, &len, NULL);
		char h[SHA256_HEX_LEN], w[SHA256_HEX_LEN];
		long long t;
		if (!store_ref_parse(text, h, w, &t) || (wsum && strcmp(w, wsum) != 0))
			continue;
		if (*nout == *cap) {
			*cap = *cap ? *cap * 2 : 32;
			*out = xrealloc(*out, *cap * sizeof **out);
		}
		struct store_refent *r = &(*out)[(*nout)++];
		r->name = xstrdup(de->d_name);
		r->session = xasprintf("%.*s", (int)(dot - de->d_name), de->d_name);
		memcpy(r->hash, h, sizeof r->hash);
		memcpy(r->ws, w, sizeof r->ws);
		r->t = t;
	}
	return 0;
}

int store_refs_all(struct store *st, struct store_refent **out, size_t *nout, struct werr *e)
{
	*out = NULL;
	*nout = 0;
	size_t cap = 0;
	if (read_dir(st->fd, "refs", NULL, out, nout, &cap, st, e) < 0)
		return -1;
	/* every reference read is in the index from here */
	bool whole = true;
	for (size_t i = 0; i < *nout; i++)
		whole = index_link(st, (*out)[i].ws, (*out)[i].name) == 0 && whole;
	if (whole)
		index_whole(st, true);
	return 0;
}

int store_refs_of(struct store *st, const char *wsum, struct store_refent **out, size_t *nout,
		  struct werr *e)
{
	if (!index_is_whole(st)) {
		if (store_refs_all(st, out, nout, e) < 0)
			return -1;
		size_t n = 0;
		for (size_t i = 0; i < *nout; i++) {
			if (strcmp((*out)[i].ws, wsum) == 0) {
				(*out)[n++] = (*out)[i];
				continue;
			}
			free((*out)[i].name);
			free((*out)[i].session);
		}
		*nout = n;
		return 0;
	}
	*out = NULL;
	*nout = 0;
	size_t cap = 0;
	_cleanup_close_ int dir = index_open(st, wsum, false);
	if (dir < 0 && errno == ENOENT)
		return 0; /* no session of the workspace yet */
	if (dir < 0)
		return werr_errno(e, "checkpoint store %s: the index of a workspace", st->path);
	return read_dir(dir, ".", wsum, out, nout, &cap, st, e);
}

void store_ref_drop(struct store *st, const struct store_refent *r)
{
	index_unlink(st, r->ws, r->name);
	_cleanup_free_ char *ref = xasprintf("refs/%s", r->name);
	unlinkat(st->fd, ref, 0);
}
