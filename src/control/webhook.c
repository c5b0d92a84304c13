/* webhook.c - the webhook channel (webhook.h): the URL read once, a body
 * per question queued for the workers, each delivery a blocking walk with
 * one deadline (name lookup, a nonblocking connect and the TLS handshake,
 * the request, the status line), every wait a poll that also watches the
 * stop eventfd; the outcomes collected on the loop and the failures made
 * alerts. The part the workers share (the queue, the outcome list, the
 * URL, the TLS context, the eventfds) is a reference-counted hub. */
#include "webhook.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "../common/util.h"
#include "../net/tls.h"
#include "config.h"
#include "control.h"

#define WEBHOOK_STOP_WAIT_MS 2000

unsigned webhook_deadline_ms = WEBHOOK_DEADLINE_S * 1000;

/* ---- the URL, the body, the status line (pure) ---- */

int webhook_url_parse(const char *url, struct webhook_url *u, struct werr *e)
{
	*u = (struct webhook_url){ 0 };
	const char *p;
	if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
	} else if (strncmp(url, "https://", 8) == 0) {
		p = url + 8;
		u->tls = true;
	} else {
		return werr_set(e, EINVAL, "approve webhook: not an http:// or https:// URL");
	}
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return werr_set(e, EINVAL, "approve webhook: a URL holds printable ASCII only");
	size_t alen = strcspn(p, "/?#");
	const char *rest = p + alen;
	if (memchr(p, '@', alen))
		return werr_set(e, EINVAL, "approve webhook: user:password@ in the URL is not supported");
	/* host, then :port (after the bracket of an IPv6 address) */
	const char *close = alen && p[0] == '[' ? memchr(p, ']', alen) : NULL;
	const char *colon = memchr(close ? close : p, ':', alen - (size_t)((close ? close : p) - p));
	size_t hlen = colon ? (size_t)(colon - p) : alen;
	const char *why = NULL;
	if (hlen == 0 || net_host_parse(&u->host, p, hlen, &why) < 0)
		return werr_set(e, EINVAL, "approve webhook: the URL's host: %s", why ? why : "empty");
	u->port = u->tls ? 443 : 80;
	if (colon && net_port_parse(colon + 1, alen - hlen - 1, &u->port) < 0)
		return werr_set(e, EINVAL, "approve webhook: the URL's port is not a number from 1 to 65535");
	snprintf(u->port_s, sizeof u->port_s, "%u", (unsigned)u->port);
	bool v6 = u->host.kind == NET_HOST_IPV6, dflt = u->port == (u->tls ? 443 : 80);
	snprintf(u->authority, sizeof u->authority, "%s%s%s%s%s", v6 ? "[" : "", u->host.name,
		 v6 ? "]" : "", dflt ? "" : ":", dflt ? "" : u->port_s);
	size_t tlen = strcspn(rest, "#");
	if (tlen + 2 > sizeof u->target)
		return werr_set(e, EINVAL, "approve webhook: the URL is too long");
	snprintf(u->target, sizeof u->target, "%s%.*s", rest[0] == '/' ? "" : "/", (int)tlen, rest);
	return 0;
}

char *webhook_body(const struct question *q, const char *session, size_t *len)
{
	char allow[96], deny[96], text[1024];
	snprintf(allow, sizeof allow, "warden approve %s allow", q->id);
	snprintf(deny, sizeof deny, "warden approve %s deny", q->id);
	snprintf(text, sizeof text, "warden asks: %.600s (question %s, session %s, %u s to answer). "
		 "Answer with: %s, or: %s", q->summary, q->id, session, q->timeout_s, allow, deny);
	_cleanup_json_ json_t *qj = control_question_json(q);
	_cleanup_json_ json_t *o = json_pack("{s:s,s:s,s:O,s:{s:s,s:s},s:s}", "event", "approval.asked",
					     "session", session, "question", qj, "answer", "allow", allow,
					     "deny", deny, "text", text);
	for (int pass = 0; o && pass < 2; pass++) {
		char *s = json_dumps(o, JSON_COMPACT);
		if (s && strlen(s) <= WEBHOOK_BODY_MAX) {
			*len = strlen(s);
			return s;
		}
		free(s);
		json_object_set_new(qj, "detail", json_pack("{s:b}", "truncated", 1));
	}
	return NULL;
}

