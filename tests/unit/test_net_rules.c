/* test_net_rules.c - unit tests of destination hosts and patterns: host
 * canonicalisation and its refusals, every pattern form and parse error
 * (exact messages), and rules_match (deny over allow, wildcards, ports, IP
 * forms, the most specific rule reported), and rules scoped to a program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/rules.h"
#include "check.h"

/* ---- hosts ---- */

static void host_ok_n(int line, const char *in, size_t len, enum net_host_kind kind,
		      const char *canon)
{
	struct net_host h;
	const char *why = NULL;
	checks++;
	if (net_host_parse(&h, in, len, &why) < 0) {
		fprintf(stderr, "%s:%d: host \"%s\" refused: %s\n", __FILE__, line, in, why);
		failures++;
		return;
	}
	if (h.kind != kind || strcmp(h.name, canon) != 0) {
		fprintf(stderr, "%s:%d: host \"%s\": got kind %d \"%s\", expected kind %d \"%s\"\n",
			__FILE__, line, in, h.kind, h.name, kind, canon);
		failures++;
	}
}
#define HOST_OK(in, kind, canon) host_ok_n(__LINE__, (in), strlen(in), (kind), (canon))

static void host_bad_n(int line, const char *in, size_t len, const char *reason)
{
	struct net_host h;
	const char *why = NULL;
	checks++;
	if (net_host_parse(&h, in, len, &why) == 0) {
		fprintf(stderr, "%s:%d: host \"%s\" accepted as \"%s\", expected: %s\n", __FILE__,
			line, in, h.name, reason);
		failures++;
	} else if (!why || strcmp(why, reason) != 0) {
		fprintf(stderr, "%s:%d: host \"%s\": reason \"%s\", expected \"%s\"\n", __FILE__,
			line, in, why ? why : "(null)", reason);
		failures++;
	}
}
#define HOST_BAD(in, reason) host_bad_n(__LINE__, (in), strlen(in), (reason))

