/* task.c - a workspace per task: the repository found, its worktree (or a
 * copy) made or reused, the task's lock, and the repository's git directory
 * bound into the sandbox with what the host's git would run kept read-only
 * (task.h). */
#include "task.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../common/hash.h"
#include "../common/runcmd.h"
#include "../common/shown.h"
#include "safegit.h"

#define TASK_NAME_MAX 64
#define TASKS_SUFFIX ".warden-tasks"

bool task_name_valid(const char *name, char *why, size_t wlen)
{
	size_t n = strlen(name);
	if (n == 0 || n > TASK_NAME_MAX) {
		snprintf(why, wlen, "1 to %d characters", TASK_NAME_MAX);
		return false;
	}
	if (name[0] == '.' || name[0] == '-') {
		snprintf(why, wlen, "it may not start with '.' or '-'");
		return false;
	}
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '_' || *p == '-')) {
			snprintf(why, wlen, "letters, digits, '.', '_' and '-' only");
			return false;
		}
	if (strstr(name, "..") || (n >= 5 && strcmp(name + n - 5, ".lock") == 0)) {
		snprintf(why, wlen, "no '..' in it, no '.lock' at its end (git refuses such "
			 "branch names)");
		return false;
	}
	return true;
}

/* ---- git, run as for untrusted input ---------------------------------- */

/* How long a git that only looks or moves a ref (rev-parse, cat-file,
 * update-ref) may take: milliseconds as a rule; one that takes this long is
 * stuck (a FIFO or a device where it reads a file, a file system that does
 * not answer), and the task stops with an error instead of hanging. */
#define TASK_LOOKUP_MS 10000

/* Run argv in dir (NULL: here), its stdout to out_fd or captured into
 * *out, stopped after timeout_ms (0: never); 0 when it exited 0, or with
 * code its exit status in *code; -1 with e, -2 with e when it was stopped. */
static int run_cmd(const char *dir, char *const *argv, char *const *env, int out_fd, char **out,
		   const char *what, unsigned timeout_ms, int *code, struct werr *e)
{
	const struct runcmd rc = { .argv = argv, .env = env, .dir = dir, .out_fd = out_fd,
				   .err = RUNCMD_ERR_KEEP, .timeout_ms = timeout_ms };
	_cleanup_(runcmd_out_free) struct runcmd_out r = { 0 };
	if (runcmd(&rc, &r) < 0)
		return werr_set(e, errno, "cannot run %s: %s", argv[0], strerror(errno));
	if (r.end == RUNCMD_TIMED_OUT) {
		char limit[32];
		runcmd_timeout_text(limit, sizeof limit, timeout_ms);
		werr_set(e, 0, "%s in %s did not answer within %s and was stopped: "
				"a FIFO or a device where it reads a file, or a file system that does "
				"not answer, does that (`find %s/.git -type p` lists FIFOs)", what,
				dir ? dir : ".", limit, dir ? dir : ".");
		return -2;
	}
	if (code && r.end == RUNCMD_EXITED)
		*code = r.code;
	else if (r.end != RUNCMD_EXITED || r.code != 0)
		return werr_set(e, 0, "%s failed: %s", what, r.err_line);
	if (out)
		*out = steal_ptr(&r.out);
	return 0;
}

/* The safe git, its exit status to *code when code is not NULL (then 0
 * whatever it is), else an error unless 0. */
static int git_run(const char *dir, const char *const *args, int out_fd, char **out, int *code,
		   unsigned timeout_ms, struct werr *e)
{
	_cleanup_strv_ struct strv argv = { 0 };
	_cleanup_strv_ struct strv env = { 0 };
	safegit_argv(&argv);
	for (size_t i = 0; args[i]; i++)
		strv_push(&argv, args[i]);
	safegit_env(&env);
	_cleanup_free_ char *what = xasprintf("git %s", args[0]);
	return run_cmd(dir, argv.v, env.v, out_fd, out, what, timeout_ms, code, e);
}

int task_git(const char *dir, const char *const *args, int out_fd, char **out, struct werr *e)
{
	return git_run(dir, args, out_fd, out, NULL, 0, e);
}

/* A git that looks (or moves a ref), bounded by TASK_LOOKUP_MS. */
static int git_look(const char *dir, const char *const *args, char **out, struct werr *e)
{
	return git_run(dir, args, -1, out, NULL, TASK_LOOKUP_MS, e);
}