int webhook_status(const char *buf, size_t len)
{
	static const char v[] = "HTTP/1.";
	size_t vl = sizeof v - 1;
	if (memcmp(buf, v, len < vl ? len : vl) != 0)
		return -1;
	const char *nl = memchr(buf, '\n', len);
	if (!nl)
		return 0;
	size_t l = (size_t)(nl - buf);
	/* "HTTP/1.x NNN" at least, then a space or the line's end */
	if (l < vl + 5 || buf[vl] < '0' || buf[vl] > '9' || buf[vl + 1] != ' ')
		return -1;
	const char *c = buf + vl + 2;
	for (int i = 0; i < 3; i++)
		if (c[i] < '0' || c[i] > '9')
			return -1;
	if (c + 3 < nl && c[3] != ' ' && c[3] != '\r')
		return -1;
	int s = (c[0] - '0') * 100 + (c[1] - '0') * 10 + (c[2] - '0');
	return s >= 100 ? s : -1;
}

/* ---- the hub the workers share ---- */

struct delivery {
	char id[48];
	char *body;
	size_t len;
	int status;        /* the response's, 0: none */
	char why[300];     /* a failure, "" when delivered (a 2xx) */
	struct delivery *next;
};

struct hub {
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* work queued, stop, a worker gone */
	int refs;
	bool stop;
	struct delivery *todo, **todo_tail, *done;
	size_t ntodo;
	int nworkers, idle;
	int efd;                  /* outcomes ready (to the loop) */
	int cancel;               /* readable once stopping (to the workers) */
	struct webhook_url url;
	SSL_CTX *ctx;             /* https */
};

struct webhook {
	struct hub *h;
	struct audit *log;
	char session[64];
};

static void delivery_free(struct delivery *d)
{
	while (d) {
		struct delivery *next = d->next;
		free(d->body);
		free(d);
		d = next;
	}
}

static void hub_unref(struct hub *h)
{
	pthread_mutex_lock(&h->mu);
	bool last = --h->refs == 0;
	pthread_mutex_unlock(&h->mu);
	if (!last)
		return;
	delivery_free(h->todo);
	delivery_free(h->done);
	if (h->ctx)
		SSL_CTX_free(h->ctx);
	closep(&h->efd);
	closep(&h->cancel);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/* ---- one delivery (on a worker) ---- */

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (long)(deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? ms : 0;
}

/* Wait for fd to be ready for events: 0; -1 with errno ETIMEDOUT at the
 * deadline, ECANCELED when the webhook stops. */
static int wait_fd(const struct hub *h, int fd, short events, const struct timespec *deadline)
{
	for (;;) {
		long ms = ms_left(deadline);
		if (ms == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = h->cancel, .events = POLLIN } };
		int n = poll(p, 2, (int)ms);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0 && p[1].revents) {
			errno = ECANCELED;
			return -1;
		}
		if (n > 0)
			return 0;
	}
}

