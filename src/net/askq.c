/* askq.c - questions and events from interception threads to the loop
 * (askq.h): one list under a mutex, an eventfd to wake the loop, and for
 * each question an eventfd of its own that the answer makes readable. */
#include "askq.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../common/util.h"

/* A question handed to the loop; two owners (the thread, the loop) until
 * each lets go. */
struct question {
	int efd;                 /* the answer came */
	int refs;
	bool allow;
	bool ended;              /* the loop's: answered, or withdrawn */
	const void *handle;      /* the loop's: the asker's, while open */
	char why[256];
	char *subject, *summary;
	json_t *detail;          /* taken by the asker */
};

struct item {
	struct item *next;
	struct event ev;         /* fields set: an event to emit */
	struct question *q;      /* else a question to put */
	bool withdraw;           /* or to withdraw (the asker went away) */
};

struct askq {
	struct audit *log;
	struct proxy_asker asker;
	pthread_mutex_t mu;
	struct item *head, **tail;
	int efd;                 /* items queued */
};

/* ---- the loop's side ---------------------------------------------------- */

static void q_unref(struct question *q)
{
	if (__atomic_sub_fetch(&q->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	close(q->efd);
	json_decref(q->detail);
	free(q->subject);
	free(q->summary);
	free(q);
}

static void answered(void *ctx, bool allow, const char *why)
{
	struct question *q = ctx;
	q->ended = true;
	q->allow = allow;
	snprintf(q->why, sizeof q->why, "%s", why ? why : "");
	uint64_t one = 1;
	if (write(q->efd, &one, sizeof one) < 0) { /* the counter cannot be full */ }
	q_unref(q); /* the loop's reference: the thread may have gone */
}

/* Put q to the asker (ask false: refuse it). */
static void put(struct askq *aq, struct question *q, bool ask)
{
	json_t *detail = steal_ptr(&q->detail);
	if (!ask || !aq->asker.ask) {
		json_decref(detail);
		answered(q, false, "no one to ask");
		return;
	}
	__atomic_add_fetch(&q->refs, 1, __ATOMIC_ACQ_REL); /* q outlives an answer at once */
	const void *h = aq->asker.ask(aq->asker.ctx, q->subject, q->summary, detail, answered, q);
	if (h && !q->ended)
		q->handle = h;
	q_unref(q);
	/* the loop's reference ends with the answer (answered) */
}

/* The thread no longer waits: the open question withdrawn, the loop's
 * reference with it (the asker calls no one back). */
static void withdraw(struct askq *aq, struct question *q)
{
	if (!q->ended && q->handle && aq->asker.cancel) {
		aq->asker.cancel(aq->asker.ctx, q->handle);
		q->ended = true;
		q_unref(q);
	}
	q_unref(q); /* the item's */
}

/* Emit the events, put the questions (ask false: refuse them). */
static void drain(struct askq *aq, bool ask)
{
	uint64_t v;
	if (read(aq->efd, &v, sizeof v) < 0) { /* nothing pending */ }
	pthread_mutex_lock(&aq->mu);
	struct item *it = aq->head;
	aq->head = NULL;
	aq->tail = &aq->head;
	pthread_mutex_unlock(&aq->mu);
	while (it) {
		struct item *next = it->next;
		if (it->q && it->withdraw)
			withdraw(aq, it->q);
		else if (it->q)
			put(aq, it->q, ask);
		else {
			audit_emit_event(aq->log, it->ev, NULL);
		}
		free(it);
		it = next;
	}
}

void askq_drain(struct askq *q)
{
	drain(q, true);
}

struct askq *askq_new(struct audit *log, const struct proxy_asker *asker, struct werr *e)
{
	struct askq *q = xcalloc(1, sizeof *q);
	q->log = log;
	if (asker)
		q->asker = *asker;
	q->tail = &q->head;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0) {
		werr_set(e, errno, "questions from interception threads: eventfd");
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	return q;
}

int askq_fd(const struct askq *q)
{
	return q->efd;
}

bool askq_can_ask(const struct askq *q)
{
	return q && q->asker.ask;
}

void askq_free(struct askq *q)
{
	if (!q)
		return;
	drain(q, false); /* the last events of the connections that ended */
	close(q->efd);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* ---- the threads' side -------------------------------------------------- */

static void post(struct askq *q, struct item *it)
{
	pthread_mutex_lock(&q->mu);
	*q->tail = it;
	q->tail = &it->next;
	pthread_mutex_unlock(&q->mu);
	uint64_t one = 1;
	if (write(q->efd, &one, sizeof one) < 0) { /* full: a wake-up is pending */ }
}

void askq_emit(struct askq *q, struct event ev)
{
	struct item *it = xcalloc(1, sizeof *it);
	it->ev = ev;
	post(q, it);
}

bool askq_ask(struct askq *aq, const char *subject, const char *summary, json_t *detail,
	      int stop_fd, int client_fd, char *why, size_t whylen)
{
	struct question *q = xcalloc(1, sizeof *q);
	q->refs = 2;
	q->efd = eventfd(0, EFD_CLOEXEC);
	if (q->efd < 0) {
		json_decref(detail);
		free(q);
		snprintf(why, whylen, "cannot wait for an answer");
		return false;
	}
	q->subject = xstrdup(subject);
	q->summary = xstrdup(summary);
	q->detail = detail;
	struct item *it = xcalloc(1, sizeof *it);
	it->q = q;
	post(aq, it);
	struct pollfd p[3] = { { .fd = q->efd, .events = POLLIN },
			       { .fd = stop_fd > 0 ? stop_fd : -1, .events = POLLIN },
			       { .fd = client_fd, .events = POLLRDHUP } };
	while (poll(p, 3, -1) < 0 && errno == EINTR) {
	}
	bool allow = false;
	if (p[0].revents) {
		allow = q->allow;
		snprintf(why, whylen, "%s", q->why);
	} else if (p[1].revents) {
		snprintf(why, whylen, "the session ended before an answer");
	} else {
		snprintf(why, whylen, "the client closed the connection before an answer");
		__atomic_add_fetch(&q->refs, 1, __ATOMIC_ACQ_REL); /* the item's */
		struct item *w = xcalloc(1, sizeof *w);
		*w = (struct item){ .q = q, .withdraw = true };
		post(aq, w);
	}
	q_unref(q);
	return allow;
}
