/* main.c - /.warden/warden-hook: the small hook client warden installs as
 * the tool-call hook of the agents' clients (src/agents/hooks.c). It does
 * what `warden hook` does (src/control/hookclient.c) in a binary of its
 * own, linked statically with only libc and jansson: a client starts it
 * for every tool call, twice, and starting warden's whole binary (libcrypto,
 * libssl, nghttp2, libseccomp; about 200 page faults) cost more than the
 * report itself. warden carries it in its own binary (hookbin_blob.c) and
 * puts it beside its own cached copy. */
#include <getopt.h>
#include <stdio.h>

#include "../control/hookclient.h"
#include "../sandbox/paths.h"

static const char usage[] =
	"usage: warden-hook [--client claude|codex] [--timeout SECONDS]\n"
	"\n"
	"warden's tool-call hook inside a warden sandbox (`warden hook` in a\n"
	"binary of its own): reads the client's PreToolUse or PostToolUse input\n"
	"on stdin, reports the tool call to warden over " SANDBOX_HOOK_SOCK ",\n"
	"and prints warden's decision as the client reads it. warden\n"
	"unreachable or silent: exit 2, which blocks the call.\n";

static int next_opt(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "client", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	return getopt_long(argc, argv, "+c:t:s:h", opts, NULL);
}

int main(int argc, char **argv)
{
	return hook_client_main(argc, argv, next_opt, "warden-hook", usage);
}
