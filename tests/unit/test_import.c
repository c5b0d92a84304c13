/* test_import.c - `warden import` (src/import/): the TOML subset reader
 * (what it reads, what it refuses with LINE:COL), and the mapping of each
 * source into a profile: denies stay denies (net deny, mask, protect, tool
 * deny), a deny warden cannot write takes out the allows it covers, binds
 * never show a denied path, and what is less strict is said. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "src/import/import.h"
#include "src/import/toml.h"
#include "src/policy/policy.h"
#include "src/workspace/wsrules.h"

static char *toml_json(const char *text, char *err, size_t errlen)
{
	struct werr e = { 0 };
	json_t *j = toml_parse(text, strlen(text), "c.toml", &e);
	snprintf(err, errlen, "%s", e.msg);
	if (!j)
		return NULL;
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return s;
}

static void test_toml_reads(void)
{
	char err[1024];
	char *s = toml_json("# comment\n"
			    "sandbox_mode = \"workspace-write\" # after\n"
			    "n = -1_000\nf = 2.5\nb = true\n"
			    "a.\"b c\".d = 'lit\\n'\n"
			    "[sandbox_workspace_write]\n"
			    "writable_roots = [\n  \"/x\", # one\n  '/y',\n]\n"
			    "[mcp_servers.docs]\nenv = { \"K\" = \"v\", L = 2 }\n"
			    "m = \"\"\"\nline\\\n    joined \\u00e9\"\"\"\n"
			    "r = '''two\nlines'''\n",
			    err, sizeof err);
	CHECK_STR(s, "{\"a\":{\"b c\":{\"d\":\"lit\\\\n\"}},\"b\":true,\"f\":2.5,"
		     "\"mcp_servers\":{\"docs\":{\"env\":{\"K\":\"v\",\"L\":2},"
		     "\"m\":\"linejoined \xc3\xa9\",\"r\":\"two\\nlines\"}},\"n\":-1000,"
		     "\"sandbox_mode\":\"workspace-write\","
		     "\"sandbox_workspace_write\":{\"writable_roots\":[\"/x\",\"/y\"]}}");
	free(s);
	s = toml_json("", err, sizeof err);
	CHECK_STR(s, "{}");
	free(s);
	s = toml_json("a = \"\"\"x\"\"\"\"\"\nb = \"\\\"q\\\"\"\r\n", err, sizeof err);
	CHECK_STR(s, "{\"a\":\"x\\\"\\\"\",\"b\":\"\\\"q\\\"\"}");
	free(s);
}

static void refused(const char *text, const char *where, const char *what)
{
	char err[1024];
	char *s = toml_json(text, err, sizeof err);
	CHECK(s == NULL);
	free(s);
	CHECK(strstr(err, where) != NULL);
	CHECK(strstr(err, what) != NULL);
	if (!strstr(err, where) || !strstr(err, what))
		fprintf(stderr, "  for %s: %s\n", text, err);
}

static void test_toml_refuses(void)
{
	refused("a = 1\na = 2\n", "c.toml:2:", "defined twice");
	refused("[t]\nx = 1\n[t]\n", "c.toml:3:", "given twice");
	refused("a = 1\n[a]\n", "c.toml:2:", "a value already");
	refused("[[x]]\n", "c.toml:1:1:", "arrays of tables");
	refused("d = 1979-05-27\n", "c.toml:1:", "dates and times");
	refused("t = 07:32:00\n", "c.toml:1:", "dates and times");
	refused("h = 0xff\n", "c.toml:1:", "hexadecimal");
	refused("x = inf\n", "c.toml:1:", "inf and nan");
	refused("s = \"open\n", "c.toml:1:", "not closed");
	refused("s = \"\\q\"\n", "c.toml:1:", "unknown escape");
	refused("s = \"\\uD800\"\n", "c.toml:1:", "not a character");
	refused("a = [1, 2\n", "c.toml:2:", "not closed");
	refused("a = { b = 1\n", "c.toml:1:", "inline table");
	refused("a = 1 b = 2\n", "c.toml:1:7:", "end of the line");
	refused("= 1\n", "c.toml:1:1:", "cannot start a key");
	refused("a =\n", "c.toml:1:", "value is missing");
	refused("a = 01\n", "c.toml:1:", "not a value");
	refused("a = 99999999999999999999\n", "c.toml:1:", "integer");
	refused("a = \"x\xff\"\n", "c.toml:1:", "not UTF-8");
	static const char nul[] = "a = 1\nb = \"\0\"\n";
	struct werr e = { 0 };
	CHECK(toml_parse(nul, sizeof nul - 1, "c.toml", &e) == NULL);
	CHECK(strstr(e.msg, "c.toml:2:") && strstr(e.msg, "NUL"));
	/* nesting is bounded */
	char deep[200] = "a = ";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	refused(deep, "c.toml:1:", "nested deeper");
}

