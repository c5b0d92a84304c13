/* main.c - warden's command line: dispatch to a subcommand through the
 * command table (cmdtab.c), whose commands `warden --help` lists. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmdtab.h"
#include "config.h"
#include "../common/selflimits.h"
#include "../common/proctitle.h"

#define SUMMARY_COL 35
#define MMAP_THRESHOLD (128 * 1024) /* glibc's first threshold, kept */

static void usage(FILE *out)
{
	fputs("usage: warden COMMAND [ARGS]\n\n", out);
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		if (c->hidden)
			continue;
		int n = fprintf(out, "  %s %s", c->name, c->synopsis ? c->synopsis : "");
		if (n >= SUMMARY_COL - 1)
			fprintf(out, "\n%*s", SUMMARY_COL, "");
		else
			fprintf(out, "%*s", SUMMARY_COL - n, "");
		fprintf(out, "%s\n", c->summary);
	}
	fprintf(out, "  --version%*sprint the version\n\n", SUMMARY_COL - 11, "");
	fputs("warden COMMAND --help says more; the man pages warden(1) and warden-COMMAND(1)\n"
	      "say all.\n", out);
}

/* malloc's settings, made before any thread (a session starts several).
 * A fixed mmap threshold: glibc raises its threshold to the size of each
 * mapped block freed, after which a large block (the checkpoint's batch
 * buffer of a large workspace, up to 2 MB) comes from the heap, and a large
 * calloc is zeroed by hand, page by page, where fresh mapped pages are zero
 * already and are touched only where used. The tables a session may fill
 * (exec control's hashes, the tool calls' processes) grow as they fill: a
 * mapping made and unmapped each session cost 0.05 ms at its end. One
 * arena: each thread's first malloc would otherwise start an arena of its
 * own (its pages touched and, in a forked helper, copied), for threads that
 * allocate little; the exec loop and the proxy's CONNECTs measured no
 * slower with it. */
static void malloc_setup(void)
{
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	mallopt(M_ARENA_MAX, 1);
}

int main(int argc, char **argv)
{
	malloc_setup();
	/* a write past the user's `ulimit -f` fails with EFBIG, which the log
	 * and the store say, rather than killing warden mid-session (the
	 * command gets the default back: src/sandbox/init.c) */
	signal(SIGXFSZ, SIG_IGN);
	selflimits_raise();
	proctitle_note(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("warden %s\n", WARDEN_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	const struct cli_cmd *c = strchr(cmd, ' ') ? NULL : cli_find(cmd);
	if (c && c->run)
		return c->run(argc - 1, argv + 1);
	fprintf(stderr, "warden: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
