/* test_detect.c - the detector (src/detect/): the rules format (every
 * error naming FILE:LINE:COL, the text written back parsing again, a later
 * rule replacing one of its name, `disable`), the conditions (globs over
 * strings, numbers and arrays, argc, regexes, numbers, presence, new
 * values), counts and sequences within their windows and agreeing on
 * `same`, the risk score (weights, once a minute per rule, the half-life,
 * thresholds acting once, a rule's own action, a freeze that cannot be had
 * falling through to kill) and the other checks' alerts rated. Events are
 * fed with their times; nothing runs a sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "src/common/util.h"
#include "src/detect/detect.h"

static void parse_err(const char *text, const char *want)
{
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_parse(&rs, "f.rules", text, strlen(text), &e) < 0);
	if (!strstr(e.msg, want))
		fprintf(stderr, "  got: %s\n  want: %s\n", e.msg, want);
	CHECK(strstr(e.msg, want) != NULL);
	drules_free(&rs);
}

static void test_errors(void)
{
	parse_err("on exec\n", "f.rules:1:1: 'on' outside a rule");
	parse_err("bogus x\n", "f.rules:1:1: unknown directive 'bogus'");
	parse_err("rule a.b severe\n  on exec\n", "f.rules:1:10: rule: unknown severity 'severe'");
	parse_err("rule a.b high\n", "f.rules:1:1: rule: no `on` line");
	parse_err("rule a.b high\n  on exec argv~(\n", "f.rules:2:16: bad regular expression");
	parse_err("rule a.b high\n  on exec x>abc\n", "f.rules:2:13: not a number");
	parse_err("rule a.b high\n  on exec a=b||c\n", "f.rules:2:15: empty alternative");
	parse_err("rule a.b high\n  on exec \"argv=x\n", "f.rules:2:11: unterminated quote");
	parse_err("rule a.b high\n  on * new:host\n", "f.rules:2:8: new: needs an event kind");
	parse_err("rule a.b high\n  on exec\n  within 0s\n", "f.rules:3:10: within: not a duration");
	parse_err("rule a.b high\n  on exec\n  count 1\n", "f.rules:3:9: count: not a number");
	parse_err("rule a.b high\n  on exec\n  then net\n  count 3\n", "f.rules:1:1: rule: `count` and `then`");
	parse_err("rule a.b high\n  then net\n", "f.rules:2:3: then: comes after the `on` line");
	parse_err("rule a.b high\n  on exec\n  on net\n", "f.rules:3:3: on: a rule has one `on` line");
	parse_err("rule a.b high\n  on exec\n  action explode\n", "f.rules:3:10: action: unknown action");
	parse_err("disable nothing.here\n", "f.rules:1:9: disable: no rule");
	parse_err("rule a.b high\r\n", "f.rules:1:14: carriage return");
	parse_err("rule a/b high\n  on exec\n", "f.rules:1:6: rule: not a rule name");
	parse_err("rule a.b high\n  on EXEC\n", "f.rules:2:6: on: not an event kind");
	/* a kind the stream never carries: the rule would never fire */
	parse_err("rule a.b high\n  on exce argv=*x*\n", "f.rules:2:6: on: not an event kind: 'exce' (exec, net");
	parse_err("rule a.b high\n  on exec\n  then log.failed\n", "f.rules:3:8: then: not an event kind");
	parse_err("rule a.b high\n  on exec \xff\n", "f.rules:2:11: invalid UTF-8");
	parse_err("rate x.* whatever\n", "f.rules:1:10: rate: unknown severity");
	parse_err("rule a.b high\n  on exec\n  scope forest\n", "f.rules:3:9: scope: 'forest'");
	parse_err("rule a.b high\n  on exec\n  scope tree\n", "f.rules:1:1: rule: `scope tree` is for a sequence");
}

