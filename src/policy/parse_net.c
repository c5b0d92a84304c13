/* parse_net.c - the profile's directives about the network and the
 * secrets sent over it: `net` (each rule compiled once by
 * rules_parse_pattern, src/net/rules.h, into the declared list and the rule
 * set the proxy decides with) and `secret`; the same rules given from the
 * command line (policy_add_net), and what the compiled rules ask of a
 * session (policy_asks, policy_net_allows_any). */
#include "parse.h"
#include "../net/reqrules.h"

#include <stdlib.h>
#include <string.h>

/* Is this network rule (canonical pattern, action, `private`) already in
 * the policy? */
static bool net_has(const struct policy *p, const struct net_rule *r, enum rules_verdict action)
{
	for (size_t i = 0; i < p->nnet; i++) {
		const struct policy_net_rule *n = &p->net[i];
		if (n->action == action && n->rule.allow_private == r->allow_private &&
		    strcmp(n->rule.text, r->text) == 0 && rules_program_same(&n->rule, r) &&
		    strcmp(n->rule.methods, r->methods) == 0 && strcmp(n->rule.path, r->path) == 0)
			return true;
	}
	return false;
}

/* Why an allow or ask rule is refused though its pattern parsed: as
 * "*.com" (rules_parse_pattern), one letting out every registrable domain
 * under a public suffix is a typo, not a rule (buf holds the text); NULL
 * when it is not. */
static const char *too_wide(const struct net_rule *r, enum rules_verdict action, char *buf,
			    size_t n)
{
	if (action == RULES_DENY || !policy_wildcard_public_suffix(r))
		return NULL;
	snprintf(buf, n, "\"%s\": a wildcard over a public suffix would let out every domain "
		 "under it, as \"*.com\" would (name the domain: *.example.%s)", r->text, r->host);
	return buf;
}

/* Append a compiled rule to the declared list and to the rule set; the
 * caller checked net_has and the limit. */
static int net_push(struct policy *p, const struct net_rule *r, enum rules_verdict action,
		    const char *origin, struct werr *e)
{
	if (rules_add_rule(&p->net_rules, action, r, e) < 0)
		return -1;
	if ((p->nnet & (p->nnet - 1)) == 0) /* 0, 1, 2, 4 ...: full, double it */
		p->net = xrealloc(p->net, (p->nnet ? 2 * p->nnet : 1) * sizeof *p->net);
	p->net[p->nnet++] = (struct policy_net_rule){
		.rule = *r,
		.action = action,
		.origin = xstrdup(origin),
	};
	return 0;
}

/* What follows the pattern of `net allow|ask|deny`, in any order: `private`
 * (allow and ask), a method list and a path glob (request rules,
 * reqrules.h), each once. */
static int net_options(struct parser *ps, const struct line *l, const char *what, bool deny,
		       struct net_rule *r, bool *private_ok)
{
	for (size_t i = 3; i < l->ntok; i++) {
		const char *opt = l->tok[i], *why = NULL;
		if (strcmp(opt, "private") == 0 && deny)
			return pol_lerr(ps->e, 0, l, l->off[i],
					"net deny: 'private' is only for allow and ask rules");
		if (strcmp(opt, "private") == 0 && !*private_ok) {
			*private_ok = true;
		} else if (opt[0] == '/' && !r->path[0]) {
			if (reqrules_path(r, opt, &why) < 0)
				return pol_lerr(ps->e, 0, l, l->off[i], "%s: path '%.200s': %s", what, opt, why);
		} else if (reqrules_is_method_list(opt) && !r->methods[0]) {
			if (reqrules_methods(r, opt, &why) < 0)
				return pol_lerr(ps->e, 0, l, l->off[i], "%s: '%.200s': %s", what, opt, why);
		} else if (i == 3 && !deny) {
			return pol_lerr(ps->e, 0, l, l->off[i],
					"%s: unknown option '%.200s' (expected private, METHOD[,METHOD...] "
					"or a path starting with '/')", what, opt);
		} else {
			return pol_lerr(ps->e, 0, l, l->off[i], "%s: unexpected argument '%.200s'", what, opt);
		}
	}
	return 0;
}

/* `net allow PATTERN [private] [METHODS] [PATH] [program NAME]`, `net ask
 * PATTERN [private] [METHODS] [PATH] [program NAME]`, `net deny PATTERN
 * [METHODS] [PATH]`, `net default ask|deny` (what no rule names), or `net sni
 * required|optional` (a TLS ClientHello without a server name in a tunnel). The arguments
 * are checked first (count, option), then the pattern. */
