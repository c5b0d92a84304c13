/* test_sandbox_execplan.c - unit tests of where the exec rules change the
 * sandbox's file system (src/sandbox/execplan.c), on a temporary tree:
 * each `exec allow-writable` path placed in the writable place that holds
 * it and made there as a directory, the refusals (outside the writable
 * places, read-only, protected, masked, warden's own directories, a symlink
 * or a file on the way), the denied files strict mode hides, and the
 * directory walk that never follows a symlink. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "src/sandbox/sandbox.h"
#include "check.h"
#include "profile.h"

static char tmpdir[] = "/tmp/warden-test-exec-XXXXXX";

static char *tmp_path(const char *rel) { return xasprintf("%s/%s", tmpdir, rel); }

static void mk(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	if (mkdir_p(p, 0755, NULL) < 0) {
		fprintf(stderr, "mkdir %s: %s\n", p, strerror(errno));
		exit(2);
	}
}

static void put(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "creating %s: %s\n", p, strerror(errno));
		exit(2);
	}
	close(fd);
}

static bool is_dir(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

/* A session's spec for the workspace tmpdir/ws with profile text on top of
 * the built-in default; *r: what exec_layout_plan returned. */
struct session {
	struct policy pol;
	struct sandbox_spec s;
	struct werr e;
	int r;
};

static void session_plan(struct session *t, const char *text)
{
	memset(t, 0, sizeof *t);
	load_profile(&t->pol, text);
	t->s = (struct sandbox_spec){ .workspace = tmp_path("ws"), .logdir = tmp_path("state/log"),
		.cachedir = tmp_path("cache"), .policy = &t->pol, .plan.lock_fd = -1,
		.plan.ws_fd = -1, .etc_lock = -1 };
	if (workspace_plan(t->s.workspace, &t->pol, &t->s.plan, &t->e) < 0) {
		fprintf(stderr, "workspace_plan: %s\n", t->e.msg);
		exit(2);
	}
	t->r = exec_layout_plan(&t->s, &t->e);
}

static void session_end(struct session *t)
{
	workspace_cleanup(&t->s.plan);
	exec_layout_free(&t->s.exec);
	free(t->s.workspace);
	free(t->s.logdir);
	free(t->s.cachedir);
	policy_free(&t->pol);
}

static const struct exec_writable *writable(const struct sandbox_spec *s, const char *path)
{
	for (size_t i = 0; i < s->exec.n; i++)
		if (strcmp(s->exec.w[i].path, path) == 0)
			return &s->exec.w[i];
	return NULL;
}

static void make_tree(void)
{
	mk("ws/src");
	mk("ws/.vscode");
	mk("outside");
	mk("rw/data");
	mk("ro");
	mk("state/log");
	put("ws/afile");
	put("ws/src/main.c");
	_cleanup_free_ char *lnk = tmp_path("ws/lnk");
	_cleanup_free_ char *out = tmp_path("outside");
	if (symlink(out, lnk) < 0) {
		perror("symlink");
		exit(2);
	}
}

/* Each path in its place; missing host directories made, none in a tmpfs
 * of the sandbox (init makes those); shallow first. */
static void test_placed(void)
{
	_cleanup_free_ char *rw = tmp_path("rw");
	_cleanup_free_ char *text = xasprintf(
		"read-write %s\n"
		"exec strict\n"
		"exec allow-writable target/release/bin\n"
		"exec allow-writable src\n"
		"exec allow-writable /tmp/build\n"
		"exec allow-writable /home/agent/tools\n"
		"exec allow-writable %s/data/bin\n", rw, rw);
	struct session t;
	session_plan(&t, text);
	CHECK(t.r == 0);
	if (t.r < 0)
		fprintf(stderr, "exec_layout_plan: %s\n", t.e.msg);
	CHECK(t.s.exec.strict);
	CHECK(t.s.exec.n == 5);
	_cleanup_free_ char *target = tmp_path("ws/target/release/bin");
	_cleanup_free_ char *src = tmp_path("ws/src");
	_cleanup_free_ char *data = tmp_path("rw/data/bin");
	const struct exec_writable *w = writable(&t.s, target);
	CHECK(w && !w->tmpfs && strcmp(w->place, t.s.workspace) == 0);
	CHECK(is_dir("ws/target/release/bin"));
	w = writable(&t.s, src);
	CHECK(w && !w->tmpfs);
	w = writable(&t.s, "/tmp/build");
	CHECK(w && w->tmpfs && strcmp(w->place, "/tmp") == 0);
	w = writable(&t.s, "/home/agent/tools");
	CHECK(w && w->tmpfs && strcmp(w->place, AGENT_HOME) == 0);
	w = writable(&t.s, data);
	CHECK(w && !w->tmpfs && strcmp(w->place, rw) == 0);
	CHECK(is_dir("rw/data/bin"));
	/* shallow first: a path nested in another is mounted on top of it */
	for (size_t i = 1; i < t.s.exec.n; i++) {
		int a = 0, b = 0;
		for (const char *p = t.s.exec.w[i - 1].path; *p; p++)
			a += *p == '/';
		for (const char *p = t.s.exec.w[i].path; *p; p++)
			b += *p == '/';
		CHECK(a <= b);
	}
	/* the layout as session.start records it */
	json_t *j = exec_layout_to_json(&t.s.exec);
	CHECK(json_is_true(json_object_get(j, "strict")));
	CHECK(json_array_size(json_object_get(j, "allow_writable")) == 5);
	CHECK(json_array_size(json_object_get(j, "hidden")) == 0);
	json_decref(j);
	session_end(&t);
}

