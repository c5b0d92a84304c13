/* intercept.c - one intercepted connection in a thread of its own: the
 * handshakes, the client's requests framed and handed to the owner, the
 * responses relayed as they come, refusals answered between responses.
 *
 * The loop: try every transfer that has room (client -> parser -> upstream,
 * upstream -> client) until each would block, then poll() the two sockets
 * for what the blocked ones wait for. A TLS read is always tried before
 * waiting, so records OpenSSL holds already (SSL_pending) are never left
 * behind a poll; a socket is read again only once poll says it has more, or
 * TLS holds bytes read ahead, so a quiet side costs no failed read per
 * record of the busy one. Each direction holds at most one read's worth of
 * bytes (64 KiB of rewritten requests) plus what the TLS write buffer gathers
 * (tls_bio.h, flushed before every wait), so a side that stops reading
 * slows its peer down instead of filling memory. Each side's reads, writes
 * and handshake are intercept_io.c's; an h2 connection's relay is
 * intercept_h2.c's; the requests warden answers itself (held for their
 * owner, refused by on_req) intercept_local.c's. */
#include "intercept_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>

#include "../common/bytebuf.h"
#include "../common/util.h"
#include "http.h"
#include "http_resp.h"
#include "intercept_h2.h"
#include "intercept_io.h"
#include "reqrules.h"
#include "tls.h"
#include "tls_bio.h"

#define OUT_HIGH 65536           /* rewritten requests waiting for the upstream */
#define IDLE_TIMEOUT_MS (10 * 60 * 1000)
#define DRAIN_MS 2000            /* after our own answer, the client's bytes read and dropped */
#define THREAD_STACK (512 * 1024)
#define READ_AHEAD 65536         /* TLS bytes read a syscall, at most */
#define WRITE_GATHER (256 * 1024) /* TLS records written a syscall, at most */

static const unsigned char alpn_h2_http11[] = "\x02h2\x08http/1.1";

static void touch(struct bridge *b)
{
	clock_gettime(CLOCK_MONOTONIC, &b->last);
}

/* ---- the answer of our own ---------------------------------------------- */

/* The upstream connection ends now. */
static void cut_upstream(struct bridge *b)
{
	if (!b->u.dead)
		shutdown(b->u.fd, SHUT_RDWR);
	b->u.dead = b->u.eof = true;
	b->u.clean = false;
	b->to_u.q.off = b->to_u.q.len = 0;
}

/* ---- responses watched -------------------------------------------------- */

static unsigned q_pop(struct bridge *b)
{
	if (b->qn == 0)
		return 0;
	unsigned f = b->q[b->qhead];
	b->qhead = (b->qhead + 1) % MAX_INFLIGHT;
	b->qn--;
	return f;
}

/* A final response ended (DONE or SWITCH). */
static void response_ended(struct bridge *b, enum http_resp_event ev)
{
	unsigned f = q_pop(b);
	bool asked = (f & Q_UPGRADE) && b->cs == C_WAIT_UPGRADE && b->qn == 0;
	if (ev == HTTP_RESP_SWITCH) {
		b->watching = false;
		if (asked)
			b->cs = C_RAW;
		else if (b->cs != C_STOPPED)
			ix_refuse(b, 502, "upstream switched protocols unasked", false, true);
		return;
	}
	if (asked)
		ix_resume_requests(b); /* the server declined the upgrade */
	http_resp_next(&b->rw, b->qn && (b->q[b->qhead] & Q_HEAD));
}

static void watch(struct bridge *b, const char *d, size_t n)
{
	size_t off = 0;
	while (b->watching && off < n) {
		size_t used = 0;
		enum http_resp_event ev = http_resp_feed(&b->rw, d + off, n - off, &used);
		off += used;
		if (!b->job->first_status && b->rw.heads)
			b->job->first_status = b->rw.status; /* as soon as its head is complete */
		if (ev == HTTP_RESP_DONE || ev == HTTP_RESP_SWITCH)
			response_ended(b, ev);
		else if (ev == HTTP_RESP_LOST)
			b->watching = false;
	}
	if (!b->watching && b->cs == C_WAIT_UPGRADE) /* what did the upgrade become? */
		ix_refuse(b, 502, "upstream response not understood", false, true);
}

