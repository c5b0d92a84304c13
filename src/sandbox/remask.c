/* remask.c - the re-masker: a process of sandbox init's, forked once the
 * sandbox's mounts are built and before init drops its capabilities, that
 * masks or protects a workspace path again when the supervisor asks.
 *
 * Why: masks and protections are bind mounts on the files there at start,
 * and the kernel detaches a mount whose name is replaced (an editor saving
 * .env by rename, git rewriting .git/config). The supervisor watches the
 * workspace on the host and sends the path; this process, the one left in
 * the sandbox that may still mount, binds the mask or the read-only copy
 * onto what is there now (mounts_rebind: opened beneath the workspace, no
 * symlink followed). It runs no code of the agent's, holds only its socket
 * and the workspace, is non-dumpable, runs as the namespace's root (the
 * agent, uid 1000 without capabilities, can neither signal nor trace it)
 * and dies with init. Its end of the socket is one of the fds of init's
 * READY message.
 *
 * The protocol: one SEQPACKET message per request, struct remask_req; one
 * int answer each (0, or the errno of the failure). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static __attribute__((noreturn)) void serve(const struct sandbox_spec *s, int sock)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0);
	prctl(PR_SET_NAME, "warden-remask");
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
	int ws = open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
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

int remask_start(const struct sandbox_spec *s, int *sup, struct werr *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "re-masker: socketpair");
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return werr_errno(e, "re-masker: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(s, sv[1]);
	}
	close(sv[1]);
	*sup = sv[0];
	return 0;
}
