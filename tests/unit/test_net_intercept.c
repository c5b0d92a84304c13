/* test_net_intercept.c - the bridge of an intercepted connection
 * (src/net/intercept.c) between a client and a server that are threads of
 * this test, over socketpairs (no network). The client trusts the session
 * CA only; the server's certificate comes from another CA made here,
 * loaded as a user's extra CA file. Each case checks what the client
 * received, what the server received, and the job's results:
 * a head rewritten by on_head (a phantom token replaced by the real one),
 * keep-alive, Content-Length and chunked bodies through on_data, pipelined
 * requests, a streamed (SSE) response arriving part by part, a WebSocket
 * upgrade switching to raw bytes (and a declined one not), an untrusted or
 * misnamed server certificate answered 502, refusals by on_head and
 * on_data, request smuggling attempts and a Host naming another server
 * refused, a client that does not trust the session CA, plain mode, the
 * bytes a proxy read before handing the connection over, and the owner
 * stopping a job; HTTP/2 when the server offers it (nghttp2 on both
 * ends of the test): concurrent streams, a rewritten header, a body, a
 * streamed response part by part, one stream refused and the others
 * not, a stream reset by the client, a GOAWAY from the server. A server
 * without h2 gives the client http/1.1 though it offers h2 (every
 * HTTP/1.1 case). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "src/net/intercept.h"
#include "src/net/tls.h"
#include "src/common/util.h"
#include "check.h"

#define PHANTOM "PHANTOM-123"
#define REAL "REAL-SECRET-4567890"

static struct tls_ca *session_ca, *upstream_ca, *rogue_ca;
static SSL_CTX *upstream_client_ctx; /* the bridge's: trusts upstream_ca */
static char upstream_ca_file[] = "/tmp/warden-test-intercept-XXXXXX";

static struct net_host H(const char *s)
{
	struct net_host h;
	const char *why;
	if (net_host_parse(&h, s, strlen(s), &why) < 0)
		abort();
	return h;
}

