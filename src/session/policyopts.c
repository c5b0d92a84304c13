/* policyopts.c - a session's policy: the layered profiles with the
 * agent's (what their lines cannot do here said), and what the command
 * line adds to them (policyopts.h). */
#include "policyopts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/agents.h"
#include "../detect/canary.h"
#include "../policy/exec_rules.h"
#include "../workspace/workspace.h"

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

/* A profile path that exposes a credential store of the home (read-only
 * ~/.aws, read-write ~/.ssh): the user's choice, said at the start, since
 * a workspace there is refused and a profile may come with a project. */
static void stores_exposed(const struct policy *pol, const char *home)
{
	for (size_t i = 0; i < pol->npaths; i++) {
		const char *how = NULL;
		const char *cs = credential_store_exposed(pol->paths[i].path, home, &how);
		if (cs)
			wnote("%s (%s) %s your ~/%s, a credential store: its keys and tokens are the "
			      "sandbox's to read. Keys are used without it with --ssh-agent, tokens "
			      "with --secret NAME@HOST (doc/secrets.md)", pol->paths[i].path,
			      pol->paths[i].origin, how, cs);
	}
}

/* What the profiles' lines cannot do here (policy.h's notes: an `exec deny
 * FILE` with no FILE on this machine, an `env pass` of a variable warden
 * sets), and a `cache` that takes a decoy's place in the home: said at the
 * start, as a missing `read-only` path is (discover.c). A cache there is
 * the user's choice, as a `read-only ~/.ssh` is, so it is said, not
 * refused: the decoy is left out, and a search for credentials there goes
 * unseen. */
static void notes_said(const struct policy *pol)
{
	for (size_t i = 0; i < pol->notes.n; i++)
		wnote("%s", pol->notes.v[i]);
	for (size_t i = 0; !pol->canary_off && i < pol->caches.n; i++) {
		const char *d = canary_decoy_at(pol->caches.v[i]);
		if (d)
			wnote("cache ~/%s takes the place of warden's decoy credential ~/%s (a "
			      "canary: opening it is a critical alert): it is left out, and a "
			      "search for credentials there goes unseen; a cache that does not hold "
			      "it keeps the decoy", pol->caches.v[i], d);
	}
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
	stores_exposed(pol, home);
	notes_said(pol);
	return 0;
}

int policy_add_opts(struct policy *pol, const struct session_opts *o, struct werr *e)
{
	for (size_t i = 0; o->allow_net && i < o->allow_net->n; i++)
		if (allow_net_arg(pol, o->allow_net->v[i], e) < 0)
			return -1;
	for (size_t i = 0; o->publish && i < o->publish->n; i++)
		if (policy_add_publish(pol, o->publish->v[i], "--publish", e) < 0)
			return -1;
	for (size_t i = 0; o->secrets && i < o->secrets->n; i++)
		if (policy_add_secret(pol, o->secrets->v[i], "--secret", e) < 0)
			return -1;
	for (size_t i = 0; o->exec_deny && i < o->exec_deny->n; i++)
		if (exec_deny_arg(pol, o->exec_deny->v[i], e) < 0)
			return -1;
	pol->approve.ci = o->ci;
	if (o->ssh_agent)
		policy_add_ssh_key(pol, NULL);
	for (size_t i = 0; o->ssh_keys && i < o->ssh_keys->n; i++)
		policy_add_ssh_key(pol, o->ssh_keys->v[i]);
	if (o->no_ssh_agent && pol->ssh_agent.on) {
		wnote("check: the profile's ssh-agent line is left out (the check's bait stands "
		      "where your SSH agent would be)");
		strv_free(&pol->ssh_agent.keys);
		pol->ssh_agent = (struct policy_ssh_agent){ 0 };
	}
	return 0;
}