/* Whether the bytes on_resp held end the response they are in (its
 * framing says so on a copy of the watcher: it is pure). */
static bool held_end_response(const struct bridge *b)
{
	struct http_resp rw = b->rw;
	size_t used = 0;
	return http_resp_feed(&rw, b->uin + b->uin_len, b->held, &used) != HTTP_RESP_MORE;
}

/* The bytes on_resp held (the start of a value it masks, maybe) wait for
 * the next read only where more is coming: inside a response whose
 * framing says it goes on, and for INTERCEPT_HELD_MS at most (a stream
 * that pauses there, or one not framed: upgraded, lost). When they end a
 * response they go at once: a server that answered sends nothing more
 * until asked again, and its client would wait for the last bytes until
 * the idle timeout (a body ending in "t" of a value "tok-..."). */
static void held_at_end(struct bridge *b)
{
	if (!b->held)
		return;
	if (ms_since(&b->held_since) < INTERCEPT_HELD_MS && !(b->watching && held_end_response(b)))
		return;
	size_t n = b->held;
	b->held = 0;
	b->uin_len += n;
	watch(b, b->uin + b->uin_len - n, n);
}

/* The server's stream ended. Whatever ended with it (a body read until the
 * close) leaves no boundary to put an answer of ours at: the client would
 * read it as more of that body. */
static void watch_eof(struct bridge *b)
{
	if (!b->watching)
		return;
	enum http_resp_event ev = http_resp_eof(&b->rw);
	if (ev == HTTP_RESP_DONE)
		response_ended(b, ev);
	if (ev != HTTP_RESP_MORE)
		b->watching = false;
}

/* ---- requests ----------------------------------------------------------- */

/* Hand the head to the owner; send what it returns. */
static void forward_head(struct bridge *b)
{
	struct intercept_job *j = b->job;
	if (j->on_req && ix_request_refused(b))
		return;
	char head[HTTP_FORWARD_MAX];
	ssize_t n = http_origin_head(b->hp, head, sizeof head);
	if (n < 0) {
		ix_refuse(b, 400, "malformed request: head too large", false, false);
		return;
	}
	bool upgrade = http_is_upgrade(b->hp);
	char *out = NULL;
	size_t outlen = 0;
	if (j->on_head) {
		char why[256] = "";
		if (j->on_head(j->ctx, head, (size_t)n, &out, &outlen, why, sizeof why) != 0) {
			free(out);
			why[sizeof why - 1] = '\0';
			ix_refuse(b, 403, why[0] ? why : "request refused", true, false);
			return;
		}
		/* what goes must be a head of the same request: same framing */
		size_t used = 0;
		http_parser_init_origin(b->check, j->any_host ? NULL : &j->host, j->port,
					b->sctx != NULL);
		if (!out || http_feed(b->check, out, outlen, &used) != HTTP_COMPLETE ||
		    used != outlen || b->check->req.body != b->hp->req.body ||
		    b->check->req.content_length != b->hp->req.content_length ||
		    http_is_upgrade(b->check) != upgrade ||
		    strcmp(b->check->req.method, b->hp->req.method) != 0) {
			free(out);
			ix_refuse(b, 500, "rewritten request head is malformed", false, false);
			return;
		}
	}
	const char *h = out ? out : head;
	size_t hl = out ? outlen : (size_t)n;
	b->cur_upgrade = upgrade;
	http_body_init(&b->body, &b->hp->req);
	b->holding = j->hold.decide && j->hold.want(j->hold.ctx, h, hl);
	if (b->holding) {
		bytebuf_put(&b->hhead, h, hl, BUF);
		free(out);
		if (b->body.state == HTTP_COMPLETE)
			ix_release_held(b);
		else
			b->cs = C_BODY;
		return;
	}
	ix_send_head(b, h, hl);
	free(out);
	if (b->body.state == HTTP_COMPLETE)
		ix_request_done(b);
	else
		b->cs = C_BODY;
}