static void set_timeout(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* ---- a connection end of the test (client or server), blocking ---------- */

struct end {
	int fd;
	SSL *ssl;
	char buf[65536];
	size_t len;
	uint64_t total; /* bytes read */
};

static ssize_t end_read(struct end *e, void *b, size_t n)
{
	if (e->ssl) {
		size_t got = 0;
		return SSL_read_ex(e->ssl, b, n, &got) == 1 ? (ssize_t)got : -1;
	}
	ssize_t r = read(e->fd, b, n);
	return r > 0 ? r : -1;
}

static bool end_write(struct end *e, const void *b, size_t n)
{
	if (e->ssl) {
		size_t w = 0;
		return SSL_write_ex(e->ssl, b, n, &w) == 1 && w == n;
	}
	return send(e->fd, b, n, MSG_NOSIGNAL) == (ssize_t)n;
}

static bool end_puts(struct end *e, const char *s)
{
	return end_write(e, s, strlen(s));
}

/* Read more into e->buf; false at the end or on a timeout. */
static bool fill(struct end *e)
{
	if (e->len == sizeof e->buf - 1)
		return false;
	ssize_t r = end_read(e, e->buf + e->len, sizeof e->buf - 1 - e->len);
	if (r <= 0)
		return false;
	e->len += (size_t)r;
	e->total += (uint64_t)r;
	e->buf[e->len] = '\0';
	return true;
}

static void consume(struct end *e, size_t n)
{
	memmove(e->buf, e->buf + n, e->len - n);
	e->len -= n;
	e->buf[e->len] = '\0';
}

/* A head from e->buf (read as needed), NUL-terminated into out. */
static bool read_head(struct end *e, char *out, size_t cap)
{
	char *end;
	while (!(end = strstr(e->buf, "\r\n\r\n")))
		if (!fill(e))
			return false;
	size_t n = (size_t)(end + 4 - e->buf);
	if (n >= cap)
		return false;
	memcpy(out, e->buf, n);
	out[n] = '\0';
	consume(e, n);
	return true;
}

static long header_num(const char *head, const char *name)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\r\n%s:", name);
	const char *p = strcasestr(head, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* A body of the head's framing, de-chunked, NUL-terminated into out. */
static bool read_body(struct end *e, const char *head, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = '\0';
	if (strcasestr(head, "\r\nTransfer-Encoding: chunked")) {
		for (;;) {
			char *nl;
			while (!(nl = strstr(e->buf, "\r\n")))
				if (!fill(e))
					return false;
			size_t size = strtoul(e->buf, NULL, 16);
			consume(e, (size_t)(nl + 2 - e->buf));
			while (e->len < size + 2)
				if (!fill(e))
					return false;
			if (size == 0) { /* the trailer section, to its empty line */
				char *t;
				while (strncmp(e->buf, "\r\n", 2) != 0 && !(t = strstr(e->buf, "\r\n\r\n")))
					if (!fill(e))
						return false;
				consume(e, strncmp(e->buf, "\r\n", 2) == 0 ? 2 : (size_t)(t + 4 - e->buf));
				return true;
			}
			if (o + size >= cap)
				return false;
			memcpy(out + o, e->buf, size);
			out[o += size] = '\0';
			consume(e, size + 2);
		}
	}
	long cl = header_num(head, "Content-Length");
	if (cl < 0)
		cl = 0;
	while (e->len < (size_t)cl)
		if (!fill(e))
			return false;
	if ((size_t)cl >= cap)
		return false;
	memcpy(out, e->buf, (size_t)cl);
	out[cl] = '\0';
	consume(e, (size_t)cl);
	return true;
}

/* ---- the server --------------------------------------------------------- */

enum mode { ECHO, SSE, WEBSOCKET, CLOSE_CLEAN, CLOSE_DIRTY, SILENT, PAUSE, DRIP };

struct server {
	struct end e;
	SSL_CTX *ctx;       /* NULL: plain */
	enum mode mode;
	sem_t go;           /* SSE: the client saw the last part */
	sem_t got_head;     /* posted at each head received */
	bool waited_ok;     /* SSE: every part was seen before the next was written */
	bool handshake_ok;
	int requests;
	char heads[8192];   /* every head received, one after another */
	char raw[256];      /* WEBSOCKET: the raw bytes received after the 101 */
	size_t raw_len;
	pthread_t t;
};

static bool wait_sem(sem_t *sem)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	return sem_timedwait(sem, &ts) == 0;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct end *e = &s->e;
	if (s->ctx) {
		e->ssl = SSL_new(s->ctx);
		SSL_set_fd(e->ssl, e->fd);
		s->handshake_ok = SSL_accept(e->ssl) == 1;
		if (!s->handshake_ok)
			goto out;
	}
	char head[8192], body[8192], resp[20000];
	while (read_head(e, head, sizeof head)) {
		s->requests++;
		if (strlen(s->heads) + strlen(head) < sizeof s->heads)
			strcat(s->heads, head);
		sem_post(&s->got_head);
		if (!read_body(e, head, body, sizeof body))
			break;
		if (s->mode == SSE) {
			s->waited_ok = end_puts(e, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
						   "Transfer-Encoding: chunked\r\n\r\n");
			const char *parts[] = { "b\r\ndata: one\n\n\r\n", "b\r\ndata: two\n\n\r\n",
						"d\r\ndata: three\n\n\r\n0\r\n\r\n" };
			for (int i = 0; i < 3; i++) {
				s->waited_ok &= end_puts(e, parts[i]);
				s->waited_ok &= wait_sem(&s->go);
			}
			continue;
		}
		if (s->mode == PAUSE) { /* a body that stops on the value's start, until go */
			s->waited_ok = end_puts(e, "HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\n"
						   "pause REAL-S") && wait_sem(&s->go);
			end_puts(e, "ECRET-4567890");
			continue;
		}
		if (s->mode == DRIP) { /* the body a byte a TLS record: each read one byte */
			static const char b[] = "drip " REAL " end";
			s->waited_ok = end_puts(e, "HTTP/1.1 200 OK\r\nContent-Length: 28\r\n\r\n");
			for (size_t i = 0; i + 1 < sizeof b; i++)
				s->waited_ok &= end_write(e, b + i, 1);
			continue;
		}
		if (s->mode == SILENT) { /* never answers: reads until the end (or 5 s) */
			while (fill(e))
				;
			break;
		}
		if (s->mode == CLOSE_CLEAN || s->mode == CLOSE_DIRTY) {
			/* a body that ends with the connection, cleanly or not */
			end_puts(e, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close");
			break;
		}
		if (s->mode == WEBSOCKET) {
			end_puts(e, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				    "Connection: Upgrade\r\n\r\n");
			/* echo raw bytes until the end */
			while (e->len || fill(e)) {
				if (s->raw_len + e->len < sizeof s->raw) {
					memcpy(s->raw + s->raw_len, e->buf, e->len);
					s->raw_len += e->len;
				}
				end_write(e, e->buf, e->len);
				consume(e, e->len);
			}
			break;
		}
		int n = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s|%s",
				 strlen(head) + 1 + strlen(body), head, body);
		if (!end_write(e, resp, (size_t)n))
			break;
	}
out:
	if (e->ssl) {
		if (s->mode != CLOSE_DIRTY)
			SSL_shutdown(e->ssl);
		SSL_free(e->ssl);
	}
	close(e->fd);
	return NULL;
}

/* ---- the owner's callbacks ---------------------------------------------- */

static int heads_seen;
static size_t data_seen;
static char data_log[4096];
static char heads_log[8192]; /* every head on_head saw */

static int on_head(void *ctx, const char *head, size_t len, char **out, size_t *outlen, char *why,
		   size_t whylen)
{
	heads_seen++;
	size_t hl = strlen(heads_log);
	if (hl + len < sizeof heads_log)
		memcpy(heads_log + hl, head, len);
	if (memmem(head, len, "FORBIDDEN", 9)) {
		snprintf(why, whylen, "forbidden by test");
		return -1;
	}
	if (memmem(head, len, "GARBLE", 6)) { /* a rewrite that breaks the framing */
		*out = strdup("GET / HTTP/1.1\r\nHost: api.test\r\nContent-Length: 9\r\n\r\n");
		*outlen = strlen(*out);
		return 0;
	}
	char *o = malloc(len + 64), *p = o;
	const char *h = head, *end = head + len, *f;
	while ((f = memmem(h, (size_t)(end - h), PHANTOM, strlen(PHANTOM)))) {
		memcpy(p, h, (size_t)(f - h));
		p += f - h;
		memcpy(p, REAL, strlen(REAL));
		p += strlen(REAL);
		h = f + strlen(PHANTOM);
	}
	memcpy(p, h, (size_t)(end - h));
	p += end - h;
	*out = o;
	*outlen = (size_t)(p - o);
	return 0;
}

static int on_data(void *ctx, const void *data, size_t len, char *why, size_t whylen)
{
	if (data_seen + len < sizeof data_log)
		memcpy(data_log + data_seen, data, len);
	data_seen += len;
	if (memmem(data, len, PHANTOM, strlen(PHANTOM))) {
		snprintf(why, whylen, "phantom in a body");
		return -1;
	}
	return 0;
}

/* ---- one case: client, bridge, server ----------------------------------- */

static int scene_stop_fd = -1; /* the next scene's job's stop_fd */
static intercept_resp_fn scene_on_resp; /* the next scene's job's on_resp */

struct scene {
	struct intercept_job job;
	int done[2];
	struct server srv;
	struct end cli;
	SSL_CTX *cli_ctx;
};

/* Start the bridge and the server; connect the client (TLS when
 * upstream_ctx, verifying the host against the session CA only, unless
 * trust_session is false). early: the client's first bytes (its
 * ClientHello, or plain text given here) are read before the bridge starts,
 * as the proxy reads what follows a CONNECT, and handed to it. */
static void scene_start_early(struct scene *s, SSL_CTX *upstream_ctx, enum mode mode,
			      bool trust_session, const char *host, uint16_t port, bool early,
			      const char *plain_early)
{
	memset(s, 0, sizeof *s);
	heads_seen = 0;
	data_seen = 0;
	memset(data_log, 0, sizeof data_log);
	int c[2], u[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, u) < 0 || pipe(s->done) < 0)
		abort();
	set_timeout(c[0], 5);
	set_timeout(u[1], 5);
	struct werr e = { 0 };
	struct net_host h = H(host);
	s->cli.fd = c[0];
	if (upstream_ctx) {
		s->cli_ctx = SSL_CTX_new(TLS_client_method());
		if (trust_session) {
			BIO *b = BIO_new_mem_buf(tls_ca_pem(session_ca), -1);
			X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
			X509_STORE_add_cert(SSL_CTX_get_cert_store(s->cli_ctx), x);
			X509_free(x);
			BIO_free(b);
		}
		SSL_CTX_set_verify(s->cli_ctx, SSL_VERIFY_PEER, NULL);
		SSL_CTX_set_alpn_protos(s->cli_ctx, (const unsigned char *)"\x02h2\x08http/1.1", 12);
		s->cli.ssl = SSL_new(s->cli_ctx);
		SSL_set_fd(s->cli.ssl, c[0]);
		if (h.kind == NET_HOST_NAME) {
			SSL_set_tlsext_host_name(s->cli.ssl, host);
			SSL_set1_host(s->cli.ssl, host);
		} else {
			X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->cli.ssl), host);
		}
	}
	static char ebuf[16384];
	size_t elen = 0;
	if (early && s->cli.ssl) {
		/* the ClientHello goes out; the bridge's end reads it */
		fcntl(c[0], F_SETFL, O_NONBLOCK);
		CHECK(SSL_connect(s->cli.ssl) == -1 && SSL_get_error(s->cli.ssl, -1) == SSL_ERROR_WANT_READ);
		fcntl(c[0], F_SETFL, 0);
		ssize_t n = read(c[1], ebuf, sizeof ebuf);
		CHECK(n > 0);
		elen = n > 0 ? (size_t)n : 0;
	} else if (early) {
		elen = strlen(plain_early);
		memcpy(ebuf, plain_early, elen);
	}
	s->job = (struct intercept_job){ .client_fd = c[1], .upstream_fd = u[0], .host = h,
					 .port = port, .on_head = on_head, .on_data = on_data,
					 .done_fd = s->done[1], .stop_fd = scene_stop_fd, .early = ebuf,
					 .early_len = elen, .on_resp = scene_on_resp };
	SSL_CTX *sctx = NULL;
	if (upstream_ctx) {
		sctx = tls_server_ctx(session_ca, &h, &e);
		s->job.server_ctx = sctx;
		s->job.client_ctx = upstream_client_ctx;
	}
	CHECK(intercept_start(&s->job, &e) == 0);
	SSL_CTX_free(sctx); /* the job holds its own */
	memset(ebuf, 0, sizeof ebuf); /* the job has its own copy */

	s->srv.e.fd = u[1];
	s->srv.ctx = upstream_ctx;
	s->srv.mode = mode;
	sem_init(&s->srv.go, 0, 0);
	sem_init(&s->srv.got_head, 0, 0);
	pthread_create(&s->srv.t, NULL, server_main, &s->srv);

	if (!upstream_ctx)
		return;
	int r = SSL_connect(s->cli.ssl);
	CHECK((r == 1) == trust_session);
	if (r == 1) {
		const unsigned char *alpn;
		unsigned alen;
		SSL_get0_alpn_selected(s->cli.ssl, &alpn, &alen);
		CHECK(alen == 8 && memcmp(alpn, "http/1.1", 8) == 0);
		CHECK(SSL_get_verify_result(s->cli.ssl) == X509_V_OK);
	}
}

static void scene_start(struct scene *s, SSL_CTX *upstream_ctx, enum mode mode, bool trust_session,
			const char *host, uint16_t port)
{
	scene_start_early(s, upstream_ctx, mode, trust_session, host, port, false, NULL);
}

