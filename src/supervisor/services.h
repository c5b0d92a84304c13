/* services.h - the second phase of a session (supervisor.c): the modules
 * that serve a running sandbox, made once init reported ready and wired
 * to each other (the decoys' watch, the terminal, the control socket and
 * the questions for a human, the hook socket, the seccomp notifications
 * and exec control, `write ask`, the proxy, the signals' stopper, the
 * detector's actor, the limits' and the workspace's watches), then each
 * made a source of the loop. */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "../sandbox/sandbox.h"
#include "launch.h"
#include "../common/loop.h"
#include "stop.h"
#include "supervisor.h"
#include "jobctl.h"
#include "term.h"

/* The re-masker, started by the workspace watch when first needed
 * (remask.c): into the namespaces of the sandbox. */
struct remasker {
	int userns, mntns;
	const char *workspace;
};

/* What the detector may do to the session (detect.h). */
struct actor {
	struct detect *d;
	struct sbctl *sb;
	struct approvals *ap;    /* NULL: no question can be put (ask: the freeze stays) */
	struct audit *log;
	const struct question *q; /* the question open, or NULL */
	bool attended;           /* a human can be told of a freeze (freeze.h) */
	int init_sock;           /* init's socket: its EXITED there, unread, is the
				  * command's end too */
	bool ended;              /* the command's end was had (the sandbox over) */
	bool killed;             /* the detector killed the sandbox, or would have but
				  * the command had ended: warden exits 137 all the
				  * same (supervisor_run) */
};

/* Each of them the session's, in the order they are made (services_free
 * ends them the other way round); NULL (-1) where the session has none. */
struct services {
	struct sandbox_spec *s;
	const struct supervisor_cfg *cfg;
	struct audit *log;
	struct launched *L;
	int sigfd;
	struct canary_watch *cw;  /* the decoys' watch */
	struct term term;         /* the agent's terminal and the user's */
	struct jobctl jc;         /* Ctrl-Z: the session suspended as a job of the shell's */
	struct termask *ta;       /* the user's terminal answers questions */
	struct reviewer *rv;      /* `approve command` */
	struct webhook *wh;       /* `approve webhook` */
	struct control *ctl;      /* the control socket */
	struct approvals *ap;     /* the questions' broker, when the policy asks */
	struct hook *hk;          /* the hook socket: tool calls reported from inside */
	struct sshagent_srv *sa;  /* the SSH agent socket (`ssh-agent`) */
	struct notifier *nt;      /* the seccomp notifications */
	const char **writable;    /* what the agent can write (exec control) */
	struct execs *x;          /* exec control */
	struct hashdisk *kept;    /* its kept hashes, until execs_new takes them */
	struct writeask *wa;      /* `write ask` */
	struct wsmade *made;      /* the secret names the sandbox makes */
	char *ctl_dir;            /* warden's control directory: guarded */
	struct proxy *px;         /* the proxy and the host loopback ports */
	struct connowner *co;     /* which program made each proxied connection */
	struct proxy_mcp *pm;     /* the `mcp` rules' reader, NULL: none */
	struct stopper st;        /* the signals that stop the sandbox */
	struct actor actor;       /* the detector's hands */
	int timer;                /* the limits' watch, once a second */
	struct remasker rm;
	struct wswatch *ww;       /* the workspace watch (the plan's) */
	pid_t fr_pid;             /* the file reads' helper (fanread.h), 0: none */
	int fr_sock;              /* its socket, -1: none */
	struct werr fr_err;       /* why the reads are not recorded, said once started */
};

#define SERVICES_NONE ((struct services){ .sigfd = -1, .term = { .master = -1, \
	.wout = -1, .host = { .fd = -1 } }, .jc = { .timer = -1 }, .st = { .timerfd = -1 }, \
	.timer = -1, .fr_sock = -1 })

/* Begin the services for the sandbox L is launching, signals coming
 * through sigfd, while init builds it: what needs nothing init sends (the
 * file reads' helper forked, the control socket and the questions'
 * broker with its channels, the signals' stopper, the exec record's kept
 * hashes read). sv filled (from SERVICES_NONE), or -1 with e filled (what
 * was made is services_free's). */
int services_begin(struct services *sv, struct sandbox_spec *s, const struct supervisor_cfg *cfg,
		   struct audit *log, struct launched *L, int sigfd, struct werr *e);
/* Init's mounts sealed (launch_sealed), its last layers on the way: the
 * services on its fds that need no seccomp listener (the decoys' watch,
 * the file reads' helper told the namespaces, the terminal, the hook and
 * SSH agent sockets, exec control not yet answering, the proxy), and
 * whether the notifications can be received here (notify_supported); -1
 * with e filled (what was made is services_free's). */
int services_sealed(struct services *sv, struct werr *e);
/* Init ready (launch_ready): exec control given its listener, the
 * notifications and `write ask` on it, the rest wired; -1 with e filled
 * (what was made is services_free's). */
int services_start(struct services *sv, struct werr *e);
/* The session's own sources (init's pidfd, the signals, the limits'
 * timer) added to l, and each service there adding its own (X_watch), in
 * the order they are made; -1 with e naming the first that could not be
 * added (the session stops: fail closed). */
int services_watch(struct services *sv, struct loop *l, struct werr *e);
/* End what services_start made, in the order they must go (the askers
 * withdraw their questions, the channels after the broker, the terminal
 * last). */
void services_free(struct services *sv);
