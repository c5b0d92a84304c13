/* fuzz_http.c - libFuzzer target for the proxy request-head parser
 * (src/net/http.c). Each input is fed whole and again in chunks whose sizes
 * come from the input itself; both must reach the same result. Then the
 * result's invariants: errors carry a known status and a printable reason;
 * "need more" only below HTTP_HEAD_MAX bytes; complete heads end every line
 * in CRLF and hold a valid host and port, and the head forwarded upstream
 * has CRLF line ends only, no proxy-only headers and exactly one
 * "Connection: close"; the body reader over the bytes after the head agrees
 * with itself fed whole and byte by byte. The same input is also a request
 * inside an intercepted connection (origin mode, to api.test:443 over TLS):
 * whole and in chunks agree, and a complete one's origin head parses again
 * to the same request, same framing, and serialises to itself. Linked with
 * replay.c it is
 * fuzz-http-replay, which replays the seed corpus without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "src/common/util.h"
#include "src/net/http.h"
#include "replay.h"

static struct http_parser whole, parts, reparsed;
static char out[HTTP_FORWARD_MAX];

static void check_forward(const struct http_parser *p)
{
	ssize_t n = http_forward_head(p, out, sizeof out);
	if (p->req.connect) {
		if (n != -1)
			abort();
		return;
	}
	if (n < 0 || (size_t)n > sizeof out)
		abort();
	size_t len = (size_t)n, conn = 0;
	if (len < 4 || memcmp(out + len - 4, "\r\n\r\n", 4) != 0)
		abort();
	for (size_t i = 0; i < len; i++) {
		if (out[i] == '\0')
			abort();
		if (out[i] == '\r' && (i + 1 == len || out[i + 1] != '\n'))
			abort();
		if (out[i] == '\n' && (i == 0 || out[i - 1] != '\r'))
			abort();
		/* header lines */
		if (i > 0 && out[i - 1] == '\n' && i + 2 < len) {
			const char *l = out + i;
			size_t left = len - i;
			if ((left >= 20 && strncasecmp(l, "Proxy-Authorization:", 20) == 0) ||
			    (left >= 17 && strncasecmp(l, "Proxy-Connection:", 17) == 0))
				abort();
			if (left >= 11 && strncasecmp(l, "Connection:", 11) == 0)
				conn++;
			if (l[0] == ' ' || l[0] == '\t')
				abort(); /* folded line */
		}
		/* the head ends once */
		if (i + 4 < len && memcmp(out + i, "\r\n\r\n", 4) == 0)
			abort();
	}
	if (conn != 1 || len < 21 || memcmp(out + len - 21, "Connection: close\r\n\r\n", 21) != 0)
		abort();
	if (http_forward_head(p, out, (size_t)n - 1) != -1)
		abort();
}

/* The body reader over what follows the head: whole and byte by byte agree,
 * and it never takes more than it is given. */
static void check_body(const struct http_request *r, const uint8_t *data, size_t size)
{
	struct http_body_reader a, b;
	http_body_init(&a, r);
	http_body_init(&b, r);
	size_t ua = 0, tb = 0;
	enum http_result ra = http_body_feed(&a, data, size, &ua);
	enum http_result rb = b.state;
	for (size_t i = 0; i < size && rb == HTTP_NEED_MORE; i++) {
		size_t u = 0;
		rb = http_body_feed(&b, data + i, 1, &u);
		if (u > 1)
			abort();
		tb += u;
	}
	if (ra != rb || ua > size)
		abort();
	if (ra == HTTP_COMPLETE && ua != tb)
		abort();
	if (ra == HTTP_NEED_MORE && ua != size)
		abort();
	if (ra == HTTP_ERROR && (a.status != 400 || !a.reason || !fuzz_printable(a.reason) ||
				 strcmp(a.reason, b.reason) != 0))
		abort();
	if (r->body == HTTP_BODY_LENGTH && ra == HTTP_COMPLETE && ua != r->content_length)
		abort();
}

static void origin_init(struct http_parser *p)
{
	static struct net_host api;
	if (!api.name[0] && net_host_parse(&api, "api.test", 8, NULL) < 0)
		abort();
	http_parser_init_origin(p, &api, 443, true);
}

