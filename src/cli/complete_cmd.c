/* complete_cmd.c - `warden __complete bash|zsh|fish` (hidden): the shell
 * completion script, written from the command table (cmdtab.c), so the
 * completions offer exactly the options the parser takes. The build writes
 * the three scripts with it; they are installed in the shells' standard
 * directories. `__complete table` prints the table for the tests (every
 * option must be in its man page). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmdtab.h"

/* Each completable command: a top-level command without subcommands, or
 * "CMD SUB" for each subcommand. */
typedef void (*leaf_fn)(FILE *out, const char *path, const struct cli_cmd *c);

static void each_leaf(FILE *out, leaf_fn fn)
{
	char path[128];
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		if (c->hidden)
			continue;
		if (!c->subs) {
			fn(out, c->name, c);
			continue;
		}
		for (const struct cli_cmd *s = c->subs; s->name; s++) {
			snprintf(path, sizeof path, "%s %s", c->name, s->name);
			fn(out, path, s);
		}
	}
}

/* S in single quotes for sh (and zsh): ' becomes '\'' */
static void put_sq(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; s && *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

/* S inside a single-quoted zsh _arguments spec's [description] or message:
 * the characters _arguments reads escaped, ' closed and reopened. */
static void put_zsh_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

/* S in single quotes for fish: \ and ' escaped */
static void put_fish_sq(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; s && *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('\'', out);
}

/* ---- bash ---- */

static void bash_reply(FILE *out, enum cli_arg a, const char *words)
{
	switch (a) {
	case CLI_FILE:
		fputs("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))", out);
		break;
	case CLI_DIR:
		fputs("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))", out);
		break;
	case CLI_SESSION: fputs("COMPREPLY=($(compgen -W \"$(_warden_sessions)\" -- \"$cur\"))", out); break;
	case CLI_WORDS:
		fputs("COMPREPLY=($(compgen -W ", out);
		put_sq(out, words);
		fputs(" -- \"$cur\"))", out);
		break;
	case CLI_COMMAND: fputs("COMPREPLY=($(compgen -c -- \"$cur\"))", out); break;
	case CLI_NONE:
	case CLI_TEXT: fputs("COMPREPLY=()", out); break;
	}
}

static void bash_opts(FILE *out, const char *path, const struct cli_cmd *c)
{
	fputs("\t", out);
	put_sq(out, path);
	fputs(") opts=", out);
	fputc('\'', out);
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		fprintf(out, "%s--%s", o == c->opts ? "" : " ", o->name);
		if (o->has_short)
			fprintf(out, " -%c", o->val);
	}
	fputs("' ;;\n", out);
}

static void bash_optargs(FILE *out, const char *path, const struct cli_cmd *c)
{
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		if (o->arg == CLI_NONE)
			continue;
		fprintf(out, "\t'%s:--%s'", path, o->name);
		if (o->has_short)
			fprintf(out, " | '%s:-%c'", path, o->val);
		fputs(") ", out);
		bash_reply(out, o->arg, o->words);
		fputs("; return ;;\n", out);
	}
}

static void bash_operands(FILE *out, const char *path, const struct cli_cmd *c)
{
	if (c->operand == CLI_NONE)
		return;
	fprintf(out, "\t'%s') ", path);
	bash_reply(out, c->operand, c->operand_words);
	fputs(" ;;\n", out);
}

static void bash(FILE *out)
{
	fputs("# bash completion for warden: written by `warden __complete bash` from the\n"
	      "# table of its commands and options (the one its parser uses).\n"
	      "_warden_sessions() { warden log list 2>/dev/null | awk 'NR > 1 { print $1 }'; }\n"
	      "_warden() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal path=${COMP_WORDS[1]} opts=\n"
	      "\tCOMPREPLY=()\n"
	      "\tif ((COMP_CWORD == 1)); then\n"
	      "\t\tCOMPREPLY=($(compgen -W '--help --version",
	      out);
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (!c->hidden)
			fprintf(out, " %s", c->name);
	fputs("' -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase $path in\n",
	      out);
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		if (c->hidden || !c->subs)
			continue;
		fprintf(out, "\t%s)\n\t\tif ((COMP_CWORD == 2)); then\n\t\t\tCOMPREPLY=($(compgen -W '", c->name);
		for (const struct cli_cmd *s = c->subs; s->name; s++)
			fprintf(out, "%s%s", s == c->subs ? "" : " ", s->name);
		fputs("' -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n\t\tpath=\"$path ${COMP_WORDS[2]}\" ;;\n", out);
	}
	fputs("\tesac\n\tcase $path in\n", out);
	each_leaf(out, bash_opts);
	fputs("\t*) return ;;\n\tesac\n\tcase \"$path:$prev\" in\n", out);
	each_leaf(out, bash_optargs);
	fputs("\tesac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase $path in\n",
	      out);
	each_leaf(out, bash_operands);
	fputs("\tesac\n}\ncomplete -F _warden warden\n", out);
}

