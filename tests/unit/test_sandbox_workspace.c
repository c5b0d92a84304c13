/* test_sandbox_workspace.c - unit tests of the host side of the workspace
 * (src/workspace/: place.c, workspace.c, gitprotect.c, sweep.c,
 * placeholder.c), on temporary trees: which directories
 * workspace_resolve refuses, what workspace_plan protects, masks and pins
 * (at any depth, without following symlinks out of the tree, without opening
 * what it finds), the placeholders for missing protected names and how
 * sessions share them, and the sweep that moves aside a .git made during the
 * session, unless git init's own (gitplain.c). */
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "src/workspace/plan.h"
#include "src/sandbox/sandbox.h"
#include "check.h"
#include "profile.h"

static char tmpdir[] = "/tmp/warden-test-ws-XXXXXX";

static char *tmp_path(const char *rel) { return xasprintf("%s/%s", tmpdir, rel); }

static void die(const char *what, const char *rel)
{
	fprintf(stderr, "setting up %s %s: %s\n", what, rel, strerror(errno));
	exit(2);
}

static void mk(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	if (mkdir_p(p, 0755, NULL) < 0)
		die("directory", rel);
}

static void touch(const char *rel, const char *text)
{
	_cleanup_free_ char *p = tmp_path(rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		die("file", rel);
	close(fd);
}

static void ln(const char *target, const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	if (symlink(target, p) < 0)
		die("symlink", rel);
}

static void node(const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = tmp_path(rel);
	if (mknod(p, mode, 0) < 0 || chmod(p, mode & 07777) < 0)
		die("node", rel);
}

static bool exists(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

/* The plan's entry for rel, NULL when there is none; an entry planned twice
 * is a failure of its own. */
static const struct ws_mount *entry(const struct ws_plan *plan, const char *rel)
{
	const struct ws_mount *found = NULL;
	int times = 0;
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0) {
			found = &plan->m[i];
			times++;
		}
	CHECK(times <= 1);
	if (times > 1)
		fprintf(stderr, "  %s planned %d times\n", rel, times);
	return found;
}

static bool planned(const struct ws_plan *plan, const char *rel, enum ws_mount_kind kind)
{
	const struct ws_mount *m = entry(plan, rel);
	if (m && m->kind == kind)
		return true;
	fprintf(stderr, "  %s: planned as %d, expected %d\n", rel, m ? (int)m->kind : -1, (int)kind);
	return false;
}

/* workspace_resolve must refuse `req` with a message holding `why`. */
static void refused(int line, const char *req, const char *home, const char *why)
{
	struct werr e = { 0 };
	char *out = NULL;
	checks++;
	if (workspace_resolve(req, home, &out, &e) == 0) {
		fprintf(stderr, "%s:%d: workspace %s accepted as %s\n", __FILE__, line, req, out);
		failures++;
	} else if (!strstr(e.msg, why)) {
		fprintf(stderr, "%s:%d: workspace %s: got \"%s\", expected it to say \"%s\"\n",
			__FILE__, line, req, e.msg, why);
		failures++;
	}
	free(out);
}

/* workspace_resolve must accept `req` as the real path `want`. */
static void accepted(int line, const char *req, const char *home, const char *want)
{
	struct werr e = { 0 };
	char *out = NULL;
	checks++;
	if (workspace_resolve(req, home, &out, &e) < 0) {
		fprintf(stderr, "%s:%d: workspace %s refused: %s\n", __FILE__, line, req, e.msg);
		failures++;
	} else if (strcmp(out, want) != 0) {
		fprintf(stderr, "%s:%d: workspace %s resolved to %s, expected %s\n", __FILE__,
			line, req, out, want);
		failures++;
	}
	free(out);
}

static void test_resolve(void)
{
	mk("r/home/u/proj");
	mk("r/work/proj/sub");
	_cleanup_free_ char *home = tmp_path("r/home/u");
	_cleanup_free_ char *proj = tmp_path("r/work/proj");
	_cleanup_free_ char *hproj = tmp_path("r/home/u/proj");

	/* a project, in or out of the home */
	accepted(__LINE__, proj, home, proj);
	accepted(__LINE__, hproj, home, hproj);
	accepted(__LINE__, proj, NULL, proj);

	/* directories that would expose far more than a project (no home
	 * given: each rule on its own) */
	refused(__LINE__, "/", NULL, "it would expose far more than a project");
	refused(__LINE__, "/tmp", NULL, "it would expose far more");
	refused(__LINE__, "/var/tmp", NULL, "it would expose far more");
	refused(__LINE__, "/dev/shm", NULL, "it would expose far more");
	if (access("/home", F_OK) == 0)
		refused(__LINE__, "/home", NULL, "it would expose far more");
	/* system directories, at any depth */
	refused(__LINE__, "/etc", NULL, "inside the system directory /etc");
	refused(__LINE__, "/usr", NULL, "inside the system directory /usr");
	if (access("/usr/share", F_OK) == 0)
		refused(__LINE__, "/usr/share", NULL, "inside the system directory /usr");
	refused(__LINE__, "/proc/self", NULL, "inside the system directory /proc");
	refused(__LINE__, "/dev", NULL, "inside the system directory /dev");

	/* the home, or a directory holding it */
	refused(__LINE__, home, home, "it is your home directory");
	_cleanup_free_ char *homes = tmp_path("r/home");
	_cleanup_free_ char *r = tmp_path("r");
	refused(__LINE__, homes, home, "it contains your home directory");
	refused(__LINE__, r, home, "it contains your home directory");
	refused(__LINE__, tmpdir, home, "it contains your home directory");
	/* the home spelled through a symlink or with a trailing slash is the
	 * same home */
	ln("r/home/u", "homelink");
	_cleanup_free_ char *homelink = tmp_path("homelink");
	refused(__LINE__, home, homelink, "it is your home directory");
	_cleanup_free_ char *slash = xasprintf("%s/", home);
	refused(__LINE__, home, slash, "it is your home directory");

	/* a symlink or ".." is resolved first, then judged */
	ln("r/work/proj", "projlink");
	_cleanup_free_ char *projlink = tmp_path("projlink");
	accepted(__LINE__, projlink, home, proj);
	refused(__LINE__, homelink, home, "it is your home directory");
	ln("/", "rootlink");
	_cleanup_free_ char *rootlink = tmp_path("rootlink");
	refused(__LINE__, rootlink, home, "far more than a project");
	_cleanup_free_ char *dotdot = tmp_path("r/work/proj/sub/../../../home/u");
	refused(__LINE__, dotdot, home, "it is your home directory");
	_cleanup_free_ char *dotdot2 = tmp_path("r/work/proj/../..");
	refused(__LINE__, dotdot2, home, "it contains your home directory");
	refused(__LINE__, "/tmp/..", home, "far more than a project");
	_cleanup_free_ char *dotdot3 = tmp_path("r/work/proj/sub/..");
	accepted(__LINE__, dotdot3, home, proj);

	/* a directory holding a credential store is someone's home */
	static const char *const stores[] = {
		".ssh", ".aws", ".gnupg", ".kube", ".docker", ".password-store",
		".config/gcloud", ".config/gh", ".local/share/keyrings", ".azure",
	};
	for (size_t i = 0; i < ARRAY_LEN(stores); i++) {
		_cleanup_free_ char *rel = xasprintf("r/cred%zu/%s", i, stores[i]);
		_cleanup_free_ char *ws = xasprintf("%s/r/cred%zu", tmpdir, i);
		mk(rel);
		_cleanup_free_ char *why = xasprintf("it holds %s, a credential store", stores[i]);
		refused(__LINE__, ws, home, why);
	}
	/* the home's stores themselves and what lies in them; the home's
	 * .config; a store that is a symbolic link, where it leads (and what
	 * holds that); a .config elsewhere holding gh; a directory of
	 * ~/.config that is no store, and a .config elsewhere without one, are
	 * workspaces */
	mk("r/home/u/.config/gh/sub");
	mk("r/home/u/.config/nvim");
	mk("r/home/u/.aws");
	mk("r/keep/kube");
	_cleanup_free_ char *kube = tmp_path("r/keep/kube");
	ln(kube, "r/home/u/.kube");
	mk("r/copy/.config/gh");
	mk("r/proj2/.config");
	static const struct { const char *rel, *why; } home_cases[] = {
		{ "r/home/u/.config", "it is your ~/.config, where programs keep their settings" },
		{ "r/home/u/.config/gh", "it is your ~/.config/gh, a credential store" },
		{ "r/home/u/.config/gh/sub", "it lies in your ~/.config/gh, a credential store" },
		{ "r/home/u/.aws", "it is your ~/.aws, a credential store" },
		{ "r/keep/kube", "it is your ~/.kube, a credential store" },
		{ "r/keep", "it holds your ~/.kube, a credential store" },
		{ "r/copy/.config", "it holds .config/gh, a credential store" },
	};
	for (size_t i = 0; i < ARRAY_LEN(home_cases); i++) {
		_cleanup_free_ char *ws = tmp_path(home_cases[i].rel);
		refused(__LINE__, ws, home, home_cases[i].why);
	}
	/* by name, with no home: in a store */
	_cleanup_free_ char *ghsub = tmp_path("r/home/u/.config/gh/sub");
	refused(__LINE__, ghsub, NULL, "it is or lies in .config/gh, a credential store");
	_cleanup_free_ char *nvim = tmp_path("r/home/u/.config/nvim");
	accepted(__LINE__, nvim, home, nvim);
	_cleanup_free_ char *proj2 = tmp_path("r/proj2/.config");
	accepted(__LINE__, proj2, home, proj2);

	/* a file of that name is not a store */
	mk("r/plainssh");
	touch("r/plainssh/.ssh", "");
	_cleanup_free_ char *plainssh = tmp_path("r/plainssh");
	accepted(__LINE__, plainssh, home, plainssh);

	/* not there, not a directory: errors with errno */
	struct werr e = { 0 };
	char *out = NULL;
	_cleanup_free_ char *missing = tmp_path("r/missing");
	CHECK(workspace_resolve(missing, home, &out, &e) < 0 && e.errnum == ENOENT);
	touch("r/file", "");
	_cleanup_free_ char *file = tmp_path("r/file");
	CHECK(workspace_resolve(file, home, &out, &e) < 0 && e.errnum == ENOTDIR);
	CHECK(out == NULL);

	/* no argument: the current directory */
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(chdir(proj) == 0);
	accepted(__LINE__, NULL, home, proj);
	CHECK(chdir(cwd) == 0);
}

/* A tree with every kind of entry the plan distinguishes. */
static void make_tree(void)
{
	mk("ws/.git/hooks");
	touch("ws/.git/config", "[core]\n");
	mk("ws/.git/modules");
	node("ws/.bashrc", S_IFIFO | 0644);        /* a FIFO where a file was expected */
	mk("ws/.vscode");
	node("ws/.gitmodules", S_IFSOCK | 0444);   /* another session's placeholder */
	node("ws/.profile", S_IFSOCK | 0644);      /* a socket, not a placeholder */
	touch("ws/.env", "SECRET=1\n");
	node("ws/.env.local", S_IFIFO | 0600);     /* opening it would block */
	mk("ws/src/deep/er");
	touch("ws/src/deep/er/.env.production", "SECRET=2\n");
	mk("ws/src/keys.pem");
	touch("ws/src/keys.pem/inner.key", "");
	touch("ws/src/id_rsa", "");
	touch("ws/src/notes.txt", "");
	mk("ws/src/config");
	touch("ws/src/config/db.secret", "");
	mk("ws/config");
	touch("ws/config/db.secret", "");
	mk("ws/sub");
	touch("ws/sub/.git", "gitdir: ../.git/modules/sub\n");
	/* outside the workspace, reached only through symlinks */
	mk("outside/.git");
	touch("outside/.env", "");
	touch("outside/x.key", "");
	ln("../outside", "ws/out");
	ln("..", "ws/up");
	ln(".", "ws/src/self");
	ln("../outside/.env", "ws/src/linked.key");
}

static void test_plan(void)
{
	make_tree();
	struct policy pol;
	load_profile(&pol, "mask config/*.secret\n");
	_cleanup_free_ char *ws = tmp_path("ws");
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	struct werr e = { 0 };
	alarm(20); /* a scan that opened the FIFO would hang here */
	int r = workspace_plan(ws, &pol, &plan, &e);
	alarm(0);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "workspace_plan: %s\n", e.msg);

	/* protected paths: the directories on the way pinned, the path bound
	 * read-only, whatever kind of entry it is */
	CHECK(planned(&plan, ".git", WS_PIN));
	CHECK(planned(&plan, ".git/hooks", WS_PROTECT));
	CHECK(planned(&plan, ".git/config", WS_PROTECT));
	CHECK(planned(&plan, ".bashrc", WS_PROTECT));
	CHECK(planned(&plan, ".vscode", WS_PROTECT));
	CHECK(planned(&plan, ".profile", WS_PROTECT));
	/* a git redirect present at the start is kept read-only */
	CHECK(planned(&plan, ".git/modules", WS_PROTECT));

	/* missing protected names get placeholders at their host path */
	static const char *const missing[] = {
		".bash_profile", ".bash_login", ".bash_logout", ".zshrc",
		".zshenv", ".zprofile", ".zlogin", ".mcp.json", ".envrc",
	};
	/* (directories by convention) */
	static const char *const missing_dirs[] = { ".warden", ".idea", ".claude" };
	for (size_t i = 0; i < ARRAY_LEN(missing) + ARRAY_LEN(missing_dirs); i++) {
		bool dir = i >= ARRAY_LEN(missing);
		const char *rel = dir ? missing_dirs[i - ARRAY_LEN(missing)] : missing[i];
		CHECK(planned(&plan, rel, WS_PLACEHOLDER));
		const struct ws_mount *m = entry(&plan, rel);
		_cleanup_free_ char *abs = xasprintf("%s/%s", ws, rel);
		CHECK(m && m->abs && strcmp(m->abs, abs) == 0 && !m->adopted && m->dir == dir);
	}
	/* another session's placeholder is adopted as it is */
	CHECK(planned(&plan, ".gitmodules", WS_PLACEHOLDER));
	const struct ws_mount *adopted = entry(&plan, ".gitmodules");
	struct stat st;
	_cleanup_free_ char *gm = tmp_path("ws/.gitmodules");
	CHECK(lstat(gm, &st) == 0);
	CHECK(adopted && adopted->adopted && adopted->made.err == 0 &&
	      adopted->made.ino == st.st_ino && adopted->made.dev == st.st_dev);

	/* secrets masked at any depth, by name or by a pattern with a slash
	 * (matched against the whole workspace-relative path) */
	CHECK(planned(&plan, ".env", WS_MASK_FILE));
	CHECK(planned(&plan, ".env.local", WS_MASK_FILE));
	CHECK(planned(&plan, "src/deep/er/.env.production", WS_MASK_FILE));
	CHECK(planned(&plan, "src/id_rsa", WS_MASK_FILE));
	CHECK(planned(&plan, "src/keys.pem", WS_MASK_DIR));
	CHECK(planned(&plan, "config/db.secret", WS_MASK_FILE));
	CHECK(entry(&plan, "src/config/db.secret") == NULL);
	CHECK(entry(&plan, "src/notes.txt") == NULL);
	/* a masked directory is masked whole: nothing planned inside */
	CHECK(entry(&plan, "src/keys.pem/inner.key") == NULL);
	/* a .git is never scanned for masks */
	CHECK(entry(&plan, ".git/config") && entry(&plan, ".git/config")->kind == WS_PROTECT);

	/* symlinks are not followed: nothing planned through them, no loop */
	for (size_t i = 0; i < plan.n; i++) {
		const char *rel = plan.m[i].rel;
		if (strncmp(rel, "out/", 4) == 0 || strncmp(rel, "up/", 3) == 0 ||
		    strncmp(rel, "src/self/", 9) == 0 || strcmp(rel, "src/linked.key") == 0) {
			fprintf(stderr, "  planned through a symlink: %s\n", rel);
			CHECK(!"a symlink was followed");
		}
	}

	/* every .git and git redirect in the tree, with its inode */
	CHECK(strv_contains(&plan.git, ".git"));
	CHECK(strv_contains(&plan.git, ".git/modules"));
	CHECK(strv_contains(&plan.git, "sub/.git"));
	CHECK(!strv_contains(&plan.git, "out/.git"));
	CHECK(plan.git.n == 3 && plan.git_ids.n == plan.git.n);

	/* the placeholders: socket entries of mode 0444 whatever the umask,
	 * one inode for the session; the adopted one is left alone */
	mode_t old = umask(0277);
	CHECK(workspace_make_placeholders(&plan, &e) == 0);
	umask(old);
	struct stat first = { 0 };
	for (size_t i = 0; i < ARRAY_LEN(missing); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", ws, missing[i]);
		CHECK(lstat(p, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0444);
		if (i == 0)
			first = st;
		CHECK(st.st_ino == first.st_ino && st.st_dev == first.st_dev);
		const struct ws_mount *m = entry(&plan, missing[i]);
		CHECK(m && m->made.err == 0 && m->made.ino == st.st_ino);
	}
	CHECK(lstat(gm, &st) == 0 && st.st_ino == adopted->made.ino);
	/* and empty directories of mode 01555, each its own inode */
	for (size_t i = 0; i < ARRAY_LEN(missing_dirs); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", ws, missing_dirs[i]);
		CHECK(lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 01555);
		CHECK(st.st_ino != first.st_ino);
		const struct ws_mount *m = entry(&plan, missing_dirs[i]);
		CHECK(m && m->made.err == 0 && m->made.ino == st.st_ino && m->made.dev == st.st_dev);
		for (size_t k = 0; k < i; k++)
			CHECK(m->made.ino != entry(&plan, missing_dirs[k])->made.ino);
	}

	/* a placeholder replaced during the session is left as it is */
	_cleanup_free_ char *envrc = tmp_path("ws/.envrc");
	CHECK(unlink(envrc) == 0);
	touch("ws/.envrc", "export X=1\n");

	/* alone in the workspace (no lock): every placeholder goes, its own
	 * and the adopted one */
	workspace_remove_placeholders(&plan);
	for (size_t i = 0; i < ARRAY_LEN(missing); i++) {
		_cleanup_free_ char *rel = xasprintf("ws/%s", missing[i]);
		if (strcmp(missing[i], ".envrc") != 0)
			CHECK(!exists(rel));
	}
	for (size_t i = 0; i < ARRAY_LEN(missing_dirs); i++) {
		_cleanup_free_ char *rel = xasprintf("ws/%s", missing_dirs[i]);
		CHECK(!exists(rel));
	}
	CHECK(!exists("ws/.gitmodules"));
	CHECK(exists("ws/.envrc"));
	CHECK(lstat(envrc, &st) == 0 && S_ISREG(st.st_mode));
	/* what was there before stays */
	CHECK(exists("ws/.bashrc") && exists("ws/.profile") && exists("ws/.vscode"));

	workspace_cleanup(&plan);
	CHECK(plan.n == 0 && plan.m == NULL && plan.git.n == 0);
	policy_free(&pol);
}

static void test_plan_refusals(void)
{
	struct policy pol;
	load_profile(&pol, "");
	struct werr e = { 0 };

	/* a protected name that is a symlink cannot be kept read-only */
	mk("ws2");
	ln("/tmp", "ws2/.idea");
	_cleanup_free_ char *ws2 = tmp_path("ws2");
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws2, &pol, &plan, &e) < 0);
	CHECK(strstr(e.msg, ".idea is a symbolic link") != NULL);
	workspace_cleanup(&plan);

	/* .git a file (a worktree: read-only itself) or absent: nothing to
	 * pin below it, no placeholder inside a directory that is not there */
	mk("ws3");
	touch("ws3/.git", "gitdir: /elsewhere\n");
	mk("ws4");
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *ws = tmp_path(i ? "ws4" : "ws3");
		struct ws_plan p = { .lock_fd = -1, .ws_fd = -1 };
		CHECK(workspace_plan(ws, &pol, &p, &e) == 0);
		CHECK(i == 0 ? planned(&p, ".git", WS_PROTECT) : entry(&p, ".git") == NULL);
		CHECK(entry(&p, ".git/hooks") == NULL);
		CHECK(entry(&p, ".git/config") == NULL);
		CHECK(planned(&p, ".gitmodules", WS_PLACEHOLDER));
		CHECK(strv_contains(&p.git, ".git") == (i == 0));
		workspace_cleanup(&p);
	}

	/* a FIFO in a protected directory's place: not a directory, nothing
	 * below it planned, and nothing opened */
	mk("ws5");
	node("ws5/.git", S_IFIFO | 0644);
	_cleanup_free_ char *ws5 = tmp_path("ws5");
	struct ws_plan p5 = { .lock_fd = -1, .ws_fd = -1 };
	alarm(20);
	CHECK(workspace_plan(ws5, &pol, &p5, &e) == 0);
	alarm(0);
	CHECK(entry(&p5, ".git") == NULL && entry(&p5, ".git/hooks") == NULL);
	workspace_cleanup(&p5);

	/* not a directory */
	_cleanup_free_ char *gone = tmp_path("no-such-ws");
	struct ws_plan p6 = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(gone, &pol, &p6, &e) < 0 && e.errnum == ENOENT);
	workspace_cleanup(&p6);
	policy_free(&pol);
}