static void test_roundtrip(void)
{
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_load(&rs, NULL, 0, &e) == 0);
	CHECK(rs.nrules >= 20);
	const char *user = "rule escape.mount low\n  on syscall name=mount\n"
			   "disable recon.env\n"
			   "rule my.rule medium\n  on exec \"argv=a b\" argc>2 !tool\n  then net new:host\n"
			   "  within 2m\n  same pid\n  action freeze\n  about say \"it\"\n";
	size_t before = rs.nrules;
	CHECK(drules_parse(&rs, "user.rules", user, strlen(user), &e) == 0);
	CHECK(rs.nrules == before + 1); /* escape.mount replaced, my.rule added */
	char *text = drules_text(&rs);
	CHECK(strstr(text, "rule escape.mount low    # user.rules:1") != NULL);
	CHECK(strstr(text, "rule recon.env ") == NULL);
	CHECK(strstr(text, "on exec \"argv=a b\" argc>2 !tool") != NULL);
	CHECK(strstr(text, "about \"say it\"") != NULL || strstr(text, "about say") != NULL);
	struct ruleset again = { 0 };
	CHECK(drules_parse(&again, "again", text, strlen(text), &e) == 0);
	CHECK(again.nrules == rs.nrules - 1);
	free(text);
	drules_free(&again);
	drules_free(&rs);
}

/* ---- the engine -------------------------------------------------------- */

struct acts {
	int n[ACT_KILL + 1];
	int refuse_freeze;
};

static int on_act(void *ctx, enum det_action a, const char *reason)
{
	struct acts *x = ctx;
	x->n[a]++;
	return a == ACT_FREEZE && x->refuse_freeze ? -1 : 0;
}

static struct detect *engine(const char *text, const struct detect_risk *risk, struct acts *acts)
{
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	if (drules_parse(&rs, "t", text, strlen(text), &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		CHECK(0);
	}
	struct detect *d = detect_new(&rs, &(struct detect_env){ .workspace = "/w", .home = "/home/agent" },
				      risk);
	if (acts)
		detect_set_actor(d, on_act, acts);
	return d;
}

static unsigned feed(struct detect *d, const char *kind, const char *fields, double t)
{
	static unsigned long seq;
	json_t *f = json_loads(fields, 0, NULL);
	CHECK(f != NULL);
	unsigned n = detect_feed(d, kind, f, ++seq, t);
	json_decref(f);
	return n;
}

static const struct detect_risk quiet = { .half_life_s = 600 };

static void test_conditions(void)
{
	struct detect *d = engine(
		"rule g low\n  on exec resolved=*/env|*/printenv argc<2\n"
		"rule arr low\n  on exec argv=*/.ssh/*\n"
		"rule num low\n  on net bytes_out>10M\n"
		"rule re low\n  on net host~[a-z0-9]{20,}\n"
		"rule pres low\n  on exec program\n"
		"rule abs low\n  on exec resolved=/bin/x !tool\n"
		"rule ne low\n  on syscall name!=write|read\n"
		"rule ws low\n  on exec resolved=$WORKSPACE/*|$HOME/*\n"
		"rule nw low\n  on net new:host\n"
		"rule b low\n  on net intercepted=true\n",
		&quiet, NULL);
	CHECK(feed(d, "exec", "{\"resolved\":\"/usr/bin/env\",\"argv\":[\"env\"]}", 1) == 1);
	CHECK(feed(d, "exec", "{\"resolved\":\"/usr/bin/env\",\"argv\":[\"env\",\"node\"]}", 1) == 0);
	CHECK(feed(d, "exec", "{\"resolved\":\"/bin/cat\",\"argv\":[\"cat\",\"/home/a/.ssh/id\"]}", 1) == 1);
	CHECK(feed(d, "net", "{\"host\":\"a.b\",\"bytes_out\":20000000}", 1) == 2); /* num, new host */
	CHECK(feed(d, "net", "{\"host\":\"a.b\",\"bytes_out\":2000}", 1) == 0);
	CHECK(feed(d, "net", "{\"host\":\"aaaaaaaaaaaaaaaaaaaaaaaaa.b\"}", 1) == 2); /* re, new */
	CHECK(feed(d, "exec", "{\"program\":\"/bin/ls\"}", 1) == 1);
	CHECK(feed(d, "exec", "{\"program\":\"\"}", 1) == 0);
	CHECK(feed(d, "exec", "{\"resolved\":\"/bin/x\"}", 1) == 1);
	CHECK(feed(d, "exec", "{\"resolved\":\"/bin/x\",\"tool\":\"t1\"}", 1) == 0);
	CHECK(feed(d, "syscall", "{\"name\":\"unshare\"}", 1) == 1);
	CHECK(feed(d, "syscall", "{\"name\":\"write\"}", 1) == 0);
	CHECK(feed(d, "exec", "{\"resolved\":\"/w/build/a.out\"}", 1) == 1);
	CHECK(feed(d, "exec", "{\"resolved\":\"/home/agent/x\"}", 1) == 1);
	CHECK(feed(d, "exec", "{\"resolved\":\"/wx/y\"}", 1) == 0);
	CHECK(feed(d, "net", "{\"host\":\"c.d\",\"intercepted\":true}", 1) == 2);
	CHECK(feed(d, "net", "{\"host\":\"c.d\",\"intercepted\":false}", 1) == 0);
	detect_free(d);
}

/* The same texts again and again, and more of them than the kept answers
 * (a glob's and a regex's): each answer is the one for its own text; rules
 * of "*" kind see events of every kind, the others only their own. */
static void test_repeated_texts(void)
{
	struct detect *d = engine("rule g low\n  on exec argv=*a7*\n"
				  "rule r low\n  on exec argv~^x-[0-9]*5$\n"
				  "rule any low\n  on * name=zz\n"
				  "rule s low\n  on syscall name=zz|yy\n", &quiet, NULL);
	char f[128];
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 1500; i++) {
			snprintf(f, sizeof f, "{\"argv\":[\"%s-%d\"]}", i % 3 ? "x" : "a7", i);
			unsigned want = i % 3 == 0 ? 1 : i % 10 == 5;
			CHECK(feed(d, "exec", f, 1) == want);
		}
	static const struct {
		const char *kind, *fields;
		unsigned fired;
	} kinds[] = { { "syscall", "{\"name\":\"zz\"}", 2 }, { "syscall", "{\"name\":\"yy\"}", 1 },
		      { "net", "{\"name\":\"zz\"}", 1 }, { "net", "{\"name\":\"yy\"}", 0 },
		      { "exec", "{\"argv\":[\"x-15\"],\"name\":\"zz\"}", 2 } };
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		CHECK(feed(d, kinds[i].kind, kinds[i].fields, 1) == kinds[i].fired);
	detect_free(d);
}

