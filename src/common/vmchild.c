/* vmchild.c - a child process on its parent's memory (vmchild.h). */
#include "vmchild.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawsys.h"

#define STACK_SIZE (128 * 1024)
#define STACK_GUARD 4096
#define ARG_MAX_LEN 1024

int vmchild_reap(struct vmchild *c, bool kill)
{
	if (c->pidfd < 0)
		return -1;
	if (kill)
		(void)syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r;
	while ((r = waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED)) < 0 && errno == EINTR)
		;
	close(c->pidfd);
	c->pidfd = -1;
	if (r < 0)
		return -1;
	return si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : (si.si_status & 0x7f);
}

#if RAWSYS_NATIVE
static int stack_ready(struct vmchild *c, const char *what, struct werr *e)
{
	if (c->stack)
		return 0;
	char *p = mmap(NULL, STACK_SIZE + STACK_GUARD, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return werr_errno(e, "%s: its stack", what);
	if (mprotect(p, STACK_GUARD, PROT_NONE) < 0) {
		int err = errno;
		munmap(p, STACK_SIZE + STACK_GUARD);
		return werr_set(e, err, "%s: its stack's guard page", what);
	}
	c->stack = p + STACK_GUARD;
	return 0;
}

pid_t vmchild_start(struct vmchild *c, int (*fn)(void *), const void *arg, size_t len,
		    const char *what, struct werr *e)
{
	if (len > ARG_MAX_LEN)
		return werr_set(e, EINVAL, "%s: its argument (%zu bytes) is over %d", what, len,
				ARG_MAX_LEN);
	if (c->pidfd >= 0)
		return werr_set(e, EBUSY, "%s: its stack is in use", what);
	if (stack_ready(c, what, e) < 0)
		return -1;
	/* the argument at the top of its stack, where it reads it (the
	 * caller's frame may be gone by then); the stack below it */
	void *mine = (void *)((uintptr_t)(c->stack + STACK_SIZE - len) & ~(uintptr_t)63);
	memcpy(mine, arg, len);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pidfd = -1;
	pid_t pid = clone(fn, mine, CLONE_VM | CLONE_PIDFD | SIGCHLD, mine, &pidfd);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		return werr_fork(e, err, "%s: starting it (clone)", what);
	c->pidfd = pidfd;
	return pid;
}
#else
/* Where rawsys is libc's: a fork, whose errno is its own. _Fork: the
 * child makes system calls only, so libc's fork adds nothing it needs. */
pid_t vmchild_start(struct vmchild *c, int (*fn)(void *), const void *arg, size_t len,
		    const char *what, struct werr *e)
{
	(void)len;
	if (c->pidfd >= 0)
		return werr_set(e, EBUSY, "%s: one runs already", what);
	pid_t pid = _Fork();
	if (pid < 0)
		return werr_fork(e, errno, "%s: fork", what);
	if (pid == 0)
		_exit(fn((void *)arg)); /* its copy of the caller's memory */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		int err = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return werr_set(e, err, "%s: pidfd_open", what);
	}
	c->pidfd = pidfd;
	return pid;
}
#endif
