/* test_policy_parse.c - unit tests of the profile parser: the default
 * profile, every directive, every error's exact FILE:LINE:COL message,
 * includes and loops, "~" expansion against the home given to policy_load,
 * layering on the default, network rules (`net allow|deny`, policy_add_net)
 * and their compiled form: each rule parsed once, with its origin, and the
 * rule set the proxy decides with; secrets by reference (`secret`,
 * policy_add_secret): their hosts, sources and origins, rebinding, the hosts
 * too wide to bind, and their names kept out of the environment lists;
 * limits (`limit KIND VALUE`): the defaults, values, units, memory shares, the last line
 * winning, their written form, and each bad value's error. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/policy/directives.h"
#include "src/policy/policy.h"
#include "check.h"

static char tmpdir[PATH_MAX];

static void write_text(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static char *tmp_path(const char *rel) { return xasprintf("%s/%s", tmpdir, rel); }

/* The home directory the helpers below hand the parser ("~/" expands
 * against it); a test sets it before the checks that depend on it. */
static const char *home = "/home/u";

static int parse_n(struct policy *p, const char *text, size_t len, struct werr *e)
{
	memset(p, 0, sizeof *p);
	memset(e, 0, sizeof *e);
	return policy_parse_text(p, "t.profile", NULL, home, text, len, e);
}

static int parse(struct policy *p, const char *text, struct werr *e)
{
	return parse_n(p, text, strlen(text), e);
}

/* The text must fail with exactly this message. */
static void expect_err_n(int line, const char *text, size_t len, const char *msg)
{
	struct policy p;
	struct werr e;
	if (parse_n(&p, text, len, &e) == 0) {
		fprintf(stderr, "%s:%d: parse succeeded, expected: %s\n", __FILE__, line, msg);
		failures++;
	} else if (strcmp(e.msg, msg) != 0 || e.errnum != 0) {
		fprintf(stderr, "%s:%d: wrong error\n  got:      %s (errnum %d)\n  expected: %s\n",
			__FILE__, line, e.msg, e.errnum, msg);
		failures++;
	}
	policy_free(&p);
}
#define EXPECT_ERR(text, msg) expect_err_n(__LINE__, (text), strlen(text), (msg))

static void expect_ok_n(int line, const char *text)
{
	struct policy p;
	struct werr e;
	if (parse(&p, text, &e) < 0) {
		fprintf(stderr, "%s:%d: parse failed: %s\n", __FILE__, line, e.msg);
		failures++;
	}
	policy_free(&p);
}
#define EXPECT_OK(text) expect_ok_n(__LINE__, (text))

static const struct policy_path *find_path(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < p->npaths; i++)
		if (strcmp(p->paths[i].path, path) == 0)
			return &p->paths[i];
	return NULL;
}

static void test_default(void)
{
	struct policy p;
	struct werr e;
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(p.sources.n == 1);
	CHECK_STR(p.sources.v[0], "builtin:default");
	CHECK(p.npaths == 0);
	CHECK(p.protect.n == 28);
	CHECK(strv_contains(&p.protect, ".cursor") && strv_contains(&p.protect, ".roo"));
	CHECK(strv_contains(&p.protect, ".git/hooks"));
	CHECK(strv_contains(&p.protect, ".git/config"));
	CHECK(strv_contains(&p.protect, ".envrc"));
	CHECK(p.mask.n == 18);
	CHECK(strv_contains(&p.mask, ".env.*"));
	CHECK(strv_contains(&p.mask, "!.env.example") && strv_contains(&p.mask, "!.env.dist"));
	CHECK(strv_contains(&p.mask, "*.pem"));
	CHECK(strv_contains(&p.mask, "id_dsa*"));
	CHECK(strv_contains(&p.mask, ".git-credentials"));
	CHECK(p.env_pass.n == 8);
	CHECK(strv_contains(&p.env_pass, "LC_*"));
	CHECK(strv_contains(&p.env_pass, "NO_COLOR"));
	/* tools' own update checks and telemetry switched off */
	CHECK(p.env_set.n == 8);
	CHECK(strv_contains(&p.env_set, "NPM_CONFIG_UPDATE_NOTIFIER=false"));
	CHECK(strv_contains(&p.env_set, "PIP_DISABLE_PIP_VERSION_CHECK=1"));
	CHECK(p.nnet == 0 && p.net == NULL); /* no rules: no network */
	CHECK(p.signal_grace == POLICY_SIGNAL_GRACE_DEFAULT && p.signal_grace == 10);
	policy_free(&p);
	CHECK(p.protect.n == 0 && p.sources.v == NULL);
	policy_free(&p); /* twice is fine */

	/* The default also parses on its own, and "include default" pulls it in
	 * exactly once. */
	CHECK(parse(&p, "include default\ninclude default\n", &e) == 0);
	CHECK(p.sources.n == 1 && p.protect.n == 28);
	policy_free(&p);
}

static void test_directives(void)
{
	struct policy p;
	struct werr e;
	home = "/home/u";
	const char *text =
		"# comment line\n"
		"   # indented comment\n"
		"\n"
		"read-only /opt/data/\n"
		"read-write ~/cache\n"
		"read-write\t/srv/x   # trailing comment\n"
		"read-only /srv/x\n"
		"read-only /usr\n"
		"read-only /dev/null\n"
		"protect secrets/\n"
		"protect secrets\n"
		"protect a/b#c\n"
		"mask *.sqlite\n"
		"mask a#b\n"
		"mask dir/*.db\n"
		"env pass MY_*\n"
		"env pass _X1\n"
		"env set FOO=bar  baz=qux\n"
		"env set EMPTY=\n"
		"env set SPACE= lead\n"
		"env set FOO=again # comment\n"
		"env set HASH=a#b\n"
		"mask last-line-unterminated";
	CHECK(parse(&p, text, &e) == 0);
	if (failures)
		fprintf(stderr, "  %s\n", e.msg);

	CHECK(p.npaths == 5);
	const struct policy_path *pp = find_path(&p, "/opt/data");
	CHECK(pp && pp->mode == POLICY_RO);
	CHECK_STR(pp ? pp->origin : NULL, "t.profile:4");
	pp = find_path(&p, "/home/u/cache");
	CHECK(pp && pp->mode == POLICY_RW);
	pp = find_path(&p, "/srv/x");
	CHECK(pp && pp->mode == POLICY_RO); /* the later directive wins */
	CHECK_STR(pp ? pp->origin : NULL, "t.profile:7");
	CHECK(find_path(&p, "/usr") && find_path(&p, "/dev/null"));

	CHECK(p.protect.n == 2);
	CHECK(strv_contains(&p.protect, "secrets"));
	CHECK(strv_contains(&p.protect, "a/b#c"));
	CHECK(p.mask.n == 4);
	CHECK(strv_contains(&p.mask, "*.sqlite"));
	CHECK(strv_contains(&p.mask, "a#b"));
	CHECK(strv_contains(&p.mask, "dir/*.db"));
	CHECK(strv_contains(&p.mask, "last-line-unterminated"));
	CHECK(p.env_pass.n == 2);
	CHECK(strv_contains(&p.env_pass, "MY_*"));
	CHECK(p.env_set.n == 4);
	CHECK_STR(p.env_set.v[0], "FOO=again");
	CHECK_STR(p.env_set.v[1], "EMPTY=");
	CHECK_STR(p.env_set.v[2], "SPACE= lead");
	CHECK_STR(p.env_set.v[3], "HASH=a#b");

	/* The removing directives, on top. */
	const char *undo =
		"unprotect secrets/\n"
		"unprotect not-there\n"
		"unmask *.sqlite\n"
		"unmask dir/*.DB\n"
		"env unset FOO\n"
		"env unset MY_*\n"
		"env unset NEVER_SET\n";
	CHECK(policy_parse_text(&p, "u.profile", NULL, home, undo, strlen(undo), &e) == 0);
	CHECK(p.protect.n == 1 && !strv_contains(&p.protect, "secrets"));
	CHECK(p.mask.n == 3 && !strv_contains(&p.mask, "*.sqlite"));
	CHECK(strv_contains(&p.mask, "dir/*.db")); /* unmask is an exact string match */
	CHECK(p.env_set.n == 3 && strcmp(p.env_set.v[0], "EMPTY=") == 0);
	CHECK(p.env_pass.n == 1 && strcmp(p.env_pass.v[0], "_X1") == 0);
	policy_free(&p);

	/* env unset also removes a passed name, and a set one. */
	CHECK(parse(&p, "env pass A\nenv set A=1\nenv set B=2\nenv unset A\n", &e) == 0);
	CHECK(p.env_pass.n == 0 && p.env_set.n == 1);
	CHECK_STR(p.env_set.v[0], "B=2");
	policy_free(&p);

	/* A line of exactly 4096 bytes is fine. */
	char line[4097];
	memset(line, 'x', sizeof line - 1);
	memcpy(line, "mask ", 5);
	line[4096] = '\0';
	EXPECT_OK(line);
	EXPECT_OK("");
	EXPECT_OK("\n\n\n");
	EXPECT_OK("#only a comment without newline");
	EXPECT_OK("mask x # comment with a \x01 control char and \xff bad UTF-8");
	EXPECT_OK("mask caf\xc3\xa9\n");
}