/* ---- where the task lives ---------------------------------------------- */

static char *dir_of(const char *path)
{
	char *d = xstrdup(path);
	char *slash = strrchr(d, '/');
	if (slash == d)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	return d;
}

/* A commit's name as git prints it: 40 or 64 hex digits. */
static bool commit_name(const char *s)
{
	size_t n = strlen(s);
	bool hex = n == 40 || n == 64;
	for (size_t i = 0; hex && i < n; i++)
		hex = hex_digit((unsigned char)s[i]) >= 0;
	return hex;
}

/* git's answer for t->src: the repository's common git directory into
 * *common (1; 0: no repository git accepts, or no git; -1 with e: git did
 * not answer, which is no reason to fall back to a copy), and for a named
 * task its branch's (branch) commit into t->seen when it is there: one git
 * for both (a git costs milliseconds to start), which task_prepare confirms
 * under the task's lock before a session starts from it. */
static int locate_git(struct task *t, const char *branch, char **common, struct werr *e)
{
	_cleanup_free_ char *ref = branch ? xasprintf("refs/heads/%s", branch) : NULL;
	const char *args[] = { "rev-parse", "--path-format=absolute", "--git-common-dir", NULL,
			       NULL, NULL, NULL };
	if (ref) {
		args[3] = "--verify";
		args[4] = "--quiet";
		args[5] = ref;
	}
	struct werr ge = { 0 };
	int code = -1;
	_cleanup_free_ char *out = NULL;
	/* without the branch git says 1, after the common directory */
	int r = git_run(t->src, args, -1, &out, &code, TASK_LOOKUP_MS, &ge);
	if (r == -2)
		*e = ge;
	if (r < 0)
		return r == -2 ? -1 : 0;
	if (code != 0 && !(ref && code == 1))
		return 0;
	char *nl = strchr(out, '\n');
	if (!nl || nl == out)
		return 0;
	*nl = '\0';
	char *sha = nl + 1;
	sha[strcspn(sha, "\n")] = '\0';
	if (ref && code == 0 && commit_name(sha))
		t->seen = xstrdup(sha);
	*common = steal_ptr(&out);
	return 1;
}

int task_locate(struct task *t, const char *name, const char *src, struct werr *e)
{
	*t = (struct task){ .lock_fd = -1 };
	char why[160];
	if (name && !task_name_valid(name, why, sizeof why))
		return werr_set(e, 0, "task '%.100s': not a task name (%s)", name, why);
	t->name = name ? xstrdup(name) : NULL;
	char buf[PATH_MAX];
	if (!realpath(src ? src : ".", buf))
		return werr_errno(e, "--task: %s", src ? src : ".");
	t->src = xstrdup(buf);
	_cleanup_free_ char *out = NULL;
	_cleanup_free_ char *branch = name ? xasprintf("warden/%s", name) : NULL;
	int found = locate_git(t, branch, &out, e);
	if (found < 0)
		return werr_wrap(e, "--task: finding the repository of %s", t->src);
	if (found) {
		if (!realpath(out, buf))
			return werr_errno(e, "--task: the repository's git directory %s", out);
		t->common = xstrdup(buf);
		const char *base = strrchr(t->common, '/');
		t->repo = base && strcmp(base, "/.git") == 0 ? dir_of(t->common) : xstrdup(t->common);
		t->branch = steal_ptr(&branch);
	} else {
		t->repo = xstrdup(t->src);
	}
	if (strcmp(t->repo, "/") == 0)
		return werr_set(e, 0, "--task: no place beside /");
	t->dir = name ? xasprintf("%s" TASKS_SUFFIX "/%s", t->repo, name)
		      : xasprintf("%s" TASKS_SUFFIX, t->repo);
	return 0;
}

int task_lock(struct task *t, const char *lockdir, struct werr *e)
{
	if (mkdir_p(lockdir, 0700, NULL) < 0)
		return werr_errno(e, "creating warden's lock directory %s (in the audit log's "
				  "directory: $XDG_STATE_HOME/warden, or ~/.local/state/warden)", lockdir);
	char sum[SHA256_HEX_LEN];
	sha256_hex(t->dir, strlen(t->dir), sum);
	_cleanup_free_ char *path = xasprintf("%s/task-%.32s.lock", lockdir, sum);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
				     0600);
	if (fd < 0)
		return werr_errno(e, "opening the task's lock %s", path);
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK)
			return werr_set(e, EBUSY, "task %s is in use by another session (%s); one "
					"session per task", t->name, t->dir);
		return werr_errno(e, "locking %s", path);
	}
	t->lock_fd = steal_fd(&fd);
	return 0;
}

