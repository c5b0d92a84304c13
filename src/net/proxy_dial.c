/* proxy_dial.c - where one of the proxy's connections goes, from its
 * request to a connected upstream (proxy_conn.h): the rules decide (deny
 * wins; no rule means refused; an ask rule or `net default ask` makes it a
 * question for a human, the connection waiting unread); a name is resolved
 * once, off the event loop, on one of two resolver threads; only the
 * addresses dial_allowed accepts are kept, and one of them is dialled, the
 * next tried when a connect fails. Once connected, the secrets guard (struct
 * proxy_guard) says whether the connection is intercepted (handed to an
 * interception thread, intercept.h) or relayed (proxy_relay.c). */
#include "proxy_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "../common/util.h"
#include "dial.h"
#include "proxy_mcp.h"
#include "tls.h"

/* ---- resolver threads ---------------------------------------------------- */

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

void resolvers_stop(struct proxy *px)
{
	if (!px->nworkers)
		return;
	pthread_mutex_lock(&px->mu);
	px->stop = true;
	pthread_cond_broadcast(&px->cv);
	pthread_mutex_unlock(&px->mu);
	for (int i = 0; i < px->nworkers; i++)
		pthread_join(px->workers[i], NULL);
	/* Answers that arrived, and jobs never started, release their
	 * connections now. */
	resolver_collect(px);
	for (struct job *j = px->todo, *n; j; j = n) {
		n = j->next;
		j->c->state = S_HANDSHAKE;
		conn_free(j->c);
		free(j);
	}
}

/* ---- connected: relayed or intercepted ----------------------------------- */

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
		conn_refuse(c, 403, 0, why[0] ? why : "refused by the secrets guard");
		return -1;
	}
	char *body = rest ? xmalloc(rest) : NULL;
	if (rest)
		memcpy(body, head + c->head_len, rest);
	c->to_u_len = c->to_u_off = 0;
	conn_queue_upstream(c, out, outlen);
	if (rest)
		conn_queue_upstream(c, body, rest);
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
 * port, each request head shown to the guard; the guard asked for it (a
 * secret bound there, or rules that inspect the host). */
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
			conn_refuse(c, 502, 0, "cannot make a certificate for the host whose TLS warden "
				    "terminates");
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
	if (px->rules->nreq || px->guard.server_ctx) { /* request rules; TRACE toward a secret's host */
		ij->rc = (struct req_check){ .rules = px->rules, .host = c->dest, .port = c->port,
					     .bound = !px->guard.bound || px->guard.bound(c->guard),
					     .tls = !c->fw, .asks = px->asks, .stop_fd = px->stop_pipe[0] };
		j->on_req = proxy_req_intercepted;
		j->req_ctx = &ij->rc;
	}
	conn_owner_begin(c); /* while the client's socket is the connection's */
	j->done_fd = px->done_pipe[1];
	if (proxy_mcp_covers(px->mcp, &c->dest, c->port))
		proxy_mcp_attach(px->mcp, j, &c->dest, c->port, px->stop_pipe[0], c->cfd);
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
	ij->rc.client_fd = cfd;
	ij->rc.upstream_fd = ufd;
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
		tls_ctx_free(j->server_ctx);
	c->to_u_len = c->to_u_off = 0;
	if (started < 0) {
		proxy_mcp_detach(j);
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
void intercepts_collect(struct proxy *px)
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
			proxy_req_terminated_error(c, j->error);
		if (j->refused)
			c->allowed = false;
		proxy_mcp_detach(j);
		proxy_req_events(c, &ij->rc);
		px->njobs--;
		c->state = S_CLOSING;
		conn_free(c);
		free(ij);
	}
}

/* The connection's secrets' guard (secrets.h), for its program when the
 * guard takes one; *icpt: the guard wants its TLS terminated. */
static void open_guard(struct conn *c, bool *icpt)
{
	*icpt = false;
	bool seen = c->plain || c->socks || c->fw;
	if (c->px->guarded && c->px->guard.open_for)
		c->guard = c->px->guard.open_for(c->px->guard.ctx, &c->dest, c->port, seen, &c->prog,
						 icpt);
	else if (c->px->guarded)
		c->guard = c->px->guard.open(c->px->guard.ctx, &c->dest, c->port, seen, icpt);
}

/* The client told its tunnel stands: a SOCKS5 reply with the address
 * bound, or CONNECT's 200. */
