/* test_net_socks5.c - unit tests of the SOCKS5 handshake parser: greetings
 * (no-auth offered or not, SOCKS4, garbage), requests for every address type
 * and command with the exact reply bytes and reasons, incremental and
 * pipelined feeding, and the reply builders. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/socks5.h"
#include "check.h"

#define BYTES(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

static const uint8_t GREET[] = { 5, 1, 0 };

static bool same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	return an == bn && memcmp(a, b, an) == 0;
}

/* Run the whole handshake on buf as one chunk (feeding again after the
 * greeting), and again byte by byte; both must end alike. */
static enum socks5_result run(int line, struct socks5_parser *p, const uint8_t *buf, size_t len,
			      size_t *consumed)
{
	socks5_parser_init(p);
	size_t off = 0, used;
	enum socks5_result r;
	do {
		r = socks5_feed(p, buf + off, len - off, &used);
		off += used;
	} while (r == SOCKS5_GREETING);

	struct socks5_parser q;
	socks5_parser_init(&q);
	enum socks5_result rq = SOCKS5_NEED_MORE;
	size_t qoff = 0;
	for (size_t i = 0; i < len; i++) {
		rq = socks5_feed(&q, buf + i, 1, &used);
		qoff += used;
		if (rq == SOCKS5_REQUEST || rq == SOCKS5_ERROR)
			break;
	}
	if (rq == SOCKS5_GREETING) /* as the whole run does with what is left: nothing */
		rq = socks5_feed(&q, NULL, 0, &used);
	checks++;
	if (r != rq || off != qoff || p->code != q.code || strcmp(p->reason, q.reason) != 0 ||
	    !same_bytes(p->reply, p->reply_len, q.reply, q.reply_len) ||
	    (r == SOCKS5_REQUEST && (strcmp(p->host.name, q.host.name) != 0 || p->port != q.port))) {
		fprintf(stderr, "%s:%d: whole (%d, %zu, %s) and byte-wise (%d, %zu, %s) differ\n",
			__FILE__, line, r, off, p->reason, rq, qoff, q.reason);
		failures++;
	}
	if (consumed)
		*consumed = off;
	return r;
}

static void req_ok(int line, const uint8_t *req, size_t n, enum net_host_kind kind,
		   const char *host, unsigned port)
{
	uint8_t buf[600];
	memcpy(buf, GREET, sizeof GREET);
	memcpy(buf + sizeof GREET, req, n);
	struct socks5_parser p;
	size_t used;
	enum socks5_result r = run(line, &p, buf, sizeof GREET + n, &used);
	checks++;
	if (r != SOCKS5_REQUEST || p.host.kind != kind || strcmp(p.host.name, host) != 0 ||
	    p.port != port || used != sizeof GREET + n || p.atyp != req[3] || p.reply_len != 0) {
		fprintf(stderr, "%s:%d: got %d %s %u (%s), expected %s %u\n", __FILE__, line, r,
			p.host.name, p.port, p.reason, host, port);
		failures++;
	}
}
#define REQ_OK(kind, host, port, ...) req_ok(__LINE__, BYTES(__VA_ARGS__), (kind), (host), (port))

/* A request refused with code, reason, and the 10-byte reply 05 code 00 01 0... */
static void req_bad_n(int line, const uint8_t *req, size_t n, uint8_t code, const char *reason)
{
	uint8_t buf[600];
	memcpy(buf, GREET, sizeof GREET);
	memcpy(buf + sizeof GREET, req, n);
	struct socks5_parser p;
	enum socks5_result r = run(line, &p, buf, sizeof GREET + n, NULL);
	uint8_t want[10] = { 5, code, 0, 1 };
	checks++;
	if (r != SOCKS5_ERROR || p.code != code || strcmp(p.reason, reason) != 0 ||
	    !same_bytes(p.reply, p.reply_len, want, sizeof want)) {
		fprintf(stderr, "%s:%d: got %d code %u \"%s\" (reply %zu bytes), expected code %u \"%s\"\n",
			__FILE__, line, r, p.code, p.reason, p.reply_len, code, reason);
		failures++;
	}
}
#define REQ_BAD(code, reason, ...) req_bad_n(__LINE__, BYTES(__VA_ARGS__), (code), (reason))

