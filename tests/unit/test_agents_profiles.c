/* test_agents_profiles.c - the built-in agent profiles (src/agents/agents.c)
 * and their state directories (src/agents/state.c): picking an agent by the
 * command's name, base URLs turned into allow rules, Codex's config.toml as
 * warden reads it, the endpoint taken from the variable or the user's own
 * settings and never from the agent's state, the API host narrowed to the
 * client's paths when its key is bound (src/agents/narrow.c), and the state directory's
 * refusals (symlink, writable by others, the home, a client's real config),
 * entries, seeds said once, the lock against reset, and reset itself;
 * warden's tool-call hook in the clients' settings (src/agents/hooks.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/agents/agents.h"
#include "src/agents/state.h"
#include "src/net/reqrules.h"

static void test_pick(void)
{
	struct werr e = { 0 };
	const struct agent_def *a;
	CHECK(agent_for_command("claude") == agent_find("claude"));
	CHECK(agent_for_command("/home/u/.npm-global/bin/codex") == agent_find("codex"));
	CHECK(agent_for_command("claude-wrapper") == NULL);
	CHECK(agent_for_command("sh") == NULL);
	CHECK(agent_pick(NULL, "claude", &a, &e) == 0 && a && strcmp(a->name, "claude") == 0);
	CHECK(agent_pick("none", "claude", &a, &e) == 0 && a == NULL);
	CHECK(agent_pick("codex", "sh", &a, &e) == 0 && a && strcmp(a->name, "codex") == 0);
	CHECK(agent_pick("bogus", "sh", &a, &e) < 0 && strstr(e.msg, "known: claude, codex, none"));
}

static void url(const char *u, const char *want)
{
	struct werr e = { 0 };
	char *pat = NULL;
	int r = agent_url_pattern(u, &pat, &e);
	if (want) {
		CHECK(r == 0);
		CHECK_STR(pat, want);
	} else {
		CHECK(r < 0 && e.msg[0]);
	}
	free(pat);
}

static void test_urls(void)
{
	url("https://api.anthropic.com", "api.anthropic.com:443");
	url("http://127.0.0.1:4000", "127.0.0.1:4000");
	url("http://localhost:8080/v1", "localhost:8080");
	url("HTTPS://Gateway.Example.COM./anthropic?x=1", "gateway.example.com:443");
	url("https://[::1]:9000/v1", "[::1]:9000");
	url("https://user:pw@10.1.2.3:8443/", "10.1.2.3:8443");
	url("http://gw", "gw:80");
	url("ftp://x.example", NULL);
	url("api.anthropic.com", NULL);
	url("https://", NULL);
	url("https://host:0", NULL);
	url("https://host:99999", NULL);
	url("https://host:12ab", NULL);
	url("https://[::1", NULL);
	url("https://[::1]x", NULL);
	url("https://bad_host name/", NULL);
	url("https://127.1/", NULL);
}

static void test_codex_config(void)
{
	struct werr e = { 0 };
	struct codex_conf c;
	const char *t1 =
		"model = \"o4\"\n"
		"model_provider = \"gw\"\n"
		"[model_providers.openai]\n"
		"base_url = \"https://wrong.example/v1\"\n"
		"[model_providers.gw]\n"
		"name = \"Gateway\"\n"
		"base_url = \"http://127.0.0.1:4000/v1\"  # local\n"
		"env_key = \"GW_KEY\"\n"
		"http_headers = { \"X-Token\" = \"secret\" }\n"
		"wire_api = \"responses\"\n"
		"[mcp_servers.x]\n"
		"command = \"evil\"\n"
		"base_url = \"https://not-a-provider.example\"\n";
	CHECK(agent_codex_config(t1, strlen(t1), &c, &e) == 0);
	CHECK_STR(c.provider, "gw");
	CHECK_STR(c.base_url, "http://127.0.0.1:4000/v1");
	CHECK_STR(c.env_key, "GW_KEY");
	CHECK(c.import_top && strstr(c.import_top, "model_provider = \"gw\"") &&
	      strstr(c.import_top, "model = \"o4\"") && !strchr(c.import_top, '['));
	CHECK(c.import_tables && strstr(c.import_tables, "[model_providers.\"gw\"]") &&
	      strstr(c.import_tables, "env_key = \"GW_KEY\"") && strstr(c.import_tables, "wire_api"));
	CHECK(c.import_tables && !strstr(c.import_tables, "secret") &&
	      !strstr(c.import_tables, "evil") && !strstr(c.import_tables, "wrong.example"));
	/* merged into a seed: the top-level keys before its first table */
	char *m = agent_codex_merge("# c\nsandbox_mode = \"x\"\n\n[analytics]\nenabled = false\n", &c);
	const char *tab = strstr(m, "[analytics]"), *prov = strstr(m, "model_provider = ");
	CHECK(tab && prov && prov < tab && strstr(m, "sandbox_mode") < tab);
	CHECK(strstr(m, "[model_providers.\"gw\"]") > tab);
	free(m);
	codex_conf_free(&c);

	/* openai_base_url: the built-in provider's URL */
	const char *t7 = "openai_base_url = \"http://127.0.0.1:5000/v1\"\n[x]\n";
	CHECK(agent_codex_config(t7, strlen(t7), &c, &e) == 0);
	CHECK_STR(c.base_url, "http://127.0.0.1:5000/v1");
	CHECK(c.import_top && strstr(c.import_top, "openai_base_url = \"http://127.0.0.1:5000/v1\""));
	codex_conf_free(&c);
	/* ... not when another provider is chosen */
	const char *t8 = "openai_base_url = \"http://a:1/v1\"\nmodel_provider = \"gw\"\n";
	CHECK(agent_codex_config(t8, strlen(t8), &c, &e) == 0);
	CHECK(c.base_url == NULL);
	codex_conf_free(&c);

	/* no provider named: openai's table, if any */
	const char *t2 = "[model_providers.openai]\nbase_url = 'https://proxy.example/v1'\n";
	CHECK(agent_codex_config(t2, strlen(t2), &c, &e) == 0);
	CHECK_STR(c.base_url, "https://proxy.example/v1");
	codex_conf_free(&c);

	/* nothing to read */
	const char *t3 = "# empty\n[profiles.x]\nmodel_provider = \"gw\"\n";
	CHECK(agent_codex_config(t3, strlen(t3), &c, &e) == 0);
	CHECK(!c.provider && !c.base_url && !c.import_top && !c.import_tables);
	codex_conf_free(&c);

	/* a key warden reads that is not a one-line string */
	const char *t4 = "model_provider = [\"gw\"]\n";
	CHECK(agent_codex_config(t4, strlen(t4), &c, &e) < 0 && strstr(e.msg, "line 1"));
	const char *t5 = "[model_providers.gw]\nbase_url = \"http://x\\u0041\"\n";
	CHECK(agent_codex_config(t5, strlen(t5), &c, &e) < 0 && strstr(e.msg, "line 2"));
	const char *t6 = "model_provider = \"unterminated\n";
	CHECK(agent_codex_config(t6, strlen(t6), &c, &e) < 0);
	/* binary junk, no NUL terminator */
	char junk[64];
	memset(junk, '[', sizeof junk);
	CHECK(agent_codex_config(junk, sizeof junk, &c, &e) == 0);
	codex_conf_free(&c);
}

