/* proxy_tls.c - the TLS modes of proxy_load (bench/proxy): an HTTPS server
 * on the host's loopback, and the clients that measure, from inside `warden
 * run`, a request through warden's TLS interception (a secret bound to the
 * server) against the same request through a plain CONNECT tunnel.
 *
 *   proxy_load tls-serve ADDR PORT SECONDS CERT KEY [CC]
 *       a TLS server (a thread per connection, keep-alive): "GET /bytes/N"
 *       gets 200 and N bytes of body. With PROXY_LOAD_AUTH set, a request
 *       whose Authorization header is not exactly that value gets 401 (so
 *       the bench knows warden put the real value in). CERT: the chain in
 *       PEM, KEY its key. Prints "LISTENING PORT", exits after SECONDS.
 *   proxy_load tls-fetch HOST PORT BYTES PROXY CAFILE
 *       one TLS connection (through a CONNECT tunnel of 127.0.0.1:PROXY, or
 *       direct when PROXY is "-"), the server verified against CAFILE alone
 *       (by address when HOST is one), one GET /bytes/BYTES, the body read.
 *       Prints "FETCH bytes B seconds S mbps M setup_us U": S from the
 *       request to the body's last byte, U the connection before it
 *       (CONNECT and handshake).
 *   proxy_load tls-latency HOST PORT CONNS REQS PROXY CAFILE
 *       CONNS connections one after the other; on each, one request to warm
 *       it (counted in its setup: CONNECT, handshake, first request), then
 *       REQS requests one at a time (keep-alive, 64 bytes of body), each
 *       timed from its write to its response's last byte. Prints
 *       "TLSLATENCY requests N median_us M p90_us P setup_median_us S
 *       setup_p90_us T".
 * The clients send "Authorization: $BENCH_AUTH" when BENCH_AUTH is set. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "proxy_load.h"

#define SMALL_BODY 64

static const unsigned char alpn_http11[] = "\x08http/1.1";

static void ssl_errors(const char *what)
{
	unsigned long e = ERR_get_error();
	char s[256];
	if (e)
		ERR_error_string_n(e, s, sizeof s);
	fprintf(stderr, "proxy_load: %s: %s\n", what, e ? s : "failed");
	ERR_clear_error();
}

/* ---- client ------------------------------------------------------------ */

struct tconn {
	int fd;
	SSL *ssl;
	char in[HEAD_MAX];   /* response bytes read past the last body */
	size_t len;
};

static SSL_CTX *client_ctx(const char *cafile)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx || SSL_CTX_load_verify_file(ctx, cafile) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof alpn_http11 - 1) != 0) {
		ssl_errors(cafile);
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

static int tconn_open(struct tconn *t, SSL_CTX *ctx, const char *host, const char *port,
		      const char *proxy)
{
	unsigned char ip[16];
	*t = (struct tconn){ .fd = open_conn(host, port, proxy) };
	if (t->fd < 0)
		return -1;
	if (!(t->ssl = SSL_new(ctx)) || SSL_set_fd(t->ssl, t->fd) != 1)
		goto fail;
	if (inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), host) != 1)
			goto fail;
	} else if (SSL_set_tlsext_host_name(t->ssl, host) != 1 || SSL_set1_host(t->ssl, host) != 1) {
		goto fail;
	}
	if (SSL_connect(t->ssl) != 1) {
		long v = SSL_get_verify_result(t->ssl);
		if (v != X509_V_OK)
			fprintf(stderr, "proxy_load: %s:%s: certificate: %s\n", host, port,
				X509_verify_cert_error_string(v));
		goto fail;
	}
	return 0;
fail:
	ssl_errors("TLS handshake");
	SSL_free(t->ssl);
	close(t->fd);
	t->ssl = NULL;
	t->fd = -1;
	return -1;
}

static void tconn_close(struct tconn *t)
{
	if (t->ssl)
		SSL_shutdown(t->ssl);
	SSL_free(t->ssl);
	if (t->fd >= 0)
		close(t->fd);
	t->ssl = NULL;
	t->fd = -1;
}

static int tconn_request(struct tconn *t, const char *host, const char *port, long long n)
{
	const char *auth = getenv("BENCH_AUTH");
	char req[1024];
	size_t w;
	int len = snprintf(req, sizeof req,
			   "GET /bytes/%lld HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: proxy_load\r\n"
			   "Accept: */*\r\n%s%s%s\r\n",
			   n, host, port, auth ? "Authorization: " : "", auth ? auth : "",
			   auth ? "\r\n" : "");
	if (len < 0 || (size_t)len >= sizeof req) {
		fprintf(stderr, "proxy_load: request too long\n");
		return -1;
	}
	if (SSL_write_ex(t->ssl, req, (size_t)len, &w) != 1) {
		ssl_errors("sending the request");
		return -1;
	}
	return 0;
}

/* One response: a 200 with a Content-Length, its body read (not past it)
 * and dropped. Returns the body's length, or -1. */
