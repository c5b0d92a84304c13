/* http.h - the HTTP/1.x request head a client sends to warden's proxy:
 * an incremental parser for CONNECT (authority-form) and absolute-form
 * http:// requests, the head re-serialised for the upstream server, and the
 * refusal responses. In origin mode, the same parser reads the requests a
 * client sends inside a connection the proxy intercepts (intercept.h):
 * origin-form ("GET /path HTTP/1.1") with a Host header naming that
 * connection's destination. Pure: no I/O, no allocation; the parser copies at most
 * HTTP_HEAD_MAX bytes into its own fixed buffer.
 *
 * Use: http_parser_init(), then http_feed() with each chunk read from the
 * client until it returns HTTP_COMPLETE or HTTP_ERROR. On HTTP_ERROR answer
 * http_error_response(p->status, p->reason) and close.
 *
 * Line ends are CRLF, strictly: a bare LF is 400 "LF without CR" and a bare
 * CR is 400 "CR without LF", in the head as in chunked bodies. RFC 9112
 * section 2.2 lets a recipient take a bare LF as a line end; warden does
 * not. Two HTTP parsers that split lines differently are what request
 * smuggling is made of, so a proxy that decides where requests may go
 * accepts only the form every server reads the same way. The head sent
 * upstream is rebuilt with CRLF, so today the server never sees the client's
 * line ends; the rule keeps it so for whatever passes through as sent
 * (bodies today, anything forwarded verbatim later). Clients send CRLF: the
 * lenient form is only for hand-typed requests. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules.h"

/* The whole head, request line to the empty line. A head that reaches it
 * without its end is 431 as soon as its last byte arrives. */
#define HTTP_HEAD_MAX 16384
#define HTTP_REQUEST_LINE_MAX 8192   /* request line without its CRLF */
#define HTTP_HEADERS_MAX 100         /* header lines */
#define HTTP_METHOD_MAX 32
#define HTTP_CONTENT_LENGTH_MAX (1ULL << 40)
#define HTTP_REASON_MAX 96
/* Room always enough for http_forward_head(). */
#define HTTP_FORWARD_MAX (HTTP_HEAD_MAX + 1024)
/* Enough for http_error_response() with any reason. */
#define HTTP_ERROR_RESPONSE_MAX 768

#define HTTP_CONNECT_ESTABLISHED "HTTP/1.1 200 Connection established\r\n\r\n"

enum http_result { HTTP_NEED_MORE = 0, HTTP_COMPLETE, HTTP_ERROR };

enum http_body {
	HTTP_BODY_NONE,    /* no body follows the head */
	HTTP_BODY_LENGTH,  /* content_length bytes follow */
	HTTP_BODY_CHUNKED, /* Transfer-Encoding ending in chunked */
};

struct http_request {
	char method[HTTP_METHOD_MAX + 1];
	bool connect;              /* CONNECT host:port (a tunnel follows) */
	struct net_host host;      /* from the request target (never from Host:) */
	uint16_t port;             /* CONNECT: given; http://: given or 80 */
	bool port_given;           /* the target named a port */
	int version_minor;         /* HTTP/1.<minor> as sent */
	enum http_body body;
	uint64_t content_length;   /* HTTP_BODY_LENGTH */
};

struct http_field {
	uint16_t name, name_len, value, value_len; /* offsets into buf; value trimmed */
};

struct http_parser {
	enum http_result state;
	/* HTTP_ERROR: status code (400, 413, 414, 431, 501, 505) and a short
	 * ASCII reason without CR/LF, fit for a status phrase. */
	int status;
	char reason[HTTP_REASON_MAX];
	/* HTTP_COMPLETE: bytes of the head (request line to the empty line,
	 * inclusive); whatever the client sent after them is body or tunnel. */
	size_t head_len;
	struct http_request req;

	/* internal */
	size_t len, line_start;
	bool have_request_line;
	uint16_t path, path_len;  /* the target's path and query, in buf */
	struct http_field fields[HTTP_HEADERS_MAX];
	size_t nfields;
	int host_field, cl_field, te_field; /* -1 when absent */
	/* origin mode: the connection's destination */
	bool origin, origin_tls, origin_any_host;
	struct net_host origin_host;
	uint16_t origin_port;
	char buf[HTTP_HEAD_MAX];
};

void http_parser_init(struct http_parser *p);