int pol_do_net(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "net: missing argument (allow, ask, deny, default or sni)");
	const char *act = l->tok[1];
	if (strcmp(act, "default") == 0) {
		if (pol_want_tokens(ps, l, 3, "net default") < 0)
			return -1;
		if (strcmp(l->tok[2], "ask") != 0 && strcmp(l->tok[2], "deny") != 0)
			return pol_lerr(ps->e, 0, l, l->off[2], "net default: '%.200s' (expected ask or deny)",
					l->tok[2]);
		p->net_default_ask = l->tok[2][0] == 'a';
		return 0;
	}
	if (strcmp(act, "sni") == 0) {
		if (pol_want_tokens(ps, l, 3, "net sni") < 0)
			return -1;
		if (strcmp(l->tok[2], "required") != 0 && strcmp(l->tok[2], "optional") != 0)
			return pol_lerr(ps->e, 0, l, l->off[2],
					"net sni: '%.200s' (expected required or optional)", l->tok[2]);
		p->net_sni_required = l->tok[2][0] == 'r';
		return 0;
	}
	enum rules_verdict action;
	if (strcmp(act, "allow") == 0)
		action = RULES_ALLOW;
	else if (strcmp(act, "deny") == 0)
		action = RULES_DENY;
	else if (strcmp(act, "ask") == 0)
		action = RULES_ASK;
	else
		return pol_lerr(ps->e, 0, l, l->off[1],
				"net: unknown action '%.200s' (expected allow, ask, deny, default or sni)", act);
	bool deny = action == RULES_DENY;
	const char *what = action == RULES_DENY ? "net deny" : action == RULES_ASK ? "net ask" : "net allow";
	if (l->ntok < 3)
		return pol_lerr(ps->e, 0, l, l->len, "%s: missing argument", what);
	struct net_rule scope; /* `program NAME`, last on the line (parse_netprog.c) */
	struct line cut;
	int scoped = pol_net_program(ps, l, action, what, &cut, &scope);
	if (scoped < 0)
		return -1;
	if (scoped)
		l = &cut;

	struct net_rule opt = { 0 }, r;
	bool private_ok = false;
	if (net_options(ps, l, what, deny, &opt, &private_ok) < 0)
		return -1;
	struct werr pe = { 0 };
	if (rules_parse_pattern(&r, l->tok[2], &pe) < 0)
		return pol_lerr(ps->e, 0, l, l->off[2], "%s: %s", what, pe.msg);
	memcpy(r.methods, opt.methods, sizeof r.methods);
	memcpy(r.path, opt.path, sizeof r.path);
	r.allow_private = private_ok;
	r.prog = scope.prog;
	char why[768];
	if (too_wide(&r, action, why, sizeof why))
		return pol_lerr(ps->e, 0, l, l->off[2], "%s: %s", what, why);
	if (net_has(p, &r, action))
		return 0;
	if (pol_room(ps, l, p->nnet) < 0)
		return -1;
	_cleanup_free_ char *origin = xasprintf("%s:%lu", l->name, l->lineno);
	return net_push(p, &r, action, origin, ps->e);
}

/* Errors: "ORIGIN "P": WHY" (P made printable by rules_parse_pattern, ORIGIN
 * "--allow-net" when origin is NULL), "ORIGIN "P": 'private' is only for
 * allow rules", "ORIGIN: too many network rules (max 4096)". */
int policy_add_net(struct policy *p, const char *pattern, bool deny, bool private_ok,
		   const char *origin, struct werr *e)
{
	const char *who = origin && origin[0] ? origin : "--allow-net";
	struct net_rule r;
	struct werr pe = { 0 };
	if (rules_parse_pattern(&r, pattern, &pe) < 0) {
		/* pe.msg is "bad network pattern \"P\": WHY" and P holds no '"'. */
		static const char pre[] = "bad network pattern \"";
		const char *shown = pe.msg + sizeof pre - 1;
		const char *end = strncmp(pe.msg, pre, sizeof pre - 1) == 0 ? strstr(shown, "\": ") : NULL;
		if (!end)
			return werr_set(e, 0, "%s: %s", who, pe.msg);
		return werr_set(e, 0, "%s \"%.*s\": %s", who, (int)(end - shown), shown, end + 3);
	}
	if (deny && private_ok)
		return werr_set(e, 0, "%s \"%s\": 'private' is only for allow rules", who, r.text);
	r.allow_private = private_ok;
	return policy_add_net_rule(p, &r, deny ? RULES_DENY : RULES_ALLOW, who, e);
}

int policy_add_net_rule(struct policy *p, const struct net_rule *r, enum rules_verdict action,
			const char *origin, struct werr *e)
{
	char why[768];
	if (too_wide(r, action, why, sizeof why))
		return werr_set(e, 0, "%s %s", origin, why);
	if (net_has(p, r, action))
		return 0;
	if (p->nnet >= MAX_ENTRIES)
		return werr_set(e, 0, "%s: too many network rules (max %d)", origin, MAX_ENTRIES);
	return net_push(p, r, action, origin, e);
}

bool policy_asks(const struct policy *p)
{
	bool tool_ask = p->tool_default == RULES_ASK;
	for (size_t i = 0; i < p->ntools && !tool_ask; i++)
		tool_ask = p->tools[i].action == RULES_ASK;
	return p->net_rules.nask || p->net_rules.nreq_ask || p->net_default_ask || p->exec.ask.n ||
	       p->exec.ask_argv.n || p->write_ask.n || tool_ask || (p->ssh_agent.on && p->ssh_agent.ask) ||
	       p->mcp.nask;
}

