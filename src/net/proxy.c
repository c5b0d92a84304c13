/* proxy.c - the egress proxy's connections, from accept to the `net` event.
 *
 * Each connection: read the request head (HTTP) or handshake (SOCKS5) with
 * the parsers of http.c / socks5.c; decide with the rules (deny wins; no rule
 * means refused - the one decision point approvals will hook); resolve a name
 * once, off the event loop, on a resolver thread; keep only addresses that
 * dial_allowed accepts and dial exactly one of those; answer the client; then
 * relay both ways, with splice through pipes for tunnels. A refusal answers
 * 403 with X-Warden-Reason, or SOCKS5 "not allowed by ruleset". When the
 * connection ends, one `net` event records host, port, resolved address,
 * method, status, bytes each way, duration, decision, rule and reason.
 *
 * A host loopback port (forward.h) skips the handshake: its listener names
 * the destination, the rules decide again, and the connection is dialled
 * and relayed the same way, bytes as they are.
 *
 * Secrets by reference (struct proxy_guard, set by the session): once a
 * connection is dialled, the guard says whether a secret is bound to its
 * destination. A CONNECT there, or a host loopback port, goes to an
 * interception thread (intercept.h: TLS terminated with the session CA's
 * leaf and verified upstream, or plain HTTP on loopback) whose request heads
 * the guard rewrites; the thread reports on a pipe and the connection's
 * event is written then. Everything else the client sends (absolute-form
 * requests, tunnels, SOCKS5 streams) goes through user space for the guard
 * to see, instead of splice, when the session has secrets.
 *
 * Limits: handshake and dial timeouts, an idle timeout, a connection cap,
 * the parsers' own size limits; level-triggered epoll, so one slow client
 * only ever holds its own connection. */
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "../common/util.h"
#include "addr.h"
#include "dial.h"
#include "http.h"
#include "intercept.h"
#include "socks5.h"

#define MAX_CONNS 4096
#define FD_RESERVE 256 /* descriptors the proxy leaves the supervisor */
#define HANDSHAKE_TIMEOUT_S 15
#define DIAL_TIMEOUT_S 15
#define IDLE_TIMEOUT_S 900
#define MAX_CANDIDATES 8
#define PIPE_CHUNK 65536       /* a pipe's default capacity */
#define PIPE_BIG (1 << 20)      /* grown to this once a tunnel proves busy */
#define BUSY_BYTES (4 << 20)

enum state { S_HANDSHAKE, S_RESOLVING, S_DIALING, S_RELAY, S_CLOSING, S_INTERCEPT, S_ASKING };
enum tag { T_CLIENT, T_UPSTREAM, T_FORWARD };

struct conn;
struct item {
	enum tag tag;
	struct conn *c;
};

/* The listener of one host loopback port; its item is tagged T_FORWARD. */
struct fwd_listener {
	struct item it;
	int fd;
	struct net_forward fw;
};

struct conn {
	struct proxy *px;
	const struct net_forward *fw; /* a host loopback port's connection, else NULL */
	struct conn *prev, *next;
	struct item ic, iu;
	int cfd, ufd;
	unsigned ev_c, ev_u;       /* epoll interest currently registered */
	bool reg_c, reg_u;         /* fd added to the epoll set */
	enum state state;
	bool socks, plain;         /* SOCKS5; absolute-form HTTP (not a tunnel) */
	bool resolving_dead;       /* closed while a resolver thread holds it */
	bool dead;                 /* closed; freed at the end of the dispatch */
	struct http_parser *hp;
	struct socks5_parser *sp;
	struct http_body_reader body;
	bool body_done;
	/* bytes waiting to go out before relaying: to the client (replies),
	 * to the upstream (forwarded head, early data) */
	char *to_c, *to_u;
	size_t to_c_len, to_c_off, to_u_len, to_u_off;
	int pipe_cu[2], pipe_uc[2];
	size_t in_cu, in_uc;
	size_t pipe_cap;           /* capacity both pipes are known to have */
	bool grow_tried;
	bool c_eof, u_eof, cu_shut, uc_shut, status_seen;
	/* for the event */
	char method[24], host[256], rule[NET_RULE_TEXT_MAX], reason[700], address[64];
	uint16_t port;
	int status;
	bool allowed;
	unsigned long long bytes_out, bytes_in;
	struct timespec start, last;
	const struct net_rule *allow_rule;
	struct addr_ip cand[MAX_CANDIDATES];
	int ncand, icand;
	/* secrets (struct proxy_guard) */
	struct net_host dest;      /* where it goes, as the rules saw it */
	size_t head_len;           /* plain: the forwarded head's bytes at the start of to_u */
	void *guard;               /* the guard's per-connection state, or NULL */
	bool intercepted;          /* handed to an interception thread (S_INTERCEPT) */
	const void *question;      /* S_ASKING: the open question (proxy_asker) */
	unsigned requests;
	char leak_why[256];        /* the guard refused: why */
	char tool[24];             /* the tool call it belongs to (proxy_cfg.tag), "" none */
};

/* An interception thread's job and the connection it belongs to. */
struct ijob {
	struct intercept_job job;  /* first: the thread reports its address */
	struct conn *c;
};

struct job {
	struct job *next;
	struct conn *c;
	char host[256];
	int err;
	struct addr_ip ips[MAX_CANDIDATES];
	int n;
};

struct proxy {
	int ep, lhttp, lsocks, tfd, efd;
	struct item ilhttp, ilsocks, itimer, ievent;
	struct fwd_listener fwd[FORWARD_MAX];
	size_t nfwd;
	const struct net_rules *rules;
	struct addr_local local;
	bool local_loaded;         /* this host's addresses, read at the first dial */
	struct audit *log;
	struct conn *conns, *graveyard;
	size_t nconns;
	size_t cap;                /* connections at most: well under the fd limit */
	bool paused;               /* the listeners not watched: at the cap, or out of fds */
	bool cap_said;
	pthread_t workers[2];
	int nworkers;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *todo, *done;
	bool stop;
	struct proxy_guard guard;
	bool guarded;
	struct proxy_asker asker;  /* who answers `net ask` (ask NULL: nobody: refused) */
	bool default_ask;          /* a destination no rule names is a question */
	int done_pipe[2];          /* interception threads report here */
	int stop_pipe[2];          /* closing [1] stops every interception thread */
	struct item idone;
	size_t njobs;              /* interceptions still running */
	const char *(*tag)(void *ctx, int fd); /* the tool call of a connection */
	void *tag_ctx;
};

