/* initmsg.h - the one message sandbox init sends the supervisor over their
 * SEQPACKET socket (init.c writes it, supervisor.c reads it): READY with the
 * fds the supervisor serves, or ERROR naming the layer that failed. */
#pragma once
#include "../net/forward.h"

enum init_msg_type { INIT_MSG_READY = 1, INIT_MSG_ERROR = 2 };
/* READY carries fds: the seccomp listener, the HTTP and SOCKS5 proxy
 * listeners, the pty master when has_pty is set, then the listener of each
 * host loopback port (spec->forwards.v[i]) whose bit i is set in fwd_mask,
 * then a sock_diag netlink socket of the sandbox's network namespace when
 * has_diag is set (which unix sockets are bound inside: unixconn.h), then
 * O_PATH fds of the sandbox's /tmp (bit 0 of fs_mask) and home (bit 1),
 * whose free space the supervisor watches (limits.h), then the sandbox's
 * user and mount namespaces when has_ns is set, which the re-masker joins
 * if it is needed (remask.c; init, non-dumpable, is not the supervisor's
 * to open them through /proc), then the hook socket's listener when
 * has_hook is set (src/control/hook.h). canary_placed: the decoys init
 * wrote into the home (bit i: spec->canary->v[i]), canary_err the errno of
 * the first it could not (0: none); with any placed, init waits for the
 * supervisor's byte (its watch is in place) before it starts the command. */
#define INIT_MSG_MAX_FDS (10 + FORWARD_MAX)
struct init_msg {
	int type;
	int errnum;
	int has_pty;
	int has_diag;
	unsigned fwd_mask;
	unsigned fs_mask;
	int has_ns;
	int has_hook;
	unsigned canary_placed;
	int canary_err;
	char text[1024];
};
