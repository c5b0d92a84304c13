/* policy_json.c - the compiled policy as JSON (what `warden policy show`
 * prints) and its digest: SHA-256 of the canonical (compact, sorted) JSON.
 *
 * The object always has all its keys, even for an empty policy:
 *   "sources": ["builtin:default", FILE...]          files read, in order
 *   "paths":   [{"path": P, "mode": "read-only"|"read-write", "origin": "FILE:LINE"}...]
 *   "protect": [RELPATH...]
 *   "mask":    [GLOB...]
 *   "protect_except": [PARENT/NAME...]   only with `protect !` lines
 *   "caches":  ["~/PATH"...]   only with `cache` lines (other digests stay)
 *   "env":     {"pass": [NAME...], "set": {NAME: VALUE...}}
 *   "audit":   "minimal"|"default"|"files"
 *   "net":     [{"action": "allow"|"deny", "pattern": P, "private": true|false,
 *               "origin": "FILE:LINE"|"--allow-net"}...]   in order; P canonical
 *   "secrets": [{"name": NAME, "hosts": [P...], "source": "env"|"file"|"command",
 *               "file": PATH (file) | "command": ARGV0 (command),
 *               "origin": "FILE:LINE"|"--secret"|...}...]   never a value; a
 *               command's arguments are left out (one might hold a value)
 *   "publish": [{"host_port": N, "port": N, "origin": "FILE:LINE"|"--publish"}...]
 *               only when a port is published (the digests of other policies stay)
 *   "net_sni": "required"   only with `net sni required` (other digests stay)
 *   "mcp":     [{"rule": "mcp HOST allow|deny|ask NAMES" | "mcp HOST method
 *               allow|deny NAMES", "origin": "FILE:LINE"}...]   only with mcp
 *               rules (other digests stay)
 *   "signal":  {"grace": SECONDS}
 *   "freeze":  {"timeout_s": SECONDS, "unattended_s": SECONDS}   how long a
 *               freeze lasts before the kill, with a human to decide and
 *               without one (`freeze timeout auto`: 600 and 0)
 *   "terminal": {"clipboard": true|false}
 *   "canary":  true|false                         decoy credentials in the home
 *   "checkpoint": {"on", "max_size" (0: unlimited), "exclude": [PATTERN],
 *               "keep", "keep_days"}                the workspace's checkpoints
 *   "limits":  {"pids"|"memory"|"cpu"|"tmp"|"home": {"value": V, "origin": "FILE:LINE"|""}}
 *               V as a profile writes it ("4096", "4G", "1.5", "50%", "unlimited");
 *               `warden policy show` adds what is in force here (limits.h)
 *   "exec":    {"deny": [SHA256...], "deny_files": [PATH...] (the real paths of
 *               `exec deny FILE`, which strict mode hides), "allow": [SHA256...],
 *               "allow_dirs": [DIR...], "default": "allow"|"deny", "strict": B,
 *               "allow_writable": [PATH...] (as written), "hash_limit":
 *               {"max_size": BYTES, "timeout_s": S}, "kernel": "on"|"off" (left
 *               out for auto, the default)}
 * Any change to this shape changes every policy digest. */
#include "policy.h"
#include "../common/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string. The parser only accepts valid UTF-8, but a policy built by
 * hand might not be: such bytes become "\xNN" so nothing is silently dropped
 * from the JSON or the digest. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	size_t n = strlen(s);
	char *buf = xmalloc(n * 4 + 1), *o = buf;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80)
			*o++ = (char)c;
		else
			o += sprintf(o, "\\x%02x", c);
	}
	*o = '\0';
	j = json_string(buf);
	free(buf);
	if (!j)
		abort();
	return j;
}

static json_t *jstrv(const struct strv *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(a, jstr(s->v[i]));
	return a;
}

static json_t *paths_json(const struct policy *p)
{
	json_t *paths = json_array();
	for (size_t i = 0; i < p->npaths; i++) {
		const struct policy_path *pp = &p->paths[i];
		json_t *o = json_object();
		json_object_set_new(o, "path", jstr(pp->path));
		json_object_set_new(o, "mode", json_string(pp->mode == POLICY_RW ? "read-write" : "read-only"));
		json_object_set_new(o, "origin", jstr(pp->origin ? pp->origin : ""));
		if (pp->source)
			json_object_set_new(o, "source", jstr(pp->source));
		json_array_append_new(paths, o);
	}
	return paths;
}

static json_t *env_json(const struct policy *p)
{
	json_t *set = json_object();
	for (size_t i = 0; i < p->env_set.n; i++) {
		const char *entry = p->env_set.v[i];
		const char *eq = strchr(entry, '=');
		_cleanup_free_ char *name = eq ? strndup(entry, (size_t)(eq - entry)) : xstrdup(entry);
		if (!name)
			abort();
		/* Keys must be UTF-8 too: go through jstr for the same escaping. */
		json_t *key = jstr(name);
		json_object_set_new(set, json_string_value(key), jstr(eq ? eq + 1 : ""));
		json_decref(key);
	}

	json_t *env = json_object();
	json_object_set_new(env, "pass", jstrv(&p->env_pass));
	json_object_set_new(env, "set", set);
	return env;
}

