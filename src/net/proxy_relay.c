/* proxy_relay.c - the bytes of one of the proxy's connections once it is
 * dialled (proxy_conn.h): each direction read while its pipe has room and
 * written while it holds bytes, with splice through the pipes for tunnels;
 * through user space instead for what the secrets guard must see (a plain
 * request's body, every byte the client sends on a guarded connection) and
 * for a tunnel's first bytes, held until its TLS ClientHello is read (sni.h:
 * a name other than the tunnel's is refused before a byte goes up); the
 * status of a plain request's answer noted; pipes grown and Nagle back once a
 * tunnel proves busy. The connection ends when both ways are done (a plain
 * request: when its answer is). */
#include "proxy_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sni.h"

#define PIPE_BIG (1 << 20)      /* grown to this once a tunnel proves busy */
#define BUSY_BYTES (4 << 20)

/* A splice into a socket whose reader closed it (send's MSG_NOSIGNAL has no
 * splice form): the kernel sent this thread a SIGPIPE, which the supervisor
 * would read from its signalfd and pass on to the command as if someone
 * had sent it (a session ended with 141 by a client's `| head`). Taken back
 * here; one somebody else sent, pending meanwhile, is sent again. */
static void sigpipe_taken_back(void)
{
	if (errno != EPIPE)
		return;
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	siginfo_t si;
	if (sigtimedwait(&pipe, &si, &(struct timespec){ 0 }) == SIGPIPE && si.si_pid != getpid())
		kill(getpid(), SIGPIPE);
}

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

