/* sshagent_srv.c - the SSH agent socket inside, served (sshagent_srv.h):
 * the clients and their connections to the host agent on one epoll
 * instance, each client one request at a time (list, sign, session-bind
 * forwarded; the rest refused here), the deadline of the host agent's
 * answers on one timer, the `ssh` events. */
#include "sshagent_srv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "../net/sshagent.h"

#define CLIENTS_MAX 16
#define TIMEOUT_DEFAULT_MS 5000
#define IN_MAX (2 * (SSHAG_MSG_MAX + 4))  /* queued from a client before it is closed */
#define OUT_MAX (4 * (SSHAG_MSG_MAX + 4)) /* queued for a client that does not read */

enum item_kind { IT_LISTENER = 1, IT_TIMER, IT_CLIENT, IT_UP };

/* Where a client is: waiting for its next request, for the host agent
 * (the list; the list before a signature; the signature; the
 * session-bind's answer), or for a human. */
enum cstate { ST_IDLE, ST_LIST, ST_SIGN_LIST, ST_SIGN, ST_BIND, ST_ASK };

struct client {
	struct sshagent_srv *srv;
	size_t slot;
	int fd, up;
	enum cstate st;
	struct timespec deadline;
	struct bytebuf in, out, upin, upout;
	uint8_t *req;               /* the signature request in hand (a copy) */
	size_t reqlen;
	char key[SSHAG_FP_MAX];     /* its key */
	char *comment;
	struct sshagent_dest dest;
	char host_key[SSHAG_FP_MAX]; /* the session-bind's server key, or "" */
	const struct question *q;
	char qid[48];               /* the question asked for the signature in hand, or "" */
	bool processing;            /* in process(): done() does not enter it again */
};

struct sshagent_srv {
	int ep, listener, timer;
	char *upstream;
	const struct policy_ssh_agent *pol;
	struct audit *log;
	struct approvals *ap;
	unsigned timeout_ms;
	struct client *c[CLIENTS_MAX];
};

static void process(struct client *c);

/* len bytes as a string (a NUL inside ends it early). */
static char *dupn(const uint8_t *p, size_t len)
{
	char *s = xmalloc(len + 1);
	if (len)
		memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static uint64_t tag(enum item_kind k, size_t slot)
{
	return (uint64_t)k << 32 | slot;
}

static void watch_fd(struct sshagent_srv *s, int op, int fd, enum item_kind k, size_t slot, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.u64 = tag(k, slot) };
	epoll_ctl(s->ep, op, fd, &ev);
}

/* ---- the log ---- */

static void emit(struct client *c, const char *action, bool allowed, const char *reason,
		 const char *ext)
{
	bool sign = strcmp(action, "sign") == 0;
	const struct sshagent_dest *d = &c->dest;
	audit_emit_event(c->srv->log, ev_ssh(&(struct ev_ssh){ .action = action, .allowed = allowed,
		.key = sign && c->key[0] ? c->key : NULL, .comment = sign ? c->comment : NULL,
		.host_key = c->host_key[0] ? c->host_key : NULL,
		.user = sign && d->userauth ? d->user : NULL,
		.service = sign && d->userauth ? d->service : NULL,
		.sig_namespace = sign && d->sshsig ? d->sig_namespace : NULL,
		.extension = ext, .reason = reason, .question = sign && c->qid[0] ? c->qid : NULL }), NULL);
}

/* ---- the client's side ---- */

static void client_close(struct client *c)
{
	struct sshagent_srv *s = c->srv;
	if (c->q)
		approvals_cancel(s->ap, c->q);
	s->c[c->slot] = NULL;
	close(c->fd);
	if (c->up >= 0)
		close(c->up);
	bytebuf_free(&c->in);
	bytebuf_free(&c->out);
	bytebuf_free(&c->upin);
	bytebuf_free(&c->upout);
	free(c->req);
	free(c->comment);
	free(c);
}

/* Write what is queued; the rest when the client can take it. false: the
 * client was closed. */
