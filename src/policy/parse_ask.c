/* parse_ask.c - the profile's directives about asking the user:
 * `write ask`, `tool` (the agent's tool calls, allowed, denied or asked)
 * and `approve` (how long to wait, and who answers: a command, a
 * webhook). */
#include "parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* `write ask GLOB`: relative to the workspace, as `mask` takes it. */
int pol_do_write(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2 || strcmp(l->tok[1], "ask") != 0)
		return pol_lerr(ps->e, 0, l, l->ntok < 2 ? l->len : l->off[1],
				"write: expected `write ask GLOB`");
	if (pol_want_tokens(ps, l, 3, "write ask") < 0)
		return -1;
	const char *t = l->tok[2];
	if (t[0] == '/')
		return pol_lerr(ps->e, 0, l, l->off[2], "write ask: pattern must be relative to the workspace: "
				"'%.200s'", t);
	if (pol_has_dotdot_component(t))
		return pol_lerr(ps->e, 0, l, l->off[2], "write ask: '..' components are not allowed: '%.200s'", t);
	return pol_push_unique(ps, l, &ps->p->write_ask, t);
}

static bool verdict_word(const char *w, enum rules_verdict *v)
{
	*v = strcmp(w, "allow") == 0 ? RULES_ALLOW : strcmp(w, "deny") == 0 ? RULES_DENY
	   : strcmp(w, "ask") == 0 ? RULES_ASK : RULES_UNKNOWN;
	return *v != RULES_UNKNOWN;
}

/* `tool allow|deny|ask NAME [PATTERN...]` or `tool default allow|deny|ask` */
int pol_do_tool(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "tool: missing argument (allow, deny, ask or default)");
	enum rules_verdict v;
	if (strcmp(l->tok[1], "default") == 0) {
		if (pol_want_tokens(ps, l, 3, "tool default") < 0)
			return -1;
		if (!verdict_word(l->tok[2], &v))
			return pol_lerr(ps->e, 0, l, l->off[2], "tool default: '%.200s' (expected allow, deny or ask)",
					l->tok[2]);
		p->tool_default = v;
		return 0;
	}
	if (!verdict_word(l->tok[1], &v))
		return pol_lerr(ps->e, 0, l, l->off[1], "tool: unknown action '%.200s' (expected allow, deny, "
				"ask or default)", l->tok[1]);
	if (l->ntok < 3)
		return pol_lerr(ps->e, 0, l, l->len, "tool %s: missing the tool's name (Bash, Write, mcp__*, *)",
				l->tok[1]);
	char pat[1024];
	bool has_pat = l->ntok > 3;
	if (has_pat && !pol_rest_of_line(l, 3, pat, sizeof pat))
		return pol_lerr(ps->e, 0, l, l->off[3], "tool %s: the pattern is too long (max 1023)", l->tok[1]);
	if (pol_room(ps, l, p->ntools) < 0)
		return -1;
	p->tools = xrealloc(p->tools, (p->ntools + 1) * sizeof *p->tools);
	p->tools[p->ntools++] = (struct policy_tool_rule){
		.action = v, .name = xstrdup(l->tok[2]), .pattern = has_pat ? xstrdup(pat) : NULL,
		.origin = xasprintf("%s:%lu", l->name, l->lineno) };
	return 0;
}

/* `approve timeout SECONDS | command CMD [ARG...] | webhook URL` */
int pol_do_approve(struct parser *ps, const struct line *l)
{
	struct policy_approve *a = &ps->p->approve;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "approve: missing argument (timeout, command or webhook)");
	const char *w = l->tok[1];
	if (strcmp(w, "timeout") == 0) {
		if (pol_want_tokens(ps, l, 3, "approve timeout") < 0)
			return -1;
		char *end;
		errno = 0;
		unsigned long v = strtoul(l->tok[2], &end, 10);
		if (errno || *end || l->tok[2][0] < '0' || l->tok[2][0] > '9' || v < 1 || v > 86400)
			return pol_lerr(ps->e, 0, l, l->off[2], "approve timeout: '%.200s' is not a number of "
					"seconds (1 to 86400)", l->tok[2]);
		a->timeout_s = (unsigned)v;
		return 0;
	}
	if (strcmp(w, "command") == 0) {
		if (l->ntok < 3)
			return pol_lerr(ps->e, 0, l, l->len, "approve command: missing the command");
		if (l->tok[2][0] != '/' && l->tok[2][0] != '~')
			return pol_lerr(ps->e, 0, l, l->off[2], "approve command: the program must be an absolute "
					"path or start with ~/: '%.200s'", l->tok[2]);
		_cleanup_free_ char *prog = NULL;
		if (pol_expand_path(ps, l, l->off[2], "approve command", l->tok[2], &prog) < 0)
			return -1;
		strv_free(&a->command);
		strv_push(&a->command, prog);
		for (size_t i = 3; i < l->ntok; i++)
			strv_push(&a->command, l->tok[i]);
		return 0;
	}
	if (strcmp(w, "webhook") == 0) {
		if (pol_want_tokens(ps, l, 3, "approve webhook") < 0)
			return -1;
		const char *u = l->tok[2];
		if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
			return pol_lerr(ps->e, 0, l, l->off[2], "approve webhook: '%.200s' is not an http:// or "
					"https:// URL", u);
		if (strlen(u) > 2048 || strpbrk(u, " \t\r\n\"<>\\^`{|}"))
			return pol_lerr(ps->e, 0, l, l->off[2], "approve webhook: not a valid URL: '%.200s'", u);
		free(a->webhook);
		a->webhook = xstrdup(u);
		return 0;
	}
	return pol_lerr(ps->e, 0, l, l->off[1], "approve: unknown setting '%.200s' (expected timeout, "
			"command or webhook)", w);
}