/* The client closes; wait for the job and the server. */
static void scene_end(struct scene *s)
{
	if (s->cli.ssl) {
		SSL_shutdown(s->cli.ssl);
		SSL_free(s->cli.ssl);
	}
	SSL_CTX_free(s->cli_ctx);
	close(s->cli.fd);
	struct pollfd p = { .fd = s->done[0], .events = POLLIN };
	void *got = NULL;
	CHECK(poll(&p, 1, 20000) == 1 && read(s->done[0], &got, sizeof got) == sizeof got &&
	      got == &s->job);
	close(s->done[0]);
	close(s->done[1]);
	pthread_join(s->srv.t, NULL);
	sem_destroy(&s->srv.go);
	sem_destroy(&s->srv.got_head);
}

/* Send a request, read the response: its status, head and body. */
static int request(struct scene *s, const char *req, char *head, char *body)
{
	if (!end_puts(&s->cli, req))
		return -1;
	if (!read_head(&s->cli, head, 8192) || !read_body(&s->cli, head, body, 16384))
		return -1;
	return atoi(head + 9);
}

static char head[8192], body[16384];

static void test_rewrite_keepalive(void)
{
	struct scene s;
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	scene_start(&s, up, ECHO, true, "api.test", 443);
	/* the phantom becomes the real value in the head */
	CHECK(request(&s, "GET /v1/models HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "
		      PHANTOM "\r\n\r\n", head, body) == 200);
	CHECK(strstr(body, "GET /v1/models HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " REAL
		      "\r\n\r\n") != NULL);
	CHECK(!strstr(body, PHANTOM));
	/* keep-alive: a Content-Length body, a chunked one, on the same connection */
	CHECK(request(&s, "POST /up HTTP/1.1\r\nHost: api.test\r\nContent-Length: 5\r\n\r\nhello", head,
		      body) == 200);
	CHECK(strstr(body, "|hello") != NULL);
	CHECK(request(&s, "POST /up HTTP/1.1\r\nHost: api.test:443\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "5\r\nhello\r\n6;x=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n", head, body) == 200);
	CHECK(strstr(body, "|hello world") != NULL);
	/* pipelined: two requests in one write, two responses in order */
	CHECK(request(&s, "GET /a HTTP/1.1\r\nHost: api.test\r\n\r\nGET /b HTTP/1.1\r\nHost: api.test\r\n\r\n",
		      head, body) == 200);
	CHECK(strncmp(body, "GET /a ", 7) == 0);
	CHECK(read_head(&s.cli, head, sizeof head) && read_body(&s.cli, head, body, sizeof body) &&
	      strncmp(body, "GET /b ", 7) == 0);
	/* an absolute-form target is sent in origin-form */
	CHECK(request(&s, "GET https://api.test/abs?q=1 HTTP/1.1\r\nHost: api.test\r\n\r\n", head,
		      body) == 200);
	CHECK(strncmp(body, "GET /abs?q=1 HTTP/1.1\r\n", 23) == 0);
	/* an upgrade the server declines: the connection stays HTTP */
	CHECK(request(&s, "GET /ws HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
		      head, body) == 200);
	CHECK(request(&s, "GET /after HTTP/1.1\r\nHost: api.test\r\n\r\n", head, body) == 200);
	CHECK(strncmp(body, "GET /after ", 11) == 0);
	scene_end(&s);
	CHECK(s.job.requests == 8 && s.srv.requests == 8 && heads_seen == 8);
	CHECK(s.job.first_status == 200);
	CHECK_STR(s.job.error, "");
	CHECK(!s.job.refused);
	/* the counts: what the client received, what the server received */
	CHECK(s.job.bytes_in == s.cli.total && s.job.bytes_out == s.srv.e.total);
	CHECK(s.job.bytes_in > 0 && s.job.bytes_out > 0);
	/* the bodies went through on_data as on the wire */
	CHECK(strstr(data_log, "hello5\r\nhello\r\n6;x=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n") != NULL);
	SSL_CTX_free(up);
}

static void test_sse(void)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start(&s, up, SSE, true, "api.test", 443);
	CHECK(end_puts(&s.cli, "GET /stream HTTP/1.1\r\nHost: api.test\r\nAccept: text/event-stream\r\n\r\n"));
	CHECK(read_head(&s.cli, head, sizeof head) && atoi(head + 9) == 200);
	/* each part arrives while the server waits to write the next */
	const char *want[] = { "data: one\n\n", "data: two\n\n", "data: three\n\n" };
	for (int i = 0; i < 3; i++) {
		bool seen = false;
		while (!(seen = strstr(s.cli.buf, want[i]) != NULL))
			if (!fill(&s.cli))
				break;
		CHECK(seen);
		if (!seen)
			fprintf(stderr, "SSE part %d not seen before the server wrote the next\n", i + 1);
		sem_post(&s.srv.go);
	}
	scene_end(&s);
	CHECK(s.srv.waited_ok);
	CHECK(s.job.requests == 1 && s.job.first_status == 200);
	CHECK_STR(s.job.error, "");
	SSL_CTX_free(up);
}

static void test_websocket(void)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start(&s, up, WEBSOCKET, true, "api.test", 443);
	CHECK(end_puts(&s.cli, "GET /ws HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade\r\n"
			       "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n"));
	CHECK(read_head(&s.cli, head, sizeof head) && atoi(head + 9) == 101);
	/* what no HTTP parser would take: it is raw now */
	static const char frame[] = "\x81\x05hello\nbare LF\0NUL\r\n\r\nGET / HTTP/1.1\n";
	CHECK(end_write(&s.cli, frame, sizeof frame - 1));
	while (s.cli.len < sizeof frame - 1 && fill(&s.cli))
		;
	CHECK(s.cli.len == sizeof frame - 1 && memcmp(s.cli.buf, frame, sizeof frame - 1) == 0);
	scene_end(&s);
	CHECK(s.srv.raw_len == sizeof frame - 1 && memcmp(s.srv.raw, frame, sizeof frame - 1) == 0);
	CHECK(data_seen == sizeof frame - 1 && memcmp(data_log, frame, sizeof frame - 1) == 0);
	CHECK(s.job.requests == 1 && s.job.first_status == 101);
	CHECK_STR(s.job.error, "");
	SSL_CTX_free(up);
}

/* A server whose certificate does not verify: 502 naming why. */
static void bad_upstream(struct tls_ca *ca, const char *name, const char *reason)
{
	struct net_host h = H(name);
	struct werr e;
	SSL_CTX *up = tls_server_ctx(ca, &h, &e);
	struct scene s;
	scene_start(&s, up, ECHO, true, "api.test", 443);
	char want[300];
	snprintf(want, sizeof want, "HTTP/1.1 502 upstream certificate: %s\r\n", reason);
	int st = request(&s, "GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PHANTOM "\r\n\r\n",
			 head, body);
	CHECK(st == 502);
	CHECK(strncmp(head, want, strlen(want)) == 0);
	scene_end(&s);
	snprintf(want, sizeof want, "upstream certificate: %s", reason);
	CHECK_STR(s.job.error, want);
	CHECK(!s.job.refused && s.job.requests == 0 && s.srv.requests == 0 && !s.srv.handshake_ok);
	SSL_CTX_free(up);
}

static void test_bad_upstream(void)
{
	bad_upstream(rogue_ca, "api.test", "unable to get local issuer certificate");
	bad_upstream(upstream_ca, "other.test", "hostname mismatch");
}

/* A request refused, after one that was not: its answer comes after the
 * first response, the server never sees it. */
static void refused_after_one(const char *second, int status, const char *reason, bool by_callback)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start(&s, up, ECHO, true, "api.test", 443);
	char both[4096];
	snprintf(both, sizeof both, "GET /ok HTTP/1.1\r\nHost: api.test\r\n\r\n%s", second);
	int st = request(&s, both, head, body);
	CHECK(st == 200);
	if (st != 200)
		fprintf(stderr, "  case %s: got %d %s\n", second, st, head);
	CHECK(strncmp(body, "GET /ok ", 8) == 0);
	CHECK(read_head(&s.cli, head, sizeof head));
	char want[400];
	snprintf(want, sizeof want, "HTTP/1.1 %d %s\r\nX-Warden-Reason: %s\r\n", status, reason, reason);
	CHECK(strncmp(head, want, strlen(want)) == 0);
	if (strncmp(head, want, strlen(want)) != 0)
		fprintf(stderr, "  got: %s\n  expected: %s\n", head, want);
	CHECK(strcasestr(head, "\r\nConnection: close\r\n") != NULL);
	scene_end(&s);
	CHECK_STR(s.job.error, reason);
	CHECK(s.job.refused == by_callback);
	CHECK(s.job.requests == 1 && s.srv.requests == 1);
	CHECK(!strstr(s.srv.heads, "FORBIDDEN") && !strstr(s.srv.heads, "/second"));
	SSL_CTX_free(up);
}

