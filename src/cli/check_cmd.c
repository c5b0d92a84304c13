/* check_cmd.c - `warden check [--profile FILE] [--json] [--compare]` and the
 * hidden `warden __probe`: parse the options and hand over to src/check. */
#include <getopt.h>
#include <stdio.h>

#include "../check/check.h"
#include "../check/probes.h"
#include "cli.h"
#include "cmdtab.h"

static const char check_usage[] =
	"usage: warden check [--profile FILE] [--json] [--compare]\n"
	"\n"
	"Prove that the sandbox holds: build the sandbox from the profile (the built-in\n"
	"default when none) around a temporary workspace full of dummy bait, run\n"
	"warden's probes inside it - each one attempts what a hostile agent would\n"
	"try, without harming anything - and print what was expected, what happened\n"
	"and whether the sandbox held.\n"
	"\n"
	"  -p, --profile FILE  a profile layered on the built-in default\n"
	"  -j, --json          print one JSON document instead of the table\n"
	"  -c, --compare       also run the probes outside the sandbox, as you, and\n"
	"                      show both columns (the exit status still only reflects\n"
	"                      the sandbox)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 every probe held; 1 at least one did not; 125 warden failed.\n";

int cmd_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "check")) != -1) {
		switch (c) {
		case 'p': o.profile = optarg; break;
		case 'j': o.json = true; break;
		case 'c': o.compare = true; break;
		case 'h': fputs(check_usage, stdout); return 0;
		default: fputs(check_usage, stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "warden check: unexpected argument '%s'\n", argv[optind]);
		fputs(check_usage, stderr);
		return 2;
	}
	if (o.profile && !o.profile[0]) {
		fputs("warden check: --profile needs a file name\n", stderr);
		return 2;
	}
	return check_run(&o);
}

int cmd_probe(int argc, char **argv)
{
	return probe_main(argc, argv);
}
