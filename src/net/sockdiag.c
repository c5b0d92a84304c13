/* sockdiag.c - the far end of a TCP connection by sock_diag (sockdiag.h):
 * one exact inet_diag lookup, the client's local address being our peer's;
 * and any question's exchange, under one lock, as threads share the socket. */
#include "sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

static pthread_mutex_t ask_lock = PTHREAD_MUTEX_INITIALIZER;

bool sockdiag_pair_of(int fd, struct sockdiag_pair *p)
{
	socklen_t pl = sizeof p->peer, ll = sizeof p->local;
	return getpeername(fd, (struct sockaddr *)&p->peer, &pl) == 0 &&
	       getsockname(fd, (struct sockaddr *)&p->local, &ll) == 0 &&
	       p->peer.ss_family == p->local.ss_family;
}

int sockdiag_ask(int diag, const void *q, size_t len, sockdiag_each_fn *each, void *arg)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	long buf[8192 / sizeof(long)];
	pthread_mutex_lock(&ask_lock);
	int r = sendto(diag, q, len, 0, (struct sockaddr *)&nl, sizeof nl) == (ssize_t)len ? 0 : -1;
	while (r == 0) {
		ssize_t n = recv(diag, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = -1;
			break;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; r == 0 && NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n))
			r = each(h, arg);
	}
	pthread_mutex_unlock(&ask_lock);
	return r < 0 ? -1 : 0;
}

/* An exact inet_diag question's answer: the one socket's inode. */
static int inode_of(const struct nlmsghdr *h, void *arg)
{
	unsigned long *ino = arg;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *err = NLMSG_DATA(h);
		return err->error == -ENOENT ? 1 : -1; /* ENOENT: no such socket */
	}
	if (h->nlmsg_type == NLMSG_DONE)
		return 1;
	if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
		const struct inet_diag_msg *m = NLMSG_DATA(h);
		*ino = m->idiag_inode;
	}
	/* an exact lookup answers with one message, without NLM_F_MULTI */
	return h->nlmsg_flags & NLM_F_MULTI ? 0 : 1;
}

unsigned long sockdiag_peer_inode(int diag, int fd)
{
	struct sockdiag_pair p;
	return sockdiag_pair_of(fd, &p) ? sockdiag_inode(diag, &p) : 0;
}

/* Ask diag about the far end of p: 0 with *ino (0: no socket there, or
 * one no process holds), -1 when no answer came or for an address family
 * other than IPv4 and IPv6. */
static int question(int diag, const struct sockdiag_pair *p, unsigned long *ino)
{
	const struct sockaddr_storage *peer = &p->peer, *local = &p->local;
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q = {
		.nh = { .nlmsg_len = sizeof q, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (uint8_t)peer->ss_family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0U,
		       .id = { .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
	};
	/* the client's socket: its local address is our peer */
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)peer, *b = (const void *)local;
		q.r.id.idiag_sport = a->sin_port;
		q.r.id.idiag_dport = b->sin_port;
		memcpy(q.r.id.idiag_src, &a->sin_addr, 4);
		memcpy(q.r.id.idiag_dst, &b->sin_addr, 4);
	} else if (peer->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)peer, *b = (const void *)local;
		q.r.id.idiag_sport = a->sin6_port;
		q.r.id.idiag_dport = b->sin6_port;
		memcpy(q.r.id.idiag_src, &a->sin6_addr, 16);
		memcpy(q.r.id.idiag_dst, &b->sin6_addr, 16);
	} else {
		*ino = 0;
		return -1;
	}
	*ino = 0;
	return sockdiag_ask(diag, &q, sizeof q, inode_of, ino);
}

unsigned long sockdiag_inode(int diag, const struct sockdiag_pair *p)
{
	unsigned long ino;
	question(diag, p, &ino);
	return ino;
}

bool sockdiag_released(int diag, const struct sockdiag_pair *p, unsigned long ino)
{
	unsigned long now;
	return question(diag, p, &now) == 0 && now != ino;
}

int sockdiag_own(void)
{
	static int fd = -1;
	if (fd < 0)
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return fd;
}