/* A new connection sends what it has at once: Nagle's wait for more, on
 * top of the peer's delayed ACK, stalls the last flight of a TLS handshake
 * by tens of milliseconds. A tunnel that proves busy gets Nagle back
 * (maybe_grow): full segments for a bulk transfer. */
static void nodelay(int fd, int on)
{
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

static double ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) * 1e3 + (double)(now.tv_nsec - t->tv_nsec) / 1e6;
}

/* ---- resolver threads --------------------------------------------------- */

static void *resolver(void *arg)
{
	struct proxy *px = arg;
	pthread_mutex_lock(&px->mu);
	for (;;) {
		while (!px->todo && !px->stop)
			pthread_cond_wait(&px->cv, &px->mu);
		if (px->stop)
			break;
		struct job *j = px->todo;
		px->todo = j->next;
		pthread_mutex_unlock(&px->mu);

		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
		struct addrinfo *res = NULL;
		j->err = getaddrinfo(j->host, NULL, &hints, &res);
		for (struct addrinfo *a = res; a && j->n < MAX_CANDIDATES; a = a->ai_next) {
			uint16_t port;
			if (addr_ip_from_sockaddr(&j->ips[j->n], &port, a->ai_addr, a->ai_addrlen) == 0) {
				bool dup = false;
				for (int i = 0; i < j->n; i++)
					dup |= addr_ip_equal(&j->ips[i], &j->ips[j->n]);
				if (!dup)
					j->n++;
			}
		}
		if (res)
			freeaddrinfo(res);

		pthread_mutex_lock(&px->mu);
		j->next = px->done;
		px->done = j;
		uint64_t one = 1;
		if (write(px->efd, &one, sizeof one) < 0) { /* counter full: a wake-up is pending */ }
	}
	pthread_mutex_unlock(&px->mu);
	return NULL;
}

/* The resolver threads, started at the first name to resolve. */
static int start_resolvers(struct proxy *px)
{
	for (int i = 0; i < 2; i++)
		if (pthread_create(&px->workers[px->nworkers], NULL, resolver, px) == 0)
			px->nworkers++;
	return px->nworkers ? 0 : -1;
}

/* ---- epoll interest ----------------------------------------------------- */

static void set_interest(struct conn *c, enum tag t, unsigned ev)
{
	int fd = t == T_CLIENT ? c->cfd : c->ufd;
	unsigned *cur = t == T_CLIENT ? &c->ev_c : &c->ev_u;
	bool *reg = t == T_CLIENT ? &c->reg_c : &c->reg_u;
	if (fd < 0 || (*reg && *cur == ev))
		return;
	struct epoll_event e = { .events = ev, .data.ptr = t == T_CLIENT ? &c->ic : &c->iu };
	if (epoll_ctl(c->px->ep, *reg ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &e) == 0) {
		*reg = true;
		*cur = ev;
	}
}

/* What each side waits for, from the connection's state. */
static void update_interest(struct conn *c)
{
	unsigned ec = 0, eu = 0;
	switch (c->state) {
	case S_HANDSHAKE:
		ec = c->to_c_len > c->to_c_off ? EPOLLOUT : EPOLLIN;
		break;
	case S_RESOLVING:
	case S_INTERCEPT:
		break;
	case S_ASKING:
		ec = EPOLLRDHUP; /* only whether the client gives up */
		break;
	case S_DIALING:
		eu = EPOLLOUT;
		break;
	case S_RELAY:
		/* Each direction reads while its pipe has room and writes while
		 * it holds bytes, both at once: the pipe is the buffer. */
		if (c->to_c_len > c->to_c_off || c->in_uc)
			ec |= EPOLLOUT;
		if (!c->u_eof && c->in_uc < c->pipe_cap)
			eu |= EPOLLIN;
		if (c->to_u_len > c->to_u_off || c->in_cu)
			eu |= EPOLLOUT;
		if (!c->c_eof && !(c->plain && c->body_done) && c->in_cu < c->pipe_cap &&
		    c->to_u_off == c->to_u_len)
			ec |= EPOLLIN;
		break;
	case S_CLOSING:
		ec = c->to_c_len > c->to_c_off ? EPOLLOUT : EPOLLIN;
		break;
	}
	set_interest(c, T_CLIENT, ec);
	set_interest(c, T_UPSTREAM, eu);
}

/* ---- the event and the end of a connection ----------------------------- */

static void log_conn(struct conn *c)
{
	struct guard_end end = { 0 };
	if (c->guard) {
		c->px->guard.end(c->guard, &end);
		c->guard = NULL;
	}
	if (end.leak_secret) {
		struct event a = ev_alert(&(struct ev_alert){ .rule = "secret.phantom",
			.secret = end.leak_secret, .host = c->host, .port = c->port,
			.where = end.leak_where, .action = "refused" });
		audit_emit_event(c->px->log, a, NULL);
	}
	if (end.leak_canary) {
		struct event a = ev_alert(&(struct ev_alert){ .rule = "canary.token",
			.severity = "critical", .path = end.leak_canary, .host = c->host,
			.port = c->port, .where = end.leak_canary_where, .action = "refused",
			.detail = "a token of a decoy credential warden placed in the home" });
		audit_emit_event(c->px->log, a, NULL);
	}
	const char *method = c->method[0] ? c->method : c->socks ? "socks5" : "?";
	struct event ev = ev_net_proxy(&(struct ev_net_proxy){
		.method = method, .host = c->host, .port = c->port, .address = c->address,
		.socks = c->socks, .loopback = c->fw != NULL, .bytes_out = c->bytes_out, .bytes_in = c->bytes_in,
		.duration_ms = ms_since(&c->start), .allowed = c->allowed, .status = c->status,
		.rule = c->rule, .reason = c->reason, .intercepted = c->intercepted,
		.requests = c->requests, .secrets = end.secrets, .tool = c->tool[0] ? c->tool : NULL });
	if (ev.fields)
		audit_emit_event(c->px->log, ev, NULL);
}

static void close_fd(struct proxy *px, int *fd, unsigned *ev, bool *reg)
{
	if (*fd >= 0) {
		if (*reg)
			epoll_ctl(px->ep, EPOLL_CTL_DEL, *fd, NULL);
		close(*fd);
	}
	*fd = -1;
	*ev = 0;
	*reg = false;
}

/* Watch the listeners again, or stop (epoll still holds them, with no
 * events): at the connection cap, or when the supervisor is out of
 * descriptors, the proxy leaves new connections in the kernel's backlog
 * instead of accepting and closing them, or spinning on a listener it
 * cannot accept from. The timer retries once a second. */
