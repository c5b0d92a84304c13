/* child.h - sandbox init as the supervisor holds it (its host pid and
 * pidfd), and its end: reaped for its exit status, or killed and reaped.
 * Launch makes it (launch.h); the session may hold it past the run
 * (supervisor_cfg.init_left) and end it before its cgroups go. */
#pragma once
#include <sys/types.h>

struct child {
	pid_t pid;   /* 0: reaped (or never started) */
	int pidfd;   /* -1: none */
};
#define CHILD_NONE ((struct child){ .pid = 0, .pidfd = -1 })

/* Init waited for and reaped (c->pid then 0; its pidfd kept): its exit
 * status, 128 + the signal that killed it, or 125 when it cannot be
 * waited for. */
int child_reap(struct child *c);

/* Init killed if still running, reaped, its pidfd closed (c then
 * CHILD_NONE; nothing when it is already). */
void child_end(struct child *c);
