/* run_cmd.c - `warden run [OPTIONS] [--] COMMAND [ARG...]`: parse and check the
 * options and run one sandbox session (session/session.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../policy/policy.h"
#include "../session/session.h"
#include "ci_end.h"
#include "cli.h"
#include "cmdtab.h"

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
	"  -e, --env NAME=VALUE  set NAME inside (NAME: letters, digits and _, not\n"
	"                        starting with a digit)\n"
	"      --log TARGET      also send every audit event to TARGET: 'syslog' (each\n"
	"                        JSON line to syslog), 'journald' (a structured entry\n"
	"                        per event in the systemd journal); both: --log\n"
	"                        syslog,journald or --log twice\n"
	"  -m, --stream otlp=URL|ocsf=FILE  send every event live to the OTLP/HTTP\n"
	"                        collector at URL, or append it to FILE as an OCSF\n"
	"                        line (one of each); what was not sent is named at\n"
	"                        the end and stays in the log\n"
	"      --allow-net PATTERN  allow a destination through warden's proxy: a host,\n"
	"                        *.suffix or IP literal, with an optional :port;\n"
	"                        'PATTERN private': its names may resolve to private\n"
	"                        addresses; 127.0.0.1:PORT, [::1]:PORT, localhost:PORT:\n"
	"                        that port inside reaches the host's loopback\n"
	"      --publish [HOST_PORT:]PORT  a connection to the host's 127.0.0.1:HOST_PORT\n"
	"                        (and [::1]:HOST_PORT) reaches PORT on the sandbox's\n"
	"                        loopback (HOST_PORT: PORT when left out); repeatable\n"
	"      --secret NAME[@HOST,...]  keep the variable NAME's value outside: inside,\n"
	"                        NAME holds a phantom; warden's proxy puts the real\n"
	"                        value in request headers toward HOST only (over TLS\n"
	"                        it verified, or on the host's loopback)\n"
	"      --agent NAME      use the built-in profile of agent NAME (claude, codex);\n"
	"                        'none': no agent profile (default: picked by COMMAND's\n"
	"                        name)\n"
	"      --state DIR       keep the agent's state (~/.claude, ~/.codex, ...) in DIR\n"
	"                        (default: ~/.local/share/warden/agents/NAME)\n"
	"      --review          nothing reaches the workspace during the session: it is\n"
	"                        an overlay inside; then warden diff shows the changes\n"
	"                        and warden apply or warden discard decides\n"
	"      --read-only       the workspace is read-only inside (profile: `workspace\n"
	"                        read-only`); a write there fails with EROFS and is\n"
	"                        logged; write to --output directories or the scratch\n"
	"                        directory ($WARDEN_SCRATCH)\n"
	"      --scratch DIR     a writable scratch directory outside the workspace, kept\n"
	"                        (default with --read-only: a fresh one in $TMPDIR or\n"
	"                        /tmp, removed when the session ends)\n"
	"  -o, --output PATH     a writable output directory (made when missing), in the\n"
	"                        workspace or outside; may be repeated\n"
	"      --task NAME       run in the task's own workspace: in a git repository a\n"
	"                        worktree on branch warden/NAME beside it, elsewhere a\n"
	"                        copy (see warden task)\n"
	"      --ssh-agent       your SSH agent (SSH_AUTH_SOCK) usable inside: its keys\n"
	"                        listed and signing, through warden, which refuses adding,\n"
	"                        removing and locking keys and logs each signature; no\n"
	"                        private key enters the sandbox\n"
	"      --ssh-key KEY     only this key of the agent (its SHA256:... fingerprint or\n"
	"                        its comment; repeatable; implies --ssh-agent)\n"
	"      --ci              CI mode (on by itself when CI=true): no terminal is\n"
	"                        assumed; an `ask` question goes to the reviewer command\n"
	"                        or the webhook, else is refused at once; at the end a\n"
	"                        Markdown summary (to $GITHUB_STEP_SUMMARY too, when\n"
	"                        set) and the artifacts: the log, its verification,\n"
	"                        OCSF events\n"
	"      --no-ci           not CI mode, even with CI=true\n"
	"      --artifacts DIR   CI mode: the artifacts' directory (default:\n"
	"                        $RUNNER_TEMP/warden-artifacts, else ./warden-artifacts)\n"
	"      --fail-on SEVERITY  CI mode: exit 123 when an alert of SEVERITY (low,\n"
	"                        medium, high, critical) or above was raised\n"
	"  -q, --quiet           no list of what was refused at the end\n"
	"  -h, --help            this text\n"
	"\n"
	"Without COMMAND (and without --), runs /bin/sh. Exit status: COMMAND's;\n"
	"128+N if it died of signal N; 125 if warden failed; 126 if COMMAND cannot be\n"
	"executed; 127 if it was not found; 123 (CI mode) after an alert at or above\n"
	"--fail-on.\n";


/* run_parse's answer when the session should run. */
#define RUN_GO (-1)

