/* publish_dial.c - the dialer of published ports (publish_dial.h): one
 * request a SEQPACKET message (the family, an int), one answer each, in
 * order (struct answer: the family, 0 or the errno of socket(), with the
 * socket as SCM_RIGHTS when 0). The supervisor never waits for an answer:
 * it keeps a few IPv4 sockets ready, and reads answers when the socket is
 * readable. */
#include "publish_dial.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/fdpass.h"
#include "../common/util.h"
#include "../sandbox/sandbox.h"

struct answer {
	int family;
	int err;
};

/* The dialer's body: only system calls (forked from a process with
 * threads). */
static __attribute__((noreturn)) void serve(int userns, int netns, int sock, pid_t parent)
{
	nshelper_enter("warden-publish", userns, netns, CLONE_NEWNET, sock, parent);
	for (;;) {
		int family;
		ssize_t n = recv(3, &family, sizeof family, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof family)
			_exit(0); /* the supervisor is gone, or speaks nonsense */
		int err = 0, fd = -1;
		if (family != AF_INET && family != AF_INET6)
			err = EAFNOSUPPORT;
		else if ((fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
			err = errno;
		struct answer a = { family, err };
		int r = fdpass_send(3, &a, sizeof a, fd);
		if (fd >= 0)
			close(fd);
		if (r < 0)
			_exit(0);
	}
}

int publish_dialer_start(struct publish_dialer *d, int userns, int netns, struct werr *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "published ports: socketpair");
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return werr_fork(e, errno, "published ports: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(userns, netns, sv[1], parent);
	}
	close(sv[1]);
	int fl = fcntl(sv[0], F_GETFL);
	if (fl < 0 || fcntl(sv[0], F_SETFL, fl | O_NONBLOCK) < 0) {
		close(sv[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return werr_errno(e, "published ports: the dialer's socket");
	}
	memset(d, 0, sizeof *d);
	d->pid = pid;
	d->sock = sv[0];
	for (unsigned i = 0; i < DIALER_POOL_TARGET; i++)
		publish_dialer_ask(d, AF_INET);
	return 0;
}

static struct dialer_pool *pool_of(struct publish_dialer *d, int family)
{
	return &d->pool[family == AF_INET6];
}

void publish_dialer_ask(struct publish_dialer *d, int family)
{
	struct dialer_pool *p = pool_of(d, family);
	if (p->n + p->asked >= DIALER_POOL_MAX)
		return;
	/* (at most 2 * DIALER_POOL_MAX ints outstanding on a socket nobody
	 * else writes: the buffer never fills, and a dialer gone shows as
	 * EOF in publish_dialer_ready) */
	if (d->sock >= 0 && send(d->sock, &family, sizeof family, MSG_NOSIGNAL) == (ssize_t)sizeof family)
		p->asked++;
}

void publish_dialer_want(struct publish_dialer *d, int family, size_t waiting)
{
	struct dialer_pool *p = pool_of(d, family);
	while (d->sock >= 0 && p->asked < waiting && p->n + p->asked < DIALER_POOL_MAX) {
		unsigned was = p->asked;
		publish_dialer_ask(d, family);
		if (p->asked == was)
			return; /* refused: the next answer, or the timer, asks again */
	}
}

int publish_dialer_take(struct publish_dialer *d, int family)
{
	struct dialer_pool *p = pool_of(d, family);
	if (p->n)
		return p->fd[--p->n];
	errno = d->sock < 0 ? EPIPE : p->err && !p->asked ? p->err : EAGAIN;
	return -1;
}

/* One answer: 1, 0 when there is none now, -1 when the dialer is gone. */
static int read_answer(struct publish_dialer *d)
{
	struct answer a;
	int fd;
	ssize_t n = fdpass_recv(d->sock, &a, sizeof a, &fd, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n != (ssize_t)sizeof a || (a.family != AF_INET && a.family != AF_INET6)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct dialer_pool *p = pool_of(d, a.family);
	if (p->asked)
		p->asked--;
	p->err = a.err;
	if (fd >= 0 && (a.err || p->n == DIALER_POOL_MAX))
		close(fd);
	else if (fd >= 0)
		p->fd[p->n++] = fd;
	else if (!a.err)
		p->err = EPROTO;
	return 1;
}

int publish_dialer_ready(struct publish_dialer *d)
{
	int r;
	while (d->sock >= 0 && (r = read_answer(d)) > 0)
		;
	if (d->sock < 0 || r < 0) {
		closep(&d->sock);
		return -1;
	}
	struct dialer_pool *p4 = pool_of(d, AF_INET);
	if (!p4->err && p4->n < DIALER_POOL_TARGET)
		publish_dialer_want(d, AF_INET, DIALER_POOL_TARGET - p4->n);
	return 0;
}

void publish_dialer_stop(struct publish_dialer *d)
{
	closep(&d->sock);
	for (size_t f = 0; f < 2; f++)
		while (d->pool[f].n)
			close(d->pool[f].fd[--d->pool[f].n]);
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	d->pid = 0;
}