/* Body or raw bytes: through on_data, then on. false when refused. */
static bool pass_data(struct bridge *b, const char *d, size_t n)
{
	struct intercept_job *j = b->job;
	if (j->on_data) {
		char why[256] = "";
		if (j->on_data(j->ctx, d, n, why, sizeof why) != 0) {
			why[sizeof why - 1] = '\0';
			ix_refuse(b, 403, why[0] ? why : "request refused", true, true);
			return false;
		}
	}
	ix_out_put(&b->to_u, d, n);
	return true;
}

/* The first bytes of a plain connection are a TLS handshake record (a
 * client speaking HTTPS straight to a host loopback port warden reads as
 * HTTP): a refusal that says so, not a malformed request let through. */
static bool tls_in_plain(const struct bridge *b)
{
	return !b->sctx && b->job->requests == 0 && b->cin_len >= 3 &&
	       (unsigned char)b->cin[0] == 0x16 && b->cin[1] == 0x03;
}

/* Take what the client sent, as far as there is room upstream. */
static void process_client(struct bridge *b)
{
	while (b->cin_off < b->cin_len && ix_pending(&b->to_u) < OUT_HIGH) {
		const char *d = b->cin + b->cin_off;
		size_t n = b->cin_len - b->cin_off, used = 0;
		switch (b->cs) {
		case C_HEAD: {
			if (b->qn == MAX_INFLIGHT)
				return;
			enum http_result r = http_feed(b->hp, d, n, &used);
			b->cin_off += used;
			if (r == HTTP_ERROR && tls_in_plain(b)) {
				ix_refuse(b, 400, "TLS on a connection warden reads as plain HTTP (a host "
					  "loopback port bound to a secret): send it through HTTPS_PROXY "
					  "(NO_PROXY lists the loopback: leave it out for this client)",
					  true, false);
				return;
			}
			if (r == HTTP_ERROR) {
				char why[160];
				snprintf(why, sizeof why, "malformed request: %s", b->hp->reason);
				ix_refuse(b, b->hp->status, why, false, false);
				return;
			}
			if (r == HTTP_COMPLETE)
				forward_head(b);
			break;
		}
		case C_BODY: {
			enum http_result r = http_body_feed(&b->body, d, n, &used);
			if (r == HTTP_ERROR) {
				char why[160];
				snprintf(why, sizeof why, "malformed request body: %s", b->body.reason);
				/* (a held body: nothing of it went upstream) */
				ix_refuse(b, b->body.status, why, false, !b->holding);
				return;
			}
			if (used && !(b->holding ? ix_hold_data(b, d, used) : pass_data(b, d, used)))
				return;
			b->cin_off += used;
			if (r == HTTP_COMPLETE && b->holding)
				ix_release_held(b);
			else if (r == HTTP_COMPLETE)
				ix_request_done(b);
			break;
		}
		case C_RAW:
			if (!pass_data(b, d, n))
				return;
			b->cin_off += n;
			break;
		case C_DROP: {
			enum http_result r = http_body_feed(&b->body, d, n, &used);
			if (r == HTTP_ERROR) {
				ix_refuse(b, b->body.status, "malformed request body", false, false);
				return;
			}
			b->cin_off += used;
			if (r == HTTP_COMPLETE)
				b->cs = C_LOCAL;
			break;
		}
		default:
			return;
		}
	}
}

/* ---- the relay ---------------------------------------------------------- */

static bool want_read_c(const struct bridge *b)
{
	return !b->c.eof && !b->c.dead && b->cin_off == b->cin_len &&
	       ix_pending(&b->to_u) < OUT_HIGH &&
	       (b->cs == C_BODY || b->cs == C_RAW || b->cs == C_DROP ||
		(b->cs == C_HEAD && b->qn < MAX_INFLIGHT));
}

