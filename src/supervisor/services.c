/* services.c - the second phase of a session (services.h): the modules
 * that serve the running sandbox, made and wired in order; then each adds
 * its own fds to the loop (X_watch), the session's own sources (init's
 * pidfd, the signals, the limits' timer) added here. */
#include "services.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../audit/events.h"
#include "../common/shown.h"
#include "../control/approval.h"
#include "../control/control.h"
#include "../control/ctldir.h"
#include "../control/hook.h"
#include "../control/reviewer.h"
#include "../control/termask.h"
#include "../control/webhook.h"
#include "../detect/canary.h"
#include "../detect/detect.h"
#include "../net/proxy.h"
#include "connowner.h"
#include "../net/proxy_mcp.h"
#include "publish.h"
#include "../sandbox/limits.h"
#include "../workspace/wsclock.h"
#include "../workspace/wsmade.h"
#include "../workspace/wswatch.h"
#include "exec/bpfexec.h"
#include "exec/execs.h"
#include "exec/hashdisk.h"
#include "freeze.h"
#include "llaudit.h"
#include "notify.h"
#include "filewhy.h"
#include "fanread.h"
#include "../sandbox/paths.h"
#include "sshagent_srv.h"
#include "writeask.h"

/* ---- making them ---- */

/* Each decoy init could not place, said; then the watch of those it
 * placed. */
/* The session's detector, once the building callback made it, or NULL. */
static struct detect *session_detector(const struct supervisor_cfg *cfg)
{
	return cfg->detect ? *cfg->detect : NULL;
}

static struct canary_watch *canary_start(const struct canary_set *cs, const struct init_msg *m,
					 int home_fd, struct audit *log)
{
	if (!cs)
		return NULL;
	for (size_t i = 0; i < cs->n; i++)
		if (!cs->v[i].off && !(m->canary_placed & (1u << i)))
			wnote("canary credentials: ~/%s could not be placed in the sandbox's home "
			      "(%s); the session runs without it", cs->v[i].rel,
			      strerror(m->canary_err ? m->canary_err : EIO));
	return canary_watch_new(cs, m->canary_placed, home_fd, log);
}

/* The control socket's freeze, resume and kill: the kill switch's. */
static int ctl_freeze(void *ctx, long uid, const char *reason, struct werr *e)
{
	/* the one who asked decides */
	return sbctl_freeze(ctx, &(struct freeze_req){ .by = "control", .uid = uid, .reason = reason,
						       .attended = true }, e);
}

/* The session's own terminal told of a resume and a kill from elsewhere,
 * as it was of the freeze (freeze.c says that one). */
static int ctl_resume(void *ctx, long uid, struct werr *e)
{
	if (sbctl_resume(ctx, "control", uid, e) < 0)
		return -1;
	wnote("the sandbox goes on: resumed by `warden resume` (uid %ld)", uid);
	return 0;
}

static int ctl_kill(void *ctx, long uid, const char *reason, struct werr *e)
{
	if (sbctl_kill(ctx, "control", uid, reason, e) < 0)
		return -1;
	wnote("the sandbox was killed by `warden kill` (uid %ld)%s%s", uid, reason ? ": " : "",
	      reason ? reason : "");
	return 0;
}

static bool ctl_frozen(void *ctx)
{
	return sbctl_frozen(ctx);
}

static bool ctl_suspended(void *ctx)
{
	return sbctl_suspended(ctx);
}

static long ctl_freeze_left(void *ctx)
{
	return sbctl_freeze_left(ctx);
}

/* The session's control socket in its runtime directory (ctldir.h), for
 * every session (`warden status|freeze|resume|kill`, and `warden approve` when
 * the policy asks: asks), one that cannot be made is said, not an error;
 * when the policy asks, the broker first, and after the socket the
 * reviewer command and the webhook the policy names (one it cannot use is
 * an error). Nothing of init's: made while init builds the sandbox. */
