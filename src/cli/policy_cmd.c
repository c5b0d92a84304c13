/* policy_cmd.c - `warden policy show [--profile FILE] [-- COMMAND]`: the
 * effective compiled policy (built-in default plus the profile) as JSON,
 * with what COMMAND would need exposed from the host ("exposed"). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/discover.h"
#include "../policy/policy.h"
#include "cli.h"

int cmd_policy(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	if (argc < 2 || strcmp(argv[1], "show") != 0) {
		fputs("usage: warden policy show [--profile FILE] [-- COMMAND]\n", stderr);
		return 2;
	}
	const char *profile = NULL;
	int c;
	optind = 2;
	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		if (c == 'p') {
			profile = optarg;
		} else {
			fputs("usage: warden policy show [--profile FILE] [-- COMMAND]\n", c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	struct werr e = { 0 };
	struct policy p;
	if (policy_load(&p, profile, user_home(), &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	struct discovery d = { 0 };
	_cleanup_free_ char *cwd = realpath(".", NULL);
	if (discover_for(&p, optind < argc ? argv[optind] : NULL, getenv("PATH"), cwd, user_home(),
			 &d, &e) < 0) {
		werr_print(&e);
		policy_free(&p);
		return EXIT_WARDEN;
	}
	json_t *j = policy_to_json(&p);
	if (optind < argc)
		json_object_set_new(j, "exposed", discovery_to_json(&d));
	discovery_free(&d);
	char digest[65];
	policy_digest(&p, digest);
	json_object_set_new(j, "digest", json_string(digest));
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
	policy_free(&p);
	return 0;
}
