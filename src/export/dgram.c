/* dgram.c - records to a local log daemon's datagram socket without
 * blocking (dgram.h): the socket, the queue of what waits, the count of
 * what was lost. */
#include "dgram.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"

/* A record waiting for room in the daemon's queue. */
struct pending {
	char *p;
	size_t n;
	unsigned long seq;
	const char *kind;        /* static, as an event's kind */
};

struct dgram {
	int fd;                  /* SOCK_DGRAM, non-blocking, connected to t.path */
	struct dgram_target t;   /* t.path is path, the caller's copied */
	char *path;
	unsigned long sent, dropped;
	struct pending q[DGRAM_QUEUE_MAX]; /* a ring: q[qhead], ... qn of them */
	size_t qhead, qn;
	bool stalled;            /* a flush waited its time out: the next ones do not wait */
};

/* Connect fd to t's socket: 0, or -1 with e saying what is wrong. */
static int connect_to(int fd, const struct dgram_target *t, struct werr *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(t->path) >= sizeof sa.sun_path)
		return werr_set(e, ENAMETOOLONG, "%s %s", t->noun, t->path);
	memcpy(sa.sun_path, t->path, strlen(t->path) + 1);
	struct stat st;
	if (stat(t->path, &st) < 0)
		return werr_errno(e, "no %s at %s (%s)", t->noun, t->path, t->hint);
	if (!S_ISSOCK(st.st_mode))
		return werr_set(e, 0, "%s is not a socket (%s)", t->path, t->hint);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return errno == EPROTOTYPE
			       ? werr_set(e, EPROTOTYPE, "the %s %s takes a stream, not datagrams "
					  "(warden sends datagrams: have the daemon listen there "
					  "for them, as unix-dgram)", t->noun, t->path)
			       : werr_errno(e, "nothing listens on the %s %s (%s)", t->noun, t->path,
					    t->hint);
	return 0;
}

int dgram_probe(const struct dgram_target *t, struct werr *e)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return werr_errno(e, "cannot make a socket for the %s", t->noun);
	return connect_to(fd, t, e);
}

int dgram_open(struct dgram **out, const struct dgram_target *t, struct werr *e)
{
	*out = NULL;
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return werr_errno(e, "cannot make a socket for the %s", t->noun);
	if (connect_to(fd, t, e) < 0)
		return -1;
	struct dgram *d = xcalloc(1, sizeof *d);
	d->fd = steal_fd(&fd);
	d->t = *t;
	d->t.path = d->path = xstrdup(t->path);
	*out = d;
	return 0;
}

/* The record in a sealed memfd, passed alone (an empty datagram): for a
 * record larger than a datagram may be. 0 or an errno. */
static int send_memfd(struct dgram *d, const void *p, size_t n)
{
	_cleanup_close_ int mfd = memfd_create("warden-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0 || write_all(mfd, p, n) < 0 ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return errno;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	memset(&c, 0, sizeof c);
	struct msghdr mh = { .msg_control = c.buf, .msg_controllen = sizeof c.buf };
	struct cmsghdr *ch = CMSG_FIRSTHDR(&mh);
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(ch), &mfd, sizeof(int));
	return sendmsg(d->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? errno : 0;
}

/* One record, without waiting: 0 or an errno (EAGAIN: the daemon's queue
 * is full). */
static int send_one(struct dgram *d, const void *p, size_t n)
{
	for (int again = 0;; again++) {
		if (send(d->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			return 0;
		int err = errno;
		if ((err == EMSGSIZE || err == ENOBUFS) && d->t.memfd)
			return send_memfd(d, p, n);
		if (again || (err != ECONNREFUSED && err != ENOTCONN && err != ECONNRESET &&
			      err != EPIPE))
			return err;
		if (connect_to(d->fd, &d->t, NULL) < 0)
			return err;
	}
}

static void drop(struct dgram *d, unsigned long seq, const char *kind, int err)
{
	if (d->dropped++ == 0)
		wnote("%s: the entry of event %lu (%s) was not sent to %s: %s%s; the audit log "
		      "has it (entries lost are counted in session.end)", d->t.name, seq, kind,
		      d->t.path, err == EAGAIN ? d->t.name : strerror(err),
		      err == EAGAIN ? "'s queue stayed full" : "");
}

/* Send what waits, in order, until the daemon's queue is full (EAGAIN,
 * returned) or nothing waits (0). A record that cannot be sent otherwise
 * is lost. */
static int flush_queue(struct dgram *d)
{
	while (d->qn) {
		struct pending *q = &d->q[d->qhead];
		int err = send_one(d, q->p, q->n);
		if (err == EAGAIN)
			return EAGAIN;
		if (err == 0)
			d->sent++;
		else
			drop(d, q->seq, q->kind, err);
		free(q->p);
		d->qhead = (d->qhead + 1) % DGRAM_QUEUE_MAX;
		d->qn--;
	}
	return 0;
}

void dgram_send(struct dgram *d, const void *p, size_t n, unsigned long seq, const char *kind)
{
	int err = flush_queue(d);
	if (err == 0) {
		err = send_one(d, p, n);
		if (err == 0) {
			d->sent++;
			return;
		}
	}
	if (err != EAGAIN || d->qn == DGRAM_QUEUE_MAX) {
		drop(d, seq, kind, err);
		return;
	}
	struct pending *q = &d->q[(d->qhead + d->qn++) % DGRAM_QUEUE_MAX];
	q->p = xmalloc(n);
	memcpy(q->p, p, n);
	q->n = n;
	q->seq = seq;
	q->kind = kind;
}

void dgram_flush(struct dgram *d, int timeout_ms)
{
	struct timespec until = mono_after_ms(d->stalled || timeout_ms < 0 ? 0 : (unsigned)timeout_ms);
	while (flush_queue(d) == EAGAIN) {
		long left = ms_left(&until);
		struct pollfd pfd = { .fd = d->fd, .events = POLLOUT };
		int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (n < 0 && errno == EINTR) /* a signal during the session's end */
			continue;
		if (n <= 0) {
			d->stalled = timeout_ms > 0;
			break;
		}
	}
}

/* Everything still waiting, lost. */
static void give_up(struct dgram *d)
{
	while (d->qn) {
		struct pending *q = &d->q[d->qhead];
		drop(d, q->seq, q->kind, EAGAIN);
		free(q->p);
		d->qhead = (d->qhead + 1) % DGRAM_QUEUE_MAX;
		d->qn--;
	}
}

void dgram_end(struct dgram *d, int timeout_ms)
{
	dgram_flush(d, timeout_ms);
	give_up(d);
}

json_t *dgram_stats(const struct dgram *d)
{
	json_t *o = json_pack("{s:I, s:I}", "sent", (json_int_t)d->sent, "dropped",
			      (json_int_t)d->dropped);
	if (!o)
		abort();
	return o;
}

unsigned long dgram_dropped(const struct dgram *d)
{
	return d->dropped;
}

void dgram_free(struct dgram *d, int end_wait_ms)
{
	if (!d)
		return;
	dgram_end(d, end_wait_ms);
	close(d->fd);
	free(d->path);
	free(d);
}