static int asking_start(struct services *sv, struct werr *e)
{
	const struct sandbox_spec *s = sv->s;
	bool asks = policy_asks(s->policy) || s->policy->risk.ask > 0;
	const char *path = audit_path(sv->log), *base = strrchr(path, '/');
	char session[64];
	snprintf(session, sizeof session, "%s", base ? base + 1 : path);
	char *dot = strstr(session, ".jsonl");
	if (dot)
		*dot = '\0';
	if (asks && !(sv->ap = approvals_new(sv->log, session, s->policy)))
		return werr_errno(e, "supervisor: the questions' timer");
	_cleanup_free_ char *refused = NULL;
	sv->ctl_dir = control_dir_make(s->logdir, &refused);
	if (refused)
		wnote("control socket: %s; this session's socket is in %s instead (`warden status` "
		      "finds it there while that directory lasts)", refused, sv->ctl_dir);
	struct werr ce = { 0 };
	sv->ctl = control_new(&(struct control_cfg){ .dir = sv->ctl_dir, .session = session,
		.approvals = sv->ap, .log = sv->log, .argv = s->argv.v, .workspace = s->workspace,
		.actions = &(struct control_actions){ .freeze = ctl_freeze, .resume = ctl_resume,
			.kill = ctl_kill, .frozen = ctl_frozen, .ctx = sv->L->sb,
			.freeze_left = ctl_freeze_left, .suspended = ctl_suspended },
		.status_fn = session_detector(sv->cfg) ? detect_status : NULL,
		.status_ctx = session_detector(sv->cfg) }, &ce);
	if (!sv->ctl) {
		char buf[1200];
		wnote("%s; `warden status`, `warden kill`%s cannot reach this session",
		      werr_str(&ce, buf, sizeof buf), asks ? " and `warden approve`" : "");
	}
	if (!asks)
		return 0;
	const struct policy_approve *pa = &s->policy->approve;
	if (pa->command.n &&
	    !(sv->rv = reviewer_new(sv->ap, s->policy, session, s->workspace, sv->log, e)))
		return -1;
	if (pa->webhook && !(sv->wh = webhook_new(sv->ap, pa->webhook, session, sv->log, e)))
		return -1;
	return 0;
}

/* No terminal to ask on (stdin a pipe, warden in the background): each
 * question said on stderr, with how to answer it, instead of a silent
 * wait until its timeout. */
static void note_asked(void *ctx, const struct question *q)
{
	(void)ctx;
	_cleanup_free_ char *what = text_shown(q->summary);
	wnote("question %s waits for an answer (%s), with no terminal here to ask on: `warden "
	      "approve %s allow` (or deny) from another; unanswered, it is denied in %u s", q->id,
	      what, q->id, q->timeout_s);
}

/* The user's terminal answers questions when its keys come here (the
 * terminal is set up once init sent the pty); else, outside CI mode
 * (whose questions go to the reviewer and the webhook, or are refused at
 * once), each question is said on stderr. */
static void termask_start(struct services *sv)
{
	struct werr te = { 0 };
	if (sv->ap && sv->term.relay_input &&
	    !(sv->ta = termask_new(sv->ap, &(struct termask_out){ .fd = sv->term.out,
		    .put = term_put, .ctx = &sv->term }, sv->term.tty, sv->term.master, &te)))
		wnote("%s; the terminal cannot answer this session's questions", te.msg);
	if (sv->ap && !sv->ta && !sv->s->policy->approve.ci)
		approvals_add_channel(sv->ap, &(struct approval_channel){ .name = "note",
			.asked = note_asked });
}

/* An allowlist's `exec allow FILE` whose FILE was not there when the
 * profile was read (policy_exec.absent), in a place the agent can write:
 * refused, since the agent could put a program there for the next
 * session's allow to hash (a FILE that is there, in the workspace, is
 * protected for the session: src/session/layout.c). */
static int absent_allows(const struct policy *p, const char *const *writable, size_t n,
			 struct werr *e)
{
	for (size_t i = 0; p->exec.default_deny && i < p->exec.absent.n; i++)
		for (size_t k = 0; k < n; k++)
			if (writable[k] && path_is_within(p->exec.absent.v[i], writable[k]))
				return werr_set(e, 0, "exec allow %s: no such file when the profile was "
						"read, in a place the agent can write (%s is writable "
						"inside the sandbox): it could put a program there for "
						"the next session to allow; make the file first, or "
						"allow the program by its sha256:HEX", p->exec.absent.v[i],
						writable[k]);
	return 0;
}