static char tmpl[] = "/tmp/test-agents-XXXXXX";
static char *root;

static void put(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", root, rel);
	char *d = xstrdup(p);
	*strrchr(d, '/') = '\0';
	mkdir_p(d, 0700, NULL);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(d);
	free(p);
}

static const char *env_url, *env_key;
static const char *fake_getenv(const char *name)
{
	if (strcmp(name, "ANTHROPIC_API_KEY") == 0 || strcmp(name, "OPENAI_API_KEY") == 0)
		return env_key;
	return strcmp(name, "ANTHROPIC_BASE_URL") == 0 || strcmp(name, "OPENAI_BASE_URL") == 0
		       ? env_url : NULL;
}

static bool has_rule(const struct policy *p, const char *text, const char **origin)
{
	for (size_t i = 0; i < p->nnet; i++)
		if (strcmp(p->net[i].rule.text, text) == 0) {
			if (origin)
				*origin = p->net[i].origin;
			return true;
		}
	return false;
}

static void test_endpoint(void)
{
	struct werr e = { 0 };
	char *home = xasprintf("%s/home", root);
	struct policy p;
	struct agent_endpoint ep;
	const char *origin = NULL;

	/* nothing configured: the default hosts, no private addresses */
	env_url = NULL;
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find("claude"), &p, home, fake_getenv, &ep, &e) == 0);
	CHECK(has_rule(&p, "api.anthropic.com:443", &origin) && !ep.url);
	CHECK(origin && strcmp(origin, "agent claude") == 0);
	CHECK(!p.net_rules.allow[0].allow_private);
	agent_endpoint_free(&ep);
	policy_free(&p);

	/* the variable: that host only, private allowed (the user named it) */
	env_url = "http://127.0.0.1:4000";
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find("claude"), &p, home, fake_getenv, &ep, &e) == 0);
	CHECK(has_rule(&p, "127.0.0.1:4000", &origin) && !has_rule(&p, "api.anthropic.com:443", NULL));
	CHECK(origin && strstr(origin, "ANTHROPIC_BASE_URL"));
	CHECK_STR(ep.source, "ANTHROPIC_BASE_URL");
	agent_endpoint_free(&ep);
	policy_free(&p);

	/* a bad URL in the variable is an error naming it */
	env_url = "gopher://x";
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find("claude"), &p, home, fake_getenv, &ep, &e) < 0 &&
	      strstr(e.msg, "ANTHROPIC_BASE_URL"));
	agent_endpoint_free(&ep);
	policy_free(&p);

	/* a URL on 0.0.0.0/8 (a local server's "bind all" copied as the
	 * client's address) is no destination: refused, naming the variable
	 * and what to write instead */
	static const char *const nowhere[] = { "http://0.0.0.0:4000", "http://[::2]:4000/v1" };
	for (size_t i = 0; i < ARRAY_LEN(nowhere); i++) {
		e = (struct werr){ 0 };
		env_url = nowhere[i];
		CHECK(policy_load(&p, NULL, home, &e) == 0);
		CHECK(agent_apply(agent_find("claude"), &p, home, fake_getenv, &ep, &e) < 0);
		CHECK(strstr(e.msg, "ANTHROPIC_BASE_URL") && strstr(e.msg, "is no destination") &&
		      strstr(e.msg, "127.0.0.1:PORT"));
		agent_endpoint_free(&ep);
		policy_free(&p);
	}

	/* the user's own settings: the URL, which goes in as the variable */
	env_url = NULL;
	put("home/.claude/settings.json", "{\"env\": {\"ANTHROPIC_BASE_URL\": \"https://gw.example:8443/a\"}}");
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find("claude"), &p, home, fake_getenv, &ep, &e) == 0);
	CHECK(has_rule(&p, "gw.example:8443", NULL) && ep.from_settings);
	CHECK(strv_contains(&p.env_set, "ANTHROPIC_BASE_URL=https://gw.example:8443/a"));
	agent_endpoint_free(&ep);
	policy_free(&p);

	/* broken settings: an error naming the file */
	put("home/.claude/settings.json", "{\"env\": ");
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find("claude"), &p, home, fake_getenv, &ep, &e) < 0 &&
	      strstr(e.msg, "settings.json"));
	agent_endpoint_free(&ep);
	policy_free(&p);

	/* Codex: the provider of the user's config.toml, its key variable
	 * passed, its table to import */
	put("home/.codex/config.toml", "model_provider = \"gw\"\n[model_providers.gw]\n"
	    "base_url = \"http://localhost:4100/v1\"\nenv_key = \"GW_KEY\"\n");
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find("codex"), &p, home, fake_getenv, &ep, &e) == 0);
	CHECK(has_rule(&p, "localhost:4100", NULL) && !has_rule(&p, "api.openai.com:443", NULL));
	CHECK(strv_contains(&p.env_pass, "GW_KEY"));
	CHECK(ep.codex.import_tables && strstr(ep.codex.import_tables, "localhost:4100"));
	agent_endpoint_free(&ep);
	policy_free(&p);
	free(home);
}

