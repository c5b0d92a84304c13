/* test_net_reqrules.c - unit tests of request paths and request rules
 * (src/net/reqpath.c, src/net/reqrules.c): the normaliser (dot segments,
 * duplicate slashes, the query dropped, encoded slashes, dots and
 * backslashes refused, other escapes decoded once), the glob ('*' in a
 * segment, '**' across), and the verdict (a host narrowed by its allow
 * rules, deny winning, a host only deny rules name, TRACE toward a bound
 * host, a path refused). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/reqpath.h"
#include "src/net/reqrules.h"
#include "check.h"

static const char *norm(const char *s, bool glob)
{
	static char out[REQPATH_MAX];
	const char *why = NULL;
	if (reqpath_normalise(s, strlen(s), glob, out, sizeof out, &why) < 0)
		snprintf(out, sizeof out, "ERR %s", why);
	return out;
}

static void test_normalise(void)
{
	CHECK_STR(norm("/", false), "/");
	CHECK_STR(norm("/repos/x", false), "/repos/x");
	CHECK_STR(norm("/repos/x/", false), "/repos/x/");
	CHECK_STR(norm("//repos///x", false), "/repos/x");
	CHECK_STR(norm("/repos/../admin", false), "/admin");
	CHECK_STR(norm("/repos/./x/.", false), "/repos/x/");
	CHECK_STR(norm("/a/b/..", false), "/a/");
	CHECK_STR(norm("/../../etc", false), "/etc");
	CHECK_STR(norm("/..", false), "/");
	CHECK_STR(norm("/repos/x?a=/../b", false), "/repos/x");
	CHECK_STR(norm("/re%70os/x", false), "/repos/x");
	CHECK_STR(norm("/a%252F", false), "/a%2F"); /* decoded once */
	CHECK_STR(norm("/repos%2F..%2Fadmin", false), "ERR encoded slash (%2F)");
	CHECK_STR(norm("/repos%2f", false), "ERR encoded slash (%2F)");
	CHECK_STR(norm("/repos/%2e%2e/admin", false), "ERR encoded dot (%2E)");
	/* what servers read two ways: a parameter on a dot segment, overlong
	 * UTF-8 for a dot or a slash */
	CHECK_STR(norm("/ok/..;/admin", false),
		  "ERR a dot segment with a parameter (/..;/: a climb to some servers)");
	CHECK_STR(norm("/ok/.;x/admin", false),
		  "ERR a dot segment with a parameter (/..;/: a climb to some servers)");
	CHECK_STR(norm("/ok/%c0%ae%c0%ae/admin", false),
		  "ERR an overlong UTF-8 form (%C0%AE: a dot or a slash to some servers)");
	CHECK_STR(norm("/ok/%e0%80%af", false),
		  "ERR an overlong UTF-8 form (%C0%AE: a dot or a slash to some servers)");
	CHECK_STR(norm("/ok/a;b/..x;y/%c3%a9", false), "/ok/a;b/..x;y/\xc3\xa9");
	CHECK_STR(norm("/a%5Cb", false), "ERR encoded backslash (%5C)");
	CHECK_STR(norm("/a\\b", false), "ERR backslash");
	CHECK_STR(norm("/a%00", false), "ERR control byte");
	CHECK_STR(norm("/a%zz", false), "ERR bad percent-escape");
	CHECK_STR(norm("/a%2", false), "ERR bad percent-escape");
	CHECK_STR(norm("*", false), "ERR does not start with '/'");
	CHECK_STR(norm("", false), "ERR does not start with '/'");
	CHECK_STR(norm("/repos/*", true), "/repos/*");
	CHECK_STR(norm("/repos/x?y", true), "ERR '?' (a query is not matched: write the path only)");
}

static void test_glob(void)
{
	CHECK(reqpath_match("/repos/*", "/repos/x"));
	CHECK(!reqpath_match("/repos/*", "/repos/x/y"));
	CHECK(reqpath_match("/repos/*", "/repos/"));
	CHECK(!reqpath_match("/repos/*", "/admin"));
	CHECK(reqpath_match("/repos/**", "/repos/x/y/z"));
	CHECK(reqpath_match("/v1/messages", "/v1/messages"));
	CHECK(!reqpath_match("/v1/messages", "/v1/messages/x"));
	CHECK(reqpath_match("/*/x/**/end", "/a/x/b/c/end"));
	CHECK(!reqpath_match("/*/x/**/end", "/a/b/x/end"));
	CHECK(reqpath_match("/a*b", "/acccb"));
	CHECK(!reqpath_match("/a*b", "/ac/cb"));
	CHECK(reqpath_match("**", "/anything/at/all"));
}

static void add(struct net_rules *s, enum rules_verdict a, const char *host, const char *m,
		const char *p)
{
	struct net_rule r;
	struct werr e = { 0 };
	const char *why = NULL;
	CHECK(rules_parse_pattern(&r, host, &e) == 0);
	if (m)
		CHECK(reqrules_methods(&r, m, &why) == 0);
	if (p)
		CHECK(reqrules_path(&r, p, &why) == 0);
	CHECK(rules_add_rule(s, a, &r, &e) == 0);
}

