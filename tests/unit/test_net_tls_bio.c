/* test_net_tls_bio.c - unit tests of the filter BIOs of intercepted TLS
 * (src/net/tls_bio.c) on real TLS connections over socketpairs, both ends
 * non-blocking. Early bytes: a handshake whose first bytes were read off
 * the socket before the SSL existed completes, those bytes counted as
 * pending until read. Write gathering: records written are held until a flush and then all
 * reach the peer; a stream many times the buffer and the socket's own
 * buffer, against a reader that takes it in small bites, arrives whole and
 * in order (writes that would block are retried, flushes that would block
 * report it); the close_notify after SSL_shutdown reaches the peer; and the
 * refusals (no buffer to flush, an SSL whose read and write BIOs differ). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include "src/net/tls.h"
#include "src/net/tls_bio.h"
#include "check.h"

struct pair {
	int fd[2];
	SSL_CTX *sctx, *cctx;
	SSL *s, *c; /* s on fd[0] (the one with the buffer), c on fd[1] */
	struct tls_ca *ca;
};

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Step an SSL call that may want I/O: true once done. */
static bool wants(SSL *ssl, int r)
{
	int err = SSL_get_error(ssl, r);
	return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE;
}

/* Both handshakes, stepped in turn: true once both are done. */
static bool shake(SSL *s, SSL *c)
{
	bool sd = false, cd = false;
	for (int i = 0; i < 1000 && !(sd && cd); i++) {
		int r;
		if (!sd && (r = SSL_do_handshake(s)) != 1 && !wants(s, r))
			return false;
		sd = sd || r == 1;
		if (!cd && (r = SSL_do_handshake(c)) != 1 && !wants(c, r))
			return false;
		cd = cd || r == 1;
	}
	return sd && cd;
}

/* early > 0: the server's first `early` bytes are read off its socket
 * before its SSL is made, and handed to it as early bytes. */
