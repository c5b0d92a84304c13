/* fdpass.c - a message and one descriptor over a unix socket (fdpass.h). */
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "rawsys.h"

union one_fd {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

int fdpass_send_raw(int sock, const void *msg, size_t len, int fd)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	union one_fd u;
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
	long n = rawsys(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL);
	return n < 0 ? (int)n : n == (long)len ? 0 : -EMSGSIZE;
}

int fdpass_send(int sock, const void *msg, size_t len, int fd)
{
	int r = fdpass_send_raw(sock, msg, len, fd);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

ssize_t fdpass_recv_raw(int sock, void *msg, size_t len, int *fd, int flags)
{
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	union one_fd u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	*fd = -1;
	ssize_t n = rawsys(SYS_recvmsg, sock, &mh, MSG_CMSG_CLOEXEC | flags);
	if (n < 0)
		return n;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof *fd);
	return n;
}

ssize_t fdpass_recv(int sock, void *msg, size_t len, int *fd, int flags)
{
	ssize_t n = fdpass_recv_raw(sock, msg, len, fd, flags);
	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}