static bool want_write_u(const struct bridge *b)
{
	return ix_pending(&b->to_u) > 0 && !b->u.dead && !b->u.shut;
}

static bool want_read_u(const struct bridge *b)
{
	return !b->u.eof && !b->u.dead && b->uin_off == b->uin_len && !b->answer_sent;
}

static bool want_write_c(const struct bridge *b)
{
	return b->uin_off < b->uin_len && !b->c.dead && !b->c.shut;
}

/* One pass of every transfer that has room; true when something moved. */
static bool pump(struct bridge *b)
{
	bool moved = false;
	size_t n = 0;
	enum io r;

	if (want_read_u(b)) {
		/* what on_resp held waits at the front, and the read goes after it */
		size_t keep = b->held;
		if (keep)
			memmove(b->uin, b->uin + b->uin_len, keep);
		b->uin_len = b->uin_off = 0;
		r = side_read(&b->u, b->uin + keep, sizeof b->uin - keep, &n);
		if (r == IO_OK) {
			size_t total = keep + n, hold = 0;
			if (b->job->on_resp)
				hold = b->job->on_resp(b->job->ctx, b->uin, total);
			/* a read that is all the start of a value waits whole (its
			 * first byte sent alone would leave the rest unmasked), as
			 * long as the next read has room */
			if (hold > total)
				hold = total;
			if (hold >= sizeof b->uin)
				hold = sizeof b->uin - 1;
			b->uin_len = total - hold;
			b->held = hold;
			b->uin_off = 0;
			b->uin_ours = false;
			if (hold)
				clock_gettime(CLOCK_MONOTONIC, &b->held_since);
			watch(b, b->uin, b->uin_len);
			held_at_end(b);
		} else if (r == IO_EOF) {
			b->u.eof = true;
			/* the end: what was held goes as it is */
			b->uin_len = keep;
			b->held = 0;
			b->uin_ours = false;
			if (keep)
				watch(b, b->uin, keep);
			watch_eof(b);
		} else if (r == IO_ERR) {
			b->u.eof = b->u.dead = true;
			b->watching = false; /* nothing ended cleanly */
		}
		moved |= r != IO_AGAIN;
	}
	if (want_write_c(b)) {
		r = side_write(&b->c, b->uin + b->uin_off, b->uin_len - b->uin_off, &n);
		if (r == IO_OK) {
			b->uin_off += n;
			if (!b->uin_ours)
				b->job->bytes_in += n;
		} else if (r == IO_ERR) {
			b->c.dead = true;
		}
		moved |= r != IO_AGAIN;
	}

	if (want_read_c(b)) {
		r = side_read(&b->c, b->cin, sizeof b->cin, &n);
		if (r == IO_OK) {
			b->cin_len = n;
			b->cin_off = 0;
		} else if (r == IO_EOF) {
			b->c.eof = true;
		} else if (r == IO_ERR) {
			b->c.eof = b->c.dead = true;
		}
		moved |= r != IO_AGAIN;
	}
	size_t before = b->cin_off, queued = b->to_u.q.len;
	process_client(b);
	moved |= b->cin_off != before || b->to_u.q.len != queued;
	if (want_write_u(b)) {
		r = side_write(&b->u, b->to_u.q.p + b->to_u.q.off, ix_pending(&b->to_u), &n);
		if (r == IO_OK) {
			b->to_u.q.off += n;
			b->job->bytes_out += n;
		} else if (r == IO_ERR) {
			b->u.dead = b->u.eof = true;
			b->watching = false;
		}
		moved |= r != IO_AGAIN;
	}
	if (moved)
		touch(b);
	return moved;
}

/* The answer of our own, once the responses before it are through: at a
 * boundary between responses, when no more are owed or none can come. When
 * it cannot fall between two responses (the server's stream is not framed,
 * or ended inside a response), there is no answer: the connection ends. */