static void tunnel_established(struct conn *c)
{
	if (c->socks) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		struct addr_ip bound = { 0 };
		uint16_t bport = 0;
		if (getsockname(c->ufd, (struct sockaddr *)&ss, &sl) == 0)
			addr_ip_from_sockaddr(&bound, &bport, (struct sockaddr *)&ss, sl);
		uint8_t r[SOCKS5_REPLY_MAX];
		size_t n = socks5_reply(r, SOCKS5_SUCCEEDED, &bound, bport);
		conn_queue_client(c, r, n);
	} else if (!c->plain && !c->fw) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		conn_queue_client(c, ok, sizeof ok - 1);
		c->status = 200;
	}
}

static void connected(struct conn *c)
{
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	c->allowed = true;
	c->pipe_cap = PIPE_CHUNK;
	if (pipe2(c->pipe_cu, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(c->pipe_uc, O_NONBLOCK | O_CLOEXEC) < 0) {
		conn_refuse(c, 503, SOCKS5_GENERAL_FAILURE, "proxy out of resources");
		c->allowed = true; /* allowed, but could not be served */
		return;
	}
	bool icpt;
	open_guard(c, &icpt);
	/* CONNECT, or a host loopback port, whose TLS warden terminates */
	bool terminated = c->guard && icpt && !c->plain && !c->socks;
	if (proxy_mcp_covers(c->px->mcp, &c->dest, c->port) && !terminated) {
		/* (short: the reason goes twice into a 512-byte answer) */
		conn_refuse(c, 403, SOCKS5_NOT_ALLOWED, "mcp server: warden reads it only over TLS it "
			    "terminates (CONNECT through its HTTP proxy) or on a host loopback port");
		return;
	}
	/* An absolute-form request to a host a secret is put in for in the
	 * clear (bound, on the loopback): its answer would be relayed unread,
	 * a reflected value coming back real and TRACE echoing it. Its host
	 * loopback port reads each request and answer (NO_PROXY sends
	 * clients there). */
	if (c->guard && c->plain && c->px->guard.bound && c->px->guard.bound(c->guard)) {
		conn_refuse(c, 403, 0, "plain HTTP through warden's proxy to a host a secret is "
			    "bound to: go to its port directly (NO_PROXY lists the loopback), where "
			    "warden reads each request and answer");
		return;
	}
	if (c->guard && c->plain && guard_plain(c) < 0)
		return;
	if (proxy_req_unseen(c, terminated))
		return;
	if (terminated) {
		free(c->hp);
		c->hp = NULL;
		intercept_begin(c);
		return;
	}
	tunnel_established(c);
	/* the program, when no rule needs it, once the client has its answer:
	 * looked up meanwhile, off this connection's wait */
	(void)conn_flush_client(c);
	conn_owner_begin(c);
	free(c->hp);
	c->hp = NULL;
	free(c->sp);
	c->sp = NULL;
	c->hello_check = !c->plain && !c->fw; /* a tunnel: its TLS name first */
	c->state = S_RELAY;
	conn_relay_begin(c);
}

/* ---- dialing ------------------------------------------------------------- */

static void dial_next(struct conn *c)
{
	conn_close_upstream(c);
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
			conn_interest(c);
			return;
		}
		close(fd);
	}
	conn_refuse(c, 502, SOCKS5_HOST_UNREACHABLE, "cannot connect to the destination");
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
			conn_refuse(c, 503, SOCKS5_GENERAL_FAILURE, "cannot read this host's addresses");
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
		if (first_reason) /* the address named: which one the rule met */
			snprintf(r, sizeof r, "%s %s (%s)", c->host, first_reason, c->address);
		else
			snprintf(r, sizeof r, "%s does not resolve", c->host);
		conn_refuse(c, 403, SOCKS5_NOT_ALLOWED, r);
		return;
	}
	dial_next(c);
}

void conn_dial_event(struct conn *c)
{
	int err = 0;
	socklen_t l = sizeof err;
	getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &l);
	if (err)
		dial_next(c);
	else
		connected(c);
}

void resolver_collect(struct proxy *px)
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
			conn_refuse(c, 502, SOCKS5_HOST_UNREACHABLE, r);
		} else {
			got_addresses(c, j->ips, j->n);
		}
		free(j);
	}
}

/* ---- the rules' verdict -------------------------------------------------- */

static void go_on(struct conn *c, const struct net_host *h);
static void forward_go(struct conn *c);

/* A human's answer to the question of c's destination (a host loopback
 * port's: dialled there). */
