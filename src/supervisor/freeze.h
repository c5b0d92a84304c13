/* freeze.h - the sandbox stopped, let go on, or ended on request: the
 * kill switch that `warden freeze|resume|kill` (the control socket) and the
 * detector use. See freeze.c for how.
 *
 * Each action is an `action` event (by, uid, reason, how, processes). Every
 * call is quick: no sleep, no waiting for the kernel to report the sandbox
 * stopped (SIGSTOP and cgroup.freeze take effect as each process next
 * runs). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/err.h"

struct sbctl;

/* init_pidfd/init_pid: sandbox init (host pid; the pidfd is borrowed and
 * must outlive the sbctl); cgroup_dir: the session's cgroup v2 directory or
 * NULL (copied; used only when init is in it at the first action). log:
 * where the actions are recorded (borrowed). Make it before init makes
 * itself non-dumpable (an unprivileged warden could not read its pid
 * namespace after). */
struct sbctl *sbctl_new(int init_pidfd, pid_t init_pid, const char *cgroup_dir, struct audit *log);
/* A sandbox frozen by signals is not let go on: it is being killed or has
 * ended by then. */
void sbctl_free(struct sbctl *c);

/* Stop every process of the sandbox. by: "control" or "detector"; uid: the
 * requester's, -1 when none; reason may be NULL. -1 with e set when the
 * sandbox is frozen already, has ended, or cannot be stopped. */
int sbctl_freeze(struct sbctl *c, const char *by, long uid, const char *reason, struct werr *e);
/* Let a frozen sandbox go on. -1 with e set when it is not frozen. */
int sbctl_resume(struct sbctl *c, const char *by, long uid, struct werr *e);
/* End the sandbox, frozen or not: the session ends as init's end is seen.
 * -1 with e set when it has ended already or the kernel refused. */
int sbctl_kill(struct sbctl *c, const char *by, long uid, const char *reason, struct werr *e);
bool sbctl_frozen(const struct sbctl *c);
