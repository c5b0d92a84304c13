/* sockdiag.h - the other end of a TCP connection, through sock_diag
 * (NETLINK_SOCK_DIAG, inet_diag) in the network namespace where that end
 * lives: a socket warden accepted from inside the sandbox names its
 * client's socket by the two addresses, and sock_diag gives its inode, which
 * /proc/PID/fd shows as socket:[INODE] in the process that holds it. A
 * socket no process holds any more (closed, its connection ending) has no
 * inode: 0. One sock_diag socket may be asked from several threads: each
 * question and its answer are one at a time. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/netlink.h>

/* A TCP connection's two addresses, as seen from the accepting end. */
struct sockdiag_pair {
	struct sockaddr_storage peer, local;
};

/* One message of an answer: 0 to read on, 1 when the answer is complete,
 * -1 when it says the question failed. */
typedef int sockdiag_each_fn(const struct nlmsghdr *h, void *arg);

/* The question q (len bytes, a netlink message) sent on diag, and each
 * message of its answer passed to each until it says the answer is
 * complete: 0, or -1 when no answer came or each said it failed. Every
 * question on a sock_diag socket goes through here: one at a time, each
 * answer read whole by the thread that asked. */
int sockdiag_ask(int diag, const void *q, size_t len, sockdiag_each_fn *each, void *arg);

/* fd's two addresses into *p; false when it has none (closed). */
bool sockdiag_pair_of(int fd, struct sockdiag_pair *p);

/* The inode of the socket at the far end of the connection p, asked of
 * diag (a NETLINK_SOCK_DIAG socket in the far end's network namespace); 0
 * when unknown, or held by no process any more. */
unsigned long sockdiag_inode(int diag, const struct sockdiag_pair *p);

/* true when sock_diag answers that the far end of p is no longer the
 * socket ino held by a process (closed by all that held it, or gone); false
 * when it still is, or no answer came. */
bool sockdiag_released(int diag, const struct sockdiag_pair *p, unsigned long ino);

/* Both: the far end's inode for the connection fd. */
unsigned long sockdiag_peer_inode(int diag, int fd);

/* The process's own sock_diag socket (opened once, kept): its network
 * namespace is the host's (or whichever warden runs in), where a host
 * tool binds or listens; -1 when it cannot be had. */
int sockdiag_own(void);