/* Requests and the verdict p's request rules give each (port 443). */
struct req_case {
	const char *host, *method, *path;
	enum rules_verdict want;
};

static void check_reqs(const struct policy *p, const struct req_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct net_host h;
		const char *why = NULL;
		struct req_verdict v = { .v = RULES_UNKNOWN };
		if (net_host_parse(&h, c[i].host, strlen(c[i].host), &why) == 0)
			reqrules_decide(&p->net_rules, &h, 443, c[i].method, c[i].path,
					strlen(c[i].path), true, &v);
		if (v.v != c[i].want)
			fprintf(stderr, "%s %s on %s: verdict %d, want %d\n", c[i].method, c[i].path,
				c[i].host, v.v, c[i].want);
		CHECK(v.v == c[i].want);
	}
}

/* Apply agent NAME with env_url and env_key; *p loaded fresh. */
static void apply(const char *name, struct policy *p)
{
	struct werr e = { 0 };
	struct agent_endpoint ep;
	char *home = xasprintf("%s/empty-home", root);
	CHECK(policy_load(p, NULL, home, &e) == 0);
	CHECK(agent_apply(agent_find(name), p, home, fake_getenv, &ep, &e) == 0);
	agent_endpoint_free(&ep);
	free(home);
}

#define A RULES_ALLOW
#define D RULES_DENY
/* the default host: the model API and the client's own service paths; the
 * sign-in hosts, where no key is bound, not narrowed */