/* Two sessions in one workspace: the second adopts the first's placeholders,
 * and they go only when the last session ends. */
static void test_shared_placeholders(void)
{
	struct policy pol;
	load_profile(&pol, "");
	mk("ws6");
	_cleanup_free_ char *ws = tmp_path("ws6");
	_cleanup_free_ char *locks = tmp_path("locks");
	struct werr e = { 0 };
	struct ws_plan a = { .lock_fd = -1, .ws_fd = -1 }, b = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_lock(ws, locks, &a, &e) == 0 && a.lock_fd >= 0);
	CHECK(workspace_plan(ws, &pol, &a, &e) == 0);
	CHECK(workspace_make_placeholders(&a, &e) == 0);
	CHECK(exists("ws6/.envrc"));

	CHECK(workspace_lock(ws, locks, &b, &e) == 0 && b.lock_fd >= 0);
	CHECK(workspace_plan(ws, &pol, &b, &e) == 0);
	const struct ws_mount *m = entry(&b, ".envrc");
	CHECK(m && m->kind == WS_PLACEHOLDER && m->adopted);
	CHECK(workspace_make_placeholders(&b, &e) == 0);

	/* the first ends while the second runs: the placeholders stay */
	workspace_cleanup(&a);
	CHECK(exists("ws6/.envrc") && exists("ws6/.gitmodules"));
	m = entry(&b, ".claude");
	CHECK(m && m->adopted && m->dir && exists("ws6/.claude"));
	/* the last one out removes them */
	workspace_cleanup(&b);
	CHECK(!exists("ws6/.envrc") && !exists("ws6/.gitmodules") && !exists("ws6/.claude"));
	policy_free(&pol);
}