static void test_errors(void)
{
	home = "/home/u";
	EXPECT_ERR("bogus x\n", "t.profile:1:1: unknown directive 'bogus'");
	EXPECT_ERR("\n  Protect x\n", "t.profile:2:3: unknown directive 'Protect'");
	EXPECT_ERR("\n  protect\n", "t.profile:2:10: protect: missing argument");
	EXPECT_ERR("protect   # nothing\n", "t.profile:1:8: protect: missing argument");
	EXPECT_ERR("protect a b\n", "t.profile:1:11: protect: unexpected argument 'b'");
	EXPECT_ERR("include\n", "t.profile:1:8: include: missing argument");
	EXPECT_ERR("include a b\n", "t.profile:1:11: include: unexpected argument 'b'");
	EXPECT_ERR("read-only\n", "t.profile:1:10: read-only: missing argument");
	EXPECT_ERR("read-write /a /b /c\n", "t.profile:1:15: read-write: unexpected argument '/b'");
	EXPECT_ERR("unmask\n", "t.profile:1:7: unmask: missing argument");
	EXPECT_ERR("unprotect a b\n", "t.profile:1:13: unprotect: unexpected argument 'b'");

	EXPECT_ERR("protect /abs\n", "t.profile:1:9: protect: path must be relative to the workspace: '/abs'");
	EXPECT_ERR("protect a/../b\n",
		   "t.profile:1:9: protect: '.', '..' and empty components are not allowed: 'a/../b'");
	EXPECT_ERR("protect ./a\n",
		   "t.profile:1:9: protect: '.', '..' and empty components are not allowed: './a'");
	EXPECT_ERR("protect a//b\n",
		   "t.profile:1:9: protect: '.', '..' and empty components are not allowed: 'a//b'");
	EXPECT_ERR("protect ..\n",
		   "t.profile:1:9: protect: '.', '..' and empty components are not allowed: '..'");
	EXPECT_ERR("unprotect /x\n", "t.profile:1:11: unprotect: path must be relative to the workspace: '/x'");

	EXPECT_ERR("read-only rel\n", "t.profile:1:11: read-only: path must be absolute or start with ~/: 'rel'");
	EXPECT_ERR("read-only ~root/x\n",
		   "t.profile:1:11: read-only: path must be absolute or start with ~/: '~root/x'");
	EXPECT_ERR("read-only /a/./b\n",
		   "t.profile:1:11: read-only: '.', '..' and empty components are not allowed: '/a/./b'");
	EXPECT_ERR("read-write  ~/../etc\n",
		   "t.profile:1:13: read-write: '.', '..' and empty components are not allowed: '~/../etc'");
	EXPECT_ERR("read-only /\n", "t.profile:1:11: read-only: '/' cannot be bound into the sandbox");
	EXPECT_ERR("read-only ///\n", "t.profile:1:11: read-only: '/' cannot be bound into the sandbox");
	EXPECT_ERR("read-only /proc\n", "t.profile:1:11: read-only: '/proc' cannot be bound into the sandbox");
	EXPECT_ERR("read-only /proc/1/root\n",
		   "t.profile:1:11: read-only: '/proc/1/root' cannot be bound into the sandbox");
	EXPECT_ERR("read-only /sys/\n", "t.profile:1:11: read-only: '/sys' cannot be bound into the sandbox");
	EXPECT_ERR("read-only /dev\n", "t.profile:1:11: read-only: '/dev' cannot be bound into the sandbox");
	EXPECT_ERR("read-write /\n", "t.profile:1:12: read-write: '/' cannot be bound into the sandbox");
	static const char *const rw[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/boot",
					  "/dev/shm", "/sys/fs/cgroup", "/proc/self" };
	for (size_t i = 0; i < ARRAY_LEN(rw); i++) {
		char text[64], msg[160];
		snprintf(text, sizeof text, "read-write %s/\n", rw[i]);
		if (strncmp(rw[i], "/proc", 5) == 0)
			snprintf(msg, sizeof msg, "t.profile:1:12: read-write: '%s' cannot be bound into the sandbox", rw[i]);
		else
			snprintf(msg, sizeof msg, "t.profile:1:12: read-write: '%s' may not be writable in the sandbox", rw[i]);
		EXPECT_ERR(text, msg);
	}
	EXPECT_OK("read-write /usrlocal\nread-write /usr/local\nread-write /devices\nread-write /etc2\n");

	EXPECT_ERR("mask /x\n", "t.profile:1:6: mask: pattern must be relative to the workspace: '/x'");
	EXPECT_ERR("mask a/../b\n", "t.profile:1:6: mask: '..' components are not allowed: 'a/../b'");
	EXPECT_ERR("mask ..\n", "t.profile:1:6: mask: '..' components are not allowed: '..'");
	EXPECT_OK("mask ..x\nmask x..\nmask a/..b/c\n");
	EXPECT_OK("mask !.env.local\nmask !dir/*.db\nunmask !.env.example\n");
	EXPECT_ERR("mask !\n", "t.profile:1:6: mask: '!' needs a pattern after it");
	EXPECT_ERR("mask !/x\n", "t.profile:1:6: mask: pattern must be relative to the workspace: '!/x'");
	EXPECT_ERR("mask !a/../b\n", "t.profile:1:6: mask: '..' components are not allowed: '!a/../b'");

	EXPECT_ERR("env\n", "t.profile:1:4: env: missing argument (pass, set or unset)");
	EXPECT_ERR("env frob X\n", "t.profile:1:5: env: unknown subcommand 'frob' (expected pass, set or unset)");
	EXPECT_ERR("env pass\n", "t.profile:1:9: env pass: missing argument");
	EXPECT_ERR("env pass 1X\n", "t.profile:1:10: env pass: invalid variable name '1X'");
	EXPECT_ERR("env pass *\n", "t.profile:1:10: env pass: invalid variable name '*'");
	EXPECT_ERR("env pass A*B\n", "t.profile:1:10: env pass: invalid variable name 'A*B'");
	EXPECT_ERR("env pass A-B\n", "t.profile:1:10: env pass: invalid variable name 'A-B'");
	EXPECT_ERR("env pass FOO=bar\n", "t.profile:1:10: env pass: invalid variable name 'FOO=bar' "
		   "(env pass takes a name from your environment; env set NAME=VALUE gives one a value)");
	EXPECT_ERR("env pass A B\n", "t.profile:1:12: env pass: unexpected argument 'B'");
	EXPECT_ERR("env unset\n", "t.profile:1:10: env unset: missing argument");
	EXPECT_ERR("env unset A=1\n", "t.profile:1:11: env unset: invalid variable name 'A=1'");
	EXPECT_ERR("env set\n", "t.profile:1:8: env set: missing argument");
	EXPECT_ERR("env set FOO\n", "t.profile:1:9: env set: expected NAME=VALUE");
	EXPECT_ERR("env set FOO =x\n", "t.profile:1:9: env set: invalid variable name 'FOO '");
	EXPECT_ERR("env set =x\n", "t.profile:1:9: env set: invalid variable name ''");
	EXPECT_ERR("env set A*=1\n", "t.profile:1:9: env set: invalid variable name 'A*'");

	expect_err_n(__LINE__, "mask a\0b\n", 9, "t.profile:1:7: NUL byte in profile");
	expect_err_n(__LINE__, "mask a\n# \0\n", 11, "t.profile:2:3: NUL byte in profile");
	expect_err_n(__LINE__, "\0", 1, "t.profile:1:1: NUL byte in profile");
	EXPECT_ERR("mask a\r\n", "t.profile:1:7: carriage return in profile (CRLF line endings?)");
	EXPECT_ERR("mask a\x1b[0m\n", "t.profile:1:7: control character 0x1b in profile");
	EXPECT_ERR("mask \xff\n", "t.profile:1:6: invalid UTF-8 in profile");
	EXPECT_ERR("mask \xc0\x80\n", "t.profile:1:6: invalid UTF-8 in profile");     /* overlong */
	EXPECT_ERR("mask \xed\xa0\x80\n", "t.profile:1:6: invalid UTF-8 in profile"); /* surrogate */
	EXPECT_ERR("mask a\xc3\n", "t.profile:1:7: invalid UTF-8 in profile");        /* truncated */
	EXPECT_ERR("mask \xff\r\n", "t.profile:1:6: invalid UTF-8 in profile");      /* the first wins */
	EXPECT_ERR("mask \x01\xff\n", "t.profile:1:6: control character 0x01 in profile");
	EXPECT_ERR("mask a\x7f\n", "t.profile:1:7: control character 0x7f in profile");

	char *longline = xmalloc(5000);
	memset(longline, 'x', 4097);
	memcpy(longline, "mask ", 5);
	memcpy(longline + 4097, "\n", 2);
	EXPECT_ERR(longline, "t.profile:1:4097: line longer than 4096 bytes");
	free(longline);

	/* At most 4096 entries per list. */
	size_t cap = 4097 * 32;
	char *many = xmalloc(cap), *o = many;
	for (int i = 0; i < 4097; i++)
		o += snprintf(o, cap - (size_t)(o - many), "mask m%d\nmask m0\n", i);
	EXPECT_ERR(many, "t.profile:8193:1: mask: too many entries (max 4096)");
	free(many);

	EXPECT_ERR("include x.profile\n", "t.profile:1:9: include: including files is not allowed here");
	EXPECT_ERR("mask a\nmask b\n\n\tinclude /etc/passwd\n",
		   "t.profile:4:10: include: including files is not allowed here");

	home = NULL;
	EXPECT_ERR("read-write ~/x\n", "t.profile:1:12: read-write: '~' used but no home directory is known");
	EXPECT_ERR("read-only ~\n", "t.profile:1:11: read-only: '~' used but no home directory is known");
	home = "home/rel";
	EXPECT_ERR("read-only ~/x\n",
		   "t.profile:1:11: read-only: the home directory 'home/rel' is not an absolute normalised path");
	home = "/home/u";
}

static void test_home(void)
{
	struct policy p;
	struct werr e;
	home = "/home/u/";
	CHECK(parse(&p, "read-only ~\nread-write ~/a/b/\nread-only ~/c\nread-only ~/\n", &e) == 0);
	CHECK(p.npaths == 3);
	CHECK(find_path(&p, "/home/u") && find_path(&p, "/home/u")->mode == POLICY_RO);
	CHECK(find_path(&p, "/home/u/a/b") && find_path(&p, "/home/u/a/b")->mode == POLICY_RW);
	CHECK(find_path(&p, "/home/u/c") != NULL);
	CHECK_STR(p.paths[0].origin, "t.profile:4"); /* "~/" replaced "~" */
	policy_free(&p);

	/* A home of "/" must not give "//x". */
	home = "/";
	CHECK(parse(&p, "read-only ~/x\n", &e) == 0);
	CHECK(p.npaths == 1 && strcmp(p.paths[0].path, "/x") == 0);
	policy_free(&p);
	EXPECT_ERR("read-only ~\n", "t.profile:1:11: read-only: '/' cannot be bound into the sandbox");
	home = "/home/u";
}

/* policy_load takes the home directory as an argument: two policies loaded
 * from one file with two homes each expand "~" against their own, whatever
 * was loaded before, and with none "~" is an error. */
static void test_load_home(void)
{
	struct policy a, b, c;
	struct werr e;
	write_text("home.profile", "read-only ~/docs\ninclude home-inc.profile\n");
	write_text("home-inc.profile", "read-write ~\n");
	char *path = tmp_path("home.profile");
	CHECK(policy_load(&a, path, "/home/one", &e) == 0);
	CHECK(policy_load(&b, path, "/srv/two/", &e) == 0);
	CHECK(a.npaths == 2 && b.npaths == 2);
	CHECK(find_path(&a, "/home/one/docs") && find_path(&a, "/home/one")->mode == POLICY_RW);
	CHECK(find_path(&b, "/srv/two/docs") && find_path(&b, "/srv/two")->mode == POLICY_RW);
	CHECK(!find_path(&b, "/home/one/docs"));
	/* text parsed on top takes its own home too */
	CHECK(policy_parse_text(&a, "t.profile", NULL, "/home/three", "read-only ~/x\n", 14, &e) == 0);
	CHECK(find_path(&a, "/home/three/x") && a.npaths == 3);
	CHECK(policy_load(&c, path, NULL, &e) < 0);
	CHECK(strstr(e.msg, "home.profile:1:11: read-only: '~' used but no home directory is known") != NULL);
	policy_free(&a);
	policy_free(&b);
	free(path);
}

static void test_includes(void)
{
	struct policy p;
	struct werr e;
	char real[PATH_MAX];

	write_text("main.profile", "mask from-main\ninclude sub/a.profile\ninclude default\n");
	write_text("sub/a.profile", "mask from-a\ninclude b.profile\n");
	write_text("sub/b.profile", "mask from-b\ninclude /dev/null\n");
	char *main_path = tmp_path("main.profile");
	/* /dev/null is not a regular file. */
	CHECK(policy_load(&p, main_path, home, &e) < 0);
	CHECK(realpath(tmpdir, real) != NULL);
	char *expect = xasprintf("%s/sub/b.profile:2:9: include '/dev/null': not a regular file", real);
	CHECK_STR(e.msg, expect);
	CHECK(e.errnum == 0);
	CHECK(p.sources.v == NULL && p.mask.n == 0); /* freed on error */
	free(expect);

	write_text("sub/b.profile", "mask from-b\n");
	CHECK(policy_load(&p, main_path, home, &e) == 0);
	CHECK(strv_contains(&p.mask, "from-main") && strv_contains(&p.mask, "from-a") &&
	      strv_contains(&p.mask, "from-b"));
	CHECK(strv_contains(&p.mask, "*.pem")); /* layered on the default */
	CHECK(p.sources.n == 4);
	CHECK_STR(p.sources.v[0], "builtin:default");
	expect = xasprintf("%s/main.profile", real);
	CHECK_STR(p.sources.v[1], expect);
	free(expect);
	expect = xasprintf("%s/sub/a.profile", real);
	CHECK_STR(p.sources.v[2], expect);
	free(expect);
	expect = xasprintf("%s/sub/b.profile", real);
	CHECK_STR(p.sources.v[3], expect);
	free(expect);
	policy_free(&p);

	/* Absolute includes. */
	char *abs = xasprintf("include %s/sub/b.profile\n", real);
	write_text("absinc.profile", abs);
	free(abs);
	char *absinc = tmp_path("absinc.profile");
	CHECK(policy_load(&p, absinc, home, &e) == 0 && strv_contains(&p.mask, "from-b"));
	policy_free(&p);
	free(absinc);

	/* Errors name the included file. */
	write_text("bad.profile", "mask ok\n\ninclude sub/badinner.profile\n");
	write_text("sub/badinner.profile", "mask ok\n  frob\n");
	char *bad = tmp_path("bad.profile");
	CHECK(policy_load(&p, bad, home, &e) < 0);
	expect = xasprintf("%s/sub/badinner.profile:2:3: unknown directive 'frob'", real);
	CHECK_STR(e.msg, expect);
	free(expect);
	free(bad);

	/* The top file is named as given. */
	write_text("top.profile", "mask ok\nfrob\n");
	char *top = tmp_path("top.profile");
	CHECK(policy_load(&p, top, home, &e) < 0);
	expect = xasprintf("%s:2:1: unknown directive 'frob'", top);
	CHECK_STR(e.msg, expect);
	free(expect);
	free(top);

	/* A missing include. */
	write_text("missing.profile", "include nope.profile\n");
	char *missing = tmp_path("missing.profile");
	CHECK(policy_load(&p, missing, home, &e) < 0);
	expect = xasprintf("%s:1:9: include '%s/nope.profile': cannot open", missing, real);
	CHECK_STR(e.msg, expect);
	CHECK(e.errnum == ENOENT);
	free(expect);
	free(missing);

	/* A missing or unreadable top file. */
	CHECK(policy_load(&p, "/nonexistent/x.profile", home, &e) < 0);
	CHECK_STR(e.msg, "/nonexistent/x.profile: cannot open");
	CHECK(e.errnum == ENOENT);
	CHECK(policy_load(&p, tmpdir, home, &e) < 0);
	expect = xasprintf("%s: not a regular file", tmpdir);
	CHECK_STR(e.msg, expect);
	free(expect);

	/* Loops: a file including itself, two including each other. */
	write_text("self.profile", "include self.profile\n");
	char *self = tmp_path("self.profile");
	CHECK(policy_load(&p, self, home, &e) < 0);
	expect = xasprintf("%s/self.profile:1:9: include nesting too deep (loop?)", real);
	CHECK_STR(e.msg, expect);
	free(expect);
	free(self);
	write_text("loop-a.profile", "mask a\ninclude loop-b.profile\n");
	write_text("loop-b.profile", "# b\n\n include   loop-a.profile\n");
	char *la = tmp_path("loop-a.profile");
	CHECK(policy_load(&p, la, home, &e) < 0);
	/* depth 0 is loop-a; depth 8 is loop-a again, whose include fails. */
	expect = xasprintf("%s/loop-a.profile:2:9: include nesting too deep (loop?)", real);
	CHECK_STR(e.msg, expect);
	free(expect);
	free(la);

	/* Eight nested includes are fine, nine are not. */
	for (int i = 0; i <= 9; i++) {
		char name[32], text[64];
		snprintf(name, sizeof name, "chain%d.profile", i);
		snprintf(text, sizeof text, "mask c%d\ninclude chain%d.profile\n", i, i + 1);
		write_text(name, i == 9 ? "mask c9\n" : text);
	}
	char *c1 = tmp_path("chain1.profile"), *c0 = tmp_path("chain0.profile");
	CHECK(policy_load(&p, c1, home, &e) == 0);
	CHECK(p.sources.n == 10 && strv_contains(&p.mask, "c9"));
	policy_free(&p);
	CHECK(policy_load(&p, c0, home, &e) < 0);
	expect = xasprintf("%s/chain8.profile:2:9: include nesting too deep (loop?)", real);
	CHECK_STR(e.msg, expect);
	free(expect);
	free(c0);
	free(c1);

	/* policy_parse_text with a directory resolves includes against it. */
	CHECK(policy_parse_text(&p, "x", tmpdir, home, "include sub/b.profile\n", 22, &e) == 0);
	CHECK(strv_contains(&p.mask, "from-b") && p.sources.n == 1);
	policy_free(&p);
	free(main_path);
}

/* `exec deny hashes:FILE` reads FILE as a profile is read: a device that
 * never ends (/dev/zero) or a FIFO nobody writes is refused at once, with
 * the file named, instead of a read for ever (a hang of `warden run` and
 * `warden policy show`); a list of hashes still loads. */
