/* session.c - one sandbox session: compile the policy, check the kernel can
 * build every layer, choose and scan the workspace, open the audit log, run
 * the command through the supervisor, log the end and clean up. What the
 * session holds is one struct session; session_run begins it
 * (session_start), runs it (run_with_policy: open, plan, launch, the
 * sandbox gone, session.end) and releases it (session_end). */
#include "session.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../agents/agents.h"
#include "../agents/discover.h"
#include "../agents/state.h"
#include "../audit/audit.h"
#include "../audit/escape.h"
#include "../common/bgjob.h"
#include "../common/clock.h"
#include "../common/cpupin.h"
#include "../common/selflimits.h"
#include "../export/journald.h"
#include "../export/syslogsend.h"
#include "../export/stream.h"
#include "../checkpoint/checkpoint.h"
#include "../checkpoint/leftover.h"
#include "../checkpoint/store.h"
#include "../control/ctldir.h"
#include "../detect/detect.h"
#include "../supervisor/publish.h"
#include "../policy/policy.h"
#include "../sandbox/features.h"
#include "../sandbox/limits.h"
#include "../sandbox/sandbox.h"
#include "../workspace/gitident.h"
#include "../workspace/wswatch.h"
#include "config.h"
#include "egress.h"
#include "endguard.h"
#include "layout.h"
#include "policyopts.h"
#include "prepjobs.h"
#include "session_secrets.h"
#include "settingsguard.h"
#include "homeseed.h"
#include "caches.h"
#include "knownhosts.h"
#include "sshconfig.h"
#include "task.h"
#include "../detect/canary.h"
#include "cisummary.h"
#include "hints.h"
#include "summary.h"
#include "swept.h"
#include "../supervisor/supervisor.h"
#include "../supervisor/sshagent_srv.h"

/* A session whole, from the policy loaded to the log closed: everything
 * it holds. session_end releases the members from the bottom up, but for
 * the log: it is closed first (session.end is its last line), its pages on
 * their way to the disk while the rest is released (`late_log`, fsynced
 * last; the exit summary names it by a copy of its path). session_init
 * gives each member its empty state, which session_end releases as well: a
 * session that fails early ends the same way. */
struct session {
	/* the options; with --task, the task's own workspace in place of
	 * the caller's (task_start) */
	struct session_opts o;
	const char *home;             /* the user's home (user_home()), or NULL */
	char id[40];                  /* the session's id (audit_new_session_id) */
	/* the log's writeback, begun while everything else is freed, its
	 * fsync last (lateclose.h) */
	struct late_close late_log;
	struct policy pol;            /* the profiles layered, then the options' additions */
	struct session_agent ag;      /* the agent profile, its endpoint and state */
	struct home_caches caches;    /* the home's binds: that state, `cache` lines */
	struct task task;             /* --task: the task's workspace and its lock (task.h) */
	struct limits_probe probe;    /* what the host offers for the limits */
	struct session_secrets ss;    /* the secrets, the decoys, the egress, the filter */
	struct hostid_job hj;         /* as root: the agent's host identity (on a thread) */
	struct sandbox_spec spec;     /* what the supervisor builds the sandbox from */
	struct summary sum;           /* --summary: what was refused, printed at the end */
	struct hints hints;           /* and what ran that warden does not offer inside */
	/* the sandbox's namespaces and watches, closed on a thread while the
	 * end goes on; joined once the log is closed */
	struct late_close late;
	/* sandbox init, killed as the run ended, its exit going on meanwhile
	 * (supervisor_cfg.init_left); ended before the cgroups it is in */
	struct child init;
	struct detect *det;           /* the detector: outlives the log it subscribes to */
	struct journald *jd;          /* --log journald: the sender; outlives the log too */
	struct syslogsend *sl;        /* --log syslog: the sender; outlives the log too */
	struct streamer *stream;      /* --stream: the live stream's sender */
	struct audit *log;            /* the audit log; closed (late_log) before the above */
	struct session_layout lay;    /* read-only, scratch, outputs, task (layout.h) */
	/* made by the run (run_with_policy), released first: */
	struct kernel_features kf;    /* what the kernel offers (features_probe) */
	struct discovery disc;        /* the client found on the host and what it needs */
	struct limits lim;            /* the limits: how each is enforced, the cgroups made */
	bool lim_planned;             /* ... once planned (limits_end ends them, once the
				       * log is closed) */
	struct limits_job lj;         /* ... planned at once, the cgroups made on a thread */
	struct ckpt_session ck;       /* the workspace's checkpoint (checkpoint.h) */
	char *ssh_sock;               /* `ssh-agent`: the user's agent, checked */
	char *sshcfg;                 /* ~/.ssh/config inside (sshconfig.h), or NULL */
	char *knownhosts;             /* ~/.ssh/known_hosts inside (knownhosts.h), or NULL */
	char *gitid;                  /* ~/.gitconfig inside (gitident.h), or NULL */
	struct strv ssh_keys;         /* `ssh-agent`: the keys offered inside (fingerprints) */
	struct gitsign gitsign;       /* the signing carried into ~/.gitconfig (gitsign.h) */
	struct endguard eg;           /* a signal during the end, held for it (endguard.h) */
	bool start_tried;             /* the checkpoint and session.start: tried (record_start) */
	bool start_logged;            /* ... and session.start is on the log */
};

/* A directory of warden's own that no sandbox may reach (the audit log, the
 * cache): refuse a workspace overlapping it and profile paths inside it;
 * mounts.c masks it when a profile path covers it. The workspace is a
 * resolved path and dir may be reached through a symlink (a HOME that is
 * one), so both are compared as written and resolved; a profile path that
 * covers dir only once resolved is refused too, since the mask is placed by
 * the path as written. */
