/* sockdiag.c - the far end of a TCP connection by sock_diag (sockdiag.h):
 * one exact inet_diag lookup, the client's local address being our peer's;
 * a question and its answer under one lock, as threads share the socket. */
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

/* One exact question on diag and its answer: 0 with *ino (0: no socket
 * there, or one no process holds), -1 when no answer came. */
static int ask(int diag, const void *q, size_t len, unsigned long *ino)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	*ino = 0;
	if (sendto(diag, q, len, 0, (struct sockaddr *)&nl, sizeof nl) != (ssize_t)len)
		return -1;
	long buf[8192 / sizeof(long)];
	for (;;) {
		ssize_t n = recv(diag, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *err = NLMSG_DATA(h);
				return err->error == -ENOENT ? 0 : -1; /* ENOENT: no such socket */
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
			    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				*ino = m->idiag_inode;
			}
			/* an exact lookup answers with one message, without NLM_F_MULTI */
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
}

unsigned long sockdiag_peer_inode(int diag, int fd)
{
	struct sockdiag_pair p;
	return sockdiag_pair_of(fd, &p) ? sockdiag_inode(diag, &p) : 0;
}

/* Ask diag about the far end of p: ask()'s result; -1 for an address
 * family other than IPv4 and IPv6. */
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
	pthread_mutex_lock(&ask_lock);
	int r = ask(diag, &q, sizeof q, ino);
	pthread_mutex_unlock(&ask_lock);
	return r;
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
