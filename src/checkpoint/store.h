/* store.h - the content-addressed checkpoint store under the user's data
 * directory ($XDG_DATA_HOME/warden/store, outside every sandbox): file
 * contents stored once by SHA-256 (small ones, up to STORE_SMALL_MAX
 * bytes, packed together, pack.h; others each a file, a copy-on-write
 * clone where the file system offers one, else a copy), manifests by the
 * SHA-256 of their text,
 * a per-workspace metadata cache (an unchanged file is not read again),
 * references that say which session's checkpoints are kept, and their
 * retention.
 *
 * Layout: blobs/XX/REST (0444), packs/NAME.pack (0444), manifests/HASH
 * (0444), cache/WSHASH,
 * refs/SESSION.KIND ("HASH WSHASH UNIXTIME\n") and their index by workspace,
 * wsrefs/WSHASH/SESSION.KIND (hard links; wsrefs/complete: all are in it;
 * refs.c), pruned/WSHASH (retention's stamps), tmp/, lock (flock: shared
 * while a checkpoint is taken, exclusive while unreferenced data goes),
 * gc-stamp (when that last happened: at most once an hour).
 *
 * Durability: a manifest is never handed out (its hash, which the caller
 * then records in a session's log) before it and every blob stored since
 * the previous one are on disk: store_put_manifest first finishes the pack
 * being written (fsynced, renamed into packs/, packs/ fsynced), syncs the
 * loose blobs (each file fsynced, then the directories their names were made in; past
 * STORE_SYNC_EACH_MAX of them, one syncfs of the store's file system
 * instead), then writes the manifest, fsyncs it and its directory. The
 * metadata cache and the references are not synced: a crash may lose the
 * newest of them (a reference lost: that checkpoint is no longer kept; a
 * cache entry lost: the file is read again). */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../common/err.h"
#include "../common/hash.h"
#include "manifest.h"

struct pack_set;
struct pack_writer;

struct store {
	int fd;          /* the store directory */
	int lock_fd;
	char *path;
	int blobs_fd, manifests_fd, tmp_fd, packs_fd;
	struct strv unsynced;   /* blobs stored since the last manifest ("XX/REST") */
	unsigned long long small_max; /* blobs up to this size packed (store_open:
				       * STORE_SMALL_MAX; 0: none, each its own file) */
	struct pack_set *packs;       /* the packs' index, loaded when first needed */
	struct pack_writer *pw;       /* the pack being written, if any */
};

/* Files of at most this many bytes are packed (a loose blob costs an inode
 * and a block, 4 KiB, however small). */
#define STORE_SMALL_MAX 16384

/* Blobs synced one by one up to this many, with one syncfs beyond. */
#define STORE_SYNC_EACH_MAX 64

/* $XDG_DATA_HOME/warden/store (or ~/.local/share/warden/store); NULL when
 * neither is an absolute path. */
char *store_default_path(const char *home);

/* Open the store (made, 0700, when create and missing; its parents too):
 * refused when it is a symbolic link, not a directory, not the user's, open
 * to others' writes, or not writable (create: tmp/ by access(2), which
 * also says EROFS). A shared lock is held until store_close. */
int store_open(struct store *st, const char *path, bool create, struct werr *e);
/* Close what store_open opened, also after it failed; a store it never
 * saw (path NULL: zeroed, or { .fd = -1 }) is left alone. */
void store_close(struct store *st);
/* store_close for a cleanup attribute. */
static inline void store_closep(struct store *st) { store_close(st); }

/* Is the blob there (loose, packed, or in the pack being written)? */
bool store_has_blob(const struct store *st, const char *hash);
/* Store the content of the open regular file fd whose SHA-256 is hash,
 * unless there: up to small_max bytes read and packed, else a clone
 * (FICLONE) or a copy in tmp/ renamed into place; either hashed again and
 * refused (errno EAGAIN, "changed while it was being recorded") when it
 * differs. */
int store_put_blob(struct store *st, int fd, const char *hash, struct werr *e);
/* Store len bytes (at most 1 MiB) whose SHA-256 the caller computed from
 * these very bytes, unless there, into the pack being written. */
