/* freeze.c - freezing, resuming and killing the whole sandbox (freeze.h).
 *
 * With the session's cgroup v2 (limits.h: made when a limit needs one, and
 * init in it) the kernel does it for every process at once: cgroup.freeze
 * 1 and 0, cgroup.kill. Without one, signals, sent from inside: the
 * supervisor asks init (SANDBOX_SIG_FREEZE and _RESUME through its pidfd,
 * sandbox.h), init sends SIGSTOP (SIGCONT) to every other process of its
 * pid namespace with one kill(-1) and answers on its socket
 * (INIT_MSG_SIGNALLED), which the freeze waits for (ANSWER_MS at most).
 * The kernel makes that kill whole: it walks the namespace's processes
 * under the lock a fork takes to add one, and a fork the signal races is
 * restarted, so no process escapes by forking, however fast (a scan of
 * /proc from outside is always one step behind a process that forks and
 * exits at once), and none by hiding from the supervisor's view of
 * /proc; init then makes sure every one stopped, and kills the sandbox
 * when one runs again while held (sandbox/initfreeze.c). A suspension
 * (Ctrl-Z: jobctl.c) holds the sandbox the same way, with no timeout; a
 * freeze and a suspension may overlap, and the sandbox goes on only when
 * neither holds it. Init itself goes on (kill(-1) skips the sender): it reaps, and
 * passes no SIGCONT of warden's on while frozen. Nothing outside the
 * sandbox is in its pid namespace (the supervisor, the re-masker, warden's
 * helpers stay in the host's), and the sandbox cannot make a pid namespace
 * of its own (seccomp), so that namespace is the sandbox. The event's
 * process count is the supervisor's scan of /proc for that namespace (the
 * inode of /proc/PID/ns/pid) after init's answer. A kill without the
 * cgroup is SIGKILL to init through its pidfd: the kernel then kills
 * everything in the namespace, stopped or not. A freeze arms a timerfd at
 * its timeout (CLOCK_MONOTONIC); a resume or a kill disarms it. */
#include "freeze.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "../sandbox/initfreeze.h"
#include "../sandbox/initmsg.h"
#include "../sandbox/sandbox.h"

/* How long a freeze or a resume by signals waits for init's answer: a
 * resume is one kill(-1) away, microseconds but on a swamped machine; a
 * freeze is init's looks until all have stopped, FREEZE_BUDGET_MS at most
 * (initfreeze.h), and the answer must come after the last. Without it in
 * time, a freeze is undone and refused (the detector kills instead). */
#define ANSWER_MS 2000
_Static_assert(FREEZE_BUDGET_MS + 500 <= ANSWER_MS, "init's last look must leave time for its answer");

struct sbctl {
	int pidfd;              /* init's (borrowed) */
	int sock;               /* init's socket, for its answers (borrowed) */
	pid_t pid;
	char *cgroup;           /* the session's cgroup v2, or NULL */
	int in_cgroup;          /* init in it: 1, not: -1, not known yet: 0 */
	const struct policy *p;
	struct audit *log;
	dev_t ns_dev;           /* init's pid namespace */
	ino_t ns_ino;
	bool ns_known;
	bool frozen;            /* by request (a freeze) */
	bool suspended;         /* for warden's own stop (jobctl.c) */
	bool held;              /* the sandbox stopped, for either or both */
	bool by_cgroup;         /* how it was */
	int timer;              /* the freeze's timeout (-1: none could be had) */
	struct timespec deadline; /* CLOCK_MONOTONIC, while frozen */
	char *timeout_why;      /* the kill's reason when it runs out */
};

/* Is init in dir? (/proc/PID/cgroup "0::PATH", dir ending with PATH) */
static bool init_in(pid_t pid, const char *dir)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/cgroup", (int)pid);
	_cleanup_free_ char *text = read_text_file(p);
	const char *line = text ? strstr(text, "0::") : NULL;
	if (!line || (line != text && line[-1] != '\n'))
		return false;
	line += 3;
	size_t len = strcspn(line, "\n"), dl = strlen(dir);
	return len > 1 && line[0] == '/' && dl >= len && strncmp(dir + dl - len, line, len) == 0;
}