static bool flush_client(struct client *c)
{
	if (bytebuf_send_flush(c->fd, &c->out, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ||
	    bytebuf_pending(&c->out) > OUT_MAX) {
		client_close(c);
		return false;
	}
	watch_fd(c->srv, EPOLL_CTL_MOD, c->fd, IT_CLIENT, c->slot, bytebuf_pending(&c->out) > 0);
	return true;
}

/* The request in hand is over: the client's next one, if it sent one. */
static void done(struct client *c)
{
	c->st = ST_IDLE;
	free(steal_ptr(&c->req));
	free(steal_ptr(&c->comment));
	c->key[0] = c->qid[0] = '\0';
	memset(&c->dest, 0, sizeof c->dest);
	if (flush_client(c) && !c->processing)
		process(c);
}

static void answer_failure(struct client *c)
{
	sshagent_put_failure(&c->out);
}

/* Refused here: SSH_AGENT_FAILURE, and the event. */
static void refuse(struct client *c, const char *action, const char *reason, const char *ext)
{
	emit(c, action, false, reason, ext);
	answer_failure(c);
	done(c);
}

/* ---- the host agent's side ---- */

static void up_close(struct client *c)
{
	if (c->up >= 0) {
		close(c->up);
		c->up = -1;
	}
	bytebuf_free(&c->upin);
	bytebuf_free(&c->upout);
}

/* The host agent failed the request in hand: the client gets
 * SSH_AGENT_FAILURE, the log the reason. */
static void up_fail(struct client *c, const char *why)
{
	static const char *const actions[] = { [ST_LIST] = "list", [ST_SIGN_LIST] = "sign",
		[ST_SIGN] = "sign", [ST_BIND] = "extension" };
	up_close(c);
	const char *action = c->st < ARRAY_LEN(actions) && actions[c->st] ? actions[c->st] : "list";
	refuse(c, action, why, c->st == ST_BIND ? "session-bind@openssh.com" : NULL);
}

static int up_connect(struct sshagent_srv *s)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(s->upstream) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, s->upstream, strlen(s->upstream) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static void rearm(struct sshagent_srv *s)
{
	struct itimerspec it = { 0 };
	for (size_t i = 0; i < CLIENTS_MAX; i++) {
		const struct client *c = s->c[i];
		if (!c || c->st == ST_IDLE || c->st == ST_ASK)
			continue;
		if (!it.it_value.tv_sec ||
		    c->deadline.tv_sec < it.it_value.tv_sec ||
		    (c->deadline.tv_sec == it.it_value.tv_sec &&
		     c->deadline.tv_nsec < it.it_value.tv_nsec))
			it.it_value = c->deadline;
	}
	timerfd_settime(s->timer, TFD_TIMER_ABSTIME, &it, NULL);
}

static bool up_flush(struct client *c)
{
	if (bytebuf_send_flush(c->up, &c->upout, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return false;
	watch_fd(c->srv, EPOLL_CTL_MOD, c->up, IT_UP, c->slot, bytebuf_pending(&c->upout) > 0);
	return true;
}

/* Send msg (type first) to the host agent; the client waits in st. */
static void up_send(struct client *c, const uint8_t *msg, size_t len, enum cstate st)
{
	struct sshagent_srv *s = c->srv;
	c->st = st;
	if (c->up < 0) {
		c->up = up_connect(s);
		if (c->up < 0) {
			char why[600];
			snprintf(why, sizeof why, "the host's agent at %s cannot be reached: %s",
				 s->upstream, strerror(errno));
			up_fail(c, why);
			return;
		}
		watch_fd(s, EPOLL_CTL_ADD, c->up, IT_UP, c->slot, false);
	}
	uint8_t hdr[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			   (uint8_t)len };
	bytebuf_put(&c->upout, hdr, 4, 256);
	bytebuf_put(&c->upout, msg, len, 256);
	c->deadline = mono_after_ms(s->timeout_ms);
	if (!up_flush(c)) {
		up_fail(c, "the host's agent closed the connection");
		return;
	}
	rearm(s);
}

/* ---- deciding ---- */

static void sign_forward(struct client *c)
{
	up_send(c, c->req, c->reqlen, ST_SIGN);
}

static void asked(void *ctx, bool allow, const char *why)
{
	struct client *c = ctx;
	c->q = NULL;
	if (allow)
		sign_forward(c);
	else
		refuse(c, "sign", why && *why ? why : "not allowed by a human", NULL);
}

/* `ssh-agent ask`: the key's fingerprint is the subject (an answer for
 * the session allows the key for the session); the question says what
 * for, and where when ssh said (its session-bind: the server's host key,
 * as `ssh-keygen -lF HOST` shows it on the host). */
static void sign_ask(struct client *c)
{
	const struct sshagent_dest *d = &c->dest;
	char summary[1200];
	int n = snprintf(summary, sizeof summary, "sign with the SSH key %s (%s)", c->key,
			 c->comment ? c->comment : "");
	if (d->userauth)
		n += snprintf(summary + n, sizeof summary - (size_t)n, " to log in as %s", d->user);
	if (c->host_key[0]) /* where: the server's key ssh bound the agent to */
		n += snprintf(summary + n, sizeof summary - (size_t)n, " at the server whose host "
			      "key is %s", c->host_key);
	if (d->sshsig)
		snprintf(summary + n, sizeof summary - (size_t)n, " (signature namespace %s)",
			 d->sig_namespace);
	json_t *detail = json_pack("{s:s}", "key", c->key);
	if (detail && c->host_key[0])
		json_object_set_new(detail, "host_key", json_string(c->host_key));
	c->st = ST_ASK;
	struct sshagent_srv *s = c->srv;
	size_t slot = c->slot;
	const struct question *q = approvals_ask(s->ap, APPROVAL_SSH, c->key, summary, detail,
						 asked, c);
	if (s->c[slot] != c)
		return; /* answered at once, and the client closed meanwhile */
	if (c->st == ST_ASK && q) {
		c->q = q; /* else answered at once (a remembered answer) */
		snprintf(c->qid, sizeof c->qid, "%s", q->id);
	}
}

/* The host agent's list before a signature: is the key in it, and named? */
static void sign_decide(struct client *c, const uint8_t *msg, size_t len)
{
	struct sshagent_key *keys = xcalloc(SSHAG_KEYS_MAX, sizeof *keys);
	int n = sshagent_parse_ids(msg, len, keys, SSHAG_KEYS_MAX);
	struct sshagent_req r;
	sshagent_parse_req(c->req, c->reqlen, &r);
	const struct sshagent_key *k = NULL;
	for (int i = 0; i < n && !k; i++)
		if (keys[i].bloblen == r.keylen && memcmp(keys[i].blob, r.key, r.keylen) == 0)
			k = &keys[i];
	if (k)
		c->comment = dupn(k->comment, k->commentlen);
	bool named = k && sshagent_selected(&c->srv->pol->keys, k);
	free(keys);
	if (n < 0)
		up_fail(c, "the host's agent answered what warden cannot read");
	else if (!k)
		refuse(c, "sign", "not a key of the host's agent", NULL);
	else if (!named)
		refuse(c, "sign", "a key the policy does not name (ssh-agent KEY..., --ssh-key)", NULL);
	else if (c->srv->pol->ask && !c->srv->ap)
		refuse(c, "sign", "ssh-agent ask: no one to ask", NULL);
	else if (c->srv->pol->ask)
		sign_ask(c);
	else
		sign_forward(c);
}

/* The list with the keys named only. */
static void list_filter(struct client *c, const uint8_t *msg, size_t len)
{
	struct sshagent_key *keys = xcalloc(SSHAG_KEYS_MAX, sizeof *keys);
	int n = sshagent_parse_ids(msg, len, keys, SSHAG_KEYS_MAX);
	size_t kept = 0;
	for (int i = 0; i < n; i++)
		if (sshagent_selected(&c->srv->pol->keys, &keys[i]))
			keys[kept++] = keys[i];
	if (n >= 0)
		sshagent_put_ids(&c->out, keys, kept);
	free(keys);
	if (n < 0)
		up_fail(c, "the host's agent answered what warden cannot read");
	else
		done(c);
}

/* The host agent's answer to the request in hand. */
static void up_answered(struct client *c, const uint8_t *msg, size_t len)
{
	enum cstate st = c->st;
	c->st = ST_IDLE;
	rearm(c->srv);
	c->st = st;
	switch (st) {
	case ST_LIST:
		list_filter(c, msg, len);
		return;
	case ST_SIGN_LIST:
		sign_decide(c, msg, len);
		return;
	case ST_SIGN:
	case ST_BIND: {
		bool ok = msg[0] == (st == ST_SIGN ? SSHAG_SIGN_RESPONSE : SSHAG_SUCCESS);
		if (!ok)
			answer_failure(c);
		else {
			uint8_t hdr[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16),
					   (uint8_t)(len >> 8), (uint8_t)len };
			bytebuf_put(&c->out, hdr, 4, 256);
			bytebuf_put(&c->out, msg, len, 256);
		}
		if (st == ST_SIGN)
			emit(c, "sign", ok, ok ? NULL : "the host's agent refused to sign", NULL);
		done(c);
		return;
	}
	default:
		return; /* an answer nobody asked for: ignored */
	}
}

enum { RECV_DRAINED, RECV_CLOSED, RECV_FULL };

/* Read what fd has (non-blocking) into b: RECV_DRAINED when nothing more
 * waits, RECV_CLOSED when the peer closed or failed, RECV_FULL once b holds
 * more than max (the rest is left unread). */
static int recv_into(int fd, struct bytebuf *b, size_t max)
{
	uint8_t buf[16384];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return RECV_DRAINED;
		if (n <= 0)
			return RECV_CLOSED;
		bytebuf_put(b, buf, (size_t)n, 4096);
		if (bytebuf_pending(b) > max)
			return RECV_FULL;
	}
}

static void on_up(struct client *c, uint32_t events)
{
	/* nothing asked of it: what it does (closes, talks) ends the
	 * connection, which the next request makes again; the client is
	 * told nothing it did not ask about */
	bool waiting = c->st != ST_IDLE && c->st != ST_ASK;
	if (!waiting) {
		up_close(c);
		return;
	}
	if (events & EPOLLOUT && !up_flush(c)) {
		up_fail(c, "the host's agent closed the connection");
		return;
	}
	if (recv_into(c->up, &c->upin, SSHAG_MSG_MAX + 4) == RECV_CLOSED) {
		up_fail(c, "the host's agent closed the connection");
		return;
	}
	const uint8_t *msg;
	size_t len, used;
	int r = sshagent_frame((const uint8_t *)c->upin.p + c->upin.off, bytebuf_pending(&c->upin),
			       &msg, &len, &used);
	if (r < 0) {
		up_fail(c, "the host's agent answered what warden cannot read");
		return;
	}
	if (r == 0)
		return;
	/* one answer per request: it is the whole of what came */
	_cleanup_free_ uint8_t *copy = xmalloc(len);
	memcpy(copy, msg, len);
	c->upin.off += used;
	up_answered(c, copy, len);
}

/* ---- the requests ---- */

static void request(struct client *c, const uint8_t *msg, size_t len)
{
	static const uint8_t list[] = { SSHAG_REQUEST_IDENTITIES };
	struct sshagent_req r;
	char name[32];
	if (sshagent_parse_req(msg, len, &r) < 0) {
		refuse(c, sshagent_req_name(msg[0], name, sizeof name), "a malformed request", NULL);
		return;
	}
	switch (r.type) {
	case SSHAG_REQUEST_IDENTITIES:
		up_send(c, msg, len, ST_LIST);
		return;
	case SSHAG_SIGN_REQUEST:
		c->req = xmalloc(len);
		memcpy(c->req, msg, len);
		c->reqlen = len;
		sshagent_fingerprint(r.key, r.keylen, c->key);
		sshagent_sign_dest(r.data, r.datalen, &c->dest);
		up_send(c, list, sizeof list, ST_SIGN_LIST);
		return;
	case SSHAG_EXTENSION: {
		if (sshagent_is_session_bind(&r)) {
			sshagent_fingerprint(r.hostkey, r.hostkeylen, c->host_key);
			up_send(c, msg, len, ST_BIND);
			return;
		}
		_cleanup_free_ char *ext = dupn(r.ext, r.extlen);
		refuse(c, "extension", "warden's agent passes only session-bind@openssh.com", ext);
		return;
	}
	default:
		refuse(c, sshagent_req_name(r.type, name, sizeof name),
		       "warden's agent only lists and signs with the keys named", NULL);
	}
}

/* The client's requests, one at a time, while it waits for nothing. */
static void process(struct client *c)
{
	struct sshagent_srv *s = c->srv;
	size_t slot = c->slot;
	c->processing = true;
	while (c->st == ST_IDLE) {
		const uint8_t *msg;
		size_t len, used;
		int r = sshagent_frame((const uint8_t *)c->in.p + c->in.off, bytebuf_pending(&c->in),
				       &msg, &len, &used);
		if (r < 0) {
			emit(c, "message", false, "a message longer than 256 KiB, or empty", NULL);
			client_close(c);
			return;
		}
		if (r == 0)
			break;
		_cleanup_free_ uint8_t *copy = xmalloc(len);
		memcpy(copy, msg, len);
		c->in.off += used;
		request(c, copy, len);
		if (s->c[slot] != c)
			return; /* closed */
	}
	c->processing = false;
}

static void on_client(struct client *c, uint32_t events)
{
	if (events & EPOLLOUT && !flush_client(c))
		return;
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	int got = recv_into(c->fd, &c->in, IN_MAX);
	if (got == RECV_FULL)
		emit(c, "message", false, "more than 512 KiB of requests queued", NULL);
	if (got != RECV_DRAINED) {
		client_close(c);
		return;
	}
	process(c);
}

static void on_accept(struct sshagent_srv *s)
{
	for (;;) {
		int fd = accept4(s->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		size_t i = 0;
		while (i < CLIENTS_MAX && s->c[i])
			i++;
		if (i == CLIENTS_MAX) {
			close(fd); /* more than CLIENTS_MAX at once */
			continue;
		}
		struct client *c = xcalloc(1, sizeof *c);
		*c = (struct client){ .srv = s, .slot = i, .fd = fd, .up = -1 };
		s->c[i] = c;
		watch_fd(s, EPOLL_CTL_ADD, fd, IT_CLIENT, i, false);
	}
}

static void on_timer(struct sshagent_srv *s)
{
	uint64_t ticks;
	if (read(s->timer, &ticks, sizeof ticks) < 0) {
		/* nothing: the deadlines are checked anyway */
	}
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	char why[100];
	snprintf(why, sizeof why, "the host's agent did not answer within %u ms", s->timeout_ms);
	for (size_t i = 0; i < CLIENTS_MAX; i++) {
		struct client *c = s->c[i];
		if (c && c->st != ST_IDLE && c->st != ST_ASK &&
		    (now.tv_sec > c->deadline.tv_sec ||
		     (now.tv_sec == c->deadline.tv_sec && now.tv_nsec >= c->deadline.tv_nsec)))
			up_fail(c, why);
	}
	rearm(s);
}

static void dispatch(struct loop *l, const struct source *src, uint32_t events)
{
	struct sshagent_srv *s = src->ctx;
	struct epoll_event evs[16];
	int n = epoll_wait(s->ep, evs, 16, 0);
	for (int i = 0; i < n; i++) {
		enum item_kind k = (enum item_kind)(evs[i].data.u64 >> 32);
		size_t slot = (size_t)(evs[i].data.u64 & 0xffffffffu);
		if (k == IT_LISTENER)
			on_accept(s);
		else if (k == IT_TIMER)
			on_timer(s);
		else if (slot < CLIENTS_MAX && s->c[slot] && k == IT_CLIENT)
			on_client(s->c[slot], evs[i].events);
		else if (slot < CLIENTS_MAX && s->c[slot] && k == IT_UP && s->c[slot]->up >= 0)
			on_up(s->c[slot], evs[i].events);
	}
}

struct sshagent_srv *sshagent_srv_new(const struct sshagent_srv_cfg *cfg, struct werr *e)
{
	struct sshagent_srv *s = xcalloc(1, sizeof *s);
	s->listener = cfg->listener;
	s->upstream = xstrdup(cfg->upstream);
	s->pol = cfg->pol;
	s->log = cfg->log;
	s->ap = cfg->ap;
	s->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : TIMEOUT_DEFAULT_MS;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->ep < 0 || s->timer < 0) {
		werr_errno(e, "ssh-agent: the socket's epoll instance or timer");
		sshagent_srv_free(s);
		return NULL;
	}
	watch_fd(s, EPOLL_CTL_ADD, s->listener, IT_LISTENER, 0, false);
	watch_fd(s, EPOLL_CTL_ADD, s->timer, IT_TIMER, 0, false);
	return s;
}

void sshagent_srv_free(struct sshagent_srv *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < CLIENTS_MAX; i++)
		if (s->c[i])
			client_close(s->c[i]);
	if (s->listener >= 0)
		close(s->listener);
	if (s->ep >= 0)
		close(s->ep);
	if (s->timer >= 0)
		close(s->timer);
	free(s->upstream);
	free(s);
}

int sshagent_srv_watch(struct loop *l, struct sshagent_srv *s, struct werr *e)
{
	return loop_add(l, "the ssh-agent socket", s->ep, dispatch, s, e);
}