static void test_refusals(void)
{
	refused_after_one("GET /second HTTP/1.1\r\nHost: api.test\r\nX-Token: FORBIDDEN\r\n\r\n", 403,
			  "forbidden by test", true);
	/* smuggling: both framings, a bare LF, a folded line, two lengths */
	refused_after_one("POST /second HTTP/1.1\r\nHost: api.test\r\nContent-Length: 4\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
			  "malformed request: Transfer-Encoding with Content-Length", false);
	refused_after_one("GET /second HTTP/1.1\nHost: api.test\r\n\r\n", 400,
			  "malformed request: LF without CR", false);
	refused_after_one("GET /second HTTP/1.1\r\nHost: api.test\r\nX: a\r\n b\r\n\r\n", 400,
			  "malformed request: obsolete line folding", false);
	refused_after_one("POST /second HTTP/1.1\r\nHost: api.test\r\nContent-Length: 1\r\n"
			  "Content-Length: 2\r\n\r\nab", 400, "malformed request: duplicate Content-Length",
			  false);
	refused_after_one("POST /second HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "3\nabc\r\n0\r\n\r\n", 400,
			  "malformed request body: LF without CR in chunked body", false);
	/* a Host (or URL) naming another server behind the same address */
	refused_after_one("GET /second HTTP/1.1\r\nHost: evil.test\r\n\r\n", 400,
			  "malformed request: Host header disagrees with the connection", false);
	refused_after_one("GET https://evil.test/second HTTP/1.1\r\nHost: api.test\r\n\r\n", 400,
			  "malformed request: URL disagrees with the connection", false);
	/* a rewrite that changes the request's framing is not sent */
	refused_after_one("GET /second HTTP/1.1\r\nHost: api.test\r\nX: GARBLE\r\n\r\n", 500,
			  "rewritten request head is malformed", false);
}

/* on_data refuses a body. When none of the request has left, the server
 * never sees it; when its head has, the server's connection is cut. The
 * client is answered either way. */
static void test_body_refused(void)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start(&s, up, ECHO, true, "api.test", 443);
	CHECK(request(&s, "POST /up HTTP/1.1\r\nHost: api.test\r\nContent-Length: 20\r\n\r\nkey=" PHANTOM
		      "&x=1", head, body) == 403);
	CHECK(strstr(head, "X-Warden-Reason: phantom in a body\r\n") != NULL);
	scene_end(&s);
	CHECK_STR(s.job.error, "phantom in a body");
	CHECK(s.job.refused && s.job.requests == 0 && s.srv.requests == 0);

	scene_start(&s, up, ECHO, true, "api.test", 443);
	CHECK(request(&s, "GET /ok HTTP/1.1\r\nHost: api.test\r\n\r\n", head, body) == 200);
	CHECK(end_puts(&s.cli, "POST /up HTTP/1.1\r\nHost: api.test\r\nContent-Length: 20\r\n\r\nkey="));
	CHECK(wait_sem(&s.srv.got_head) && wait_sem(&s.srv.got_head)); /* the server has the head */
	CHECK(request(&s, PHANTOM "&x=1", head, body) == 403);
	CHECK(strstr(head, "X-Warden-Reason: phantom in a body\r\n") != NULL);
	scene_end(&s);
	CHECK_STR(s.job.error, "phantom in a body");
	CHECK(s.job.refused && s.job.requests == 2 && s.srv.requests == 2);
	CHECK(s.job.bytes_out == s.srv.e.total);
	CHECK(!memmem(s.srv.e.buf, s.srv.e.len, PHANTOM, strlen(PHANTOM)));
	CHECK(strstr(data_log, "key=") != NULL);
	SSL_CTX_free(up);
}

/* A body read until the close: a clean close reaches the client as one
 * (close_notify), a close without close_notify as a truncation - never as a
 * complete body. A refused request queued behind it gets no answer: it
 * would read as more of that body. */
static void close_delimited(enum mode mode)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start(&s, up, mode, true, "api.test", 443);
	CHECK(end_puts(&s.cli, "GET /a HTTP/1.1\r\nHost: api.test\r\n\r\n"
			       "GET /b HTTP/1.1\r\nHost: api.test\r\nX: FORBIDDEN\r\n\r\n"));
	while (fill(&s.cli))
		;
	int err = SSL_get_error(s.cli.ssl, 0);
	bool unexpected = err == SSL_ERROR_SSL &&
			  ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
	ERR_clear_error();
	CHECK_STR(s.cli.buf, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close");
	if (mode == CLOSE_CLEAN)
		CHECK(err == SSL_ERROR_ZERO_RETURN);
	else
		CHECK(unexpected);
	scene_end(&s);
	CHECK(s.job.requests == 1 && s.job.first_status == 200);
	CHECK_STR(s.job.error, "forbidden by test");
	CHECK(s.job.refused);
	SSL_CTX_free(up);
}

static void test_close_delimited(void)
{
	close_delimited(CLOSE_CLEAN);
	close_delimited(CLOSE_DIRTY);
}

/* A client that does not trust the session CA ends the job with why. */
static void test_client_distrust(void)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start(&s, up, ECHO, false, "api.test", 443);
	scene_end(&s);
	CHECK(strncmp(s.job.error, "client TLS handshake: ", 22) == 0);
	CHECK(strstr(s.job.error, "unknown ca") != NULL);
	CHECK(s.job.requests == 0 && s.srv.requests == 0);
	SSL_CTX_free(up);
}

/* Plain mode: a host loopback port. */
static void test_plain(void)
{
	struct scene s;
	scene_start(&s, NULL, ECHO, true, "127.0.0.1", 4000);
	CHECK(request(&s, "GET /p HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nX-Api-Key: " PHANTOM "\r\n\r\n", head,
		      body) == 200);
	CHECK(strstr(body, "X-Api-Key: " REAL "\r\n") != NULL && !strstr(body, PHANTOM));
	CHECK(request(&s, "POST /p HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nContent-Length: 2\r\n\r\nok", head,
		      body) == 200);
	CHECK(strstr(body, "|ok") != NULL);
	CHECK(request(&s, "GET /p HTTP/1.1\r\nHost: localhost:4000\r\n\r\n", head, body) == 400);
	scene_end(&s);
	CHECK(s.job.requests == 2 && s.job.first_status == 200);
	CHECK_STR(s.job.error, "malformed request: Host header disagrees with the connection");

	/* any Host, for a destination the connection fixes */
	struct scene t;
	memset(&t, 0, sizeof t);
	int c[2], u[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, c) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, u) < 0 ||
	    pipe(t.done) < 0)
		abort();
	set_timeout(c[0], 5);
	set_timeout(u[1], 5);
	t.job = (struct intercept_job){ .client_fd = c[1], .upstream_fd = u[0], .port = 4000,
					.any_host = true, .on_head = on_head, .done_fd = t.done[1] };
	struct werr e;
	CHECK(intercept_start(&t.job, &e) == 0);
	t.srv.e.fd = u[1];
	sem_init(&t.srv.go, 0, 0);
	sem_init(&t.srv.got_head, 0, 0);
	pthread_create(&t.srv.t, NULL, server_main, &t.srv);
	t.cli.fd = c[0];
	CHECK(request(&t, "GET /any HTTP/1.1\r\nHost: localhost:4000\r\n\r\n", head, body) == 200);
	CHECK(strstr(body, "Host: localhost:4000\r\n") != NULL);
	scene_end(&t);
	CHECK(t.job.requests == 1);
	CHECK_STR(t.job.error, "");
}

