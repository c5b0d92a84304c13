/* runcmd.c - a host command run to its end, bounded (runcmd.h). */
#include "runcmd.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

#define STREAM_BUF 65536 /* out_fn: bytes read at a time */

void runcmd_timeout_text(char *buf, size_t len, unsigned ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%u s", ms / 1000);
	else
		snprintf(buf, len, "%u ms", ms);
}

/* The last non-empty line of fd's content (a memfd). */
static char *last_line(int fd)
{
	char buf[4096];
	struct stat st;
	off_t from = 0;
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof buf - 1)
		from = st.st_size - (off_t)(sizeof buf - 1);
	ssize_t n = pread(fd, buf, sizeof buf - 1, from);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	if (n == 0)
		return xstrdup("(nothing on its stderr)");
	char *nl = strrchr(buf, '\n');
	return xstrdup(nl ? nl + 1 : buf);
}

static pid_t start(const struct runcmd *rc, int out_fd, int err_fd)
{
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, rc->in_path ? rc->in_path : "/dev/null",
					 O_RDONLY, 0);
	if (out_fd != 1)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* nothing of warden's */
	if (rc->dir)
		posix_spawn_file_actions_addchdir_np(&fa, rc->dir);
	short flags = rc->timeout_ms ? POSIX_SPAWN_SETPGROUP : 0;
	int err = spawn_fresh(&pid, true, &fa, flags, rc->argv, rc->env ? rc->env : environ);
	posix_spawn_file_actions_destroy(&fa);
	errno = err;
	return err ? -1 : pid;
}

/* Kill what was started (its group when it has one) and reap it. */
static void kill_reap(const struct runcmd *rc, pid_t pid)
{
	kill(rc->timeout_ms ? -pid : pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

struct watch {
	int rd, pidfd;
	bool eof, exited;
	int status;
	char *buf;
	size_t len, cap;
};

/* Read what is there into w->buf: 1 over the cap, 0, -1 with errno. */
static int take(const struct runcmd *rc, struct watch *w)
{
	if (!w->cap) {
		/* with a cap, one buffer from the start: a secret is never left
		 * behind in memory a realloc freed */
		w->cap = rc->out_fn ? STREAM_BUF : rc->out_max ? rc->out_max + 2 : 8192;
		w->buf = xmalloc(w->cap);
	} else if (!rc->out_fn && !rc->out_max && w->cap - w->len < 4096) {
		w->cap *= 2;
		w->buf = xrealloc(w->buf, w->cap);
	}
	ssize_t n = read(w->rd, w->buf + w->len, w->cap - w->len - 1);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (n == 0)
		w->eof = true;
	if (rc->out_fn) {
		if (n > 0)
			rc->out_fn(rc->out_ctx, w->buf, (size_t)n);
		return 0;
	}
	w->len += (size_t)n;
	return rc->out_max && w->len > rc->out_max ? 1 : 0;
}

/* Wait for the end: its exit and the pipe's EOF, the deadline, or the cap. */
static int watch(const struct runcmd *rc, pid_t pid, struct watch *w, enum runcmd_end *end)
{
	long long deadline = (long long)mono_ms() + rc->timeout_ms;
	while (!w->eof || !w->exited) {
		int wait_ms = -1;
		if (rc->timeout_ms) {
			long long left = deadline - (long long)mono_ms();
			if (left <= 0) {
				*end = RUNCMD_TIMED_OUT;
				return 0;
			}
			wait_ms = left > 1000 ? 1000 : (int)left;
		}
		struct pollfd p[2] = { { .fd = w->eof ? -1 : w->rd, .events = POLLIN },
				       { .fd = w->exited ? -1 : w->pidfd, .events = POLLIN } };
		int pr = poll(p, 2, wait_ms);
		if (pr < 0 && errno != EINTR)
			return -1;
		if (pr <= 0)
			continue;
		if (p[0].revents) {
			int t = take(rc, w);
			if (t < 0)
				return -1;
			if (t > 0) {
				*end = RUNCMD_TOO_MUCH;
				return 0;
			}
		}
		if (p[1].revents && waitpid(pid, &w->status, WNOHANG) == pid)
			w->exited = true;
	}
	*end = WIFEXITED(w->status) ? RUNCMD_EXITED : RUNCMD_SIGNALED;
	return 0;
}

int runcmd(const struct runcmd *rc, struct runcmd_out *r)
{
	*r = (struct runcmd_out){ 0 };
	_cleanup_close_ int errfd = -1;
	if (rc->err == RUNCMD_ERR_KEEP &&
	    (errfd = memfd_create("warden-cmd-stderr", MFD_CLOEXEC)) < 0)
		return -1;
	int pfd[2] = { -1, -1 };
	if (rc->out_fd < 0 && pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	struct watch w = { .rd = pfd[0], .pidfd = -1, .eof = pfd[0] < 0 };
	pid_t pid = start(rc, rc->out_fd >= 0 ? rc->out_fd : pfd[1], errfd);
	int saved = errno;
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (pid > 0)
		w.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pid < 0 || w.pidfd < 0) {
		if (pid > 0) {
			saved = errno;
			kill_reap(rc, pid);
		}
		if (pfd[0] >= 0)
			close(pfd[0]);
		errno = saved;
		return -1;
	}
	enum runcmd_end end;
	int rv = watch(rc, pid, &w, &end);
	saved = errno;
	if (rv < 0 || end == RUNCMD_TIMED_OUT || end == RUNCMD_TOO_MUCH) {
		if (!w.exited)
			kill_reap(rc, pid);
		else if (rc->timeout_ms)
			kill(-pid, SIGKILL); /* what it left behind in its group */
	}
	close(w.pidfd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (rv < 0) {
		free(w.buf);
		errno = saved;
		return -1;
	}
	r->end = end;
	r->code = end == RUNCMD_EXITED ? WEXITSTATUS(w.status)
		: end == RUNCMD_SIGNALED ? WTERMSIG(w.status) : 0;
	if (!w.buf)
		w.buf = xmalloc(1);
	w.buf[w.len] = '\0';
	r->out = w.buf;
	r->len = w.len;
	r->err_line = errfd >= 0 ? last_line(errfd) : NULL;
	return 0;
}

void runcmd_out_free(struct runcmd_out *r)
{
	free(r->out);
	free(r->err_line);
	*r = (struct runcmd_out){ 0 };
}
