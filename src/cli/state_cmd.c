/* state_cmd.c - `warden state list` (each agent's state directory and
 * whether it exists) and `warden state reset AGENT [--state DIR]` (empty it:
 * onboarding and resume start afresh). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../agents/agents.h"
#include "../agents/state.h"
#include "../common/util.h"
#include "cli.h"
#include "cmdtab.h"

static const char state_usage[] =
	"usage: warden state list\n"
	"       warden state reset AGENT [--state DIR]\n"
	"\n"
	"Agents keep their state (~/.claude and ~/.claude.json, ~/.codex) across\n"
	"sessions in a directory of warden's, by default\n"
	"~/.local/share/warden/agents/AGENT (or $XDG_DATA_HOME/warden/agents/AGENT).\n"
	"reset empties it; it refuses while a session uses it.\n";

static int state_list(void)
{
	for (size_t i = 0; i < agent_defs_n; i++) {
		_cleanup_free_ char *dir = state_default_dir(agent_defs[i].name, user_home());
		struct stat st;
		printf("%-8s %s%s\n", agent_defs[i].name, dir ? dir : "(no place: HOME unset)",
		       dir && lstat(dir, &st) == 0 ? "" : " (none yet)");
	}
	return 0;
}

int cmd_state(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(state_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "list") == 0 && argc == 2)
		return state_list();
	if (strcmp(argv[1], "reset") != 0) {
		fputs(state_usage, stderr);
		return EXIT_USAGE;
	}
	const char *dir = NULL;
	int c;
	optind = 2;
	while ((c = cli_getopt(argc, argv, "state reset")) != -1) {
		if (c != 'S') {
			fputs(state_usage, stderr);
			return EXIT_USAGE;
		}
		dir = optarg;
	}
	if (argc - optind != 1) {
		fputs(state_usage, stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[optind];
	const struct agent_def *a = NULL;
	struct werr e = { 0 };
	if (agent_pick(name, NULL, &a, &e) < 0 || !a) {
		/* the agent named here, not by --agent: bad usage, as an
		 * unknown word is */
		char known[256];
		agent_names(known, sizeof known);
		fprintf(stderr, "warden: state reset: \"%.100s\" is no agent warden keeps state for "
			"(%s)\n", name, known);
		fputs(state_usage, stderr);
		return EXIT_USAGE;
	}
	bool removed = false;
	if (state_reset(a, dir, user_home(), &removed, &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	printf("%s\n", removed ? "reset: the next session starts afresh" : "nothing to reset");
	return 0;
}
