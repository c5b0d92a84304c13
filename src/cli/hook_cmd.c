/* hook_cmd.c - `warden hook`: the hook command of an agent's client inside
 * the sandbox, as a command of warden's own binary; its options read here,
 * its work done by src/control/hookclient.c, which the small hook client
 * /.warden/warden-hook (src/hookbin) shares. */
#include <getopt.h>
#include <stdio.h>

#include "../common/util.h"
#include "../control/hookclient.h"
#include "../sandbox/paths.h"
#include "cli.h"
#include "cmdtab.h"

static const char usage[] =
	"usage: warden hook [--client claude|codex] [--timeout SECONDS]\n"
	"\n"
	"The hook command of an agent's client inside a warden sandbox (warden\n"
	"installs it for claude and codex): reads the client's PreToolUse or\n"
	"PostToolUse input on stdin, reports the tool call to warden over\n"
	SANDBOX_HOOK_SOCK ", and prints warden's decision as the client reads it.\n"
	"A denied call: a deny decision on stdout. warden unreachable or silent:\n"
	"exit 2, which blocks the call.\n";

static int next_opt(int argc, char **argv)
{
	return cli_getopt(argc, argv, "hook");
}

int cmd_hook(int argc, char **argv)
{
	return hook_client_main(argc, argv, next_opt, "warden hook", usage);
}
