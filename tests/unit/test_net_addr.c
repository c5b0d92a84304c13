/* test_net_addr.c - unit tests of address classification (every range, the
 * metadata endpoints in IPv4, IPv4-mapped, IPv4-compatible and NAT64 forms),
 * sockaddr conversion and this host's addresses; and that addr.h/addr.c are
 * a leaf, knowing nothing of the rules (the dial decision that combines
 * both is test_net_dial.c's). No network traffic. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/addr.h"
#include "check.h"

/* addr.h is a leaf: it includes nothing of rules.h, so a type of that name
 * here is no redefinition (this file would not compile otherwise). */
struct net_rule {
	int not_the_rules_one;
};

/* An address from its text (IPv4 or IPv6), through the sockaddr path the
 * supervisor uses for getaddrinfo results. */
static struct addr_ip ip_of(const char *text)
{
	struct addr_ip ip;
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	if (inet_pton(AF_INET, text, &in.sin_addr) == 1) {
		if (addr_ip_from_sockaddr(&ip, NULL, (struct sockaddr *)&in, sizeof in) < 0)
			abort();
	} else if (inet_pton(AF_INET6, text, &in6.sin6_addr) == 1) {
		if (addr_ip_from_sockaddr(&ip, NULL, (struct sockaddr *)&in6, sizeof in6) < 0)
			abort();
	} else {
		fprintf(stderr, "test: bad address text %s\n", text);
		exit(2);
	}
	return ip;
}

static void cls(int line, const char *text, enum addr_class want)
{
	struct addr_ip ip = ip_of(text);
	enum addr_class got = addr_classify(&ip);
	checks++;
	if (got != want) {
		fprintf(stderr, "%s:%d: %s: got %s, expected %s\n", __FILE__, line, text,
			addr_class_name(got), addr_class_name(want));
		failures++;
	}
}
#define CLS(text, want) cls(__LINE__, (text), (want))