static void test_exec_hash_list(void)
{
	EXPECT_ERR("exec deny hashes:/dev/zero\n",
		   "t.profile:1:11: exec deny: cannot read /dev/zero: not a regular file");
	_cleanup_free_ char *fifo = tmp_path("hashes.fifo");
	CHECK(mkfifo(fifo, 0600) == 0);
	_cleanup_free_ char *ftext = xasprintf("exec deny hashes:%s\n", fifo);
	_cleanup_free_ char *fmsg = xasprintf("t.profile:1:11: exec deny: cannot read %s: not a "
					      "regular file", fifo);
	expect_err_n(__LINE__, ftext, strlen(ftext), fmsg);
	_cleanup_free_ char *list = tmp_path("hashes.txt");
	write_text("hashes.txt", "# a comment\n\n"
		   "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855  empty\n"
		   "\t2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\n");
	_cleanup_free_ char *ltext = xasprintf("exec deny hashes:%s\n", list);
	struct policy p;
	struct werr e;
	CHECK(parse(&p, ltext, &e) == 0);
	CHECK(p.exec.deny.n == 2);
	CHECK(strv_contains(&p.exec.deny,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	policy_free(&p);
	write_text("hashes.txt", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nnot-a-hash\n");
	_cleanup_free_ char *bmsg = xasprintf("t.profile:1:11: exec deny: %s:2: not a SHA-256 (64 hex "
					      "digits)", list);
	expect_err_n(__LINE__, ltext, strlen(ltext), bmsg);
}

/* `exec deny|allow|ask FILE` with no FILE on this machine (a profile
 * shared between machines): a note, not an error, and nothing denied,
 * allowed or asked about; an allow kept in exec.absent for the session to
 * refuse where the agent can write. A list of hashes that is not there,
 * and a FILE there that is no regular file, stay errors. `env pass` of a
 * variable warden sets is a note; a glob is not. */
static void test_exec_missing_file(void)
{
	struct policy p;
	struct werr e;
	CHECK(parse(&p, "exec deny /nonexistent/nc\nexec allow /nonexistent/tool\n"
			"exec ask /nonexistent/x\nexec deny code:/nonexistent/y\n", &e) == 0);
	CHECK(p.exec.deny.n == 0 && p.exec.allow.n == 0 && p.exec.ask.n == 0 &&
	      p.exec.deny_paths.n == 0 && p.inputs.n == 0);
	CHECK(p.exec.absent.n == 1 && strv_contains(&p.exec.absent, "/nonexistent/tool"));
	CHECK(p.notes.n == 4);
	CHECK(p.notes.n == 4 && strcmp(p.notes.v[0], "t.profile:1: exec deny /nonexistent/nc: no such "
				       "file here, so this line denies nothing on this machine; `exec "
				       "deny sha256:HEX` (its `sha256sum`) denies the program by its "
				       "content on any machine") == 0);
	CHECK(p.notes.n == 4 && strstr(p.notes.v[1], "t.profile:2: exec allow /nonexistent/tool: no "
				       "such file here, so this line allows nothing") == p.notes.v[1]);
	CHECK(p.notes.n == 4 && strstr(p.notes.v[2], "asks about nothing"));
	policy_free(&p);
	CHECK(parse(&p, "exec deny hashes:/nonexistent/list\n", &e) < 0 && e.errnum == ENOENT &&
	      strcmp(e.msg, "t.profile:1:11: exec deny: cannot read /nonexistent/list") == 0);
	policy_free(&p);
	CHECK(parse(&p, "exec deny /dev/null\n", &e) < 0 && e.errnum == EINVAL &&
	      strcmp(e.msg, "t.profile:1:11: exec deny: cannot hash /dev/null (not a regular file)") == 0);
	policy_free(&p);
	CHECK(parse(&p, "env pass HOME\nenv pass LC_*\nenv pass HTTPS_PROXY\nenv pass TERM\n", &e) == 0);
	CHECK(p.notes.n == 2 && strstr(p.notes.v[0], "t.profile:1: env pass HOME: warden sets HOME inside") &&
	      strstr(p.notes.v[1], "t.profile:3: env pass HTTPS_PROXY: warden sets HTTPS_PROXY inside"));
	policy_free(&p);
}

static void test_layering(void)
{
	struct policy p;
	struct werr e;
	write_text("layer.profile",
		   "unmask *.pem\nunprotect .envrc\nenv unset TZ\nenv unset LC_*\n"
		   "mask *.sqlite\nread-write /data\n");
	char *path = tmp_path("layer.profile");
	CHECK(policy_load(&p, path, home, &e) == 0);
	CHECK(!strv_contains(&p.mask, "*.pem"));
	CHECK(strv_contains(&p.mask, "*.key"));
	CHECK(strv_contains(&p.mask, "*.sqlite"));
	CHECK(p.mask.n == 18);
	CHECK(!strv_contains(&p.protect, ".envrc") && p.protect.n == 27);
	CHECK(!strv_contains(&p.env_pass, "TZ") && !strv_contains(&p.env_pass, "LC_*"));
	CHECK(strv_contains(&p.env_pass, "PATH"));
	CHECK(p.npaths == 1 && p.paths[0].mode == POLICY_RW);
	char *origin = xasprintf("%s:6", path);
	CHECK_STR(p.paths[0].origin, origin);
	free(origin);
	policy_free(&p);
	free(path);
}

static void test_audit_level(void)
{
	struct policy p;
	struct werr e = { 0 };
	memset(&p, 0, sizeof p);
	CHECK(parse(&p, "audit files\n", &e) == 0);
	CHECK(p.audit_files);
	CHECK(!p.audit_minimal);
	CHECK(parse(&p, "audit default\n", &e) == 0);
	CHECK(!p.audit_files);
	CHECK(!p.audit_minimal);
	CHECK(parse(&p, "audit minimal\n", &e) == 0);
	CHECK(!p.audit_files);
	CHECK(p.audit_minimal);
	CHECK(parse(&p, "audit files\n", &e) == 0);
	CHECK(p.audit_files && !p.audit_minimal);
	policy_free(&p);
	EXPECT_ERR("audit everything\n", "t.profile:1:7: audit: unknown level 'everything' (expected minimal, default or files)");
	EXPECT_ERR("audit\n", "t.profile:1:6: audit: missing argument");
}

/* `signal grace SECONDS`: the last one counts, 0 is kept (kill at once), a
 * user profile replaces the default's; anything but a number in range is an
 * error naming the column. */
static void test_signal_grace(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "signal grace 2\n", &e) == 0);
	CHECK(p.signal_grace == 2);
	policy_free(&p);
	CHECK(parse(&p, "signal grace 30\nsignal  grace\t0 # at once\n", &e) == 0);
	CHECK(p.signal_grace == 0);
	policy_free(&p);
	CHECK(parse(&p, "signal grace 86400\n", &e) == 0);
	CHECK(p.signal_grace == 86400);
	policy_free(&p);
	write_text("grace.profile", "signal grace 3\n");
	char *path = tmp_path("grace.profile");
	CHECK(policy_load(&p, path, home, &e) == 0);
	CHECK(p.signal_grace == 3);
	json_t *j = policy_to_json(&p);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "signal"), "grace")) == 3);
	json_decref(j);
	policy_free(&p);
	free(path);
	EXPECT_ERR("signal\n", "t.profile:1:7: signal: missing argument (grace SECONDS)");
	EXPECT_ERR("signal wait 3\n", "t.profile:1:8: signal: unknown setting 'wait' (expected grace)");
	EXPECT_ERR("signal grace\n", "t.profile:1:13: signal grace: missing argument");
	EXPECT_ERR("signal grace 1 2\n", "t.profile:1:16: signal grace: unexpected argument '2'");
	EXPECT_ERR("signal grace -1\n", "t.profile:1:14: signal grace: '-1' is not a number of seconds");
	EXPECT_ERR("signal grace 1.5\n", "t.profile:1:14: signal grace: '1.5' is not a number of seconds");
	EXPECT_ERR("signal grace 10s\n", "t.profile:1:14: signal grace: '10s' is not a number of seconds");
	EXPECT_ERR("signal grace 86401\n", "t.profile:1:14: signal grace: 86401 seconds is more than 86400");
	EXPECT_ERR("signal grace 99999999999999999999999\n",
		   "t.profile:1:14: signal grace: 99999999999999999999999 seconds is more than 86400");
}

/* `freeze timeout DURATION|auto`: the default profile's auto is 10 minutes
 * with a human to decide and none without; a duration holds either way;
 * the last line counts; anything else is an error naming the column. */
static void test_freeze_timeout(void)
{
	struct policy p;
	struct werr e = { 0 };
	write_text("freeze.profile", "# nothing said\n");
	char *path = tmp_path("freeze.profile");
	CHECK(policy_load(&p, path, home, &e) == 0);
	CHECK(p.freeze_timeout_auto && p.freeze_timeout_s == POLICY_FREEZE_TIMEOUT_DEFAULT);
	CHECK(policy_freeze_timeout(&p, true) == 600 && policy_freeze_timeout(&p, false) == 0);
	json_t *j = policy_to_json(&p);
	json_t *f = json_object_get(j, "freeze");
	CHECK(json_integer_value(json_object_get(f, "timeout_s")) == 600);
	CHECK(json_integer_value(json_object_get(f, "unattended_s")) == 0);
	json_decref(j);
	policy_free(&p);
	write_text("freeze.profile", "freeze timeout 5m\n");
	CHECK(policy_load(&p, path, home, &e) == 0);
	CHECK(policy_freeze_timeout(&p, true) == 300 && policy_freeze_timeout(&p, false) == 300);
	j = policy_to_json(&p);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "freeze"), "unattended_s")) == 300);
	json_decref(j);
	policy_free(&p);
	free(path);
	static const struct { const char *text; unsigned s; } ok[] = {
		{ "freeze timeout 90\n", 90 }, { "freeze timeout 30s\n", 30 }, { "freeze timeout 0\n", 0 },
		{ "freeze timeout 2h\n", 7200 }, { "freeze timeout 24h\n", 86400 },
		{ "freeze timeout 1m\nfreeze\ttimeout 7s # the last\n", 7 },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		CHECK(parse(&p, ok[i].text, &e) == 0);
		CHECK(!p.freeze_timeout_auto && p.freeze_timeout_s == ok[i].s);
		CHECK(policy_freeze_timeout(&p, false) == ok[i].s);
		policy_free(&p);
	}
	/* a unit written apart: named, and how to write it */
	EXPECT_ERR("freeze timeout 30 minutes\n", "t.profile:1:19: freeze timeout: unexpected argument "
		   "'minutes' (a unit is written on the number: 30m)");
	EXPECT_ERR("freeze timeout 2 hours\n", "t.profile:1:18: freeze timeout: unexpected argument "
		   "'hours' (a unit is written on the number: 2h)");
	EXPECT_ERR("freeze timeout 5m later\n", "t.profile:1:19: freeze timeout: unexpected argument 'later'");
	CHECK(parse(&p, "freeze timeout 1m\nfreeze timeout auto\n", &e) == 0);
	CHECK(policy_freeze_timeout(&p, true) == 600 && policy_freeze_timeout(&p, false) == 0);
	policy_free(&p);
	EXPECT_ERR("freeze\n", "t.profile:1:7: freeze: missing argument (timeout DURATION|auto)");
	EXPECT_ERR("freeze for 3\n", "t.profile:1:8: freeze: unknown setting 'for' (expected timeout)");
	EXPECT_ERR("freeze timeout\n", "t.profile:1:15: freeze timeout: missing argument");
	EXPECT_ERR("freeze timeout 1 2\n", "t.profile:1:18: freeze timeout: unexpected argument '2'");
	EXPECT_ERR("freeze timeout 25h\n",
		   "t.profile:1:16: freeze timeout: not a duration from 0 to 24h, or auto: '25h' (90, 30s, 10m, 1h)");
	EXPECT_ERR("freeze timeout never\n",
		   "t.profile:1:16: freeze timeout: not a duration from 0 to 24h, or auto: 'never' (90, 30s, 10m, 1h)");
	EXPECT_ERR("freeze timeout 5ms\n",
		   "t.profile:1:16: freeze timeout: not a duration from 0 to 24h, or auto: '5ms' (90, 30s, 10m, 1h)");
	EXPECT_ERR("freeze timeout 99999999999999999999999\n",
		   "t.profile:1:16: freeze timeout: not a duration from 0 to 24h, or auto: "
		   "'99999999999999999999999' (90, 30s, 10m, 1h)");
}

static void test_terminal_clipboard(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "# nothing said\n", &e) == 0);
	CHECK(!p.terminal_clipboard);
	policy_free(&p);
	CHECK(parse(&p, "terminal clipboard allow\n", &e) == 0);
	CHECK(p.terminal_clipboard);
	json_t *j = policy_to_json(&p);
	CHECK(json_is_true(json_object_get(json_object_get(j, "terminal"), "clipboard")));
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "terminal clipboard allow\nterminal clipboard deny\n", &e) == 0);
	CHECK(!p.terminal_clipboard);
	policy_free(&p);
	EXPECT_ERR("terminal\n", "t.profile:1:9: terminal: missing argument (clipboard allow|deny)");
	EXPECT_ERR("terminal title allow\n",
		   "t.profile:1:10: terminal: unknown setting 'title' (expected clipboard)");
	EXPECT_ERR("terminal clipboard\n", "t.profile:1:19: terminal clipboard: missing argument");
	EXPECT_ERR("terminal clipboard yes\n",
		   "t.profile:1:20: terminal clipboard: 'yes' (expected allow or deny)");
}