static int keep_private(const char *ws, const struct policy *pol, const struct strv *resolved,
			const char *dir, const char *what, struct werr *e)
{
	_cleanup_free_ char *rdir = path_resolve_existing(dir);
	const char *r = rdir ? rdir : dir;
	if (path_overlaps(ws, dir) || path_overlaps(ws, r))
		return werr_set(e, 0, "refusing workspace %s: it overlaps %s %s", ws, what, dir);
	for (size_t i = 0; i < pol->npaths; i++) {
		const struct policy_path *pp = &pol->paths[i];
		const char *rp = resolved->v[i];
		if ((path_is_within(pp->path, dir) && strcmp(pp->path, dir) != 0) ||
		    (path_is_within(rp, r) && strcmp(rp, r) != 0))
			return werr_set(e, 0, "refusing %s (%s): it lies inside %s %s",
					pp->path, pp->origin, what, dir);
		if (path_is_within(r, rp) && !path_is_within(dir, pp->path))
			return werr_set(e, 0, "refusing %s (%s): through a symlink it covers %s %s, "
					"which warden can hide only under the path it is named by",
					pp->path, pp->origin, what, dir);
	}
	return 0;
}

/* The host loopback ports the allow and ask rules name (net/forward.h);
 * a rule warden cannot serve is an error naming where it stands. */
static int forwards_prepare(const struct policy *pol, struct net_forwards *f, struct werr *e)
{
	for (size_t i = 0; i < pol->nnet; i++) {
		const struct policy_net_rule *r = &pol->net[i];
		const char *why = NULL;
		if ((r->action == RULES_ALLOW || r->action == RULES_ASK) &&
		    forward_add_rule(f, &r->rule, &why) < 0)
			return werr_set(e, 0, "%s: \"%s\": %s", r->origin, r->rule.text, why);
	}
	/* a port inside that a host loopback rule listens on is warden's own
	 * listener, relaying to the host: published, it would loop */
	for (size_t i = 0; i < pol->npublish; i++)
		for (size_t k = 0; k < f->n; k++)
			if (pol->publish[i].port == f->v[k].port)
				return werr_set(e, 0, "%s: publish %u:%u: port %u inside is the host "
						"loopback port \"%s\" (warden's listener, which leads to "
						"the host): publish another port", pol->publish[i].origin,
						pol->publish[i].host_port, pol->publish[i].port,
						f->v[k].port, f->v[k].rule);
	return 0;
}

/* The agent's state directory, opened and kept apart from the workspace and
 * warden's own directories, bound into the home inside. */
static int state_prepare(const struct session_opts *o, struct session_agent *ag,
			 const char *home, struct sandbox_spec *s, struct werr *e)
{
	if (!ag->def)
		return 0;
	const struct state_apart apart[] = {
		{ s->workspace, "the workspace" }, { s->logdir, "the audit log directory" },
		{ s->cachedir, "warden's cache directory" },
		{ s->storedir, "warden's checkpoint store" },
		{ s->runtimedir, "warden's runtime directory" }, { NULL, NULL } };
	if (state_open(ag->def, o->state_dir, home, &ag->ep.codex, apart, &ag->state, e) < 0)
		return -1;
	s->etc_extra_path = ag->def->etc_path;
	s->etc_extra_text = ag->def->etc_text;
	return 0;
}

/* The workspace chosen (and checked as the passwd entry's home would have
 * it too), the layout around it (layout.h), the client found on the host. */
static int spec_workspace(const struct session_opts *o, struct policy *pol, const char *home,
			  struct sandbox_spec *s, struct discovery *disc,
			  struct session_layout *lay, struct werr *e)
{
	if (workspace_resolve(o->workspace, home, &s->workspace, e) < 0)
		return -1;
	struct passwd *pw = getpwuid(s->uid);
	if (pw && pw->pw_dir && (!home || strcmp(pw->pw_dir, home) != 0)) {
		_cleanup_free_ char *again = NULL;
		if (workspace_resolve(s->workspace, pw->pw_dir, &again, e) < 0)
			return -1;
	}
	if (!home)
		return werr_set(e, 0, "no home directory (set HOME): the audit log has nowhere to go");
	/* the current directory taken for the workspace, inside a repository */
	_cleanup_free_ char *repo = o->workspace ? NULL : workspace_repo_above(s->workspace, home);
	if (repo)
		wnote("the workspace %s lies inside the git repository %s, which the sandbox does "
		      "not see: git inside finds no repository (run warden in %s, or with -w %s)",
		      s->workspace, repo, repo, repo);
	/* read-only or not, the scratch directory and the outputs: read-write
	 * paths of the policy from here on (layout.h) */
	if (layout_prepare(lay, &(struct session_layout_opts){ .read_only = o->read_only,
		.scratch = o->scratch, .outputs = o->outputs, .artifacts = o->ci_artifacts }, pol,
		s->workspace, home, e) < 0)
		return -1;
	/* what --ci's end may write into: only a directory checked here */
	if (o->ci_summary && lay->artifacts)
		cisummary_set_artifacts(o->ci_summary, lay->artifacts);
	s->workspace_ro = lay->read_only;
	if (s->workspace_ro && o->review)
		return werr_set(e, 0, "--review and a read-only workspace: nothing would reach the "
				"workspace to review (leave one out)");
	/* The client found on the host and what it needs exposed, read-only. */
	return discover_for(pol, o->argv[0], getenv("PATH"), s->workspace, home, !o->no_managed, disc,
			    e);
}

/* warden's own directories (the audit log, the cache, the checkpoint
 * store) into the spec, each kept out of the sandbox's reach. */
