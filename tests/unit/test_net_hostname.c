/* test_net_hostname.c - unit tests of the one reading of a host name
 * (issue 39): every way a name enters the proxy (a CONNECT authority, an
 * absolute URL, a Host header, a SOCKS5 domain name, the rules' decision
 * point) reads it through net_host_parse alike: the same names refused, the
 * same canonical text for the rest. The SOCKS5 name with a NUL in it
 * ("attacker.example\0.allowed.example") is refused; case and a trailing dot
 * are folded for allow and deny rules alike; percent-encoding, control
 * bytes, non-ASCII bytes and numeric forms a resolver reads as IPv4 are
 * refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/http.h"
#include "src/net/rules.h"
#include "src/net/socks5.h"
#include "check.h"

static struct http_parser P; /* 17 KiB: not on the stack */

/* What each entry point made of one name: accepted (with its canonical
 * text in name) or not. */
struct reading {
	bool ok;
	char name[NET_HOST_MAX + 1];
};

static struct reading via_parse(const char *s, size_t n)
{
	struct reading r = { 0 };
	struct net_host h;
	r.ok = net_host_parse(&h, s, n, NULL) == 0;
	if (r.ok)
		snprintf(r.name, sizeof r.name, "%s", h.name);
	return r;
}

/* Feed "PRE name POST" to the proxy's request parser. */
static struct reading via_http(const char *pre, const char *s, size_t n, const char *post)
{
	struct reading r = { 0 };
	char buf[1024];
	size_t a = strlen(pre), b = strlen(post);
	if (a + n + b > sizeof buf)
		return r;
	memcpy(buf, pre, a);
	memcpy(buf + a, s, n);
	memcpy(buf + a + n, post, b);
	http_parser_init(&P);
	r.ok = http_feed(&P, buf, a + n + b, NULL) == HTTP_COMPLETE;
	if (r.ok)
		snprintf(r.name, sizeof r.name, "%s", P.req.host.name);
	return r;
}

static struct reading via_socks5(const char *s, size_t n)
{
	struct reading r = { 0 };
	uint8_t buf[3 + 5 + 255 + 2] = { 5, 1, 0, 5, 1, 0, SOCKS5_ATYP_DOMAIN, (uint8_t)n };
	if (n > 255)
		return r;
	memcpy(buf + 8, s, n);
	buf[8 + n] = 1;
	buf[9 + n] = 187; /* 443 */
	struct socks5_parser p;
	socks5_parser_init(&p);
	size_t off = 0, used;
	enum socks5_result res;
	do {
		res = socks5_feed(&p, buf + off, 10 + n - off, &used);
		off += used;
	} while (res == SOCKS5_GREETING);
	r.ok = res == SOCKS5_REQUEST;
	if (r.ok)
		snprintf(r.name, sizeof r.name, "%s", p.host.name);
	return r;
}

/* Every entry point reads s[0..n) as want (NULL: refused by each). */
static void agree(int line, const char *s, size_t n, const char *want)
{
	struct {
		const char *what;
		struct reading r;
	} v[] = {
		{ "net_host_parse", via_parse(s, n) },
		{ "CONNECT", via_http("CONNECT ", s, n, ":443 HTTP/1.1\r\n\r\n") },
		{ "absolute URL", via_http("GET http://", s, n, "/ HTTP/1.1\r\n\r\n") },
		{ "Host header", via_http("GET http://allowed.example/ HTTP/1.1\r\nHost: ", s, n,
					  "\r\n\r\n") },
		{ "SOCKS5", via_socks5(s, n) },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		/* the Host header must name the URL's host: only that one passes */
		bool host_hdr = strcmp(v[i].what, "Host header") == 0;
		bool want_ok = want && (!host_hdr || strcmp(want, "allowed.example") == 0);
		checks++;
		if (v[i].r.ok != want_ok || (want_ok && strcmp(v[i].r.name, want) != 0)) {
			fprintf(stderr, "%s:%d: %s read \"%.*s\" as %s%s, expected %s\n", __FILE__,
				line, v[i].what, (int)n, s, v[i].r.ok ? "" : "refused",
				v[i].r.ok ? v[i].r.name : "", want_ok ? want : "refused");
			failures++;
		}
	}
}
#define AGREE(lit, want) agree(__LINE__, (lit), sizeof(lit) - 1, (want))

static void test_entry_points_agree(void)
{
	AGREE("allowed.example", "allowed.example");
	AGREE("Allowed.Example.", "allowed.example");
	AGREE("ALLOWED.EXAMPLE", "allowed.example");
	AGREE("xn--bcher-kva.example", "xn--bcher-kva.example");
	AGREE("XN--BCHER-KVA.example", "xn--bcher-kva.example");
	AGREE("_dmarc.example", "_dmarc.example");
	AGREE("192.0.2.1", "192.0.2.1");
	/* the 2025 SOCKS5 bug: a check and a resolver reading this apart */
	AGREE("attacker.example\0.allowed.example", NULL);
	AGREE("allowed.example\0", NULL);
	AGREE("allowed\r.example", NULL);
	AGREE("allowed\x7f.example", NULL);
	AGREE("allowed\t.example", NULL);
	AGREE("%61llowed.example", NULL);
	AGREE("allowed.example%00.evil", NULL);
	AGREE("b\xc3\xbc" "cher.example", NULL);
	AGREE("allowed..example", NULL);
	AGREE(".allowed.example", NULL);
	AGREE("allowed.example..", NULL);
	AGREE("-a.example", NULL);
	AGREE("allowed.exam\\ple", NULL);
	AGREE("*.example", NULL);
	/* what inet_aton would read as an IPv4 address */
	AGREE("0x7f.1", NULL);
	AGREE("2130706433", NULL);
	AGREE("127.1", NULL);
	AGREE("0177.0.0.1", NULL);
	AGREE("0x7f000001", NULL);
	AGREE("127.0.0.01", NULL);
	AGREE("0x", NULL);
}