static void test_canary(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "# nothing said\n", &e) == 0);
	CHECK(!p.canary_off);
	json_t *j = policy_to_json(&p);
	CHECK(json_is_true(json_object_get(j, "canary")));
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "canary off\n", &e) == 0);
	CHECK(p.canary_off);
	j = policy_to_json(&p);
	CHECK(json_is_false(json_object_get(j, "canary")));
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "canary off\ncanary on\n", &e) == 0);
	CHECK(!p.canary_off);
	policy_free(&p);
	EXPECT_ERR("canary\n", "t.profile:1:7: canary: missing argument");
	EXPECT_ERR("canary no\n", "t.profile:1:8: canary: 'no' (expected on or off)");
	EXPECT_ERR("canary off now\n", "t.profile:1:12: canary: unexpected argument 'now'");
}

/* `cache ~/PATH`: kept without "~/", each once, in the JSON only when
 * there is one; anything but a directory below the home refused. */
static void test_cache(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "mask x\n", &e) == 0);
	json_t *j = policy_to_json(&p);
	CHECK(!json_object_get(j, "caches"));
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "cache ~/.cargo/registry/\ncache ~/.cache/go-build\ncache ~/.cargo/registry\n",
		    &e) == 0);
	CHECK(p.caches.n == 2 && strcmp(p.caches.v[0], ".cargo/registry") == 0 &&
	      strcmp(p.caches.v[1], ".cache/go-build") == 0);
	j = policy_to_json(&p);
	json_t *c = json_object_get(j, "caches");
	CHECK(json_array_size(c) == 2 &&
	      strcmp(json_string_value(json_array_get(c, 0)), "~/.cargo/registry") == 0);
	json_decref(j);
	policy_free(&p);
	EXPECT_ERR("cache /var/cache/x\n", "t.profile:1:7: cache: the path must start with ~/ (a "
		   "directory of the sandbox's home): '/var/cache/x'");
	EXPECT_ERR("cache ~\n", "t.profile:1:7: cache: the path must start with ~/ (a directory of "
		   "the sandbox's home): '~'");
	EXPECT_ERR("cache ~/\n", "t.profile:1:7: cache: name a directory below ~, without '.', "
		   "'..' or empty components: '~/'");
	EXPECT_ERR("cache ~/a/../b\n", "t.profile:1:7: cache: name a directory below ~, without "
		   "'.', '..' or empty components: '~/a/../b'");
	EXPECT_ERR("cache ~/a\xc3\xa9\n", "t.profile:1:7: cache: only printable ASCII in the path");
	EXPECT_ERR("cache ~/.cargo\ncache ~/.cargo/git\n",
		   "t.profile:2:7: cache: ~/.cargo/git and ~/.cargo overlap: keep one");
	EXPECT_ERR("cache ~/a ~/b\n", "t.profile:1:11: cache: unexpected argument '~/b'");
	char many[1024] = "";
	for (int i = 0; i <= POLICY_CACHES_MAX; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "cache ~/c%d\n", i);
	EXPECT_ERR(many, "t.profile:17:7: cache: more than 16 caches");
}

/* `protect !PARENT/NAME`: an exception, apart from the protected paths,
 * in the JSON only when there; `unprotect !` takes it back; nothing in
 * .git, nothing at the top alone. */
static void test_protect_except(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "protect .claude\nprotect !.claude/worktrees/\nprotect !a/b\n"
		    "unprotect !a/b\n", &e) == 0);
	CHECK(p.protect_except.n == 1 && strcmp(p.protect_except.v[0], ".claude/worktrees") == 0);
	CHECK(!strv_contains(&p.protect, ".claude/worktrees"));
	json_t *j = policy_to_json(&p);
	CHECK(json_array_size(json_object_get(j, "protect_except")) == 1);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "protect .claude\n", &e) == 0);
	j = policy_to_json(&p);
	CHECK(!json_object_get(j, "protect_except"));
	json_decref(j);
	policy_free(&p);
	EXPECT_ERR("protect !worktrees\n", "t.profile:1:9: protect: '!' takes a directory inside a "
		   "protected one, relative to the workspace (PARENT/NAME), without '.', '..' or "
		   "empty components: '!worktrees'");
	EXPECT_ERR("protect !/x/y\n", "t.profile:1:9: protect: '!' takes a directory inside a "
		   "protected one, relative to the workspace (PARENT/NAME), without '.', '..' or "
		   "empty components: '!/x/y'");
	EXPECT_ERR("protect !.claude/../x\n", "t.profile:1:9: protect: '!' takes a directory inside "
		   "a protected one, relative to the workspace (PARENT/NAME), without '.', '..' or "
		   "empty components: '!.claude/../x'");
	EXPECT_ERR("protect !.git/hooks\n", "t.profile:1:9: protect: nothing in .git can be made "
		   "writable: '!.git/hooks'");
	EXPECT_ERR("protect !a/.git\n", "t.profile:1:9: protect: nothing in .git can be made "
		   "writable: '!a/.git'");
}

/* `git-identity on|off`: on unless said, the last line wins, in the JSON
 * (and so the digest) only when off. */
static void test_git_identity(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "# nothing said\n", &e) == 0);
	CHECK(!p.git_identity_off);
	json_t *j = policy_to_json(&p);
	CHECK(json_object_get(j, "git_identity") == NULL);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "git-identity off\n", &e) == 0);
	CHECK(p.git_identity_off);
	j = policy_to_json(&p);
	CHECK(json_is_false(json_object_get(j, "git_identity")));
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "git-identity off\ngit-identity on\n", &e) == 0);
	CHECK(!p.git_identity_off);
	policy_free(&p);
	EXPECT_ERR("git-identity\n", "t.profile:1:13: git-identity: missing argument");
	EXPECT_ERR("git-identity no\n", "t.profile:1:14: git-identity: 'no' (expected on or off)");
}

/* `workspace read-only|read-write`: read-write unless said, the last line
 * wins, in the JSON only when read-only. */
static void test_workspace(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "# nothing said\n", &e) == 0);
	CHECK(!p.workspace_ro);
	json_t *j = policy_to_json(&p);
	CHECK(json_object_get(j, "workspace") == NULL);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "workspace read-only\n", &e) == 0);
	CHECK(p.workspace_ro);
	j = policy_to_json(&p);
	CHECK_STR(json_string_value(json_object_get(j, "workspace")), "read-only");
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "workspace read-only\nworkspace read-write\n", &e) == 0);
	CHECK(!p.workspace_ro);
	policy_free(&p);
	EXPECT_ERR("workspace\n", "t.profile:1:10: workspace: missing argument");
	EXPECT_ERR("workspace ro\n", "t.profile:1:11: workspace: 'ro' (expected read-only or read-write)");
}

/* `exec kernel auto|on|off`: auto unless said, the last line wins, in the
 * JSON only when not auto (the digests of existing policies stay). */
static void test_exec_kernel(void)
{
	struct policy p;
	struct werr e = { 0 };
	CHECK(parse(&p, "# nothing said\n", &e) == 0);
	CHECK(p.exec.kernel == EXEC_KERNEL_AUTO);
	json_t *j = policy_to_json(&p);
	CHECK(json_object_get(json_object_get(j, "exec"), "kernel") == NULL);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "exec kernel on\n", &e) == 0);
	CHECK(p.exec.kernel == EXEC_KERNEL_ON);
	j = policy_to_json(&p);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "exec"), "kernel")), "on");
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "exec kernel on\nexec kernel off\n", &e) == 0);
	CHECK(p.exec.kernel == EXEC_KERNEL_OFF);
	policy_free(&p);
	CHECK(parse(&p, "exec kernel off\nexec kernel auto\n", &e) == 0);
	CHECK(p.exec.kernel == EXEC_KERNEL_AUTO);
	policy_free(&p);
	EXPECT_ERR("exec kernel\n", "t.profile:1:12: exec kernel: missing argument");
	EXPECT_ERR("exec kernel yes\n", "t.profile:1:13: exec kernel: 'yes' (expected auto, on or off)");
	EXPECT_ERR("exec kernel on now\n", "t.profile:1:16: exec kernel: unexpected argument 'now'");
	EXPECT_ERR("exec kernels on\n",
		   "t.profile:1:6: exec: unknown rule 'kernels' (expected deny, allow, ask, default, strict, "
		   "allow-writable, hash-limit or kernel)");
}

static void test_checkpoint(void)
{
	struct policy p;
	struct werr e = { 0 };
	/* the default profile: on, 8G, 20 sessions, 30 days, nothing excluded */
	memset(&p, 0, sizeof p);
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(!p.checkpoint.off);
	CHECK(p.checkpoint.max_size == 8ULL << 30);
	CHECK(p.checkpoint.keep == 20 && p.checkpoint.keep_days == 30);
	CHECK(p.checkpoint.exclude.n == 0);
	json_t *j = policy_to_json(&p);
	json_t *c = json_object_get(j, "checkpoint");
	CHECK(json_is_true(json_object_get(c, "on")));
	CHECK(json_integer_value(json_object_get(c, "max_size")) == 8LL << 30);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "checkpoint off\ncheckpoint max-size unlimited\ncheckpoint keep 3\n"
			"checkpoint keep-days 7\ncheckpoint exclude node_modules\n"
			"checkpoint exclude build/*.o\ncheckpoint exclude node_modules\n", &e) == 0);
	CHECK(p.checkpoint.off);
	CHECK(p.checkpoint.max_size == 0);
	CHECK(p.checkpoint.keep == 3 && p.checkpoint.keep_days == 7);
	CHECK(p.checkpoint.exclude.n == 2);
	CHECK_STR(p.checkpoint.exclude.v[1], "build/*.o");
	policy_free(&p);
	CHECK(parse(&p, "checkpoint off\ncheckpoint on\ncheckpoint max-size 1.5G\n", &e) == 0);
	CHECK(!p.checkpoint.off);
	CHECK(p.checkpoint.max_size == 3ULL << 29);
	policy_free(&p);
	EXPECT_ERR("checkpoint\n", "t.profile:1:11: checkpoint: missing argument (on, off, "
		   "max-size, exclude, keep or keep-days)");
	EXPECT_ERR("checkpoint maybe\n", "t.profile:1:12: checkpoint: unknown setting 'maybe' "
		   "(expected on, off, max-size, exclude, keep or keep-days)");
	EXPECT_ERR("checkpoint off now\n", "t.profile:1:16: checkpoint: unexpected argument 'now'");
	EXPECT_ERR("checkpoint max-size 12Q\n", "t.profile:1:21: checkpoint max-size: '12Q' is not "
		   "a size (a number with an optional unit K, M, G or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("checkpoint exclude /abs\n", "t.profile:1:20: checkpoint exclude: '/abs' is not "
		   "a pattern relative to the workspace (no leading or trailing '/', no . or .. "
		   "component)");
	EXPECT_ERR("checkpoint exclude a/../b\n", "t.profile:1:20: checkpoint exclude: 'a/../b' is "
		   "not a pattern relative to the workspace (no leading or trailing '/', no . or .. "
		   "component)");
	EXPECT_ERR("checkpoint exclude\n", "t.profile:1:19: checkpoint exclude: missing argument");
	EXPECT_ERR("checkpoint keep 0\n", "t.profile:1:17: checkpoint keep: '0' is not a number "
		   "from 1 to 100000");
	EXPECT_ERR("checkpoint keep-days -1\n", "t.profile:1:22: checkpoint keep-days: '-1' is not "
		   "a number from 1 to 100000");
}

/* The rule at index i must be exactly this. */
static void expect_net_n(int line, const struct policy *p, size_t i, const char *pattern, bool deny,
			 bool private_ok, const char *origin)
{
	if (i >= p->nnet) {
		fprintf(stderr, "%s:%d: no net rule %zu (%zu rules)\n", __FILE__, line, i, p->nnet);
		failures++;
		return;
	}
	const struct policy_net_rule *r = &p->net[i];
	if (strcmp(r->rule.text, pattern) != 0 || (r->action == RULES_DENY) != deny ||
	    r->rule.allow_private != private_ok || strcmp(r->origin, origin) != 0) {
		fprintf(stderr, "%s:%d: net rule %zu\n  got:      %s %s%s (%s)\n  expected: %s %s%s (%s)\n",
			__FILE__, line, i, r->action == RULES_DENY ? "deny" : "allow", r->rule.text,
			r->rule.allow_private ? " private" : "", r->origin, deny ? "deny" : "allow",
			pattern, private_ok ? " private" : "", origin);
		failures++;
	}
}
#define EXPECT_NET(p, i, pattern, deny, priv, origin) \
	expect_net_n(__LINE__, (p), (i), (pattern), (deny), (priv), (origin))

/* Request rules: methods and a path after the pattern, in any order, the
 * path normalised; the same host with other methods or paths is another
 * rule; an allow one's host allows the connection. */
static void test_net_requests(void)
{
	struct policy p;
	struct werr e;
	CHECK(parse(&p, "net allow api.github.com GET,HEAD /repos//x/../*\n"
			"net allow api.github.com /user POST\n"
			"net deny api.github.com DELETE\n"
			"net ask api.github.com PUT /repos/** private\n", &e) == 0);
	CHECK(p.nnet == 4);
	CHECK_STR(p.net[0].rule.methods, "GET,HEAD");
	CHECK_STR(p.net[0].rule.path, "/repos/*");
	CHECK_STR(p.net[1].rule.path, "/user");
	CHECK_STR(p.net[2].rule.methods, "DELETE");
	CHECK(p.net[3].rule.allow_private);
	CHECK(p.net_rules.nreq == 4 && p.net_rules.nreq_ask == 1);
	CHECK(rules_match(&p.net_rules, "api.github.com", 443, NULL) == RULES_ALLOW);
	CHECK(policy_asks(&p));
	policy_free(&p);
}