/* The profile for one settings text; the model's lists stay for checks. */
static char *emit(enum import_source src, const char *text, struct imp *m)
{
	memset(m, 0, sizeof *m);
	m->src = src;
	m->home = "/home/u";
	m->cwd = "/work/proj";
	strv_push(&m->files, "s");
	struct werr e = { 0 };
	if (import_read(m, "s", text, strlen(text), &e) < 0) {
		fprintf(stderr, "import_read: %s\n", e.msg);
		return NULL;
	}
	return import_emit(m);
}

/* A line of the profile starting with want (a directive and its argument). */
static bool has_line(const char *profile, const char *want)
{
	size_t n = strlen(want);
	for (const char *l = profile; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, want, n) == 0 && (l[n] == ' ' || l[n] == '\n'))
			return true;
	return false;
}

static bool listed(const struct strv *s, const char *part)
{
	for (size_t i = 0; i < s->n; i++)
		if (strstr(s->v[i], part))
			return true;
	return false;
}

/* The profile parses, over the built-in default, with "~" at /home/u. */
static void parses(const char *profile)
{
	struct policy p = { 0 };
	struct werr e = { 0 };
	int r = policy_parse_text(&p, "imported", NULL, "/home/u", profile, strlen(profile), &e);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "  %s\n%s\n", e.msg, profile);
	policy_free(&p);
}

