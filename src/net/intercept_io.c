/* intercept_io.c - one side of an intercepted connection (intercept_io.h):
 * reads and writes that never block, over TLS or plain TCP, with what each
 * would wait for; the half-close; a handshake within its deadline. */
#include "intercept_io.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/err.h>

#include "tls.h"
#include "tls_bio.h"

#define HANDSHAKE_TIMEOUT_MS 15000

static void side_error(struct side *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void side_error(struct side *s, const char *fmt, ...)
{
	if (s->error[0])
		return; /* the first reason stands */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->error, s->error_len, fmt, ap);
	va_end(ap);
}

/* What failed, for error: OpenSSL's reason, or errno's. */
static const char *io_reason(struct side *s, int sslerr, char *buf, size_t len)
{
	if (s->ssl && sslerr == SSL_ERROR_SSL)
		return tls_error_string(buf, len, "TLS error");
	ERR_clear_error();
	snprintf(buf, len, "%s", errno ? strerror(errno) : "connection closed");
	return buf;
}

static enum io side_read_now(struct side *s, void *buf, size_t cap, size_t *n)
{
	s->rd_ev = 0;
	if (s->ssl) {
		ERR_clear_error();
		errno = 0;
		if (SSL_read_ex(s->ssl, buf, cap, n) == 1)
			return IO_OK;
		int err = SSL_get_error(s->ssl, 0);
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
			s->rd_ev = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
			return IO_AGAIN;
		}
		if (err == SSL_ERROR_ZERO_RETURN) {
			s->clean = true;
			return IO_EOF;
		}
		if (err == SSL_ERROR_SSL &&
		    ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			/* closed without close_notify: an end, not a clean one, and
			 * the TLS session can do nothing more */
			ERR_clear_error();
			s->dead = true;
			return IO_EOF;
		}
		char why[200];
		side_error(s, "%s: %s", s->name, io_reason(s, err, why, sizeof why));
		return IO_ERR;
	}
	ssize_t r = recv(s->fd, buf, cap, 0);
	if (r > 0) {
		*n = (size_t)r;
		return IO_OK;
	}
	if (r == 0) {
		s->clean = true;
		return IO_EOF;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
		s->rd_ev = POLLIN;
		return IO_AGAIN;
	}
	side_error(s, "%s: %s", s->name, strerror(errno));
	return IO_ERR;
}

/* Bytes TLS already holds for s, or a filter in front of its socket does. */
bool side_holds(struct side *s)
{
	return s->ssl && (SSL_has_pending(s->ssl) || BIO_ctrl_pending(SSL_get_rbio(s->ssl)) > 0);
}

/* Bytes gathered for s's socket, not written yet (tls_bio.h). */
size_t side_gathered(const struct side *s)
{
	return s->ssl && !s->dead ? tls_wbuf_pending(s->ssl) : 0;
}

enum io side_read(struct side *s, void *buf, size_t cap, size_t *n)
{
	if (!s->rd_ready && !side_holds(s))
		return IO_AGAIN; /* rd_ev as the last read that would block left it */
	enum io r = side_read_now(s, buf, cap, n);
	if (r == IO_AGAIN)
		s->rd_ready = false;
	return r;
}

enum io side_write(struct side *s, const void *buf, size_t len, size_t *n)
{
	s->wr_ev = 0;
	if (s->ssl) {
		ERR_clear_error();
		errno = 0;
		if (SSL_write_ex(s->ssl, buf, len, n) == 1)
			return IO_OK;
		int err = SSL_get_error(s->ssl, 0);
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
			s->wr_ev = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
			return IO_AGAIN;
		}
		char why[200];
		side_error(s, "%s: %s", s->name, io_reason(s, err, why, sizeof why));
		return IO_ERR;
	}
	ssize_t r = send(s->fd, buf, len, MSG_NOSIGNAL);
	if (r >= 0) {
		*n = (size_t)r;
		return IO_OK;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
		s->wr_ev = POLLOUT;
		return IO_AGAIN;
	}
	side_error(s, "%s: %s", s->name, strerror(errno));
	return IO_ERR;
}

/* Close our sending side: close_notify first when TLS is healthy. */
void side_shut(struct side *s, bool clean)
{
	if (s->shut || s->dead)
		return;
	s->shut = true;
	if (s->ssl && clean) {
		SSL_shutdown(s->ssl); /* one try: the alert fits a socket buffer */
		tls_wbuf_flush(s->ssl);
	}
	ERR_clear_error();
	shutdown(s->fd, SHUT_WR);
}

/* Wait for ev on fd: 1, 0 on the timeout, -1 when stop_fd (> 0) says stop. */
int wait_fd(int fd, short ev, int timeout_ms, int stop_fd)
{
	struct pollfd p[2] = { { .fd = fd, .events = ev }, { .fd = stop_fd > 0 ? stop_fd : -1, .events = POLLIN } };
	int r;
	do
		r = poll(p, 2, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r > 0 && p[1].revents)
		return -1;
	return r;
}

/* A handshake, within HANDSHAKE_TIMEOUT_MS. -1 with the reason in why; 1
 * when a server handshake paused at the ClientHello (tls_alpn's hold). */
int side_handshake(struct side *s, bool accept, int stop_fd, char *why, size_t len)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ERR_clear_error();
		errno = 0;
		int r = accept ? SSL_accept(s->ssl) : SSL_connect(s->ssl);
		if (r == 1)
			return 0;
		int err = SSL_get_error(s->ssl, r);
		if (err == SSL_ERROR_WANT_CLIENT_HELLO_CB)
			return 1;
		if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
			if (err == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) ==
							    SSL_R_UNEXPECTED_EOF_WHILE_READING) {
				ERR_clear_error();
				snprintf(why, len, "connection closed");
			} else {
				io_reason(s, err, why, len);
			}
			s->dead = true;
			return -1;
		}
		long left = HANDSHAKE_TIMEOUT_MS - (long)ms_since(&start);
		int w = left <= 0 ? 0
				  : wait_fd(s->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
					    (int)left, stop_fd);
		if (w <= 0) {
			snprintf(why, len, w < 0 ? "stopped" : "timed out");
			s->dead = true;
			return -1;
		}
	}
}