/* The administrative directory the worktree's .git file names, checked to
 * be one of the repository's. */
static int read_admin(struct task *t, struct werr *e)
{
	_cleanup_free_ char *gitfile = xasprintf("%s/.git", t->dir);
	struct stat st;
	if (lstat(gitfile, &st) < 0 || !S_ISREG(st.st_mode))
		return werr_set(e, 0, "task %s: %s is not a git worktree (no .git file); remove it "
				"with `warden task remove %s`", t->name, t->dir, t->name);
	char what[READ_WHY_MAX];
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_regular_file(gitfile, 4096, &text, &len, what) < 0)
		return werr_set(e, errno, "task %s: %s: %s", t->name, gitfile, what);
	text[strcspn(text, "\n")] = '\0';
	if (strncmp(text, "gitdir: ", 8) != 0)
		return werr_set(e, 0, "task %s: %s does not name a git directory", t->name, gitfile);
	char buf[PATH_MAX];
	_cleanup_free_ char *wts = xasprintf("%s/worktrees", t->common);
	if (!realpath(text + 8, buf) || !path_is_within(buf, wts) || strcmp(buf, wts) == 0 ||
	    strchr(buf + strlen(wts) + 1, '/'))
		return werr_set(e, 0, "task %s: %s names %s, not a worktree of %s", t->name, gitfile,
				text + 8, t->common);
	t->admin = xstrdup(buf);
	return 0;
}

/* Copy the regular file src to dst (mode 0444), when src exists. */
static int copy_file(const char *src, const char *dst, struct werr *e)
{
	char *text = NULL;
	size_t len = 0;
	char what[READ_WHY_MAX];
	struct stat st;
	if (lstat(src, &st) < 0 && errno == ENOENT)
		return 0;
	if (read_regular_file(src, 64u << 20, &text, &len, what) < 0)
		return werr_set(e, errno, "task: %s: %s", src, what);
	_cleanup_free_ char *t = text;
	_cleanup_close_ int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0 || write_all(fd, t, len) < 0)
		return werr_errno(e, "task: writing %s", dst);
	return 0;
}

/* The task's private directory of warden's (beside the tasks, out of every
 * sandbox's sight): T/.warden/NAME/WHAT, made afresh. */
static char *private_dir(const struct task *t, const char *what, struct werr *e)
{
	_cleanup_free_ char *tasks = dir_of(t->dir);
	_cleanup_free_ char *base = xasprintf("%s/.warden/%s", tasks, t->name);
	if (mkdir_p(base, 0700, NULL) < 0) {
		werr_errno(e, "task %s: making %s", t->name, base);
		return NULL;
	}
	_cleanup_close_ int bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0 || (remove_tree_at(bfd, what) < 0 && errno != ENOENT) ||
	    mkdirat(bfd, what, 0755) < 0) {
		werr_errno(e, "task %s: making %s/%s", t->name, base, what);
		return NULL;
	}
	return xasprintf("%s/%s", base, what);
}

/* The branch's commit now, the task's lock held: what task_locate's git
 * saw, when the worktree was there and the branch's loose ref still holds
 * it. Of warden, only a session holding the lock moves the branch
 * (task_finish), and one that finished between that git and this lock
 * rewrote the file; the host's own git may move it at any time, as ever.
 * Otherwise (a packed ref, a new worktree) git is asked again. */
static char *branch_now(struct task *t, struct werr *e)
{
	_cleanup_free_ char *ref = xasprintf("refs/heads/%s", t->branch);
	if (t->seen && !t->made) {
		_cleanup_free_ char *loose = xasprintf("%s/%s", t->common, ref);
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		char what[READ_WHY_MAX];
		if (read_regular_file_at(AT_FDCWD, loose, O_NOFOLLOW, 128, &text, &len, what) == 0 &&
		    len == strlen(t->seen) + 1 && strncmp(text, t->seen, len - 1) == 0 &&
		    text[len - 1] == '\n')
			return steal_ptr(&t->seen);
	}
	const char *const args[] = { "rev-parse", "--verify", "--quiet", ref, NULL };
	char *sha = NULL;
	if (git_look(t->src, args, &sha, e) < 0) {
		werr_wrap(e, "task %s: its branch %s", t->name, t->branch);
		return NULL;
	}
	sha[strcspn(sha, "\n")] = '\0';
	return sha;
}