static void test_classify(void)
{
	CLS("8.8.8.8", ADDR_PUBLIC);
	CLS("1.1.1.1", ADDR_PUBLIC);
	CLS("140.82.112.3", ADDR_PUBLIC);
	CLS("0.0.0.0", ADDR_UNSPECIFIED);
	CLS("0.1.2.3", ADDR_UNSPECIFIED);
	CLS("127.0.0.1", ADDR_LOOPBACK);
	CLS("127.255.255.254", ADDR_LOOPBACK);
	CLS("169.254.0.1", ADDR_LINK_LOCAL);
	CLS("169.254.169.253", ADDR_LINK_LOCAL);
	CLS("224.0.0.1", ADDR_MULTICAST);
	CLS("239.255.255.250", ADDR_MULTICAST);
	CLS("255.255.255.255", ADDR_BROADCAST);
	CLS("240.0.0.1", ADDR_RESERVED);
	CLS("255.255.255.254", ADDR_RESERVED);
	CLS("10.0.0.1", ADDR_PRIVATE);
	CLS("10.255.255.255", ADDR_PRIVATE);
	CLS("172.16.0.1", ADDR_PRIVATE);
	CLS("172.31.255.255", ADDR_PRIVATE);
	CLS("172.15.255.255", ADDR_PUBLIC);
	CLS("172.32.0.0", ADDR_PUBLIC);
	CLS("192.168.1.1", ADDR_PRIVATE);
	CLS("192.169.0.1", ADDR_PUBLIC);
	CLS("100.64.0.1", ADDR_PRIVATE);
	CLS("100.127.255.255", ADDR_PRIVATE);
	CLS("100.63.255.255", ADDR_PUBLIC);
	CLS("100.128.0.0", ADDR_PUBLIC);
	CLS("192.0.0.8", ADDR_RESERVED);
	CLS("192.0.2.1", ADDR_RESERVED);
	CLS("198.51.100.1", ADDR_RESERVED);
	CLS("203.0.113.255", ADDR_RESERVED);
	CLS("198.18.0.1", ADDR_RESERVED);
	CLS("198.19.255.255", ADDR_RESERVED);
	CLS("198.20.0.0", ADDR_PUBLIC);
	CLS("192.88.99.1", ADDR_RESERVED);

	/* metadata endpoints, before the ranges that hold them */
	CLS("169.254.169.254", ADDR_METADATA);
	CLS("169.254.170.2", ADDR_METADATA);
	CLS("169.254.170.23", ADDR_METADATA);
	CLS("169.254.0.23", ADDR_METADATA);
	CLS("100.100.100.200", ADDR_METADATA);
	CLS("168.63.129.16", ADDR_METADATA);
	CLS("fd00:ec2::254", ADDR_METADATA);
	CLS("fd00:ec2::23", ADDR_METADATA);
	CLS("fd00:ec2::253", ADDR_PRIVATE);
	/* ... in every IPv6 form that reaches IPv4 */
	CLS("::ffff:169.254.169.254", ADDR_METADATA);
	CLS("::ffff:a9fe:a9fe", ADDR_METADATA);
	CLS("::169.254.169.254", ADDR_METADATA);
	CLS("::ffff:169.254.170.2", ADDR_METADATA);
	CLS("::169.254.170.2", ADDR_METADATA);
	CLS("::ffff:100.100.100.200", ADDR_METADATA);
	CLS("::100.100.100.200", ADDR_METADATA);
	CLS("64:ff9b::169.254.169.254", ADDR_METADATA);
	CLS("64:ff9b::100.100.100.200", ADDR_METADATA);
	CLS("::ffff:127.0.0.1", ADDR_LOOPBACK);
	CLS("::127.0.0.1", ADDR_LOOPBACK);
	CLS("::ffff:10.1.1.1", ADDR_PRIVATE);
	CLS("::ffff:0.0.0.0", ADDR_UNSPECIFIED);
	CLS("::ffff:8.8.8.8", ADDR_PUBLIC);
	CLS("::8.8.8.8", ADDR_PUBLIC);
	CLS("64:ff9b::8.8.8.8", ADDR_PUBLIC);
	CLS("64:ff9b::10.0.0.1", ADDR_PRIVATE);
	CLS("64:ff9b::127.0.0.1", ADDR_LOOPBACK);
	CLS("64:ff9b:1::1", ADDR_PRIVATE);

	CLS("::", ADDR_UNSPECIFIED);
	CLS("::1", ADDR_LOOPBACK);
	CLS("::2", ADDR_UNSPECIFIED); /* ::0.0.0.2, inside 0/8 */
	CLS("fe80::1", ADDR_LINK_LOCAL);
	CLS("febf:ffff::1", ADDR_LINK_LOCAL);
	CLS("fec0::1", ADDR_PRIVATE);
	CLS("fc00::1", ADDR_PRIVATE);
	CLS("fdff:ffff::1", ADDR_PRIVATE);
	CLS("ff02::1", ADDR_MULTICAST);
	CLS("ff05::2", ADDR_MULTICAST);
	CLS("2001:db8::1", ADDR_RESERVED);
	CLS("3fff::1", ADDR_RESERVED);
	CLS("3fff:0fff::1", ADDR_RESERVED);
	CLS("3fff:1000::1", ADDR_PUBLIC);
	CLS("100::1", ADDR_RESERVED);
	CLS("2001::1", ADDR_RESERVED);     /* Teredo */
	CLS("2001:2::1", ADDR_RESERVED);   /* benchmarking */
	CLS("2001:1ff::1", ADDR_RESERVED);
	CLS("2001:200::1", ADDR_PUBLIC);
	CLS("2002:a9fe:a9fe::1", ADDR_RESERVED); /* 6to4 */
	CLS("2606:4700::1111", ADDR_PUBLIC);
	CLS("2a00:1450:4001::200e", ADDR_PUBLIC);
	CLS("4000::1", ADDR_RESERVED);
	CLS("1::1", ADDR_RESERVED);

	CHECK_STR(addr_class_name(ADDR_METADATA), "cloud metadata");
	CHECK_STR(addr_class_name(ADDR_PUBLIC), "public");
	CHECK_STR(addr_class_name((enum addr_class)99), "unknown");

	/* a hand-built ::a.b.c.d is still its IPv4 */
	struct addr_ip raw = { { [12] = 169, [13] = 254, [14] = 169, [15] = 254 } };
	CHECK(addr_classify(&raw) == ADDR_METADATA);
}