/* Directory placeholders: adopted only when empty and of warden's mode,
 * removed only while empty and of that mode; the directory form of
 * .git/hooks; every other name stays a socket entry. */
static void test_dir_placeholders(void)
{
	struct policy pol;
	load_profile(&pol, "protect .codex\nprotect .cursor\nprotect src/.vscode\nprotect src/.git/hooks\n");
	mk("wd/.git");
	mk("wd/src/.git");
	_cleanup_free_ char *left = tmp_path("wd/.codex");       /* a killed session's */
	mk("wd/.codex");
	CHECK(chmod(left, 01555) == 0);
	_cleanup_free_ char *full = tmp_path("wd/.cursor");      /* that mode, not empty */
	mk("wd/.cursor");
	touch("wd/.cursor/rules", "x\n");
	CHECK(chmod(full, 01555) == 0);
	_cleanup_free_ char *ws = tmp_path("wd");
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws, &pol, &plan, &e) == 0);
	static const char *const dirs[] = { ".claude", ".idea", ".git/hooks", "src/.vscode", "src/.git/hooks" };
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		const struct ws_mount *m = entry(&plan, dirs[i]);
		CHECK(planned(&plan, dirs[i], WS_PLACEHOLDER) && m && m->dir && !m->adopted);
	}
	CHECK(planned(&plan, ".git/config", WS_PLACEHOLDER) && !entry(&plan, ".git/config")->dir);
	CHECK(planned(&plan, ".mcp.json", WS_PLACEHOLDER) && !entry(&plan, ".mcp.json")->dir);
	const struct ws_mount *adopted = entry(&plan, ".codex");
	CHECK(planned(&plan, ".codex", WS_PLACEHOLDER) && adopted && adopted->adopted && adopted->dir);
	CHECK(planned(&plan, ".cursor", WS_PROTECT));

	mode_t old = umask(0777);
	CHECK(workspace_make_placeholders(&plan, &e) == 0);
	umask(old);
	struct stat st;
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", ws, dirs[i]);
		CHECK(lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 01555);
	}
	_cleanup_free_ char *cfg = tmp_path("wd/.git/config");
	CHECK(lstat(cfg, &st) == 0 && S_ISSOCK(st.st_mode));

	/* the user fills one (making it writable to do so), changes the mode
	 * of another, fills a third keeping the mode: all three stay */
	_cleanup_free_ char *claude = tmp_path("wd/.claude");
	_cleanup_free_ char *idea = tmp_path("wd/.idea");
	_cleanup_free_ char *vsc = tmp_path("wd/src/.vscode");
	CHECK(chmod(claude, 0755) == 0);
	touch("wd/.claude/settings.json", "{}\n");
	CHECK(chmod(idea, 0755) == 0);
	CHECK(chmod(vsc, 0755) == 0);
	touch("wd/src/.vscode/tasks.json", "{}\n");
	CHECK(chmod(vsc, 01555) == 0);
	workspace_remove_placeholders(&plan);
	CHECK(exists("wd/.claude/settings.json") && exists("wd/src/.vscode/tasks.json"));
	CHECK(lstat(idea, &st) == 0 && S_ISDIR(st.st_mode));
	/* the rest go, the adopted one too; the filled one of that mode stays */
	CHECK(!exists("wd/.git/hooks") && !exists("wd/src/.git/hooks") && !exists("wd/.git/config"));
	CHECK(!exists("wd/.codex") && !exists("wd/.mcp.json"));
	CHECK(exists("wd/.cursor/rules"));
	workspace_cleanup(&plan);
	CHECK(chmod(vsc, 0755) == 0 && chmod(full, 0755) == 0); /* for the final rm -rf */
	policy_free(&pol);
}

