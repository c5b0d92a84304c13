/* agents.c - the built-in agent profiles (agents.h): the table of known
 * clients, picking one by the command's name, and layering one onto a
 * policy: the API endpoint from the client's own configuration (its
 * variable in the host's environment, else the user's own settings file,
 * which the sandbox never makes writable), the CA file it trusts.
 *
 * The agent's state directory is never read for any of this: the agent
 * writes it, and what the agent writes must not widen what the next
 * session may reach. */
#include "agents.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../net/rules.h"
#include "discover.h"

/* ---- the table ----------------------------------------------------------- */

static const char *const claude_commands[] = { "claude", NULL };
static const char *const codex_commands[] = { "codex", NULL };

static const struct agent_state_entry claude_state[] = {
	{ ".claude", true, NULL },
	/* Claude Code calls an empty file corrupt */
	{ ".claude.json", false, "{}\n" },
};

static const struct agent_seed claude_seeds[] = {
	{ ".claude/settings.json", "{\n  \"sandbox\": {\n    \"enabled\": false\n  }\n}\n",
	  "Claude Code's own sandbox is off in warden's state for claude (warden is the "
	  "sandbox; nested user namespaces stay refused)" },
};

static const struct agent_state_entry codex_state[] = {
	{ ".codex", true, NULL },
};

static const struct agent_seed codex_seeds[] = {
	{ ".codex/config.toml",
	  "# Written by warden for Codex inside the sandbox (warden's state for codex).\n"
	  "# warden is the sandbox: Codex's own one needs user namespaces, which warden\n"
	  "# refuses to nest, so it is off here. Edit the rest as you like.\n"
	  "sandbox_mode = \"danger-full-access\"\n"
	  "check_for_update_on_startup = false\n"
	  "\n"
	  "[analytics]\n"
	  "enabled = false\n",
	  "Codex's own sandbox is off in warden's state for codex (warden is the sandbox; "
	  "nested user namespaces stay refused)" },
};

const struct agent_def agent_defs[] = {
	{
		.name = "claude",
		.title = "Claude Code",
		.commands = claude_commands,
		.profile =
			"# Claude Code (builtin:agent-claude), layered on the default.\n"
			"# Settings variables that are not secrets:\n"
			"env pass ANTHROPIC_BASE_URL\n"
			"env pass ANTHROPIC_MODEL\n"
			"env pass ANTHROPIC_SMALL_FAST_MODEL\n"
			"env pass ANTHROPIC_DEFAULT_OPUS_MODEL\n"
			"env pass ANTHROPIC_DEFAULT_SONNET_MODEL\n"
			"env pass ANTHROPIC_DEFAULT_HAIKU_MODEL\n"
			"env pass CLAUDE_CODE_SUBAGENT_MODEL\n"
			"env pass CLAUDE_CODE_MAX_OUTPUT_TOKENS\n"
			"env pass MAX_THINKING_TOKENS\n"
			"env pass NODE_EXTRA_CA_CERTS\n"
			"# The API key, until secrets by reference keep it outside:\n"
			"env pass ANTHROPIC_API_KEY\n"
			"env pass ANTHROPIC_AUTH_TOKEN\n"
			"# Telemetry, error reports, auto-update: refused by the proxy, and\n"
			"# switched off so that the client does not keep trying them.\n"
			"env set DISABLE_TELEMETRY=1\n"
			"env set DISABLE_ERROR_REPORTING=1\n"
			"env set DISABLE_AUTOUPDATER=1\n"
			"env set DISABLE_BUG_COMMAND=1\n"
			"env set CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\n",
		.state = claude_state,
		.nstate = ARRAY_LEN(claude_state),
		.seeds = claude_seeds,
		.nseeds = ARRAY_LEN(claude_seeds),
	},
	{
		.name = "codex",
		.title = "Codex",
		.commands = codex_commands,
		.profile =
			"# Codex (builtin:agent-codex), layered on the default.\n"
			"# Settings variables that are not secrets:\n"
			"env pass OPENAI_BASE_URL\n"
			"env pass OPENAI_ORGANIZATION\n"
			"env pass OPENAI_PROJECT\n"
			"env pass CODEX_CA_CERTIFICATE\n"
			"env pass SSL_CERT_FILE\n"
			"# The API key, until secrets by reference keep it outside:\n"
			"env pass OPENAI_API_KEY\n"
			"env pass CODEX_API_KEY\n",
		.state = codex_state,
		.nstate = ARRAY_LEN(codex_state),
		.seeds = codex_seeds,
		.nseeds = ARRAY_LEN(codex_seeds),
	},
};
const size_t agent_defs_n = ARRAY_LEN(agent_defs);

