/* test_net_http.c - unit tests of the proxy request-head parser: CONNECT and
 * absolute-form requests, every refusal with its exact status and reason,
 * the size limits at their edges, incremental feeding (whole, byte by byte),
 * the head forwarded upstream and the refusal response; origin mode (the
 * requests inside an intercepted connection) and its head. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/http.h"
#include "check.h"

static struct http_parser P, Q; /* 17 KiB each: not on the stack */

/* Origin mode for the feeds below when origin.on: the connection's
 * destination (host NULL when any_host), port and TLS. */
static struct {
	bool on, tls, any_host;
	struct net_host host;
	uint16_t port;
} origin;

static void init(struct http_parser *p)
{
	if (origin.on)
		http_parser_init_origin(p, origin.any_host ? NULL : &origin.host, origin.port,
					origin.tls);
	else
		http_parser_init(p);
}

/* Feed text whole into P and byte by byte into Q; both must agree on the
 * result, status, reason and head length. Returns P's result. */
static enum http_result feed_both(int line, const char *text, size_t len)
{
	size_t used = 0;
	init(&P);
	enum http_result r = http_feed(&P, text, len, &used);
	init(&Q);
	enum http_result rq = HTTP_NEED_MORE;
	size_t total = 0;
	for (size_t i = 0; i < len && rq == HTTP_NEED_MORE; i++) {
		size_t u = 0;
		rq = http_feed(&Q, text + i, 1, &u);
		total += u;
	}
	checks++;
	if (r != rq || P.status != Q.status || strcmp(P.reason, Q.reason) != 0 ||
	    P.head_len != Q.head_len) {
		fprintf(stderr, "%s:%d: whole (%d %d %s) and byte-wise (%d %d %s) feeding differ\n",
			__FILE__, line, r, P.status, P.reason, rq, Q.status, Q.reason);
		failures++;
	}
	if (r == HTTP_COMPLETE) {
		checks++;
		if (used != P.head_len || total != P.head_len) {
			fprintf(stderr, "%s:%d: used %zu/%zu, head_len %zu\n", __FILE__, line, used,
				total, P.head_len);
			failures++;
		}
	}
	return r;
}

static void ok_n(int line, const char *text, size_t len, const char *method, const char *host,
		 unsigned port, const char *path)
{
	enum http_result r = feed_both(line, text, len);
	checks++;
	if (r != HTTP_COMPLETE) {
		fprintf(stderr, "%s:%d: not complete: %d %d %s\n", __FILE__, line, r, P.status,
			P.reason);
		failures++;
		return;
	}
	size_t plen;
	const char *pp = http_path(&P, &plen);
	checks++;
	if (strcmp(P.req.method, method) != 0 || strcmp(P.req.host.name, host) != 0 ||
	    P.req.port != port || plen != strlen(path) || memcmp(pp, path, plen) != 0) {
		fprintf(stderr, "%s:%d: got %s %s %u \"%.*s\", expected %s %s %u \"%s\"\n", __FILE__,
			line, P.req.method, P.req.host.name, P.req.port, (int)plen, pp, method, host,
			port, path);
		failures++;
	}
}
#define OK(text, method, host, port, path) ok_n(__LINE__, (text), strlen(text), (method), (host), (port), (path))

static void err_n(int line, const char *text, size_t len, int status, const char *reason)
{
	enum http_result r = feed_both(line, text, len);
	checks++;
	if (r != HTTP_ERROR || P.status != status || strcmp(P.reason, reason) != 0) {
		fprintf(stderr, "%s:%d: got %d %d \"%s\", expected error %d \"%s\"\n", __FILE__, line,
			r, P.status, P.reason, status, reason);
		failures++;
	}
}
#define ERR(text, status, reason) err_n(__LINE__, (text), strlen(text), (status), (reason))
/* a literal with NUL bytes in it */
#define ERR_BIN(lit, status, reason) err_n(__LINE__, (lit), sizeof(lit) - 1, (status), (reason))