static int spec_private_dirs(const struct policy *pol, const char *home, struct sandbox_spec *s,
			     struct werr *e)
{
	_cleanup_free_ char *logdir = audit_dir(home);
	if (!logdir)
		return werr_set(e, 0, "no usable log directory (HOME and XDG_STATE_HOME are not "
				"absolute paths)");
	_cleanup_free_ char *cachedir = etc_cache_dir(home);
	_cleanup_free_ char *storedir = store_default_path(home);
	/* checkpoints off: a store that does not exist has nothing to hide */
	struct stat sst;
	if (storedir && pol->checkpoint.off && lstat(storedir, &sst) < 0 && errno == ENOENT) {
		free(storedir); /* (freep leaves the pointer: used, stolen and freed again) */
		storedir = NULL;
	}
	/* the control sockets' directory: a workspace over it (XDG_RUNTIME_DIR
	 * inside the project) let the agent move the session's socket aside
	 * and answer `warden kill` and `approve` itself (ctldir.h) */
	_cleanup_free_ char *ctl = control_runtime_dir();
	char *slash = ctl ? strrchr(ctl, '/') : NULL;
	if (slash)
		*slash = '\0';
	const char *ws = s->workspace;
	_cleanup_strv_ struct strv rp = { 0 }; /* the profile's paths resolved, once */
	for (size_t i = 0; i < pol->npaths; i++) {
		char *r = path_resolve_existing(pol->paths[i].path);
		strv_push_owned(&rp, r ? r : xstrdup(pol->paths[i].path));
	}
	if (keep_private(ws, pol, &rp, logdir, "the audit log directory", e) < 0 ||
	    (cachedir && keep_private(ws, pol, &rp, cachedir, "warden's cache directory", e) < 0) ||
	    (storedir && keep_private(ws, pol, &rp, storedir, "warden's checkpoint store", e) < 0) ||
	    (slash && keep_private(ws, pol, &rp, ctl, "warden's runtime directory "
				   "(XDG_RUNTIME_DIR/warden, the sessions' control sockets)", e) < 0))
		return -1;
	s->logdir = steal_ptr(&logdir);
	s->cachedir = steal_ptr(&cachedir);
	s->storedir = steal_ptr(&storedir);
	s->runtimedir = slash ? steal_ptr(&ctl) : NULL;
	return 0;
}

/* The command: its argv, warden's binary inside or not, a pty in place of
 * a terminal, its environment and where it is found. */
static void spec_command(const struct session_opts *o, const struct policy *pol, bool agent,
			 const struct session_layout *lay, const struct discovery *disc,
			 struct sandbox_spec *s)
{
	/* a copy: init overwrites warden's own argument area (proctitle.h),
	 * where o->argv's words may lie */
	for (char **a = o->argv; *a; a++)
		strv_push(&s->argv, *a);
	/* warden's binary inside: the probe runner of `check`, the
	 * ProxyCommand of git over ssh when a destination is allowed, and the
	 * tool-call hook (`warden hook`) of an agent's client or of a policy
	 * with tool rules. */
	s->self_exe = o->self_exe || policy_net_allows_any(pol) || agent || pol->ntools ||
		      pol->tool_default != RULES_UNKNOWN;
	/* Any of 0-2 a terminal: the command gets a pty in its place, never the
	 * user's terminal (which it could read, or change the modes of). */
	for (int fd = 0; fd < 3; fd++)
		if (!o->no_pty && isatty(fd))
			s->pty_fds |= 1u << fd;
	s->use_pty = s->pty_fds != 0;
	/* job control where warden will relay the user's keys (supervisor/
	 * term.c): stdin the terminal, warden in its foreground */
	pid_t fg = (s->pty_fds & 1) ? tcgetpgrp(STDIN_FILENO) : -1;
	s->job_control = fg >= 0 && fg == getpgrp();
	s->limits = selflimits_user();
	env_build(pol, o->cli_env, &s->envp);
	if (lay->scratch) {
		_cleanup_free_ char *v = xasprintf("WARDEN_SCRATCH=%s", lay->scratch);
		env_override(&s->envp, v);
	}
	discover_env_path(disc, &s->envp);
	s->exec_path = disc->exec_path ? xstrdup(disc->exec_path) : NULL;
}

/* The spec from the policy, the kernel and the host: the kernel's features
 * checked, the workspace chosen and refused where it would expose what the
 * sandbox hides, warden's own directories kept out, the agent's state, the
 * forwarded ports, the command and its environment. */
static int spec_prepare(struct session *sn, struct werr *e)
{
	struct sandbox_spec *s = &sn->spec;
	if (features_require(&sn->kf, e) < 0)
		return -1;
	s->landlock_abi = sn->kf.landlock_abi;
	/* asked as init starts (launch.c); said so if the session ends first */
	snprintf(s->landlock_log_why, sizeof s->landlock_log_why,
		 "off: not asked (the session ended before its sandbox was made)");
	if (spec_workspace(&sn->o, &sn->pol, sn->home, s, &sn->disc, &sn->lay, e) < 0 ||
	    spec_private_dirs(&sn->pol, sn->home, s, e) < 0)
		return -1;
	s->home = xstrdup(sn->home);
	s->policy = &sn->pol;
	if (state_prepare(&sn->o, &sn->ag, sn->home, s, e) < 0 ||
	    caches_prepare(&sn->pol, sn->home, &sn->ag.state, sn->o.review ? "in a --review session"
			   : s->workspace_ro ? "with a read-only workspace" : NULL, s, &sn->caches, e) < 0 ||
	    forwards_prepare(&sn->pol, &s->forwards, e) < 0)
		return -1;
	spec_command(&sn->o, &sn->pol, sn->ag.def != NULL, &sn->lay, &sn->disc, s);
	return 0;
}

/* With the log open: lock and scan the workspace, and take the cached /etc
 * (or none: init then copies it). */
static int workspace_prepare(struct sandbox_spec *s, const struct policy *pol, struct werr *e)
{
	_cleanup_free_ char *lockdir = xasprintf("%s/locks", s->logdir);
	if (workspace_lock(s->workspace, lockdir, &s->plan, e) < 0 ||
	    workspace_plan(s->workspace, pol, &s->plan, e) < 0)
		return -1;
	/* Init binds the cache by a path read in its own root, where a
	 * symlink on the way (a HOME that is one) would point elsewhere: name
	 * it by its resolved path. */
	_cleanup_free_ char *rcache = s->cachedir ? path_resolve_existing(s->cachedir) : NULL;
	if (rcache)
		etc_cache_prepare(rcache, &s->etc_cache, &s->etc_binds, &s->etc_lock);
	if (rcache && s->self_exe)
		s->self_cache = selfbin_prepare(rcache);
	return 0;
}

