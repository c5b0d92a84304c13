/* nshelper.c - the first steps of a helper process the supervisor forks
 * into a running sandbox's namespaces (the re-masker, remask.c; the
 * published ports' dialer, src/supervisor/publish_dial.c; the reader of
 * execute-only files, src/supervisor/exec/nsread.c): dies with the
 * supervisor, not dumpable, named, in the sandbox's user namespace and
 * perhaps one other, with only its socket (at fd 3) and /dev/null on 0-2.
 * One copy, so the helpers cannot drift apart. */
#include "sandbox.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void nshelper_enter(const char *name, int userns, int ns, int nstype, int sock, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1); /* the supervisor is gone already */
	prctl(PR_SET_DUMPABLE, 0);
	prctl(PR_SET_NAME, name);
	/* into the sandbox: its user namespace (every capability there),
	 * then the one the helper works in (ns -1: none, the user namespace
	 * is all it needs) */
	if (setns(userns, CLONE_NEWUSER) < 0 || (ns >= 0 && setns(ns, nstype) < 0))
		_exit(1);
	/* only its socket, at 3 */
	if (dup2(sock, 3) < 0)
		_exit(1);
	syscall(SYS_close_range, 4, ~0U, 0);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
	}
}