static void test_ok(void)
{
	OK("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "CONNECT",
	   "example.com", 443, "");
	CHECK(P.req.connect && P.req.port_given && P.req.version_minor == 1);
	CHECK(P.req.host.kind == NET_HOST_NAME && P.req.body == HTTP_BODY_NONE);
	CHECK(P.head_len == strlen("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"));
	OK("CONNECT Example.COM.:22 HTTP/1.0\r\n\r\n", "CONNECT", "example.com", 22, "");
	CHECK(P.req.version_minor == 0);
	OK("CONNECT a.example:443 HTTP/1.1\r\nHost: A.Example\r\n\r\n", "CONNECT", "a.example", 443, "");
	OK("CONNECT [2001:DB8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n", "CONNECT",
	   "2001:db8::1", 443, "");
	CHECK(P.req.host.kind == NET_HOST_IPV6);
	OK("CONNECT 192.0.2.1:8443 HTTP/1.1\r\n\r\n", "CONNECT", "192.0.2.1", 8443, "");
	CHECK(P.req.host.kind == NET_HOST_IPV4);
	OK("CONNECT a.example:443 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "CONNECT", "a.example", 443, "");

	OK("GET http://example.com/path?q=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
	   "GET", "example.com", 80, "/path?q=1");
	CHECK(!P.req.connect && !P.req.port_given && P.req.body == HTTP_BODY_NONE);
	CHECK(P.nfields == 2);
	OK("GET HTTP://Example.COM:8080 HTTP/1.0\r\n\r\n", "GET", "example.com", 8080, "");
	CHECK(P.req.port_given);
	OK("GET http://example.com:/x HTTP/1.1\r\n\r\n", "GET", "example.com", 80, "/x");
	CHECK(!P.req.port_given);
	OK("GET http://example.com?x=1 HTTP/1.1\r\n\r\n", "GET", "example.com", 80, "?x=1");
	OK("GET http://example.com/p#frag HTTP/1.1\r\n\r\n", "GET", "example.com", 80, "/p");
	OK("GET http://example.com#frag HTTP/1.1\r\n\r\n", "GET", "example.com", 80, "");
	OK("GET http://[::1]:8080/x HTTP/1.1\r\nHost: [0:0::1]:8080\r\n\r\n", "GET", "::1", 8080, "/x");
	OK("GET http://example.com/ HTTP/1.1\r\nHost: example.com:80\r\n\r\n", "GET", "example.com", 80, "/");
	OK("GET http://example.com:80/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET", "example.com", 80, "/");
	OK("\r\n\r\nGET http://example.com/ HTTP/1.1\r\n\r\n", "GET", "example.com", 80, "/");
	OK("GET http://example.com/ HTTP/1.9\r\n\r\n", "GET", "example.com", 80, "/");
	CHECK(P.req.version_minor == 9);
	OK("PROPFIND http://dav.example/a HTTP/1.1\r\n\r\n", "PROPFIND", "dav.example", 80, "/a");
	OK("M-SEARCH_x! http://a.example/ HTTP/1.1\r\n\r\n", "M-SEARCH_x!", "a.example", 80, "/");
	OK("GET http://a.example/ HTTP/1.1\r\nX-Bytes: caf\xc3\xa9\t \r\nX-Empty:\r\n\r\n", "GET",
	   "a.example", 80, "/");
	CHECK(P.fields[0].value_len == 5 && P.fields[1].value_len == 0);
	OK("POST http://a.example/up HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "POST", "a.example", 80, "/up");
	CHECK(P.req.body == HTTP_BODY_LENGTH && P.req.content_length == 5);
	OK("POST http://a.example/up HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "POST", "a.example", 80, "/up");
	CHECK(P.req.body == HTTP_BODY_NONE && P.req.content_length == 0);
	OK("POST http://a.example/up HTTP/1.1\r\nContent-Length: 1099511627776\r\n\r\n", "POST",
	   "a.example", 80, "/up");
	CHECK(P.req.content_length == HTTP_CONTENT_LENGTH_MAX);
	OK("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", "POST",
	   "a.example", 80, "/");
	CHECK(P.req.body == HTTP_BODY_CHUNKED);
	OK("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "POST",
	   "a.example", 80, "/");
	CHECK(P.req.body == HTTP_BODY_CHUNKED);

	/* bytes after the head are not taken */
	const char *t = "POST http://a.example/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
	size_t used = 0;
	http_parser_init(&P);
	CHECK(http_feed(&P, t, strlen(t), &used) == HTTP_COMPLETE);
	CHECK(used == strlen(t) - 5 && P.head_len == used);
	/* and nothing more after completion */
	CHECK(http_feed(&P, "x", 1, &used) == HTTP_COMPLETE && used == 0);
	CHECK(http_feed(&P, "x", 1, NULL) == HTTP_COMPLETE);
}

static void test_errors(void)
{
	ERR("GET /index.html HTTP/1.1\r\n\r\n", 400, "not an absolute URL (configure this as a proxy)");
	ERR("OPTIONS * HTTP/1.1\r\n\r\n", 400, "not an absolute URL (configure this as a proxy)");
	ERR("GET example.com:80 HTTP/1.1\r\n\r\n", 400, "not an absolute URL (configure this as a proxy)");
	ERR("GET https://example.com/ HTTP/1.1\r\n\r\n", 501, "https URL: use CONNECT");
	ERR("GET ftp://example.com/ HTTP/1.1\r\n\r\n", 501, "unsupported URL scheme");
	ERR("GET ://example.com/ HTTP/1.1\r\n\r\n", 400, "bad URL scheme");
	ERR("GET 1http://example.com/ HTTP/1.1\r\n\r\n", 400, "bad URL scheme");
	ERR("GET ht?tp://example.com/ HTTP/1.1\r\n\r\n", 400, "bad URL scheme");
	ERR("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", 400, "userinfo in URL");
	ERR("GET http://example.com@evil.example/ HTTP/1.1\r\n\r\n", 400, "userinfo in URL");
	ERR("GET http://example.com:99999/ HTTP/1.1\r\n\r\n", 400, "bad port in URL");
	ERR("GET http://example.com:0/ HTTP/1.1\r\n\r\n", 400, "bad port in URL");
	ERR("GET http://example.com:8o/ HTTP/1.1\r\n\r\n", 400, "bad port in URL");
	ERR("GET http:/// HTTP/1.1\r\n\r\n", 400, "bad host in URL: empty host");
	ERR("GET http://[::1/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: bad IPv6 address");
	ERR("GET http://[::1]x/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: junk after ']'");
	ERR("GET http://::1/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: IPv6 address needs brackets");
	ERR("GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: IPv6 zone not allowed");
	ERR("GET http://127.1/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: bad IPv4 address");
	ERR("GET http://2130706433/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: bad IPv4 address");
	ERR("GET http://a..example/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: empty label in host");
	ERR("GET http://%65xample.com/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: percent-encoding in host");
	ERR("GET http://b\xc3\xbc"
	    "cher.example/ HTTP/1.1\r\n\r\n",
	    400, "bad character in request target");
	ERR("GET http://a.example/\x01 HTTP/1.1\r\n\r\n", 400, "bad character in request target");
	ERR("GET http://a.example/\x7f HTTP/1.1\r\n\r\n", 400, "bad character in request target");

	ERR("CONNECT example.com HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT example.com: HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT example.com:https HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT example.com:443/x HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT http://example.com:443 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT /x HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT u@example.com:443 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port");
	ERR("CONNECT [::1]443 HTTP/1.1\r\n\r\n", 400, "bad host in CONNECT: junk after ']'");
	ERR("CONNECT 0x7f000001:443 HTTP/1.1\r\n\r\n", 400, "bad host in CONNECT: bad IPv4 address");
	ERR("CONNECT *.example.com:443 HTTP/1.1\r\n\r\n", 400, "bad host in CONNECT: bad character in host");
	ERR("connect example.com:443 HTTP/1.1\r\n\r\n", 400, "not an absolute URL (configure this as a proxy)");

	ERR("CONNECT example.com:443 HTTP/2.0\r\n\r\n", 505, "HTTP version not supported");
	ERR("CONNECT example.com:443 HTTP/0.9\r\n\r\n", 505, "HTTP version not supported");
	ERR("CONNECT example.com:443 HTTP/1.1x\r\n\r\n", 400, "malformed HTTP version");
	ERR("CONNECT example.com:443 http/1.1\r\n\r\n", 400, "malformed HTTP version");
	ERR("CONNECT example.com:443 HTTP/1\r\n\r\n", 400, "malformed HTTP version");
	ERR("CONNECT example.com:443 HTTP/11.1\r\n\r\n", 400, "malformed HTTP version");
	ERR("CONNECT example.com:443\r\n\r\n", 400, "malformed request line");
	ERR("CONNECT  example.com:443 HTTP/1.1\r\n\r\n", 400, "malformed request line");
	ERR("CONNECT example.com:443  HTTP/1.1\r\n\r\n", 400, "malformed request line");
	ERR("CONNECT example.com:443 HTTP/1.1 x\r\n\r\n", 400, "malformed request line");
	ERR(" GET http://a.example/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	ERR("GET\r\n\r\n", 400, "malformed request line");
	ERR("G(T http://a.example/ HTTP/1.1\r\n\r\n", 400, "bad method");
	ERR("G\tT http://a.example/ HTTP/1.1\r\n\r\n", 400, "bad method");
	ERR("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG http://a.example/ HTTP/1.1\r\n\r\n", 400, "bad method");
	OK("ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF http://a.example/ HTTP/1.1\r\n\r\n",
	   "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEF", "a.example", 80, "/");

	ERR_BIN("GET http://a\0.example/ HTTP/1.1\r\n\r\n", 400, "NUL byte in request head");
	ERR_BIN("GET http://a.example/ HTTP/1.1\r\nX: a\0b\r\n\r\n", 400, "NUL byte in request head");
	ERR_BIN("\0", 400, "NUL byte in request head");
	ERR("GET http://a.example/ HTTP/1.1\rX: y\r\n\r\n", 400, "CR without LF");
	ERR("GET http://a.example/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "CR without LF");
	ERR("GET http://a.example/ HTTP/1.1\r\nX: a\r\r\n\r\n", 400, "CR without LF");
	ERR("GET http://a.example/ HTTP/1.1\r\n\r\r\n", 400, "CR without LF");
	/* line ends are CRLF only (http.h says why): a bare LF anywhere in the
	 * head is refused, at the LF, before the line it ends is read */
	ERR("GET http://example.com/ HTTP/1.1\nHost: example.com\n\n", 400, "LF without CR");
	ERR("GET http://example.com/ HTTP/1.1\n\r\n", 400, "LF without CR");
	ERR("GET http://example.com/ HTTP/1.1\r\nHost: example.com\n\r\n", 400, "LF without CR");
	ERR("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\n", 400, "LF without CR");
	ERR("GET http://example.com/ HTTP/1.1\r\nX: a\nHost: b.example\r\n\r\n", 400, "LF without CR");
	ERR("\nGET http://example.com/ HTTP/1.1\r\n\r\n", 400, "LF without CR");
	ERR("\r\n\nGET http://example.com/ HTTP/1.1\r\n\r\n", 400, "LF without CR");
	ERR("CONNECT example.com:443 HTTP/1.1\n\n", 400, "LF without CR");
	ERR("GET http://example.com/ HTTP/1.1\r\n\r\r\n", 400, "CR without LF");
	/* the refusal comes at the LF: the bytes before it are taken, it is not */
	size_t taken = 0;
	http_parser_init(&P);
	CHECK(http_feed(&P, "GET http://example.com/ HTTP/1.1\n", 33, &taken) == HTTP_ERROR &&
	      P.status == 400 && taken == 32);
	/* a CRLF split between two reads is still one line end */
	http_parser_init(&P);
	CHECK(http_feed(&P, "CONNECT a.example:443 HTTP/1.1\r", 31, NULL) == HTTP_NEED_MORE);
	CHECK(http_feed(&P, "\n\r", 2, NULL) == HTTP_NEED_MORE);
	CHECK(http_feed(&P, "\n", 1, NULL) == HTTP_COMPLETE && P.head_len == 34);

	ERR("GET http://a.example/ HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n", 400, "obsolete line folding");
	ERR("GET http://a.example/ HTTP/1.1\r\nX-A: 1\r\n\tfolded\r\n\r\n", 400, "obsolete line folding");
	ERR("GET http://a.example/ HTTP/1.1\r\n Host: a.example\r\n\r\n", 400, "obsolete line folding");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost : a.example\r\n\r\n", 400, "whitespace before colon");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost\t: a.example\r\n\r\n", 400, "whitespace before colon");
	ERR("GET http://a.example/ HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "bad header name");
	ERR("GET http://a.example/ HTTP/1.1\r\nX\xc3\xa9: x\r\n\r\n", 400, "bad header name");
	ERR("GET http://a.example/ HTTP/1.1\r\nNoColon\r\n\r\n", 400, "malformed header line");
	ERR("GET http://a.example/ HTTP/1.1\r\n: value\r\n\r\n", 400, "malformed header line");
	ERR("GET http://a.example/ HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400, "bad character in header value");
	ERR("GET http://a.example/ HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400, "bad character in header value");

	ERR("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nhost: a.example\r\n\r\n", 400,
	    "duplicate Host header");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n", 400, "Host header disagrees with URL (a.example:80, Host b.example:80)");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", 400, "Host header disagrees with URL (a.example:80, Host a.example:8080)");
	ERR("GET http://a.example:8080/ HTTP/1.1\r\nHost: a.example\r\n\r\n", 400, "Host header disagrees with URL (a.example:8080, Host a.example:80)");
	ERR("GET http://192.0.2.1/ HTTP/1.1\r\nHost: [::ffff:192.0.2.1]\r\n\r\n", 400, "Host header disagrees with URL (192.0.2.1:80, Host [::ffff:192.0.2.1]:80)");
	ERR("CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:444\r\n\r\n", 400, "Host header disagrees with URL (a.example:443, Host a.example:444)");
	ERR("CONNECT a.example:443 HTTP/1.1\r\nHost: b.example\r\n\r\n", 400, "Host header disagrees with URL (a.example:443, Host b.example:443)");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost: u@a.example\r\n\r\n", 400, "bad Host header");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost:\r\n\r\n", 400, "bad Host header");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost: a.example:x\r\n\r\n", 400, "bad Host header");
	ERR("GET http://a.example/ HTTP/1.1\r\nHost: a.example, b.example\r\n\r\n", 400, "bad Host header");

	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400,
	    "duplicate Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400, "bad Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400, "bad Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "bad Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n", 400, "bad Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length:\r\n\r\n", 400, "bad Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", 400, "bad Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: 1099511627777\r\n\r\n", 413,
	    "Content-Length too large");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n", 413,
	    "Content-Length too large");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	    400, "Transfer-Encoding with Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	    400, "Transfer-Encoding with Content-Length");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	    400, "duplicate Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: ,chunked\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked;x=1\r\n\r\n", 501, "unsupported Transfer-Encoding");
	ERR("CONNECT a.example:443 HTTP/1.1\r\nContent-Length: 1\r\n\r\n", 400, "body on CONNECT");
	ERR("CONNECT a.example:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "body on CONNECT");

	/* errors surface as soon as their line is in, before the head ends */
	http_parser_init(&P);
	CHECK(http_feed(&P, "GET /x HTTP/1.1\r\n", 17, NULL) == HTTP_ERROR && P.status == 400);
	CHECK(http_feed(&P, "Host: x\r\n\r\n", 11, NULL) == HTTP_ERROR);
	http_parser_init(&P);
	size_t used = 99;
	CHECK(http_feed(&P, "CONNECT a.example:443 HTTP/1.1\r\n", 32, &used) == HTTP_NEED_MORE && used == 32);
	CHECK(http_feed(&P, "", 0, &used) == HTTP_NEED_MORE && used == 0);
	CHECK(http_feed(&P, "X: \x02\r\n", 6, &used) == HTTP_ERROR && P.status == 400);
	CHECK(http_feed(&P, "\r\n", 2, &used) == HTTP_ERROR && used == 0);
}

static char big[HTTP_HEAD_MAX * 2];

static void test_limits(void)
{
	/* request line: 8192 bytes pass, 8193 do not */
	const char *pre = "GET http://a.example/", *post = " HTTP/1.1";
	size_t fill = HTTP_REQUEST_LINE_MAX - strlen(pre) - strlen(post);
	int n = snprintf(big, sizeof big, "%s%0*d%s\r\n\r\n", pre, (int)fill, 0, post);
	feed_both(__LINE__, big, (size_t)n);
	CHECK(P.state == HTTP_COMPLETE && P.head_len == (size_t)n);
	CHECK(http_path(&P, &(size_t){ 0 }) != NULL);
	n = snprintf(big, sizeof big, "%s%0*d%s\r\n\r\n", pre, (int)fill + 1, 0, post);
	err_n(__LINE__, big, (size_t)n, 414, "request line too long");
	/* ... and the error comes before the line ends */
	http_parser_init(&P);
	CHECK(http_feed(&P, big, HTTP_REQUEST_LINE_MAX + 1, NULL) == HTTP_ERROR && P.status == 414);
	/* a CR right at the limit is the line end, not a byte over */
	n = snprintf(big, sizeof big, "%s%0*d%s\r", pre, (int)fill, 0, post);
	http_parser_init(&P);
	CHECK(http_feed(&P, big, (size_t)n, NULL) == HTTP_NEED_MORE);

	/* head: exactly 16384 bytes pass, one more does not */
	const char *line = "GET http://a.example/ HTTP/1.1\r\n";
	size_t left = HTTP_HEAD_MAX - strlen(line) - 2 /* final CRLF */ - strlen("X: \r\n");
	n = snprintf(big, sizeof big, "%sX: %0*d\r\n\r\n", line, (int)left, 0);
	CHECK((size_t)n == HTTP_HEAD_MAX);
	feed_both(__LINE__, big, (size_t)n);
	CHECK(P.state == HTTP_COMPLETE && P.head_len == HTTP_HEAD_MAX);
	n = snprintf(big, sizeof big, "%sX: %0*d\r\n\r\n", line, (int)left + 1, 0);
	err_n(__LINE__, big, (size_t)n, 431, "request head too large");
	/* a head that never ends */
	memset(big, 'a', sizeof big);
	memcpy(big, line, strlen(line));
	memcpy(big + strlen(line), "X: ", 3);
	err_n(__LINE__, big, sizeof big, 431, "request head too large");
	/* a head that reaches the limit without its end is refused at once, not
	 * left waiting for one more byte: 16383 bytes want more, 16384 are 431 */
	http_parser_init(&P);
	CHECK(http_feed(&P, big, HTTP_HEAD_MAX - 1, NULL) == HTTP_NEED_MORE);
	err_n(__LINE__, big, HTTP_HEAD_MAX, 431, "request head too large");
	/* ... also when the last byte ends a header line */
	n = snprintf(big, sizeof big, "%sX: %0*d\r\n", line, (int)left + 2, 0);
	CHECK((size_t)n == HTTP_HEAD_MAX);
	err_n(__LINE__, big, (size_t)n, 431, "request head too large");
	/* only empty lines */
	for (size_t i = 0; i + 1 < sizeof big; i += 2)
		memcpy(big + i, "\r\n", 2);
	err_n(__LINE__, big, sizeof big, 431, "request head too large");

	/* header lines: 100 pass, 101 do not */
	size_t off = (size_t)snprintf(big, sizeof big, "%s", line);
	for (int i = 0; i < HTTP_HEADERS_MAX; i++)
		off += (size_t)snprintf(big + off, sizeof big - off, "X-%d: %d\r\n", i, i);
	off += (size_t)snprintf(big + off, sizeof big - off, "\r\n");
	feed_both(__LINE__, big, off);
	CHECK(P.state == HTTP_COMPLETE && P.nfields == HTTP_HEADERS_MAX);
	off -= 2;
	off += (size_t)snprintf(big + off, sizeof big - off, "X-last: 1\r\n\r\n");
	err_n(__LINE__, big, off, 431, "too many header lines");
}

/* The upstream head for a request. */
static void fwd(int line, const char *text, const char *want)
{
	static char out[HTTP_FORWARD_MAX];
	enum http_result r = feed_both(line, text, strlen(text));
	ssize_t n = r == HTTP_COMPLETE ? http_forward_head(&P, out, sizeof out) : -1;
	checks++;
	if (n < 0 || (size_t)n != strlen(want) || memcmp(out, want, (size_t)n) != 0) {
		fprintf(stderr, "%s:%d: forwarded head\n  got:      %.*s\n  expected: %s\n", __FILE__,
			line, n < 0 ? 4 : (int)n, n < 0 ? "(-1)" : out, want);
		failures++;
	}
	if (n > 0) {
		/* any smaller buffer fails cleanly */
		checks++;
		if (http_forward_head(&P, out, (size_t)n - 1) != -1 ||
		    http_forward_head(&P, out, (size_t)n) != n) {
			fprintf(stderr, "%s:%d: forward with exact/short buffer\n", __FILE__, line);
			failures++;
		}
	}
}
#define FWD(text, want) fwd(__LINE__, (text), (want))

static void test_forward(void)
{
	FWD("GET http://example.com/a?b=c HTTP/1.1\r\n"
	    "Host: example.com\r\n"
	    "User-Agent: curl/8.0\r\n"
	    "Proxy-Authorization: Basic c2VjcmV0\r\n"
	    "Proxy-Connection: keep-alive\r\n"
	    "Connection: keep-alive\r\n"
	    "Keep-Alive: timeout=5\r\n"
	    "TE: trailers\r\n"
	    "Upgrade: h2c\r\n"
	    "Accept:   */*  \r\n"
	    "\r\n",
	    "GET /a?b=c HTTP/1.1\r\n"
	    "Host: example.com\r\n"
	    "User-Agent: curl/8.0\r\n"
	    "Accept: */*\r\n"
	    "Connection: close\r\n\r\n");
	FWD("GET http://Example.com:8080 HTTP/1.0\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: example.com:8080\r\nConnection: close\r\n\r\n");
	FWD("OPTIONS http://example.com HTTP/1.1\r\n\r\n",
	    "OPTIONS * HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	FWD("OPTIONS http://example.com/x HTTP/1.1\r\n\r\n",
	    "OPTIONS /x HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	FWD("GET http://example.com?q HTTP/1.1\r\n\r\n",
	    "GET /?q HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	FWD("GET http://example.com/p#frag HTTP/1.1\r\n\r\n",
	    "GET /p HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	FWD("GET http://[2001:db8::1]:8080/ HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\nConnection: close\r\n\r\n");
	FWD("GET http://[2001:db8::1]/ HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: [2001:db8::1]\r\nConnection: close\r\n\r\n");
	/* headers the Connection header names go; framing headers stay */
	FWD("POST http://a.example/ HTTP/1.1\r\n"
	    "Connection: X-Secret, content-length , Transfer-Encoding\r\n"
	    "x-secret: 1\r\n"
	    "X-Kept: 2\r\n"
	    "Content-Length: 3\r\n"
	    "connection: X-Other\r\n"
	    "X-Other: 4\r\n"
	    "\r\n",
	    "POST / HTTP/1.1\r\n"
	    "Host: a.example\r\n"
	    "X-Kept: 2\r\n"
	    "Content-Length: 3\r\n"
	    "Connection: close\r\n\r\n");
	FWD("POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: gzip, chunked\r\n"
	    "Connection: close\r\n\r\n");

	/* not forwardable */
	char out[HTTP_FORWARD_MAX];
	http_parser_init(&P);
	CHECK(http_forward_head(&P, out, sizeof out) == -1);
	http_feed(&P, "CONNECT a.example:443 HTTP/1.1\r\n\r\n", 34, NULL);
	CHECK(P.state == HTTP_COMPLETE);
	CHECK(http_forward_head(&P, out, sizeof out) == -1);
	http_parser_init(&P);
	http_feed(&P, "GET /x HTTP/1.1\r\n\r\n", 19, NULL);
	CHECK(http_forward_head(&P, out, sizeof out) == -1);

	/* the largest heads fit HTTP_FORWARD_MAX: 100 header lines without the
	 * space after the colon, each forwarded one byte longer */
	const char *line = "GET http://a.example/ HTTP/1.1\r\n";
	size_t off = (size_t)snprintf(big, sizeof big, "%s", line);
	for (int i = 0; i < HTTP_HEADERS_MAX - 1; i++)
		off += (size_t)snprintf(big + off, sizeof big - off, "X:\r\n");
	size_t left = HTTP_HEAD_MAX - off - 2 - strlen("Y:\r\n");
	off += (size_t)snprintf(big + off, sizeof big - off, "Y:%0*d\r\n\r\n", (int)left, 0);
	CHECK(off == HTTP_HEAD_MAX);
	http_parser_init(&P);
	CHECK(http_feed(&P, big, off, NULL) == HTTP_COMPLETE);
	static char out2[HTTP_FORWARD_MAX];
	ssize_t n = http_forward_head(&P, out2, sizeof out2);
	CHECK(n > HTTP_HEAD_MAX);
	CHECK(n > 0 && memcmp(out2 + n - 21, "Connection: close\r\n\r\n", 21) == 0);
}

static void test_error_response(void)
{
	char out[HTTP_ERROR_RESPONSE_MAX];
	ssize_t n = http_error_response(403, "denied by rule *.evil.example", out, sizeof out);
	const char *want = "HTTP/1.1 403 denied by rule *.evil.example\r\n"
			   "X-Warden-Reason: denied by rule *.evil.example\r\n"
			   "Content-Type: text/plain\r\n"
			   "Content-Length: 38\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "warden: denied by rule *.evil.example\n";
	CHECK(n == (ssize_t)strlen(want));
	CHECK(n > 0 && memcmp(out, want, strlen(want)) == 0);

	n = http_error_response(400, "bad\r\nSet-Cookie: x=1\xff", out, sizeof out);
	CHECK(n > 0);
	CHECK(n > 0 && strncmp(out, "HTTP/1.1 400 bad??Set-Cookie: x=1?\r\n", 36) == 0);
	CHECK(n > 0 && memchr(out, '\n', (size_t)n) == out + 35);

	n = http_error_response(403, NULL, out, sizeof out);
	CHECK(n > 0 && strncmp(out, "HTTP/1.1 403 refused\r\nX-Warden-Reason: refused\r\n", 48) == 0);
	n = http_error_response(403, "", out, sizeof out);
	CHECK(n > 0 && strncmp(out, "HTTP/1.1 403 refused\r\n", 22) == 0);

	/* the longest reason: cut to 200, fits the documented maximum */
	char reason[500];
	memset(reason, 'r', sizeof reason - 1);
	reason[sizeof reason - 1] = '\0';
	n = http_error_response(999, reason, out, sizeof out);
	CHECK(n > 0 && n <= HTTP_ERROR_RESPONSE_MAX);
	CHECK(n > 0 && out[13 + 200] == '\r');
	CHECK(http_error_response(999, reason, out, (size_t)n) == -1);
	CHECK(http_error_response(999, reason, out, (size_t)n + 1) == n);
	CHECK(http_error_response(99, "x", out, sizeof out) == -1);
	CHECK(http_error_response(1000, "x", out, sizeof out) == -1);

	/* every parser reason fits in a status phrase as is */
	ERR("GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n", 400, "bad host in URL: IPv6 zone not allowed");
	n = http_error_response(P.status, P.reason, out, sizeof out);
	CHECK(n > 0 && strncmp(out, "HTTP/1.1 400 bad host in URL: IPv6 zone not allowed\r\n", 53) == 0);
	CHECK(strlen(HTTP_CONNECT_ESTABLISHED) == 39);
}

/* Feed a body whole and byte by byte after a head; both must agree. */
static void body_n(int line, const char *head, const char *body, size_t blen,
		   enum http_result want, size_t want_used, const char *reason)
{
	http_parser_init(&P);
	if (http_feed(&P, head, strlen(head), NULL) != HTTP_COMPLETE) {
		fprintf(stderr, "%s:%d: head not complete: %s\n", __FILE__, line, P.reason);
		failures++;
		return;
	}
	struct http_body_reader a, b;
	http_body_init(&a, &P.req);
	http_body_init(&b, &P.req);
	size_t used = 0, total = 0;
	enum http_result r = http_body_feed(&a, body, blen, &used);
	enum http_result rb = b.state;
	for (size_t i = 0; i < blen && rb == HTTP_NEED_MORE; i++) {
		size_t u = 0;
		rb = http_body_feed(&b, body + i, 1, &u);
		total += u;
	}
	checks++;
	bool ok = r == want && rb == want;
	if (want == HTTP_COMPLETE)
		ok = ok && used == want_used && total == want_used;
	if (want == HTTP_ERROR)
		ok = ok && a.status == 400 && a.reason && b.reason && strcmp(a.reason, reason) == 0 &&
		     strcmp(b.reason, reason) == 0;
	if (!ok) {
		fprintf(stderr, "%s:%d: body: got %d/%d used %zu/%zu \"%s\", expected %d used %zu \"%s\"\n",
			__FILE__, line, r, rb, used, total, a.reason ? a.reason : "", want, want_used,
			reason ? reason : "");
		failures++;
	}
}
#define BODY(head, body, want, used, reason) body_n(__LINE__, (head), (body), strlen(body), (want), (used), (reason))

static void test_body(void)
{
	const char *none = "GET http://a.example/ HTTP/1.1\r\n\r\n";
	const char *cl5 = "POST http://a.example/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
	const char *ch = "POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";

	/* no body: complete before any byte */
	http_parser_init(&P);
	http_feed(&P, none, strlen(none), NULL);
	struct http_body_reader b;
	http_body_init(&b, &P.req);
	size_t used = 9;
	CHECK(b.state == HTTP_COMPLETE);
	CHECK(http_body_feed(&b, "GET", 3, &used) == HTTP_COMPLETE && used == 0);

	BODY(cl5, "hello", HTTP_COMPLETE, 5, NULL);
	BODY(cl5, "helloGET http://evil.example/ HTTP/1.1\r\n\r\n", HTTP_COMPLETE, 5, NULL);
	BODY(cl5, "hel", HTTP_NEED_MORE, 0, NULL);

	const char *c1 = "5\r\nhello\r\n0\r\n\r\n";
	BODY(ch, c1, HTTP_COMPLETE, strlen(c1), NULL);
	BODY(ch, "5\r\nhello\r\n0\r\n\r\nGET http://evil.example/ HTTP/1.1\r\n\r\n", HTTP_COMPLETE,
	     strlen(c1), NULL);
	const char *c2 = "A;name=value\r\n0123456789\r\n1 ;x\r\n!\r\n000\r\nX-Trailer: 1\r\nY: 2\r\n\r\n";
	BODY(ch, c2, HTTP_COMPLETE, strlen(c2), NULL);
	BODY(ch, "5\r\nhello\r\n", HTTP_NEED_MORE, 0, NULL);
	BODY(ch, "0\r\n", HTTP_NEED_MORE, 0, NULL);
	BODY(ch, "0\r\nX: 1\r\n", HTTP_NEED_MORE, 0, NULL);
	BODY(ch, "10000000000\r\n", HTTP_NEED_MORE, 0, NULL); /* 2^40: the largest chunk */

	BODY(ch, "5\nhello", HTTP_ERROR, 0, "LF without CR in chunked body");
	BODY(ch, "5\rhello", HTTP_ERROR, 0, "CR without LF in chunked body");
	BODY(ch, "x\r\n", HTTP_ERROR, 0, "bad chunk size");
	BODY(ch, "\r\n", HTTP_ERROR, 0, "bad chunk size");
	BODY(ch, ";x\r\n", HTTP_ERROR, 0, "bad chunk size");
	BODY(ch, "5 5\r\n", HTTP_ERROR, 0, "bad chunk size");
	BODY(ch, "-5\r\n", HTTP_ERROR, 0, "bad chunk size");
	BODY(ch, "0x5\r\n", HTTP_ERROR, 0, "bad chunk size");
	BODY(ch, "10000000001\r\n", HTTP_ERROR, 0, "chunk too large");
	BODY(ch, "fffffffffffffffffffff\r\n", HTTP_ERROR, 0, "chunk too large");
	BODY(ch, "5\r\nhelloX\r\n", HTTP_ERROR, 0, "chunk data longer than its size");
	BODY(ch, "5\r\nhello\rX", HTTP_ERROR, 0, "CR without LF in chunked body");
	BODY(ch, "5;\x01\r\n", HTTP_ERROR, 0, "bad character in chunked body");
	BODY(ch, "0\r\n folded\r\n\r\n", HTTP_ERROR, 0, "obsolete line folding in trailer");
	BODY(ch, "0\r\nX: 1\nY: 2\r\n\r\n", HTTP_ERROR, 0, "LF without CR in chunked body");
	body_n(__LINE__, ch, "5\r\nhe\0lo\r\n0\r\n\r\n", 15, HTTP_COMPLETE, 15, NULL); /* data is data */
	body_n(__LINE__, ch, "0;\0\r\n", 5, HTTP_ERROR, 0, "bad character in chunked body");

	static char big2[20000];
	int n = snprintf(big2, sizeof big2, "5;%01100d\r\n", 0);
	body_n(__LINE__, ch, big2, (size_t)n, HTTP_ERROR, 0, "chunk size line too long");
	n = snprintf(big2, sizeof big2, "5;%01000d\r\nhello\r\n0\r\n\r\n", 0);
	body_n(__LINE__, ch, big2, (size_t)n, HTTP_COMPLETE, (size_t)n, NULL);
	n = snprintf(big2, sizeof big2, "0\r\nX: %017000d\r\n\r\n", 0);
	body_n(__LINE__, ch, big2, (size_t)n, HTTP_ERROR, 0, "trailer section too large");
}

static void set_origin(const char *host, uint16_t port, bool tls)
{
	const char *why;
	origin.on = true;
	origin.tls = tls;
	origin.port = port;
	origin.any_host = host == NULL;
	if (host && net_host_parse(&origin.host, host, strlen(host), &why) < 0)
		abort();
}

static void origin_head_is(int line, const char *want)
{
	char out[HTTP_FORWARD_MAX];
	ssize_t n = http_origin_head(&P, out, sizeof out);
	checks++;
	if (n < 0 || (size_t)n != strlen(want) || memcmp(out, want, (size_t)n) != 0) {
		fprintf(stderr, "%s:%d: origin head\n  got:      %.*s\n  expected: %s\n", __FILE__,
			line, n < 0 ? 4 : (int)n, n < 0 ? "(-1)" : out, want);
		failures++;
	}
}
#define ORIGIN_HEAD(want) origin_head_is(__LINE__, (want))

static void test_origin(void)
{
	set_origin("api.example.com", 443, true);
	OK("GET /v1/messages?x=1 HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer t\r\n\r\n",
	   "GET", "api.example.com", 443, "/v1/messages?x=1");
	ORIGIN_HEAD("GET /v1/messages?x=1 HTTP/1.1\r\nHost: api.example.com\r\n"
		    "Authorization: Bearer t\r\n\r\n");
	CHECK(!http_is_upgrade(&P));
	/* the proxy's own head is not for origin mode */
	char out[HTTP_FORWARD_MAX];
	CHECK(http_forward_head(&P, out, sizeof out) == -1);
	OK("GET / HTTP/1.1\r\nHost: API.Example.com.:443\r\n\r\n", "GET", "api.example.com", 443, "/");
	OK("GET https://api.example.com/a#f HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "GET",
	   "api.example.com", 443, "/a");
	ORIGIN_HEAD("GET /a HTTP/1.1\r\nHost: api.example.com\r\n\r\n");
	OK("GET https://api.example.com:443?q HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "GET",
	   "api.example.com", 443, "?q");
	ORIGIN_HEAD("GET /?q HTTP/1.1\r\nHost: api.example.com\r\n\r\n");
	OK("OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "OPTIONS", "api.example.com", 443, "*");
	ORIGIN_HEAD("OPTIONS * HTTP/1.1\r\nHost: api.example.com\r\n\r\n");
	/* the client's version, Connection and Upgrade go through */
	OK("GET /ws HTTP/1.1\r\nHost: api.example.com\r\nConnection: keep-alive, Upgrade\r\n"
	   "Upgrade: websocket\r\n\r\n", "GET", "api.example.com", 443, "/ws");
	CHECK(http_is_upgrade(&P));
	ORIGIN_HEAD("GET /ws HTTP/1.1\r\nHost: api.example.com\r\nConnection: keep-alive, Upgrade\r\n"
		    "Upgrade: websocket\r\n\r\n");
	OK("GET /ws HTTP/1.1\r\nHost: api.example.com\r\nUpgrade: websocket\r\n\r\n", "GET",
	   "api.example.com", 443, "/ws");
	CHECK(!http_is_upgrade(&P)); /* no Connection: upgrade */
	OK("GET /ws HTTP/1.1\r\nHost: api.example.com\r\nConnection: upgrades\r\nUpgrade: h2c\r\n\r\n",
	   "GET", "api.example.com", 443, "/ws");
	CHECK(!http_is_upgrade(&P));
	OK("GET / HTTP/1.0\r\nHost: api.example.com\r\n\r\n", "GET", "api.example.com", 443, "/");
	ORIGIN_HEAD("GET / HTTP/1.0\r\nHost: api.example.com\r\n\r\n");
	OK("POST /up HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n", "POST",
	   "api.example.com", 443, "/up");
	CHECK(P.req.body == HTTP_BODY_CHUNKED);

	ERR("GET / HTTP/1.1\r\n\r\n", 400, "missing Host header");
	ERR("GET / HTTP/1.0\r\n\r\n", 400, "missing Host header");
	ERR("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", 400, "Host header disagrees with the connection");
	ERR("GET / HTTP/1.1\r\nHost: api.example.com:8443\r\n\r\n", 400,
	    "Host header disagrees with the connection");
	ERR("GET / HTTP/1.1\r\nHost: u@api.example.com\r\n\r\n", 400,
	    "Host header disagrees with the connection");
	ERR("GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: api.example.com\r\n\r\n", 400,
	    "duplicate Host header");
	ERR("GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400,
	    "bad request target");
	ERR("GET https://evil.example/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400,
	    "URL disagrees with the connection");
	ERR("GET x HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400, "bad request target");
	ERR("GET * HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400, "bad request target");
	ERR("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400,
	    "CONNECT inside an intercepted connection");
	/* smuggling: the same strictness as the proxy's own requests */
	ERR("POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding with Content-Length");
	ERR("POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
	    400, "duplicate Content-Length");
	ERR("GET / HTTP/1.1\nHost: api.example.com\r\n\r\n", 400, "LF without CR");
	ERR("GET / HTTP/1.1\r\nHost: api.example.com\r\n X: folded\r\n\r\n", 400, "obsolete line folding");
	ERR("POST / HTTP/1.0\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	    "Transfer-Encoding in HTTP/1.0");

	/* plain, a port of its own, IP literals */
	set_origin("127.0.0.1", 4000, false);
	OK("GET / HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\n", "GET", "127.0.0.1", 4000, "/");
	OK("GET http://127.0.0.1:4000/x HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\n", "GET", "127.0.0.1",
	   4000, "/x");
	ERR("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400, "Host header disagrees with the connection");
	ERR("GET https://127.0.0.1:4000/ HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\n", 400,
	    "bad request target");
	set_origin("[::1]", 80, false);
	OK("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", "GET", "::1", 80, "/");
	/* any Host: a destination fixed by the connection */
	set_origin(NULL, 4000, false);
	OK("GET / HTTP/1.1\r\nHost: localhost:4000\r\n\r\n", "GET", "", 4000, "/");
	OK("GET / HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\n", "GET", "", 4000, "/");
	ERR("GET / HTTP/1.1\r\n\r\n", 400, "missing Host header");
	ERR("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "Host header disagrees with the connection");
	origin.on = false;
}

int main(void)
{
	test_ok();
	test_errors();
	test_limits();
	test_forward();
	test_error_response();
	test_body();
	test_origin();
	return check_status_counted("test-net-http");
}
