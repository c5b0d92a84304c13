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

struct publish_dialer {
	pid_t pid;
	int sock;   /* the supervisor's end */
};

/* Fork the dialer into the namespaces of userns and netns (their files,
 * borrowed): 0, or -1 with e filled. */
int publish_dialer_start(struct publish_dialer *d, int userns, int netns, struct werr *e);
/* A non-blocking TCP socket of family (AF_INET, AF_INET6) in the sandbox's
 * network namespace: its fd, or -1 with errno (the dialer's own errno, or
 * ETIMEDOUT when it does not answer within a second, EPIPE when it is gone). */
int publish_dialer_socket(struct publish_dialer *d, int family);
/* Kill and reap it. */
void publish_dialer_stop(struct publish_dialer *d);
