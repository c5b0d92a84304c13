/* stop.c - the sandbox told to stop. SIGINT, SIGTERM and SIGHUP sent to
 * warden go to sandbox init, which passes them to every process in the
 * sandbox (kill(-1)); other forwarded signals go to the command alone.
 * Each is a `signal` event. The first stopping signal starts the grace
 * period (the policy's `signal grace`, 10 s by default): when it ends with
 * init still running (init ends as soon as the command does, so something
 * ignored or outlived the signal), warden sends init SIGKILL, which kills
 * everything in its pid namespace, and records a `kill` event. A second
 * stopping signal (the user insists: a second Ctrl-C) does not wait for the
 * period: the kill at once. A frozen sandbox (freeze.h) cannot obey a
 * signal, and nobody waits on a sandbox the user asked to stop: the first
 * stopping signal to a frozen one kills it at once through the kill switch,
 * and so does the end of the grace period when it was frozen meanwhile.
 * Nor on a start that does not end: a stopping signal before init is ready
 * kills it at once (stopper_before_start; launch.c waits interruptibly). */
#include "stop.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "freeze.h"

/* How long stopper_kill waits for the sandbox to be gone. */
#define KILL_WAIT_MS 2000

int stopper_init(struct stopper *st, int pidfd, struct audit *log, unsigned grace_s,
		 struct werr *e)
{
	*st = (struct stopper){ .pidfd = pidfd, .log = log, .grace_s = grace_s };
	st->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (st->timerfd < 0)
		return werr_errno(e, "supervisor: timerfd");
	return 0;
}

void stopper_close(struct stopper *st)
{
	if (st->timerfd >= 0)
		close(st->timerfd);
	st->timerfd = -1;
}

/* "SIGTERM", or the number for a signal without a name. */
static void signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "%d", sig);
}

/* Init has not ended (or its end was already collected: pidfd gone). */
static bool init_running(const struct stopper *st)
{
	siginfo_t si = { 0 };
	if (waitid((idtype_t)P_PIDFD, (id_t)st->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return false;
	return si.si_pid == 0;
}

/* The kill, why in the event: a frozen sandbox through the kill switch (an
 * `action` by "signal"), else SIGKILL to init (a `kill` event). */
static void kill_sandbox(struct stopper *st, const char *why)
{
	if (st->killed || !init_running(st))
		return;
	st->killed = true;
	if (sbctl_frozen(st->ctl)) {
		wnote("killing the frozen sandbox: %s", why);
		if (sbctl_kill(st->ctl, "signal", -1, why, NULL) == 0)
			return;
	}
	audit_emit_event(st->log, ev_kill(&(struct ev_kill){ .reason = why, .grace_s = st->grace_s }),
			 NULL);
	syscall(SYS_pidfd_send_signal, st->pidfd, SIGKILL, NULL, 0);
}

/* The `signal` event: sig's name into name. */
static void signal_event(struct stopper *st, const struct signalfd_siginfo *si, char *name,
			 size_t len)
{
	int sig = (int)si->ssi_signo;
	signal_name(sig, name, len);
	audit_emit_event(st->log, ev_signal(&(struct ev_signal){
		.signal = name, .sandbox = sandbox_signal_stops(sig),
		.sender_pid = (long)si->ssi_pid, .grace_s = st->grace_s }), NULL);
}

void stopper_kill(struct stopper *st, const char *why)
{
	kill_sandbox(st, why);
	/* until init is gone, and with it every process of its pid namespace
	 * (bounded: one in the kernel's uninterruptible wait ends later) */
	struct pollfd p = { .fd = st->pidfd, .events = POLLIN };
	while (poll(&p, 1, KILL_WAIT_MS) < 0 && errno == EINTR)
		;
}

void stopper_before_start(struct stopper *st, const struct signalfd_siginfo *si)
{
	char name[32], why[96];
	signal_event(st, si, name, sizeof name);
	wnote("%s while the sandbox was being built: stopped before the command started", name);
	snprintf(why, sizeof why, "%s before the sandbox was ready", name);
	kill_sandbox(st, why);
}

void stopper_signal(struct stopper *st, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	bool stops = sandbox_signal_stops(sig);
	char name[32];
	signal_event(st, si, name, sizeof name);
	syscall(SYS_pidfd_send_signal, st->pidfd, sig, NULL, 0);
	if (!stops)
		return;
	char why[64];
	if (sbctl_frozen(st->ctl)) {
		snprintf(why, sizeof why, "%s while frozen", name);
		kill_sandbox(st, why);
		return;
	}
	if (st->started) {
		snprintf(why, sizeof why, "a second stopping signal (%s)", name);
		kill_sandbox(st, why);
		return;
	}
	st->started = true;
	if (st->grace_s == 0) {
		kill_sandbox(st, "grace period over");
		return;
	}
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)st->grace_s } };
	if (timerfd_settime(st->timerfd, 0, &its, NULL) < 0)
		kill_sandbox(st, "grace period over"); /* no timer, no grace: never leave it running */
}

static void stopper_expire(struct loop *l, const struct source *src, uint32_t events)
{
	struct stopper *st = src->ctx;
	uint64_t n;
	if (read(st->timerfd, &n, sizeof n) != sizeof n)
		return;
	kill_sandbox(st, "grace period over");
}

int stopper_watch(struct loop *l, struct stopper *st, struct werr *e)
{
	return loop_add(l, "the grace period's timer", st->timerfd, stopper_expire, st, e);
}
