/* supervisor.c - the host side of a session: clone sandbox init into new
 * user, mount, pid, net, ipc, uts and cgroup namespaces, write its identity
 * maps, put it under the session's limits (limits.h) before it starts, wait
 * for it to report every layer built (or the one that failed), then run the
 * event loop: relay the pty, pass signals on (stop.c: to the whole sandbox
 * or the command, and SIGKILL when a stopping signal is not obeyed within
 * the grace period), serve the control socket (status, freeze, resume,
 * kill: freeze.h), watch the limits each second, and collect the exit
 * status through a pidfd. The supervisor is non-dumpable, and init dies
 * with it (PR_SET_PDEATHSIG), taking the whole pid namespace along.
 * What supervisor_run holds (init, the raw terminal, the blocked signals,
 * the fds) is released by cleanup attributes on every way out; the event
 * loop dispatches through a table of sources ({fd, handler, context}). */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../control/approval.h"
#include "../detect/detect.h"
#include "../control/control.h"
#include "../control/termask.h"
#include "../control/reviewer.h"
#include "../control/webhook.h"
#include "../control/hook.h"
#include "../detect/canary.h"
#include "../net/proxy.h"
#include "../sandbox/initmsg.h"
#include "../sandbox/limits.h"
#include "../workspace/wswatch.h"
#include "../workspace/wsmade.h"
#include "exec/execs.h"
#include "exec/bpfexec.h"
#include "freeze.h"
#include "llaudit.h"
#include "notify.h"
#include "writeask.h"
#include "pty.h"
#include "stop.h"

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | \
		  CLONE_NEWUTS | CLONE_NEWCGROUP)

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP };

static int userns_error(int err, struct werr *e)
{
	return werr_set(e, err, "user namespaces: the kernel refused to create the sandbox's "
		"namespaces (check the sysctls kernel.unprivileged_userns_clone=1, "
		"user.max_user_namespaces>0 and kernel.apparmor_restrict_unprivileged_userns=0; "
		"`warden doctor` reports them)");
}

/* Receive init's message and the fds it carries (-1 when absent). 0 on
 * EOF. */
static ssize_t recv_msg(int sock, struct init_msg *m, int fds[INIT_MSG_MAX_FDS])
{
	union {
		char buf[CMSG_SPACE(INIT_MSG_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof *m };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	for (int i = 0; i < INIT_MSG_MAX_FDS; i++)
		fds[i] = -1;
	ssize_t n;
	while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds, CMSG_DATA(c), (k > INIT_MSG_MAX_FDS ? INIT_MSG_MAX_FDS : k) * sizeof(int));
		}
	return n;
}

/* The listeners of the host loopback ports in init's READY message, by
 * their index in s->forwards (-1: none). */
struct fwd_fds {
	int fd[FORWARD_MAX];
};

static struct fwd_fds fwd_fds_take(const struct sandbox_spec *s, const struct init_msg *m,
				   ssize_t n, const int fds[INIT_MSG_MAX_FDS])
{
	struct fwd_fds f;
	for (size_t i = 0; i < FORWARD_MAX; i++)
		f.fd[i] = -1;
	if (n <= 0)
		return f;
	size_t k = m->has_pty ? 4 : 3;
	for (size_t i = 0; i < s->forwards.n && k < INIT_MSG_MAX_FDS; i++)
		if (m->fwd_mask & (1u << i))
			f.fd[i] = fds[k++];
	return f;
}

/* The sock_diag socket in init's READY message, after the others (-1:
 * none). */
static int diag_fd_take(const struct sandbox_spec *s, const struct init_msg *m, ssize_t n,
			const int fds[INIT_MSG_MAX_FDS])
{
	if (n <= 0 || !m->has_diag)
		return -1;
	size_t k = m->has_pty ? 4 : 3;
	for (size_t i = 0; i < s->forwards.n; i++)
		k += (m->fwd_mask >> i) & 1u;
	return k < INIT_MSG_MAX_FDS ? fds[k] : -1;
}

/* The sandbox's /tmp (i 0) or home (i 1) in init's READY message, after
 * the sock_diag socket (-1: none). */
static int fs_fd_take(const struct sandbox_spec *s, const struct init_msg *m, ssize_t n,
		      const int fds[INIT_MSG_MAX_FDS], unsigned i)
{
	if (n <= 0 || !(m->fs_mask & (1u << i)))
		return -1;
	size_t k = (m->has_pty ? 4 : 3) + (m->has_diag ? 1 : 0);
	for (size_t j = 0; j < s->forwards.n; j++)
		k += (m->fwd_mask >> j) & 1u;
	k += i && (m->fs_mask & 1u);
	return k < INIT_MSG_MAX_FDS ? fds[k] : -1;
}

/* Init's "s" (it runs), taken; false when init sent something else
 * instead (its error, left for recv_msg) or is gone. */
static bool init_running(int sock)
{
	char b;
	ssize_t n;
	while ((n = recv(sock, &b, 1, MSG_PEEK)) < 0 && errno == EINTR)
		;
	if (n != 1 || b != 's')
		return false;
	return recv(sock, &b, 1, 0) == 1;
}

/* The sandbox's user and mount namespaces in init's READY message, last
 * (i 0 and 1; -1: none). */
static int ns_fd_take(const struct sandbox_spec *s, const struct init_msg *m, ssize_t n,
		      const int fds[INIT_MSG_MAX_FDS], unsigned i)
{
	if (n <= 0 || !m->has_ns)
		return -1;
	size_t k = (m->has_pty ? 4 : 3) + (m->has_diag ? 1 : 0) + i;
	for (size_t j = 0; j < s->forwards.n; j++)
		k += (m->fwd_mask >> j) & 1u;
	k += (m->fs_mask & 1u) + ((m->fs_mask >> 1) & 1u);
	return k < INIT_MSG_MAX_FDS ? fds[k] : -1;
}

