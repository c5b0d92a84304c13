/* sockdiag.h - the other end of a TCP connection, through sock_diag
 * (NETLINK_SOCK_DIAG, inet_diag) in the network namespace where that end
 * lives: a socket warden accepted from inside the sandbox names its
 * client's socket by the two addresses, and sock_diag gives its inode, which
 * /proc/PID/fd shows as socket:[INODE] in the process that holds it. */
#pragma once

/* The inode of the socket at the far end of the TCP connection fd, asked of
 * diag (a NETLINK_SOCK_DIAG socket in the far end's network namespace); 0
 * when unknown. */
unsigned long sockdiag_peer_inode(int diag, int fd);