static void net_answered(void *ctx, bool allow, const char *why)
{
	struct conn *c = ctx;
	c->question = NULL;
	if (c->dead)
		return;
	if (!allow) {
		conn_refuse(c, 403, SOCKS5_NOT_ALLOWED, why);
		return;
	}
	snprintf(c->reason, sizeof c->reason, "%s", why);
	if (c->fw)
		forward_go(c);
	else
		go_on(c, &c->dest);
}

/* An `ask` rule (or `net default ask`) names the destination: the
 * connection waits, unread, while a human is asked (proxy_asker). */
static void ask_human(struct conn *c, const struct net_host *h, const struct net_rule *rule)
{
	char subject[NET_HOST_PORT_MAX], summary[NET_HOST_MAX + 64];
	net_host_port(h, c->port, subject, sizeof subject);
	const char *via = c->fw ? "TCP, host loopback port" : c->socks ? "SOCKS5"
			: c->plain ? "HTTP" : "HTTP CONNECT";
	snprintf(summary, sizeof summary, "connect to %s (%s)", subject, via);
	json_t *detail = json_pack("{s:s,s:i,s:s,s:s?,s:s?}", "host", h->name, "port", c->port, "method",
				   c->method[0] ? c->method : c->socks ? "socks5" : "?", "rule",
				   rule ? rule->text : NULL, "program",
				   c->prog_asked && !c->prog.unknown[0] ? c->prog.path : NULL);
	c->state = S_ASKING;
	conn_interest(c);
	const void *q = c->px->asker.ask(c->px->asker.ctx, subject, summary, detail, net_answered, c);
	/* answered at once (an earlier answer covers it): c went on already */
	if (q && c->state == S_ASKING)
		c->question = q;
}

/* A destination no rule allows, though a rule for another program names
 * it: said after the refusal's reason r (which program asked, or why it
 * could not be told), so the profile line to change is plain. */
static void why_not_program(const struct conn *c, const struct net_host *h, char *r, size_t len)
{
	const struct net_rule *scoped = NULL;
	enum rules_verdict v = rules_match_program(c->px->rules, h->name, c->port,
						   &(struct net_program){ .any = true }, &scoped);
	if (v == RULES_UNKNOWN || !scoped || (!scoped->prog.glob[0] && !scoped->prog.sha256[0]))
		return;
	char text[NET_RULE_TEXT_MAX + NET_PROGRAM_MAX + 16];
	rules_rule_text(scoped, text, sizeof text);
	char add[1200];
	if (c->prog.unknown[0])
		snprintf(add, sizeof add, ": its program cannot be told (%s) and rule \"%s\" names one",
			 c->prog.unknown, text);
	else
		snprintf(add, sizeof add, " for program %s (rule \"%s\" names another)", c->prog.path,
			 text);
	size_t n = strlen(r), k = strlen(add); /* cut short when long: a reason, not a record */
	if (n + 1 < len) {
		k = k < len - n - 1 ? k : len - n - 1;
		memcpy(r + n, add, k);
		r[n + k] = '\0';
	}
}

/* Is c's program still being looked up (proxy_owner.c)? Then c waits for
 * it (S_OWNER), and the rules decide again with the answer
 * (conn_decide_again): true. */
static bool owner_wait(struct conn *c)
{
	if (!c->prog_pending)
		return false;
	c->state = S_OWNER;
	conn_interest(c);
	return true;
}

/* The rules' verdict on host (and c->port) for c's program, the rule's
 * text kept for the event; -1: c waits for its program first (S_OWNER,
 * then conn_decide_again): the rules name programs (prog_first), or the
 * verdict is a refusal or a question, whose client (or human) stays to
 * read it while the program is told. An allowed connection goes on. */
static int conn_match(struct conn *c, const char *host, const struct net_rule **rule)
{
	*rule = NULL;
	if (c->px->prog_first) {
		conn_owner_begin(c); /* its request is in: the socket as it holds it now */
		if (owner_wait(c))
			return -1;
	}
	enum rules_verdict v = rules_match_program(c->px->rules, host, c->port, &c->prog, rule);
	if (v != RULES_ALLOW) { /* refused or asked: the answer (the question) names it */
		conn_owner_begin(c);
		if (owner_wait(c))
			return -1;
	}
	if (*rule)
		rules_rule_text(*rule, c->rule, sizeof c->rule);
	return (int)v;
}

/* The rules' verdict on c->dest: allowed, refused, or (an ask rule, `net
 * default ask`) a question for a human. */
