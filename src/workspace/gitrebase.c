/* gitrebase.c - what a rebase or a cherry-pick in progress would run on
 * the host's next `git rebase --continue` or `git cherry-pick --continue`
 * (plan.h: ws_rebase_note, ws_rebase_plain). Two things there are
 * programs: the exec lines of an interactive rebase's todo
 * (rebase-merge/git-rebase-todo, "exec CMD" or "x CMD", run by the shell),
 * and a merge strategy that is not one of git's own (rebase-merge/strategy,
 * sequencer/opts' options.strategy): git runs `git merge-NAME`, a program
 * found on PATH, or by path when NAME has a slash ("../../x" runs the
 * worktree's ./x). `git status` shows a pick where the strategy runs a
 * program. The scan notes what each such directory inside a git
 * directory holds at start; the sweep keeps one that runs nothing but
 * that and git's own strategies, and moves any other aside whole. */
#include "plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "gitconfig.h"

#define TODO_MAX (16 << 20)   /* a todo of some 300,000 commits */
#define OPTS_MAX (64 * 1024)
#define STRATEGY_MAX 4096
#define RUNS_NOTED_MAX 10000  /* distinct things noted at start, in all */

/* Merge strategies git has of its own: built in, or its scripts in its
 * exec path, which git puts before PATH. */
static const char *const own_strategies[] = {
	"ort", "recursive", "resolve", "octopus", "ours", "subtree",
};

bool ws_rebase_dir(const char *name)
{
	return strcmp(name, "rebase-merge") == 0 || strcmp(name, "sequencer") == 0;
}

/* Called with each thing the directory would run ("exec CMD", "strategy
 * NAME"); false stops. */
typedef bool (*run_fn)(void *ctx, const char *what);

/* A file git reads there: NULL with *gone when it is not there, NULL
 * with why said when it cannot be read as a regular file (git follows a
 * symlink, and the user's git may read what warden cannot). */
static char *read_part(int dfd, const char *dir, const char *name, size_t max, size_t *len,
		       bool *gone, char why[WS_WHY_MAX])
{
	char what[READ_WHY_MAX];
	char *text = NULL;
	*gone = false;
	if (read_regular_file_at(dfd, name, O_NOFOLLOW, max, &text, len, what) == 0)
		return text;
	if (errno == ENOENT) {
		*gone = true;
		return NULL;
	}
	ws_say(why, "%s/%s: %s", dir, name, errno == ELOOP ? "a symlink" : what);
	return NULL;
}

/* Each exec line of a todo, as git parses one: after blanks, "exec" or
 * "x" and a blank or the line's end, the command after blanks, a carriage
 * return before the line's end dropped. A NUL ends a line too (git stops
 * there; the rest is judged as well). */
static bool todo_execs(char *text, size_t len, run_fn fn, void *ctx)
{
	for (size_t i = 0; i < len;) {
		size_t end = i;
		while (end < len && text[end] != '\n' && text[end] != '\0')
			end++;
		char *line = text + i;
		text[end] = '\0';
		if (end > i && text[end - 1] == '\r')
			text[end - 1] = '\0';
		i = end + 1;
		line += strspn(line, " \t");
		size_t cmd = strncmp(line, "exec", 4) == 0 ? 4 : line[0] == 'x' ? 1 : 0;
		if (!cmd || (line[cmd] && line[cmd] != ' ' && line[cmd] != '\t'))
			continue;
		const char *arg = line + cmd + strspn(line + cmd, " \t");
		_cleanup_free_ char *what = xasprintf("exec %s", arg);
		if (!fn(ctx, what))
			return false;
	}
	return true;
}

struct opts_ctx {
	run_fn fn;
	void *ctx;
	bool stopped;
};

static int opts_setting(void *ctx, char *var, const char *value)
{
	struct opts_ctx *o = ctx;
	if (strcmp(var, "options.strategy") != 0)
		return 0;
	_cleanup_free_ char *what = xasprintf("strategy %s", value ? value : "");
	if (o->fn(o->ctx, what))
		return 0;
	o->stopped = true;
	return -1;
}