bool sbctl_pidns(pid_t init_pid, struct stat *st)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/ns/pid", (int)init_pid);
	return stat(p, st) == 0;
}

struct sbctl *sbctl_new(int init_pidfd, pid_t init_pid, int init_sock, const struct stat *pidns,
			const char *cgroup_dir, const struct policy *pol, struct audit *log)
{
	struct sbctl *c = xcalloc(1, sizeof *c);
	c->p = pol;
	c->pidfd = init_pidfd;
	c->sock = init_sock;
	c->pid = init_pid;
	c->log = log;
	c->cgroup = cgroup_dir ? xstrdup(cgroup_dir) : NULL;
	c->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (pidns) {
		c->ns_dev = pidns->st_dev;
		c->ns_ino = pidns->st_ino;
		c->ns_known = true;
	}
	return c;
}

void sbctl_free(struct sbctl *c)
{
	if (!c)
		return;
	if (c->timer >= 0)
		close(c->timer);
	free(c->timeout_why);
	free(c->cgroup);
	free(c);
}

bool sbctl_frozen(const struct sbctl *c)
{
	return c && c->held;
}

bool sbctl_suspended(const struct sbctl *c)
{
	return c && c->suspended;
}

long sbctl_freeze_left(const struct sbctl *c)
{
	if (!c || !c->frozen)
		return -1;
	struct timespec now = mono_now();
	long s = (long)(c->deadline.tv_sec - now.tv_sec);
	if (c->deadline.tv_nsec > now.tv_nsec)
		s++;
	return s > 0 ? s : 0;
}

/* The freeze's timeout armed (at, from now; 0 s: 1 ns) or disarmed. */
static int arm(struct sbctl *c, bool on, unsigned s)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)s, .tv_nsec = s ? 0 : 1 } };
	if (!on)
		its.it_value.tv_nsec = 0;
	c->deadline = mono_now();
	c->deadline.tv_sec += (time_t)s;
	return timerfd_settime(c->timer, 0, &its, NULL);
}

/* Init has not ended (its end not collected either). */
static bool init_alive(const struct sbctl *c)
{
	siginfo_t si = { 0 };
	if (waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return false;
	return si.si_pid == 0;
}

static int signal_fd(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Is there a cgroup to act on? Asked at the first action: init is moved
 * into it after the sbctl is made (or the move failed). */
static bool by_cgroup(struct sbctl *c)
{
	if (c->cgroup && !c->in_cgroup)
		c->in_cgroup = init_in(c->pid, c->cgroup) ? 1 : -1;
	return c->in_cgroup > 0;
}

/* Write "1" or "0" to the cgroup's file (cgroup.freeze, cgroup.kill). */
static int cgroup_write(const struct sbctl *c, const char *file, const char *v)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", c->cgroup, file);
	_cleanup_close_ int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return write(fd, v, 1) == 1 ? 0 : -1;
}

/* Is the process pid (a name in /proc, dirfd pd) in init's pid namespace? */
static bool in_sandbox(const struct sbctl *c, int pd, const char *pid)
{
	char p[sizeof ((struct dirent *)0)->d_name + 8];
	struct stat st;
	snprintf(p, sizeof p, "%s/ns/pid", pid);
	return fstatat(pd, p, &st, 0) == 0 && st.st_ino == c->ns_ino && st.st_dev == c->ns_dev;
}

/* How many processes of the sandbox but init /proc shows (one that an
 * unprivileged supervisor may not look at is not counted); 0 when /proc
 * cannot be read. */
static unsigned count_processes(const struct sbctl *c)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int pd = dirfd(d);
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (!*end && v > 0 && (pid_t)v != c->pid && in_sandbox(c, pd, de->d_name))
			n++;
	}
	closedir(d);
	return n;
}

