/* test_sandbox_hostid.c - unit tests of the pure parts of the host identity
 * pool (src/sandbox/hostid.c): the range a root-owned /etc/warden/host-ids
 * sets, refused when it would reach the host's own users, root or more ids
 * than the pool allows; the /etc/subuid ranges a pool uid must avoid; and
 * how long the name service's "no entry" for an id stands. */
#include <stdio.h>
#include <string.h>

#include "src/sandbox/hostid.h"
#include "check.h"

static void test_range(void)
{
	uid_t a = 0, b = 0;
	char why[160];
	CHECK(hostid_parse_range("2080374784-2080440319\n", &a, &b, why, sizeof why) == 0);
	CHECK(a == 2080374784u && b == 2080440319u);
	CHECK(hostid_parse_range(" 100000 - 100009 ", &a, &b, why, sizeof why) == 0);
	CHECK(a == 100000 && b == 100009);
	CHECK(hostid_parse_range("65536-65536", &a, &b, why, sizeof why) == 0);
	/* root and the host's users are never in the pool */
	CHECK(hostid_parse_range("0-100", &a, &b, why, sizeof why) < 0);
	CHECK(strstr(why, "below 65536") != NULL);
	CHECK(hostid_parse_range("1000-70000", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("70000-69999", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("70000-4294967295", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("70000-2147483647", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("100000-2000000", &a, &b, why, sizeof why) < 0);
	CHECK(strstr(why, "more than") != NULL);
	/* not two numbers */
	CHECK(hostid_parse_range("", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("100000", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("100000-100010 junk", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("-100000-100010", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("100000--100010", &a, &b, why, sizeof why) < 0);
	CHECK(hostid_parse_range("99999999999999999999-1", &a, &b, why, sizeof why) < 0);
}

static void test_sub_ranges(void)
{
	const char *sub = "alice:100000:65536\nbob:165536:65536\n# not a line\nbroken\nc:x:y\n";
	CHECK(hostid_in_sub_ranges(sub, 100000));
	CHECK(hostid_in_sub_ranges(sub, 165535));
	CHECK(hostid_in_sub_ranges(sub, 231071));
	CHECK(!hostid_in_sub_ranges(sub, 231072));
	CHECK(!hostid_in_sub_ranges(sub, 99999));
	CHECK(!hostid_in_sub_ranges("", 100000));
	CHECK(!hostid_in_sub_ranges("u:100000:0\n", 100000));
	CHECK(hostid_in_sub_ranges("u:2080374784:10", 2080374790u));
}

/* The name service's "no entry", kept as the lock file's mtime, stands
 * for HOSTID_ASK_EVERY_S seconds, and not once its files changed after
 * it was asked or when the clock says it was asked in the future. */
static void test_answer_stands(void)
{
	typedef struct timespec ts;
	const ts changed = { 1000, 500 }, asked = { 2000, 0 }, later = { 2001, 0 };
	CHECK(hostid_answer_stands(asked, changed, (ts){ 2000, 0 }));
	CHECK(hostid_answer_stands(asked, changed, (ts){ 2000 + HOSTID_ASK_EVERY_S - 1, 999999999 }));
	CHECK(!hostid_answer_stands(asked, changed, (ts){ 2000 + HOSTID_ASK_EVERY_S, 0 }));
	CHECK(!hostid_answer_stands(asked, changed, (ts){ 1999, 999999999 }));
	/* a change after the question, or at the same instant */
	CHECK(!hostid_answer_stands(asked, (ts){ 2000, 1 }, later));
	CHECK(!hostid_answer_stands(asked, asked, later));
	CHECK(hostid_answer_stands(asked, (ts){ 1999, 999999999 }, later));
	/* a lock file never stamped (mtime 0) */
	CHECK(!hostid_answer_stands((ts){ 0 }, (ts){ 0 }, (ts){ 100, 0 }));
}

int main(void)
{
	test_range();
	test_sub_ranges();
	test_answer_stands();
	return check_status_counted("sandbox_hostid");
}
