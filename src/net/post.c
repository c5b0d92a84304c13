/* post.c - one HTTP/1.1 POST with a deadline (post.h): the walk (lookup,
 * connect, TLS, request, status), in the TLS module (tlsmod.h); the URL's
 * rules and the status line are posturl.c's. */
#include "post.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "config.h"
#include "tls.h"

/* A POST's clock: its deadline, and the cancel fd while it is watched. */
struct wait {
	struct timespec deadline;
	int cancel;         /* -1: not (or no longer) watched */
	unsigned grace_ms;  /* post_req's cancel_grace_ms */
	bool cancelled;     /* the cancel fd was readable; the grace runs */
};

/* Wait for fd to be ready for events: 0; -1 with errno ETIMEDOUT at the
 * deadline, ECANCELED when the cancel fd is readable (or, with a grace,
 * when the deadline it brought nearer is reached). */
static int wait_fd(struct wait *w, int fd, short events)
{
	for (;;) {
		long ms = ms_left(&w->deadline);
		if (ms == 0) {
			errno = w->cancelled ? ECANCELED : ETIMEDOUT;
			return -1;
		}
		struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = w->cancel, .events = POLLIN } };
		int n = poll(p, w->cancel >= 0 ? 2 : 1, (int)ms);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0 && w->cancel >= 0 && p[1].revents) {
			if (!w->grace_ms) {
				errno = ECANCELED;
				return -1;
			}
			/* the rest of the walk within the grace, the cancel
			 * fd no longer watched */
			if ((long)w->grace_ms < ms)
				w->deadline = mono_after_ms(w->grace_ms);
			w->cancel = -1;
			w->cancelled = true;
			continue;
		}
		if (n > 0 && p[0].revents)
			return 0;
	}
}

/* A connected socket to the URL's host, nonblocking; -1 with d->why. */
static int dial(const struct post_req *h, struct post_result *d, struct wait *w)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV |
					      (h->url->host.kind == NET_HOST_NAME ? 0 : AI_NUMERICHOST) };
	struct addrinfo *res = NULL;
	int g = getaddrinfo(h->url->host.name, h->url->port_s, &hints, &res);
	if (g != 0) {
		snprintf(d->why, sizeof d->why, "cannot resolve %s: %s", h->url->host.name,
			 g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
		return -1;
	}
	int err = 0;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
			freeaddrinfo(res);
			return fd;
		}
		err = errno;
		if (err == EINPROGRESS && wait_fd(w, fd, POLLOUT) == 0) {
			socklen_t sl = sizeof err;
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0)
				err = errno;
			if (err == 0) {
				freeaddrinfo(res);
				return fd;
			}
		} else if (err == EINPROGRESS) {
			err = errno;
		}
		close(fd);
		if (err == ETIMEDOUT || err == ECANCELED)
			break;
	}
	freeaddrinfo(res);
	snprintf(d->why, sizeof d->why, "cannot connect to %s: %s", h->url->authority,
		 strerror(err ? err : ECONNREFUSED));
	return -1;
}

/* An SSL operation's want as poll events: POLLIN, POLLOUT, or 0 (it
 * failed). */
static short ssl_want(SSL *ssl, int r)
{
	int e = SSL_get_error(ssl, r);
	return e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
}

static void ssl_why(SSL *ssl, struct post_result *d, const char *doing)
{
	char buf[200];
	long v = SSL_get_verify_result(ssl);
	if (v != X509_V_OK)
		snprintf(d->why, sizeof d->why, "TLS %s with %s: certificate verify failed: %s", doing,
			 SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) ?: "the server",
			 X509_verify_cert_error_string(v));
	else
		snprintf(d->why, sizeof d->why, "TLS %s: %s", doing,
			 tls_error_string(buf, sizeof buf, errno ? strerror(errno) : "the connection ended"));
}

/* The connection of one delivery: the socket and, for https, its SSL. */
struct conn {
	const struct post_req *h;
	int fd;
	SSL *ssl;
};