/* ---- zsh ---- */

static void zsh_action(FILE *out, enum cli_arg a, const char *words)
{
	switch (a) {
	case CLI_FILE: fputs("_files", out); break;
	case CLI_DIR: fputs("_files -/", out); break;
	case CLI_SESSION: fputs("_warden_sessions", out); break;
	case CLI_WORDS: fputs("(", out); put_zsh_text(out, words); fputs(")", out); break;
	case CLI_COMMAND: fputs("_normal", out); break;
	case CLI_NONE:
	case CLI_TEXT: break;
	}
}

static void zsh_leaf(FILE *out, const char *path, const struct cli_cmd *c)
{
	fprintf(out, "\t'%s')\n\t\t_arguments -s", path);
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		fputs(" \\\n\t\t\t", out);
		if (o->arg != CLI_NONE)
			fputs("'*'", out);
		if (o->has_short)
			fprintf(out, "{-%c,--%s}'", o->val, o->name);
		else
			fprintf(out, "'--%s", o->name);
		fputc('[', out);
		put_zsh_text(out, o->help);
		fputc(']', out);
		if (o->arg != CLI_NONE) {
			fputc(':', out);
			put_zsh_text(out, o->metavar ? o->metavar : "ARG");
			fputc(':', out);
			zsh_action(out, o->arg, o->words);
		}
		fputc('\'', out);
	}
	if (c->operand == CLI_COMMAND)
		fputs(" \\\n\t\t\t'*::command:_normal'", out);
	else if (c->operand != CLI_NONE) {
		fprintf(out, " \\\n\t\t\t'*:%s:", cli_arg_name(c->operand));
		zsh_action(out, c->operand, c->operand_words);
		fputc('\'', out);
	}
	fputs(" ;;\n", out);
}

static void zsh_describe(FILE *out, const struct cli_cmd *v)
{
	for (const struct cli_cmd *c = v; c->name; c++) {
		if (c->hidden)
			continue;
		fputs(" \\\n\t\t", out);
		char line[512];
		snprintf(line, sizeof line, "%s:%s", c->name, c->summary ? c->summary : "");
		put_sq(out, line);
	}
}

static void zsh(FILE *out)
{
	fputs("#compdef warden\n"
	      "# zsh completion for warden: written by `warden __complete zsh` from the\n"
	      "# table of its commands and options (the one its parser uses).\n"
	      "_warden_sessions() {\n"
	      "\tlocal -a ids\n"
	      "\tids=(${(f)\"$(warden log list 2>/dev/null | awk 'NR > 1 { print $1 }')\"})\n"
	      "\tcompadd -a ids\n"
	      "}\n"
	      "_warden() {\n"
	      "\tlocal -a cmds subs\n"
	      "\tcmds=(",
	      out);
	zsh_describe(out, cli_commands);
	fputs(")\n"
	      "\tif (( CURRENT == 2 )); then\n"
	      "\t\t_describe -t commands 'warden command' cmds\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tlocal path=$words[2]\n"
	      "\tcase $path in\n",
	      out);
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		if (c->hidden || !c->subs)
			continue;
		fprintf(out, "\t%s)\n\t\tsubs=(", c->name);
		zsh_describe(out, c->subs);
		fputs(")\n\t\tif (( CURRENT == 3 )); then\n"
		      "\t\t\t_describe -t subcommands 'subcommand' subs\n"
		      "\t\t\treturn\n\t\tfi\n"
		      "\t\tpath=\"$path $words[3]\"\n"
		      "\t\tshift words\n\t\t(( CURRENT-- )) ;;\n",
		      out);
	}
	fputs("\tesac\n\tshift words\n\t(( CURRENT-- ))\n\tcase $path in\n", out);
	each_leaf(out, zsh_leaf);
	fputs("\tesac\n}\n"
	      "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
	      "\t_warden \"$@\"\n"
	      "else\n"
	      "\tcompdef _warden warden\n"
	      "fi\n",
	      out);
}