/* The hook socket's listener in init's READY message, after the
 * namespaces (-1: none). */
static int hook_fd_take(const struct sandbox_spec *s, const struct init_msg *m, ssize_t n,
			const int fds[INIT_MSG_MAX_FDS])
{
	if (n <= 0 || !m->has_hook)
		return -1;
	size_t k = (m->has_pty ? 4 : 3) + (m->has_diag ? 1 : 0) + (m->has_ns ? 2 : 0);
	for (size_t j = 0; j < s->forwards.n; j++)
		k += (m->fwd_mask >> j) & 1u;
	k += (m->fs_mask & 1u) + ((m->fs_mask >> 1) & 1u);
	return k < INIT_MSG_MAX_FDS ? fds[k] : -1;
}

/* The re-masker, started by the workspace watch when first needed
 * (remask.c): into the namespaces of the sandbox. */
struct remasker {
	int userns, mntns;
	const char *workspace;
};

static pid_t start_remasker(void *ctx, int *sock, struct werr *e)
{
	const struct remasker *r = ctx;
	return remask_spawn(r->userns, r->mntns, r->workspace, sock, e);
}

static void fwd_fds_close(struct fwd_fds *f)
{
	for (size_t i = 0; i < FORWARD_MAX; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
}

static int exit_status_of(int pidfd)
{
	siginfo_t si = { 0 };
	while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return 125;
	if (si.si_code == CLD_EXITED)
		return si.si_status;
	return 128 + si.si_status;
}

/* Sandbox init as the supervisor holds it. Leaving supervisor_run kills and
 * reaps it unless child_reap already collected its status. */
struct child {
	pid_t pid;   /* 0: reaped (or never started) */
	int pidfd;
};

static void on_log_failure(void *ctx, const char *why)
{
	const struct child *c = ctx;
	syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
	fprintf(stderr, "warden: %s: stopping the sandbox\n", why);
}

static int child_reap(struct child *c)
{
	c->pid = 0;
	return exit_status_of(c->pidfd);
}

static void child_killp(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		child_reap(c);
	}
	if (c->pidfd >= 0)
		close(c->pidfd);
}

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

static void notifier_freep(struct notifier **n)
{
	notifier_free(*n);
}

static void execs_freep(struct execs **x)
{
	execs_free(*x);
}

static void bpfexec_freep(struct bpfexec **b)
{
	bpfexec_free(*b);
}

static void stopper_closep(struct stopper *st)
{
	stopper_close(st);
}

static void proxy_freep(struct proxy **px)
{
	proxy_free(*px); /* logs the connections still open */
}

/* ---- the event loop ---- */

struct loop;
/* One source the loop watches: a readable fd, what to do when it is ready,
 * and the object that handler works on. */
struct source {
	int fd;
	void (*handle)(struct loop *l, const struct source *src, uint32_t events);
	void *ctx;
};

struct loop {
	int ep;
	struct source src[24];
	size_t nsrc;
	int master;          /* the agent's pty master, or -1 */
	int tty;             /* the user's terminal the pty mirrors (window size) */
	struct pty_sink out; /* where the pty's output goes: the user's terminal */
	struct ttyfilter filter; /* on the way */
	struct termask *ask; /* a question on the screen takes the keys, holds the output */
	bool done;           /* the command ended: status holds its exit status */
	int status;
};

/* Watch fd; -1 when epoll refuses it. */
static int loop_add(struct loop *l, int fd,
		    void (*handle)(struct loop *, const struct source *, uint32_t), void *ctx)
{
	if (l->nsrc == ARRAY_LEN(l->src))
		return -1;
	struct source *src = &l->src[l->nsrc];
	*src = (struct source){ .fd = fd, .handle = handle, .ctx = ctx };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -1;
	l->nsrc++;
	return 0;
}

static void loop_remove(struct loop *l, const struct source *src)
{
	epoll_ctl(l->ep, EPOLL_CTL_DEL, src->fd, NULL);
}

/* The pidfd: init ended. */
static void on_child_exit(struct loop *l, const struct source *src, uint32_t events)
{
	/* Drain what the command wrote before it ended. */
	if (l->master >= 0) {
		while (pty_pump_filtered(l->master, &l->out, &l->filter) == 1) {
			struct pollfd p = { .fd = l->master, .events = POLLIN };
			if (poll(&p, 1, 0) <= 0)
				break;
		}
		pty_filter_flush(&l->out, &l->filter);
	}
	l->status = child_reap(src->ctx);
	l->done = true;
}

/* The signalfd: resize the pty, pass the signal to the sandbox, or (a
 * SIGCHLD) collect the execs being watched. */
struct sig_ctx {
	struct stopper *st;
	struct execs *x;
};

static void on_signal(struct loop *l, const struct source *src, uint32_t events)
{
	const struct sig_ctx *c = src->ctx;
	struct signalfd_siginfo si;
	while (read(src->fd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGWINCH) {
			if (l->master >= 0)
				pty_copy_winsize(l->tty, l->master);
			termask_resize(l->ask);
		} else if (si.ssi_signo == SIGCHLD) {
			execs_on_sigchld(c->x);
		} else {
			stopper_signal(c->st, &si);
		}
	}
}

/* The grace period after a stopping signal is over. */
static void on_grace_over(struct loop *l, const struct source *src, uint32_t events)
{
	stopper_expire(src->ctx);
}

