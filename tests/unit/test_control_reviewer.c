/* test_control_reviewer.c - unit tests of the reviewer's answer
 * (src/control/reviewer_answer.c): the decisions, the reason kept (controls
 * made spaces, cut on a character's boundary), what is refused and how it
 * is said, the reviewer's time limit. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "src/control/reviewer.h"

static int parse(const char *s, struct reviewer_answer *a, struct werr *e)
{
	*e = (struct werr){ 0 };
	return reviewer_parse_answer(s, strlen(s), a, e);
}

static void test_answers(void)
{
	struct reviewer_answer a;
	struct werr e;
	CHECK(parse("{\"decision\":\"allow\",\"reason\":\"fine\"}", &a, &e) == 0);
	CHECK(a.verdict == REVIEW_ALLOW);
	CHECK_STR(a.reason, "fine");
	CHECK(parse("\n  {\"decision\": \"deny\"}\r\n\n", &a, &e) == 0);
	CHECK(a.verdict == REVIEW_DENY);
	CHECK_STR(a.reason, "");
	CHECK(parse("{\"decision\":\"ask\",\"reason\":null,\"other\":[1,{}]}", &a, &e) == 0);
	CHECK(a.verdict == REVIEW_ASK);
	/* an escaped decision is the same word */
	CHECK(parse("{\"decision\":\"\\u0061llow\"}", &a, &e) == 0 && a.verdict == REVIEW_ALLOW);
	/* controls, C1 too, made spaces; UTF-8 kept */
	CHECK(parse("{\"decision\":\"deny\",\"reason\":\"a\\r\\nX-Evil: 1\\u009b2J \\u00e9\"}", &a, &e) == 0);
	CHECK_STR(a.reason, "a  X-Evil: 1 2J \xc3\xa9");
	CHECK_STR(reviewer_verdict_name(REVIEW_ASK), "ask");
}

static void test_long_reason(void)
{
	char buf[4096];
	int n = snprintf(buf, sizeof buf, "{\"decision\":\"deny\",\"reason\":\"x");
	for (int i = 0; i < 300; i++)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "\xc3\xa9");
	snprintf(buf + n, sizeof buf - (size_t)n, "\"}");
	struct reviewer_answer a;
	struct werr e;
	CHECK(parse(buf, &a, &e) == 0);
	/* 1 + 2k bytes within 256: 255, no half character */
	CHECK(strlen(a.reason) == 255);
	CHECK(a.reason[0] == 'x' && (unsigned char)a.reason[253] == 0xc3 && (unsigned char)a.reason[254] == 0xa9);
}

static void test_refusals(void)
{
	static const struct {
		const char *in, *msg;
	} cases[] = {
		{ "", "no answer on its output" },
		{ " \n\t\r\n", "no answer on its output" },
		{ "yes, allow it\n", "its output is not JSON" },
		{ "{\"decision\":\"allow\"} {\"decision\":\"allow\"}", "its output is not JSON" },
		{ "{\"decision\":\"allow\",\"decision\":\"allow\"}", "its output is not JSON" },
		{ "{\"decision\":", "its output is not JSON" },
		{ "[\"allow\"]", "its output is JSON but not an object" },
		{ "{}", "its answer has no \"decision\" string" },
		{ "{\"decision\":true}", "its answer has no \"decision\" string" },
		{ "{\"decision\":\"ALLOW\"}", "its answer's decision 'ALLOW' is none of allow, deny, ask" },
		{ "{\"decision\":\"allow \"}", "its answer's decision 'allow ' is none" },
		{ "{\"decision\":\"\\u00e9\"}", "its answer's decision '?" "?' is none" },
		{ "{\"decision\":\"allow\",\"reason\":7}", "its answer's \"reason\" is not a string" },
		{ "{\"decision\":\"allow\\u0000\"}", "its output is not JSON" },
		{ "{\"decision\":\"allow\",\"reason\":\"\xff\"}", "its output is not JSON" },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct reviewer_answer a = { .verdict = REVIEW_ALLOW };
		struct werr e;
		int r = parse(cases[i].in, &a, &e);
		CHECK(r == -1);
		CHECK(a.verdict == REVIEW_DENY);
		if (strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) != 0) {
			fprintf(stderr, "case %zu: '%s' gave '%s'\n", i, cases[i].in, e.msg);
			CHECK(0);
		}
		for (const char *c = e.msg; *c; c++)
			CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
	}
	/* the size bound, before any parse */
	static char big[REVIEWER_OUTPUT_MAX + 2];
	memset(big, ' ', sizeof big);
	struct reviewer_answer a;
	struct werr e = { 0 };
	CHECK(reviewer_parse_answer(big, sizeof big, &a, &e) == -1);
	CHECK(strstr(e.msg, "more than 64 KiB") != NULL);
}

static void test_limit(void)
{
	CHECK(reviewer_limit_s(60) == 30);
	CHECK(reviewer_limit_s(6) == 3);
	CHECK(reviewer_limit_s(1) == 1);
	CHECK(reviewer_limit_s(3) == 1);
	CHECK(reviewer_limit_s(86400) == REVIEWER_LIMIT_MAX_S);
}

int main(void)
{
	test_answers();
	test_long_reason();
	test_refusals();
	test_limit();
	printf("%d checks\n", checks);
	return check_status();
}