static long long tconn_response(struct tconn *t)
{
	char *end;
	size_t n;
	while (!(end = memmem(t->in, t->len, "\r\n\r\n", 4))) {
		if (t->len == sizeof t->in) {
			fprintf(stderr, "proxy_load: response head too long\n");
			return -1;
		}
		if (SSL_read_ex(t->ssl, t->in + t->len, sizeof t->in - t->len, &n) != 1) {
			ssl_errors("reading the response head");
			return -1;
		}
		t->len += n;
	}
	size_t hl = (size_t)(end + 4 - t->in);
	char head[HEAD_MAX + 1];
	memcpy(head, t->in, hl);
	head[hl] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
		head[strcspn(head, "\r\n")] = '\0';
		fprintf(stderr, "proxy_load: the server answered %s\n", head);
		return -1;
	}
	char *cl = strcasestr(head, "\r\nContent-Length:");
	long long want = cl ? strtoll(cl + 17, NULL, 10) : -1;
	if (want < 0) {
		fprintf(stderr, "proxy_load: a response without Content-Length\n");
		return -1;
	}
	size_t have = t->len - hl;
	if ((long long)have >= want) { /* the body is here; keep what follows it */
		size_t rest = have - (size_t)want;
		memmove(t->in, t->in + hl + want, rest);
		t->len = rest;
		return want;
	}
	t->len = 0;
	for (long long got = (long long)have; got < want; got += (long long)n) {
		size_t k = want - got < (long long)sizeof buf ? (size_t)(want - got) : sizeof buf;
		if (SSL_read_ex(t->ssl, buf, k, &n) != 1) {
			ssl_errors("reading the body");
			fprintf(stderr, "proxy_load: body ended after %lld of %lld bytes\n", got, want);
			return -1;
		}
	}
	return want;
}

static const char *proxy_arg(const char *proxy)
{
	return strcmp(proxy, "-") == 0 ? NULL : proxy;
}

int tls_fetch(const char *host, const char *port, const char *bytes_s, const char *proxy,
	      const char *cafile)
{
	long long want = atoll(bytes_s);
	struct tconn t;
	if (want <= 0) {
		fprintf(stderr, "proxy_load: BYTES must be positive\n");
		return 2;
	}
	SSL_CTX *ctx = client_ctx(cafile);
	if (!ctx)
		return 1;
	double t0 = now_s();
	if (tconn_open(&t, ctx, host, port, proxy_arg(proxy)) < 0) {
		SSL_CTX_free(ctx);
		return 1;
	}
	double t1 = now_s();
	long long got = tconn_request(&t, host, port, want) < 0 ? -1 : tconn_response(&t);
	double dt = now_s() - t1;
	tconn_close(&t);
	SSL_CTX_free(ctx);
	if (got < 0)
		return 1;
	printf("FETCH bytes %lld seconds %.6f mbps %.1f setup_us %.1f\n", got, dt,
	       (double)got / dt / 1e6, (t1 - t0) * 1e6);
	return 0;
}

static double percentile(double *v, long n, int pct)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	if (pct == 50)
		return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	long i = (n * pct + 99) / 100 - 1; /* ceil(pct% of n) - 1 */
	return v[i < 0 ? 0 : i];
}

int tls_latency(const char *host, const char *port, const char *conns_s, const char *reqs_s,
		const char *proxy, const char *cafile)
{
	long conns = parse_long(conns_s, 1, 100000), reqs = parse_long(reqs_s, 1, 1000000);
	if (conns < 0 || reqs < 0) {
		fprintf(stderr, "proxy_load: CONNS and REQS must be positive numbers\n");
		return 2;
	}
	SSL_CTX *ctx = client_ctx(cafile);
	double *lat = calloc((size_t)(conns * reqs), sizeof *lat), *setup = calloc((size_t)conns, sizeof *setup);
	int rc = 1;
	if (!ctx || !lat || !setup)
		goto out;
	for (long c = 0; c < conns; c++) {
		struct tconn t;
		double t0 = now_s();
		if (tconn_open(&t, ctx, host, port, proxy_arg(proxy)) < 0)
			goto out;
		if (tconn_request(&t, host, port, SMALL_BODY) < 0 || tconn_response(&t) < 0) {
			tconn_close(&t);
			goto out;
		}
		setup[c] = (now_s() - t0) * 1e6;
		for (long r = 0; r < reqs; r++) {
			double s = now_s();
			if (tconn_request(&t, host, port, SMALL_BODY) < 0 || tconn_response(&t) < 0) {
				tconn_close(&t);
				goto out;
			}
			lat[c * reqs + r] = (now_s() - s) * 1e6;
		}
		tconn_close(&t);
	}
	long n = conns * reqs;
	double m = percentile(lat, n, 50), p90 = percentile(lat, n, 90);
	double sm = percentile(setup, conns, 50), sp90 = percentile(setup, conns, 90);
	printf("TLSLATENCY requests %ld median_us %.1f p90_us %.1f setup_median_us %.1f "
	       "setup_p90_us %.1f\n", n, m, p90, sm, sp90);
	rc = 0;
out:
	free(lat);
	free(setup);
	SSL_CTX_free(ctx);
	return rc;
}

