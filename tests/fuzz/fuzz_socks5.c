/* fuzz_socks5.c - libFuzzer target for the SOCKS5 handshake parser
 * (src/net/socks5.c). Each input runs as a whole handshake (fed again after
 * the greeting, as a server does) and again in chunks whose sizes come from
 * the input; both must end alike. Then the invariants: replies are the
 * documented shapes, reasons are printable, a request holds a valid host
 * and a non-zero port. Linked with replay.c it is fuzz-socks5-replay, which
 * replays files and corpus directories without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/util.h"
#include "src/net/socks5.h"
#include "replay.h"

/* Feed data in chunks (step 0: all that is left each time). */
static enum socks5_result handshake(struct socks5_parser *p, const uint8_t *data, size_t size,
				    size_t step, size_t *consumed, int *greetings)
{
	socks5_parser_init(p);
	size_t off = 0;
	enum socks5_result r = SOCKS5_NEED_MORE;
	*greetings = 0;
	while (off < size) {
		size_t chunk = step ? 1 + (data[off] % step) : size - off;
		if (chunk > size - off)
			chunk = size - off;
		size_t used = 0;
		r = socks5_feed(p, data + off, chunk, &used);
		if (used > chunk)
			abort();
		off += used;
		if (r == SOCKS5_GREETING) {
			if (p->reply_len != 2 || p->reply[0] != 5 || p->reply[1] != 0)
				abort();
			(*greetings)++;
			continue;
		}
		if (r != SOCKS5_NEED_MORE)
			break;
		if (used != chunk)
			abort();
	}
	if (r == SOCKS5_GREETING)
		r = socks5_feed(p, NULL, 0, NULL);
	*consumed = off;
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct socks5_parser a, b;
	size_t ua, ub;
	int ga, gb;
	enum socks5_result ra = handshake(&a, data, size, 0, &ua, &ga);
	enum socks5_result rb = handshake(&b, data, size, 7, &ub, &gb);
	if (ra != rb || ua != ub || ga != gb || a.code != b.code || strcmp(a.reason, b.reason) != 0 ||
	    a.reply_len != b.reply_len || memcmp(a.reply, b.reply, a.reply_len) != 0)
		abort();
	if (ga > 1 || ua > size || ua > 257 + SOCKS5_REQUEST_MAX)
		abort();

	switch (ra) {
	case SOCKS5_NEED_MORE:
	case SOCKS5_GREETING:
		if (ua != size)
			abort();
		break;
	case SOCKS5_ERROR:
		if (!fuzz_printable(a.reason))
			abort();
		if (a.reply_len == 2) {
			if (ga || a.reply[0] != 5 || a.reply[1] != 0xff)
				abort();
		} else if (a.reply_len == 10) {
			if (!ga || a.reply[0] != 5 || a.reply[1] != a.code || a.code == 0 ||
			    a.reply[3] != 1)
				abort();
		} else if (a.reply_len == 8) {
			if (data[0] != 4 || a.reply[1] != 91)
				abort();
		} else if (a.reply_len != 0) {
			abort();
		}
		if (socks5_feed(&a, data, size, &ua) != SOCKS5_ERROR || ua != 0)
			abort();
		break;
	case SOCKS5_REQUEST: {
		if (!ga || a.port == 0 || a.reply_len != 0 || strcmp(a.host.name, b.host.name) != 0 ||
		    a.port != b.port)
			abort();
		struct net_host h;
		char again[NET_HOST_MAX + 3];
		int n = snprintf(again, sizeof again, a.host.kind == NET_HOST_IPV6 ? "[%s]" : "%s",
				 a.host.name);
		if (net_host_parse(&h, again, (size_t)n, NULL) < 0 || h.kind != a.host.kind ||
		    strcmp(h.name, a.host.name) != 0 || !addr_ip_equal(&h.ip, &a.host.ip))
			abort();
		if (socks5_feed(&a, data, size, &ua) != SOCKS5_REQUEST || ua != 0)
			abort();
		uint8_t out[SOCKS5_REPLY_MAX];
		size_t rl = socks5_reply(out, SOCKS5_SUCCEEDED, &a.host.ip, a.port);
		if (rl != (addr_ip_is_v4(&a.host.ip, NULL) ? 10u : 22u))
			abort();
		break;
	}
	}
	return 0;
}