/* session.start: what the session is made of, on the record before the
 * command starts (checkpoint: its field, taken). */
static int log_start(const struct session *sn, json_t *checkpoint, struct werr *e)
{
	const struct sandbox_spec *s = &sn->spec;
	const struct session_agent *ag = &sn->ag;
	char digest[65];
	policy_digest(&sn->pol, digest);
	json_t *kernel = features_to_json(&sn->kf);
	json_object_set_new(kernel, "pty", json_boolean(s->use_pty));
	json_object_set_new(kernel, "landlock_audit", json_pack("{s:b, s:s}", "on", s->landlock_log,
								"why", s->landlock_log_why));
	_cleanup_free_ char **certs = xcalloc(s->plan.n + 1, sizeof *certs);
	for (size_t i = 0, n = 0; i < s->plan.n; i++)
		if (s->plan.m[i].certs)
			certs[n++] = s->plan.m[i].rel;
	return audit_emit_event(sn->log, ev_session_start(&(struct ev_session_start){
		.version = WARDEN_VERSION, .argv = sn->o.argv, .workspace = s->workspace,
		.policy_digest = digest, .profiles = sn->pol.sources.v, .uid = (int)s->uid,
		.kernel = kernel, .exposed = discovery_to_json(&sn->disc),
		.agent = ag->def ? agent_to_json(ag->def, &ag->ep, ag->state.dir) : NULL,
		.limits = limits_to_json(&sn->lim), .exec = exec_layout_to_json(&s->exec),
		.host_id = hostid_to_json(&s->ids), .checkpoint = checkpoint,
		.layout = caches_to_json(&sn->caches, &sn->pol, layout_to_json(&sn->lay)),
		.certificates = certs, .sign_key = sn->gitsign.key_fp, .sign_commit = sn->gitsign.commit,
		.sign_tag = sn->gitsign.tag, .sign_off = sn->gitsign.note }), e);
}

/* --review: the overlay's upper and work directories, under the log
 * directory (out of every sandbox's reach, on one file system), the upper
 * one with the workspace's mode (it is the overlay's root). As root, the
 * session's review directory and both in it are the workspace owner's:
 * the sandbox reaches them through a tree idmapped like the workspace's
 * (hostid.h), so what the agent writes is stored as the owner's; the
 * review/ directory above stays root's, closed to others. Overlayfs takes
 * idmapped layers since Linux 5.19: an older kernel is refused here. */
static int review_prepare(const struct policy *pol, const char *release,
			  struct sandbox_spec *s, const char *session, struct werr *e)
{
	if (pol->checkpoint.off)
		return werr_set(e, 0, "--review needs the workspace's checkpoint (the profile says "
				"`checkpoint off`)");
	unsigned major = 0, minor = 0;
	if (s->ids.active && (sscanf(release, "%u.%u", &major, &minor) != 2 ||
			      major < 5 || (major == 5 && minor < 19)))
		return werr_set(e, 0, "--review as root needs Linux 5.19 or later (overlayfs on the "
				"idmapped mounts a root session shows the workspace through); this "
				"kernel is %s. Run it as the workspace's owner instead", release);
	struct stat st;
	if (fstat(s->plan.ws_fd, &st) < 0)
		return werr_errno(e, "--review: the workspace");
	_cleanup_strv_ struct strv left = { 0 };
	if (review_leftovers(s->logdir, &left, e) < 0)
		return -1;
	if (left.n)
		wnote("review: %zu review director%s of other --review sessions %s in %s/review "
		      "(running, or killed: `warden discard --list` names them)", left.n,
		      left.n == 1 ? "y" : "ies", left.n == 1 ? "is" : "are", s->logdir);
	_cleanup_free_ char *dir = review_dir(s->logdir, session);
	s->review_upper = xasprintf("%s/upper", dir);
	s->review_work = xasprintf("%s/work", dir);
	if (mkdir_p(dir, 0700, NULL) < 0 || mkdir(s->review_upper, 0700) < 0 ||
	    mkdir(s->review_work, 0700) < 0)
		return werr_errno(e, "--review: making %s", dir);
	if (s->ids.active && (chown(dir, st.st_uid, st.st_gid) < 0 ||
			      chown(s->review_upper, st.st_uid, st.st_gid) < 0 ||
			      chown(s->review_work, st.st_uid, st.st_gid) < 0))
		return werr_errno(e, "--review: giving %s to the workspace's owner", dir);
	if (chmod(s->review_upper, st.st_mode & 07777) < 0)
		return werr_errno(e, "--review: %s", s->review_upper);
	return 0;
}

/* The detector's thresholds from the policy; none acts when it observes
 * only (`warden check`). */
static struct detect_risk risk_of(const struct policy *pol, bool observe)
{
	struct detect_risk risk = { .warn = pol->risk.warn, .ask = pol->risk.ask,
				    .freeze = pol->risk.freeze, .kill = pol->risk.kill,
				    .half_life_s = pol->risk.half_life_s };
	if (observe)
		risk.warn = risk.ask = risk.freeze = risk.kill = 0;
	return risk;
}

/* What the session's record needs that init does not, made while init
 * builds the sandbox (record_start; with --stream before, in session_open:
 * the sender reads the log's file from its start): the detection rules,
 * compiled here (not as a job on the setup's worker, which could still be
 * running one at init's clone: prepjobs.h), then the log's file. A broken
 * rules file is an error naming file, line and column, and no log is made
 * for that session. */