/* The answers kept by text are the text's, not its address's: two numbers
 * of one event (each written in the same buffer for matching), and an argv
 * of more arguments than the addresses kept, its one match anywhere in it. */
static void test_texts_by_address(void)
{
	struct detect *d = engine("rule n low\n  on exec pid=1* ppid=1*\n"
				  "rule a low\n  on exec argv=*q9*\n", &quiet, NULL);
	CHECK(feed(d, "exec", "{\"pid\":12,\"ppid\":34}", 1) == 0);
	CHECK(feed(d, "exec", "{\"pid\":12,\"ppid\":15}", 1) == 1);
	CHECK(feed(d, "exec", "{\"pid\":34,\"ppid\":12}", 1) == 0);
	static char f[20000];
	for (int at = 0; at <= 600; at += 150)
		for (int pass = 0; pass < 2; pass++) {
			size_t n = (size_t)snprintf(f, sizeof f, "{\"argv\":[");
			for (int i = 0; i < 600; i++)
				n += (size_t)snprintf(f + n, sizeof f - n, "%s\"%s%d\"", i ? "," : "",
						      i == at ? "q9-" : "a-", i);
			snprintf(f + n, sizeof f - n, "]}");
			CHECK(feed(d, "exec", f, 1) == (at < 600));
		}
	detect_free(d);
}

