/* hashcache.c - the exec record's hash cache (hashcache.h). */
#include "hashcache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"

/* the cache's first room, doubled up to HASH_CACHE (a session that hashes
 * few files maps no 550 KB table) */
#define HASH_CACHE_FIRST 32

void hashcache_open(struct hashcache *c, struct hashdisk *kept)
{
	c->v = NULL;
	c->n = c->cap = c->next = 0;
	c->kept = 0;
	c->disk = kept;
}

/* Into the session's cache only: the entry. */
static struct hc_entry *put_here(struct hashcache *c, const struct stat *st, const char *hex,
				 const char *interp, int code_err, const char *code,
				 const char *code_why)
{
	if (c->n == c->cap && c->cap < HASH_CACHE) {
		c->cap = c->cap ? c->cap * 2 : HASH_CACHE_FIRST;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	struct hc_entry *e = &c->v[c->n < HASH_CACHE ? c->n++ : c->next++ % HASH_CACHE];
	e->key = (struct stat){ .st_dev = st->st_dev, .st_ino = st->st_ino, .st_size = st->st_size,
				.st_mtim = st->st_mtim, .st_ctim = st->st_ctim };
	snprintf(e->hex, sizeof e->hex, "%s", hex);
	snprintf(e->interp, sizeof e->interp, "%s", interp);
	e->code_err = code_err;
	memcpy(e->code, code, sizeof e->code);
	e->code_why = code_why;
	return e;
}

const struct hc_entry *hashcache_get(struct hashcache *c, const struct stat *st, bool kept_too)
{
	for (size_t i = 0; i < c->n; i++)
		if (hashdisk_same_file(&c->v[i].key, st))
			return &c->v[i];
	struct hashdisk_entry en;
	if (!kept_too || !hashdisk_find(c->disk, st, &en))
		return NULL;
	c->kept++;
	return put_here(c, st, en.hex, en.interp, en.code_err, en.code, NULL);
}

void hashcache_put(struct hashcache *c, const struct stat *st, const char *hex, const char *interp,
		   int code_err, const char *code, const char *code_why)
{
	put_here(c, st, hex, interp, code_err, code, code_why);
	struct hashdisk_entry en = { .st = *st, .code_err = code_err };
	snprintf(en.hex, sizeof en.hex, "%s", hex);
	snprintf(en.interp, sizeof en.interp, "%s", interp);
	memcpy(en.code, code, sizeof en.code);
	hashdisk_put(c->disk, &en);
}

void hashcache_close(struct hashcache *c)
{
	hashdisk_close(c->disk);
	c->disk = NULL;
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
}