static bool answer(struct bridge *b)
{
	if (!b->answer_pending || b->answer_sent || b->uin_off < b->uin_len)
		return false;
	bool u_over = b->u.eof || b->u.dead;
	bool boundary = b->watching && http_resp_idle(&b->rw);
	/* the refused request itself, when cutting, is owed no response */
	if (boundary && !b->c.dead && (b->qn <= (b->cutting ? 1u : 0u) || u_over)) {
		if (b->cutting)
			cut_upstream(b);
		ssize_t n = http_error_response(b->answer_status, b->answer_reason, b->uin,
						sizeof b->uin);
		b->answer_sent = b->answer_written = true;
		b->uin_off = 0;
		b->uin_len = n > 0 ? (size_t)n : 0;
		b->uin_ours = true;
		return true;
	}
	if (u_over || !b->watching || b->c.dead) {
		b->answer_sent = true; /* decided: none */
		if (b->cutting)
			cut_upstream(b);
		return true;
	}
	return false; /* a response is still coming: relay it first */
}

/* Read and drop what the client still sends, for a while, so that closing
 * the socket does not reset the connection before it read our last bytes. */
static void drain_client(struct bridge *b)
{
	struct side *c = &b->c;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	char junk[BUF];
	long left;
	while (!c->eof && !c->dead && (left = DRAIN_MS - (long)ms_since(&start)) > 0) {
		size_t n;
		enum io r = side_read(c, junk, sizeof junk, &n);
		if (r == IO_EOF || r == IO_ERR)
			break;
		if (r == IO_AGAIN) {
			if (wait_fd(c->fd, c->rd_ev ? c->rd_ev : POLLIN, (int)left, b->job->stop_fd) <= 0)
				break;
			c->rd_ready = true;
		}
	}
}

/* Has the connection run its course? Propagates a half-close on the way. */
static bool finished(struct bridge *b)
{
	if (b->c.dead)
		return true;
	if (b->cs == C_LOCAL)
		return false; /* warden's own answer is owed first (local_answer) */
	bool to_c = b->uin_off == b->uin_len && side_gathered(&b->c) == 0;
	if (b->answer_sent)
		return to_c;
	if (b->answer_pending)
		return false;
	/* the server is done: pass its end on once its bytes are through */
	if (b->u.eof && to_c)
		return true;
	/* the client is done sending: pass its end on once its bytes are
	 * through; wait for the answers still owed */
	if (b->c.eof && b->cin_off == b->cin_len && ix_pending(&b->to_u) == 0 &&
	    side_gathered(&b->u) == 0) {
		if (b->cs != C_RAW && b->qn == 0 && (!b->watching || http_resp_idle(&b->rw)))
			return true;
		side_shut(&b->u, true);
	}
	return false;
}

/* Write what TLS gathered on both sides, as far as the sockets take it:
 * true when something went. A side whose socket failed is dead. */
static bool flush_gathered(struct bridge *b)
{
	bool moved = false;
	struct side *sides[] = { &b->c, &b->u };
	for (size_t i = 0; i < 2; i++) {
		struct side *s = sides[i];
		size_t before = side_gathered(s);
		if (!before || s->dead)
			continue;
		ERR_clear_error();
		errno = 0;
		if (tls_wbuf_flush(s->ssl) < 0) {
			ix_set_error(b, "%s: %s", s->name, errno ? strerror(errno) : "write failed");
			s->dead = s->eof = true;
			if (s == &b->u)
				b->watching = false;
			moved = true;
		} else {
			moved |= side_gathered(s) != before;
		}
	}
	if (moved)
		touch(b);
	return moved;
}

/* What each socket waits for before anything can move again (and the
 * stop fd): false when nothing can. */
