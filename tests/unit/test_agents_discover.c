/* test_agents_discover.c - finding the client on the host
 * (src/agents/discover.c) over fake trees in a temporary directory: an npm
 * prefix, a native install's symlinked version directory, node under an
 * nvm-style tree, a tree holding .ssh (refused), the home itself (refused),
 * a command on the system PATH (nothing exposed), profile paths settled;
 * a virtual environment's base interpreter (src/agents/venv.c): pyvenv.cfg's
 * `home` read as site.py reads it, and only a Python installation taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/agents/discover.h"
#include "src/agents/venv.h"

static void mkfile(const char *path, const char *text, mode_t mode)
{
	_cleanup_free_ char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	mkdir_p(dir, 0755, NULL);
	FILE *f = fopen(path, "we");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void mklink(const char *target, const char *path)
{
	_cleanup_free_ char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	mkdir_p(dir, 0755, NULL);
	if (symlink(target, path) < 0) {
		perror(path);
		exit(2);
	}
}

/* Run discovery for cmd with PATH path_env and the system roots visible. */
static int discover(const char *cmd, const char *path_env, const char *home,
		    struct discovery *d, struct werr *e)
{
	_cleanup_strv_ struct strv visible = { 0 };
	discover_visible_roots(NULL, NULL, &visible);
	return discover_client(cmd, path_env, NULL, home, &visible, d, e);
}

static bool has_exposure(const struct discovery *d, const char *path)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].path, path) == 0)
			return true;
	return false;
}

static void test_npm_prefix_with_nvm_node(const char *home)
{
	_cleanup_free_ char *vx = xasprintf("%s/.nvm/versions/node/v20.1.0", home);
	_cleanup_free_ char *node = xasprintf("%s/bin/node", vx);
	mkfile(node, "#!/bin/sh\n", 0755);
	_cleanup_free_ char *nm = xasprintf("%s/.npm-global/lib/node_modules", home);
	_cleanup_free_ char *cli = xasprintf("%s/@anthropic-ai/claude-code/cli.js", nm);
	mkfile(cli, "#!/usr/bin/env node\nconsole.log(1)\n", 0755);
	_cleanup_free_ char *bin = xasprintf("%s/.npm-global/bin/claude", home);
	mklink("../lib/node_modules/@anthropic-ai/claude-code/cli.js", bin);
	_cleanup_free_ char *path = xasprintf("%s/.npm-global/bin:%s/bin:/usr/bin:/bin", home, vx);

	struct discovery d = { 0 };
	struct werr e = { 0 };
	CHECK(discover("claude", path, home, &d, &e) == 0);
	CHECK(d.n == 2);
	CHECK(has_exposure(&d, nm));
	CHECK(has_exposure(&d, vx));
	CHECK_STR(d.exec_path, cli);
	CHECK(d.path_dirs.n == 1);
	_cleanup_free_ char *vxbin = xasprintf("%s/bin", vx);
	CHECK_STR(d.path_dirs.n ? d.path_dirs.v[0] : NULL, vxbin);

	/* applied: read-only policy paths named after the client */
	struct policy p = { 0 };
	discover_apply(&d, "claude", &p);
	CHECK(p.npaths == 2);
	for (size_t i = 0; i < p.npaths; i++) {
		CHECK(p.paths[i].mode == POLICY_RO);
		CHECK_STR(p.paths[i].origin, "client:claude");
	}
	policy_free(&p);
	/* and PATH inside gets node's directory first */
	struct strv env = { 0 };
	strv_push(&env, "PATH=/usr/bin:/bin");
	discover_env_path(&d, &env);
	_cleanup_free_ char *want = xasprintf("PATH=%s/bin:/usr/bin:/bin", vx);
	CHECK_STR(env.v[0], want);
	strv_free(&env);
	discovery_free(&d);
}

static void test_native_version_dir(const char *home)
{
	_cleanup_free_ char *ver = xasprintf("%s/.local/share/claude/versions/1.2.3", home);
	_cleanup_free_ char *exe = xasprintf("%s/claude", ver);
	mkfile(exe, "\177ELF", 0755);
	_cleanup_free_ char *link = xasprintf("%s/.local/bin/claude", home);
	mklink(exe, link);
	_cleanup_free_ char *path = xasprintf("%s/.local/bin:/usr/bin", home);
	struct discovery d = { 0 };
	struct werr e = { 0 };
	CHECK(discover("claude", path, home, &d, &e) == 0);
	CHECK(d.n == 1);
	CHECK(has_exposure(&d, ver));
	CHECK_STR(d.exec_path, exe);
	CHECK(d.path_dirs.n == 0);
	discovery_free(&d);
}

static void test_credential_store_refused(const char *home)
{
	_cleanup_free_ char *tool = xasprintf("%s/apps/tools/bin/tool", home);
	mkfile(tool, "#!/bin/sh\n", 0755);
	_cleanup_free_ char *ssh = xasprintf("%s/apps/tools/.ssh", home);
	mkdir(ssh, 0700);
	_cleanup_free_ char *path = xasprintf("%s/apps/tools/bin", home);
	struct discovery d = { 0 };
	struct werr e = { 0 };
	CHECK(discover("tool", path, home, &d, &e) < 0);
	CHECK(strstr(e.msg, "credential store") != NULL);
	CHECK(d.n == 0);
	discovery_free(&d);

	/* a client inside a credential store */
	_cleanup_free_ char *in = xasprintf("%s/.aws/bin/awsclient", home);
	mkfile(in, "#!/bin/sh\n", 0755);
	_cleanup_free_ char *path2 = xasprintf("%s/.aws/bin", home);
	e = (struct werr){ 0 };
	CHECK(discover("awsclient", path2, home, &d, &e) < 0);
	CHECK(strstr(e.msg, "credential store") != NULL);
	discovery_free(&d);
}

