/* test_policy_json.c - unit tests of the compiled policy's JSON form (the
 * shape `warden policy show` prints) and of its SHA-256 digest; secrets are
 * listed by name, hosts and source, never with a value. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/policy/policy.h"
#include "check.h"

static const char profile[] =
	"read-only /opt/data\n"
	"read-write ~/cache\n"
	"protect build/out\n"
	"unmask *.pem\n"
	"env pass MY_*\n"
	"env set FOO=bar baz\n"
	"env set EMPTY=\n"
	"limit memory 1.5G\n";

#define HOME "/home/u" /* "~/" in the profiles above expands against it */

static void load(struct policy *p)
{
	struct werr e;
	memset(p, 0, sizeof *p);
	CHECK(policy_load(p, NULL, HOME, &e) == 0);
	CHECK(policy_parse_text(p, "t.profile", NULL, HOME, profile, strlen(profile), &e) == 0);
}

static const char *str_at(json_t *a, size_t i) { return json_string_value(json_array_get(a, i)); }

static bool array_has(json_t *a, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

static void test_shape(void)
{
	struct policy p;
	load(&p);
	json_t *j = policy_to_json(&p);
	CHECK(json_is_object(j) && json_object_size(j) == 21);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "checkpoint"), "keep")) == 20);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "signal"), "grace")) == 10);
	CHECK(json_is_true(json_object_get(j, "canary")));

	CHECK_STR(json_string_value(json_object_get(j, "audit")), "default");
	json_t *sources = json_object_get(j, "sources");
	CHECK(json_is_array(sources) && json_array_size(sources) == 1);
	CHECK_STR(str_at(sources, 0), "builtin:default");

	json_t *paths = json_object_get(j, "paths");
	CHECK(json_is_array(paths) && json_array_size(paths) == 2);
	json_t *p0 = json_array_get(paths, 0), *p1 = json_array_get(paths, 1);
	CHECK(json_object_size(p0) == 3);
	CHECK_STR(json_string_value(json_object_get(p0, "path")), "/opt/data");
	CHECK_STR(json_string_value(json_object_get(p0, "mode")), "read-only");
	CHECK_STR(json_string_value(json_object_get(p0, "origin")), "t.profile:1");
	CHECK_STR(json_string_value(json_object_get(p1, "path")), "/home/u/cache");
	CHECK_STR(json_string_value(json_object_get(p1, "mode")), "read-write");
	CHECK_STR(json_string_value(json_object_get(p1, "origin")), "t.profile:2");

	json_t *protect = json_object_get(j, "protect");
	CHECK(json_is_array(protect) && json_array_size(protect) == 29);
	CHECK_STR(str_at(protect, 0), ".git/hooks");
	CHECK_STR(str_at(protect, 28), "build/out");

	json_t *mask = json_object_get(j, "mask");
	CHECK(json_is_array(mask) && json_array_size(mask) == 17);
	CHECK(!array_has(mask, "*.pem") && array_has(mask, "*.key"));
	CHECK(array_has(mask, "!.env.example"));

	json_t *env = json_object_get(j, "env");
	CHECK(json_is_object(env) && json_object_size(env) == 2);
	json_t *pass = json_object_get(env, "pass");
	CHECK(json_is_array(pass) && json_array_size(pass) == 9);
	CHECK(array_has(pass, "LC_*") && array_has(pass, "MY_*"));
	json_t *set = json_object_get(env, "set");
	/* the profile's two and the default's eight that quiet tools' checks */
	CHECK(json_is_object(set) && json_object_size(set) == 10);
	CHECK_STR(json_string_value(json_object_get(set, "NPM_CONFIG_UPDATE_NOTIFIER")), "false");
	CHECK_STR(json_string_value(json_object_get(set, "FOO")), "bar baz");
	CHECK_STR(json_string_value(json_object_get(set, "EMPTY")), "");

	/* No net rules in the default: an empty array, not a missing key. */
	json_t *net = json_object_get(j, "net");
	CHECK(json_is_array(net) && json_array_size(net) == 0);

	/* Every limit: its value as a profile writes it and where it was set. */
	json_t *limits = json_object_get(j, "limits");
	CHECK(json_is_object(limits) && json_object_size(limits) == 6);
	static const char *const lim[][3] = {
		{ "pids", "4096", "builtin:default" }, { "tmp", "4G", "builtin:default" },
		{ "home", "2G", "builtin:default" }, { "cpu", "unlimited", "builtin:default" },
		{ "memory", "1536M", "t.profile:8" },
	};
	for (size_t i = 0; i < ARRAY_LEN(lim); i++) {
		json_t *l = json_object_get(limits, lim[i][0]);
		CHECK(json_is_object(l) && json_object_size(l) == 2);
		CHECK_STR(json_string_value(json_object_get(l, "value")), lim[i][1]);
		const char *o = json_string_value(json_object_get(l, "origin"));
		CHECK(o && strncmp(o, lim[i][2], strlen(lim[i][2])) == 0);
	}

	/* Everything is encodable. */
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(s != NULL);
	free(s);
	json_decref(j);
	policy_free(&p);

	/* An empty policy has the full shape too (every limit unlimited, set
	 * nowhere). */