static int log_begin(struct session *sn, struct werr *e)
{
	if (sn->det)
		return audit_begin(sn->log, e); /* begun already (--stream) */
	struct ruleset rs = { 0 };
	if (drules_load(&rs, (const char *const *)sn->pol.rules_files.v, sn->pol.rules_files.n,
			e) < 0) {
		drules_free(&rs);
		return -1;
	}
	struct detect_risk risk = risk_of(&sn->pol, sn->o.detect_observe);
	sn->det = detect_new(&rs, &(struct detect_env){ .workspace = sn->spec.workspace,
							 .home = AGENT_HOME }, &risk);
	detect_attach(sn->det, sn->log);
	return audit_begin(sn->log, e);
}

/* The session opened: the journal reached (--log journald), the spec made
 * and the workspace locked and scanned, the secrets taken from their job,
 * the audit log's stream made and its subscribers attached (its file and
 * the detector in log_begin; the host identity is taken in session_plan). */
static int session_open(struct session *sn, struct werr *e)
{
	const struct session_opts *o = &sn->o;
	struct sandbox_spec *s = &sn->spec;
	/* --log journald: the journal listens, or the session does not start
	 * (before anything of it is made) */
	if (o->log_journald && journald_open(&sn->jd, JOURNALD_SOCKET, e) < 0)
		return werr_wrap(e, "--log journald");
	if (o->log_syslog && syslogsend_open(&sn->sl, SYSLOG_SOCKET, e) < 0)
		return werr_wrap(e, "--log syslog");
	features_probe(&sn->kf);
	/* the workspace locked and planned while the threads work (nothing
	 * of theirs is needed there), its lock in the log's directory, made
	 * and checked first as the log's opening does */
	if (spec_prepare(sn, e) < 0 || audit_dir_check(s->logdir, e) < 0 ||
	    workspace_prepare(s, &sn->pol, e) < 0)
		return -1;
	/* the log's stream, its file made while init builds (log_begin) */
	if (session_secrets_ready(&sn->ss, s, e) < 0 ||
	    session_secrets_spec(&sn->ss, sn->id, s, e) < 0 ||
	    audit_new(&sn->log, s->logdir, sn->id, e) < 0)
		return -1;
	char logmax[32];
	policy_limit_text(LIMIT_LOG, &sn->pol.limits[LIMIT_LOG], logmax, sizeof logmax);
	audit_set_limit(sn->log, sn->pol.limits[LIMIT_LOG].value, logmax);
	if (sn->sl)
		audit_also(sn->log, syslogsend_line, sn->sl);
	if (sn->jd)
		journald_attach(sn->jd, sn->log);
	/* --stream over the profile's `stream` lines, a target each (its
	 * sender forked: the limits' and the identity's threads joined first) */
	const struct policy_stream *ps = &sn->pol.stream;
	bool streamed = o->stream_otlp || o->stream_ocsf || ps->otlp_url || ps->ocsf_file;
	const char *ocsf = o->stream_ocsf ?: ps->ocsf_file;
	if (ocsf && stream_ocsf_check(ocsf, s->workspace, e) < 0)
		return -1;
	if (streamed) {
		limits_job_join(&sn->lj);
		if (hostid_job_take(&sn->hj, s, e) < 0 || log_begin(sn, e) < 0)
			return -1; /* the sender reads the log's file from its start */
	}
	if (stream_start(&sn->stream, &(struct stream_conf){
			 .otlp_url = o->stream_otlp ?: ps->otlp_url,
			 .otlp_ca = o->stream_otlp ? NULL : ps->otlp_ca,
			 .ocsf_file = ocsf, .version = WARDEN_VERSION },
			 audit_path(sn->log), sn->id, e) < 0)
		return -1;
	if (o->summary) {
		summary_attach(&sn->sum, sn->log);
		hints_attach(&sn->hints, sn->log, sn->pol.ssh_agent.on, sn->spec.workspace,
			     &sn->pol.mask);
	}
	if (o->ci_summary)
		cisummary_attach(o->ci_summary, sn->log);
	return 0;
}

/* A stopping signal pending: the supervisor, which calls record_start,
 * holds them blocked for its loop; a long first checkpoint stops for one
 * (the supervisor then stops the session as for one during the build). */
static bool stop_pending(void)
{
	sigset_t p;
	if (sigpending(&p) < 0)
		return false;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&p, sig) == 1 && sandbox_signal_stops(sig))
			return true;
	return false;
}

/* The placeholders in the workspace, this session's and those of another
 * running there that it shares: never the user's, left out of the
 * checkpoints (gone again once the last session there ends; recorded, an
 * undo would make them as empty directories and sockets). At the start
 * while placed; at the end when left to another session still running. */
static void placeholders_there(const struct ws_plan *plan, struct strv *out)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->m[i].kind == WS_PLACEHOLDER && plan->m[i].made.err == 0)
			strv_push(out, plan->m[i].rel);
}

/* The workspace recorded before anything of the session can touch it
 * (the command's first exec waits for the supervisor, which records it
 * first); without its checkpoint (unless `checkpoint off`) no session. The
 * placeholders are left out (placeholders_there). Its field of
 * session.start to *ckfield. */
static int checkpoint_start(struct session *sn, json_t **ckfield, struct werr *e)
{
	const struct ws_plan *plan = &sn->spec.plan;
	_cleanup_strv_ struct strv made = { 0 };
	if (plan->placed)
		placeholders_there(plan, &made);
	/* read-only with no output in it: nothing in the workspace can
	 * change, nothing to record or undo */
	if (sn->lay.read_only && !sn->lay.output_inside)
		*ckfield = json_pack("{s:b, s:s}", "off", true, "why", "read-only workspace");
	else if (ckpt_session_start(&sn->ck, &sn->pol, sn->spec.storedir, sn->spec.workspace,
				    plan->ws_fd, &made, stop_pending, sn->id, ckfield, e) < 0)
		return -1;
	if (!sn->o.review)
		return 0;
	/* and what its end leaves out when new, and the placeholders it
	 * makes in the workspace: read again from here should the session
	 * be killed (leftover.h) */
	_cleanup_free_ char **ph = xcalloc(plan->n + 1, sizeof *ph);
	size_t nph = 0;
	for (size_t i = 0; i < plan->n; i++)
		if (plan->m[i].kind == WS_PLACEHOLDER)
			ph[nph++] = plan->m[i].rel;
	/* names are any bytes: kept losslessly (src/audit/escape.h) */
	json_t *esc = json_object_get(*ckfield, "escaped");
	bool had = esc != NULL;
	json_object_set_new(*ckfield, "review", json_true());
	json_set_bytes_array(*ckfield, "protected", plan->names.v, plan->names.n, &esc);
	json_set_bytes_array(*ckfield, "placeholders", ph, nph, &esc);
	if (esc && !had)
		json_object_set_new(*ckfield, "escaped", esc);
	return 0;
}

