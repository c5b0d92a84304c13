/* publish_dial.h - sockets of the sandbox's network namespace for published
 * ports (publish.h): a process the supervisor forks when a session
 * publishes a port, which joins the sandbox's user and network namespaces
 * and makes, on request, one TCP socket there and hands it over. The
 * supervisor then connects it itself (a socket keeps the namespace it was
 * made in, whoever calls connect), to the sandbox's loopback.
 *
 * Why a process: the supervisor cannot join the sandbox's network
 * namespace when it is unprivileged (setns needs CAP_SYS_ADMIN in its own
 * user namespace), but a child of it can, after joining the sandbox's user
 * namespace, which the supervisor's user owns (the re-masker, remask.c,
 * does the same for the mount namespace). Sandbox init is left as it is:
 * PID 1 only waits for signals, and none of the sandbox's processes can
 * reach this one (it is in the host's pid namespace, non-dumpable), nor
 * its socket (the supervisor's alone). */
#pragma once
#include <sys/types.h>

#include "../common/err.h"

/* Sockets of a family ready and asked for, at most: the answers a burst
 * of connections waits for come in windows of this many, and the pool
 * never has more than it can hold (nor the dialer's socket more requests
 * than its buffer takes). */
#define DIALER_POOL_MAX 64
#define DIALER_POOL_TARGET 4 /* IPv4 sockets kept ready: a connection's dial
				waits on no round trip */

/* One family's sockets: ready, asked for, and the errno of the last
 * socket() the dialer could not make (0: none). */
struct dialer_pool {
	int fd[DIALER_POOL_MAX];
	size_t n;
	unsigned asked;
	int err;
};

struct publish_dialer {
	pid_t pid;
	int sock;                   /* the supervisor's end, non-blocking */
	struct dialer_pool pool[2]; /* [0] AF_INET, [1] AF_INET6 */
};

/* Fork the dialer into the namespaces of userns and netns (their files,
 * borrowed) and ask for the first IPv4 sockets: 0, or -1 with e filled. */
int publish_dialer_start(struct publish_dialer *d, int userns, int netns, struct werr *e);
/* A ready non-blocking TCP socket of family (AF_INET, AF_INET6) in the
 * sandbox's network namespace: its fd, or -1 with errno EAGAIN (none
 * ready: publish_dialer_ask, then wait for d->sock to be readable), EPIPE
 * (the dialer is gone), or the errno the dialer's socket() failed with. */
int publish_dialer_take(struct publish_dialer *d, int family);
/* Ask for one more socket of family, unless DIALER_POOL_MAX are ready or
 * asked for already. */
void publish_dialer_ask(struct publish_dialer *d, int family);
/* Ask for sockets of family until waiting are asked for (DIALER_POOL_MAX
 * at most): the connections that wait for one. */
void publish_dialer_want(struct publish_dialer *d, int family, size_t waiting);
/* d->sock readable: the answers read into the pools (the IPv4 pool topped
 * up). -1 when the dialer is gone (every take fails with EPIPE from then
 * on). */
int publish_dialer_ready(struct publish_dialer *d);
/* Kill and reap it; the sockets ready closed. */
void publish_dialer_stop(struct publish_dialer *d);