static void test_net(void)
{
	struct policy p;
	struct werr e;
	const char *text =
		"net allow example.com\n"                 /* 1 */
		"net allow *.Example.ORG private\n"       /* 2 */
		"net deny  evil.example.com\n"            /* 3 */
		"\tnet allow 192.0.2.1:8080 # comment\n"  /* 4 */
		"net allow [2001:DB8::1]:443\n"           /* 5 */
		"net allow 2001:db8:0:0::2\n"             /* 6 */
		"net deny 10.1.2.3\n"                     /* 7 */
		"net allow registry.npmjs.org:443\n"      /* 8 */
		"net allow git.internal.test private\n"   /* 9 */
		"net deny *.tracker.example.net:80\n";    /* 10 */
	CHECK(parse(&p, text, &e) == 0);
	if (failures)
		fprintf(stderr, "  %s\n", e.msg);
	CHECK(p.nnet == 10);
	EXPECT_NET(&p, 0, "example.com", false, false, "t.profile:1");
	EXPECT_NET(&p, 1, "*.example.org", false, true, "t.profile:2");
	EXPECT_NET(&p, 2, "evil.example.com", true, false, "t.profile:3");
	EXPECT_NET(&p, 3, "192.0.2.1:8080", false, false, "t.profile:4");
	EXPECT_NET(&p, 4, "[2001:db8::1]:443", false, false, "t.profile:5");
	EXPECT_NET(&p, 5, "2001:db8::2", false, false, "t.profile:6");
	EXPECT_NET(&p, 6, "10.1.2.3", true, false, "t.profile:7");
	EXPECT_NET(&p, 7, "registry.npmjs.org:443", false, false, "t.profile:8");
	EXPECT_NET(&p, 8, "git.internal.test", false, true, "t.profile:9");
	EXPECT_NET(&p, 9, "*.tracker.example.net:80", true, false, "t.profile:10");

	/* Canonical text is the identity: the same rule again, spelled
	 * differently, in another file, is not added; the first origin stays. */
	const char *again =
		"net allow Example.COM\n"
		"net allow *.example.org private\n"
		"net deny EVIL.example.com\n"
		"net allow [2001:db8::2]\n"
		"net allow 2001:0db8::1:443\n"            /* no brackets: an address, not a port */
		"net allow 192.0.2.1\n";                  /* no port: another rule */
	CHECK(policy_parse_text(&p, "u.profile", NULL, home, again, strlen(again), &e) == 0);
	CHECK(p.nnet == 12);
	EXPECT_NET(&p, 0, "example.com", false, false, "t.profile:1");
	EXPECT_NET(&p, 1, "*.example.org", false, true, "t.profile:2");
	EXPECT_NET(&p, 10, "2001:db8::1:443", false, false, "u.profile:5");
	EXPECT_NET(&p, 11, "192.0.2.1", false, false, "u.profile:6");

	/* The same pattern with another action or option is another rule. */
	const char *more = "net allow example.com private\nnet deny example.com\nnet allow *.example.org\n";
	CHECK(policy_parse_text(&p, "v.profile", NULL, home, more, strlen(more), &e) == 0);
	CHECK(p.nnet == 15);
	EXPECT_NET(&p, 12, "example.com", false, true, "v.profile:1");
	EXPECT_NET(&p, 13, "example.com", true, false, "v.profile:2");
	EXPECT_NET(&p, 14, "*.example.org", false, false, "v.profile:3");
	policy_free(&p);
	CHECK(p.nnet == 0 && p.net == NULL);

	/* Through includes and layered on the default. */
	write_text("net.profile", "include default\nnet allow pypi.org:443\nnet deny 169.254.169.254\n");
	char *path = tmp_path("net.profile");
	CHECK(policy_load(&p, path, home, &e) == 0);
	CHECK(p.nnet == 2);
	char *origin = xasprintf("%s:2", path);
	EXPECT_NET(&p, 0, "pypi.org:443", false, false, origin);
	free(origin);
	origin = xasprintf("%s:3", path);
	EXPECT_NET(&p, 1, "169.254.169.254", true, false, origin);
	free(origin);
	policy_free(&p);
	free(path);
}

/* Both lists of a rule set must be exactly these canonical texts, in order,
 * with these allow_private flags ("+" after a text: allow_private). */
static void expect_set_n(int line, const struct net_rule *v, size_t n, const char *const *want,
			 size_t nwant)
{
	checks++;
	bool same = n == nwant;
	for (size_t i = 0; same && i < n; i++) {
		size_t tl = strlen(v[i].text);
		bool plus = want[i][strlen(want[i]) - 1] == '+';
		same = strncmp(v[i].text, want[i], tl) == 0 && strlen(want[i]) == tl + plus &&
		       v[i].allow_private == plus;
	}
	if (!same) {
		fprintf(stderr, "%s:%d: rule set:", __FILE__, line);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %s%s", v[i].text, v[i].allow_private ? "+" : "");
		fprintf(stderr, "\n");
		failures++;
	}
}
#define EXPECT_SET(v, n, ...)                                                              \
	do {                                                                                \
		static const char *const want_[] = { __VA_ARGS__ };                         \
		expect_set_n(__LINE__, (v), (n), want_, ARRAY_LEN(want_));                  \
	} while (0)

/* The compiled policy: every rule parsed once, kept with its origin, and the
 * rule set the proxy decides with built from the same rules. */
static void test_net_compiled(void)
{
	struct policy p;
	struct werr e;
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	CHECK(!policy_net_allows_any(&p)); /* the default allows nothing */
	CHECK(p.net_rules.nallow == 0 && p.net_rules.ndeny == 0);

	const char *text =
		"net allow Example.COM:443\n"          /* 1 */
		"net deny [2001:DB8::9]\n"             /* 2 */
		"net allow *.corp.example private\n"   /* 3 */
		"net allow 192.0.2.1\n"                /* 4 */
		"net allow example.com:443 private\n"  /* 5: the same allow rule, now private */
		"net deny evil.example.com\n";         /* 6 */
	CHECK(policy_parse_text(&p, "c.profile", NULL, home, text, strlen(text), &e) == 0);
	CHECK(policy_add_net(&p, "registry.test", false, false, "--allow-net", &e) == 0);
	CHECK(policy_add_net(&p, "EXAMPLE.com:443", false, false, "--allow-net", &e) == 0);
	CHECK(p.nnet == 7);

	/* Each declared rule is compiled: kind, host or address, port. */
	const struct policy_net_rule *r = &p.net[0];
	CHECK(r->rule.kind == NET_RULE_HOST && r->rule.port == 443 && r->action == RULES_ALLOW);
	CHECK_STR(r->rule.host, "example.com");
	CHECK_STR(r->origin, "c.profile:1");
	r = &p.net[1];
	CHECK(r->rule.kind == NET_RULE_IP && r->rule.port == 0 && r->action == RULES_DENY);
	uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x09 };
	struct addr_ip ip;
	addr_ip_from_v6(&ip, v6);
	CHECK(addr_ip_equal(&r->rule.ip, &ip));
	CHECK_STR(r->origin, "c.profile:2");
	r = &p.net[2];
	CHECK(r->rule.kind == NET_RULE_WILDCARD && r->rule.allow_private);
	CHECK_STR(r->rule.host, "corp.example");
	r = &p.net[3];
	CHECK(r->rule.kind == NET_RULE_IP && !r->rule.allow_private);
	CHECK_STR(r->origin, "c.profile:4");
	r = &p.net[4];
	CHECK(r->rule.kind == NET_RULE_HOST && r->rule.allow_private);
	CHECK_STR(r->origin, "c.profile:5");
	r = &p.net[6];
	CHECK(r->rule.kind == NET_RULE_HOST && r->action == RULES_ALLOW);
	CHECK_STR(r->rule.text, "registry.test");
	CHECK_STR(r->origin, "--allow-net");

	/* The rule set: deny and allow apart, in order; example.com:443 declared
	 * twice (plain, then private, then again from --allow-net) is one allow
	 * rule with the flags merged. */
	EXPECT_SET(p.net_rules.allow, p.net_rules.nallow, "example.com:443+", "*.corp.example+",
		   "192.0.2.1", "registry.test");
	EXPECT_SET(p.net_rules.deny, p.net_rules.ndeny, "2001:db8::9", "evil.example.com");
	CHECK(policy_net_allows_any(&p));

	/* The proxy's decisions come straight from it. */
	const struct net_rule *m = NULL;
	CHECK(rules_match(&p.net_rules, "example.COM", 443, &m) == RULES_ALLOW);
	CHECK(m && strcmp(m->text, "example.com:443") == 0 && m->allow_private);
	CHECK(rules_match(&p.net_rules, "example.com", 80, &m) == RULES_UNKNOWN);
	CHECK(rules_match(&p.net_rules, "evil.example.com", 443, &m) == RULES_DENY);
	CHECK(rules_match(&p.net_rules, "[2001:db8::9]", 22, &m) == RULES_DENY);
	CHECK(rules_match(&p.net_rules, "git.corp.example", 22, &m) == RULES_ALLOW);

	/* It is the set that compiling the declared rules' texts again, in
	 * order, would give (what the supervisor used to do). */
	struct net_rules again = { 0 };
	for (size_t i = 0; i < p.nnet; i++)
		CHECK(rules_add(&again, p.net[i].action, p.net[i].rule.text,
				p.net[i].rule.allow_private ? RULE_ALLOW_PRIVATE : 0, &e) == 0);
	CHECK(again.nallow == p.net_rules.nallow && again.ndeny == p.net_rules.ndeny);
	for (size_t i = 0; i < again.nallow && i < p.net_rules.nallow; i++) {
		const struct net_rule *a = &again.allow[i], *b = &p.net_rules.allow[i];
		CHECK(a->kind == b->kind && a->port == b->port && a->allow_private == b->allow_private &&
		      addr_ip_equal(&a->ip, &b->ip) && strcmp(a->host, b->host) == 0 &&
		      strcmp(a->text, b->text) == 0);
	}
	rules_free(&again);

	policy_free(&p);
	CHECK(p.net_rules.nallow == 0 && p.net_rules.allow == NULL && p.net == NULL);

	/* `net sni required`, and optional again (the last line wins) */
	memset(&p, 0, sizeof p);
	CHECK(parse(&p, "net sni required\n", &e) == 0);
	CHECK(p.net_sni_required);
	policy_free(&p);
	memset(&p, 0, sizeof p);
	CHECK(parse(&p, "net sni required\nnet sni optional\n", &e) == 0);
	CHECK(!p.net_sni_required);
	policy_free(&p);

	/* Deny rules alone let nothing out; one allow rule does. */
	memset(&p, 0, sizeof p);
	CHECK(policy_add_net(&p, "evil.example.com", true, false, "--deny", &e) == 0);
	CHECK(!policy_net_allows_any(&p));
	CHECK(policy_add_net(&p, "good.example.com", false, false, "--allow-net", &e) == 0);
	CHECK(policy_net_allows_any(&p));
	policy_free(&p);
}

