/* notefile.c - the file operations a seccomp notification records (the
 * notifier: notify_int.h): each open, unlink (rmdir too), rename, link,
 * symlink, truncate, mkdir, mknod, chmod, chown, utime (a file's times),
 * setxattr and removexattr (an extended attribute, by its name) the filter
 * hands over, as a `file` event with
 * the walls' answer predicted (filewhy.h) under the record's bound, or
 * held for a question (`write ask`, writeask.h); before it goes on, the
 * secret name it is about to make noted for the workspace watch
 * (wsmade.h), as is a bound unix socket's name; and the reads outside the
 * workspace the file reads' helper reports (fanread.h). Paths are read as
 * text from the process's memory and checked valid after: nothing is
 * opened on the agent's say-so but the directories a secret name is made
 * in, resolved as the process sees them (target.h). */
#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/sysnr.h"
#include "../common/util.h"
#include "../workspace/plan.h"
#include "../workspace/wsmade.h"
#include "cfgwrite.h"
#include "fanread.h"
#include "notify_int.h"
#include "target.h"
#include "writeask.h"

static const struct file_op file_ops[] = {
	/* name, op, path, dirfd, path2, dirfd2, flags, made, mode */
	{ "open", "open", 0, -1, -1, -1, 1, 1, 2 },
	{ "openat", "open", 1, 0, -1, -1, 2, 1, 3 },
	{ "creat", "open", 0, -1, -1, -1, -1, 1, 1 },
	{ "unlink", "unlink", 0, -1, -1, -1, -1, 0, -1 },
	{ "unlinkat", "unlink", 1, 0, -1, -1, 2, 0, -1 },
	{ "rmdir", "unlink", 0, -1, -1, -1, -1, 0, -1 },
	{ "rename", "rename", 0, -1, 1, -1, -1, 2, -1 },
	{ "renameat", "rename", 1, 0, 3, 2, -1, 2, -1 },
	{ "renameat2", "rename", 1, 0, 3, 2, 4, 2, -1 },
	{ "link", "link", 0, -1, 1, -1, -1, 2, -1 },
	{ "linkat", "link", 1, 0, 3, 2, 4, 2, -1 },
	{ "symlink", "symlink", -1, -1, 1, -1, -1, 2, -1 },
	{ "symlinkat", "symlink", -1, -1, 2, 1, -1, 2, -1 },
	{ "truncate", "truncate", 0, -1, -1, -1, -1, 0, -1 },
	{ "mkdir", "mkdir", 0, -1, -1, -1, -1, 1, -1 },
	{ "mkdirat", "mkdir", 1, 0, -1, -1, -1, 1, -1 },
	{ "mknod", "mknod", 0, -1, -1, -1, -1, 1, 1 },
	{ "mknodat", "mknod", 1, 0, -1, -1, -1, 1, 2 },
	{ "chmod", "chmod", 0, -1, -1, -1, -1, 0, 1 },
	{ "fchmod", "chmod", -1, 0, -1, -1, -1, 0, 1 },
	{ "fchmodat", "chmod", 1, 0, -1, -1, -1, 0, 2 },
	{ "fchmodat2", "chmod", 1, 0, -1, -1, 3, 0, 2 },
	{ "chown", "chown", 0, -1, -1, -1, -1, 0, -1 },
	{ "fchown", "chown", -1, 0, -1, -1, -1, 0, -1 },
	{ "lchown", "chown", 0, -1, -1, -1, -1, 0, -1 },
	{ "fchownat", "chown", 1, 0, -1, -1, 4, 0, -1 },
	{ "utime", "utime", 0, -1, -1, -1, -1, 0, -1 },
	{ "utimes", "utime", 0, -1, -1, -1, -1, 0, -1 },
	{ "futimesat", "utime", 1, 0, -1, -1, -1, 0, -1 },
	{ "utimensat", "utime", 1, 0, -1, -1, 3, 0, -1 },
	{ "setxattr", "setxattr", 0, -1, -1, -1, -1, 0, -1 },
	{ "lsetxattr", "setxattr", 0, -1, -1, -1, -1, 0, -1 },
	{ "fsetxattr", "setxattr", -1, 0, -1, -1, -1, 0, -1 },
	{ "setxattrat", "setxattr", 1, 0, -1, -1, 2, 0, -1 },
	{ "removexattr", "removexattr", 0, -1, -1, -1, -1, 0, -1 },
	{ "lremovexattr", "removexattr", 0, -1, -1, -1, -1, 0, -1 },
	{ "fremovexattr", "removexattr", -1, 0, -1, -1, -1, 0, -1 },
	{ "removexattrat", "removexattr", 1, 0, -1, -1, 2, 0, -1 },
};
_Static_assert(ARRAY_LEN(file_ops) == NOTEFILE_OPS, "NOTEFILE_OPS is the table's length");

