/* intercept.h - the bridge of one connection the proxy intercepts, so that
 * its owner sees (and may rewrite) each request head and sees every other
 * byte the client sends: TLS from the client terminated with a leaf of the
 * session CA and TLS to the server verified (tls.h), or plain TCP both ways
 * (a host loopback port); the client's bytes split into requests with the
 * strict parser of http.h, each head handed to on_head and what it returns
 * sent on, each body framed exactly (Content-Length or chunked) and handed
 * to on_data; responses relayed as they come, byte for byte, never
 * buffered (a server-sent event reaches the client when the server writes
 * it); after a 101 to a request that asked to upgrade, raw bytes both ways,
 * the client's still through on_data.
 *
 * HTTP/2: the client's ClientHello is read first, then the upstream's
 * handshake is made, offering h2 when the client does; the client is
 * answered h2 only when the upstream agreed to it (else http/1.1, and all
 * of the above). An h2 connection is relayed by intercept_h2.h: each
 * stream's header list goes to on_head as an HTTP/1.1 head, DATA through
 * on_data and on_resp (what it holds back waits per stream), a refusal ends
 * that stream alone. h2 without TLS (prior knowledge) is not offered.
 *
 * Each job runs in a detached thread of its own with non-blocking sockets
 * and poll(); the callbacks run on that thread. A refusal (by a callback,
 * or of a malformed request: a request smuggling attempt is one) stops
 * reading the client; the responses to requests sent before it are relayed
 * to their end, then the client gets the refusal (403 for a callback's, the
 * parser's status for a malformed request) and the connection closes. A
 * refusal inside a body or after an upgrade also cuts the upstream
 * connection at once (the server has part of the request), and the client
 * gets the refusal only where it falls between two responses.
 *
 * An upstream certificate that fails verification ends the connection with
 * a 502 to the client over its TLS, the reason naming the verification
 * error. Limits: 15 s for each handshake, 10 minutes idle, 64 requests
 * awaiting their responses (then the client is read no further until one
 * ends). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "../common/err.h"
#include "rules.h"

/* Each complete request head, as the client sent it (origin-form request
 * line, CRLF line ends, the empty line included). 0: send *out (malloc'd,
 * *outlen bytes; it must parse as a head of the same request framing and
 * upgrade, or the request is refused with 500); -1: refuse the request with
 * why (NUL-terminated, at most whylen bytes). NULL in the job: sent as is. */
typedef int (*intercept_head_fn)(void *ctx, const char *head, size_t len, char **out,
				 size_t *outlen, char *why, size_t whylen);

/* Every byte the client sends that is not a head, in order, in pieces of
 * any size (a body as on the wire, chunk-size lines included; everything
 * after an upgrade): -1 refuses (why filled), 0 sends them on. NULL in the
 * job: sent on. */
typedef int (*intercept_data_fn)(void *ctx, const void *data, size_t len, char *why,
				 size_t whylen);

/* Every byte the server sends, in order, before the client gets it: the
 * function may rewrite bytes in place (never changing the length) and
 * returns how many at the end must wait for more (they may begin what it
 * rewrites); they come again at the front of the next call. They go as
 * they are when the response or the stream they end is over, or after
 * INTERCEPT_HELD_MS without more. At most len - 1 are held. NULL in the
 * job: relayed as they come. */
typedef size_t (*intercept_resp_fn)(void *ctx, char *buf, size_t len);
#define INTERCEPT_HELD_MS 100

/* Requests whose body the owner reads whole before any byte of them goes
 * upstream (an MCP server's JSON-RPC, src/net/proxy_mcp.h). want is asked
 * at each head (as on_head made it): true holds that request. decide gets
 * the head and the body as on the wire (chunk lines included; at most
 * body_max bytes, a longer body is refused with 413) and returns 0 to send
 * them on; 1 to answer the client with *reply (malloc'd, a whole HTTP/1.1
 * response of at most 16 KiB with its own framing) in place of the
 * request, the connection kept, once the responses before it are through;
 * -1 to refuse it (why) as on_head's refusal does. It runs on the job's
 * thread and may wait (a human asked). */