static void test_hosts(void)
{
	HOST_OK("example.com", NET_HOST_NAME, "example.com");
	HOST_OK("Example.COM", NET_HOST_NAME, "example.com");
	HOST_OK("example.com.", NET_HOST_NAME, "example.com");
	HOST_OK("localhost", NET_HOST_NAME, "localhost");
	HOST_OK("_dmarc.x-y.example", NET_HOST_NAME, "_dmarc.x-y.example");
	HOST_OK("a1.b2.c3", NET_HOST_NAME, "a1.b2.c3");
	HOST_OK("1.2.3.4", NET_HOST_IPV4, "1.2.3.4");
	HOST_OK("1.2.3.4.", NET_HOST_IPV4, "1.2.3.4");
	HOST_OK("0.0.0.0", NET_HOST_IPV4, "0.0.0.0");
	HOST_OK("255.255.255.255", NET_HOST_IPV4, "255.255.255.255");
	HOST_OK("123.example", NET_HOST_NAME, "123.example");
	HOST_OK("[::1]", NET_HOST_IPV6, "::1");
	HOST_OK("[2001:DB8:0:0:0:0:0:1]", NET_HOST_IPV6, "2001:db8::1");
	HOST_OK("[::ffff:10.0.0.1]", NET_HOST_IPV6, "::ffff:10.0.0.1");

	/* exactly the limits */
	char label63[64], label64[65], name253[254], name254[255];
	memset(label63, 'a', 63);
	label63[63] = '\0';
	memset(label64, 'a', 64);
	label64[64] = '\0';
	HOST_OK(label63, NET_HOST_NAME, label63);
	HOST_BAD(label64, "label longer than 63 bytes");
	/* 63+1+63+1+63+1+61 = 253 */
	snprintf(name253, sizeof name253, "%s.%s.%s.%.61s", label63, label63, label63, label63);
	CHECK(strlen(name253) == 253);
	HOST_OK(name253, NET_HOST_NAME, name253);
	snprintf(name254, sizeof name254, "%s.", name253);
	HOST_OK(name254, NET_HOST_NAME, name253); /* trailing dot does not count */
	snprintf(name254, sizeof name254, "%s.%s.%s.%.62s", label63, label63, label63, label63);
	CHECK(strlen(name254) == 254);
	HOST_BAD(name254, "host longer than 253 bytes");

	HOST_BAD("", "empty host");
	HOST_BAD(".", "empty label in host");
	HOST_BAD("a..b", "empty label in host");
	HOST_BAD(".example.com", "empty label in host");
	HOST_BAD("example.com..", "empty label in host");
	HOST_BAD("-a.example", "label starts or ends with '-'");
	HOST_BAD("a-.example", "label starts or ends with '-'");
	HOST_BAD("ex ample.com", "space in host");
	HOST_BAD("example.com:80", "bad character in host");
	HOST_BAD("user@example.com", "bad character in host");
	HOST_BAD("*.example.com", "bad character in host");
	HOST_BAD("b\xc3\xbc"
		 "cher.example",
		 "non-ASCII host");
	HOST_BAD("xn--bcher-kva.example\x80", "non-ASCII host");
	HOST_BAD("%65xample.com", "percent-encoding in host");
	/* numeric forms other parsers turn into addresses */
	HOST_BAD("127.1", "bad IPv4 address");
	HOST_BAD("2130706433", "bad IPv4 address");
	HOST_BAD("0x7f.0.0.1", "bad IPv4 address");
	HOST_BAD("0x7f000001", "bad IPv4 address");
	HOST_BAD("127.0.0.0x1", "bad IPv4 address");
	HOST_BAD("010.0.0.1", "bad IPv4 address");
	HOST_BAD("1.2.3.04", "bad IPv4 address");
	HOST_BAD("256.1.1.1", "bad IPv4 address");
	HOST_BAD("1.2.3.4.5", "bad IPv4 address");
	HOST_BAD("example.0x10", "bad IPv4 address");
	HOST_BAD("example.123", "bad IPv4 address");
	HOST_BAD("1.2.3.", "bad IPv4 address");
	HOST_BAD("[::1", "bad IPv6 address");
	HOST_BAD("[]", "bad IPv6 address");
	HOST_BAD("[1.2.3.4]", "bad IPv6 address");
	HOST_BAD("[fe80::1%eth0]", "IPv6 zone not allowed");
	HOST_BAD("[fe80::1%25eth0]", "IPv6 zone not allowed");
	HOST_BAD("[::1]x", "bad IPv6 address");
	HOST_BAD("[1:2:3:4:5:6:7:8:9]", "bad IPv6 address");
	host_bad_n(__LINE__, "a\0b", 3, "control byte in host");

	/* from binary addresses */
	struct net_host h;
	struct addr_ip ip;
	addr_ip_from_v4(&ip, (const uint8_t[]){ 192, 0, 2, 7 });
	net_host_from_ip(&h, &ip, false);
	CHECK(h.kind == NET_HOST_IPV4);
	CHECK_STR(h.name, "192.0.2.7");
	net_host_from_ip(&h, &ip, true);
	CHECK(h.kind == NET_HOST_IPV6);
	CHECK_STR(h.name, "::ffff:192.0.2.7");
}

/* ---- patterns ---- */