static void listeners_watch(struct proxy *px, bool on)
{
	struct epoll_event e = { .events = on ? EPOLLIN : 0 };
	if (px->lhttp >= 0) {
		e.data.ptr = &px->ilhttp;
		epoll_ctl(px->ep, EPOLL_CTL_MOD, px->lhttp, &e);
	}
	if (px->lsocks >= 0) {
		e.data.ptr = &px->ilsocks;
		epoll_ctl(px->ep, EPOLL_CTL_MOD, px->lsocks, &e);
	}
	for (size_t i = 0; i < px->nfwd; i++) {
		e.data.ptr = &px->fwd[i].it;
		epoll_ctl(px->ep, EPOLL_CTL_MOD, px->fwd[i].fd, &e);
	}
	px->paused = !on;
}

/* Stop accepting, said once per session in an alert. */
static void pause_accepting(struct proxy *px, const char *why)
{
	listeners_watch(px, false);
	if (px->cap_said)
		return;
	px->cap_said = true;
	audit_emit_event(px->log, ev_alert(&(struct ev_alert){ .rule = "proxy.connection-cap",
		.action = why }), NULL);
}

/* Take c out of the proxy's list of connections. */
static void unlink_conn(struct proxy *px, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		px->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->nconns--;
	if (px->paused && px->nconns < px->cap - px->cap / 10)
		listeners_watch(px, true);
}

static void conn_free(struct conn *c)
{
	struct proxy *px = c->px;
	if (c->dead)
		return;
	if (c->state == S_RESOLVING) { /* a resolver thread holds c: free on its answer */
		c->resolving_dead = true;
		return;
	}
	if (c->question) {
		px->asker.cancel(px->asker.ctx, c->question);
		c->question = NULL;
	}
	log_conn(c);
	close_fd(px, &c->cfd, &c->ev_c, &c->reg_c);
	close_fd(px, &c->ufd, &c->ev_u, &c->reg_u);
	for (int i = 0; i < 2; i++) {
		if (c->pipe_cu[i] >= 0)
			close(c->pipe_cu[i]);
		if (c->pipe_uc[i] >= 0)
			close(c->pipe_uc[i]);
	}
	unlink_conn(px, c);
	/* Events for it may still be in this dispatch's batch: free later. */
	c->dead = true;
	c->next = px->graveyard;
	px->graveyard = c;
}

static void bury(struct proxy *px)
{
	while (px->graveyard) {
		struct conn *c = px->graveyard;
		px->graveyard = c->next;
		free(c->hp);
		free(c->sp);
		free(c->to_c);
		free(c->to_u);
		free(c);
	}
}

static void queue_to(char **buf, size_t *len, size_t *off, const void *data, size_t n)
{
	if (*off == *len) {
		*len = *off = 0;
	}
	*buf = xrealloc(*buf, *len + n);
	memcpy(*buf + *len, data, n);
	*len += n;
}

/* Refuse: answer the client in its protocol, then close once that is sent. */
static void refuse(struct conn *c, int http_status, uint8_t socks_code, const char *reason)
{
	c->allowed = false;
	snprintf(c->reason, sizeof c->reason, "%s", reason);
	if (c->fw) {
		/* No protocol to answer in: the client sees the connection end. */
		shutdown(c->cfd, SHUT_RDWR);
	} else if (c->socks) {
		uint8_t r[SOCKS5_REPLY_MAX];
		size_t n = socks5_reply(r, socks_code, NULL, 0);
		queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, r, n);
	} else {
		char r[512];
		ssize_t n = http_error_response(http_status, reason, r, sizeof r);
		if (n > 0)
			queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, r, (size_t)n);
		c->status = http_status;
	}
	close_fd(c->px, &c->ufd, &c->ev_u, &c->reg_u);
	c->state = S_CLOSING;
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	update_interest(c);
}

/* ---- dialing -------------------------------------------------------------- */

static void dial_next(struct conn *c);

/* A plain request's head (at the start of to_u, body bytes after it) shown
 * to the guard: rewritten, or the request refused. -1: refused. */
static int guard_plain(struct conn *c)
{
	struct proxy_guard *g = &c->px->guard;
	char *head = c->to_u + c->to_u_off;
	size_t rest = c->to_u_len - c->to_u_off - c->head_len;
	char *out = NULL;
	size_t outlen = 0;
	char why[256] = "";
	if (g->head(c->guard, head, c->head_len, &out, &outlen, why, sizeof why) < 0 ||
	    (rest && g->data(c->guard, head + c->head_len, rest, why, sizeof why) < 0)) {
		free(out);
		refuse(c, 403, 0, why[0] ? why : "refused by the secrets guard");
		return -1;
	}
	char *body = rest ? xmalloc(rest) : NULL;
	if (rest)
		memcpy(body, head + c->head_len, rest);
	c->to_u_len = c->to_u_off = 0;
	queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, out, outlen);
	if (rest)
		queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, body, rest);
	free(body);
	free(out);
	return 0;
}

static void set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* Hand the connection to an interception thread: TLS terminated with a
 * leaf of the session CA (CONNECT), or the plain HTTP of a host loopback
 * port, each request head shown to the guard. */