static const struct req_case claude_default[] = {
	{ "api.anthropic.com", "POST", "/v1/messages?beta=true", A },
	{ "api.anthropic.com", "POST", "/v1/messages/count_tokens", A },
	{ "api.anthropic.com", "GET", "/api/claude_code/settings", A },
	{ "api.anthropic.com", "GET", "/v1/files", D },
	{ "api.anthropic.com", "POST", "/v1/messages/batches", D },
	{ "api.anthropic.com", "DELETE", "/v1/messages", D },
	{ "platform.claude.com", "GET", "/v1/oauth/hello", A },
};
/* a base URL's path goes before them; the default host's own paths do not */
static const struct req_case claude_gw[] = {
	{ "gw.example", "POST", "/anthropic/v1/messages", A },
	{ "gw.example", "POST", "/v1/messages", D },
	{ "gw.example", "GET", "/api/hello", D },
};
/* Codex: under /v1 on its default host */
static const struct req_case codex_default[] = {
	{ "api.openai.com", "POST", "/v1/responses", A },
	{ "api.openai.com", "GET", "/v1/responses", A },
	{ "api.openai.com", "GET", "/v1/models", A },
	{ "api.openai.com", "GET", "/v1/files", D },
	{ "api.openai.com", "POST", "/v1/batches", D },
	{ "api.openai.com", "GET", "/v1/organization/users", D },
};
#undef A
#undef D

static void test_narrow(void)
{
	struct policy p;
	const char *origin = NULL;
	env_key = "sk-test";

	env_url = NULL;
	apply("claude", &p);
	CHECK(p.nsecrets == 1 && p.net_rules.nreq > 0);
	check_reqs(&p, claude_default, ARRAY_LEN(claude_default));
	for (size_t i = 0; i < p.nnet; i++)
		if (p.net[i].rule.path[0])
			origin = p.net[i].origin;
	CHECK(origin && strcmp(origin, "agent claude") == 0);
	policy_free(&p);

	env_url = "https://gw.example/anthropic/";
	apply("claude", &p);
	check_reqs(&p, claude_gw, ARRAY_LEN(claude_gw));
	policy_free(&p);

	/* a path no glob says exactly: the key bound, the host not narrowed */
	env_url = "http://127.0.0.1:4000/a*b";
	apply("claude", &p);
	CHECK(p.nsecrets == 1 && p.net_rules.nreq == 0);
	policy_free(&p);

	/* no key (signed in with an account): nothing bound, nothing narrowed */
	env_url = NULL;
	env_key = NULL;
	apply("claude", &p);
	CHECK(p.nsecrets == 0 && p.net_rules.nreq == 0);
	policy_free(&p);

	env_key = "sk-test";
	apply("codex", &p);
	check_reqs(&p, codex_default, ARRAY_LEN(codex_default));
	policy_free(&p);
	env_key = NULL;
}