static void test_sequences_and_counts(void)
{
	struct detect *d = engine(
		"rule seq high\n  on exec argv=*/.aws/*\n  then net new:host\n  within 60s\n"
		"rule again high\n  on exec decision=deny sha256\n  then exec decision=deny sha256\n"
		"  same sha256\n  within 60s\n"
		"rule burst medium\n  on syscall decision=deny\n  count 3\n  within 10s\n  same name\n",
		&quiet, NULL);
	/* a connection before the read does not count; after it, within 60 s */
	CHECK(feed(d, "net", "{\"host\":\"x.example\"}", 0) == 0);
	CHECK(feed(d, "exec", "{\"argv\":[\"cat\",\"/h/.aws/credentials\"]}", 1) == 0);
	CHECK(feed(d, "net", "{\"host\":\"x.example\"}", 2) == 0); /* seen before */
	CHECK(feed(d, "net", "{\"host\":\"y.example\"}", 3) == 1);
	CHECK(feed(d, "exec", "{\"argv\":[\"cat\",\"/h/.aws/credentials\"]}", 10) == 0);
	CHECK(feed(d, "net", "{\"host\":\"z.example\"}", 100) == 0); /* the window passed */
	/* same sha256 */
	CHECK(feed(d, "exec", "{\"decision\":\"deny\",\"sha256\":\"aa\"}", 200) == 0);
	CHECK(feed(d, "exec", "{\"decision\":\"deny\",\"sha256\":\"bb\"}", 201) == 0);
	CHECK(feed(d, "exec", "{\"decision\":\"deny\",\"sha256\":\"aa\"}", 202) == 1);
	/* three of the same name within 10 s */
	CHECK(feed(d, "syscall", "{\"decision\":\"deny\",\"name\":\"mount\"}", 300) == 0);
	CHECK(feed(d, "syscall", "{\"decision\":\"deny\",\"name\":\"bpf\"}", 301) == 0);
	CHECK(feed(d, "syscall", "{\"decision\":\"deny\",\"name\":\"mount\"}", 302) == 0);
	CHECK(feed(d, "syscall", "{\"decision\":\"deny\",\"name\":\"mount\"}", 303) == 1);
	CHECK(feed(d, "syscall", "{\"decision\":\"deny\",\"name\":\"mount\"}", 304) == 0); /* spent */
	CHECK(feed(d, "syscall", "{\"decision\":\"deny\",\"name\":\"bpf\"}", 320) == 0); /* expired */
	detect_free(d);
}

/* `differ`: a count of different values, a sequence whose steps each differ */
static void test_differ(void)
{
	parse_err("rule a.b high\n  on exec\n  differ x\n", "f.rules:1:1: rule: `differ` is for a count");
	struct detect *d = engine(
		"rule cnt high\n  on net decision=deny host\n  count 2\n  same host\n  differ program\n"
		"rule seq high\n  on file op=x\n  then file op=x\n  differ program\n",
		&quiet, NULL);
	/* no pid: the program of the last exec */
	feed(d, "exec", "{\"pid\":5,\"resolved\":\"/usr/bin/curl\",\"syscall\":\"execve\"}", 0);
	CHECK(feed(d, "net", "{\"decision\":\"deny\",\"host\":\"h\"}", 1) == 0);
	CHECK(feed(d, "net", "{\"decision\":\"deny\",\"host\":\"h\"}", 2) == 0); /* curl again */
	CHECK(feed(d, "net", "{\"decision\":\"deny\",\"host\":\"h\",\"program\":\"/usr/bin/perl\"}", 3) == 1);
	feed(d, "exec", "{\"pid\":6,\"resolved\":\"/usr/bin/python3\",\"syscall\":\"execve\"}", 4);
	CHECK(feed(d, "net", "{\"decision\":\"deny\",\"host\":\"g\"}", 5) == 0); /* another host */
	/* a pid: its program; unknown: nothing to tell apart by */
	CHECK(feed(d, "file", "{\"pid\":5,\"op\":\"x\"}", 6) == 0);
	CHECK(feed(d, "file", "{\"pid\":5,\"op\":\"x\"}", 7) == 0);
	CHECK(feed(d, "file", "{\"pid\":99,\"op\":\"x\"}", 8) == 0);
	CHECK(feed(d, "file", "{\"pid\":6,\"op\":\"x\"}", 9) == 1);
	detect_free(d);
}

