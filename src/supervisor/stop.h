/* stop.h - passing warden's signals to the sandbox, and ending it when a
 * stopping signal is not obeyed in time (see stop.c). */
#pragma once
#include <stdbool.h>
#include <sys/signalfd.h>

#include "../audit/audit.h"
#include "../common/loop.h"

struct sbctl;

struct stopper {
	int pidfd;          /* sandbox init (borrowed) */
	struct audit *log;  /* borrowed */
	unsigned grace_s;   /* the policy's `signal grace` */
	int timerfd;        /* readable when the grace period is over */
	bool started;       /* a stopping signal came: the grace period runs */
	bool killed;        /* warden killed the sandbox */
	struct sbctl *ctl;  /* the kill switch (freeze.h), or NULL: a sandbox frozen there
			       is killed through it (borrowed) */
};

/* Pass signals to init (pidfd), and kill it grace_s seconds after the first
 * stopping signal. -1 with e filled when the timer cannot be made. */
int stopper_init(struct stopper *st, int pidfd, struct audit *log, unsigned grace_s,
		 struct werr *e);

/* A signal warden received that the sandbox gets (not SIGCHLD nor
 * SIGWINCH): a `signal` event, the signal to init, which passes it on, and
 * for SIGINT, SIGTERM and SIGHUP the start of the grace period (at grace 0,
 * the kill). A stopping signal ends at once a sandbox that is frozen (it
 * cannot obey: an `action` kill by "signal", the signal its reason), and
 * so does a second stopping signal, frozen or not (a `kill` event). */
void stopper_signal(struct stopper *st, const struct signalfd_siginfo *si);

/* A stopping signal before init was ready (the user gives up on a start
 * that does not end: a mount on a server that does not answer): a `signal`
 * event, the user told, then init killed at once (a `kill` event): nothing
 * of the command has run, so there is nothing to give a grace period to. */
void stopper_before_start(struct stopper *st, const struct signalfd_siginfo *si);

/* Kill the sandbox now, why in the `kill` event (a service of the loop that
 * broke: nothing may run on without it), and wait (2 s at most) until init
 * and its whole pid namespace are gone, so that nothing in it sees the
 * services go. */
void stopper_kill(struct stopper *st, const char *why);

/* The grace period's timer watched by l; -1 with e naming it when l cannot
 * take it. When it fires and init still runs: a `kill` event and SIGKILL to
 * init, which ends the pid namespace and all in it (frozen meanwhile: the
 * kill switch's kill, an `action` event). */
int stopper_watch(struct loop *l, struct stopper *st, struct werr *e);

void stopper_close(struct stopper *st);