static void test_state(void)
{
	struct werr e = { 0 };
	char *home = xasprintf("%s/home", root);
	char *dir = xasprintf("%s/state", root);
	const struct agent_def *claude = agent_find("claude");
	struct agent_state st;

	/* made with its entries and seed */
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	CHECK(st.n == 2 && st.v[0].dir && !st.v[1].dir);
	CHECK(strcmp(st.v[1].name, ".claude.json") == 0);
	char *seed = xasprintf("%s/.claude/settings.json", dir);
	struct stat sb;
	CHECK(stat(seed, &sb) == 0 && (sb.st_mode & 077) == 0);
	CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 07777) == 0700);

	/* reset waits for no session: refused while one holds the state */
	bool removed;
	CHECK(state_reset(claude, dir, home, &removed, &e) < 0 && strstr(e.msg, "running"));
	agent_state_free(&st);

	/* a second open keeps what the agent wrote, writes no seed again (and
	 * adds warden's tool-call hook: test_hook) */
	put("state/.claude/settings.json", "{\"mine\": 1}");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	json_t *j = json_load_file(seed, 0, NULL);
	CHECK(j && json_integer_value(json_object_get(j, "mine")) == 1);
	CHECK(j && !json_object_get(j, "sandbox"));
	json_decref(j);

	/* apart from the workspace, checked before anything is made or written */
	const struct state_apart in_ws[] = { { root, "the workspace" }, { NULL, NULL } };
	CHECK(state_open(claude, dir, home, NULL, in_ws, &st, &e) < 0 && strstr(e.msg, "overlaps"));
	char *fresh = xasprintf("%s/fresh-state", root);
	CHECK(state_open(claude, fresh, home, NULL, in_ws, &st, &e) < 0 && strstr(e.msg, "overlaps"));
	CHECK(access(fresh, F_OK) < 0 && errno == ENOENT);
	free(fresh);
	char *other = xasprintf("%s/elsewhere", root);
	const struct state_apart apart[] = { { other, "the workspace" }, { NULL, NULL } };
	CHECK(state_open(claude, dir, home, NULL, apart, &st, &e) == 0);
	agent_state_free(&st);

	/* an entry of the wrong kind, or a symlink, is refused */
	char *entry = xasprintf("%s/.claude.json", dir);
	CHECK(unlink(entry) == 0 && symlink("/etc/passwd", entry) == 0);
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "not a regular file"));
	agent_state_free(&st);
	unlink(entry);

	/* reset: the entries go, without following a symlink in them */
	char *victim = xasprintf("%s/victim", root);
	put("victim", "keep");
	char *link = xasprintf("%s/.claude/link", dir);
	CHECK(symlink(victim, link) == 0);
	char *locked = xasprintf("%s/.claude/locked", dir);
	CHECK(mkdir(locked, 0) == 0);
	CHECK(state_reset(claude, dir, home, &removed, &e) == 0 && removed);
	CHECK(stat(victim, &sb) == 0);
	CHECK(lstat(seed, &sb) < 0 && errno == ENOENT);
	CHECK(stat(dir, &sb) == 0);
	CHECK(state_reset(claude, dir, home, &removed, &e) == 0 && !removed);
	char *none = xasprintf("%s/never-made", root);
	CHECK(state_reset(claude, none, home, &removed, &e) == 0 && !removed);
	CHECK(lstat(none, &sb) < 0);

	/* the directory itself: a symlink, writable by others, the home, a
	 * client's real configuration, a credential store */
	char *sl = xasprintf("%s/state-link", root);
	CHECK(symlink(dir, sl) == 0);
	CHECK(state_open(claude, sl, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "is a symlink"));
	agent_state_free(&st);
	CHECK(chmod(dir, 0777) == 0);
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "writable by other"));
	agent_state_free(&st);
	CHECK(chmod(dir, 0700) == 0);
	CHECK(state_open(claude, home, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "home directory"));
	agent_state_free(&st);
	CHECK(state_open(claude, root, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "home directory"));
	agent_state_free(&st);
	char *real = xasprintf("%s/.claude/warden", home);
	CHECK(state_open(claude, real, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "own Claude Code"));
	agent_state_free(&st);
	char *ssh = xasprintf("%s/.ssh/st", home);
	CHECK(state_open(claude, ssh, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "credential store"));
	agent_state_free(&st);
	CHECK(state_open(claude, "a/../b", home, NULL, NULL, &st, &e) < 0);
	agent_state_free(&st);

	/* not owned by the user (only root can make one) */
	if (getuid() == 0) {
		char *foreign = xasprintf("%s/foreign", root);
		CHECK(mkdir(foreign, 0700) == 0 && chown(foreign, 65534, 65534) == 0);
		CHECK(state_open(claude, foreign, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "owned by uid"));
		agent_state_free(&st);
		free(foreign);
	}

	/* Codex: the import lands in a new config.toml, after the seed */
	char *cdir = xasprintf("%s/cstate", root);
	struct codex_conf imp = { .import_top = xstrdup("model_provider = \"gw\"\n") };
	CHECK(state_open(agent_find("codex"), cdir, home, &imp, NULL, &st, &e) == 0);
	codex_conf_free(&imp);
	agent_state_free(&st);
	char *ct = xasprintf("%s/.codex/config.toml", cdir);
	FILE *f = fopen(ct, "r");
	char big[2048] = "";
	size_t n = f ? fread(big, 1, sizeof big - 1, f) : 0;
	big[n] = '\0';
	if (f)
		fclose(f);
	CHECK(strstr(big, "sandbox_mode = \"danger-full-access\"") && strstr(big, "model_provider = \"gw\""));
	CHECK(strstr(big, "model_provider = \"gw\"") < strstr(big, "["));

	free(ct); free(cdir); free(ssh); free(real); free(sl); free(none); free(locked);
	free(link); free(victim); free(entry); free(other); free(seed); free(dir); free(home);
}

