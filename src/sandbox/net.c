/* net.c - the sandbox's network namespace, made beside init by a helper
 * (net_make_main, sandbox.h): only the loopback interface, up (tuned for
 * loopback: lo_big_segments, lo_reno); and the proxy's two listening
 * sockets on it, created here inside the namespace and handed to the
 * supervisor, which serves them from outside: the one way out. Also the
 * listeners of host loopback ports (`--allow-net 127.0.0.1:PORT`,
 * net/forward.h), served the same way, and the hook socket's (a unix
 * socket made in the namespace, src/control/hook.h). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/fdpass.h"
#include "../common/hosttext.h"
#include "../common/rawsys.h"
#include "../net/proxy.h"
#include "features.h"

/* Not in Debian 12's kernel headers (Linux 6.3). */
#ifndef IFLA_GSO_IPV4_MAX_SIZE
#define IFLA_GSO_IPV4_MAX_SIZE 63
#define IFLA_GRO_IPV4_MAX_SIZE 64
#endif
#define LO_SEGMENT_MAX (256 * 1024)

/* Let TCP on this namespace's loopback build 256 KiB segments instead of
 * 64 KiB ("BIG TCP", Linux 6.3 for IPv4, 5.19 for IPv6): a quarter of the
 * per-segment work for every byte between a tool and the proxy, which is
 * most of what a tunnel costs inside. The namespace is the sandbox's own;
 * the host's loopback is untouched. Best effort: an older kernel ignores or
 * refuses it, and loopback works as before. No ACK is awaited: rtnetlink
 * handles the request inside send(). */
static void lo_big_segments(unsigned ifindex)
{
	long fd = rawsys(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return;
	struct {
		struct nlmsghdr n;
		struct ifinfomsg i;
		char attrs[4 * RTA_SPACE(sizeof(uint32_t))];
	} req;
	memset(&req, 0, sizeof req);
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof req.i);
	req.n.nlmsg_type = RTM_NEWLINK;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.i.ifi_family = AF_UNSPEC;
	req.i.ifi_index = (int)ifindex;
	static const unsigned short types[] = { IFLA_GSO_MAX_SIZE, IFLA_GRO_MAX_SIZE,
						IFLA_GSO_IPV4_MAX_SIZE, IFLA_GRO_IPV4_MAX_SIZE };
	uint32_t size = LO_SEGMENT_MAX;
	for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
		struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
		a->rta_type = types[k];
		a->rta_len = RTA_LENGTH(sizeof size);
		memcpy(RTA_DATA(a), &size, sizeof size);
		req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(a->rta_len);
	}
	(void)rawsys(SYS_sendto, fd, &req, req.n.nlmsg_len, 0, NULL, 0); /* best effort */
	rawsys(SYS_close, fd);
}

/* TCP inside the namespace only ever crosses this loopback, where congestion
 * control has nothing to control and a pacing one (the host's default may be
 * BBR, which paces even loopback) halves what a tunnel carries. Reno, built
 * into every kernel and always permitted in a namespace, costs least. This
 * is the namespace's own setting, reached through /proc/sys/net, which shows
 * the caller's network namespace (the maker's /proc is the host's). Best
 * effort, like the above. */
static void lo_reno(void)
{
	long fd = rawsys(SYS_openat, AT_FDCWD, "/proc/sys/net/ipv4/tcp_congestion_control",
			 O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)rawsys(SYS_write, fd, "reno", 4); /* best effort */
	rawsys(SYS_close, fd);
}

