/* store_int.h - what the checkpoint store's own files share (store.c,
 * store_gc.c, mcache.c, blob.c); nothing outside src/checkpoint/store*.c,
 * mcache.c and blob.c includes it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* 64 lowercase hex digits. */
bool store_hash_ok(const char *h);
/* The whole of dirfd/name (a regular file, never through a symlink, opened
 * without blocking), at most max bytes; NULL with errno. */
char *store_read_at(int dirfd, const char *name, unsigned long long max, size_t *len);
/* Write text as dirfd/name, atomically (tmp/ then rename), mode; durable:
 * the file fsynced before the rename, its directory after. */
int store_write_atomic(struct store *st, int dirfd, const char *name, const char *text,
		       size_t len, mode_t mode, bool replace, bool durable, struct werr *e);
/* "HASH WSHASH UNIXTIME", a reference's text: true with its fields. */
bool store_ref_parse(const char *text, char h[SHA256_HEX_LEN], char w[SHA256_HEX_LEN],
		     long long *t);
/* The packs' index, loaded at the first call (pack.h). */
struct pack_set *store_packs(const struct store *st);
/* ... loaded again when next needed (a pack was added or removed). */
void store_packs_stale(struct store *st);