void notefile_init(struct notifier *n)
{
	for (size_t i = 0; i < ARRAY_LEN(file_ops); i++)
		n->file_nr[i] = sysnr(file_ops[i].name);
}

/* The argument holding the name of the extended attribute an xattr call
 * sets or removes (the *at forms': after their dirfd, path and flags), or
 * -1 for another call. */
static int xattr_arg(const struct file_op *op)
{
	if (strcmp(op->op, "setxattr") != 0 && strcmp(op->op, "removexattr") != 0)
		return -1;
	return op->path >= 0 && op->dirfd >= 0 ? 3 : 1;
}

/* The path argument at index `arg`, made absolute inside the sandbox from
 * the cwd or the directory fd at index `dirarg` (text only: nothing is
 * opened, the call has not happened yet), written plainly ("./" and "//"
 * gone, ".." kept: path_lexical), and through the magic links of /proc it
 * starts with (/proc/self/cwd/..., /dev/fd/N, /proc/self/fd/N: what the
 * kernel and its walls follow them to, target_proc_resolve), so that the
 * event, its prediction, `write ask` and the hard-link check all see the
 * file itself; one that names nothing with a path inside (a pipe, a file
 * handed in) stays as spelled. *held: the process's fd the path names as
 * a whole (/dev/fd/N, /proc/self/fd/N: a new open of that fd), else -1.
 * NULL when unreadable. cwd: "" until a relative path needs it, then the
 * process's, read here. A relative path from a directory whose name
 * cannot be read (deeper than PATH_MAX: the kernel gives no name longer)
 * cannot be made absolute: it is kept as given, with *partial set, never
 * passed off as a full path. */
static char *arg_path(const struct seccomp_notif *req, struct target_args *ta, int arg, int dirarg,
		      char cwd[PATH_MAX], int *held, bool *partial)
{
	*held = -1;
	*partial = false;
	const char *buf;
	if (target_arg_str(ta, arg, &buf) < 0)
		return NULL;
	char base[PATH_MAX] = "";
	if (buf[0] != '/') {
		int dfd = dirarg >= 0 ? (int)req->data.args[dirarg] : AT_FDCWD;
		if (dfd == AT_FDCWD) {
			if (!cwd[0]) /* read for the first relative path only */
				target_cwd(req->pid, cwd, PATH_MAX);
			snprintf(base, sizeof base, "%s", cwd);
		} else {
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)req->pid, dfd);
			ssize_t k = readlink(p, base, sizeof base - 1);
			base[k > 0 ? k : 0] = '\0';
		}
	}
	if (buf[0] != '/' && base[0] != '/') {
		*partial = true; /* its directory is not known by name */
		return xstrdup(buf);
	}
	_cleanup_free_ char *joined = buf[0] == '/' ? xstrdup(buf) : xasprintf("%s/%s", base, buf);
	char *lex = path_lexical(joined, false), *real;
	if (!target_own_fd(req->pid, lex, held))
		*held = -1;
	if (target_proc_resolve(req->pid, lex, &real) <= 0)
		return lex;
	free(lex);
	return real;
}

/* The path of what the process's fd is (its /proc/PID/fd link: a file's
 * path, or "pipe:[N]" and the like), malloc'd; NULL when unreadable. */
static char *fd_path(pid_t pid, int fd)
{
	char p[64], buf[PATH_MAX];
	snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, fd);
	ssize_t k = readlink(p, buf, sizeof buf - 1);
	if (k <= 0)
		return NULL;
	buf[k] = '\0';
	return xstrdup(buf);
}

