/* filewhy.c - a write-intent file operation's fate, predicted before the
 * call goes on (filewhy.h). The kernel refuses a write to a protected path
 * or a read-only mount with EROFS and tells no one; the supervisor, which
 * sees the call first (a seccomp notification, answered CONTINUE), looks at
 * what the call names and says which wall will refuse it:
 *
 *   - "protected path": the path is, or is below, one of the workspace's
 *     protected paths (the plan's read-only binds and placeholders:
 *     .git/hooks, .vscode, .envrc, ...; src/workspace/gitprotect.c);
 *   - "masked": one of the plan's masks (an unreadable stand-in);
 *   - "read-only workspace" / "read-only mount": the nearest existing
 *     ancestor of the path, resolved as the process resolves it (its root,
 *     symlinks on the way), is on a read-only mount (statvfs ST_RDONLY);
 *   - "landlock": the path lies outside every place Landlock lets the
 *     sandbox write (the workspace, the scratch places, the home, the
 *     profile's read-write paths), as text;
 *   - "permissions": a name of a file the process holds (/dev/stdout,
 *     /proc/self/fd/N: a new open of what that fd is) whose owner and mode
 *     refuse the sandbox's identity; such a name is judged by what the fd
 *     is, not by the mount its name lies on: a pipe or a device is no
 *     mount's to refuse.
 *
 * A path through a magic link of /proc comes here already taken to the
 * path inside of what the link names (notefile.c, target_proc_resolve),
 * judged as that path; one that could not be (a pipe held, a file handed
 * in from outside) keeps its spelling: a held fd is judged as above, a
 * path below another link is not judged (no wall claimed).
 *
 * The order is the kernel's: a read-only mount refuses before Landlock
 * looks. A prediction, not the kernel's word: a path that changes between
 * the look and the call (a symlink swapped) can be judged wrongly; the
 * event says what the walls would do to the path as it stood.
 *
 * The record's bound on these events is filebound.c's. */
#include "filewhy.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/util.h"
#include "../sandbox/paths.h"
#include "../workspace/plan.h"
#include "../workspace/workspace.h"
#include "target.h"

struct filewhy {
	char *ws;
	bool ws_ro;
	struct strv protected, masked; /* workspace-relative */
	struct strv carved;            /* writable inside a protected one (WS_CARVE) */
	struct strv writable;          /* absolute inside */
	struct strv shared;            /* of those, the ones at the same path on the host */
	uid_t uid;
	gid_t gid;
	int root;                      /* the sandbox's root (O_PATH), opened once; -1: not yet */
	/* the last directory looked at, and whether it was on a read-only
	 * mount: a loop writing in one directory looks once a second */
	char *last_dir;
	bool last_ro;
	double last_ms;
};

#define DIR_CACHE_MS 1000.0
#define RO_WORKSPACE "read-only workspace: write to an --output directory or $WARDEN_SCRATCH"

struct filewhy *filewhy_new(const struct filewhy_cfg *cfg)
{
	static const char *const scratch[] = { "/tmp", "/var/tmp", "/dev/shm", AGENT_HOME, "/dev" };
	struct filewhy *w = xcalloc(1, sizeof *w);
	w->root = -1;
	w->ws = cfg->workspace ? xstrdup(cfg->workspace) : NULL;
	w->ws_ro = cfg->workspace_ro;
	w->uid = cfg->uid;
	w->gid = cfg->gid;
	for (size_t i = 0; cfg->plan && i < cfg->plan->n; i++) {
		const struct ws_mount *m = &cfg->plan->m[i];
		if (m->kind == WS_PROTECT || m->kind == WS_PLACEHOLDER || m->certs)
			strv_push(&w->protected, m->rel); /* certs: a read-only copy */
		else if (m->kind == WS_MASK_FILE || m->kind == WS_MASK_DIR)
			strv_push(&w->masked, m->rel);
		else if (m->kind == WS_CARVE)
			strv_push(&w->carved, m->rel);
	}
	if (w->ws && !w->ws_ro)
		strv_push(&w->shared, w->ws);
	for (size_t i = 0; i < cfg->nwritable; i++)
		if (cfg->writable[i])
			strv_push(&w->shared, cfg->writable[i]);
	for (size_t i = 0; i < w->shared.n; i++)
		strv_push(&w->writable, w->shared.v[i]);
	for (size_t i = 0; i < ARRAY_LEN(scratch); i++)
		strv_push(&w->writable, scratch[i]);
	return w;
}

