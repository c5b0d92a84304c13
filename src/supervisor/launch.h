/* launch.h - the first phase of a session (supervisor.c): the exec rules
 * in the kernel, the placeholders and the filter, the clone of sandbox
 * init into its namespaces, its identity maps and cgroup, and the
 * handshake up to init's SEALED and READY with the fds the supervisor
 * serves. */
#pragma once
#include <stdbool.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../sandbox/initmsg.h"
#include "../sandbox/sandbox.h"
#include "supervisor.h"

/* What launch leaves the session: init running with every layer built,
 * and what came with it. */
struct launched {
	struct child c;
	int sock;              /* the handshake's socket: the bytes that start the command */
	struct bpfexec *bx;    /* the exec rules in the kernel, or NULL */
	char kernel_why[1100]; /* why not, when NULL */
	struct llaudit *la;    /* Landlock's denials on the record, or NULL */
	struct sbctl *sb;      /* the kill switch (freeze.h) */
	struct init_msg m;     /* init's SEALED, with READY's planned exec */
	struct init_fds fds;   /* and its fds, each the session's until taken */
};
#define LAUNCHED_NONE ((struct launched){ .c = CHILD_NONE, .sock = -1 })

/* After READY, init reports only a command it could not start (then it
 * exits 125): -1 with e its error when it sent one, else 0. Read once
 * init has ended. */
int launched_error(struct launched *L, struct werr *e);

/* Start the sandbox: init cloned, mapped, in its cgroups and building its
 * mounts and layers when this returns; L filled (from LAUNCHED_NONE; its
 * fds marked absent first thing), or -1 with e filled; launched_free
 * releases L either way. */
struct limits;
/* lim: the session's limits (limits.h), or NULL. */
int launch(struct sandbox_spec *s, struct limits *lim, struct audit *log, struct launched *L,
	   struct werr *e);
/* Wait for init's SEALED (its mounts sealed, every fd but the seccomp
 * listener), then for its READY (that listener, every layer built): L's
 * message and fds filled, or -1 with e filled (init's own error, when it
 * sent one). Interruptible: 1 when a stopping signal (SIGINT, SIGTERM,
 * SIGHUP) reached sigfd first, *stop filled; the other signals that came
 * meanwhile are raised again, for the loop. */
int launch_sealed(struct launched *L, int sigfd, struct signalfd_siginfo *stop, struct werr *e);
int launch_ready(struct launched *L, int sigfd, struct signalfd_siginfo *stop, struct werr *e);
/* Init, waiting after READY (for the terminal set up, or the decoys
 * watched), told to start the command. 0 also when init is gone (its
 * status tells); -1 with e when the byte cannot be sent to a running init,
 * which would wait for ever. */
int launched_go(struct launched *L, struct werr *e);
/* Init killed (unless reaped already) and handed over, not waited for:
 * L holds it no more (supervisor_cfg.init_left). */
struct child launched_leave_init(struct launched *L);

/* Release what L holds: its fds, the kill switch, the Landlock reader,
 * init (killed and reaped unless reaped already), the kernel's exec
 * rules, the socket. */
void launched_free(struct launched *L);