static void on_exec_hashes(struct loop *l, const struct source *src, uint32_t events)
{
	execs_on_hashes(src->ctx);
}

static void on_exec_timer(struct loop *l, const struct source *src, uint32_t events)
{
	execs_on_timer(src->ctx);
}

/* ---- questions for a human ---- */

struct asking {
	struct approvals *ap;
	struct control *ctl;
	struct termask *term; /* the user's terminal, when its keys are relayed */
	struct reviewer *rv;  /* `approve command`, or NULL */
	struct webhook *wh;   /* `approve webhook`, or NULL */
	struct hook *hook;   /* the hook socket: tool calls reported from inside */
};

static void on_approval_timer(struct loop *l, const struct source *src, uint32_t events)
{
	approvals_on_timer(src->ctx);
}

static void on_control(struct loop *l, const struct source *src, uint32_t events)
{
	control_dispatch(src->ctx);
}

static void on_termask_timer(struct loop *l, const struct source *src, uint32_t events)
{
	termask_on_timer(src->ctx);
}

static void on_reviewer(struct loop *l, const struct source *src, uint32_t events)
{
	reviewer_dispatch(src->ctx);
}

static void on_webhook(struct loop *l, const struct source *src, uint32_t events)
{
	webhook_dispatch(src->ctx);
}

static void on_hook(struct loop *l, const struct source *src, uint32_t events)
{
	hook_dispatch(src->ctx);
}

static void hook_freep(struct hook **h)
{
	hook_free(*h);
}

/* The proxy's asker (proxy.h) over the broker. */
static const void *net_ask(void *ctx, const char *subject, const char *summary, json_t *detail,
			   void (*done)(void *, bool, const char *), void *cbctx)
{
	return approvals_ask(ctx, APPROVAL_NET, subject, summary, detail, done, cbctx);
}

static void net_cancel(void *ctx, const void *q)
{
	approvals_cancel(ctx, q);
}

static void wsmade_freep(struct wsmade **m)
{
	wsmade_free(*m);
}

static void writeask_freep(struct writeask **w)
{
	writeask_free(*w);
}

static void control_freep(struct control **c)
{
	control_free(*c);
}

static void approvals_freep(struct approvals **a)
{
	approvals_free(*a);
}

static void termask_freep(struct termask **t)
{
	termask_free(*t);
}

/* (after the broker's end, which tells them of the questions') */
static void asking_channels_freep(struct asking *ask)
{
	reviewer_free(ask->rv);
	webhook_free(ask->wh);
}

/* The session's control socket in warden's state directory, for every
 * session (`warden status|freeze|resume|kill`, and `warden approve` when
 * the policy asks: asks), one that cannot be made is said, not an error;
 * when the policy asks, the broker first, and after the socket the
 * reviewer command and the webhook the policy names (one it cannot use is
 * an error). */
static int asking_start(const struct sandbox_spec *s, struct audit *log, bool asks,
			struct approvals **ap, struct control **ctl, struct asking *chans,
			struct werr *e)
{
	const char *path = audit_path(log), *base = strrchr(path, '/');
	char session[64];
	snprintf(session, sizeof session, "%s", base ? base + 1 : path);
	char *dot = strstr(session, ".jsonl");
	if (dot)
		*dot = '\0';
	if (asks && !(*ap = approvals_new(log, session, s->policy)))
		return werr_errno(e, "supervisor: the questions' timer");
	_cleanup_free_ char *dir = control_dir_of(s->logdir);
	struct werr ce = { 0 };
	*ctl = control_new(dir, session, *ap, log, &ce);
	if (!*ctl) {
		char buf[1200];
		fprintf(stderr, "warden: %s; `warden status`, `warden kill`%s cannot reach this "
			"session\n", werr_str(&ce, buf, sizeof buf), asks ? " and `warden approve`" : "");
	}
	if (!asks)
		return 0;
	const struct policy_approve *pa = &s->policy->approve;
	if (pa->command.n && !(chans->rv = reviewer_new(*ap, s->policy, session, s->workspace, log, e)))
		return -1;
	if (pa->webhook && !(chans->wh = webhook_new(*ap, pa->webhook, session, log, e)))
		return -1;
	return 0;
}

/* The control socket's freeze, resume and kill: the kill switch's. */
static int ctl_freeze(void *ctx, long uid, const char *reason, struct werr *e)
{
	return sbctl_freeze(ctx, "control", uid, reason, e);
}

static int ctl_resume(void *ctx, long uid, struct werr *e)
{
	return sbctl_resume(ctx, "control", uid, e);
}

static int ctl_kill(void *ctx, long uid, const char *reason, struct werr *e)
{
	return sbctl_kill(ctx, "control", uid, reason, e);
}

static bool ctl_frozen(void *ctx)
{
	return sbctl_frozen(ctx);
}

static void sbctl_freep(struct sbctl **c)
{
	sbctl_free(*c);
}

static void on_seccomp(struct loop *l, const struct source *src, uint32_t events)
{
	if (events & (EPOLLHUP | EPOLLERR))
		loop_remove(l, src);
	else
		notifier_handle(src->ctx);
}

/* The limits' watch: once a second, has the sandbox reached one? */
struct limits_watch {
	struct limits *limits;
	struct audit *log;
};

static void on_limits_timer(struct loop *l, const struct source *src, uint32_t events)
{
	uint64_t ticks;
	if (read(src->fd, &ticks, sizeof ticks) == sizeof ticks) {
		const struct limits_watch *w = src->ctx;
		limits_check(w->limits, w->log);
	}
}

/* A timer of one second for the watch, or -1 when there is nothing to
 * watch; the fds of /tmp and home are taken. */