/* Per agent: the variable naming its base URL, its default hosts, the
 * variables naming a CA file, and the user's settings file that may name a
 * base URL (home-relative). */
struct agent_net {
	const char *name;
	const char *url_var;
	const char *const *default_hosts;
	const char *const *ca_vars;
	const char *settings;
};

static const char *const claude_hosts[] = {
	"api.anthropic.com:443",
	/* signing in with a Claude account: the token exchange and refresh */
	"console.anthropic.com:443", "platform.claude.com:443", NULL,
};
static const char *const claude_ca[] = { "NODE_EXTRA_CA_CERTS", NULL };
static const char *const codex_hosts[] = {
	"api.openai.com:443",
	/* signing in with a ChatGPT account, and its Codex backend */
	"auth.openai.com:443", "chatgpt.com:443", NULL,
};
static const char *const codex_ca[] = { "CODEX_CA_CERTIFICATE", "SSL_CERT_FILE", NULL };

static const struct agent_net agent_nets[] = {
	{ "claude", "ANTHROPIC_BASE_URL", claude_hosts, claude_ca, ".claude/settings.json" },
	{ "codex", "OPENAI_BASE_URL", codex_hosts, codex_ca, ".codex/config.toml" },
};

static const struct agent_net *net_of(const struct agent_def *a)
{
	for (size_t i = 0; i < ARRAY_LEN(agent_nets); i++)
		if (strcmp(agent_nets[i].name, a->name) == 0)
			return &agent_nets[i];
	return NULL;
}

const struct agent_def *agent_find(const char *name)
{
	for (size_t i = 0; i < agent_defs_n; i++)
		if (strcmp(agent_defs[i].name, name) == 0)
			return &agent_defs[i];
	return NULL;
}

const struct agent_def *agent_for_command(const char *argv0)
{
	if (!argv0)
		return NULL;
	const char *slash = strrchr(argv0, '/');
	const char *base = slash ? slash + 1 : argv0;
	for (size_t i = 0; i < agent_defs_n; i++)
		for (const char *const *c = agent_defs[i].commands; *c; c++)
			if (strcmp(*c, base) == 0)
				return &agent_defs[i];
	return NULL;
}

int agent_pick(const char *opt, const char *argv0, const struct agent_def **out, struct werr *e)
{
	*out = NULL;
	if (!opt) {
		*out = agent_for_command(argv0);
		return 0;
	}
	if (strcmp(opt, "none") == 0)
		return 0;
	if ((*out = agent_find(opt)))
		return 0;
	char known[256] = "";
	for (size_t i = 0; i < agent_defs_n; i++)
		snprintf(known + strlen(known), sizeof known - strlen(known), "%s, ",
			 agent_defs[i].name);
	return werr_set(e, 0, "--agent \"%.100s\": no such agent profile (known: %snone)", opt,
			known);
}

/* ---- base URLs ----------------------------------------------------------- */

int agent_url_pattern(const char *url, char **pattern, struct werr *e)
{
	uint16_t port;
	const char *rest;
	if (strncasecmp(url, "https://", 8) == 0) {
		port = 443;
		rest = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		port = 80;
		rest = url + 7;
	} else {
		return werr_set(e, 0, "\"%.200s\" is not an http:// or https:// URL", url);
	}
	size_t alen = strcspn(rest, "/?#");
	const char *at = memchr(rest, '@', alen);
	if (at) /* user:password@ - the host comes after it */
		alen -= (size_t)(at + 1 - rest), rest = at + 1;
	const char *hend = rest + alen;
	const char *colon = NULL;
	if (*rest == '[') {
		const char *rb = memchr(rest, ']', alen);
		if (!rb)
			return werr_set(e, 0, "\"%.200s\": unclosed '[' in the host", url);
		if (rb + 1 < hend) {
			if (rb[1] != ':')
				return werr_set(e, 0, "\"%.200s\": junk after the IPv6 address", url);
			colon = rb + 1;
		}
	} else {
		colon = memchr(rest, ':', alen);
	}
	size_t hlen = colon ? (size_t)(colon - rest) : alen;
	if (colon && net_port_parse(colon + 1, (size_t)(hend - colon - 1), &port) < 0)
		return werr_set(e, 0, "\"%.200s\": bad port", url);
	struct net_host h;
	const char *why = NULL;
	if (hlen == 0 || net_host_parse(&h, rest, hlen, &why) < 0)
		return werr_set(e, 0, "\"%.200s\": bad host (%s)", url, why ? why : "empty");
	*pattern = h.kind == NET_HOST_IPV6 ? xasprintf("[%s]:%u", h.name, port)
					   : xasprintf("%s:%u", h.name, port);
	return 0;
}