static bool moved_to(const struct ws_sweep *sw, const char *rel, const char *to_rel)
{
	_cleanup_free_ char *to = tmp_path(to_rel);
	for (size_t i = 0; i < sw->n; i++)
		if (strcmp(sw->v[i].rel, rel) == 0)
			return sw->v[i].to && strcmp(sw->v[i].to, to) == 0;
	return false;
}

/* The sweep's record of rel: its bits cleared from mode_was to mode. */
static bool cleared(const struct ws_sweep *sw, const char *rel, mode_t mode_was, mode_t mode)
{
	for (size_t i = 0; i < sw->n; i++)
		if (strcmp(sw->v[i].rel, rel) == 0)
			return !sw->v[i].to && sw->v[i].mode_was == mode_was && sw->v[i].mode == mode;
	return false;
}

static void test_sweep(void)
{
	struct policy pol;
	load_profile(&pol, "");
	mk("sw/.git/hooks");
	mk("sw/old/.git");
	mk("sw/lib");
	mk("sw/vendor/x");
	mk("sw/re/.git");
	_cleanup_free_ char *ws = tmp_path("sw");
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws, &pol, &plan, &e) == 0);

	/* what an agent leaves behind */
	touch("sw/.git/commondir", "/home/u/evil\n");       /* a redirect in a known .git */
	mk("sw/lib/.git/hooks");                            /* a new repository */
	mk("sw/lib/.git/modules");                          /* (its redirect goes with it) */
	touch("sw/lib/.git/hooks/post-checkout", "#!/bin/sh\n");
	ln("/tmp/elsewhere", "sw/vendor/x/.git");           /* a .git symlink */
	_cleanup_free_ char *old = tmp_path("sw/old/.git");
	_cleanup_free_ char *kept = tmp_path("sw/old/orig");
	CHECK(rename(old, kept) == 0);
	mk("sw/old/.git");                                  /* same name, new entry */
	mk("sw/deep/a/b/c/.git");                           /* at depth */
	_cleanup_free_ char *re = tmp_path("sw/re/.git");
	CHECK(rmdir(re) == 0);
	mk("sw/re/.git");                   /* removed, made again: maybe the same inode number */

	/* what the sweep says on stderr: nothing here (every move works) */
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	_cleanup_free_ char *notes = tmp_path("sweep-notes");
	int nfd = open(notes, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(saved >= 0 && nfd >= 0 && dup2(nfd, STDERR_FILENO) == STDERR_FILENO);
	struct ws_sweep moved = { 0 };
	CHECK(workspace_sweep(ws, &plan, "S1", &moved, &e) == 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char said[512] = "";
	CHECK(pread(nfd, said, sizeof said - 1, 0) == 0);
	if (said[0])
		fprintf(stderr, "  the sweep said: %s", said);
	close(nfd);
	CHECK(moved.n == 6);
	CHECK(moved_to(&moved, "re/.git", "sw/re/.git.warden-quarantine-S1"));
	CHECK(moved.ws && strcmp(moved.ws, ws) == 0);
	CHECK(moved_to(&moved, ".git/commondir", "sw/.git/commondir.warden-quarantine-S1"));
	CHECK(moved_to(&moved, "lib/.git", "sw/lib/.git.warden-quarantine-S1"));
	CHECK(moved_to(&moved, "vendor/x/.git", "sw/vendor/x/.git.warden-quarantine-S1"));
	CHECK(moved_to(&moved, "old/.git", "sw/old/.git.warden-quarantine-S1"));
	CHECK(moved_to(&moved, "deep/a/b/c/.git", "sw/deep/a/b/c/.git.warden-quarantine-S1"));
	/* and on disk: gone from where git would find them */
	CHECK(!exists("sw/.git/commondir") && exists("sw/.git/commondir.warden-quarantine-S1"));
	CHECK(!exists("sw/lib/.git") &&
	      exists("sw/lib/.git.warden-quarantine-S1/hooks/post-checkout"));
	CHECK(!exists("sw/vendor/x/.git") && !exists("sw/old/.git") &&
	      !exists("sw/deep/a/b/c/.git"));
	/* what was there at the start stays */
	CHECK(exists("sw/.git/hooks") && exists("sw/old/orig"));
	ws_sweep_free(&moved);

	/* a second sweep finds nothing new */
	CHECK(workspace_sweep(ws, &plan, "S2", &moved, &e) == 0);
	CHECK(moved.n == 0);
	ws_sweep_free(&moved);
	workspace_cleanup(&plan);
	policy_free(&pol);
}

/* A chain of `depth` directories named "d" below rel, with a file at the
 * bottom (leaf, relative to the last "d", its parents made), built with one
 * fd at a time: its path is far longer than PATH_MAX. */
static void deep_chain(const char *rel, int depth, const char *leaf_dir, const char *leaf)
{
	_cleanup_free_ char *p = tmp_path(rel);
	int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < depth; i++) {
		if (mkdirat(fd, "d", 0755) < 0 && errno != EEXIST)
			die("deep directory", rel);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	if (fd < 0)
		die("deep chain", rel);
	if (leaf_dir) {
		_cleanup_free_ char *copy = xstrdup(leaf_dir);
		for (char *c = copy; ; c++) {
			char was = *c;
			if (was == '/' || was == '\0') {
				*c = '\0';
				if (mkdirat(fd, copy, 0755) < 0 && errno != EEXIST)
					die("deep leaf directory", copy);
				*c = was;
			}
			if (!was)
				break;
		}
	}
	if (leaf) {
		int f = openat(fd, leaf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		if (f < 0 || write_all(f, "#!/bin/sh\n", 10) < 0)
			die("deep leaf", leaf);
		close(f);
	}
	close(fd);
}

/* Does the entry at the bottom of a deep chain exist? */
static bool deep_exists(const char *rel, int depth, const char *leaf)
{
	_cleanup_free_ char *p = tmp_path(rel);
	int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < depth; i++) {
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	struct stat st;
	bool there = fd >= 0 && fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (fd >= 0)
		close(fd);
	return there;
}

static char *deep_rel(int depth, const char *leaf)
{
	size_t n = (size_t)depth * 2 + strlen(leaf) + 1;
	char *r = xmalloc(n), *p = r;
	for (int i = 0; i < depth; i++) {
		memcpy(p, "d/", 2);
		p += 2;
	}
	memcpy(p, leaf, strlen(leaf) + 1);
	return r;
}

/* The plan and the sweep on a tree 5,000 levels deep, with the process
 * allowed 24 fds: no fd held per level, no depth limit. */
static void test_sweep_deep(void)
{
	struct policy pol;
	load_profile(&pol, "");
	enum { DEPTH = 5000, START = 1000 };
	mk("dp");
	deep_chain("dp", START, "old/.git/hooks", "old/.env"); /* there at start */
	deep_chain("dp", DEPTH, NULL, NULL);
	_cleanup_free_ char *ws = tmp_path("dp");
	struct rlimit was, low = { .rlim_cur = 24 };
	CHECK(getrlimit(RLIMIT_NOFILE, &was) == 0);
	low.rlim_max = was.rlim_max;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	int r = workspace_plan(ws, &pol, &plan, &e);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "  workspace_plan: %.200s\n", e.msg);
	_cleanup_free_ char *env = deep_rel(START, "old/.env");
	_cleanup_free_ char *oldgit = deep_rel(START, "old/.git");
	_cleanup_free_ char *hooks = deep_rel(START, "old/.git/hooks");
	CHECK(planned(&plan, env, WS_MASK_FILE));
	CHECK(strv_contains(&plan.git, oldgit));
	CHECK(planned(&plan, hooks, WS_PROTECT)); /* a nested repository's */

	/* the agent plants a hook at the bottom, in a new repository */
	deep_chain("dp", DEPTH, ".git/hooks", ".git/hooks/pre-commit");
	struct ws_sweep sw = { 0 };
	r = workspace_sweep(ws, &plan, "D1", &sw, &e);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "  workspace_sweep: %.200s\n", e.msg);
	CHECK(setrlimit(RLIMIT_NOFILE, &was) == 0);
	_cleanup_free_ char *newgit = deep_rel(DEPTH, ".git");
	_cleanup_free_ char *to = xasprintf("dp/%s.warden-quarantine-D1", newgit);
	CHECK(sw.n == 1 && moved_to(&sw, newgit, to));
	CHECK(!deep_exists("dp", DEPTH, ".git"));
	CHECK(deep_exists("dp", DEPTH, ".git.warden-quarantine-D1/hooks/pre-commit"));
	CHECK(deep_exists("dp", START, "old/.git/hooks"));
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);

	/* a secret deeper than a mount can be named: the workspace is refused */
	deep_chain("dp", DEPTH, NULL, "id_rsa");
	struct ws_plan p2 = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws, &pol, &p2, &e) < 0 && e.errnum == ENAMETOOLONG &&
	      strstr(e.msg, "more than warden can mask"));
	/* which file, by its path's end and its name, and what to do */
	CHECK(strstr(e.msg, "/id_rsa lies ") && strstr(e.msg, "`find . -name 'id_rsa'` finds it"));
	workspace_cleanup(&p2);
	policy_free(&pol);
}