static void pat_ok(int line, const char *pattern, enum net_rule_kind kind, const char *host,
		   unsigned port, const char *text)
{
	struct net_rule r;
	struct werr e = { 0 };
	checks++;
	if (rules_parse_pattern(&r, pattern, &e) < 0) {
		fprintf(stderr, "%s:%d: pattern \"%s\" refused: %s\n", __FILE__, line, pattern, e.msg);
		failures++;
		return;
	}
	if (r.kind != kind || strcmp(r.host, host) != 0 || r.port != port ||
	    strcmp(r.text, text) != 0 || r.allow_private) {
		fprintf(stderr,
			"%s:%d: pattern \"%s\": got kind %d host \"%s\" port %u text \"%s\"\n"
			"  expected kind %d host \"%s\" port %u text \"%s\"\n",
			__FILE__, line, pattern, r.kind, r.host, r.port, r.text, kind, host, port, text);
		failures++;
	}
	/* the canonical text parses to the same rule */
	struct net_rule r2;
	checks++;
	if (rules_parse_pattern(&r2, r.text, &e) < 0 || strcmp(r2.text, r.text) != 0 ||
	    r2.kind != r.kind || r2.port != r.port || !addr_ip_equal(&r2.ip, &r.ip)) {
		fprintf(stderr, "%s:%d: canonical text \"%s\" does not round-trip\n", __FILE__, line,
			r.text);
		failures++;
	}
}
#define PAT_OK(p, kind, host, port, text) pat_ok(__LINE__, (p), (kind), (host), (port), (text))

static void pat_bad(int line, const char *pattern, const char *msg)
{
	struct net_rule r;
	struct werr e = { 0 };
	checks++;
	if (rules_parse_pattern(&r, pattern, &e) == 0) {
		fprintf(stderr, "%s:%d: pattern \"%s\" accepted, expected: %s\n", __FILE__, line,
			pattern, msg);
		failures++;
	} else if (strcmp(e.msg, msg) != 0 || e.errnum != 0) {
		fprintf(stderr, "%s:%d: wrong error\n  got:      %s\n  expected: %s\n", __FILE__, line,
			e.msg, msg);
		failures++;
	}
}
#define PAT_BAD(p, msg) pat_bad(__LINE__, (p), (msg))