static void intercept_begin(struct conn *c)
{
	struct proxy *px = c->px;
	struct ijob *ij = xcalloc(1, sizeof *ij);
	ij->c = c;
	struct intercept_job *j = &ij->job;
	if (!c->fw) {
		j->server_ctx = px->guard.server_ctx(px->guard.ctx, &c->dest);
		j->client_ctx = px->guard.client_ctx;
		if (!j->server_ctx || !j->client_ctx) {
			free(ij);
			refuse(c, 502, 0, "cannot make a certificate for the host a secret is bound to");
			return;
		}
		/* Tiny, on a new socket: sent at once. */
		static const char ok[] = HTTP_CONNECT_ESTABLISHED;
		if (send(c->cfd, ok, sizeof ok - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ok - 1)) {
			free(ij);
			snprintf(c->reason, sizeof c->reason, "client gone before the tunnel");
			conn_free(c);
			return;
		}
		c->status = 200;
	}
	j->host = c->dest;
	j->port = c->port;
	j->on_head = px->guard.head;
	j->on_data = px->guard.data;
	j->on_resp = px->guard.resp;
	j->ctx = c->guard;
	j->done_fd = px->done_pipe[1];
	/* The thread owns both sockets from here. */
	int cfd = c->cfd, ufd = c->ufd;
	if (c->reg_c)
		epoll_ctl(px->ep, EPOLL_CTL_DEL, cfd, NULL);
	if (c->reg_u)
		epoll_ctl(px->ep, EPOLL_CTL_DEL, ufd, NULL);
	c->reg_c = c->reg_u = false;
	set_blocking(cfd);
	set_blocking(ufd);
	j->client_fd = cfd;
	j->upstream_fd = ufd;
	j->any_host = c->fw != NULL; /* the port names the destination */
	j->stop_fd = px->stop_pipe[0];
	/* what the client sent after the CONNECT head (a ClientHello that did
	 * not wait for the 200): the job copies it and takes it first */
	if (c->to_u_len > c->to_u_off) {
		j->early = c->to_u + c->to_u_off;
		j->early_len = c->to_u_len - c->to_u_off;
	}
	/* The job owns both sockets now, even when it cannot start. */
	c->cfd = c->ufd = -1;
	struct werr e = { 0 };
	int started = intercept_start(j, &e);
	if (j->server_ctx) /* the job holds references of its own */
		SSL_CTX_free(j->server_ctx);
	c->to_u_len = c->to_u_off = 0;
	if (started < 0) {
		free(ij);
		c->allowed = false;
		snprintf(c->reason, sizeof c->reason, "%.600s", e.msg);
		conn_free(c);
		return;
	}
	c->intercepted = true;
	c->state = S_INTERCEPT;
	px->njobs++;
}

/* An interception thread ended: its numbers into the connection's event. */
static void on_job_done(struct proxy *px)
{
	struct ijob *ij;
	while (read(px->done_pipe[0], &ij, sizeof ij) == (ssize_t)sizeof ij) {
		struct conn *c = ij->c;
		struct intercept_job *j = &ij->job;
		c->bytes_in = j->bytes_in;
		c->bytes_out = j->bytes_out;
		c->requests = j->requests;
		if (j->first_status)
			c->status = j->first_status;
		if (j->error[0])
			snprintf(c->reason, sizeof c->reason, "%s", j->error);
		if (j->refused)
			c->allowed = false;
		px->njobs--;
		c->state = S_CLOSING;
		conn_free(c);
		free(ij);
	}
}

static void connected(struct conn *c)
{
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	c->allowed = true;
	c->pipe_cap = PIPE_CHUNK;
	if (pipe2(c->pipe_cu, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(c->pipe_uc, O_NONBLOCK | O_CLOEXEC) < 0) {
		refuse(c, 503, SOCKS5_GENERAL_FAILURE, "proxy out of resources");
		c->allowed = true; /* allowed, but could not be served */
		return;
	}
	bool icpt = false;
	if (c->px->guarded)
		c->guard = c->px->guard.open(c->px->guard.ctx, &c->dest, c->port,
					     c->plain || c->socks || c->fw, &icpt);
	if (c->guard && c->plain && guard_plain(c) < 0)
		return;
	if (c->guard && icpt && !c->plain && !c->socks) { /* CONNECT, or a host loopback port */
		free(c->hp);
		c->hp = NULL;
		intercept_begin(c);
		return;
	}
	if (c->socks) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		struct addr_ip bound = { 0 };
		uint16_t bport = 0;
		if (getsockname(c->ufd, (struct sockaddr *)&ss, &sl) == 0)
			addr_ip_from_sockaddr(&bound, &bport, (struct sockaddr *)&ss, sl);
		uint8_t r[SOCKS5_REPLY_MAX];
		size_t n = socks5_reply(r, SOCKS5_SUCCEEDED, &bound, bport);
		queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, r, n);
	} else if (!c->plain && !c->fw) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, ok, sizeof ok - 1);
		c->status = 200;
	}
	free(c->hp);
	c->hp = NULL;
	free(c->sp);
	c->sp = NULL;
	c->state = S_RELAY;
	update_interest(c);
}

static void dial_next(struct conn *c)
{
	close_fd(c->px, &c->ufd, &c->ev_u, &c->reg_u);
	while (c->icand < c->ncand) {
		const struct addr_ip *ip = &c->cand[c->icand++];
		char text[ADDR_TEXT_MAX];
		addr_ip_text(ip, text);
		snprintf(c->address, sizeof c->address, "%s", text);
		struct sockaddr_storage ss;
		socklen_t sl = addr_ip_to_sockaddr(ip, c->port, &ss);
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		nodelay(fd, 1);
		if (connect(fd, (struct sockaddr *)&ss, sl) == 0 || errno == EINPROGRESS) {
			c->ufd = fd;
			c->state = S_DIALING;
			clock_gettime(CLOCK_MONOTONIC, &c->last);
			update_interest(c);
			return;
		}
		close(fd);
	}
	refuse(c, 502, SOCKS5_HOST_UNREACHABLE, "cannot connect to the destination");
	c->allowed = true; /* the rules allowed it; the destination did not answer */
}

/* Keep the candidates dial_allowed accepts, then dial. */
static void got_addresses(struct conn *c, const struct addr_ip *ips, int n)
{
	const char *first_reason = NULL;
	c->ncand = c->icand = 0;
	/* Read when first needed: most sessions never dial. */
	if (!c->px->local_loaded) {
		struct werr e = { 0 };
		if (addr_local_load(&c->px->local, &e) < 0) {
			refuse(c, 503, SOCKS5_GENERAL_FAILURE, "cannot read this host's addresses");
			return;
		}
		c->px->local_loaded = true;
	}
	for (int i = 0; i < n; i++) {
		const char *why = NULL;
		if (dial_allowed(c->px->rules, c->allow_rule, &ips[i], c->port, &c->px->local, &why))
			c->cand[c->ncand++] = ips[i];
		else if (!first_reason) {
			first_reason = why;
			addr_ip_text(&ips[i], c->address);
		}
	}
	if (!c->ncand) {
		char r[700];
		snprintf(r, sizeof r, "%s %s", c->host, first_reason ? first_reason : "does not resolve");
		refuse(c, 403, SOCKS5_NOT_ALLOWED, r);
		return;
	}
	dial_next(c);
}

static void go_on(struct conn *c, const struct net_host *h);

/* A human's answer to the question of c's destination. */
static void net_answered(void *ctx, bool allow, const char *why)
{
	struct conn *c = ctx;
	c->question = NULL;
	if (c->dead)
		return;
	if (!allow) {
		refuse(c, 403, SOCKS5_NOT_ALLOWED, why);
		return;
	}
	snprintf(c->reason, sizeof c->reason, "%s", why);
	go_on(c, &c->dest);
}

