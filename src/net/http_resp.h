/* http_resp.h - where each HTTP/1.x response ends in a stream of responses
 * that the proxy relays as it is (intercept.h): the status of each, its
 * body's framing (RFC 9112 section 6.3: none for HEAD, 1xx, 204 and 304;
 * chunked; Content-Length; else until the connection closes), the interim
 * 1xx responses before a final one, and the 101 after which the connection
 * speaks another protocol.
 *
 * It only watches: the bytes go on unchanged, whatever it concludes. It
 * reads what servers send leniently (LF or CRLF line ends in the head) but
 * gives up on what it cannot frame for sure (a Content-Length that is not
 * one number, a malformed status line or chunk), and then says LOST for
 * good: its caller relies on it no more. Pure: no I/O, no allocation. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

enum http_resp_event {
	HTTP_RESP_MORE = 0, /* every byte taken; a response goes on, or none has begun */
	HTTP_RESP_DONE,     /* a final response ended with the last byte taken */
	HTTP_RESP_SWITCH,   /* a 101's head ended with the last byte taken: another protocol follows */
	HTTP_RESP_LOST,     /* the stream cannot be framed */
};

#define HTTP_RESP_LINE_KEEP 512 /* bytes of each head line kept: enough for what is read */

struct http_resp {
	int status;    /* DONE, SWITCH: the final response's status code */
	int heads;     /* final response heads seen complete (bodies may go on) */
	/* internal */
	int phase;
	bool head;     /* the response is to a HEAD request */
	bool cl_seen, te_seen, chunked;
	uint64_t cl;
	size_t line_len;               /* bytes of the current line so far */
	char line[HTTP_RESP_LINE_KEEP];
	struct http_body_reader body;
};

void http_resp_init(struct http_resp *r);

/* The response about to come answers a HEAD request (or not). Call at a
 * boundary: after init or DONE, before the next response's first byte. */
void http_resp_next(struct http_resp *r, bool head_request);

/* Feed the next bytes of the stream. *used: how many were taken; on DONE
 * and SWITCH the rest belong to what follows (the next response: feed them
 * again, after http_resp_next; another protocol: stop feeding). MORE takes
 * every byte. After SWITCH or LOST it takes every byte and says so again. */
enum http_resp_event http_resp_feed(struct http_resp *r, const void *data, size_t len,
				    size_t *used);

/* The stream ended: DONE when that ends a body read until the close, MORE
 * when it ends between responses, LOST when it cuts a response short;
 * SWITCH after a 101. */
enum http_resp_event http_resp_eof(struct http_resp *r);

/* Between responses: nothing of the next one seen yet. */
bool http_resp_idle(const struct http_resp *r);