static void test_lengths(void)
{
	char name[300];
	memset(name, 'a', 63);
	memcpy(name + 63, ".example", 9);
	agree(__LINE__, name, strlen(name), name);
	memset(name, 'a', 64);
	memcpy(name + 64, ".example", 9);
	agree(__LINE__, name, strlen(name), NULL);
	/* 253 bytes in labels of 63 and a dot: the longest name, with and
	 * without its trailing dot; 254 is one over */
	for (size_t i = 0; i < 253; i++)
		name[i] = i % 64 == 63 ? '.' : 'b';
	name[253] = '\0';
	agree(__LINE__, name, 253, name);
	name[253] = '.';
	name[254] = '\0';
	char want[254];
	memcpy(want, name, 253);
	want[253] = '\0';
	CHECK(via_parse(name, 254).ok && strcmp(via_parse(name, 254).name, want) == 0);
	name[253] = 'b';
	CHECK(!via_parse(name, 254).ok);
	CHECK(!via_socks5(name, 254).ok);
}

/* A name as the rules see it: the same for allow and deny rules. */
static void test_rules_fold(void)
{
	struct net_rules s = { 0 };
	struct werr e = { 0 };
	CHECK(rules_add(&s, RULES_ALLOW, "allowed.example", 0, &e) == 0);
	CHECK(rules_add(&s, RULES_ALLOW, "*.example", 0, &e) < 0); /* one label after '*.' */
	CHECK(rules_add(&s, RULES_ALLOW, "*.bad.example", 0, &e) == 0);
	CHECK(rules_add(&s, RULES_DENY, "bad.example", 0, &e) == 0);
	CHECK(rules_add(&s, RULES_DENY, "Deny.Example", 0, &e) == 0);
	/* a pattern is written without the dot: refused with the reason */
	CHECK(rules_add(&s, RULES_DENY, "deny.example.", 0, &e) < 0);
	CHECK(strstr(e.msg, "trailing dot") != NULL);
	CHECK(rules_match(&s, "ALLOWED.example.", 443, NULL) == RULES_ALLOW);
	CHECK(rules_match(&s, "Allowed.Example", 443, NULL) == RULES_ALLOW);
	CHECK(rules_match(&s, "BAD.example.", 443, NULL) == RULES_DENY);
	CHECK(rules_match(&s, "deny.example", 443, NULL) == RULES_DENY);
	CHECK(rules_match(&s, "x.BAD.EXAMPLE.", 443, NULL) == RULES_ALLOW);
	/* a NUL cuts the C string: the rules never see past it, and a name
	 * read with one refuses before any rule (the parsers above) */
	CHECK(rules_match(&s, "%61llowed.example", 443, NULL) == RULES_DENY);
	CHECK(rules_match(&s, "allowed.example\r", 443, NULL) == RULES_DENY);
	CHECK(rules_match(&s, "0x7f.1", 443, NULL) == RULES_DENY);
	rules_free(&s);
}

/* The reasons a log shows name what was wrong. */
static void test_reasons(void)
{
	struct net_host h;
	const char *why = NULL;
	CHECK(net_host_parse(&h, "a\0b.example", 11, &why) < 0);
	CHECK_STR(why, "control byte in host");
	CHECK(net_host_parse(&h, "%61.example", 11, &why) < 0);
	CHECK_STR(why, "percent-encoding in host");
	CHECK(net_host_parse(&h, " a.example", 10, &why) < 0);
	CHECK_STR(why, "space in host");
	CHECK(net_host_parse(&h, "0x7f.1", 6, &why) < 0);
	CHECK_STR(why, "bad IPv4 address");
	struct socks5_parser p;
	socks5_parser_init(&p);
	static const uint8_t req[] = { 5, 1, 0, 5, 1, 0, 3, 5, 'a', 0, '.', 'b', 'c', 1, 187 };
	size_t off = 0, used;
	enum socks5_result r;
	do {
		r = socks5_feed(&p, req + off, sizeof req - off, &used);
		off += used;
	} while (r == SOCKS5_GREETING);
	CHECK(r == SOCKS5_ERROR);
	CHECK(p.code == SOCKS5_HOST_UNREACHABLE);
	CHECK(strstr(p.reason, "control byte") != NULL);
}

int main(void)
{
	test_entry_points_agree();
	test_lengths();
	test_rules_fold();
	test_reasons();
	printf("%d checks\n", checks);
	return check_status();
}
