/* proxy_owner.c - which program made each of the proxy's connections
 * (proxy_conn.h), looked up off the proxy's event loop: the owner's first
 * step (the client's socket named) runs on the loop: once the request is
 * in when the rules need the program (a rule or a secret names one) or
 * refuse or ask, else once the client has its answer (CONNECT's 200), or
 * at its refusal or end when nothing started it before; the walk of the sandbox's processes on one thread of this
 * file's own, and the answer comes back through an eventfd, as the
 * resolvers' do (proxy_dial.c). The connection goes on meanwhile: only the
 * rules that name a program (prog_first), or a question for a human that
 * names it, wait for it (S_OWNER). A connection that ends first is closed
 * at once, but kept, its event unwritten, until its answer is in
 * (log_wait): no event loses its program, and no answer finds its
 * connection freed. One thread: the owner's hash cache is its alone.
 * Calls none of the proxy's other files: what an answer sets going is
 * the caller's (proxy.c). */
#include "proxy_conn.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../common/util.h"

struct ojob {
	struct ojob *next;
	struct conn *c;
	struct proxy_owner_query q;
};

struct owner_jobs {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ojob *todo, **todo_end, *done; /* todo first in, first out */
	bool stop;
	int efd;                   /* readable: answers in done */
};

static void *owner_thread(void *arg)
{
	struct proxy *px = arg;
	struct owner_jobs *o = px->owners;
	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->todo && !o->stop)
			pthread_cond_wait(&o->cv, &o->mu);
		if (!o->todo)
			break; /* told to stop, and every lookup answered */
		struct ojob *j = o->todo;
		o->todo = j->next;
		if (!o->todo)
			o->todo_end = &o->todo;
		pthread_mutex_unlock(&o->mu);
		px->owner.find(px->owner.ctx, &j->q);
		pthread_mutex_lock(&o->mu);
		j->next = o->done;
		o->done = j;
		uint64_t one = 1;
		if (write(o->efd, &one, sizeof one) < 0) { /* counter full: a wake-up is pending */ }
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

/* The thread, its queues and its eventfd (watched by the proxy's epoll),
 * made at the first lookup; -1 when they cannot be. */
static int owners_start(struct proxy *px)
{
	struct owner_jobs *o = xcalloc(1, sizeof *o);
	o->todo_end = &o->todo;
	o->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = &px->iowner };
	if (o->efd < 0 || epoll_ctl(px->ep, EPOLL_CTL_ADD, o->efd, &e) < 0) {
		if (o->efd >= 0)
			close(o->efd);
		free(o);
		return -1;
	}
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	px->owners = o;
	/* SCHED_BATCH: its wake-up does not preempt the loop, nor the
	 * client the loop has just answered */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_BATCH);
	pthread_attr_setschedparam(&at, &(struct sched_param){ 0 });
	int rc = pthread_create(&o->thread, &at, owner_thread, px);
	if (rc != 0) /* a policy the system refuses: the loop's own */
		rc = pthread_create(&o->thread, NULL, owner_thread, px);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		px->owners = NULL;
		epoll_ctl(px->ep, EPOLL_CTL_DEL, o->efd, NULL);
		close(o->efd);
		pthread_mutex_destroy(&o->mu);
		pthread_cond_destroy(&o->cv);
		free(o);
		return -1;
	}
	return 0;
}

/* The answer q into c. */
static void answered(struct conn *c, struct proxy_owner_query *q)
{
	c->prog = q->prog;
	if (!c->prog.unknown[0] && !c->prog.path[0])
		snprintf(c->prog.unknown, sizeof c->prog.unknown, "no executable");
	c->prog_asked = true;
	c->prog_pending = false;
}

void conn_owner_begin(struct conn *c)
{
	struct proxy *px = c->px;
	if (c->prog_asked || c->prog_pending)
		return; /* once per connection */
	if (!px->owner.begin) {
		snprintf(c->prog.unknown, sizeof c->prog.unknown, "not looked up");
		return; /* prog_asked stays false: no program on the event */
	}
	struct ojob *j = xcalloc(1, sizeof *j);
	j->c = c;
	if (px->owner.begin(px->owner.ctx, c->cfd, &j->q)) {
		if (px->owners || owners_start(px) == 0) {
			struct owner_jobs *o = px->owners;
			c->prog_pending = true;
			pthread_mutex_lock(&o->mu);
			*o->todo_end = j;
			o->todo_end = &j->next;
			pthread_cond_signal(&o->cv);
			pthread_mutex_unlock(&o->mu);
			return;
		}
		px->owner.find(px->owner.ctx, &j->q); /* no thread: here, as before */
	}
	px->owner.end(px->owner.ctx, &j->q);
	answered(c, &j->q);
	free(j);
}

void owners_collect(struct proxy *px, void (*known)(struct conn *c))
{
	struct owner_jobs *o = px->owners;
	if (!o)
		return;
	uint64_t v;
	if (read(o->efd, &v, sizeof v) < 0) { /* nothing pending */ }
	pthread_mutex_lock(&o->mu);
	struct ojob *done = o->done;
	o->done = NULL;
	pthread_mutex_unlock(&o->mu);
	while (done) {
		struct ojob *j = done;
		done = j->next;
		struct conn *c = j->c;
		px->owner.end(px->owner.ctx, &j->q);
		answered(c, &j->q);
		free(j);
		known(c);
	}
}

void owners_stop(struct proxy *px, void (*known)(struct conn *c))
{
	struct owner_jobs *o = px->owners;
	if (!o)
		return;
	pthread_mutex_lock(&o->mu);
	o->stop = true;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	pthread_join(o->thread, NULL);
	owners_collect(px, known);
	close(o->efd);
	pthread_mutex_destroy(&o->mu);
	pthread_cond_destroy(&o->cv);
	free(o);
	px->owners = NULL;
}