/* the derived fields: dotdot, via_symlink, paths, cwd */
static void test_derived(void)
{
	struct detect *d = engine(
		"rule dd low\n  on * dotdot\n"
		"rule vs low\n  on * via_symlink=*/.ssh/* op!=symlink\n"
		"rule ps low\n  on file paths=*/.git/config\n"
		"rule cw low\n  on file cwd=/w/sub\n",
		&quiet, NULL);
	/* from /w/sub: ../x stays in /w; ../../etc leaves it; sh -c text is no path */
	CHECK(feed(d, "exec", "{\"pid\":2,\"cwd\":\"/w/sub\",\"resolved\":\"/bin/cat\",\"argv\":[\"cat\",\"../x\"]}", 0) == 0);
	CHECK(feed(d, "exec", "{\"pid\":2,\"cwd\":\"/w/sub\",\"argv\":[\"cat\",\"../../etc/passwd\"]}", 0) == 1);
	CHECK(feed(d, "exec", "{\"cwd\":\"/w\",\"argv\":[\"cc\",\"-I=../inc\"]}", 0) == 1);
	CHECK(feed(d, "exec", "{\"cwd\":\"/w\",\"argv\":[\"sh\",\"-c\",\"cat ../../x\"]}", 0) == 0);
	CHECK(feed(d, "exec", "{\"cwd\":\"/tmp\",\"argv\":[\"ls\",\"..\"]}", 0) == 0); /* not from /w */
	CHECK(feed(d, "file", "{\"pid\":3,\"op\":\"open\",\"path\":\"/w/a/../../tmp/x\"}", 0) == 1);
	CHECK(feed(d, "file", "{\"pid\":3,\"op\":\"open\",\"path\":\"/w/a/../b\"}", 0) == 0);
	/* a symlink to ~/.ssh, then a path through it */
	CHECK(feed(d, "file", "{\"pid\":3,\"op\":\"symlink\",\"path\":\"/w/k\",\"target\":\"/home/agent/.ssh\"}", 0) == 0);
	CHECK(feed(d, "exec", "{\"cwd\":\"/w\",\"argv\":[\"cat\",\"k/id_rsa\"]}", 0) == 1);
	CHECK(feed(d, "exec", "{\"cwd\":\"/w\",\"argv\":[\"cat\",\"kk/id_rsa\"]}", 0) == 0);
	CHECK(feed(d, "file", "{\"pid\":3,\"op\":\"open\",\"path\":\"/w/./k/config\"}", 0) == 1);
	/* path2; the cwd of the pid's exec */
	CHECK(feed(d, "file", "{\"pid\":3,\"op\":\"rename\",\"path\":\"/w/t\",\"path2\":\"/w/.git/config\"}", 0) == 1);
	CHECK(feed(d, "file", "{\"pid\":2,\"op\":\"open\",\"path\":\"/w/y\"}", 0) == 1);
	detect_free(d);
}

/* the process table grows past its first slots (and, full at 8,192, a new
 * pid takes an old one's slot): each process's cwd still found */
static void test_derived_many(void)
{
	struct detect *d = engine("rule c1 low\n  on file cwd=/w/p1\n"
				  "rule c77 low\n  on file cwd=/w/p77\n"
				  "rule c4999 low\n  on file cwd=/w/p4999\n"
				  "rule c9999 low\n  on file cwd=/w/p9999\n",
				  &quiet, NULL);
	char ev[160];
	for (int pid = 1; pid <= 5000; pid++) {
		snprintf(ev, sizeof ev, "{\"pid\":%d,\"cwd\":\"/w/p%d\",\"resolved\":\"/bin/true\"}", pid, pid);
		feed(d, "exec", ev, 0);
	}
	CHECK(feed(d, "file", "{\"pid\":1,\"op\":\"open\",\"path\":\"/w/y\"}", 0) == 1);
	CHECK(feed(d, "file", "{\"pid\":77,\"op\":\"open\",\"path\":\"/w/y\"}", 0) == 1);
	CHECK(feed(d, "file", "{\"pid\":4999,\"op\":\"open\",\"path\":\"/w/y\"}", 0) == 1);
	CHECK(feed(d, "file", "{\"pid\":5001,\"op\":\"open\",\"path\":\"/w/y\"}", 0) == 0);
	for (int pid = 5001; pid <= 10000; pid++) {
		snprintf(ev, sizeof ev, "{\"pid\":%d,\"cwd\":\"/w/p%d\",\"resolved\":\"/bin/true\"}", pid, pid);
		feed(d, "exec", ev, 0);
	}
	CHECK(feed(d, "file", "{\"pid\":9999,\"op\":\"open\",\"path\":\"/w/y\"}", 0) == 1);
	detect_free(d);
}