/* An `ask` rule (or `net default ask`) names the destination: the
 * connection waits, unread, while a human is asked (proxy_asker). */
static void ask_human(struct conn *c, const struct net_host *h, const struct net_rule *rule)
{
	bool v6 = h->kind == NET_HOST_IPV6;
	char subject[NET_HOST_MAX + 16], summary[NET_HOST_MAX + 64];
	snprintf(subject, sizeof subject, "%s%s%s:%u", v6 ? "[" : "", h->name, v6 ? "]" : "", c->port);
	const char *via = c->socks ? "SOCKS5" : c->plain ? "HTTP" : "HTTP CONNECT";
	snprintf(summary, sizeof summary, "connect to %s (%s)", subject, via);
	json_t *detail = json_pack("{s:s,s:i,s:s,s:s?}", "host", h->name, "port", c->port, "method",
				   c->method[0] ? c->method : c->socks ? "socks5" : "?", "rule",
				   rule ? rule->text : NULL);
	c->state = S_ASKING;
	update_interest(c);
	const void *q = c->px->asker.ask(c->px->asker.ctx, subject, summary, detail, net_answered, c);
	/* answered at once (an earlier answer covers it): c went on already */
	if (q && c->state == S_ASKING)
		c->question = q;
}

/* The rules' verdict on host:port: allowed, refused, or (an ask rule, `net
 * default ask`) a question for a human. */
static void decide(struct conn *c, const struct net_host *h)
{
	snprintf(c->host, sizeof c->host, "%s", h->name);
	c->dest = *h;
	bool v6 = h->kind == NET_HOST_IPV6;
	const struct net_rule *rule = NULL;
	enum rules_verdict v = rules_match(c->px->rules, h->name, c->port, &rule);
	if (rule)
		snprintf(c->rule, sizeof c->rule, "%s", rule->text);
	bool ask = v == RULES_ASK || (v == RULES_UNKNOWN && c->px->default_ask);
	if (ask && c->px->asker.ask) {
		c->allow_rule = rule;
		ask_human(c, h, rule);
		return;
	}
	if (v != RULES_ALLOW) {
		char r[700];
		if (v == RULES_DENY)
			snprintf(r, sizeof r, "%s%s%s:%u denied by rule %s", v6 ? "[" : "", h->name,
				 v6 ? "]" : "", c->port, rule ? rule->text : "(invalid host)");
		else
			snprintf(r, sizeof r, "no rule allows %s%s%s:%u", v6 ? "[" : "", h->name,
				 v6 ? "]" : "", c->port);
		refuse(c, 403, SOCKS5_NOT_ALLOWED, r);
		return;
	}
	c->allow_rule = rule;
	go_on(c, h);
}

/* The destination is allowed: its addresses (resolved by a worker). */
static void go_on(struct conn *c, const struct net_host *h)
{
	if (h->kind != NET_HOST_NAME) {
		got_addresses(c, &h->ip, 1);
		return;
	}
	if (!c->px->nworkers && start_resolvers(c->px) < 0) {
		refuse(c, 503, SOCKS5_GENERAL_FAILURE, "cannot start name resolution");
		return;
	}
	struct job *j = xcalloc(1, sizeof *j);
	j->c = c;
	snprintf(j->host, sizeof j->host, "%s", h->name);
	c->state = S_RESOLVING;
	update_interest(c);
	pthread_mutex_lock(&c->px->mu);
	j->next = c->px->todo;
	c->px->todo = j;
	pthread_cond_signal(&c->px->cv);
	pthread_mutex_unlock(&c->px->mu);
}

/* A host loopback port's connection: its listener names the destination;
 * the rules decide again (a deny rule wins), then dial the host's loopback. */
static void forward_start(struct conn *c)
{
	const struct net_forward *fw = c->fw;
	snprintf(c->method, sizeof c->method, "tcp");
	snprintf(c->host, sizeof c->host, "%s", fw->host);
	c->port = fw->port;
	const char *why = NULL;
	if (net_host_parse(&c->dest, fw->host[0] == ':' ? "[::1]" : fw->host,
			   fw->host[0] == ':' ? 5 : strlen(fw->host), &why) < 0)
		memset(&c->dest, 0, sizeof c->dest);
	const struct net_rule *rule = NULL;
	enum rules_verdict v = rules_match(c->px->rules, fw->host, fw->port, &rule);
	snprintf(c->rule, sizeof c->rule, "%s", rule ? rule->text : "");
	if (v != RULES_ALLOW) {
		char r[700];
		snprintf(r, sizeof r, "host loopback port %s denied by rule %s", fw->rule,
			 rule ? rule->text : "(none)");
		refuse(c, 0, 0, r);
		return;
	}
	c->allow_rule = rule;
	struct addr_ip t[2];
	int n = forward_targets(fw, t);
	c->ncand = c->icand = 0;
	for (int i = 0; i < n; i++)
		if (!rules_deny_addr(c->px->rules, &t[i], fw->port))
			c->cand[c->ncand++] = t[i];
	if (!c->ncand) {
		refuse(c, 0, 0, "host loopback port: its address is denied");
		return;
	}
	dial_next(c);
}

/* ---- handshake ------------------------------------------------------------ */

static void handshake_done_http(struct conn *c, const char *rest, size_t rest_len)
{
	const struct http_request *r = &c->hp->req;
	snprintf(c->method, sizeof c->method, "%s", r->method);
	c->port = r->port;
	c->plain = !r->connect;
	if (c->plain) {
		char *head = xmalloc(HTTP_FORWARD_MAX);
		ssize_t n = http_forward_head(c->hp, head, HTTP_FORWARD_MAX);
		if (n > 0) {
			queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, head, (size_t)n);
			c->head_len = (size_t)n;
		}
		free(head);
		http_body_init(&c->body, r);
		c->body_done = c->body.state != HTTP_NEED_MORE;
	}
	if (rest_len) {
		size_t take = rest_len;
		if (c->plain && !c->body_done) {
			size_t used = 0;
			http_body_feed(&c->body, rest, rest_len, &used);
			take = used;
			c->body_done = c->body.state != HTTP_NEED_MORE;
		} else if (c->plain) {
			take = 0; /* a pipelined request: not forwarded */
		}
		if (take)
			queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, rest, take);
	}
	decide(c, &r->host);
}