static void test_net_errors(void)
{
	EXPECT_ERR("net\n", "t.profile:1:4: net: missing argument (allow, ask, deny, default or sni)");
	EXPECT_ERR("net   # nothing\n", "t.profile:1:4: net: missing argument (allow, ask, deny, default or sni)");
	EXPECT_ERR("net permit x.com\n",
		   "t.profile:1:5: net: unknown action 'permit' (expected allow, ask, deny, default or sni)");
	EXPECT_ERR("net Allow x.com\n",
		   "t.profile:1:5: net: unknown action 'Allow' (expected allow, ask, deny, default or sni)");
	EXPECT_ERR("net default allow\n", "t.profile:1:13: net default: 'allow' (expected ask or deny)");
	EXPECT_ERR("net sni always\n", "t.profile:1:9: net sni: 'always' (expected required or optional)");
	EXPECT_ERR("net sni\n", "t.profile:1:8: net sni: missing argument");
	EXPECT_ERR("net ask\n", "t.profile:1:8: net ask: missing argument");
	EXPECT_ERR("net allow\n", "t.profile:1:10: net allow: missing argument");
	EXPECT_ERR("net deny\n", "t.profile:1:9: net deny: missing argument");
	EXPECT_ERR("net  deny \t\n", "t.profile:1:10: net deny: missing argument");
	EXPECT_ERR("net allow x.com public\n",
		   "t.profile:1:17: net allow: unknown option 'public' (expected private, METHOD[,METHOD...] or a path starting with '/')");
	EXPECT_ERR("net allow x.com PRIVATE\n",
		   "t.profile:1:17: net allow: unknown option 'PRIVATE' (expected private, METHOD[,METHOD...] or a path starting with '/')");
	EXPECT_ERR("net allow x.com private private\n", "t.profile:1:25: net allow: unexpected argument 'private'");
	EXPECT_ERR("net allow x.com private a b c\n", "t.profile:1:25: net allow: unexpected argument 'a'");
	EXPECT_ERR("net deny x.com private\n", "t.profile:1:16: net deny: 'private' is only for allow and ask rules");
	EXPECT_ERR("net deny x.com extra\n", "t.profile:1:16: net deny: unexpected argument 'extra'");
	EXPECT_ERR("net deny x.com a b c d\n", "t.profile:1:16: net deny: unexpected argument 'a'");
	/* Request rules: methods and a path, each once, in any order. */
	EXPECT_ERR("net allow x.com GET /a /b\n", "t.profile:1:24: net allow: unexpected argument '/b'");
	EXPECT_ERR("net deny x.com GET POST\n", "t.profile:1:20: net deny: unexpected argument 'POST'");
	EXPECT_ERR("net allow x.com GET,get\n",
		   "t.profile:1:17: net allow: 'GET,get': unknown method (GET, HEAD, POST, PUT, PATCH, "
		   "DELETE, OPTIONS, ...: upper case)");
	EXPECT_ERR("net allow x.com /a%2Fb\n",
		   "t.profile:1:17: net allow: path '/a%2Fb': encoded slash (%2F)");
	EXPECT_ERR("net ask x.com /a?b=1\n",
		   "t.profile:1:15: net ask: path '/a?b=1': '?' (a query is not matched: write the path only)");
	/* Arguments are checked before the pattern. */
	EXPECT_ERR("net allow * extra\n", "t.profile:1:13: net allow: unknown option 'extra' (expected private, METHOD[,METHOD...] or a path starting with '/')");

	/* Bad patterns: at the pattern's column, with rules_parse_pattern's reason. */
	EXPECT_ERR("net allow *\n", "t.profile:1:11: net allow: bad network pattern \"*\": '*' would match every host");
	EXPECT_ERR("net allow * private\n",
		   "t.profile:1:11: net allow: bad network pattern \"*\": '*' would match every host");
	EXPECT_ERR("net deny *\n", "t.profile:1:10: net deny: bad network pattern \"*\": '*' would match every host");
	EXPECT_ERR("\n  net   allow   *.com\n",
		   "t.profile:2:17: net allow: bad network pattern \"*.com\": a wildcard needs at least two labels after '*.'");
	EXPECT_ERR("net allow https://example.com\n",
		   "t.profile:1:11: net allow: bad network pattern \"https://example.com\": a pattern is a host, not a URL");
	EXPECT_ERR("net allow 10.0.0.0/8\n",
		   "t.profile:1:11: net allow: bad network pattern \"10.0.0.0/8\": '/' in pattern (ranges and paths are not patterns)");
	EXPECT_ERR("net allow example.com:0\n",
		   "t.profile:1:11: net allow: bad network pattern \"example.com:0\": bad port (1-65535)");
	EXPECT_ERR("net allow example.com:65536\n",
		   "t.profile:1:11: net allow: bad network pattern \"example.com:65536\": bad port (1-65535)");
	EXPECT_ERR("net allow [2001:db8::1\n",
		   "t.profile:1:11: net allow: bad network pattern \"[2001:db8::1\": missing ']'");
	EXPECT_ERR("net allow a.*.example.com\n",
		   "t.profile:1:11: net allow: bad network pattern \"a.*.example.com\": '*' only as the whole first label");
	EXPECT_ERR("net deny *.192.0.2.1\n",
		   "t.profile:1:10: net deny: bad network pattern \"*.192.0.2.1\": a wildcard over an IP address");
	EXPECT_ERR("net allow caf\xc3\xa9.example\n",
		   "t.profile:1:11: net allow: bad network pattern \"caf??.example\": non-ASCII character"
		" (write an internationalized name in its xn-- form, as the DNS has it)");
	EXPECT_ERR("net allow *.co.uk\n",
		   "t.profile:1:11: net allow: \"*.co.uk\": a wildcard over a public suffix would let out "
		   "every domain under it, as \"*.com\" would (name the domain: *.example.co.uk)");
	EXPECT_ERR("net ask *.com.au\n",
		   "t.profile:1:9: net ask: \"*.com.au\": a wildcard over a public suffix would let out "
		   "every domain under it, as \"*.com\" would (name the domain: *.example.com.au)");
	EXPECT_OK("net deny *.co.uk\nnet allow *.bbc.co.uk\n");
	EXPECT_ERR("net allow a\"b.com\n",
		   "t.profile:1:11: net allow: bad network pattern \"a?b.com\": bad character in host");
	/* A long pattern is shortened in the message, which stays one line. */
	char line[600], msg[400];
	memset(line, 'a', sizeof line);
	memcpy(line, "net allow ", 10);
	memcpy(line + 590, ".com\n", 6);
	struct policy p;
	struct werr e;
	CHECK(parse(&p, line, &e) < 0);
	CHECK(strchr(e.msg, '\n') == NULL && strlen(e.msg) < 200);
	snprintf(msg, sizeof msg, "t.profile:1:11: net allow: bad network pattern \"%.77s...\": pattern too long",
		 line + 10);
	CHECK_STR(e.msg, msg);
	policy_free(&p);

	/* At most 4096 rules in total, allow and deny together; repeats do not count. */
	size_t cap = 4097 * 48;
	char *many = xmalloc(cap), *o = many;
	for (int i = 0; i < 4097; i++)
		o += snprintf(o, cap - (size_t)(o - many), "net %s h%d.test\nnet allow h0.test\n",
			      i % 2 ? "deny" : "allow", i);
	EXPECT_ERR(many, "t.profile:8193:1: net: too many entries (max 4096)");
	free(many);
}

