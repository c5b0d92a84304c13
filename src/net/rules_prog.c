/* rules_prog.c - network rules scoped to the program that makes the
 * connection (`net allow HOST program NAME`, rules.h): the scope parsed,
 * compared, written back as text, and matched against the program the
 * proxy found behind a connection's client socket. A program that could
 * not be told (the socket held by several processes, or by none) is never
 * the program a rule names. */
#include "rules.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

int rules_program_parse(struct net_rule *r, const char *name, struct werr *e)
{
	memset(&r->prog, 0, sizeof r->prog);
	size_t n = strlen(name);
	if (strncmp(name, "sha256:", 7) == 0) {
		if (n != 7 + 64 || !all_hex(name + 7, 64))
			return werr_set(e, 0, "program '%.100s': sha256: wants 64 hex digits", name);
		for (size_t i = 0; i < 64; i++)
			r->prog.sha256[i] = (char)(name[7 + i] | 0x20); /* lower case */
		return 0;
	}
	if (n == 0 || n >= sizeof r->prog.glob)
		return werr_set(e, 0, "program: a name or path of 1 to %zu bytes",
				sizeof r->prog.glob - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return werr_set(e, 0, "program: a control character in the name");
	if (strchr(name, '/') && name[0] != '/')
		return werr_set(e, 0, "program '%.200s': a path must be absolute (or give a base name)",
				name);
	memcpy(r->prog.glob, name, n + 1);
	return 0;
}

bool rules_program_same(const struct net_rule *a, const struct net_rule *b)
{
	return strcmp(a->prog.glob, b->prog.glob) == 0 && strcmp(a->prog.sha256, b->prog.sha256) == 0;
}

bool rules_program_matches(const struct net_rule *r, const struct net_program *prog)
{
	if ((!r->prog.glob[0] && !r->prog.sha256[0]) || (prog && prog->any))
		return true;
	if (!prog || prog->unknown[0] || !prog->path[0])
		return false;
	if (r->prog.sha256[0])
		return prog->sha256[0] && strcmp(r->prog.sha256, prog->sha256) == 0;
	if (strchr(r->prog.glob, '/'))
		return fnmatch(r->prog.glob, prog->path, FNM_PATHNAME) == 0;
	const char *base = strrchr(prog->path, '/');
	return fnmatch(r->prog.glob, base ? base + 1 : prog->path, 0) == 0;
}

bool rules_any_program(const struct net_rules *s)
{
	const struct net_rule *lists[] = { s->allow, s->ask };
	const size_t ns[] = { s->nallow, s->nask };
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < ns[l]; i++)
			if (lists[l][i].prog.glob[0] || lists[l][i].prog.sha256[0])
				return true;
	return false;
}

void rules_rule_text(const struct net_rule *r, char *out, size_t len)
{
	/* the request rule's methods and path (reqrules.h), then the program */
	char req[NET_RULE_TEXT_MAX + NET_METHODS_MAX + REQGLOB_MAX + 4];
	snprintf(req, sizeof req, "%s%s%s%s%s", r->text, r->methods[0] ? " " : "", r->methods,
		 r->path[0] ? " " : "", r->path);
	if (r->prog.sha256[0])
		snprintf(out, len, "%s program sha256:%s", req, r->prog.sha256);
	else if (r->prog.glob[0])
		snprintf(out, len, "%s program %s", req, r->prog.glob);
	else
		snprintf(out, len, "%s", req);
}

