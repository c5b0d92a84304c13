/* parse_mcp.c - the profile's `mcp` directive: which tools and methods of
 * an MCP server reached over HTTP(S) pass (src/net/mcp.h decides with
 * them):
 *   mcp HOST[:PORT] allow|deny|ask TOOL[,TOOL...]
 *   mcp HOST[:PORT] method allow|deny METHOD[,METHOD...]
 * HOST as `net allow` reads it; TOOL and METHOD are names or fnmatch(3)
 * globs ("*", "read_*"). */
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool verdict_of(const char *w, bool ask_ok, enum rules_verdict *v)
{
	*v = strcmp(w, "allow") == 0 ? RULES_ALLOW : strcmp(w, "deny") == 0 ? RULES_DENY
	   : ask_ok && strcmp(w, "ask") == 0 ? RULES_ASK : RULES_UNKNOWN;
	return *v != RULES_UNKNOWN;
}

/* NAME[,NAME...] into r->names: each non-empty, printable, no blank. */
static int split_names(struct parser *ps, const struct line *l, size_t i, struct mcp_rule *r)
{
	const char *s = l->tok[i];
	for (const char *p = s;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n == 0 || n >= MCP_NAME_MAX)
			return pol_lerr(ps->e, 0, l, l->off[i] + (size_t)(p - s),
					"mcp: %s name in '%.200s' (1 to %d bytes each, comma-separated)",
					n ? "a too long" : "an empty", s, MCP_NAME_MAX - 1);
		char name[MCP_NAME_MAX];
		memcpy(name, p, n);
		name[n] = '\0';
		for (size_t k = 0; k < n; k++)
			if ((unsigned char)name[k] <= 0x20 || name[k] == 0x7f)
				return pol_lerr(ps->e, 0, l, l->off[i] + (size_t)(p - s) + k,
						"mcp: a control byte in the name '%.200s'", name);
		if (!strv_contains(&r->names, name))
			strv_push(&r->names, name);
		if (!c)
			return 0;
		p = c + 1;
	}
}

int pol_do_mcp(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 4)
		return pol_lerr(ps->e, 0, l, l->len, "mcp: expected `mcp HOST[:PORT] allow|deny|ask "
				"TOOL[,TOOL...]` or `mcp HOST[:PORT] method allow|deny METHOD[,METHOD...]`");
	struct mcp_rule r = { .kind = MCP_TOOL };
	size_t a = 2;
	if (strcmp(l->tok[2], "method") == 0) {
		r.kind = MCP_METHOD;
		a = 3;
	}
	const char *what = r.kind == MCP_METHOD ? "mcp HOST method" : "mcp HOST";
	if (l->ntok != a + 2)
		return pol_lerr(ps->e, 0, l, l->ntok < a + 2 ? l->len : l->off[a + 2],
				"%s: expected %s NAME[,NAME...] (names comma-separated, no blanks)", what,
				r.kind == MCP_METHOD ? "allow|deny" : "allow|deny|ask");
	if (!verdict_of(l->tok[a], r.kind == MCP_TOOL, &r.action))
		return pol_lerr(ps->e, 0, l, l->off[a], "%s: unknown action '%.200s' (expected %s)", what,
				l->tok[a], r.kind == MCP_METHOD ? "allow or deny" : "allow, deny or ask");
	struct werr pe = { 0 };
	if (rules_parse_pattern(&r.host, l->tok[1], &pe) < 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "mcp: %s", pe.msg);
	if (pol_room(ps, l, p->mcp.n) < 0)
		return -1;
	if (split_names(ps, l, a + 1, &r) < 0) {
		strv_free(&r.names);
		return -1;
	}
	snprintf(r.text, sizeof r.text, "mcp %s %s%s %.300s", r.host.text,
		 r.kind == MCP_METHOD ? "method " : "", l->tok[a], l->tok[a + 1]);
	r.origin = xasprintf("%s:%lu", l->name, l->lineno);
	p->mcp.v = xrealloc(p->mcp.v, (p->mcp.n + 1) * sizeof *p->mcp.v);
	p->mcp.v[p->mcp.n++] = r;
	if (r.action == RULES_ASK)
		p->mcp.nask++;
	return 0;
}
