/* ci_end.c - the end of `warden run --ci` (ci_end.h): the artifacts
 * directory filled (the session's audit log, `warden log verify`'s verdict,
 * `warden log export --format ocsf`'s events, the workspace's `git diff
 * --stat`, the Markdown summary), the summary appended to
 * $GITHUB_STEP_SUMMARY when set, and --fail-on applied. The log's
 * verification and export are the `warden log` commands' own code, run in
 * a child with its output to the artifact's file. */
#include "ci_end.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "cli.h"

/* Where a child's stderr goes: to path with its stdout, or nowhere. */
enum child_err { ERR_TO_FILE, ERR_TO_NULL };

/* Run fn(argv) (a warden command) or, with fn NULL, exec argv, in a child
 * whose stdout goes to path (its stderr as err says). Its exit status, or
 * -1. */
static int run_to(const char *path, enum child_err err, int (*fn)(int, char **), char **argv)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int efd = err == ERR_TO_FILE ? fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || efd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(efd, STDERR_FILENO) < 0)
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

/* The whole file at path (up to 64 KiB), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = xcalloc(1, 65536);
	size_t n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int copy(const char *from, const char *to)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in < 0 || out < 0)
		return -1;
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write_all(out, buf, (size_t)n) < 0)
			return -1;
	return n < 0 ? -1 : 0;
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

/* The summary to path, and appended to $GITHUB_STEP_SUMMARY when set. */
static void write_summary(const struct cisummary *c, const struct cisummary_end *x, const char *path)
{
	FILE *f = fopen(path, "we");
	if (f) {
		cisummary_write(c, x, f);
		if (fclose(f) != 0)
			wnote("--ci: cannot write the summary %s", path);
	} else {
		wnote("--ci: cannot write the summary %s: %s", path, strerror(errno));
	}
	const char *gh = getenv("GITHUB_STEP_SUMMARY");
	if (!gh || !*gh)
		return;
	f = fopen(gh, "ae");
	if (!f) {
		wnote("--ci: cannot append to $GITHUB_STEP_SUMMARY (%s): %s", gh, strerror(errno));
		return;
	}
	cisummary_write(c, x, f);
	fputc('\n', f);
	fclose(f);
}

/* The log, its verdict and its OCSF events in dir: x->verify filled. */
static void log_artifacts(const struct cisummary *c, const char *dir, struct cisummary_end *x,
			  char **verdict)
{
	const char *id = cisummary_id(c);
	_cleanup_free_ char *log = xasprintf("%s/%s.jsonl", dir, id);
	if (copy(cisummary_log(c), log) < 0)
		wnote("--ci: cannot copy the audit log %s to %s: %s", cisummary_log(c), log,
		      strerror(errno));
	_cleanup_free_ char *vpath = xasprintf("%s/verify.txt", dir);
	int r = run_to(vpath, ERR_TO_FILE, cmd_log, (char *[]){ "log", "verify", (char *)id, NULL });
	x->verified = r == 0;
	*verdict = slurp(vpath);
	if (*verdict)
		(*verdict)[strcspn(*verdict, "\n")] = '\0';
	x->verify = *verdict ? *verdict : "(no verdict)";
	_cleanup_free_ char *opath = xasprintf("%s/%s.ocsf.jsonl", dir, id);
	if (run_to(opath, ERR_TO_NULL, cmd_log,
		   (char *[]){ "log", "export", "--format", "ocsf", (char *)id, NULL }) != 0)
		wnote("--ci: the OCSF export of %s failed (try `warden log export --format ocsf %s`)",
		      id, id);
}

int ci_end(const struct cisummary *c, const struct ci_opts *o, int status)
{
	_cleanup_free_ char *dir = ci_artifacts_dir(o->artifacts);
	if (mkdir_p(dir, 0755, NULL) < 0) {
		wnote("--ci: cannot make the artifacts directory %s (--artifacts DIR): %s", dir,
		      strerror(errno));
		return status;
	}
	struct cisummary_end x = { .status = status, .fail_on = o->fail_on, .artifacts = dir };
	int min = o->fail_on ? cisummary_severity(o->fail_on) : -1;
	if (min >= 0 && cisummary_max_severity(c) >= min && status != EXIT_WARDEN) {
		x.failed_on = true;
		x.status = status = EXIT_FAIL_ON;
	}
	_cleanup_free_ char *verdict = NULL, *diffstat = NULL;
	if (cisummary_id(c))
		log_artifacts(c, dir, &x, &verdict);
	const char *ws = cisummary_workspace(c);
	if (ws) {
		_cleanup_free_ char *dpath = xasprintf("%s/diffstat.txt", dir);
		if (run_to(dpath, ERR_TO_NULL, NULL, (char *[]){ "git", "-C", (char *)ws, "diff",
							       "--stat", "HEAD", "--", ".", NULL }) == 0)
			x.diffstat = diffstat = slurp(dpath);
		else
			unlink(dpath);
	}
	_cleanup_free_ char *spath = xasprintf("%s/summary.md", dir);
	write_summary(c, &x, spath);
	wnote("CI summary in %s; the log, its verification and OCSF events in %s", spath, dir);
	if (x.failed_on)
		wnote("an alert at or above --fail-on %s: exit status %d", o->fail_on, EXIT_FAIL_ON);
	return status;
}
