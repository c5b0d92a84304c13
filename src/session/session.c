/* session.c - one sandbox session: compile the policy, check the kernel can
 * build every layer, choose and scan the workspace, open the audit log, run
 * the command through the supervisor, log the end and clean up. */
#include "session.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../agents/agents.h"
#include "../agents/discover.h"
#include "../agents/state.h"
#include "../net/tls.h"
#include "../audit/audit.h"
#include "../common/bgjob.h"
#include "../audit/journald.h"
#include "../checkpoint/checkpoint.h"
#include "../checkpoint/leftover.h"
#include "../checkpoint/store.h"
#include "../detect/detect.h"
#include "../policy/exec_rules.h"
#include "../policy/policy.h"
#include "../sandbox/features.h"
#include "../sandbox/limits.h"
#include "../sandbox/sandbox.h"
#include "../sandbox/wswatch.h"
#include "config.h"
#include "egress.h"
#include "layout.h"
#include "task.h"
#include "../detect/canary.h"
#include "summary.h"
#include "trust.h"
#include "../supervisor/llaudit.h"
#include "../supervisor/supervisor.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *setid_bits(mode_t bits)
{
	bool u = bits & S_ISUID, g = bits & S_ISGID;
	return u && g ? "setuid and setgid bits" : u ? "setuid bit" : "setgid bit";
}

/* With the sandbox gone: move aside git repositories and redirects the
 * agent created, clear setuid/setgid bits that appeared, record each as an
 * alert and tell the user (how to undo a move). */
static int sweep(const char *ws, const struct ws_plan *plan, struct audit *log,
		 const char *session, struct werr *e)
{
	struct ws_sweep sw = { 0 };
	int r = workspace_sweep(ws, plan, session, &sw, e);
	for (size_t i = 0; i < sw.n; i++) {
		const struct ws_swept *it = &sw.v[i];
		struct event a;
		char was[8], now[8];
		switch (it->kind) {
		case WS_SWEPT_GIT:
			wnote("the sandboxed command created %s/%s; its git configuration and hooks "
			      "would run on your next git command there, so it was moved to %s (review "
			      "it, then `mv` it back if you trust it)", sw.ws, it->rel, it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "git.created-in-sandbox",
				.path = it->rel, .moved_to = it->to, .action = "quarantined" });
			break;
		case WS_SWEPT_BARE:
			wnote("the sandboxed command made %s/%.*s look like a git repository (HEAD, "
			      "objects/, refs/), whose configuration and hooks git would run; its HEAD "
			      "was moved to %s so git no longer takes it for one (review it, then `mv` "
			      "it back if you trust it)", sw.ws, (int)(strlen(it->rel) - strlen("HEAD")),
			      it->rel, it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "git.bare-created-in-sandbox",
				.path = it->rel, .moved_to = it->to, .action = "quarantined" });
			break;
		case WS_SWEPT_CONFIG:
			wnote("the sandboxed command created %s/%s, a configuration that tools on your "
			      "host read to start commands; it was moved to %s (review it, then `mv` it "
			      "back if you trust it)", sw.ws, it->rel, it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "config.created-in-sandbox",
				.path = it->rel, .moved_to = it->to, .action = "quarantined" });
			break;
		default:
			snprintf(was, sizeof was, "%04o", (unsigned)it->mode_was);
			snprintf(now, sizeof now, "%04o", (unsigned)it->mode);
			wnote("%s/%s got the %s during the session; warden cleared %s (mode %s, was %s)",
			      sw.ws, it->rel, setid_bits(it->mode_was & ~it->mode),
			      (it->mode_was & ~it->mode) == (S_ISUID | S_ISGID) ? "them" : "it", now, was);
			a = ev_alert(&(struct ev_alert){ .rule = "setid.appeared-in-sandbox",
				.path = it->rel, .action = "cleared", .mode_was = was, .mode = now });
			break;
		}
		if (audit_emit_event(log, a, e) < 0 || audit_sync(log, e) < 0)
			r = -1;
	}
	ws_sweep_free(&sw);
	return r;
}

/* A directory of warden's own that no sandbox may reach (the audit log, the
 * cache): refuse a workspace overlapping it and profile paths inside it;
 * mounts.c masks it when a profile path covers it. The workspace is a
 * resolved path and dir may be reached through a symlink (a HOME that is
 * one), so both are compared as written and resolved; a profile path that
 * covers dir only once resolved is refused too, since the mask is placed by
 * the path as written. */