/* With the log open, the sandbox planned: the exec layout, the decoys
 * that would collide with a bind off, the limits and their cgroups,
 * --review's directories, as root the host identity (the checkpoint and
 * session.start follow while init builds the sandbox: record_start). */
static int session_plan(struct session *sn, struct werr *e)
{
	struct sandbox_spec *s = &sn->spec;
	/* The exec layout (allow-writable paths made, hidden files) once the
	 * workspace's protected and masked paths are known. */
	if (exec_layout_plan(s, e) < 0 ||
	    layout_plan_outside(&sn->lay, s->workspace, s->plan.clock, &sn->pol, e) < 0)
		return -1;
	home_skip_decoys(&sn->ss.canary, s, &sn->pol);
	s->nseeds = canary_seeds(&sn->ss.canary, s->seeds, SEED_MAX);
	sn->sshcfg = sshconfig_text(&sn->pol, sn->home);
	home_seed(s, ".ssh/config", sn->sshcfg);
	sn->knownhosts = knownhosts_text(&sn->pol, sn->home);
	home_seed(s, ".ssh/known_hosts", sn->knownhosts);
	/* and said now when commits made inside will not be signed */
	sn->gitsign.agent_keys = sn->pol.ssh_agent.on ? &sn->ssh_keys : NULL;
	sn->gitid = sn->pol.git_identity_off ? NULL : gitident_text(s->workspace, &sn->gitsign);
	home_seed(s, ".gitconfig", sn->gitid);
	if (sn->gitsign.note)
		wnote("%s", sn->gitsign.note);
	/* As root: the agent's own host identity, from its job, taken where
	 * first needed (made meanwhile): --review's directories are given to
	 * the identity, session.start names it */
	if (sn->o.review && (hostid_job_take(&sn->hj, s, e) < 0 ||
			     review_prepare(&sn->pol, sn->kf.release, s, sn->id, e) < 0))
		return -1;
	/* The limits (their job waited for): a note for each one a profile
	 * asked for that cannot be. */
	limits_job_take(&sn->lj);
	return hostid_job_take(&sn->hj, s, e);
}

/* The checkpoint and session.start, once: while init builds the sandbox
 * (supervisor_cfg.building), or, when the session failed before that,
 * ahead of its session.end. The workspace holds the placeholders by then
 * (made by launch, which returns once init is building): the checkpoint
 * leaves them out. */
static int record_start(void *ctx, struct werr *e)
{
	struct session *sn = ctx;
	if (sn->start_tried)
		return 0;
	sn->start_tried = true;
	json_t *ckfield = NULL;
	if (log_begin(sn, e) < 0 || checkpoint_start(sn, &ckfield, e) < 0 ||
	    log_start(sn, ckfield, e) < 0)
		return -1;
	sn->start_logged = true;
	settings_recovered(&sn->ag, sn->log);
	return 0;
}

/* The sandbox run by the supervisor, with the handles of the session it
 * borrows for the run (supervisor_cfg): the detector, the limits, the
 * proxy guarded for the decoys' tokens and the secrets by reference
 * (egress.h), the decoys. */
static int sandbox_launch(struct session *sn, int *status, json_t **exec_stats, struct werr *e)
{
	/* the published ports' listeners on the host, before anything runs:
	 * one in use stops the session here */
	_cleanup_(publish_freep) struct publish *pb = NULL;
	if (sn->pol.npublish && !(pb = publish_new(&sn->pol, sn->log, e)))
		return -1;
	struct supervisor_cfg sc = { .building = record_start, .building_ctx = sn,
		.publish = pb, .limits = &sn->lim, .detect = &sn->det,
		.guard = sn->ss.eg.guard.open ? &sn->ss.eg.guard : NULL,
		.canary = sn->ss.canary.n ? &sn->ss.canary : NULL, .ssh_auth_sock = sn->ssh_sock,
		.init_left = &sn->init };
	return supervisor_run(&sn->spec, &sc, sn->log, status, exec_stats, &sn->late, e);
}

/* The sandbox gone: its namespaces and watches closed on a thread, what it
 * reached recorded and its cgroups removed, the placeholders removed, what
 * it left in the workspace and the outputs swept, the scratch directory
 * removed, --task's branch carried to the host. */
