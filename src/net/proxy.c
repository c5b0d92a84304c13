/* proxy.c - the egress proxy: its connections accepted and their events
 * dispatched, each one's handshake read; where a connection goes is
 * proxy_dial.c's, its bytes once dialled proxy_relay.c's, its refusal and
 * its end (the `net` event) proxy_conn.c's (the four share proxy_conn.h).
 * The whole path:
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
#include "proxy_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "../common/selflimits.h"
#include "../common/util.h"

#define MAX_CONNS 4096
#define HANDSHAKE_TIMEOUT_S 15
#define DIAL_TIMEOUT_S 15
#define IDLE_TIMEOUT_S 900

/* Stop accepting, said once per session in an alert. */
static void pause_accepting(struct proxy *px, const char *why)
{
	proxy_listeners_watch(px, false);
	if (px->cap_said)
		return;
	px->cap_said = true;
	audit_emit_event(px->log, ev_alert(&(struct ev_alert){ .rule = "proxy.connection-cap",
		.action = why }), NULL);
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
			conn_queue_upstream(c, head, (size_t)n);
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
			conn_queue_upstream(c, rest, take);
	}
	conn_decide(c, &r->host);
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
				conn_refuse(c, c->hp->status, 0, c->hp->reason);
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
			conn_queue_client(c, c->sp->reply, c->sp->reply_len);
			conn_interest(c);
		} else if (r == SOCKS5_ERROR) {
			conn_owner_begin(c);
			c->allowed = false;
			snprintf(c->reason, sizeof c->reason, "%s", c->sp->reason);
			if (c->sp->reply_len)
				conn_queue_client(c, c->sp->reply, c->sp->reply_len);
			c->state = S_CLOSING;
			conn_interest(c);
			return;
		} else if (r == SOCKS5_REQUEST) {
			snprintf(c->method, sizeof c->method, "socks5");
			c->port = c->sp->port;
			if (off < (size_t)n)
				conn_queue_upstream(c, buf + off, (size_t)n - off);
			conn_decide(c, &c->sp->host);
			return;
		} else if (used == 0) {
			break;
		}
	}
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
			conn_forward_start(c);
		else
			conn_interest(c);
	}
}

static void on_conn(struct conn *c, enum tag t, unsigned events)
{
	switch (c->state) {
	case S_HANDSHAKE:
		if (c->to_c_off < c->to_c_len) {
			if (!conn_flush_client(c) && errno != EAGAIN) {
				conn_free(c);
				return;
			}
			conn_interest(c);
			if (c->to_c_off < c->to_c_len)
				return;
		}
		handshake_read(c);
		return;
	case S_DIALING:
		if (t == T_UPSTREAM)
			conn_dial_event(c);
		return;
	case S_RELAY:
		conn_relay(c);
		return;
	case S_CLOSING:
		if (c->to_c_off < c->to_c_len) {
			if (!conn_flush_client(c) && errno != EAGAIN) {
				conn_free(c);
				return;
			}
			if (c->to_c_off < c->to_c_len)
				return;
			/* Sent: half-close so the answer is read, not reset. */
			shutdown(c->cfd, SHUT_WR);
			conn_interest(c);
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
	case S_OWNER:
		return;
	}
}

/* c's program is known (proxy_owner.c): c waited for it to be decided,
 * or refused, its answer to be sent, or ended, its event to be written. */
static void program_known(struct conn *c)
{
	if (c->log_wait)
		conn_log_late(c);
	else if (c->state == S_OWNER)
		conn_decide_again(c);
	else if (c->state == S_CLOSING)
		conn_interest(c);
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

static void proxy_dispatch(struct loop *l, const struct source *src, uint32_t events)
{
	struct proxy *px = src->ctx;
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
				proxy_listeners_watch(px, true); /* tried again; paused again if need be */
		}
		else if (it == &px->ievent)
			resolver_collect(px);
		else if (it == &px->idone)
			intercepts_collect(px);
		else if (it == &px->iowner)
			owners_collect(px, program_known);
		else if (it == &px->iasks)
			askq_drain(px->asks);
		else if (!it->c->dead)
			on_conn(it->c, it->tag, evs[i].events);
	}
	bury(px);
}

int proxy_watch(struct loop *l, struct proxy *px, struct werr *e)
{
	return loop_add(l, "the proxy", px->ep, proxy_dispatch, px, e);
}

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
	/* 1,000 tunnels take 6,000 fds (two sockets, two pipes each): warden
	 * raised its limit to the hard one at start (selflimits.h) */
	struct proxy *px = xcalloc(1, sizeof *px);
	/* Each connection may hold six descriptors; the supervisor keeps a
	 * reserve for its own work (the exec record above all). */
	px->cap = selflimits_conns(6, cfg->fd_shares, MAX_CONNS);
	px->lhttp = cfg->http;
	px->lsocks = cfg->socks;
	px->rules = cfg->rules;
	px->log = cfg->log;
	netbound_init(&px->refused);
	if (cfg->guard) {
		px->guard = *cfg->guard;
		px->guarded = true;
	}
	if (cfg->asker)
		px->asker = *cfg->asker;
	px->mcp = cfg->mcp;
	px->default_ask = cfg->default_ask;
	px->sni_required = cfg->sni_required;
	px->tag = cfg->tag;
	px->tag_ctx = cfg->tag_ctx;
	if (cfg->owner)
		px->owner = *cfg->owner;
	px->prog_first = rules_any_program(cfg->rules) || (cfg->guard && cfg->guard->by_program);
	px->ep = epoll_create1(EPOLL_CLOEXEC);
	px->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	px->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	px->done_pipe[0] = px->done_pipe[1] = px->stop_pipe[0] = px->stop_pipe[1] = -1;
	px->asks = askq_new(cfg->log, cfg->asker, e);
	if (!px->asks) {
		proxy_free(px);
		return NULL;
	}
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
	px->iasks.tag = px->iowner.tag = T_CLIENT;
	watch(px, askq_fd(px->asks), &px->iasks);
	pthread_mutex_init(&px->mu, NULL);
	pthread_cond_init(&px->cv, NULL);
	return px;
}

void proxy_free(struct proxy *px)
{
	if (!px)
		return;
	resolvers_stop(px);
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
			intercepts_collect(px);
	}
	for (struct conn *c = px->conns, *n; c; c = n) {
		n = c->next;
		if (c->state == S_INTERCEPT) /* detach: its thread still holds it */
			conn_unlink(px, c);
	}
	while (px->conns) {
		struct conn *c = px->conns;
		if (c->state == S_RESOLVING)
			c->state = S_HANDSHAKE;
		if (!c->reason[0] && c->state != S_RELAY)
			snprintf(c->reason, sizeof c->reason, "session ended");
		conn_free(c);
	}
	owners_stop(px, program_known); /* the events still waiting for their program written */
	netbound_end(&px->refused, px->log);
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
	if (!px->njobs) /* (a thread still running may yet post to it) */
		askq_free(px->asks);
	if (px->local_loaded)
		addr_local_free(&px->local);
	pthread_mutex_destroy(&px->mu);
	pthread_cond_destroy(&px->cv);
	free(px);
}