static void test_forms(void)
{
	struct addr_ip ip;
	uint16_t port = 0;
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(8080) };
	inet_pton(AF_INET, "192.0.2.5", &in.sin_addr);
	CHECK(addr_ip_from_sockaddr(&ip, &port, (struct sockaddr *)&in, sizeof in) == 0);
	CHECK(port == 8080);
	uint8_t v4[4];
	CHECK(addr_ip_is_v4(&ip, v4) && v4[0] == 192 && v4[3] == 5);
	char text[ADDR_TEXT_MAX];
	CHECK_STR(addr_ip_text(&ip, text), "192.0.2.5");
	CHECK(addr_ip_from_sockaddr(&ip, &port, (struct sockaddr *)&in, sizeof in - 1) == -1);

	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
	inet_pton(AF_INET6, "::ffff:192.0.2.5", &in6.sin6_addr);
	struct addr_ip ip6;
	CHECK(addr_ip_from_sockaddr(&ip6, &port, (struct sockaddr *)&in6, sizeof in6) == 0);
	CHECK(port == 443);
	CHECK(addr_ip_equal(&ip, &ip6)); /* mapped = the IPv4 */
	inet_pton(AF_INET6, "::192.0.2.5", &in6.sin6_addr);
	CHECK(addr_ip_from_sockaddr(&ip6, NULL, (struct sockaddr *)&in6, sizeof in6) == 0);
	CHECK(addr_ip_equal(&ip, &ip6)); /* compatible = the IPv4 */
	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	CHECK(addr_ip_from_sockaddr(&ip6, NULL, (struct sockaddr *)&in6, sizeof in6) == 0);
	CHECK(!addr_ip_is_v4(&ip6, NULL)); /* ::1 is not 0.0.0.1 */
	CHECK_STR(addr_ip_text(&ip6, text), "::1");
	inet_pton(AF_INET6, "2001:DB8::A", &in6.sin6_addr);
	CHECK(addr_ip_from_sockaddr(&ip6, NULL, (struct sockaddr *)&in6, sizeof in6) == 0);
	CHECK_STR(addr_ip_text(&ip6, text), "2001:db8::a");
	CHECK(addr_ip_from_sockaddr(&ip6, NULL, (struct sockaddr *)&in6, sizeof in) == -1);

	struct sockaddr sa = { .sa_family = AF_UNIX };
	CHECK(addr_ip_from_sockaddr(&ip, NULL, &sa, sizeof sa) == -1);
	CHECK(addr_ip_from_sockaddr(&ip, NULL, NULL, 0) == -1);

	/* back to a sockaddr, the form dialled and listened on: IPv4 (and
	 * IPv4-mapped) as sockaddr_in, the rest as sockaddr_in6, port in
	 * network order; a round trip gives the same address and port */
	const char *const texts[] = { "127.0.0.1", "::ffff:192.0.2.7", "::1", "2001:db8::a" };
	const sa_family_t fams[] = { AF_INET, AF_INET, AF_INET6, AF_INET6 };
	for (size_t i = 0; i < 4; i++) {
		struct addr_ip a = ip_of(texts[i]), b;
		struct sockaddr_storage ss;
		socklen_t sl = addr_ip_to_sockaddr(&a, 4000, &ss);
		CHECK(ss.ss_family == fams[i]);
		CHECK(sl == (fams[i] == AF_INET ? sizeof(struct sockaddr_in)
						: sizeof(struct sockaddr_in6)));
		uint16_t p = 0;
		CHECK(addr_ip_from_sockaddr(&b, &p, (struct sockaddr *)&ss, sl) == 0);
		CHECK(addr_ip_equal(&a, &b));
		CHECK(p == 4000);
	}
}

static void test_local(void)
{
	/* every address getifaddrs reports is this host's; a documentation
	 * address never is */
	struct ifaddrs *ifa;
	CHECK(getifaddrs(&ifa) == 0);
	int seen = 0;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		struct addr_ip ip;
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
				     i->ifa_addr->sa_family != AF_INET6))
			continue;
		socklen_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
								    : sizeof(struct sockaddr_in6);
		CHECK(addr_ip_from_sockaddr(&ip, NULL, i->ifa_addr, len) == 0);
		CHECK(addr_is_local_host(&ip));
		seen++;
	}
	freeifaddrs(ifa);
	struct addr_ip doc = ip_of("192.0.2.200");
	CHECK(!addr_is_local_host(&doc));

	struct addr_local l;
	struct werr e = { 0 };
	CHECK(addr_local_load(&l, &e) == 0);
	CHECK(l.n <= (size_t)seen);
	CHECK(!addr_local_has(&l, &doc));
	addr_local_free(&l);
	CHECK(l.n == 0 && l.ips == NULL);
}

/* The whole text of a source file (SRCDIR: the source root, set by meson);
 * free it. */
static char *slurp(const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", SRCDIR, rel);
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "test: cannot open %s\n", path);
		exit(2);
	}
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	if (!buf)
		abort();
	size_t n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* No forward declaration of the rules' types and no include of rules.h
 * either: the address classifier is the bottom of net/, and the rules
 * build on it, never the other way round. */
static void test_leaf(void)
{
	char *h = slurp("src/net/addr.h");
	CHECK(!strstr(h, "net_rule"));
	CHECK(!strstr(h, "rules.h"));
	free(h);
	char *c = slurp("src/net/addr.c");
	CHECK(!strstr(c, "net_rule"));
	CHECK(!strstr(c, "rules.h"));
	CHECK(!strstr(c, "rules_"));
	free(c);
}

int main(void)
{
	test_leaf();
	test_classify();
	test_forms();
	test_local();
	return check_status_counted("test-net-addr");
}