/* lo up, and tuned: 0 or -errno. */
static long lo_up(void)
{
	long fd = rawsys(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	long r = rawsys(SYS_ioctl, fd, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = rawsys(SYS_ioctl, fd, SIOCSIFFLAGS, &ifr);
	}
	if (r == 0 && rawsys(SYS_ioctl, fd, SIOCGIFINDEX, &ifr) == 0)
		lo_big_segments((unsigned)ifr.ifr_ifindex);
	rawsys(SYS_close, fd);
	if (r == 0)
		lo_reno();
	return r;
}

int net_make_main(int userns, int sock, pid_t parent)
{
	nshelper_enter("warden-netns", userns, -1, 0, sock, parent);
	struct netns_failed f = { .tag = NETNS_FAILED, .step = NETNS_STEP_MAKE };
	long r = rawsys(SYS_unshare, CLONE_NEWNET);
	if (r == 0) {
		f.step = NETNS_STEP_LO;
		r = lo_up();
	}
	if (r == 0) {
		f.step = NETNS_STEP_OPEN;
		r = rawsys(SYS_openat, AT_FDCWD, "/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	}
	int sent;
	if (r >= 0) {
		sent = fdpass_send_raw(3, (char[]){ NETNS_MADE }, 1, (int)r);
	} else {
		f.err = (int)-r;
		sent = fdpass_send_raw(3, &f, sizeof f, -1);
	}
	return sent < 0 ? 2 : 0; /* 2: init is gone, and its end says why */
}

int net_join(const struct netns_failed *why, int fd, struct werr *e)
{
	static const char *const step[] = {
		[NETNS_STEP_MAKE] = "the kernel refused a new one for the sandbox (a seccomp filter "
				    "outside warden refuses unshare(CLONE_NEWNET): in a container, "
				    "the engine's default profile; " FEATURES_CONTAINER_PROFILE_HINT "; or the "
				    "sysctl user.max_net_namespaces is 0)",
		[NETNS_STEP_LO] = "bringing its loopback interface up",
		[NETNS_STEP_OPEN] = "opening it for sandbox init",
	};
	if (fd < 0)
		return werr_set(e, why->err, "network namespace: %s",
				why->step < sizeof step / sizeof step[0] && step[why->step]
					? step[why->step] : "its maker failed");
	if (setns(fd, CLONE_NEWNET) < 0)
		return werr_errno(e, "network namespace: sandbox init joining it");
	return 0;
}

static int listen_on(uint16_t port, struct werr *e)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return werr_errno(e, "network: proxy socket");
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0) {
		werr_errno(e, "network: proxy listener on 127.0.0.1:%u", port);
		close(fd);
		return -1;
	}
	return fd;
}

int net_proxy_listeners(int *http, int *socks, struct werr *e)
{
	if ((*http = listen_on(PROXY_HTTP_PORT, e)) < 0)
		return -1;
	if ((*socks = listen_on(PROXY_SOCKS_PORT, e)) < 0) {
		close(*http);
		*http = -1;
		return -1;
	}
	return 0;
}

int net_hook_listener(const char *path, struct werr *e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof a.sun_path)
		return werr_set(e, ENAMETOOLONG, "hook socket: %s", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || chmod(path, 0666) < 0 ||
	    listen(fd, 64) < 0)
		return werr_errno(e, "hook socket: %s", path);
	return steal_fd(&fd);
}

/* One host loopback port's listener: -1 with e set, or -2 when it is the
 * optional ::1 half of localhost:PORT and the namespace has no IPv6. */
static int forward_listen(const struct net_forward *fw, struct werr *e)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr_ip_to_sockaddr(&fw->ip, fw->port, &ss);
	char text[ADDR_TEXT_MAX];
	addr_ip_text(&fw->ip, text);
	bool v6 = ss.ss_family == AF_INET6;
	_cleanup_close_ int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (fw->optional && errno == EAFNOSUPPORT)
			return -2;
		werr_errno(e, "network: socket for the host loopback port %s (%s)", fw->rule, text);
		return -1;
	}
	if (v6) {
		int one = 1;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		if (fw->optional && errno == EADDRNOTAVAIL)
			return -2;
		char ht[HOST_TEXT_MAX];
		if (errno == EADDRINUSE)
			werr_set(e, errno, "network: host loopback port %s: %s:%u is already in use "
				 "inside the sandbox", fw->rule, host_text(text, ht), fw->port);
		else
			werr_errno(e, "network: host loopback port %s: listening on %s:%u",
				   fw->rule, host_text(text, ht), fw->port);
		return -1;
	}
	if (listen(fd, 512) < 0) {
		werr_errno(e, "network: host loopback port %s: listen", fw->rule);
		return -1;
	}
	return steal_fd(&fd);
}

int net_forward_listeners(const struct net_forwards *f, int fds[FORWARD_MAX], struct werr *e)
{
	for (size_t i = 0; i < FORWARD_MAX; i++)
		fds[i] = -1;
	for (size_t i = 0; i < f->n; i++) {
		int fd = forward_listen(&f->v[i], e);
		if (fd == -1) {
			for (size_t k = 0; k < i; k++)
				if (fds[k] >= 0)
					close(fds[k]);
			return -1;
		}
		fds[i] = fd; /* -2: skipped, stays below 0 */
	}
	return 0;
}