static void test_home_never_exposed(const char *home)
{
	/* ~/bin/tool: its prefix would be the home; the file alone instead */
	_cleanup_free_ char *tool = xasprintf("%s/bin/hometool", home);
	mkfile(tool, "#!/bin/sh\n", 0755);
	_cleanup_free_ char *path = xasprintf("%s/bin", home);
	struct discovery d = { 0 };
	struct werr e = { 0 };
	CHECK(discover("hometool", path, home, &d, &e) == 0);
	CHECK(d.n == 1);
	CHECK(has_exposure(&d, tool));
	discovery_free(&d);
	/* ~/.local/bin/tool (a plain file): never all of ~/.local */
	_cleanup_free_ char *local = xasprintf("%s/.local/bin/localtool", home);
	mkfile(local, "#!/bin/sh\n", 0755);
	_cleanup_free_ char *lpath = xasprintf("%s/.local/bin", home);
	CHECK(discover("localtool", lpath, home, &d, &e) == 0);
	CHECK(d.n == 1);
	CHECK(has_exposure(&d, local));
	discovery_free(&d);
}

static void test_system_command(void)
{
	struct discovery d = { 0 };
	struct werr e = { 0 };
	CHECK(discover("sh", "/usr/bin:/bin", "/nonexistent-home", &d, &e) == 0);
	CHECK(d.n == 0);
	CHECK(d.exec_path == NULL);
	/* not found anywhere: nothing, init says so */
	CHECK(discover("no-such-command-wardentest", "/usr/bin:/bin", NULL, &d, &e) == 0);
	CHECK(d.n == 0);
	CHECK(d.exec_path == NULL);
	discovery_free(&d);
}

static void test_settle_paths(const char *home)
{
	_cleanup_free_ char *target = xasprintf("%s/target", home);
	mkdir(target, 0755);
	_cleanup_free_ char *link = xasprintf("%s/link", home);
	mklink(target, link);
	struct policy p = { 0 };
	/* a path below a symlinked directory is kept as written */
	_cleanup_free_ char *below = xasprintf("%s/sub", target);
	mkdir(below, 0755);
	p.paths = xcalloc(3, sizeof *p.paths);
	p.paths[0] = (struct policy_path){ .path = xstrdup(link), .mode = POLICY_RO,
		.origin = xstrdup("p.profile:1") };
	p.paths[1] = (struct policy_path){ .path = xasprintf("%s/missing", home),
		.mode = POLICY_RO, .origin = xstrdup("p.profile:2") };
	p.paths[2] = (struct policy_path){ .path = xasprintf("%s/sub", link), .mode = POLICY_RO,
		.origin = xstrdup("p.profile:3") };
	p.npaths = 3;
	discover_settle_paths(&p);
	CHECK(p.npaths == 4);
	CHECK_STR(p.npaths == 4 ? p.paths[3].path : NULL, target);
	CHECK_STR(p.npaths == 4 ? p.paths[3].origin : NULL, "p.profile:1");
	policy_free(&p);
}

/* A Python installation at prefix (bin/python3.11, the stdlib's landmark
 * when landmark). */
static void python_tree(const char *prefix, bool landmark)
{
	_cleanup_free_ char *py = xasprintf("%s/bin/python3.11", prefix);
	_cleanup_free_ char *link = xasprintf("%s/bin/python3", prefix);
	_cleanup_free_ char *os = xasprintf("%s/lib/python3.11/os.py", prefix);
	mkfile(py, "#!/bin/sh\n", 0755);
	if (symlink("python3.11", link) != 0)
		exit(2);
	mkfile(os, landmark ? "# landmark\n" : "", 0644);
	if (!landmark)
		unlink(os);
}

static void test_venv_base(const char *home)
{
	_cleanup_free_ char *uv = xasprintf("%s/uv/cpython-3.11", home);
	_cleanup_free_ char *fake = xasprintf("%s/fake", home);
	python_tree(uv, true);
	python_tree(fake, false);
	_cleanup_free_ char *want = xasprintf("%s/bin/python3.11", uv);
	_cleanup_free_ char *cfg = xasprintf("home = %s/bin\nversion = 3.11.2\n", uv);
	_cleanup_free_ char *b = venv_base(cfg);
	CHECK_STR(b, want);
	/* the key's case and the blanks do not count (site.py); CRLF too */
	_cleanup_free_ char *cfg2 =
		xasprintf("include-system-site-packages = false\r\n  HOME\t=  %s/bin  \r\n", uv);
	_cleanup_free_ char *b2 = venv_base(cfg2);
	CHECK_STR(b2, want);
	/* no landmark: no Python installation, whatever bin/python3 is */
	_cleanup_free_ char *cfg3 = xasprintf("home = %s/bin\n", fake);
	CHECK(venv_base(cfg3) == NULL);
	CHECK(venv_base("home = uv/cpython-3.11/bin\n") == NULL); /* relative */
	CHECK(venv_base("version = 3.11\n") == NULL);
	CHECK(venv_base("home\n") == NULL);
	CHECK(venv_base("home = /nonexistent/bin\n") == NULL);
	_cleanup_free_ char *homeonly = xasprintf("home = %s\n", home); /* no python3 there */
	CHECK(venv_base(homeonly) == NULL);
}

int main(void)
{
	tmpdir_make("warden-discover");
	char home[PATH_MAX];
	if (!realpath(tmpdir, home))
		return 2;
	test_npm_prefix_with_nvm_node(home);
	test_native_version_dir(home);
	test_credential_store_refused(home);
	test_home_never_exposed(home);
	test_system_command();
	test_settle_paths(home);
	test_venv_base(home);
	tmpdir_remove();
	return check_status_counted("agents-discover");
}