/* The number of matcher groups of hooks.EVENT in the settings at path
 * that run warden's hook, and of all groups there. */
static int hook_groups(const char *path, const char *event, int *all)
{
	json_t *j = json_load_file(path, 0, NULL);
	json_t *list = json_object_get(json_object_get(j, "hooks"), event);
	int n = 0;
	*all = (int)json_array_size(list);
	size_t i, k;
	json_t *g, *h;
	json_array_foreach(list, i, g)
		json_array_foreach(json_object_get(g, "hooks"), k, h)
			n += json_is_string(json_object_get(h, "command")) &&
			     strcmp(json_string_value(json_object_get(h, "command")), AGENT_HOOK_COMMAND) == 0 &&
			     json_array_size(json_object_get(h, "args")) == 2 &&
			     strcmp(json_string_value(json_array_get(json_object_get(h, "args"), 1)), "claude") == 0 &&
			     strcmp(json_string_value(json_object_get(g, "matcher")), "*") == 0 &&
			     json_integer_value(json_object_get(h, "timeout")) == atoi(AGENT_HOOK_TIMEOUT);
	json_decref(j);
	return n;
}

/* warden's tool-call hook in Claude Code's settings (src/agents/hooks.c):
 * added to PreToolUse and PostToolUse in a new state and in settings the
 * user or client wrote (their keys and hooks kept), once however often the
 * state is opened (the file left as it is then), its timeout brought up to
 * date, "disableAllHooks" taken out; settings that are not a JSON object
 * refused, naming the file; a symlink in its place refused, never followed.
 * Codex gets it as a system-wide file instead. */