/* The view of the common directory inside, made in view: copies of config,
 * HEAD, packed-refs and shallow, all read-only (a rename the host's git
 * makes in the real directory cannot detach a protection), with the real
 * hooks, info and refs read-only in it (made when missing), the objects and
 * logs read-write, and of the worktrees only this one's, writable but for
 * its commondir, gitdir and config.worktree (made empty when missing). A
 * task's refs/heads/warden is a private directory (t->refs) holding its
 * branch alone; a linked worktree's refs are the real ones, read-write, as
 * a repository's own are in a workspace. */
static int bind_view(struct task *t, const char *view, const char *origin, struct policy *pol,
		     struct werr *e)
{
	const char *c = t->common;
	static const char *const made[] = { "hooks", "info", "logs", "refs/heads/warden" };
	for (size_t i = 0; i < ARRAY_LEN(made) - t->linked; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", c, made[i]);
		if (mkdir_p(p, 0755, NULL) < 0)
			return werr_errno(e, "%s: making %s", origin, p);
	}
	/* git reads the worktree's config.worktree on the host when the
	 * repository's config enables it: an empty one, read-only inside, so
	 * none can be planted */
	_cleanup_free_ char *cw = xasprintf("%s/config.worktree", t->admin);
	_cleanup_close_ int cwfd = open(cw, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
				       0644);
	if (cwfd < 0)
		return werr_errno(e, "%s: %s", origin, cw);
	static const char *const copied[] = { "config", "HEAD", "packed-refs", "shallow" };
	for (size_t i = 0; i < ARRAY_LEN(copied); i++) {
		_cleanup_free_ char *from = xasprintf("%s/%s", c, copied[i]);
		_cleanup_free_ char *to = xasprintf("%s/%s", view, copied[i]);
		if (copy_file(from, to, e) < 0)
			return -1;
	}
	const char *id = strrchr(t->admin, '/') + 1;
	static const char *const dirs[] = { "hooks", "info", "objects", "refs", "logs", "worktrees" };
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", view, dirs[i]);
		if (mkdir(p, 0755) < 0)
			return werr_errno(e, "%s: making %s", origin, p);
	}
	_cleanup_free_ char *wt = xasprintf("%s/worktrees/%s", view, id);
	if (mkdir(wt, 0755) < 0)
		return werr_errno(e, "%s: making %s", origin, wt);
	struct bind {
		const char *in, *name, *src;
		enum policy_path_mode mode;
	} binds[] = {
		{ c, NULL, view, POLICY_RO },
		{ c, "hooks", NULL, POLICY_RO },
		{ c, "info", NULL, POLICY_RO },
		{ c, "objects", NULL, POLICY_RW },
		{ c, "logs", NULL, POLICY_RW },
		{ c, "refs", NULL, t->linked ? POLICY_RW : POLICY_RO },
		{ t->admin, NULL, NULL, POLICY_RW },
		{ t->admin, "commondir", NULL, POLICY_RO },
		{ t->admin, "gitdir", NULL, POLICY_RO },
		{ t->admin, "config.worktree", NULL, POLICY_RO },
		{ c, "refs/heads/warden", t->refs, POLICY_RW }, /* a task's alone */
	};
	for (size_t i = 0; i < ARRAY_LEN(binds) - t->linked; i++) {
		const struct bind *b = &binds[i];
		_cleanup_free_ char *in = b->name ? xasprintf("%s/%s", b->in, b->name) : xstrdup(b->in);
		int r = b->src ? policy_add_bind(pol, in, b->src, b->mode, origin, e)
			       : policy_add_path(pol, in, b->mode, origin, e);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* A task's git directory inside (bind_view), its branch as it stands in
 * its private refs directory (task_finish carries it back). */
static int bind_gitdir(struct task *t, struct policy *pol, struct werr *e)
{
	_cleanup_free_ char *origin = xasprintf("--task %s", t->name);
	_cleanup_free_ char *view = private_dir(t, "gitdir", e);
	if (!view)
		return -1;
	t->refs = private_dir(t, "refs", e);
	if (!t->refs)
		return -1;
	if (!(t->start = branch_now(t, e)))
		return -1;
	_cleanup_free_ char *own = xasprintf("%s/%s", t->refs, t->name);
	_cleanup_close_ int fd = open(own, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, t->start, strlen(t->start)) < 0 || write_all(fd, "\n", 1) < 0)
		return werr_errno(e, "task %s: writing %s", t->name, own);
	return bind_view(t, view, origin, pol, e);
}

