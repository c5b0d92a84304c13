/* sweep_time.c - bench/sweep's tree maker and timer:
 *
 *   sweep_time wide DIR N     make DIR holding N entries: 100 directories of
 *                             10 directories each, the rest empty files
 *                             spread over those, and a .git in 10 of them
 *   sweep_time deep DIR N     make DIR holding a chain of N directories
 *   sweep_time run DIR        plan DIR as a session does (the built-in
 *                             default profile), then do what an agent
 *                             might (a .git with a hook in the deepest or
 *                             last directory, a setuid file beside it),
 *                             then sweep it
 *
 * `run` prints one line: "plan_s SWEEP_s MOVED CLEARED PEAK_RSS_KB" (the
 * seconds the plan's scan and the sweep took, what the sweep moved aside
 * and cleared, the process's peak resident set). Trees are made with one
 * directory fd at a time, so depth is no limit. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "src/sandbox/sandbox.h"

static void die(const char *what)
{
	fprintf(stderr, "sweep_time: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int subdir(int fd, const char *name)
{
	if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST)
		die(name);
	int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sub < 0)
		die(name);
	return sub;
}

static void file(int fd, const char *name, mode_t mode)
{
	int f = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (f < 0 || ((mode & 07000) && fchmod(f, mode) < 0))
		die(name);
	close(f);
}

enum { TOP = 100, SUB = 10 };

static void make_wide(int root, long n)
{
	long dirs = TOP + TOP * SUB, gits = 10, files = n - dirs - gits;
	if (files < 0) {
		fprintf(stderr, "sweep_time: wide trees hold at least %ld entries\n", dirs + gits);
		exit(2);
	}
	long leaf = 0, leaves = TOP * SUB;
	for (int t = 0; t < TOP; t++) {
		char tn[16];
		snprintf(tn, sizeof tn, "t%03d", t);
		int tfd = subdir(root, tn);
		for (int s = 0; s < SUB; s++, leaf++) {
			char sn[16];
			snprintf(sn, sizeof sn, "s%02d", s);
			int sfd = subdir(tfd, sn);
			/* this leaf's share of the files */
			long from = files * leaf / leaves, to = files * (leaf + 1) / leaves;
			for (long i = from; i < to; i++) {
				char fn[32];
				snprintf(fn, sizeof fn, "f%07ld.c", i);
				file(sfd, fn, 0644);
			}
			if (leaf % (leaves / gits) == 0)
				close(subdir(sfd, ".git"));
			close(sfd);
		}
		close(tfd);
	}
}

static void make_deep(int root, long n)
{
	int fd = dup(root);
	for (long i = 0; i < n; i++) {
		int sub = subdir(fd, "d");
		close(fd);
		fd = sub;
	}
	close(fd);
}

/* The deepest directory of the first chain found, or the last directory of
 * the wide tree: where the "agent" plants its repository. */
static int where_to_plant(int root)
{
	int fd = dup(root);
	for (;;) {
		const char *next = NULL;
		struct stat st;
		if (fstatat(fd, "d", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			next = "d";
		else if (fstatat(fd, "t099", &st, AT_SYMLINK_NOFOLLOW) == 0)
			next = "t099";
		else if (fstatat(fd, "s09", &st, AT_SYMLINK_NOFOLLOW) == 0)
			next = "s09";
		if (!next)
			return fd;
		int sub = openat(fd, next, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			die(next);
		close(fd);
		fd = sub;
	}
}

static int run(const char *dir)
{
	struct policy pol = { 0 };
	struct werr e = { 0 };
	if (policy_parse_text(&pol, "builtin:default", NULL, NULL, policy_builtin_default,
			      strlen(policy_builtin_default), &e) < 0) {
		fprintf(stderr, "sweep_time: profile: %s\n", e.msg);
		return 1;
	}
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	double t0 = now_s();
	if (workspace_plan(dir, &pol, &plan, &e) < 0) {
		fprintf(stderr, "sweep_time: plan: %s\n", e.msg);
		return 1;
	}
	double t_plan = now_s() - t0;

	int at = where_to_plant(plan.ws_fd);
	int git = subdir(at, ".git");
	int hooks = subdir(git, "hooks");
	file(hooks, "pre-commit", 0755);
	file(at, "setuid-tool", 04755);
	close(hooks);
	close(git);
	close(at);

	struct ws_sweep sw = { 0 };
	t0 = now_s();
	if (workspace_sweep(dir, &plan, "bench", &sw, &e) < 0) {
		fprintf(stderr, "sweep_time: sweep: %s\n", e.msg);
		return 1;
	}
	double t_sweep = now_s() - t0;
	size_t moved = 0, cleared = 0;
	for (size_t i = 0; i < sw.n; i++)
		sw.v[i].to ? moved++ : cleared++;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%.3f %.3f %zu %zu %ld\n", t_plan, t_sweep, moved, cleared, ru.ru_maxrss);
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);
	policy_free(&pol);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "run") == 0)
		return run(argv[2]);
	if (argc != 4 || (strcmp(argv[1], "wide") != 0 && strcmp(argv[1], "deep") != 0)) {
		fprintf(stderr, "usage: sweep_time wide|deep DIR N | run DIR\n");
		return 2;
	}
	long n = strtol(argv[3], NULL, 10);
	if (mkdir(argv[2], 0755) < 0)
		die(argv[2]);
	int root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		die(argv[2]);
	if (strcmp(argv[1], "wide") == 0)
		make_wide(root, n);
	else
		make_deep(root, n);
	close(root);
	return 0;
}