/* ---- Codex's config.toml: model_provider and its base_url ----------------- */

/* A TOML basic or literal string at s (after '='), on one line. */
static char *toml_string(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || (*s != '"' && *s != '\''))
		return NULL;
	char q = *s++;
	struct sbuf { char *v; size_t n; } b = { xmalloc((size_t)(end - s) + 1), 0 };
	for (; s < end && *s != q; s++) {
		if (q == '"' && *s == '\\') {
			if (++s >= end)
				break;
			switch (*s) {
			case '"': case '\\': case '/': b.v[b.n++] = *s; break;
			case 't': b.v[b.n++] = '\t'; break;
			default: free(b.v); return NULL; /* not in a URL or a name */
			}
			continue;
		}
		b.v[b.n++] = *s;
	}
	if (s >= end) {
		free(b.v);
		return NULL;
	}
	for (s++; s < end && (*s == ' ' || *s == '\t'); s++)
		;
	if (s < end && *s != '#') {
		free(b.v);
		return NULL;
	}
	b.v[b.n] = '\0';
	return b.v;
}

/* "key = value" at s: the key (bare or quoted), *val after the '='. */
static bool toml_key(const char *s, const char *end, const char *key, const char **val)
{
	size_t kl = strlen(key);
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	bool quoted = s < end && *s == '"';
	if (quoted)
		s++;
	if ((size_t)(end - s) < kl || memcmp(s, key, kl) != 0)
		return false;
	s += kl;
	if (quoted && (s >= end || *s++ != '"'))
		return false;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || *s != '=')
		return false;
	*val = s + 1;
	return true;
}

/* The table a header line names, with its dotted parts joined by '.' and
 * quotes dropped: "[model_providers.\"my gw\"]" gives "model_providers.my gw". */
static char *toml_table(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || *s != '[')
		return NULL;
	s++;
	char *out = xmalloc((size_t)(end - s) + 1);
	size_t n = 0;
	bool q = false;
	for (; s < end; s++) {
		if (*s == '"') {
			q = !q;
			continue;
		}
		if (!q && *s == ']')
			break;
		if (!q && (*s == ' ' || *s == '\t'))
			continue;
		out[n++] = *s;
	}
	out[n] = '\0';
	return out;
}

/* The keys of a provider table that say where and how to talk to it;
 * anything else (http_headers may hold a token) is not imported. */
static const char *const provider_keys[] = {
	"name", "base_url", "env_key", "wire_api", "requires_openai_auth",
	"request_max_retries", "stream_max_retries", "stream_idle_timeout_ms",
};

static bool provider_key(const char *s, const char *end, const char **val)
{
	for (size_t i = 0; i < ARRAY_LEN(provider_keys); i++)
		if (toml_key(s, end, provider_keys[i], val))
			return true;
	return false;
}

void codex_conf_free(struct codex_conf *c)
{
	free(c->provider);
	free(c->base_url);
	free(c->env_key);
	free(c->import);
	*c = (struct codex_conf){ 0 };
}

