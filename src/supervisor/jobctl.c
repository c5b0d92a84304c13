/* jobctl.c - Ctrl-Z (jobctl.h). With job control, init leads the pty's
 * session and the command is a process group of it, the pty's foreground
 * (sandbox/init.c), so the pty's Ctrl-Z stops the command as a shell's
 * would, and init reports the stop. The session then stops as one job of
 * the user's shell: the rest of the sandbox is stopped first (its cgroup's
 * freezer or init's SIGSTOP to every process: sbctl_suspend), so that
 * nothing of it runs while warden, stopped, watches nothing; the user's
 * terminal gets its modes back; warden sends SIGTSTP to its own process
 * group (itself and the rest of its job: a `| tee`), which the shell sees
 * stop. `fg` continues warden in the foreground: the terminal raw again,
 * the sandbox let go on, the command's group continued (init passes
 * SIGCONT on to it). Continued in the background instead (`bg`, a `kill
 * -CONT`, the shell's own SIGCONT after a `kill %1` or a hangup), warden
 * serves the session again but the sandbox stays stopped: `warden status`
 * says suspended, `warden kill` and stopping signals end it, and a later
 * `fg` continues it. A group the kernel will not stop (orphaned, or
 * SIGTSTP ignored by whoever started warden) leaves warden running: the
 * session goes on at once. Each step is an `action` event (suspend,
 * continue; freeze.c). While stopped, warden accepts nothing on its
 * control socket: a marker beside it names the stopped warden, by which
 * `warden status` and `kill` still find it once the socket's backlog is
 * full (control_mark_stopped). */
#include "jobctl.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../common/util.h"
#include "../control/control.h"

/* How often a session waiting in the background looks for the
 * foreground (ms). */
#define FOREGROUND_CHECK_MS 100

/* The foreground's check every FOREGROUND_CHECK_MS (on), or none. */
static void arm(const struct jobctl *j, bool on)
{
	struct timespec every = { .tv_nsec = on ? FOREGROUND_CHECK_MS * 1000000L : 0 };
	struct itimerspec its = { .it_value = every, .it_interval = every };
	if (j->timer >= 0)
		timerfd_settime(j->timer, 0, &its, NULL);
}

static void continue_command(const struct jobctl *j)
{
	syscall(SYS_pidfd_send_signal, j->init_pidfd, SIGCONT, NULL, 0);
}

/* SIGTSTP to warden's process group, taken by warden itself too: it is
 * blocked (the signals' fd reads it), so let through for a moment, when
 * the kernel delivers it and warden stops; it returns once continued. */
static void stop_self(void)
{
	sigset_t tstp, old;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	kill(0, SIGTSTP);
	pthread_sigmask(SIG_UNBLOCK, &tstp, &old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void jobctl_stopped(struct jobctl *j, int sig)
{
	if (j->waiting)
		return; /* held: nothing of the sandbox's runs to stop again */
	struct werr e = { 0 };
	if (sbctl_suspend(j->sb, sig, &e) < 0) {
		wnote("the command stopped (Ctrl-Z?), but the rest of the sandbox could not be "
		      "stopped with it (%s): warden does not stop, and the command goes on", e.msg);
		continue_command(j);
		return;
	}
	j->raw = term_suspend(j->term);
	if (j->ctl)
		control_mark_stopped(j->ctl, true);
	stop_self();
	if (j->ctl)
		control_mark_stopped(j->ctl, false);
	j->waiting = true;
	arm(j, true);
	jobctl_cont(j);
}

void jobctl_cont(struct jobctl *j)
{
	if (!j->waiting || !term_continue(j->term, j->raw))
		return;
	j->waiting = false;
	arm(j, false);
	struct werr e = { 0 };
	if (sbctl_unsuspend(j->sb, &e) < 0)
		wnote("the sandbox could not be let go on after `fg` (%s): `warden kill` or Ctrl-C "
		      "ends it", e.msg);
	continue_command(j);
}

static void on_timer(struct loop *l, const struct source *src, uint32_t events)
{
	struct jobctl *j = src->ctx;
	uint64_t n;
	if (read(j->timer, &n, sizeof n) == sizeof n)
		jobctl_cont(j);
}

int jobctl_watch(struct loop *l, struct jobctl *j, struct werr *e)
{
	j->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (j->timer < 0)
		return werr_errno(e, "job control: timerfd");
	return loop_add(l, "job control's timer", j->timer, on_timer, j, e);
}

void jobctl_end(struct jobctl *j)
{
	if (j->timer >= 0)
		close(j->timer);
	j->timer = -1;
}
