/* task_cmd.c - `warden task list|diff|remove`: the workspaces of `warden run
 * --task NAME` (src/session/task.h). */
#include <stdio.h>
#include <string.h>

#include "../audit/audit.h"
#include "../common/util.h"
#include "../session/task.h"
#include "cli.h"
#include "cmdtab.h"

static const char task_usage[] =
	"usage: warden task list [-w DIR]\n"
	"       warden task diff NAME [-w DIR]\n"
	"       warden task remove NAME [-w DIR]\n"
	"\n"
	"The workspaces of `warden run --task NAME`: in a git repository a worktree\n"
	"on branch warden/NAME in REPO.warden-tasks/NAME, elsewhere a copy there.\n"
	"\n"
	"  list     each task: name, branch, commits ahead of HEAD, in use or idle, path\n"
	"  diff     what the task changed: its branch against HEAD (HEAD...warden/NAME),\n"
	"           then what its worktree holds uncommitted; a copy: diff -ruN\n"
	"  remove   remove the task's worktree (uncommitted changes in it are lost;\n"
	"           the branch stays: git branch -D warden/NAME drops it) or its copy;\n"
	"           refused while a session runs in it\n"
	"  -w, --workspace DIR  the repository or directory (default: the current one)\n";

int cmd_task(int argc, char **argv)
{
	const char *ws = NULL;
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "task")) != -1) {
		switch (c) {
		case 'w': ws = optarg; break;
		case 'h': fputs(task_usage, stdout); return 0;
		default: fputs(task_usage, stderr); return 2;
		}
	}
	const char *sub = optind < argc ? argv[optind] : NULL;
	const char *name = optind + 1 < argc ? argv[optind + 1] : NULL;
	bool list = sub && strcmp(sub, "list") == 0;
	bool named = sub && (strcmp(sub, "diff") == 0 || strcmp(sub, "remove") == 0);
	if (!(list && !name) && !(named && name && optind + 2 == argc)) {
		fputs(task_usage, stderr);
		return 2;
	}
	const char *home = user_home();
	_cleanup_free_ char *logdir = home ? audit_dir(home) : NULL;
	if (!logdir) {
		fprintf(stderr, "warden: task: no directory for warden's locks (set HOME)\n");
		return EXIT_WARDEN;
	}
	_cleanup_free_ char *lockdir = xasprintf("%s/locks", logdir);
	struct werr e = { 0 };
	int r;
	if (list) {
		r = task_list(ws, lockdir, stdout, &e);
	} else {
		_cleanup_(task_free) struct task t = { .lock_fd = -1 };
		r = task_locate(&t, name, ws, &e);
		if (r == 0 && strcmp(sub, "diff") == 0)
			r = task_diff(&t, &e);
		else if (r == 0) {
			r = task_remove(&t, lockdir, &e);
			if (r == 0)
				printf("removed %s%s%s%s\n", t.dir, t.branch ? "; branch " : "",
				       t.branch ? t.branch : "", t.branch ? " kept" : "");
		}
	}
	if (r < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	return 0;
}
