/* initmsg.c - init's messages to the supervisor (SEALED, READY, ERROR,
 * EXITED, SIGNALLED: initmsg.h): the one place that knows which fd goes
 * where on the wire.
 * The order: the seccomp listener, HTTP and SOCKS5, the pty master, each
 * host loopback port's listener, sock_diag, /tmp, home, the root, the user
 * and mount namespaces, the hook listener and the SSH agent socket's, each
 * only when present, its presence said by a flag of the message. */
#include "initmsg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/util.h"

void init_fds_none(struct init_fds *f)
{
	f->listener = f->http = f->socks = f->master = -1;
	for (size_t i = 0; i < FORWARD_MAX; i++)
		f->fwd[i] = -1;
	f->diag = f->tmp = f->home = f->root = f->userns = f->mntns = f->hook = f->ssh = -1;
}

/* The slots of f in wire order, with the flag bit each sets (FORWARD_MAX
 * of them for fwd_mask). */
struct slot {
	int *fd;
	int *flag;          /* has_*, set to 1; or NULL */
	unsigned *mask;     /* fwd_mask, fs_mask: bit is set; or NULL */
	unsigned bit;
};

static size_t slots_of(struct init_fds *f, struct init_msg *m, struct slot *s)
{
	size_t n = 0;
	s[n++] = (struct slot){ .fd = &f->listener, .flag = &m->has_listener };
	s[n++] = (struct slot){ .fd = &f->http, .flag = &m->has_proxy };
	s[n++] = (struct slot){ .fd = &f->socks, .flag = &m->has_proxy };
	s[n++] = (struct slot){ .fd = &f->master, .flag = &m->has_pty };
	for (unsigned i = 0; i < FORWARD_MAX; i++)
		s[n++] = (struct slot){ .fd = &f->fwd[i], .mask = &m->fwd_mask, .bit = 1u << i };
	s[n++] = (struct slot){ .fd = &f->diag, .flag = &m->has_diag };
	s[n++] = (struct slot){ .fd = &f->tmp, .mask = &m->fs_mask, .bit = 1u << 0 };
	s[n++] = (struct slot){ .fd = &f->home, .mask = &m->fs_mask, .bit = 1u << 1 };
	s[n++] = (struct slot){ .fd = &f->root, .mask = &m->fs_mask, .bit = 1u << 2 };
	s[n++] = (struct slot){ .fd = &f->userns, .flag = &m->has_ns };
	s[n++] = (struct slot){ .fd = &f->mntns, .flag = &m->has_ns };
	s[n++] = (struct slot){ .fd = &f->hook, .flag = &m->has_hook };
	s[n++] = (struct slot){ .fd = &f->ssh, .flag = &m->has_ssh };
	return n;
}

#define NSLOTS INIT_MSG_MAX_FDS

void init_fds_close(struct init_fds *f)
{
	struct init_msg m;
	struct slot s[NSLOTS];
	size_t n = slots_of(f, &m, s);
	for (size_t i = 0; i < n; i++)
		closep(s[i].fd);
	init_fds_none(f);
}

static bool slot_present(const struct slot *s)
{
	return s->flag ? *s->flag != 0 : (*s->mask & s->bit) != 0;
}