static void test_greeting(void)
{
	struct socks5_parser p;
	size_t used;

	socks5_parser_init(&p);
	CHECK(socks5_feed(&p, GREET, sizeof GREET, &used) == SOCKS5_GREETING);
	CHECK(used == 3 && same_bytes(p.reply, p.reply_len, BYTES(5, 0)));
	/* the next feed starts the request and clears the reply */
	CHECK(socks5_feed(&p, BYTES(5), &used) == SOCKS5_NEED_MORE && used == 1 && p.reply_len == 0);

	socks5_parser_init(&p);
	CHECK(socks5_feed(&p, BYTES(5, 3, 2, 1, 0), &used) == SOCKS5_GREETING && used == 5);

	/* all 255 methods, no-auth last */
	uint8_t many[257] = { 5, 255 };
	for (int i = 0; i < 255; i++)
		many[2 + i] = (uint8_t)(254 - i);
	CHECK(run(__LINE__, &p, many, sizeof many, &used) == SOCKS5_NEED_MORE && used == 257);
	socks5_parser_init(&p);
	CHECK(socks5_feed(&p, many, sizeof many, &used) == SOCKS5_GREETING && used == 257);

	/* partial */
	socks5_parser_init(&p);
	CHECK(socks5_feed(&p, BYTES(5), &used) == SOCKS5_NEED_MORE && used == 1);
	CHECK(socks5_feed(&p, BYTES(2, 2), &used) == SOCKS5_NEED_MORE && used == 2);
	CHECK(socks5_feed(&p, NULL, 0, &used) == SOCKS5_NEED_MORE && used == 0);
	CHECK(socks5_feed(&p, BYTES(0, 9), &used) == SOCKS5_GREETING && used == 1);

	/* refusals */
	CHECK(run(__LINE__, &p, BYTES(5, 1, 2), NULL) == SOCKS5_ERROR);
	CHECK(p.code == SOCKS5_NO_ACCEPTABLE_METHOD && same_bytes(p.reply, p.reply_len, BYTES(5, 0xff)));
	CHECK_STR(p.reason, "client requires authentication (only no-auth is offered)");
	CHECK(run(__LINE__, &p, BYTES(5, 0), NULL) == SOCKS5_ERROR);
	CHECK(same_bytes(p.reply, p.reply_len, BYTES(5, 0xff)));
	CHECK_STR(p.reason, "no authentication method offered");
	CHECK(run(__LINE__, &p, BYTES(4, 1, 0, 80, 93, 184, 216, 34, 0), NULL) == SOCKS5_ERROR);
	CHECK(same_bytes(p.reply, p.reply_len, BYTES(0, 91, 0, 0, 0, 0, 0, 0)));
	CHECK_STR(p.reason, "SOCKS4 is not supported, use SOCKS5");
	CHECK(run(__LINE__, &p, (const uint8_t *)"GET / HTTP/1.1\r\n", 16, &used) == SOCKS5_ERROR);
	CHECK(p.reply_len == 0 && p.code == 0 && used == 1);
	CHECK_STR(p.reason, "not a SOCKS5 client");
	CHECK(run(__LINE__, &p, BYTES(0), NULL) == SOCKS5_ERROR && p.reply_len == 0);

	/* nothing more after an error */
	CHECK(socks5_feed(&p, GREET, sizeof GREET, &used) == SOCKS5_ERROR && used == 0);
}

