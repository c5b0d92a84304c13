/* webhook.c - the webhook channel (webhook.h): the URL read once, a body
 * per question queued for the workers, each delivery one post_once
 * (src/net/post.h: a blocking walk with one deadline, every wait a poll
 * that also watches the stop eventfd); the outcomes collected on the loop and the failures made
 * alerts. The part the workers share (the queue, the outcome list, the
 * URL, the TLS context, the eventfds) is a reference-counted hub. */
#include "webhook.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "../net/tls.h"
#include "control.h"

#define WEBHOOK_STOP_WAIT_MS 2000

/* ---- the URL, the body (pure) ---- */

int webhook_url_parse(const char *url, struct post_url *u, struct werr *e)
{
	if (post_url_parse(url, u, e) < 0)
		return werr_wrap(e, "approve webhook");
	return 0;
}

char *webhook_body(const struct question *q, const char *session, size_t *len)
{
	char allow[96], deny[96], text[1024];
	snprintf(allow, sizeof allow, "warden approve %s allow", q->id);
	snprintf(deny, sizeof deny, "warden approve %s deny", q->id);
	snprintf(text, sizeof text, "warden asks: %.600s (question %s, session %s, %u s to answer). "
		 "Answer with: %s, or: %s", q->summary, q->id, session, q->timeout_s, allow, deny);
	_cleanup_json_ json_t *qj = control_question_json(q);
	_cleanup_json_ json_t *o = json_pack("{s:s,s:s,s:O,s:{s:s,s:s},s:s}", "event", "approval.asked",
					     "session", session, "question", qj, "answer", "allow", allow,
					     "deny", deny, "text", text);
	for (int pass = 0; o && pass < 2; pass++) {
		char *s = json_dumps(o, JSON_COMPACT);
		if (s && strlen(s) <= WEBHOOK_BODY_MAX) {
			*len = strlen(s);
			return s;
		}
		free(s);
		json_object_set_new(qj, "detail", json_pack("{s:b}", "truncated", 1));
	}
	return NULL;
}

/* ---- the hub the workers share ---- */

struct delivery {
	char id[48];
	char *body;
	size_t len;
	int status;        /* the response's, 0: none */
	char why[300];     /* a failure, "" when delivered (a 2xx) */
	struct delivery *next;
};

struct hub {
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* work queued, stop, a worker gone */
	int refs;
	bool stop;
	struct delivery *todo, **todo_tail, *done;
	size_t ntodo;
	int nworkers, idle;
	int efd;                  /* outcomes ready (to the loop) */
	int cancel;               /* readable once stopping (to the workers) */
	struct post_url url;
	SSL_CTX *ctx;             /* https */
	unsigned deadline_ms;     /* a delivery's, from name lookup to the status line */
};

struct webhook {
	struct hub *h;
	struct audit *log;
	char session[64];
};

static void delivery_free(struct delivery *d)
{
	while (d) {
		struct delivery *next = d->next;
		free(d->body);
		free(d);
		d = next;
	}
}

static void hub_unref(struct hub *h)
{
	pthread_mutex_lock(&h->mu);
	bool last = --h->refs == 0;
	pthread_mutex_unlock(&h->mu);
	if (!last)
		return;
	delivery_free(h->todo);
	delivery_free(h->done);
	if (h->ctx)
		tls_ctx_free(h->ctx);
	closep(&h->efd);
	closep(&h->cancel);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/* ---- one delivery (on a worker) ---- */

static void deliver(const struct hub *h, struct delivery *d)
{
	struct post_result r;
	post_once(&(struct post_req){ .url = &h->url, .ctx = h->ctx, .cancel = h->cancel,
				      .deadline_ms = h->deadline_ms, .body = d->body, .len = d->len }, &r);
	d->status = r.status;
	snprintf(d->why, sizeof d->why, "%s", r.why);
}

static void *worker(void *arg)
{
	struct hub *h = arg;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->todo && !h->stop) {
			h->idle++;
			pthread_cond_wait(&h->cv, &h->mu);
			h->idle--;
		}
		if (h->stop)
			break;
		struct delivery *d = h->todo;
		h->todo = d->next;
		if (!h->todo)
			h->todo_tail = &h->todo;
		h->ntodo--;
		d->next = NULL;
		pthread_mutex_unlock(&h->mu);
		deliver(h, d);
		pthread_mutex_lock(&h->mu);
		d->next = h->done;
		h->done = d;
		uint64_t one = 1;
		if (write(h->efd, &one, sizeof one) < 0) { /* the counter is full: a wake-up is pending */ }
	}
	h->nworkers--;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	hub_unref(h);
	return NULL;
}

/* With h->mu held: a worker for what was queued, if none is idle and
 * there is room. Every signal blocked in it. false when none can start
 * and none runs. */
static bool ensure_worker(struct hub *h)
{
	if (h->idle > 0 || h->nworkers >= WEBHOOK_WORKERS)
		return true;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	h->refs++;
	int r = pthread_create(&t, &at, worker, h);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		h->refs--;
		return h->nworkers > 0;
	}
	h->nworkers++;
	return true;
}