/* ---- server ------------------------------------------------------------ */

static SSL_CTX *server_ctx;
static const char *server_auth;

/* Does the head carry "Authorization: <server_auth>" exactly? */
static bool auth_ok(const char *head)
{
	const char *a = strcasestr(head, "\r\nAuthorization:");
	if (!a)
		return false;
	a += 16;
	a += strspn(a, " \t");
	size_t len = strcspn(a, "\r\n");
	while (len && (a[len - 1] == ' ' || a[len - 1] == '\t'))
		len--;
	return len == strlen(server_auth) && memcmp(a, server_auth, len) == 0;
}

static bool ssl_write_all(SSL *ssl, const char *p, size_t n)
{
	size_t w;
	while (n) {
		if (SSL_write_ex(ssl, p, n, &w) != 1)
			return false;
		p += w;
		n -= w;
	}
	return true;
}

static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	SSL *ssl = SSL_new(server_ctx);
	char in[HEAD_MAX], head[HEAD_MAX + 1], out[HEAD_MAX + SMALL_BODY * 16];
	size_t len = 0, n;
	if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1)
		goto out;
	for (;;) {
		char *end;
		while (!(end = memmem(in, len, "\r\n\r\n", 4))) {
			if (len == sizeof in || SSL_read_ex(ssl, in + len, sizeof in - len, &n) != 1)
				goto out;
			len += n;
		}
		size_t hl = (size_t)(end + 4 - in);
		memcpy(head, in, hl);
		head[hl] = '\0';
		memmove(in, in + hl, len - hl); /* a GET has no body */
		len -= hl;
		long long want = 0;
		if (sscanf(head, "GET /bytes/%lld", &want) != 1 || want < 0)
			want = 0;
		bool authorized = !server_auth || auth_ok(head);
		if (!authorized)
			want = 0;
		bool last = strcasestr(head, "\r\nConnection: close") != NULL;
		int hlen = snprintf(out, sizeof out, "HTTP/1.1 %s\r\nContent-Length: %lld\r\n%s\r\n",
				    authorized ? "200 OK" : "401 Unauthorized", want,
				    last ? "Connection: close\r\n" : "");
		/* a small body goes with its head, in one record */
		size_t first = (size_t)hlen;
		if (want <= (long long)(sizeof out - first)) {
			memcpy(out + first, buf, (size_t)want);
			first += (size_t)want;
			want = 0;
		}
		if (!ssl_write_all(ssl, out, first))
			goto out;
		while (want > 0) {
			size_t k = want < (long long)sizeof buf ? (size_t)want : sizeof buf;
			if (!ssl_write_all(ssl, buf, k))
				goto out;
			want -= (long long)k;
		}
		if (last)
			break;
	}
	SSL_shutdown(ssl);
out:
	ERR_clear_error();
	SSL_free(ssl);
	close(fd);
	return NULL;
}

int tls_serve(const char *addr, const char *port, const char *secs_s, const char *cert,
	      const char *key, const char *cc)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICHOST }, *ai;
	long secs = parse_long(secs_s, 1, 86400);
	int lfd, one = 1, r;
	if (secs < 0) {
		fprintf(stderr, "proxy_load: tls-serve: bad SECONDS\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	server_auth = getenv("PROXY_LOAD_AUTH");
	server_ctx = SSL_CTX_new(TLS_server_method());
	if (!server_ctx || SSL_CTX_use_certificate_chain_file(server_ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(server_ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(server_ctx) != 1) {
		ssl_errors(cert);
		return 1;
	}
	if ((r = getaddrinfo(addr, port, &hints, &ai)) != 0) {
		fprintf(stderr, "proxy_load: %s: %s\n", addr, gai_strerror(r));
		return 1;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, 4096) < 0) {
		perror("proxy_load: tls-serve");
		return 1;
	}
	freeaddrinfo(ai);
	/* accepted sockets inherit the listener's */
	if (cc && setsockopt(lfd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) < 0) {
		fprintf(stderr, "proxy_load: tls-serve: congestion control %s: %s\n", cc, strerror(errno));
		return 1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char pbuf[NI_MAXSERV];
	getsockname(lfd, (struct sockaddr *)&ss, &sl);
	getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, pbuf, sizeof pbuf, NI_NUMERICSERV);
	printf("LISTENING %s\n", pbuf);
	fflush(stdout);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	double end = now_s() + (double)secs;
	while (now_s() < end) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		if (poll(&p, 1, 500) <= 0)
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		pthread_t t;
		if (pthread_create(&t, &attr, serve_conn, (void *)(intptr_t)fd) != 0)
			close(fd);
	}
	return 0; /* the connections still open end with the process */
}