/* The workspace renamed on the host during the session: the sweep works
 * from the directory opened at start and names its new path; the
 * placeholders go too. */
static void test_sweep_renamed(void)
{
	struct policy pol;
	load_profile(&pol, "");
	mk("mv1");
	_cleanup_free_ char *ws = tmp_path("mv1");
	_cleanup_free_ char *ws2 = tmp_path("mv2");
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws, &pol, &plan, &e) == 0);
	CHECK(workspace_make_placeholders(&plan, &e) == 0);
	CHECK(exists("mv1/.mcp.json") && exists("mv1/.claude"));
	mk("mv1/sub/.git/hooks");
	CHECK(rename(ws, ws2) == 0);
	mk("mv1"); /* something else under the old name */
	mk("mv1/.git");
	workspace_remove_placeholders(&plan);
	CHECK(!exists("mv2/.mcp.json") && !exists("mv2/.claude"));
	struct ws_sweep sw = { 0 };
	CHECK(workspace_sweep(ws, &plan, "R1", &sw, &e) == 0);
	CHECK(sw.ws && strcmp(sw.ws, ws2) == 0);
	CHECK(sw.n == 1 && moved_to(&sw, "sub/.git", "mv2/sub/.git.warden-quarantine-R1"));
	CHECK(!exists("mv2/sub/.git") && exists("mv2/sub/.git.warden-quarantine-R1/hooks"));
	CHECK(exists("mv1/.git")); /* not the workspace any more */
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);
	policy_free(&pol);
}