/* Does the call name its file by the fd at op->dirfd: fchmod's and
 * fchown's fd, utimensat's and futimesat's with no path (futimens), an
 * empty path with AT_EMPTY_PATH? */
static bool by_fd(const struct seccomp_notif *req, struct target_args *ta,
		  const struct file_op *op)
{
	const __u64 *a = req->data.args;
	if (op->dirfd < 0)
		return false;
	if (op->path < 0)
		return true;
	if (strcmp(op->op, "utime") == 0 && a[op->path] == 0)
		return true;
	const char *s;
	return op->flags >= 0 && (a[op->flags] & AT_EMPTY_PATH) &&
	       target_arg_str(ta, op->path, &s) == 0 && !*s;
}

/* The first path of a file operation (arg_path): the file an fd names
 * when the call names it by one (by_fd), or, when the call is no open
 * (whose spelling is judged by filewhy.h as a new open of what that fd
 * is), the path the kernel gives the file of a spelling of /proc that
 * names one of the process's fds (/proc/self/fd/N, /dev/fd/N) that
 * arg_path could not take to a path inside. *held, *partial: arg_path's. */
static char *op_path(const struct seccomp_notif *req, struct target_args *ta,
		     const struct file_op *op, char cwd[PATH_MAX], int *held, bool *partial)
{
	*held = -1;
	*partial = false;
	if (by_fd(req, ta, op))
		return fd_path(req->pid, (int)req->data.args[op->dirfd]);
	char *path = arg_path(req, ta, op->path, op->dirfd, cwd, held, partial);
	if (!path || *partial || strcmp(op->op, "open") == 0 ||
	    !target_own_fd(req->pid, path, held))
		return path;
	char *file = fd_path(req->pid, *held);
	if (!file || file[0] != '/') {
		free(file);
		return path;
	}
	free(path);
	return file;
}

/* The file operation a syscall number is, or NULL. */
static const struct file_op *file_op_of(const struct notifier *n, int nr)
{
	for (size_t i = 0; i < ARRAY_LEN(file_ops); i++)
		if (n->file_nr[i] == nr)
			return &file_ops[i];
	return NULL;
}

/* path without its trailing slashes (cut in place), and its last name. */
static char *last_name(char *path)
{
	size_t l = strlen(path);
	while (l > 1 && path[l - 1] == '/')
		path[--l] = '\0';
	char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The name that path (text, relative to the directory fd dfd when at,
 * else to the cwd) is about to make, noted when it is a secret name (any:
 * whatever its name, a socket's) (wsmade.h), so that the workspace watch
 * leaves that file to the agent. Its directory is resolved as the process
 * sees it (target.h); a name that is there already is not made by this
 * call (fresh) and not noted, nor one whose directory cannot be resolved:
 * its file, if made, is masked (fail closed). cwd: the process's, or ""
 * until read. */
static void note_name(struct notifier *n, const struct seccomp_notif *req, char *path, bool at,
		      int dfd, char *cwd, bool fresh, bool any)
{
	char *name = last_name(path);
	char *slash = name == path ? NULL : name - 1;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return;
	if (!at)
		dfd = AT_FDCWD;
	const char *rel = name;
	_cleanup_free_ char *lex = NULL;
	if (!any && n->mask_paths) {
		/* where it is in the workspace, as text */
		char base[PATH_MAX] = "";
		if (path[0] != '/' && dfd != AT_FDCWD) {
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)req->pid, dfd);
			ssize_t k = readlink(p, base, sizeof base - 1);
			base[k > 0 ? k : 0] = '\0';
		}
		_cleanup_free_ char *abs = *base ? xasprintf("%s/%s", base, path) : xstrdup(path);
		if (path[0] == '/' || dfd == AT_FDCWD || *base) /* else: not from the cwd */
			lex = target_lexical_path(req->pid, abs);
		if (n->ws && lex && path_is_within(lex, n->ws) && strcmp(lex, n->ws) != 0)
			rel = lex + strlen(n->ws) + (strcmp(n->ws, "/") != 0);
	}
	if (!any && !workspace_masked(n->pol, rel, name))
		return;
	if (!*cwd)
		target_cwd(req->pid, cwd, PATH_MAX);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1,
		 slash ? path : ".");
	_cleanup_close_ int fd = target_open(req->pid, dfd, at, dir, 0,
					     O_PATH | O_DIRECTORY | O_CLOEXEC, cwd, NULL, 0);
	struct stat st, there;
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    (fresh && fstatat(fd, name, &there, AT_SYMLINK_NOFOLLOW) == 0) ||
	    seccomp_notify_id_valid(n->fd, req->id) != 0)
		return;
	wsmade_note(n->made, st.st_dev, st.st_ino, name);
}

