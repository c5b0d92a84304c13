/* reviewer.c - the reviewer command's runs (reviewer.h): a table of
 * REVIEWER_MAX_RUNNING jobs, each a process with its stdout and stderr
 * pipes and its pidfd in the reviewer's own epoll set, a timerfd at the
 * nearest time limit, the questions that wait for a free job in order, and
 * the killed processes not yet reaped. A job ends in a verdict (an answer,
 * or a failure: a denial); verdicts reach the broker from
 * reviewer_dispatch, after the events are read, so that no broker callback
 * ever runs inside another. */
#include "reviewer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "control.h"

extern char **environ;

#define ERR_KEEP 1024      /* bytes of the end of stderr kept */
#define ERR_LINE_MAX 200   /* of its last line, in a reason */
#define MAX_ZOMBIES 32

/* What an epoll event is about: the timer, one of a job's fds, a killed
 * process to reap. */
enum tag { TAG_TIMER, TAG_OUT, TAG_ERR, TAG_PID, TAG_ZOMBIE };

enum job_state { J_FREE, J_RUNNING, J_DONE };

struct job {
	enum job_state state;
	uint32_t gen;               /* bumped at each reuse: stale events are told apart */
	char id[48];
	pid_t pid;
	int pidfd, out, err;        /* -1 when closed */
	char *obuf;
	size_t olen;
	char ebuf[2 * ERR_KEEP];
	size_t elen;
	struct timespec deadline;   /* CLOCK_MONOTONIC */
	/* J_DONE: what to tell the broker */
	enum review_verdict verdict;
	bool failed;                /* a failure (an alert too), not an answer */
	char reason[600];
};

struct waiting {
	char id[48];
	struct waiting *next;
};

struct reviewer {
	struct approvals *a;
	struct audit *log;
	struct strv argv;
	char session[64];
	unsigned limit_s;
	int ep, timer;
	struct job jobs[REVIEWER_MAX_RUNNING];
	struct waiting *queue, **tail;
	int zombies[MAX_ZOMBIES];   /* pidfds of killed processes, -1: none */
};

static uint64_t key(enum tag t, size_t slot, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint64_t)t << 16 | slot;
}

static bool passed(const struct timespec *t, const struct timespec *now)
{
	return t->tv_sec < now->tv_sec || (t->tv_sec == now->tv_sec && t->tv_nsec <= now->tv_nsec);
}

/* ---- the timer ---- */

/* At the nearest time limit; now when a verdict waits to be handed over. */
static void rearm(struct reviewer *r)
{
	struct itimerspec it = { 0 };
	for (size_t i = 0; i < REVIEWER_MAX_RUNNING; i++) {
		const struct job *j = &r->jobs[i];
		const struct timespec *t = j->state == J_DONE ? &(struct timespec){ 0, 1 } :
					   j->state == J_RUNNING ? &j->deadline : NULL;
		if (t && ((!it.it_value.tv_sec && !it.it_value.tv_nsec) || passed(t, &it.it_value)))
			it.it_value = *t;
	}
	timerfd_settime(r->timer, TFD_TIMER_ABSTIME, &it, NULL);
}

/* ---- processes ---- */

static void watch(struct reviewer *r, int fd, enum tag t, size_t slot, uint32_t gen)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = key(t, slot, gen) };
	epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void unwatch_close(struct reviewer *r, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(r->ep, EPOLL_CTL_DEL, *fd, NULL);
	closep(fd);
}

/* A killed process's pidfd, kept until it can be reaped without waiting. */
static void bury(struct reviewer *r, int pidfd)
{
	siginfo_t si = { 0 };
	if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid) {
		close(pidfd);
		return;
	}
	for (size_t i = 0; i < MAX_ZOMBIES; i++)
		if (r->zombies[i] < 0) {
			r->zombies[i] = pidfd;
			watch(r, pidfd, TAG_ZOMBIE, i, 0);
			return;
		}
	/* no room: wait for it (SIGKILL was sent) */
	while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	close(pidfd);
}

static void reap_zombie(struct reviewer *r, size_t i)
{
	siginfo_t si = { 0 };
	if (r->zombies[i] < 0 ||
	    (waitid((idtype_t)P_PIDFD, (id_t)r->zombies[i], &si, WEXITED | WNOHANG) == 0 && !si.si_pid))
		return;
	unwatch_close(r, &r->zombies[i]);
}

/* An fd of 3 or more (the spawn's dup2s onto 0-2 must not clobber one
 * another when warden's own 0-2 were closed). */
static int above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return n;
}