int store_put_small(struct store *st, const char *hash, const void *data, size_t len,
		    struct werr *e);

/* Reading a blob back (blob.c): from its pack, or its loose file, which
 * must be a regular file (looked at before it is opened, opened with
 * O_NONBLOCK and O_NOFOLLOW: a FIFO or device put there is refused, never
 * waited on), of the size the manifest recorded. Errors say "its stored
 * content (HASH) ...": the caller puts the path in front. */
/* Check a blob's content against its hash, reading it all. */
int store_blob_verify(const struct store *st, const char *hash, unsigned long long size,
		      struct werr *e);
/* The blob's size bytes (malloc'd, NUL after them), checked against its
 * hash: the caller bounds size. */
char *store_blob_read(const struct store *st, const char *hash, unsigned long long size,
		      struct werr *e);
/* Write the blob into out (empty, at offset 0): a clone where it can,
 * else a copy. Not checked: the caller hashes what out holds. */
int store_blob_copy(const struct store *st, const char *hash, unsigned long long size, int out,
		    struct werr *e);

/* Write a manifest's text; out gets its SHA-256. */
int store_put_manifest(struct store *st, const char *text, size_t len,
		       char out[SHA256_HEX_LEN], struct werr *e);
/* Read the manifest named by hash, verify that its text hashes to it, and
 * parse it. */
int store_get_manifest(const struct store *st, const char *hash, struct manifest *m,
		       struct werr *e);

/* Reference a manifest: refs/SESSION.KIND (kind "start", "end", "undo"). */
int store_ref(struct store *st, const char *session, const char *kind, const char *hash,
	      const char *ws, struct werr *e);

/* Is refs/SESSION.KIND there? Remove it (a --review session discarded). */
bool store_ref_exists(const struct store *st, const char *session, const char *kind);
int store_unref(struct store *st, const char *session, const char *kind, struct werr *e);
/* The manifest hash refs/SESSION.KIND names; -1 with errno (ENOENT: none). */
int store_ref_read(const struct store *st, const char *session, const char *kind,
		   char out[SHA256_HEX_LEN]);

/* Retention for one workspace: the checkpoints of its sessions beyond the
 * newest keep, or older than keep_days, are dropped (never those of
 * `current`); then, when the store's exclusive lock can be had at once,
 * manifests and blobs no reference reaches are removed (at most once an
 * hour, gc-stamp). Returns the number
 * of sessions dropped, -1 with e. */
int store_prune(struct store *st, const char *ws, const char *current, unsigned keep,
		unsigned keep_days, struct werr *e);

/* Whether retention for workspace ws is due: it reads the workspace's
 * references (each a file; through the index, refs.c), so it runs at most once every interval_s seconds a workspace
 * (the stamp pruned/WSHASH, renewed when this returns true). Between two
 * runs a workspace can hold more than `keep` checkpoints, never fewer. */
bool store_prune_due(struct store *st, const char *ws, unsigned interval_s);

/* ---- the metadata cache --------------------------------------------------- */
struct mcache_entry {
	char *path;
	unsigned long long dev, ino, size;
	long long mtime_sec, ctime_sec;
	long mtime_nsec, ctime_nsec;
	char hash[SHA256_HEX_LEN];
};
struct mcache {
	struct mcache_entry *v;
	size_t n, cap;
	bool sorted;
};
/* Load the cache of workspace ws (none yet: empty). Unreadable lines are
 * skipped. An entry names a blob that was stored: the removal of
 * unreferenced blobs (store_prune) keeps what any cache names. */
void mcache_load(const struct store *st, const char *ws, struct mcache *c);
/* The hash recorded for path when dev, inode, size, mtime and ctime match. */
const char *mcache_lookup(const struct mcache *c, const char *path, const struct stat *s);
/* Does it hold an entry for path, whatever its metadata? */
bool mcache_has(const struct mcache *c, const char *path);
void mcache_add(struct mcache *c, const char *path, const struct stat *s, const char *hash);
int mcache_save(struct store *st, const char *ws, struct mcache *c, struct werr *e);
void mcache_free(struct mcache *c);