/* note_name for the path at argument parg, relative to the directory fd at
 * darg (-1: the cwd). */
static void note_arg(struct notifier *n, const struct seccomp_notif *req, struct target_args *ta,
		     int parg, int darg, char *cwd, bool fresh)
{
	const char *raw;
	char path[PATH_MAX];
	if (target_arg_str(ta, parg, &raw) != 0)
		return;
	snprintf(path, sizeof path, "%s", raw); /* note_name cuts it */
	note_name(n, req, path, darg >= 0, darg >= 0 ? (int)req->data.args[darg] : AT_FDCWD, cwd,
		  fresh, false);
}

/* A bind to a pathname unix socket: its name noted, whatever it is (a
 * socket the sandbox did not bind is masked by the workspace watch). */
void notefile_bind(struct notifier *n, const struct seccomp_notif *req, int mem)
{
	struct sockaddr_un un;
	memset(&un, 0, sizeof un);
	size_t len = req->data.args[2] < sizeof un ? (size_t)req->data.args[2] : sizeof un;
	if (!n->made || len <= offsetof(struct sockaddr_un, sun_path) ||
	    pread(mem, &un, len, (off_t)req->data.args[1]) != (ssize_t)len ||
	    un.sun_family != AF_UNIX || un.sun_path[0] == '\0' /* abstract */)
		return;
	char path[sizeof un.sun_path + 1], cwd[PATH_MAX] = "";
	size_t plen = len - offsetof(struct sockaddr_un, sun_path);
	memcpy(path, un.sun_path, plen);
	path[plen] = '\0';
	note_name(n, req, path, false, AT_FDCWD, cwd, true, true);
}

/* Can the path at addr name a secret? Its last name against the patterns
 * that name no path (the others need its place: note_name's, later). */
static bool secret_arg(const struct notifier *n, struct target_args *ta, int arg)
{
	const char *raw;
	char path[PATH_MAX];
	if (target_arg_str(ta, arg, &raw) != 0)
		return false;
	snprintf(path, sizeof path, "%s", raw);
	if (n->mask_paths)
		return true;
	const char *name = last_name(path);
	return workspace_masked(n->pol, name, name);
}

/* A file operation about to make a name: its secret names noted
 * (note_name). An open makes one only with O_CREAT (not with O_PATH, which
 * ignores it, nor with O_DIRECTORY, refused with it); a rename or a link
 * only from a source that is there (a call that fails leaves a note that
 * could later cover the host's file). */
static void note_made(struct notifier *n, const struct seccomp_notif *req, struct target_args *ta,
		      const struct file_op *op)
{
	if (!n->made || !op->made)
		return;
	const __u64 *a = req->data.args;
	if (strcmp(op->op, "open") == 0 && op->flags >= 0 &&
	    ((a[op->flags] & O_CREAT) == 0 || (a[op->flags] & (O_PATH | O_DIRECTORY))))
		return;
	char cwd[PATH_MAX] = "";
	bool moves = strcmp(op->op, "rename") == 0;
	if ((moves || strcmp(op->op, "link") == 0) && op->path >= 0) {
		const char *src;
		if (target_arg_str(ta, op->path, &src) != 0 ||
		    !(secret_arg(n, ta, op->path2) ||
		      (moves && op->flags >= 0 && (a[op->flags] & RENAME_EXCHANGE))))
			return; /* the source is looked for only when a secret name is made */
		bool at = op->dirfd >= 0;
		int at_flags = strcmp(op->op, "link") == 0 && op->flags >= 0 ? (int)a[op->flags] : 0;
		target_cwd(req->pid, cwd, sizeof cwd);
		_cleanup_close_ int fd = target_open(req->pid, at ? (int)a[op->dirfd] : AT_FDCWD, at, src,
						     at_flags, O_PATH | O_NOFOLLOW | O_CLOEXEC, cwd,
						     NULL, 0);
		if (fd < 0)
			return;
		/* an exchange makes both names anew */
		if (moves && op->flags >= 0 && (a[op->flags] & RENAME_EXCHANGE))
			note_arg(n, req, ta, op->path, op->dirfd, cwd, false);
	}
	if (op->made == 1)
		note_arg(n, req, ta, op->path, op->dirfd, cwd, true);
	else
		note_arg(n, req, ta, op->path2, op->dirfd2, cwd, !moves);
}

