/* proxy_conn.c - one connection of the egress proxy, as the three parts of
 * the proxy (proxy.c, proxy_dial.c, proxy_relay.c) all handle it: what each
 * side waits for in epoll, the bytes queued before the relay, a refusal
 * answered in the client's protocol, and its end (the `net` event, its fds
 * closed, the listeners watched again under the cap). Calls nothing of the
 * three back, so they call it one way (proxy_owner.c's lookup aside: a
 * connection's end starts it when nothing did). */
#include "proxy_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/util.h"

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
void conn_interest(struct conn *c)
{
	unsigned ec = 0, eu = 0;
	switch (c->state) {
	case S_HANDSHAKE:
		ec = c->to_c_len > c->to_c_off ? EPOLLOUT : EPOLLIN;
		break;
	case S_RESOLVING:
	case S_INTERCEPT:
	case S_OWNER:
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
		if ((c->to_u_len > c->to_u_off && !c->hello_check) || c->in_cu)
			eu |= EPOLLOUT;
		if (!c->c_eof && !(c->plain && c->body_done) && c->in_cu < c->pipe_cap &&
		    (c->to_u_off == c->to_u_len || c->hello_check))
			ec |= EPOLLIN;
		break;
	case S_CLOSING:
		/* a refusal is answered once its program is known: its client
		 * is still there to be told */
		ec = c->prog_pending ? 0 : c->to_c_len > c->to_c_off ? EPOLLOUT : EPOLLIN;
		break;
	}
	set_interest(c, T_CLIENT, ec);
	set_interest(c, T_UPSTREAM, eu);
}

/* ---- the event and the end of a connection ----------------------------- */

/* May this refused connection be on the record one by one (netbound.h)? */
static bool refused_admit(struct conn *c)
{
	char dest[sizeof c->host + 16];
	snprintf(dest, sizeof dest, "%s:%u", c->host, (unsigned)c->port);
	return netbound_admit(&c->px->refused, c->px->log, dest, mono_ms());
}

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
	if (!c->allowed && !refused_admit(c))
		return;
	const char *method = c->method[0] ? c->method : c->socks ? "socks5" : "?";
	struct event ev = ev_net_proxy(&(struct ev_net_proxy){
		.method = method, .host = c->host, .port = c->port, .address = c->address,
		.socks = c->socks, .loopback = c->fw != NULL, .bytes_out = c->bytes_out, .bytes_in = c->bytes_in,
		.duration_ms = c->duration_ms, .allowed = c->allowed, .status = c->status,
		.rule = c->rule, .reason = c->reason, .intercepted = c->intercepted,
		.requests = c->requests, .secrets = end.secrets, .tool = c->tool[0] ? c->tool : NULL,
		.program = c->prog_asked && !c->prog.unknown[0] ? c->prog.path : NULL,
		.program_pid = c->prog.pid, .program_sha256 = c->prog.sha256,
		.program_unknown = c->prog_asked && c->prog.unknown[0] ? c->prog.unknown : NULL,
		.path = c->path });
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

void conn_close_upstream(struct conn *c)
{
	close_fd(c->px, &c->ufd, &c->ev_u, &c->reg_u);
}

/* Watch the listeners again, or stop (epoll still holds them, with no
 * events): at the connection cap, or when the supervisor is out of
 * descriptors, the proxy leaves new connections in the kernel's backlog
 * instead of accepting and closing them, or spinning on a listener it
 * cannot accept from. The timer retries once a second. */
void proxy_listeners_watch(struct proxy *px, bool on)
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

/* Take c out of the proxy's list of connections. */
void conn_unlink(struct proxy *px, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		px->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->nconns--;
	if (px->paused && px->nconns < px->cap - px->cap / 10)
		proxy_listeners_watch(px, true);
}

void conn_free(struct conn *c)
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
	c->duration_ms = ms_since(&c->start);
	if (c->cfd >= 0)
		conn_owner_begin(c); /* not looked up yet (it ended in its handshake, say) */
	if (!c->prog_pending)
		log_conn(c);
	close_fd(px, &c->cfd, &c->ev_c, &c->reg_c);
	close_fd(px, &c->ufd, &c->ev_u, &c->reg_u);
	for (int i = 0; i < 2; i++) {
		if (c->pipe_cu[i] >= 0)
			close(c->pipe_cu[i]);
		if (c->pipe_uc[i] >= 0)
			close(c->pipe_uc[i]);
	}
	conn_unlink(px, c);
	c->dead = true;
	if (c->prog_pending) { /* the owner thread's answer writes its event (conn_log_late) */
		c->log_wait = true;
		return;
	}
	/* Events for it may still be in this dispatch's batch: free later. */
	c->next = px->graveyard;
	px->graveyard = c;
}

void conn_log_late(struct conn *c)
{
	log_conn(c);
	c->log_wait = false;
	c->next = c->px->graveyard;
	c->px->graveyard = c;
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

void conn_queue_client(struct conn *c, const void *data, size_t n)
{
	queue_to(&c->to_c, &c->to_c_len, &c->to_c_off, data, n);
}

void conn_queue_upstream(struct conn *c, const void *data, size_t n)
{
	queue_to(&c->to_u, &c->to_u_len, &c->to_u_off, data, n);
}

/* Refuse: answer the client in its protocol, then close once that is sent. */
void conn_refuse(struct conn *c, int http_status, uint8_t socks_code, const char *reason)
{
	conn_owner_begin(c); /* refused in its handshake: not looked up yet */
	c->allowed = false;
	snprintf(c->reason, sizeof c->reason, "%s", reason);
	if (c->fw) {
		/* No protocol to answer in: the connection reset at once, as
		 * a port nobody listens on is answered (a TCP socket
		 * disconnected by AF_UNSPEC sends its RST; else an end) */
		struct sockaddr unspec = { .sa_family = AF_UNSPEC };
		if (connect(c->cfd, &unspec, sizeof unspec) < 0)
			shutdown(c->cfd, SHUT_RDWR);
	} else if (c->socks) {
		uint8_t r[SOCKS5_REPLY_MAX];
		size_t n = socks5_reply(r, socks_code, NULL, 0);
		conn_queue_client(c, r, n);
	} else {
		char r[1024]; /* the reason (200 bytes at most) thrice, and the rest */
		ssize_t n = http_error_response(http_status, reason, r, sizeof r);
		if (n > 0)
			conn_queue_client(c, r, (size_t)n);
		c->status = http_status;
	}
	conn_close_upstream(c);
	c->state = S_CLOSING;
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	conn_interest(c);
}