/* The text of a small file's first line, or NULL. */
static char *first_line(const char *path)
{
	char *text = NULL, what[READ_WHY_MAX];
	size_t len = 0;
	if (read_regular_file_at(AT_FDCWD, path, O_NOFOLLOW, 4096, &text, &len, what) < 0)
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* path (relative to base when it is) resolved, or NULL. */
static char *resolved(const char *base, const char *path)
{
	char buf[PATH_MAX];
	_cleanup_free_ char *abs = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", base, path);
	return realpath(abs, buf) ? xstrdup(buf) : NULL;
}

/* The views of sessions no longer running (killed before task_free), in
 * the views' directory pfd: each named by its warden's pid. */
static void drop_dead_views(int pfd)
{
	_cleanup_dir_ DIR *d = dir_open_at(pfd, ".", O_NOFOLLOW);
	for (struct dirent *de; d && (de = readdir(d));) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end == '\0' && pid > 0 && pid <= INT_MAX && kill((pid_t)pid, 0) < 0 &&
		    errno == ESRCH)
			remove_tree_at(dirfd(d), de->d_name);
	}
}

int task_linked(struct task *t, const char *workspace, const char *home, struct policy *pol,
		struct werr *e)
{
	*t = (struct task){ .lock_fd = -1 };
	char ws[PATH_MAX];
	_cleanup_free_ char *logdir = home ? audit_dir(home) : NULL;
	if (!logdir || !realpath(workspace ? workspace : ".", ws))
		return 0; /* no place for the view: git fails inside, as the scan says */
	_cleanup_free_ char *gitfile = xasprintf("%s/.git", ws);
	_cleanup_free_ char *line = first_line(gitfile);
	if (!line || strncmp(line, "gitdir: ", 8) != 0)
		return 0;
	_cleanup_free_ char *admin = resolved(ws, line + 8);
	if (!admin || path_is_within(admin, ws))
		return 0;
	for (size_t i = 0; i < pol->npaths; i++)
		if (path_is_within(admin, pol->paths[i].path))
			return 0; /* shown already */
	_cleanup_free_ char *cdf = xasprintf("%s/commondir", admin);
	_cleanup_free_ char *cd = first_line(cdf);
	_cleanup_free_ char *common = cd ? resolved(admin, cd) : NULL;
	_cleanup_free_ char *wts = common ? xasprintf("%s/worktrees", common) : NULL;
	if (!wts || !path_is_within(admin, wts) || strcmp(admin, wts) == 0 ||
	    strchr(admin + strlen(wts) + 1, '/') || path_overlaps(common, ws))
		return 0;
	t->linked = true;
	t->common = steal_ptr(&common);
	t->admin = steal_ptr(&admin);
	t->dir = xstrdup(ws);
	t->name = xstrdup(strrchr(t->admin, '/') + 1);
	t->view = xasprintf("%s/gitviews/%d", logdir, (int)getpid());
	_cleanup_free_ char *origin = xasprintf("the linked worktree %s", ws);
	_cleanup_free_ char *parent = dir_of(t->view);
	_cleanup_close_ int pfd = mkdir_p(parent, 0700, NULL) < 0 ? -1
				  : open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	const char *base = strrchr(t->view, '/') + 1;
	if (pfd >= 0)
		drop_dead_views(pfd);
	if (pfd < 0 || (remove_tree_at(pfd, base) < 0 && errno != ENOENT) || mkdirat(pfd, base, 0755) < 0)
		return werr_errno(e, "%s: making %s", origin, t->view);
	return bind_view(t, t->view, origin, pol, e) < 0 ? -1 : 1;
}

void task_writable_gitdirs(const struct task *t, struct strv *dirs)
{
	if (!t->refs && !t->linked)
		return;
	strv_push_owned(dirs, xasprintf("%s/objects", t->common));
	strv_push_owned(dirs, xasprintf("%s/logs", t->common));
	if (t->linked)
		strv_push_owned(dirs, xasprintf("%s/refs", t->common));
	strv_push(dirs, t->admin);
}