static void check_origin(const uint8_t *data, size_t size)
{
	size_t used = 0;
	origin_init(&whole);
	enum http_result r = http_feed(&whole, data, size, &used);
	origin_init(&parts);
	enum http_result rp = HTTP_NEED_MORE;
	for (size_t off = 0; off < size && rp == HTTP_NEED_MORE;) {
		size_t chunk = 1 + (data[off] & 15), u = 0;
		if (chunk > size - off)
			chunk = size - off;
		rp = http_feed(&parts, data + off, chunk, &u);
		off += chunk;
	}
	if (r != rp || whole.status != parts.status || strcmp(whole.reason, parts.reason) != 0)
		abort();
	if (r == HTTP_ERROR && !fuzz_printable(whole.reason))
		abort();
	if (r != HTTP_COMPLETE)
		return;
	if (whole.req.connect || strcmp(whole.req.host.name, "api.test") != 0 || whole.req.port != 443)
		abort();
	ssize_t n = http_origin_head(&whole, out, sizeof out);
	if (n < 4 || memcmp(out + n - 4, "\r\n\r\n", 4) != 0)
		abort();
	origin_init(&reparsed);
	size_t u2 = 0;
	if (http_feed(&reparsed, out, (size_t)n, &u2) != HTTP_COMPLETE || u2 != (size_t)n ||
	    reparsed.req.body != whole.req.body || reparsed.req.content_length != whole.req.content_length ||
	    strcmp(reparsed.req.method, whole.req.method) != 0 ||
	    http_is_upgrade(&reparsed) != http_is_upgrade(&whole))
		abort();
	static char out2[HTTP_FORWARD_MAX];
	ssize_t n2 = http_origin_head(&reparsed, out2, sizeof out2);
	if (n2 != n || memcmp(out, out2, (size_t)n) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_origin(data, size);

	size_t used = 0;
	http_parser_init(&whole);
	enum http_result r = http_feed(&whole, data, size, &used);

	/* the same bytes in chunks of 1..16 bytes, sizes taken from the data */
	http_parser_init(&parts);
	enum http_result rp = HTTP_NEED_MORE;
	size_t off = 0, total = 0;
	while (off < size && rp == HTTP_NEED_MORE) {
		size_t chunk = 1 + (data[off] & 15);
		if (chunk > size - off)
			chunk = size - off;
		size_t u = 0;
		rp = http_feed(&parts, data + off, chunk, &u);
		if (u > chunk)
			abort();
		total += u;
		off += chunk;
	}
	if (r != rp || whole.status != parts.status || strcmp(whole.reason, parts.reason) != 0)
		abort();

	switch (r) {
	case HTTP_NEED_MORE:
		if (used != size || size >= HTTP_HEAD_MAX)
			abort();
		break;
	case HTTP_ERROR:
		if (!fuzz_printable(whole.reason))
			abort();
		switch (whole.status) {
		case 400: case 413: case 414: case 431: case 501: case 505: break;
		default: abort();
		}
		if (http_error_response(whole.status, whole.reason, out, HTTP_ERROR_RESPONSE_MAX) < 0)
			abort();
		break;
	case HTTP_COMPLETE: {
		if (used != whole.head_len || total != whole.head_len || parts.head_len != used ||
		    used > size || used > HTTP_HEAD_MAX)
			abort();
		if (whole.req.port == 0 || strcmp(whole.req.host.name, parts.req.host.name) != 0)
			abort();
		/* line ends are CRLF only: no bare LF or CR in the head taken */
		for (size_t i = 0; i < used; i++)
			if ((data[i] == '\n' && (i == 0 || data[i - 1] != '\r')) ||
			    (data[i] == '\r' && (i + 1 == used || data[i + 1] != '\n')))
				abort();
		/* the host is canonical: parsing it again changes nothing */
		struct net_host h;
		char again[NET_HOST_MAX + 3];
		int n = snprintf(again, sizeof again,
				 whole.req.host.kind == NET_HOST_IPV6 ? "[%s]" : "%s",
				 whole.req.host.name);
		if (net_host_parse(&h, again, (size_t)n, NULL) < 0 || h.kind != whole.req.host.kind ||
		    strcmp(h.name, whole.req.host.name) != 0)
			abort();
		size_t plen;
		const char *path = http_path(&whole, &plen);
		for (size_t i = 0; i < plen; i++)
			if ((unsigned char)path[i] <= 0x20 || (unsigned char)path[i] >= 0x7f ||
			    path[i] == '#')
				abort();
		check_forward(&whole);
		check_body(&whole.req, data + used, size - used);
		/* nothing more is taken */
		if (http_feed(&whole, "x", 1, &used) != HTTP_COMPLETE || used != 0)
			abort();
		break;
	}
	}
	return 0;
}
