/* filewhy.h - the kernel's answer to a write-intent file operation,
 * predicted by the supervisor before the call goes on (filewhy.c): whether
 * a wall of the sandbox will refuse it, and which one (a protected path, a
 * masked path, a read-only mount, the read-only workspace, Landlock), so
 * that a refused write is a `file` event with decision "deny" and its
 * reason, though the kernel tells no one; one whose path could not be
 * placed (a directory past PATH_MAX) is judged by no wall: FILEWHY_UNKNOWN.
 * The bound on how many `file` events a session writes: filebound.h. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../audit/events.h"

struct ws_plan;
struct filewhy;

/* What the prediction knows of the sandbox, each path as seen inside. */
struct filewhy_cfg {
	const char *workspace;          /* NULL: none */
	bool workspace_ro;
	const struct ws_plan *plan;     /* protected and masked paths in the workspace (copied) */
	const char *const *writable;    /* where Landlock lets the sandbox write, beside the
					   workspace and the scratch places (copied) */
	size_t nwritable;
	uid_t uid;                      /* the sandbox's identity on the host: whose */
	gid_t gid;                      /* rights a file it was handed grants */
};

struct filewhy *filewhy_new(const struct filewhy_cfg *cfg);
void filewhy_free(struct filewhy *w);

/* The reason the kernel will refuse the operation x by process pid (its
 * paths absolute inside, as notefile.c's arg_path makes them), one of the
 * strings of `file` events' reason, or NULL when no wall refuses it. The
 * answer is about the walls only: a call that fails for another reason
 * (ENOENT, EEXIST) is not refused by them. held: for an open, the
 * process's fd it names (/dev/fd/N, /proc/self/fd/N: a new open of that
 * fd, its path taken to the file's, or kept when it has none inside), else
 * -1; such an open is judged by the file the fd is. */
const char *filewhy_predict(struct filewhy *w, pid_t pid, const struct ev_file *x, int held);

/* The reason filewhy_predict gives when no wall refuses the operation but
 * a path it writes could not be judged: a partial path (x->partial: its
 * directory has no name warden can read), an unreadable one (NULL), or a
 * name below a magic link of /proc that could not be taken to a path
 * inside. The event's decision is
 * then "unknown", never "allow". Starts with FILEWHY_UNKNOWN_PREFIX. */
#define FILEWHY_UNKNOWN_PREFIX "not judged"
#define FILEWHY_UNKNOWN_PARTIAL                                                           \
	FILEWHY_UNKNOWN_PREFIX ": the directory the path is relative to has no name warden " \
			       "can read (deeper than PATH_MAX), so no wall's answer is known"
#define FILEWHY_UNKNOWN_LINK                                                              \
	FILEWHY_UNKNOWN_PREFIX ": the path goes below a link of /proc to a directory with no " \
			       "path inside warden can read, so no wall's answer is known"
#define FILEWHY_UNKNOWN_UNREAD                                                            \
	FILEWHY_UNKNOWN_PREFIX ": warden could not read the path (or the name of the file " \
			       "its descriptor is), so no wall's answer is known"
bool filewhy_unknown(const char *why);

/* A write-intent open or a truncate of a regular file of the workspace
 * with more than one name: how many (st_nlink), else 0. A hard link's other
 * names may lie outside the workspace (pnpm's store, a `cp -al` copy),
 * where the write reaches too and `warden undo` does not; the agent cannot
 * make such a link (the workspace is a mount of its own: EXDEV), so only
 * those there before the session count. */
unsigned long filewhy_links(struct filewhy *w, pid_t pid, const struct ev_file *x);

/* Is path a device or a process file (/dev, /proc): a write there is a
 * terminal or a pipe (2>/dev/null), left out of the default record. Not a
 * path below a magic link of /proc that stayed as spelled (/proc/ID/cwd/f:
 * a file somewhere, target_proc_resolve could not say where). */
bool filewhy_noise(const char *path);