void filewhy_free(struct filewhy *w)
{
	if (!w)
		return;
	if (w->root >= 0)
		close(w->root);
	strv_free(&w->protected);
	strv_free(&w->carved);
	strv_free(&w->masked);
	strv_free(&w->writable);
	strv_free(&w->shared);
	free(w->last_dir);
	free(w->ws);
	free(w);
}

bool filewhy_noise(const char *path)
{
	bool beyond = false;
	if (!path || (target_proc_magic(path, &beyond) && beyond))
		return false; /* a file in a directory a magic link names */
	return path_is_within(path, "/dev") || path_is_within(path, "/proc");
}

/* Is rel (workspace-relative) one of list's paths, or below one? */
static bool covered(const struct strv *list, const char *rel)
{
	for (size_t i = 0; i < list->n; i++)
		if (path_is_within(rel, list->v[i]))
			return true;
	return false;
}

/* The length of the deepest entry of list that rel lies in, or 0. */
static size_t deepest(const struct strv *list, const char *rel)
{
	size_t n = 0;
	for (size_t i = 0; i < list->n; i++)
		if (path_is_within(rel, list->v[i]) && strlen(list->v[i]) > n)
			n = strlen(list->v[i]);
	return n;
}

/* "protected path" or "masked" when lex (absolute, lexical) is, or is
 * below, one of the workspace's protected (and not carved out of it) or
 * masked paths; else NULL. */
static const char *ws_why(const struct filewhy *w, const char *lex)
{
	if (!w->ws || !path_is_within(lex, w->ws))
		return NULL;
	const char *rel = strcmp(lex, w->ws) == 0 ? "." : lex + strlen(w->ws) + (strcmp(w->ws, "/") != 0);
	size_t prot = deepest(&w->protected, rel);
	if (prot && prot > deepest(&w->carved, rel))
		return "protected path";
	return covered(&w->masked, rel) ? "masked" : NULL;
}

/* The sandbox's root, opened from the first process asked about (no
 * process inside can change its root: chroot and pivot_root are refused). */