static bool poll_set(const struct bridge *b, struct pollfd p[3])
{
	int stop_fd = b->job->stop_fd;
	p[0] = (struct pollfd){ .fd = b->c.fd };
	p[1] = (struct pollfd){ .fd = b->u.fd };
	p[2] = (struct pollfd){ .fd = stop_fd > 0 ? stop_fd : -1, .events = POLLIN };
	if (want_read_c(b))
		p[0].events |= b->c.rd_ev ? b->c.rd_ev : POLLIN;
	if (want_write_c(b))
		p[0].events |= b->c.wr_ev ? b->c.wr_ev : POLLOUT;
	if (want_read_u(b))
		p[1].events |= b->u.rd_ev ? b->u.rd_ev : POLLIN;
	if (want_write_u(b))
		p[1].events |= b->u.wr_ev ? b->u.wr_ev : POLLOUT;
	if (side_gathered(&b->c))
		p[0].events |= POLLOUT;
	if (side_gathered(&b->u))
		p[1].events |= POLLOUT;
	return p[0].events || p[1].events;
}

/* How long a wait may last: until the idle timeout, or, while bytes
 * on_resp held wait, until they go (INTERCEPT_HELD_MS): then *held. 0: at once. */
static int wait_ms(const struct bridge *b, bool *held)
{
	long left = IDLE_TIMEOUT_MS - (long)ms_since(&b->last);
	long hl = b->held ? INTERCEPT_HELD_MS - (long)ms_since(&b->held_since) : left;
	*held = hl < left;
	long ms = *held ? hl : left;
	return ms > 0 ? (int)ms : 0;
}

static void relay(struct bridge *b)
{
	touch(b);
	for (;;) {
		while (pump(b) || answer(b) || ix_local_answer(b))
			if (finished(b))
				return;
		/* before any wait: what TLS gathered goes out */
		if (flush_gathered(b)) {
			if (finished(b))
				return;
			continue;
		}
		if (finished(b))
			return;
		struct pollfd p[3];
		if (!poll_set(b, p))
			return; /* nothing can move any more */
		bool held;
		int ms = wait_ms(b, &held);
		int r = ms > 0 ? poll(p, 3, ms) : 0;
		if (r == 0 && held) {
			held_at_end(b);
			continue;
		}
		if (r > 0 && p[2].revents) {
			ix_set_error(b, "stopped");
			b->c.dead = b->u.dead = true;
			return;
		}
		if (r == 0) {
			ix_set_error(b, "idle for 10 minutes");
			b->c.dead = b->u.dead = true;
			return;
		}
		if (r < 0 && errno != EINTR) {
			ix_set_error(b, "poll: %s", strerror(errno));
			return;
		}
		b->c.rd_ready |= p[0].revents != 0;
		b->u.rd_ready |= p[1].revents != 0;
	}
}

/* ---- the thread --------------------------------------------------------- */

/* The client's SSL on its socket, the early bytes first. */
static bool client_bio(struct bridge *b)
{
	return tls_bio_set_fd_early(b->c.ssl, b->c.fd, steal_ptr(&b->early), b->early_len);
}

/* Writes may be partial (the rest is retried from the same buffer, which may
 * have moved); reads take whatever the socket has, several records a
 * syscall (read-ahead: records OpenSSL holds are read before any poll, see
 * the loop). */
static void tune(SSL *ssl)
{
	SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_set_read_ahead(ssl, 1);
	SSL_set_default_read_buffer_len(ssl, READ_AHEAD);
}

/* The ClientHello read: a server name (SNI) other than the destination's
 * is refused before anything goes upstream, as a tunnel's is (proxy_relay.c),
 * though warden answers with the destination's certificate whatever the
 * name: the lie is recorded, not ignored. None is taken (an IP's). */
static bool sni_other(struct bridge *b, const struct tls_alpn *a)
{
	struct net_host h;
	const char *bad = a->sni_bad ? "its server name extension does not parse" : NULL;
	const struct net_host *d = &b->job->host;
	if (!bad && !a->sni_len)
		return false;
	if (!bad && net_host_parse(&h, a->sni, a->sni_len, &bad) == 0 && h.kind == d->kind &&
	    strcmp(h.name, d->name) == 0)
		return false;
	char dest[NET_HOST_TEXT_MAX];
	if (bad)
		ix_set_error(b, "unreadable TLS ClientHello: %s", bad);
	else
		ix_set_error(b, "TLS asks for %s (SNI), not %s, the name the tunnel was allowed "
			     "for", h.name, net_host_text(d, dest));
	b->job->refused = true;
	return true;
}

