/* hook_rt.c - bench/hook's timer, run inside a warden session:
 *
 *   hook_rt spawn N INPUT CMD ARGS...  N runs of CMD with INPUT on stdin,
 *                                      started as Claude Code (Bun) starts
 *                                      a hook with "args": vfork and exec,
 *                                      no shell (posix_spawn); what a
 *                                      client pays per tool call: the hook
 *                                      started, its report answered
 *   hook_rt exec N INPUT CMD ARGS...   the same started by fork and exec,
 *                                      as a client that forks would
 *   hook_rt socket N LINE SOCKET       N round trips of the line in file
 *                                      LINE over fresh connections to the
 *                                      unix socket SOCKET (the hook socket
 *                                      alone: connect, report, answer)
 *
 * Prints one line: "p50_us p99_us max_us" of the N wall times. Exits 1 when
 * a run fails (a command's non-zero status, or printed output: an allowed
 * call prints nothing; a socket's answer that is not an allow). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* One run of argv, stdin from input, stdout to a pipe that must stay
 * empty, started by posix_spawn (vfork) when spawn, else fork: its wall
 * time, or -1. */
static long long run_exec(const char *input, char **argv, bool spawn)
{
	int out[2];
	if (pipe(out) < 0)
		return -1;
	long long start = now_us();
	pid_t pid;
	if (spawn) {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, input, O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
		posix_spawn_file_actions_addclose(&fa, out[0]);
		int err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		if (err) {
			fprintf(stderr, "hook_rt: %s: %s\n", argv[0], strerror(err));
			return -1;
		}
	} else if ((pid = fork()) < 0) {
		return -1;
	} else if (pid == 0) {
		int in = open(input, O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	char buf[256];
	ssize_t n = read(out[0], buf, sizeof buf);
	close(out[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	long long t = now_us() - start;
	if (n > 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "hook_rt: %s: status %d, output %.*s\n", argv[0], status, (int)(n > 0 ? n : 0),
			buf);
		return -1;
	}
	return t;
}

/* One round trip of line over a new connection to path. */
static long long run_socket(const char *line, size_t len, const char *path)
{
	long long start = now_us();
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0 || write(fd, line, len) != (ssize_t)len) {
		perror("hook_rt: the hook socket");
		return -1;
	}
	char buf[1024];
	size_t have = 0;
	while (have < sizeof buf - 1 && !memchr(buf, '\n', have)) {
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	buf[have] = '\0';
	long long t = now_us() - start;
	if (!strstr(buf, "\"decision\":\"allow\"")) {
		fprintf(stderr, "hook_rt: the answer is not an allow: %s\n", buf);
		return -1;
	}
	return t;
}

int main(int argc, char **argv)
{
	bool spawn = strcmp(argv[1], "spawn") == 0;
	if (argc < 5 || (!spawn && strcmp(argv[1], "exec") != 0 && strcmp(argv[1], "socket") != 0)) {
		fputs("usage: hook_rt spawn|exec N INPUT CMD ARGS... | hook_rt socket N LINE SOCKET\n", stderr);
		return 2;
	}
	long n = atol(argv[2]);
	if (n < 1)
		return 2;
	char line[65536];
	size_t len = 0;
	if (strcmp(argv[1], "socket") == 0) {
		FILE *f = fopen(argv[3], "r");
		len = f ? fread(line, 1, sizeof line, f) : 0;
		if (f)
			fclose(f);
		if (!len)
			return 2;
	}
	long long *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (long i = 0; i < n; i++) {
		t[i] = strcmp(argv[1], "socket") != 0 ? run_exec(argv[3], argv + 4, spawn)
						       : run_socket(line, len, argv[4]);
		if (t[i] < 0)
			return 1;
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	long p99 = (n * 99 + 99) / 100 - 1;
	printf("%lld %lld %lld\n", t[n / 2], t[p99 < n ? p99 : n - 1], t[n - 1]);
	free(t);
	return 0;
}