static int root_of(struct filewhy *w, pid_t pid)
{
	if (w->root < 0) {
		char p[64];
		snprintf(p, sizeof p, "/proc/%d/root", (int)pid);
		w->root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	return w->root;
}

/* Where lex (absolute inside, lexical) stands: *exists when the path
 * itself is there (followed when follow), *ro when the nearest existing
 * ancestor (or the path) lies on a read-only mount. false when nothing of
 * it could be looked at. */
static bool look(int root, const char *lex, bool follow, bool *exists, bool *ro)
{
	_cleanup_free_ char *p = xstrdup(lex);
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	*exists = false;
	for (bool first = true;; first = false) {
		int fd = (int)syscall(SYS_openat2, root, p, &how, sizeof how);
		if (fd >= 0) {
			struct statvfs v;
			*exists = first;
			*ro = fstatvfs(fd, &v) == 0 && (v.f_flag & ST_RDONLY);
			close(fd);
			return true;
		}
		if ((errno != ENOENT && errno != ENOTDIR) || strcmp(p, "/") == 0)
			return false;
		char *slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
		how.flags = O_PATH | O_CLOEXEC; /* a directory on the way: followed */
	}
}

/* Does the operation write (or make, or remove) the name at path index i?
 * A link or a symlink makes its second; a rename writes both. */
static bool writes_name(const struct ev_file *x, int i)
{
	if (strcmp(x->op, "link") == 0)
		return i == 1;
	return true;
}

/* Is lex on a read-only mount, as the directory it is in was a moment
 * ago? For a call that does not need to know whether the path is there
 * (a write open, an unlink, a rename: not an open that only creates, not
 * a mkdir). -1: not known, and not taken from a read-only directory,
 * where what is written is most often a mount of its own (/dev/null in
 * the sandbox's read-only /dev). */
static int cached_ro(struct filewhy *w, const char *lex, double now)
{
	const char *slash = strrchr(lex, '/');
	if (!w->last_dir || now - w->last_ms > DIR_CACHE_MS || !slash)
		return -1;
	size_t dl = (size_t)(slash - lex);
	return strlen(w->last_dir) == dl && strncmp(w->last_dir, lex, dl) == 0 && !w->last_ro ? 0 : -1;
}

static void cache_dir(struct filewhy *w, const char *lex, bool ro, double now)
{
	const char *slash = strrchr(lex, '/');
	if (!slash)
		return;
	free(w->last_dir);
	w->last_dir = xasprintf("%.*s", (int)(slash - lex), lex);
	w->last_ro = ro;
	w->last_ms = now;
}

static double coarse_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

/* A new open of what the process's fd n is (its name /dev/stdout,
 * /proc/self/fd/N), with the open's flags. The kernel checks
 * the file itself: its owner's rights (the caller's pipe, a file warden's
 * output was sent to); then, for a file or a directory, its mount (the
 * fd's own, which a path inside may not be) and Landlock. For Landlock, and
 * the workspace's protected and masked paths, inside is the file's path
 * inside the sandbox (notefile.c found it there), or NULL when it has none:
 * then its path on the host is where it lies (the workspace and the
 * profile's paths are the same path inside; a host file anywhere else is
 * outside every place Landlock lets the sandbox write). A pipe, a socket
 * or a device is neither's. */
static const char *held_why(struct filewhy *w, pid_t pid, int n, int flags, const char *inside)
{
	char p[64], host[PATH_MAX];
	snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, n);
	struct stat st;
	struct statvfs v;
	if (stat(p, &st) < 0)
		return NULL; /* no such fd: ENOENT, no wall's */
	mode_t r = st.st_uid == w->uid ? S_IRUSR : st.st_gid == w->gid ? S_IRGRP : S_IROTH;
	mode_t wr = st.st_uid == w->uid ? S_IWUSR : st.st_gid == w->gid ? S_IWGRP : S_IWOTH;
	int acc = flags & O_ACCMODE;
	mode_t need = (acc == O_RDWR ? r | wr : acc == O_WRONLY ? wr : 0) | (flags & O_TRUNC ? wr : 0);
	if ((st.st_mode & need) != need)
		return "permissions: a file handed to the sandbox whose owner or mode refuses it";
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return NULL;
	const char *why = inside ? ws_why(w, inside) : NULL;
	if (why)
		return why;
	if (statvfs(p, &v) == 0 && (v.f_flag & ST_RDONLY))
		return inside && w->ws_ro && path_is_within(inside, w->ws) ? RO_WORKSPACE
									  : "read-only mount";
	if (inside)
		return covered(&w->writable, inside) ? NULL : "landlock";
	ssize_t l = readlink(p, host, sizeof host - 1);
	if (l <= 0 || host[0] != '/')
		return NULL;
	host[l] = '\0';
	return covered(&w->shared, host) ? NULL : "landlock";
}

/* Does the operation change a file's attributes (its mode, owner, times
 * or an extended attribute), for which Landlock has no right? */
static bool sets_attr(const struct ev_file *x)
{
	static const char *const ops[] = { "chmod", "chown", "utime", "setxattr", "removexattr" };
	for (size_t i = 0; i < ARRAY_LEN(ops); i++)
		if (strcmp(x->op, ops[i]) == 0)
			return true;
	return false;
}

/* Does the operation follow a symlink at its path's end? An open, a
 * truncate, and an attribute's change but by a call of the link itself
 * (lchown, lsetxattr, lremovexattr) and one with AT_SYMLINK_NOFOLLOW. */
static bool follows(const struct ev_file *x)
{
	static const char *const of_link[] = { "lchown", "lsetxattr", "lremovexattr" };
	if (strcmp(x->op, "open") == 0 || strcmp(x->op, "truncate") == 0)
		return true;
	for (size_t i = 0; x->syscall && i < ARRAY_LEN(of_link); i++)
		if (strcmp(x->syscall, of_link[i]) == 0)
			return false;
	return sets_attr(x) && !(x->has_flags && (x->flags & AT_SYMLINK_NOFOLLOW));
}

/* The reason for a path that names no fd of the process (lex: absolute,
 * lexical), or NULL. */