static void run(struct bridge *b)
{
	struct intercept_job *j = b->job;
	char why[200];
	fcntl(b->c.fd, F_SETFL, fcntl(b->c.fd, F_GETFL) | O_NONBLOCK);
	fcntl(b->u.fd, F_SETFL, fcntl(b->u.fd, F_GETFL) | O_NONBLOCK);
	if (b->sctx) {
		b->c.ssl = SSL_new(b->sctx);
		if (!b->c.ssl || !client_bio(b)) {
			ix_set_error(b, "client TLS: %s", tls_error_string(why, sizeof why, "SSL_new failed"));
			return;
		}
		SSL_set_accept_state(b->c.ssl);
		tune(b->c.ssl);
		/* The client's ClientHello first, then the upstream's handshake
		 * (offering h2 when the client does), then the client's answer:
		 * h2 only when the upstream agreed to it. */
		struct tls_alpn alpn = { .hold = true };
		tls_server_alpn(b->c.ssl, &alpn);
		int hr = side_handshake(&b->c, true, j->stop_fd, why, sizeof why);
		if (hr < 0) {
			ix_set_error(b, "client TLS handshake: %s", why);
			return;
		}
		if (sni_other(b, &alpn))
			return;
		b->u.ssl = tls_client_ssl(b->cctx, b->u.fd, &j->host);
		if (!b->u.ssl) {
			ix_set_error(b, "upstream TLS: %s", tls_error_string(why, sizeof why, "SSL_new failed"));
			return;
		}
		tune(b->u.ssl);
		if (alpn.client_h2 && !j->hold.decide)
			SSL_set_alpn_protos(b->u.ssl, alpn_h2_http11, sizeof alpn_h2_http11 - 1);
		char uwhy[200];
		int ur = side_handshake(&b->u, false, j->stop_fd, uwhy, sizeof uwhy);
		if (ur == 0) {
			const unsigned char *p;
			unsigned len;
			SSL_get0_alpn_selected(b->u.ssl, &p, &len);
			alpn.allow_h2 = len == 2 && memcmp(p, "h2", 2) == 0;
		}
		if (hr == 1 && side_handshake(&b->c, true, j->stop_fd, why, sizeof why) != 0) {
			ix_set_error(b, "client TLS handshake: %s", why);
			return;
		}
		tls_server_alpn(b->c.ssl, NULL);
		if (ur < 0) {
			if (strcmp(uwhy, "stopped") == 0) {
				ix_set_error(b, "stopped");
				return;
			}
			long v = SSL_get_verify_result(b->u.ssl);
			char reason[240];
			if (v != X509_V_OK)
				snprintf(reason, sizeof reason, "upstream certificate: %s",
					 X509_verify_cert_error_string(v));
			else
				snprintf(reason, sizeof reason, "upstream TLS handshake: %s", uwhy);
			ix_refuse(b, 502, reason, false, true);
		} else if (alpn.allow_h2) {
			const unsigned char *p;
			unsigned len;
			SSL_get0_alpn_selected(b->c.ssl, &p, &len);
			if (len == 2 && memcmp(p, "h2", 2) == 0) {
				intercept_h2_relay(j, b->c.ssl, b->c.fd, b->u.ssl, b->u.fd);
				b->h2 = true;
				return;
			}
			/* the client took http/1.1 where the upstream speaks h2 */
			ix_refuse(b, 502, "upstream speaks HTTP/2 only to this client", false, true);
		}
		/* HTTP/1.1 from here: records in bulk, a write of many at once */
		if (!tls_wbuf_install(b->c.ssl, WRITE_GATHER) ||
		    (!b->u.dead && !tls_wbuf_install(b->u.ssl, WRITE_GATHER))) {
			ix_set_error(b, "TLS write buffer: out of memory");
			return;
		}
	} else if (b->early_len) {
		/* plain: the first bytes to take */
		memcpy(b->cin, b->early, b->early_len);
		b->cin_len = b->early_len;
	}
	relay(b);
}