/* Exec control, made on SEALED's fds: what the agent can write (to tell
 * it from what it cannot), the rules, the sandbox's root (init's). It
 * answers nothing before exec_start gives it the listener. */
static int exec_make(struct services *sv, struct werr *e)
{
	const struct sandbox_spec *s = sv->s;
	struct launched *L = sv->L;
	sv->writable = xcalloc(s->policy->npaths + s->nhome_binds + 1, sizeof *sv->writable);
	size_t nwritable = 0;
	sv->writable[nwritable++] = s->workspace;
	for (size_t i = 0; i < s->policy->npaths; i++)
		if (s->policy->paths[i].mode == POLICY_RW)
			sv->writable[nwritable++] = s->policy->paths[i].path;
	for (size_t i = 0; i < s->nhome_binds; i++)
		sv->writable[nwritable++] = s->home_binds[i].src;
	if (absent_allows(s->policy, sv->writable, nwritable, e) < 0)
		return -1;
	sv->x = execs_new(&(struct execs_cfg){ .log = sv->log,
		.policy = s->policy, .writable = sv->writable, .nwritable = nwritable,
		.init = L->c.pid, .approvals = sv->ap, .link = sv->hk ? hook_link_exec : NULL,
		.link_ctx = sv->hk, .kernel = L->bx, .userns = L->fds.userns,
		.kept = steal_ptr(&sv->kept), .root = steal_fd(&L->fds.root),
		.planned_argv = s->argv.v, .planned_cwd = s->workspace }, e);
	return sv->x ? 0 : -1;
}

/* Init ready: exec control given the listener and the command's planned
 * first exec; the seccomp notifications; `write ask` (file operations
 * held for a question); the secret names the sandbox makes, noted for the
 * workspace watch (wsmade.h: noted while their notification is handled,
 * before the call goes on, so before the watch can see the file); warden's
 * control directory, guarded. */
