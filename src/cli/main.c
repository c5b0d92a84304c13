/* main.c - warden's command line: dispatch to a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"

static void usage(FILE *out)
{
	fputs("usage: warden COMMAND [ARGS]\n"
	      "\n"
	      "  run [OPTIONS] [--] CMD [ARG...]  run CMD in a sandbox (see warden run --help)\n"
	      "  policy show [--profile FILE] [--agent NAME] [-- CMD]\n"
	      "                                   print the effective policy as JSON\n"
	      "  state list|reset AGENT           agents' state kept across sessions\n"
	      "  approve [ID allow|deny] [--follow]\n"
	      "                                   answer the questions of `ask` rules\n"
	      "  rules show|check [...]           the detection rules in force (see warden rules --help)\n"
	      "  status [--json]                  the running sessions (id, age, frozen, command)\n"
	      "  freeze|resume|kill SESSION [--reason TEXT]\n"
	      "                                   stop, let go on or end a running session\n"
	      "  hook [--client claude|codex]     inside a sandbox: an agent client's tool-call\n"
	      "                                   hook (reports each call, prints the decision)\n"
	      "  log list|show|verify [...]       the audit logs of sessions (see warden log --help)\n"
	      "  diff [SESSION] [--list]          what changed in the workspace since a session's\n"
	      "                                   checkpoint (see warden diff --help)\n"
	      "  undo [SESSION] [--force] [--yes] bring the workspace back to a session's\n"
	      "                                   checkpoint (see warden undo --help)\n"
	      "  apply|discard [SESSION]          write or drop what a `run --review` session\n"
	      "                                   changed (see warden apply --help)\n"
	      "  check [--profile FILE] [--json] [--compare]\n"
	      "                                   prove the sandbox holds (probes inside it)\n"
	      "  import claude|codex|srt [FILE] [-o FILE]\n"
	      "                                   a profile from Claude Code's, Codex's or\n"
	      "                                   sandbox-runtime's settings\n"
	      "  init [-o FILE] [--force]         a commented profile for this project\n"
	      "                                   (./warden.profile)\n"
	      "  doctor [--profile FILE]          what this machine supports, which layers and\n"
	      "                                   limits apply\n"
	      "  --version                        print the version\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "state") == 0)
		return cmd_state(argc - 1, argv + 1);
	if (strcmp(cmd, "approve") == 0)
		return cmd_approve(argc - 1, argv + 1);
	if (strcmp(cmd, "rules") == 0)
		return cmd_rules(argc - 1, argv + 1);
	if (strcmp(cmd, "diff") == 0)
		return cmd_diff(argc - 1, argv + 1);
	if (strcmp(cmd, "undo") == 0)
		return cmd_undo(argc - 1, argv + 1);
	if (strcmp(cmd, "apply") == 0)
		return cmd_apply(argc - 1, argv + 1);
	if (strcmp(cmd, "discard") == 0)
		return cmd_discard(argc - 1, argv + 1);
	if (strcmp(cmd, "status") == 0)
		return cmd_status(argc - 1, argv + 1);
	if (strcmp(cmd, "freeze") == 0 || strcmp(cmd, "resume") == 0 || strcmp(cmd, "kill") == 0)
		return cmd_action(argc - 1, argv + 1);
	if (strcmp(cmd, "hook") == 0)
		return cmd_hook(argc - 1, argv + 1);
	if (strcmp(cmd, "policy") == 0)
		return cmd_policy(argc - 1, argv + 1);
	if (strcmp(cmd, "log") == 0)
		return cmd_log(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	if (strcmp(cmd, "init") == 0)
		return cmd_init(argc - 1, argv + 1);
	if (strcmp(cmd, "doctor") == 0)
		return cmd_doctor(argc - 1, argv + 1);
	if (strcmp(cmd, "__probe") == 0)
		return cmd_probe(argc - 1, argv + 1);
	if (strcmp(cmd, "__connect") == 0)
		return cmd_connect(argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("warden %s\n", WARDEN_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "warden: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