/* Milliseconds from now to t, 0 when past. */
static int ms_until(struct timespec t)
{
	struct timespec now = mono_now();
	long ms = (long)(t.tv_sec - now.tv_sec) * 1000 + (t.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/* Init's next message into m (its fds, none expected, closed): as
 * initmsg_recv. */
static ssize_t take_msg(const struct sbctl *c, struct init_msg *m)
{
	*m = (struct init_msg){ 0 };
	struct init_fds none;
	ssize_t k = initmsg_recv(c->sock, m, &none);
	init_fds_close(&none);
	return k;
}

/* A command's stop that init reported just before a freeze or resume was
 * asked (a Ctrl-Z at that instant): taken, and undone (the command
 * continued, as init passes a SIGCONT on to its group, or, frozen by
 * signals, when the sandbox is resumed): the session is not suspended in
 * the middle of a request, and nothing waits for a `fg` that cannot come.
 * 0: the answer is still to come. */
static int stop_undone(const struct sbctl *c)
{
	struct init_msg m;
	if (take_msg(c, &m) <= 0)
		return -1;
	signal_fd(c->pidfd, SIGCONT);
	return 0;
}

/* Init found a process running in the sandbox it holds by signals (a
 * process that had the kernel continue it: initfreeze.c): the sandbox
 * killed, as a freeze that does not hold is none. -1: init's answer will
 * not come. */
static int escaped(struct sbctl *c)
{
	struct init_msg m;
	if (take_msg(c, &m) > 0)
		sbctl_escaped(c);
	return -1;
}

/* Init's next message, when it is its answer with sig: 1; one of an
 * earlier request's (late) is taken and 0; anything else (EXITED, the
 * socket's end) is left for services.c and -1. */
static int take_answer(struct sbctl *c, int sig, int *err)
{
	int type = 0;
	ssize_t n;
	while ((n = recv(c->sock, &type, sizeof type, MSG_PEEK | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n == (ssize_t)sizeof type && type == INIT_MSG_STOPPED)
		return stop_undone(c);
	if (n == (ssize_t)sizeof type && type == INIT_MSG_ESCAPED)
		return escaped(c);
	if (n != (ssize_t)sizeof type || type != INIT_MSG_SIGNALLED)
		return -1;
	struct init_msg m;
	if (take_msg(c, &m) <= 0)
		return -1;
	*err = m.errnum;
	return m.status == sig ? 1 : 0;
}

/* Ask init to send sig (SIGSTOP: req SANDBOX_SIG_FREEZE; SIGCONT: _RESUME)
 * to every other process of the sandbox, and wait for its answer. -1 with
 * e set (what: "freezing", "resuming") when init has ended, did not answer
 * in ANSWER_MS, or its kill failed. */
static int ask_init(struct sbctl *c, int req, int sig, const char *what, struct werr *e)
{
	if (signal_fd(c->pidfd, req) < 0)
		return werr_errno(e, "%s the sandbox: a signal to its init", what);
	struct timespec end = mono_now();
	end.tv_sec += ANSWER_MS / 1000;
	end.tv_nsec += (ANSWER_MS % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		struct pollfd pf[2] = { { .fd = c->sock, .events = POLLIN },
					{ .fd = c->pidfd, .events = POLLIN } };
		int left = ms_until(end);
		int r = left > 0 ? poll(pf, 2, left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return werr_errno(e, "%s the sandbox: waiting for its init", what);
		if (r == 0)
			return werr_set(e, ETIMEDOUT, "%s the sandbox: its init did not answer in %d ms",
					what, ANSWER_MS);
		int err = 0, got = pf[0].revents ? take_answer(c, sig, &err) : -1;
		if (got < 0)
			return werr_set(e, ESRCH, "the sandbox has ended");
		/* ESRCH: nothing but init left to signal */
		if (got > 0 && err == EAGAIN && sig == SIGSTOP)
			return werr_set(e, err, "%s the sandbox: a process of it would not stay "
					"stopped (it has the kernel continue it: a timer or an I/O "
					"signal set to SIGCONT)", what);
		if (got > 0 && err && err != ESRCH)
			return werr_set(e, err, "%s the sandbox: its init's kill(-1, %s)", what,
					sig == SIGSTOP ? "SIGSTOP" : "SIGCONT");
		if (got > 0)
			return 0;
	}
}

static void record(struct sbctl *c, const char *action, const char *by, long uid,
		   const char *reason, bool cgroup, unsigned processes)
{
	audit_emit_event(c->log, ev_action(&(struct ev_action){ .action = action, .by = by,
		.uid = uid, .reason = reason, .how = cgroup ? "cgroup" : "signals",
		.processes = cgroup ? 0 : processes }), NULL);
}

/* "45s", "10m", "90m", "2h": as a profile writes it */
static void duration_text(unsigned s, char *buf, size_t len)
{
	if (s == 0 || s % 60)
		snprintf(buf, len, "%us", s);
	else if (s % 3600)
		snprintf(buf, len, "%um", s / 60);
	else
		snprintf(buf, len, "%uh", s / 3600);
}

/* Stop every process of the sandbox (what "what" says: "freezing"), by
 * its cgroup or init's signals, unless it is held already; *n the
 * processes signalled (0: by the cgroup, or held already). */
static int hold(struct sbctl *c, const char *what, unsigned *n, struct werr *e)
{
	*n = 0;
	if (c->held)
		return 0;
	if (by_cgroup(c) && cgroup_write(c, "cgroup.freeze", "1") == 0) {
		c->held = c->by_cgroup = true;
		return 0;
	}
	if (!c->ns_known)
		return werr_set(e, 0, "%s the sandbox: its pid namespace is unknown", what);
	if (ask_init(c, SANDBOX_SIG_FREEZE, SIGSTOP, what, e) < 0) {
		/* undone, should init do it late (the resume is handed over
		 * after the freeze: sandbox.h) */
		if (e->errnum != ESRCH)
			signal_fd(c->pidfd, SANDBOX_SIG_RESUME);
		return -1;
	}
	c->held = true;
	c->by_cgroup = false;
	*n = count_processes(c);
	return 0;
}

/* Let the sandbox go on, unless a freeze or a suspension still holds it;
 * *n as hold's. */
static int release(struct sbctl *c, unsigned *n, struct werr *e)
{
	*n = 0;
	if (!c->held || c->frozen || c->suspended)
		return 0;
	if (c->by_cgroup) {
		if (cgroup_write(c, "cgroup.freeze", "0") < 0)
			return werr_errno(e, "resuming the sandbox: %s/cgroup.freeze", c->cgroup);
	} else if (ask_init(c, SANDBOX_SIG_RESUME, SIGCONT, "resuming", e) < 0) {
		return -1;
	} else {
		*n = count_processes(c);
	}
	c->held = false;
	return 0;
}

/* Frozen: the timeout armed (it cannot fail: the timer is there, the
 * value valid) with the kill's reason, the action recorded, the user
 * told. */
static void frozen(struct sbctl *c, const struct freeze_req *r, unsigned processes)
{
	c->frozen = true;
	unsigned s = policy_freeze_timeout(c->p, r->attended);
	char d[32];
	duration_text(s, d, sizeof d);
	free(c->timeout_why);
	c->timeout_why = s == 0 && c->p->freeze_timeout_auto
		? xstrdup("frozen with nobody to decide (no terminal, `approve command` or `approve "
			  "webhook`; `freeze timeout auto`)")
		: xasprintf("frozen for %s without `warden resume` (`freeze timeout %s`)", d, d);
	arm(c, true, s);
	record(c, "freeze", r->by, r->uid, r->reason, c->by_cgroup, processes);
	const char *colon = r->reason ? ": " : "", *why = r->reason ? r->reason : "";
	if (s)
		wnote("the sandbox is frozen%s%s; `warden resume` or `warden kill` decides, Ctrl-C (SIGINT, "
		      "SIGTERM, SIGHUP to warden) ends it, and in %s it ends by itself", colon, why, d);
	else
		wnote("the sandbox is frozen%s%s", colon, why);
}

int sbctl_freeze(struct sbctl *c, const struct freeze_req *r, struct werr *e)
{
	if (c->frozen)
		return werr_set(e, 0, "the sandbox is frozen already");
	if (!init_alive(c))
		return werr_set(e, ESRCH, "the sandbox has ended");
	/* no timer, no freeze: a freeze must end */
	if (c->timer < 0)
		return werr_set(e, EMFILE, "freezing the sandbox: no timer for its `freeze timeout`");
	unsigned n;
	if (hold(c, "freezing", &n, e) < 0)
		return -1; /* said: the detector then kills (fail closed) */
	frozen(c, r, n);
	return 0;
}

int sbctl_resume(struct sbctl *c, const char *by, long uid, struct werr *e)
{
	if (!c->frozen)
		return werr_set(e, 0, c->suspended ? "the session is suspended (Ctrl-Z): `fg` in its "
				"terminal continues it" : "the sandbox is not frozen");
	c->frozen = false;
	unsigned n;
	if (release(c, &n, e) < 0) {
		c->frozen = true;
		return -1;
	}
	arm(c, false, 0);
	record(c, "resume", by, uid, NULL, c->by_cgroup, n);
	return 0;
}

int sbctl_kill(struct sbctl *c, const char *by, long uid, const char *reason, struct werr *e)
{
	if (!init_alive(c))
		return werr_set(e, ESRCH, "the sandbox has ended");
	bool cgroup = by_cgroup(c) && cgroup_write(c, "cgroup.kill", "1") == 0;
	if (!cgroup && signal_fd(c->pidfd, SIGKILL) < 0)
		return werr_errno(e, "killing the sandbox: SIGKILL to its init");
	/* what was stopped dies stopped */
	c->frozen = c->suspended = c->held = false;
	arm(c, false, 0);
	record(c, "kill", by, uid, reason, cgroup, cgroup ? 0 : 1);
	return 0;
}

int sbctl_suspend(struct sbctl *c, int sig, struct werr *e)
{
	if (c->suspended)
		return 0;
	if (!init_alive(c))
		return werr_set(e, ESRCH, "the sandbox has ended");
	unsigned n;
	if (hold(c, "suspending", &n, e) < 0)
		return -1;
	c->suspended = true;
	char why[64];
	const char *abbrev = sigabbrev_np(sig);
	snprintf(why, sizeof why, "the command stopped (SIG%s)", abbrev ? abbrev : "?");
	record(c, "suspend", "terminal", (long)getuid(), why, c->by_cgroup, n);
	return 0;
}

int sbctl_unsuspend(struct sbctl *c, struct werr *e)
{
	if (!c->suspended)
		return 0;
	c->suspended = false;
	unsigned n;
	if (release(c, &n, e) < 0) {
		c->suspended = true;
		return -1;
	}
	record(c, "continue", "terminal", (long)getuid(), NULL, c->by_cgroup, n);
	return 0;
}

void sbctl_escaped(struct sbctl *c)
{
	const char *why = "a process of the sandbox ran while it was held by signals (it had "
			  "the kernel continue it: a timer or an I/O signal set to SIGCONT)";
	wnote("killing the sandbox: %s", why);
	struct werr e = { 0 };
	if (sbctl_kill(c, "escape", -1, why, &e) == 0)
		return;
	/* init killed everything already (initfreeze.c), and may be gone */
	c->frozen = c->suspended = c->held = false;
	arm(c, false, 0);
	record(c, "kill", "escape", -1, why, false, 0);
}

/* The timeout ran out: a sandbox still frozen is killed, and the user
 * told why. */
static void on_timeout(struct loop *l, const struct source *src, uint32_t events)
{
	struct sbctl *c = src->ctx;
	uint64_t n;
	if (read(c->timer, &n, sizeof n) != sizeof n || !c->frozen)
		return;
	_cleanup_free_ char *why = steal_ptr(&c->timeout_why);
	wnote("killing the frozen sandbox: %s", why);
	struct werr e = { 0 };
	if (sbctl_kill(c, "timeout", -1, why, &e) < 0 && e.errnum != ESRCH)
		wnote("the frozen sandbox could not be killed: %s", e.msg);
}

int sbctl_watch(struct loop *l, struct sbctl *c, struct werr *e)
{
	if (c->timer < 0)
		return 0; /* every freeze is refused: nothing to time */
	return loop_add(l, "the freeze's timer", c->timer, on_timeout, c, e);
}