static mode_t mode_of(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	struct stat st;
	return lstat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static void set_mode(const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = tmp_path(rel);
	if (chmod(p, mode) < 0)
		die("mode of", rel);
}

/* Setuid and setgid bits: a file untouched since before the session keeps
 * them; one whose inode changed during it (a chmod, a new file, a new
 * link) loses them, recorded. */
static void test_sweep_setid(void)
{
	struct policy pol;
	load_profile(&pol, "");
	mk("su/bin");
	touch("su/bin/kept", "x");
	set_mode("su/bin/kept", 04755);
	touch("su/bin/plain", "x");
	set_mode("su/bin/plain", 0755);
	touch("su/bin/linked", "x");
	set_mode("su/bin/linked", 04755);
	touch("su/bin/key.pem", "x"); /* masked, and setgid at start */
	set_mode("su/bin/key.pem", 02640);
	/* past the clock tick of those changes: a change in the start's own
	 * tick counts as the session's (test_sweep_setid_same_tick) */
	usleep(20 * 1000);
	_cleanup_free_ char *ws = tmp_path("su");
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws, &pol, &plan, &e) == 0);

	set_mode("su/bin/plain", 04755);
	touch("su/new", "x");
	set_mode("su/new", 06711);
	_cleanup_free_ char *linked = tmp_path("su/bin/linked");
	_cleanup_free_ char *link2 = tmp_path("su/linked2");
	CHECK(link(linked, link2) == 0);
	set_mode("su/bin/key.pem", 06640);
	mk("su/dir");
	set_mode("su/dir", 02755); /* a directory's setgid bit is not a program's */
	struct ws_sweep sw = { 0 };
	CHECK(workspace_sweep(ws, &plan, "U1", &sw, &e) == 0);
	CHECK(sw.n == 4);
	CHECK(cleared(&sw, "bin/plain", 04755, 0755));
	CHECK(cleared(&sw, "new", 06711, 0711));
	CHECK(cleared(&sw, "bin/key.pem", 06640, 0640));
	CHECK(cleared(&sw, "bin/linked", 04755, 0755) || cleared(&sw, "linked2", 04755, 0755));
	CHECK(mode_of("su/bin/plain") == 0755 && mode_of("su/new") == 0711);
	CHECK(mode_of("su/bin/linked") == 0755 && mode_of("su/linked2") == 0755);
	CHECK(mode_of("su/bin/kept") == 04755);
	CHECK(mode_of("su/bin/key.pem") == 0640 && mode_of("su/dir") == 02755);
	ws_sweep_free(&sw);
	/* a second sweep finds nothing: the bits are gone */
	CHECK(workspace_sweep(ws, &plan, "U2", &sw, &e) == 0);
	CHECK(sw.n == 0);
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);
	policy_free(&pol);
}

/* A change in the start's own clock tick counts as the session's: the
 * kernel stamps ctime from a coarse clock, a tick behind a fine reading
 * taken before the change. Twenty rounds, each a setuid bit set at once
 * after the plan: cleared every time. */
static void test_sweep_setid_same_tick(void)
{
	struct policy pol;
	load_profile(&pol, "");
	mk("tick");
	touch("tick/prog", "x");
	_cleanup_free_ char *ws = tmp_path("tick");
	int kept = 0;
	for (int i = 0; i < 20; i++) {
		set_mode("tick/prog", 0755);
		usleep(20 * 1000); /* that change well before the start */
		struct werr e = { 0 };
		struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
		CHECK(workspace_plan(ws, &pol, &plan, &e) == 0);
		set_mode("tick/prog", 04755);
		struct ws_sweep sw = { 0 };
		CHECK(workspace_sweep(ws, &plan, "K1", &sw, &e) == 0);
		kept += mode_of("tick/prog") != 0755;
		ws_sweep_free(&sw);
		workspace_cleanup(&plan);
	}
	if (kept)
		fprintf(stderr, "  the bit set right after the start was kept %d times of 20\n", kept);
	CHECK(kept == 0);
	policy_free(&pol);
}

/* What the agent made unreadable (it runs as the user, who owns it) is
 * opened up for the sweep, swept, and given its mode back. Run as an
 * unprivileged user (root reads such directories anyway): when the test
 * runs as root, in a child that becomes nobody. */
static void unreadable_child(void)
{
	char dir[] = "/tmp/warden-test-ws-unreadable-XXXXXX";
	if (!mkdtemp(dir))
		die("directory", dir);
	struct policy pol;
	load_profile(&pol, "");
	_cleanup_free_ char *ws = xasprintf("%s/ws", dir);
	_cleanup_free_ char *cmd = xasprintf("mkdir -p %s/ws/open %s/ws/hide/r %s/ws/ro %s/ws/noexec "
		"%s/ws/known/.git", dir, dir, dir, dir, dir);
	if (system(cmd) != 0)
		die("tree", dir);
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(ws, &pol, &plan, &e) == 0);
	free(cmd);
	cmd = xasprintf("cd %s/ws && mkdir -p hide/r/.git/hooks ro/.git noexec/.git && "
		"mkdir known/.git/worktrees && chmod 000 hide known/.git && chmod 555 ro && "
		"chmod 644 noexec && chmod 000 .", dir);
	if (system(cmd) != 0)
		die("agent's changes", dir);
	struct ws_sweep sw = { 0 };
	int r = workspace_sweep(ws, &plan, "H1", &sw, &e);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "  workspace_sweep: %s\n", e.msg);
	_cleanup_free_ char *root = xasprintf("%s/ws", dir);
	struct stat st;
	CHECK(stat(root, &st) == 0 && (st.st_mode & 07777) == 0);
	CHECK(chmod(root, 0755) == 0);
	CHECK(sw.n == 4);
	static const char *const gone[] = { "hide/r/.git", "ro/.git", "noexec/.git", "known/.git/worktrees" };
	for (size_t i = 0; i < ARRAY_LEN(gone); i++) {
		bool found = false;
		for (size_t k = 0; k < sw.n; k++)
			found = found || (strcmp(sw.v[k].rel, gone[i]) == 0 && sw.v[k].to);
		CHECK(found);
	}
	static const struct { const char *rel; mode_t mode; } modes[] = {
		{ "hide", 0 }, { "known/.git", 0 }, { "ro", 0555 }, { "noexec", 0644 },
	};
	for (size_t i = 0; i < ARRAY_LEN(modes); i++) {
		_cleanup_free_ char *p = xasprintf("%s/ws/%s", dir, modes[i].rel);
		CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == modes[i].mode);
	}
	free(cmd);
	cmd = xasprintf("chmod -R u+rwx %s && rm -rf %s", dir, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);
	policy_free(&pol);
}

