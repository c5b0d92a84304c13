/* publish.c - published ports (publish.h): the host's listeners, each
 * connection accepted there dialled inside through the dialer's sockets
 * (publish_dial.h) and relayed both ways, its `net` event when it ends.
 *
 * Each connection: accepted (non-blocking), a socket of the sandbox's
 * namespace asked of the dialer, connected to 127.0.0.1:PORT without
 * blocking; refused there, ::1:PORT next; refused there too, or no answer
 * within DIAL_TIMEOUT_MS, the host's client is reset. Connected, the bytes
 * go each way through a pipe of the connection's with splice (no copy
 * through user space; the pipe grows to PIPE_BIG once a connection has
 * moved BUSY_BYTES, so idle ones stay within the user's pipe budget); a
 * side is read again only once its pipe is empty, so a slow reader holds
 * back only its own writer; the end of a direction is passed on with
 * shutdown(SHUT_WR); the connection ends when both have ended, or at the
 * first error (both sides reset). Level-triggered epoll, at most
 * RELAY_ROUNDS pipes a direction per wake-up: one busy connection never
 * starves the others. At most cap connections at once (the publisher's
 * share of the open-file limit, selflimits_conns, up to PUBLISH_CONN_MAX:
 * memory stays bounded whatever the host's clients do): one more is
 * accepted and reset at once, never left waiting, and the first such
 * refusal of a port is an alert (publish.connection-cap). Out of
 * descriptors, a spare one is closed to accept and reset the client the
 * same way; when even that fails the listeners wait a second. */
#include "publish.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "../common/clock.h"
#include "../common/selflimits.h"
#include "../common/util.h"
#include "publish_dial.h"

#define PUBLISH_CONN_MAX 4096
#define FDS_PER_CONN 6 /* two sockets, two pipes */
/* a server whose backlog is full drops SYNs: the kernel sends again at 1,
 * 3 and 7 s */
#define DIAL_TIMEOUT_MS 15000
#define PIPE_BIG (1024 * 1024)
#define BUSY_BYTES (4 * 1024 * 1024)
#define RELAY_ROUNDS 8
#define LISTENERS_MAX (2 * POLICY_PUBLISH_MAX)

enum tag_kind { TAG_LISTENER, TAG_HOST, TAG_INSIDE, TAG_TIMER, TAG_DIALER };
struct tag {
	enum tag_kind kind;
	void *obj;
};

struct listener {
	struct tag tag;
	int fd;
	const struct policy_publish *pp;
};

/* One direction of a connection: from one side's reads to the other's
 * writes, through a pipe. */
struct dir {
	int pipe[2];
	size_t len, cap;     /* in the pipe; what it holds */
	bool grown;
	bool eof;            /* the reading side ended */
	bool shut;           /* and that end was passed on */
	uint64_t bytes;
};

struct conn {
	struct tag htag, itag;
	struct publish *p;
	const struct policy_publish *pp;
	int hfd, ifd;        /* the host's client; the socket inside */
	int family;          /* of ifd */
	bool waiting;        /* for a socket of family from the dialer */
	bool dialing, connected, dead;
	uint32_t hev, iev;   /* the events epoll watches for each */
	bool hreg, ireg;     /* and whether it is in the epoll set at all */
	struct dir in, out;  /* in: host to inside; out: inside to host */
	double t0;
	char peer[INET6_ADDRSTRLEN + 8];
	char error[160];
	struct conn *prev, *next;
};

struct publish {
	const struct policy *pol;
	struct audit *log;
	int ep, timer;
	struct tag timer_tag, dialer_tag;
	struct listener ls[LISTENERS_MAX];
	size_t nls;
	bool paused;
	size_t cap;
	int spare;                        /* /dev/null, closed to refuse when out of fds */
	bool cap_said[POLICY_PUBLISH_MAX]; /* by published port: its alert written */
	struct publish_dialer d;
	struct conn *conns, *last, *dead; /* conns oldest first */
	size_t nconns;
};

/* ---- the host's listeners ---------------------------------------------- */