/* ---- the loop's side ---- */

static void alert(struct webhook *w, const char *id, const char *why)
{
	char action[400];
	snprintf(action, sizeof action, "question %s not delivered: %s", id, why);
	audit_emit_event(w->log, ev_alert(&(struct ev_alert){ .rule = "approval.webhook-failed",
		.host = w->h->url.host.name, .port = w->h->url.port, .action = action }), NULL);
}

static void wh_asked(void *ctx, const struct question *q)
{
	struct webhook *w = ctx;
	struct hub *h = w->h;
	size_t len = 0;
	char *body = webhook_body(q, w->session, &len);
	if (!body) {
		alert(w, q->id, "the question does not fit in a request body");
		return;
	}
	struct delivery *d = xcalloc(1, sizeof *d);
	snprintf(d->id, sizeof d->id, "%s", q->id);
	d->body = body;
	d->len = len;
	pthread_mutex_lock(&h->mu);
	bool full = h->ntodo >= WEBHOOK_QUEUE_MAX, started = false;
	if (!full) {
		*h->todo_tail = d;
		h->todo_tail = &d->next;
		h->ntodo++;
		started = ensure_worker(h);
		if (!started) {
			/* no thread: take it back */
			struct delivery **pp = &h->todo;
			while (*pp != d)
				pp = &(*pp)->next;
			*pp = NULL;
			h->todo_tail = pp;
			h->ntodo--;
		}
		pthread_cond_signal(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	if (full || !started) {
		alert(w, q->id, full ? "too many deliveries wait" : "cannot start a thread");
		delivery_free(d);
	}
}

/* A question that ended before its turn is not sent. */
static void wh_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct hub *h = ((struct webhook *)ctx)->h;
	struct delivery *gone = NULL;
	pthread_mutex_lock(&h->mu);
	for (struct delivery **pp = &h->todo; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, q->id) == 0) {
			gone = *pp;
			*pp = gone->next;
			gone->next = NULL;
			h->ntodo--;
			break;
		}
	h->todo_tail = &h->todo;
	while (*h->todo_tail)
		h->todo_tail = &(*h->todo_tail)->next;
	pthread_mutex_unlock(&h->mu);
	delivery_free(gone);
}

void webhook_dispatch(struct webhook *w)
{
	struct hub *h = w->h;
	uint64_t n;
	(void)!read(h->efd, &n, sizeof n);
	pthread_mutex_lock(&h->mu);
	struct delivery *done = h->done;
	h->done = NULL;
	pthread_mutex_unlock(&h->mu);
	for (struct delivery *d = done; d; d = d->next)
		if (d->why[0])
			alert(w, d->id, d->why);
	delivery_free(done);
}

struct webhook *webhook_new(struct approvals *a, const char *url, const char *session,
			    struct audit *log, struct werr *e)
{
	return webhook_new_within(a, url, session, log, WEBHOOK_DEADLINE_S * 1000, e);
}

struct webhook *webhook_new_within(struct approvals *a, const char *url, const char *session,
				   struct audit *log, unsigned deadline_ms, struct werr *e)
{
	struct post_url u;
	if (webhook_url_parse(url, &u, e) < 0)
		return NULL;
	SSL_CTX *ctx = NULL;
	if (post_ready(e) < 0 || (u.tls && !(ctx = tls_client_ctx(NULL, e)))) {
		werr_wrap(e, "approve webhook");
		return NULL;
	}
	struct hub *h = xcalloc(1, sizeof *h);
	h->refs = 1;
	h->url = u;
	h->ctx = ctx;
	h->deadline_ms = deadline_ms;
	h->todo_tail = &h->todo;
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->cancel = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (h->efd < 0 || h->cancel < 0) {
		werr_errno(e, "approve webhook: eventfd");
		hub_unref(h);
		return NULL;
	}
	struct webhook *w = xcalloc(1, sizeof *w);
	w->h = h;
	w->log = log;
	snprintf(w->session, sizeof w->session, "%s", session);
	approvals_add_channel(a, &(struct approval_channel){ .name = "webhook", .asked = wh_asked,
							     .ended = wh_ended, .ctx = w });
	return w;
}

void webhook_free(struct webhook *w)
{
	if (!w)
		return;
	struct hub *h = w->h;
	uint64_t one = 1;
	pthread_mutex_lock(&h->mu);
	h->stop = true;
	delivery_free(h->todo);
	h->todo = NULL;
	h->todo_tail = &h->todo;
	h->ntodo = 0;
	pthread_cond_broadcast(&h->cv);
	if (write(h->cancel, &one, sizeof one) < 0) { /* full: readable already */ }
	struct timespec until = mono_after_ms(WEBHOOK_STOP_WAIT_MS);
	while (h->nworkers > 0 && pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&h->mu);
	hub_unref(h);
	free(w);
}

int webhook_fd(const struct webhook *w)
{
	return w->h->efd;
}

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	webhook_dispatch(src->ctx);
}

int webhook_watch(struct loop *l, struct webhook *w, struct werr *e)
{
	return loop_add(l, "the webhook", webhook_fd(w), on_ready, w, e);
}