/* The .git of path when it names a repository's config in the workspace
 * (WS/REL/.git/config or config.worktree, REL of plain names: no "", "."
 * or ".."): "REL/.git", malloc'd; else NULL. */
static char *config_gitdir(const char *ws, const char *path)
{
	size_t wl = strlen(ws);
	if (!path || !path_is_within(path, ws) || path[wl] != '/' ||
	    path_has_dot_components(path + wl))
		return NULL;
	const char *rel = path + wl + 1;
	size_t n = strlen(rel);
	static const char *const ends[] = { ".git/config", ".git/config.worktree" };
	for (size_t i = 0; i < ARRAY_LEN(ends); i++) {
		size_t el = strlen(ends[i]);
		if (n >= el && strcmp(rel + n - el, ends[i]) == 0 && (n == el || rel[n - el - 1] == '/'))
			return xasprintf("%.*s", (int)(n - el + 4), rel); /* through ".git" */
	}
	return NULL;
}

/* Does the operation write the config of a repository the session made
 * (each config it names in a .git not there at start, workspace_git_new)?
 * The end-of-session sweep judges such a repository, kept or moved aside,
 * so the live alert of git's configuration written by another program
 * than git (persist.git-config; cargo new writes it through libgit2)
 * leaves it to the sweep. */
static bool config_of_new_repo(const struct notifier *n, const struct ev_file *x)
{
	if (!n->plan || !n->ws)
		return false;
	bool any = false;
	for (int i = 0; i < x->npaths; i++) {
		_cleanup_free_ char *git = config_gitdir(n->ws, x->paths[i]);
		if (!git)
			continue;
		if (!workspace_git_new(n->plan, git))
			return false;
		any = true;
	}
	return any;
}

/* A file operation's event, with the walls' answer predicted (filewhy.h),
 * written when the level and the record's bound let it: refused ones at
 * every level but `audit minimal` (where only the read-only workspace's
 * are), allowed ones but the writes to /dev and /proc (a terminal, a
 * pipe) by default, all of them with `audit files`. The summary of what
 * the bound held back goes first, when due. What is not written costs no
 * more than the prediction: the pid inside is read only for an event.
 * held: the process's fd an open names (/dev/fd/N: filewhy_predict's),
 * else -1. done: a write the supervisor made in the sandbox's stead
 * (cfgwrite.h), recorded at every level with detail as its reason; else
 * detail (may be NULL) says more of a protected path's refusal. */
static void file_event(struct notifier *n, pid_t pid, struct ev_file *x, int held, bool done,
		       const char *detail)
{
	const char *why = done ? NULL : filewhy_predict(n->why, pid, x, held);
	if (!done && !why && (x->partial[0] || x->partial[1]))
		why = FILEWHY_UNKNOWN_PARTIAL;
	bool unknown = filewhy_unknown(why);
	bool ro_ws = why && strncmp(why, "read-only workspace", 19) == 0;
	_cleanup_free_ char *more = why && detail && strcmp(why, "protected path") == 0
					    ? xasprintf("%s: git config: %s", why, detail)
					    : done ? xasprintf("git config written: %s", detail) : NULL;
	x->decision = unknown ? "unknown" : why ? "deny" : "allow";
	x->reason = more ? more : why;
	x->access = "write";
	x->links = done || why ? 0 : filewhy_links(n->why, pid, x);
	bool wanted = why ? n->level > 0 || ro_ws || (unknown && n->ro_ws)
			  : done || x->links || n->level >= 2 ||
				    (n->level == 1 && !filewhy_noise(x->paths[0]));
	if (!wanted)
		return;
	double now = mono_ms();
	struct ev_file sum;
	while (filebound_summary(&n->bound, false, now, &sum))
		audit_emit_event(n->log, ev_file(&sum), NULL);
	/* a write through a hard link, or one not judged, counts as a refusal
	 * does: never lost among the allowed ones (fs.hardlink-write) */
	if (!done && !filebound_admit(&n->bound, x, why != NULL || x->links, now))
		return;
	x->pid = target_inner_ns(pid, &n->pidns);
	x->new_repo = config_of_new_repo(n, x);
	notify_later(n, ev_file(x));
}