static void test_hook(void)
{
	struct werr e = { 0 };
	char *home = xasprintf("%s/home", root);
	char *dir = xasprintf("%s/hookstate", root);
	char *settings = xasprintf("%s/.claude/settings.json", dir);
	const struct agent_def *claude = agent_find("claude");
	struct agent_state st;
	int all;

	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	CHECK(hook_groups(settings, "PreToolUse", &all) == 1 && all == 1);
	CHECK(hook_groups(settings, "PostToolUse", &all) == 1 && all == 1);
	json_t *j = json_load_file(settings, 0, NULL);
	CHECK(json_is_false(json_object_get(json_object_get(j, "sandbox"), "enabled")));
	json_decref(j);

	/* idempotent: the same bytes, the same inode */
	struct stat before, after;
	CHECK(stat(settings, &before) == 0);
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	CHECK(stat(settings, &after) == 0 && before.st_ino == after.st_ino);

	/* the user's keys and hooks stay; warden's group is added beside them */
	put("hookstate/.claude/settings.json",
	    "{\"model\": \"opus\", \"disableAllHooks\": true, \"hooks\": {\"PreToolUse\": "
	    "[{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"lint\"}]}], "
	    "\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"bell\"}]}]}}");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	CHECK(hook_groups(settings, "PreToolUse", &all) == 1 && all == 2);
	CHECK(hook_groups(settings, "PostToolUse", &all) == 1 && all == 1);
	j = json_load_file(settings, 0, NULL);
	CHECK_STR(json_string_value(json_object_get(j, "model")), "opus");
	CHECK(!json_object_get(j, "disableAllHooks"));
	CHECK(json_array_size(json_object_get(json_object_get(j, "hooks"), "Stop")) == 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(j, "hooks"), "PreToolUse"), 0), "matcher")), "Bash");
	json_decref(j);

	/* an old timeout is brought up to date, not a second group added */
	put("hookstate/.claude/settings.json",
	    "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", "
	    "\"command\": \"" AGENT_HOOK_COMMAND "\", \"timeout\": 60}]}]}}");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	CHECK(hook_groups(settings, "PreToolUse", &all) == 1 && all == 1);

	/* an older warden's hook (`warden hook` through a shell) becomes this
	 * one's, in place */
	put("hookstate/.claude/settings.json",
	    "{\"hooks\": {\"PostToolUse\": [{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", "
	    "\"command\": \"" AGENT_HOOK_COMMAND_OLD "\", \"timeout\": " AGENT_HOOK_TIMEOUT "}]}]}}");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	CHECK(hook_groups(settings, "PostToolUse", &all) == 1 && all == 1);
	CHECK(hook_groups(settings, "PreToolUse", &all) == 1 && all == 1);

	/* not JSON, or hooks of another shape: refused, naming the file */
	put("hookstate/.claude/settings.json", "{\"hooks\": ");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "settings.json:1") &&
	      strstr(e.msg, "state reset claude"));
	agent_state_free(&st);
	put("hookstate/.claude/settings.json", "{\"hooks\": {\"PreToolUse\": {}}}");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) < 0 && strstr(e.msg, "is not a list"));
	agent_state_free(&st);

	/* a symlink the agent planted is not followed */
	char *victim = xasprintf("%s/hook-victim.json", root);
	put("hook-victim.json", "{}");
	CHECK(unlink(settings) == 0 && symlink(victim, settings) == 0);
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) < 0 &&
	      (e.errnum == ELOOP || strstr(e.msg, "symlink")) && strstr(e.msg, "settings.json"));
	agent_state_free(&st);
	size_t len;
	char *v = slurp(victim, &len);
	CHECK(v && strcmp(v, "{}") == 0);
	free(v);

	/* Codex: a system-wide config with the hook, no file in its state */
	const struct agent_def *codex = agent_find("codex");
	CHECK(codex->install_hook == NULL && codex->etc_path && strcmp(codex->etc_path, "codex/config.toml") == 0);
	CHECK(strstr(codex->etc_text, "[[hooks.PreToolUse]]") && strstr(codex->etc_text, "[[hooks.PostToolUse]]") &&
	      strstr(codex->etc_text, AGENT_HOOK_COMMAND " --client codex"));
	free(victim);
	free(settings);
	free(dir);
	free(home);
}

/* Claude Code's managed settings (src/agents/hooks.c): JSON with warden's
 * hook on both events and allowManagedHooksOnly; and the guard
 * (src/agents/guard.c): the state's settings as checked at the start, a
 * change of a guarded key undone (the other keys kept) and said, a file no
 * longer JSON set aside and the checked one back, nothing said when nothing
 * changed. */
static void test_guard(void)
{
	struct werr e = { 0 };
	const struct agent_def *claude = agent_find("claude");
	CHECK_STR(claude->etc_path, "claude-code/managed-settings.json");
	json_t *m = json_loads(claude->etc_text, 0, NULL);
	CHECK(json_is_true(json_object_get(m, "allowManagedHooksOnly")));
	for (const char *const *ev = (const char *const[]){ "PreToolUse", "PostToolUse", NULL }; *ev; ev++) {
		json_t *h = json_array_get(json_object_get(json_array_get(json_object_get(
			json_object_get(m, "hooks"), *ev), 0), "hooks"), 0);
		CHECK_STR(json_string_value(json_object_get(h, "command")), AGENT_HOOK_COMMAND);
		CHECK_STR(json_string_value(json_array_get(json_object_get(h, "args"), 1)), "claude");
	}
	json_decref(m);

	char *home = xasprintf("%s/home", root);
	char *dir = xasprintf("%s/guardstate", root);
	char *settings = xasprintf("%s/.claude/settings.json", dir);
	struct agent_state st;
	struct state_guard_change c;
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	CHECK(state_guard_check(claude, &st, 0, "s1", &c, &e) == 0 && !c.what);

	put("guardstate/.claude/settings.json",
	    "{\"permissions\": {\"defaultMode\": \"bypassPermissions\"}, \"model\": \"x\"}");
	CHECK(state_guard_check(claude, &st, 0, "s1", &c, &e) == 1);
	CHECK_STR(c.what, "hooks, permissions changed");
	CHECK_STR(c.path, settings);
	CHECK(!c.moved_to);
	state_guard_change_free(&c);
	json_t *j = json_load_file(settings, 0, NULL);
	CHECK(!json_object_get(j, "permissions"));
	CHECK_STR(json_string_value(json_object_get(j, "model")), "x");
	CHECK(json_array_size(json_object_get(json_object_get(j, "hooks"), "PreToolUse")) == 1);
	json_decref(j);
	CHECK(state_guard_check(claude, &st, 0, "s1", &c, &e) == 0);

	put("guardstate/.claude/settings.json", "{\"hooks\": ");
	CHECK(state_guard_check(claude, &st, 0, "s2", &c, &e) == 1);
	CHECK_STR(c.what, "no longer a JSON object");
	char *aside = xasprintf("%s.agent-s2", settings);
	CHECK_STR(c.moved_to, aside);
	state_guard_change_free(&c);
	size_t len;
	char *v = slurp(aside, &len);
	CHECK(v && strcmp(v, "{\"hooks\": ") == 0);
	free(v);
	v = slurp(settings, &len);
	CHECK(v && strcmp(v, st.guard[0].text) == 0);
	free(v);
	agent_state_free(&st);
	free(aside);
	free(settings);
	free(dir);
	free(home);
}