int task_finish(struct task *t, struct werr *e)
{
	if (!t->refs || !t->start)
		return 0;
	_cleanup_free_ char *own = xasprintf("%s/%s", t->refs, t->name);
	_cleanup_free_ char *sha = NULL;
	size_t len = 0;
	char what[READ_WHY_MAX];
	if (read_regular_file(own, 128, &sha, &len, what) < 0)
		return werr_set(e, errno, "task %s: its branch after the session (%s): %s", t->name,
				own, what);
	sha[strcspn(sha, "\n")] = '\0';
	if (!commit_name(sha))
		return werr_set(e, 0, "task %s: the session left '%.80s' as its branch, not a "
				"commit; %s stays at %s", t->name, sha, t->branch, t->start);
	if (strcmp(sha, t->start) == 0)
		return 0;
	_cleanup_free_ char *commit = xasprintf("%s^{commit}", sha);
	_cleanup_free_ char *ref = xasprintf("refs/heads/%s", t->branch);
	_cleanup_free_ char *msg = xasprintf("warden task %s", t->name);
	const char *const check[] = { "cat-file", "-e", commit, NULL };
	const char *const update[] = { "update-ref", "-m", msg, ref, sha, t->start, NULL };
	if (git_look(t->src, check, NULL, e) < 0 || git_look(t->src, update, NULL, e) < 0)
		return werr_wrap(e, "task %s: moving %s to %s", t->name, t->branch, sha);
	return 0;
}

/* A copy of src at dir, reflinked where the file system can (cp
 * --reflink=auto uses FICLONE). */
static int copy_tree(struct task *t, struct werr *e)
{
	_cleanup_free_ char *parent = dir_of(t->dir);
	if (mkdir_p(parent, 0755, NULL) < 0)
		return werr_errno(e, "task %s: making %s", t->name, parent);
	char *const argv[] = { "cp", "-a", "--reflink=auto", "--no-target-directory", "--",
			       t->src, t->dir, NULL };
	_cleanup_strv_ struct strv env = { 0 };
	safegit_env(&env);
	if (run_cmd(NULL, argv, env.v, -1, NULL, "cp", 0, NULL, e) < 0)
		return werr_wrap(e, "task %s: copying %s", t->name, t->src);
	return 0;
}

int task_prepare(struct task *t, const char *lockdir, struct policy *pol, struct werr *e)
{
	if (task_lock(t, lockdir, e) < 0)
		return -1;
	struct stat st;
	bool there = lstat(t->dir, &st) == 0;
	if (there && !S_ISDIR(st.st_mode))
		return werr_set(e, 0, "task %s: %s is not a directory", t->name, t->dir);
	if (!t->common) {
		if (!there && copy_tree(t, e) < 0)
			return -1;
		t->made = !there;
		return 0;
	}
	if (!there) {
		_cleanup_free_ char *ref = xasprintf("refs/heads/%s", t->branch);
		const char *const has[] = { "rev-parse", "--verify", "--quiet", ref, NULL };
		int code = 0;
		if (git_run(t->src, has, -1, NULL, &code, TASK_LOOKUP_MS, e) < 0)
			return werr_wrap(e, "task %s", t->name);
		bool exists = code == 0;
		/* a fresh branch starts at HEAD: a repository with no commit has
		 * none (git's own words would be "not a valid object name") */
		const char *const head[] = { "rev-parse", "--verify", "--quiet", "HEAD", NULL };
		if (!exists && (git_run(t->src, head, -1, NULL, &code, TASK_LOOKUP_MS, e) < 0 || code))
			return code ? werr_set(e, 0, "task %s: the repository %s has no commit yet, and a "
					       "task's branch starts at HEAD (commit once, or run "
					       "without --task)", t->name, t->src)
				    : werr_wrap(e, "task %s", t->name);
		const char *const reuse[] = { "worktree", "add", "--", t->dir, t->branch, NULL };
		const char *const fresh[] = { "worktree", "add", "-b", t->branch, "--", t->dir, "HEAD",
					      NULL };
		_cleanup_free_ char *ignored_out = NULL;
		if (task_git(t->src, exists ? reuse : fresh, -1, &ignored_out, e) < 0)
			return werr_wrap(e, "task %s", t->name);
		t->made = true;
	}
	if (read_admin(t, e) < 0 || bind_gitdir(t, pol, e) < 0)
		return -1;
	return 0;
}

