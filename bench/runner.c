/* runner.c - the startup benchmark's timer:
 *
 *   runner [--usage] [--samples FILE] N -- CMD ARGS... [--- CMD ARGS...]...
 *
 * warms each command up 5 times, then runs N rounds; a round runs every
 * command once, in a shuffled order, so a machine that drifts (a noisy
 * neighbour, a frequency change) weighs on every command alike, and so does
 * the work one command leaves the kernel to finish after it exits (a network
 * namespace is torn down by a kernel thread later), whichever runs next.
 * Each run has stdio on /dev/null. Prints one line per command, in the
 * order given: the median and 90th percentile wall time in microseconds
 * ("median_us p90_us"), or "unavailable" when it failed its warm-up (the
 * reason on stderr). Exits 1 if a command fails after its warm-up. A file
 * open on fd 10 is rewound before each run.
 *
 * --usage adds two columns: the median CPU time (user and system, in
 * microseconds) and the median count of page faults (minor and major) of a
 * run, summed over the command and every process it started, those it left
 * to end after it too: the runner is their subreaper and reaps each one
 * (waiting up to USAGE_WAIT_MS for stragglers after the command exits; one
 * still running then is said, and counted in the run that reaps it). The
 * wall time stops when the command itself exits, as without --usage.
 *
 * --samples FILE writes each round's wall times to FILE, one line a round,
 * the commands' in the order given ("-1" for one unavailable): what a
 * paired estimate of a ratio between two commands resamples (bench/startup's
 * intervals: warden against bubblewrap, the agent profile against warden). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUPS 5
#define USAGE_WAIT_MS 2000

static int devnull = -1;
static bool usage; /* --usage: collect every descendant's rusage */
static const char *samples; /* --samples FILE */

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* What one run cost, over all its processes (--usage). */
struct cost {
	long long cpu_us;
	long long faults;
};

static void cost_add(struct cost *c, const struct rusage *ru)
{
	c->cpu_us += (long long)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000LL +
		     ru->ru_utime.tv_usec + ru->ru_stime.tv_usec;
	c->faults += ru->ru_minflt + ru->ru_majflt;
}

/* The processes the command left behind, reparented to the runner (its
 * subreaper), reaped and counted until none is left or USAGE_WAIT_MS has
 * passed; false when one was still running then. */
static bool reap_rest(struct cost *c)
{
	long long deadline = 0;
	for (;;) {
		struct rusage ru;
		int status;
		pid_t p = wait4(-1, &status, WNOHANG, &ru);
		if (p > 0) {
			cost_add(c, &ru);
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0) /* ECHILD: every one reaped */
			return true;
		long long now = now_us();
		if (!deadline)
			deadline = now + USAGE_WAIT_MS * 1000LL;
		if (now >= deadline)
			return false;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
}

/* Run argv once; return its wall time in microseconds, or -1; with
 * --usage, what it cost to *c (c may be NULL: a warm-up). */
static long long run_once(char **argv, struct cost *c)
{
	long long start = now_us();
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("runner: fork");
		return -1;
	}
	if (pid == 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		/* a file the caller opened on fd 10 (bench/walls_bwrap's
		 * filter, which bubblewrap reads to its end) read from its
		 * start by every run */
		lseek(10, 0, SEEK_SET);
		execvp(argv[0], argv);
		_exit(127);
	}
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("runner: waitpid");
			return -1;
		}
	long long elapsed = now_us() - start;
	struct cost mine = { 0 };
	if (usage) {
		cost_add(&mine, &ru);
		if (!reap_rest(&mine))
			fprintf(stderr, "runner: %s left a process running for over %d ms; "
				"its cost goes to the run that reaps it\n", argv[0], USAGE_WAIT_MS);
	}
	if (c)
		*c = mine;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFEXITED(status))
			fprintf(stderr, "runner: %s exited with status %d\n", argv[0], WEXITSTATUS(status));
		else
			fprintf(stderr, "runner: %s killed by signal %d\n", argv[0], WTERMSIG(status));
		return -1;
	}
	return elapsed;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static long long median_of(long long *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_ll);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_CMDS 16

