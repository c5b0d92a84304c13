/* lateclose.c - fds closed by a process of their own, or synced and
 * closed by the caller at its wait, their writeback begun at once
 * (lateclose.h). */
#include "lateclose.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawsys.h"

/* What the closing process closes last, sorted (the rest it closes at
 * once), and only once the caller has closed its own copies (its end of
 * the gate, a pipe, closed: so the closer's close is the last reference,
 * the one that waits, never the caller's). It runs on the caller's memory:
 * it reads this, makes rawsys's system calls on the fds it holds (errno,
 * the caller's, is never written, whatever they answer) and ends; no libc
 * state is touched. */
struct closer_arg {
	int fd[LATE_CLOSE_MAX];
	size_t n;
	int gate;   /* the pipe's read end: end of file once the caller let go */
	int gate_w; /* its write end, the closer's copy closed first of all */
};

#define CLOSER_STACK (64 * 1024)
#define CLOSERS 4
/* Closing processes that may run at once (sessions back to back in one
 * process: `warden check`), each with its stack and its tid word, which the
 * kernel clears when it is gone (CLONE_CHILD_CLEARTID); 0: free. */
static struct closer_slot {
	char *stack;
	pid_t tid;
	struct closer_arg arg;
} closers[CLOSERS];

static int closer(void *p)
{
	const struct closer_arg *a = p;
	/* by its number, whatever happens to the ranges below: a copy of it
	 * kept here would hold the gate shut for ever */
	rawsys(SYS_close, a->gate_w);
	/* out of warden's working directory (the workspace, mostly): a
	 * process's cwd holds its mount, and an unmount right after warden
	 * ends would say busy while this one waits on its closes */
	rawsys(SYS_chdir, "/");
	unsigned from = 0;
	for (size_t i = 0; i <= a->n; i++) { /* fd[] sorted, the gate above them all */
		unsigned keep = i < a->n ? (unsigned)a->fd[i] : (unsigned)a->gate;
		if (keep > from)
			rawsys(SYS_close_range, from, keep - 1, 0);
		from = keep + 1;
	}
	rawsys(SYS_close_range, from, ~0U, 0);
	char b;
	rawsys(SYS_read, a->gate, &b, 1); /* end of file: the caller's copies are closed */
	for (size_t i = 0; i < a->n; i++)
		rawsys(SYS_close, a->fd[i]);
	rawsys(SYS_close, a->gate);
	rawsys(SYS_exit, 0);
	return 0;
}

/* Hand the unsynced fds to a closing process; false when none could be
 * made (every slot's still runs, or clone failed): the caller closes them. */
static bool closer_start(struct late_close *l)
{
	struct closer_arg a = { .n = 0 };
	for (size_t i = 0; i < l->n; i++)
		if (!l->sync[i])
			a.fd[a.n++] = l->fd[i];
	if (!a.n)
		return true;
	struct closer_slot *c = NULL;
	for (size_t i = 0; i < CLOSERS && !c; i++)
		if (__atomic_load_n(&closers[i].tid, __ATOMIC_ACQUIRE) == 0)
			c = &closers[i];
	if (!c)
		return false;
	if (!c->stack) {
		void *s = mmap(NULL, CLOSER_STACK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (s == MAP_FAILED)
			return false;
		c->stack = s;
	}
	for (size_t i = 1; i < a.n; i++) /* sorted, for the closes of the rest */
		for (size_t j = i; j > 0 && a.fd[j - 1] > a.fd[j]; j--) {
			int t = a.fd[j];
			a.fd[j] = a.fd[j - 1];
			a.fd[j - 1] = t;
		}
	int saved = errno;
	int gate[2];
	if (pipe2(gate, O_CLOEXEC) < 0) {
		errno = saved;
		return false;
	}
	/* the gate's read end above every fd listed (the closer keeps it) */
	int rd = gate[0];
	if (rd < a.fd[a.n - 1]) {
		rd = fcntl(gate[0], F_DUPFD_CLOEXEC, a.fd[a.n - 1] + 1);
		close(gate[0]);
	}
	if (rd < 0) {
		close(gate[1]);
		errno = saved;
		return false;
	}
	a.gate = rd;
	a.gate_w = gate[1];
	c->arg = a;
	c->tid = -1; /* taken until the kernel writes the tid and clears it */
	/* every signal blocked in it: a handler of warden's would run on the
	 * memory it shares (SIGKILL still ends it) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = clone(closer, c->stack + CLOSER_STACK,
			  CLONE_VM | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID, &c->arg, NULL, NULL,
			  &c->tid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		c->tid = 0;
		close(rd);
		close(gate[1]);
		errno = saved;
		return false;
	}
	/* no exit signal: it is reaped by whoever adopts it when warden ends,
	 * or here the next time */
	for (size_t i = 0; i < l->n; i++)
		if (!l->sync[i])
			close(l->fd[i]); /* the last reference is the closer's */
	close(rd);
	close(gate[1]); /* the gate opens: the closer closes its copies now */
	errno = saved;
	return true;
}

/* a closing process made before, gone by now: reaped */
static void closer_reap(void)
{
	int saved = errno;
	while (waitpid(-1, NULL, __WCLONE | WNOHANG) > 0)
		;
	errno = saved;
}

static void add(struct late_close *l, int fd, bool sync)
{
	if (fd < 0)
		return;
	if (l->started || l->n == LATE_CLOSE_MAX) {
		if (sync)
			fsync(fd);
		close(fd);
		return;
	}
	/* its pages on their way to the disk while the caller goes on: the
	 * fsync at the wait then waits for little more than the inode */
	if (sync)
		(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	l->sync[l->n] = sync;
	l->fd[l->n++] = fd;
}

void late_close_add(struct late_close *l, int fd)
{
	add(l, fd, false);
}

void late_close_add_synced(struct late_close *l, int fd)
{
	add(l, fd, true);
}

void late_close_start(struct late_close *l)
{
	if (l->started || !l->n)
		return;
	l->started = true;
	closer_reap();
	if (!closer_start(l))
		return; /* the waiter closes them all */
	/* what is left for the waiter: the synced fds */
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->sync[i]) {
			l->fd[k] = l->fd[i];
			l->sync[k++] = true;
		}
	l->n = k;
}

void late_close_wait(struct late_close *l)
{
	late_close_start(l);
	for (size_t i = 0; i < l->n; i++) {
		if (l->sync[i])
			fsync(l->fd[i]);
		close(l->fd[i]);
	}
	l->n = 0;
}
