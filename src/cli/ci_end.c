/* ci_end.c - the end of `warden run --ci` (ci_end.h): the artifacts
 * directory filled (the session's audit log, `warden log verify`'s verdict,
 * `warden log export --format ocsf`'s events, the session's changes to the
 * workspace (`warden diff --list`), the workspace's `git diff --stat`, the
 * Markdown summary), the summary appended to
 * $GITHUB_STEP_SUMMARY when set, and --fail-on applied. The log's
 * verification and export are the `warden log` commands' own code, run in
 * a child with its output to the artifact's file. Each artifact is written
 * beside its name and renamed over it: the directory may lie where an agent
 * wrote (an --output), and what it left there is replaced, not followed. */
#include "ci_end.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "cli.h"

/* Where a child's stderr goes: to its stdout's file, or nowhere. */
enum child_err { ERR_TO_FILE, ERR_TO_NULL };

/* Run fn(argv) (a warden command) or, with fn NULL, exec argv, in a child
 * whose stdout goes to fd (its stderr as err says). Its exit status, or
 * -1. */
static int run_to(int fd, enum child_err err, int (*fn)(int, char **), char **argv)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int efd = err == ERR_TO_FILE ? fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (efd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(efd, STDERR_FILENO) < 0)
			_exit(EXIT_WARDEN);
		if (!fn) {
			int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (null >= 0)
				dup2(null, STDIN_FILENO);
			execvp(argv[0], argv);
			_exit(127);
		}
		int argc = 0;
		while (argv[argc])
			argc++;
		optind = 0; /* getopt from the start again (the parent's run parsed) */
		int r = fn(argc, argv);
		fflush(NULL);
		_exit(r);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* An artifact being written: a new file beside its name, renamed over it
 * when done, so that whatever is at the name (a symlink, a FIFO, left by
 * an agent that could write there) is replaced, never followed or opened. */
struct artifact {
	int dir, fd;
	const char *name;
	char tmp[96];
};

static int art_open(struct artifact *a, int dir, const char *name)
{
	*a = (struct artifact){ .dir = dir, .fd = -1, .name = name };
	for (int i = 0; i < 16; i++) {
		unsigned r = 0;
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (unsigned)getpid() * 2654435761u + (unsigned)i;
		snprintf(a->tmp, sizeof a->tmp, ".%.64s.%08x", name, r);
		a->fd = openat(dir, a->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (a->fd >= 0 || errno != EEXIST)
			break;
	}
	return a->fd;
}

/* Done: in place under its name (ok), or removed; -1 with errno when it
 * could not be put there. */
static int art_close(struct artifact *a, bool ok)
{
	int r = 0;
	if (a->fd >= 0 && close(a->fd) < 0)
		ok = false, r = -1;
	a->fd = -1;
	if (ok && renameat(a->dir, a->tmp, a->dir, a->name) == 0)
		return 0;
	int saved = errno;
	unlinkat(a->dir, a->tmp, 0);
	errno = saved;
	return ok ? -1 : r;
}

/* The start of the file fd (up to 64 KiB), or NULL. */
static char *slurp(int fd)
{
	char *buf = xcalloc(1, 65536);
	ssize_t n = pread(fd, buf, 65535, 0);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* All of in, from its start, to out. */
static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;
	off_t off = 0;
	while ((n = pread(in, buf, sizeof buf, off)) > 0) {
		if (write_all(out, buf, (size_t)n) < 0)
			return -1;
		off += n;
	}
	return n < 0 ? -1 : 0;
}

static int copy(const char *from, int out)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	return in < 0 ? -1 : copy_fd(in, out);
}

char *ci_artifacts_dir(const char *opt)
{
	if (opt)
		return xstrdup(opt);
	const char *rt = getenv("RUNNER_TEMP");
	if (rt && rt[0] == '/')
		return xasprintf("%s/warden-artifacts", rt);
	return xstrdup("warden-artifacts");
}

/* The artifacts directory being filled: dir open, path as shown; failed
 * once an artifact could not be written. */
struct ci_out {
	int dir;
	const char *path;
	bool failed;
};

static void art_failed(struct ci_out *out, const char *name)
{
	wnote("--ci: cannot write %s/%s: %s", out->path, name, strerror(errno));
	out->failed = true;
}

/* $GITHUB_STEP_SUMMARY, opened to append: a regular file as GitHub makes
 * it (or a terminal or pipe a user gave); opened without waiting, so a
 * FIFO nothing reads is refused rather than waited on. */
