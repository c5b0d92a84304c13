/* sockdiag.c - the far end of a TCP connection by sock_diag (sockdiag.h):
 * one exact inet_diag lookup, the client's local address being our peer's. */
#include "sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

unsigned long sockdiag_peer_inode(int diag, int fd)
{
	struct sockaddr_storage peer, local;
	socklen_t pl = sizeof peer, ll = sizeof local;
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &ll) < 0 || peer.ss_family != local.ss_family)
		return 0;
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q = {
		.nh = { .nlmsg_len = sizeof q, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (uint8_t)peer.ss_family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0U,
		       .id = { .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
	};
	/* the client's socket: its local address is our peer */
	if (peer.ss_family == AF_INET) {
		const struct sockaddr_in *a = (void *)&peer, *b = (void *)&local;
		q.r.id.idiag_sport = a->sin_port;
		q.r.id.idiag_dport = b->sin_port;
		memcpy(q.r.id.idiag_src, &a->sin_addr, 4);
		memcpy(q.r.id.idiag_dst, &b->sin_addr, 4);
	} else if (peer.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (void *)&peer, *b = (void *)&local;
		q.r.id.idiag_sport = a->sin6_port;
		q.r.id.idiag_dport = b->sin6_port;
		memcpy(q.r.id.idiag_src, &a->sin6_addr, 16);
		memcpy(q.r.id.idiag_dst, &b->sin6_addr, 16);
	} else {
		return 0;
	}
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	if (sendto(diag, &q, sizeof q, 0, (struct sockaddr *)&nl, sizeof nl) != (ssize_t)sizeof q)
		return 0;
	long buf[8192 / sizeof(long)];
	unsigned long ino = 0;
	for (;;) {
		ssize_t n = recv(diag, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				return ino;
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
			    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				ino = m->idiag_inode;
			}
			/* an exact lookup answers with one message, without NLM_F_MULTI */
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return ino;
		}
	}
}
