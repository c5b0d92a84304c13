/* test_workspace_gitrebase.c - unit tests of what a rebase's or a
 * cherry-pick's state would run on the host's next --continue
 * (src/workspace/gitrebase.c): a todo's exec lines as git parses them
 * ("exec" or "x", blanks before and after, a carriage return, not
 * "execute" nor a comment), judged against what was there at start
 * ("x make" is "exec make"); a NUL does not hide a line after it; a
 * merge strategy of git's own kept, any other (a path above all) not
 * unless there at start; a cherry-pick's options.strategy in git's
 * config syntax; a todo that is a symlink or a FIFO refused, without a
 * hang; nothing there at start for a gitdir outside the workspace. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/workspace/plan.h"
#include "check.h"
#include "files.h"

static int dirfd_;

static void put(const char *rel, const char *text, size_t len)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, rel);
	spit(p, text, len);
}

static void puts_(const char *rel, const char *text) { put(rel, text, strlen(text)); }

static struct walk_entry entry(const char *name)
{
	return (struct walk_entry){ .dirfd = dirfd_, .name = name, .rel = name, .type = DT_DIR };
}

/* Judged against plan (NULL: nothing at start); why returned in w. */
static bool plain(const struct ws_plan *plan, const char *name, char w[WS_WHY_MAX])
{
	struct walk_entry we = entry(name);
	return ws_rebase_plain(plan, &we, w);
}

static void test_todo(void)
{
	char w[WS_WHY_MAX];
	struct ws_plan plan = { 0 };
	mkdirat(dirfd_, "rebase-merge", 0700);
	puts_("rebase-merge/git-rebase-todo",
	      "pick 1234 one\n"
	      "# exec commented\n"
	      "execute not-a-command\n"
	      "exec\tmake test\n"
	      "  x   npm test\r\n"
	      "xargs nothing\n");
	struct walk_entry we = entry("rebase-merge");
	ws_rebase_note(&plan, &we);
	CHECK(plan.rebase_runs.n == 2);
	CHECK(strv_contains(&plan.rebase_runs, "exec make test"));
	CHECK(strv_contains(&plan.rebase_runs, "exec npm test"));
	CHECK(plain(&plan, "rebase-merge", w));
	CHECK(w[0] == '\0');
	/* fewer, and the same spelled otherwise: kept */
	puts_("rebase-merge/git-rebase-todo", "x make test\n\n");
	CHECK(plain(&plan, "rebase-merge", w));
	/* one more: refused, named */
	puts_("rebase-merge/git-rebase-todo", "exec make test\nexec curl x | sh\n");
	CHECK(!plain(&plan, "rebase-merge", w));
	CHECK(strstr(w, "`curl x | sh`") != NULL);
	/* the same todo for a gitdir with no record (a task's) */
	puts_("rebase-merge/git-rebase-todo", "exec make test\n");
	CHECK(!plain(NULL, "rebase-merge", w));
	/* a line after a NUL is judged too; a bare exec is one */
	put("rebase-merge/git-rebase-todo", "pick 1\0exec evil\n", 17);
	CHECK(!plain(&plan, "rebase-merge", w));
	CHECK(strstr(w, "`evil`") != NULL);
	puts_("rebase-merge/git-rebase-todo", "exec\n");
	CHECK(!plain(&plan, "rebase-merge", w));
	/* none at all, or no todo: nothing runs */
	puts_("rebase-merge/git-rebase-todo", "pick 1 a\nbreak\n");
	CHECK(plain(NULL, "rebase-merge", w));
	_cleanup_free_ char *todo = xasprintf("%s/rebase-merge/git-rebase-todo", tmpdir);
	unlink(todo);
	CHECK(plain(NULL, "rebase-merge", w));
	/* a symlink, a FIFO: refused, without a hang */
	CHECK(symlink("/dev/null", todo) == 0);
	CHECK(!plain(&plan, "rebase-merge", w));
	CHECK(strstr(w, "git-rebase-todo") != NULL);
	unlink(todo);
	CHECK(mkfifo(todo, 0600) == 0);
	CHECK(!plain(&plan, "rebase-merge", w));
	CHECK(strstr(w, "not a regular file") != NULL);
	unlink(todo);
	strv_free(&plan.rebase_dirs);
	strv_free(&plan.rebase_runs);
}

static void test_strategy(void)
{
	char w[WS_WHY_MAX];
	struct ws_plan plan = { 0 };
	puts_("rebase-merge/strategy", "resolve\n");
	CHECK(plain(NULL, "rebase-merge", w));
	puts_("rebase-merge/strategy", "ort\r\n");
	CHECK(plain(NULL, "rebase-merge", w));
	puts_("rebase-merge/strategy", "../../x\n");
	CHECK(!plain(NULL, "rebase-merge", w));
	CHECK(strstr(w, "`../../x` is none of git's own") != NULL);
	put("rebase-merge/strategy", "ort\0x", 5);
	CHECK(!plain(NULL, "rebase-merge", w));
	/* one of the user's, there at start: kept */
	puts_("rebase-merge/strategy", "custom\n");
	struct walk_entry we = entry("rebase-merge");
	ws_rebase_note(&plan, &we);
	CHECK(plain(&plan, "rebase-merge", w));
	puts_("rebase-merge/strategy", "other\n");
	CHECK(!plain(&plan, "rebase-merge", w));
	strv_free(&plan.rebase_dirs);
	strv_free(&plan.rebase_runs);
}

static void test_sequencer(void)
{
	char w[WS_WHY_MAX];
	CHECK(ws_rebase_dir("sequencer") && ws_rebase_dir("rebase-merge"));
	CHECK(!ws_rebase_dir("rebase-apply"));
	mkdirat(dirfd_, "sequencer", 0700);
	CHECK(plain(NULL, "sequencer", w));
	puts_("sequencer/opts", "[options]\n\tno-commit = true\n\tstrategy = ort\n");
	CHECK(plain(NULL, "sequencer", w));
	puts_("sequencer/opts", "[options]\n\tstrategy = \"../../x\"\n");
	CHECK(!plain(NULL, "sequencer", w));
	CHECK(strstr(w, "`../../x`") != NULL);
	/* a file git refuses whole runs nothing */
	puts_("sequencer/opts", "[options\n\tstrategy = ../../x\n");
	CHECK(plain(NULL, "sequencer", w));
	/* the todo of a cherry-pick is not a rebase's: only picks */
	puts_("sequencer/todo", "exec evil\n");
	CHECK(plain(NULL, "sequencer", w));
}

int main(void)
{
	tmpdir_make("warden-gitrebase");
	dirfd_ = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0)
		return 2;
	test_todo();
	test_strategy();
	test_sequencer();
	close(dirfd_);
	tmpdir_remove();
	return check_status_counted("gitrebase");
}
