/* hookclient.c - the hook command's work (hookclient.h), shared by `warden
 * hook` (src/cli/hook_cmd.c) and the small hook client /.warden/warden-hook
 * (src/hookbin/main.c), for an agent's client
 * (Claude Code's PreToolUse and PostToolUse, Codex's), run inside the
 * sandbox: read the client's hook input (JSON) on stdin, report the tool
 * call over the hook socket (src/control/hook.h), print the answer the way
 * the client reads it:
 *   - PreToolUse allowed: nothing, exit 0 (the client's own permission
 *     rules and prompts still apply: warden's gate only ever tightens);
 *   - PreToolUse denied: {"hookSpecificOutput": {"hookEventName":
 *     "PreToolUse", "permissionDecision": "deny",
 *     "permissionDecisionReason": R}} on stdout, exit 0;
 *   - PostToolUse: nothing, exit 0;
 *   - warden unreachable, silent past the time bound, or input that is not
 *     a hook's: the reason on stderr and exit 2, which blocks a PreToolUse
 *     call in both clients (fail closed); after the tool ran (PostToolUse)
 *     the same is only said (exit 1).
 * Time-bounded: 10 s to be answered, or, once warden says a human is
 * asked, the question's own timeout and 10 s more; never past --timeout. */
#include "hookclient.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../sandbox/paths.h"
#include "hookmsg.h"

#define INPUT_MAX (64L << 20) /* the client's hook input, at most */
#define ANSWER_WAIT_S 10

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Fail: before the tool runs, exit 2 blocks it. */
static int refuse(enum hook_phase phase, const char *msg)
{
	wnote("%s%s", msg, phase == HOOK_PRE ? " (the tool call is refused)" : "");
	return phase == HOOK_PRE ? 2 : 1;
}

static char *read_stdin(size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n == cap) {
			if (cap >= (size_t)INPUT_MAX) {
				free(buf);
				return NULL;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

static int connect_hook(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* the kernel tells warden who sends each line (SCM_CREDENTIALS) */
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Write all of buf before the deadline. */
static int send_line(int fd, const char *buf, size_t len, double deadline)
{
	size_t off = 0;
	while (off < len) {
		ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		double left = deadline - now_s();
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/* One line (without its newline) before the deadline, into buf. */
static int read_line(int fd, char *buf, size_t max, size_t *have, double deadline)
{
	for (;;) {
		char *nl = memchr(buf, '\n', *have);
		if (nl) {
			*nl = '\0';
			return (int)(nl - buf);
		}
		if (*have >= max - 1) {
			errno = EMSGSIZE;
			return -1;
		}
		double left = deadline - now_s();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t n = recv(fd, buf + *have, max - 1 - *have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n == 0 ? ECONNRESET : errno;
			return -1;
		}
		*have += (size_t)n;
	}
}

int hook_client_run(const char *client, const char *sock, long timeout)
{
	double start = now_s(), end_all = start + (double)timeout;

	size_t len;
	_cleanup_free_ char *in = read_stdin(&len);
	if (!in)
		return refuse(HOOK_PRE, "the hook's input could not be read (larger than 64 MiB?)");
	enum hook_phase phase = HOOK_PRE;
	bool ignored;
	char why[300];
	_cleanup_free_ char *line = hookmsg_from_client(in, len, client, &phase, &ignored, why, sizeof why);
	if (!line) {
		if (ignored)
			return 0; /* another hook event: not warden's to judge */
		return refuse(HOOK_PRE, why);
	}
	_cleanup_close_ int fd = connect_hook(sock);
	if (fd < 0) {
		char msg[600];
		snprintf(msg, sizeof msg, "warden's hook socket %s cannot be reached: %s", sock,
			 strerror(errno));
		return refuse(phase, msg);
	}
	double deadline = start + ANSWER_WAIT_S;
	if (deadline > end_all)
		deadline = end_all;
	if (send_line(fd, line, strlen(line), deadline) < 0) {
		char msg[300];
		snprintf(msg, sizeof msg, "reporting the tool call to warden: %s", strerror(errno));
		return refuse(phase, msg);
	}
	char buf[65536];
	size_t have = 0;
	for (;;) {
		int n = read_line(fd, buf, sizeof buf, &have, deadline);
		if (n < 0)
			return refuse(phase, errno == ETIMEDOUT ? "warden did not answer in time"
							       : "warden's answer was cut off");
		json_error_t err;
		_cleanup_json_ json_t *ans = json_loadb(buf, (size_t)n, 0, &err);
		memmove(buf, buf + n + 1, have - (size_t)n - 1);
		have -= (size_t)n + 1;
		if (!json_is_object(ans))
			return refuse(phase, "warden's answer is not JSON");
		const char *error = json_string_value(json_object_get(ans, "error"));
		if (error)
			return refuse(phase, error);
		const char *pending = json_string_value(json_object_get(ans, "pending"));
		if (pending) {
			json_int_t t = json_integer_value(json_object_get(ans, "timeout_s"));
			wnote("tool call %s waits for a human: warden approve %s allow|deny (%lld s)",
			      json_string_value(json_object_get(ans, "id")), pending, (long long)t);
			deadline = now_s() + (double)(t > 0 ? t : 0) + ANSWER_WAIT_S;
			if (deadline > end_all)
				deadline = end_all;
			continue;
		}
		if (phase == HOOK_POST)
			return 0;
		const char *d = json_string_value(json_object_get(ans, "decision"));
		if (d && strcmp(d, "allow") == 0)
			return 0;
		if (!d || strcmp(d, "deny") != 0)
			return refuse(phase, "warden's answer has no decision");
		const char *reason = json_string_value(json_object_get(ans, "reason"));
		_cleanup_json_ json_t *out = json_pack("{s:{s:s, s:s, s:s}}", "hookSpecificOutput",
						       "hookEventName", "PreToolUse", "permissionDecision",
						       "deny", "permissionDecisionReason",
						       reason ? reason : "warden: denied by the policy");
		char *s = out ? json_dumps(out, JSON_COMPACT) : NULL;
		if (!s)
			return refuse(phase, "warden denied the call");
		printf("%s\n", s);
		free(s);
		if (fflush(stdout) != 0)
			return refuse(phase, "warden denied the call");
		return 0;
	}
}

int hook_client_main(int argc, char **argv, int (*next)(int argc, char **argv), const char *name,
		     const char *usage)
{
	const char *client = "claude", *sock = SANDBOX_HOOK_SOCK;
	long timeout = HOOK_TIMEOUT_DEFAULT_S;
	int c;
	optind = 1;
	while ((c = next(argc, argv)) != -1) {
		switch (c) {
		case 'c':
			client = optarg;
			break;
		case 't': {
			char *end;
			errno = 0;
			timeout = strtol(optarg, &end, 10);
			if (errno || *end || timeout < 1) {
				fprintf(stderr, "%s: --timeout takes a number of seconds\n%s", name, usage);
				return 2;
			}
			break;
		}
		case 's':
			sock = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	return hook_client_run(client, sock, timeout);
}