static void test_srt(void)
{
	struct imp m;
	char *p = emit(IMPORT_SRT,
		       "{\"network\":{\"allowedDomains\":[\"github.com\",\"*.npmjs.org\",\"x.example.com\","
		       "\"*\"],\"deniedDomains\":[\"evil.com\",\"*.example.com\"]},"
		       "\"filesystem\":{\"denyRead\":[\"~/.ssh\",\"secrets/**\",\"/usr/share/k\",\"/work/proj/db\"],"
		       "\"allowWrite\":[\".\",\"~/.cache/pip\",\"~\",\"/tmp/b\",\"*.log\"],"
		       "\"denyWrite\":[\".env\",\"*.lock\",\"~/.cache/pip/cfg\"]}}",
		       &m);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(has_line(p, "net allow github.com"));
	CHECK(has_line(p, "net allow *.npmjs.org"));
	CHECK(has_line(p, "net deny evil.com"));
	CHECK(has_line(p, "net deny *.example.com"));
	CHECK(!has_line(p, "net allow *")); /* not a warden pattern: left out, said */
	CHECK(listed(&m.unmapped, "\"*\""));
	CHECK(has_line(p, "mask secrets"));
	CHECK(has_line(p, "mask db"));              /* absolute in the workspace */
	CHECK(has_line(p, "protect .env"));
	CHECK(has_line(p, "mask *.lock"));          /* a glob denied writing: unreadable too */
	/* the cache holds a path denied writing: shown read-only */
	CHECK(has_line(p, "read-only ~/.cache/pip"));
	CHECK(!has_line(p, "read-write ~/.cache/pip"));
	/* the home holds ~/.ssh, denied reading: not bound at all */
	CHECK(!has_line(p, "read-write ~") && !has_line(p, "read-only ~"));
	CHECK(listed(&m.unmapped, "\"~\""));
	CHECK(!strstr(p, "read-write /tmp"));
	CHECK(listed(&m.weaker, "/usr/share/k"));   /* cannot be hidden: said */
	free(p);
	imp_free(&m);
	/* /etc: what the curated copy does not hold is unreadable already */
	p = emit(IMPORT_SRT, "{\"filesystem\":{\"allowWrite\":[\".\"],\"denyRead\":[\"/etc/shadow\","
			     "\"/etc/ssh\",\"/etc/passwd\",\"/etc/ssl/certs\",\"/etc/ssl\"]}}", &m);
	CHECK(p && !listed(&m.weaker, "/etc/shadow") && !listed(&m.weaker, "/etc/ssh\"") &&
	      !listed(&m.weaker, "/etc/passwd"));
	CHECK(listed(&m.weaker, "/etc/ssl/certs") && listed(&m.weaker, "\"/etc/ssl\""));
	CHECK(!m.ws_write_limited);
	parses(p);
	free(p);
	imp_free(&m);

	/* a denied name that starts with '!' (or '#') stays denied: as a
	 * profile's token `mask !X` would be an exception that unmasks X, and
	 * `protect !X` one that makes X writable */
	p = emit(IMPORT_SRT, "{\"filesystem\":{\"allowWrite\":[\".\"],\"denyRead\":[\"!.env\",\"**/!k\","
			     "\"/work/proj/#h\",\"#r\"],\"denyWrite\":[\"!d/e\",\"#w\"]}}", &m);
	CHECK(p && has_line(p, "mask \\!.env") && has_line(p, "mask \\!k") &&
	      has_line(p, "mask [#]h") && has_line(p, "mask \\!d/e"));
	CHECK(p && has_line(p, "mask [#]r") && has_line(p, "mask [#]w") && !listed(&m.weaker, "#"));
	CHECK(p && !strstr(p, "\nmask !") && !strstr(p, "\nprotect !") && !strstr(p, "\nmask #"));
	if (p) {
		struct policy pol = { 0 };
		struct werr e = { 0 };
		CHECK(policy_parse_text(&pol, "imported", NULL, "/home/u", p, strlen(p), &e) == 0);
		CHECK(workspace_masked(&pol, "!.env", "!.env") && workspace_masked(&pol, "x/!k", "!k"));
		CHECK(workspace_masked(&pol, "#h", "#h") && workspace_masked(&pol, "!d/e", "e"));
		CHECK(workspace_masked(&pol, "x/#r", "#r") && workspace_masked(&pol, "#w", "#w"));
		CHECK(!workspace_masked(&pol, ".envrc", ".envrc") && !workspace_masked(&pol, "k", "k"));
		policy_free(&pol);
	}
	free(p);
	imp_free(&m);

	/* a path the profile's parser will not bind writable (/boot): left
	 * out and said, as the parser would refuse the line */
	p = emit(IMPORT_SRT, "{\"filesystem\":{\"allowWrite\":[\".\",\"/boot\",\"/srv/data\"]}}", &m);
	CHECK(p && !strstr(p, "read-write /boot") && has_line(p, "read-write /srv/data"));
	CHECK(listed(&m.unmapped, "\"/boot\": may not be writable in the sandbox"));
	if (p)
		parses(p);
	free(p);
	imp_free(&m);

	/* deny-all and a port denied everywhere */
	p = emit(IMPORT_SRT, "{\"network\":{\"allowedDomains\":[\"a.example\"],\"deniedDomains\":[\"*\"]}}", &m);
	CHECK(p && !strstr(p, "net allow"));
	free(p);
	imp_free(&m);
	p = emit(IMPORT_SRT, "{\"network\":{\"allowedDomains\":[\"a.example\",\"b.example:22\"],"
			     "\"deniedDomains\":[\"*:22\",\"*.com\"]},\"filesystem\":{\"allowWrite\":[\"src\"]}}", &m);
	CHECK(p && has_line(p, "net allow a.example:443"));
	CHECK(p && !has_line(p, "net allow b.example:22"));
	CHECK(m.ws_write_limited && listed(&m.weaker, "--review"));
	parses(p);
	free(p);
	imp_free(&m);
	/* a deny warden cannot write takes out the allows under it */
	p = emit(IMPORT_SRT, "{\"network\":{\"allowedDomains\":[\"a.com\",\"*.b.com\",\"c.org\"],"
			     "\"deniedDomains\":[\"*.com\"]},\"filesystem\":{\"allowWrite\":[\".\"]}}", &m);
	CHECK(p && !strstr(p, "net allow a.com") && !strstr(p, "net allow *.b.com"));
	CHECK(p && has_line(p, "net allow c.org"));
	free(p);
	imp_free(&m);
}