static void handshake_read(struct conn *c)
{
	char buf[4096];
	ssize_t n = recv(c->cfd, buf, sizeof buf, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		snprintf(c->reason, sizeof c->reason, "client closed during the handshake");
		conn_free(c);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	size_t off = 0;
	while (off < (size_t)n && c->state == S_HANDSHAKE) {
		size_t used = 0;
		if (!c->socks) {
			enum http_result r = http_feed(c->hp, buf + off, (size_t)n - off, &used);
			off += used;
			if (r == HTTP_ERROR) {
				refuse(c, c->hp->status, 0, c->hp->reason);
				return;
			}
			if (r == HTTP_COMPLETE) {
				handshake_done_http(c, buf + off, (size_t)n - off);
				return;
			}
			if (used == 0)
				break;
			continue;
		}
		enum socks5_result r = socks5_feed(c->sp, buf + off, (size_t)n - off, &used);
		off += used;
		if (r == SOCKS5_GREETING) {
			queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, c->sp->reply, c->sp->reply_len);
			update_interest(c);
		} else if (r == SOCKS5_ERROR) {
			c->allowed = false;
			snprintf(c->reason, sizeof c->reason, "%s", c->sp->reason);
			if (c->sp->reply_len)
				queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, c->sp->reply, c->sp->reply_len);
			c->state = S_CLOSING;
			update_interest(c);
			return;
		} else if (r == SOCKS5_REQUEST) {
			snprintf(c->method, sizeof c->method, "socks5");
			c->port = c->sp->port;
			if (off < (size_t)n)
				queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, buf + off, (size_t)n - off);
			decide(c, &c->sp->host);
			return;
		} else if (used == 0) {
			break;
		}
	}
}

/* ---- relaying ------------------------------------------------------------- */

/* Write what is queued for fd; true when all of it is out. */
static bool flush(int fd, char *buf, size_t len, size_t *off)
{
	while (*off < len) {
		ssize_t w = send(fd, buf + *off, len - *off, MSG_NOSIGNAL);
		if (w < 0)
			return false;
		*off += (size_t)w;
	}
	return true;
}

static void note_status(struct conn *c)
{
	char peek[16];
	ssize_t n = recv(c->ufd, peek, sizeof peek - 1, MSG_PEEK);
	if (n < 0 && errno == EAGAIN)
		return; /* no answer yet: look again when there is one */
	if (n >= 12 && memcmp(peek, "HTTP/1.", 7) == 0) {
		peek[n] = '\0';
		c->status = atoi(peek + 9);
	}
	c->status_seen = true;
}

/* A tunnel that moves a lot gets bigger pipes: fewer wake-ups per byte.
 * Only then, so 1,000 idle tunnels stay within the per-user pipe budget.
 * And Nagle again: full segments for a bulk transfer. */
static void maybe_grow(struct conn *c)
{
	if (c->grow_tried || c->bytes_in + c->bytes_out < BUSY_BYTES)
		return;
	c->grow_tried = true;
	nodelay(c->cfd, 0);
	nodelay(c->ufd, 0);
	if (fcntl(c->pipe_cu[1], F_SETPIPE_SZ, PIPE_BIG) >= 0 &&
	    fcntl(c->pipe_uc[1], F_SETPIPE_SZ, PIPE_BIG) >= 0)
		c->pipe_cap = PIPE_BIG;
	/* else: not allowed (pipe budget); one may have grown, which is fine */
}

/* What the client sends, shown to the guard: -1 when it refused (the
 * connection is closed). */
static int guard_data(struct conn *c, const char *buf, size_t n)
{
	char why[256] = "";
	if (c->px->guard.data(c->guard, buf, n, why, sizeof why) == 0)
		return 0;
	snprintf(c->reason, sizeof c->reason, "%s", why[0] ? why : "refused by the secrets guard");
	c->allowed = false;
	conn_free(c);
	return -1;
}

/* Move what can move without blocking; close the connection when done. */
static void relay(struct conn *c)
{
	int progress;
	maybe_grow(c);
	do {
		progress = 0;
		if (c->to_c_off < c->to_c_len && !flush(c->cfd, c->to_c, c->to_c_len, &c->to_c_off) &&
		    errno != EAGAIN)
			goto gone;
		/* bytes_out counts what reached the upstream, never what was
		 * only queued (a refused request sends nothing). */
		size_t before = c->to_u_off;
		bool flushed = c->to_u_off >= c->to_u_len || flush(c->ufd, c->to_u, c->to_u_len, &c->to_u_off);
		c->bytes_out += c->to_u_off - before;
		if (!flushed && errno != EAGAIN)
			goto gone;
		/* client -> upstream */
		if (!c->c_eof && c->in_cu < c->pipe_cap && c->to_u_off == c->to_u_len) {
			if (c->plain) {
				if (!c->body_done) {
					char buf[16384];
					ssize_t n = recv(c->cfd, buf, sizeof buf, 0);
					if (n > 0) {
						size_t used = 0;
						http_body_feed(&c->body, buf, (size_t)n, &used);
						c->body_done = c->body.state != HTTP_NEED_MORE;
						if (c->guard && guard_data(c, buf, used) < 0)
							return;
						queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, buf, used);
						progress = 1;
					} else if (n == 0) {
						c->c_eof = true;
					}
				}
			} else if (c->guard) {
				/* watched: through user space, for the guard to see */
				char buf[16384];
				ssize_t n = recv(c->cfd, buf, sizeof buf, 0);
				if (n > 0) {
					if (guard_data(c, buf, (size_t)n) < 0)
						return;
					queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, buf, (size_t)n);
					progress = 1;
				} else if (n == 0 || errno != EAGAIN) {
					c->c_eof = true;
				}
			} else {
				ssize_t n = splice(c->cfd, NULL, c->pipe_cu[1], NULL, c->pipe_cap - c->in_cu,
						   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
				if (n > 0)
					c->in_cu += (size_t)n, progress = 1;
				else if (n == 0)
					c->c_eof = true;
				else if (errno != EAGAIN)
					c->c_eof = true;
			}
		}
		if (c->in_cu) {
			ssize_t n = splice(c->pipe_cu[0], NULL, c->ufd, NULL, c->in_cu,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0)
				c->in_cu -= (size_t)n, c->bytes_out += (size_t)n, progress = 1;
			else if (n < 0 && errno != EAGAIN)
				goto gone;
		}
		/* upstream -> client */
		if (!c->u_eof && c->in_uc < c->pipe_cap) {
			if (c->plain && !c->status_seen)
				note_status(c);
			/* Take all there is before sending: bigger segments out. */
			ssize_t n;
			while ((n = splice(c->ufd, NULL, c->pipe_uc[1], NULL, c->pipe_cap - c->in_uc,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE)) > 0) {
				c->in_uc += (size_t)n, progress = 1;
				if (c->in_uc >= c->pipe_cap)
					break;
			}
			if (n == 0 || (n < 0 && errno != EAGAIN))
				c->u_eof = true;
		}
		if (c->in_uc && c->to_c_off == c->to_c_len) {
			ssize_t n = splice(c->pipe_uc[0], NULL, c->cfd, NULL, c->in_uc,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0)
				c->in_uc -= (size_t)n, c->bytes_in += (size_t)n, progress = 1;
			else if (n < 0 && errno != EAGAIN)
				goto gone;
		}
	} while (progress);

	/* A plain request ends with its body: the upstream sees no more. */
	bool client_done = c->c_eof || (c->plain && c->body_done);
	if (client_done && !c->in_cu && c->to_u_off == c->to_u_len && !c->cu_shut) {
		shutdown(c->ufd, SHUT_WR);
		c->cu_shut = true;
	}
	if (c->u_eof && !c->in_uc && c->to_c_off == c->to_c_len && !c->uc_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->uc_shut = true;
	}
	if (c->uc_shut && (c->cu_shut || c->plain)) {
		conn_free(c);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	update_interest(c);
	return;
gone:
	conn_free(c);
}

