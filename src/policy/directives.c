/* directives.c - the profile's directives, one row each (directives.h).
 * One row a line, `{ "NAME", ...`: tests/docs/man_pages.sh reads the names
 * from here. */
#include "directives.h"
#include "parse.h"

#include <string.h>

const struct policy_directive policy_directives[] = {
	{ "include", parse_include, 2, 2, true, "FILE | default" },
	{ "read-only", do_read_only, 2, 2, true, "PATH" },
	{ "read-write", do_read_write, 2, 2, true, "PATH" },
	{ "protect", do_protect, 2, 2, true, "RELPATH" },
	{ "unprotect", do_unprotect, 2, 2, true, "RELPATH" },
	{ "mask", do_mask, 2, 2, true, "GLOB" },
	{ "unmask", do_unmask, 2, 2, true, "GLOB" },
	{ "env", do_env, 3, 0, false, "pass NAME | set NAME=VALUE | unset NAME" },
	{ "audit", do_audit, 2, 2, true, "default | files" },
	{ "net", do_net, 3, 4, false, "allow|ask PATTERN [private] | deny PATTERN | default ask|deny" },
	{ "secret", do_secret, 4, MAX_TOKENS, false,
	  "NAME host HOST [HOST...] [file PATH | command CMD [ARG...]]" },
	{ "signal", do_signal, 3, 3, false, "grace SECONDS" },
	{ "terminal", do_terminal, 3, 3, false, "clipboard allow|deny" },
	{ "canary", do_canary, 2, 2, true, "on | off" },
	{ "workspace", do_workspace, 2, 2, true, "read-only | read-write" },
	{ "limit", do_limit, 3, 3, false, "pids|memory|cpu|tmp|home VALUE|unlimited" },
	{ "exec", do_exec, 2, 0, false,
	  "deny TARGET | allow TARGET | ask TARGET | ask argv WORD... | default allow|deny | "
	  "strict | allow-writable PATH | hash-limit SIZE SECONDS | kernel auto|on|off" },
	{ "write", do_write, 3, 3, false, "ask GLOB" },
	{ "tool", do_tool, 3, 0, false, "allow|deny|ask NAME [PATTERN...] | default allow|deny|ask" },
	{ "approve", do_approve, 3, 0, false, "timeout SECONDS | command CMD [ARG...] | webhook URL" },
	{ "rules", do_rules, 2, 2, true, "FILE" },
	{ "risk", do_risk, 3, 3, false, "warn|ask|freeze|kill N|off | half-life DURATION" },
	{ "checkpoint", do_checkpoint, 2, 3, false,
	  "on | off | max-size SIZE|unlimited | exclude PATTERN | keep N | keep-days N" },
	{ 0 },
};

const struct policy_directive *policy_directive_find(const char *name)
{
	for (const struct policy_directive *d = policy_directives; d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}