/* Where pp was published, for an error: "--publish 8080:80" or "publish
 * 8080:80 (FILE:LINE)". */
static void where(const struct policy_publish *pp, char *out, size_t len)
{
	char spec[16];
	if (pp->host_port == pp->port)
		snprintf(spec, sizeof spec, "%u", pp->port);
	else
		snprintf(spec, sizeof spec, "%u:%u", pp->host_port, pp->port);
	if (strcmp(pp->origin, "--publish") == 0)
		snprintf(out, len, "--publish %s", spec);
	else
		snprintf(out, len, "publish %s (%s)", spec, pp->origin);
}

/* Listen on the host's 127.0.0.1 (v6: ::1) at pp's host port: 1, or 0
 * when the host has no IPv6 loopback (v6 only), or -1 with e. */
static int listen_one(struct publish *p, const struct policy_publish *pp, bool v6, struct werr *e)
{
	char w[600];
	where(pp, w, sizeof w);
	const char *addr = v6 ? "[::1]" : "127.0.0.1";
	_cleanup_close_ int fd = socket(v6 ? AF_INET6 : AF_INET,
					SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (v6 && errno == EAFNOSUPPORT)
			return 0;
		return werr_errno(e, "%s: a socket for the host's %s:%u", w, addr, pp->host_port);
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(pp->host_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(pp->host_port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	int r = v6 ? bind(fd, (struct sockaddr *)&a6, sizeof a6)
		   : bind(fd, (struct sockaddr *)&a4, sizeof a4);
	if (r < 0 && v6 && errno == EADDRNOTAVAIL)
		return 0;
	if (r < 0 && errno == EADDRINUSE)
		return werr_set(e, errno, "%s: the host's %s:%u is in use already: stop what listens "
				"there, or publish port %u on another host port (--publish "
				"HOST_PORT:%u)", w, addr, pp->host_port, pp->port, pp->port);
	if (r < 0 && errno == EACCES && pp->host_port < 1024)
		return werr_set(e, errno, "%s: the host's %s:%u is a privileged port (below 1024, or "
				"below the sysctl net.ipv4.ip_unprivileged_port_start): publish on a "
				"host port from 1024 up (--publish 8%03u:%u)", w, addr, pp->host_port,
				pp->host_port, pp->port);
	if (r < 0 || listen(fd, SOMAXCONN) < 0)
		return werr_errno(e, "%s: listening on the host's %s:%u", w, addr, pp->host_port);
	struct listener *l = &p->ls[p->nls];
	*l = (struct listener){ .tag = { TAG_LISTENER, l }, .fd = fd, .pp = pp };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &l->tag };
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return werr_errno(e, "%s: epoll", w);
	p->nls++;
	steal_fd(&fd);
	return 1;
}

struct publish *publish_new(const struct policy *pol, struct audit *log, struct werr *e)
{
	struct publish *p = xcalloc(1, sizeof *p);
	*p = (struct publish){ .pol = pol, .log = log, .timer = -1, .d = { .sock = -1 },
			       .cap = selflimits_conns(FDS_PER_CONN, 2, PUBLISH_CONN_MAX),
			       .spare = open("/dev/null", O_RDONLY | O_CLOEXEC) };
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0) {
		werr_errno(e, "published ports: epoll");
		free(p);
		return NULL;
	}
	for (size_t i = 0; i < pol->npublish; i++)
		if (listen_one(p, &pol->publish[i], false, e) < 0 ||
		    listen_one(p, &pol->publish[i], true, e) < 0) {
			publish_free(p);
			return NULL;
		}
	return p;
}

/* Stop (or start again) accepting, out of descriptors: the host's clients
 * wait in the backlog meanwhile, a second at most (on_timer). */
static void listeners_pause(struct publish *p, bool pause)
{
	if (p->paused == pause)
		return;
	p->paused = pause;
	for (size_t i = 0; i < p->nls; i++) {
		struct epoll_event ev = { .events = pause ? 0 : EPOLLIN, .data.ptr = &p->ls[i].tag };
		epoll_ctl(p->ep, EPOLL_CTL_MOD, p->ls[i].fd, &ev);
	}
}

/* ---- a connection's end ------------------------------------------------ */

static void reset_close(int *fd)
{
	if (*fd < 0)
		return;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	setsockopt(*fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	closep(fd);
}

/* Log it, close both sides (reset: with a reset, not a FIN), and keep it
 * for burial after the events at hand. */
static void conn_close(struct conn *c, bool reset)
{
	struct publish *p = c->p;
	if (c->dead)
		return;
	c->dead = true;
	audit_emit_event(p->log, ev_net_inbound(&(struct ev_net_inbound){
		.host_port = c->pp->host_port, .port = c->pp->port, .peer = c->peer,
		.address = c->connected ? (c->family == AF_INET6 ? "::1" : "127.0.0.1") : NULL,
		.bytes_in = c->in.bytes, .bytes_out = c->out.bytes,
		.duration_ms = mono_ms() - c->t0, .error = c->error[0] ? c->error : NULL }), NULL);
	if (reset) {
		reset_close(&c->hfd);
		reset_close(&c->ifd);
	} else {
		closep(&c->hfd);
		closep(&c->ifd);
	}
	struct dir *dirs[] = { &c->in, &c->out };
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		closep(&dirs[i]->pipe[0]);
		closep(&dirs[i]->pipe[1]);
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		p->last = c->prev;
	c->next = p->dead;
	p->dead = c;
	p->nconns--;
	listeners_pause(p, false);
}

static void bury(struct publish *p)
{
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		free(c);
	}
}

/* ---- relaying ---------------------------------------------------------- */

/* Watch fd for what it can do next (its tag's events kept in *have);
 * nothing: out of the epoll set, where a socket whose two directions are
 * over would say EPOLLHUP again and again. -1 when epoll refuses it. */
static int want(struct publish *p, int fd, struct tag *t, uint32_t *have, bool *reg, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = t };
	if (!ev) {
		if (*reg)
			epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL);
		*reg = false;
	} else if (!*reg) {
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &e) < 0)
			return -1;
		*reg = true;
	} else if (*have != ev && epoll_ctl(p->ep, EPOLL_CTL_MOD, fd, &e) < 0) {
		return -1;
	}
	*have = ev;
	return 0;
}