/* An --env argument: NAME or NAME=VALUE with NAME a variable name. Says why
 * on stderr when it is not one. */
static bool env_arg_ok(const char *arg)
{
	size_t n = strcspn(arg, "=");
	if (*arg == '\0') {
		fprintf(stderr, "warden: --env needs NAME or NAME=VALUE, not an empty argument\n");
		return false;
	}
	if (n == 0) {
		fprintf(stderr, "warden: --env '%.200s': the variable name before '=' is missing\n",
			arg);
		return false;
	}
	_cleanup_free_ char *name = xstrdup(arg);
	name[n] = '\0';
	if (!policy_env_name_valid(name)) {
		fprintf(stderr,
			"warden: --env '%.200s': '%.200s' is not a variable name (letters, digits "
			"and _, not starting with a digit)\n",
			arg, name);
		return false;
	}
	return true;
}

/* A --log argument: TARGET[,TARGET...], each 'syslog' or 'journald'. Says
 * why on stderr when it is not one. */
static bool log_arg(const char *arg, struct session_opts *o)
{
	const char *p = arg;
	do {
		size_t n = strcspn(p, ",");
		if (n == strlen("syslog") && strncmp(p, "syslog", n) == 0) {
			o->log_syslog = true;
		} else if (n == strlen("journald") && strncmp(p, "journald", n) == 0) {
			o->log_journald = true;
		} else {
			fprintf(stderr, "warden: --log '%.200s': takes syslog, journald or syslog,journald "
					"(the file log is always written)\n", arg);
			return false;
		}
		p += n;
	} while (*p++ == ',');
	return true;
}

/* A --stream argument: otlp=URL or ocsf=FILE, each kind once. Says why on
 * stderr when it is not one. */
static bool stream_arg(const char *arg, struct session_opts *o)
{
	bool otlp = strncmp(arg, "otlp=", 5) == 0, ocsf = strncmp(arg, "ocsf=", 5) == 0;
	const char **to = otlp ? &o->stream_otlp : ocsf ? &o->stream_ocsf : NULL;
	if (to && *to) {
		fprintf(stderr, "warden: --stream given twice for %.4s ('%.200s', then '%.200s'): "
				"give it once\n", arg, *to, arg + 5);
		return false;
	}
	if (to && arg[5]) {
		*to = arg + 5;
		return true;
	}
	fprintf(stderr, "warden: --stream '%.200s': takes otlp=URL (an OTLP/HTTP collector) or "
			"ocsf=FILE (OCSF lines appended to FILE)\n", arg);
	return false;
}

/* A --publish argument: [HOST_PORT:]PORT, its host port not given by an
 * earlier --publish. Says why on stderr when it is not one. */
static bool publish_arg(const char *arg, const struct strv *earlier)
{
	uint16_t host_port, port, h2, p2;
	const char *why = policy_publish_parse(arg, &host_port, &port);
	if (why) {
		fprintf(stderr, "warden: --publish '%.200s': %s\n", arg, why);
		return false;
	}
	for (size_t i = 0; i < earlier->n; i++)
		if (!policy_publish_parse(earlier->v[i], &h2, &p2) && h2 == host_port) {
			fprintf(stderr, "warden: --publish '%.200s': host port %u is published "
					"already (--publish %.200s)\n", arg, host_port, earlier->v[i]);
			return false;
		}
	return true;
}

/* CI mode's options: --ci, --no-ci (-1: neither: CI=true decides). */
struct ci_args {
	int on;
	struct ci_opts o;
};

/* --ci, --no-ci, --artifacts, --fail-on: true when c was one of them;
 * *bad set for a --fail-on that names no severity (either given twice is
 * cli_getopt's: a CI gate says one thing). */
static bool ci_arg(int c, struct ci_args *ci, bool *bad)
{
	switch (c) {
	case 'C': ci->on = 1; return true;
	case 'N': ci->on = 0; return true;
	case 'a': ci->o.artifacts = optarg; return true;
	case 'F':
		ci->o.fail_on = optarg;
		if (cisummary_severity(optarg) < 0) {
			fprintf(stderr, "warden: --fail-on '%.200s': takes low, medium, high or "
					"critical\n", optarg);
			*bad = true;
		}
		return true;
	default: return false;
	}
}

/* The lists the command line adds to (each also in session_opts, read-only
 * there). */
struct run_lists {
	struct strv *cli_env, *allow_net, *secrets, *outputs, *publish, *ssh_keys;
};

/* An option that sets a field of o: true when c was one (*status: the
 * exit status when its value is refused, else untouched). */