int agent_codex_config(const char *text, size_t len, struct codex_conf *c, struct werr *e)
{
	*c = (struct codex_conf){ 0 };
	_cleanup_free_ char *table = NULL;
	/* per provider table: its name, base_url, env_key and lines to import */
	struct prov { char *name, *url, *key; struct strv lines; } *pv = NULL;
	size_t npv = 0;
	struct strv top = { 0 };
	int r = 0;
	const char *p = text, *end = text + len;
	for (unsigned lineno = 1; p < end && r == 0; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *val;
		char *t = toml_table(p, le);
		if (t) {
			free(table);
			table = t;
			if (strncmp(table, "model_providers.", 16) == 0 && table[16]) {
				pv = xrealloc(pv, (npv + 1) * sizeof *pv);
				pv[npv++] = (struct prov){ .name = xstrdup(table + 16) };
			}
		} else if (!table && (toml_key(p, le, "model_provider", &val) ||
				      toml_key(p, le, "model", &val))) {
			char *v = toml_string(val, le);
			if (!v) {
				r = werr_set(e, 0, "line %u: %.*s is not a one-line string", lineno,
					     (int)strcspn(p, " \t="), p);
				break;
			}
			bool is_provider = toml_key(p, le, "model_provider", &val);
			if (is_provider) {
				free(c->provider);
				c->provider = xstrdup(v);
			}
			strv_push_owned(&top, xasprintf("%s = \"%s\"", is_provider ? "model_provider" : "model", v));
			free(v);
		} else if (table && npv && strcmp(table + 16, pv[npv - 1].name) == 0 &&
			   provider_key(p, le, &val)) {
			struct prov *pr = &pv[npv - 1];
			const char *v0 = val;
			while (v0 < le && (*v0 == ' ' || *v0 == '\t'))
				v0++;
			bool str = v0 < le && (*v0 == '"' || *v0 == '\'');
			char *sv = str ? toml_string(val, le) : NULL;
			if (str && !sv) {
				r = werr_set(e, 0, "line %u: not a one-line string", lineno);
				break;
			}
			if (toml_key(p, le, "base_url", &val)) {
				free(pr->url);
				pr->url = sv ? xstrdup(sv) : NULL;
			} else if (toml_key(p, le, "env_key", &val)) {
				free(pr->key);
				pr->key = sv ? xstrdup(sv) : NULL;
			}
			/* one line, no newline or quote games: copied as written */
			if (!str || sv)
				strv_push_owned(&pr->lines, xasprintf("%.*s", (int)(le - p), p));
			free(sv);
		}
		p = nl ? nl + 1 : end;
	}
	const char *want = c->provider ? c->provider : "openai";
	struct sbufc { char *v; } out = { xstrdup("") };
	for (size_t i = 0; i < top.n; i++) {
		char *n2 = xasprintf("%s%s\n", out.v, top.v[i]);
		free(out.v);
		out.v = n2;
	}
	for (size_t i = 0; i < npv; i++) {
		if (r == 0 && strcmp(pv[i].name, want) == 0) {
			free(c->base_url);
			free(c->env_key);
			c->base_url = pv[i].url ? xstrdup(pv[i].url) : NULL;
			c->env_key = pv[i].key ? xstrdup(pv[i].key) : NULL;
			char *n2 = xasprintf("%s\n[model_providers.\"%s\"]\n", out.v, pv[i].name);
			free(out.v);
			out.v = n2;
			for (size_t k = 0; k < pv[i].lines.n; k++) {
				n2 = xasprintf("%s%s\n", out.v, pv[i].lines.v[k]);
				free(out.v);
				out.v = n2;
			}
		}
		free(pv[i].name);
		free(pv[i].url);
		free(pv[i].key);
		strv_free(&pv[i].lines);
	}
	free(pv);
	strv_free(&top);
	if (r < 0 || !*out.v) {
		free(out.v);
		if (r < 0)
			codex_conf_free(c);
		return r;
	}
	c->import = out.v;
	return 0;
}

/* ---- layering ------------------------------------------------------------ */

/* The user's own settings file (never the state directory): the base URL
 * it names, and for Codex the provider settings to import. */
static int read_settings(const struct agent_def *a, const char *path, struct agent_endpoint *ep,
			 struct werr *e)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ENOTDIR ? 0 : werr_errno(e, "%s", path);
	char buf[65536];
	size_t len = fread(buf, 1, sizeof buf, f);
	bool big = !feof(f);
	fclose(f);
	if (big)
		return werr_set(e, 0, "%s: larger than 64 KiB", path);
	if (strcmp(a->name, "codex") == 0) {
		struct codex_conf c;
		if (agent_codex_config(buf, len, &c, e) < 0)
			return werr_wrap(e, "%s", path);
		ep->url = steal_ptr(&c.base_url);
		ep->key_var = steal_ptr(&c.env_key);
		ep->import = steal_ptr(&c.import);
		codex_conf_free(&c);
		return 0;
	}
	json_error_t je;
	_cleanup_json_ json_t *j = json_loadb(buf, len, 0, &je);
	if (!j)
		return werr_set(e, 0, "%s:%d: %s", path, je.line, je.text);
	const char *u = json_string_value(json_object_get(json_object_get(j, "env"),
							  "ANTHROPIC_BASE_URL"));
	ep->url = u ? xstrdup(u) : NULL;
	return 0;
}