/* git's rename of a protected repository config: judged, and made by the
 * supervisor when it changes only what git may (cfgwrite.h). */
static enum cfgwrite_result config_rename(struct notifier *n, const struct seccomp_notif *req,
					  const struct file_op *op, const struct ev_file *x,
					  char what[CFGWRITE_WHAT_MAX])
{
	what[0] = '\0';
	if (strcmp(op->op, "rename") != 0 || n->ro_ws || x->npaths != 2 || !x->paths[0] ||
	    !x->paths[1])
		return CFGWRITE_NOT_CONFIG;
	return cfgwrite_rename(n->plan, n->ws, req->pid, x->paths[0], x->paths[1],
			       x->has_flags ? x->flags : 0, what);
}

/* A file operation: recorded (file_event), held for a question (`write
 * ask`: NOTEFILE_HELD, answered later by writeask.c), or made by the
 * supervisor (git's rewrite of a protected config: NOTEFILE_DONE); first,
 * the secret name it makes noted (note_made). */
enum notefile_fate notefile_record(struct notifier *n, const struct seccomp_notif *req,
				   const struct file_op *op)
{
	struct target_args ta; /* the paths read once, for both */
	target_args_init(&ta, req->pid, req->data.args);
	note_made(n, req, &ta, op);
	bool renames = strcmp(op->op, "rename") == 0 && n->plan;
	if (!n->level && !n->wa && !n->ro_ws && !renames)
		return NOTEFILE_GO_ON; /* notified only for note_made */
	char cwd[PATH_MAX] = "";
	struct ev_file x = { .pid = -1, .op = op->op, .syscall = op->name,
			     .has_flags = op->flags >= 0 };
	int held = -1, held2;
	if (op->path >= 0 || op->dirfd >= 0)
		x.paths[x.npaths++] = op_path(req, &ta, op, cwd, &held, &x.partial[0]);
	if (op->path2 >= 0) {
		x.paths[x.npaths] = arg_path(req, &ta, op->path2, op->dirfd2, cwd, &held2,
					     &x.partial[x.npaths]);
		x.npaths++;
	}
	if (x.has_flags)
		x.flags = (unsigned long long)req->data.args[op->flags];
	/* a symlink's target (argument 0 of symlink and symlinkat), as given */
	const char *target, *attr;
	if (strcmp(op->op, "symlink") == 0 && target_arg_str(&ta, 0, &target) == 0)
		x.target = target;
	/* an extended attribute's name, as given (its value is not kept) */
	int xa = xattr_arg(op);
	if (xa >= 0 && target_arg_str(&ta, xa, &attr) == 0)
		x.attr = attr;
	enum notefile_fate fate = NOTEFILE_GO_ON;
	if (seccomp_notify_id_valid(n->fd, req->id) == 0) {
		if (n->wa)
			x.pid = target_inner_ns(req->pid, &n->pidns);
		char what[CFGWRITE_WHAT_MAX];
		enum cfgwrite_result c = CFGWRITE_NOT_CONFIG;
		if (writeask_check(n->wa, req, &x))
			fate = NOTEFILE_HELD;
		else if ((c = config_rename(n, req, op, &x, what)) == CFGWRITE_WRITTEN)
			fate = NOTEFILE_DONE;
		if (fate != NOTEFILE_HELD && (n->level || n->ro_ws || fate == NOTEFILE_DONE))
			file_event(n, req->pid, &x, strcmp(op->op, "open") == 0 ? held : -1,
				   fate == NOTEFILE_DONE,
				   c == CFGWRITE_NOT_CONFIG ? NULL : what);
	}
	for (int i = 0; i < x.npaths; i++)
		free((char *)x.paths[i]);
	return fate;
}