/* Write all of buf; -1 with d->why. */
static int conn_write(struct conn *c, struct post_result *d, const char *buf, size_t len,
		      struct wait *w)
{
	for (size_t off = 0; off < len;) {
		short want = POLLOUT;
		if (c->ssl) {
			size_t n = 0;
			errno = 0;
			int r = SSL_write_ex(c->ssl, buf + off, len - off, &n);
			if (r == 1) {
				off += n;
				continue;
			}
			want = ssl_want(c->ssl, r);
			if (!want) {
				ssl_why(c->ssl, d, "write");
				return -1;
			}
		} else {
			ssize_t n = send(c->fd, buf + off, len - off, MSG_NOSIGNAL);
			if (n > 0) {
				off += (size_t)n;
				continue;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				snprintf(d->why, sizeof d->why, "sending the request: %s", strerror(errno));
				return -1;
			}
		}
		if (wait_fd(w, c->fd, want) < 0) {
			snprintf(d->why, sizeof d->why, "sending the request: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Read into buf; the bytes read, 0 at the end, -1 with d->why. */
static ssize_t conn_read(struct conn *c, struct post_result *d, char *buf, size_t len,
			 struct wait *w)
{
	for (;;) {
		short want = POLLIN;
		if (c->ssl) {
			size_t n = 0;
			errno = 0;
			int r = SSL_read_ex(c->ssl, buf, len, &n);
			if (r == 1)
				return (ssize_t)n;
			if (SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN)
				return 0;
			want = ssl_want(c->ssl, r);
			if (!want) {
				ssl_why(c->ssl, d, "read");
				return -1;
			}
		} else {
			ssize_t n = recv(c->fd, buf, len, 0);
			if (n >= 0)
				return n;
			if (errno != EAGAIN && errno != EINTR) {
				snprintf(d->why, sizeof d->why, "reading the response: %s", strerror(errno));
				return -1;
			}
		}
		if (wait_fd(w, c->fd, want) < 0) {
			snprintf(d->why, sizeof d->why, "waiting for the response: %s", strerror(errno));
			return -1;
		}
	}
}

static int handshake(struct conn *c, struct post_result *d, struct wait *w)
{
	c->ssl = tls_client_ssl(c->h->ctx, c->fd, &c->h->url->host);
	if (!c->ssl) {
		snprintf(d->why, sizeof d->why, "TLS: cannot make the connection's state");
		return -1;
	}
	for (;;) {
		errno = 0;
		int r = SSL_connect(c->ssl);
		if (r == 1)
			return 0;
		short want = ssl_want(c->ssl, r);
		if (!want) {
			ssl_why(c->ssl, d, "handshake");
			return -1;
		}
		if (wait_fd(w, c->fd, want) < 0) {
			snprintf(d->why, sizeof d->why, "TLS handshake: %s", strerror(errno));
			return -1;
		}
	}
}

/* d->status and d->why say how it went. */
void post_once(const struct post_req *h, struct post_result *d)
{
	*d = (struct post_result){ 0 };
	ERR_clear_error();
	struct wait w = { .deadline = mono_after_ms(h->deadline_ms), .cancel = h->cancel,
			  .grace_ms = h->cancel_grace_ms };
	struct conn c = { .h = h, .fd = dial(h, d, &w) };
	if (c.fd < 0)
		return;
	_cleanup_free_ char *head = xasprintf("POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: warden/%s\r\n"
					      "Content-Type: application/json\r\nContent-Length: %zu\r\n"
					      "Connection: close\r\n\r\n", h->url->target,
					      h->url->authority, WARDEN_VERSION, h->len);
	_cleanup_free_ char *buf = xmalloc(POST_HEAD_MAX);
	size_t have = 0;
	if ((h->url->tls && handshake(&c, d, &w) < 0) ||
	    conn_write(&c, d, head, strlen(head), &w) < 0 ||
	    conn_write(&c, d, h->body, h->len, &w) < 0)
		goto out;
	while (d->status == 0) {
		ssize_t n = have < POST_HEAD_MAX ? conn_read(&c, d, buf + have, POST_HEAD_MAX - have,
								 &w) : 0;
		if (n < 0)
			goto out;
		have += (size_t)n;
		d->status = post_status(buf, have);
		if (d->status < 0 || (d->status == 0 && n == 0)) {
			d->status = 0;
			snprintf(d->why, sizeof d->why, "%s", n == 0 && have < POST_HEAD_MAX ?
				 "the server closed the connection without a status line" :
				 "the server's answer is not HTTP/1.x");
			goto out;
		}
	}
	if (d->status < 200 || d->status > 299)
		snprintf(d->why, sizeof d->why, "the server answered %d", d->status);
out:
	if (c.ssl)
		SSL_free(c.ssl);
	close(c.fd);
	ERR_clear_error();
}

int post_ready(struct werr *e)
{
	(void)e; /* the code is here already */
	return 0;
}
