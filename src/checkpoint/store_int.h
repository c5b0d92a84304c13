/* store_int.h - what the checkpoint store's own files share (store.c,
 * store_gc.c, refs.c, mcache.c, blob.c); nothing outside src/checkpoint/store*.c,
 * mcache.c and blob.c includes it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* A metadata cache's text, at most (about 4 GiB: a bound, not a size one
 * is expected to reach). */
#define MCACHE_TEXT_MAX ((size_t)UINT32_MAX)

/* 64 lowercase hex digits. */
bool store_hash_ok(const char *h);
/* Write text as dirfd/name, atomically (tmp/ then rename), mode; durable:
 * the file fsynced before the rename, its directory after. */
int store_write_atomic(struct store *st, int dirfd, const char *name, const char *text,
		       size_t len, mode_t mode, bool replace, bool durable, struct werr *e);
/* "HASH WSHASH UNIXTIME", a reference's text: true with its fields. */
bool store_ref_parse(const char *text, char h[SHA256_HEX_LEN], char w[SHA256_HEX_LEN],
		     long long *t);
/* A reference (refs.c): refs/NAME, NAME "SESSION.KIND". */
struct store_refent {
	char *name;
	char *session;
	char hash[SHA256_HEX_LEN];
	char ws[SHA256_HEX_LEN];     /* the workspace's path's SHA-256 */
	long long t;
};
/* Every reference in the store (read from refs/, each linked into the
 * workspace index as it is read); those of one workspace (wsum), from the
 * index when it is whole. */
int store_refs_all(struct store *st, struct store_refent **out, size_t *n, struct werr *e);
int store_refs_of(struct store *st, const char *wsum, struct store_refent **out, size_t *n,
		  struct werr *e);
void store_refs_free(struct store_refent *v, size_t n);
/* The reference and its link in the index, removed. */
void store_ref_drop(struct store *st, const struct store_refent *r);
/* The packs' index, loaded at the first call (pack.h). */
struct pack_set *store_packs(const struct store *st);
/* ... loaded again when next needed (a pack was added or removed). */
void store_packs_stale(struct store *st);