/* ---- fish ---- */

static void fish_arg(FILE *out, enum cli_arg a, const char *words)
{
	switch (a) {
	case CLI_FILE: fputs(" -r -F", out); break;
	case CLI_DIR: fputs(" -x -a '(__fish_complete_directories)'", out); break;
	case CLI_SESSION: fputs(" -x -a '(__warden_sessions)'", out); break;
	case CLI_WORDS: fputs(" -x -a ", out); put_fish_sq(out, words); break;
	case CLI_COMMAND: fputs(" -x -a '(__fish_complete_command)'", out); break;
	case CLI_TEXT: fputs(" -x", out); break;
	case CLI_NONE: break;
	}
}

static void fish_leaf(FILE *out, const char *path, const struct cli_cmd *c)
{
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		fprintf(out, "complete -c warden -n '__warden_at %s' -l %s", path, o->name);
		if (o->has_short)
			fprintf(out, " -s %c", o->val);
		fish_arg(out, o->arg, o->words);
		fputs(" -d ", out);
		put_fish_sq(out, o->help);
		fputc('\n', out);
	}
	if (c->operand != CLI_NONE) {
		fprintf(out, "complete -c warden -n '__warden_at %s'", path);
		if (c->operand == CLI_FILE)
			fputs(" -F", out);
		else
			fish_arg(out, c->operand, c->operand_words);
		fputc('\n', out);
	}
}

static void fish(FILE *out)
{
	fputs("# fish completion for warden: written by `warden __complete fish` from the\n"
	      "# table of its commands and options (the one its parser uses).\n"
	      "function __warden_at --description 'the command line is at warden CMD [SUB]'\n"
	      "\tset -l w (commandline -opc)\n"
	      "\ttest (count $w) -gt (count $argv); or return 1\n"
	      "\tfor i in (seq (count $argv))\n"
	      "\t\tset -l j (math $i + 1)\n"
	      "\t\ttest \"$w[$j]\" = \"$argv[$i]\"; or return 1\n"
	      "\tend\n"
	      "end\n"
	      "function __warden_sub --description 'the command line needs CMD\\'s subcommand'\n"
	      "\tset -l w (commandline -opc)\n"
	      "\ttest (count $w) -eq 2; and test \"$w[2]\" = \"$argv[1]\"\n"
	      "end\n"
	      "function __warden_sessions\n"
	      "\twarden log list 2>/dev/null | awk 'NR > 1 { print $1 }'\n"
	      "end\n"
	      "complete -c warden -f\n"
	      "complete -c warden -n 'test (count (commandline -opc)) -eq 1' -l help -d 'print the help'\n"
	      "complete -c warden -n 'test (count (commandline -opc)) -eq 1' -l version -d 'print the version'\n",
	      out);
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		if (c->hidden)
			continue;
		fprintf(out, "complete -c warden -n 'test (count (commandline -opc)) -eq 1' -a %s -d ",
			c->name);
		put_fish_sq(out, c->summary);
		fputc('\n', out);
		for (const struct cli_cmd *s = c->subs; s && s->name; s++) {
			fprintf(out, "complete -c warden -n '__warden_sub %s' -a %s -d ", c->name, s->name);
			put_fish_sq(out, s->summary);
			fputc('\n', out);
		}
	}
	each_leaf(out, fish_leaf);
}

/* ---- the table itself, for tests and tools ---- */

/* One line per completable command ("PATH"), then one per option
 * ("PATH<TAB>--name<TAB>-x or -<TAB>argument kind"). */
static void table_leaf(FILE *out, const char *path, const struct cli_cmd *c)
{
	fprintf(out, "%s\n", path);
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		fprintf(out, "%s\t--%s\t", path, o->name);
		if (o->has_short)
			fprintf(out, "-%c", o->val);
		else
			fputc('-', out);
		fprintf(out, "\t%s\n", cli_arg_name(o->arg));
	}
}

int cmd_complete(int argc, char **argv)
{
	static const char usage[] = "usage: warden __complete bash|zsh|fish|table\n";
	if (argc != 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(argv[1], "bash") == 0)
		bash(stdout);
	else if (strcmp(argv[1], "zsh") == 0)
		zsh(stdout);
	else if (strcmp(argv[1], "fish") == 0)
		fish(stdout);
	else if (strcmp(argv[1], "table") == 0)
		each_leaf(stdout, table_leaf);
	else {
		fputs(usage, stderr);
		return 2;
	}
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_WARDEN;
}