static void test_claude(void)
{
	struct imp m;
	char *p = emit(IMPORT_CLAUDE,
		       "{\"permissions\":{\"deny\":[\"Bash(curl:*)\",\"Bash(rm -rf /)\",\"Read(./.env.local)\","
		       "\"Edit(docs/**)\",\"WebFetch(domain:paste.example)\",\"Task(x)\",\"Bash(echo [a] #c)\"],"
		       "\"ask\":[\"Bash(git push:*)\"],\"allow\":[\"Bash(npm test:*)\",\"mcp__gh\",\"Glob(x)\"]},"
		       "\"sandbox\":{\"enabled\":true,\"network\":{\"allowedDomains\":[\"registry.npmjs.org\"]},"
		       "\"excludedCommands\":[\"docker\"]},\"model\":\"m\"}",
		       &m);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(has_line(p, "tool deny Bash *curl*"));
	CHECK(has_line(p, "tool deny Bash *rm -rf /*"));
	CHECK(has_line(p, "tool deny Read */.env.local"));
	CHECK(has_line(p, "tool deny Task"));       /* a specifier warden cannot match: every call */
	CHECK(has_line(p, "tool deny Bash *echo \\[a\\] [#]c*"));
	CHECK(has_line(p, "tool ask Bash *git push*"));
	CHECK(has_line(p, "tool allow Bash npm test"));
	CHECK(has_line(p, "tool allow Bash npm test *"));
	CHECK(has_line(p, "tool allow mcp__gh__*"));
	CHECK(!strstr(p, "tool allow Glob"));
	CHECK(has_line(p, "mask .env.local"));
	CHECK(has_line(p, "protect docs"));
	CHECK(has_line(p, "net deny paste.example"));
	CHECK(has_line(p, "net allow registry.npmjs.org"));
	/* deny rules come before ask and allow rules: the first match decides */
	CHECK(strstr(p, "tool deny") < strstr(p, "tool ask") && strstr(p, "tool ask") < strstr(p, "tool allow"));
	CHECK(listed(&m.stricter, "excludedCommands"));
	CHECK(listed(&m.ignored, "model"));
	parses(p);
	free(p);
	imp_free(&m);
	/* additionalDirectories are paths, not a permission rule's
	 * settings-relative "/x": bound (under /tmp too, whose private tmpfs
	 * would hide the host's); they were said "writable already: in the
	 * workspace" and left out */
	p = emit(IMPORT_CLAUDE, "{\"permissions\":{\"additionalDirectories\":[\"/home/u/otherproj\","
			       "\"/tmp/x/extra\",\"~/docs\",\"/work/proj/sub\"]}}", &m);
	CHECK(p && has_line(p, "read-write /home/u/otherproj"));
	CHECK(p && has_line(p, "read-write /tmp/x/extra"));
	CHECK(p && has_line(p, "read-write ~/docs"));
	CHECK(p && !strstr(p, "read-write /work/proj/sub") && !has_line(p, "read-write sub"));
	if (p)
		parses(p);
	free(p);
	imp_free(&m);

	/* a pattern of more words than a profile's line holds: a deny or an
	 * ask of every call of the tool, an allow left out (said); the
	 * profile is one warden reads */
	char words[512] = "";
	for (int i = 0; i < 70; i++)
		snprintf(words + strlen(words), sizeof words - strlen(words), "%sw%d", i ? " " : "", i);
	char *json = xasprintf("{\"permissions\":{\"deny\":[\"Bash(%s)\"],\"ask\":[\"WebSearch(%s)\"],"
			       "\"allow\":[\"Bash(%s:*)\"]}}", words, words, words);
	p = emit(IMPORT_CLAUDE, json, &m);
	CHECK(p && has_line(p, "tool deny Bash") && has_line(p, "tool ask WebSearch"));
	CHECK(p && !strstr(p, "\ntool allow Bash") && listed(&m.unmapped, "more than 60 words"));
	if (p)
		parses(p);
	free(p);
	free(json);
	imp_free(&m);
}

