/* net.c - the sandbox's network namespace: only the loopback interface, up.
 * Nothing else exists; the proxy (a later layer) is the one way out. */
#include "sandbox.h"

#include <errno.h>
#include <net/if.h>
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
