/* test_net_mcp.c - unit tests of the `mcp` rules and the reading of a
 * JSON-RPC body (src/net/mcp.c, src/policy/parse_mcp.c): the directive's
 * forms and errors; what passes without a rule (initialize, tools/list,
 * notifications, a client's answer) and what does not (another method, a
 * tool no rule names); deny over ask over allow, globs, another host or
 * port untouched; batches, duplicate keys and non-JSON refused; the error
 * answer keeping each id; chunked bodies undone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/mcp.h"
#include "src/policy/policy.h"
#include "check.h"

static int parse(struct policy *p, const char *text, struct werr *e)
{
	memset(p, 0, sizeof *p);
	memset(e, 0, sizeof *e);
	return policy_parse_text(p, "t.profile", NULL, "/home/u", text, strlen(text), e);
}

static void expect_err(const char *text, const char *msg)
{
	struct policy p;
	struct werr e;
	CHECK(parse(&p, text, &e) < 0);
	if (!strstr(e.msg, msg))
		fprintf(stderr, "error for '%s': %s (want %s)\n", text, e.msg, msg);
	CHECK(strstr(e.msg, msg) != NULL);
	policy_free(&p);
}

static enum rules_verdict verdict(const struct policy *p, const char *host, uint16_t port,
				  const char *body, const char **rule)
{
	struct net_host h;
	CHECK(net_host_parse(&h, host, strlen(host), NULL) == 0);
	struct mcp_body b;
	const char *why = NULL;
	if (mcp_body_read(&b, body, strlen(body), &why) < 0) {
		fprintf(stderr, "not read: %s: %s\n", body, why);
		return RULES_UNKNOWN;
	}
	const struct mcp_rule *r = NULL;
	enum rules_verdict v = mcp_decide(&p->mcp, &h, port, &b.msg[0], &r);
	*rule = r ? r->text : "";
	mcp_body_free(&b);
	return v;
}

#define CALL(t) "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"" t "\"}}"

static void test_rules(void)
{
	struct policy p;
	struct werr e;
	CHECK(parse(&p, "mcp mcp.example allow echo,read_*\nmcp mcp.example deny read_secret\n"
			"mcp mcp.example:8443 ask ask_me\nmcp mcp.example method allow resources/read\n"
			"mcp mcp.example method deny tools/list\n", &e) == 0);
	CHECK(p.mcp.n == 5 && p.mcp.nask == 1);
	const char *rule;
	CHECK(verdict(&p, "mcp.example", 443, CALL("echo"), &rule) == RULES_ALLOW);
	CHECK_STR(rule, "mcp mcp.example allow echo,read_*");
	CHECK(verdict(&p, "mcp.example", 443, CALL("read_file"), &rule) == RULES_ALLOW);
	CHECK(verdict(&p, "mcp.example", 443, CALL("read_secret"), &rule) == RULES_DENY);
	CHECK_STR(rule, "mcp mcp.example deny read_secret");
	CHECK(verdict(&p, "mcp.example", 443, CALL("rm"), &rule) == RULES_DENY);
	CHECK_STR(rule, "");
	CHECK(verdict(&p, "mcp.example", 8443, CALL("ask_me"), &rule) == RULES_ASK);
	CHECK(verdict(&p, "mcp.example", 443, CALL("ask_me"), &rule) == RULES_DENY);
	CHECK(verdict(&p, "other.example", 443, CALL("echo"), &rule) == RULES_DENY);
	CHECK(verdict(&p, "mcp.example", 443, "{\"id\":1,\"method\":\"initialize\"}", &rule) == RULES_ALLOW);
	CHECK(verdict(&p, "mcp.example", 443, "{\"method\":\"notifications/initialized\"}", &rule) ==
	      RULES_ALLOW);
	CHECK(verdict(&p, "mcp.example", 443, "{\"id\":1,\"method\":\"tools/list\"}", &rule) == RULES_DENY);
	CHECK(verdict(&p, "mcp.example", 443, "{\"id\":1,\"method\":\"resources/read\"}", &rule) ==
	      RULES_ALLOW);
	CHECK(verdict(&p, "mcp.example", 443, "{\"id\":1,\"method\":\"prompts/get\"}", &rule) == RULES_DENY);
	CHECK(verdict(&p, "mcp.example", 443, "{\"id\":1,\"result\":{}}", &rule) == RULES_ALLOW);
	policy_free(&p);

	expect_err("mcp mcp.example allow", "mcp: expected");
	expect_err("mcp mcp.example maybe echo", "unknown action 'maybe'");
	expect_err("mcp mcp.example method ask x", "unknown action 'ask' (expected allow or deny)");
	expect_err("mcp mcp.example allow a,,b", "an empty name");
	expect_err("mcp *.com allow a", "mcp: bad network pattern");
	expect_err("mcp mcp.example allow a b", "expected allow|deny|ask NAME");
}

static void test_bodies(void)
{
	struct mcp_body b;
	const char *why = NULL;
	static const char batch[] = "[{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}},"
				    "{\"method\":\"notifications/x\"},{\"id\":\"s\",\"method\":\"ping\"}]";
	CHECK(mcp_body_read(&b, batch, sizeof batch - 1, &why) == 0);
	CHECK(b.batch && b.n == 3);
	CHECK_STR(b.msg[0].tool, "x");
	CHECK(b.msg[1].id == NULL);
	char *err = mcp_error_body(&b, "warden: no");
	CHECK_STR(err, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"warden: no\"}},"
		       "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":{\"code\":-32001,\"message\":\"warden: no\"}}]");
	free(err);
	mcp_body_free(&b);

	static const char *const bad[][2] = {
		{ "{\"id\":1,\"method\":", "not JSON" },
		{ "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"name\":\"b\"}}", "not JSON" },
		{ "[]", "an empty batch" },
		{ "{\"id\":1,\"method\":7}", "a JSON-RPC method that is not a string" },
		{ "{\"id\":1,\"method\":\"tools/call\"}", "a tools/call without a tool's name (params.name)" },
		{ "{\"id\":1}", "a JSON-RPC message with no method, result or error" },
		{ "[1]", "a JSON-RPC message is not an object" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		CHECK(mcp_body_read(&b, bad[i][0], strlen(bad[i][0]), &why) < 0);
		CHECK_STR(why, bad[i][1]);
	}
	/* a notification only: no error body (202) */
	CHECK(mcp_body_read(&b, "{\"method\":\"x/y\"}", 16, &why) == 0);
	CHECK(mcp_error_body(&b, "no") == NULL);
	mcp_body_free(&b);
}

static void test_dechunk(void)
{
	static const char in[] = "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: x\r\n\r\n";
	char out[sizeof in];
	CHECK(mcp_dechunk(in, sizeof in - 1, out) == 5);
	CHECK(memcmp(out, "abcde", 5) == 0);
	CHECK(mcp_dechunk("3\r\nab", 5, out) < 0);
	CHECK(mcp_dechunk("zz\r\n", 4, out) < 0);
}

int main(void)
{
	test_rules();
	test_bodies();
	test_dechunk();
	printf("%d checks\n", checks);
	return check_status();
}