/* What the directory name (rebase-merge or sequencer) of dirfd would run.
 * false when fn stopped, or with why said when a file of it cannot be
 * read. */
static bool each_run(int dirfd, const char *name, run_fn fn, void *ctx, char why[WS_WHY_MAX])
{
	mode_t restore;
	struct stat st;
	int dfd = walk_open_dir(dirfd, name, &restore, &st);
	if (dfd < 0)
		return ws_say(why, "%s cannot be read", name);
	bool ok = true, gone;
	size_t len = 0;
	if (strcmp(name, "sequencer") == 0) {
		_cleanup_free_ char *opts = read_part(dfd, name, "opts", OPTS_MAX, &len, &gone, why);
		struct opts_ctx o = { .fn = fn, .ctx = ctx };
		/* a file git cannot parse runs nothing: git refuses it whole */
		if (opts)
			gitcfg_each(opts, len, opts_setting, &o);
		ok = !o.stopped && (opts || gone);
	} else {
		_cleanup_free_ char *todo = read_part(dfd, name, "git-rebase-todo", TODO_MAX, &len,
						      &gone, why);
		ok = (todo || gone) && (!todo || todo_execs(todo, len, fn, ctx));
		_cleanup_free_ char *s = ok ? read_part(dfd, name, "strategy", STRATEGY_MAX, &len,
							&gone, why) : NULL;
		ok = ok && (s || gone);
		if (s) {
			/* read as git does: one line break at the end dropped */
			if (len && s[len - 1] == '\n')
				s[--len] = '\0';
			if (len && s[len - 1] == '\r')
				s[--len] = '\0';
			_cleanup_free_ char *what = xasprintf("strategy %s", s);
			ok = strlen(s) == len && fn(ctx, what);
			if (strlen(s) != len)
				ws_say(why, "%s/strategy holds a NUL", name);
		}
	}
	walk_close_dir(dfd, restore, name);
	return ok;
}

struct note_ctx {
	struct ws_plan *plan;
	const char *rel;
};

static bool noted(const struct ws_plan *plan, const char *rel, const char *what)
{
	for (size_t i = 0; i < plan->rebase_dirs.n; i++)
		if (strcmp(plan->rebase_runs.v[i], what) == 0 &&
		    strcmp(plan->rebase_dirs.v[i], rel) == 0)
			return true;
	return false;
}

static bool note_one(void *ctx, const char *what)
{
	struct note_ctx *n = ctx;
	if (noted(n->plan, n->rel, what))
		return true;
	if (n->plan->rebase_dirs.n >= RUNS_NOTED_MAX)
		return false; /* the rest judged as new at the end */
	strv_push(&n->plan->rebase_dirs, n->rel);
	strv_push(&n->plan->rebase_runs, what);
	return true;
}

void ws_rebase_note(struct ws_plan *plan, const struct walk_entry *we)
{
	struct note_ctx n = { .plan = plan, .rel = we->rel };
	char why[WS_WHY_MAX] = "";
	each_run(we->dirfd, we->name, note_one, &n, why);
}

struct judge_ctx {
	const struct ws_plan *plan; /* NULL: nothing there at start */
	const char *rel;
	char *why;
};

static bool judge_one(void *ctx, const char *what)
{
	struct judge_ctx *j = ctx;
	if (strncmp(what, "strategy ", 9) == 0)
		for (size_t i = 0; i < ARRAY_LEN(own_strategies); i++)
			if (strcmp(what + 9, own_strategies[i]) == 0)
				return true;
	if (j->plan && noted(j->plan, j->rel, what))
		return true;
	if (what[0] == 'e')
		return ws_say(j->why, "its todo runs `%.100s`, which was not there at start",
			      what + 5);
	return ws_say(j->why, "its merge strategy `%.60s` is none of git's own: git would run "
		      "it as a program", what + 9);
}

bool ws_rebase_plain(const struct ws_plan *plan, const struct walk_entry *we,
		     char why[WS_WHY_MAX])
{
	why[0] = '\0';
	struct judge_ctx j = { .plan = plan, .rel = we->rel, .why = why };
	return each_run(we->dirfd, we->name, judge_one, &j, why);
}