/* What the proxy read after CONNECT reaches the bridge first. */
static void test_early(void)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	struct scene s;
	scene_start_early(&s, up, ECHO, true, "api.test", 443, true, NULL);
	CHECK(request(&s, "GET /e HTTP/1.1\r\nHost: api.test\r\n\r\n", head, body) == 200);
	CHECK(strncmp(body, "GET /e ", 7) == 0);
	scene_end(&s);
	CHECK(s.job.requests == 1);
	CHECK_STR(s.job.error, "");
	SSL_CTX_free(up);

	scene_start_early(&s, NULL, ECHO, true, "127.0.0.1", 4000, true,
			  "GET /early HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\nGET /sec");
	CHECK(read_head(&s.cli, head, sizeof head) && read_body(&s.cli, head, body, sizeof body) &&
	      strncmp(body, "GET /early ", 11) == 0);
	CHECK(request(&s, "ond HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\n", head, body) == 200);
	CHECK(strncmp(body, "GET /second ", 12) == 0);
	scene_end(&s);
	CHECK(s.job.requests == 2);
	CHECK_STR(s.job.error, "");
}

/* The owner ends running jobs at once: here a request the server holds,
 * with the client waiting. */
static void test_stop(void)
{
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	int stop[2];
	if (pipe(stop) < 0)
		abort();
	scene_stop_fd = stop[0];
	struct scene s;
	scene_start(&s, up, SILENT, true, "api.test", 443);
	scene_stop_fd = -1;
	CHECK(end_puts(&s.cli, "GET /held HTTP/1.1\r\nHost: api.test\r\n\r\n"));
	CHECK(wait_sem(&s.srv.got_head));
	close(stop[1]); /* every job watching stop[0] ends */
	/* well before the server's own 5 s timeout would end it */
	struct pollfd p = { .fd = s.done[0], .events = POLLIN };
	CHECK(poll(&p, 1, 3000) == 1);
	scene_end(&s);
	CHECK_STR(s.job.error, "stopped");
	CHECK(s.job.requests == 1 && s.job.first_status == 0);
	close(stop[0]);
	SSL_CTX_free(up);
}

/* ---- HTTP/2 ------------------------------------------------------------- */

/* One HTTP/2 end of the test (the server thread, or the client): an nghttp2
 * session over TLS on a non-blocking socket. */
struct h2end {
	SSL *ssl;
	int fd;
	nghttp2_session *s;
	bool eof;
};

/* Move what can move, waiting up to ms for the socket first. false when
 * the connection ended or failed. */
static bool h2_pump(struct h2end *e, int ms)
{
	struct pollfd p = { .fd = e->fd, .events = POLLIN };
	if (!SSL_pending(e->ssl))
		poll(&p, 1, ms);
	char buf[16384];
	for (;;) {
		size_t n;
		if (SSL_read_ex(e->ssl, buf, sizeof buf, &n) != 1) {
			int err = SSL_get_error(e->ssl, 0);
			ERR_clear_error();
			if (err != SSL_ERROR_WANT_READ) {
				e->eof = true;
				return false;
			}
			break;
		}
		if (nghttp2_session_mem_recv(e->s, (const uint8_t *)buf, n) < 0)
			return false;
	}
	const uint8_t *d;
	ssize_t n;
	while ((n = nghttp2_session_mem_send(e->s, &d)) > 0) {
		size_t off = 0;
		while (off < (size_t)n) {
			size_t w;
			if (SSL_write_ex(e->ssl, d + off, (size_t)n - off, &w) == 1) {
				off += w;
				continue;
			}
			if (SSL_get_error(e->ssl, 0) != SSL_ERROR_WANT_WRITE)
				return false;
			struct pollfd q = { .fd = e->fd, .events = POLLOUT };
			poll(&q, 1, 1000);
		}
	}
	return n == 0 && (nghttp2_session_want_read(e->s) || nghttp2_session_want_write(e->s));
}

static nghttp2_nv NV(const char *n, const char *v)
{
	return (nghttp2_nv){ (uint8_t *)n, (uint8_t *)v, strlen(n), strlen(v), 0 };
}

/* The server: per stream, its path, authorization and body; "/stream"
 * answers three parts, each written only once the client saw the one
 * before (go); "/goaway" sends a GOAWAY; anything else echoes what came. */
struct h2req {
	char path[64], auth[128], body[256];
	size_t body_len;
	size_t body_total;  /* every byte of the body */
	size_t big_off;     /* bytes of the response body sent */
	int parts_sent;
	struct timespec t0; /* /stall: when its first part went */
};

#define BIG (1536 * 1024) /* well past every window of HTTP/2's defaults */

/* Byte i of the big bodies. */
static uint8_t big_byte(size_t i)
{
	return (uint8_t)('a' + (i * 7 + i / 4096) % 26);
}

struct h2srv {
	struct h2end e;
	SSL_CTX *ctx;
	pthread_t t;
	sem_t go;
	int released;           /* parts of /stream the client has made room for */
	int32_t stream_id;      /* /stream */
	int32_t stall_id;       /* /stall */
	struct timespec stall_rest; /* when /stall's second part went */
	bool alpn_h2;
	char seen[4096];        /* "path auth|" for every request that ended */
	char resp[8][300];
	int nresp;
	int resets;             /* RST_STREAM received */
};

static const char *const h2parts[] = { "data: one\n\n", "data: two\n\n", "data: three\n\n" };

static ssize_t srv_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len,
			uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2srv *v = ud;
	struct h2req *r = nghttp2_session_get_stream_user_data(sess, id);
	if (strcmp(r->path, "/big") == 0) {
		size_t k = BIG - r->big_off < len ? BIG - r->big_off : len;
		for (size_t i = 0; i < k; i++)
			buf[i] = big_byte(r->big_off + i);
		r->big_off += k;
		if (r->big_off == BIG)
			*flags |= NGHTTP2_DATA_FLAG_EOF;
		return (ssize_t)k;
	}
	/* the value across two DATA frames; a body ending in its start; the
	 * same, then a pause of a second before the rest */
	if (strcmp(r->path, "/split") == 0 || strcmp(r->path, "/tail") == 0 ||
	    strcmp(r->path, "/stall") == 0) {
		const char *part = r->path[1] == 't' ? "tail REAL-SEC"
				 : r->path[2] == 'p' ? (r->parts_sent ? "ET-4567890 end" : "split REAL-SECR")
						     : (r->parts_sent ? "ECRET-4567890" : "stall REAL-S");
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (r->parts_sent == 0)
			r->t0 = now;
		else if (r->path[2] == 't' && now.tv_sec - r->t0.tv_sec < 2)
			return NGHTTP2_ERR_DEFERRED; /* resumed by the server's loop */
		if (r->parts_sent++ == 1 || r->path[1] == 't')
			*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (r->path[2] == 't' && r->parts_sent == 2)
			v->stall_rest = now;
		memcpy(buf, part, strlen(part));
		return (ssize_t)strlen(part);
	}
	if (strcmp(r->path, "/stream") == 0) {
		if (r->parts_sent == 3) {
			*flags |= NGHTTP2_DATA_FLAG_EOF;
			return 0;
		}
		if (r->parts_sent >= v->released)
			return NGHTTP2_ERR_DEFERRED;
		const char *p = h2parts[r->parts_sent++];
		memcpy(buf, p, strlen(p));
		return (ssize_t)strlen(p);
	}
	const char *resp_body = src->ptr;
	size_t n = strlen(resp_body) - r->big_off; /* what is left, as far as the window allows */
	if (n > len)
		n = len;
	memcpy(buf, resp_body + r->big_off, n);
	r->big_off += n;
	if (r->big_off == strlen(resp_body))
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int srv_begin(nghttp2_session *sess, const nghttp2_frame *fr, void *ud)
{
	if (fr->hd.type == NGHTTP2_HEADERS && fr->headers.cat == NGHTTP2_HCAT_REQUEST)
		nghttp2_session_set_stream_user_data(sess, fr->hd.stream_id,
						     xcalloc(1, sizeof(struct h2req)));
	return 0;
}

static int srv_header(nghttp2_session *sess, const nghttp2_frame *fr, const uint8_t *name,
		      size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct h2req *r = nghttp2_session_get_stream_user_data(sess, fr->hd.stream_id);
	if (!r)
		return 0;
	if (strcmp((const char *)name, ":path") == 0)
		snprintf(r->path, sizeof r->path, "%s", value);
	if (strcmp((const char *)name, "authorization") == 0)
		snprintf(r->auth, sizeof r->auth, "%s", value);
	return 0;
}

