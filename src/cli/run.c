/* run.c - `warden run [OPTIONS] [--] COMMAND [ARG...]`: parse the options and
 * run one sandbox session (supervisor/session.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../supervisor/session.h"
#include "cli.h"

static const char run_usage[] =
	"usage: warden run [OPTIONS] [--] COMMAND [ARG...]\n"
	"\n"
	"Run COMMAND in a sandbox: only the workspace is writable, system directories\n"
	"are read-only, the home directory and credentials are not there, the network\n"
	"is warden's proxy (127.0.0.1:3128 HTTP, :1080 SOCKS5) and reaches only what\n"
	"the rules allow, and the session is recorded in the audit log.\n"
	"\n"
	"  -w, --workspace DIR   the workspace (default: the current directory)\n"
	"  -p, --profile FILE    a profile layered on the built-in default\n"
	"  -e, --env NAME        pass the variable NAME from this environment\n"
	"  -e, --env NAME=VALUE  set NAME inside\n"
	"      --log syslog      also send every audit event to syslog (journald)\n"
	"      --allow-net PATTERN  allow a destination through warden's proxy: a host,\n"
	"                        *.suffix or IP literal, with an optional :port\n"
	"  -h, --help            this text\n"
	"\n"
	"Without COMMAND, runs /bin/sh. Exit status: COMMAND's; 128+N if it died of\n"
	"signal N; 125 if warden failed; 126 if COMMAND cannot be executed; 127 if it\n"
	"was not found.\n";

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workspace", required_argument, NULL, 'w' },
		{ "profile", required_argument, NULL, 'p' },
		{ "env", required_argument, NULL, 'e' },
		{ "log", required_argument, NULL, 'l' },
		{ "allow-net", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct strv cli_env = { 0 }, allow_net = { 0 };
	struct session_opts o = { .cli_env = &cli_env, .allow_net = &allow_net };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+w:p:e:l:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': o.workspace = optarg; break;
		case 'p': o.profile = optarg; break;
		case 'e': strv_push(&cli_env, optarg); break;
		case 'n': strv_push(&allow_net, optarg); break;
		case 'l':
			if (strcmp(optarg, "syslog") != 0) {
				fprintf(stderr, "warden: --log takes 'syslog' (the file log is always written)\n");
				strv_free(&cli_env);
				return EXIT_WARDEN;
			}
			o.log_syslog = true;
			break;
		case 'h': fputs(run_usage, stdout); strv_free(&cli_env); return 0;
		default: fputs(run_usage, stderr); strv_free(&cli_env); return EXIT_WARDEN;
		}
	}
	static char *default_cmd[] = { "/bin/sh", NULL };
	o.argv = optind < argc ? argv + optind : default_cmd;

	struct werr e = { 0 };
	int status = EXIT_WARDEN;
	if (session_run(&o, &status, &e) < 0) {
		werr_print(&e);
		status = EXIT_WARDEN;
	}
	strv_free(&cli_env);
	strv_free(&allow_net);
	return status;
}