static FILE *step_summary(const char *gh)
{
	int fd = open(gh, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		wnote("--ci: cannot append to $GITHUB_STEP_SUMMARY (%s): %s%s", gh, strerror(errno),
		      errno == ENXIO ? " (a FIFO nothing reads)" : "");
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "a");
	if (!f) {
		wnote("--ci: cannot append to $GITHUB_STEP_SUMMARY (%s): %s", gh, strerror(errno));
		close(fd);
	}
	return f;
}

/* The summary as summary.md, and appended to $GITHUB_STEP_SUMMARY when set. */
static void write_summary(const struct cisummary *c, const struct cisummary_end *x,
			  struct ci_out *out)
{
	struct artifact a;
	FILE *f = NULL;
	if (out) {
		f = art_open(&a, out->dir, "summary.md") >= 0 ? fdopen(dup(a.fd), "w") : NULL;
		if (f)
			cisummary_write(c, x, f);
		bool ok = f && fclose(f) == 0;
		if (art_close(&a, ok) < 0 || !ok)
			art_failed(out, "summary.md");
	}
	const char *gh = getenv("GITHUB_STEP_SUMMARY");
	if (!gh || !*gh || !(f = step_summary(gh)))
		return;
	cisummary_write(c, x, f);
	fputc('\n', f);
	if (fclose(f) != 0)
		wnote("--ci: cannot append to $GITHUB_STEP_SUMMARY (%s): %s", gh, strerror(errno));
}

/* The log, its verdict and its OCSF events in the directory: x->verify
 * filled. */
static void log_artifacts(const struct cisummary *c, struct ci_out *out, struct cisummary_end *x,
			  char **verdict)
{
	const char *id = cisummary_id(c);
	struct artifact a;
	_cleanup_free_ char *log = xasprintf("%s.jsonl", id);
	bool ok = art_open(&a, out->dir, log) >= 0 && copy(cisummary_log(c), a.fd) == 0;
	if (art_close(&a, ok) < 0 || !ok)
		art_failed(out, log);
	int r = -1;
	if (art_open(&a, out->dir, "verify.txt") >= 0) {
		r = run_to(a.fd, ERR_TO_FILE, cmd_log, (char *[]){ "log", "verify", (char *)id, NULL });
		*verdict = slurp(a.fd);
	}
	if (art_close(&a, a.fd >= 0) < 0 || !*verdict)
		art_failed(out, "verify.txt");
	x->verified = r == 0;
	if (*verdict)
		(*verdict)[strcspn(*verdict, "\n")] = '\0';
	x->verify = *verdict ? *verdict : "(no verdict)";
	_cleanup_free_ char *ocsf = xasprintf("%s.ocsf.jsonl", id);
	if (art_open(&a, out->dir, ocsf) < 0) {
		art_failed(out, ocsf);
		return;
	}
	r = run_to(a.fd, ERR_TO_NULL, cmd_log,
		   (char *[]){ "log", "export", "--format", "ocsf", (char *)id, NULL });
	if (r != 0)
		wnote("--ci: the OCSF export of %s failed (try `warden log export --format ocsf %s`)",
		      id, id);
	if (art_close(&a, r == 0) < 0)
		art_failed(out, ocsf);
}

/* `git diff --stat` of the workspace as diffstat.txt (none outside a
 * repository); its text, or NULL. */
static char *diffstat_artifact(const char *ws, struct ci_out *out)
{
	struct artifact a;
	if (art_open(&a, out->dir, "diffstat.txt") < 0) {
		art_failed(out, "diffstat.txt");
		return NULL;
	}
	bool ok = run_to(a.fd, ERR_TO_NULL, NULL, (char *[]){ "git", "-C", (char *)ws, "diff",
							      "--stat", "HEAD", "--", ".", NULL }) == 0;
	char *text = ok ? slurp(a.fd) : NULL;
	if (!ok) /* not a repository: no diffstat, not an earlier session's */
		unlinkat(out->dir, "diffstat.txt", 0);
	if (art_close(&a, ok) < 0) {
		art_failed(out, "diffstat.txt");
		free(text);
		return NULL;
	}
	return text;
}

/* `warden diff SESSION --list` as changes.txt: what the session changed in
 * the workspace, by its own checkpoint (git or not, committed or not),
 * taken before any other artifact is written (the directory may lie in the
 * workspace); its text, or NULL (checkpoints off, nothing recorded). */
