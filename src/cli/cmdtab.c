/* cmdtab.c - the table of warden's commands and options (cmdtab.h), and the
 * getopt_long tables built from it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdtab.h"

#define HELP_OPT(h) { "help", 'h', h, CLI_NONE, NULL, NULL, "print this help and exit" }

static const struct cli_opt run_opts[] = {
	{ "workspace", 'w', true, CLI_DIR, "DIR", NULL, "the workspace (default: the current directory)" },
	{ "profile", 'p', true, CLI_FILE, "FILE", NULL, "a profile layered on the built-in default" },
	{ "env", 'e', true, CLI_TEXT, "NAME[=VALUE]", NULL,
	  "pass the variable NAME from this environment, or set NAME=VALUE inside (repeatable)" },
	{ "log", 'l', true, CLI_WORDS, "TARGET", "syslog journald syslog,journald",
	  "also send every audit event to syslog or journald (repeatable)" },
	{ "stream", 'm', false, CLI_TEXT, "otlp=URL|ocsf=FILE", NULL,
	  "send events live to an OTLP collector, or append them to FILE as OCSF lines (repeatable: one of each)" },
	{ "allow-net", 'n', true, CLI_TEXT, "PATTERN",  NULL,
	  "allow a destination through the proxy: host, *.suffix or IP, optional :port (repeatable)" },
	{ "publish", 'P', false, CLI_TEXT, "[HOST_PORT:]PORT", NULL,
	  "the host's 127.0.0.1:HOST_PORT (and [::1]) leads to PORT inside (repeatable)" },
	{ "quiet", 'q', true, CLI_NONE, NULL, NULL, "no list of what was refused at the end" },
	{ "agent", 'A', false, CLI_WORDS, "NAME", "claude codex none",
	  "use the built-in profile of agent NAME ('none': no agent profile)" },
	{ "secret", 's', false, CLI_TEXT, "NAME[@HOST,...]", NULL,
	  "keep the variable NAME's value outside; a phantom inside, the real value sent to HOST only (repeatable)" },
	{ "state", 'S', false, CLI_DIR, "DIR", NULL, "keep the agent's state in DIR" },
	{ "review", 'R', false, CLI_NONE, NULL, NULL,
	  "write nothing to the workspace; warden diff, apply or discard decide after" },
	{ "read-only", 'r', false, CLI_NONE, NULL, NULL,
	  "the workspace read-only; write to $WARDEN_SCRATCH and the --output directories" },
	{ "scratch", 'T', false, CLI_DIR, "DIR", NULL,
	  "the writable scratch directory (default: a fresh one, removed at the end)" },
	{ "output", 'o', true, CLI_DIR, "DIR", NULL,
	  "a writable output directory, made if missing (repeatable)" },
	{ "task", 'K', false, CLI_TEXT, "NAME", NULL,
	  "run in task NAME's own git worktree (branch warden/NAME) or copy" },
	{ "ssh-agent", 'G', false, CLI_NONE, NULL, NULL,
	  "your SSH agent's keys usable inside (never the keys themselves)" },
	{ "ssh-key", 'k', false, CLI_TEXT, "KEY", NULL,
	  "with --ssh-agent: only this key, SHA256:... or its comment (repeatable)" },
	{ "ci", 'C', false, CLI_NONE, NULL, NULL,
	  "CI mode (on when CI=true): no terminal; a summary and artifacts at the end" },
	{ "no-ci", 'N', false, CLI_NONE, NULL, NULL, "not CI mode, even with CI=true" },
	{ "artifacts", 'a', false, CLI_DIR, "DIR", NULL,
	  "CI mode: the log, its verification, OCSF and the summary to DIR" },
	{ "fail-on", 'F', false, CLI_WORDS, "SEVERITY", "low medium high critical",
	  "CI mode: exit 123 after an alert of SEVERITY or above" },
	HELP_OPT(true),
	{ 0 },
};

/* policy show and rules show: cli_show_policy parses both */
static const struct cli_opt show_policy_opts[] = {
	{ "profile", 'p', true, CLI_FILE, "FILE", NULL, "a profile layered on the built-in default" },
	{ "agent", 'A', false, CLI_WORDS, "NAME", "claude codex none",
	  "the built-in profile of agent NAME ('none': no agent profile)" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_cmd policy_subs[] = {
	{ .name = "show", .synopsis = "[--profile FILE] [--agent NAME|none] [-- COMMAND]",
	  .summary = "print the effective policy as JSON", .getopt_flags = "+",
	  .opts = show_policy_opts, .operand = CLI_COMMAND },
	{ 0 },
};

static const struct cli_opt state_reset_opts[] = {
	{ "state", 'S', false, CLI_DIR, "DIR", NULL, "the state directory (default: warden's own)" },
	{ 0 },
};

static const struct cli_cmd state_subs[] = {
	{ .name = "list", .synopsis = "", .summary = "each agent's state directory" },
	{ .name = "reset", .synopsis = "AGENT [--state DIR]", .summary = "empty an agent's state",
	  .getopt_flags = "+", .opts = state_reset_opts, .operand = CLI_WORDS,
	  .operand_words = "claude codex" },
	{ 0 },
};

static const struct cli_cmd cache_subs[] = {
	{ .name = "list", .synopsis = "", .summary = "each workspace's caches and their size" },
	{ .name = "clear", .synopsis = "[DIR]", .summary = "remove a workspace's caches",
	  .operand = CLI_DIR },
	{ 0 },
};

static const struct cli_opt shim_opts[] = {
	{ "dir", 'd', false, CLI_DIR, "DIR", NULL, "the shims' directory (default: ~/.local/bin)" },
	{ "system", 'Y', false, CLI_NONE, NULL, NULL,
	  "for every user: /usr/local/lib/warden/shims, first on PATH by /etc/profile.d (root)" },
	{ 0 },
};

static const struct cli_cmd shim_subs[] = {
	{ .name = "install", .synopsis = "[--dir DIR | --system] NAME...",
	  .summary = "put a shim for each NAME first on PATH (NAME runs under warden)",
	  .opts = shim_opts, .operand = CLI_WORDS, .operand_words = "claude codex" },
	{ .name = "remove", .synopsis = "[--dir DIR | --system] NAME...",
	  .summary = "remove the shims named (nothing but a shim is ever removed)",
	  .opts = shim_opts, .operand = CLI_WORDS, .operand_words = "claude codex" },
	{ .name = "list", .synopsis = "[--dir DIR | --system]",
	  .summary = "each shim, and whether PATH finds it first", .opts = shim_opts },
	{ 0 },
};

static const struct cli_opt task_opts[] = {
	{ "workspace", 'w', true, CLI_DIR, "DIR", NULL,
	  "the repository or directory (default: the current one)" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_cmd task_subs[] = {
	{ .name = "list", .synopsis = "[-w DIR]", .summary = "each task: name, branch, state, path",
	  .opts = task_opts },
	{ .name = "diff", .synopsis = "NAME [-w DIR]", .summary = "what the task changed",
	  .opts = task_opts, .operand = CLI_TEXT },
	{ .name = "remove", .synopsis = "NAME [-w DIR]",
	  .summary = "remove the task's worktree or copy (the branch stays)", .opts = task_opts,
	  .operand = CLI_TEXT },
	{ 0 },
};

static const struct cli_opt import_opts[] = {
	{ "output", 'o', true, CLI_FILE, "FILE", NULL, "write the profile to FILE (default: stdout)" },
	{ "force", 'f', true, CLI_NONE, NULL, NULL, "replace an existing FILE" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt init_opts[] = {
	{ "output", 'o', true, CLI_FILE, "FILE", NULL, "the profile to write (default: warden.profile)" },
	{ "force", 'f', true, CLI_NONE, NULL, NULL, "replace an existing FILE" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt approve_opts[] = {
	{ "json", 'j', false, CLI_NONE, NULL, NULL, "list the questions as JSON" },
	{ "follow", 'f', false, CLI_NONE, NULL, NULL, "print each question as it is asked and as it ends" },
	{ "session", 's', false, CLI_NONE, NULL, NULL, "the answer holds for the rest of its session" },
	{ "pattern", 'p', false, CLI_TEXT, "GLOB", NULL,
	  "the answer holds for everything of its kind whose subject matches GLOB" },
	{ "ttl", 't', false, CLI_TEXT, "SECONDS", NULL, "how long a --session or --pattern answer holds" },
	{ "reason", 'r', false, CLI_TEXT, "TEXT", NULL, "why, recorded with the answer" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_cmd rules_subs[] = {
	{ .name = "show", .synopsis = "[--profile FILE] [--agent NAME|none] [-- COMMAND]",
	  .summary = "the detection rules a session would run with", .getopt_flags = "+",
	  .opts = show_policy_opts, .operand = CLI_COMMAND },
	{ .name = "check", .synopsis = "FILE", .summary = "parse one rules file and say where it is wrong",
	  .operand = CLI_FILE },
	{ 0 },
};

static const struct cli_opt json_help_opts[] = {
	{ "json", 'j', false, CLI_NONE, NULL, NULL, "one JSON object a line" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt action_opts[] = {
	{ "reason", 'r', false, CLI_TEXT, "TEXT", NULL, "why, recorded in the action event" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt hook_opts[] = {
	{ "client", 'c', false, CLI_WORDS, "CLIENT", "claude codex", "the agent client whose hook this is" },
	{ "timeout", 't', false, CLI_TEXT, "SECONDS", NULL, "how long to wait for warden's decision" },
	{ "socket", 's', false, CLI_FILE, "PATH", NULL, "warden's hook socket (default: the sandbox's)" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt log_list_opts[] = {
	{ "json", 'f', false, CLI_NONE, NULL, NULL, "one JSON object per session" },
	{ "workspace", 'w', true, CLI_DIR, "DIR", NULL,
	  "only the sessions of workspace DIR, or of one within it (a task's)" },
	{ "since", 'S', false, CLI_TEXT, "TIME", NULL, "only the sessions started at or after TIME" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt log_show_opts[] = {
	{ "json", 'j', false, CLI_NONE, NULL, NULL, "the matching lines exactly as logged (JSON Lines)" },
	{ "follow", 'f', true, CLI_NONE, NULL, NULL, "then keep reading the live session until it ends" },
	{ "event", 'E', false, CLI_TEXT, "KIND", NULL,
	  "only this kind of event, 'session': its start and end (repeatable)" },
	{ "pid", 'P', false, CLI_TEXT, "PID", NULL, "only events of this process" },
	{ "since", 'S', false, CLI_TEXT, "TIME", NULL, "only events at or after TIME" },
	{ "until", 'U', false, CLI_TEXT, "TIME", NULL, "only events at or before TIME" },
	{ "decision", 'D', false, CLI_WORDS, "DECISION", "allow deny", "only events with this decision" },
	{ "tool", 'T', false, CLI_TEXT, "ID", NULL, "only the tool call ID and what followed it" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt log_verify_opts[] = {
	{ "all", 'f', false, CLI_NONE, NULL, NULL, "every session, one line each" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt log_export_opts[] = {
	{ "format", 'F', false, CLI_WORDS, "FORMAT", "ocsf otlp",
	  "ocsf: OCSF 1.3.0 JSON lines on stdout; otlp: OpenTelemetry logs (OTLP/HTTP JSON)" },
	{ "url", 'u', false, CLI_TEXT, "URL", NULL,
	  "otlp: the collector's base URL (http:// or https://); without it, stdout" },
	{ "ca", 'c', false, CLI_FILE, "FILE", NULL, "otlp: trust this CA for an https:// collector" },
	{ "timeout", 't', false, CLI_TEXT, "SECONDS", NULL,
	  "otlp: each request's time bound, 1 to 600 (10)" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt log_prune_opts[] = {
	{ "older-than", 'o', false, CLI_TEXT, "TIME", NULL,
	  "the logs last written before TIME (as --since: 30d is thirty days ago)" },
	{ "dry-run", 'n', true, CLI_NONE, NULL, NULL, "say what would be removed, remove nothing" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_cmd log_subs[] = {
	{ .name = "list", .synopsis = "[--json] [-w|--workspace DIR] [--since TIME]",
	  .summary = "one row per session, oldest first", .opts = log_list_opts },
	{ .name = "show",
	  .synopsis = "[SESSION] [--json] [-f|--follow] [--event KIND]... [--pid PID] [--since TIME] "
		      "[--until TIME] [--decision allow|deny] [--tool ID]",
	  .summary = "a session's events", .opts = log_show_opts, .operand = CLI_SESSION },
	{ .name = "verify", .synopsis = "[SESSION | --all]", .summary = "check a log's hash chain",
	  .opts = log_verify_opts, .operand = CLI_SESSION },
	{ .name = "export",
	  .synopsis = "--format ocsf|otlp [SESSION...] [--url URL [--ca FILE]] [--timeout S]",
	  .summary = "sessions' events as OCSF or OpenTelemetry logs", .opts = log_export_opts,
	  .operand = CLI_SESSION },
	{ .name = "prune", .synopsis = "--older-than TIME [--dry-run]",
	  .summary = "remove the logs of sessions last written before TIME", .opts = log_prune_opts },
	{ 0 },
};

static const struct cli_opt diff_opts[] = {
	{ "list", 'l', true, CLI_NONE, NULL, NULL, "the changed paths only" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt undo_opts[] = {
	{ "force", 'f', true, CLI_NONE, NULL, NULL, "also write over paths changed since the session" },
	{ "yes", 'y', true, CLI_NONE, NULL, NULL, "do not ask for confirmation" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt help_only_opts[] = {
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt discard_opts[] = {
	{ "list", 'l', false, CLI_NONE, NULL, NULL,
	  "list the review directories that killed --review sessions left" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt check_opts[] = {
	{ "profile", 'p', true, CLI_FILE, "FILE", NULL, "a profile layered on the built-in default" },
	{ "json", 'j', true, CLI_NONE, NULL, NULL, "print one JSON document instead of the table" },
	{ "compare", 'c', true, CLI_NONE, NULL, NULL, "also run the probes outside the sandbox, as you" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt doctor_opts[] = {
	{ "profile", 'p', false, CLI_FILE, "FILE", NULL, "the limits of FILE layered on the default profile" },
	HELP_OPT(true),
	{ 0 },
};

static const struct cli_opt complete_opts[] = {
	{ 0 },
};

const struct cli_cmd cli_commands[] = {
	{ .name = "run", .synopsis = "[OPTIONS] [--] [COMMAND [ARG...]]",
	  .summary = "run COMMAND in a sandbox", .getopt_flags = "+", .opts = run_opts,
	  .operand = CLI_COMMAND, .run = cmd_run },
	{ .name = "policy", .synopsis = "show [--profile FILE] [--agent NAME|none] [-- COMMAND]",
	  .summary = "print the effective policy as JSON", .subs = policy_subs, .run = cmd_policy },
	{ .name = "state", .synopsis = "list|reset AGENT [--state DIR]",
	  .summary = "agents' state kept across sessions", .subs = state_subs, .run = cmd_state },
	{ .name = "cache", .synopsis = "list|clear [DIR]",
	  .summary = "the home's directories kept by cache lines", .subs = cache_subs,
	  .run = cmd_cache },
	{ .name = "shim", .synopsis = "install|remove|list [--dir DIR | --system] [NAME...]",
	  .summary = "shims that run clients under warden when typed by name", .subs = shim_subs,
	  .run = cmd_shim },
	{ .name = "task", .synopsis = "list|diff|remove [NAME] [-w DIR]",
	  .summary = "the workspaces of run --task NAME", .opts = task_opts, .subs = task_subs,
	  .run = cmd_task },
	{ .name = "import", .synopsis = "claude|codex|srt [FILE] [-o FILE] [--force]",
	  .summary = "a profile from Claude Code's, Codex's or srt's sandbox settings",
	  .opts = import_opts, .operand = CLI_WORDS, .operand_words = "claude codex srt",
	  .run = cmd_import },
	{ .name = "init", .synopsis = "[-o FILE] [--force]",
	  .summary = "a commented profile for the project in the current directory",
	  .opts = init_opts, .run = cmd_init },
	{ .name = "approve", .synopsis = "[ID allow|deny] [--session|--pattern GLOB] [--ttl S] [--follow]",
	  .summary = "answer the questions of `ask` rules", .opts = approve_opts, .run = cmd_approve },
	{ .name = "rules", .synopsis = "show|check [...]", .summary = "the detection rules in force",
	  .subs = rules_subs, .run = cmd_rules },
	{ .name = "status", .synopsis = "[--json]",
	  .summary = "the running sessions (id, age, frozen, command)", .opts = json_help_opts,
	  .run = cmd_status },
	{ .name = "freeze", .synopsis = "SESSION [--reason TEXT]",
	  .summary = "stop every process of a running session", .opts = action_opts,
	  .operand = CLI_SESSION, .run = cmd_action },
	{ .name = "resume", .synopsis = "SESSION", .summary = "let a frozen session go on",
	  .opts = help_only_opts, .operand = CLI_SESSION, .run = cmd_action },
	{ .name = "kill", .synopsis = "SESSION [--reason TEXT]", .summary = "end a running session",
	  .opts = action_opts, .operand = CLI_SESSION, .run = cmd_action },
	{ .name = "hook", .synopsis = "[--client claude|codex] [--timeout SECONDS]",
	  .summary = "inside a sandbox: an agent client's tool-call hook", .getopt_flags = "+",
	  .opts = hook_opts, .run = cmd_hook },
	{ .name = "log", .synopsis = "list|show|verify|export|prune [...]",
	  .summary = "the audit logs of sessions",
	  .subs = log_subs, .run = cmd_log },
	{ .name = "diff", .synopsis = "[SESSION] [--list]",
	  .summary = "what changed in the workspace since a session's checkpoint",
	  .opts = diff_opts, .operand = CLI_SESSION, .run = cmd_diff },
	{ .name = "undo", .synopsis = "[SESSION] [--force] [--yes]",
	  .summary = "bring the workspace back to a session's checkpoint",
	  .opts = undo_opts, .operand = CLI_SESSION, .run = cmd_undo },
	{ .name = "apply", .synopsis = "[SESSION] [--force] [--yes]",
	  .summary = "write what a run --review session changed",
	  .opts = undo_opts, .operand = CLI_SESSION, .run = cmd_apply },
	{ .name = "discard", .synopsis = "[SESSION] | --list",
	  .summary = "drop what a run --review session changed",
	  .opts = discard_opts, .operand = CLI_SESSION, .run = cmd_discard },
	{ .name = "check", .synopsis = "[--profile FILE] [--json] [--compare]",
	  .summary = "prove the sandbox holds (probes inside it)", .opts = check_opts, .run = cmd_check },
	{ .name = "doctor", .synopsis = "[--profile FILE]",
	  .summary = "what this machine supports, which layers and limits apply", .getopt_flags = "+",
	  .opts = doctor_opts, .run = cmd_doctor },
	{ .name = "__probe", .run = cmd_probe, .hidden = true },
	{ .name = "__connect", .run = cmd_connect, .hidden = true },
	{ .name = "__complete", .synopsis = "bash|zsh|fish|table", .opts = complete_opts,
	  .run = cmd_complete, .hidden = true },
	{ 0 },
};

static const struct cli_cmd *find_in(const struct cli_cmd *v, const char *name, size_t len)
{
	for (; v && v->name; v++)
		if (strlen(v->name) == len && strncmp(v->name, name, len) == 0)
			return v;
	return NULL;
}

const struct cli_cmd *cli_find(const char *path)
{
	size_t n = strcspn(path, " ");
	const struct cli_cmd *c = find_in(cli_commands, path, n);
	if (c && path[n] == ' ')
		c = find_in(c->subs, path + n + 1, strlen(path + n + 1));
	return c;
}

const char *cli_arg_name(enum cli_arg a)
{
	static const char *const names[] = { "none", "file", "dir", "session", "words", "text", "command" };
	return (size_t)a < sizeof names / sizeof names[0] ? names[a] : "?";
}

/* The tables of the last command parsed: a process parses one command, so
 * they are built once and stay for getopt_long, which keeps pointing at them
 * between calls. */
#define OPTS_MAX 32
static struct {
	const struct cli_cmd *cmd;
	struct option longopts[OPTS_MAX + 1];
	char shortopts[2 * OPTS_MAX + 4];
} built;

static void build(const struct cli_cmd *c)
{
	memset(&built, 0, sizeof built);
	built.cmd = c;
	size_t n = 0, s = 0;
	if (c->getopt_flags)
		for (const char *f = c->getopt_flags; *f && s < 2; f++)
			built.shortopts[s++] = *f;
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		if (n == OPTS_MAX) {
			fprintf(stderr, "warden: internal error: more than %d options for %s\n", OPTS_MAX,
				c->name);
			exit(EXIT_WARDEN);
		}
		built.longopts[n++] = (struct option){ o->name,
						       o->arg == CLI_NONE ? no_argument : required_argument,
						       NULL, o->val };
		if (o->has_short) {
			built.shortopts[s++] = (char)o->val;
			if (o->arg != CLI_NONE)
				built.shortopts[s++] = ':';
		}
	}
}

/* The options with an argument given so far in the parse under way (their
 * first argument), for an option given twice. */
static struct {
	int val;
	const char *arg;
} given[OPTS_MAX];
static size_t ngiven;

/* An option given once at most: its second time said, as '?'; a file or
 * directory option given an empty name too. */
static int once(const struct cli_cmd *c, int val)
{
	const struct cli_opt *o = c->opts;
	while (o && o->name && o->val != val)
		o++;
	if (o && o->name && (o->arg == CLI_FILE || o->arg == CLI_DIR) && optarg && !*optarg) {
		fprintf(stderr, "warden: --%s: an empty %s name\n", o->name,
			o->arg == CLI_FILE ? "file" : "directory");
		return '?';
	}
	if (!o || !o->name || o->arg == CLI_NONE || strstr(o->help, CLI_REPEATABLE))
		return val;
	for (size_t i = 0; i < ngiven; i++)
		if (given[i].val == val) {
			fprintf(stderr, "warden: --%s given twice ('%.200s', then '%.200s'): give it "
					"once%s\n", o->name, given[i].arg, optarg,
				val == 'p' ? " (to layer one profile on another, `include` it)" : "");
			return '?';
		}
	if (ngiven < OPTS_MAX)
		given[ngiven++] = (typeof(given[0])){ val, optarg };
	return val;
}

int cli_getopt(int argc, char **argv, const char *path)
{
	const struct cli_cmd *c = cli_find(path);
	if (!c) {
		fprintf(stderr, "warden: internal error: no command '%s' in the table\n", path);
		exit(EXIT_WARDEN);
	}
	/* a new parse: another command's table, or optind set back (getopt
	 * only moves it on within one) */
	static int last_optind;
	if (optind <= 1 || optind < last_optind || built.cmd != c)
		ngiven = 0;
	if (built.cmd != c)
		build(c);
	int r = getopt_long(argc, argv, built.shortopts, built.longopts, NULL);
	last_optind = optind;
	return r == -1 || r == '?' || r == ':' ? r : once(c, r);
}

int cli_operands_only(int argc, char **argv, int first, const char *path, const char *usage)
{
	for (int i = first; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return fputs(usage, stdout), 0;
	optind = first;
	if (cli_getopt(argc, argv, path) != -1)
		return fputs(usage, stderr), EXIT_USAGE;
	return -1;
}
