/* freeze.h - the sandbox stopped, let go on, or ended on request: the
 * kill switch that `warden freeze|resume|kill` (the control socket) and the
 * detector use. See freeze.c for how.
 *
 * Each action is an `action` event (by, uid, reason, how, processes). Every
 * call is quick: no sleep, no waiting for the kernel to report the sandbox
 * stopped (SIGSTOP and cgroup.freeze take effect as each process next
 * runs); a freeze or resume by signals waits only for init's answer that
 * it sent them (2 s at most, microseconds as a rule).
 *
 * No freeze lasts for ever: each is given the profile's `freeze timeout`
 * (policy_freeze_timeout: auto is 10 minutes when a human can decide, none
 * when nobody can), and when it runs out with the sandbox still frozen,
 * the sandbox is killed (an `action` event by "timeout", saying why). */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "../policy/policy.h"

struct sbctl;

/* Init's pid namespace, as stat(2) of /proc/PID/ns/pid sees it (false when
 * it cannot): taken before init makes itself non-dumpable, after which an
 * unprivileged warden could no longer read it. */
bool sbctl_pidns(pid_t init_pid, struct stat *st);

/* init_pidfd/init_pid: sandbox init (host pid; the pidfd is borrowed and
 * must outlive the sbctl); init_sock: the supervisor's end of init's
 * socket, on which init answers a freeze or resume by signals (borrowed,
 * likewise); pidns: its pid namespace (sbctl_pidns), NULL when unknown (a
 * freeze by signals is then refused: which processes are the sandbox's
 * could not be told); cgroup_dir: the session's cgroup
 * v2 directory or NULL (copied; used only when init is in it at the first
 * action). p: the policy (its `freeze timeout`; borrowed). log: where the
 * actions are recorded (borrowed). */
struct sbctl *sbctl_new(int init_pidfd, pid_t init_pid, int init_sock, const struct stat *pidns,
			const char *cgroup_dir, const struct policy *p, struct audit *log);
/* A sandbox frozen by signals is not let go on: it is being killed or has
 * ended by then. */
void sbctl_free(struct sbctl *c);

/* A freeze asked for. */
struct freeze_req {
	const char *by;          /* "control" or "detector" */
	long uid;                /* the requester's, -1 when none */
	const char *reason;      /* or NULL */
	/* a human can decide: one asked for it, or one can be told (a
	 * terminal, a reviewer, a webhook); with `freeze timeout auto`, a
	 * freeze nobody can decide is killed at once (on the loop's next turn) */
	bool attended;
};

/* Stop every process of the sandbox, and arm its timeout. -1 with e set
 * when the sandbox is frozen already, has ended, or cannot be stopped. */
int sbctl_freeze(struct sbctl *c, const struct freeze_req *r, struct werr *e);
/* Let a frozen sandbox go on. -1 with e set when it is not frozen. */
int sbctl_resume(struct sbctl *c, const char *by, long uid, struct werr *e);
/* End the sandbox, frozen or not: the session ends as init's end is seen.
 * -1 with e set when it has ended already or the kernel refused. */
int sbctl_kill(struct sbctl *c, const char *by, long uid, const char *reason, struct werr *e);
/* The command stopped by sig with job control (jobctl.c: warden is about
 * to stop itself, Ctrl-Z): every other process of the sandbox stopped too
 * (by the cgroup or init's signals, as a freeze, but with no timeout: a
 * suspension lasts until `fg`), so that nothing of the sandbox runs while
 * warden does not watch. A freeze by request that holds it already, or
 * comes meanwhile, keeps its own timeout. An `action` event "suspend" by
 * "terminal". -1 with e set when it cannot be done: warden must then not
 * stop. */
int sbctl_suspend(struct sbctl *c, int sig, struct werr *e);
/* Undo sbctl_suspend (warden continued in its terminal's foreground:
 * `fg`); an `action` event "continue". A freeze by request made meanwhile
 * still holds the sandbox. -1 with e set when it could not be let go on. */
int sbctl_unsuspend(struct sbctl *c, struct werr *e);
/* The sandbox stopped: frozen by request or suspended (or both). */
/* Init found a process of the sandbox running while held by signals
 * (INIT_MSG_ESCAPED): the sandbox killed (an `action` event "kill" by
 * "escape"), the user told. */
void sbctl_escaped(struct sbctl *c);
bool sbctl_frozen(const struct sbctl *c);
bool sbctl_suspended(const struct sbctl *c);
/* The seconds before a frozen sandbox is killed (rounded up), or -1 when it
 * is not frozen. */
long sbctl_freeze_left(const struct sbctl *c);
/* The freezes' timeout watched by l; -1 with e naming it when l cannot take
 * it. */
int sbctl_watch(struct loop *l, struct sbctl *c, struct werr *e);