/* ---- warden task list|diff|remove ------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int task_list(const char *src, const char *lockdir, FILE *out, struct werr *e)
{
	_cleanup_(task_free) struct task all = { .lock_fd = -1 };
	if (task_locate(&all, NULL, src, e) < 0)
		return -1;
	_cleanup_dir_ DIR *d = opendir(all.dir);
	if (!d && errno == ENOENT)
		return 0;
	if (!d)
		return werr_errno(e, "task list: %s", all.dir);
	_cleanup_strv_ struct strv names = { 0 };
	for (struct dirent *de; (de = readdir(d));) {
		char why[160];
		if (task_name_valid(de->d_name, why, sizeof why))
			strv_push(&names, de->d_name);
	}
	qsort(names.v, names.n, sizeof *names.v, name_cmp);
	for (size_t i = 0; i < names.n; i++) {
		_cleanup_(task_free) struct task t = { .lock_fd = -1 };
		if (task_locate(&t, names.v[i], src, e) < 0)
			return -1;
		struct werr le = { 0 };
		bool busy = task_lock(&t, lockdir, &le) < 0 && le.errnum == EBUSY;
		_cleanup_free_ char *ahead = NULL;
		if (t.branch) {
			_cleanup_free_ char *range = xasprintf("HEAD..%s", t.branch);
			const char *const args[] = { "rev-list", "--count", range, "--", NULL };
			struct werr ge = { 0 };
			if (git_look(t.src, args, &ahead, &ge) == 0)
				ahead[strcspn(ahead, "\n")] = '\0';
		}
		fprintf(out, "%s\t%s\t%s%s\t%s\t%s\n", t.name, t.branch ? t.branch : "(copy)",
			ahead ? ahead : "-", ahead ? " ahead" : "", busy ? "in use" : "idle", t.dir);
	}
	return 0;
}

/* Bytes of what a diff printed, to stdout on a terminal: each line shown
 * (shown.h), a NUL as \x00, so that what the agent wrote (a file's text,
 * a name) cannot act on the user's terminal. */
static void put_shown(const char *p, size_t n)
{
	for (;;) {
		const char *nul = memchr(p, '\0', n);
		size_t seg = nul ? (size_t)(nul - p) : n;
		_cleanup_free_ char *s = line_shown(p, seg);
		fputs(s, stdout);
		if (!nul)
			return;
		fputs("\\x00", stdout);
		p += seg + 1;
		n -= seg + 1;
	}
}

/* fd's content from its start to stdout, line by line through put_shown. */
static int show_fd(int fd, struct werr *e)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return werr_errno(e, "task diff: reading back what it printed");
	int copy = dup(fd);
	FILE *f = copy < 0 ? NULL : fdopen(copy, "r");
	if (!f) {
		if (copy >= 0)
			close(copy);
		return werr_errno(e, "task diff: reading back what it printed");
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		bool nl = line[n - 1] == '\n';
		put_shown(line, (size_t)n - nl);
		fputc('\n', stdout);
	}
	free(line);
	fclose(f);
	fflush(stdout);
	return 0;
}

/* Where a diff's output goes: stdout itself when it is not a terminal (a
 * patch's bytes), else a memfd shown after (show_fd); -1 with e. */
static int diff_out(bool tty, struct werr *e)
{
	if (!tty)
		return STDOUT_FILENO;
	int fd = memfd_create("warden-task-diff", MFD_CLOEXEC);
	return fd < 0 ? werr_errno(e, "task diff: a buffer for its output") : fd;
}

static int diff_copy(const struct task *t, int out, struct werr *e)
{
	char *const argv[] = { "diff", "-ruN", "--no-dereference", "--", t->src, t->dir, NULL };
	_cleanup_strv_ struct strv env = { 0 };
	safegit_env(&env);
	int code = 0;
	if (run_cmd(NULL, argv, env.v, out, NULL, "diff", 0, &code, e) < 0)
		return -1;
	return code > 1 ? werr_set(e, 0, "diff failed (status %d)", code) : 0;
}

