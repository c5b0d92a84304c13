/* post.h - one HTTP/1.1 POST from the host (not through the sandbox), for
 * the approval webhook (src/control/webhook.h) and `warden log export
 * --url` (src/export/otlp.h): the URL's rules, the walk with one deadline
 * (name lookup, a nonblocking connect and, for https, the TLS handshake
 * verified by tls_client_ssl, the request, the response's status line),
 * every wait a poll that also watches a cancel fd. Nothing of the response
 * past its status line is read, at most POST_HEAD_MAX bytes of it: a
 * hostile or huge answer costs no more than that. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "../common/err.h"
#include "rules.h"

#define POST_HEAD_MAX (16 * 1024) /* bytes read looking for the status line */

/* An http:// or https:// URL: scheme, host (a name, an IPv4 address,
 * [an IPv6 address]), optional port, then the path and query as they are
 * (the fragment dropped). No user:password@, no bytes outside printable
 * ASCII. */
struct post_url {
	bool tls;
	struct net_host host;
	uint16_t port;
	char port_s[8];
	char authority[NET_HOST_PORT_MAX]; /* the Host header: [v6] in brackets, the port unless the default */
	char target[2100];                 /* the request target: "/" at least */
};
int post_url_parse(const char *url, struct post_url *u, struct werr *e);

/* The status code of an HTTP/1.x response whose head starts buf[0..len):
 * 100-999; 0 while the status line is incomplete; -1 when it is not one. */
int post_status(const char *buf, size_t len);

/* One POST of body (Content-Type: application/json) to url. */
struct post_req {
	const struct post_url *url;
	SSL_CTX *ctx;             /* https: tls_client_ctx's */
	int cancel;               /* readable: give up (ECANCELED); -1: none */
	unsigned cancel_grace_ms; /* 0: give up at once; else the POST may go on
				   * this long after cancel is readable (one
				   * the server has taken is not then made a
				   * failure, sent again, by the cancel) */
	unsigned deadline_ms;     /* from the name lookup to the status line */
	const char *body;
	size_t len;
};
struct post_result {
	int status;               /* the response's, 0: none */
	char why[300];            /* a failure or a status other than 2xx; "" when 2xx */
};
void post_once(const struct post_req *h, struct post_result *d);

/* Make sure POSTs can be made from here on: in warden's binary the TLS
 * module (tlsmod.h), which carries post_once, loaded now, when the sender
 * is set up, rather than by its first POST on a thread later; the error
 * then is the setup's. 0, or -1 with e filled. */
int post_ready(struct werr *e);