static void test_patterns(void)
{
	PAT_OK("example.com", NET_RULE_HOST, "example.com", 0, "example.com");
	PAT_OK("GitHub.COM", NET_RULE_HOST, "github.com", 0, "github.com");
	PAT_OK("example.com:443", NET_RULE_HOST, "example.com", 443, "example.com:443");
	PAT_OK("example.com:00443", NET_RULE_HOST, "example.com", 443, "example.com:443");
	PAT_OK("localhost", NET_RULE_HOST, "localhost", 0, "localhost");
	PAT_OK("*.example.com", NET_RULE_WILDCARD, "example.com", 0, "*.example.com");
	PAT_OK("*.Example.com:8080", NET_RULE_WILDCARD, "example.com", 8080, "*.example.com:8080");
	PAT_OK("*.co.uk", NET_RULE_WILDCARD, "co.uk", 0, "*.co.uk");
	PAT_OK("192.0.2.1", NET_RULE_IP, "192.0.2.1", 0, "192.0.2.1");
	PAT_OK("192.0.2.1:65535", NET_RULE_IP, "192.0.2.1", 65535, "192.0.2.1:65535");
	PAT_OK("2001:db8::1", NET_RULE_IP, "2001:db8::1", 0, "2001:db8::1");
	PAT_OK("2001:DB8:0::1", NET_RULE_IP, "2001:db8::1", 0, "2001:db8::1");
	PAT_OK("[2001:db8::1]", NET_RULE_IP, "2001:db8::1", 0, "2001:db8::1");
	PAT_OK("[2001:db8::1]:443", NET_RULE_IP, "2001:db8::1", 443, "[2001:db8::1]:443");
	PAT_OK("::1", NET_RULE_IP, "::1", 0, "::1");
	PAT_OK("::ffff:10.1.2.3", NET_RULE_IP, "::ffff:10.1.2.3", 0, "::ffff:10.1.2.3");
	PAT_OK("a:1", NET_RULE_HOST, "a", 1, "a:1");

	PAT_BAD("", "bad network pattern \"\": empty pattern");
	PAT_BAD("*", "bad network pattern \"*\": '*' would match every host");
	PAT_BAD("*:443", "bad network pattern \"*:443\": '*' would match every host");
	PAT_BAD("*.com", "bad network pattern \"*.com\": a wildcard needs at least two labels after '*.'");
	/* the unspecified address reaches nothing: a rule naming it is a mistake */
	PAT_BAD("0.0.0.0", "bad network pattern \"0.0.0.0\": the unspecified address is no destination "
		"(inside, the sandbox's own loopback answers for it; a port of the host's loopback is "
		"127.0.0.1:PORT)");
	PAT_BAD("[::]:80", "bad network pattern \"[::]:80\": the unspecified address is no destination "
		"(inside, the sandbox's own loopback answers for it; a port of the host's loopback is "
		"127.0.0.1:PORT)");
	/* the rest of 0.0.0.0/8 ("this network"), ::2 being ::0.0.0.2: said as such */
	PAT_BAD("0.0.0.5:80", "bad network pattern \"0.0.0.5:80\": an address of 0.0.0.0/8 "
		"(\"this network\") is no destination (a port of the host's loopback is 127.0.0.1:PORT)");
	PAT_BAD("[::2]:9000", "bad network pattern \"[::2]:9000\": an address of 0.0.0.0/8 "
		"(\"this network\") is no destination (a port of the host's loopback is 127.0.0.1:PORT)");
	PAT_BAD("::ffff:0.0.0.0", "bad network pattern \"::ffff:0.0.0.0\": the unspecified address is "
		"no destination (inside, the sandbox's own loopback answers for it; a port of the "
		"host's loopback is 127.0.0.1:PORT)");
	PAT_BAD("*.com.", "bad network pattern \"*.com.\": trailing dot (write the name without it: a host's is dropped)");
	PAT_BAD("*.", "bad network pattern \"*.\": empty host");
	PAT_BAD("*.*.example.com", "bad network pattern \"*.*.example.com\": '*' only as the whole first label");
	PAT_BAD("*example.com", "bad network pattern \"*example.com\": '*' only as the whole first label");
	PAT_BAD("a.*.example.com", "bad network pattern \"a.*.example.com\": '*' only as the whole first label");
	PAT_BAD("**.example.com", "bad network pattern \"**.example.com\": '*' only as the whole first label");
	PAT_BAD("*.1.2.3.4", "bad network pattern \"*.1.2.3.4\": a wildcard over an IP address");
	PAT_BAD("*.2.3.4", "bad network pattern \"*.2.3.4\": bad IPv4 address");
	PAT_BAD("example..com", "bad network pattern \"example..com\": empty label in host");
	PAT_BAD(".example.com", "bad network pattern \".example.com\": empty label in host");
	PAT_BAD("example.com.", "bad network pattern \"example.com.\": trailing dot (write the name without it: a host's is dropped)");
	PAT_BAD("-x.example.com", "bad network pattern \"-x.example.com\": label starts or ends with '-'");
	PAT_BAD("example.com:0", "bad network pattern \"example.com:0\": bad port (1-65535)");
	PAT_BAD("example.com:65536", "bad network pattern \"example.com:65536\": bad port (1-65535)");
	PAT_BAD("example.com:", "bad network pattern \"example.com:\": bad port (1-65535)");
	PAT_BAD("example.com:http", "bad network pattern \"example.com:http\": bad port (1-65535)");
	PAT_BAD("example.com:+80", "bad network pattern \"example.com:+80\": bad port (1-65535)");
	PAT_BAD("example.com:100000", "bad network pattern \"example.com:100000\": bad port (1-65535)");
	PAT_BAD(":443", "bad network pattern \":443\": empty host");
	PAT_BAD("[2001:db8::1]443", "bad network pattern \"[2001:db8::1]443\": junk after ']'");
	PAT_BAD("[2001:db8::1", "bad network pattern \"[2001:db8::1\": missing ']'");
	PAT_BAD("[2001:db8::1]:0", "bad network pattern \"[2001:db8::1]:0\": bad port (1-65535)");
	PAT_BAD("[example.com]", "bad network pattern \"[example.com]\": bad IPv6 address");
	PAT_BAD("2001:db8::1:443x", "bad network pattern \"2001:db8::1:443x\": bad IPv6 address");
	PAT_BAD("fe80::1%eth0", "bad network pattern \"fe80::1%eth0\": IPv6 zone not allowed");
	PAT_BAD("10.0.0.0/8", "bad network pattern \"10.0.0.0/8\": '/' in pattern (ranges and paths are not patterns)");
	PAT_BAD("https://example.com", "bad network pattern \"https://example.com\": a pattern is a host, not a URL");
	PAT_BAD("exa mple.com", "bad network pattern \"exa mple.com\": space or control character");
	PAT_BAD("ex\tample.com", "bad network pattern \"ex?ample.com\": space or control character");
	PAT_BAD("b\xc3\xbc"
		"cher.example",
		"bad network pattern \"b??cher.example\": non-ASCII character"
		" (write an internationalized name in its xn-- form, as the DNS has it)");
	PAT_BAD("ex\"ample", "bad network pattern \"ex?ample\": bad character in host");
	PAT_BAD("user@example.com", "bad network pattern \"user@example.com\": bad character in host");
	PAT_BAD("127.1", "bad network pattern \"127.1\": bad IPv4 address");
	PAT_BAD("01.2.3.4", "bad network pattern \"01.2.3.4\": bad IPv4 address");

	char longlabel[80];
	memset(longlabel, 'a', 64);
	snprintf(longlabel + 64, sizeof longlabel - 64, ".com");
	char msg[256];
	snprintf(msg, sizeof msg, "bad network pattern \"%s\": label longer than 63 bytes", longlabel);
	PAT_BAD(longlabel, msg);

	/* 254-byte name: shown cut to 80 bytes with "..." */
	char name[300];
	for (int i = 0; i < 4; i++)
		memset(name + i * 64, 'b', 63), name[i * 64 + 63] = '.';
	name[254] = '\0'; /* 4*64 = 256: cut at 254, ending in "bb" */
	CHECK(strlen(name) == 254);
	char shown[81];
	memcpy(shown, name, 77);
	memcpy(shown + 77, "...", 4);
	snprintf(msg, sizeof msg, "bad network pattern \"%s\": host longer than 253 bytes", shown);
	PAT_BAD(name, msg);

	char huge[600];
	memset(huge, 'a', sizeof huge - 1);
	huge[sizeof huge - 1] = '\0';
	memcpy(shown, huge, 77);
	memcpy(shown + 77, "...", 4);
	snprintf(msg, sizeof msg, "bad network pattern \"%s\": pattern too long", shown);
	PAT_BAD(huge, msg);

	struct werr e = { 0 };
	struct net_rule r;
	CHECK(rules_parse_pattern(&r, NULL, &e) == -1);
	CHECK_STR(e.msg, "bad network pattern \"\": empty pattern");
}