static json_t *net_json(const struct policy *p)
{
	json_t *net = json_array();
	for (size_t i = 0; i < p->nnet; i++) {
		const struct policy_net_rule *r = &p->net[i];
		json_t *o = json_object();
		json_object_set_new(o, "action", json_string(r->action == RULES_DENY ? "deny"
							     : r->action == RULES_ASK ? "ask" : "allow"));
		json_object_set_new(o, "pattern", jstr(r->rule.text));
		json_object_set_new(o, "private", json_boolean(r->rule.allow_private));
		if (r->rule.prog.glob[0] || r->rule.prog.sha256[0])
			json_object_set_new(o, "program", r->rule.prog.sha256[0]
				? json_sprintf("sha256:%s", r->rule.prog.sha256) : json_string(r->rule.prog.glob));
		if (r->rule.methods[0])
			json_object_set_new(o, "methods", jstr(r->rule.methods));
		if (r->rule.path[0])
			json_object_set_new(o, "path", jstr(r->rule.path));
		json_object_set_new(o, "origin", jstr(r->origin ? r->origin : ""));
		json_array_append_new(net, o);
	}
	return net;
}

static json_t *publish_json(const struct policy *p)
{
	json_t *a = json_array();
	for (size_t i = 0; i < p->npublish; i++)
		json_array_append_new(a, json_pack("{s:i,s:i,s:s}", "host_port",
			(int)p->publish[i].host_port, "port", (int)p->publish[i].port, "origin",
			p->publish[i].origin));
	return a;
}

static json_t *secret_json(const struct policy_secret *sc)
{
	json_t *o = json_object(), *hosts = json_array();
	for (size_t k = 0; k < sc->nhosts; k++)
		json_array_append_new(hosts, jstr(sc->hosts[k].text));
	json_object_set_new(o, "name", jstr(sc->name ? sc->name : ""));
	json_object_set_new(o, "hosts", hosts);
	switch (sc->source) {
	case SECRET_FROM_ENV:
		json_object_set_new(o, "source", json_string("env"));
		break;
	case SECRET_FROM_FILE:
		json_object_set_new(o, "source", json_string("file"));
		json_object_set_new(o, "file", jstr(sc->file ? sc->file : ""));
		break;
	case SECRET_FROM_COMMAND:
		json_object_set_new(o, "source", json_string("command"));
		json_object_set_new(o, "command", jstr(sc->argv.n ? sc->argv.v[0] : ""));
		break;
	}
	json_object_set_new(o, "origin", jstr(sc->origin ? sc->origin : ""));
	return o;
}

static json_t *limits_json(const struct policy *p)
{
	json_t *limits = json_object();
	for (int k = 0; k < LIMIT_KINDS; k++) {
		char v[32];
		policy_limit_text(k, &p->limits[k], v, sizeof v);
		json_t *o = json_object();
		json_object_set_new(o, "value", json_string(v));
		json_object_set_new(o, "origin", jstr(p->limits[k].origin ? p->limits[k].origin : ""));
		json_object_set_new(limits, policy_limit_name(k), o);
	}
	return limits;
}

static json_t *exec_json(const struct policy_exec *x)
{
	json_t *ex = json_pack("{s:o,s:o,s:o,s:o,s:s,s:b,s:o,s:{s:I,s:f}}",
		"deny", jstrv(&x->deny), "deny_files", jstrv(&x->deny_paths), "allow", jstrv(&x->allow),
		"allow_dirs", jstrv(&x->allow_dirs),
		"default", x->default_deny ? "deny" : "allow", "strict", x->strict,
		"allow_writable", jstrv(&x->allow_writable), "hash_limit",
		"max_size", (json_int_t)x->hash_max_size, "timeout_s", x->hash_timeout_ms / 1000.0);
	json_object_set_new(ex, "ask", jstrv(&x->ask));
	json_object_set_new(ex, "ask_argv", jstrv(&x->ask_argv));
	if (x->kernel != EXEC_KERNEL_AUTO)
		json_object_set_new(ex, "kernel", json_string(x->kernel == EXEC_KERNEL_ON ? "on" : "off"));
	return ex;
}

static json_t *tools_json(const struct policy *p)
{
	static const char *const verdicts[] = { "allow", "allow", "deny", "ask" };
	json_t *tools = json_array();
	for (size_t i = 0; i < p->ntools; i++) {
		const struct policy_tool_rule *t = &p->tools[i];
		json_array_append_new(tools, json_pack("{s:s,s:s,s:s?,s:s}", "action", verdicts[t->action],
			"name", t->name, "pattern", t->pattern, "origin", t->origin));
	}
	return json_pack("{s:o,s:s}", "rules", tools, "default", verdicts[p->tool_default]);
}