static void test_requests(void)
{
	REQ_OK(NET_HOST_IPV4, "93.184.216.34", 443, 5, 1, 0, 1, 93, 184, 216, 34, 0x01, 0xbb);
	REQ_OK(NET_HOST_IPV4, "0.0.0.0", 65535, 5, 1, 0, 1, 0, 0, 0, 0, 0xff, 0xff);
	REQ_OK(NET_HOST_IPV6, "2001:db8::1", 22, 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0,
	       0, 0, 0, 0, 0, 0, 1, 0, 22);
	REQ_OK(NET_HOST_IPV6, "::ffff:10.0.0.1", 80, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
	       0xff, 10, 0, 0, 1, 0, 80);
	REQ_OK(NET_HOST_NAME, "example.com", 443, 5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
	       '.', 'c', 'o', 'm', 0x01, 0xbb);
	REQ_OK(NET_HOST_NAME, "example.com", 443, 5, 1, 0, 3, 12, 'E', 'x', 'A', 'm', 'p', 'l', 'e',
	       '.', 'C', 'o', 'm', '.', 0x01, 0xbb);
	REQ_OK(NET_HOST_NAME, "a", 1, 5, 1, 0, 3, 1, 'a', 0, 1);
	REQ_OK(NET_HOST_IPV4, "10.1.2.3", 8080, 5, 1, 0, 3, 8, '1', '0', '.', '1', '.', '2', '.', '3',
	       0x1f, 0x90);

	/* longest domains: 253 bytes, or 254 with the trailing dot; 255 is too long */
	uint8_t req[4 + 1 + 255 + 2] = { 5, 1, 0, 3 };
	char name[256];
	for (int i = 0; i < 255; i++)
		name[i] = (i % 64 == 63) ? '.' : 'a';
	name[255] = '\0';
	/* 253: labels 63.63.63.61 */
	req[4] = 253;
	memcpy(req + 5, name, 253);
	req[5 + 253] = 0;
	req[5 + 254] = 80;
	char want[254];
	memcpy(want, name, 253);
	want[253] = '\0';
	req_ok(__LINE__, req, 4 + 1 + 253 + 2, NET_HOST_NAME, want, 80);
	req[4] = 254;
	memcpy(req + 5, name, 253);
	req[5 + 253] = '.';
	req[5 + 254] = 0;
	req[5 + 255] = 80;
	req_ok(__LINE__, req, 4 + 1 + 254 + 2, NET_HOST_NAME, want, 80);
	req[4] = 255;
	memcpy(req + 5, name, 253);
	req[5 + 253] = 'a';
	req[5 + 254] = 'a';
	req[5 + 255] = 0;
	req[5 + 256] = 80;
	req_bad_n(__LINE__, req, sizeof req, SOCKS5_HOST_UNREACHABLE,
		  "bad domain name: host longer than 253 bytes");

	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "empty domain name", 5, 1, 0, 3, 0, 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: space or control byte", 5, 1, 0, 3, 3,
		'a', ' ', 'b', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: space or control byte", 5, 1, 0, 3, 3,
		'a', 0, 'b', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: space or control byte", 5, 1, 0, 3, 2,
		'a', 0x7f, 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: non-ASCII host", 5, 1, 0, 3, 3, 'a',
		0xc3, 0xbc, 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: bad character in host", 5, 1, 0, 3, 3,
		'a', '@', 'b', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: bad character in host", 5, 1, 0, 3, 5,
		'[', ':', ':', '1', ']', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: bad character in host", 5, 1, 0, 3, 3,
		':', ':', '1', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: bad IPv4 address", 5, 1, 0, 3, 5, '1',
		'2', '7', '.', '1', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "bad domain name: empty label in host", 5, 1, 0, 3, 4, 'a',
		'.', '.', 'b', 0, 80);
	REQ_BAD(SOCKS5_HOST_UNREACHABLE, "port 0", 5, 1, 0, 1, 1, 2, 3, 4, 0, 0);
	REQ_BAD(SOCKS5_ATYP_UNSUPPORTED, "address type not supported", 5, 1, 0, 2, 1, 2, 3, 4, 0, 80);
	REQ_BAD(SOCKS5_ATYP_UNSUPPORTED, "address type not supported", 5, 1, 0, 0);
	REQ_BAD(SOCKS5_ATYP_UNSUPPORTED, "address type not supported", 5, 1, 0, 0xff);
	REQ_BAD(SOCKS5_CMD_UNSUPPORTED, "BIND is not supported, only CONNECT", 5, 2, 0, 1, 1, 2, 3,
		4, 0, 80);
	REQ_BAD(SOCKS5_CMD_UNSUPPORTED, "UDP ASSOCIATE is not supported, only CONNECT", 5, 3, 0, 1,
		0, 0, 0, 0, 0, 0);
	REQ_BAD(SOCKS5_CMD_UNSUPPORTED, "unknown command, only CONNECT", 5, 0, 0, 3, 1, 'a', 0, 80);
	REQ_BAD(SOCKS5_GENERAL_FAILURE, "bad SOCKS version in request", 4, 1, 0, 1, 1, 2, 3, 4, 0, 80);
	REQ_BAD(SOCKS5_GENERAL_FAILURE, "bad reserved byte in request", 5, 1, 1, 1, 1, 2, 3, 4, 0, 80);

	/* an unsupported command is refused only once the whole request is in */
	struct socks5_parser p;
	size_t used;
	socks5_parser_init(&p);
	CHECK(socks5_feed(&p, GREET, 3, &used) == SOCKS5_GREETING);
	CHECK(socks5_feed(&p, BYTES(5, 2, 0, 1, 1, 2, 3, 4, 0), &used) == SOCKS5_NEED_MORE && used == 9);
	CHECK(socks5_feed(&p, BYTES(80), &used) == SOCKS5_ERROR && p.code == SOCKS5_CMD_UNSUPPORTED);

	/* pipelined greeting, request and early tunnel data */
	const uint8_t all[] = { 5, 1, 0, 5, 1, 0, 1, 192, 0, 2, 1, 0, 80, 'h', 'i' };
	socks5_parser_init(&p);
	CHECK(socks5_feed(&p, all, sizeof all, &used) == SOCKS5_GREETING && used == 3);
	CHECK(same_bytes(p.reply, p.reply_len, BYTES(5, 0)));
	CHECK(socks5_feed(&p, all + 3, sizeof all - 3, &used) == SOCKS5_REQUEST && used == 10);
	CHECK_STR(p.host.name, "192.0.2.1");
	CHECK(p.port == 80 && p.reply_len == 0);
	CHECK(socks5_feed(&p, all + 13, 2, &used) == SOCKS5_REQUEST && used == 0);
}