static void *bridge_main(void *arg)
{
	struct bridge *b = arg;
	struct intercept_job *j = b->job;
	sigset_t pipe;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	ERR_clear_error();

	run(b);

	/* The ends. The client's is clean after our answer, or as the
	 * server's was when it ended (cut short stays cut short: a body read
	 * until the close must not look complete), or when the client ended
	 * first with nothing owed. */
	if (b->h2) {
		side_shut(&b->c, true); /* after the GOAWAYs: dead ends are skipped */
	} else if (b->answer_written) {
		side_shut(&b->c, true);
		drain_client(b);
	} else {
		side_shut(&b->c, b->u.eof ? b->u.clean : true);
	}
	side_shut(&b->u, b->h2 || (b->c.eof && b->c.clean));
	SSL_free(b->c.ssl); /* SSL_set_fd leaves the fd to us */
	SSL_free(b->u.ssl);
	close(b->c.fd);
	close(b->u.fd);
	SSL_CTX_free(b->sctx);
	SSL_CTX_free(b->cctx);
	bytebuf_free(&b->to_u.q);
	bytebuf_free(&b->hhead);
	bytebuf_free(&b->hbody);
	free(b->reply);
	free(b->hp);
	free(b->check);
	free(b->early);
	int done_fd = j->done_fd;
	free(b);
	ERR_clear_error();

	void *p = j;
	for (;;) {
		ssize_t w = write(done_fd, &p, sizeof p);
		if (w == (ssize_t)sizeof p)
			break;
		if (w < 0 && errno == EAGAIN)
			wait_fd(done_fd, POLLOUT, -1, -1);
		else if (!(w < 0 && errno == EINTR))
			break;
	}
	return NULL;
}

int intercept_start(struct intercept_job *job, struct werr *e)
{
	job->bytes_in = job->bytes_out = 0;
	job->requests = 0;
	job->first_status = 0;
	job->error[0] = '\0';
	job->refused = false;
	if (!job->server_ctx != !job->client_ctx || job->early_len > BUF) {
		close(job->client_fd);
		close(job->upstream_fd);
		return werr_set(e, 0, "intercepting a connection: %s",
				job->early_len > BUF ? "too many early bytes"
						     : "TLS needs both contexts");
	}
	struct bridge *b = xcalloc(1, sizeof *b);
	b->job = job;
	b->c = (struct side){ .name = "client", .fd = job->client_fd, .rd_ready = true,
			      .error = job->error, .error_len = sizeof job->error };
	b->u = (struct side){ .name = "upstream", .fd = job->upstream_fd, .rd_ready = true,
			      .error = job->error, .error_len = sizeof job->error };
	if (job->server_ctx && SSL_CTX_up_ref(job->server_ctx) == 1)
		b->sctx = job->server_ctx;
	if (job->client_ctx && SSL_CTX_up_ref(job->client_ctx) == 1)
		b->cctx = job->client_ctx;
	if (job->early_len) {
		b->early = xmalloc(job->early_len);
		memcpy(b->early, job->early, job->early_len);
		b->early_len = job->early_len;
	}
	b->hp = xmalloc(sizeof *b->hp);
	b->check = xmalloc(sizeof *b->check);
	http_resp_init(&b->rw);
	b->watching = true;
	ix_resume_requests(b);

	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	int err = (!b->sctx != !job->server_ctx || !b->cctx != !job->client_ctx)
			  ? ENOMEM
			  : pthread_create(&t, &attr, bridge_main, b);
	pthread_attr_destroy(&attr);
	if (err) {
		SSL_CTX_free(b->sctx);
		SSL_CTX_free(b->cctx);
		free(b->hp);
		free(b->check);
		free(b->early);
		free(b);
		close(job->client_fd);
		close(job->upstream_fd);
		return werr_set(e, err, "starting the thread of an intercepted connection");
	}
	return 0;
}
