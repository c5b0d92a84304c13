/* session_secrets.c - a session's secrets by reference made ready: the
 * values read, the key behind the phantoms' stable ends, the decoys, the
 * egress and the seccomp filter on a thread, the trust store and the
 * phantoms' variables for the spec. */
#include "session_secrets.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../net/tls.h"
#include "../secrets/tailkey.h"
#include "trust.h"

void session_secrets_free(struct session_secrets *ss)
{
	bgjob_join(&ss->ready);
	if (ss->bundle) {
		unlink(ss->bundle);
		close(ss->bundle_lock);
	}
	free(ss->bundle);
	egress_free(&ss->eg);
	canary_free(&ss->canary);
	free(ss->filter);
	free(ss->cachedir);
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

/* The decoys and the egress (the session CA when there are secrets): a job
 * of the setup's worker, while the sandbox's spec is made (with secrets, the
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
	if (egress_init(&ss->eg, &ss->sec, ss->canary.n ? &ss->canary.scan : NULL, ss->rules, ss->mcp,
			&ss->cas, e) < 0)
		return -1;
	struct werr fe = { 0 };
	if (!atomic_exchange(&ss->filter_taken, true) &&
	    seccomp_prepare(ss->filter_kind, ss->cachedir, &ss->filter, &ss->filter_len, &fe) < 0)
		ss->filter = NULL;
	return 0;
}

/* Read every secret's value (before anything starts: a missing one is an
 * error), and when there are any, or hosts the rules inspect, make the
 * session CA (secrets_ready waits for it and the decoys). */
int session_secrets_prepare(const struct session_opts *o, const struct policy *pol,
			   const char *home, struct session_secrets *ss, struct werr *e)
{
	unsigned char key[TAIL_KEY_LEN];
	bool have = pol->nsecrets && tail_key_get(o, pol, home, key);
	int r = secrets_load(&ss->sec, pol, have ? key : NULL, e);
	explicit_bzero(key, sizeof key);
	if (r < 0)
		return -1;
	/* the hosts request rules and mcp rules name are inspected: their
	 * TLS terminated too, a secret bound or not */
	ss->rules = &pol->net_rules;
	ss->mcp = &pol->mcp;
	if (ss->sec.n || egress_any_inspected(ss->rules, ss->mcp))
		trust_user_cas(&ss->cas);
	ss->want_canary = !pol->canary_off;
	ss->filter_kind = seccomp_kind_of(pol, o->read_only || pol->workspace_ro);
	ss->cachedir = etc_cache_dir(home);
	bgjob_start(&ss->ready, secrets_make, ss);
	return 0;
}

/* The decoys and the egress, once made; the filter to the spec (which
 * checks that it fits, seccomp_compile). */
int session_secrets_ready(struct session_secrets *ss, struct sandbox_spec *s, struct werr *e)
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
 * and the clients trust the session CA, made for secrets or for hosts the
 * rules inspect (the guard that swaps the phantoms and watches for the
 * decoys' tokens goes to the supervisor with the sandbox's launch). */
int session_secrets_spec(struct session_secrets *ss, const char *session, struct sandbox_spec *s,
			struct werr *e)
{
	if (!ss->eg.ca)
		return 0;
	if (!s->cachedir)
		return werr_set(e, 0, "secrets: no cache directory for the session's trust store "
				"(HOME and XDG_CACHE_HOME are not absolute paths)");
	if (trust_bundle_write(s->cachedir, session, tls_ca_pem(ss->eg.ca), &ss->cas, &ss->bundle,
			       &ss->bundle_lock, e) < 0)
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
