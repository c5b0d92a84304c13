/* mcache.c - the checkpoint store's metadata cache: per workspace, the
 * hash of each file by its device, inode, size, mtime and ctime, so that an
 * unchanged file is not read again (store.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sbuf.h"
#include "store_int.h"

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
	_cleanup_free_ char *text =
		read_regular_at(st->fd, name, O_NOFOLLOW, MCACHE_TEXT_MAX, &len, NULL);
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
		if (!store_hash_ok(en.hash) || num[4] >= 1000000000ULL || num[6] >= 1000000000ULL)
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

static const struct mcache_entry *find(const struct mcache *c, const char *path)
{
	if (!c->sorted || !c->n)
		return NULL;
	struct mcache_entry key = { .path = (char *)path };
	return bsearch(&key, c->v, c->n, sizeof *c->v, cmp_mc);
}

bool mcache_has(const struct mcache *c, const char *path)
{
	return find(c, path) != NULL;
}

const char *mcache_lookup(const struct mcache *c, const char *path, const struct stat *s)
{
	const struct mcache_entry *en = find(c, path);
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

/* "DEV INO SIZE MSEC.MNSEC CSEC.CNSEC HASH PATH\n", without printf (a line
 * per file of the workspace) */
static void format_entry(struct sbuf *b, const struct mcache_entry *en)
{
	sb_put_ull(b, en->dev);
	sb_putc(b, ' ');
	sb_put_ull(b, en->ino);
	sb_putc(b, ' ');
	sb_put_ull(b, en->size);
	sb_putc(b, ' ');
	sb_put_time(b, en->mtime_sec, en->mtime_nsec);
	sb_putc(b, ' ');
	sb_put_time(b, en->ctime_sec, en->ctime_nsec);
	sb_putc(b, ' ');
	sb_puts(b, en->hash);
	sb_putc(b, ' ');
	mf_escape_put(b, en->path);
	sb_putc(b, '\n');
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
	for (size_t i = 0; i < c->n; i++)
		format_entry(&b, order[i]);
	char wsum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	_cleanup_free_ char *name = xasprintf("cache/%s", wsum);
	int r = store_write_atomic(st, st->fd, name, b.p ? b.p : "", b.n, 0600, true, false, e);
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

