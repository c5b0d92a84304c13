/* initmsg.h - the one message sandbox init sends the supervisor over their
 * SEQPACKET socket (init.c writes it, supervisor.c reads it): READY with the
 * fds the supervisor serves, or ERROR naming the layer that failed. */
#pragma once
#include "../net/forward.h"

enum init_msg_type { INIT_MSG_READY = 1, INIT_MSG_ERROR = 2 };
/* READY carries fds: the seccomp listener, the HTTP and SOCKS5 proxy
 * listeners, the pty master when has_pty is set, then the listener of each
 * host loopback port (spec->forwards.v[i]) whose bit i is set in fwd_mask. */
#define INIT_MSG_MAX_FDS (4 + FORWARD_MAX)
struct init_msg {
	int type;
	int errnum;
	int has_pty;
	unsigned fwd_mask;
	char text[1024];
};