static void sandbox_gone(struct session *sn)
{
	struct sandbox_spec *s = &sn->spec;
	struct session_layout *lay = &sn->lay;
	/* the sandbox's namespaces and the watches closed on a thread while
	 * the end goes on (lateclose.h): the workspace's watch too, which
	 * nothing reads from here on */
	late_close_add(&sn->late, wswatch_take_fd(s->plan.watch));
	late_close_start(&sn->late);
	/* the sandbox is gone: what the sweep finds is recorded, not acted on */
	if (sn->det)
		detect_set_actor(sn->det, NULL, NULL);
	/* What the sandbox reached (its cgroups are removed once the log is
	 * closed, while its pages are written: session_end) */
	limits_last_check(&sn->lim, sn->log);
	/* The sandbox is gone: the placeholders go too. */
	workspace_remove_placeholders(&s->plan);
	struct werr e2 = { 0 };
	if (session_sweep(s->workspace, NULL, &s->plan, sn->log, sn->id, &e2) < 0)
		werr_print(&e2);
	/* and the outputs and the scratch directory kept outside it */
	for (size_t i = 0; i < lay->nplans; i++)
		if (session_sweep(lay->planned[i], NULL, &lay->plans[i], sn->log, sn->id, &e2) < 0)
			werr_print(&e2);
	/* and --task's git directories the sandbox could write */
	_cleanup_strv_ struct strv gitdirs = { 0 };
	task_writable_gitdirs(&sn->task, &gitdirs);
	for (size_t i = 0; i < gitdirs.n; i++)
		if (session_sweep(NULL, gitdirs.v[i], &s->plan, sn->log, sn->id, &e2) < 0)
			werr_print(&e2);
	settings_guard(&sn->ag, sn->log, sn->id);
	/* the scratch directory the session made goes with it */
	layout_end(lay);
	/* --task: the branch the session committed on, carried to the host
	 * (by git, spawned: the closing thread joined first) */
	if (sn->o.task) {
		late_close_wait(&sn->late);
		if (task_finish(&sn->task, &e2) < 0)
			werr_print(&e2);
	}
}

/* session.end: the command's status (r < 0: warden's failure, e), the
 * run's figures and what the session left in the workspace. */
static int log_end(struct session *sn, int r, const int *status, double t0, json_t *exec_stats,
		   struct werr *e)
{
	struct sandbox_spec *s = &sn->spec;
	/* what the session left, recorded: what `warden undo` compares with */
	_cleanup_strv_ struct strv shared = { 0 };
	if (s->plan.left_shared)
		placeholders_there(&s->plan, &shared);
	json_t *ckend = s->review_upper ? ckpt_review_end(&sn->ck, s->review_upper,
							  &s->plan.names, sn->id, sn->log)
					: ckpt_session_end(&sn->ck, &sn->pol, s->plan.ws_fd, &shared,
							   sn->id);
	/* what waits for journald and syslog is sent (or lost) before
	 * session.end counts it */
	if (sn->jd)
		journald_end(sn->jd);
	if (sn->sl)
		syslogsend_end(sn->sl);
	json_t *jstats = sn->jd ? journald_stats(sn->jd) : NULL;
	json_t *slstats = sn->sl ? syslogsend_stats(sn->sl) : NULL;
	json_t *sstats = stream_report(sn->stream, STREAM_END_WAIT_MS);
	detect_flush(sn->det); /* the alerts counted past the record's bound */
	if (r < 0) {
		audit_emit_event(sn->log, ev_session_end(&(struct ev_session_end){
			.exit = 125, .error = e->msg, .counts = audit_counts(sn->log),
			.exec = exec_stats, .journald = jstats, .syslog = slstats, .stream = sstats,
			.checkpoint = ckend }), NULL);
		return -1;
	}
	return audit_emit_event(sn->log, ev_session_end(&(struct ev_session_end){
		.exit = *status, .duration_ms = mono_ms() - t0, .counts = audit_counts(sn->log),
		.exec = exec_stats, .journald = jstats, .syslog = slstats, .stream = sstats,
		.checkpoint = ckend }), e);
}

/* Everything between a loaded policy and a finished command. */
static int run_with_policy(struct session *sn, int *status, struct werr *e)
{
	if (session_open(sn, e) < 0 || session_plan(sn, e) < 0)
		return -1;
	double t0 = mono_ms();
	json_t *exec_stats = NULL;
	/* from the sandbox's start to the log closed, a signal that would
	 * end warden waits for the end's record (endguard.h); the supervisor
	 * takes them meanwhile */
	endguard_hold(&sn->eg);
	int r = sandbox_launch(sn, status, &exec_stats, e);
	endguard_arm(&sn->eg);
	/* a session that failed before init was built: its start on the
	 * record all the same, ahead of what its end records (nothing when
	 * that failed) */
	struct werr e2 = { 0 };
	if (record_start(sn, &e2) < 0)
		werr_print(&e2);
	sandbox_gone(sn);
	if (!sn->start_logged) {
		json_decref(exec_stats);
		return r;
	}
	return log_end(sn, r, status, t0, exec_stats, e);
}

static void session_agent_free(struct session_agent *ag)
{
	agent_endpoint_free(&ag->ep);
	agent_state_free(&ag->state);
}

/* --task: the session in the task's own workspace (sn->o.workspace from
 * here on). */
static int task_start(struct session *sn, struct werr *e)
{
	const struct session_opts *o = &sn->o;
	_cleanup_free_ char *logdir = sn->home ? audit_dir(sn->home) : NULL;
	if (!logdir)
		return werr_set(e, 0, "--task: no directory for warden's locks (set HOME)");
	_cleanup_free_ char *lockdir = xasprintf("%s/locks", logdir);
	if (task_locate(&sn->task, o->task, o->workspace, e) < 0 ||
	    task_prepare(&sn->task, lockdir, &sn->pol, e) < 0)
		return -1;
	const struct task *t = &sn->task;
	if (o->summary)
		wnote("task %s: %s %s%s%s", t->name, t->made ? "made" : "reusing", t->dir,
		      t->branch ? " on branch " : " (a copy)", t->branch ? t->branch : "");
	sn->o.workspace = t->dir;
	return 0;
}

/* Each member of the session in the state session_end releases as it is
 * (nothing held yet). */
static void session_init(struct session *sn, const struct session_opts *o)
{
	memset(sn, 0, sizeof *sn);
	sn->o = *o;
	sn->ag.state.lock_fd = -1;
	sn->caches.lock_fd = -1;
	sn->task.lock_fd = -1;
	sn->hj.ids = HOSTID_NONE;
	sn->init = CHILD_NONE;
	sn->spec = (struct sandbox_spec){
		.uid = getuid(), .gid = getgid(), .ids = HOSTID_NONE, .sync_fd = -1, .etc_lock = -1,
		.plan.lock_fd = -1, .plan.ws_fd = -1
	};
}