/* ---- events ----------------------------------------------------------- */

static void on_accept(struct proxy *px, int lfd, bool socks, const struct net_forward *fw)
{
	for (int k = 0; k < 64; k++) {
		if (px->nconns >= px->cap) {
			pause_accepting(px, "new connections wait: the session's connection cap is reached");
			return;
		}
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_accepting(px, "new connections wait: warden is out of descriptors");
			return;
		}
		nodelay(fd, 1);
		struct conn *c = xcalloc(1, sizeof *c);
		c->px = px;
		c->cfd = fd;
		c->ufd = -1;
		c->pipe_cu[0] = c->pipe_cu[1] = c->pipe_uc[0] = c->pipe_uc[1] = -1;
		c->ic = (struct item){ T_CLIENT, c };
		c->iu = (struct item){ T_UPSTREAM, c };
		c->socks = socks;
		c->fw = fw;
		const char *tool = px->tag ? px->tag(px->tag_ctx, fd) : NULL;
		if (tool)
			snprintf(c->tool, sizeof c->tool, "%s", tool);
		if (fw) {
			/* no handshake: the listener says where to */
		} else if (socks) {
			c->sp = xmalloc(sizeof *c->sp);
			socks5_parser_init(c->sp);
		} else {
			c->hp = xmalloc(sizeof *c->hp);
			http_parser_init(c->hp);
		}
		clock_gettime(CLOCK_MONOTONIC, &c->start);
		c->last = c->start;
		c->next = px->conns;
		if (px->conns)
			px->conns->prev = c;
		px->conns = c;
		px->nconns++;
		if (fw)
			forward_start(c);
		else
			update_interest(c);
	}
}

static void on_conn(struct conn *c, enum tag t, unsigned events)
{
	switch (c->state) {
	case S_HANDSHAKE:
		if (c->to_c_off < c->to_c_len) {
			if (!flush(c->cfd, c->to_c, c->to_c_len, &c->to_c_off) && errno != EAGAIN) {
				conn_free(c);
				return;
			}
			update_interest(c);
			if (c->to_c_off < c->to_c_len)
				return;
		}
		handshake_read(c);
		return;
	case S_DIALING: {
		int err = 0;
		socklen_t l = sizeof err;
		if (t != T_UPSTREAM)
			return;
		getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &l);
		if (err)
			dial_next(c);
		else
			connected(c);
		return;
	}
	case S_RELAY:
		relay(c);
		return;
	case S_CLOSING:
		if (c->to_c_off < c->to_c_len) {
			if (!flush(c->cfd, c->to_c, c->to_c_len, &c->to_c_off) && errno != EAGAIN) {
				conn_free(c);
				return;
			}
			if (c->to_c_off < c->to_c_len)
				return;
			/* Sent: half-close so the answer is read, not reset. */
			shutdown(c->cfd, SHUT_WR);
			update_interest(c);
			return;
		}
		/* Drain what the client still sends until it closes. */
		char sink[4096];
		ssize_t n = recv(c->cfd, sink, sizeof sink, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN) || (events & (EPOLLHUP | EPOLLERR)))
			conn_free(c);
		return;
	case S_ASKING:
		if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
			snprintf(c->reason, sizeof c->reason, "the client closed while a human was asked");
			conn_free(c);
		}
		return;
	case S_RESOLVING:
	case S_INTERCEPT:
		return;
	}
}

static void on_resolved(struct proxy *px)
{
	uint64_t v;
	if (read(px->efd, &v, sizeof v) < 0) { /* nothing pending */ }
	pthread_mutex_lock(&px->mu);
	struct job *done = px->done;
	px->done = NULL;
	pthread_mutex_unlock(&px->mu);
	while (done) {
		struct job *j = done;
		done = j->next;
		struct conn *c = j->c;
		c->state = S_HANDSHAKE; /* not resolving any more */
		if (c->resolving_dead) {
			conn_free(c);
		} else if (j->err || j->n == 0) {
			char r[700];
			snprintf(r, sizeof r, "%s does not resolve (%s)", c->host,
				 j->err ? gai_strerror(j->err) : "no address");
			refuse(c, 502, SOCKS5_HOST_UNREACHABLE, r);
		} else {
			got_addresses(c, j->ips, j->n);
		}
		free(j);
	}
}

static void on_timer(struct proxy *px)
{
	uint64_t v;
	if (read(px->tfd, &v, sizeof v) < 0) { /* spurious */ }
	for (struct conn *c = px->conns, *next; c; c = next) {
		next = c->next;
		double idle = ms_since(&c->last) / 1e3;
		if ((c->state == S_HANDSHAKE && idle > HANDSHAKE_TIMEOUT_S) ||
		    (c->state == S_DIALING && idle > DIAL_TIMEOUT_S) ||
		    (c->state == S_CLOSING && idle > 2) ||
		    (c->state == S_RELAY && idle > IDLE_TIMEOUT_S)) {
			if (!c->reason[0])
				snprintf(c->reason, sizeof c->reason, "timed out (%s)",
					 c->state == S_HANDSHAKE ? "handshake" :
					 c->state == S_DIALING ? "connect" : "idle");
			conn_free(c);
		}
	}
}