static char *changes_artifact(const char *id, struct ci_out *out)
{
	_cleanup_close_ int mem = memfd_create("warden-changes", MFD_CLOEXEC);
	if (mem < 0)
		return NULL;
	int r = run_to(mem, ERR_TO_NULL, cmd_diff, (char *[]){ "diff", (char *)id, "--list", NULL });
	char *text = r == 0 || r == 1 ? slurp(mem) : NULL; /* nothing changed, or changes */
	struct artifact a;
	if (!text) {
		unlinkat(out->dir, "changes.txt", 0); /* not an earlier session's */
		return NULL;
	}
	/* the whole list; the summary shows its first 64 KiB */
	bool ok = art_open(&a, out->dir, "changes.txt") >= 0 && copy_fd(mem, a.fd) == 0;
	if (art_close(&a, ok) < 0 || !ok)
		art_failed(out, "changes.txt");
	return text;
}

/* An artifacts directory in the workspace (no RUNNER_TEMP): a .gitignore
 * of "*" in it, so that the job's `git add -A` does not commit the audit
 * log and `git status` does not list it as the project's. */
static void ignore_in_workspace(const char *ws, struct ci_out *out)
{
	if (!ws || !path_is_within(out->path, ws) || strcmp(out->path, ws) == 0)
		return;
	static const char text[] = "# warden's CI artifacts: not the project's\n*\n";
	struct artifact a;
	if (art_open(&a, out->dir, ".gitignore") < 0 || write_all(a.fd, text, sizeof text - 1) < 0) {
		art_close(&a, false);
		art_failed(out, ".gitignore");
		return;
	}
	if (art_close(&a, true) < 0)
		art_failed(out, ".gitignore");
}

/* The artifacts directory the session made and checked (layout.h),
 * opened; never through a symbolic link as its last component. */
static int artifacts_open(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		wnote("--ci: cannot open the artifacts directory %s (--artifacts DIR): %s", dir,
		      errno == ELOOP ? "it is a symbolic link (name the directory it leads to)"
				     : strerror(errno));
	return fd;
}

/* A session that stopped before its artifacts directory was checked, or
 * that refused it: nothing written there (it may be a .git directory,
 * ~/.ssh, a directory the session would not make), the summary only to
 * $GITHUB_STEP_SUMMARY, which the runner made. */
static int no_artifacts(const struct cisummary *c, const struct ci_opts *o, int status,
			const char *error)
{
	_cleanup_free_ char *dir = ci_artifacts_dir(o->artifacts);
	wnote("--ci: no artifacts written to %s: warden refused that directory, or stopped before "
	      "it had checked it (above)", dir);
	struct cisummary_end x = { .status = status, .command_status = status, .fail_on = o->fail_on,
				   .error = error, .not_evaluated = true };
	write_summary(c, &x, NULL);
	return status == 0 ? EXIT_WARDEN : status;
}

int ci_end(const struct cisummary *c, const struct ci_opts *o, int status, const char *error)
{
	const char *dir = cisummary_artifacts(c);
	if (!dir)
		return no_artifacts(c, o, status, error);
	_cleanup_close_ int dfd = artifacts_open(dir);
	if (dfd < 0)
		return status == 0 ? EXIT_WARDEN : status;
	struct ci_out out = { .dir = dfd, .path = dir };
	struct cisummary_end x = { .status = status, .command_status = status, .fail_on = o->fail_on,
				   .artifacts = dir, .error = error };
	int min = o->fail_on ? cisummary_severity(o->fail_on) : -1;
	x.not_evaluated = status == EXIT_WARDEN;
	if (min >= 0 && cisummary_max_severity(c) >= min && status != EXIT_WARDEN) {
		x.failed_on = true;
		x.status = status = EXIT_FAIL_ON;
	}
	_cleanup_free_ char *verdict = NULL, *diffstat = NULL, *changes = NULL;
	if (cisummary_id(c)) {
		x.changes = changes = changes_artifact(cisummary_id(c), &out);
		log_artifacts(c, &out, &x, &verdict);
	}
	const char *ws = cisummary_workspace(c);
	ignore_in_workspace(ws, &out);
	if (ws)
		x.diffstat = diffstat = diffstat_artifact(ws, &out);
	write_summary(c, &x, &out);
	if (out.failed) {
		wnote("--ci: the artifacts in %s are not complete (above): exit status %d", dir,
		      status == 0 ? EXIT_WARDEN : status);
		return status == 0 ? EXIT_WARDEN : status;
	}
	wnote("CI summary in %s/summary.md; the log, its verification and OCSF events in %s", dir,
	      dir);
	if (x.failed_on)
		wnote("an alert at or above --fail-on %s: exit status %d", o->fail_on, EXIT_FAIL_ON);
	return status;
}
