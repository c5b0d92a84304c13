/* remask.c - the re-masker: a process the supervisor starts the first time
 * a workspace path must be masked or protected again during a session
 * (wswatch.c asks), which joins the sandbox's user and mount namespaces and
 * binds the mask or the read-only copy onto what is there now.
 *
 * Why: masks and protections are bind mounts on the files there at start,
 * and the kernel detaches a mount whose name is replaced (an editor saving
 * .env by rename, git rewriting .git/config). The supervisor watches the
 * workspace on the host and sends the path; this process binds onto it
 * (mounts_rebind, wsmounts.c: opened beneath the workspace, no symlink followed).
 *
 * Started lazily, so that a session in which the host changes nothing pays
 * nothing at start. Forked by the supervisor, it stays in the host's pid
 * namespace: the agent cannot see, signal or trace it. It holds only its
 * socket and the workspace, is non-dumpable, and dies with the supervisor
 * (or when its socket closes). In the sandbox's user namespace, which the
 * supervisor's user owns, it holds every capability there, as the
 * sandbox's init did before it dropped them.
 *
 * The protocol: one SEQPACKET message per request, struct remask_req; one
 * int answer each (0, or the errno of the failure). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static __attribute__((noreturn)) void serve(int userns, int mntns, const char *workspace, int sock,
					    pid_t parent)
{
	nshelper_enter("warden-remask", userns, mntns, CLONE_NEWNS, sock, parent);
	int ws = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0)
		_exit(1);
	for (;;) {
		struct remask_req req;
		ssize_t n = recv(3, &req, sizeof req, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof req)
			_exit(0); /* the supervisor is gone, or speaks nonsense */
		req.rel[sizeof req.rel - 1] = '\0';
		struct werr e = { 0 };
		int r = 0;
		if (mounts_rebind(ws, req.rel, req.kind == REMASK_MASK, &e) < 0)
			r = e.errnum ? e.errnum : EIO;
		if (send(3, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r)
			_exit(0);
	}
}

pid_t remask_spawn(int userns, int mntns, const char *workspace, int *sock, struct werr *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "re-masker: socketpair");
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return werr_fork(e, errno, "re-masker: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(userns, mntns, workspace, sv[1], parent);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}
