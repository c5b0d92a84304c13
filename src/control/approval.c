/* approval.c - the question broker (approval.h): open questions in a list,
 * the answers remembered for the session (grants, each with its kind, an
 * exact subject or a pattern, and an expiry; the newest that covers a
 * subject answers it), one timerfd armed at the nearest deadline, the
 * reviewer first and the human channels after it, an `approval` event at
 * each step.
 *
 * Grants are kept in two stores: the answers of channels (humans, in
 * MAX_GRANTS), and the few seconds a no to an exec stands (in
 * MAX_STANDS), which the agent makes at will by running what is refused.
 * A full store drops what has expired first; the answers' store then its
 * oldest allow, and a no only when it holds nothing else: nothing the
 * agent does pushes out a human's answer. */
#include "approval.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"

#define MAX_CHANNELS 8
#define MAX_GRANTS 1024   /* the channels' answers kept for the session */
#define MAX_STANDS 256    /* the nos that stand for a moment */
#define DENY_STANDS_S 3 /* how long a no to an exec answers the same exec again */

struct qent {
	struct question q;
	char *subject, *summary;
	approval_done done;
	void *ctx;
	bool under_review;
	bool once_only;          /* a yes is never remembered (approvals_ask_once) */
	struct qent *next;
};

struct grant {
	enum approval_kind kind;
	char *what;              /* the subject, or a pattern */
	bool pattern, allow;
	struct timespec expires; /* CLOCK_MONOTONIC; 0: the session's end */
	char *by;
	unsigned long seq;       /* the newer, the larger */
};

/* A store of grants, oldest first. */
struct grants {
	struct grant *v;
	size_t n, max;
};

struct approvals {
	struct audit *log;
	char prefix[24];         /* of the ids: the session's random part */
	unsigned timeout_s;
	unsigned long next_id;
	struct qent *open;
	struct grants answers;   /* the channels' */
	struct grants stands;    /* a no to an exec, for DENY_STANDS_S */
	unsigned long next_seq;
	struct approval_channel channels[MAX_CHANNELS];
	size_t nchannels;
	struct approval_channel reviewer;
	bool has_reviewer;
	bool ci;                 /* `warden run --ci`: only the webhook is a human channel */
	int timer;
};

static const char *const kind_names[] = { "net", "exec", "write", "tool", "risk", "ssh" };
static const char *const scope_names[] = { "once", "session", "pattern" };