static void nodelay(int fd, int on)
{
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* A direction that moves a lot gets a bigger pipe: fewer wake-ups per
 * byte (not allowed past the user's pipe budget: it stays as it is); and
 * Nagle again on the side it writes: full segments for a bulk transfer. */
static void maybe_grow(struct dir *d, int to)
{
	if (d->grown || d->bytes < BUSY_BYTES)
		return;
	d->grown = true;
	nodelay(to, 0);
	int r = fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_BIG);
	if (r > 0)
		d->cap = (size_t)r;
}

/* Move what d holds, and what from has, to to: 0, or -1 on an error of
 * either side. */
static int dir_pump(struct dir *d, int from, int to)
{
	maybe_grow(d, to);
	for (int round = 0; round < RELAY_ROUNDS; round++) {
		bool moved = false;
		/* all there is, up to a full pipe, before writing: bigger
		 * segments out */
		while (!d->eof && d->len < d->cap) {
			ssize_t n = splice(from, NULL, d->pipe[1], NULL, d->cap - d->len,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return -1;
			if (n < 0)
				break;
			if (n == 0)
				d->eof = true;
			d->len += (size_t)n;
			d->bytes += (uint64_t)n;
			moved = moved || n > 0;
		}
		if (d->len) {
			ssize_t w = splice(d->pipe[0], NULL, to, NULL, d->len,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (w < 0)
				return errno == EAGAIN || errno == EINTR ? 0 : -1;
			d->len -= (size_t)w;
			moved = moved || w > 0;
		}
		if (d->eof && !d->len) {
			if (!d->shut && shutdown(to, SHUT_WR) < 0 && errno != ENOTCONN)
				return -1;
			d->shut = true;
			return 0;
		}
		if (!moved)
			return 0;
	}
	return 0;
}

static void conn_pump(struct conn *c)
{
	if (dir_pump(&c->in, c->hfd, c->ifd) < 0 || dir_pump(&c->out, c->ifd, c->hfd) < 0) {
		conn_close(c, true);
		return;
	}
	if (c->in.shut && c->out.shut) {
		conn_close(c, false);
		return;
	}
	if (want(c->p, c->hfd, &c->htag, &c->hev, &c->hreg,
		 (!c->in.eof && !c->in.len ? EPOLLIN : 0) | (c->out.len ? EPOLLOUT : 0)) < 0 ||
	    want(c->p, c->ifd, &c->itag, &c->iev, &c->ireg,
		 (!c->out.eof && !c->out.len ? EPOLLIN : 0) | (c->in.len ? EPOLLOUT : 0)) < 0) {
		snprintf(c->error, sizeof c->error, "epoll: %s", strerror(errno));
		conn_close(c, true);
	}
}

/* ---- dialling inside --------------------------------------------------- */

static void connected(struct conn *c)
{
	c->dialing = false;
	c->connected = true;
	struct dir *dirs[] = { &c->in, &c->out };
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		int r = pipe2(dirs[i]->pipe, O_CLOEXEC | O_NONBLOCK);
		if (r == 0)
			r = fcntl(dirs[i]->pipe[1], F_GETPIPE_SZ);
		if (r <= 0) {
			snprintf(c->error, sizeof c->error, "a pipe for the relay: %s", strerror(errno));
			conn_close(c, true);
			return;
		}
		dirs[i]->cap = (size_t)r;
	}
	conn_pump(c);
}

static void dial(struct conn *c, int family);

/* The dial failed with err: ::1 next after 127.0.0.1, else the host's
 * client reset. */
static void dial_failed(struct conn *c, int err)
{
	closep(&c->ifd); /* (epoll forgets a closed fd) */
	c->iev = 0;
	c->ireg = false;
	if (c->family == AF_INET && err == ECONNREFUSED) {
		dial(c, AF_INET6);
		return;
	}
	if (err == ECONNREFUSED || err == EADDRNOTAVAIL || err == ENETUNREACH || err == EAFNOSUPPORT)
		snprintf(c->error, sizeof c->error, "nothing listens on port %u inside (127.0.0.1 "
			 "nor ::1)", c->pp->port);
	else if (err == ETIMEDOUT)
		snprintf(c->error, sizeof c->error, "port %u inside did not answer within %d s",
			 c->pp->port, DIAL_TIMEOUT_MS / 1000);
	else
		snprintf(c->error, sizeof c->error, "dialling port %u inside: %s", c->pp->port,
			 strerror(err));
	conn_close(c, true);
}

static void on_dialled(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(c->ifd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (err)
		dial_failed(c, err);
	else if (getpeername(c->ifd, (struct sockaddr *)&ss, &sl) == 0)
		connected(c);
	/* else still under way (an event of the socket this one replaced) */
}

/* No socket of c's family from the dialer (err). */
static void no_socket(struct conn *c, int err)
{
	if (c->family == AF_INET6 && err == EAFNOSUPPORT) {
		dial_failed(c, ECONNREFUSED); /* no IPv6 inside: refused at 127.0.0.1 */
		return;
	}
	snprintf(c->error, sizeof c->error, "no socket inside the sandbox: %s", strerror(err));
	conn_close(c, true);
}

/* Connect fd, a socket inside, to the sandbox's loopback without
 * blocking. */
static void dial_with(struct conn *c, int fd)
{
	c->ifd = fd;
	nodelay(c->ifd, 1);
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(c->pp->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(c->pp->port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int r = c->family == AF_INET6 ? connect(c->ifd, (struct sockaddr *)&a6, sizeof a6)
				      : connect(c->ifd, (struct sockaddr *)&a4, sizeof a4);
	int err = errno;
	if (r == 0) {
		connected(c);
	} else if (err == EINPROGRESS) {
		c->dialing = true;
		if (want(c->p, c->ifd, &c->itag, &c->iev, &c->ireg, EPOLLOUT) < 0) {
			snprintf(c->error, sizeof c->error, "epoll: %s", strerror(errno));
			conn_close(c, true);
			return;
		}
		/* on loopback the handshake is over by now, as a rule: look at
		 * once rather than a turn of the loop later */
		on_dialled(c);
	} else {
		dial_failed(c, err);
	}
}

/* A socket of family from the dialer's pool, or the connection waits for
 * one (on_dialer). */
static void dial(struct conn *c, int family)
{
	c->family = family;
	int fd = publish_dialer_take(&c->p->d, family);
	if (fd >= 0) {
		dial_with(c, fd);
	} else if (errno == EAGAIN) {
		publish_dialer_ask(&c->p->d, family);
		c->waiting = true;
	} else {
		no_socket(c, errno);
	}
}

/* The connections waiting for a socket served, oldest first, as far as
 * the pools go; the sockets the rest wait for asked of the dialer (a
 * window at a time: publish_dialer_want). */
static void serve_waiting(struct publish *p)
{
	size_t waiting[2] = { 0, 0 }; /* [0] AF_INET, [1] AF_INET6 */
	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (!c->waiting)
			continue;
		int fd = publish_dialer_take(&p->d, c->family);
		if (fd < 0 && errno == EAGAIN) {
			waiting[c->family == AF_INET6]++;
			continue;
		}
		c->waiting = false;
		if (fd >= 0)
			dial_with(c, fd);
		else
			no_socket(c, errno);
	}
	publish_dialer_want(&p->d, AF_INET, waiting[0]);
	publish_dialer_want(&p->d, AF_INET6, waiting[1]);
}

/* Answers from the dialer. */
static void on_dialer(struct publish *p)
{
	publish_dialer_ready(&p->d); /* (gone: each take says EPIPE) */
	serve_waiting(p);
}

/* ---- accepting --------------------------------------------------------- */

static void peer_text(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
		snprintf(out, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
		snprintf(out, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

static void conn_open(struct publish *p, const struct listener *l, int fd,
		      const struct sockaddr_storage *ss)
{
	struct conn *c = xcalloc(1, sizeof *c);
	*c = (struct conn){ .htag = { TAG_HOST, c }, .itag = { TAG_INSIDE, c }, .p = p,
			    .pp = l->pp, .hfd = fd, .ifd = -1, .t0 = mono_ms(), .prev = p->last,
			    .in.pipe = { -1, -1 }, .out.pipe = { -1, -1 } };
	peer_text(ss, c->peer, sizeof c->peer);
	if (p->last)
		p->last->next = c;
	else
		p->conns = c;
	p->last = c;
	p->nconns++;
	nodelay(fd, 1);
	/* (in the epoll set once connected inside: conn_pump) */
	/* Reno on this loopback socket of warden's own: a host default that
	 * paces (BBR) would pace the relay's every byte toward the client. Best
	 * effort: Reno is always permitted. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4) < 0) { /* see above */ }
	dial(c, AF_INET);
}

/* Reset fd, a client past the cap (why: the alert's action), at once; the
 * first of its port is said in an alert. */
static void refuse(struct publish *p, const struct listener *l, int fd, const char *why)
{
	reset_close(&fd);
	size_t i = (size_t)(l->pp - p->pol->publish);
	if (i >= ARRAY_LEN(p->cap_said) || p->cap_said[i])
		return;
	p->cap_said[i] = true;
	char detail[200];
	struct rlimit rl = { 0 };
	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(detail, sizeof detail, "at most %zu connections at once to published ports: "
		 "warden's share of its open-file limit (%llu), %u at most", p->cap,
		 (unsigned long long)rl.rlim_cur, PUBLISH_CONN_MAX);
	audit_emit_event(p->log, ev_alert(&(struct ev_alert){ .rule = "publish.connection-cap",
		.port = l->pp->host_port, .action = why, .detail = detail }), NULL);
}

static void refuse_at_cap(struct publish *p, const struct listener *l, int fd)
{
	char why[80];
	snprintf(why, sizeof why, "connections past %zu at once were refused", p->cap);
	refuse(p, l, fd, why);
}

/* Out of descriptors: the spare one closed for a moment to take the
 * client off the backlog and reset it; -1 when even that fails. */
static int refuse_spare(struct publish *p, const struct listener *l)
{
	if (p->spare < 0)
		return -1;
	closep(&p->spare);
	int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		refuse(p, l, fd, "more were refused: warden is out of descriptors");
	p->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? 0 : -1;
}

static void on_accept(struct publish *p, const struct listener *l)
{
	for (int i = 0; i < 64 && !p->paused; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE) && refuse_spare(p, l) == 0)
			continue;
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				listeners_pause(p, true); /* until a connection ends, or a second */
			return;
		}
		if (p->nconns >= p->cap)
			refuse_at_cap(p, l, fd);
		else
			conn_open(p, l, fd, &ss);
	}
}

/* Once a second: the dials that waited too long fail; listeners paused
 * out of descriptors try again. */
static void on_timer(struct publish *p)
{
	uint64_t ticks;
	if (read(p->timer, &ticks, sizeof ticks) < 0) { /* nothing to read: fine */ }
	listeners_pause(p, false);
	double now = mono_ms();
	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if ((c->dialing || c->waiting) && now - c->t0 > DIAL_TIMEOUT_MS) {
			c->waiting = false;
			dial_failed(c, ETIMEDOUT);
		}
	}
	serve_waiting(p); /* (an ask the dialer's socket refused, again) */
}

static void dispatch(struct publish *p, const struct tag *t, uint32_t events)
{
	if (t->kind == TAG_LISTENER) {
		on_accept(p, t->obj);
		return;
	}
	if (t->kind == TAG_TIMER) {
		on_timer(p);
		return;
	}
	if (t->kind == TAG_DIALER) {
		on_dialer(p);
		return;
	}
	struct conn *c = t->obj;
	if (c->dead)
		return;
	if (t->kind == TAG_INSIDE && c->dialing)
		on_dialled(c);
	else if (events & EPOLLERR)
		conn_close(c, true);
	else if (c->connected)
		conn_pump(c);
}

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	struct publish *p = src->ctx;
	struct epoll_event evs[32];
	int n = epoll_wait(p->ep, evs, 32, 0);
	for (int i = 0; i < n; i++)
		dispatch(p, evs[i].data.ptr, evs[i].events);
	bury(p);
}

/* ---- the session's ----------------------------------------------------- */

int publish_start(struct publish *p, int userns, int sock_inside, struct werr *e)
{
	_cleanup_close_ int netns = ioctl(sock_inside, SIOCGSKNS);
	if (netns < 0)
		return werr_errno(e, "published ports: the sandbox's network namespace");
	if (publish_dialer_start(&p->d, userns, netns, e) < 0)
		return -1;
	p->dialer_tag = (struct tag){ TAG_DIALER, p };
	struct epoll_event dev = { .events = EPOLLIN, .data.ptr = &p->dialer_tag };
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, p->d.sock, &dev) < 0)
		return werr_errno(e, "published ports: epoll");
	p->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec it = { .it_interval = { .tv_sec = 1 }, .it_value = { .tv_sec = 1 } };
	p->timer_tag = (struct tag){ TAG_TIMER, p };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &p->timer_tag };
	if (p->timer < 0 || timerfd_settime(p->timer, 0, &it, NULL) < 0 ||
	    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->timer, &ev) < 0)
		return werr_errno(e, "published ports: the dials' timer");
	return 0;
}

int publish_watch(struct loop *l, struct publish *p, struct werr *e)
{
	return loop_add(l, "the published ports", p->ep, on_ready, p, e);
}

void publish_end(struct publish *p)
{
	if (!p)
		return;
	while (p->conns)
		conn_close(p->conns, false);
	bury(p);
	publish_dialer_stop(&p->d);
	closep(&p->timer);
}

void publish_free(struct publish *p)
{
	if (!p)
		return;
	publish_end(p);
	for (size_t i = 0; i < p->nls; i++)
		close(p->ls[i].fd);
	close(p->ep);
	closep(&p->spare);
	free(p);
}

void publish_freep(struct publish **p)
{
	publish_free(*p);
}
