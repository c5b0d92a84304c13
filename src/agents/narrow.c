/* narrow.c - the request rules an agent profile narrows its API host to
 * (agent_narrow, agents.h): when the profile binds the client's API key to
 * that host, warden terminates its TLS and sees each request, so the key
 * can be held to the paths the client itself calls (the model API), not the
 * rest of what the key opens (files, batches, admin).
 *
 * The lists come from what the real clients were seen to request against
 * the mocks of the agent tests (tests/agents/), and from the API paths in
 * their own code. The paths sit under the base URL's path when the user
 * configured one (a gateway at https://gw.example/anthropic gets
 * /anthropic/v1/messages). A rule of the user's own for the same host adds
 * to these (request rules allow what any of them allows): that is the way
 * to widen. */
#include "agents.h"

#include <stdio.h>
#include <string.h>

#include "../net/reqrules.h"

struct agent_req {
	const char *methods;
	const char *path;      /* under the base URL's path */
};

/* Claude Code: the Messages API, token counting, the model list (the model
 * picker, a custom model's check) */
static const struct agent_req claude_reqs[] = {
	{ "POST", "/v1/messages" },
	{ "POST", "/v1/messages/count_tokens" },
	{ "GET", "/v1/models" },
	{ "GET", "/v1/models/*" },
	{ NULL, NULL },
};

/* ... and, toward its own API host (no base URL configured), its service
 * paths: the first run's connectivity check, the organisation's managed
 * settings and policy limits (read at each start), and WebFetch's check of
 * a domain */
static const struct agent_req claude_own_host[] = {
	{ "GET", "/api/hello" },
	{ "GET", "/api/claude_code/settings" },
	{ "GET", "/api/claude_code/policy_limits" },
	{ "GET", "/api/web/domain_info" },
	{ NULL, NULL },
};

/* Codex, under its base URL (https://api.openai.com/v1 by default): the
 * Responses API (POST, or GET opening its WebSocket), remote compaction,
 * the model list, the realtime (voice) API, image generation */
static const struct agent_req codex_reqs[] = {
	{ "GET,POST", "/responses" },
	{ "POST", "/responses/compact" },
	{ "GET", "/models" },
	{ "GET", "/realtime" },
	{ "POST", "/realtime/calls" },
	{ "POST", "/images/generations" },
	{ "POST", "/images/edits" },
	{ NULL, NULL },
};

struct agent_narrowing {
	const char *name;
	const char *default_prefix;         /* the path of the default base URL */
	const struct agent_req *reqs;       /* under the base URL's path */
	const struct agent_req *own_host;   /* only with no base URL configured */
};

static const struct agent_narrowing narrowings[] = {
	{ "claude", "", claude_reqs, claude_own_host },
	{ "codex", "/v1", codex_reqs, NULL },
};

/* The path of an http(s) URL agent_url_pattern accepted, without its
 * trailing slashes: into out; false when it does not fit. */
static bool url_path(const char *url, char *out, size_t cap)
{
	const char *s = strstr(url, "://");
	s = s ? s + 3 : url;
	s += strcspn(s, "/?#");
	size_t n = strcspn(s, "?#");
	while (n && s[n - 1] == '/')
		n--;
	if (n >= cap)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static int add_req(struct policy *p, const char *host, const char *prefix,
		   const struct agent_req *q, const char *origin, struct werr *e)
{
	struct net_rule r;
	const char *why = NULL;
	char glob[REQGLOB_MAX + 8];
	snprintf(glob, sizeof glob, "%s%s", prefix, q->path);
	if (rules_parse_pattern(&r, host, e) < 0)
		return -1;
	if (reqrules_methods(&r, q->methods, &why) < 0 || reqrules_path(&r, glob, &why) < 0)
		return werr_set(e, 0, "%s: %s %s on %s: %s", origin, q->methods, glob, host, why);
	return policy_add_net_rule(p, &r, RULES_ALLOW, origin, e);
}

int agent_narrow(const struct agent_def *a, struct policy *p, const struct agent_endpoint *ep,
		 const char *host, struct werr *e)
{
	const struct agent_narrowing *n = NULL;
	for (size_t i = 0; i < ARRAY_LEN(narrowings); i++)
		if (strcmp(narrowings[i].name, a->name) == 0)
			n = &narrowings[i];
	if (!n)
		return 0;
	char prefix[REQGLOB_MAX];
	if (!ep->url)
		snprintf(prefix, sizeof prefix, "%s", n->default_prefix);
	else if (!url_path(ep->url, prefix, sizeof prefix - 64) || strchr(prefix, '*'))
		return 0; /* a path no glob says exactly: the host stays as it was */
	/* a path the rules cannot read one way (an encoded slash): as above */
	struct net_rule probe = { 0 };
	const char *why = NULL;
	if (prefix[0] && reqrules_path(&probe, prefix, &why) < 0)
		return 0;
	_cleanup_free_ char *origin = xasprintf("agent %s", a->name);
	for (const struct agent_req *q = n->reqs; q->path; q++)
		if (add_req(p, host, prefix, q, origin, e) < 0)
			return -1;
	for (const struct agent_req *q = n->own_host; !ep->url && q && q->path; q++)
		if (add_req(p, host, "", q, origin, e) < 0)
			return -1;
	return 0;
}
