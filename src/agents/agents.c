/* agents.c - the built-in agent profiles (agents.h): the table of known
 * clients, picking one by the command's name, and layering one onto a
 * policy: the API endpoint from the client's own configuration (its
 * variable in the host's environment, else the user's own settings file,
 * which the sandbox never makes writable), the CA file it trusts, its key
 * bound to the API host and that host narrowed to the client's paths
 * (narrow.c).
 *
 * The agent's state directory is never read for any of this: the agent
 * writes it, and what the agent writes must not widen what the next
 * session may reach. */
#include "agents.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "discover.h"
#include "../audit/escape.h"

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

/* what decides which hooks run and which calls need no question */
static const char *const claude_guarded[] = { "hooks", "permissions", "disableAllHooks", NULL };
/* ~/.claude.json: the MCP servers Claude Code starts (user scope, and a
 * project's "local" scope), which of a project's .mcp.json servers it
 * starts without asking, and the tools a project allows without asking */
static const char *const claude_json_guarded[] = { "mcpServers", NULL };
static const char *const claude_project_guarded[] = {
	"mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
	"enableAllProjectMcpServers", "allowedTools", NULL,
};
static const struct agent_guard claude_guards[] = {
	/* (the first one's record keeps its name of before) */
	{ ".claude/settings.json", "checked", claude_guarded, NULL, NULL },
	{ ".claude.json", "checked-claude.json", claude_json_guarded, "projects",
	  claude_project_guarded },
};
_Static_assert(ARRAY_LEN(claude_guards) <= AGENT_GUARDS_MAX, "AGENT_GUARDS_MAX");

static const struct agent_state_entry codex_state[] = {
	{ ".codex", true, NULL },
};

static const struct agent_seed codex_seeds[] = {
	{ ".codex/config.toml",
	  "# Written by warden for Codex inside the sandbox (warden's state for codex).\n"
	  "# warden is the sandbox: Codex's own one needs user namespaces, which warden\n"
	  "# refuses to nest, so it is off here. The rest keeps Codex from trying\n"
	  "# hosts warden refuses anyway. Edit as you like.\n"
	  "sandbox_mode = \"danger-full-access\"\n"
	  "check_for_update_on_startup = false\n"
	  "\n"
	  "[analytics]\n"
	  "enabled = false\n"
	  "\n"
	  "[features]\n"
	  "plugins = false\n"
	  "api_key_model_discovery = false\n"
	  "\n"
	  "# The commands Codex runs do not inherit variables named like keys and\n"
	  "# tokens.\n"
	  "[shell_environment_policy]\n"
	  "ignore_default_excludes = false\n",
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
			"# The API key (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN), when set, is\n"
			"# a secret bound to the API host: a phantom inside, the real value put\n"
			"# in by the proxy (see \"secrets\").\n"
			"# Telemetry, error reports, auto-update: refused by the proxy, and\n"
			"# switched off so that the client does not keep trying them.\n"
			"env set DISABLE_TELEMETRY=1\n"
			"env set DISABLE_ERROR_REPORTING=1\n"
			"env set DISABLE_AUTOUPDATER=1\n"
			"env set DISABLE_BUG_COMMAND=1\n"
			"env set CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\n"
			"# the official plugin marketplace (downloads.claude.ai, a git clone\n"
			"# from github.com) in the interactive UI\n"
			"env set CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1\n"
			"# Claude Code's worktrees (--worktree, its EnterWorktree tool, a\n"
			"# subagent's isolation): writable in the protected .claude when\n"
			"# the workspace has one; what the sweep finds there is judged as\n"
			"# anywhere in the workspace.\n"
			"protect !.claude/worktrees\n",
		.state = claude_state,
		.nstate = ARRAY_LEN(claude_state),
		.seeds = claude_seeds,
		.nseeds = ARRAY_LEN(claude_seeds),
		.install_hook = agent_claude_install_hook,
		.etc_path = "claude-code/managed-settings.json",
		.etc_text = agent_claude_managed_settings,
		.guards = claude_guards,
		.nguards = ARRAY_LEN(claude_guards),
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
			"# The API key (CODEX_API_KEY, OPENAI_API_KEY, a provider's env_key),\n"
			"# when set, is a secret bound to the API host: a phantom inside, the\n"
			"# real value put in by the proxy (see \"secrets\").\n",
		.state = codex_state,
		.nstate = ARRAY_LEN(codex_state),
		.seeds = codex_seeds,
		.nseeds = ARRAY_LEN(codex_seeds),
		.etc_path = "codex/config.toml",
		.etc_text = agent_codex_etc_config,
	},
};
const size_t agent_defs_n = ARRAY_LEN(agent_defs);

/* Per agent: the variable naming its base URL, its default hosts, the
 * variables naming a CA file, and the user's settings file that may name a
 * base URL (home-relative). */
struct agent_net {
	const char *name;
	const char *url_var;
	const char *const *default_hosts;  /* the first: the API host */
	const char *const *ca_vars;
	const char *settings;
	const char *const *key_vars;       /* bound as secrets to the API host when set */
};