static int diff_worktree(const struct task *t, int out, struct werr *e)
{
	_cleanup_free_ char *range = xasprintf("HEAD...%s", t->branch);
	const char *const committed[] = { "diff", "--no-ext-diff", "--no-textconv", range, "--",
					  NULL };
	if (task_git(t->src, committed, out, NULL, e) < 0)
		return -1;
	/* what the session left uncommitted in the worktree; its submodules
	 * not looked into (their git is the agent's), bounded: git there
	 * reads what the agent may still be writing */
	_cleanup_free_ char *status = NULL;
	const char *const st_args[] = { "status", "--short", "--untracked-files=all",
					"--ignore-submodules=all", NULL };
	if (git_run(t->dir, st_args, -1, &status, NULL, TASK_LOOKUP_MS, e) < 0)
		return -1;
	if (!*status)
		return 0;
	_cleanup_free_ char *head = xasprintf("# not committed in %s:\n", t->dir);
	if (out == STDOUT_FILENO) {
		fputs(head, stdout);
		fputs(status, stdout);
		fflush(stdout);
		return 0;
	}
	if (write_all(out, head, strlen(head)) < 0 || write_all(out, status, strlen(status)) < 0)
		return werr_errno(e, "task diff: its output");
	return 0;
}

int task_diff(struct task *t, struct werr *e)
{
	struct stat st;
	if (lstat(t->dir, &st) < 0)
		return werr_set(e, ENOENT, "task %s: no such task (%s)", t->name, t->dir);
	fflush(stdout);
	bool tty = isatty(STDOUT_FILENO);
	int out = diff_out(tty, e);
	if (out < 0)
		return -1;
	_cleanup_close_ int buf = tty ? out : -1; /* the memfd's, closed at the return */
	(void)buf;
	int r = t->branch ? diff_worktree(t, out, e) : diff_copy(t, out, e);
	if (!tty)
		return r;
	int rs = show_fd(out, r < 0 ? &(struct werr){ 0 } : e); /* what it printed, even failing */
	return r < 0 ? -1 : rs;
}

int task_remove(struct task *t, const char *lockdir, struct werr *e)
{
	struct stat st;
	if (lstat(t->dir, &st) < 0)
		return werr_set(e, ENOENT, "task %s: no such task (%s)", t->name, t->dir);
	if (task_lock(t, lockdir, e) < 0)
		return -1;
	_cleanup_free_ char *gitfile = xasprintf("%s/.git", t->dir);
	/* git's own removal first; where it fails (a directory the agent
	 * closed with chmod 000: git has dropped the worktree's entry by
	 * then, so a second try would say "not a working tree"), the tree
	 * removed here, its modes opened (remove_tree_at), and git's entry
	 * pruned */
	struct werr gitfail = { 0 };
	const char *const args[] = { "worktree", "remove", "--force", "--", t->dir, NULL };
	if (!t->common || lstat(gitfile, &st) < 0 || !S_ISREG(st.st_mode) ||
	    task_git(t->src, args, -1, NULL, &gitfail) < 0) {
		_cleanup_free_ char *parent = dir_of(t->dir);
		_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0 || remove_tree_at(pfd, t->name) < 0)
			return werr_errno(e, "task %s: removing %s", t->name, t->dir);
		if (t->common) {
			const char *const prune[] = { "worktree", "prune", NULL };
			struct werr ignored = { 0 };
			task_git(t->src, prune, -1, NULL, &ignored);
		}
	}
	/* its private directory of warden's (private_dir), made afresh by
	 * each session, none of which runs: the lock is held */
	_cleanup_free_ char *parent = dir_of(t->dir);
	_cleanup_free_ char *priv = xasprintf("%s/.warden", parent);
	_cleanup_close_ int vfd = open(priv, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vfd >= 0 && remove_tree_at(vfd, t->name) < 0 && errno != ENOENT)
		return werr_errno(e, "task %s: removing %s/%s", t->name, priv, t->name);
	rmdir(priv);
	rmdir(parent); /* the last task gone: the tasks' directory too */
	return 0;
}

void task_free(struct task *t)
{
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	if (t->view) {
		_cleanup_free_ char *parent = dir_of(t->view);
		_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd >= 0)
			remove_tree_at(pfd, strrchr(t->view, '/') + 1);
		free(t->view);
	}
	free(t->name);
	free(t->src);
	free(t->repo);
	free(t->common);
	free(t->branch);
	free(t->dir);
	free(t->admin);
	free(t->refs);
	free(t->start);
	free(t->seen);
	*t = (struct task){ .lock_fd = -1 };
}
