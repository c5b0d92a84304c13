/* walk.h - an iterative walk of a directory tree from an open directory fd,
 * for the workspace's scans (the plan at start, the sweep at the end, the
 * watch) and the checkpoints' (checkpoint/snapshot.c, review.c): no depth
 * limit, one directory fd open at a time whatever the depth, never
 * through a symlink, and what the invoking user owns but made unreadable
 * opened up for the walk and given its mode back afterwards. */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "err.h"

/* One entry of a directory, as the walk hands it to its callback. */
struct walk_entry {
	int dirfd;              /* the directory holding it, open for the callback */
	const char *name;
	const char *rel;        /* its path from the root ("a/b/name"); may be longer than PATH_MAX */
	unsigned char type;     /* DT_DIR, DT_REG, DT_LNK, ...; DT_UNKNOWN resolved by lstat */
	bool tagged;            /* below a directory the callback tagged */
};

/* WALK_DESCEND_TAGGED: descend, and every entry below is handed out with
 * tagged set (the scan's way to know it is inside a .git). */
enum walk_action { WALK_SKIP, WALK_DESCEND, WALK_DESCEND_TAGGED };

struct walk_ops {
	/* Each entry but "." and "..": WALK_DESCEND to visit a directory's
	 * entries later, WALK_SKIP otherwise, -1 (e filled) to stop. */
	int (*entry)(void *ctx, const struct walk_entry *we, struct werr *e);
	/* Optional: after every entry of a directory was handed out, with the
	 * directory still open (rel "" for the root): where a callback renames
	 * what it found, so that no rename happens while the directory is read. */
	int (*dir_done)(void *ctx, int dirfd, const char *rel, bool tagged, struct werr *e);
	/* Optional: a directory the walk could not look inside (not the
	 * user's, or it could not be opened up), passed by. */
	void (*closed)(void *ctx, const char *rel, int err);
};

/* Walk everything below rootfd (which stays open and in place). A
 * subdirectory found is visited after its parent's entries were all handed
 * out, depth first. One that the invoking user owns and cannot read or
 * search is given u+rx for the walk (u+w too while a callback's rename
 * needs it: walk_rename) and its mode back when the walk leaves it.
 * Returns 0, or -1 with e filled (a callback's error, an entry that cannot
 * be read, or a directory on the way moved while the walk was below it). */
int walk_tree(int rootfd, const struct walk_ops *ops, void *ctx, struct werr *e);

/* Open the subdirectory name of dirfd, never through a symlink. One the
 * invoking user owns and cannot read or search is given u+rx first, and
 * *restore receives the mode to give back with walk_close_dir (otherwise
 * WALK_KEEP_MODE). st receives what was opened. Returns the fd, or -1 with
 * errno set (EACCES: closed to the user and not theirs to open up). */
#define WALK_KEEP_MODE ((mode_t)-1)
int walk_open_dir(int dirfd, const char *name, mode_t *restore, struct stat *st);
void walk_close_dir(int fd, mode_t restore, const char *rel);

/* Rename name in dirfd to a new name "NAME.SUFFIX" that did not exist (then
 * "NAME.SUFFIX.2", ...), giving dirfd u+w for the moment when the user owns
 * it and the rename needs it. Returns the new name (malloc'd) or NULL with
 * errno set. */
char *walk_rename_aside(int dirfd, const char *name, const char *suffix);

/* The subdirectory name of dirfd (never through a symlink) holds nothing
 * but . and ..; false too when it cannot be read. */
bool walk_dir_empty(int dirfd, const char *name);

/* The directory fd is open on was removed from its file system (no links
 * left to it): a walk of it finds nothing, not even . and .. */
bool walk_dir_removed(int fd);