const char *approval_kind_name(enum approval_kind k)
{
	return (unsigned)k < ARRAY_LEN(kind_names) ? kind_names[k] : "?";
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The timer at the nearest deadline, or off. */
static void rearm(struct approvals *a)
{
	struct itimerspec it = { 0 };
	for (struct qent *e = a->open; e; e = e->next)
		if (!it.it_value.tv_sec && !it.it_value.tv_nsec ? true : before(&e->q.deadline, &it.it_value))
			it.it_value = e->q.deadline;
	timerfd_settime(a->timer, TFD_TIMER_ABSTIME, &it, NULL);
}

static void emit(struct approvals *a, const struct qent *e, const char *phase, int decision,
		 const char *by, const char *who, const struct approval_answer *ans, const char *reason)
{
	audit_emit_event(a->log, ev_approval(&(struct ev_approval){
		.id = e->q.id, .kind = e->q.kind_name, .phase = phase, .subject = e->subject,
		.summary = e->summary, .detail = strcmp(phase, "asked") == 0 ? e->q.detail : NULL,
		.decision = decision, .by = by, .who = who,
		.scope = ans ? scope_names[ans->scope] : NULL,
		.pattern = ans && ans->scope == SCOPE_PATTERN ? ans->pattern : NULL,
		.ttl_s = ans && ans->scope != SCOPE_ONCE ? ans->ttl_s : 0, .reason = reason }), NULL);
}

struct approvals *approvals_new(struct audit *log, const char *session, const struct policy *p)
{
	struct approvals *a = xcalloc(1, sizeof *a);
	a->log = log;
	const char *dash = session ? strrchr(session, '-') : NULL;
	snprintf(a->prefix, sizeof a->prefix, "%s", dash ? dash + 1 : session ? session : "q");
	a->timeout_s = p->approve.timeout_s ? p->approve.timeout_s : POLICY_APPROVE_TIMEOUT_DEFAULT;
	a->ci = p->approve.ci;
	a->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (a->timer < 0) {
		free(a);
		return NULL;
	}
	a->answers = (struct grants){ .v = xcalloc(MAX_GRANTS, sizeof(struct grant)), .max = MAX_GRANTS };
	a->stands = (struct grants){ .v = xcalloc(MAX_STANDS, sizeof(struct grant)), .max = MAX_STANDS };
	return a;
}

static void qent_free(struct qent *e)
{
	free(e->subject);
	free(e->summary);
	json_decref(e->q.detail);
	free(e);
}

static void unlink_open(struct approvals *a, struct qent *e)
{
	for (struct qent **pp = &a->open; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	rearm(a);
}

/* The channels that saw the question are told of its end. */
static void tell_ended(struct approvals *a, const struct qent *e, bool allow, const char *by)
{
	if (e->under_review) {
		if (a->has_reviewer && a->reviewer.ended)
			a->reviewer.ended(a->reviewer.ctx, &e->q, allow, by);
		return;
	}
	for (size_t i = 0; i < a->nchannels; i++)
		if (a->channels[i].ended)
			a->channels[i].ended(a->channels[i].ctx, &e->q, allow, by);
}

static void remember(struct approvals *a, struct grants *to, enum approval_kind kind,
		     const char *subject, const struct approval_answer *ans);

/* e ends with this answer: recorded, told, the asker called, freed. A no
 * to an exec stands for a few seconds for the same subject: a shell that
 * was refused tries the next directory of its PATH, often the same file
 * (/usr/bin/x, /bin/x), and is not asked again. */
static void finish(struct approvals *a, struct qent *e, bool allow, const char *phase, const char *by,
		   const char *who, const struct approval_answer *ans, const char *reason)
{
	if (!allow && e->q.kind == APPROVAL_EXEC && (!ans || ans->scope == SCOPE_ONCE)) {
		char brief[64];
		snprintf(brief, sizeof brief, "%s, a moment ago", by);
		remember(a, &a->stands, e->q.kind, e->subject, &(struct approval_answer){
			.allow = false, .scope = SCOPE_SESSION, .ttl_s = DENY_STANDS_S, .by = brief });
	}
	unlink_open(a, e);
	emit(a, e, phase, allow, by, who, ans, reason);
	tell_ended(a, e, allow, by);
	char why[512];
	snprintf(why, sizeof why, "%s by %s%s%s", allow ? "allowed" : "denied", by,
		 reason ? ": " : "", reason ? reason : "");
	approval_done done = e->done;
	void *ctx = e->ctx;
	qent_free(e);
	if (done)
		done(ctx, allow, why);
}

static void grant_drop(struct grants *gs, size_t i)
{
	free(gs->v[i].what);
	free(gs->v[i].by);
	memmove(&gs->v[i], &gs->v[i + 1], (gs->n - i - 1) * sizeof gs->v[0]);
	gs->n--;
}

static void grants_free(struct grants *gs)
{
	while (gs->n)
		grant_drop(gs, gs->n - 1);
	free(gs->v);
}

static bool expired(const struct grant *g, const struct timespec *now)
{
	return (g->expires.tv_sec || g->expires.tv_nsec) && before(&g->expires, now);
}

void approvals_free(struct approvals *a)
{
	if (!a)
		return;
	while (a->open) {
		struct qent *e = a->open;
		a->open = e->next;
		emit(a, e, "ended", 0, NULL, NULL, NULL, "the session ended first");
		tell_ended(a, e, false, "session end");
		qent_free(e);
	}
	grants_free(&a->answers);
	grants_free(&a->stands);
	if (a->timer >= 0)
		close(a->timer);
	free(a);
}

/* The newest grant of gs for this kind and subject, or NULL. */
static const struct grant *granted_in(const struct grants *gs, enum approval_kind kind,
				      const char *subject, const struct timespec *now)
{
	for (size_t i = gs->n; i-- > 0;) {
		const struct grant *g = &gs->v[i];
		if (g->kind != kind || expired(g, now))
			continue;
		if (g->pattern ? fnmatch(g->what, subject, 0) == 0 : strcmp(g->what, subject) == 0)
			return g;
	}
	return NULL;
}

/* A remembered answer for this kind and subject, the newest, or NULL. */
static const struct grant *granted(struct approvals *a, enum approval_kind kind, const char *subject)
{
	struct timespec now = mono_now();
	const struct grant *g = granted_in(&a->answers, kind, subject, &now),
			   *s = granted_in(&a->stands, kind, subject, &now);
	return !g ? s : !s ? g : s->seq > g->seq ? s : g;
}

/* Room for one more in gs: the expired go; else, in the answers' store,
 * the oldest allow, and the oldest of all when there are only nos. */
static void make_room(struct approvals *a, struct grants *gs)
{
	struct timespec now = mono_now();
	for (size_t i = gs->n; i-- > 0;)
		if (expired(&gs->v[i], &now))
			grant_drop(gs, i);
	if (gs->n < gs->max)
		return;
	size_t victim = 0;
	for (size_t i = 0; gs == &a->answers && i < gs->n; i++)
		if (gs->v[i].allow) {
			victim = i;
			break;
		}
	grant_drop(gs, victim);
}

static void remember(struct approvals *a, struct grants *to, enum approval_kind kind,
		     const char *subject, const struct approval_answer *ans)
{
	if (ans->scope == SCOPE_ONCE)
		return;
	if (to->n == to->max)
		make_room(a, to);
	struct grant *g = &to->v[to->n++];
	*g = (struct grant){ .kind = kind, .pattern = ans->scope == SCOPE_PATTERN, .allow = ans->allow,
			     .what = xstrdup(ans->scope == SCOPE_PATTERN ? ans->pattern : subject),
			     .by = xstrdup(ans->by ? ans->by : "?"), .seq = ++a->next_seq };
	if (ans->ttl_s) {
		g->expires = mono_now();
		g->expires.tv_sec += ans->ttl_s;
	}
}

/* e goes to the human channels. In CI mode with none (no webhook: no
 * terminal is assumed, nobody runs `warden approve`), it is refused at once
 * and false is returned (e freed, its asker called). */
static bool to_humans(struct approvals *a, struct qent *e)
{
	if (a->ci && a->nchannels == 0) {
		finish(a, e, false, "answered", "ci", NULL, NULL,
		       "CI mode (warden run --ci): no reviewer command or webhook to decide "
		       "(profile: approve command, approve webhook)");
		return false;
	}
	for (size_t i = 0; i < a->nchannels; i++)
		if (a->channels[i].asked)
			a->channels[i].asked(a->channels[i].ctx, &e->q);
	return true;
}

static const struct question *ask(struct approvals *a, enum approval_kind kind, const char *subject,
				  const char *summary, json_t *detail, bool once_only, approval_done done,
				  void *ctx)
{
	struct qent *e = xcalloc(1, sizeof *e);
	e->once_only = once_only;
	snprintf(e->q.id, sizeof e->q.id, "%s-%lu", a->prefix, ++a->next_id);
	e->q.kind = kind;
	e->q.kind_name = approval_kind_name(kind);
	e->subject = xstrdup(subject);
	e->summary = xstrdup(summary);
	e->q.subject = e->subject;
	e->q.summary = e->summary;
	e->q.detail = detail ? detail : json_object();
	clock_gettime(CLOCK_REALTIME, &e->q.asked);
	e->q.deadline = mono_now();
	e->q.deadline.tv_sec += a->timeout_s;
	e->q.timeout_s = a->timeout_s;
	e->done = done;
	e->ctx = ctx;
	const struct grant *g = granted(a, kind, subject);
	if (g) {
		char why[256];
		snprintf(why, sizeof why, "an earlier answer (%s, by %s) covers it",
			 g->pattern ? g->what : "this subject", g->by);
		emit(a, e, "remembered", g->allow, g->by, NULL, NULL, why);
		bool allow = g->allow;
		char msg[300];
		snprintf(msg, sizeof msg, "%s: %s", allow ? "allowed" : "denied", why);
		qent_free(e);
		if (done)
			done(ctx, allow, msg);
		return NULL;
	}
	e->next = a->open;
	a->open = e;
	rearm(a);
	emit(a, e, "asked", -1, NULL, NULL, NULL, NULL);
	if (a->has_reviewer) {
		e->under_review = true;
		a->reviewer.asked(a->reviewer.ctx, &e->q);
	} else {
		e->q.reviewed = true;
		if (!to_humans(a, e))
			return NULL;
	}
	return &e->q;
}

const struct question *approvals_ask(struct approvals *a, enum approval_kind kind, const char *subject,
				     const char *summary, json_t *detail, approval_done done, void *ctx)
{
	return ask(a, kind, subject, summary, detail, false, done, ctx);
}

const struct question *approvals_ask_once(struct approvals *a, enum approval_kind kind,
					  const char *subject, const char *summary, json_t *detail,
					  approval_done done, void *ctx)
{
	return ask(a, kind, subject, summary, detail, true, done, ctx);
}

static struct qent *find_entry(const struct approvals *a, const char *id)
{
	for (struct qent *e = a->open; e; e = e->next)
		if (strcmp(e->q.id, id) == 0)
			return e;
	return NULL;
}

const struct question *approvals_find(const struct approvals *a, const char *id)
{
	struct qent *e = find_entry(a, id);
	return e ? &e->q : NULL;
}

void approvals_cancel(struct approvals *a, const struct question *q)
{
	if (!q)
		return;
	struct qent *e = find_entry(a, q->id);
	if (!e)
		return;
	unlink_open(a, e);
	emit(a, e, "cancelled", -1, NULL, NULL, NULL, "the action it held went away");
	tell_ended(a, e, false, "cancelled");
	qent_free(e);
}

int approvals_answer(struct approvals *a, const char *id, const struct approval_answer *ans)
{
	struct qent *e = find_entry(a, id);
	if (!e || e->under_review) {
		errno = ENOENT;
		return -1;
	}
	if (ans->scope > SCOPE_PATTERN ||
	    (ans->scope == SCOPE_PATTERN && (!ans->pattern || !ans->pattern[0] ||
					     fnmatch(ans->pattern, e->subject, 0) != 0))) {
		errno = EINVAL;
		return -1;
	}
	/* a yes to what the subject does not name whole covers it alone */
	struct approval_answer once = *ans;
	_cleanup_free_ char *why = NULL;
	if (e->once_only && ans->allow && ans->scope != SCOPE_ONCE) {
		why = xasprintf("taken for this question only: warden did not read it whole, so no "
				"later one is known to be the same%s%s", ans->reason ? "; " : "",
				ans->reason ? ans->reason : "");
		once = (struct approval_answer){ .allow = true, .scope = SCOPE_ONCE, .by = ans->by,
						 .who = ans->who, .reason = why };
		ans = &once;
	}
	remember(a, &a->answers, e->q.kind, e->subject, ans);
	finish(a, e, ans->allow, "answered", ans->by ? ans->by : "?", ans->who, ans, ans->reason);
	return 0;
}

int approvals_review(struct approvals *a, const char *id, enum review_verdict v, const char *reason)
{
	struct qent *e = find_entry(a, id);
	if (!e || !e->under_review) {
		errno = ENOENT;
		return -1;
	}
	if (v != REVIEW_ASK) {
		struct approval_answer ans = { .allow = v == REVIEW_ALLOW, .scope = SCOPE_ONCE,
					       .by = "reviewer", .reason = reason };
		finish(a, e, ans.allow, "answered", "reviewer", NULL, &ans, reason);
		return 0;
	}
	/* to the humans */
	if (a->reviewer.ended)
		a->reviewer.ended(a->reviewer.ctx, &e->q, false, "reviewer: ask");
	e->under_review = false;
	e->q.reviewed = true;
	emit(a, e, "reviewed", -1, "reviewer", NULL, NULL, reason ? reason : "the reviewer asks a human");
	to_humans(a, e);
	return 0;
}

void approvals_add_channel(struct approvals *a, const struct approval_channel *ch)
{
	/* CI mode: nobody is at a terminal or runs `warden approve` */
	if (a->ci && strcmp(ch->name, "webhook") != 0)
		return;
	if (a->nchannels < MAX_CHANNELS)
		a->channels[a->nchannels++] = *ch;
}

void approvals_set_reviewer(struct approvals *a, const struct approval_channel *ch)
{
	a->reviewer = *ch;
	a->has_reviewer = ch->asked != NULL;
}

size_t approvals_open(const struct approvals *a, const struct question **out, size_t max)
{
	size_t n = 0;
	for (struct qent *e = a->open; e && (!out || n < max); e = e->next)
		if (!e->under_review) {
			if (out)
				out[n] = &e->q;
			n++;
		}
	return n;
}

static void on_timer(struct loop *l, const struct source *src, uint32_t events)
{
	approvals_on_timer(src->ctx);
}

int approvals_watch(struct loop *l, struct approvals *a, struct werr *e)
{
	return loop_add(l, "the questions' timer", a->timer, on_timer, a, e);
}

void approvals_on_timer(struct approvals *a)
{
	uint64_t ticks;
	(void)!read(a->timer, &ticks, sizeof ticks);
	struct timespec now = mono_now();
	for (struct qent *e = a->open, *next; e; e = next) {
		next = e->next;
		if (before(&now, &e->q.deadline))
			continue;
		char why[96];
		snprintf(why, sizeof why, "no answer within %u s", e->q.timeout_s);
		finish(a, e, false, "timeout", "timeout", NULL, NULL, why);
		next = a->open; /* finish may have changed the list */
	}
	rearm(a);
}