static void test_add_net(void)
{
	struct policy p;
	struct werr e;
	memset(&p, 0, sizeof p);
	CHECK(policy_add_net(&p, "Example.COM:443", false, false, "--allow-net", &e) == 0);
	CHECK(policy_add_net(&p, "EXAMPLE.com:443", false, false, "--allow-net", &e) == 0);
	CHECK(policy_add_net(&p, "*.corp.example", false, true, "--allow-net", &e) == 0);
	CHECK(policy_add_net(&p, "[::1]", true, false, NULL, &e) == 0);
	CHECK(p.nnet == 3);
	EXPECT_NET(&p, 0, "example.com:443", false, false, "--allow-net");
	EXPECT_NET(&p, 1, "*.corp.example", false, true, "--allow-net");
	EXPECT_NET(&p, 2, "::1", true, false, "--allow-net");

	/* The same rules as a profile's: one list, one identity. */
	const char *text = "net allow eXample.com:443\nnet deny [::1]\n";
	CHECK(policy_parse_text(&p, "t.profile", NULL, home, text, strlen(text), &e) == 0);
	CHECK(p.nnet == 3);
	text = "net allow example.com\n";
	CHECK(policy_parse_text(&p, "t.profile", NULL, home, text, strlen(text), &e) == 0);
	CHECK(p.nnet == 4);
	EXPECT_NET(&p, 3, "example.com", false, false, "t.profile:1");
	CHECK(policy_add_net(&p, "example.com", false, false, "--allow-net", &e) == 0);
	CHECK(p.nnet == 4);

	/* Errors leave the policy as it was. */
	memset(&e, 0, sizeof e);
	CHECK(policy_add_net(&p, "*", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"*\": '*' would match every host");
	CHECK(e.errnum == 0);
	CHECK(policy_add_net(&p, "*.com", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"*.com\": a wildcard needs at least two labels after '*.'");
	CHECK(policy_add_net(&p, "", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"\": empty pattern");
	CHECK(policy_add_net(&p, NULL, false, false, NULL, &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"\": empty pattern");
	CHECK(policy_add_net(&p, "evil.com\n\x1b[2J", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"evil.com?\?[2J\": space or control character");
	CHECK(policy_add_net(&p, "a\"b: c", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"a?b: c\": space or control character");
	CHECK(policy_add_net(&p, "host:99999", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"host:99999\": bad port (1-65535)");
	CHECK(policy_add_net(&p, "Example.com", true, true, "--deny-net", &e) < 0);
	CHECK_STR(e.msg, "--deny-net \"example.com\": 'private' is only for allow rules");
	CHECK(policy_add_net(&p, "*", false, false, "", &e) < 0);
	CHECK_STR(e.msg, "--allow-net \"*\": '*' would match every host");
	CHECK(p.nnet == 4);
	policy_free(&p);

	/* The limit is shared with the profile's rules. */
	memset(&p, 0, sizeof p);
	for (int i = 0; i < 4096; i++) {
		char pat[32];
		snprintf(pat, sizeof pat, "h%d.test", i);
		if (policy_add_net(&p, pat, i % 3 == 0, false, "--allow-net", &e) < 0) {
			CHECK(!"policy_add_net failed below the limit");
			break;
		}
	}
	CHECK(p.nnet == 4096);
	CHECK(policy_add_net(&p, "h1.test", false, false, "--allow-net", &e) == 0); /* a repeat */
	CHECK(policy_add_net(&p, "one-more.test", false, false, "--allow-net", &e) < 0);
	CHECK_STR(e.msg, "--allow-net: too many network rules (max 4096)");
	struct werr pe;
	text = "net deny x.test\n";
	CHECK(policy_parse_text(&p, "t.profile", NULL, home, text, strlen(text), &pe) < 0);
	CHECK_STR(pe.msg, "t.profile:1:1: net: too many entries (max 4096)");
	CHECK(p.nnet == 4096);
	policy_free(&p);
}

static void test_secrets(void)
{
	struct policy p;
	struct werr e;
	home = "/home/u";
	const char *text =
		"env pass GH_TOKEN\n"
		"env set API_KEY=literal\n"
		"secret GH_TOKEN host github.com *.GitHub.com api.github.com:443 github.com\n"
		"secret API_KEY\thost 192.0.2.7 [2001:db8::1]:8443 file ~/keys/api\n"
		"secret CMD_KEY host example.co.uk command pass show  web/key # comment\n"
		"secret SPLIT host *.example.com.au host-named-file.test file /run/k\n";
	CHECK(parse(&p, text, &e) == 0);
	if (failures)
		fprintf(stderr, "  %s\n", e.msg);
	CHECK(p.nsecrets == 4);
	CHECK(p.env_pass.n == 0 && p.env_set.n == 0);
	const struct policy_secret *s = policy_secret_find(&p, "GH_TOKEN");
	CHECK(s && s == &p.secrets[0]);
	if (s) {
		CHECK(s->source == SECRET_FROM_ENV && !s->file && s->argv.n == 0);
		CHECK(s->nhosts == 3);
		CHECK_STR(s->hosts[0].text, "github.com");
		CHECK_STR(s->hosts[1].text, "*.github.com");
		CHECK(s->hosts[1].kind == NET_RULE_WILDCARD);
		CHECK_STR(s->hosts[2].text, "api.github.com:443");
		CHECK(s->hosts[2].port == 443);
		CHECK_STR(s->origin, "t.profile:3");
	}
	s = policy_secret_find(&p, "API_KEY");
	CHECK(s && s->source == SECRET_FROM_FILE && s->nhosts == 2);
	if (s) {
		CHECK_STR(s->file, "/home/u/keys/api");
		CHECK_STR(s->hosts[0].text, "192.0.2.7");
		CHECK_STR(s->hosts[1].text, "[2001:db8::1]:8443");
	}
	s = policy_secret_find(&p, "CMD_KEY");
	CHECK(s && s->source == SECRET_FROM_COMMAND && s->argv.n == 3);
	if (s && s->argv.n == 3) {
		CHECK_STR(s->argv.v[0], "pass");
		CHECK_STR(s->argv.v[2], "web/key");
		CHECK(s->argv.v[3] == NULL);
	}
	s = policy_secret_find(&p, "SPLIT");
	CHECK(s && s->nhosts == 2 && s->source == SECRET_FROM_FILE);
	CHECK(policy_secret_find(&p, "gh_token") == NULL);

	/* A later declaration replaces the earlier, in place. */
	text = "secret GH_TOKEN host ghe.corp.test command gh auth token\n";
	CHECK(policy_parse_text(&p, "user.profile", NULL, home, text, strlen(text), &e) == 0);
	CHECK(p.nsecrets == 4);
	s = &p.secrets[0];
	CHECK_STR(s->name, "GH_TOKEN");
	CHECK(s->nhosts == 1 && s->source == SECRET_FROM_COMMAND && s->argv.n == 3);
	CHECK_STR(s->hosts[0].text, "ghe.corp.test");
	CHECK_STR(s->origin, "user.profile:1");

	/* The value never passes as a variable. */
	EXPECT_ERR("secret A_KEY host a.test\nenv pass A_KEY\n",
		   "t.profile:2:10: env pass: A_KEY is a secret (bound at t.profile:1): its value never passes into the sandbox");
	EXPECT_ERR("secret A_KEY host a.test\n\nenv set A_KEY=x\n",
		   "t.profile:3:9: env set: A_KEY is a secret (bound at t.profile:1): its value never passes into the sandbox");
	EXPECT_OK("secret A_KEY host a.test\nenv pass A_KEYS\nenv set A_KEYS=1\nenv unset A_KEY\nenv pass A_*\n");

	/* --secret */
	CHECK(policy_add_secret(&p, "GH_TOKEN", "--secret", &e) == 0); /* keeps the hosts */
	s = &p.secrets[0];
	CHECK(s->nhosts == 1 && s->source == SECRET_FROM_ENV && s->argv.n == 0);
	CHECK_STR(s->hosts[0].text, "ghe.corp.test");
	CHECK_STR(s->origin, "--secret");
	CHECK(policy_add_secret(&p, "GH_TOKEN@Api.GitHub.com,uploads.github.com:443", NULL, &e) == 0);
	CHECK(p.nsecrets == 4 && s->nhosts == 2);
	CHECK_STR(s->hosts[0].text, "api.github.com");
	CHECK_STR(s->hosts[1].text, "uploads.github.com:443");
	strv_push(&p.env_pass, "NEW_KEY");
	strv_push(&p.env_set, "NEW_KEY=x");
	strv_push(&p.env_set, "NEW_KEYS=y");
	CHECK(policy_add_secret(&p, "NEW_KEY@localhost:8080", "agent test", &e) == 0);
	CHECK(p.nsecrets == 5);
	CHECK_STR(p.secrets[4].origin, "agent test");
	CHECK(p.env_pass.n == 0 && p.env_set.n == 1);
	CHECK_STR(p.env_set.v[0], "NEW_KEYS=y");

	/* Errors leave the policy as it was. */
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "UNBOUND", "--secret UNBOUND: which hosts may receive it? --secret UNBOUND@HOST[,HOST...] (no profile binds UNBOUND)" },
		{ "", "--secret: invalid variable name '' (expected NAME@HOST[,HOST...])" },
		{ "@x.test", "--secret: invalid variable name '' (expected NAME@HOST[,HOST...])" },
		{ "1X@x.test", "--secret: invalid variable name '1X' (expected NAME@HOST[,HOST...])" },
		{ "A-B@x.test", "--secret: invalid variable name 'A-B' (expected NAME@HOST[,HOST...])" },
		{ "A\x1b@x.test", "--secret: invalid variable name 'A?' (expected NAME@HOST[,HOST...])" },
		{ "K@", "--secret K: bad network pattern \"\": empty pattern" },
		{ "K@a.test,", "--secret K: bad network pattern \"\": empty pattern" },
		{ "K@a.test,,b.test", "--secret K: bad network pattern \"\": empty pattern" },
		{ "K@*", "--secret K: bad network pattern \"*\": '*' would match every host" },
		{ "K@*.com", "--secret K: bad network pattern \"*.com\": a wildcard needs at least two labels after '*.'" },
		{ "K@a.test,*.co.uk", "--secret K: \"*.co.uk\" is wider than one registrable domain (a wildcard over a public suffix)" },
		{ "K@*.GitHub.io:443", "--secret K: \"*.github.io:443\" is wider than one registrable domain (a wildcard over a shared hosting domain where anyone can have a name)" },
		{ "K@https://a.test", "--secret K: bad network pattern \"https://a.test\": a pattern is a host, not a URL" },
		{ "K@a.test@b.test", "--secret K: bad network pattern \"a.test@b.test\": bad character in host" },
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		memset(&e, 0, sizeof e);
		if (policy_add_secret(&p, bad[i].spec, NULL, &e) == 0) {
			fprintf(stderr, "%s:%d: --secret '%s' accepted\n", __FILE__, __LINE__, bad[i].spec);
			failures++;
		}
		CHECK_STR(e.msg, bad[i].msg);
		CHECK(e.errnum == 0);
	}
	CHECK(policy_add_secret(&p, NULL, "--secret", &e) < 0);
	CHECK(p.nsecrets == 5 && policy_secret_find(&p, "K") == NULL);
	policy_free(&p);
	CHECK(p.secrets == NULL && p.nsecrets == 0);

	/* Hosts too wide for a secret; narrower ones pass. */
	static const char *const wide[] = { "*.co.uk", "*.com.au", "*.ac.jp", "*.or.kr", "*.gov.uk",
					    "*.herokuapp.com", "*.amazonaws.com", "*.pages.dev" };
	for (size_t i = 0; i < ARRAY_LEN(wide); i++) {
		struct net_rule r;
		CHECK(rules_parse_pattern(&r, wide[i], &e) == 0);
		CHECK(policy_secret_host_refused(&r) != NULL);
	}
	static const char *const narrow[] = { "*.example.co.uk", "*.github.com", "*.co.example",
					      "*.com.a1", "*.corp.example", "co.uk", "github.io",
					      "x.github.io", "*.x.github.io", "192.0.2.1", "[::1]:1" };
	for (size_t i = 0; i < ARRAY_LEN(narrow); i++) {
		struct net_rule r;
		CHECK(rules_parse_pattern(&r, narrow[i], &e) == 0);
		CHECK(policy_secret_host_refused(&r) == NULL);
	}
}

static void test_secret_errors(void)
{
	home = "/home/u";
	EXPECT_ERR("secret\n", "t.profile:1:7: secret: missing argument (NAME host HOST...)");
	EXPECT_ERR("secret 1A host a.test\n", "t.profile:1:8: secret: invalid variable name '1A'");
	EXPECT_ERR("secret A* host a.test\n", "t.profile:1:8: secret: invalid variable name 'A*'");
	EXPECT_ERR("secret KEY\n", "t.profile:1:11: secret KEY: missing 'host HOST...'");
	EXPECT_ERR("secret KEY hosts a.test\n", "t.profile:1:12: secret KEY: expected 'host', found 'hosts'");
	EXPECT_ERR("secret KEY a.test\n", "t.profile:1:12: secret KEY: expected 'host', found 'a.test'");
	EXPECT_ERR("secret KEY host\n", "t.profile:1:16: secret KEY: 'host' needs at least one host");
	EXPECT_ERR("secret KEY host file /k\n", "t.profile:1:17: secret KEY: 'host' needs at least one host");
	EXPECT_ERR("secret KEY host a.test file\n", "t.profile:1:28: secret KEY: file: missing argument");
	EXPECT_ERR("secret KEY host a.test file /a /b\n", "t.profile:1:32: secret KEY: file: unexpected argument '/b'");
	EXPECT_ERR("secret KEY host a.test file rel\n",
		   "t.profile:1:29: secret file: path must be absolute or start with ~/: 'rel'");
	EXPECT_ERR("secret KEY host a.test file /a/../b\n",
		   "t.profile:1:29: secret file: '.', '..' and empty components are not allowed: '/a/../b'");
	EXPECT_ERR("secret KEY host a.test command\n", "t.profile:1:31: secret KEY: command: missing argument");
	EXPECT_ERR("secret KEY host a.test command # comment\n", "t.profile:1:31: secret KEY: command: missing argument");
	EXPECT_ERR("secret KEY host a.test *\n",
		   "t.profile:1:24: secret KEY: bad network pattern \"*\": '*' would match every host");
	EXPECT_ERR("secret KEY host *.com\n",
		   "t.profile:1:17: secret KEY: bad network pattern \"*.com\": a wildcard needs at least two labels after '*.'");
	EXPECT_ERR("secret KEY host a.test\tb.test *.CO.uk file /k\n",
		   "t.profile:1:31: secret KEY: \"*.co.uk\" is wider than one registrable domain (a wildcard over a public suffix)");
	EXPECT_ERR("secret KEY host *.github.io\n",
		   "t.profile:1:17: secret KEY: \"*.github.io\" is wider than one registrable domain (a wildcard over a shared hosting domain where anyone can have a name)");
	EXPECT_ERR("secret KEY host a.test:0\n",
		   "t.profile:1:17: secret KEY: bad network pattern \"a.test:0\": bad port (1-65535)");
	home = NULL;
	EXPECT_ERR("secret KEY host a.test file ~/k\n",
		   "t.profile:1:29: secret file: '~' used but no home directory is known");
	home = "/home/u";

	/* At most 63 tokens after the directive: 60 hosts fit. */
	char line[2048];
	size_t n = (size_t)snprintf(line, sizeof line, "secret KEY host");
	for (int i = 0; i < 61; i++)
		n += (size_t)snprintf(line + n, sizeof line - n, " h%d.test", i);
	snprintf(line + n, sizeof line - n, "\n");
	EXPECT_OK(line);
	snprintf(line + n, sizeof line - n, " h61.test\n");
	EXPECT_ERR(line, "t.profile:1:556: secret: too many arguments (max 63)");
	/* and every directive: those that take words without a bound read
	 * none of the words past them (a `tool deny Bash` pattern of 70 words
	 * read past the line's kept tokens) */
	static const char *const heads[] = { "tool deny Bash", "exec ask argv", "env pass",
					      "approve command x", "ssh-agent on", "net allow a.test" };
	for (size_t h = 0; h < ARRAY_LEN(heads); h++) {
		n = (size_t)snprintf(line, sizeof line, "%s", heads[h]);
		for (int i = 0; i < 70; i++)
			n += (size_t)snprintf(line + n, sizeof line - n, " w%d", i);
		snprintf(line + n, sizeof line - n, "\n");
		struct policy tp = { 0 };
		struct werr te = { 0 };
		CHECK(policy_parse_text(&tp, "t.profile", NULL, "/home/u", line, strlen(line), &te) < 0);
		CHECK(strstr(te.msg, ": too many arguments (max 63)") &&
		      strncmp(te.msg, "t.profile:1:", 12) == 0);
		policy_free(&tp);
	}

	/* An error leaves an earlier binding as it was. */
	struct policy p;
	struct werr e;
	CHECK(parse(&p, "secret KEY host a.test\n", &e) == 0);
	const char *text = "secret KEY host b.test *\n";
	CHECK(policy_parse_text(&p, "t.profile", NULL, home, text, strlen(text), &e) < 0);
	CHECK(p.nsecrets == 1 && p.secrets[0].nhosts == 1);
	CHECK_STR(p.secrets[0].hosts[0].text, "a.test");
	policy_free(&p);
}

static void expect_limit_n(int line, const struct policy *p, enum policy_limit_kind k,
			   unsigned long long v, const char *text, const char *origin)
{
	char buf[32];
	policy_limit_text(k, &p->limits[k], buf, sizeof buf);
	const char *o = p->limits[k].origin;
	/* an origin ending in ':' is a prefix: the built-in profile's line
	 * numbers change with it */
	size_t n = origin[strlen(origin) - 1] == ':' ? strlen(origin) : strlen(origin) + 1;
	if (p->limits[k].value != v || strcmp(buf, text) != 0 || !o || strncmp(o, origin, n) != 0) {
		fprintf(stderr, "%s:%d: limit %s\n  got:      %llu \"%s\" (%s)\n  expected: %llu \"%s\" (%s)\n",
			__FILE__, line, policy_limit_name(k), p->limits[k].value, buf, o ? o : "none",
			v, text, origin);
		failures++;
	}
}
#define EXPECT_LIMIT(p, k, v, text, origin) expect_limit_n(__LINE__, (p), (k), (v), (text), (origin))

static void test_limits(void)
{
	struct policy p;
	struct werr e;
	/* The defaults: processes and the tmpfs sizes bounded, memory to half
	 * of what the host has (worked out per session), CPU not; none of them
	 * asked for by a profile of the user's. */
	CHECK(policy_load(&p, NULL, home, &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_PIDS, 4096, "4096", "builtin:default:");
	EXPECT_LIMIT(&p, LIMIT_TMP, 4ULL << 30, "4G", "builtin:default:");
	EXPECT_LIMIT(&p, LIMIT_HOME, 2ULL << 30, "2G", "builtin:default:");
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 0, "50%", "builtin:default:");
	CHECK(p.limits[LIMIT_MEMORY].percent == 50);
	EXPECT_LIMIT(&p, LIMIT_CPU, 0, "unlimited", "builtin:default:");
	EXPECT_LIMIT(&p, LIMIT_LOG, 512ULL << 20, "512M", "builtin:default:");
	for (int k = 0; k < LIMIT_KINDS; k++)
		CHECK(!policy_limit_explicit(&p.limits[k]));
	/* A profile on top sets them; the last line of a kind wins. */
	const char *text = "limit pids 64\nlimit memory 1.5G\nlimit tmp 8m\nlimit cpu 1.5\n"
			   "limit home 1024K\nlimit pids 128\nlimit tmp unlimited\nlimit log 2M\n";
	CHECK(policy_parse_text(&p, "t.profile", NULL, home, text, strlen(text), &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_PIDS, 128, "128", "t.profile:6");
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 3ULL << 29, "1536M", "t.profile:2");
	CHECK(p.limits[LIMIT_MEMORY].percent == 0); /* a size replaces the default's share */
	EXPECT_LIMIT(&p, LIMIT_TMP, 0, "unlimited", "t.profile:7");
	EXPECT_LIMIT(&p, LIMIT_CPU, 1500, "1.5", "t.profile:4");
	EXPECT_LIMIT(&p, LIMIT_HOME, 1ULL << 20, "1M", "t.profile:5");
	EXPECT_LIMIT(&p, LIMIT_LOG, 2ULL << 20, "2M", "t.profile:8");
	for (int k = 0; k < LIMIT_KINDS; k++)
		CHECK(policy_limit_explicit(&p.limits[k]));
	policy_free(&p);
	CHECK(p.limits[LIMIT_PIDS].origin == NULL);

	/* Values: units in either case, decimals, bytes, the edges. */
	CHECK(parse(&p, "limit memory 16M\nlimit tmp 1048577\nlimit home 2T\nlimit cpu 0.01\n"
		    "limit pids 2\n", &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 16ULL << 20, "16M", "t.profile:1");
	EXPECT_LIMIT(&p, LIMIT_TMP, 1048577, "1048577", "t.profile:2");
	EXPECT_LIMIT(&p, LIMIT_HOME, 2ULL << 40, "2T", "t.profile:3");
	EXPECT_LIMIT(&p, LIMIT_CPU, 10, "0.01", "t.profile:4");
	EXPECT_LIMIT(&p, LIMIT_PIDS, 2, "2", "t.profile:5");
	CHECK(parse(&p, "limit memory 1024p\n", &e) < 0);
	CHECK(parse(&p, "limit log 1023K\n", &e) < 0); /* below the minimum 1M */
	CHECK(parse(&p, "limit memory 1024T\nlimit cpu 4096\nlimit pids 4194304\nlimit tmp 0.25g\n"
		    "limit home 1.001M\n", &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 1ULL << 50, "1024T", "t.profile:1");
	EXPECT_LIMIT(&p, LIMIT_CPU, 4096000, "4096", "t.profile:2");
	EXPECT_LIMIT(&p, LIMIT_PIDS, 4194304, "4194304", "t.profile:3");
	EXPECT_LIMIT(&p, LIMIT_TMP, 256ULL << 20, "256M", "t.profile:4");
	EXPECT_LIMIT(&p, LIMIT_HOME, (1ULL << 20) + 1048, "1049624", "t.profile:5");
	policy_free(&p);
	/* A share of the memory, 1% to 100%; unlimited turns the default off. */
	CHECK(parse(&p, "limit memory 1%\n", &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 0, "1%", "t.profile:1");
	policy_free(&p);
	CHECK(parse(&p, "limit memory 8G\nlimit memory 100%\n", &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 0, "100%", "t.profile:2");
	CHECK(p.limits[LIMIT_MEMORY].percent == 100);
	policy_free(&p);
	CHECK(parse(&p, "limit memory 25%\nlimit memory unlimited\n", &e) == 0);
	EXPECT_LIMIT(&p, LIMIT_MEMORY, 0, "unlimited", "t.profile:2");
	CHECK(p.limits[LIMIT_MEMORY].percent == 0);
	policy_free(&p);
	char buf[32];
	policy_limit_format(LIMIT_CPU, 1250, buf, sizeof buf);
	CHECK_STR(buf, "1.25");
	policy_limit_format(LIMIT_CPU, 2000, buf, sizeof buf);
	CHECK_STR(buf, "2");
	policy_limit_format(LIMIT_TMP, 3ULL << 39, buf, sizeof buf);
	CHECK_STR(buf, "1536G");

	EXPECT_ERR("limit\n", "t.profile:1:6: limit: missing argument (pids, memory, cpu, tmp, home or log)");
	EXPECT_ERR("limit disk 1G\n",
		   "t.profile:1:7: limit: unknown kind 'disk' (expected pids, memory, cpu, tmp, home or log)");
	EXPECT_ERR("limit pids\n", "t.profile:1:11: limit pids: missing argument");
	EXPECT_ERR("limit pids 64 65\n", "t.profile:1:15: limit pids: unexpected argument '65'");
	EXPECT_ERR("limit pids many\n", "t.profile:1:12: limit pids: 'many' is not a number of "
		   "processes (2 to 4194304, or unlimited)");
	EXPECT_ERR("limit pids 1.5\n", "t.profile:1:12: limit pids: '1.5' is not a number of "
		   "processes (2 to 4194304, or unlimited)");
	EXPECT_ERR("limit pids 1\n",
		   "t.profile:1:12: limit pids: '1' is out of range (2 to 4194304, or unlimited)");
	EXPECT_ERR("limit  pids\t4194305\n",
		   "t.profile:1:13: limit pids: '4194305' is out of range (2 to 4194304, or unlimited)");
	EXPECT_ERR("limit memory 5X\n", "t.profile:1:14: limit memory: '5X' is not a size (a number "
		   "with an optional unit K, M, G or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("limit memory 1G1\n", "t.profile:1:14: limit memory: '1G1' is not a size (a "
		   "number with an optional unit K, M, G or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("limit tmp .5G\n", "t.profile:1:11: limit tmp: '.5G' is not a size (a number "
		   "with an optional unit K, M, G or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("limit tmp 1.0005G\n", "t.profile:1:11: limit tmp: '1.0005G' is not a size (a "
		   "number with an optional unit K, M, G or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("limit memory 0%\n", "t.profile:1:14: limit memory: '0%' is not a share of the "
		   "memory (a whole percentage from 1% to 100%)");
	EXPECT_ERR("limit memory 101%\n", "t.profile:1:14: limit memory: '101%' is not a share of "
		   "the memory (a whole percentage from 1% to 100%)");
	EXPECT_ERR("limit memory 12.5%\n", "t.profile:1:14: limit memory: '12.5%' is not a share of "
		   "the memory (a whole percentage from 1% to 100%)");
	EXPECT_ERR("limit memory %\n", "t.profile:1:14: limit memory: '%' is not a share of the "
		   "memory (a whole percentage from 1% to 100%)");
	EXPECT_ERR("limit tmp 50%\n", "t.profile:1:11: limit tmp: '50%' is not a size (a number "
		   "with an optional unit K, M, G or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("limit memory 8M\n", "t.profile:1:14: limit memory: '8M' is below the minimum 16M");
	EXPECT_ERR("limit tmp 512K\n", "t.profile:1:11: limit tmp: '512K' is below the minimum 1M");
	EXPECT_ERR("limit home 0\n", "t.profile:1:12: limit home: '0' is below the minimum 1M");
	EXPECT_ERR("limit tmp 100.5\n", "t.profile:1:11: limit tmp: '100.5' is not a size (without "
		   "a unit it counts bytes, with no decimals)");
	EXPECT_ERR("limit tmp 1025T\n", "t.profile:1:11: limit tmp: '1025T' is larger than 1P");
	EXPECT_ERR("limit tmp 99999999999999999999999\n", "t.profile:1:11: limit tmp: "
		   "'99999999999999999999999' is not a size (a number with an optional unit K, M, G "
		   "or T: 512M, 1.5G; or unlimited)");
	EXPECT_ERR("limit cpu 0.001\n",
		   "t.profile:1:11: limit cpu: '0.001' is out of range (0.01 to 4096 CPUs, or unlimited)");
	EXPECT_ERR("limit cpu 4096.001\n", "t.profile:1:11: limit cpu: '4096.001' is out of range "
		   "(0.01 to 4096 CPUs, or unlimited)");
	EXPECT_ERR("limit cpu 0.0001\n", "t.profile:1:11: limit cpu: '0.0001' is not a number of "
		   "CPUs (up to three decimals: 0.5, 2, 1.25; or unlimited)");
	EXPECT_ERR("limit cpu -1\n", "t.profile:1:11: limit cpu: '-1' is not a number of CPUs "
		   "(up to three decimals: 0.5, 2, 1.25; or unlimited)");
	EXPECT_ERR("limit cpu 2c\n", "t.profile:1:11: limit cpu: '2c' is not a number of CPUs "
		   "(up to three decimals: 0.5, 2, 1.25; or unlimited)");
	EXPECT_ERR("limit cpu UNLIMITED\n", "t.profile:1:11: limit cpu: 'UNLIMITED' is not a number "
		   "of CPUs (up to three decimals: 0.5, 2, 1.25; or unlimited)");
}

/* The grammar's table (directives.h): every row found by its name, once;
 * a row whose count the parser checks has one count; a directive alone on
 * its line is an error that names it (none takes no argument), and a
 * counted one with a token too many says so at that token. */
/* `publish [HOST_PORT:]PORT` and --publish: one list, each host port
 * once, the same mapping again no change, bad ports named. */
static void test_publish(void)
{
	struct policy p;
	struct werr e;
	CHECK(parse(&p, "publish 8000\npublish 18080:80\npublish 8000\n", &e) == 0);
	CHECK(p.npublish == 2);
	CHECK(p.publish[0].host_port == 8000 && p.publish[0].port == 8000);
	CHECK(p.publish[1].host_port == 18080 && p.publish[1].port == 80);
	CHECK_STR(p.publish[1].origin, "t.profile:2");
	CHECK(policy_add_publish(&p, "9000:9001", "--publish", &e) == 0);
	CHECK(p.npublish == 3);
	CHECK_STR(p.publish[2].origin, "--publish");
	CHECK(policy_add_publish(&p, "18080:81", "--publish", &e) < 0);
	CHECK_STR(e.msg, "--publish '18080:81': host port 18080 is published already, to port 80 "
		  "(t.profile:2); a host port leads to one port inside");
	CHECK(p.npublish == 3);
	policy_free(&p);
	EXPECT_ERR("publish 0\n", "t.profile:1:9: publish '0': not a port (1 to 65535)");
	EXPECT_ERR("publish 65536\n", "t.profile:1:9: publish '65536': not a port (1 to 65535)");
	EXPECT_ERR("publish 08x\n", "t.profile:1:9: publish '08x': not a port (1 to 65535)");
	EXPECT_ERR("publish 1:2:3\n", "t.profile:1:9: publish '1:2:3': takes [HOST_PORT:]PORT (one "
		   "colon at most; the host side is always 127.0.0.1 and ::1)");
	EXPECT_ERR("publish :80\n", "t.profile:1:9: publish ':80': HOST_PORT is not a port (1 to 65535)");
	EXPECT_ERR("publish 80:\n", "t.profile:1:9: publish '80:': PORT is not a port (1 to 65535)");
	EXPECT_ERR("publish 1080\n", "t.profile:1:9: publish '1080': ports 3128 and 1080 inside are "
		   "warden's own proxy, never published");
	EXPECT_ERR("publish 1 2\n", "t.profile:1:11: publish: unexpected argument '2'");
	/* no published port, no "publish" key: the digests of other policies stay */
	CHECK(parse(&p, "", &e) == 0);
	json_t *j = policy_to_json(&p);
	CHECK(json_object_get(j, "publish") == NULL);
	json_decref(j);
	policy_free(&p);
}

static void test_directive_table(void)
{
	size_t n = 0;
	for (const struct policy_directive *d = policy_directives; d->name; d++, n++) {
		CHECK(policy_directive_find(d->name) == d);
		CHECK(d->run != NULL);
		CHECK(d->synopsis && d->synopsis[0]);
		CHECK(d->min_tokens >= 2);
		CHECK(d->max_tokens == 0 || d->max_tokens >= d->min_tokens);
		CHECK(!d->counted || d->min_tokens == d->max_tokens);
		struct policy p;
		struct werr e;
		CHECK(parse(&p, d->name, &e) < 0);
		char *want = xasprintf("t.profile:1:%zu: %s", strlen(d->name) + 1, d->name);
		CHECK(strncmp(e.msg, want, strlen(want)) == 0);
		free(want);
		policy_free(&p);
		if (d->counted) {
			char *text = xasprintf("%s a b c", d->name);
			char *msg = xasprintf("t.profile:1:%zu: %s: unexpected argument '%s'",
					      strlen(d->name) + 2 * d->min_tokens, d->name,
					      d->min_tokens == 2 ? "b" : "c");
			EXPECT_ERR(text, msg);
			free(text);
			free(msg);
		}
	}
	CHECK(n == 30);
	CHECK(policy_directive_find("nosuch") == NULL);
	CHECK(policy_directive_find("") == NULL);
	EXPECT_ERR("nosuch x", "t.profile:1:1: unknown directive 'nosuch'");
}

/* `stream`: otlp URL [ca FILE] and ocsf FILE, a later line replacing an
 * earlier one; bad URLs, relative files and a CA for http:// refused. */
static void test_stream_lines(void)
{
	struct policy p;
	struct werr e;
	CHECK(parse(&p, "stream otlp http://a:1\nstream otlp https://b/x ca /etc/ca.pem\n"
		       "stream ocsf /var/log/w.ocsf", &e) == 0);
	CHECK(strcmp(p.stream.otlp_url, "https://b/x") == 0);
	CHECK(strcmp(p.stream.otlp_ca, "/etc/ca.pem") == 0);
	CHECK(strcmp(p.stream.ocsf_file, "/var/log/w.ocsf") == 0);
	policy_free(&p);
	EXPECT_ERR("stream otlp ftp://a", "t.profile:1:13: stream otlp: 'ftp://a' is not an http:// or https:// URL");
	EXPECT_ERR("stream otlp http://a ca /x", "t.profile:1:22: stream otlp: 'ca FILE' is for an https:// URL");
	EXPECT_ERR("stream otlp https://a cb /x", "t.profile:1:23: stream otlp: after the URL only 'ca FILE'");
	EXPECT_ERR("stream ocsf rel.json", "t.profile:1:13: stream ocsf: the file must be an absolute path or start with ~/: 'rel.json'");
	EXPECT_ERR("stream kafka x", "t.profile:1:8: stream: unknown target 'kafka' (expected otlp or ocsf)");
}

/* `ssh-agent`: on, ask, the keys adding up over lines (fingerprints of
 * the right shape, or comments), off forgetting them; none of it in the
 * policy's JSON while off (the digests of older policies stay). */
static void test_ssh_agent(void)
{
	struct policy p;
	struct werr e;
	static const char fp[] = "SHA256:9mU7jmL4O9fXKwsQqOdj9St9YTURx8//v9nVxD6TA70";
	CHECK(parse(&p, "canary on\n", &e) == 0);
	CHECK(!p.ssh_agent.on);
	json_t *j = policy_to_json(&p);
	CHECK(json_object_get(j, "ssh_agent") == NULL);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "ssh-agent on\n", &e) == 0);
	CHECK(p.ssh_agent.on && !p.ssh_agent.ask && p.ssh_agent.keys.n == 0);
	policy_free(&p);
	char *text = xasprintf("ssh-agent %s me@laptop\nssh-agent ask deploy\nssh-agent %s\n", fp, fp);
	CHECK(parse(&p, text, &e) == 0);
	free(text);
	CHECK(p.ssh_agent.on && p.ssh_agent.ask && p.ssh_agent.keys.n == 3);
	CHECK(strv_contains(&p.ssh_agent.keys, fp) && strv_contains(&p.ssh_agent.keys, "deploy"));
	j = policy_to_json(&p);
	CHECK(json_is_true(json_object_get(json_object_get(j, "ssh_agent"), "ask")));
	CHECK(json_array_size(json_object_get(json_object_get(j, "ssh_agent"), "keys")) == 3);
	json_decref(j);
	policy_free(&p);
	CHECK(parse(&p, "ssh-agent ask k1\nssh-agent off\n", &e) == 0);
	CHECK(!p.ssh_agent.on && !p.ssh_agent.ask && p.ssh_agent.keys.n == 0);
	policy_free(&p);
	EXPECT_ERR("ssh-agent\n", "t.profile:1:10: ssh-agent: missing argument (on, ask, off or the "
		   "keys: SHA256:... or a comment)");
	EXPECT_ERR("ssh-agent off k\n", "t.profile:1:15: ssh-agent off: unexpected argument 'k'");
	EXPECT_ERR("ssh-agent k ask\n", "t.profile:1:13: ssh-agent: 'ask' where a key was expected "
		   "(`ssh-agent on|ask [KEY...]` or `ssh-agent off`)");
	EXPECT_ERR("ssh-agent SHA256:abc\n", "t.profile:1:11: ssh-agent: 'SHA256:abc' is not a SHA256 "
		   "fingerprint (SHA256: and 43 characters, as ssh-add -l prints)");
}

int main(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s", "/tmp/warden-test-policy-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	char *sub = tmp_path("sub");
	mkdir(sub, 0700);
	free(sub);

	test_default();
	test_directives();
	test_directive_table();
	test_errors();
	test_home();
	test_load_home();
	test_includes();
	test_layering();
	test_audit_level();
	test_signal_grace();
	test_freeze_timeout();
	test_terminal_clipboard();
	test_canary();
	test_cache();
	test_protect_except();
	test_git_identity();
	test_workspace();
	test_exec_kernel();
	test_checkpoint();
	test_net();
	test_net_requests();
	test_net_compiled();
	test_net_errors();
	test_add_net();
	test_publish();
	test_secrets();
	test_secret_errors();
	test_limits();
	test_exec_hash_list();
	test_exec_missing_file();
	test_ssh_agent();
	test_stream_lines();

	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	free(cmd);
	return check_status();
}
