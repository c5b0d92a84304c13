/* parse_netprog.c - the trailing `program NAME` option of `net allow` and
 * `net ask` (a rule scoped to the program that makes the connection:
 * src/net/rules_prog.c). Taken off the end of the line before the rest of
 * the rule is read, so it composes with whatever comes between the pattern
 * and it. */
#include "parse.h"

#include <string.h>

int pol_net_program(struct parser *ps, const struct line *l, enum rules_verdict action,
		    const char *what, struct line *cut, struct net_rule *r)
{
	memset(&r->prog, 0, sizeof r->prog);
	size_t at = 0;
	for (size_t i = 3; i < l->ntok; i++) /* run_line: ntok <= MAX_TOKENS */
		if (strcmp(l->tok[i], "program") == 0) {
			at = i;
			break;
		}
	if (!at)
		return 0;
	if (action == RULES_DENY)
		return pol_lerr(ps->e, 0, l, l->off[at],
				"net deny: 'program' is only for allow and ask rules (a deny rule holds for every program)");
	if (at + 1 >= l->ntok)
		return pol_lerr(ps->e, 0, l, l->len, "%s: program: missing argument (NAME, /PATH or sha256:HEX)",
				what);
	if (at + 2 < l->ntok)
		return pol_lerr(ps->e, 0, l, l->off[at + 2],
				"%s: unexpected argument '%.200s' after program (it comes last)", what,
				l->tok[at + 2]);
	struct werr pe = { 0 };
	if (rules_program_parse(r, l->tok[at + 1], &pe) < 0)
		return pol_lerr(ps->e, 0, l, l->off[at + 1], "%s: %s", what, pe.msg);
	memcpy(cut, l, offsetof(struct line, buf)); /* tok points into l's buf: l outlives cut */
	cut->ntok = at;
	return 1;
}