/* Each refused with a message naming it; nothing made. */
static void test_refused(void)
{
	_cleanup_free_ char *ro = tmp_path("ro");
	_cleanup_free_ char *log = tmp_path("state/log/x");
	_cleanup_free_ char *ro_line = xasprintf("read-only %s\nexec allow-writable %s/bin\n", ro, ro);
	_cleanup_free_ char *log_line = xasprintf("exec allow-writable %s\n", log);
	const struct {
		const char *text, *why;
		const char *not_made;
	} cases[] = {
		{ "exec allow-writable /etc\n", "not in a place the sandbox writes", NULL },
		{ "exec allow-writable /usr/local/bin\n", "not in a place the sandbox writes", NULL },
		{ "exec allow-writable /srv/x\n", "not in a place the sandbox writes", NULL },
		{ "exec allow-writable lnk/bin\n", "symlink", "outside/bin" },
		{ "exec allow-writable lnk\n", "symlink", NULL },
		{ "exec allow-writable afile\n", "not a directory", NULL },
		{ "exec allow-writable afile/x\n", "not a directory", NULL },
		{ "exec allow-writable .vscode/bin\n", "read-only in the sandbox", "ws/.vscode/bin" },
		{ "exec allow-writable .claude\n", "read-only in the sandbox", NULL },
		{ "exec allow-writable .git/x\n", "a name warden protects", "ws/.git" },
		{ "exec allow-writable src/.idea/x\n", "a name warden protects", "ws/src/.idea" },
		{ "exec allow-writable keys/id_rsa.key/bin\n", "masked", "ws/keys" },
		{ ro_line, "read-only in the sandbox", "ro/bin" },
		{ log_line, "warden's own log directory", "state/log/x" },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct session t;
		session_plan(&t, cases[i].text);
		CHECK(t.r < 0);
		CHECK(strstr(t.e.msg, "exec allow-writable") != NULL);
		if (!strstr(t.e.msg, cases[i].why)) {
			fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, t.e.msg, cases[i].why);
			CHECK(!"the message says why");
		}
		CHECK(!cases[i].not_made || !exists(cases[i].not_made));
		session_end(&t);
	}
}

/* Strict mode hides the denied files of the system directories and of a
 * read-only path, with their hard links beside them; not those of the
 * workspace; none without strict mode. */
static void test_hidden(void)
{
	put("ro/prog");
	_cleanup_free_ char *prog = tmp_path("ro/prog");
	_cleanup_free_ char *prog2 = tmp_path("ro/prog2");
	if (link(prog, prog2) < 0) {
		perror("link");
		exit(2);
	}
	_cleanup_free_ char *ro = tmp_path("ro");
	_cleanup_free_ char *mainc = tmp_path("ws/src/main.c");
	char sh[PATH_MAX] = "";
	bool have_sh = realpath("/bin/sh", sh) != NULL;
	_cleanup_free_ char *text = xasprintf("read-only %s\nexec strict\nexec deny %s\n"
					      "exec deny %s\n%s%s\n", ro, prog, mainc,
					      have_sh ? "exec deny " : "#", sh);
	struct session t;
	session_plan(&t, text);
	CHECK(t.r == 0);
	CHECK(strv_contains(&t.s.exec.hidden, prog));
	CHECK(strv_contains(&t.s.exec.hidden, prog2));
	CHECK(!have_sh || strv_contains(&t.s.exec.hidden, sh));
	CHECK(!strv_contains(&t.s.exec.hidden, mainc));
	session_end(&t);
	_cleanup_free_ char *loose = xasprintf("read-only %s\nexec deny %s\n", ro, prog);
	session_plan(&t, loose);
	CHECK(t.r == 0 && !t.s.exec.strict && t.s.exec.hidden.n == 0);
	session_end(&t);
}

static void test_beneath(void)
{
	_cleanup_free_ char *ws = tmp_path("ws");
	int root = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0);
	int fd = exec_open_dir_beneath(root, "", false);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(exec_open_dir_beneath(root, "lnk", false) < 0 && errno == ELOOP);
	CHECK(exec_open_dir_beneath(root, "lnk/x", true) < 0 && errno == ELOOP);
	CHECK(!exists("outside/x"));
	CHECK(exec_open_dir_beneath(root, "afile", false) < 0 && errno == ENOTDIR);
	CHECK(exec_open_dir_beneath(root, "src/../..", true) < 0 && errno == EINVAL);
	CHECK(exec_open_dir_beneath(root, "new/deeper", false) < 0 && errno == ENOENT);
	fd = exec_open_dir_beneath(root, "new//deeper/", true);
	CHECK(fd >= 0 && is_dir("ws/new/deeper"));
	if (fd >= 0)
		close(fd);
	close(root);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	make_tree();
	test_placed();
	test_refused();
	test_hidden();
	test_beneath();

	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_status_counted("sandbox_execplan");
}