void proxy_dispatch(struct proxy *px)
{
	struct epoll_event evs[64];
	int n = epoll_wait(px->ep, evs, 64, 0);
	for (int i = 0; i < n; i++) {
		struct item *it = evs[i].data.ptr;
		if (it == &px->ilhttp)
			on_accept(px, px->lhttp, false, NULL);
		else if (it == &px->ilsocks)
			on_accept(px, px->lsocks, true, NULL);
		else if (it->tag == T_FORWARD) {
			struct fwd_listener *fl = (struct fwd_listener *)it;
			on_accept(px, fl->fd, false, &fl->fw);
		}
		else if (it == &px->itimer) {
			on_timer(px);
			if (px->paused && px->nconns < px->cap)
				listeners_watch(px, true); /* tried again; paused again if need be */
		}
		else if (it == &px->ievent)
			on_resolved(px);
		else if (it == &px->idone)
			on_job_done(px);
		else if (!it->c->dead)
			on_conn(it->c, it->tag, evs[i].events);
	}
	bury(px);
}

int proxy_fd(const struct proxy *px) { return px->ep; }

static void watch(struct proxy *px, int fd, struct item *it)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = it };
	epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &e);
}

void proxy_add_forward(struct proxy *px, int listener, const struct net_forward *fw)
{
	if (px->nfwd >= FORWARD_MAX) {
		close(listener);
		return;
	}
	struct fwd_listener *fl = &px->fwd[px->nfwd++];
	fl->it = (struct item){ T_FORWARD, NULL };
	fl->fd = listener;
	fl->fw = *fw;
	watch(px, listener, &fl->it);
}

struct proxy *proxy_new(const struct proxy_cfg *cfg, struct werr *e)
{
	/* 1,000 tunnels take 6,000 fds (two sockets, two pipes each). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct proxy *px = xcalloc(1, sizeof *px);
	/* Each connection may hold six descriptors; the supervisor keeps
	 * FD_RESERVE for its own work (the exec record above all). */
	px->cap = MAX_CONNS;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rl.rlim_cur - FD_RESERVE) / 6 < px->cap)
		px->cap = rl.rlim_cur > FD_RESERVE + 6 * 16 ? (rl.rlim_cur - FD_RESERVE) / 6 : 16;
	px->lhttp = cfg->http;
	px->lsocks = cfg->socks;
	px->rules = cfg->rules;
	px->log = cfg->log;
	if (cfg->guard) {
		px->guard = *cfg->guard;
		px->guarded = true;
	}
	if (cfg->asker)
		px->asker = *cfg->asker;
	px->default_ask = cfg->default_ask;
	px->tag = cfg->tag;
	px->tag_ctx = cfg->tag_ctx;
	px->ep = epoll_create1(EPOLL_CLOEXEC);
	px->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	px->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	px->done_pipe[0] = px->done_pipe[1] = px->stop_pipe[0] = px->stop_pipe[1] = -1;
	if (px->ep < 0 || px->tfd < 0 || px->efd < 0 ||
	    pipe2(px->done_pipe, O_CLOEXEC) < 0 || fcntl(px->done_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    pipe2(px->stop_pipe, O_CLOEXEC) < 0) {
		werr_errno(e, "proxy: event fds");
		proxy_free(px);
		return NULL;
	}
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	timerfd_settime(px->tfd, 0, &its, NULL);
	px->ilhttp.tag = px->ilsocks.tag = px->itimer.tag = px->ievent.tag = T_CLIENT;
	if (px->lhttp >= 0)
		watch(px, px->lhttp, &px->ilhttp);
	if (px->lsocks >= 0)
		watch(px, px->lsocks, &px->ilsocks);
	watch(px, px->tfd, &px->itimer);
	watch(px, px->efd, &px->ievent);
	px->idone.tag = T_CLIENT;
	watch(px, px->done_pipe[0], &px->idone);
	pthread_mutex_init(&px->mu, NULL);
	pthread_cond_init(&px->cv, NULL);
	return px;
}

void proxy_free(struct proxy *px)
{
	if (!px)
		return;
	if (px->nworkers) {
		pthread_mutex_lock(&px->mu);
		px->stop = true;
		pthread_cond_broadcast(&px->cv);
		pthread_mutex_unlock(&px->mu);
		for (int i = 0; i < px->nworkers; i++)
			pthread_join(px->workers[i], NULL);
		/* Answers that arrived, and jobs never started, release their
		 * connections now. */
		on_resolved(px);
		for (struct job *j = px->todo, *n; j; j = n) {
			n = j->next;
			j->c->state = S_HANDSHAKE;
			conn_free(j->c);
			free(j);
		}
	}
	/* Interception threads end when told (the stop pipe's write end
	 * closes): wait for them, a bounded time. A thread still running after
	 * that keeps its connection (leaked: warden exits). */
	if (px->stop_pipe[1] >= 0) {
		close(px->stop_pipe[1]);
		px->stop_pipe[1] = -1;
	}
	for (int waited = 0; px->njobs && waited < 50; waited++) {
		struct pollfd pf = { .fd = px->done_pipe[0], .events = POLLIN };
		if (poll(&pf, 1, 100) > 0)
			on_job_done(px);
	}
	for (struct conn *c = px->conns, *n; c; c = n) {
		n = c->next;
		if (c->state == S_INTERCEPT) /* detach: its thread still holds it */
			unlink_conn(px, c);
	}
	while (px->conns) {
		struct conn *c = px->conns;
		if (c->state == S_RESOLVING)
			c->state = S_HANDSHAKE;
		if (!c->reason[0] && c->state != S_RELAY)
			snprintf(c->reason, sizeof c->reason, "session ended");
		conn_free(c);
	}
	bury(px);
	if (px->lhttp >= 0)
		close(px->lhttp);
	if (px->lsocks >= 0)
		close(px->lsocks);
	for (size_t i = 0; i < px->nfwd; i++)
		close(px->fwd[i].fd);
	if (px->ep >= 0)
		close(px->ep);
	if (px->tfd >= 0)
		close(px->tfd);
	if (px->efd >= 0)
		close(px->efd);
	if (px->done_pipe[0] >= 0)
		close(px->done_pipe[0]);
	if (px->done_pipe[1] >= 0 && !px->njobs)
		close(px->done_pipe[1]);
	if (px->stop_pipe[0] >= 0 && !px->njobs)
		close(px->stop_pipe[0]);
	if (px->local_loaded)
		addr_local_free(&px->local);
	pthread_mutex_destroy(&px->mu);
	pthread_cond_destroy(&px->cv);
	free(px);
}
