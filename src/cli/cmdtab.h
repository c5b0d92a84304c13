/* cmdtab.h - the one table of warden's commands, their subcommands and
 * options. The parser's getopt_long tables are built from it at run time
 * (cli_getopt), `warden --help` lists its commands, `warden __complete`
 * writes the shell completions from it and the man pages' test checks every
 * option in it is documented: none of them can drift from the parser.
 *
 * Adding a command: write its `struct cli_opt` array (ending with { 0 }) and
 * a `struct cli_cmd` entry in cli_commands[] (cmdtab.c); parse with
 * cli_getopt(argc, argv, "NAME") or, for a subcommand, "NAME SUB". */
#pragma once

#include <stdbool.h>

/* What an option's argument (or a command's operands) is, for completion. */
enum cli_arg {
	CLI_NONE,    /* no argument */
	CLI_FILE,    /* a file name */
	CLI_DIR,     /* a directory */
	CLI_SESSION, /* a session id (from the audit logs) */
	CLI_WORDS,   /* one of the words in `words` */
	CLI_TEXT,    /* free text */
	CLI_COMMAND, /* a command and its arguments (operands only) */
};

struct cli_opt {
	const char *name;    /* the long name, without "--" */
	int val;             /* what getopt_long returns for it: the parser's case */
	bool has_short;      /* -val is accepted too (val is then a letter) */
	enum cli_arg arg;    /* CLI_NONE: takes no argument */
	const char *metavar; /* the argument's name in help (FILE, NAME, ...) */
	const char *words;   /* CLI_WORDS: the choices, space separated */
	const char *help;    /* one line; ending in CLI_REPEATABLE when the option
			      * may be given more than once (a list): any other
			      * option with an argument given twice is refused by
			      * cli_getopt, never silently the last one counting */
};

#define CLI_REPEATABLE "(repeatable"

struct cli_cmd {
	const char *name;             /* "run", or a subcommand's own word ("show") */
	const char *synopsis;         /* what follows the name in a usage line */
	const char *summary;          /* one line: what it does */
	const char *getopt_flags;     /* getopt's leading flags: "+": stop at the first operand */
	const struct cli_opt *opts;   /* ends with { 0 }; NULL: none */
	const struct cli_cmd *subs;   /* its subcommands, ends with { 0 }; NULL: none */
	enum cli_arg operand;         /* what its operands are, for completion */
	const char *operand_words;    /* operand CLI_WORDS: the choices */
	int (*run)(int argc, char **argv); /* top-level commands: argv[0] is the command */
	bool hidden;                  /* internal: not listed, not completed, no man page */
};

extern const struct cli_cmd cli_commands[]; /* ends with { 0 } */

/* The command at PATH: "run", or "log show" (a subcommand). NULL if none. */
const struct cli_cmd *cli_find(const char *path);

/* getopt_long over the options of the command at PATH (which must exist):
 * the long options and the short ones (with their arguments) come from the
 * table. Same contract as getopt_long (optind, optarg, -1 at the end), and
 * an option with an argument given a second time (not CLI_REPEATABLE) is
 * said on stderr and returned as '?'. A parse starts with optind 1 (or 0). */
int cli_getopt(int argc, char **argv, const char *path);

/* The options of a command at PATH that takes none but -h and --help,
 * its arguments from argv[first] on: -1 with optind at its operands (an
 * option after one moved before it, as getopt does), or the exit status:
 * usage on stdout for -h or --help (0), on stderr after getopt's word on
 * any other option (EXIT_USAGE). */
int cli_operands_only(int argc, char **argv, int first, const char *path, const char *usage);

/* The argument kind's name as the completion scripts and tests see it. */
const char *cli_arg_name(enum cli_arg a);