static bool run_opt_field(int c, struct session_opts *o, int *status)
{
	switch (c) {
	case 'w': o->workspace = optarg; return true;
	case 'p': o->profile = optarg; return true;
	case 'l':
		if (!log_arg(optarg, o))
			*status = EXIT_WARDEN;
		return true;
	case 'm':
		if (!stream_arg(optarg, o))
			*status = EXIT_WARDEN;
		return true;
	case 'q': o->summary = false; return true;
	case 'A': o->agent = optarg; return true;
	case 'S': o->state_dir = optarg; return true;
	case 'R': o->review = true; return true;
	case 'r': o->read_only = true; return true;
	case 'T': o->scratch = optarg; return true;
	case 'K': o->task = optarg; return true;
	case 'G': o->ssh_agent = true; return true;
	default: return false;
	}
}

/* An option that adds to a list: true when c was one (*status as above). */
static bool run_opt_list(int c, const struct run_lists *l, int *status)
{
	switch (c) {
	case 'e':
		if (!env_arg_ok(optarg))
			*status = EXIT_WARDEN;
		else
			strv_push(l->cli_env, optarg);
		return true;
	case 'n': strv_push(l->allow_net, optarg); return true;
	case 'P':
		if (!publish_arg(optarg, l->publish))
			*status = EXIT_WARDEN;
		else
			strv_push(l->publish, optarg);
		return true;
	case 's': strv_push(l->secrets, optarg); return true;
	case 'o': strv_push(l->outputs, optarg); return true;
	case 'k': strv_push(l->ssh_keys, optarg); return true;
	default: return false;
	}
}

/* Fill o, the lists and ci from the command line. Returns RUN_GO, or the
 * exit status when warden stops here (--help, a bad option). */
static int run_parse(int argc, char **argv, struct session_opts *o, const struct run_lists *l,
		     struct ci_args *ci)
{
	static char *default_cmd[] = { "/bin/sh", NULL };
	bool dashdash = false;
	optind = 1;
	for (;;) {
		int at = optind;
		int c = cli_getopt(argc, argv, "run");
		if (c == -1) {
			/* getopt steps over a "--" that ends the options, and
			 * over nothing else when it stops */
			dashdash = optind > at;
			break;
		}
		bool bad = false;
		int status = RUN_GO;
		if (ci_arg(c, ci, &bad)) {
			if (bad)
				return EXIT_WARDEN;
			continue;
		}
		if (run_opt_field(c, o, &status) || run_opt_list(c, l, &status)) {
			if (status != RUN_GO)
				return status;
			continue;
		}
		if (c == 'h') {
			fputs(run_usage, stdout);
			return 0;
		}
		/* getopt said which option; the 80 lines of options would
		 * push that line off the screen */
		fputs("warden run --help lists the options; after `--` (warden run -- COMMAND "
		      "ARG...), an option is the command's\n", stderr);
		return EXIT_WARDEN;
	}
	if (optind == argc && dashdash) {
		fprintf(stderr, "warden: run: no command after '--' (without '--' and a command, "
				"warden runs /bin/sh)\n");
		return EXIT_WARDEN;
	}
	o->argv = optind < argc ? argv + optind : default_cmd;
	return RUN_GO;
}

int cmd_run(int argc, char **argv)
{
	_cleanup_strv_ struct strv cli_env = { 0 };
	_cleanup_strv_ struct strv allow_net = { 0 };
	_cleanup_strv_ struct strv secrets = { 0 };
	_cleanup_strv_ struct strv outputs = { 0 };
	_cleanup_strv_ struct strv publish = { 0 };
	_cleanup_strv_ struct strv ssh_keys = { 0 };
	struct session_opts o = { .publish = &publish, .cli_env = &cli_env, .allow_net = &allow_net,
				  .secrets = &secrets, .outputs = &outputs, .ssh_keys = &ssh_keys,
				  .summary = true };
	struct ci_args ci = { .on = -1 };
	const struct run_lists lists = { .cli_env = &cli_env, .allow_net = &allow_net,
		.secrets = &secrets, .outputs = &outputs, .publish = &publish, .ssh_keys = &ssh_keys };
	int status = run_parse(argc, argv, &o, &lists, &ci);
	if (status != RUN_GO)
		return status;
	const char *env_ci = getenv("CI");
	o.ci = ci.on == 1 || (ci.on == -1 && env_ci && strcmp(env_ci, "true") == 0);
	if (!o.ci && (ci.o.artifacts || ci.o.fail_on)) {
		fprintf(stderr, "warden: --artifacts and --fail-on are for CI mode: add --ci\n");
		return EXIT_WARDEN;
	}
	_cleanup_(cisummary_freep) struct cisummary *cs = o.ci ? cisummary_new() : NULL;
	o.ci_summary = cs;
	_cleanup_free_ char *artifacts = o.ci ? ci_artifacts_dir(ci.o.artifacts) : NULL;
	o.ci_artifacts = artifacts;
	o.no_pty |= o.ci;
	struct werr e = { 0 };
	status = EXIT_WARDEN;
	bool failed = session_run(&o, &status, &e) < 0;
	if (failed) {
		werr_print(&e);
		status = EXIT_WARDEN;
	}
	char why[1200];
	return cs ? ci_end(cs, &ci.o, status, failed ? werr_str(&e, why, sizeof why) : NULL) : status;
}