static int srv_data(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
		    void *ud)
{
	struct h2req *r = nghttp2_session_get_stream_user_data(sess, id);
	if (r && r->body_len + n < sizeof r->body) {
		memcpy(r->body + r->body_len, d, n);
		r->body_len += n;
	}
	for (size_t i = 0; r && i < n; i++)
		r->body_total += d[i] == big_byte(r->body_total) ? 1 : 0x100000000; /* a wrong byte shows */
	return 0;
}

static int srv_frame(nghttp2_session *sess, const nghttp2_frame *fr, void *ud)
{
	struct h2srv *v = ud;
	if (fr->hd.type == NGHTTP2_RST_STREAM)
		v->resets++;
	if ((fr->hd.type != NGHTTP2_HEADERS && fr->hd.type != NGHTTP2_DATA) ||
	    !(fr->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	struct h2req *r = nghttp2_session_get_stream_user_data(sess, fr->hd.stream_id);
	if (!r)
		return 0;
	size_t l = strlen(v->seen);
	snprintf(v->seen + l, sizeof v->seen - l, "%s %s|", r->path, r->auth);
	if (strcmp(r->path, "/goaway") == 0) {
		nghttp2_submit_goaway(sess, NGHTTP2_FLAG_NONE, fr->hd.stream_id, NGHTTP2_NO_ERROR,
				      NULL, 0);
	}
	if (strcmp(r->path, "/hang") == 0)
		return 0; /* never answered: the client resets it */
	nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "text/plain"),
			    NV("x-echo", r->auth) };
	nghttp2_data_provider prd = { .read_callback = srv_read };
	if (strcmp(r->path, "/stream") == 0) {
		v->stream_id = fr->hd.stream_id;
	} else if (strcmp(r->path, "/stall") == 0) {
		v->stall_id = fr->hd.stream_id;
	} else if (v->nresp < 8) {
		char *b = v->resp[v->nresp++];
		if (strcmp(r->path, "/upload-big") == 0)
			snprintf(b, 300, "got=%zu", r->body_total);
		else
			snprintf(b, 300, "auth=%s;body=%.*s", r->auth, (int)r->body_len, r->body);
		prd.source.ptr = b;
	}
	nghttp2_submit_response(sess, fr->hd.stream_id, nv, 3, &prd);
	return 0;
}

static int srv_close(nghttp2_session *sess, int32_t id, uint32_t code, void *ud)
{
	free(nghttp2_session_get_stream_user_data(sess, id));
	nghttp2_session_set_stream_user_data(sess, id, NULL);
	return 0;
}

static int srv_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		    const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char *sel;
	if (SSL_select_next_proto(&sel, outlen, (const unsigned char *)"\x02h2", 3, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

static void *h2srv_main(void *arg)
{
	struct h2srv *v = arg;
	struct h2end *e = &v->e;
	e->ssl = SSL_new(v->ctx);
	SSL_set_fd(e->ssl, e->fd);
	if (SSL_accept(e->ssl) != 1)
		goto out;
	const unsigned char *a;
	unsigned alen;
	SSL_get0_alpn_selected(e->ssl, &a, &alen);
	v->alpn_h2 = alen == 2 && memcmp(a, "h2", 2) == 0;
	fcntl(e->fd, F_SETFL, O_NONBLOCK);
	nghttp2_session_callbacks *cb;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, srv_begin);
	nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, srv_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, srv_close);
	nghttp2_session_server_new(&e->s, cb, v);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(e->s, NGHTTP2_FLAG_NONE, NULL, 0);
	v->released = 1;
	time_t start = time(NULL);
	while (h2_pump(e, 20) && time(NULL) - start < 15) {
		if (v->stall_id)
			nghttp2_session_resume_data(e->s, v->stall_id);
		if (sem_trywait(&v->go) == 0) {
			v->released++;
			if (v->stream_id)
				nghttp2_session_resume_data(e->s, v->stream_id);
		}
	}
	nghttp2_session_del(e->s);
out:
	SSL_shutdown(e->ssl);
	SSL_free(e->ssl);
	close(e->fd);
	return NULL;
}

/* The client's streams. */
struct h2cs {
	int32_t id;
	int status;
	char body[512];
	size_t body_len;
	size_t total;       /* bytes of the body, as big_byte makes them (else 2^32 more) */
	char echo[128];     /* x-echo */
	size_t sent;        /* bytes of the request body sent */
	int chunks;
	struct timespec first; /* when its first chunk came */
	bool closed;
	uint32_t code;
};

struct h2cli {
	struct h2end e;
	struct h2cs st[12];
	int n;
	struct h2srv *srv;
	bool got_goaway;
};

static struct h2cs *cli_stream(struct h2cli *c, int32_t id)
{
	for (int i = 0; i < c->n; i++)
		if (c->st[i].id == id)
			return &c->st[i];
	return NULL;
}

static int cli_header(nghttp2_session *sess, const nghttp2_frame *fr, const uint8_t *name,
		      size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct h2cs *s = cli_stream(ud, fr->hd.stream_id);
	if (s && strcmp((const char *)name, ":status") == 0)
		s->status = atoi((const char *)value);
	if (s && strcmp((const char *)name, "x-echo") == 0)
		snprintf(s->echo, sizeof s->echo, "%s", value);
	return 0;
}

static int cli_data(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
		    void *ud)
{
	struct h2cli *c = ud;
	struct h2cs *s = cli_stream(c, id);
	if (!s)
		return 0;
	if (s->body_len + n < sizeof s->body) {
		memcpy(s->body + s->body_len, d, n);
		s->body_len += n;
	}
	for (size_t i = 0; i < n; i++)
		s->total += d[i] == big_byte(s->total) ? 1 : 0x100000000;
	if (!s->chunks++)
		clock_gettime(CLOCK_MONOTONIC, &s->first);
	if (s == &c->st[1]) /* /stream: room for the next part, now that this one came */
		sem_post(&c->srv->go);
	return 0;
}

static int cli_frame(nghttp2_session *sess, const nghttp2_frame *fr, void *ud)
{
	struct h2cli *c = ud;
	if (fr->hd.type == NGHTTP2_GOAWAY)
		c->got_goaway = true;
	return 0;
}

static int cli_close(nghttp2_session *sess, int32_t id, uint32_t code, void *ud)
{
	struct h2cs *s = cli_stream(ud, id);
	if (s) {
		s->closed = true;
		s->code = code;
	}
	return 0;
}

static ssize_t cli_body(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len,
			uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	const char *b = src->ptr;
	struct h2cs *s = cli_stream(ud, id);
	size_t n = strlen(b) - s->sent; /* what is left, as far as the window allows */
	if (n > len)
		n = len;
	memcpy(buf, b + s->sent, n);
	s->sent += n;
	if (s->sent == strlen(b))
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static size_t big_sent;

static ssize_t cli_big(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len,
		       uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	size_t k = BIG - big_sent < len ? BIG - big_sent : len;
	for (size_t i = 0; i < k; i++)
		buf[i] = big_byte(big_sent + i);
	big_sent += k;
	if (big_sent == BIG)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)k;
}

static int32_t cli_submit(struct h2cli *c, const char *method, const char *path,
			  const char *hname, const char *hvalue, const char *req_body)
{
	nghttp2_nv nv[] = { NV(":method", method), NV(":scheme", "https"),
			    NV(":authority", "api.test"), NV(":path", path),
			    NV(hname ? hname : "x-none", hvalue ? hvalue : "") };
	nghttp2_data_provider prd = { .source.ptr = (void *)req_body,
				      .read_callback = req_body && strcmp(req_body, "BIG") == 0 ? cli_big
												  : cli_body };
	int32_t id = nghttp2_submit_request(c->e.s, NULL, nv, 5, req_body ? &prd : NULL, NULL);
	c->st[c->n++] = (struct h2cs){ .id = id };
	return id;
}

static bool all_closed(const struct h2cli *c)
{
	for (int i = 0; i < c->n; i++)
		if (!c->st[i].closed)
			return false;
	return true;
}

