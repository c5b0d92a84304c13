/* initmsg.h - the messages sandbox init sends the supervisor over their
 * SEQPACKET socket (init.c sends them, supervisor/launch.c receives them):
 * SEALED once the mounts are sealed and the listeners made, with every fd
 * the supervisor serves but the seccomp listener, so that the services on
 * them start while init applies its last layers; then READY with that
 * listener, every layer built; or, at any point, ERROR naming the layer
 * that failed. Last, EXITED: the command ended and nothing else of the
 * sandbox is left, init's own exit under way (supervisor/services.c
 * receives it). While the command runs, SIGNALLED answers each freeze or
 * resume the supervisor asks of init (sandbox.h, SANDBOX_SIG_FREEZE):
 * status the signal init sent every other process of the sandbox
 * (SIGSTOP, SIGCONT), errnum kill's errno or 0 (supervisor/freeze.c
 * waits for it; one that comes late, services.c drops). With job control
 * (sandbox_spec.job_control), STOPPED: the command's process stopped by a
 * signal (status: which; Ctrl-Z's SIGTSTP as a rule), sent unless the
 * sandbox is frozen (supervisor/jobctl.c suspends the session on it).
 * ESCAPED: while frozen by signals, a process was found running again
 * (sandbox/initfreeze.c; the supervisor kills the sandbox). The fds travel as a struct init_fds; initmsg.c alone
 * knows the order they go on the wire in and the flags that say which are
 * there. */
#pragma once
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../net/forward.h"

enum init_msg_type { INIT_MSG_READY = 1, INIT_MSG_ERROR = 2, INIT_MSG_SEALED = 3,
		     INIT_MSG_EXITED = 4, INIT_MSG_SIGNALLED = 5, INIT_MSG_STOPPED = 6,
		     INIT_MSG_ESCAPED = 7 };

/* The supervisor's bytes to init before SEALED: "g" once init's identity
 * maps are written (it goes on), then "c" once its cgroups are set and the
 * workspace's placeholders made (init mounts over them after it), or "C":
 * the same, and Landlock's denials are on the record (supervisor/llaudit.h),
 * so init restricts itself with LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON. */
#define INIT_BYTE_MAPPED 'g'
#define INIT_BYTE_CGROUPS 'c'
#define INIT_BYTE_CGROUPS_LOGGED 'C'

/* What init sends, each fd -1 when absent: the seccomp listener (READY's,
 * its only one) and the HTTP and SOCKS5 proxy listeners (always in
 * SEALED, with all that follows), the pty master, the
 * listener of each host loopback port (fwd[i] for spec->forwards.v[i]), a
 * sock_diag netlink socket of the sandbox's network namespace (which unix
 * sockets are bound inside: unixconn.h), O_PATH fds of the sandbox's /tmp
 * and home, whose free space the supervisor watches (limits.h), and of
 * its root, in which the exec pipeline opens what each exec names
 * (supervisor/exec/execs.h; init's /proc/1/root is not the supervisor's
 * to open when it runs unprivileged), the
 * sandbox's user and mount namespaces, which the re-masker joins if it is
 * needed (remask.c; init, non-dumpable, is not the
 * supervisor's to open them through /proc; both or neither), and the hook socket's listener
 * (src/control/hook.h). */
struct init_fds {
	int listener, http, socks;
	int master;
	int fwd[FORWARD_MAX];
	int diag;
	int tmp, home, root;
	int userns, mntns;
	int hook;
	int ssh;    /* the SSH agent socket's listener (sshagent_srv.h) */
};
#define INIT_MSG_MAX_FDS (12 + FORWARD_MAX)

/* The message. The has_ and _mask fields say which of the fds came along
 * (initmsg.c fills and reads them). canary_placed: the seed files init
 * wrote into the home (bit i: the i-th of the list), canary_err the errno
 * of the first it could not (0: none); with any placed, init waits for
 * the supervisor's byte (its watch is in place) before it starts the
 * command. exec_path: the command's first exec as init planned it (the
 * spec's vfork_command false: a vfork whose exec the supervisor takes from
 * here, not from memory it cannot read), "" when none. */
struct init_msg {
	int type;
	int errnum;
	int has_listener;
	int has_proxy;
	int has_pty;
	int has_diag;
	unsigned fwd_mask;
	unsigned fs_mask;
	int has_ns;
	int has_hook;
	int has_ssh;
	unsigned canary_placed;
	int canary_err;
	int status; /* EXITED: the status init exits with (the command's);
		     * SIGNALLED: the signal sent */
	int left;   /* EXITED: the processes the command left, killed with it */
	char text[1024];
	char exec_path[PATH_MAX];
};

/* The supervisor's answer to a planned first exec (exec_path) that it must
 * watch through to its stop, which it cannot do on memory it cannot read:
 * the exec fails with this errno, which no exec of the kernel's returns,
 * and init starts the command again as a fork, readable for its exec. */
#define INIT_EXEC_REFORK ENOTRECOVERABLE

/* Every fd absent. */
void init_fds_none(struct init_fds *f);
/* Close those present and mark them absent. */
void init_fds_close(struct init_fds *f);

/* Send SEALED: m (its type and fd flags set here from which of f's fds are
 * present) with f's fds but the listener. -1 with errno when a proxy
 * listener is missing or sendmsg fails. */
int initmsg_send_sealed(int sock, struct init_msg *m, const struct init_fds *f);
/* Send READY: m (the same way) with f's listener alone. -1 with errno when
 * it is missing or sendmsg fails. */
int initmsg_send_ready(int sock, struct init_msg *m, const struct init_fds *f);
/* Send ERROR: errnum and text. */
void initmsg_send_error(int sock, int errnum, const char *text);
/* Send EXITED: init's status, and how many processes the command left that
 * init's kill ended. */
void initmsg_send_exited(int sock, int status, int left);
/* Send SIGNALLED: sig, and err (kill's errno, 0 when it succeeded); never
 * waits for room in the socket (an answer nobody reads is dropped). */
void initmsg_send_signalled(int sock, int sig, int err);
/* Send STOPPED: the command stopped by sig; never waits, as SIGNALLED. */
void initmsg_send_stopped(int sock, int sig);
/* Send ESCAPED; never waits. */
void initmsg_send_escaped(int sock);
/* Whether a receive from init's socket that failed with err is tried
 * again: an interrupted one, and the first reset (init that fails with a
 * byte of the supervisor's, or the network namespace maker's message,
 * unread in its socket resets the connection as it exits; the kernel
 * reports that once, ahead of what is queued, and what init sent before
 * it is still there to read). reset: the caller's, false at first. */
bool initmsg_recv_again(int err, bool *reset);
/* Receive init's message and its fds into f (each one the message does
 * not carry -1; f is the receiver's to close). The length read: 0 on EOF,
 * -1 with errno (EBADMSG: what came was not a whole message, its fds
 * closed). */
ssize_t initmsg_recv(int sock, struct init_msg *m, struct init_fds *f);
/* Move each fd from holds into into, where into has none (one it has
 * already is kept, from's closed); from is left with none. */
void init_fds_take(struct init_fds *into, struct init_fds *from);