static bool pair_open_early(struct pair *p, int sndbuf, size_t early)
{
	memset(p, 0, sizeof *p);
	struct werr e = { 0 };
	struct net_host h;
	const char *why;
	if (net_host_parse(&h, "wbuf.test", 9, &why) < 0)
		return false;
	p->ca = tls_ca_new(&h, 1, &e);
	p->sctx = p->ca ? tls_server_ctx(p->ca, &h, &e) : NULL;
	p->cctx = SSL_CTX_new(TLS_client_method());
	if (!p->sctx || !p->cctx || socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd) != 0)
		return false;
	if (sndbuf) {
		setsockopt(p->fd[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
		setsockopt(p->fd[1], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof sndbuf);
	}
	nonblock(p->fd[0]);
	nonblock(p->fd[1]);
	SSL_CTX_set_verify(p->cctx, SSL_VERIFY_NONE, NULL); /* the CA is tls.c's concern */
	p->s = SSL_new(p->sctx);
	p->c = SSL_new(p->cctx);
	SSL_set_fd(p->c, p->fd[1]);
	SSL_set_accept_state(p->s);
	SSL_set_connect_state(p->c);
	if (early) {
		/* the ClientHello's first bytes, taken as the proxy takes them */
		int r = SSL_do_handshake(p->c);
		if (r == 1 || !wants(p->c, r))
			return false;
		char *buf = malloc(early);
		if (read(p->fd[0], buf, early) != (ssize_t)early) {
			free(buf);
			return false;
		}
		if (!tls_bio_set_fd_early(p->s, p->fd[0], buf, early))
			return false;
		if (BIO_ctrl_pending(SSL_get_rbio(p->s)) < early)
			return false; /* the early bytes count as pending */
	} else if (!tls_bio_set_fd_early(p->s, p->fd[0], NULL, 0)) {
		return false;
	}
	if (!shake(p->s, p->c))
		return false;
	/* the client takes the session tickets: the socket is quiet after */
	unsigned char b[64];
	size_t n = 0;
	return SSL_read_ex(p->c, b, sizeof b, &n) != 1 && SSL_get_error(p->c, 0) == SSL_ERROR_WANT_READ;
}

static bool pair_open(struct pair *p, int sndbuf)
{
	return pair_open_early(p, sndbuf, 0);
}

static void pair_close(struct pair *p)
{
	SSL_free(p->s);
	SSL_free(p->c);
	SSL_CTX_free(p->sctx);
	SSL_CTX_free(p->cctx);
	tls_ca_free(p->ca);
	close(p->fd[0]);
	close(p->fd[1]);
}

/* Read what c can now: bytes appended to buf[*got..cap), up to bite a call. */
static int drain(SSL *c, unsigned char *buf, size_t *got, size_t cap, size_t bite)
{
	for (;;) {
		size_t n = 0, want = cap - *got < bite ? cap - *got : bite;
		if (want == 0)
			return 0;
		int r = SSL_read_ex(c, buf + *got, want, &n);
		if (r == 1) {
			*got += n;
			continue;
		}
		int err = SSL_get_error(c, r);
		ERR_clear_error();
		return err == SSL_ERROR_WANT_READ ? 0 : err;
	}
}

static void test_gathers_until_flush(void)
{
	struct pair p;
	CHECK(pair_open(&p, 0));
	CHECK(tls_wbuf_install(p.s, 256 * 1024));
	unsigned char msg[8 * 1024], got[8 * 1024];
	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (unsigned char)(i * 7);
	for (int i = 0; i < 8; i++) {
		size_t n = 0;
		CHECK(SSL_write_ex(p.s, msg + i * 1024, 1024, &n) == 1 && n == 1024);
	}
	/* eight records held, none on the socket */
	CHECK(tls_wbuf_pending(p.s) > 8 * 1024);
	struct pollfd pf = { .fd = p.fd[1], .events = POLLIN };
	CHECK(poll(&pf, 1, 0) == 0);
	CHECK(tls_wbuf_flush(p.s) == 1);
	CHECK(tls_wbuf_pending(p.s) == 0);
	size_t n = 0;
	CHECK(drain(p.c, got, &n, sizeof got, sizeof got) == 0);
	CHECK(n == sizeof msg && memcmp(got, msg, sizeof msg) == 0);
	/* the close_notify goes with a flush too */
	SSL_shutdown(p.s);
	CHECK(tls_wbuf_flush(p.s) == 1);
	n = 0;
	CHECK(drain(p.c, got, &n, sizeof got, sizeof got) == SSL_ERROR_ZERO_RETURN);
	pair_close(&p);
}

/* 8 MiB through a 64 KiB buffer and socket buffers of a few KiB, read in
 * 1000-byte bites only when the writer is stuck. */
static void test_stream_with_slow_reader(void)
{
	struct pair p;
	CHECK(pair_open(&p, 4096));
	CHECK(tls_wbuf_install(p.s, 64 * 1024));
	size_t total = 8u << 20;
	unsigned char *src = malloc(total), *dst = malloc(total);
	for (size_t i = 0; i < total; i++)
		src[i] = (unsigned char)(i ^ (i >> 11) ^ (i >> 19));
	size_t sent = 0, got = 0;
	int would_block = 0, flush_blocked = 0, errors = 0;
	for (int round = 0; round < 10000000 && got < total && !errors; round++) {
		if (sent < total) {
			size_t n = 0, len = total - sent < 20000 ? total - sent : 20000;
			int r = SSL_write_ex(p.s, src + sent, len, &n);
			if (r == 1)
				sent += n;
			else if (wants(p.s, r))
				would_block++;
			else
				errors++;
			ERR_clear_error();
			if (r == 1 && sent < total)
				continue; /* write while it takes */
		}
		int f = tls_wbuf_flush(p.s);
		if (f < 0)
			errors++;
		flush_blocked += f == 0;
		int d = drain(p.c, dst, &got, total, 1000);
		if (d)
			errors++;
	}
	CHECK(errors == 0);
	CHECK(got == total && memcmp(src, dst, total) == 0);
	CHECK(would_block > 0);   /* the writer did meet a full buffer and socket */
	CHECK(flush_blocked > 0); /* and a flush that could not finish */
	CHECK(tls_wbuf_pending(p.s) == 0);
	free(src);
	free(dst);
	pair_close(&p);
}

static void test_refusals(void)
{
	struct pair p;
	CHECK(pair_open(&p, 0));
	/* no buffer: a flush has nothing to do */
	CHECK(tls_wbuf_flush(p.c) == 1 && tls_wbuf_pending(p.c) == 0);
	CHECK(!tls_wbuf_install(p.c, 0));
	/* read and write BIOs that differ: refused */
	BIO *r = BIO_new(BIO_s_mem()), *w = BIO_new(BIO_s_mem());
	SSL *odd = SSL_new(p.cctx);
	SSL_set_bio(odd, r, w);
	CHECK(!tls_wbuf_install(odd, 65536));
	SSL_free(odd);
	/* installed once on a pair already gathering: still one SSL that works */
	CHECK(tls_wbuf_install(p.s, 65536));
	size_t n = 0;
	CHECK(SSL_write_ex(p.s, "x", 1, &n) == 1 && tls_wbuf_pending(p.s) > 0);
	pair_close(&p);
}

/* A handshake that began before the SSL did: whole, then data both ways,
 * with the write buffer on top of the early-bytes filter. */
static void test_early_bytes(void)
{
	struct pair p;
	CHECK(pair_open_early(&p, 0, 10));
	CHECK(BIO_ctrl_pending(SSL_get_rbio(p.s)) == 0); /* all taken */
	CHECK(tls_wbuf_install(p.s, 65536));
	size_t n = 0;
	unsigned char got[16];
	CHECK(SSL_write_ex(p.c, "hello", 5, &n) == 1);
	n = 0;
	CHECK(drain(p.s, got, &n, sizeof got, sizeof got) == 0 && n == 5 && memcmp(got, "hello", 5) == 0);
	CHECK(SSL_write_ex(p.s, "world", 5, &n) == 1 && tls_wbuf_flush(p.s) == 1);
	n = 0;
	CHECK(drain(p.c, got, &n, sizeof got, sizeof got) == 0 && n == 5 && memcmp(got, "world", 5) == 0);
	pair_close(&p);
}

int main(void)
{
	test_early_bytes();
	test_gathers_until_flush();
	test_stream_with_slow_reader();
	test_refusals();
	return check_status_counted("net-tls-bio");
}