/* A connected socket to the URL's host, nonblocking; -1 with d->why. */
static int dial(const struct hub *h, struct delivery *d, const struct timespec *deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV |
					      (h->url.host.kind == NET_HOST_NAME ? 0 : AI_NUMERICHOST) };
	struct addrinfo *res = NULL;
	int g = getaddrinfo(h->url.host.name, h->url.port_s, &hints, &res);
	if (g != 0) {
		snprintf(d->why, sizeof d->why, "cannot resolve %s: %s", h->url.host.name,
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
		if (err == EINPROGRESS && wait_fd(h, fd, POLLOUT, deadline) == 0) {
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
	snprintf(d->why, sizeof d->why, "cannot connect to %s: %s", h->url.authority,
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

static void ssl_why(SSL *ssl, struct delivery *d, const char *doing)
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
	const struct hub *h;
	int fd;
	SSL *ssl;
};

/* Write all of buf; -1 with d->why. */
static int conn_write(struct conn *c, struct delivery *d, const char *buf, size_t len,
		      const struct timespec *deadline)
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
		if (wait_fd(c->h, c->fd, want, deadline) < 0) {
			snprintf(d->why, sizeof d->why, "sending the request: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Read into buf; the bytes read, 0 at the end, -1 with d->why. */
static ssize_t conn_read(struct conn *c, struct delivery *d, char *buf, size_t len,
			 const struct timespec *deadline)
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
		if (wait_fd(c->h, c->fd, want, deadline) < 0) {
			snprintf(d->why, sizeof d->why, "waiting for the response: %s", strerror(errno));
			return -1;
		}
	}
}

static int handshake(struct conn *c, struct delivery *d, const struct timespec *deadline)
{
	c->ssl = tls_client_ssl(c->h->ctx, c->fd, &c->h->url.host);
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
		if (wait_fd(c->h, c->fd, want, deadline) < 0) {
			snprintf(d->why, sizeof d->why, "TLS handshake: %s", strerror(errno));
			return -1;
		}
	}
}

/* POST d's body; d->status and d->why say how it went. */
static void deliver(const struct hub *h, struct delivery *d)
{
	ERR_clear_error();
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += webhook_deadline_ms / 1000;
	deadline.tv_nsec += (long)(webhook_deadline_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	struct conn c = { .h = h, .fd = dial(h, d, &deadline) };
	if (c.fd < 0)
		return;
	_cleanup_free_ char *head = xasprintf("POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: warden/%s\r\n"
					      "Content-Type: application/json\r\nContent-Length: %zu\r\n"
					      "Connection: close\r\n\r\n", h->url.target,
					      h->url.authority, WARDEN_VERSION, d->len);
	_cleanup_free_ char *buf = xmalloc(WEBHOOK_HEAD_MAX);
	size_t have = 0;
	if ((h->url.tls && handshake(&c, d, &deadline) < 0) ||
	    conn_write(&c, d, head, strlen(head), &deadline) < 0 ||
	    conn_write(&c, d, d->body, d->len, &deadline) < 0)
		goto out;
	while (d->status == 0) {
		ssize_t n = have < WEBHOOK_HEAD_MAX ? conn_read(&c, d, buf + have, WEBHOOK_HEAD_MAX - have,
								 &deadline) : 0;
		if (n < 0)
			goto out;
		have += (size_t)n;
		d->status = webhook_status(buf, have);
		if (d->status < 0 || (d->status == 0 && n == 0)) {
			d->status = 0;
			snprintf(d->why, sizeof d->why, "%s", n == 0 && have < WEBHOOK_HEAD_MAX ?
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

static void *worker(void *arg)
{
	struct hub *h = arg;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->todo && !h->stop) {
			h->idle++;
			pthread_cond_wait(&h->cv, &h->mu);
			h->idle--;
		}
		if (h->stop)
			break;
		struct delivery *d = h->todo;
		h->todo = d->next;
		if (!h->todo)
			h->todo_tail = &h->todo;
		h->ntodo--;
		d->next = NULL;
		pthread_mutex_unlock(&h->mu);
		deliver(h, d);
		pthread_mutex_lock(&h->mu);
		d->next = h->done;
		h->done = d;
		uint64_t one = 1;
		if (write(h->efd, &one, sizeof one) < 0) { /* the counter is full: a wake-up is pending */ }
	}
	h->nworkers--;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	hub_unref(h);
	return NULL;
}

/* With h->mu held: a worker for what was queued, if none is idle and
 * there is room. Every signal blocked in it. false when none can start
 * and none runs. */
static bool ensure_worker(struct hub *h)
{
	if (h->idle > 0 || h->nworkers >= WEBHOOK_WORKERS)
		return true;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	h->refs++;
	int r = pthread_create(&t, &at, worker, h);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		h->refs--;
		return h->nworkers > 0;
	}
	h->nworkers++;
	return true;
}

/* ---- the loop's side ---- */

static void alert(struct webhook *w, const char *id, const char *why)
{
	char action[400];
	snprintf(action, sizeof action, "question %s not delivered: %s", id, why);
	audit_emit_event(w->log, ev_alert(&(struct ev_alert){ .rule = "approval.webhook-failed",
		.host = w->h->url.host.name, .port = w->h->url.port, .action = action }), NULL);
}

static void wh_asked(void *ctx, const struct question *q)
{
	struct webhook *w = ctx;
	struct hub *h = w->h;
	size_t len = 0;
	char *body = webhook_body(q, w->session, &len);
	if (!body) {
		alert(w, q->id, "the question does not fit in a request body");
		return;
	}
	struct delivery *d = xcalloc(1, sizeof *d);
	snprintf(d->id, sizeof d->id, "%s", q->id);
	d->body = body;
	d->len = len;
	pthread_mutex_lock(&h->mu);
	bool full = h->ntodo >= WEBHOOK_QUEUE_MAX, started = false;
	if (!full) {
		*h->todo_tail = d;
		h->todo_tail = &d->next;
		h->ntodo++;
		started = ensure_worker(h);
		if (!started) {
			/* no thread: take it back */
			struct delivery **pp = &h->todo;
			while (*pp != d)
				pp = &(*pp)->next;
			*pp = NULL;
			h->todo_tail = pp;
			h->ntodo--;
		}
		pthread_cond_signal(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	if (full || !started) {
		alert(w, q->id, full ? "too many deliveries wait" : "cannot start a thread");
		delivery_free(d);
	}
}

/* A question that ended before its turn is not sent. */
static void wh_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct hub *h = ((struct webhook *)ctx)->h;
	struct delivery *gone = NULL;
	pthread_mutex_lock(&h->mu);
	for (struct delivery **pp = &h->todo; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, q->id) == 0) {
			gone = *pp;
			*pp = gone->next;
			gone->next = NULL;
			h->ntodo--;
			break;
		}
	h->todo_tail = &h->todo;
	while (*h->todo_tail)
		h->todo_tail = &(*h->todo_tail)->next;
	pthread_mutex_unlock(&h->mu);
	delivery_free(gone);
}

void webhook_dispatch(struct webhook *w)
{
	struct hub *h = w->h;
	uint64_t n;
	(void)!read(h->efd, &n, sizeof n);
	pthread_mutex_lock(&h->mu);
	struct delivery *done = h->done;
	h->done = NULL;
	pthread_mutex_unlock(&h->mu);
	for (struct delivery *d = done; d; d = d->next)
		if (d->why[0])
			alert(w, d->id, d->why);
	delivery_free(done);
}

struct webhook *webhook_new(struct approvals *a, const char *url, const char *session,
			    struct audit *log, struct werr *e)
{
	struct webhook_url u;
	if (webhook_url_parse(url, &u, e) < 0)
		return NULL;
	SSL_CTX *ctx = NULL;
	if (u.tls && !(ctx = tls_client_ctx(NULL, e))) {
		werr_wrap(e, "approve webhook");
		return NULL;
	}
	struct hub *h = xcalloc(1, sizeof *h);
	h->refs = 1;
	h->url = u;
	h->ctx = ctx;
	h->todo_tail = &h->todo;
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->cancel = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (h->efd < 0 || h->cancel < 0) {
		werr_errno(e, "approve webhook: eventfd");
		hub_unref(h);
		return NULL;
	}
	struct webhook *w = xcalloc(1, sizeof *w);
	w->h = h;
	w->log = log;
	snprintf(w->session, sizeof w->session, "%s", session);
	approvals_add_channel(a, &(struct approval_channel){ .name = "webhook", .asked = wh_asked,
							     .ended = wh_ended, .ctx = w });
	return w;
}

void webhook_free(struct webhook *w)
{
	if (!w)
		return;
	struct hub *h = w->h;
	uint64_t one = 1;
	pthread_mutex_lock(&h->mu);
	h->stop = true;
	delivery_free(h->todo);
	h->todo = NULL;
	h->todo_tail = &h->todo;
	h->ntodo = 0;
	pthread_cond_broadcast(&h->cv);
	if (write(h->cancel, &one, sizeof one) < 0) { /* full: readable already */ }
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += WEBHOOK_STOP_WAIT_MS / 1000;
	until.tv_nsec += (WEBHOOK_STOP_WAIT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (h->nworkers > 0 && pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&h->mu);
	hub_unref(h);
	free(w);
}

int webhook_fd(const struct webhook *w)
{
	return w->h->efd;
}