#define UNL "{\"origin\":\"\",\"value\":\"unlimited\"}"
	memset(&p, 0, sizeof p);
	j = policy_to_json(&p);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "{\"approve\":{\"command\":[],\"timeout_s\":0,\"webhook\":null},"
		  "\"audit\":\"default\",\"canary\":true,"
		  "\"checkpoint\":{\"exclude\":[],\"keep\":0,\"keep_days\":0,\"max_size\":0,\"on\":true},"
		  "\"env\":{\"pass\":[],\"set\":{}},"
		  "\"exec\":{\"allow\":[],\"allow_dirs\":[],\"allow_writable\":[],\"ask\":[],\"ask_argv\":[],"
		  "\"default\":\"allow\","
		  "\"deny\":[],\"deny_files\":[],\"hash_limit\":{\"max_size\":0,\"timeout_s\":0.0},"
		  "\"strict\":false},\"freeze\":{\"timeout_s\":0,\"unattended_s\":0},\"limits\":{\"cpu\":" UNL ",\"home\":" UNL ",\"log\":" UNL ",\"memory\":" UNL ",\"pids\":" UNL
		  ",\"tmp\":" UNL "},"
		  "\"mask\":[],\"net\":[],\"net_default\":\"deny\",\"paths\":[],\"protect\":[],"
		  "\"risk\":{\"ask\":0.0,\"freeze\":0.0,\"half_life_s\":0.0,\"kill\":0.0,\"warn\":0.0},\"rules\":[],\"secrets\":[],"
		  "\"signal\":{\"grace\":0},\"sources\":[],\"terminal\":{\"clipboard\":false},"
		  "\"tools\":{\"default\":\"allow\",\"rules\":[]},\"write_ask\":[]}");
	free(s);
	json_decref(j);
}