static void test_replies(void)
{
	uint8_t out[SOCKS5_REPLY_MAX];
	struct addr_ip ip;
	addr_ip_from_v4(&ip, (const uint8_t[]){ 10, 0, 0, 1 });
	size_t n = socks5_reply(out, SOCKS5_SUCCEEDED, &ip, 5555);
	CHECK(same_bytes(out, n, BYTES(5, 0, 0, 1, 10, 0, 0, 1, 0x15, 0xb3)));
	uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 9 };
	addr_ip_from_v6(&ip, v6);
	n = socks5_reply(out, SOCKS5_SUCCEEDED, &ip, 443);
	CHECK(same_bytes(out, n, BYTES(5, 0, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
				      0, 0, 0, 9, 0x01, 0xbb)));
	CHECK(n == SOCKS5_REPLY_MAX);
	n = socks5_reply(out, SOCKS5_NOT_ALLOWED, NULL, 1234);
	CHECK(same_bytes(out, n, BYTES(5, 2, 0, 1, 0, 0, 0, 0, 0, 0)));
	n = socks5_reply(out, SOCKS5_HOST_UNREACHABLE, NULL, 0);
	CHECK(same_bytes(out, n, BYTES(5, 4, 0, 1, 0, 0, 0, 0, 0, 0)));
	n = socks5_reply(out, SOCKS5_REFUSED, NULL, 0);
	CHECK(same_bytes(out, n, BYTES(5, 5, 0, 1, 0, 0, 0, 0, 0, 0)));
	n = socks5_reply(out, SOCKS5_CMD_UNSUPPORTED, NULL, 0);
	CHECK(same_bytes(out, n, BYTES(5, 7, 0, 1, 0, 0, 0, 0, 0, 0)));
	n = socks5_reply(out, SOCKS5_ATYP_UNSUPPORTED, NULL, 0);
	CHECK(same_bytes(out, n, BYTES(5, 8, 0, 1, 0, 0, 0, 0, 0, 0)));

	CHECK(socks5_code_for_errno(ECONNREFUSED) == SOCKS5_REFUSED);
	CHECK(socks5_code_for_errno(ENETUNREACH) == SOCKS5_NET_UNREACHABLE);
	CHECK(socks5_code_for_errno(EHOSTUNREACH) == SOCKS5_HOST_UNREACHABLE);
	CHECK(socks5_code_for_errno(ETIMEDOUT) == SOCKS5_HOST_UNREACHABLE);
	CHECK(socks5_code_for_errno(EACCES) == SOCKS5_NOT_ALLOWED);
	CHECK(socks5_code_for_errno(EPERM) == SOCKS5_NOT_ALLOWED);
	CHECK(socks5_code_for_errno(EIO) == SOCKS5_GENERAL_FAILURE);
	CHECK(socks5_code_for_errno(0) == SOCKS5_GENERAL_FAILURE);
}

int main(void)
{
	test_greeting();
	test_requests();
	test_replies();
	return check_status_counted("test-net-socks5");
}
