/* snapshot.h - taking a checkpoint: walk a workspace (walk.h: never through
 * a symlink, what the user owns but made unreadable opened up for the walk),
 * record every directory, regular file and symlink in a manifest, the
 * files' contents into the store, FIFOs, sockets and devices by their names
 * and modes (never opened), and leave out what the exclude patterns
 * name. A file whose dev, inode, size, mtime and ctime match the metadata
 * cache is not read again; the small ones to read are read a directory's
 * batch at a time on two threads (prefetch.h). */
#pragma once
#include <stdbool.h>

#include "../common/err.h"
#include "manifest.h"
#include "store.h"

struct snap_opts {
	struct store *st;             /* the store (its cache; blobs when store_blobs) */
	bool store_blobs;             /* false: hash only (what `warden diff` compares) */
	const char *ws;               /* the workspace's path: the cache's key */
	const struct strv *exclude;   /* patterns: a name at any depth, or a path with '/' */
	const struct strv *unrecorded; /* paths left out as if absent, not named as
					* excluded (a session's placeholders), or NULL */
	/* asked every SNAP_ASK_EVERY entries: true stops the walk, the
	 * snapshot failed (EINTR); NULL: never */
	bool (*interrupted)(void);
	unsigned long long max_size;  /* bytes of file content at most; 0: no limit */
	bool root_mode_set;           /* the root's mode as it was before snapshot_open_root */
	mode_t root_mode;
};

struct snap_result {
	struct manifest m;            /* sorted */
	char hash[SHA256_HEX_LEN];    /* of the manifest's text, when stored */
	struct strv excluded;         /* the paths left out */
	size_t too_deep;              /* paths longer than a manifest holds, left out */
	char *too_deep_first;         /* the first of them (malloc'd), or NULL */
	unsigned long long bytes;     /* file content recorded */
	unsigned long long read;      /* of it, bytes read (not in the cache) */
	size_t files, cached;
};

/* The manifest entry of the directory, symlink or regular file `name` in
 * dirfd (the walk's `rel`) whose lstat is s: its path (rel, borrowed),
 * type, mode, mtime and size; a file's hash is the caller's to fill. A
 * symlink's target is read into *target (malloc'd; en->target points at
 * it) as long as s said: one longer than MF_MAX_PATH is refused, one whose
 * length changed since s (the link replaced meanwhile) is a race.
 * 1: en filled; 0: another type (a socket, FIFO, device: not content);
 * -1: e set ("WHO: REL: ..."); MF_STAT_RACE: the race, e not set. */
#define MF_STAT_RACE (-2)
struct stat;
int mf_entry_from_stat(int dirfd, const char *name, const char *rel, const struct stat *s,
		       const char *who, struct mf_entry *en, char **target, struct werr *e);

/* Is rel (or its name) excluded by one of the patterns? */
bool snapshot_excluded(const struct strv *exclude, const char *rel, const char *name);

/* Record the tree below rootfd. With store_blobs the manifest is stored too
 * (r->hash) and the cache saved. A file that changes while it is read, a
 * store that cannot take a write, content beyond max_size: -1 with e. */
int snapshot_take(int rootfd, const struct snap_opts *o, struct snap_result *r, struct werr *e);
/* Open the directory behind anyfd (any fd of it, O_PATH too) for reading;
 * one of the user's own without u+rwx is given it for the moment (*restore
 * the mode to give back with snapshot_close_root, else (mode_t)-1). */
int snapshot_open_root(int anyfd, mode_t *restore, struct werr *e);
void snapshot_close_root(int fd, mode_t restore);

/* snapshot_take of the directory behind anyfd, opened up for the walk and
 * given its mode back (recorded as it was). */
int snapshot_take_dir(int anyfd, const struct snap_opts *o, struct snap_result *r,
		      struct werr *e);

void snap_result_free(struct snap_result *r);