static void test_hash_list(void)
{
	char dir[] = "/tmp/test-detect.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *list = xasprintf("%s/l.sha256", dir), *rules = xasprintf("%s/r.rules", dir);
	FILE *f = fopen(list, "w");
	fprintf(f, "# two\n%s  a\n%s\n", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	fclose(f);
	const char *text = "rule h high\n  on exec sha256=hashes:l.sha256\n"
			   "rule n low\n  on exec sha256 sha256!=hashes:l.sha256\n";
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_parse(&rs, rules, text, strlen(text), &e) == 0);
	struct detect *d = detect_new(&rs, NULL, &quiet);
	CHECK(feed(d, "exec", "{\"sha256\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", 0) == 1);
	CHECK(feed(d, "exec", "{\"sha256\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}", 0) == 1);
	CHECK(feed(d, "exec", "{\"sha256\":\"ffff\"}", 0) == 1); /* n only */
	detect_free(d);
	/* relative without a file to be relative to, a missing list */
	parse_err("rule h high\n  on exec sha256=hashes:l.sha256\n", "needs a rules file");
	struct ruleset rs2 = { 0 };
	const char *t2 = "rule h high\n  on exec sha256=hashes:missing\n";
	CHECK(drules_parse(&rs2, rules, t2, strlen(t2), &e) < 0 && strstr(e.msg, "No such file"));
	drules_free(&rs2);
	unlink(list);
	rmdir(dir);
	free(list);
	free(rules);
}

static void test_tree(void)
{
	struct detect *d = engine("rule t high\n  on exec argv=a\n  then exec argv=b\n  scope tree\n"
				  "rule s high\n  on exec argv=a\n  then exec argv=b\n",
				  &quiet, NULL);
	CHECK(feed(d, "exec", "{\"pid\":2,\"ppid\":1,\"argv\":[\"sh\"]}", 0) == 0);
	CHECK(feed(d, "exec", "{\"pid\":10,\"ppid\":2,\"argv\":[\"a\"]}", 1) == 0);
	/* a sibling: the session's rule only */
	CHECK(feed(d, "exec", "{\"pid\":12,\"ppid\":2,\"argv\":[\"b\"]}", 2) == 1);
	CHECK(feed(d, "exec", "{\"pid\":20,\"ppid\":2,\"argv\":[\"a\"]}", 3) == 0);
	CHECK(feed(d, "exec", "{\"pid\":21,\"ppid\":20,\"argv\":[\"x\"]}", 4) == 0);
	/* a grandchild: both */
	CHECK(feed(d, "exec", "{\"pid\":22,\"ppid\":21,\"argv\":[\"b\"]}", 5) == 2);
	/* no pid: not in any tree */
	CHECK(feed(d, "exec", "{\"pid\":30,\"ppid\":2,\"argv\":[\"a\"]}", 6) == 0);
	CHECK(feed(d, "exec", "{\"argv\":[\"b\"]}", 7) == 1);
	detect_free(d);
}