struct intercept_hold {
	bool (*want)(void *ctx, const char *head, size_t len);
	int (*decide)(void *ctx, const char *head, size_t hlen, const char *body, size_t blen,
		      char **reply, size_t *replylen, char *why, size_t whylen);
	void *ctx;
	size_t body_max;
};
/* A request's method and target (origin-form, as sent), before anything
 * of it goes upstream or to on_head: 0 lets it go; otherwise the HTTP
 * status to answer it with ourselves (why filled), its body read and
 * dropped, the connection going on (HTTP/1.1: after the responses owed
 * before it; HTTP/2: that stream alone). NULL in the job: all go. */
typedef int (*intercept_req_fn)(void *ctx, const char *method, const char *target, size_t tlen,
				char *why, size_t whylen);

struct intercept_job {
	/* Owned by the job from intercept_start on (closed by it, also when
	 * intercept_start fails): connected stream sockets, any mode (the
	 * job makes them non-blocking). */
	int client_fd, upstream_fd;
	/* Bytes the client sent that the proxy read already (after its
	 * CONNECT head): the bridge takes them as the first from the client,
	 * TLS or not. At most 16 KiB; copied by intercept_start. */
	const void *early;
	size_t early_len;
	/* Both set: terminate TLS from the client with server_ctx
	 * (tls_server_ctx for host) and originate TLS upstream with
	 * client_ctx, verifying host. Both NULL: plain TCP both ways.
	 * intercept_start takes references of its own: the caller may free
	 * its contexts as soon as it returns. */
	SSL_CTX *server_ctx;
	SSL_CTX *client_ctx;
	/* The destination: what TLS verifies, and what each request's Host
	 * header (and absolute-form URL) must name, with port unless port
	 * is the scheme's default. any_host: plain mode to a destination the
	 * connection fixes (a host loopback port): any Host is taken. */
	struct net_host host;
	uint16_t port;
	bool any_host;
	intercept_head_fn on_head;
	intercept_data_fn on_data;
	intercept_resp_fn on_resp;
	void *ctx;
	/* decide NULL: none held. With one, h2 is not offered (HTTP/1.1
	 * both ways), so that each request is read here. */
	struct intercept_hold hold;
	intercept_req_fn on_req;
	void *req_ctx;
	/* At the end the thread writes the job's address (sizeof(void *)
	 * bytes) to done_fd - a pipe the owner watches - and touches the job
	 * no more. Not closed by the job. */
	int done_fd;
	/* When > 0: an fd that becomes readable or hung up when the job must
	 * end at once (error "stopped"), such as the read end of one pipe for
	 * all jobs whose write end the owner closes at the end of the session.
	 * Not closed by the job. 0 or -1: none. */
	int stop_fd;

	/* Results, for the owner once the job's address came out of done_fd. */
	uint64_t bytes_in;   /* relayed from upstream to the client */
	uint64_t bytes_out;  /* sent upstream: heads as rewritten, bodies, raw bytes */
	unsigned requests;   /* heads sent upstream */
	int first_status;    /* the first final response's status (101 included), known
			      * once its head is complete; 0 if none */
	/* Why it ended early: a handshake or verification failure ("client
	 * TLS handshake: ...", "upstream certificate: unable to get local
	 * issuer certificate", "upstream TLS handshake: ..."), a refusal (the
	 * callback's why), a malformed request ("malformed request: LF without
	 * CR"), a connection failing ("upstream: Connection reset by peer"),
	 * "idle for 10 minutes", "stopped"; "" when it ended as HTTP
	 * connections do. */
	char error[256];
	bool refused;        /* a callback refused */
};

/* Start the bridge in a detached thread. The job must stay valid until its
 * address comes out of done_fd, and the caller changes none of its fields
 * until then. -1 when the thread cannot start (the fds are closed and
 * nothing is written to done_fd). */
int intercept_start(struct intercept_job *job, struct werr *e);