/* A call the filter refuses by its mode (seccomp.c's add_setid_rules),
 * on the same 32 bits of the same arguments: an open that creates with a
 * set-id mode, a mode change to one, a node made with one or a device
 * node, and a rename that leaves a whiteout (a device node) by its flags. */
static bool refused_mode(const __u64 *a, const struct file_op *op)
{
	if (strcmp(op->op, "rename") == 0)
		return op->flags >= 0 && (a[op->flags] & RENAME_WHITEOUT);
	if (op->mode < 0)
		return false;
	uint32_t mode = (uint32_t)a[op->mode];
	bool setid = mode & (S_ISUID | S_ISGID);
	if (strcmp(op->op, "mknod") == 0)
		return setid || (mode & S_IFMT) == S_IFCHR || (mode & S_IFMT) == S_IFBLK;
	if (strcmp(op->op, "open") == 0 && op->flags >= 0) { /* creat: creates */
		uint32_t flags = (uint32_t)a[op->flags];
		return setid && ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE);
	}
	return setid;
}

/* The file operation req is, when it goes on once recorded: NULL for a
 * call the filter refuses by its mode or flags (a set-id file or mode, a
 * device node, a whiteout: refused_mode) and for any other call. */
const struct file_op *notefile_op(const struct notifier *n, const struct seccomp_notif *req)
{
	const struct file_op *fop = file_op_of(n, req->data.nr);
	return fop && !refused_mode(req->data.args, fop) ? fop : NULL;
}

/* The reads outside the workspace (fanread.h): a file the sandbox opened
 * without write access, on the mounts the helper marks, recorded as an
 * `open` with access "read", decision "allow", under the record's bound;
 * none in the workspace or the system directories, none with `audit
 * minimal`. pid -1: the kernel does not tell a listener in a user
 * namespace which process it was (it may be the supervisor's own reading
 * a program to hash it). */
static bool read_wanted(const struct notifier *n, const char *path)
{
	static const char *const sys[] = { "/etc/", "/usr/", "/bin/", "/sbin/", "/lib", "/opt/",
					   "/proc/", "/sys/", "/dev/", "/run/", "/.warden/" };
	size_t wl = n->ws ? strlen(n->ws) : 0;
	if (wl && strncmp(path, n->ws, wl) == 0 && (path[wl] == '/' || path[wl] == '\0'))
		return false;
	for (size_t i = 0; i < ARRAY_LEN(sys); i++)
		if (strncmp(path, sys[i], strlen(sys[i])) == 0)
			return false;
	return true;
}

static void on_read(struct loop *l, const struct source *src, uint32_t events)
{
	struct notifier *n = src->ctx;
	struct fanread_msg m;
	ssize_t len = recv(src->fd, &m, sizeof m - 1, MSG_DONTWAIT);
	if (len < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (len < (ssize_t)sizeof m.pid || m.pid < 0) {
		if (len > 0 && !(events & (EPOLLHUP | EPOLLERR)))
			return;
		/* the helper is gone (it never ends on its own): said, and the
		 * session goes on, the reads being a record, not a wall */
		loop_remove(l, src);
		audit_emit_event(n->log, ev_alert(&(struct ev_alert){ .rule = "files.reads-lost",
			.action = "the file-read helper ended: reads outside the workspace are no "
			"longer recorded" }), NULL);
		wnote("the file-read helper ended: reads outside the workspace are no longer "
		      "recorded in this session");
		return;
	}
	((char *)&m)[len] = '\0';
	if (len == (ssize_t)sizeof m.pid || !n->level || !read_wanted(n, m.path))
		return;
	double now = mono_ms();
	struct ev_file sum;
	while (filebound_summary(&n->bound, false, now, &sum))
		audit_emit_event(n->log, ev_file(&sum), NULL);
	const char *path = m.path;
	struct ev_file x = { .pid = -1, .op = "open", .npaths = 1,
			     .paths = { path }, .decision = "allow", .access = "read" };
	if (!filebound_admit(&n->bound, &x, false, now))
		return;
	audit_emit_event(n->log, ev_file(&x), NULL);
}

int notifier_reads_watch(struct loop *l, struct notifier *n, int sock, struct werr *e)
{
	return loop_add(l, "the file reads' helper", sock, on_read, n, e);
}