/* ---- matching ---- */

static void add(struct net_rules *s, enum rules_verdict which, const char *p, unsigned flags)
{
	struct werr e = { 0 };
	if (rules_add(s, which, p, flags, &e) < 0) {
		fprintf(stderr, "rules_add(%s): %s\n", p, e.msg);
		exit(2);
	}
}

static void match(int line, const struct net_rules *s, const char *host, unsigned port,
		  enum rules_verdict want, const char *want_rule)
{
	const struct net_rule *r = (const struct net_rule *)1;
	enum rules_verdict v = rules_match(s, host, (uint16_t)port, &r);
	checks++;
	const char *got_rule = r ? r->text : NULL;
	bool rule_ok = want_rule ? got_rule && strcmp(got_rule, want_rule) == 0 : got_rule == NULL;
	if (v != want || !rule_ok) {
		fprintf(stderr, "%s:%d: match(%s, %u): got %d rule %s, expected %d rule %s\n",
			__FILE__, line, host, port, v, got_rule ? got_rule : "(none)", want,
			want_rule ? want_rule : "(none)");
		failures++;
	}
}
#define MATCH(s, host, port, want, rule) match(__LINE__, (s), (host), (port), (want), (rule))

static void test_match(void)
{
	struct net_rules s = { 0 };

	/* empty allow list: nothing is allowed */
	MATCH(&s, "example.com", 443, RULES_UNKNOWN, NULL);
	MATCH(&s, "1.2.3.4", 80, RULES_UNKNOWN, NULL);

	add(&s, RULES_ALLOW, "example.com", 0);
	add(&s, RULES_ALLOW, "*.github.com", 0);
	add(&s, RULES_ALLOW, "api.github.com:443", 0);
	add(&s, RULES_ALLOW, "*.githubusercontent.com:443", 0);
	add(&s, RULES_ALLOW, "192.0.2.10", 0);
	add(&s, RULES_ALLOW, "[2001:db8::10]:8443", 0);
	add(&s, RULES_ALLOW, "*.corp.example", RULE_ALLOW_PRIVATE);
	add(&s, RULES_DENY, "evil.github.com", 0);
	add(&s, RULES_DENY, "*.gist.github.com:22", 0);
	add(&s, RULES_DENY, "192.0.2.66", 0);

	MATCH(&s, "example.com", 80, RULES_ALLOW, "example.com");
	MATCH(&s, "EXAMPLE.com.", 443, RULES_ALLOW, "example.com");
	MATCH(&s, "www.example.com", 443, RULES_UNKNOWN, NULL);   /* exact means exact */
	MATCH(&s, "badexample.com", 443, RULES_UNKNOWN, NULL);
	MATCH(&s, "example.com.evil.io", 443, RULES_UNKNOWN, NULL);

	/* wildcard: subdomains, never the bare suffix */
	MATCH(&s, "github.com", 443, RULES_UNKNOWN, NULL);
	MATCH(&s, "codeload.github.com", 443, RULES_ALLOW, "*.github.com");
	MATCH(&s, "a.b.c.github.com", 22, RULES_ALLOW, "*.github.com");
	MATCH(&s, "xgithub.com", 443, RULES_UNKNOWN, NULL);
	MATCH(&s, ".github.com", 443, RULES_DENY, NULL); /* not a host at all */
	MATCH(&s, "github.com.evil.io", 443, RULES_UNKNOWN, NULL);

	/* the most specific allow rule is reported */
	MATCH(&s, "api.github.com", 443, RULES_ALLOW, "api.github.com:443");
	MATCH(&s, "api.github.com", 80, RULES_ALLOW, "*.github.com");

	/* port-restricted rules */
	MATCH(&s, "raw.githubusercontent.com", 443, RULES_ALLOW, "*.githubusercontent.com:443");
	MATCH(&s, "raw.githubusercontent.com", 80, RULES_UNKNOWN, NULL);

	/* deny wins, whatever the order and specificity */
	MATCH(&s, "evil.github.com", 443, RULES_DENY, "evil.github.com");
	MATCH(&s, "Evil.GitHub.com.", 443, RULES_DENY, "evil.github.com");
	MATCH(&s, "x.evil.github.com", 443, RULES_ALLOW, "*.github.com");
	MATCH(&s, "a.gist.github.com", 22, RULES_DENY, "*.gist.github.com:22");
	MATCH(&s, "a.gist.github.com", 443, RULES_ALLOW, "*.github.com");

	/* IP literals: by value, in every spelling */
	MATCH(&s, "192.0.2.10", 443, RULES_ALLOW, "192.0.2.10");
	MATCH(&s, "::ffff:192.0.2.10", 443, RULES_ALLOW, "192.0.2.10");
	MATCH(&s, "[::ffff:192.0.2.10]", 443, RULES_ALLOW, "192.0.2.10");
	MATCH(&s, "[::ffff:c000:20a]", 443, RULES_ALLOW, "192.0.2.10");
	MATCH(&s, "192.0.2.11", 443, RULES_UNKNOWN, NULL);
	MATCH(&s, "192.0.2.66", 443, RULES_DENY, "192.0.2.66");
	MATCH(&s, "::ffff:192.0.2.66", 443, RULES_DENY, "192.0.2.66");
	MATCH(&s, "2001:db8::10", 8443, RULES_ALLOW, "[2001:db8::10]:8443");
	MATCH(&s, "[2001:DB8:0:0::10]", 8443, RULES_ALLOW, "[2001:db8::10]:8443");
	MATCH(&s, "2001:db8::10", 443, RULES_UNKNOWN, NULL);
	/* a name is never an IP rule's match and vice versa */
	MATCH(&s, "10.2.0.192.in-addr.arpa", 443, RULES_UNKNOWN, NULL);

	/* not hosts: refused outright */
	MATCH(&s, "127.1", 80, RULES_DENY, NULL);
	MATCH(&s, "0x7f.0.0.1", 80, RULES_DENY, NULL);
	MATCH(&s, "", 80, RULES_DENY, NULL);
	MATCH(&s, "exa mple.com", 80, RULES_DENY, NULL);
	MATCH(&s, "fe80::1%eth0", 80, RULES_DENY, NULL);
	CHECK(rules_match(&s, NULL, 80, NULL) == RULES_DENY);

	/* the flag travels with the rule */
	const struct net_rule *r = NULL;
	CHECK(rules_match(&s, "git.corp.example", 443, &r) == RULES_ALLOW);
	CHECK(r && r->allow_private);
	CHECK(rules_match(&s, "example.com", 443, &r) == RULES_ALLOW);
	CHECK(r && !r->allow_private);

	/* duplicates merge, flags OR-ed; deny lists never carry the flag */
	size_t n = s.nallow;
	add(&s, RULES_ALLOW, "EXAMPLE.com", RULE_ALLOW_PRIVATE);
	CHECK(s.nallow == n);
	CHECK(rules_match(&s, "example.com", 443, &r) == RULES_ALLOW && r->allow_private);
	add(&s, RULES_DENY, "x.example", RULE_ALLOW_PRIVATE);
	CHECK(!s.deny[s.ndeny - 1].allow_private);

	struct werr e = { 0 };
	CHECK(rules_add(&s, RULES_ALLOW, "*.com", 0, &e) == -1);
	CHECK_STR(e.msg, "bad network pattern \"*.com\": a wildcard needs at least two labels after '*.'");
	CHECK(rules_add(&s, RULES_UNKNOWN, "a.example", 0, &e) == -1);
	CHECK_STR(e.msg, "network rule list must be allow, deny or ask");

	/* deny rules for addresses */
	struct addr_ip ip;
	addr_ip_from_v4(&ip, (const uint8_t[]){ 192, 0, 2, 66 });
	CHECK(rules_deny_addr(&s, &ip, 443) != NULL);
	addr_ip_from_v4(&ip, (const uint8_t[]){ 192, 0, 2, 10 });
	CHECK(rules_deny_addr(&s, &ip, 443) == NULL);
	rules_free(&s);
	CHECK(s.nallow == 0 && s.allow == NULL);

	/* deny of a port only */
	add(&s, RULES_ALLOW, "*.example.org", 0);
	add(&s, RULES_DENY, "[2001:db8::5]:25", 0);
	add(&s, RULES_ALLOW, "2001:db8::5", 0);
	MATCH(&s, "2001:db8::5", 25, RULES_DENY, "[2001:db8::5]:25");
	MATCH(&s, "2001:db8::5", 587, RULES_ALLOW, "2001:db8::5");
	struct addr_ip v6;
	uint8_t raw[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 5 };
	addr_ip_from_v6(&v6, raw);
	CHECK(rules_deny_addr(&s, &v6, 25) != NULL);
	CHECK(rules_deny_addr(&s, &v6, 26) == NULL);
	/* a wildcard's suffix alone, and an exact rule's subdomain, do not match */
	MATCH(&s, "example.org", 443, RULES_UNKNOWN, NULL);
	MATCH(&s, "www.example.org", 443, RULES_ALLOW, "*.example.org");
	rules_free(&s);
}

