/* fuzz_hostname.c - libFuzzer target for the one reading of a host name
 * (net_host_parse in src/net/rules.c) against the resolver's reading of
 * the same bytes. The whole input is one name as a client sent it (NULs,
 * control bytes and all). Invariants, for any input the normaliser accepts:
 * - the input holds no NUL, so a C string of it (what getaddrinfo reads)
 *   is all of it;
 * - a name is the input folded (lower case, one trailing dot dropped), of
 *   LDH bytes and '_' only, labels 1-63 bytes, at most 253;
 * - a name is numeric to neither inet_aton nor getaddrinfo(AI_NUMERICHOST)
 *   (read as the input and as the canonical name the proxy resolves), so no
 *   resolver dials an address the rules took for a name;
 * - an IPv4 or IPv6 literal is the address getaddrinfo(AI_NUMERICHOST)
 *   reads from its canonical text;
 * - the canonical text reads back to itself;
 * - a SOCKS5 request and a CONNECT naming the input read it the same way.
 * Linked with replay.c it is fuzz-hostname-replay, which replays the corpus
 * in `meson test`. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "src/net/addr.h"
#include "src/net/http.h"
#include "src/net/rules.h"
#include "src/net/socks5.h"
#include "replay.h"

static struct http_parser P; /* 17 KiB: not on the stack */

/* The address getaddrinfo reads from s without a lookup: 0 and *ip, or -1
 * when it is no numeric address. */
static int numeric(const char *s, struct addr_ip *ip)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_family = AF_UNSPEC };
	struct addrinfo *res = NULL;
	if (getaddrinfo(s, NULL, &hints, &res) != 0)
		return -1;
	int r = addr_ip_from_sockaddr(ip, NULL, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return r;
}

static bool ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == '.';
}

static void check_name(const struct net_host *h, const char *in, size_t n)
{
	size_t len = strlen(h->name);
	if (len == 0 || len > NET_HOST_MAX || (len != n && len + 1 != n) ||
	    strncasecmp(in, h->name, len) != 0 || (len + 1 == n && in[len] != '.'))
		abort();
	for (size_t i = 0, label = 0; i <= len; i++) {
		if (i == len || h->name[i] == '.') {
			if (label == 0 || label > 63)
				abort();
			label = 0;
		} else if (!ldh(h->name[i])) {
			abort();
		} else {
			label++;
		}
	}
	struct in_addr a;
	struct addr_ip ip;
	if (inet_aton(h->name, &a) || inet_aton(in, &a) || numeric(h->name, &ip) == 0 ||
	    numeric(in, &ip) == 0)
		abort();
}

static void check_literal(const struct net_host *h)
{
	struct addr_ip ip;
	if (numeric(h->name, &ip) < 0 || !addr_ip_equal(&ip, &h->ip))
		abort();
	if (h->kind == NET_HOST_IPV4) {
		struct in_addr a;
		if (!inet_aton(h->name, &a) || memcmp(&a, h->ip.b + 12, 4) != 0)
			abort();
	}
}

/* SOCKS5 (a domain name: no brackets) and CONNECT read in[0..n) as h did
 * (ok false: refused). */
static void check_entry_points(const char *in, size_t n, bool ok, const struct net_host *h)
{
	if (n <= 255) {
		uint8_t req[3 + 5 + 255 + 2] = { 5, 1, 0, 5, 1, 0, SOCKS5_ATYP_DOMAIN, (uint8_t)n };
		memcpy(req + 8, in, n);
		req[8 + n] = 0;
		req[9 + n] = 80;
		struct socks5_parser p;
		socks5_parser_init(&p);
		size_t off = 0, used;
		enum socks5_result r;
		do {
			r = socks5_feed(&p, req + off, 10 + n - off, &used);
			off += used;
		} while (r == SOCKS5_GREETING);
		bool want = ok && in[0] != '[';
		if ((r == SOCKS5_REQUEST) != want || (want && strcmp(p.host.name, h->name) != 0))
			abort();
		if (r == SOCKS5_ERROR && !fuzz_printable(p.reason))
			abort();
	}
	/* a line break in the name ends the request line there: the bytes
	 * before it are then a request of their own ("s2:1 HTTP/1.4\r\n"),
	 * no reading of this name */
	char buf[700];
	if (n + 32 > sizeof buf || memchr(in, '\r', n) || memchr(in, '\n', n))
		return;
	memcpy(buf, "CONNECT ", 8);
	memcpy(buf + 8, in, n);
	memcpy(buf + 8 + n, ":443 HTTP/1.1\r\n\r\n", 17);
	http_parser_init(&P);
	enum http_result r = http_feed(&P, buf, n + 25, NULL);
	/* the request line's own rules (no spaces, visible bytes) come first */
	if (r == HTTP_COMPLETE && (!ok || strcmp(P.req.host.name, h->name) != 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 600)
		return 0;
	char in[601];
	memcpy(in, data, size);
	in[size] = '\0';
	struct net_host h, again;
	const char *why = NULL;
	bool ok = net_host_parse(&h, in, size, &why) == 0;
	check_entry_points(in, size, ok, &h);
	if (!ok) {
		if (!why || !fuzz_printable(why))
			abort();
		return 0;
	}
	if (memchr(in, '\0', size))
		abort();
	if (h.kind == NET_HOST_NAME)
		check_name(&h, in, size);
	else
		check_literal(&h);
	char text[NET_HOST_MAX + 3];
	int n = snprintf(text, sizeof text, h.kind == NET_HOST_IPV6 ? "[%s]" : "%s", h.name);
	if (net_host_parse(&again, text, (size_t)n, NULL) < 0 || again.kind != h.kind ||
	    strcmp(again.name, h.name) != 0 || !addr_ip_equal(&again.ip, &h.ip))
		abort();
	return 0;
}