static void test_sweep_unreadable(void)
{
	fflush(NULL);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)) {
			perror("becoming nobody");
			_exit(2);
		}
		failures = 0; /* the parent's so far are the parent's */
		unreadable_child();
		fflush(NULL);
		_exit(failures ? 1 : 0);
	}
	int status;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
}

/* The index of rel in the plan, -1 when it is not planned. */
static long plan_index(const struct ws_plan *plan, const char *rel)
{
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0)
			return (long)i;
	return -1;
}

/* Every repository and tool config in the tree: protected names at any
 * depth, nested repositories, .git files, secrets inside .git, bare
 * lookalikes; and what the sweep does with those made during the session. */
static void test_tree(void)
{
	struct policy pol;
	load_profile(&pol, "protect docs/RELEASE.md\n");
	mk("tr/packages/app/.vscode");
	touch("tr/packages/app/.vscode/tasks.json", "{}\n");
	touch("tr/packages/app/.envrc", "export A=1\n");
	mk("tr/packages/lnk");
	ln("../../.envrc", "tr/packages/lnk/.envrc");
	mk("tr/packages/lib");
	mk("tr/vendor/lib/.git/hooks");
	touch("tr/vendor/lib/.git/config", "[core]\n");
	touch("tr/vendor/lib/.git/.git-credentials", "https://u:p@host\n");
	mk("tr/vendor/nohooks/.git");
	mk("tr/sub");
	touch("tr/sub/.git", "gitdir: ../.git/modules/sub\n");
	mk("tr/keep.git/objects");
	mk("tr/keep.git/refs");
	touch("tr/keep.git/HEAD", "ref: refs/heads/main\n");
	mk("tr/other/docs");
	touch("tr/other/docs/RELEASE.md", "x\n");
	_cleanup_free_ char *ws = tmp_path("tr");
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	int r = workspace_plan(ws, &pol, &plan, &e);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "  workspace_plan: %s\n", e.msg);

	/* names at any depth: read-only, the way to them pinned */
	CHECK(planned(&plan, "packages/app/.vscode", WS_PROTECT));
	CHECK(planned(&plan, "packages/app/.envrc", WS_PROTECT));
	CHECK(planned(&plan, "packages", WS_PIN) && planned(&plan, "packages/app", WS_PIN));
	CHECK(entry(&plan, "packages/lnk/.envrc") == NULL); /* a symlink: recorded, not bound */
	CHECK(strv_contains(&plan.named, "packages/lnk/.envrc"));
	/* no placeholder for a name missing below the top */
	CHECK(entry(&plan, "packages/lib/.vscode") == NULL);
	/* a path with a slash stays where it is */
	CHECK(entry(&plan, "other/docs/RELEASE.md") == NULL);
	/* nested repositories: hooks and config, a placeholder for missing hooks */
	CHECK(planned(&plan, "vendor/lib/.git/hooks", WS_PROTECT));
	CHECK(planned(&plan, "vendor/lib/.git/config", WS_PROTECT));
	CHECK(planned(&plan, "vendor/lib/.git", WS_PIN));
	CHECK(planned(&plan, "vendor/nohooks/.git/hooks", WS_PLACEHOLDER) &&
	      entry(&plan, "vendor/nohooks/.git/hooks")->dir);
	/* secrets inside .git */
	CHECK(planned(&plan, "vendor/lib/.git/.git-credentials", WS_MASK_FILE));
	/* a .git file is read-only itself */
	CHECK(planned(&plan, "sub/.git", WS_PROTECT));
	/* a bare repository at start: recorded, its hooks held */
	CHECK(strv_contains(&plan.bare, "keep.git"));
	CHECK(planned(&plan, "keep.git/hooks", WS_PLACEHOLDER));
	CHECK(planned(&plan, "keep.git/config", WS_PLACEHOLDER));
	/* shallow first: a directory bound before anything below it */
	for (size_t i = 1; i < plan.n; i++) {
		size_t a = 0, b = 0;
		for (const char *c = plan.m[i - 1].rel; *c; c++)
			a += *c == '/';
		for (const char *c = plan.m[i].rel; *c; c++)
			b += *c == '/';
		CHECK(a <= b);
	}
	CHECK(plan_index(&plan, "vendor/lib/.git") < plan_index(&plan, "vendor/lib/.git/.git-credentials"));

	/* what an agent leaves */
	mk("tr/packages/lib/.vscode");
	touch("tr/packages/lib/.vscode/tasks.json", "{}\n");
	touch("tr/packages/lib/.envrc", "export EVIL=1\n");
	_cleanup_free_ char *lnk = tmp_path("tr/packages/lnk/.envrc");
	CHECK(unlink(lnk) == 0);
	touch("tr/packages/lnk/.envrc", "export EVIL=2\n");   /* an unbound one replaced */
	mk("tr/fake/objects");
	mk("tr/fake/refs");
	touch("tr/fake/HEAD", "ref: refs/heads/main\n");
	mk("tr/objects");
	mk("tr/refs");
	touch("tr/HEAD", "ref: refs/heads/main\n");
	mk("tr/half/objects");                              /* not a lookalike: no refs/ */
	touch("tr/half/HEAD", "x\n");
	touch("tr/keep.git/description", "x\n");            /* the one at start, changed */
	struct ws_sweep sw = { 0 };
	r = workspace_sweep(ws, &plan, "T1", &sw, &e);
	CHECK(r == 0);
	size_t kinds[4] = { 0 };
	for (size_t i = 0; i < sw.n; i++)
		kinds[sw.v[i].kind]++;
	CHECK(sw.n == 5 && kinds[WS_SWEPT_CONFIG] == 3 && kinds[WS_SWEPT_BARE] == 2);
	CHECK(moved_to(&sw, "packages/lib/.vscode", "tr/packages/lib/.vscode.warden-quarantine-T1"));
	CHECK(moved_to(&sw, "packages/lib/.envrc", "tr/packages/lib/.envrc.warden-quarantine-T1"));
	CHECK(moved_to(&sw, "packages/lnk/.envrc", "tr/packages/lnk/.envrc.warden-quarantine-T1"));
	CHECK(moved_to(&sw, "fake/HEAD", "tr/fake/HEAD.warden-quarantine-T1"));
	CHECK(moved_to(&sw, "HEAD", "tr/HEAD.warden-quarantine-T1"));
	CHECK(!exists("tr/fake/HEAD") && !exists("tr/HEAD") && exists("tr/half/HEAD"));
	CHECK(exists("tr/keep.git/HEAD") && exists("tr/packages/app/.vscode/tasks.json") &&
	      exists("tr/packages/app/.envrc"));
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);
	policy_free(&pol);
}

