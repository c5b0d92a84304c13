/* fuzz_rules.c - libFuzzer target for destination patterns, host names,
 * address classes and the dial decision (src/net/rules.c, addr.c, dial.c).
 * The input is lines: each is parsed as a pattern into the allow or deny
 * list (by its first byte), and used as a host to match. Invariants: a
 * pattern's canonical text parses to the same rule; errors are printable;
 * rules_match agrees with a brute-force pass over both lists (deny wins,
 * UNKNOWN only when nothing matches); a wildcard never matches its bare
 * suffix; canonical hosts are fixed points; an address and its
 * IPv4-mapped/compatible forms share one class. Linked with replay.c it is
 * fuzz-rules-replay, which replays files and corpus directories without
 * clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/util.h"
#include "src/net/addr.h"
#include "src/net/dial.h"
#include "src/net/rules.h"
#include "replay.h"

#define MAX_LINES 64

static void check_pattern(const char *line)
{
	struct net_rule r, r2;
	struct werr e = { 0 };
	if (rules_parse_pattern(&r, line, &e) < 0) {
		if (!fuzz_printable(e.msg))
			abort();
		return;
	}
	if (!fuzz_printable(r.text) || rules_parse_pattern(&r2, r.text, &e) < 0 ||
	    strcmp(r.text, r2.text) != 0 || r.kind != r2.kind || r.port != r2.port ||
	    strcmp(r.host, r2.host) != 0 || !addr_ip_equal(&r.ip, &r2.ip))
		abort();
	if (r.kind == NET_RULE_WILDCARD) {
		/* the bare suffix is never matched; one more label always is */
		struct net_host h;
		if (net_host_parse(&h, r.host, strlen(r.host), NULL) < 0)
			abort();
		if (rules_rule_matches(&r, &h, r.port ? r.port : 1))
			abort();
		char sub[NET_HOST_MAX + 8];
		int n = snprintf(sub, sizeof sub, "x.%s", r.host);
		if (n <= NET_HOST_MAX && (net_host_parse(&h, sub, (size_t)n, NULL) < 0 ||
					  !rules_rule_matches(&r, &h, r.port ? r.port : 1)))
			abort();
		if (strchr(r.host, '.') == NULL)
			abort(); /* two labels at least */
	}
}

static void check_host(const char *line, size_t len)
{
	struct net_host h, h2;
	const char *why = NULL;
	if (net_host_parse(&h, line, len, &why) < 0) {
		if (!why || !fuzz_printable(why))
			abort();
		return;
	}
	char again[NET_HOST_MAX + 3];
	int n = snprintf(again, sizeof again, h.kind == NET_HOST_IPV6 ? "[%s]" : "%s", h.name);
	if (net_host_parse(&h2, again, (size_t)n, NULL) < 0 || h2.kind != h.kind ||
	    strcmp(h2.name, h.name) != 0 || !addr_ip_equal(&h.ip, &h2.ip))
		abort();
	if (h.kind != NET_HOST_IPV6 && strlen(h.name) > NET_HOST_MAX)
		abort();
}

static void check_match(const struct net_rules *s, const char *host, uint16_t port)
{
	const struct net_rule *r = NULL;
	enum rules_verdict v = rules_match(s, host, port, &r);
	struct net_host h;
	bool valid = net_host_parse(&h, host, strlen(host), NULL) == 0;
	if (!valid && strchr(host, ':') && host[0] != '[') {
		char br[600];
		int n = snprintf(br, sizeof br, "[%s]", host);
		valid = n < (int)sizeof br && net_host_parse(&h, br, (size_t)n, NULL) == 0;
	}
	if (!valid) {
		if (v != RULES_DENY || r)
			abort();
		return;
	}
	bool denied = false, allowed = false;
	for (size_t i = 0; i < s->ndeny; i++)
		denied = denied || rules_rule_matches(&s->deny[i], &h, port);
	for (size_t i = 0; i < s->nallow; i++)
		allowed = allowed || rules_rule_matches(&s->allow[i], &h, port);
	enum rules_verdict want = denied ? RULES_DENY : allowed ? RULES_ALLOW : RULES_UNKNOWN;
	if (v != want)
		abort();
	if ((v == RULES_UNKNOWN) != (r == NULL))
		abort();
	if (r && !rules_rule_matches(r, &h, port))
		abort();
	if (v == RULES_ALLOW && (r < s->allow || r >= s->allow + s->nallow))
		abort();
	if (v == RULES_DENY && (r < s->deny || r >= s->deny + s->ndeny))
		abort();
}

static void check_addr(const uint8_t *b, size_t n)
{
	uint8_t raw[16] = { 0 };
	memcpy(raw, b, n < 16 ? n : 16);
	struct addr_ip ip, v4, mapped, compat;
	addr_ip_from_v6(&ip, raw);
	enum addr_class c = addr_classify(&ip);
	if (strcmp(addr_class_name(c), "unknown") == 0)
		abort();
	char text[ADDR_TEXT_MAX];
	addr_ip_text(&ip, text);
	/* the IPv4 reading of the first four bytes, in all three forms */
	addr_ip_from_v4(&v4, raw);
	uint8_t m[16] = { [10] = 0xff, [11] = 0xff }, k[16] = { 0 };
	memcpy(m + 12, raw, 4);
	memcpy(k + 12, raw, 4);
	addr_ip_from_v6(&mapped, m);
	addr_ip_from_v6(&compat, k);
	if (!addr_ip_equal(&v4, &mapped) || addr_classify(&v4) != addr_classify(&mapped))
		abort();
	uint32_t low = (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
	if (low > 1 && (!addr_ip_equal(&v4, &compat) || addr_classify(&compat) != addr_classify(&v4)))
		abort();
	/* the dial decision without the interfaces: never dials what cannot be */
	struct addr_local none = { NULL, 0 };
	const char *why = NULL;
	if (dial_allowed(NULL, NULL, &ip, 443, &none, &why)) {
		if (c != ADDR_PUBLIC)
			abort();
	} else if (!why || !fuzz_printable(why)) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *lines[MAX_LINES];
	size_t lens[MAX_LINES], nlines = 0;
	size_t start = 0;
	for (size_t i = 0; i <= size && nlines < MAX_LINES; i++) {
		if (i == size || data[i] == '\n') {
			size_t len = i - start;
			lines[nlines] = xmalloc(len + 1);
			memcpy(lines[nlines], data + start, len);
			lines[nlines][len] = '\0';
			lens[nlines++] = len;
			start = i + 1;
		}
	}

	struct net_rules s = { 0 };
	for (size_t i = 0; i < nlines; i++) {
		const char *l = lines[i];
		check_pattern(l);
		check_host(l, lens[i]);
		/* "+pattern" allow, "-pattern" deny, "!pattern" allow private */
		if (l[0] == '+' || l[0] == '-' || l[0] == '!') {
			struct werr e = { 0 };
			int r = rules_add(&s, l[0] == '-' ? RULES_DENY : RULES_ALLOW, l + 1,
					  l[0] == '!' ? RULE_ALLOW_PRIVATE : 0, &e);
			if (r < 0 && !fuzz_printable(e.msg))
				abort();
		}
	}
	for (size_t i = 0; i < nlines; i++) {
		const char *l = lines[i];
		if (l[0] == '+' || l[0] == '-' || l[0] == '!')
			l++;
		check_match(&s, l, 443);
		check_match(&s, l, 80);
		check_match(&s, l, (uint16_t)(lens[i] * 257));
	}
	if (size >= 4)
		check_addr(data, size);
	if (size >= 20)
		check_addr(data + size - 16, 16);

	rules_free(&s);
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	return 0;
}