static int keep_private(const struct sandbox_spec *s, const struct policy *pol, const char *dir,
			const char *what, struct werr *e)
{
	_cleanup_free_ char *rdir = path_resolve_existing(dir);
	const char *r = rdir ? rdir : dir;
	if (path_is_within(s->workspace, dir) || path_is_within(dir, s->workspace) ||
	    path_is_within(s->workspace, r) || path_is_within(r, s->workspace))
		return werr_set(e, 0, "refusing workspace %s: it overlaps %s %s", s->workspace, what, dir);
	for (size_t i = 0; i < pol->npaths; i++) {
		const struct policy_path *pp = &pol->paths[i];
		_cleanup_free_ char *rpath = path_resolve_existing(pp->path);
		const char *rp = rpath ? rpath : pp->path;
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

/* The host loopback ports the allow rules name (net/forward.h); a rule
 * warden cannot serve is an error naming where it stands. */
static int forwards_prepare(const struct policy *pol, struct net_forwards *f, struct werr *e)
{
	for (size_t i = 0; i < pol->nnet; i++) {
		const struct policy_net_rule *r = &pol->net[i];
		const char *why = NULL;
		if (r->action == RULES_ALLOW && forward_add_rule(f, &r->rule, &why) < 0)
			return werr_set(e, 0, "%s: \"%s\": %s", r->origin, r->rule.text, why);
	}
	return 0;
}

/* The spec from the policy, the kernel and the host: the kernel's features
 * checked, the workspace chosen and refused where it would expose what the
 * sandbox hides, warden's own directories kept out, the environment. */
/* The agent's state directory, opened and kept apart from the workspace and
 * warden's own directories, bound into the home inside. */
static int state_prepare(const struct session_opts *o, struct session_agent *ag,
			 const char *home, struct sandbox_spec *s, struct werr *e)
{
	if (!ag->def)
		return 0;
	if (state_open(ag->def, o->state_dir, home, &ag->ep.codex, &ag->state, e) < 0 ||
	    state_keep_apart(&ag->state, s->workspace, "the workspace", e) < 0 ||
	    state_keep_apart(&ag->state, s->logdir, "the audit log directory", e) < 0 ||
	    state_keep_apart(&ag->state, s->cachedir, "warden's cache directory", e) < 0 ||
	    (s->storedir &&
	     state_keep_apart(&ag->state, s->storedir, "warden's checkpoint store", e) < 0))
		return -1;
	s->home_binds = ag->state.v;
	s->nhome_binds = ag->state.n;
	s->etc_extra_path = ag->def->etc_path;
	s->etc_extra_text = ag->def->etc_text;
	return 0;
}

static int spec_prepare(const struct session_opts *o, struct policy *pol, const char *home,
			const struct kernel_features *kf, struct sandbox_spec *s,
			struct discovery *disc, struct session_agent *ag,
			struct session_layout *lay, struct werr *e)
{
	if (features_require(kf, e) < 0)
		return -1;
	s->landlock_abi = kf->landlock_abi;
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
	/* read-only or not, the scratch directory and the outputs: read-write
	 * paths of the policy from here on (layout.h) */
	if (layout_prepare(lay, &(struct session_layout_opts){ .read_only = o->read_only,
		.scratch = o->scratch, .outputs = o->outputs }, pol, s->workspace, home, e) < 0)
		return -1;
	s->workspace_ro = lay->read_only;
	if (s->workspace_ro && o->review)
		return werr_set(e, 0, "--review and a read-only workspace: nothing would reach the "
				"workspace to review (leave one out)");
	/* The client found on the host and what it needs exposed, read-only. */
	if (discover_for(pol, o->argv[0], getenv("PATH"), s->workspace, home, disc, e) < 0)
		return -1;
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
	if (keep_private(s, pol, logdir, "the audit log directory", e) < 0 ||
	    (cachedir && keep_private(s, pol, cachedir, "warden's cache directory", e) < 0) ||
	    (storedir && keep_private(s, pol, storedir, "warden's checkpoint store", e) < 0))
		return -1;
	s->logdir = steal_ptr(&logdir);
	s->cachedir = steal_ptr(&cachedir);
	s->storedir = steal_ptr(&storedir);
	s->home = xstrdup(home);
	s->policy = pol;
	if (state_prepare(o, ag, home, s, e) < 0)
		return -1;
	if (forwards_prepare(pol, &s->forwards, e) < 0)
		return -1;
	s->argv = o->argv;
	/* warden's binary inside: the probe runner of `check`, the
	 * ProxyCommand of git over ssh when a destination is allowed, and the
	 * tool-call hook (`warden hook`) of an agent's client or of a policy
	 * with tool rules. */
	s->self_exe = o->self_exe || policy_net_allows_any(pol) || ag->def || pol->ntools ||
		      pol->tool_default != RULES_UNKNOWN;
	/* Any of 0-2 a terminal: the command gets a pty in its place, never the
	 * user's terminal (which it could read, or change the modes of). */
	for (int fd = 0; fd < 3; fd++)
		if (!o->no_pty && isatty(fd))
			s->pty_fds |= 1u << fd;
	s->use_pty = s->pty_fds != 0;
	env_build(pol, o->cli_env, &s->envp);
	if (lay->scratch) {
		_cleanup_free_ char *v = xasprintf("WARDEN_SCRATCH=%s", lay->scratch);
		env_override(&s->envp, v);
	}
	discover_env_path(disc, &s->envp);
	s->exec_path = disc->exec_path ? xstrdup(disc->exec_path) : NULL;
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

static int log_start(const struct session_opts *o, const struct policy *pol,
		     const struct sandbox_spec *s, const struct kernel_features *kf,
		     const struct discovery *disc, const struct session_agent *ag,
		     const struct limits *lim, json_t *checkpoint,
		     const struct session_layout *lay, struct audit *log, struct werr *e)
{
	char digest[65];
	policy_digest(pol, digest);
	json_t *kernel = features_to_json(kf);
	json_object_set_new(kernel, "pty", json_boolean(s->use_pty));
	json_object_set_new(kernel, "landlock_audit", json_pack("{s:b, s:s}", "on", s->landlock_log,
								"why", s->landlock_log_why));
	return audit_emit_event(log, ev_session_start(&(struct ev_session_start){
		.version = WARDEN_VERSION, .argv = o->argv, .workspace = s->workspace,
		.policy_digest = digest, .profiles = pol->sources.v, .uid = (int)s->uid,
		.kernel = kernel, .exposed = discovery_to_json(disc),
		.agent = ag->def ? agent_to_json(ag->def, &ag->ep, ag->state.dir) : NULL,
		.limits = limits_to_json(lim), .exec = exec_layout_to_json(&s->exec),
		.host_id = hostid_to_json(&s->ids), .checkpoint = checkpoint,
		.layout = layout_to_json(lay) }), e);
}

/* Everything between a loaded policy and a finished command. */
/* Secrets by reference: their values, the session CA and the guard. */
struct session_secrets {
	struct secrets sec;
	struct strv cas;           /* the CA files the user configured */
	struct egress eg;
	char *bundle;              /* the sandbox's trust store (host path), removed at the end */
	struct canary_set canary;  /* the decoys (canary.h); none with `canary off` */
	bool want_canary;          /* not `canary off` */
	struct seccomp_kind filter_kind; /* the seccomp filter the policy needs, most likely */
	atomic_bool filter_taken;  /* the preparing thread or the main one is on it */
	void *filter;              /* ... compiled by the thread, or NULL */
	size_t filter_len;
	struct bgjob ready;        /* the decoys, the egress and the filter made meanwhile
				      (secrets_ready) */
};

static void session_secrets_free(struct session_secrets *ss)
{
	bgjob_join(&ss->ready);
	if (ss->bundle)
		unlink(ss->bundle);
	free(ss->bundle);
	egress_free(&ss->eg);
	canary_free(&ss->canary);
	free(ss->filter);
	secrets_free(&ss->sec);
	strv_free(&ss->cas);
}

/* Would the sandbox see path: inside the workspace, the agent's state
 * directory given with --state, or a path the policy binds? */
static char *resolve_from_cwd(const char *p)
{
	if (p[0] == '/')
		return path_resolve_existing(p);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	_cleanup_free_ char *abs = xasprintf("%s/%s", cwd, p);
	char buf[PATH_MAX];
	return realpath(abs, buf) ? xstrdup(buf) : path_resolve_existing(abs);
}

static const char *seen_inside(const char *path, const struct session_opts *o,
			       const struct policy *pol)
{
	_cleanup_free_ char *ws = resolve_from_cwd(o->workspace ? o->workspace : ".");
	if (!ws || path_is_within(path, ws))
		return "the workspace";
	_cleanup_free_ char *st = o->state_dir ? resolve_from_cwd(o->state_dir) : NULL;
	if (st && path_is_within(path, st))
		return "the agent's state directory";
	for (size_t i = 0; i < pol->npaths; i++)
		if (path_is_within(path, pol->paths[i].path))
			return pol->paths[i].origin ? pol->paths[i].origin : "a path of the profile";
	return NULL;
}

/* The key behind the phantoms' stable ends, when it can be had and stays
 * out of the sandbox's sight; else the phantoms are random to the end (a
 * client that remembers an approved key by its end asks again). */
static bool tail_key_get(const struct session_opts *o, const struct policy *pol,
			 const char *home, unsigned char key[TAIL_KEY_LEN])
{
	_cleanup_free_ char *path = tail_key_path(home);
	if (!path)
		return false;
	_cleanup_free_ char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	_cleanup_free_ char *rdir = path_resolve_existing(dir);
	_cleanup_free_ char *rpath = rdir ? xasprintf("%s/phantom-key", rdir) : xstrdup(path);
	const char *seen = seen_inside(rpath, o, pol);
	if (seen) {
		wnote("secrets: %s would be in the sandbox's sight (%s), so this session's "
		      "phantoms are random to the end", path, seen);
		return false;
	}
	struct werr ke = { 0 };
	if (tail_key_load(path, key, &ke) < 0) {
		char buf[1200];
		wnote("secrets: %s; this session's phantoms are random to the end",
		      werr_str(&ke, buf, sizeof buf));
		return false;
	}
	return true;
}

/* The decoys and the egress (the session CA when there are secrets): on a
 * thread of their own, while the sandbox's spec is made (with secrets, the
 * session CA's key and libcrypto's setup take milliseconds); then the seccomp filter
 * (a millisecond of libseccomp), unless the main thread, there first, took
 * it (secrets_ready); the supervisor compiles it itself should it not be
 * there or not fit. */
static int secrets_make(void *arg, struct werr *e)
{
	struct session_secrets *ss = arg;
	/* the decoys of the home, their tokens watched for by the proxy */
	if (ss->want_canary && canary_generate(&ss->canary, AGENT_HOME, e) < 0)
		return -1;
	if (egress_init(&ss->eg, &ss->sec, ss->canary.n ? &ss->canary.scan : NULL, &ss->cas, e) < 0)
		return -1;
	struct werr fe = { 0 };
	if (!atomic_exchange(&ss->filter_taken, true) &&
	    seccomp_prepare(ss->filter_kind, &ss->filter, &ss->filter_len, &fe) < 0)
		ss->filter = NULL;
	return 0;
}

/* Read every secret's value (before anything starts: a missing one is an
 * error), and when there are any, make the session CA (secrets_ready
 * waits for it and the decoys). */
static int secrets_prepare(const struct session_opts *o, const struct policy *pol,
			   const char *home, struct session_secrets *ss, struct werr *e)
{
	unsigned char key[TAIL_KEY_LEN];
	bool have = pol->nsecrets && tail_key_get(o, pol, home, key);
	int r = secrets_load(&ss->sec, pol, have ? key : NULL, e);
	explicit_bzero(key, sizeof key);
	if (r < 0)
		return -1;
	if (ss->sec.n)
		trust_user_cas(&ss->cas);
	ss->want_canary = !pol->canary_off;
	ss->filter_kind = seccomp_kind_of(pol, o->read_only || pol->workspace_ro);
	bgjob_start(&ss->ready, secrets_make, ss);
	return 0;
}

/* The decoys and the egress, once made; the filter to the spec (which
 * checks that it fits, seccomp_compile). */
static int secrets_ready(struct session_secrets *ss, struct sandbox_spec *s, struct werr *e)
{
	/* the filter, when the thread has not started on it: here rather
	 * than wait (a failure is the supervisor's to report, compiling again) */
	struct werr fe = { 0 };
	if (!atomic_exchange(&ss->filter_taken, true))
		(void)seccomp_compile(s, &fe);
	if (bgjob_wait(&ss->ready, e) < 0)
		return -1;
	if (ss->filter) {
		free(s->seccomp_prog);
		s->seccomp_prog = steal_ptr(&ss->filter);
		s->seccomp_len = ss->filter_len;
		s->seccomp_kind = ss->filter_kind;
	}
	return 0;
}

/* Inside: each secret's variable holds its phantom, whatever else set it,
 * and the clients trust the session CA. */
static int secrets_spec(struct session_secrets *ss, const char *session, struct sandbox_spec *s,
			struct werr *e)
{
	if (!ss->sec.n)
		return 0;
	if (!s->cachedir)
		return werr_set(e, 0, "secrets: no cache directory for the session's trust store "
				"(HOME and XDG_CACHE_HOME are not absolute paths)");
	if (trust_bundle_write(s->cachedir, session, tls_ca_pem(ss->eg.ca), &ss->cas, &ss->bundle,
			       e) < 0)
		return -1;
	s->ca_bundle = xstrdup(ss->bundle);
	trust_env(&s->envp);
	for (size_t i = 0; i < ss->sec.n; i++) {
		_cleanup_free_ char *a = xasprintf("%s=%s", ss->sec.v[i].spec->name,
						   ss->sec.v[i].phantom);
		env_override(&s->envp, a);
	}
	return 0;
}

/* No decoy where the session binds something else into the home: an
 * agent's state (~/.claude), a path of the profile, an `exec
 * allow-writable` directory made there (canary.h). */
static void canary_skip_binds(struct canary_set *cs, const struct sandbox_spec *s)
{
	for (size_t i = 0; i < s->nhome_binds; i++) {
		_cleanup_free_ char *in = xasprintf(AGENT_HOME "/%s", s->home_binds[i].name);
		canary_skip_covered(cs, in);
	}
	for (size_t i = 0; i < s->policy->npaths; i++)
		canary_skip_covered(cs, s->policy->paths[i].path);
	for (size_t i = 0; i < s->exec.n; i++)
		for (size_t j = 0; j < cs->n; j++)
			if (path_is_within(s->exec.w[i].path, cs->v[j].inside))
				cs->v[j].off = true;
}

/* --review: the overlay's upper and work directories, under the log
 * directory (out of every sandbox's reach, on one file system), the upper
 * one with the workspace's mode (it is the overlay's root). As root, the
 * session's review directory and both in it are the workspace owner's:
 * the sandbox reaches them through a tree idmapped like the workspace's
 * (hostid.h), so what the agent writes is stored as the owner's; the
 * review/ directory above stays root's, closed to others. Overlayfs takes
 * idmapped layers since Linux 5.19: an older kernel is refused here. */
static int review_prepare(const struct policy *pol, const struct kernel_features *kf,
			  struct sandbox_spec *s, const char *session, struct werr *e)
{
	if (pol->checkpoint.off)
		return werr_set(e, 0, "--review needs the workspace's checkpoint (the profile says "
				"`checkpoint off`)");
	unsigned major = 0, minor = 0;
	if (s->ids.active && (sscanf(kf->release, "%u.%u", &major, &minor) != 2 ||
			      major < 5 || (major == 5 && minor < 19)))
		return werr_set(e, 0, "--review as root needs Linux 5.19 or later (overlayfs on the "
				"idmapped mounts a root session shows the workspace through); this "
				"kernel is %s. Run it as the workspace's owner instead", kf->release);
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

static void limits_endp(struct limits *l)
{
	limits_end(l, NULL);
}

/* As root, the agent's own host identity, never root's (hostid.h), and
 * whether Landlock's denials can be on the record (llaudit.h): the
 * identity's name-service lookups take milliseconds (a module loaded,
 * directories of user records looked through), and so does the audit
 * status asked of the kernel (it starts a thread to answer), so they run
 * on a thread of their own while the spec is made; taken once joined (the
 * identity released should the session end before). Unprivileged, the
 * probe says at once that it is off, on the main thread. */
struct hostid_job {
	struct hostid ids;
	int landlock_abi;
	bool landlock_log;
	char landlock_log_why[sizeof ((struct sandbox_spec *)0)->landlock_log_why];
	struct bgjob job;
};

static void landlock_log_probe(struct hostid_job *h)
{
	h->landlock_log = llaudit_probe(h->landlock_abi, h->landlock_log_why,
					sizeof h->landlock_log_why) == 1;
}

static int hostid_job_run(void *arg, struct werr *e)
{
	struct hostid_job *h = arg;
	landlock_log_probe(h);
	return hostid_acquire(&h->ids, e);
}

static void hostid_job_start(struct hostid_job *h, int landlock_abi)
{
	h->landlock_abi = landlock_abi;
	if (hostid_wanted())
		bgjob_start(&h->job, hostid_job_run, h);
	else
		landlock_log_probe(h);
}

static void hostid_job_end(struct hostid_job *h)
{
	bgjob_join(&h->job);
	hostid_release(&h->ids);
}

static int hostid_job_take(struct hostid_job *h, struct sandbox_spec *s, struct werr *e)
{
	int r = bgjob_wait(&h->job, e);
	s->landlock_log = h->landlock_log;
	snprintf(s->landlock_log_why, sizeof s->landlock_log_why, "%s", h->landlock_log_why);
	if (r < 0)
		return -1;
	s->ids = h->ids;
	h->ids = HOSTID_NONE;
	return 0;
}

static int run_with_policy(const struct session_opts *o, struct policy *pol, const char *home,
			   struct session_agent *ag, struct session_secrets *ss,
			   struct sandbox_spec *s, struct session_layout *lay, struct task *task,
			   struct detect **det,
			   struct journald **jd, struct audit **log, struct summary *sum,
			   struct late_close *late, struct hostid_job *hj,
			   const struct limits_probe *probe, int *status, struct werr *e)
{
	/* --log journald: the journal listens, or the session does not start
	 * (before anything of it is made) */
	if (o->log_journald && journald_open(jd, JOURNALD_SOCKET, e) < 0)
		return werr_wrap(e, "--log journald");
	/* The detection rules, before anything starts: a broken rules file
	 * is an error naming file, line and column. */
	struct ruleset rs = { 0 };
	if (drules_load(&rs, (const char *const *)pol->rules_files.v, pol->rules_files.n, e) < 0) {
		drules_free(&rs);
		return -1;
	}
	struct kernel_features kf;
	features_probe(&kf);
	_cleanup_(discovery_free) struct discovery disc = { 0 };
	if (spec_prepare(o, pol, home, &kf, s, &disc, ag, lay, e) < 0) {
		drules_free(&rs);
		return -1;
	}
	struct detect_risk risk = { .warn = pol->risk.warn, .ask = pol->risk.ask,
				    .freeze = pol->risk.freeze, .kill = pol->risk.kill,
				    .half_life_s = pol->risk.half_life_s };
	if (o->detect_observe)
		risk.warn = risk.ask = risk.freeze = risk.kill = 0;
	*det = detect_new(&rs, &(struct detect_env){ .workspace = s->workspace, .home = AGENT_HOME },
			   &risk);
	char session[40];
	audit_new_session_id(session, sizeof session);
	/* As root: the agent's own host identity, and Landlock's audit (made
	 * meanwhile) */
	if (hostid_job_take(hj, s, e) < 0)
		return -1;
	if (secrets_ready(ss, s, e) < 0 || secrets_spec(ss, session, s, e) < 0 ||
	    audit_open(log, s->logdir, session, e) < 0)
		return -1;
	if (o->log_syslog)
		audit_also_syslog(*log);
	if (*jd)
		journald_attach(*jd, *log);
	if (sum)
		summary_attach(sum, *log);
	detect_attach(*det, *log);
	/* The exec layout (allow-writable paths made, hidden files) once the
	 * workspace's protected and masked paths are known. */
	if (workspace_prepare(s, pol, e) < 0 || exec_layout_plan(s, e) < 0 ||
	    layout_plan_outside(lay, s->workspace, pol, e) < 0)
		return -1;
	canary_skip_binds(&ss->canary, s);
	s->nseeds = canary_seeds(&ss->canary, s->seeds, SEED_MAX);
	/* The limits: where each is enforced, the session's cgroups made, a
	 * note for each one a profile asked for that cannot be. */
	_cleanup_(limits_endp) struct limits lim;
	limits_plan(&lim, pol, probe);
	limits_create(&lim, session);
	limits_notes(&lim);
	/* The workspace recorded before anything of the session can touch
	 * it; without its checkpoint (unless `checkpoint off`) no session. */
	_cleanup_(ckpt_session_free) struct ckpt_session ck = { 0 };
	json_t *ckfield = NULL;
	if (o->review && review_prepare(pol, &kf, s, session, e) < 0)
		return -1;
	/* read-only with no output in it: nothing in the workspace can
	 * change, nothing to record or undo */
	if (lay->read_only && !lay->output_inside)
		ckfield = json_pack("{s:b, s:s}", "off", true, "why", "read-only workspace");
	else if (ckpt_session_start(&ck, pol, s->storedir, s->workspace, s->plan.ws_fd, session,
				    &ckfield, e) < 0)
		return -1;
	if (o->review) {
		/* and what its end leaves out when new, and the placeholders
		 * it makes in the workspace: read again from here should the
		 * session be killed (leftover.h) */
		json_t *prot = json_array();
		for (size_t i = 0; i < s->plan.names.n; i++)
			json_array_append_new(prot, json_string(s->plan.names.v[i]));
		json_t *ph = json_array();
		for (size_t i = 0; i < s->plan.n; i++)
			if (s->plan.m[i].kind == WS_PLACEHOLDER)
				json_array_append_new(ph, json_string(s->plan.m[i].rel));
		json_object_set_new(ckfield, "review", json_true());
		json_object_set_new(ckfield, "protected", prot);
		json_object_set_new(ckfield, "placeholders", ph);
	}
	if (log_start(o, pol, s, &kf, &disc, ag, &lim, ckfield, lay, *log, e) < 0)
		return -1;

	double t0 = now_ms();
	json_t *exec_stats = NULL;
	/* the proxy guarded for the decoys' tokens and the secrets by
	 * reference (egress.h) */
	struct supervisor_cfg sc = { .limits = &lim, .detect = *det,
		.guard = ss->canary.n || ss->sec.n ? &ss->eg.guard : NULL,
		.canary = ss->canary.n ? &ss->canary : NULL };
	int r = supervisor_run(s, &sc, *log, status, &exec_stats, late, e);
	/* the sandbox's namespaces and the watches closed on a thread while
	 * the end goes on (lateclose.h): the workspace's watch too, which
	 * nothing reads from here on */
	late_close_add(late, wswatch_take_fd(s->plan.watch));
	late_close_start(late);
	/* the sandbox is gone: what the sweep finds is recorded, not acted on */
	detect_set_actor(*det, NULL, NULL);
	/* What the sandbox reached, then its cgroups removed. */
	limits_end(&lim, *log);
	/* The sandbox is gone: the placeholders go too. */
	workspace_remove_placeholders(&s->plan);
	struct werr e2 = { 0 };
	if (sweep(s->workspace, &s->plan, *log, session, &e2) < 0)
		werr_print(&e2);
	/* and the outputs and the scratch directory kept outside it */
	for (size_t i = 0; i < lay->nplans; i++)
		if (sweep(lay->planned[i], &lay->plans[i], *log, session, &e2) < 0)
			werr_print(&e2);
	/* the scratch directory the session made goes with it */
	layout_end(lay);
	/* --task: the branch the session committed on, carried to the host
	 * (by git, spawned: the closing thread joined first) */
	if (task)
		late_close_wait(late);
	if (task && task_finish(task, &e2) < 0)
		werr_print(&e2);
	/* what the session left, recorded: what `warden undo` compares with */
	json_t *ckend = s->review_upper ? ckpt_review_end(&ck, s->review_upper, &s->plan.names,
							  session)
					: ckpt_session_end(&ck, pol, s->plan.ws_fd, session);
	/* what waits for journald is sent before session.end counts it */
	if (*jd)
		journald_flush(*jd, JOURNALD_END_WAIT_MS);
	if (r < 0) {
		audit_emit_event(*log, ev_session_end(&(struct ev_session_end){
			.exit = 125, .error = e->msg, .counts = audit_counts(*log), .exec = exec_stats,
			.journald = *jd ? journald_stats(*jd) : NULL, .checkpoint = ckend }), NULL);
		return -1;
	}
	return audit_emit_event(*log, ev_session_end(&(struct ev_session_end){
		.exit = *status, .duration_ms = now_ms() - t0, .counts = audit_counts(*log),
		.exec = exec_stats, .journald = *jd ? journald_stats(*jd) : NULL,
		.checkpoint = ckend }), e);
}

static void audit_closep(struct audit **log)
{
	audit_close(*log);
}

/* One --allow-net argument: PATTERN, or "PATTERN private" as in a profile's
 * `net allow PATTERN private` (the names it allows may resolve to private
 * ranges). */
static int allow_net_arg(struct policy *pol, const char *arg, struct werr *e)
{
	const char *sp = strpbrk(arg, " \t");
	if (!sp)
		return policy_add_net(pol, arg, false, false, "--allow-net", e);
	const char *opt = sp + strspn(sp, " \t");
	size_t optlen = strcspn(opt, " \t");
	if (optlen != strlen("private") || strncmp(opt, "private", optlen) != 0 ||
	    opt[optlen + strspn(opt + optlen, " \t")] != '\0')
		return werr_set(e, 0, "--allow-net \"%.200s\": takes PATTERN or \"PATTERN private\"",
				arg);
	_cleanup_free_ char *pattern = xasprintf("%.*s", (int)(sp - arg), arg);
	return policy_add_net(pol, pattern, false, true, "--allow-net", e);
}

/* A SHA-256 refused on top of the profiles (session_opts.exec_deny), into
 * the policy as `exec deny sha256:HEX` puts it: lower-case, each once. */
static int exec_deny_arg(struct policy *pol, const char *hex, struct werr *e)
{
	if (!exec_hex_valid(hex))
		return werr_set(e, 0, "exec deny: '%.200s' is not a SHA-256 (64 hex digits)", hex);
	char low[SHA256_HEX_LEN];
	for (size_t i = 0; i < SHA256_HEX_LEN; i++)
		low[i] = (char)tolower((unsigned char)hex[i]);
	if (!strv_contains(&pol->exec.deny, low))
		strv_push(&pol->exec.deny, low);
	return 0;
}

static const char *host_getenv(const char *name)
{
	return getenv(name);
}

static void session_agent_free(struct session_agent *ag)
{
	agent_endpoint_free(&ag->ep);
	agent_state_free(&ag->state);
}

int session_load_policy(const char *agent_opt, const char *argv0, const char *profile,
			const char *home, struct policy *pol, struct session_agent *ag,
			struct werr *e)
{
	*ag = (struct session_agent){ .state.lock_fd = -1 };
	if (agent_pick(agent_opt, argv0, &ag->def, e) < 0)
		return -1;
	_cleanup_free_ char *layer = ag->def ? xasprintf("builtin:agent-%s", ag->def->name) : NULL;
	if (policy_load_layered(pol, layer, ag->def ? ag->def->profile : NULL, profile, home, e) < 0)
		return -1;
	if (ag->def && agent_apply(ag->def, pol, home, host_getenv, &ag->ep, e) < 0) {
		policy_free(pol);
		return -1;
	}
	return 0;
}

int session_run(const struct session_opts *o, int *status, struct werr *e)
{
	/* the log's fsync, on a thread while everything else is freed, joined
	 * last (lateclose.h) */
	_cleanup_(late_close_wait) struct late_close late_log = { 0 };
	const char *home = user_home();
	_cleanup_(policy_free) struct policy pol = { 0 };
	_cleanup_(session_agent_free) struct session_agent ag = { .state.lock_fd = -1 };
	if (session_load_policy(o->agent, o->argv[0], o->profile, home, &pol, &ag, e) < 0)
		return -1;
	if (o->state_dir && !ag.def)
		return werr_set(e, 0, "--state: no agent profile is in use (%s is not a known "
				"agent's command; pass --agent NAME)", o->argv[0]);
	for (size_t i = 0; o->allow_net && i < o->allow_net->n; i++)
		if (allow_net_arg(&pol, o->allow_net->v[i], e) < 0)
			return -1;
	for (size_t i = 0; o->secrets && i < o->secrets->n; i++)
		if (policy_add_secret(&pol, o->secrets->v[i], "--secret", e) < 0)
			return -1;
	for (size_t i = 0; o->exec_deny && i < o->exec_deny->n; i++)
		if (exec_deny_arg(&pol, o->exec_deny->v[i], e) < 0)
			return -1;
	/* --task: the session in the task's own workspace */
	_cleanup_(task_free) struct task task = { .lock_fd = -1 };
	struct session_opts with_task = *o;
	if (o->task) {
		_cleanup_free_ char *logdir = home ? audit_dir(home) : NULL;
		if (!logdir)
			return werr_set(e, 0, "--task: no directory for warden's locks (set HOME)");
		_cleanup_free_ char *lockdir = xasprintf("%s/locks", logdir);
		if (task_locate(&task, o->task, o->workspace, e) < 0 ||
		    task_prepare(&task, lockdir, &pol, e) < 0)
			return -1;
		if (o->summary)
			wnote("task %s: %s %s%s%s", task.name, task.made ? "made" : "reusing", task.dir,
			      task.branch ? " on branch " : " (a copy)", task.branch ? task.branch : "");
		with_task.workspace = task.dir;
		o = &with_task;
	}
	/* What the host offers for the limits; as root with a limit on a
	 * cgroup v1 controller, the kernel's cgroup lock readied now for the
	 * move of init into it (limits.h: a grace period's wait, alongside
	 * what follows) */
	struct limits_probe probe;
	limits_probe(&probe);
	limits_warm(&probe, &pol);
	_cleanup_(session_secrets_free) struct session_secrets ss = { 0 };
	if (secrets_prepare(o, &pol, home, &ss, e) < 0)
		return -1;
	/* As root, the identity and the audit status from here on, on a
	 * thread (after the secrets' commands were spawned; nothing forks
	 * until run_with_policy takes them) */
	_cleanup_(hostid_job_end) struct hostid_job hj = { .ids = HOSTID_NONE };
	hostid_job_start(&hj, landlock_abi_version());
	_cleanup_(sandbox_spec_free) struct sandbox_spec s = {
		.uid = getuid(), .gid = getgid(), .ids = HOSTID_NONE, .sync_fd = -1, .etc_lock = -1,
		.plan.lock_fd = -1, .plan.ws_fd = -1
	};
	_cleanup_(summary_free) struct summary sum = { 0 };
	/* joined once the log is closed: its fsync and these closes overlap */
	_cleanup_(late_close_wait) struct late_close late = { 0 };
	/* the detector outlives the log it subscribes to (closed first) */
	_cleanup_(detect_freep) struct detect *det = NULL;
	/* so does the journal's sender */
	_cleanup_(journald_freep) struct journald *jd = NULL;
	_cleanup_(audit_closep) struct audit *log = NULL;
	_cleanup_(layout_free) struct session_layout lay = { 0 };
	if (o->task) {
		lay.task = xstrdup(task.name);
		lay.task_branch = task.branch ? xstrdup(task.branch) : NULL;
		lay.task_repo = xstrdup(task.repo);
	}
	int r = run_with_policy(o, &pol, home, &ag, &ss, &s, &lay, o->task ? &task : NULL, &det, &jd, &log,
				o->summary ? &sum : NULL, &late, &hj, &probe, status, e);
	if (log && o->summary)
		summary_print(&sum, audit_path(log), stderr);
	audit_close_late(steal_ptr(&log), &late_log);
	return r;
}
