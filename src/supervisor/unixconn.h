/* unixconn.h - connects to pathname unix sockets, made by the supervisor
 * on the sandboxed process's behalf: only to a socket bound inside the
 * sandbox. A socket the host bound (a tool's server or agent socket in the
 * workspace, or anywhere the sandbox can see) is refused, and so is any
 * path that does not lead to a socket.
 *
 * Why the supervisor connects instead of letting the call go on: the path
 * sits in the process's memory, which another of its threads can change
 * between the check and the kernel's own read. So the supervisor resolves
 * the path once, inside the process's root (target.h), decides on the inode
 * it opened, and connects a duplicate of the process's socket (pidfd_getfd)
 * to that very inode (through /proc/self/fd). Which sockets are bound
 * inside: a sock_diag dump of the sandbox's network namespace, from a
 * netlink socket sandbox init made there; which the host bound: the same
 * dump in the supervisor's own. The peer of such a connection sees the
 * supervisor's credentials (SO_PEERCRED), not the process's. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

enum unixconn_verdict {
	UNIXCONN_CONNECTED, /* err 0 or the connect's own error */
	UNIXCONN_NONE,      /* no socket there (err says why, as the kernel would) */
	UNIXCONN_HOST,      /* a socket bound outside the sandbox: refused, EPERM */
};

struct unixconn_result {
	enum unixconn_verdict verdict;
	int err;              /* for the process: 0 or an errno */
	char resolved[4096];  /* the socket's path as opened ("" when none) */
};

/* Connect socket sockfd of process pid to sun_path (NUL-terminated) the way
 * the process would resolve it. diag: the sandbox's sock_diag socket. */
void unixconn_connect(int diag, pid_t pid, int sockfd, const char *sun_path,
		      struct unixconn_result *r);

/* The same for a datagram: sendto(sockfd, data, len, flags, sun_path) made
 * by the supervisor (never blocking it: MSG_DONTWAIT); *sent: the count. */
void unixconn_sendto(int diag, pid_t pid, int sockfd, const char *sun_path, const void *data,
		     size_t len, int flags, struct unixconn_result *r, size_t *sent);

/* Is the socket file dev/ino bound in the network namespace of this
 * sock_diag socket? 1 yes, 0 no, -1 the dump failed. */
int unixconn_bound(int diag, dev_t dev, ino_t ino);

/* A connect or sendto that met no socket (ECONNREFUSED) at a path of the
 * workspace ws where the host has one: a host socket the workspace watch
 * masked (wswatch.h), refused and said as such (verdict UNIXCONN_HOST,
 * EPERM). The workspace is at the same path inside and out. */
void unixconn_masked(struct unixconn_result *r, const char *ws);