/* The session begun: the policy loaded with the options' additions, --task's
 * workspace, the limits' probe, and as jobs of the setup's worker the secrets'
 * preparation and, as root, the host identity. */
static int session_start(struct session *sn, struct werr *e)
{
	const struct session_opts *o = &sn->o;
	if (selflimits_check(e) < 0)
		return -1;
	sn->home = user_home();
	if (session_load_policy(o->agent, o->argv[0], o->profile, sn->home, &sn->pol, &sn->ag,
				e) < 0)
		return -1;
	if (o->state_dir && !sn->ag.def)
		return werr_set(e, 0, "--state: no agent profile is in use (%s is not a known "
				"agent's command; pass --agent NAME)", o->argv[0]);
	/* a linked worktree's repository shown, but not for a read-only or
	 * reviewed workspace, whose writes must not reach it (task.h) */
	if (policy_add_opts(&sn->pol, o, e) < 0 ||
	    (o->task ? task_start(sn, e) < 0
		     : !o->read_only && !o->review &&
			       task_linked(&sn->task, o->workspace, sn->home, &sn->pol, e) < 0))
		return -1;
	/* `ssh-agent`: the user's agent there, answering, before anything
	 * of the session is made */
	if (sn->pol.ssh_agent.on) {
		const char *sock = getenv("SSH_AUTH_SOCK");
		if (sshagent_host_check(sock, &sn->pol.ssh_agent.keys, 0, &sn->ssh_keys, e) < 0)
			return -1;
		sn->ssh_sock = xstrdup(sock);
	}
	/* What the host offers for the limits; the session's id, which names
	 * its cgroups */
	limits_probe(&sn->probe);
	audit_new_session_id(sn->id, sizeof sn->id);
	if (session_secrets_prepare(o, &sn->pol, sn->home, &sn->ss, e) < 0)
		return -1;
	/* As root, the identity from here on, as a job (after the secrets'
	 * commands were spawned; nothing forks until session_open takes
	 * them) */
	hostid_job_start(&sn->hj);
	/* the limits planned and their cgroups made on a thread
	 * (prepjobs.h), while the spec is made */
	limits_job_start(&sn->lj, &sn->lim, &sn->pol, &sn->probe, sn->id);
	sn->lim_planned = true;
	if (o->task) {
		sn->lay.task = xstrdup(sn->task.name);
		sn->lay.task_branch = sn->task.branch ? xstrdup(sn->task.branch) : NULL;
		sn->lay.task_repo = xstrdup(sn->task.repo);
	}
	return 0;
}

/* The session released, in the order struct session documents: the log
 * closed, its writeback begun (late_log) from here on, as nothing is
 * written to it after session.end; what the run made (the checkpoint's
 * store, the discovery); the stream's sender; the exit summary; then init
 * waited for (killed as the run ended: its exit ran meanwhile) and the
 * cgroups it was in (their last check was made for the record: sandbox_gone), the
 * layout, the journal's and syslog's senders and the detector (they
 * outlive the log they take its lines from), the sandbox's closes joined,
 * the summary, the spec, the identity, the secrets, the task, the agent and
 * the policy; the log's
 * fsync last. */
static void session_end(struct session *sn)
{
	_cleanup_free_ char *logpath = sn->log && sn->o.summary ? xstrdup(audit_path(sn->log)) : NULL;
	/* a log file made for a session that stopped before anything was
	 * recorded (a --stream target refused once the file was made for its
	 * sender): empty, not left for `warden log list` */
	_cleanup_free_ char *unstarted = sn->log && !sn->start_tried ? xstrdup(audit_path(sn->log))
								      : NULL;
	audit_close_late(steal_ptr(&sn->log), &sn->late_log);
	struct stat st;
	if (unstarted && lstat(unstarted, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(unstarted);
	ckpt_session_free(&sn->ck);
	limits_job_join(&sn->lj);
	discovery_free(&sn->disc);
	stream_end(steal_ptr(&sn->stream), STREAM_END_WAIT_MS, stderr);
	if (logpath) {
		summary_print(&sn->sum, logpath, stderr);
		hints_print(&sn->hints, stderr);
	}
	child_end(&sn->init);
	if (sn->lim_planned)
		limits_end(&sn->lim, NULL);
	layout_free(&sn->lay);
	journald_free(steal_ptr(&sn->jd));
	syslogsend_free(steal_ptr(&sn->sl));
	if (sn->det && sn->o.ci_summary)
		cisummary_set_risk_peak(sn->o.ci_summary, detect_risk_peak(sn->det));
	detect_free(steal_ptr(&sn->det));
	late_close_wait(&sn->late);
	summary_free(&sn->sum);
	hints_free(&sn->hints);
	sandbox_spec_free(&sn->spec);
	hostid_job_end(&sn->hj);
	session_secrets_free(&sn->ss);
	task_free(&sn->task);
	caches_free(&sn->caches);
	session_agent_free(&sn->ag);
	policy_free(&sn->pol);
	free(sn->ssh_sock);
	free(sn->sshcfg);
	free(sn->knownhosts);
	free(sn->gitid);
	gitsign_free(&sn->gitsign);
	strv_free(&sn->ssh_keys);
	late_close_wait(&sn->late_log);
}

int session_run(const struct session_opts *o, int *status, struct werr *e)
{
	/* before anything else: the supervisor keeps to one CPU (cpupin.h),
	 * and so the setup's jobs run in it (bgjob.h) */
	cpupin_start();
	struct session sn;
	session_init(&sn, o);
	int r = session_start(&sn, e) < 0 ? -1 : run_with_policy(&sn, status, e);
	session_end(&sn);
	/* a signal caught during the end ends warden here, its error said */
	if (r < 0 && endguard_caught(&sn.eg))
		werr_print(e);
	endguard_release(&sn.eg);
	return r;
}