/* The owner's on_resp: the real value masked wherever it is whole. */
static size_t mask_real(void *ctx, char *buf, size_t len)
{
	char *f;
	while ((f = memmem(buf, len, REAL, strlen(REAL))))
		memset(f, 'R', strlen(REAL));
	return 0;
}

#define MASKED "RRRRRRRRRRRRRRRRRRR" /* REAL masked */

/* The owner's on_resp as egress.c's: the real value masked wherever it is
 * whole, and the longest end that begins it held for the next read. */
static size_t mask_hold(void *ctx, char *buf, size_t len)
{
	mask_real(ctx, buf, len);
	size_t vl = strlen(REAL);
	for (size_t k = vl - 1 < len ? vl - 1 : len; k > 0; k--)
		if (memcmp(buf + len - k, REAL, k) == 0)
			return k;
	return 0;
}

static int post(struct scene *s, const char *b)
{
	char req[512];
	snprintf(req, sizeof req, "POST /p HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(b), b);
	return request(s, req, head, body);
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && strcmp(s + n - m, end) == 0;
}

/* What on_resp holds (the start of the value, maybe) never outlasts the
 * response it ends: a body that ends in the value's first bytes reaches
 * the client whole while the server waits for the next request (it waited
 * for the idle timeout before); the value whole is still masked, in one
 * response, split between two reads of one, and a byte a read. In a stream not framed
 * (after a 101), the held end goes after a moment of silence. */
static void test_resp_held(void)
{
	struct scene s;
	scene_on_resp = mask_hold;
	scene_start(&s, NULL, ECHO, true, "127.0.0.1", 4000);
	CHECK(post(&s, "ends in R") == 200);
	CHECK(ends_with(body, "|ends in R"));
	CHECK(post(&s, "ends REAL-SECRET-456789") == 200);
	CHECK(ends_with(body, "|ends REAL-SECRET-456789"));
	CHECK(post(&s, "a " REAL " b " REAL) == 200);
	CHECK(ends_with(body, "|a " MASKED " b " MASKED));
	scene_end(&s);
	CHECK(s.job.requests == 3);
	CHECK_STR(s.job.error, "");

	/* a response that pauses on the value's start: the held part goes
	 * after a moment, before the rest comes */
	scene_start(&s, NULL, PAUSE, true, "127.0.0.1", 4000);
	CHECK(end_puts(&s.cli, "GET /p HTTP/1.1\r\nHost: 127.0.0.1:4000\r\n\r\n"));
	bool seen = false;
	while (!(seen = strstr(s.cli.buf, "pause REAL-S") != NULL) && fill(&s.cli))
		;
	CHECK(seen);
	sem_post(&s.srv.go);
	CHECK(read_head(&s.cli, head, sizeof head) && read_body(&s.cli, head, body, sizeof body));
	CHECK_STR(body, "pause " REAL);
	scene_end(&s);
	CHECK(s.srv.waited_ok);

	/* a read that is all the value's start (a byte a record) waits whole:
	 * the value is masked even when it comes a byte at a time */
	struct net_host api = H("api.test");
	struct werr e;
	SSL_CTX *up = tls_server_ctx(upstream_ca, &api, &e);
	scene_start(&s, up, DRIP, true, "api.test", 443);
	CHECK(request(&s, "GET /d HTTP/1.1\r\nHost: api.test\r\n\r\n", head, body) == 200);
	CHECK_STR(body, "drip " MASKED " end");
	scene_end(&s);
	CHECK(s.srv.waited_ok);
	SSL_CTX_free(up);

	scene_start(&s, NULL, WEBSOCKET, true, "127.0.0.1", 4000);
	scene_on_resp = NULL;
	CHECK(end_puts(&s.cli, "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nConnection: Upgrade\r\n"
			       "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n"));
	CHECK(read_head(&s.cli, head, sizeof head) && atoi(head + 9) == 101);
	static const char frame[] = "raw then REAL-SEC";
	CHECK(end_puts(&s.cli, frame));
	while (s.cli.len < sizeof frame - 1 && fill(&s.cli))
		;
	CHECK(s.cli.len == sizeof frame - 1 && memcmp(s.cli.buf, frame, sizeof frame - 1) == 0);
	scene_end(&s);
	CHECK_STR(s.job.error, "");
}

static void test_h2(void)
{
	memset(heads_log, 0, sizeof heads_log);
	heads_seen = 0;
	data_seen = 0;
	memset(data_log, 0, sizeof data_log);
	int cfd[2], ufd[2], done[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cfd) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ufd) < 0 || pipe(done) < 0)
		abort();
	set_timeout(cfd[0], 5);
	set_timeout(ufd[1], 5);
	struct werr e = { 0 };
	struct net_host api = H("api.test");

	/* the server: a leaf of upstream_ca, h2 only */
	static struct h2srv srv;
	memset(&srv, 0, sizeof srv);
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = tls_ca_issue(upstream_ca, &api, key, &e);
	srv.ctx = SSL_CTX_new(TLS_server_method());
	CHECK(x && SSL_CTX_use_certificate(srv.ctx, x) == 1 &&
	      SSL_CTX_use_PrivateKey(srv.ctx, key) == 1);
	X509_free(x);
	EVP_PKEY_free(key);
	SSL_CTX_set_alpn_select_cb(srv.ctx, srv_alpn, NULL);
	srv.e.fd = ufd[1];
	sem_init(&srv.go, 0, 0);

	struct intercept_job job = { .client_fd = cfd[1], .upstream_fd = ufd[0], .host = api,
				     .port = 443, .on_head = on_head, .on_data = on_data,
				     .on_resp = mask_hold, .done_fd = done[1], .stop_fd = -1 };
	job.server_ctx = tls_server_ctx(session_ca, &api, &e);
	job.client_ctx = upstream_client_ctx;
	SSL_CTX *sctx = job.server_ctx;
	CHECK(intercept_start(&job, &e) == 0);
	SSL_CTX_free(sctx);
	pthread_create(&srv.t, NULL, h2srv_main, &srv);

	/* the client: trusts the session CA, offers h2 and http/1.1 */
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	BIO *b = BIO_new_mem_buf(tls_ca_pem(session_ca), -1);
	X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), ca);
	X509_free(ca);
	BIO_free(b);
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_alpn_protos(cctx, (const unsigned char *)"\x02h2\x08http/1.1", 12);
	static struct h2cli c;
	memset(&c, 0, sizeof c);
	c.srv = &srv;
	c.e.fd = cfd[0];
	c.e.ssl = SSL_new(cctx);
	SSL_set_fd(c.e.ssl, cfd[0]);
	SSL_set_tlsext_host_name(c.e.ssl, "api.test");
	SSL_set1_host(c.e.ssl, "api.test");
	CHECK(SSL_connect(c.e.ssl) == 1);
	const unsigned char *a;
	unsigned alen;
	SSL_get0_alpn_selected(c.e.ssl, &a, &alen);
	CHECK(alen == 2 && memcmp(a, "h2", 2) == 0);
	fcntl(cfd[0], F_SETFL, O_NONBLOCK);
	nghttp2_session_callbacks *cb;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, cli_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cli_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, cli_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, cli_close);
	nghttp2_session_client_new(&c.e.s, cb, &c);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(c.e.s, NGHTTP2_FLAG_NONE, NULL, 0);

	/* four streams at once: a rewritten header, a streamed response, a
	 * body, one refused by on_head; then one the client resets */
	cli_submit(&c, "GET", "/one", "authorization", "Bearer " PHANTOM, NULL);
	cli_submit(&c, "GET", "/stream", NULL, NULL, NULL);
	cli_submit(&c, "POST", "/post", "content-type", "text/plain", "hello body");
	cli_submit(&c, "GET", "/no", "x-test", "FORBIDDEN", NULL);
	time_t t0 = time(NULL);
	while (!all_closed(&c) && time(NULL) - t0 < 10 && h2_pump(&c.e, 50))
		;
	CHECK(all_closed(&c));
	CHECK(c.st[0].status == 200 && c.st[0].code == 0);
	/* the server got the real value, and its echo of it came back masked
	 * by on_resp, in a field and in the body */
	CHECK_STR(c.st[0].body, "auth=Bearer " MASKED ";body=");
	CHECK_STR(c.st[0].echo, "Bearer " MASKED);
	CHECK(c.st[1].status == 200 && c.st[1].chunks == 3);
	CHECK_STR(c.st[1].body, "data: one\n\ndata: two\n\ndata: three\n\n");
	CHECK(c.st[2].status == 200);
	CHECK_STR(c.st[2].body, "auth=;body=hello body");
	CHECK(c.st[3].status == 403);
	CHECK_STR(c.st[3].body, "forbidden by test\n");
	CHECK(strstr(data_log, "hello body") != NULL);
	CHECK(strstr(heads_log, "GET /one HTTP/1.1\r\nHost: api.test\r\nauthorization: Bearer " PHANTOM
				"\r\n") != NULL);
	CHECK(strstr(heads_log, "POST /post HTTP/1.1\r\nHost: api.test\r\n") != NULL);

	/* a stream the server never answers, reset by the client: the reset
	 * reaches the server; a body refused by on_data; then a request that
	 * makes the server go away: its response arrives, and the GOAWAY */
	int32_t hang = cli_submit(&c, "GET", "/hang", NULL, NULL, NULL);
	t0 = time(NULL);
	while (!strstr(srv.seen, "/hang") && time(NULL) - t0 < 5 && h2_pump(&c.e, 50))
		;
	nghttp2_submit_rst_stream(c.e.s, NGHTTP2_FLAG_NONE, hang, NGHTTP2_CANCEL);
	cli_submit(&c, "POST", "/leak", "content-type", "text/plain", "a " PHANTOM " in a body");
	t0 = time(NULL);
	while (!c.st[5].closed && time(NULL) - t0 < 10 && h2_pump(&c.e, 50))
		;
	CHECK(c.st[5].status == 403); /* refused by on_data: that stream alone */
	CHECK_STR(c.st[5].body, "phantom in a body\n");
	/* bodies larger than the windows, both ways at once: flow control
	 * passed on, every byte through */
	big_sent = 0;
	cli_submit(&c, "GET", "/big", NULL, NULL, NULL);
	cli_submit(&c, "POST", "/upload-big", "content-type", "application/octet-stream", "BIG");
	t0 = time(NULL);
	while (!(c.st[6].closed && c.st[7].closed) && time(NULL) - t0 < 20 && h2_pump(&c.e, 50))
		;
	if (!c.st[7].closed)
		fprintf(stderr, "h2 client: eof %d, %lds\n", c.e.eof, (long)(time(NULL) - t0));
	CHECK(c.st[6].status == 200 && c.st[6].total == BIG);
	char want[40];
	snprintf(want, sizeof want, "got=%d", BIG);
	CHECK(c.st[7].status == 200);
	CHECK_STR(c.st[7].body, want);
	/* what on_resp holds back (the value's start): the value split
	 * between two DATA frames masked whole; a body that ends in its
	 * start whole at END_STREAM; a stream that pauses on such bytes lets
	 * them go (HELD_MS) before its rest comes, a second later */
	cli_submit(&c, "GET", "/split", NULL, NULL, NULL);
	cli_submit(&c, "GET", "/tail", NULL, NULL, NULL);
	cli_submit(&c, "GET", "/stall", NULL, NULL, NULL);
	t0 = time(NULL);
	while (!all_closed(&c) && time(NULL) - t0 < 10 && h2_pump(&c.e, 50))
		;
	CHECK_STR(c.st[8].body, "split " MASKED " end");
	CHECK_STR(c.st[9].body, "tail REAL-SEC");
	CHECK(c.st[10].body_len == strlen("stall " REAL) && c.st[10].chunks >= 2);
	CHECK(c.st[10].first.tv_sec < srv.stall_rest.tv_sec ||
	      (c.st[10].first.tv_sec == srv.stall_rest.tv_sec &&
	       c.st[10].first.tv_nsec < srv.stall_rest.tv_nsec));
	cli_submit(&c, "GET", "/goaway", NULL, NULL, NULL);
	t0 = time(NULL);
	while (!(all_closed(&c) && c.got_goaway) && time(NULL) - t0 < 10 && h2_pump(&c.e, 50))
		;
	CHECK(c.st[11].status == 200 && c.got_goaway);
	/* /hang's reset; /leak's upstream stream is reset too, or never sent
	 * when the refusal came before its HEADERS went out */
	CHECK(srv.resets >= 1 && strstr(srv.seen, "/leak") == NULL);

	CHECK(srv.alpn_h2);
	CHECK(strstr(srv.seen, "/one Bearer " REAL "|") != NULL);
	CHECK(strstr(srv.seen, PHANTOM) == NULL);
	CHECK(strstr(srv.seen, "/no") == NULL);
	CHECK(strstr(srv.seen, "/stream |") != NULL && strstr(srv.seen, "/post |") != NULL);

	/* the end: the client goes; the job and the server end */
	nghttp2_session_terminate_session(c.e.s, NGHTTP2_NO_ERROR);
	h2_pump(&c.e, 0);
	nghttp2_session_del(c.e.s);
	SSL_shutdown(c.e.ssl);
	SSL_free(c.e.ssl);
	SSL_CTX_free(cctx);
	close(cfd[0]);
	struct pollfd p = { .fd = done[0], .events = POLLIN };
	void *got = NULL;
	CHECK(poll(&p, 1, 20000) == 1 && read(done[0], &got, sizeof got) == sizeof got &&
	      got == &job);
	close(done[0]);
	close(done[1]);
	pthread_join(srv.t, NULL);
	sem_destroy(&srv.go);
	SSL_CTX_free(srv.ctx);
	CHECK(job.requests == 11); /* every stream but the one refused by on_head */
	if (job.requests != 8)
		fprintf(stderr, "h2 job: %s\n", job.error);
	CHECK(job.first_status == 200);
	CHECK(job.refused);
	CHECK_STR(job.error, "forbidden by test");
	CHECK(job.bytes_in > 0 && job.bytes_out > 0);
}