/* ~/.claude.json's guard (guard.c, agents.c): a key inside a project's
 * entry put back while the agent's other changes stay; the project's entry,
 * or "projects" itself, made an object again when the agent replaced it. */
static void test_guard_nested(void)
{
	const struct agent_def *claude = agent_find("claude");
	struct werr e = { 0 };
	char *home = xasprintf("%s/home", root);
	char *dir = xasprintf("%s/guardstate2", root);
	char *file = xasprintf("%s/.claude.json", dir);
	struct agent_state st;
	struct state_guard_change c;
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);
	agent_state_free(&st);
	put("guardstate2/.claude.json", "{\"projects\": {\"/a\": {\"allowedTools\": [\"Read\"], "
	    "\"x\": 1}, \"/b\": {\"mcpServers\": {\"s\": {\"command\": \"c\"}}}}}");
	CHECK(state_open(claude, dir, home, NULL, NULL, &st, &e) == 0);

	put("guardstate2/.claude.json", "{\"projects\": \"gone\", \"n\": 2}");
	CHECK(state_guard_check(claude, &st, 1, "s1", &c, &e) == 1);
	CHECK_STR(c.what, "projects[\"/a\"].allowedTools, projects[\"/b\"].mcpServers changed");
	state_guard_change_free(&c);
	json_t *j = json_load_file(file, 0, NULL);
	json_t *p = json_object_get(j, "projects");
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(p, "/a"),
								   "allowedTools"), 0)), "Read");
	CHECK(!json_object_get(json_object_get(p, "/a"), "x"));
	CHECK(json_object_get(json_object_get(p, "/b"), "mcpServers"));
	CHECK(json_integer_value(json_object_get(j, "n")) == 2);
	json_decref(j);

	put("guardstate2/.claude.json", "{\"projects\": {\"/a\": 7, \"/b\": {\"mcpServers\": "
	    "{\"s\": {\"command\": \"c\"}}, \"y\": 3}, \"/c\": {\"allowedTools\": []}}}");
	CHECK(state_guard_check(claude, &st, 1, "s2", &c, &e) == 1);
	CHECK_STR(c.what, "projects[\"/a\"].allowedTools changed");
	state_guard_change_free(&c);
	j = json_load_file(file, 0, NULL);
	p = json_object_get(j, "projects");
	CHECK(json_array_size(json_object_get(json_object_get(p, "/a"), "allowedTools")) == 1);
	CHECK(json_integer_value(json_object_get(json_object_get(p, "/b"), "y")) == 3);
	CHECK(json_object_get(p, "/c"));
	json_decref(j);
	CHECK(state_guard_check(claude, &st, 1, "s3", &c, &e) == 0 && !c.what);
	agent_state_free(&st);
	free(file);
	free(dir);
	free(home);
}

int main(void)
{
	root = mkdtemp(tmpl);
	if (!root)
		return 1;
	char *home = xasprintf("%s/home", root);
	mkdir_p(home, 0700, NULL);
	free(home);
	test_pick();
	test_urls();
	test_codex_config();
	test_endpoint();
	test_narrow();
	test_state();
	test_hook();
	test_guard();
	test_guard_nested();
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	remove_tree_at(fd, root + 5);
	close(fd);
	return check_status();
}