static int exec_start(struct services *sv, struct werr *e)
{
	const struct sandbox_spec *s = sv->s;
	struct launched *L = sv->L;
	execs_ready(sv->x, L->fds.listener, L->m.exec_path[0] ? L->m.exec_path : NULL);
	sv->wa = writeask_new(&s->policy->write_ask, s->workspace, sv->ap, L->fds.listener, sv->log);
	sv->made = wsmade_new();
	/* where Landlock lets the sandbox write, beside the workspace and the
	 * scratch places (filewhy.h) */
	_cleanup_free_ const char **ll = xcalloc(s->policy->npaths + s->exec.n + 1, sizeof *ll);
	size_t nll = 0;
	for (size_t i = 0; i < s->policy->npaths; i++)
		if (s->policy->paths[i].mode == POLICY_RW)
			ll[nll++] = s->policy->paths[i].path;
	for (size_t i = 0; i < s->exec.n; i++)
		ll[nll++] = s->exec.w[i].path;
	struct filewhy_cfg why = { .workspace = s->workspace, .workspace_ro = s->workspace_ro,
				   .plan = &s->plan, .writable = ll, .nwritable = nll,
				   .uid = s->ids.active ? s->ids.uid : s->uid,
				   .gid = s->ids.active ? s->ids.gid : s->gid };
	sv->nt = notifier_new(&(struct notifier_cfg){ .listener = L->fds.listener,
		.diag = L->fds.diag, .log = sv->log, .execs = sv->x,
		.strict = s->policy->exec.strict, .kernel = L->bx,
		.audit_level = s->policy->audit_minimal ? 0 : s->policy->audit_files ? 2 : 1,
		.why = &why, .wa = sv->wa,
		.made = sv->made, .pol = s->policy, .workspace = s->workspace,
		.plan = &s->plan,
		.readonly = s->workspace_ro ? s->workspace : NULL, .guarded = sv->ctl_dir,
		.stop = &sv->st }, e);
	if (!sv->nt)
		return -1;
	return 0;
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

/* The proxy on init's listeners and the host loopback ports, guarded,
 * asking the broker, its connections linked to the tool calls and, by
 * exec control, to the program that made each. Made on SEALED's fds: it
 * serves once the loop runs. */
static int net_start(struct services *sv, struct werr *e)
{
	const struct sandbox_spec *s = sv->s;
	struct init_fds *f = &sv->L->fds;
	/* (the sandbox's network namespace: the HTTP listener's) */
	if (sv->cfg->publish && publish_start(sv->cfg->publish, f->userns, f->http, e) < 0)
		return -1;
	sv->co = connowner_new(f->diag, sv->L->c.pid, sv->x);
	const struct proxy_asker asker = { .ask = net_ask, .cancel = net_cancel, .ctx = sv->ap };
	const struct proxy_owner owner = { .begin = connowner_begin, .find = connowner_find,
					   .end = connowner_end, .ctx = sv->co };
	if (s->policy->mcp.n &&
	    !(sv->pm = proxy_mcp_new(&s->policy->mcp, sv->log, sv->ap ? &asker : NULL, e)))
		return -1;
	sv->px = proxy_new(&(struct proxy_cfg){ .http = steal_fd(&f->http),
		.socks = steal_fd(&f->socks), .rules = &s->policy->net_rules, .log = sv->log,
		.guard = sv->cfg->guard,
		.asker = sv->ap ? &asker : NULL,
		.default_ask = sv->ap && s->policy->net_default_ask,
		.sni_required = s->policy->net_sni_required,
		.tag = sv->hk ? hook_link_conn : NULL, .tag_ctx = sv->hk,
		.owner = &owner, .mcp = sv->pm, .fd_shares = sv->cfg->publish ? 2 : 1 }, e);
	if (!sv->px)
		return -1;
	for (size_t i = 0; i < s->forwards.n; i++)
		if (f->fwd[i] >= 0)
			proxy_add_forward(sv->px, steal_fd(&f->fwd[i]), &s->forwards.v[i]);
	return 0;
}

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

/* Whether the command has ended: its end had, or init's EXITED waiting on
 * its socket (the decoys' opens of the command's last moments are read
 * as the sandbox ends, and may be read before that message). */
static bool command_ended(const struct actor *ac)
{
	int type = 0;
	return ac->ended || (ac->init_sock >= 0 &&
			     recv(ac->init_sock, &type, sizeof type, MSG_PEEK | MSG_DONTWAIT) ==
				     (ssize_t)sizeof type && type == INIT_MSG_EXITED);
}

/* The detector's kill: the sandbox killed and the user told; or, when the
 * command had ended already (init killed what it left, or is gone),
 * nothing left to kill, which is said as such, and logged as a kill with
 * no `how`. Either way warden exits 137, as doc/detection.md says of a
 * kill, whether the command had just ended or not (ac->killed). */
static int detect_kill(struct actor *ac, const char *reason)
{
	struct werr e = { 0 };
	if (ac->killed)
		return 0; /* once: another rule after the first kill adds nothing */
	bool ended = command_ended(ac);
	if (!ended && sbctl_kill(ac->sb, "detector", -1, reason, &e) == 0) {
		ac->killed = true;
		wnote("killing the sandbox: %s", reason);
		return 0;
	}
	if (!ended && e.errnum != ESRCH)
		return -1;
	/* ESRCH: init is gone, so is the command */
	ac->killed = true;
	wnote("%s, after the command had ended: nothing was left to kill; warden exits %d all the "
	      "same", reason, 128 + SIGKILL);
	_cleanup_free_ char *why = xasprintf("%s (after the command had ended: nothing was left "
					     "to kill)", reason);
	audit_emit_event(ac->log, ev_action(&(struct ev_action){ .action = "kill", .by = "detector",
		.uid = -1, .reason = why }), NULL);
	return 0;
}

/* What the detector may do to the session (detect.h): warn it does
 * itself; freeze and kill through the kill switch; ask freezes, then puts
 * a question (allowed: resume; anything else: kill). A freeze lasts its
 * `freeze timeout`, for auto none when nobody can decide (ac->attended;
 * ask: the question can be answered, and its timeout is a no). */
static int detect_act(void *ctx, enum det_action a, const char *reason)
{
	struct actor *ac = ctx;
	struct werr e = { 0 };
	if (a == ACT_KILL)
		return detect_kill(ac, reason);
	if (a != ACT_FREEZE && a != ACT_ASK)
		return -1;
	if (!sbctl_frozen(ac->sb) &&
	    sbctl_freeze(ac->sb, &(struct freeze_req){ .by = "detector", .uid = -1, .reason = reason,
		    .attended = ac->attended || a == ACT_ASK }, &e) < 0)
		return -1;
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

/* A timer of one second for the limits' watch, or -1 when there is
 * nothing to watch; the fds of /tmp and home are taken. */
static int limits_timer(struct limits *lim, int *tmp_fd, int *home_fd)
{
	if (!lim || !limits_watch(lim, steal_fd(tmp_fd), steal_fd(home_fd)))
		return -1;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec it = { .it_interval = { .tv_sec = 1 }, .it_value = { .tv_sec = 1 } };
	if (fd >= 0 && timerfd_settime(fd, 0, &it, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static pid_t start_remasker(void *ctx, int *sock, struct werr *e)
{
	const struct remasker *r = ctx;
	return remask_spawn(r->userns, r->mntns, r->workspace, sock, e);
}

/* The workspace watch lost its re-masker: the session ends (fail
 * closed). */
static void kill_init(void *ctx)
{
	const struct launched *L = ctx;
	syscall(SYS_pidfd_send_signal, L->c.pidfd, SIGKILL, NULL, 0);
}

/* The detector acting on the session through the kill switch (and no
 * longer once the services end); the limits' watch; the workspace
 * watched from now on: masks and protections follow what the host
 * replaces (wswatch.h). */
static int watches_start(struct services *sv, struct werr *e)
{
	struct sandbox_spec *s = sv->s;
	struct launched *L = sv->L;
	struct detect *d = session_detector(sv->cfg);
	/* someone to decide on a freeze: told on a terminal (the note on
	 * stderr, or the keys relayed), or by the reviewer or the webhook; in
	 * CI mode (`warden run --ci`) by the webhook only */
	bool attended = s->policy->approve.ci ? sv->wh != NULL
		: sv->term.relay_input || isatty(STDERR_FILENO) || sv->rv || sv->wh;
	sv->actor = (struct actor){ .d = d, .sb = L->sb, .ap = sv->ap, .log = sv->log,
				    .attended = attended, .init_sock = L->sock };
	if (d)
		detect_set_actor(d, detect_act, &sv->actor);
	sv->timer = limits_timer(sv->cfg->limits, &L->fds.tmp, &L->fds.home);
	sv->ww = s->plan.watch; /* the plan's: its walk added the directories */
	if (!sv->ww || L->fds.userns < 0 || L->fds.mntns < 0)
		return werr_set(e, 0, "supervisor: the workspace watch or the sandbox's namespaces are missing");
	sv->rm = (struct remasker){ .userns = L->fds.userns, .mntns = L->fds.mntns,
				    .workspace = s->workspace };
	wswatch_attach(sv->ww, &(struct wswatch_cfg){ .plan = &s->plan, .policy = s->policy,
		.made = sv->made, .remasker = start_remasker, .remasker_ctx = &sv->rm,
		.log = sv->log, .lost = kill_init, .lost_ctx = L });
	wswatch_report(sv->ww, sv->log); /* directories the start's walk could not watch */
	return 0;
}

int services_begin(struct services *sv, struct sandbox_spec *s, const struct supervisor_cfg *cfg,
		   struct audit *log, struct launched *L, int sigfd, struct werr *e)
{
	sv->s = s;
	sv->cfg = cfg;
	sv->log = log;
	sv->L = L;
	sv->sigfd = sigfd;
	/* the reads outside the workspace (fanread.h), unless `audit minimal`:
	 * the helper forked now, told the namespaces once built */
	if (fanread_wanted(s->policy) &&
	    (sv->fr_pid = fanread_spawn(AGENT_HOME, &sv->fr_sock, &sv->fr_err)) < 0)
		sv->fr_pid = 0;
	/* The control socket, for every session (status, and freeze, resume
	 * and kill by the kill switch). Questions for a human (`ask` rules):
	 * the broker and its channels, made before what asks them (freed
	 * after: the askers withdraw their questions as they go). */
	if (asking_start(sv, e) < 0)
		return -1;
	if (stopper_init(&sv->st, L->c.pidfd, log, s->policy->signal_grace, e) < 0)
		return -1;
	sv->st.ctl = L->sb;
	/* the exec record's kept hashes, read now rather than on the way from
	 * init's READY to its command's first exec */
	sv->kept = hashdisk_load(s->cachedir);
	return 0;
}

/* The file reads' helper into the sandbox's namespaces, if it was forked:
 * it makes its marks while the rest starts (fanread_ready). */
static void fanread_start(struct services *sv)
{
	const struct init_fds *f = &sv->L->fds;
	if (sv->fr_pid <= 0)
		return;
	int err = f->userns < 0 || f->mntns < 0 ? EBADF
		: fanread_enter(sv->fr_sock, f->userns, f->mntns) < 0 ? errno : 0;
	if (err) {
		werr_set(&sv->fr_err, err, "file reads outside the workspace are not recorded: "
			 "the helper could not be given the sandbox's namespaces");
		fanread_end(sv->fr_pid);
		sv->fr_pid = 0;
		closep(&sv->fr_sock);
	}
}

int services_sealed(struct services *sv, struct werr *e)
{
	struct sandbox_spec *s = sv->s;
	const struct supervisor_cfg *cfg = sv->cfg;
	struct audit *log = sv->log;
	struct launched *L = sv->L;
	/* The decoys watched before the command starts: init waits for a byte
	 * after READY when it placed any (the pty's, below, or this one). */
	sv->cw = canary_start(cfg->canary, &L->m, L->fds.home, log);
	if (L->fds.master < 0 && L->m.canary_placed && launched_go(L, e) < 0)
		return -1;
	fanread_start(sv);
	term_start(&sv->term, s, L->fds.master);
	sv->jc = (struct jobctl){ .term = &sv->term, .sb = L->sb, .init_pidfd = L->c.pidfd,
				  .ctl = sv->ctl, .timer = -1 };
	if (L->fds.master >= 0 && launched_go(L, e) < 0)
		return -1;
	termask_start(sv);
	/* The hook socket (hook.h): tool calls reported from inside, decided
	 * by the tool rules, linked to the execs and connections after them
	 * (made before those, freed after them, before the broker). */
	if (L->fds.hook >= 0)
		sv->hk = hook_new(steal_fd(&L->fds.hook), s->policy, log, sv->ap, L->fds.diag, L->c.pid);
	/* The SSH agent socket (sshagent_srv.h), asking the broker. */
	if (L->fds.ssh >= 0 && cfg->ssh_auth_sock &&
	    !(sv->sa = sshagent_srv_new(&(struct sshagent_srv_cfg){ .listener = steal_fd(&L->fds.ssh),
		.upstream = cfg->ssh_auth_sock, .pol = &s->policy->ssh_agent, .log = log,
		.ap = sv->ap }, e)))
		return -1;
	/* Exec control and the proxy, which asks it whose each connection is
	 * (the listener it answers on comes with READY: exec_start), and
	 * whether the notifications can be received here: made now rather
	 * than on the way from READY to the command's first exec. */
	if (exec_make(sv, e) < 0 || net_start(sv, e) < 0)
		return -1;
	return notify_supported(e);
}

int services_start(struct services *sv, struct werr *e)
{
	if (exec_start(sv, e) < 0)
		return -1;
	/* a kernel that refuses the reads' marks is said, on stderr and in the
	 * log (whose reader would otherwise take no reads for none made), and
	 * the session goes on (the reads are a record, not a wall) */
	if (sv->fr_pid > 0)
		(void)fanread_ready(sv->fr_pid, &sv->fr_sock, &sv->fr_err);
	if (sv->fr_err.msg[0]) {
		char buf[1100];
		wnote("%s", werr_str(&sv->fr_err, buf, sizeof buf));
		audit_emit_event(sv->log, ev_alert(&(struct ev_alert){
			.rule = "files.reads-unrecorded", .action = buf }), NULL);
	}
	return watches_start(sv, e);
}

void services_free(struct services *sv)
{
	closep(&sv->timer);
	actor_unset(&sv->actor);
	stopper_close(&sv->st);
	proxy_free(sv->px); /* logs the connections still open */
	connowner_free(sv->co);
	proxy_mcp_free(sv->pm); /* and their last mcp events */
	if (sv->cfg)
		publish_end(sv->cfg->publish); /* the same */
	free(sv->ctl_dir);
	wsmade_free(sv->made);
	writeask_free(sv->wa); /* before the broker: it withdraws what it holds */
	execs_free(sv->x);
	hashdisk_close(sv->kept); /* not taken: nothing put, nothing written */
	free(sv->writable);
	if (sv->fr_pid > 0)
		fanread_end(sv->fr_pid);
	if (sv->fr_sock >= 0)
		close(sv->fr_sock);
	notifier_free(sv->nt);
	hook_free(sv->hk);
	sshagent_srv_free(sv->sa); /* before the broker: it withdraws its questions */
	approvals_free(sv->ap);
	control_free(sv->ctl);
	/* after the broker's end, which tells them of the questions' */
	reviewer_free(sv->rv);
	webhook_free(sv->wh);
	termask_free(sv->ta);
	term_end(&sv->term);
	jobctl_end(&sv->jc);
	canary_watch_free(sv->cw);
	*sv = SERVICES_NONE;
}

/* ---- serving them ---- */

/* The sandbox over, with status (what the command wrote before drained
 * by the caller): the opens of the decoys are queued as they happen, and
 * those of the last moments are read before the loop ends. */
static void sandbox_over(struct services *sv, struct loop *l, int status)
{
	sv->actor.ended = true;
	if (sv->cw)
		canary_watch_dispatch(sv->cw);
	loop_quit(l, status);
}

/* The pidfd: init ended (killed, or its EXITED not had). */
static void on_child_exit(struct loop *l, const struct source *src, uint32_t events)
{
	struct services *sv = src->ctx;
	term_drain(&sv->term);
	sandbox_over(sv, l, child_reap(&sv->L->c));
}

/* Init's socket: EXITED once the command has ended and init has killed
 * and reaped what it left (init.c, sandbox_end), so the session's end
 * begins while init's own exit runs; init is left to the session to wait
 * for (supervisor_cfg.init_left), before its cgroups. A SIGNALLED that
 * came too late for the freeze or resume that waited for it (freeze.c) is
 * dropped. Anything else (an ERROR for launched_error, init gone) leaves
 * the end to the pidfd. */
static void on_init_message(struct loop *l, const struct source *src, uint32_t events)
{
	struct services *sv = src->ctx;
	int type = 0;
	ssize_t n;
	bool reset = false;
	while ((n = recv(src->fd, &type, sizeof type, MSG_PEEK | MSG_DONTWAIT)) < 0 &&
	       initmsg_recv_again(errno, &reset))
		;
	struct init_msg m = { 0 };
	struct init_fds none;
	init_fds_none(&none);
	bool ours = n == (ssize_t)sizeof type && (type == INIT_MSG_EXITED ||
		    type == INIT_MSG_SIGNALLED || type == INIT_MSG_STOPPED ||
		    type == INIT_MSG_ESCAPED);
	bool got = ours && initmsg_recv(src->fd, &m, &none) > 0;
	init_fds_close(&none);
	if (got && m.type == INIT_MSG_SIGNALLED)
		return; /* late */
	if (got && m.type == INIT_MSG_STOPPED) {
		jobctl_stopped(&sv->jc, m.status);
		return;
	}
	if (got && m.type == INIT_MSG_ESCAPED) {
		sbctl_escaped(sv->L->sb);
		return;
	}
	if (!got || m.type != INIT_MSG_EXITED) {
		loop_remove(l, src);
		return;
	}
	term_drain(&sv->term);
	/* a server the command started in the background ends with it: with
	 * published ports, where that is what the user came for, said; not
	 * when the session was being stopped (a Ctrl-C, a `timeout`: a
	 * launcher such as npx may end before the server it started) */
	if (m.left > 0 && sv->s->policy->npublish && !sv->st.started)
		wnote("the command ended and left %d process%s running, ended with it (a server "
		      "started in the background?): a session lasts as long as its command, so run "
		      "the server in the foreground", m.left, m.left == 1 ? "" : "es");
	sandbox_over(sv, l, m.status);
}

/* The signalfd: resize the pty, pass the signal to the sandbox, or (a
 * SIGCHLD) collect the execs being watched. */
static void on_signal(struct loop *l, const struct source *src, uint32_t events)
{
	struct services *sv = src->ctx;
	struct signalfd_siginfo si;
	while (read(src->fd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGWINCH)
			term_resize(&sv->term);
		else if (si.ssi_signo == SIGCHLD)
			execs_on_sigchld(sv->x);
		else if (si.ssi_signo == SIGCONT && sv->jc.waiting)
			jobctl_cont(&sv->jc); /* `fg` (or `bg`: still suspended) */
		else
			stopper_signal(&sv->st, &si);
	}
}

/* The limits' watch: once a second, has the sandbox reached one? */
static void on_limits_timer(struct loop *l, const struct source *src, uint32_t events)
{
	const struct services *sv = src->ctx;
	uint64_t ticks;
	if (read(src->fd, &ticks, sizeof ticks) == sizeof ticks)
		limits_check(sv->cfg->limits, sv->log);
}

/* Every source is added or the session stops: each X_watch is checked,
 * the first failure's error (naming its source) is the session's. In the
 * order the services are made: init and the signals, the calls the
 * sandbox makes; the questions and the tool calls; the proxy and the
 * watches; the terminal. */
static int watch_calls(struct services *sv, struct loop *l, struct werr *e)
{
	if (loop_add(l, "init's pidfd", sv->L->c.pidfd, on_child_exit, sv, e) < 0 ||
	    loop_add(l, "init's socket", sv->L->sock, on_init_message, sv, e) < 0 ||
	    loop_add(l, "the signals", sv->sigfd, on_signal, sv, e) < 0 ||
	    stopper_watch(l, &sv->st, e) < 0 ||
	    sbctl_watch(l, sv->L->sb, e) < 0 ||
	    notifier_watch(l, sv->nt, e) < 0 ||
	    (sv->fr_sock >= 0 && notifier_reads_watch(l, sv->nt, sv->fr_sock, e) < 0) ||
	    execs_watch(l, sv->x, e) < 0)
		return -1;
	return 0;
}

static int watch_asking(struct services *sv, struct loop *l, struct werr *e)
{
	if ((sv->ap && approvals_watch(l, sv->ap, e) < 0) ||
	    (sv->ctl && control_watch(l, sv->ctl, e) < 0) ||
	    (sv->ta && termask_watch(l, sv->ta, e) < 0) ||
	    (sv->rv && reviewer_watch(l, sv->rv, e) < 0) ||
	    (sv->wh && webhook_watch(l, sv->wh, e) < 0) ||
	    (sv->hk && hook_watch(l, sv->hk, e) < 0) ||
	    (sv->sa && sshagent_srv_watch(l, sv->sa, e) < 0))
		return -1;
	return 0;
}

static int watch_rest(struct services *sv, struct loop *l, struct werr *e)
{
	struct launched *L = sv->L;
	if (proxy_watch(l, sv->px, e) < 0 || (sv->pm && proxy_mcp_watch(l, sv->pm, e) < 0) ||
	    (sv->cfg->publish && publish_watch(l, sv->cfg->publish, e) < 0) ||
	    /* (no timer: nothing to watch, or none to be had, as before) */
	    (sv->timer >= 0 &&
	     loop_add(l, "the limits' timer", sv->timer, on_limits_timer, sv, e) < 0) ||
	    wswatch_watch(l, sv->ww, e) < 0 || wsclock_watch(l, sv->s->plan.clock, e) < 0 ||
	    (sv->cw && canary_watch_watch(l, sv->cw, e) < 0) ||
	    (L->bx && bpfexec_watch(l, L->bx, sv->log, e) < 0) ||
	    (L->la && llaudit_watch(l, L->la, e) < 0))
		return -1;
	return 0;
}

int services_watch(struct services *sv, struct loop *l, struct werr *e)
{
	if (watch_calls(sv, l, e) < 0 || watch_asking(sv, l, e) < 0 || watch_rest(sv, l, e) < 0)
		return -1;
	if (sv->s->job_control && jobctl_watch(l, &sv->jc, e) < 0)
		return -1;
	return term_watch(&sv->term, sv->ta, &sv->st, l, e);
}