static void test_risk(void)
{
	struct acts a = { 0 };
	struct detect_risk r = { .warn = 10, .freeze = 60, .kill = 100, .half_life_s = 100 };
	struct detect *d = engine("rule h1 high\n  on syscall name=a\n"
				  "rule h2 high\n  on syscall name=b\n"
				  "rule h3 high\n  on syscall name=c\n"
				  "rule now low\n  on syscall name=k\n  action kill\n"
				  "rate canary.* critical\nrate * medium\n",
				  &r, &a);
	feed(d, "syscall", "{\"name\":\"a\"}", 0);
	CHECK(detect_risk_at(d, 0) == 25);
	CHECK(a.n[ACT_WARN] == 0); /* warn is a line on stderr, not the actor */
	feed(d, "syscall", "{\"name\":\"a\"}", 1); /* the same rule within a minute: no more */
	CHECK(detect_risk_at(d, 1) < 25);
	CHECK(detect_alerts(d) == 2);
	CHECK(detect_risk_at(d, 100) > 12.4 && detect_risk_at(d, 100) < 12.6); /* halved */
	feed(d, "syscall", "{\"name\":\"b\"}", 2);
	feed(d, "syscall", "{\"name\":\"c\"}", 3);
	CHECK(a.n[ACT_FREEZE] == 1 && a.n[ACT_KILL] == 0);
	feed(d, "syscall", "{\"name\":\"b\"}", 4); /* still above: acts once */
	CHECK(a.n[ACT_FREEZE] == 1);
	feed(d, "syscall", "{\"name\":\"b\"}", 70); /* a minute later: counts again; the score fell
							   a fifth below 60 meanwhile and is above again */
	CHECK(a.n[ACT_FREEZE] == 2);
	/* just under the line and back: no second act */
	struct acts w = { 0 };
	struct detect_risk rw = { .freeze = 20, .half_life_s = 100 };
	struct detect *dw = engine("rule x medium\n  on syscall name=x\nrule y medium\n  on syscall name=y\n"
				   "rule z low\n  on syscall name=z\n", &rw, &w);
	feed(dw, "syscall", "{\"name\":\"x\"}", 0);
	feed(dw, "syscall", "{\"name\":\"y\"}", 0);
	CHECK(w.n[ACT_FREEZE] == 1);
	feed(dw, "syscall", "{\"name\":\"z\"}", 10); /* 20 decayed to 18.7, + 2 */
	CHECK(w.n[ACT_FREEZE] == 1);
	detect_free(dw);
	/* a critical alert of another check: at once to kill */
	feed(d, "alert", "{\"rule\":\"canary.opened\"}", 71);
	CHECK(a.n[ACT_KILL] == 1);
	/* a user's rate wins over an alert's own severity */
	double before = detect_risk_at(d, 72);
	feed(d, "alert", "{\"rule\":\"other.thing\",\"severity\":\"low\"}", 72);
	CHECK(detect_risk_at(d, 72) - before > 9.9 && detect_risk_at(d, 72) - before < 10.1);
	/* a rule's own action, whatever the score */
	feed(d, "syscall", "{\"name\":\"k\"}", 73);
	CHECK(a.n[ACT_KILL] == 2);
	json_t *st = detect_status(d);
	CHECK(json_array_size(json_object_get(st, "alerts")) == 5);
	json_decref(st);
	detect_free(d);

	/* with only the built-in rates, an alert's own severity comes first */
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_load(&rs, NULL, 0, &e) == 0);
	d = detect_new(&rs, NULL, &quiet);
	feed(d, "alert", "{\"rule\":\"canary.opened\",\"severity\":\"low\"}", 0);
	CHECK(detect_risk_at(d, 0) > 1.9 && detect_risk_at(d, 0) < 2.1);
	feed(d, "alert", "{\"rule\":\"canary.token\"}", 0);
	CHECK(detect_risk_at(d, 0) > 101.9 && detect_risk_at(d, 0) < 102.1);
	detect_free(d);

	/* a freeze that cannot be had: kill */
	struct acts b = { .refuse_freeze = 1 };
	struct detect_risk r2 = { .freeze = 20, .half_life_s = 600 };
	d = engine("rule h high\n  on syscall\n", &r2, &b);
	feed(d, "syscall", "{\"name\":\"x\"}", 0);
	CHECK(b.n[ACT_FREEZE] == 1 && b.n[ACT_KILL] == 1);
	detect_free(d);
}

static void test_builtin_quiet(void)
{
	/* what a build does raises nothing above low */
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_load(&rs, NULL, 0, &e) == 0);
	struct acts a = { 0 };
	struct detect_risk r = { .warn = 10, .freeze = 60, .kill = 100, .half_life_s = 600 };
	struct detect *d = detect_new(&rs, &(struct detect_env){ .workspace = "/w", .home = "/home/agent" }, &r);
	detect_set_actor(d, on_act, &a);
	const char *execs[] = {
		"{\"resolved\":\"/usr/bin/make\",\"argv\":[\"make\",\"-j2\"],\"decision\":\"allow\"}",
		"{\"resolved\":\"/usr/bin/cc\",\"argv\":[\"cc\",\"-c\",\"a.c\"],\"decision\":\"allow\"}",
		"{\"resolved\":\"/usr/bin/env\",\"argv\":[\"/usr/bin/env\",\"node\",\"x.js\"],\"decision\":\"allow\"}",
		"{\"resolved\":\"/usr/bin/git\",\"argv\":[\"git\",\"commit\",\"-m\",\"x\"],\"decision\":\"allow\"}",
		"{\"resolved\":\"/w/a.out\",\"argv\":[\"./a.out\"],\"decision\":\"allow\"}",
	};
	for (int i = 0; i < 50; i++)
		feed(d, "exec", execs[i % 5], i);
	CHECK(detect_alerts(d) == 0);
	CHECK(a.n[ACT_FREEZE] == 0 && a.n[ACT_KILL] == 0);
	detect_free(d);
}