/* A .git as git init leaves it, then each thing that makes git run
 * something or look elsewhere. */
static void git_plain_one(const char *d, const char *config)
{
	_cleanup_free_ char *g = xasprintf("gp/%s/.git", d), *h = xasprintf("%s/hooks", g),
			    *c = xasprintf("%s/config", g), *s = xasprintf("%s/hooks/pre-commit.sample", g);
	mk(h);
	touch(c, config);
	touch(s, "#!/bin/sh\n");
}

static bool git_plain(const char *d)
{
	_cleanup_free_ char *p = tmp_path("gp");
	_cleanup_free_ char *g = xasprintf("%s/.git", d);
	_cleanup_close_ int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return ws_git_plain(fd, g, NULL);
}

/* Not plain, and why says so (printable ASCII only). */
static bool git_plain_why(const char *d, const char *want)
{
	_cleanup_free_ char *p = tmp_path("gp");
	_cleanup_free_ char *g = xasprintf("%s/.git", d);
	_cleanup_close_ int fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char why[WS_WHY_MAX] = "stale";
	if (ws_git_plain(fd, g, why))
		return false;
	for (const char *c = why; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			return false;
	if (strcmp(why, want) != 0)
		fprintf(stderr, "%s: why '%s', expected '%s'\n", d, why, want);
	return strcmp(why, want) == 0;
}

static void test_git_plain(void)
{
	static const char init[] = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
				   "\tbare = false\n\tlogallrefupdates = true\n";
	git_plain_one("init", init);
	CHECK(git_plain("init"));
	git_plain_one("libgit2", "[core]\n\tbare = false\n\trepositoryformatversion = 0\n"
				 "\tfilemode = true\n\tlogallrefupdates = true\n");
	CHECK(git_plain("libgit2"));
	git_plain_one("sha256", "[core]\n\trepositoryformatversion = 1\n[extensions]\n"
				"\tobjectFormat = sha256\n");
	CHECK(git_plain("sha256"));
	mk("gp/nohooks/.git");
	touch("gp/nohooks/.git/config", init);
	CHECK(git_plain("nohooks"));
	/* a clone's remote and upstream, an identity set in the new repository */
	git_plain_one("clone", "[core]\n\trepositoryformatversion = 0\n"
			       "[remote \"origin\"]\n\turl = https://example.invalid/x.git\n"
			       "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
			       "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
			       "[user]\n\temail = a@example.invalid\n");
	CHECK(git_plain("clone"));
	git_plain_one("localclone", "[remote \"o\"]\n\turl = /srv/r.git\n");
	CHECK(git_plain("localclone"));

	static const char *const refused[] = {
		"[core]\n\tfsmonitor = touch /tmp/x\n",
		"[core]\n\thooksPath = /tmp\n",
		"[core \"x\"]\n\tbare = false\n",          /* a subsection */
		"[core]\n\tpager = less\n",
		"[alias]\n\tst = !sh\n",
		"[include]\n\tpath = ../x\n",
		"[remote \"o\"]\n\turl = ext::sh -c touch% /tmp/x\n", /* a helper */
		"[remote \"o\"]\n\turl = evil::x\n",
		"[remote \"o\"]\n\turl = -oProxyCommand=x\n",
		"[remote \"o\"]\n\turl = /r\n\tuploadpack = touch /tmp/x\n",
		"[remote \"o\"]\n\turl = /r\n\treceivepack = x\n",
		"[remote \"o\"]\n\tvcs = evil\n",
		"[remote]\n\turl = /r\n",
		"[branch \"main\"]\n\tremote = https://example.invalid/x\n", /* no such remote */
		"[branch \"main\"]\n\tremote = origin\n",
		"[user]\n\tname = a\\tb\n",
		"[credential]\n\thelper = store\n",
		"[core]\nbare = false\n[core.x]\n\tfilemode = true\n",
		"[core]\n\tbare = \"unterminated\n", /* a line git refuses */
		"[extensions]\n\tworktreeConfig = true\n",
	};
	for (size_t i = 0; i < ARRAY_LEN(refused); i++) {
		_cleanup_free_ char *d = xasprintf("cfg%zu", i);
		git_plain_one(d, refused[i]);
		if (git_plain(d)) {
			fprintf(stderr, "plain with config: %s", refused[i]);
			CHECK(!"a config git init does not write taken for plain");
		}
	}
	CHECK(git_plain_why("cfg0", "its config sets core.fsmonitor"));
	CHECK(git_plain_why("cfg6", "its config sets remote.o.url"));
	CHECK(git_plain_why("cfg18", "its config is not in git's syntax as warden reads it"));
	git_plain_one("esc", "[alias \"\033[31m\"]\n\tx = y\n");
	CHECK(git_plain_why("esc", "its config sets alias.?[31m.x"));
	git_plain_one("hook", init);
	touch("gp/hook/.git/hooks/pre-commit", "#!/bin/sh\n");
	CHECK(!git_plain("hook"));
	CHECK(git_plain_why("hook", "its hooks hold pre-commit"));
	git_plain_one("hookdir", init);
	mk("gp/hookdir/.git/hooks/d.sample");
	CHECK(!git_plain("hookdir"));
	git_plain_one("samplelink", init);
	ln("/etc/passwd", "gp/samplelink/.git/hooks/x.sample");
	CHECK(!git_plain("samplelink"));
	mk("gp/hookslink/.git");
	touch("gp/hookslink/.git/config", init);
	mk("gp/elsewhere");
	ln("../../elsewhere", "gp/hookslink/.git/hooks");
	CHECK(!git_plain("hookslink"));
	mk("gp/cfglink/.git");
	touch("gp/cfglink/.git/c", init);
	ln("c", "gp/cfglink/.git/config");
	CHECK(!git_plain("cfglink"));
	mk("gp/cfgfifo/.git");
	node("gp/cfgfifo/.git/config", S_IFIFO | 0644);
	CHECK(!git_plain("cfgfifo")); /* refused at once, not waited on */
	mk("gp/noconfig/.git");
	CHECK(!git_plain("noconfig"));
	static const char *const redirects[] = { "commondir", "config.worktree", "worktrees", "modules" };
	for (size_t i = 0; i < ARRAY_LEN(redirects); i++) {
		_cleanup_free_ char *d = xasprintf("redir%zu", i), *r = xasprintf("gp/%s/.git/%s", d, redirects[i]);
		git_plain_one(d, init);
		if (i % 2)
			mk(r);
		else
			touch(r, "x\n");
		CHECK(!git_plain(d));
	}
	mk("gp/linked");
	ln("../init/.git", "gp/linked/.git");
	CHECK(!git_plain("linked"));
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	test_resolve();
	test_plan();
	test_plan_refusals();
	test_shared_placeholders();
	test_dir_placeholders();
	test_sweep();
	test_sweep_deep();
	test_sweep_renamed();
	test_sweep_setid();
	test_sweep_setid_same_tick();
	test_sweep_unreadable();
	test_tree();
	test_git_plain();

	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_status_counted("sandbox_workspace");
}
