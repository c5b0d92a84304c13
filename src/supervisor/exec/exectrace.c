/* exectrace.c - attaching to a thread for the length of its exec
 * (exectrace.h). Each traced exec is one entry: attached before the exec
 * is answered, asked to stop right after (PTRACE_INTERRUPT: the stop comes
 * once the call returns, after the exec stop when it succeeds), collected
 * with waitpid when SIGCHLD says something changed, and detached (or
 * killed, then reaped, so that its parent learns of its end). A thread that
 * execs in a process of several takes the process's id before the exec
 * stop, so the process id is waited for too. */
#include "exectrace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/util.h"

enum state { ATTACHED, STOPPED, KILLED };

struct entry {
	pid_t tid, tgid, now; /* now: the id it stopped under */
	void *ctx;            /* NULL: cancelled, nobody waits for its end */
	enum state state;
};

struct tracer {
	struct entry *e;
	size_t n, cap;
};

struct tracer *tracer_new(void)
{
	return xcalloc(1, sizeof(struct tracer));
}

static void drop(struct tracer *t, size_t i)
{
	t->e[i] = t->e[--t->n];
}

void tracer_free(struct tracer *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].state == STOPPED)
			ptrace(PTRACE_DETACH, t->e[i].now, NULL, NULL);
	free(t->e);
	free(t);
}

int tracer_attach(struct tracer *t, pid_t tid, pid_t tgid, void *ctx)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0)
		return -1;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->e = xrealloc(t->e, t->cap * sizeof *t->e);
	}
	t->e[t->n++] = (struct entry){ .tid = tid, .tgid = tgid > 0 ? tgid : tid, .now = tid,
				       .ctx = ctx, .state = ATTACHED };
	return 0;
}

static struct entry *find(struct tracer *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].tid == tid && t->e[i].state == ATTACHED)
			return &t->e[i];
	return NULL;
}

void tracer_armed(struct tracer *t, pid_t tid)
{
	if (find(t, tid) && !getenv("NOINT"))
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
}

void tracer_cancel(struct tracer *t, pid_t tid)
{
	struct entry *e = find(t, tid);
	if (!e)
		return;
	e->ctx = NULL;
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
}

/* A status of the entry's thread, by its own id or its process's: the
 * id that reported (0: nothing yet, -1: neither is ours any more). */
static pid_t wait_entry(const struct entry *e, int *st)
{
	pid_t w = waitpid(e->tid, st, WNOHANG | __WALL);
	if (w > 0)
		return w;
	int err = w < 0 ? errno : 0;
	if (e->tgid != e->tid) {
		pid_t g = waitpid(e->tgid, st, WNOHANG | __WALL);
		if (g > 0)
			return g;
		if (g == 0)
			return 0;
	}
	return err == ECHILD ? -1 : 0;
}

struct ended {
	void *ctx;
	enum trace_end end;
	pid_t pid;
	int exe;
};

void tracer_poll(struct tracer *t, trace_cb cb, void *arg)
{
	/* the callbacks run after the walk: they release entries */
	struct ended *out = t->n ? xcalloc(t->n, sizeof *out) : NULL;
	size_t nout = 0;
	for (size_t i = 0; i < t->n;) {
		struct entry *e = &t->e[i];
		if (e->state == STOPPED) {
			i++;
			continue;
		}
		int st = 0;
		pid_t w = wait_entry(e, &st);
		if (w == 0) {
			i++;
			continue;
		}
		void *ctx = e->ctx;
		bool killed = e->state == KILLED;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			drop(t, i);
			if (ctx && !killed)
				out[nout++] = (struct ended){ ctx, TRACE_GONE, w, -1 };
			continue;
		}
		if (!WIFSTOPPED(st)) {
			i++;
			continue;
		}
		if (killed) {
			/* a stop on its way to death: let it go on dying */
			ptrace(PTRACE_CONT, w, NULL, NULL);
			i++;
			continue;
		}
		bool execed = (st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8));
		if (execed && ctx) {
			e->state = STOPPED;
			e->now = w;
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/exe", (int)w);
			out[nout++] = (struct ended){ ctx, TRACE_EXECED, w, open(p, O_PATH | O_CLOEXEC) };
			i++;
			continue;
		}
		/* The interrupt after a failed exec, a group stop, or a signal on
		 * its way in: let go, handing the signal back. */
		int sig = (st >> 16) || execed ? 0 : WSTOPSIG(st);
		ptrace(PTRACE_DETACH, w, NULL, (void *)(long)sig);
		drop(t, i);
		if (ctx)
			out[nout++] = (struct ended){ ctx, TRACE_FAILED, w, -1 };
	}
	for (size_t k = 0; k < nout; k++)
		cb(out[k].ctx, out[k].end, out[k].pid, out[k].exe, arg);
	free(out);
}

void tracer_release(struct tracer *t, pid_t pid, bool kill_it)
{
	for (size_t i = 0; i < t->n; i++) {
		struct entry *e = &t->e[i];
		if (e->state != STOPPED || e->now != pid)
			continue;
		if (!kill_it) {
			if (ptrace(PTRACE_DETACH, pid, NULL, NULL) == 0 || errno != ESRCH) {
				drop(t, i);
				return;
			}
			/* Not in its stop any more: killed meanwhile (the sandbox
			 * ended, `warden kill`). Still traced, so ours to reap:
			 * until then its parent cannot, and a dying pid namespace
			 * waits for it forever. Reaped now, or by a later poll. */
			e->state = KILLED;
			e->ctx = NULL;
			e->tid = e->tgid = pid;
			int st;
			if (waitpid(pid, &st, WNOHANG | __WALL) == pid)
				drop(t, i);
			return;
		}
		/* killed in its stop, before its first instruction; reaped by a
		 * later poll, so that its parent is told */
		kill(pid, SIGKILL);
		e->state = KILLED;
		e->ctx = NULL;
		e->tid = e->tgid = pid;
		return;
	}
}

unsigned tracer_count(const struct tracer *t)
{
	return (unsigned)t->n;
}