/* `new:dest` (derive.h): a destination as one text, new when not tried
 * before; the built-in burst.net-refusals counts only those: a browser
 * retrying its fixed set of hosts at every start for 30 minutes raises the
 * score once, far from the freeze; five new destinations (ports, address
 * forms) within 10 s still fire it */
static void test_new_dest(void)
{
	struct detect *d = engine("rule nd low\n  on net new:dest\n", &quiet, NULL);
	CHECK(feed(d, "net", "{\"host\":\"h.example\",\"port\":443}", 0) == 1);
	CHECK(feed(d, "net", "{\"host\":\"h.example\",\"port\":443}", 1) == 0);
	CHECK(feed(d, "net", "{\"host\":\"h.example\",\"port\":80}", 2) == 1);
	CHECK(feed(d, "net", "{\"address\":\"2001:db8::1\",\"port\":443}", 3) == 1);
	CHECK(feed(d, "net", "{\"address\":\"2001:db8::1\",\"port\":443}", 4) == 0);
	CHECK(feed(d, "net", "{\"host\":null,\"address\":\"192.0.2.1\",\"port\":53}", 5) == 1);
	CHECK(feed(d, "net", "{\"method\":\"unix\",\"path\":\"/run/x.sock\"}", 6) == 1);
	CHECK(feed(d, "net", "{\"method\":\"unix\",\"path\":\"/run/x.sock\"}", 7) == 0);
	CHECK(feed(d, "net", "{\"decision\":\"deny\"}", 8) == 0); /* no destination */
	detect_free(d);

	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_load(&rs, NULL, 0, &e) == 0);
	struct acts a = { 0 };
	struct detect_risk r = { .warn = 10, .freeze = 60, .kill = 100, .half_life_s = 600 };
	d = detect_new(&rs, &(struct detect_env){ .workspace = "/w", .home = "/home/agent" }, &r);
	detect_set_actor(d, on_act, &a);
	const char *pings[] = {
		"{\"decision\":\"deny\",\"host\":\"clients2.google.com\",\"port\":80}",
		"{\"decision\":\"deny\",\"host\":\"update.googleapis.com\",\"port\":443}",
		"{\"decision\":\"deny\",\"host\":\"update.googleapis.com\",\"port\":80}",
		"{\"decision\":\"deny\",\"host\":\"redirector.gvt1.com\",\"port\":443}",
		"{\"decision\":\"deny\",\"address\":\"2001:4860:4860::8888\",\"port\":443}",
		"{\"decision\":\"deny\",\"address\":\"2001:4860:4860::8888\",\"port\":443}",
	};
	for (int run = 0; run < 60; run++) /* a start every 30 s */
		for (int i = 0; i < 6; i++)
			feed(d, "net", pings[i], run * 30.0 + i);
	CHECK(detect_alerts(d) == 1);
	CHECK(a.n[ACT_FREEZE] == 0 && a.n[ACT_KILL] == 0);
	/* then a probe: five ports of one host, or forms of one address */
	const char *probe[] = {
		"{\"decision\":\"deny\",\"host\":\"c2.example\",\"port\":22}",
		"{\"decision\":\"deny\",\"host\":\"c2.example\",\"port\":443}",
		"{\"decision\":\"deny\",\"host\":\"c2.example\",\"port\":8080}",
		"{\"decision\":\"deny\",\"host\":\"3221225985\",\"port\":443}",
		"{\"decision\":\"deny\",\"address\":\"192.0.2.1\",\"port\":443}",
	};
	unsigned fired = 0;
	for (int i = 0; i < 5; i++)
		fired += feed(d, "net", probe[i], 2000.0 + i);
	CHECK(fired == 1 && detect_alerts(d) == 2);
	detect_free(d);
}

int main(void)
{
	test_errors();
	test_roundtrip();
	test_conditions();
	test_repeated_texts();
	test_texts_by_address();
	test_sequences_and_counts();
	test_differ();
	test_derived();
	test_derived_many();
	test_new_dest();
	test_tree();
	test_hash_list();
	test_risk();
	test_builtin_quiet();
	return check_status_counted("detect");
}