bool policy_net_allows_any(const struct policy *p)
{
	return p->net_rules.nallow > 0 || p->net_rules.nask > 0 || p->net_default_ask;
}

/* `program NAME` after a secret's hosts (at *i): each host scoped to that
 * program (rules_prog.c), *i past it. */
static int secret_program(struct parser *ps, const struct line *l, const char *name,
			  struct policy_secret *s, size_t *i)
{
	if (*i + 1 >= l->ntok)
		return pol_lerr(ps->e, 0, l, l->len, "secret %s: program: missing argument", name);
	struct net_rule r;
	struct werr pe = { 0 };
	if (rules_program_parse(&r, l->tok[*i + 1], &pe) < 0)
		return pol_lerr(ps->e, 0, l, l->off[*i + 1], "secret %s: %s", name, pe.msg);
	for (size_t k = 0; k < s->nhosts; k++)
		s->hosts[k].prog = r.prog;
	*i += 2;
	if (*i < l->ntok && strcmp(l->tok[*i], "file") != 0 && strcmp(l->tok[*i], "command") != 0)
		return pol_lerr(ps->e, 0, l, l->off[*i],
				"secret %s: expected file or command after program, found '%.200s'", name,
				l->tok[*i]);
	return 0;
}

/* `secret NAME host HOST [HOST...] [program NAME] [file PATH | command CMD
 * [ARG...]]`. */
int pol_do_secret(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "secret: missing argument (NAME host HOST...)");
	const char *name = l->tok[1];
	if (!policy_env_name_ok(name, strlen(name), false))
		return pol_lerr(ps->e, 0, l, l->off[1], "secret: invalid variable name '%.200s'", name);
	if (l->ntok < 3)
		return pol_lerr(ps->e, 0, l, l->len, "secret %s: missing 'host HOST...'", name);
	if (strcmp(l->tok[2], "host") != 0)
		return pol_lerr(ps->e, 0, l, l->off[2], "secret %s: expected 'host', found '%.200s'", name,
				l->tok[2]);

	struct policy_secret s = { .source = SECRET_FROM_ENV };
	size_t i = 3;
	for (; i < l->ntok; i++) {
		const char *t = l->tok[i];
		if (strcmp(t, "file") == 0 || strcmp(t, "command") == 0 || strcmp(t, "program") == 0)
			break;
		struct net_rule r;
		struct werr pe = { 0 };
		const char *why;
		if (rules_parse_pattern(&r, t, &pe) < 0) {
			policy_secret_clear(&s);
			return pol_lerr(ps->e, 0, l, l->off[i], "secret %s: %s", name, pe.msg);
		}
		if ((why = policy_secret_host_refused(&r))) {
			policy_secret_clear(&s);
			return pol_lerr(ps->e, 0, l, l->off[i],
					"secret %s: \"%s\" is wider than one registrable domain (%s)", name, r.text,
					why);
		}
		policy_secret_add_host(&s, &r); /* at most 60 tokens: never full */
	}
	if (s.nhosts == 0)
		return pol_lerr(ps->e, 0, l, l->off[i], "secret %s: 'host' needs at least one host", name);
	if (i < l->ntok && strcmp(l->tok[i], "program") == 0 && secret_program(ps, l, name, &s, &i) < 0) {
		policy_secret_clear(&s);
		return -1;
	}

	int rc = 0;
	if (i < l->ntok && strcmp(l->tok[i], "file") == 0) {
		if (i + 1 == l->ntok)
			rc = pol_lerr(ps->e, 0, l, l->len, "secret %s: file: missing argument", name);
		else if (i + 2 < l->ntok)
			rc = pol_lerr(ps->e, 0, l, l->off[i + 2], "secret %s: file: unexpected argument '%.200s'",
				      name, l->tok[i + 2]);
		else
			rc = pol_expand_path(ps, l, l->off[i + 1], "secret file", l->tok[i + 1], &s.file);
		s.source = SECRET_FROM_FILE;
	} else if (i < l->ntok) {
		if (i + 1 == l->ntok)
			rc = pol_lerr(ps->e, 0, l, l->len, "secret %s: command: missing argument", name);
		for (size_t k = i + 1; k < l->ntok; k++)
			strv_push(&s.argv, l->tok[k]);
		s.source = SECRET_FROM_COMMAND;
	}
	if (rc == 0 && !policy_secret_find(p, name))
		rc = pol_room(ps, l, p->nsecrets);
	if (rc < 0) {
		policy_secret_clear(&s);
		return -1;
	}
	s.name = xstrdup(name);
	s.origin = xasprintf("%s:%lu", l->name, l->lineno);
	policy_secret_bind(p, &s);
	return 0;
}