static void test_net(void)
{
	struct policy p;
	struct werr e;
	load(&p);
	const char *text = "net allow Example.COM:443\n"
			   "net deny *.Evil.example\n"
			   "net allow [2001:DB8::1] private\n";
	CHECK(policy_parse_text(&p, "n.profile", NULL, HOME, text, strlen(text), &e) == 0);
	CHECK(policy_add_net(&p, "registry.test", false, false, "--allow-net", &e) == 0);

	json_t *j = policy_to_json(&p);
	json_t *net = json_object_get(j, "net");
	CHECK(json_is_array(net) && json_array_size(net) == 4);
	static const struct {
		const char *action, *pattern, *origin;
		bool priv;
	} want[] = {
		{ "allow", "example.com:443", "n.profile:1", false },
		{ "deny", "*.evil.example", "n.profile:2", false },
		{ "allow", "2001:db8::1", "n.profile:3", true },
		{ "allow", "registry.test", "--allow-net", false },
	};
	for (size_t i = 0; i < ARRAY_LEN(want); i++) {
		json_t *r = json_array_get(net, i);
		CHECK(json_is_object(r) && json_object_size(r) == 4);
		CHECK_STR(json_string_value(json_object_get(r, "action")), want[i].action);
		CHECK_STR(json_string_value(json_object_get(r, "pattern")), want[i].pattern);
		CHECK_STR(json_string_value(json_object_get(r, "origin")), want[i].origin);
		CHECK(json_is_boolean(json_object_get(r, "private")));
		CHECK(json_is_true(json_object_get(r, "private")) == want[i].priv);
	}

	/* The exact canonical form of one rule. */
	char *s = json_dumps(json_array_get(net, 1), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "{\"action\":\"deny\",\"origin\":\"n.profile:2\",\"pattern\":\"*.evil.example\",\"private\":false}");
	free(s);
	json_decref(j);
	policy_free(&p);

	/* A policy built by hand with a non-UTF-8 origin still encodes. */
	struct policy_net_rule r = { .rule = { .text = "x.test" }, .origin = (char *)"bad\xff" };
	struct policy h = { .net = &r, .nnet = 1 };
	j = policy_to_json(&h);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(s && strstr(s, "\"net\":[{\"action\":\"allow\",\"origin\":\"bad\\\\xff\",\"pattern\":\"x.test\",\"private\":false}]"));
	free(s);
	json_decref(j);
}

static void test_digest(void)
{
	struct policy a, b;
	char da[65], db[65], dc[65];
	load(&a);
	load(&b);
	policy_digest(&a, da);
	policy_digest(&b, db);
	CHECK(strlen(da) == 64 && strspn(da, "0123456789abcdef") == 64);
	CHECK_STR(da, db);
	policy_digest(&a, dc);
	CHECK_STR(da, dc); /* stable across calls */

	/* It is the SHA-256 of the compact, key-sorted JSON. */
	json_t *j = policy_to_json(&a);
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	CHECK(s && EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL) && n == 32);
	char hex[65];
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	CHECK_STR(da, hex);
	free(s);
	json_decref(j);

	/* Any change changes it: a mode, an env value, a removed mask. */
	struct werr e;
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "read-write /opt/data\n", 21, &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(da, db) != 0);
	policy_free(&b);
	load(&b);
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "env set FOO=bar  baz\n", 21, &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(da, db) != 0);
	policy_free(&b);
	load(&b);
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "unmask .netrc\n", 14, &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(da, db) != 0);
	policy_free(&b);
	load(&b);
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "limit pids 4095\n", 16, &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(da, db) != 0);
	policy_free(&b);
	load(&b);
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "net sni required\n", 17, &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(da, db) != 0);
	policy_free(&b);
	load(&b);
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "net sni optional\n", 17, &e) == 0);
	policy_digest(&b, db);
	CHECK_STR(da, db); /* the default: every other digest stays */
	policy_free(&b);

	/* A network rule changes it, and so does each of its fields. */
	static const char *const nets[] = { "net allow example.com\n", "net deny example.com\n",
					    "net allow example.com private\n", "net allow example.com:443\n" };
	char seen[ARRAY_LEN(nets)][65];
	for (size_t i = 0; i < ARRAY_LEN(nets); i++) {
		load(&b);
		CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, nets[i], strlen(nets[i]), &e) == 0);
		CHECK(b.nnet == 1);
		policy_digest(&b, seen[i]);
		CHECK(strcmp(da, seen[i]) != 0);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(seen[k], seen[i]) != 0);
		policy_free(&b);
	}
	/* The origin is part of it; the spelling of the pattern is not. */
	load(&b);
	CHECK(policy_parse_text(&b, "o.profile", NULL, HOME, nets[0], strlen(nets[0]), &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(db, seen[0]) != 0);
	policy_free(&b);
	load(&b);
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "net allow EXAMPLE.Com\n", 22, &e) == 0);
	policy_digest(&b, db);
	CHECK_STR(db, seen[0]);
	/* A repeated rule is not added, so the digest stays. */
	CHECK(policy_parse_text(&b, "t.profile", NULL, HOME, "net allow example.com\n", 22, &e) == 0);
	CHECK(policy_add_net(&b, "example.COM", false, false, "t.profile:1", &e) == 0);
	policy_digest(&b, db);
	CHECK_STR(db, seen[0]);
	/* policy_add_net changes it like a directive. */
	CHECK(policy_add_net(&b, "other.test", false, false, "--allow-net", &e) == 0);
	policy_digest(&b, db);
	CHECK(strcmp(db, seen[0]) != 0);
	policy_free(&b);

	/* The default profile's digest does not depend on the home directory. */
	struct policy d1, d2;
	CHECK(policy_load(&d1, NULL, "/home/one", &e) == 0);
	CHECK(policy_load(&d2, NULL, "/home/two", &e) == 0);
	policy_digest(&d1, da);
	policy_digest(&d2, db);
	CHECK_STR(da, db);
	policy_free(&d1);
	policy_free(&d2);
	policy_free(&a);
}