static const char *named_why(struct filewhy *w, pid_t pid, const struct ev_file *x, const char *lex,
			     bool create_only)
{
	/* a mkdir or a mknod of a name that is there: EEXIST */
	bool makes = strcmp(x->op, "mkdir") == 0 || strcmp(x->op, "mknod") == 0;
	const char *why = ws_why(w, lex);
	bool in_ws = w->ws && path_is_within(lex, w->ws);
	bool exists = false, ro = false, seen;
	bool needs_there = create_only || makes;
	double now = coarse_ms();
	int cached = needs_there || why ? -1 : cached_ro(w, lex, now);
	if (cached >= 0) {
		seen = true;
		ro = cached;
	} else {
		int root = root_of(w, pid);
		seen = root >= 0 && look(root, lex, follows(x), &exists, &ro);
		if (seen && !exists)
			cache_dir(w, lex, ro, now);
	}
	if (seen && exists && needs_there)
		return NULL; /* opened for reading, or EEXIST: no wall's business */
	if (why)
		return why;
	if (seen && ro)
		return in_ws && w->ws_ro ? RO_WORKSPACE : "read-only mount";
	/* Landlock has no right for a mode, an owner or times */
	if (!sets_attr(x) && !covered(&w->writable, lex))
		return "landlock";
	return NULL;
}

/* The reason for one path, or NULL. held: the fd an open names, or -1. */
static const char *path_why(struct filewhy *w, pid_t pid, const struct ev_file *x, const char *path,
			    int held)
{
	bool opens = strcmp(x->op, "open") == 0;
	/* an open that only creates (O_CREAT, no write access): a read of a
	 * file that is there */
	bool create_only = opens && x->has_flags && !(x->flags & (O_WRONLY | O_RDWR | O_TRUNC));
	_cleanup_free_ char *lex = ws_join_lexically("/", path);
	int own;
	bool spelled = target_own_fd(pid, lex, &own); /* no path inside */
	int fd = spelled ? own : held;
	if (opens && fd >= 0)
		return create_only ? NULL
				   : held_why(w, pid, fd, x->has_flags ? (int)x->flags : O_WRONLY,
					      spelled ? NULL : lex);
	/* through a magic link notefile.c could not take to a path inside
	 * (another process's gone, a directory past PATH_MAX): the walls judge
	 * the file it leads to, which is not known here; none is claimed, and
	 * a name below such a link is said not judged (the link itself names
	 * a file the process could reach, a pipe, a terminal: no wall's) */
	bool beyond = false;
	if (target_proc_magic(lex, &beyond))
		return beyond ? FILEWHY_UNKNOWN_LINK : NULL;
	return named_why(w, pid, x, lex, create_only);
}

const char *filewhy_predict(struct filewhy *w, pid_t pid, const struct ev_file *x, int held)
{
	if (!w)
		return NULL;
	const char *unknown = NULL; /* a wall's refusal of another path comes first */
	for (int i = 0; i < x->npaths && i < 2; i++) {
		if (!writes_name(x, i))
			continue;
		if (!x->paths[i]) {
			unknown = FILEWHY_UNKNOWN_UNREAD;
			continue;
		}
		if (x->partial[i]) {
			unknown = FILEWHY_UNKNOWN_PARTIAL;
			continue;
		}
		if (x->paths[i][0] != '/')
			continue; /* the kernel's name of a file with no path: pipe:[N] */
		const char *why = path_why(w, pid, x, x->paths[i], i == 0 ? held : -1);
		if (why && !filewhy_unknown(why))
			return why;
		if (why)
			unknown = why;
	}
	return unknown;
}

bool filewhy_unknown(const char *why)
{
	return why && strncmp(why, FILEWHY_UNKNOWN_PREFIX, strlen(FILEWHY_UNKNOWN_PREFIX)) == 0;
}

unsigned long filewhy_links(struct filewhy *w, pid_t pid, const struct ev_file *x)
{
	if (!w || !w->ws || x->npaths < 1 || !x->paths[0] || x->paths[0][0] != '/')
		return 0;
	/* an open without flags is creat's: O_WRONLY | O_TRUNC */
	bool writes = strcmp(x->op, "open") == 0
			      ? !x->has_flags || (x->flags & (O_WRONLY | O_RDWR | O_TRUNC))
			      : strcmp(x->op, "truncate") == 0;
	if (!writes)
		return 0;
	_cleanup_free_ char *lex = ws_join_lexically("/", x->paths[0]);
	int root = root_of(w, pid);
	if (!path_is_within(lex, w->ws) || root < 0)
		return 0;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, root, lex, &how, sizeof how);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2)
		return 0;
	return (unsigned long)st.st_nlink;
}
