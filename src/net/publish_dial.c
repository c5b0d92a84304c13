/* publish_dial.c - the dialer of published ports (publish_dial.h): one
 * request a SEQPACKET message (the family, an int), one answer each (an
 * int, 0 or the errno of socket(), with the socket as SCM_RIGHTS when 0). */
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

#include "../common/util.h"

#define ANSWER_TIMEOUT_MS 1000

static int send_answer(int sock, int err, int fd)
{
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof err };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof err ? 0 : -1;
}

/* The dialer's body: only system calls (forked from a process with
 * threads). */
static __attribute__((noreturn)) void serve(int userns, int netns, int sock, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1); /* the supervisor is gone already */
	prctl(PR_SET_DUMPABLE, 0);
	prctl(PR_SET_NAME, "warden-publish");
	if (setns(userns, CLONE_NEWUSER) < 0 || setns(netns, CLONE_NEWNET) < 0)
		_exit(1);
	if (dup2(sock, 3) < 0)
		_exit(1);
	syscall(SYS_close_range, 4, ~0U, 0);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
	}
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
		int r = send_answer(3, err, fd);
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
		return werr_errno(e, "published ports: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(userns, netns, sv[1], parent);
	}
	close(sv[1]);
	struct timeval tv = { .tv_sec = ANSWER_TIMEOUT_MS / 1000,
			      .tv_usec = (ANSWER_TIMEOUT_MS % 1000) * 1000 };
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	d->pid = pid;
	d->sock = sv[0];
	return 0;
}

int publish_dialer_socket(struct publish_dialer *d, int family)
{
	if (d->sock < 0) {
		errno = EPIPE;
		return -1;
	}
	if (send(d->sock, &family, sizeof family, MSG_NOSIGNAL) != (ssize_t)sizeof family) {
		errno = EPIPE;
		return -1;
	}
	int err = 0;
	struct iovec iov = { .iov_base = &err, .iov_len = sizeof err };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n;
	while ((n = recvmsg(d->sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof err) {
		/* no answer in time, or none at all: the dialer is not to be
		 * trusted to answer in order from here on */
		int why = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? ETIMEDOUT : EPIPE;
		closep(&d->sock);
		errno = why;
		return -1;
	}
	int fd = -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof fd);
	if (err || fd < 0) {
		if (fd >= 0)
			close(fd);
		errno = err ? err : EPROTO;
		return -1;
	}
	return fd;
}

void publish_dialer_stop(struct publish_dialer *d)
{
	closep(&d->sock);
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	d->pid = 0;
}