/* ---- rules scoped to a program (rules_prog.c) ---- */

static void scoped(struct net_rules *s, const char *pattern, const char *program)
{
	struct net_rule r;
	struct werr e = { 0 };
	CHECK(rules_parse_pattern(&r, pattern, &e) == 0);
	CHECK(rules_program_parse(&r, program, &e) == 0);
	CHECK(rules_add_rule(s, RULES_ALLOW, &r, &e) == 0);
}

static void test_program(void)
{
	struct net_rules s = { 0 };
	struct werr e = { 0 };
	const char *sha = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
	char spec[80];
	snprintf(spec, sizeof spec, "sha256:%s", sha);
	scoped(&s, "a.example", "python3*");
	scoped(&s, "b.example", "/usr/bin/node");
	scoped(&s, "c.example", spec);
	scoped(&s, "a.example", "node"); /* same host, another program: a rule of its own */
	CHECK(s.nallow == 4);
	scoped(&s, "a.example", "node"); /* the same twice: once */
	CHECK(s.nallow == 4);
	struct net_program py = { .path = "/usr/bin/python3.11", .pid = 3,
		.sha256 = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789" };
	struct net_program curl = { .path = "/usr/bin/curl", .pid = 4 };
	struct net_program node = { .path = "/usr/bin/node", .pid = 5 };
	struct net_program gone = { .unknown = "its socket is held by several processes" };
	const struct net_rule *r = NULL;
	CHECK(rules_match_program(&s, "a.example", 443, &py, &r) == RULES_ALLOW);
	CHECK(r && strcmp(r->prog.glob, "python3*") == 0);
	CHECK(rules_match_program(&s, "a.example", 443, &node, &r) == RULES_ALLOW);
	CHECK(rules_match_program(&s, "a.example", 443, &curl, &r) == RULES_UNKNOWN);
	CHECK(rules_match_program(&s, "a.example", 443, &gone, &r) == RULES_UNKNOWN);
	CHECK(rules_match_program(&s, "a.example", 443, NULL, &r) == RULES_UNKNOWN);
	CHECK(rules_match(&s, "a.example", 443, &r) == RULES_UNKNOWN);
	CHECK(rules_match_program(&s, "b.example", 443, &node, &r) == RULES_ALLOW);
	CHECK(rules_match_program(&s, "b.example", 443, &py, &r) == RULES_UNKNOWN);
	/* by hash: the upper-case spelling folded; a program without one: no */
	CHECK(rules_match_program(&s, "c.example", 443, &py, &r) == RULES_ALLOW);
	CHECK(rules_match_program(&s, "c.example", 443, &curl, &r) == RULES_UNKNOWN);
	char text[NET_RULE_TEXT_MAX + NET_PROGRAM_MAX + 16];
	rules_match_program(&s, "a.example", 443, &py, &r);
	rules_rule_text(r, text, sizeof text);
	CHECK_STR(text, "a.example program python3*");
	/* an unscoped rule for the host admits every program, unknown ones too */
	CHECK(rules_add(&s, RULES_ALLOW, "a.example", 0, &e) == 0);
	CHECK(rules_match_program(&s, "a.example", 443, &gone, &r) == RULES_ALLOW);
	CHECK(rules_match_program(&s, "a.example", 443, &py, &r) == RULES_ALLOW);
	CHECK(r && r->prog.glob[0]); /* the scoped rule is the more specific */
	struct net_rule bad;
	CHECK(rules_program_parse(&bad, "sha256:abc", &e) == -1);
	CHECK(rules_program_parse(&bad, "bin/node", &e) == -1);
	CHECK(rules_program_parse(&bad, "", &e) == -1);
	rules_free(&s);
}

int main(void)
{
	test_hosts();
	test_patterns();
	test_match();
	test_program();
	return check_status_counted("test-net-rules");
}