static int send_fds(int sock, const struct init_msg *m, const int *fds, size_t nfds)
{
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof *m };
	union {
		char buf[CMSG_SPACE(INIT_MSG_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	ssize_t r;
	while ((r = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return r < 0 ? -1 : 0;
}

/* m of type with the fds of c present (its flags set here): the pairs
 * (the proxy's listeners, the namespaces) both or neither. */
static int send_present(int sock, int type, struct init_msg *m, struct init_fds *c)
{
	m->type = type;
	m->has_listener = m->has_proxy = 0;
	m->has_pty = m->has_diag = m->has_ns = m->has_hook = m->has_ssh = 0;
	m->fwd_mask = m->fs_mask = 0;
	int fds[INIT_MSG_MAX_FDS];
	size_t nfds = 0;
	bool ns = c->userns >= 0 && c->mntns >= 0, proxy = c->http >= 0 && c->socks >= 0;
	struct slot s[NSLOTS];
	size_t n = slots_of(c, m, s);
	for (size_t i = 0; i < n; i++) {
		if (*s[i].fd < 0 || (s[i].flag == &m->has_ns && !ns) ||
		    (s[i].flag == &m->has_proxy && !proxy))
			continue;
		if (s[i].flag)
			*s[i].flag = 1;
		else
			*s[i].mask |= s[i].bit;
		fds[nfds++] = *s[i].fd;
	}
	return send_fds(sock, m, fds, nfds);
}

int initmsg_send_sealed(int sock, struct init_msg *m, const struct init_fds *f)
{
	if (f->http < 0 || f->socks < 0) {
		errno = EBADF;
		return -1;
	}
	struct init_fds c = *f; /* the slots point into a copy: f stays const */
	c.listener = -1;
	return send_present(sock, INIT_MSG_SEALED, m, &c);
}

int initmsg_send_ready(int sock, struct init_msg *m, const struct init_fds *f)
{
	if (f->listener < 0) {
		errno = EBADF;
		return -1;
	}
	struct init_fds c;
	init_fds_none(&c);
	c.listener = f->listener;
	return send_present(sock, INIT_MSG_READY, m, &c);
}

void init_fds_take(struct init_fds *into, struct init_fds *from)
{
	struct init_msg m;
	struct slot a[NSLOTS], b[NSLOTS];
	size_t n = slots_of(into, &m, a);
	slots_of(from, &m, b);
	for (size_t i = 0; i < n; i++)
		if (*a[i].fd < 0)
			*a[i].fd = steal_fd(b[i].fd);
	init_fds_close(from);
}

void initmsg_send_error(int sock, int errnum, const char *text)
{
	struct init_msg m = { .type = INIT_MSG_ERROR, .errnum = errnum };
	snprintf(m.text, sizeof m.text, "%s", text);
	send_fds(sock, &m, NULL, 0);
}

void initmsg_send_exited(int sock, int status, int left)
{
	struct init_msg m = { .type = INIT_MSG_EXITED, .status = status, .left = left };
	send_fds(sock, &m, NULL, 0);
}

void initmsg_send_signalled(int sock, int sig, int err)
{
	struct init_msg m = { .type = INIT_MSG_SIGNALLED, .status = sig, .errnum = err };
	(void)send(sock, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void initmsg_send_stopped(int sock, int sig)
{
	struct init_msg m = { .type = INIT_MSG_STOPPED, .status = sig };
	(void)send(sock, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void initmsg_send_escaped(int sock)
{
	struct init_msg m = { .type = INIT_MSG_ESCAPED };
	(void)send(sock, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool initmsg_recv_again(int err, bool *reset)
{
	if (err == EINTR)
		return true;
	if (err != ECONNRESET || *reset)
		return false;
	*reset = true;
	return true;
}

ssize_t initmsg_recv(int sock, struct init_msg *m, struct init_fds *f)
{
	union {
		char buf[CMSG_SPACE(INIT_MSG_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof *m };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	init_fds_none(f);
	ssize_t n;
	bool reset = false;
	while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && initmsg_recv_again(errno, &reset))
		;
	if (n <= 0)
		return n;
	int fds[INIT_MSG_MAX_FDS];
	bool whole = (size_t)n == sizeof *m && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
	size_t nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			if (k > INIT_MSG_MAX_FDS - nfds)
				k = INIT_MSG_MAX_FDS - nfds;
			memcpy(fds + nfds, CMSG_DATA(c), k * sizeof(int));
			nfds += k;
		}
	size_t k = 0;
	struct slot s[NSLOTS];
	size_t ns = whole ? slots_of(f, m, s) : 0;
	for (size_t i = 0; i < ns && k < nfds; i++)
		if (slot_present(&s[i]))
			*s[i].fd = fds[k++];
	while (k < nfds) /* more than the flags say: not ours to keep */
		close(fds[k++]);
	if (!whole) { /* not a message of init's (a byte left unread, say) */
		errno = EBADMSG;
		return -1;
	}
	return n;
}