static int limits_timer(struct sandbox_spec *s, int *tmp_fd, int *home_fd)
{
	if (!s->limits || !limits_watch(s->limits, steal_fd(tmp_fd), steal_fd(home_fd)))
		return -1;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec it = { .it_interval = { .tv_sec = 1 }, .it_value = { .tv_sec = 1 } };
	if (fd >= 0 && timerfd_settime(fd, 0, &it, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The workspace watch: what the host replaced, masked or protected again;
 * when that can no longer be done, the session ends (fail closed). */
/* The exec rules in the kernel (bpfexec.h): its refusals, logged from the
 * loop. */
struct kexec_ctx {
	struct bpfexec *b;
	struct audit *log;
};

static void on_kernel_refusals(struct loop *l, const struct source *src, uint32_t events)
{
	const struct kexec_ctx *k = src->ctx;
	bpfexec_on_refusals(k->b, k->log);
}

/* Whether the exec rules are enforced in the kernel too (`exec kernel
 * auto|on|off`, bpfexec.h): *out loaded for the session, or NULL when not
 * asked for (off; auto without root or rules) or, under auto, not
 * available here (*why says why). -1 when on and not available, or when
 * available and failing. */
static int kernel_exec(const struct sandbox_spec *s, struct bpfexec **out, char *why, size_t len,
		       struct werr *e)
{
	const struct policy_exec *x = &s->policy->exec;
	*out = NULL;
	snprintf(why, len, "%s", x->kernel == EXEC_KERNEL_OFF ? "exec kernel off"
				 : "no exec deny or default deny rules");
	if (x->kernel == EXEC_KERNEL_OFF ||
	    (x->kernel == EXEC_KERNEL_AUTO && !x->deny.n && !x->default_deny))
		return 0;
	if (x->kernel == EXEC_KERNEL_AUTO && geteuid() != 0) {
		snprintf(why, len, "not root");
		return 0;
	}
	bool unavailable = false;
	*out = bpfexec_new(s->policy, s->limits ? limits_cgroup_v2(s->limits) : NULL, &unavailable, e);
	if (*out)
		return 0;
	if (x->kernel == EXEC_KERNEL_ON)
		return werr_wrap(e, "exec kernel on: the exec rules cannot be enforced in the kernel here");
	if (!unavailable)
		return werr_wrap(e, "exec kernel auto: this host offers BPF LSM, but enforcing the exec "
				 "rules with it failed (`exec kernel off` runs without)");
	werr_str(e, why, len);
	memset(e, 0, sizeof *e);
	return 0;
}

struct ws_ctx {
	struct wswatch *w;
	struct audit *log;
	const struct child *c;
};

static void on_wswatch(struct loop *l, const struct source *src, uint32_t events)
{
	struct ws_ctx *x = src->ctx;
	if (wswatch_dispatch(x->w, x->log) == 0)
		return;
	audit_emit_event(x->log, ev_alert(&(struct ev_alert){
		.rule = "workspace.remask-lost", .action = "session killed: masks can no longer "
		"follow what the host replaces" }), NULL);
	syscall(SYS_pidfd_send_signal, x->c->pidfd, SIGKILL, NULL, 0);
	loop_remove(l, src);
}

/* Landlock's audit records (llaudit.h). */
static void on_llaudit(struct loop *l, const struct source *src, uint32_t events)
{
	llaudit_dispatch(src->ctx);
}

static void llaudit_freep(struct llaudit **la)
{
	llaudit_free(*la);
}

/* The decoys' watch: each open of one is an alert (canary.h). */
static void on_canary(struct loop *l, const struct source *src, uint32_t events)
{
	canary_watch_dispatch(src->ctx);
}

static void canary_watch_freep(struct canary_watch **w)
{
	canary_watch_free(*w);
}

/* Each decoy init could not place, said; then the watch of those it
 * placed. */
static struct canary_watch *canary_start(const struct sandbox_spec *s, const struct init_msg *m,
					 int home_fd, struct audit *log)
{
	if (!s->canary)
		return NULL;
	for (size_t i = 0; i < s->canary->n; i++)
		if (!s->canary->v[i].off && !(m->canary_placed & (1u << i)))
			wnote("canary credentials: ~/%s could not be placed in the sandbox's home "
			      "(%s); the session runs without it", s->canary->v[i].rel,
			      strerror(m->canary_err ? m->canary_err : EIO));
	return canary_watch_new(s->canary, m->canary_placed, home_fd, log);
}

static void on_proxy(struct loop *l, const struct source *src, uint32_t events)
{
	proxy_dispatch(src->ctx);
}

/* The agent's terminal to the user's, and the user's keys to the agent;
 * while a question is on the screen (termask.h), the output is held and
 * the keys are the question's. */
static void on_pty_output(struct loop *l, const struct source *src, uint32_t events)
{
	if (pty_pump_filtered(src->fd, &l->out, &l->filter) <= 0)
		loop_remove(l, src);
}

static void on_pty_input(struct loop *l, const struct source *src, uint32_t events)
{
	if ((termask_up(l->ask) ? termask_keys(l->ask, src->fd) : pty_pump(src->fd, l->master)) <= 0)
		loop_remove(l, src);
}

/* The agent's terminal and the user's: which host fds it stands for. */
struct term {
	int master;       /* -1: no pty */
	int tty;          /* the user's terminal it mirrors */
	int out;          /* where its output goes */
	bool relay_input; /* the user's keys go in (stdin is the terminal, warden in its foreground) */
	bool clipboard;   /* OSC 52 passes */
};

/* The event loop after init reported ready: runs until init exits, and
 * returns its exit status (init reaped), or -1. */
static int event_loop(struct child *c, int sigfd, struct stopper *st, const struct term *t,
		      struct notifier *nt, struct execs *x, int listener, struct proxy *px, int timer,
		      struct limits_watch *w, struct ws_ctx *wsx, const struct asking *ask,
		      struct canary_watch *cw, struct kexec_ctx *kx, struct llaudit *la,
		      struct werr *e)
{
	_cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return werr_errno(e, "supervisor: epoll");
	int master = t->master;
	bool relay_input = t->relay_input;
	struct loop l = { .ep = ep, .master = master, .tty = t->tty, .ask = ask->term,
			  .out = { .fd = t->out, .hold = ask->term ? termask_hold : NULL, .ctx = ask->term } };
	/* queries only where their answers come back: the user's keys are
	 * relayed */
	ttyfilter_init(&l.filter, t->clipboard, !relay_input);
	loop_add(&l, c->pidfd, on_child_exit, c);
	struct sig_ctx sc = { .st = st, .x = x };
	loop_add(&l, sigfd, on_signal, &sc);
	loop_add(&l, st->timerfd, on_grace_over, st);
	loop_add(&l, listener, on_seccomp, nt);
	loop_add(&l, execs_hash_fd(x), on_exec_hashes, x);
	loop_add(&l, execs_timer_fd(x), on_exec_timer, x);
	if (ask->ap)
		loop_add(&l, approvals_timer_fd(ask->ap), on_approval_timer, ask->ap);
	if (ask->ctl)
		loop_add(&l, control_fd(ask->ctl), on_control, ask->ctl);
	if (ask->term)
		loop_add(&l, termask_timer_fd(ask->term), on_termask_timer, ask->term);
	if (ask->rv)
		loop_add(&l, reviewer_fd(ask->rv), on_reviewer, ask->rv);
	if (ask->wh)
		loop_add(&l, webhook_fd(ask->wh), on_webhook, ask->wh);
	if (ask->hook)
		loop_add(&l, hook_fd(ask->hook), on_hook, ask->hook);
	loop_add(&l, proxy_fd(px), on_proxy, px);
	if (timer >= 0)
		loop_add(&l, timer, on_limits_timer, w);
	if (wsx->w)
		loop_add(&l, wswatch_fd(wsx->w), on_wswatch, wsx);
	if (cw)
		loop_add(&l, canary_watch_fd(cw), on_canary, cw);
	if (kx->b)
		loop_add(&l, bpfexec_fd(kx->b), on_kernel_refusals, kx);
	if (la)
		loop_add(&l, llaudit_fd(la), on_llaudit, la);
	if (master >= 0) {
		loop_add(&l, master, on_pty_output, NULL);
		/* A stdin that epoll cannot watch (a regular file) is not relayed. */
		if (relay_input)
			loop_add(&l, STDIN_FILENO, on_pty_input, NULL);
	}
	for (;;) {
		struct epoll_event evs[8];
		int n = epoll_wait(ep, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return werr_errno(e, "supervisor: epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			const struct source *src = evs[i].data.ptr;
			src->handle(&l, src, evs[i].events);
			if (l.done) {
				/* an open is queued as it happens: those of the last
				 * moments are read before the loop ends */
				if (cw)
					canary_watch_dispatch(cw);
				return l.status;
			}
		}
	}
}

/* What the detector may do to the session (detect.h): warn it does
 * itself; freeze and kill through the kill switch; ask freezes, then puts
 * a question (allowed: resume; anything else: kill). */
struct actor {
	struct detect *d;
	struct sbctl *sb;
	struct approvals *ap;    /* NULL: no question can be put (ask: the freeze stays) */
	struct audit *log;
	const struct question *q; /* the question open, or NULL */
};

static void risk_answered(void *ctx, bool allow, const char *why)
{
	struct actor *ac = ctx;
	ac->q = NULL;
	struct werr e = { 0 };
	if (allow ? sbctl_resume(ac->sb, "detector", -1, &e) < 0
		  : sbctl_kill(ac->sb, "detector", -1, why ? why : "the risk question was not allowed", &e) < 0)
		if (!allow || sbctl_frozen(ac->sb))
			sbctl_kill(ac->sb, "detector", -1, e.msg, NULL);
}

static int detect_act(void *ctx, enum det_action a, const char *reason)
{
	struct actor *ac = ctx;
	struct werr e = { 0 };
	if (a == ACT_KILL) {
		fprintf(stderr, "\r\nwarden: killing the sandbox: %s\r\n", reason);
		return sbctl_kill(ac->sb, "detector", -1, reason, &e);
	}
	if (a != ACT_FREEZE && a != ACT_ASK)
		return -1;
	if (!sbctl_frozen(ac->sb)) {
		if (sbctl_freeze(ac->sb, "detector", -1, reason, &e) < 0)
			return -1;
		fprintf(stderr, "\r\nwarden: the sandbox is frozen: %s; `warden resume` or `warden kill` "
			"decides\r\n", reason);
	}
	if (a == ACT_ASK && ac->ap && !ac->q) {
		json_t *detail = json_pack("{s:s}", "reason", reason);
		/* (an answer remembered for the subject comes at once: q stays NULL) */
		ac->q = approvals_ask(ac->ap, APPROVAL_RISK, "risk", reason, detail, risk_answered, ac);
	}
	return 0;
}

static void actor_unset(struct actor *ac)
{
	if (ac->d)
		detect_set_actor(ac->d, NULL, NULL);
	if (ac->q)
		approvals_cancel(ac->ap, ac->q);
}

/* Clone init into its namespaces, with sync_fd its end of the socket whose
 * other end, sock, it closes; c holds it on success. Into the session's
 * cgroup v2 when there is one (limits.h: no move afterwards, whose kernel
 * lock waits for an RCU grace period); should the kernel refuse that, a
 * clone as before, and limits_attach moves it. */
static int start_init(struct sandbox_spec *s, int sock, int sync_fd, struct child *c,
		      struct werr *e)
{
	int pidfd = -1;
	_cleanup_close_ int cgfd = s->limits ? limits_clone_fd(s->limits) : -1;
	struct clone_args ca = {
		.flags = NS_FLAGS | CLONE_PIDFD | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0),
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = cgfd >= 0 ? (uint64_t)cgfd : 0,
	};
	fflush(NULL);
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid < 0 && cgfd >= 0) {
		ca.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		ca.cgroup = 0;
		pid = syscall(SYS_clone3, &ca, sizeof ca);
	} else if (pid > 0 && cgfd >= 0) {
		s->limits->born_v2 = true;
	}
	if (pid < 0)
		return userns_error(errno, e);
	if (pid == 0) {
		close(sock);
		if (cgfd >= 0)
			close(cgfd); /* a host directory: nothing of init's */
		s->sync_fd = sync_fd;
		sandbox_init_main(s);
	}
	*c = (struct child){ .pid = (pid_t)pid, .pidfd = pidfd };
	return 0;
}

int supervisor_run(struct sandbox_spec *s, struct audit *log, int *status, json_t **exec_stats,
		   struct late_close *late, struct werr *e)
{
	sigset_t mask = supervised_signals();
	_cleanup_(sigmask_restorep) sigset_t old;
	sigprocmask(SIG_BLOCK, &mask, &old);
	_cleanup_close_ int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return werr_errno(e, "supervisor: signalfd");

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "supervisor: socketpair");
	_cleanup_close_ int sock = sv[0];
	_cleanup_close_ int init_sock = sv[1];

	/* The exec rules in the kernel too, from before init starts: its
	 * cgroup is registered, and nothing of it runs unchecked. Before the
	 * filter: with them, code mapped from files goes by the supervisor. */
	_cleanup_(bpfexec_freep) struct bpfexec *bx = NULL;
	char kernel_why[1100];
	if (kernel_exec(s, &bx, kernel_why, sizeof kernel_why, e) < 0)
		return -1;
	s->exec_kernel = bx != NULL;
	/* Before the clone, while nothing else runs: init never waits for
	 * these (a hand-over between processes can cost more than the work on
	 * a busy machine). */
	if (workspace_make_placeholders(&s->plan, e) < 0 || seccomp_compile(s, e) < 0)
		return -1;
	/* As root, the host paths init shows, as trees it inherits (hostid.h):
	 * made after the placeholders, which they include. */
	if (s->ids.active && hostid_trees(&s->ids, s, e) < 0)
		return -1;
	_cleanup_(child_killp) struct child c = { .pid = 0, .pidfd = -1 };
	int started = start_init(s, sock, init_sock, &c, e);
	hostid_close_trees(&s->ids);
	if (started < 0)
		return -1;
	/* Landlock's denials on the record (llaudit.h): the group joined now,
	 * before init restricts itself (it waits for the "g" below), and not
	 * before the clone, so init never holds the socket. */
	_cleanup_(llaudit_freep) struct llaudit *la = NULL;
	if (s->landlock_log) {
		char why[256];
		if (!(la = llaudit_open(c.pid, log, why, sizeof why)))
			wnote("Landlock's denials are not on this session's record: %s", why);
	}
	/* The kill switch (freeze.h): the control socket's freeze, resume and
	 * kill, and the grace period's hold while frozen; a module of the loop
	 * that acts on the whole sandbox is handed sb (freed after the socket
	 * and everything that holds it, before init). Made now, while init can
	 * still be looked at: it makes itself non-dumpable once mapped, and an
	 * unprivileged supervisor could no longer read its pid namespace. */
	_cleanup_(sbctl_freep) struct sbctl *sb =
		sbctl_new(c.pidfd, c.pid, s->limits ? limits_cgroup_v2(s->limits) : NULL, log);
	closep(&init_sock);
	/* Non-dumpable only now: a child cloned from a non-dumpable parent has
	 * root-owned /proc files, and an unprivileged supervisor could not write
	 * its identity maps. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return werr_errno(e, "supervisor: making itself non-dumpable");
	if (userns_write_maps(c.pid, s->ids.active ? s->ids.uid : s->uid,
			      s->ids.active ? s->ids.gid : s->gid, e) < 0)
		return -1;
	if (write(sock, "g", 1) != 1)
		return werr_errno(e, "supervisor: starting init");
	/* Under its limits before init forks anything: init builds its mounts
	 * meanwhile and waits for the second byte. Only once init says it
	 * runs: a move into a cgroup holds back processes still on their way
	 * out of fork (an RCU grace period on cgroup v1, a millisecond or
	 * more), and init would wait for it before its first step. */
	if (init_running(sock) && s->limits)
		limits_attach(s->limits, c.pid);
	/* The kernel enforces the exec rules on the session's cgroup: init
	 * must be in it before it forks anything. */
	if (bx && !bpfexec_holds(bx, c.pid))
		return werr_set(e, 0, "in-kernel exec enforcement: the sandbox is not in the session's "
				"cgroup %s", limits_cgroup_v2(s->limits));
	/* (init may have failed meanwhile: its message, read next, says why) */
	(void)!send(sock, "c", 1, MSG_NOSIGNAL);

	struct init_msg m;
	int fds[INIT_MSG_MAX_FDS];
	ssize_t n = recv_msg(sock, &m, fds);
	_cleanup_close_ int listener = fds[0];
	_cleanup_close_ int http_l = fds[1], socks_l = fds[2]; /* the proxy's once it exists */
	_cleanup_close_ int master = n > 0 && m.has_pty ? fds[3] : -1;
	_cleanup_(fwd_fds_close) struct fwd_fds fwd = fwd_fds_take(s, &m, n, fds);
	_cleanup_close_ int diag = diag_fd_take(s, &m, n, fds);
	_cleanup_close_ int tmp_fd = fs_fd_take(s, &m, n, fds, 0);
	_cleanup_close_ int home_fd = fs_fd_take(s, &m, n, fds, 1);
	_cleanup_close_ int userns = ns_fd_take(s, &m, n, fds, 0);
	_cleanup_close_ int mntns = ns_fd_take(s, &m, n, fds, 1);
	_cleanup_close_ int hook_l = hook_fd_take(s, &m, n, fds);
	if (n > 0 && m.type == INIT_MSG_READY && listener < 0)
		return werr_set(e, 0, "cannot build the sandbox: init sent no seccomp listener");
	if (n <= 0 || m.type != INIT_MSG_READY) {
		int st = child_reap(&c);
		if (n > 0 && m.type == INIT_MSG_ERROR) {
			m.text[sizeof m.text - 1] = '\0';
			return werr_set(e, m.errnum, "cannot build the sandbox: %s", m.text);
		}
		return werr_set(e, 0, "cannot build the sandbox: init ended (status %d) "
				"before reporting", st);
	}
	/* The decoys watched before the command starts: init waits for a byte
	 * when it placed any (the pty's, below, or this one). */
	_cleanup_(canary_watch_freep) struct canary_watch *cw = canary_start(s, &m, home_fd, log);
	if (master < 0 && m.canary_placed && write(sock, "r", 1) != 1) {
		/* init died meanwhile: its status tells */
	}
	_cleanup_host_tty_ struct host_tty tty = HOST_TTY_NONE;
	/* The pty stands for each of fds 0-2 that is a terminal. Its output
	 * goes to the user's terminal on 1, else 2, else 0; the user's keys go
	 * in when stdin is the terminal. In the background of its terminal,
	 * warden leaves the terminal's modes alone and does not read it
	 * (SIGTTOU, SIGTTIN would stop it): the command keeps a pty of its own,
	 * with default settings, and an end-of-file for input. */
	unsigned pf = s->pty_fds;
	struct term term = {
		.master = master,
		.tty = pf & 1 ? STDIN_FILENO : pf & 2 ? STDOUT_FILENO : STDERR_FILENO,
		.out = pf & 2 ? STDOUT_FILENO : pf & 4 ? STDERR_FILENO : STDIN_FILENO,
		.clipboard = s->policy->terminal_clipboard,
	};
	bool foreground = master >= 0 && (pf & 1) && pty_host_foreground(STDIN_FILENO);
	term.relay_input = foreground;
	if (master >= 0) {
		if (foreground) {
			pty_copy_settings(STDIN_FILENO, master);
			pty_host_raw(&tty, STDIN_FILENO);
		} else if (pf & 1) {
			pty_copy_winsize(STDIN_FILENO, master);
			pty_send_eof(master);
		} else {
			/* the command's stdin is the host's own (a pipe, a file): the
			 * pty is its output only, set up like the terminal it goes to */
			pty_copy_settings(term.tty, master);
		}
		fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
		if (write(sock, "r", 1) != 1) { /* init died meanwhile: its status tells */ }
	}

	/* The control socket, for every session (status, and freeze, resume
	 * and kill by the kill switch sb). Questions for a human (`ask`
	 * rules): the broker, the socket as the channel of `warden approve`,
	 * the reviewer command and the webhook, and the user's terminal when
	 * its keys come here, made before what asks them
	 * (freed after: the askers withdraw their questions as they go; the
	 * channels after the broker, which tells them of the questions' ends;
	 * the terminal last). */
	_cleanup_(termask_freep) struct termask *ta = NULL;
	_cleanup_(asking_channels_freep) struct asking chans = { 0 };
	_cleanup_(control_freep) struct control *ctl = NULL;
	_cleanup_(approvals_freep) struct approvals *ap = NULL;
	if (asking_start(s, log, policy_asks(s->policy) || s->policy->risk.ask > 0, &ap, &ctl, &chans, e) < 0)
		return -1;
	if (ctl) {
		control_set_session(ctl, s->argv, s->workspace, 0);
		control_set_actions(ctl, &(struct control_actions){ .freeze = ctl_freeze,
			.resume = ctl_resume, .kill = ctl_kill, .frozen = ctl_frozen, .ctx = sb });
	}
	struct werr te = { 0 };
	if (ap && term.relay_input && !(ta = termask_new(ap, term.out, term.tty, master, &te)))
		fprintf(stderr, "warden: %s; the terminal cannot answer this session's questions\n", te.msg);
	/* The hook socket (hook.h): tool calls reported from inside, decided
	 * by the tool rules, linked to the execs and connections after them
	 * (made before those, freed after them, before the broker). */
	_cleanup_(hook_freep) struct hook *hk =
		hook_l >= 0 ? hook_new(steal_fd(&hook_l), s->policy, log, ap, diag, c.pid) : NULL;
	_cleanup_(notifier_freep) struct notifier *nt = notifier_new(listener, diag, log);
	if (!nt)
		return werr_set(e, ENOMEM, "supervisor: seccomp notification buffers");
	/* Exec control: what the agent can write (to tell it from what it
	 * cannot), the rules, the sandbox's root (init's). */
	_cleanup_free_ const char **writable = xcalloc(s->policy->npaths + s->nhome_binds + 1,
							sizeof *writable);
	size_t nwritable = 0;
	writable[nwritable++] = s->workspace;
	for (size_t i = 0; i < s->policy->npaths; i++)
		if (s->policy->paths[i].mode == POLICY_RW)
			writable[nwritable++] = s->policy->paths[i].path;
	for (size_t i = 0; i < s->nhome_binds; i++)
		writable[nwritable++] = s->home_binds[i].src;
	_cleanup_(execs_freep) struct execs *x = execs_new(listener, log, s->policy, writable, nwritable,
							  c.pid, e);
	if (!x)
		return -1;
	notifier_set_execs(nt, x);
	execs_set_kernel(x, bx);
	notifier_set_code(nt, s->policy->exec.strict, bx);
	/* `write ask`: file operations held for a question (freed before the
	 * broker: it withdraws what it holds) */
	_cleanup_(writeask_freep) struct writeask *wa =
		writeask_new(&s->policy->write_ask, s->workspace, ap, listener, log);
	notifier_set_files(nt, s->policy->audit_files, wa);
	notifier_set_readonly(nt, s->workspace_ro ? s->workspace : NULL);
	/* the secret names the sandbox makes, noted for the workspace watch
	 * (wsmade.h): noted while their notification is handled, before the
	 * call goes on, so before the watch can see the file */
	_cleanup_(wsmade_freep) struct wsmade *made = wsmade_new();
	notifier_set_made(nt, made, s->policy, s->workspace);
	_cleanup_free_ char *ctl_dir = control_dir_of(s->logdir);
	notifier_set_guarded(nt, ctl_dir);
	_cleanup_(proxy_freep) struct proxy *px =
		proxy_new(steal_fd(&http_l), steal_fd(&socks_l), &s->policy->net_rules, log, e);
	if (!px)
		return -1;
	for (size_t i = 0; i < s->forwards.n; i++)
		if (fwd.fd[i] >= 0)
			proxy_add_forward(px, steal_fd(&fwd.fd[i]), &s->forwards.v[i]);
	if (s->guard)
		proxy_set_guard(px, s->guard);
	if (hk) {
		execs_set_linker(x, hook_link_exec, hk);
		proxy_set_tagger(px, hook_link_conn, hk);
	}
	if (ap) {
		proxy_set_asker(px, &(struct proxy_asker){ .ask = net_ask, .cancel = net_cancel, .ctx = ap },
				s->policy->net_default_ask);
		execs_set_approvals(x, ap);
	}
	_cleanup_(stopper_closep) struct stopper st = { .timerfd = -1 };
	if (stopper_init(&st, c.pidfd, log, s->policy->signal_grace, e) < 0)
		return -1;
	st.ctl = sb;
	/* The detector acts on the session from now on, through the kill
	 * switch (and no longer once this returns). */
	_cleanup_(actor_unset) struct actor actor = { .d = s->detect, .sb = sb, .ap = ap, .log = log };
	if (s->detect)
		detect_set_actor(s->detect, detect_act, &actor);
	if (s->detect && ctl)
		control_set_status_fn(ctl, detect_status, s->detect);
	_cleanup_close_ int timer = limits_timer(s, &tmp_fd, &home_fd);
	struct limits_watch w = { .limits = s->limits, .log = log };
	/* The workspace watched from now on: masks and protections follow what
	 * the host replaces (wswatch.h). */
	struct wswatch *ww = s->plan.watch; /* the plan's: its walk added the directories */
	if (!ww || userns < 0 || mntns < 0)
		return werr_set(e, 0, "supervisor: the workspace watch or the sandbox's namespaces are missing");
	wswatch_attach(ww, &s->plan, s->policy);
	wswatch_set_made(ww, made);
	wswatch_report(ww, log); /* directories the start's walk could not watch */
	struct remasker rm = { .userns = userns, .mntns = mntns, .workspace = s->workspace };
	wswatch_set_remasker(ww, start_remasker, &rm);
	struct ws_ctx wsx = { .w = ww, .log = log, .c = &c };
	/* A log that cannot be written stops the sandbox at once: nothing runs
	 * unrecorded (the log says what it could, log.c). */
	audit_on_failure(log, on_log_failure, &c);
	struct asking ask = { .ap = ap, .ctl = ctl, .term = ta, .rv = chans.rv, .wh = chans.wh,
			      .hook = hk };
	struct kexec_ctx kx = { .b = bx, .log = log };
	int r = event_loop(&c, sigfd, &st, &term, nt, x, listener, px, timer, &w, &wsx, &ask, cw, &kx,
			   la, e);
	/* The decoys' watch closed by the caller while it goes on
	 * (lateclose.h). Not the namespaces: their last reference, closed
	 * here, unmounts the sandbox's tree, which must be gone before the
	 * placeholders are unlinked on the host (else each unlink detaches
	 * the mounts on it in the namespace, a grace period each). */
	if (late)
		late_close_add(late, canary_watch_take_fd(cw));
	if (bx)
		bpfexec_on_refusals(bx, log);
	/* the denials of the last moments, still on their way */
	llaudit_end(la);
	if (exec_stats) {
		*exec_stats = execs_stats(x);
		json_object_set_new(*exec_stats, "kernel", bx ? bpfexec_stats(bx)
						   : json_pack("{s:s, s:s}", "by", "none", "why", kernel_why));
	}
	audit_on_failure(log, NULL, NULL);
	if (audit_failed(log))
		return werr_set(e, EIO, "%s; the sandbox was stopped", audit_failed(log));
	if (r < 0)
		return -1;
	*status = r;
	return 0;
}
