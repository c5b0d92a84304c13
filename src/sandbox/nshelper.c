/* nshelper.c - the first steps of a helper process the supervisor forks
 * into a running sandbox's namespaces (the re-masker, remask.c; the
 * published ports' dialer, src/supervisor/publish_dial.c; the reader of
 * execute-only files, src/supervisor/exec/nsread.c): dies with the
 * supervisor, not dumpable, named, in the sandbox's user namespace and
 * perhaps one other, with only its socket (at fd 3) and /dev/null on 0-2.
 * One copy, so the helpers cannot drift apart. Its system calls are
 * rawsys's: the file reads' helper runs it on the supervisor's memory
 * (src/supervisor/fanread.c). */
#include "sandbox.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/rawsys.h"

void nshelper_enter(const char *name, int userns, int ns, int nstype, int sock, pid_t parent)
{
	rawsys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
	if (rawsys(SYS_getppid) != parent)
		rawsys_exit(1); /* the supervisor is gone already */
	rawsys(SYS_prctl, PR_SET_DUMPABLE, 0);
	rawsys(SYS_prctl, PR_SET_NAME, name);
	/* into the sandbox: its user namespace (every capability there),
	 * then the one the helper works in (ns -1: none, the user namespace
	 * is all it needs) */
	if (rawsys(SYS_setns, userns, CLONE_NEWUSER) < 0 ||
	    (ns >= 0 && rawsys(SYS_setns, ns, nstype) < 0))
		rawsys_exit(1);
	/* only its socket, at 3 */
	if (sock != 3 && rawsys(SYS_dup3, sock, 3, 0) < 0)
		rawsys_exit(1);
	rawsys(SYS_close_range, 4, ~0U, 0);
	long devnull = rawsys(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; devnull >= 0 && i < 3; i++)
		if (devnull != i)
			rawsys(SYS_dup3, devnull, i, 0);
}
