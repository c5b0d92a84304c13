/* child.c - sandbox init's end as the supervisor sees it (child.h). */
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "../common/util.h"

static int exit_status_of(int pidfd)
{
	siginfo_t si = { 0 };
	while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return 125;
	if (si.si_code == CLD_EXITED)
		return si.si_status;
	return 128 + si.si_status;
}

int child_reap(struct child *c)
{
	c->pid = 0;
	return exit_status_of(c->pidfd);
}

void child_end(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		child_reap(c);
	}
	closep(&c->pidfd);
}
