/* cli.h - the subcommands' entry points and what they share. */
#pragma once

#define EXIT_WARDEN 125 /* warden itself failed */
#define EXIT_USAGE 2    /* bad usage: an unknown option, an argument missing, extra or
			 * unreadable (warden run: 125, its command's status passes) */

int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_state(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_shim(int argc, char **argv);     /* shim install|remove|list (shim_cmd.c) */
int cmd_approve(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_undo(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_discard(int argc, char **argv);
int cmd_task(int argc, char **argv);    /* task list|diff|remove (task_cmd.c) */
int cmd_import(int argc, char **argv);
int cmd_init(int argc, char **argv);

struct policy;
struct session_agent;
/* `show [--profile FILE] [--agent NAME|none] [-- COMMAND]` (argv[1] "show"):
 * the policy loaded as a session would load it, and COMMAND (or NULL).
 * -1 when loaded; else the exit status (usage, --help, an error said). */
int cli_show_policy(int argc, char **argv, const char *usage, struct policy *p,
		    struct session_agent *ag, const char **cmd);
int cmd_status(int argc, char **argv);
int cmd_action(int argc, char **argv);  /* freeze, resume, kill (argv[0]) */
int cmd_hook(int argc, char **argv);    /* inside the sandbox: an agent client's hook command */
int cmd_probe(int argc, char **argv); /* hidden: the probe runner of `warden check` */
int cmd_connect(int argc, char **argv); /* hidden: ssh's ProxyCommand inside the sandbox */
int cmd_complete(int argc, char **argv); /* hidden: a shell's completion script */

struct werr;
/* Where the checkpoint commands look (ckpt_dirs.c): the session logs, the
 * store and the current directory, each allocated. -1 with e set (and
 * nothing held) when one is not known. */
struct ckpt_dirs {
	char *logdir, *storedir, *cwd;
};
int ckpt_dirs_get(struct ckpt_dirs *d, struct werr *e);
void ckpt_dirs_free(struct ckpt_dirs *d);
