/* jobctl.h - Ctrl-Z in a session with job control (sandbox_spec.
 * job_control: the user's keys relayed to the command's pty): the whole
 * session suspended and continued as one job of the user's shell. See
 * jobctl.c. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"
#include "../common/loop.h"
#include "freeze.h"
#include "term.h"

struct control;

struct jobctl {
	struct term *term;  /* the user's terminal (borrowed) */
	struct sbctl *sb;   /* the sandbox's kill switch (borrowed) */
	int init_pidfd;     /* sandbox init's (borrowed) */
	const struct control *ctl; /* the control socket, marked while warden is stopped
				    * (borrowed; NULL: none) */
	bool waiting;       /* suspended, warden continued in the background: until `fg` */
	bool raw;           /* the user's terminal was raw before */
	int timer;          /* while waiting, whether warden is in the foreground yet
			     * (a shell's `fg` of a job running in the background
			     * sends no SIGCONT): -1 until jobctl_watch */
};
#define JOBCTL_NONE ((struct jobctl){ .timer = -1 })

/* Init reported the command stopped by sig (INIT_MSG_STOPPED): the rest of
 * the sandbox stopped, the user's terminal given back, warden stopped with
 * its own process group (the user's shell takes over: "Stopped"); returns
 * once warden is continued, having continued the session when that was in
 * its terminal's foreground. When the sandbox cannot be stopped whole,
 * warden does not stop: the command is continued, and the user told. */
void jobctl_stopped(struct jobctl *j, int sig);
/* A SIGCONT of warden's (read on the signals' fd): a suspended session
 * continued if warden is now in its terminal's foreground. */
void jobctl_cont(struct jobctl *j);
/* The foreground's check watched by l (a timer, armed only while
 * waiting); -1 with e naming it when l cannot take it. */
int jobctl_watch(struct loop *l, struct jobctl *j, struct werr *e);
/* Its timer closed. */
void jobctl_end(struct jobctl *j);