static void test_codex(void)
{
	struct imp m;
	char *p = emit(IMPORT_CODEX, "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\n"
				     "writable_roots = [\"/srv/data\", \"/work/proj/out\"]\nnetwork_access = true\n", &m);
	CHECK(p && has_line(p, "read-write /srv/data"));
	CHECK(p && !strstr(p, "read-write /work/proj/out"));
	CHECK(listed(&m.stricter, "network_access"));
	CHECK(!m.ws_write_limited);
	if (p)
		parses(p);
	free(p);
	imp_free(&m);
	p = emit(IMPORT_CODEX, "sandbox_mode = \"read-only\"\n", &m);
	CHECK(p && m.ws_write_limited && listed(&m.weaker, "read-only"));
	free(p);
	imp_free(&m);
	/* no sandbox_mode at all: read-only in an untrusted project, said */
	p = emit(IMPORT_CODEX, "model = \"x\"\n", &m);
	CHECK(p && m.ws_write_limited && listed(&m.weaker, "not set"));
	free(p);
	imp_free(&m);
	/* layered: the user's file sets the mode, the project's adds a root */
	struct imp l = { .src = IMPORT_CODEX, .home = "/home/u", .cwd = "/w" };
	struct werr e = { 0 };
	strv_push(&l.files, "user");
	strv_push(&l.files, "project");
	static const char user[] = "sandbox_mode = \"workspace-write\"\n",
			  proj[] = "[sandbox_workspace_write]\nwritable_roots = [\"/srv/x\"]\n";
	CHECK(import_read(&l, "user", user, sizeof user - 1, &e) == 0);
	CHECK(import_read(&l, "project", proj, sizeof proj - 1, &e) == 0);
	p = import_emit(&l);
	CHECK(!l.ws_write_limited && has_line(p, "read-write /srv/x"));
	CHECK(strstr(p, "#   user\n#   project\n") != NULL);
	free(p);
	imp_free(&l);
}

static void bad(enum import_source src, const char *text, const char *want)
{
	struct imp m = { .src = src, .home = "/home/u", .cwd = "/w" };
	struct werr e = { 0 };
	CHECK(import_read(&m, "s.json", text, strlen(text), &e) < 0);
	CHECK(strstr(e.msg, "s.json") && strstr(e.msg, want));
	if (!strstr(e.msg, want))
		fprintf(stderr, "  %s: %s\n", text, e.msg);
	imp_free(&m);
}

static void test_bad_input(void)
{
	bad(IMPORT_SRT, "{\"network\":", "not valid JSON");
	bad(IMPORT_SRT, "[1]", "must be a JSON object");
	bad(IMPORT_SRT, "{\"network\":[]}", "network must be an object");
	bad(IMPORT_SRT, "{\"network\":{\"allowedDomains\":\"x\"}}", "array of strings");
	bad(IMPORT_SRT, "{\"filesystem\":{\"denyRead\":[1]}}", "array of strings");
	bad(IMPORT_SRT, "{\"a\":1,\"a\":2}", "not valid JSON");
	bad(IMPORT_CLAUDE, "{\"permissions\":{\"deny\":{}}}", "permissions.deny");
	bad(IMPORT_CLAUDE, "{\"sandbox\":{\"enabled\":\"yes\"}}", "true or false");
	bad(IMPORT_CODEX, "sandbox_mode = 1\n", "must be a string");
	bad(IMPORT_CODEX, "sandbox_mode = \"open\"\n", "not read-only");
	bad(IMPORT_CODEX, "[sandbox_workspace_write]\nwritable_roots = \"/x\"\n", "array of strings");
	struct imp m = { .src = IMPORT_SRT };
	struct werr e = { 0 };
	CHECK(import_read(&m, "s.json", "{}", IMPORT_MAX_FILE + 1, &e) < 0 && strstr(e.msg, "larger"));
	imp_free(&m);
}

int main(void)
{
	test_toml_reads();
	test_toml_refuses();
	test_srt();
	test_claude();
	test_codex();
	test_bad_input();
	return check_status();
}