/* [{"rule": "mcp HOST ...", "origin": "FILE:LINE"}...] in order */
static json_t *mcp_json(const struct policy *p)
{
	json_t *a = json_array();
	for (size_t i = 0; i < p->mcp.n; i++)
		json_array_append_new(a, json_pack("{s:s,s:s}", "rule", p->mcp.v[i].text, "origin",
						   p->mcp.v[i].origin));
	return a;
}

json_t *policy_to_json(const struct policy *p)
{
	json_t *secrets = json_array();
	for (size_t i = 0; i < p->nsecrets; i++)
		json_array_append_new(secrets, secret_json(&p->secrets[i]));

	json_t *o = json_object();
	json_object_set_new(o, "sources", jstrv(&p->sources));
	json_object_set_new(o, "paths", paths_json(p));
	json_object_set_new(o, "protect", jstrv(&p->protect));
	json_object_set_new(o, "mask", jstrv(&p->mask));
	if (p->protect_except.n)
		json_object_set_new(o, "protect_except", jstrv(&p->protect_except));
	if (p->caches.n) {
		json_t *c = json_array();
		for (size_t i = 0; i < p->caches.n; i++)
			json_array_append_new(c, json_sprintf("~/%s", p->caches.v[i]));
		json_object_set_new(o, "caches", c);
	}
	json_object_set_new(o, "env", env_json(p));
	json_object_set_new(o, "audit", json_string(p->audit_files     ? "files"
								  : p->audit_minimal ? "minimal"
										     : "default"));
	json_object_set_new(o, "net", net_json(p));
	json_object_set_new(o, "secrets", secrets);
	if (p->npublish)
		json_object_set_new(o, "publish", publish_json(p));
	json_object_set_new(o, "signal", json_pack("{s:I}", "grace", (json_int_t)p->signal_grace));
	json_object_set_new(o, "freeze", json_pack("{s:I,s:I}", "timeout_s",
		(json_int_t)policy_freeze_timeout(p, true), "unattended_s",
		(json_int_t)policy_freeze_timeout(p, false)));
	json_object_set_new(o, "terminal", json_pack("{s:b}", "clipboard", p->terminal_clipboard));
	json_object_set_new(o, "canary", json_boolean(!p->canary_off));
	/* only when off: the digests of existing policies stay */
	if (p->git_identity_off)
		json_object_set_new(o, "git_identity", json_false());
	/* only when read-only: the digests of existing policies stay */
	if (p->workspace_ro)
		json_object_set_new(o, "workspace", json_string("read-only"));
	json_object_set_new(o, "checkpoint", json_pack("{s:b,s:I,s:o,s:i,s:i}",
		"on", !p->checkpoint.off, "max_size", (json_int_t)p->checkpoint.max_size,
		"exclude", jstrv(&p->checkpoint.exclude), "keep", (int)p->checkpoint.keep,
		"keep_days", (int)p->checkpoint.keep_days));
	json_object_set_new(o, "exec", exec_json(&p->exec));
	json_object_set_new(o, "limits", limits_json(p));
	json_object_set_new(o, "net_default", json_string(p->net_default_ask ? "ask" : "deny"));
	if (p->net_sni_required) /* only then: the digests of every other policy stay */
		json_object_set_new(o, "net_sni", json_string("required"));
	if (p->mcp.n) /* the same */
		json_object_set_new(o, "mcp", mcp_json(p));
	json_object_set_new(o, "write_ask", jstrv(&p->write_ask));
	json_object_set_new(o, "tools", tools_json(p));
	json_object_set_new(o, "rules", jstrv(&p->rules_files));
	json_object_set_new(o, "risk", json_pack("{s:f,s:f,s:f,s:f,s:f}", "warn", p->risk.warn, "ask",
		p->risk.ask, "freeze", p->risk.freeze, "kill", p->risk.kill, "half_life_s",
		p->risk.half_life_s));
	json_object_set_new(o, "approve", json_pack("{s:I,s:o,s:s?}", "timeout_s",
		(json_int_t)p->approve.timeout_s, "command", jstrv(&p->approve.command),
		"webhook", p->approve.webhook));
	/* only when set: the digests of existing policies stay */
	if (p->stream.otlp_url || p->stream.ocsf_file) {
		json_t *st = json_object();
		const char *const keys[] = { "otlp", "otlp_ca", "ocsf" };
		const char *const vals[] = { p->stream.otlp_url, p->stream.otlp_ca, p->stream.ocsf_file };
		for (size_t i = 0; i < 3; i++)
			if (vals[i])
				json_object_set_new(st, keys[i], json_string(vals[i]));
		json_object_set_new(o, "stream", st);
	}
	/* only when on: the digests of existing policies stay */
	if (p->ssh_agent.on)
		json_object_set_new(o, "ssh_agent", json_pack("{s:b,s:o}", "ask", p->ssh_agent.ask,
			"keys", jstrv(&p->ssh_agent.keys)));
	return o;
}

void policy_digest(const struct policy *p, char out[65])
{
	json_t *j = policy_to_json(p);
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (!s)
		abort();
	sha256_hex(s, strlen(s), out);
	free(s);
}
