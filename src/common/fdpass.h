/* fdpass.h - one fixed-size message with at most one descriptor over a unix
 * socket (SCM_RIGHTS): what the helpers forked into the sandbox's
 * namespaces (the exec record's reader, the published ports' dialer) and
 * the supervisor say to each other. Only system calls: safe in a child
 * forked from a process with threads. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* msg (len bytes) and fd (-1: none) in one sendmsg, MSG_NOSIGNAL: 0 when
 * all of msg went, else -1 (errno). */
int fdpass_send(int sock, const void *msg, size_t len, int fd);

/* The same, by rawsys (src/common/rawsys.h): 0, or -errno (-EMSGSIZE when
 * not all of msg went), errno untouched. */
int fdpass_send_raw(int sock, const void *msg, size_t len, int fd);

/* One message into msg (at most len bytes) and the descriptor that came
 * with it into *fd (close-on-exec; -1: none); recvmsg's flags added.
 * Returns the bytes read, or -1 (errno). */
ssize_t fdpass_recv(int sock, void *msg, size_t len, int *fd, int flags);

/* The same, by rawsys (src/common/rawsys.h): -errno on failure, errno
 * untouched (for a helper on memory it shares). */
ssize_t fdpass_recv_raw(int sock, void *msg, size_t len, int *fd, int flags);
