/* supervisor.c - the host side of a session, in four phases: launch the
 * sandbox (launch.c: the exec rules in the kernel, the filter, the clone
 * of init, its maps and cgroup, the handshake up to READY), start the
 * services that serve it (services.c: those that need nothing of init's
 * begin while init builds the sandbox), run the event loop (common/loop.c)
 * until init says the command ended (or exits), and finish (what the exec
 * pipeline counted, the last of Landlock's records, the fds whose close
 * waits on the kernel). What it holds is released by cleanup attributes on
 * every way out: the services first, then what launch holds (init last but
 * the socket; on a run that ended as it should, init is killed and left
 * to the caller to wait for, supervisor_cfg.init_left). */
#include "supervisor.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../detect/canary.h"
#include "exec/bpfexec.h"
#include "exec/execs.h"
#include "launch.h"
#include "llaudit.h"
#include "../common/loop.h"
#include "services.h"

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP };

/* The signals the supervisor takes through its signalfd: those it forwards
 * to the sandbox, SIGCHLD, SIGWINCH and SIGPIPE. */
static sigset_t supervised_signals(void)
{
	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_LEN(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGPIPE);
	return mask;
}

/* For the mask in force before supervisor_run blocked its signals. */
static void sigmask_restorep(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

static void on_log_failure(void *ctx, const char *why)
{
	const struct child *c = ctx;
	syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	/* why in full once, in the session's error at its end */
	(void)why;
	wnote("the audit log cannot be written: stopping the sandbox");
}

/* `limit log` reached: the sandbox killed at once (the log keeps room for
 * the session's end), the user told why and what raises it. */
static void on_log_limit(void *ctx, const char *why)
{
	const struct child *c = ctx;
	syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	/* why in full once, in the session's error at its end */
	(void)why;
	wnote("the audit log reached its limit (limit log): stopping the sandbox");
}

static void launched_freep(struct launched *L)
{
	launched_free(L);
}

static void services_freep(struct services *sv)
{
	services_free(sv);
}

/* The loop over the services until the command ends: its exit status, or
 * -1. A log that cannot be written stops the sandbox at once from now on
 * (until finish is over): nothing runs unrecorded (the log says what it
 * could, log.c). */
static int loop_serve(struct services *sv, size_t capacity, struct werr *e)
{
	_cleanup_(loop_freep) struct loop *l = loop_new(capacity, e);
	if (!l || services_watch(sv, l, e) < 0)
		return -1;
	audit_on_failure(sv->log, on_log_failure, &sv->L->c);
	audit_on_limit(sv->log, on_log_limit, &sv->L->c);
	return loop_run(l, e);
}

/* After the loop: the decoys' watch closed by the caller while it goes on
 * (lateclose.h). Not the namespaces: their last reference, closed when
 * supervisor_run returns, unmounts the sandbox's tree, which must be gone
 * before the placeholders are unlinked on the host (else each unlink
 * detaches the mounts on it in the namespace, a grace period each). Then
 * the kernel's last refusals, the denials of the last moments still on
 * their way, and what the exec pipeline counted. */
static void finish(struct services *sv, json_t **exec_stats, struct late_close *late)
{
	struct launched *L = sv->L;
	if (late)
		late_close_add(late, canary_watch_take_fd(sv->cw));
	if (L->bx)
		bpfexec_on_refusals(L->bx, sv->log);
	llaudit_end(L->la);
	if (exec_stats) {
		*exec_stats = execs_stats(sv->x);
		json_object_set_new(*exec_stats, "kernel", L->bx ? bpfexec_stats(L->bx)
				    : json_pack("{s:s, s:s}", "by", "none", "why", L->kernel_why));
	}
}

/* A stopping signal while init was still building the sandbox: init
 * killed, the session over with the signal's status, as a shell reports a
 * command it interrupted (nothing of the command ran). */
static int stopped_before_ready(struct services *sv, const struct signalfd_siginfo *stop,
				int *status)
{
	stopper_before_start(&sv->st, stop);
	*status = 128 + (int)stop->ssi_signo;
	return 0;
}

/* The services started as init reports: on SEALED's fds while init
 * applies its last layers, then on READY's listener. 1 when a stopping
 * signal came first (*stop filled), -1 with e filled. */
static int start_services(struct services *sv, struct launched *L, int sigfd,
			  struct signalfd_siginfo *stop, struct werr *e)
{
	int r = launch_sealed(L, sigfd, stop, e);
	if (r == 0 && services_sealed(sv, e) < 0)
		r = -1;
	if (r == 0)
		r = launch_ready(L, sigfd, stop, e);
	if (r == 0 && services_start(sv, e) < 0)
		r = -1;
	return r;
}

int supervisor_run(struct sandbox_spec *s, const struct supervisor_cfg *cfg, struct audit *log,
		   int *status, json_t **exec_stats, struct late_close *late, struct werr *e)
{
	sigset_t mask = supervised_signals();
	_cleanup_(sigmask_restorep) sigset_t old;
	sigprocmask(SIG_BLOCK, &mask, &old);
	_cleanup_close_ int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return werr_errno(e, "supervisor: signalfd");

	_cleanup_(launched_freep) struct launched L = LAUNCHED_NONE;
	if (launch(s, cfg->limits, log, &L, e) < 0)
		return -1;
	/* while init builds the sandbox: the caller's work first (it may
	 * put the session's first record on the log) */
	if (cfg->building && cfg->building(cfg->building_ctx, e) < 0)
		return -1;
	/* while init builds the sandbox, the services that need nothing of
	 * it begin; the rest once it is ready */
	_cleanup_(services_freep) struct services sv = SERVICES_NONE;
	if (services_begin(&sv, s, cfg, log, &L, sigfd, e) < 0)
		return -1;
	struct signalfd_siginfo stop;
	int ready = start_services(&sv, &L, sigfd, &stop, e);
	if (ready > 0)
		return stopped_before_ready(&sv, &stop, status);
	if (ready < 0) {
		/* init gone before the services: their fds closing would fail
		 * the calls of a command already started, and it would run on */
		stopper_kill(&sv.st, "the session's services could not start");
		return -1;
	}
	int r = loop_serve(&sv, LOOP_CAPACITY, e);
	if (r < 0) /* a source not served: nothing runs on without it */
		stopper_kill(&sv.st, "the session's event loop failed");
	finish(&sv, exec_stats, late);
	audit_on_failure(log, NULL, NULL);
	audit_on_limit(log, NULL, NULL);
	if (audit_failed(log))
		return werr_set(e, 0, "%s; the sandbox was stopped", audit_failed(log));
	if (audit_limit_reached(log)) /* ended by warden, whatever status it ended with */
		return werr_set(e, 0, "%s", audit_limit_reached(log));
	if (r < 0 || launched_error(&L, e) < 0)
		return -1;
	/* the detector's kill: 137, even when what called for it came as the
	 * command ended (a decoy opened in its last moments), not the
	 * command's own status as the race would have it */
	if (sv.actor.killed)
		r = 128 + SIGKILL;
	/* init's exit goes on while the caller's end does (init_left) */
	if (cfg->init_left)
		*cfg->init_left = launched_leave_init(&L);
	*status = r;
	return 0;
}
