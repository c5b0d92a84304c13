/* loophint.c - the host's loopback port a process inside tried on its own
 * loopback (loophint.h). Two sock_diag dumps of listening TCP sockets, one
 * in the sandbox's network namespace and one in warden's own (the host's),
 * each only for a connect to a loopback port that is neither the proxy's
 * nor one said already: a dev server's clients inside ask the first once
 * per port, a client looping on a closed port asks nothing more. */
#include "loophint.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "../net/sockdiag.h"

struct listen_q {
	unsigned short port;  /* network order */
	bool loopback_only;   /* count a listener only on loopback or all addresses */
	bool found;
};

static bool loopback_or_any(const struct inet_diag_msg *m)
{
	if (m->idiag_family == AF_INET) {
		uint32_t a = ntohl(m->id.idiag_src[0]);
		return a == 0 || (a >> 24) == 127;
	}
	static const uint32_t zero[4], one[4] = { 0, 0, 0, 0x01000000 }; /* ::1, network order */
	return memcmp(m->id.idiag_src, zero, sizeof zero) == 0 ||
	       memcmp(m->id.idiag_src, one, sizeof one) == 0;
}

static int listening(const struct nlmsghdr *nh, void *arg)
{
	struct listen_q *q = arg;
	if (nh->nlmsg_type == NLMSG_DONE)
		return 1;
	if (nh->nlmsg_type == NLMSG_ERROR)
		return -1;
	const struct inet_diag_msg *m = NLMSG_DATA(nh);
	if (m->id.idiag_sport == q->port && (!q->loopback_only || loopback_or_any(m)))
		q->found = true;
	return 0;
}

/* Does a TCP socket of family listen at port in diag's namespace? -1: no
 * answer. */
static int listens(int diag, int family, unsigned port, bool loopback_only)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q = {
		.nh = { .nlmsg_len = sizeof q, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = (unsigned char)family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = 1U << TCP_LISTEN },
	};
	struct listen_q l = { .port = htons((unsigned short)port), .loopback_only = loopback_only };
	if (diag < 0 || sockdiag_ask(diag, &q, sizeof q, listening, &l) < 0)
		return -1;
	return l.found;
}

bool loophint_host_only(struct loophint *h, int inside_diag, int family, unsigned port)
{
	if (port == 0 || port > 65535 || h->ntold == LOOPHINT_PORTS)
		return false;
	for (unsigned i = 0; i < h->ntold; i++)
		if (h->told[i] == port)
			return false;
	/* anything inside at that port (either family: a dual-stack server;
	 * a family the namespace lacks answers nothing: none there) */
	int v4 = listens(inside_diag, AF_INET, port, false);
	int v6 = listens(inside_diag, AF_INET6, port, false);
	if (v4 == 1 || v6 == 1 || (v4 < 0 && v6 < 0))
		return false;
	int host_diag = sockdiag_own();
	bool host = listens(host_diag, family, port, true) == 1 ||
		    (family == AF_INET && listens(host_diag, AF_INET6, port, true) == 1);
	if (host)
		h->told[h->ntold++] = (unsigned short)port;
	return host;
}