static const char *const system_prefixes[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64" };

/* The CA file a variable names, exposed read-only when it lies outside what
 * the sandbox shows anyway. */
static int expose_ca(const struct agent_def *a, struct policy *p, const char *var,
		     const char *val, const char *home, struct werr *e)
{
	if (!val || !*val)
		return 0;
	if (val[0] != '/' || path_has_dot_components(val))
		return werr_set(e, 0, "%s=%.200s: warden needs an absolute path without . or .. "
				"components to show that file to %s", var, val, a->title);
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(val, real) || stat(real, &st) < 0)
		return werr_errno(e, "%s=%.200s", var, val);
	if (!S_ISREG(st.st_mode))
		return werr_set(e, 0, "%s=%.200s: not a regular file", var, val);
	for (size_t i = 0; i < ARRAY_LEN(system_prefixes); i++)
		if (path_is_within(real, system_prefixes[i]))
			return 0;
	_cleanup_free_ char *what = xasprintf("%s's %s", a->title, var);
	if (discover_refuse_tree(real, home, what, e) < 0)
		return -1;
	_cleanup_free_ char *origin = xasprintf("agent %s: %s", a->name, var);
	for (size_t i = 0; i < p->npaths; i++)
		if (strcmp(p->paths[i].path, real) == 0)
			return 0;
	p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof *p->paths);
	p->paths[p->npaths++] = (struct policy_path){ .path = xstrdup(real), .mode = POLICY_RO,
						      .origin = steal_ptr(&origin) };
	return 0;
}

int agent_apply(const struct agent_def *a, struct policy *p, const char *home,
		const char *(*getenv_fn)(const char *), struct agent_endpoint *ep, struct werr *e)
{
	const struct agent_net *n = net_of(a);
	*ep = (struct agent_endpoint){ 0 };
	if (!n)
		return 0;
	const char *v = getenv_fn(n->url_var);
	if (v && *v) {
		ep->url = xstrdup(v);
		ep->source = xstrdup(n->url_var);
	}
	if (home) {
		/* Codex: the provider settings are imported into new state even
		 * when the variable names the URL */
		_cleanup_free_ char *path = xasprintf("%s/%s", home, n->settings);
		struct agent_endpoint fs = { 0 };
		if (read_settings(a, path, &fs, e) < 0) {
			agent_endpoint_free(&fs);
			return werr_wrap(e, "agent %s: reading the API endpoint", a->name);
		}
		ep->import = steal_ptr(&fs.import);
		ep->key_var = steal_ptr(&fs.key_var);
		if (!ep->url && fs.url) {
			ep->url = steal_ptr(&fs.url);
			ep->source = steal_ptr(&path);
			ep->from_settings = true;
		}
		agent_endpoint_free(&fs);
	}
	/* Claude Code inside reads its settings from warden's state, not the
	 * user's: the URL found in them goes in as the variable. */
	if (ep->from_settings && strcmp(n->url_var, "ANTHROPIC_BASE_URL") == 0) {
		_cleanup_free_ char *set = xasprintf("%s=%s", n->url_var, ep->url);
		strv_push(&p->env_set, set);
	}
	if (ep->key_var && policy_env_name_valid(ep->key_var) && !strv_contains(&p->env_pass, ep->key_var))
		strv_push(&p->env_pass, ep->key_var);
	if (ep->url) {
		if (agent_url_pattern(ep->url, &ep->pattern, e) < 0)
			return werr_wrap(e, "agent %s: the API endpoint in %s", a->name, ep->source);
		/* the user configured it: it may be on the host's loopback
		 * (forwarded) or a private address */
		_cleanup_free_ char *origin = xasprintf("agent %s: %s", a->name, ep->source);
		if (policy_add_net(p, ep->pattern, false, true, origin, e) < 0)
			return -1;
	} else {
		_cleanup_free_ char *origin = xasprintf("agent %s", a->name);
		for (const char *const *h = n->default_hosts; *h; h++)
			if (policy_add_net(p, *h, false, false, origin, e) < 0)
				return -1;
	}
	for (const char *const *c = n->ca_vars; *c; c++)
		if (expose_ca(a, p, *c, getenv_fn(*c), home, e) < 0)
			return werr_wrap(e, "agent %s", a->name);
	return 0;
}

void agent_endpoint_free(struct agent_endpoint *ep)
{
	free(ep->url);
	free(ep->source);
	free(ep->pattern);
	free(ep->key_var);
	free(ep->import);
	*ep = (struct agent_endpoint){ 0 };
}

json_t *agent_to_json(const struct agent_def *a, const struct agent_endpoint *ep,
		      const char *statedir)
{
	json_t *j = json_pack("{s:s}", "name", a->name);
	if (ep && ep->url)
		json_object_set_new(j, "endpoint", json_pack("{s:s, s:s}", "url", ep->url,
							     "from", ep->source));
	if (statedir)
		json_object_set_new(j, "state", json_string(statedir));
	return j;
}