static const char *const claude_hosts[] = {
	"api.anthropic.com:443",
	/* signing in with a Claude account: the token exchange and refresh */
	"console.anthropic.com:443", "platform.claude.com:443", NULL,
};
static const char *const claude_ca[] = { "NODE_EXTRA_CA_CERTS", NULL };
static const char *const claude_keys[] = { "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", NULL };
static const char *const codex_hosts[] = {
	"api.openai.com:443",
	/* signing in with a ChatGPT account, and its Codex backend */
	"auth.openai.com:443", "chatgpt.com:443", NULL,
};
static const char *const codex_ca[] = { "CODEX_CA_CERTIFICATE", "SSL_CERT_FILE", NULL };
static const char *const codex_keys[] = { "CODEX_API_KEY", "OPENAI_API_KEY", NULL };

static const struct agent_net agent_nets[] = {
	{ "claude", "ANTHROPIC_BASE_URL", claude_hosts, claude_ca, ".claude/settings.json",
	  claude_keys },
	/* Codex 0.169 ignores OPENAI_BASE_URL: its URL is openai_base_url or a
	 * provider's base_url in config.toml */
	{ "codex", NULL, codex_hosts, codex_ca, ".codex/config.toml", codex_keys },
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
	char known[256];
	agent_names(known, sizeof known);
	return werr_set(e, 0, "--agent \"%.100s\": no such agent profile (known: %s, none)", opt,
			known);
}

void agent_names(char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < agent_defs_n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? ", " : "",
			 agent_defs[i].name);
}

/* ---- layering ------------------------------------------------------------ */

/* The user's own settings file (never the state directory): the base URL
 * it names, and for Codex the provider settings to import. */
static int read_settings(const struct agent_def *a, const char *path, struct agent_endpoint *ep,
			 struct werr *e)
{
	size_t len = 0;
	/* opened without waiting: a FIFO is refused, not waited on */
	_cleanup_free_ char *buf = read_regular_at(AT_FDCWD, path, 0, 65535, &len, NULL);
	if (!buf) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		if (errno == EFBIG)
			return werr_set(e, 0, "%s: larger than 64 KiB", path);
		if (errno == EINVAL)
			return werr_set(e, 0, "%s: not a regular file", path);
		return werr_errno(e, "%s", path);
	}
	if (strcmp(a->name, "codex") == 0) {
		if (agent_codex_config(buf, len, &ep->codex, e) < 0)
			return werr_wrap(e, "%s", path);
		ep->url = ep->codex.base_url ? xstrdup(ep->codex.base_url) : NULL;
		ep->key_var = ep->codex.env_key ? xstrdup(ep->codex.env_key) : NULL;
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

/* The client's key variables that are set: secrets bound to the API host
 * (the configured endpoint, else the vendor's API host), so that the key
 * stays outside and the proxy puts it in; that host then narrowed to the
 * paths the client calls (agent_narrow). A variable the user's profile
 * binds already keeps that binding. */
static int bind_keys(const struct agent_def *a, const struct agent_net *n, struct policy *p,
		     const struct agent_endpoint *ep, const char *(*getenv_fn)(const char *),
		     struct werr *e)
{
	const char *host = ep->pattern ? ep->pattern : n->default_hosts[0];
	_cleanup_free_ char *origin = xasprintf("agent %s", a->name);
	const char *vars[8] = { ep->key_var };
	size_t nv = 1;
	bool bound = false;
	for (const char *const *k = n->key_vars; *k && nv < ARRAY_LEN(vars); k++)
		vars[nv++] = *k;
	for (size_t k = 0; k < nv; k++) {
		const char *var = vars[k];
		if (!var || !policy_env_name_valid(var))
			continue;
		const char *v = getenv_fn(var);
		bool declared = false;
		for (size_t i = 0; i < p->nsecrets; i++)
			declared |= strcmp(p->secrets[i].name, var) == 0;
		if (!v || !*v || declared)
			continue;
		_cleanup_free_ char *spec = xasprintf("%s@%s", var, host);
		if (policy_add_secret(p, spec, origin, e) < 0)
			return werr_wrap(e, "agent %s: binding %s", a->name, var);
		bound = true;
	}
	return bound ? agent_narrow(a, p, ep, host, e) : 0;
}

int agent_apply(const struct agent_def *a, struct policy *p, const char *home,
		const char *(*getenv_fn)(const char *), struct agent_endpoint *ep, struct werr *e)
{
	const struct agent_net *n = net_of(a);
	*ep = (struct agent_endpoint){ 0 };
	if (!n)
		return 0;
	const char *v = n->url_var ? getenv_fn(n->url_var) : NULL;
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
		ep->codex = fs.codex;
		fs.codex = (struct codex_conf){ 0 };
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
	if (ep->from_settings && n->url_var && strcmp(n->url_var, "ANTHROPIC_BASE_URL") == 0) {
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
	return bind_keys(a, n, p, ep, getenv_fn, e);
}

void agent_endpoint_free(struct agent_endpoint *ep)
{
	free(ep->url);
	free(ep->source);
	free(ep->pattern);
	free(ep->key_var);
	codex_conf_free(&ep->codex);
	*ep = (struct agent_endpoint){ 0 };
}

json_t *agent_to_json(const struct agent_def *a, const struct agent_endpoint *ep,
		      const char *statedir)
{
	json_t *j = json_pack("{s:s}", "name", a->name);
	if (ep && ep->url)
		json_object_set_new(j, "endpoint", json_pack("{s:s, s:s}", "url", ep->url,
							     "from", ep->source));
	json_t *esc = NULL; /* the home's path is any bytes (src/audit/escape.h) */
	if (statedir)
		json_set_bytes(j, "state", statedir, &esc);
	if (esc)
		json_object_set_new(j, "escaped", esc);
	return j;
}