/* --samples: the rounds' wall times, before median_of sorts them. */
static int write_samples(const char *path, long long *const *t, const bool *ok, int ncmds, long n)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "runner: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (long i = 0; i < n; i++)
		for (int c = 0; c < ncmds; c++)
			fprintf(f, "%lld%c", ok[c] ? t[c][i] : -1LL, c + 1 < ncmds ? ' ' : '\n');
	if (fclose(f) != 0) {
		fprintf(stderr, "runner: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *end;
	long n;

	for (;;) {
		if (argc > 1 && strcmp(argv[1], "--usage") == 0) {
			usage = true;
			argv++;
			argc--;
		} else if (argc > 2 && strcmp(argv[1], "--samples") == 0) {
			samples = argv[2];
			argv += 2;
			argc -= 2;
		} else {
			break;
		}
	}
	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: runner [--usage] [--samples FILE] N -- CMD [ARGS...] "
			"[--- CMD [ARGS...]]...\n");
		return 2;
	}
	/* the processes a command leaves come back here to be counted */
	if (usage && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("runner: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno || *end || n < 1 || n > 1000000) {
		fprintf(stderr, "runner: N must be a positive number\n");
		return 2;
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0) {
		perror("runner: /dev/null");
		return 1;
	}
	/* split argv at "---" into commands */
	char **cmds[MAX_CMDS];
	int ncmds = 0;
	cmds[ncmds++] = argv + 3;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "---") != 0)
			continue;
		argv[i] = NULL;
		if (ncmds == MAX_CMDS) {
			fprintf(stderr, "runner: at most %d commands\n", MAX_CMDS);
			return 2;
		}
		cmds[ncmds++] = argv + i + 1;
	}
	for (int c = 0; c < ncmds; c++)
		if (!cmds[c][0]) {
			fprintf(stderr, "runner: empty command\n");
			return 2;
		}
	bool ok[MAX_CMDS];
	long long *t[MAX_CMDS], *cpu[MAX_CMDS], *flt[MAX_CMDS];
	for (int c = 0; c < ncmds; c++) {
		ok[c] = true;
		for (int i = 0; ok[c] && i < WARMUPS; i++)
			ok[c] = run_once(cmds[c], NULL) >= 0;
		t[c] = calloc((size_t)n, sizeof *t[c]);
		cpu[c] = calloc((size_t)n, sizeof *cpu[c]);
		flt[c] = calloc((size_t)n, sizeof *flt[c]);
		if (!t[c] || !cpu[c] || !flt[c]) {
			perror("runner: calloc");
			return 1;
		}
	}
	unsigned long long rng = 0x9e3779b97f4a7c15ULL; /* fixed seed: repeatable orders */
	for (long i = 0; i < n; i++) {
		int order[MAX_CMDS];
		for (int k = 0; k < ncmds; k++)
			order[k] = k;
		for (int k = ncmds - 1; k > 0; k--) { /* Fisher-Yates, xorshift64 */
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			int j = (int)(rng % (unsigned long long)(k + 1)), tmp = order[k];
			order[k] = order[j];
			order[j] = tmp;
		}
		for (int k = 0; k < ncmds; k++) {
			int c = order[k];
			struct cost cost = { 0 };
			if (ok[c] && (t[c][i] = run_once(cmds[c], &cost)) < 0)
				return 1;
			cpu[c][i] = cost.cpu_us;
			flt[c][i] = cost.faults;
		}
	}
	if (samples && write_samples(samples, t, ok, ncmds, n) < 0)
		return 1;
	for (int c = 0; c < ncmds; c++) {
		if (!ok[c]) {
			printf("unavailable\n");
			continue;
		}
		long long median = median_of(t[c], n); /* sorted: p90 below */
		long p90i = (long)((n * 9 + 9) / 10) - 1; /* ceil(0.9 n) - 1 */
		if (usage)
			printf("%lld %lld %lld %lld\n", median, t[c][p90i], median_of(cpu[c], n),
			       median_of(flt[c], n));
		else
			printf("%lld %lld\n", median, t[c][p90i]);
		free(t[c]);
		free(cpu[c]);
		free(flt[c]);
	}
	return 0;
}
