/* hook_cmd.c - `warden hook`: the hook command of an agent's client inside
 * the sandbox, as a command of warden's own binary; its options read here,
 * its work done by src/control/hookclient.c, which the small hook client
 * /.warden/warden-hook (src/hookbin) shares. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../control/hookclient.h"
#include "../sandbox/sandbox.h"
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

int cmd_hook(int argc, char **argv)
{
	const char *client = "claude", *sock = SANDBOX_HOOK_SOCK;
	long timeout = HOOK_TIMEOUT_DEFAULT_S;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "hook")) != -1) {
		switch (c) {
		case 'c':
			client = optarg;
			break;
		case 't': {
			char *end;
			errno = 0;
			timeout = strtol(optarg, &end, 10);
			if (errno || *end || timeout < 1) {
				fprintf(stderr, "warden hook: --timeout takes a number of seconds\n%s", usage);
				return 2;
			}
			break;
		}
		case 's':
			sock = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	return hook_client_run(client, sock, timeout);
}
