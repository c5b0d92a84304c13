/* test_net_http_resp.c - unit tests of the response watcher
 * (src/net/http_resp.c): where responses end for each framing (Content-Length,
 * chunked, none for HEAD, 204 and 304, until the close), interim 1xx, the
 * 101 switch and the bytes after it, pipelined responses in one read, and
 * what it gives up on; every stream fed whole and byte by byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/http_resp.h"
#include "check.h"

/* Feed stream in pieces of at most step bytes; the HEAD flags of the
 * requests answered come from heads ("HGG": HEAD, GET, GET). Writes what
 * happened into out: "200 " for each DONE, "S101+N " for a SWITCH with N
 * bytes after it, "L" for LOST, then "|" and what http_resp_eof says
 * ("M", "D", "S", "L") and "i" when idle before that. */
static void run(const char *stream, size_t len, const char *heads, size_t step, char *out,
		size_t cap)
{
	struct http_resp r;
	http_resp_init(&r);
	size_t nh = 0, o = 0;
	http_resp_next(&r, heads[0] == 'H');
	bool stop = false;
	out[0] = '\0';
	for (size_t off = 0; off < len && !stop;) {
		size_t n = len - off < step ? len - off : step, used = 0;
		enum http_resp_event ev = http_resp_feed(&r, stream + off, n, &used);
		off += used;
		if (ev == HTTP_RESP_DONE) {
			o += (size_t)snprintf(out + o, cap - o, "%d ", r.status);
			nh++;
			http_resp_next(&r, nh < strlen(heads) && heads[nh] == 'H');
		} else if (ev == HTTP_RESP_SWITCH) {
			o += (size_t)snprintf(out + o, cap - o, "S%d+%zu ", r.status, len - off);
			stop = true;
		} else if (ev == HTTP_RESP_LOST) {
			o += (size_t)snprintf(out + o, cap - o, "L");
			stop = true;
		}
	}
	bool idle = http_resp_idle(&r);
	enum http_resp_event e = http_resp_eof(&r);
	snprintf(out + o, cap - o, "|%s%c", idle ? "i" : "", "MDSL"[e]);
}

static void expect(int line, const char *stream, size_t len, const char *heads, const char *want)
{
	char whole[256], bytes[256];
	run(stream, len, heads, len ? len : 1, whole, sizeof whole);
	run(stream, len, heads, 1, bytes, sizeof bytes);
	checks++;
	if (strcmp(whole, want) != 0 || strcmp(bytes, want) != 0) {
		fprintf(stderr, "%s:%d: got \"%s\" whole, \"%s\" byte by byte, expected \"%s\"\n",
			__FILE__, line, whole, bytes, want);
		failures++;
	}
}
#define EXPECT(stream, heads, want) expect(__LINE__, (stream), strlen(stream), (heads), (want))

int main(void)
{
	EXPECT("", "G", "|iM");
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "G", "200 |iM");
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "G", "|L");
	EXPECT("HTTP/1.1 200 OK\r\ncontent-length:  0 \r\n\r\n", "G", "200 |iM");
	/* pipelined, the second one to HEAD: its Content-Length is no body */
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
	       "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
	       "HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx", "GHG", "200 200 404 |iM");
	EXPECT("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n"
	       "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n", "GG", "204 304 |iM");
	/* chunked, with a trailer, SSE-like */
	EXPECT("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	       "7\r\ndata: 1\r\n7\r\ndata: 2\r\n0\r\nX-T: 1\r\n\r\n", "G", "200 |iM");
	EXPECT("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n"
	       "3\r\nabc\r\n0\r\n\r\n", "G", "200 |iM");
	/* until the close: no framing, or a last coding that is not chunked */
	EXPECT("HTTP/1.1 200 OK\r\n\r\nanything HTTP/1.1 200 OK\r\n\r\n", "G", "|D");
	EXPECT("HTTP/1.0 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx", "G", "|D");
	/* interim responses, then the final one */
	EXPECT("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
	       "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", "G", "201 |iM");
	/* the switch, and what follows it is not looked at */
	EXPECT("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x02hi", "G",
	       "S101+4 |S");
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 101 Switching\r\n\r\n", "GG",
	       "200 S101+0 |S");
	/* leniency: LF line ends, a status without a reason, blank lines between */
	EXPECT("HTTP/1.1 200\nContent-Length: 1\n\nx\r\nHTTP/1.0 500\r\nContent-Length: 0\r\n\r\n",
	       "GG", "200 500 |iM");
	/* a long header line that does not matter */
	static char big[4096];
	int n = snprintf(big, sizeof big, "HTTP/1.1 200 OK\r\nSet-Cookie: %02000d\r\nContent-Length: 1\r\n\r\nx", 0);
	expect(__LINE__, big, (size_t)n, "G", "200 |iM");
	/* given up on */
	EXPECT("HTTP/2 200\r\n\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 20 OK\r\n\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 200OK\r\n\r\n", "G", "L|L");
	EXPECT("SSH-2.0-OpenSSH\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "G", "L|L");
	EXPECT("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", "G",
	       "L|L");
	n = snprintf(big, sizeof big, "HTTP/1.1 200 OK\r\nContent-Length: %0600d\r\n\r\n", 1);
	expect(__LINE__, big, (size_t)n, "G", "L|L");
	/* the same (equal) length twice is one length */
	EXPECT("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", "G", "200 |iM");
	/* the final heads seen, bodies complete or not */
	struct http_resp r;
	http_resp_init(&r);
	const char *t = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc";
	size_t used;
	CHECK(http_resp_feed(&r, t, strlen(t), &used) == HTTP_RESP_MORE && used == strlen(t));
	CHECK(r.heads == 1 && r.status == 200 && !http_resp_idle(&r));
	/* cut short in the head */
	EXPECT("HTTP/1.1 200 OK\r\nContent-Le", "G", "|L");
	return check_status_counted("test-net-http-resp");
}
