/* test_net_dial.c - unit tests of dial_allowed, the decision whether the
 * proxy may dial a resolved address: by its class, this host's own
 * addresses, with and without the rule that allowed the name (an IP rule
 * naming the address, `private`), and the deny rules naming addresses.
 * No network traffic. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/dial.h"
#include "check.h"

/* An address from its text, IPv4 or IPv6. */
static struct addr_ip ip_of(const char *text)
{
	uint8_t raw[16];
	struct addr_ip ip;
	if (inet_pton(AF_INET, text, raw) == 1)
		addr_ip_from_v4(&ip, raw);
	else if (inet_pton(AF_INET6, text, raw) == 1)
		addr_ip_from_v6(&ip, raw);
	else {
		fprintf(stderr, "test: bad address text %s\n", text);
		exit(2);
	}
	return ip;
}

static struct net_rule rule(const char *pattern, bool allow_private)
{
	struct net_rule r;
	struct werr e = { 0 };
	if (rules_parse_pattern(&r, pattern, &e) < 0) {
		fprintf(stderr, "test: %s\n", e.msg);
		exit(2);
	}
	r.allow_private = allow_private;
	return r;
}

static void dial(int line, const struct net_rules *set, const struct net_rule *by,
		 const char *addr, unsigned port, const struct addr_local *local, const char *want)
{
	struct addr_ip ip = ip_of(addr);
	const char *reason = NULL;
	bool ok = dial_allowed(set, by, &ip, (uint16_t)port, local, &reason);
	checks++;
	if (want ? ok || !reason || strcmp(reason, want) != 0 : !ok) {
		fprintf(stderr, "%s:%d: dial %s:%u by %s: got %s (%s), expected %s\n", __FILE__,
			line, addr, port, by ? by->text : "(none)", ok ? "allowed" : "refused",
			reason ? reason : "", want ? want : "allowed");
		failures++;
	}
}
#define DIAL(set, by, addr, port, local, want) dial(__LINE__, (set), (by), (addr), (port), (local), (want))

