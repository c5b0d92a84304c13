/* net.c - the sandbox's network namespace: only the loopback interface, up,
 * and the proxy's two listening sockets on it, created here inside the
 * namespace and handed to the supervisor, which serves them from outside:
 * the one way out. */
#include "sandbox.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int net_lo_up(struct werr *e)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return werr_errno(e, "network: socket for lo");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return werr_errno(e, "network: reading lo flags");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return werr_errno(e, "network: bringing lo up");
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
	if ((*http = listen_on(3128, e)) < 0)
		return -1;
	if ((*socks = listen_on(1080, e)) < 0) {
		close(*http);
		*http = -1;
		return -1;
	}
	return 0;
}
