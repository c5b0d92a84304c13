/* pack.h - small blobs of the checkpoint store packed together: one file
 * holds many blobs' bytes and, at its end, their index, so that a tree of
 * small files costs the store a few files instead of an inode and a block
 * each (store.h decides what is small).
 *
 * A pack, packs/NAME.pack, written in tmp/, fsynced, renamed into place and
 * never changed after:
 *   "warden-pack 1\n"                     PACK_MAGIC
 *   the blobs' bytes, one after the other
 *   the index: "HASH OFFSET SIZE\n" a blob, in HASH order, each HASH once
 *   "idx OFFSET COUNT\n"                  fixed width (PACK_TRAILER_LEN):
 *                                         where the index starts, its lines
 * NAME is the SHA-256 of the index's text: a pack whose index does not hash
 * to its name, or that is not a regular file, is not loaded (its blobs are
 * missing, never wrong). A blob read from a pack is checked against its own
 * hash by the reader (blob.c), like a loose one. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/err.h"
#include "../common/hash.h"

#define PACK_MAGIC "warden-pack 1\n"
#define PACK_MAGIC_LEN 14
#define PACK_TRAILER_LEN 38          /* "idx %020llu %012llu\n" */
#define PACK_MAX (256ULL << 20)      /* bytes of blobs a pack; then another */

/* One blob in a pack. */
struct pack_ref {
	unsigned char h[32];   /* its SHA-256 */
	uint32_t pack;         /* index into pack_set.packs */
	uint32_t size;
	uint64_t off;
};

struct pack_file {
	char name[SHA256_HEX_LEN];
	int fd;                /* opened when first read from, -1 before */
};

/* Every pack's index, loaded once (lazily: the store loads it at its
 * first lookup), sorted by hash. */
struct pack_set {
	bool loaded;
	struct pack_file *packs;
	size_t npacks;
	struct pack_ref *v;
	size_t n;
};

/* A pack's trailer (PACK_TRAILER_LEN bytes, exactly "idx %020llu
 * %012llu\n") for a file of fsize bytes: where its index starts and how
 * many lines it has, within bounds. */
bool pack_trailer_parse(const char *tr, unsigned long long fsize, unsigned long long *ioff,
			unsigned long long *count);
/* The index text idx (ilen bytes, read from offset ioff, writable: its
 * newlines are replaced) of pack name: NULL unless it hashes to name and
 * holds exactly count lines "HASH OFFSET SIZE\n", hashes strictly
 * increasing, each blob within [PACK_MAGIC_LEN, ioff); else its refs
 * (malloc'd, count of them, pack set to pack). */
struct pack_ref *pack_index_parse(const char *name, char *idx, size_t ilen,
				  unsigned long long ioff, unsigned long long count, uint32_t pack);
/* Load the index of every pack in packs_fd into ps (empty before). A pack
 * that cannot be read or whose index fails its checks is skipped (left
 * where it is). */
void pack_set_load(int packs_fd, struct pack_set *ps);
/* The entry of hex hash h, or NULL. */
const struct pack_ref *pack_set_find(const struct pack_set *ps, const char *h);
/* The fd of the pack holding r, opened (regular file, never through a
 * symlink, without blocking) when first asked; -1 with errno. */
int pack_set_fd(struct pack_set *ps, int packs_fd, const struct pack_ref *r);
void pack_set_free(struct pack_set *ps);

/* A pack being written. */
struct pack_writer {
	int fd;                 /* tmp/NAME; -1 before the first blob */
	char *tmp;
	unsigned long long off; /* bytes written so far (the magic included) */
	struct pack_ref *v;     /* its blobs (pack unused) */
	size_t n, cap;
	size_t *slots;          /* open addressing over v, for its own repeats */
	size_t nslots;
	char *buf;              /* writes gathered, flushed at 1 MiB */
	size_t buflen;
};

/* Is hex hash h in the pack being written? */
bool pack_writer_has(const struct pack_writer *w, const char *h);
/* Add len bytes whose SHA-256 is h (the caller hashed them) to the pack,
 * started in tmp_fd when none is. */
int pack_writer_add(struct pack_writer *w, int tmp_fd, const char *h, const void *data,
		    size_t len, struct werr *e);
/* Nothing added yet? */
static inline bool pack_writer_empty(const struct pack_writer *w) { return w->n == 0; }
/* Write the index and trailer, fsync the pack, rename it into packs_fd as
 * NAME.pack (one there already by that name: the same blobs) and fsync
 * packs_fd. name gets NAME. The writer is empty again after, also on
 * failure (the temporary file removed then). Nothing added: 0, name "". */
int pack_writer_finish(struct pack_writer *w, int tmp_fd, int packs_fd,
		       char name[SHA256_HEX_LEN], struct werr *e);
/* Drop what was written (the temporary file removed). */
void pack_writer_abort(struct pack_writer *w, int tmp_fd);

/* Hex hash <-> its 32 bytes. */
bool pack_hash_bin(const char *hex, unsigned char out[32]);
void pack_hash_hex(const unsigned char h[32], char out[SHA256_HEX_LEN]);