static void decide(struct conn *c)
{
	const struct net_host *h = &c->dest;
	const struct net_rule *rule = NULL;
	int m = conn_match(c, h->name, &rule);
	if (m < 0)
		return;
	enum rules_verdict v = (enum rules_verdict)m;
	/* a request asked about goes on by this host rule once allowed (its
	 * `private`, an address literal's loopback) */
	c->allow_rule = rule;
	if (v != RULES_DENY && c->plain && proxy_req_plain(c, net_answered) != 0)
		return; /* refused, or asked about the request */
	bool ask = v == RULES_ASK || (v == RULES_UNKNOWN && c->px->default_ask);
	if (ask && c->px->asker.ask) {
		ask_human(c, h, rule);
		return;
	}
	if (v != RULES_ALLOW) {
		char r[700], hp[NET_HOST_PORT_MAX];
		net_host_port(h, c->port, hp, sizeof hp);
		if (v == RULES_DENY)
			snprintf(r, sizeof r, "%s denied by rule %s", hp,
				 rule ? rule->text : "(invalid host)");
		else
			snprintf(r, sizeof r, "no rule allows %s", hp);
		if (v == RULES_UNKNOWN)
			why_not_program(c, h, r, sizeof r);
		conn_refuse(c, 403, SOCKS5_NOT_ALLOWED, r);
		return;
	}
	go_on(c, h);
}

void conn_decide(struct conn *c, const struct net_host *h)
{
	snprintf(c->host, sizeof c->host, "%s", h->name);
	c->dest = *h;
	decide(c);
}

/* The destination is allowed: its addresses (resolved by a worker). */
static void go_on(struct conn *c, const struct net_host *h)
{
	if (h->kind != NET_HOST_NAME) {
		got_addresses(c, &h->ip, 1);
		return;
	}
	if (!c->px->nworkers && start_resolvers(c->px) < 0) {
		conn_refuse(c, 503, SOCKS5_GENERAL_FAILURE, "cannot start name resolution");
		return;
	}
	struct job *j = xcalloc(1, sizeof *j);
	j->c = c;
	snprintf(j->host, sizeof j->host, "%s", h->name);
	c->state = S_RESOLVING;
	conn_interest(c);
	pthread_mutex_lock(&c->px->mu);
	j->next = c->px->todo;
	c->px->todo = j;
	pthread_cond_signal(&c->px->cv);
	pthread_mutex_unlock(&c->px->mu);
}

static void forward_decide(struct conn *c);

/* A host loopback port's connection: its listener names the destination;
 * the rules decide again (a deny rule wins), then dial the host's loopback. */
void conn_forward_start(struct conn *c)
{
	const struct net_forward *fw = c->fw;
	snprintf(c->method, sizeof c->method, "tcp");
	snprintf(c->host, sizeof c->host, "%s", fw->host);
	c->port = fw->port;
	const char *why = NULL;
	if (net_host_parse(&c->dest, fw->host[0] == ':' ? "[::1]" : fw->host,
			   fw->host[0] == ':' ? 5 : strlen(fw->host), &why) < 0)
		memset(&c->dest, 0, sizeof c->dest);
	forward_decide(c);
}

/* Allowed (by a rule, or by a human's answer to an ask rule's question):
 * dial the host's loopback, its addresses no deny rule names. */
static void forward_go(struct conn *c)
{
	const struct net_forward *fw = c->fw;
	struct addr_ip t[2];
	int n = forward_targets(fw, t);
	c->ncand = c->icand = 0;
	for (int i = 0; i < n; i++)
		if (!rules_deny_addr(c->px->rules, &t[i], fw->port))
			c->cand[c->ncand++] = t[i];
	if (!c->ncand) {
		conn_refuse(c, 0, 0, "host loopback port: its address is denied");
		return;
	}
	dial_next(c);
}

static void forward_decide(struct conn *c)
{
	const struct net_forward *fw = c->fw;
	const struct net_rule *rule = NULL;
	int v = conn_match(c, fw->host, &rule);
	if (v < 0)
		return;
	if (v == RULES_ASK && c->px->asker.ask) {
		c->allow_rule = rule; /* once allowed, by this rule */
		ask_human(c, &c->dest, rule);
		return;
	}
	if (v != RULES_ALLOW) {
		char r[700];
		snprintf(r, sizeof r, "host loopback port %s %s by rule %s", fw->rule,
			 v == RULES_ASK ? "not asked (nobody to ask)" : "denied",
			 rule ? rule->text : "(none)");
		conn_refuse(c, 0, 0, r);
		return;
	}
	c->allow_rule = rule;
	forward_go(c);
}

void conn_decide_again(struct conn *c)
{
	c->state = S_HANDSHAKE;
	if (c->fw)
		forward_decide(c);
	else
		decide(c);
}