static void test_dial(void)
{
	/* a fake host: its addresses are 198.51.100.7 and 2001:db8::7 and 10.9.9.9 */
	struct addr_ip mine[3] = { ip_of("198.51.100.7"), ip_of("2001:db8::7"), ip_of("10.9.9.9") };
	struct addr_local local = { mine, 3 };
	struct addr_local none = { NULL, 0 };

	struct net_rule name = rule("example.com", false);
	struct net_rule corp = rule("*.corp.example", true);
	struct net_rule lit = rule("10.1.2.3", false);
	struct net_rule lit_port = rule("[fd00::5]:8443", false);
	struct net_rule lo = rule("127.0.0.1:11434", false);
	struct net_rule md = rule("169.254.169.254", false);
	struct net_rule mine_lit = rule("10.9.9.9", false);

	DIAL(NULL, &name, "93.184.216.34", 443, &none, NULL);
	DIAL(NULL, &name, "2606:2800:220:1:248:1893:25c8:1946", 443, &none, NULL);
	DIAL(NULL, NULL, "93.184.216.34", 443, &none, NULL);
	DIAL(NULL, &name, "127.0.0.1", 443, &none, "resolves to loopback");
	DIAL(NULL, &name, "::1", 443, &none, "resolves to loopback");
	DIAL(NULL, &name, "::ffff:127.0.0.2", 443, &none, "resolves to loopback");
	DIAL(NULL, &name, "0.0.0.0", 443, &none, "resolves to an unspecified address");
	DIAL(NULL, &name, "::", 443, &none, "resolves to an unspecified address");
	DIAL(NULL, &name, "169.254.1.1", 443, &none, "resolves to a link-local address");
	DIAL(NULL, &name, "fe80::1", 443, &none, "resolves to a link-local address");
	DIAL(NULL, &name, "224.0.0.251", 443, &none, "resolves to a multicast address");
	DIAL(NULL, &name, "ff02::fb", 443, &none, "resolves to a multicast address");
	DIAL(NULL, &name, "255.255.255.255", 443, &none, "resolves to the broadcast address");
	DIAL(NULL, &name, "169.254.169.254", 80, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &name, "::ffff:169.254.169.254", 80, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &name, "fd00:ec2::254", 80, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &name, "100.100.100.200", 80, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &name, "10.0.0.1", 443, &none, "resolves to a private address");
	DIAL(NULL, &name, "fd12::1", 443, &none, "resolves to a private address");
	DIAL(NULL, &name, "192.0.2.1", 443, &none, "resolves to a reserved address");
	DIAL(NULL, &name, "198.51.100.7", 443, &local, "resolves to a reserved address");
	DIAL(NULL, NULL, "10.0.0.1", 443, &none, "resolves to a private address");

	/* this host's own public address */
	struct addr_ip mine2[1] = { ip_of("93.184.216.34") };
	struct addr_local local2 = { mine2, 1 };
	DIAL(NULL, &name, "93.184.216.34", 443, &local2, "resolves to an address of this host");
	DIAL(NULL, &name, "::ffff:93.184.216.34", 443, &local2, "resolves to an address of this host");
	DIAL(NULL, &name, "93.184.216.35", 443, &local2, NULL);

	/* allow_private opens private ranges, nothing else */
	DIAL(NULL, &corp, "10.0.0.1", 443, &none, NULL);
	DIAL(NULL, &corp, "172.20.1.1", 443, &none, NULL);
	DIAL(NULL, &corp, "fd12::1", 443, &none, NULL);
	DIAL(NULL, &corp, "100.64.1.1", 443, &none, NULL);
	DIAL(NULL, &corp, "10.9.9.9", 443, &local, "resolves to an address of this host");
	DIAL(NULL, &corp, "127.0.0.1", 443, &none, "resolves to loopback");
	DIAL(NULL, &corp, "169.254.169.254", 443, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &corp, "100.100.100.200", 443, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &corp, "fd00:ec2::254", 443, &none, "resolves to a cloud metadata endpoint");
	DIAL(NULL, &corp, "192.0.2.1", 443, &none, "resolves to a reserved address");

	/* an IP literal rule naming the address allows it */
	DIAL(NULL, &lit, "10.1.2.3", 443, &none, NULL);
	DIAL(NULL, &lit, "::ffff:10.1.2.3", 443, &none, NULL);
	DIAL(NULL, &lit, "10.1.2.4", 443, &none, "resolves to a private address");
	DIAL(NULL, &lit_port, "fd00::5", 8443, &none, NULL);
	DIAL(NULL, &lit_port, "fd00::5", 8444, &none, "resolves to a private address");
	DIAL(NULL, &lo, "127.0.0.1", 11434, &none, NULL);
	DIAL(NULL, &lo, "127.0.0.1", 11435, &none, "resolves to loopback");
	DIAL(NULL, &md, "169.254.169.254", 80, &none, NULL);
	DIAL(NULL, &mine_lit, "10.9.9.9", 80, &local, NULL);
	/* ... except what can never be a destination: a rule cannot name
	 * the unspecified address (test_net_rules), a name resolving to it
	 * is refused (above) */

	/* deny rules naming the address win over everything */
	struct net_rules set = { 0 };
	struct werr e = { 0 };
	CHECK(rules_add(&set, RULES_DENY, "93.184.216.34", 0, &e) == 0);
	CHECK(rules_add(&set, RULES_DENY, "[2001:db8::99]:22", 0, &e) == 0);
	CHECK(rules_add(&set, RULES_DENY, "10.1.2.3", 0, &e) == 0);
	DIAL(&set, &name, "93.184.216.34", 443, &none, "resolves to a denied address");
	DIAL(&set, &name, "::ffff:93.184.216.34", 443, &none, "resolves to a denied address");
	DIAL(&set, &name, "93.184.216.35", 443, &none, NULL);
	DIAL(&set, &lit, "10.1.2.3", 443, &none, "resolves to a denied address");
	struct net_rule doc = rule("2001:db8::99", false);
	DIAL(&set, &doc, "2001:db8::99", 22, &none, "resolves to a denied address");
	DIAL(&set, &doc, "2001:db8::99", 23, &none, NULL);
	rules_free(&set);

	/* the real interfaces: loopback refused (by class before the host check) */
	DIAL(NULL, &name, "127.0.0.1", 443, NULL, "resolves to loopback");
	DIAL(NULL, &name, "93.184.216.34", 443, NULL, NULL);

	/* reason may be NULL */
	struct addr_ip l = ip_of("127.0.0.1");
	CHECK(!dial_allowed(NULL, &name, &l, 80, &none, NULL));
}

int main(void)
{
	test_dial();
	return check_status_counted("test-net-dial");
}