static void test_secrets(void)
{
	struct policy p;
	struct werr e;
	load(&p);
	const char *text = "secret GH_TOKEN host GitHub.com api.github.com:443 command gh auth token\n"
			   "secret KEY_FILE host *.corp.example file ~/keys/k\n";
	CHECK(policy_parse_text(&p, "s.profile", NULL, HOME, text, strlen(text), &e) == 0);
	setenv("ENV_KEY", "sk-should-never-appear-0123456789", 1);
	CHECK(policy_add_secret(&p, "ENV_KEY@[::1]:8443", NULL, &e) == 0);

	json_t *j = policy_to_json(&p);
	json_t *sec = json_object_get(j, "secrets");
	CHECK(json_is_array(sec) && json_array_size(sec) == 3);
	char *s = json_dumps(sec, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(s, "[{\"command\":\"gh\",\"hosts\":[\"github.com\",\"api.github.com:443\"],"
		     "\"name\":\"GH_TOKEN\",\"origin\":\"s.profile:1\",\"source\":\"command\"},"
		     "{\"file\":\"/home/u/keys/k\",\"hosts\":[\"*.corp.example\"],\"name\":\"KEY_FILE\","
		     "\"origin\":\"s.profile:2\",\"source\":\"file\"},"
		     "{\"hosts\":[\"[::1]:8443\"],\"name\":\"ENV_KEY\",\"origin\":\"--secret\",\"source\":\"env\"}]");
	free(s);
	/* never a value, never a command's arguments */
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(s && !strstr(s, "should-never") && !strstr(s, "auth token"));
	free(s);
	json_decref(j);

	/* The digest covers them: a host, the source, a rebinding. */
	char d0[65], d1[65], d2[65], d3[65];
	policy_digest(&p, d0);
	CHECK(policy_add_secret(&p, "ENV_KEY@[::1]:8444", NULL, &e) == 0);
	policy_digest(&p, d1);
	CHECK(strcmp(d0, d1) != 0);
	text = "secret ENV_KEY host [::1]:8444 file /k\n";
	CHECK(policy_parse_text(&p, "s.profile", NULL, HOME, text, strlen(text), &e) == 0);
	policy_digest(&p, d2);
	CHECK(strcmp(d1, d2) != 0);
	text = "secret ENV_KEY host [::1]:8444 file /k\n";
	CHECK(policy_parse_text(&p, "t.profile", NULL, HOME, text, strlen(text), &e) == 0);
	policy_digest(&p, d3);
	CHECK(strcmp(d2, d3) != 0); /* the origin */
	policy_free(&p);
	unsetenv("ENV_KEY");
}

int main(void)
{
	test_shape();
	test_secrets();
	test_digest();
	test_net();
	return check_status();
}