/* Origin mode, for one request inside an intercepted connection to host and
 * port, over TLS or not. The request target is origin-form ("/path?query"),
 * "*" for OPTIONS, or absolute-form with the connection's scheme (https with
 * tls, else http) naming host and port. CONNECT is refused. Every request
 * needs a Host header (HTTP/1.0 too), and it must name host, with port
 * unless port is the scheme's default (443, 80): 400 "Host header disagrees
 * with the connection" otherwise, since a server behind a shared front end
 * routes by Host, not by the name TLS was verified for. host NULL: any Host
 * is taken (a destination fixed by the connection: a host loopback port).
 * Transfer-Encoding on an HTTP/1.0 request is refused. Everything else as in
 * proxy mode: the same limits, CRLF only, Content-Length with
 * Transfer-Encoding refused. p->req.host and port are the connection's. */
void http_parser_init_origin(struct http_parser *p, const struct net_host *host, uint16_t port,
			     bool tls);

/* The head of a complete origin-mode request as the server is to see it:
 * "METHOD TARGET HTTP/1.x" with the client's version and the target in
 * origin-form ("*" for OPTIONS "*"), then every header line as the client
 * sent it (Host, Connection and Upgrade included: the connection is the
 * client's own), value trimmed, and the empty line; CRLF throughout.
 * Returns the length written (no NUL), or -1 when the request is not a
 * complete origin-mode request or cap is too small (HTTP_FORWARD_MAX is
 * always enough). */
ssize_t http_origin_head(const struct http_parser *p, char *out, size_t cap);

/* Does the complete request ask to switch protocols: an Upgrade header,
 * and "upgrade" among the tokens of its Connection header(s)? */
bool http_is_upgrade(const struct http_parser *p);

/* Feed the next len bytes from the client. *used (may be NULL) receives how
 * many of them the head took: on HTTP_COMPLETE the rest belong to the body or
 * tunnel; on HTTP_NEED_MORE all of them. After HTTP_COMPLETE or HTTP_ERROR
 * the parser takes nothing more and returns the same result. */
enum http_result http_feed(struct http_parser *p, const void *data, size_t len, size_t *used);

/* The target's path and query (no fragment), as sent; not NUL-terminated, may
 * be empty or start with '?' (forwarded with a '/' in front). CONNECT: empty. */
const char *http_path(const struct http_parser *p, size_t *len);

/* The head to send upstream for a complete non-CONNECT request:
 * "METHOD /path HTTP/1.1", "Host: " from the target, the client's headers
 * minus Host, Proxy-Authorization, Proxy-Connection, Connection, Keep-Alive,
 * TE, Upgrade and any header the client's Connection header names (except
 * Content-Length and Transfer-Encoding), then "Connection: close" and the
 * empty line; CRLF line ends throughout. Returns the length written (no NUL),
 * or -1 when the request is not complete, is CONNECT or origin mode, or cap
 * is too small (HTTP_FORWARD_MAX is always enough). */
ssize_t http_forward_head(const struct http_parser *p, char *out, size_t cap);

/* Where the request body ends, so the proxy forwards exactly the body and
 * nothing after it (bytes after the body would reach the upstream server as
 * a second request that no rule checked). Feed what the client sends after
 * the head; HTTP_COMPLETE when the body (for chunked: through the last chunk
 * and the trailer section) is done, *used saying how many bytes of this
 * chunk belong to the body. Strict: chunk lines end in CRLF exactly, sizes
 * are hex (at most HTTP_CONTENT_LENGTH_MAX), trailers at most
 * HTTP_HEAD_MAX bytes and never folded. Errors: status 400 and a reason. */
struct http_body_reader {
	enum http_result state;
	int status;
	const char *reason;
	/* internal */
	enum http_body kind;
	int phase;
	uint64_t left;           /* bytes of the current chunk or the body */
	uint64_t line;           /* bytes of the current chunk-size or trailer line */
	uint64_t trailers;       /* bytes of the trailer section */
	bool digits, bws, ext, cr;
};

void http_body_init(struct http_body_reader *b, const struct http_request *r);
enum http_result http_body_feed(struct http_body_reader *b, const void *data, size_t len,
				size_t *used);

/* A complete refusal: "HTTP/1.1 STATUS REASON", X-Warden-Reason: REASON,
 * a text/plain body with the reason, Connection: close. The reason is cut to
 * 200 bytes and anything but printable ASCII becomes '?'. Returns the length
 * written (no NUL), or -1 when cap is too small (HTTP_ERROR_RESPONSE_MAX is
 * always enough) or status is not 100-999. */
ssize_t http_error_response(int status, const char *reason, char *out, size_t cap);
