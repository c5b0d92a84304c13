/* exectrace.h - what an exec really ran, seen at the moment it happens: the
 * supervisor attaches to the thread (PTRACE_SEIZE with PTRACE_O_TRACEEXEC)
 * before it lets its execve continue, and the kernel stops the thread
 * right after the new program is loaded, before its first instruction. The
 * exec's file is then fixed (/proc/PID/exe; the kernel denies writes to a
 * running executable), so comparing it with what was checked closes the
 * window in which a path could be swapped between the check and the exec.
 * An exec that fails instead stops at the interrupt asked for right after
 * the answer (or at the next signal), and is let go. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

struct tracer;

enum trace_end {
	TRACE_EXECED, /* stopped after the exec: tracer_release decides */
	TRACE_FAILED, /* the exec returned an error: let go already */
	TRACE_GONE,   /* the thread ended (killed) before either */
};

/* Called by tracer_poll for each traced exec that ended. For TRACE_EXECED,
 * exe is an O_PATH fd of what runs (the callback's to close; -1 when it
 * could not be had) and pid the process as it is now (a thread that
 * execs takes its process's id). */
typedef void (*trace_cb)(void *ctx, enum trace_end end, pid_t pid, int exe, void *arg);

struct tracer *tracer_new(void);
void tracer_free(struct tracer *t);
/* Attach to thread tid of process tgid for its pending exec; ctx comes back
 * with its end. -1 with errno (ESRCH: gone; EPERM: not allowed here). */
int tracer_attach(struct tracer *t, pid_t tid, pid_t tgid, void *ctx);
/* The exec was answered: have it stop once the call returns either way. */
void tracer_armed(struct tracer *t, pid_t tid);
/* Forget tid without waiting for it (the exec was refused after all). */
void tracer_cancel(struct tracer *t, pid_t tid);
/* Collect the traced threads whose exec ended (on SIGCHLD). */
void tracer_poll(struct tracer *t, trace_cb cb, void *arg);
/* After TRACE_EXECED: let the new program run, or kill it before it does. */
void tracer_release(struct tracer *t, pid_t pid, bool kill);
/* Threads attached and not yet collected (a killed one until reaped). */
unsigned tracer_count(const struct tracer *t);