bool conn_flush_client(struct conn *c)
{
	return flush(c->cfd, c->to_c, c->to_c_len, &c->to_c_off);
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

/* ---- one round of the relay --------------------------------------------- */

/* What one step of a round did. */
enum moved {
	MOVED_NONE,  /* nothing could move */
	MOVED_SOME,  /* bytes moved: another round may move more */
	MOVED_GONE,  /* a side failed: the connection ends */
	MOVED_FREED, /* the guard refused: the connection is closed already */
};

/* The replies and heads queued before relaying, sent first. bytes_out
 * counts what reached the upstream, never what was only queued (a refused
 * request sends nothing). Never MOVED_SOME: sending these is no progress. */
static enum moved send_queued(struct conn *c)
{
	if (c->to_c_off < c->to_c_len && !conn_flush_client(c) && errno != EAGAIN)
		return MOVED_GONE;
	size_t before = c->to_u_off;
	bool flushed = c->hello_check || c->to_u_off >= c->to_u_len || flush(c->ufd, c->to_u, c->to_u_len, &c->to_u_off);
	c->bytes_out += c->to_u_off - before;
	if (!flushed && errno != EAGAIN)
		return MOVED_GONE;
	return MOVED_NONE;
}

/* A plain request's body, read until it ends (a pipelined request after it
 * is not forwarded), shown to the guard, queued for the upstream. */
static enum moved read_plain_body(struct conn *c)
{
	if (c->body_done)
		return MOVED_NONE;
	char buf[16384];
	ssize_t n = recv(c->cfd, buf, sizeof buf, 0);
	if (n > 0) {
		size_t used = 0;
		http_body_feed(&c->body, buf, (size_t)n, &used);
		c->body_done = c->body.state != HTTP_NEED_MORE;
		if (c->guard && guard_data(c, buf, used) < 0)
			return MOVED_FREED;
		conn_queue_upstream(c, buf, used);
		return MOVED_SOME;
	}
	if (n == 0)
		c->c_eof = true;
	return MOVED_NONE;
}

/* A refusal once relaying: the client was answered already, so it sees
 * the connection end; the event says why. */
static enum moved refuse_relayed(struct conn *c, const char *why)
{
	snprintf(c->reason, sizeof c->reason, "%s", why);
	c->allowed = false;
	conn_free(c);
	return MOVED_FREED;
}

/* A tunnel's first bytes, held in to_u until they show what TLS asks
 * for: a ClientHello naming another host than the one the tunnel was
 * allowed for is refused before any byte goes upstream; so is one that
 * cannot be read. Other bytes go on as they are. */
static enum moved check_hello(struct conn *c)
{
	struct net_host h;
	const char *why = "";
	size_t n = c->to_u_len - c->to_u_off;
	enum sni_result r = sni_read((const uint8_t *)c->to_u + c->to_u_off, n, &h, &why);
	char reason[700];
	if (r == SNI_NEED_MORE && n >= SNI_BUF_MAX)
		return refuse_relayed(c, "TLS ClientHello over 16 KiB");
	if (r == SNI_NEED_MORE && !c->c_eof)
		return MOVED_NONE;
	if (r == SNI_BAD) {
		snprintf(reason, sizeof reason, "unreadable TLS ClientHello: %s", why);
		return refuse_relayed(c, reason);
	}
	if (r == SNI_NAME && (h.kind != c->dest.kind || strcmp(h.name, c->dest.name) != 0)) {
		char dest[NET_HOST_TEXT_MAX];
		snprintf(reason, sizeof reason,
			 "TLS asks for %s (SNI), not %s, the name the tunnel was allowed for",
			 h.name, net_host_text(&c->dest, dest));
		return refuse_relayed(c, reason);
	}
	if (r == SNI_NONE && c->px->sni_required)
		return refuse_relayed(c, "TLS names no host (SNI), and the profile has `net sni required`");
	c->hello_check = false;
	return MOVED_SOME;
}

/* A guarded tunnel's bytes, or a tunnel's first bytes: through user
 * space, for the guard to see and the ClientHello to be read. */
static enum moved read_guarded(struct conn *c)
{
	char buf[16384];
	ssize_t n = recv(c->cfd, buf, sizeof buf, 0);
	if (n > 0) {
		if (c->guard && guard_data(c, buf, (size_t)n) < 0)
			return MOVED_FREED;
		conn_queue_upstream(c, buf, (size_t)n);
		return MOVED_SOME;
	}
	if (n == 0 || errno != EAGAIN)
		c->c_eof = true;
	return MOVED_NONE;
}

/* client -> upstream: read the client while its pipe has room and nothing
 * queued waits; then the pipe into the upstream. */
static enum moved client_to_upstream(struct conn *c)
{
	enum moved m = MOVED_NONE;
	if (!c->c_eof && c->in_cu < c->pipe_cap && (c->to_u_off == c->to_u_len || c->hello_check)) {
		if (c->plain) {
			m = read_plain_body(c);
		} else if (c->guard || c->hello_check) {
			m = read_guarded(c);
		} else {
			ssize_t n = splice(c->cfd, NULL, c->pipe_cu[1], NULL, c->pipe_cap - c->in_cu,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0)
				c->in_cu += (size_t)n, m = MOVED_SOME;
			else if (n == 0)
				c->c_eof = true;
			else if (errno != EAGAIN)
				c->c_eof = true;
		}
		if (m == MOVED_FREED)
			return m;
	}
	if (c->hello_check) { /* what is held so far, early data included */
		enum moved h = check_hello(c);
		if (h != MOVED_NONE)
			return h;
	}
	if (c->in_cu) {
		ssize_t n = splice(c->pipe_cu[0], NULL, c->ufd, NULL, c->in_cu,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0)
			c->in_cu -= (size_t)n, c->bytes_out += (size_t)n, m = MOVED_SOME;
		else if (n < 0 && errno != EAGAIN)
			return sigpipe_taken_back(), MOVED_GONE;
	}
	return m;
}

/* upstream -> client: the upstream into its pipe, taking all there is
 * before sending (bigger segments out); then the pipe into the client once
 * the replies queued for it are out. */
static enum moved upstream_to_client(struct conn *c)
{
	enum moved m = MOVED_NONE;
	if (!c->u_eof && c->in_uc < c->pipe_cap) {
		if (c->plain && !c->status_seen)
			note_status(c);
		ssize_t n;
		while ((n = splice(c->ufd, NULL, c->pipe_uc[1], NULL, c->pipe_cap - c->in_uc,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE)) > 0) {
			c->in_uc += (size_t)n, m = MOVED_SOME;
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
			c->in_uc -= (size_t)n, c->bytes_in += (size_t)n, m = MOVED_SOME;
		else if (n < 0 && errno != EAGAIN)
			return sigpipe_taken_back(), MOVED_GONE;
	}
	return m;
}

/* One round: what is queued, then each direction. */
static enum moved relay_round(struct conn *c)
{
	static enum moved (*const steps[])(struct conn *) = {
		send_queued, client_to_upstream, upstream_to_client,
	};
	enum moved any = MOVED_NONE;
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
		enum moved m = steps[i](c);
		if (m == MOVED_GONE || m == MOVED_FREED)
			return m;
		if (m == MOVED_SOME)
			any = MOVED_SOME;
	}
	return any;
}

/* ---- the relay ------------------------------------------------------------ */

/* What the client sent in the same write as its request (a tunnel's first
 * bytes after the CONNECT head or the SOCKS5 request; a plain request's
 * head and body) waits in to_u, read already: no event will come for it,
 * and a client waiting for its answer sends nothing more. So it is taken
 * here as the relay would have taken it from a read: a tunnel's bytes
 * shown to the guard (a plain request's were, with its head, when it was
 * dialled), its ClientHello checked and everything sent as far as the
 * upstream takes it, in a first round now. */
void conn_relay_begin(struct conn *c)
{
	size_t n = c->to_u_len - c->to_u_off;
	if (c->guard && !c->plain && n && guard_data(c, c->to_u + c->to_u_off, n) < 0)
		return;
	conn_relay(c);
}

void conn_relay(struct conn *c)
{
	enum moved m;
	maybe_grow(c);
	do {
		m = relay_round(c);
	} while (m == MOVED_SOME);
	if (m == MOVED_FREED)
		return;
	if (m == MOVED_GONE) {
		conn_free(c);
		return;
	}
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
	conn_interest(c);
}