static void test_start_errors(void)
{
	int fds[2], done[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0 || pipe(done) < 0)
		abort();
	struct intercept_job j = { .client_fd = fds[0], .upstream_fd = fds[1],
				   .server_ctx = upstream_client_ctx, .done_fd = done[1] };
	struct werr e = { 0 };
	CHECK(intercept_start(&j, &e) == -1);
	CHECK_STR(e.msg, "intercepting a connection: TLS needs both contexts");
	CHECK(fcntl(fds[0], F_GETFD) == -1 && errno == EBADF); /* closed */
	close(done[0]);
	close(done[1]);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	struct werr e = { 0 };
	struct net_host sess[] = { H("api.test"), H("127.0.0.1") };
	struct net_host up[] = { H("api.test"), H("other.test") };
	session_ca = tls_ca_new(sess, 2, &e);
	upstream_ca = tls_ca_new(up, 2, &e);
	rogue_ca = tls_ca_new(up, 2, &e);
	int fd = mkstemp(upstream_ca_file);
	if (!session_ca || !upstream_ca || !rogue_ca || fd < 0 ||
	    write(fd, tls_ca_pem(upstream_ca), strlen(tls_ca_pem(upstream_ca))) < 0) {
		fprintf(stderr, "setting up: %s\n", e.msg);
		return 1;
	}
	close(fd);
	const char *files[] = { upstream_ca_file, NULL };
	upstream_client_ctx = tls_client_ctx(files, &e);
	if (!upstream_client_ctx) {
		fprintf(stderr, "setting up: %s\n", e.msg);
		return 1;
	}

	test_rewrite_keepalive();
	test_sse();
	test_websocket();
	test_bad_upstream();
	test_refusals();
	test_body_refused();
	test_close_delimited();
	test_client_distrust();
	test_plain();
	test_resp_held();
	test_early();
	test_stop();
	test_start_errors();
	test_h2();

	SSL_CTX_free(upstream_client_ctx);
	tls_ca_free(session_ca);
	tls_ca_free(upstream_ca);
	tls_ca_free(rogue_ca);
	unlink(upstream_ca_file);
	return check_status_counted("test-net-intercept");
}