/* The question, sealed, in a memfd at offset 0 (the reviewer's stdin). */
static int question_fd(const char *text, size_t len)
{
	int fd = above_stdio(memfd_create("warden-question", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (fd < 0)
		return -1;
	if (write_all(fd, text, len) < 0 || lseek(fd, 0, SEEK_SET) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* A pipe whose read end (*rd, nonblocking) is ours and write end (*wr)
 * the child's; both above 0-2, close-on-exec. */
static int pipe_in(int *rd, int *wr)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	*rd = above_stdio(p[0]);
	*wr = above_stdio(p[1]);
	if (*rd < 0 || *wr < 0 || fcntl(*rd, F_SETFL, O_NONBLOCK) < 0) {
		int saved = errno;
		closep(rd);
		closep(wr);
		errno = saved;
		return -1;
	}
	return 0;
}

/* Run the reviewer on the question text: j's pid, pidfd, out and err;
 * -1 with errno. */
static int spawn(struct reviewer *r, struct job *j, const char *text, size_t len)
{
	_cleanup_close_ int in = question_fd(text, len);
	_cleanup_close_ int out_w = -1, err_w = -1;
	int out_r = -1, err_r = -1;
	if (in < 0 || pipe_in(&out_r, &out_w) < 0)
		return -1;
	if (pipe_in(&err_r, &err_w) < 0) {
		int saved = errno;
		close(out_r);
		errno = saved;
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out_w, 1);
	posix_spawn_file_actions_adddup2(&fa, err_w, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	/* a session of its own: its own process group, no controlling
	 * terminal (the terminal is the user's and the agent's) */
	pid_t pid;
	int err = spawn_fresh(&pid, false, &fa, POSIX_SPAWN_SETSID, r->argv.v, environ);
	posix_spawn_file_actions_destroy(&fa);
	int pidfd = err ? -1 : above_stdio((int)syscall(SYS_pidfd_open, pid, 0));
	if (pidfd < 0) {
		int saved = err ? err : errno;
		if (!err) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		close(out_r);
		close(err_r);
		errno = saved;
		return -1;
	}
	fcntl(pidfd, F_SETFD, FD_CLOEXEC);
	j->pid = pid;
	j->pidfd = pidfd;
	j->out = out_r;
	j->err = err_r;
	return 0;
}

/* ---- jobs ---- */

/* j has its verdict: a failure (a denial) with why. */
static void fail_job(struct job *j, const char *why)
{
	j->state = J_DONE;
	j->verdict = REVIEW_DENY;
	j->failed = true;
	snprintf(j->reason, sizeof j->reason, "%s", why);
}

/* Stop j's process: its process group killed, the pidfd left to reap,
 * the pipes closed. */
static void stop_process(struct reviewer *r, struct job *j)
{
	if (j->pidfd >= 0) {
		kill(-j->pid, SIGKILL);
		epoll_ctl(r->ep, EPOLL_CTL_DEL, j->pidfd, NULL);
		bury(r, j->pidfd);
		j->pidfd = -1;
	}
	unwatch_close(r, &j->out);
	unwatch_close(r, &j->err);
}

static void release(struct reviewer *r, struct job *j)
{
	stop_process(r, j);
	free(j->obuf);
	uint32_t gen = j->gen + 1;
	*j = (struct job){ .state = J_FREE, .gen = gen, .pidfd = -1, .out = -1, .err = -1 };
}

/* The question as the reviewer reads it (reviewer.h), within
 * REVIEWER_QUESTION_MAX (malloc'd; NULL when even the truncated one is
 * longer). */
static char *question_text(const struct reviewer *r, const struct question *q, size_t *len)
{
	_cleanup_json_ json_t *o = control_question_json(q);
	json_object_set_new(o, "session", json_string(r->session));
	json_object_set_new(o, "reviewer_timeout_s", json_integer(r->limit_s));
	for (int pass = 0; pass < 2; pass++) {
		char *s = json_dumps(o, JSON_COMPACT);
		if (s && strlen(s) + 1 <= REVIEWER_QUESTION_MAX) {
			*len = strlen(s);
			s[(*len)++] = '\n'; /* the NUL's place */
			return s;
		}
		free(s);
		json_object_set_new(o, "detail", json_pack("{s:b}", "truncated", 1));
	}
	return NULL;
}

/* Run the reviewer on q in the free job j. */
static void start(struct reviewer *r, struct job *j, const struct question *q)
{
	snprintf(j->id, sizeof j->id, "%s", q->id);
	size_t i = (size_t)(j - r->jobs);
	size_t len = 0;
	_cleanup_free_ char *text = question_text(r, q, &len);
	if (!text) {
		fail_job(j, "the question is too large for the reviewer");
		return;
	}
	if (spawn(r, j, text, len) < 0) {
		char why[300];
		snprintf(why, sizeof why, "cannot run the reviewer %.200s: %s", r->argv.v[0], strerror(errno));
		fail_job(j, why);
		return;
	}
	j->state = J_RUNNING;
	j->deadline = mono_now();
	j->deadline.tv_sec += r->limit_s;
	watch(r, j->out, TAG_OUT, i, j->gen);
	watch(r, j->err, TAG_ERR, i, j->gen);
	watch(r, j->pidfd, TAG_PID, i, j->gen);
}

static struct job *free_job(struct reviewer *r)
{
	for (size_t i = 0; i < REVIEWER_MAX_RUNNING; i++)
		if (r->jobs[i].state == J_FREE)
			return &r->jobs[i];
	return NULL;
}

/* Read what j's stdout holds; at its end the fd is closed. Past
 * REVIEWER_OUTPUT_MAX the reviewer is stopped. */
static void read_out(struct reviewer *r, struct job *j)
{
	for (;;) {
		if (!j->obuf)
			j->obuf = xmalloc(REVIEWER_OUTPUT_MAX + 1);
		ssize_t n = read(j->out, j->obuf + j->olen, REVIEWER_OUTPUT_MAX + 1 - j->olen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			unwatch_close(r, &j->out);
			return;
		}
		j->olen += (size_t)n;
		if (j->olen > REVIEWER_OUTPUT_MAX) {
			stop_process(r, j);
			fail_job(j, "reviewer printed more than 64 KiB: killed");
			return;
		}
	}
}

/* Read j's stderr, keeping its last ERR_KEEP bytes at least. */
static void read_err(struct reviewer *r, struct job *j)
{
	for (;;) {
		if (j->elen == sizeof j->ebuf) {
			memmove(j->ebuf, j->ebuf + ERR_KEEP, sizeof j->ebuf - ERR_KEEP);
			j->elen -= ERR_KEEP;
		}
		ssize_t n = read(j->err, j->ebuf + j->elen, sizeof j->ebuf - j->elen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			unwatch_close(r, &j->err);
			return;
		}
		j->elen += (size_t)n;
	}
}

/* The last non-empty line of j's stderr as printable ASCII (" (stderr:
 * ...)"), or "". */
static void err_tail(const struct job *j, char *buf, size_t len)
{
	size_t end = j->elen;
	while (end > 0 && (j->ebuf[end - 1] == '\n' || j->ebuf[end - 1] == '\r' || j->ebuf[end - 1] == ' '))
		end--;
	size_t start = end;
	while (start > 0 && j->ebuf[start - 1] != '\n')
		start--;
	buf[0] = '\0';
	if (start == end)
		return;
	char line[ERR_LINE_MAX + 1];
	size_t n = 0;
	for (size_t i = start; i < end && n < ERR_LINE_MAX; i++)
		line[n++] = (unsigned char)j->ebuf[i] >= 0x20 && (unsigned char)j->ebuf[i] < 0x7f ? j->ebuf[i] : '?';
	line[n] = '\0';
	snprintf(buf, len, " (stderr: %s)", line);
}

/* j's process ended: its output read to what is there, its verdict. */
static void job_exited(struct reviewer *r, struct job *j)
{
	siginfo_t si = { 0 };
	if (waitid((idtype_t)P_PIDFD, (id_t)j->pidfd, &si, WEXITED | WNOHANG) < 0) {
		if (errno == EINTR)
			return;
		char why[120];
		snprintf(why, sizeof why, "cannot wait for the reviewer: %s", strerror(errno));
		stop_process(r, j);
		fail_job(j, why);
		return;
	}
	if (!si.si_pid)
		return; /* not yet */
	unwatch_close(r, &j->pidfd);
	if (j->out >= 0)
		read_out(r, j);
	if (j->state != J_RUNNING)
		return; /* too much output */
	if (j->err >= 0)
		read_err(r, j);
	unwatch_close(r, &j->out);
	unwatch_close(r, &j->err);
	char tail[ERR_LINE_MAX + 16], why[sizeof j->reason];
	err_tail(j, tail, sizeof tail);
	if (si.si_code != CLD_EXITED) {
		const char *name = sigabbrev_np(si.si_status);
		snprintf(why, sizeof why, "reviewer killed by signal %d%s%s%s%s", si.si_status,
			 name ? " (SIG" : "", name ? name : "", name ? ")" : "", tail);
		fail_job(j, why);
	} else if (si.si_status != 0) {
		snprintf(why, sizeof why, "reviewer exited with status %d%s", si.si_status, tail);
		fail_job(j, why);
	} else {
		struct reviewer_answer ans;
		struct werr e = { 0 };
		if (reviewer_parse_answer(j->obuf ? j->obuf : "", j->olen, &ans, &e) < 0) {
			snprintf(why, sizeof why, "reviewer's answer refused: %.300s%s", e.msg, tail);
			fail_job(j, why);
			return;
		}
		j->state = J_DONE;
		j->verdict = ans.verdict;
		snprintf(j->reason, sizeof j->reason, "%s", ans.reason);
	}
}

/* The time limit of each running job that passed. */
static void on_timer(struct reviewer *r)
{
	uint64_t ticks;
	(void)!read(r->timer, &ticks, sizeof ticks);
	struct timespec now = mono_now();
	for (size_t i = 0; i < REVIEWER_MAX_RUNNING; i++) {
		struct job *j = &r->jobs[i];
		if (j->state != J_RUNNING || !passed(&j->deadline, &now))
			continue;
		stop_process(r, j);
		char why[96];
		snprintf(why, sizeof why, "reviewer timed out: no answer within %u s, killed", r->limit_s);
		fail_job(j, why);
	}
}

/* Each verdict to the broker, then the waiting questions into free jobs,
 * until neither is left: a verdict's callbacks may ask, end or free
 * anything here, so the table is read afresh after each. */
static void hand_over(struct reviewer *r)
{
	for (;;) {
		struct job *j = NULL;
		for (size_t i = 0; i < REVIEWER_MAX_RUNNING && !j; i++)
			if (r->jobs[i].state == J_DONE)
				j = &r->jobs[i];
		if (j) {
			char id[sizeof j->id], reason[sizeof j->reason];
			memcpy(id, j->id, sizeof id);
			memcpy(reason, j->reason, sizeof reason);
			enum review_verdict v = j->verdict;
			bool failed = j->failed;
			release(r, j);
			if (failed)
				audit_emit_event(r->log, ev_alert(&(struct ev_alert){
					.rule = "approval.reviewer-failed", .path = r->argv.v[0],
					.action = reason }), NULL);
			approvals_review(r->a, id, v, reason[0] ? reason : NULL);
			continue;
		}
		struct job *f = r->queue ? free_job(r) : NULL;
		if (!f)
			break;
		struct waiting *w = r->queue;
		r->queue = w->next;
		if (!r->queue)
			r->tail = &r->queue;
		const struct question *q = approvals_find(r->a, w->id);
		free(w);
		if (q && !q->reviewed)
			start(r, f, q);
	}
	rearm(r);
}

static void reviewer_dispatch(struct loop *l, const struct source *src, uint32_t events)
{
	struct reviewer *r = src->ctx;
	struct epoll_event evs[32];
	int n = epoll_wait(r->ep, evs, ARRAY_LEN(evs), 0);
	for (int k = 0; k < n; k++) {
		uint64_t u = evs[k].data.u64;
		enum tag t = (enum tag)(u >> 16 & 0xffff);
		size_t slot = (size_t)(u & 0xffff);
		uint32_t gen = (uint32_t)(u >> 32);
		if (t == TAG_TIMER) {
			on_timer(r);
			continue;
		}
		if (t == TAG_ZOMBIE) {
			if (slot < MAX_ZOMBIES)
				reap_zombie(r, slot);
			continue;
		}
		if (slot >= REVIEWER_MAX_RUNNING)
			continue;
		struct job *j = &r->jobs[slot];
		if (j->gen != gen || j->state != J_RUNNING)
			continue; /* an event of a process gone meanwhile */
		if (t == TAG_OUT && j->out >= 0)
			read_out(r, j);
		else if (t == TAG_ERR && j->err >= 0)
			read_err(r, j);
		else if (t == TAG_PID && j->pidfd >= 0)
			job_exited(r, j);
	}
	hand_over(r);
}

/* ---- the broker's side ---- */

static void rv_asked(void *ctx, const struct question *q)
{
	struct reviewer *r = ctx;
	struct job *j = r->queue ? NULL : free_job(r);
	if (j) {
		start(r, j, q); /* a failure to start is handed over from the loop */
		rearm(r);
		return;
	}
	struct waiting *w = xcalloc(1, sizeof *w);
	snprintf(w->id, sizeof w->id, "%s", q->id);
	*r->tail = w;
	r->tail = &w->next;
}

/* The question ended (answered elsewhere, timed out, cancelled, handed to
 * the humans): its run stops, or it no longer waits. */
static void rv_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct reviewer *r = ctx;
	for (size_t i = 0; i < REVIEWER_MAX_RUNNING; i++)
		if (r->jobs[i].state != J_FREE && strcmp(r->jobs[i].id, q->id) == 0)
			release(r, &r->jobs[i]);
	for (struct waiting **pp = &r->queue; *pp;) {
		struct waiting *w = *pp;
		if (strcmp(w->id, q->id) == 0) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
	r->tail = &r->queue;
	while (*r->tail)
		r->tail = &(*r->tail)->next;
	rearm(r); /* the next waiting question starts from the loop */
	if (r->queue) {
		struct itimerspec now = { .it_value = { 0, 1 } };
		timerfd_settime(r->timer, 0, &now, NULL);
	}
}

/* ---- setup ---- */

/* May the agent write prog (its real path in the workspace or a `path
 * rw`)? */
static bool agent_writable(const char *prog, const struct policy *p, const char *workspace)
{
	_cleanup_free_ char *real = realpath(prog, NULL);
	_cleanup_free_ char *ws = workspace ? realpath(workspace, NULL) : NULL;
	if (!real)
		return false;
	if (ws && path_is_within(real, ws))
		return true;
	for (size_t i = 0; i < p->npaths; i++) {
		if (p->paths[i].mode != POLICY_RW)
			continue;
		_cleanup_free_ char *d = realpath(p->paths[i].path, NULL);
		if (d && path_is_within(real, d))
			return true;
	}
	return false;
}

struct reviewer *reviewer_new(struct approvals *a, const struct policy *p, const char *session,
			      const char *workspace, struct audit *log, struct werr *e)
{
	const struct strv *cmd = &p->approve.command;
	const char *prog = cmd->n ? cmd->v[0] : "";
	struct stat st;
	if (stat(prog, &st) < 0) {
		werr_errno(e, "approve command: %s", prog);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || access(prog, X_OK) < 0) {
		werr_set(e, EACCES, "approve command: %s is not an executable file", prog);
		return NULL;
	}
	if (agent_writable(prog, p, workspace)) {
		werr_set(e, 0, "approve command: %s is where the agent can write (the workspace or a "
			 "`path rw`): it could answer its own questions", prog);
		return NULL;
	}
	struct reviewer *r = xcalloc(1, sizeof *r);
	r->a = a;
	r->log = log;
	snprintf(r->session, sizeof r->session, "%s", session);
	r->limit_s = reviewer_limit_s(p->approve.timeout_s ? p->approve.timeout_s
							  : POLICY_APPROVE_TIMEOUT_DEFAULT);
	for (size_t i = 0; i < cmd->n; i++)
		strv_push(&r->argv, cmd->v[i]);
	r->tail = &r->queue;
	for (size_t i = 0; i < REVIEWER_MAX_RUNNING; i++)
		r->jobs[i] = (struct job){ .pidfd = -1, .out = -1, .err = -1 };
	for (size_t i = 0; i < MAX_ZOMBIES; i++)
		r->zombies[i] = -1;
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	r->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = key(TAG_TIMER, 0, 0) };
	if (r->ep < 0 || r->timer < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->timer, &ev) < 0) {
		werr_errno(e, "approve command: the reviewer's epoll set and timer");
		reviewer_free(r);
		return NULL;
	}
	approvals_set_reviewer(a, &(struct approval_channel){ .name = "reviewer", .asked = rv_asked,
							      .ended = rv_ended, .ctx = r });
	return r;
}

/* Wait a little for a killed process (its pidfd), then let it go: a
 * process the kernel cannot kill must not hold the session's end. */
static void reap_briefly(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	siginfo_t si;
	if (poll(&p, 1, 200) > 0)
		waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG);
	close(pidfd);
}

void reviewer_free(struct reviewer *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < REVIEWER_MAX_RUNNING; i++) {
		struct job *j = &r->jobs[i];
		if (j->pidfd >= 0) {
			kill(-j->pid, SIGKILL);
			reap_briefly(steal_fd(&j->pidfd));
		}
		closep(&j->out);
		closep(&j->err);
		free(j->obuf);
	}
	for (size_t i = 0; i < MAX_ZOMBIES; i++)
		if (r->zombies[i] >= 0)
			reap_briefly(r->zombies[i]);
	while (r->queue) {
		struct waiting *w = r->queue;
		r->queue = w->next;
		free(w);
	}
	closep(&r->ep);
	closep(&r->timer);
	strv_free(&r->argv);
	free(r);
}

int reviewer_watch(struct loop *l, struct reviewer *r, struct werr *e)
{
	return loop_add(l, "the reviewer command", r->ep, reviewer_dispatch, r, e);
}