static enum rules_verdict decide(const struct net_rules *s, const char *host, const char *m,
				 const char *target, bool bound, int *status)
{
	struct net_host h;
	CHECK(net_host_parse(&h, host, strlen(host), NULL) == 0);
	struct req_verdict v;
	reqrules_decide(s, &h, 443, m, target, strlen(target), bound, &v);
	*status = v.status;
	return v.v;
}

static void test_decide(void)
{
	struct net_rules s = { 0 };
	add(&s, RULES_ALLOW, "api.github.com", "GET", "/repos/*");
	add(&s, RULES_DENY, "api.github.com", "DELETE", NULL);
	add(&s, RULES_ALLOW, "other.example", NULL, NULL);
	add(&s, RULES_DENY, "only-deny.example", "POST", "/admin/**");
	/* the allow request rule lets the connection go */
	CHECK(rules_match(&s, "api.github.com", 443, NULL) == RULES_ALLOW);
	CHECK(rules_match(&s, "only-deny.example", 443, NULL) == RULES_UNKNOWN);
	int st = 0;
	CHECK(decide(&s, "api.github.com", "GET", "/repos/x", false, &st) == RULES_ALLOW);
	CHECK(decide(&s, "api.github.com", "GET", "/repos/x?q=1", false, &st) == RULES_ALLOW);
	CHECK(decide(&s, "api.github.com", "POST", "/repos/x", false, &st) == RULES_DENY && st == 403);
	CHECK(decide(&s, "api.github.com", "DELETE", "/repos/x", false, &st) == RULES_DENY && st == 403);
	CHECK(decide(&s, "api.github.com", "GET", "/repos/../admin", false, &st) == RULES_DENY && st == 403);
	CHECK(decide(&s, "api.github.com", "GET", "/repos%2F..%2Fadmin", false, &st) == RULES_DENY &&
	      st == 400);
	CHECK(decide(&s, "other.example", "DELETE", "/x", false, &st) == RULES_ALLOW);
	CHECK(decide(&s, "other.example", "TRACE", "/x", true, &st) == RULES_DENY && st == 405);
	CHECK(decide(&s, "other.example", "TRACK", "/x", true, &st) == RULES_DENY && st == 405);
	CHECK(decide(&s, "other.example", "TRACE", "/x", false, &st) == RULES_ALLOW);
	CHECK(decide(&s, "only-deny.example", "POST", "/admin/x/y", false, &st) == RULES_DENY);
	CHECK(decide(&s, "only-deny.example", "POST", "/x", false, &st) == RULES_ALLOW);
	struct req_verdict v;
	struct net_host h;
	net_host_parse(&h, "api.github.com", 14, NULL);
	reqrules_decide(&s, &h, 443, "PUT", "/x", 2, false, &v);
	CHECK_STR(v.why, "no rule allows PUT /x on api.github.com:443; its rules allow GET /repos/*");
	reqrules_decide(&s, &h, 443, "DELETE", "/repos/x", 8, false, &v);
	CHECK_STR(v.why, "DELETE /repos/x on api.github.com:443 denied by rule api.github.com DELETE");
	rules_free(&s);

	/* more allow rules than the reason holds: as many as fit, the rest
	 * counted, the reason whole */
	struct net_rules m = { 0 };
	char path[128];
	for (int i = 0; i < 40; i++) {
		snprintf(path, sizeof path, "/a-rather-long-path-for-this-test/number-%02d/*", i);
		add(&m, RULES_ALLOW, "api.github.com", "GET,POST", path);
	}
	reqrules_decide(&m, &h, 443, "PUT", "/x", 2, false, &v);
	CHECK(strncmp(v.why, "no rule allows PUT /x on api.github.com:443; its rules allow GET,POST "
			     "/a-rather-long-path-for-this-test/number-00/*, GET,POST ", 118) == 0);
	CHECK(strlen(v.why) < sizeof v.why - 1);
	const char *tail = strstr(v.why, " (+");
	CHECK(tail && strcmp(tail + strcspn(tail, ")"), ")") == 0 && atoi(tail + 3) > 10);
	rules_free(&m);
}

static void test_methods(void)
{
	struct net_rule r = { 0 };
	const char *why = NULL;
	CHECK(reqrules_methods(&r, "GET,HEAD", &why) == 0);
	CHECK_STR(r.methods, "GET,HEAD");
	CHECK(reqrules_methods(&r, "get", &why) < 0);
	CHECK(reqrules_methods(&r, "GET,,HEAD", &why) < 0);
	CHECK(reqrules_methods(&r, "GET,FOO", &why) < 0);
	CHECK(reqrules_is_method_list("POST,GET"));
	CHECK(!reqrules_is_method_list("PRIVATE"));
	char out[1024];
	long n = reqrules_response(403, "no rule allows PUT /x", false, out, sizeof out);
	CHECK(n > 0 && strstr(out, "Content-Length: 22\r\n") && !strstr(out, "close"));
	n = reqrules_response(405, "x", true, out, sizeof out);
	CHECK(n > 0 && strstr(out, "405 Method Not Allowed") && out[n - 1] == '\n' && out[n - 2] == '\r');
}

int main(void)
{
	test_normalise();
	test_glob();
	test_decide();
	test_methods();
	return check_status();
}
