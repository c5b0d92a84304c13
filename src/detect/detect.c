/* detect.c - the detector's engine (detect.h): each event matched against
 * the rules whose first or later step names its kind; counts and sequences
 * kept per rule in small bounded rings (the oldest dropped first), windows
 * measured on the monotonic clock; `new:` fields kept in per-kind seen-sets;
 * alerts and the risk score that turns them into actions. */
#include "detect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/glob.h"
#include "../audit/recbound.h"
#include "../common/sbuf.h"
#include "../common/util.h"
#include "derive.h"
#include "pidmap.h"
#include "../common/strset.h"
#include "textmemo.h"

#define PARTIALS_MAX 64          /* open sequences per rule */
#define HITS_MAX 256             /* counted events kept per rule */
#define SEEN_MAX 65536           /* values per seen-set; past it, anything unseen is new */
#define LINKS_MAX 16
#define RECENT_MAX 5
#define VALUE_MAX 4096           /* a value's text for matching; longer ones are cut */
#define DERIVED_MAX 8            /* derived fields kept for the event being matched */
#define KINDS_MAX 64             /* event kinds with a list of their rules kept */
/* A rule's alerts on the record one by one (recbound.h): a burst of 100,
 * then one every 10 s, 1000 a session; the rest counted in summaries.
 * The score and the rule's own action go on whatever the record takes. */
#define ALERT_BURST 100.0
#define ALERT_RATE 0.1
#define ALERT_CAP 1000UL
#define REGEX_BUDGET 250000UL    /* a rule's regex steps per event (dre.h; 1-5 ms): past
				    it, the rule is off for the session */

static const double weights[SEV_COUNT] = { 2, 10, 25, 100 };

struct partial {
	unsigned stage;              /* steps matched */
	long root;                   /* `scope tree`: the first event's pid */
	double t0;
	unsigned long seqs[8];
	char *key;                   /* the `same` field's value, or NULL */
	char *dvals[8];              /* `differ`: each matched step's value */
};

struct hit {
	double t;
	unsigned long seq;
	char *key;
	char *dval;                  /* `differ`: its value, or NULL */
};

/* A rule's open sequences and counted events: allocated on its first
 * (most rules never match in a session; inline arrays made the states of
 * the built-in rules half a megabyte, each page of it faulted in when
 * read) */
struct rstate {
	struct partial *p; /* PARTIALS_MAX of them, or NULL */
	size_t np;
	struct hit *h;     /* HITS_MAX of them, or NULL */
	size_t nh;
};

/* The values of one field seen in events of one kind. */
struct seen {
	char *kind, *field;
	struct strset set;
	bool cur;                    /* the current event's value was new */
	bool cur_set;                /* ... and it had one */
};

struct recent {
	char rule[104];
	enum severity sev;
	unsigned long seq;
};

/* When a rule last raised the score: once a minute per rule. */
struct raised {
	char rule[104];
	double t;
};
#define RAISED_MAX 128
#define RAISE_EVERY_S 60

/* The rules with a step that can match an event of one kind (its own, or
 * "*"), in the rules' order: the others could not match, nor end or start
 * a sequence, so an event of that kind skips them. */
struct kind_rules {
	char *kind;
	size_t *rule, n;
};

/* A derived field of the event being matched (derive.h), NULL: none. */
struct derived {
	const char *field;
	json_t *v;
};

struct detect {
	struct ruleset rs;
	struct textmemo *tm;         /* the globs' and regexes' answers by text */
	struct kind_rules kinds[KINDS_MAX];
	size_t nkinds;
	struct pidmap *pids;         /* made when a rule has `scope tree` */
	struct derive *dv;           /* the derived fields (derive.h) */
	struct rstate *st;           /* one per rule */
	struct recbound *ab;         /* one per rule: its alerts on the record */
	struct seen *seen;
	size_t nseen;
	char *workspace, *home;
	struct detect_risk risk;
	double score, score_t;       /* the score at score_t */
	double peak;                 /* the highest score reached */
	bool crossed[ACT_KILL + 1];  /* a threshold acted and the score is still above it */
	struct audit *log;
	bool emitting;               /* our own alert on its way through the stream */
	detect_act_fn act;
	void *act_ctx;
	unsigned long alerts;
	struct recent recent[RECENT_MAX];
	size_t nrecent;
	struct raised raised[RAISED_MAX];
	size_t nraised;
	/* the event being matched */
	struct derived derived[DERIVED_MAX]; /* its derived fields made so far */
	size_t nderived;
	const json_t *ev;
	const char *ev_kind;
	unsigned long budget;        /* the rule's regex steps left for it */
	const struct cond *over;     /* the regex that ran out of them, or NULL */
};

double detect_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- seen-sets ------------------------------------------------------------ */

static int seen_find(struct detect *d, const char *kind, const char *field)
{
	for (size_t i = 0; i < d->nseen; i++)
		if (strcmp(d->seen[i].kind, kind) == 0 && strcmp(d->seen[i].field, field) == 0)
			return (int)i;
	d->seen = xrealloc(d->seen, (d->nseen + 1) * sizeof *d->seen);
	d->seen[d->nseen] = (struct seen){ .kind = xstrdup(kind), .field = xstrdup(field) };
	return (int)d->nseen++;
}

/* ---- process trees -------------------------------------------------------- */

static long event_pid(const json_t *ev)
{
	const json_t *p = json_object_get(ev, "pid");
	return json_is_integer(p) ? (long)json_integer_value(p) : -1;
}

/* ---- values --------------------------------------------------------------- */

/* A scalar's text for matching: strings as they are, numbers in decimal,
 * true/false as words. NULL for null, objects and arrays. */
static const char *scalar_text(const json_t *v, char *buf, size_t len)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return json_string_value(v);
	case JSON_INTEGER:
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	case JSON_REAL:
		snprintf(buf, len, "%.17g", json_real_value(v));
		return buf;
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return NULL;
	}
}

/* The field of the current event: "argc" of an exec is its argv's length.
 * A derived one is made once an event, kept for the other rules that ask
 * (DERIVED_MAX of them; past that, *tmp the caller's to free). */
static const json_t *field_of(struct detect *d, const char *field, json_t **tmp)
{
	const json_t *v = json_object_get(d->ev, field);
	if (v)
		return v;
	for (size_t i = 0; i < d->nderived; i++)
		if (strcmp(d->derived[i].field, field) == 0)
			return d->derived[i].v;
	json_t *x = NULL;
	if (strcmp(field, "argc") == 0 && strcmp(d->ev_kind, "exec") == 0)
		x = json_integer((json_int_t)json_array_size(json_object_get(d->ev, "argv")));
	else if (d->dv)
		x = derive_field(d->dv, d->ev_kind, d->ev, field);
	if (d->nderived < DERIVED_MAX)
		d->derived[d->nderived++] = (struct derived){ .field = field, .v = x };
	else
		*tmp = x;
	return x;
}

static bool truthy(const json_t *v)
{
	if (!v || json_is_null(v) || json_is_false(v))
		return false;
	if (json_is_string(v))
		return json_string_length(v) > 0;
	if (json_is_array(v))
		return json_array_size(v) > 0;
	return true;
}

/* $WORKSPACE and $HOME in a glob: expanded at the start (expand_rules). */
static char *expand(const struct detect *d, const char *g)
{
	if (!strchr(g, '$'))
		return NULL;
	struct sbuf b = { 0 };
	for (const char *p = g; *p;) {
		if (strncmp(p, "$WORKSPACE", 10) == 0 && d->workspace) {
			sb_puts(&b, d->workspace);
			p += 10;
		} else if (strncmp(p, "$HOME", 5) == 0 && d->home) {
			sb_puts(&b, d->home);
			p += 5;
		} else {
			sb_put(&b, p++, 1);
		}
	}
	return sb_take(&b);
}

static int cmp_key(const void *k, const void *e)
{
	return strcmp(k, *(char *const *)e);
}

/* Any of c's alternatives matches s, its answer kept by text (stable: s
 * is the event's own string, textmemo_get). */
static bool glob_any(struct detect *d, const struct cond *c, const char *s, bool stable)
{
	if (c->set)
		return bsearch(s, c->set, c->nset, sizeof *c->set, cmp_key) != NULL;
	struct tm_entry *t = c->memo >= 0 ? textmemo_get(d->tm, s, stable) : NULL;
	int known = t ? textmemo_glob(t, (size_t)c->memo) : -1;
	if (known >= 0)
		return known;
	size_t len = strlen(s);
	bool match = false;
	for (size_t i = 0; i < c->nalts && !match; i++)
		match = c->globs ? glob_run(&c->globs[i], s, len) : glob_match(c->alts[i], s);
	if (t)
		textmemo_glob_put(t, (size_t)c->memo, match);
	return match;
}

/* A regex on s within the rule's steps left: a kept answer costs the steps
 * its match took, so the budget runs out where the match would have. */
static bool regex_matches(struct detect *d, const struct cond *c, const char *s, bool stable)
{
	if (d->over) /* out of steps: the rule matches nothing more */
		return false;
	struct tm_entry *t = c->memo >= 0 ? textmemo_get(d->tm, s, stable) : NULL;
	unsigned long steps = 0;
	int known = t ? textmemo_regex(t, (size_t)c->memo, &steps) : -1;
	if (known >= 0 && steps <= d->budget) {
		d->budget -= steps;
		return known;
	}
	unsigned long before = d->budget;
	int r = dre_match(c->re, s, strnlen(s, VALUE_MAX), &d->budget);
	if (r < 0) {
		d->over = c;
		return false;
	}
	if (t)
		textmemo_regex_put(t, (size_t)c->memo, r > 0, before - d->budget);
	return r > 0;
}

static bool scalar_matches(struct detect *d, const struct cond *c, const json_t *v)
{
	char buf[64];
	const char *s = scalar_text(v, buf, sizeof buf);
	if (!s)
		return false;
	bool stable = json_is_string(v);
	if (c->op == COND_REGEX)
		return regex_matches(d, c, s, stable);
	char cut[VALUE_MAX + 1];
	if (stable && json_string_length(v) > VALUE_MAX) {
		memcpy(cut, s, VALUE_MAX);
		cut[VALUE_MAX] = '\0';
		s = cut;
		stable = false;
	}
	return glob_any(d, c, s, stable);
}

/* GLOB, REGEX: the value, or any element of an array, matches. */
static bool value_matches(struct detect *d, const struct cond *c, const json_t *v)
{
	if (!v)
		return false;
	if (json_is_array(v)) {
		size_t i;
		const json_t *x;
		json_array_foreach(v, i, x)
			if (scalar_matches(d, c, x))
				return true;
		return false;
	}
	return scalar_matches(d, c, v);
}

static bool cond_holds(struct detect *d, const struct cond *c)
{
	if (c->op == COND_NEW) {
		struct seen *s = &d->seen[c->seen];
		return s->cur_set && s->cur;
	}
	json_t *tmp = NULL;
	const json_t *v = field_of(d, c->field, &tmp);
	bool r;
	switch (c->op) {
	case COND_GLOB:
	case COND_REGEX:
		r = value_matches(d, c, v);
		break;
	case COND_NOT_GLOB:
		r = !value_matches(d, c, v);
		break;
	case COND_GT:
	case COND_LT:
		r = json_is_number(v) &&
		    (c->op == COND_GT ? json_number_value(v) > c->num : json_number_value(v) < c->num);
		break;
	case COND_PRESENT:
		r = truthy(v);
		break;
	case COND_ABSENT:
		r = !truthy(v);
		break;
	default:
		r = false;
	}
	if (tmp) {
		json_decref(tmp);
		textmemo_event(d->tm); /* its strings' addresses may be taken again */
	}
	return r;
}

static bool step_matches(struct detect *d, const struct step *s)
{
	if (strcmp(s->kind, "*") != 0 && strcmp(s->kind, d->ev_kind) != 0)
		return false;
	for (size_t i = 0; i < s->nconds; i++)
		if (!cond_holds(d, &s->conds[i]))
			return false;
	return true;
}

/* A field's value as text (malloc'd), or NULL when absent (or field NULL). */
static char *text_of(struct detect *d, const char *field)
{
	if (!field)
		return NULL;
	json_t *tmp = NULL;
	const json_t *v = field_of(d, field, &tmp);
	char buf[64];
	const char *s = v ? scalar_text(v, buf, sizeof buf) : NULL;
	char *k = s ? xstrdup(s) : NULL;
	if (!s && v)
		k = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(tmp);
	return k;
}

/* The `same` field's value as text (malloc'd), or NULL when absent. */
static char *key_of(struct detect *d, const struct rule *r) { return text_of(d, r->same); }

static bool key_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* ---- risk and actions ------------------------------------------------------ */

static double decayed(const struct detect *d, double now)
{
	if (d->score <= 0 || !(d->risk.half_life_s > 0) || now <= d->score_t)
		return d->score;
	return d->score * exp2(-(now - d->score_t) / d->risk.half_life_s);
}

double detect_risk_at(const struct detect *d, double now_s) { return decayed(d, now_s); }
unsigned long detect_alerts(const struct detect *d) { return d->alerts; }

static int act(struct detect *d, enum det_action a, const char *reason)
{
	if (a == ACT_WARN) {
		wnote("warning: %s", reason); /* raw-terminal aware (wnote_terminal_raw) */
		return 0;
	}
	if (!d->act)
		return -1;
	int r = d->act(d->act_ctx, a, reason);
	if (r < 0 && a != ACT_KILL) /* a freeze or a question that cannot be had: fail closed */
		r = d->act(d->act_ctx, ACT_KILL, reason);
	return r;
}

/* An alert raised (ours or another check's): the score rises, and the
 * highest threshold newly crossed acts. */
static void raise_risk(struct detect *d, const char *rule, enum severity sev, unsigned long seq,
		       double now)
{
	d->alerts++;
	if (d->nrecent == RECENT_MAX)
		memmove(d->recent, d->recent + 1, (RECENT_MAX - 1) * sizeof *d->recent);
	else
		d->nrecent++;
	struct recent *rc = &d->recent[d->nrecent - 1];
	snprintf(rc->rule, sizeof rc->rule, "%s", rule);
	rc->sev = sev;
	rc->seq = seq;

	/* the same rule again within a minute: logged, the score unchanged
	 * (a tool retrying one thing is one signal, not many) */
	for (size_t i = 0; i < d->nraised; i++)
		if (strcmp(d->raised[i].rule, rule) == 0) {
			if (now - d->raised[i].t < RAISE_EVERY_S)
				return;
			d->raised[i] = d->raised[--d->nraised];
			break;
		}
	if (d->nraised == RAISED_MAX) {
		size_t old = 0;
		for (size_t i = 1; i < d->nraised; i++)
			if (d->raised[i].t < d->raised[old].t)
				old = i;
		d->raised[old] = d->raised[--d->nraised];
	}
	snprintf(d->raised[d->nraised].rule, sizeof d->raised[0].rule, "%s", rule);
	d->raised[d->nraised++].t = now;
	const double th[ACT_KILL + 1] = { 0, d->risk.warn, d->risk.ask, d->risk.freeze, d->risk.kill };
	double was = decayed(d, now);
	/* fallen well below since (a fifth under it: a score that decays
	 * across the line and back does not act twice): may act again */
	for (int a = ACT_WARN; a <= ACT_KILL; a++)
		if (th[a] > 0 && was < th[a] * 0.8)
			d->crossed[a] = false;
	d->score = was + weights[sev];
	d->score_t = now;
	if (d->score > d->peak)
		d->peak = d->score;
	int top = ACT_NONE;
	for (int a = ACT_WARN; a <= ACT_KILL; a++)
		if (th[a] > 0 && d->score >= th[a] && !d->crossed[a]) {
			d->crossed[a] = true;
			top = a;
		}
	if (top == ACT_NONE)
		return;
	if (d->log) {
		d->emitting = true;
		audit_emit_event(d->log, ev_risk(&(struct ev_risk){ .score = round(d->score * 10) / 10,
			.threshold = th[top], .level = det_action_name((enum det_action)top), .rule = rule }),
			NULL);
		d->emitting = false;
	}
	char why[300];
	snprintf(why, sizeof why, "risk score %.0f reached the %s threshold %.0f (last: %s)", d->score,
		 det_action_name((enum det_action)top), th[top], rule);
	act(d, (enum det_action)top, why);
}

/* The alerts of rule r held back since its last summary, counted in an
 * alert of the rule when due (recbound.h), or at once when end. */
static void alert_summaries(struct detect *d, const struct rule *r, bool end, double now)
{
	int cls;
	unsigned long count;
	struct recbound *b = &d->ab[r - d->rs.rules];
	while (d->log && recbound_due(b, end, now * 1000.0, &cls, &count)) {
		d->emitting = true;
		audit_emit_event(d->log, ev_alert(&(struct ev_alert){ .rule = r->name,
			.severity = severity_name(r->sev), .detail = r->about, .count = count,
			.summary = "alerts of this rule past the record's bound (100 at once, then one "
				   "every 10 seconds, 1000 a session), counted, not listed one by one; "
				   "the risk score and the rule's action counted each" }), NULL);
		d->emitting = false;
	}
}

static void fire(struct detect *d, const struct rule *r, const unsigned long *links, size_t nlinks,
		 unsigned long seq, double now)
{
	alert_summaries(d, r, false, now);
	if (d->log && recbound_admit(&d->ab[r - d->rs.rules], 0, now * 1000.0)) {
		json_t *l = json_array();
		for (size_t i = 0; i < nlinks && i < LINKS_MAX; i++)
			json_array_append_new(l, json_integer((json_int_t)links[i]));
		d->emitting = true;
		audit_emit_event(d->log, ev_alert(&(struct ev_alert){ .rule = r->name,
			.severity = severity_name(r->sev), .links = l, .detail = r->about,
			.action = r->action != ACT_NONE ? det_action_name(r->action) : NULL }), NULL);
		d->emitting = false;
		json_decref(l);
	}
	raise_risk(d, r->name, r->sev, seq, now);
	if (r->action != ACT_NONE) {
		char why[300];
		snprintf(why, sizeof why, "rule %s (%s)", r->name, severity_name(r->sev));
		act(d, r->action, why);
	}
}

void detect_flush(struct detect *d)
{
	for (size_t i = 0; d && i < d->rs.nrules; i++)
		alert_summaries(d, &d->rs.rules[i], true, detect_now());
}

/* A rule whose regular expression ran out of its steps on this event: off
 * for the rest of the session, said in an alert and on stderr. The alert is
 * high: what the agent runs turned a rule off. */
static void rule_bounded(struct detect *d, size_t i, unsigned long seq, double now)
{
	struct rule *r = &d->rs.rules[i];
	const struct cond *c = d->over;
	d->over = NULL;
	r->disabled = true;
	char detail[400];
	snprintf(detail, sizeof detail, "rule %s (%s): %s~%.100s took more than %lu steps on one "
		 "event (a pattern of %zu states); the rule is off for the rest of the session", r->name,
		 r->origin ? r->origin : "?", c->field, c->text, REGEX_BUDGET, dre_states(c->re));
	if (d->log) {
		json_t *l = json_array();
		json_array_append_new(l, json_integer((json_int_t)seq));
		d->emitting = true;
		audit_emit_event(d->log, ev_alert(&(struct ev_alert){ .rule = DETECT_RULE_BOUNDED,
			.severity = severity_name(SEV_HIGH), .links = l, .detail = detail,
			.action = "rule disabled" }), NULL);
		d->emitting = false;
		json_decref(l);
	}
	wnote("warning: %s", detail);
	raise_risk(d, DETECT_RULE_BOUNDED, SEV_HIGH, seq, now);
}

/* ---- matching ---------------------------------------------------------------- */

static void partial_drop(struct rstate *st, size_t i)
{
	free(st->p[i].key);
	for (size_t k = 0; k < ARRAY_LEN(st->p[i].dvals); k++)
		free(st->p[i].dvals[k]);
	st->p[i] = st->p[--st->np];
}

/* `differ`: v is none of the values the partial's steps had. */
static bool differs(const struct partial *p, const char *v)
{
	for (unsigned k = 0; k < p->stage && k < ARRAY_LEN(p->dvals); k++)
		if (p->dvals[k] && strcmp(p->dvals[k], v) == 0)
			return false;
	return true;
}

/* Does the current event take partial p from step k on? */
static bool advances(const struct detect *d, const struct rule *r, const struct partial *p, size_t k,
		     const char *key, const char *dval, long pid)
{
	return p->stage == k && key_eq(p->key, key) &&
	       (!r->tree || (pid > 0 && pid_below(d->pids, pid, p->root))) &&
	       (!dval || differs(p, dval));
}

static unsigned run_sequence(struct detect *d, const struct rule *r, struct rstate *st,
			     unsigned long seq, double now)
{
	unsigned fired = 0;
	for (size_t i = 0; i < st->np;)
		if (now - st->p[i].t0 > r->within_s)
			partial_drop(st, i);
		else
			i++;
	_cleanup_free_ char *key = NULL;
	_cleanup_free_ char *dval = NULL;
	bool have_key = false;
	for (size_t k = r->nsteps; k-- > 1;) {
		if (!step_matches(d, &r->steps[k]))
			continue;
		if (!have_key)
			key = key_of(d, r), dval = text_of(d, r->differ), have_key = true;
		if (r->differ && !dval)
			break; /* nothing to tell it apart by */
		long pid = r->tree ? event_pid(d->ev) : -1;
		for (size_t i = 0; i < st->np;) {
			struct partial *p = &st->p[i];
			if (!advances(d, r, p, k, key, dval, pid)) {
				i++;
				continue;
			}
			if (dval)
				p->dvals[p->stage] = xstrdup(dval);
			p->seqs[p->stage++] = seq;
			if (p->stage < r->nsteps) {
				i++;
				continue;
			}
			if (!fired) /* once, however many partials this event completes */
				fire(d, r, p->seqs, r->nsteps, seq, now), fired = 1;
			partial_drop(st, i);
		}
	}
	if (step_matches(d, &r->steps[0])) {
		if (!have_key)
			key = key_of(d, r), dval = text_of(d, r->differ);
		if ((r->same && !key) || (r->differ && !dval))
			return fired;
		long root = r->tree ? event_pid(d->ev) : -1;
		if (r->tree && root <= 0)
			return fired; /* no process to follow */
		if (!st->p)
			st->p = xcalloc(PARTIALS_MAX, sizeof *st->p);
		if (st->np == PARTIALS_MAX)
			partial_drop(st, 0); /* the oldest (drop moves the last into its place) */
		st->p[st->np++] = (struct partial){ .stage = 1, .t0 = now, .seqs = { seq },
						    .key = steal_ptr(&key), .root = root,
						    .dvals = { steal_ptr(&dval) } };
	}
	return fired;
}

static void hit_free(struct hit *h)
{
	free(h->key);
	free(h->dval);
}

/* The hits of key that count (with `differ`, the first of each value) and
 * their seqs in links (LINKS_MAX at most). */
static size_t count_hits(const struct rule *r, const struct rstate *st, const char *key,
			 unsigned long *links, size_t *nl)
{
	size_t n = 0;
	*nl = 0;
	for (size_t i = 0; i < st->nh; i++) {
		if (!key_eq(st->h[i].key, key))
			continue;
		bool again = false;
		for (size_t j = 0; r->differ && j < i && !again; j++)
			again = key_eq(st->h[j].key, key) && key_eq(st->h[j].dval, st->h[i].dval);
		if (again)
			continue;
		n++;
		if (*nl < LINKS_MAX)
			links[(*nl)++] = st->h[i].seq;
	}
	return n;
}

static unsigned run_count(struct detect *d, const struct rule *r, struct rstate *st,
			  unsigned long seq, double now)
{
	if (!step_matches(d, &r->steps[0]))
		return 0;
	_cleanup_free_ char *key = key_of(d, r);
	_cleanup_free_ char *dval = text_of(d, r->differ);
	if ((r->same && !key) || (r->differ && !dval))
		return 0;
	size_t w = 0;
	for (size_t i = 0; i < st->nh; i++)
		if (now - st->h[i].t <= r->within_s)
			st->h[w++] = st->h[i];
		else
			hit_free(&st->h[i]);
	st->nh = w;
	if (!st->h)
		st->h = xcalloc(HITS_MAX, sizeof *st->h);
	if (st->nh == HITS_MAX) {
		hit_free(&st->h[0]);
		memmove(st->h, st->h + 1, (HITS_MAX - 1) * sizeof *st->h);
		st->nh--;
	}
	st->h[st->nh++] = (struct hit){ .t = now, .seq = seq, .key = key ? xstrdup(key) : NULL,
					.dval = dval ? xstrdup(dval) : NULL };
	unsigned long links[LINKS_MAX];
	size_t nl;
	if (count_hits(r, st, key, links, &nl) < r->count)
		return 0;
	fire(d, r, links, nl, seq, now);
	/* the counted ones are spent */
	w = 0;
	for (size_t i = 0; i < st->nh; i++)
		if (key_eq(st->h[i].key, key))
			hit_free(&st->h[i]);
		else
			st->h[w++] = st->h[i];
	st->nh = w;
	return 1;
}

/* The severity another check's alert is rated: a user's `rate` line that
 * matches its rule, else its own severity, else a built-in `rate` line. */
static bool rated(const struct detect *d, const json_t *fields, enum severity *sev)
{
	const char *rule = json_string_value(json_object_get(fields, "rule"));
	for (size_t i = 0; rule && i < d->rs.nrates; i++)
		if (!d->rs.rates[i].builtin && glob_match(d->rs.rates[i].glob, rule))
			return *sev = d->rs.rates[i].sev, true;
	const char *s = json_string_value(json_object_get(fields, "severity"));
	for (int i = 0; s && i < SEV_COUNT; i++)
		if (strcmp(s, severity_name((enum severity)i)) == 0)
			return *sev = (enum severity)i, true;
	for (size_t i = 0; rule && i < d->rs.nrates; i++)
		if (d->rs.rates[i].builtin && glob_match(d->rs.rates[i].glob, rule))
			return *sev = d->rs.rates[i].sev, true;
	return false;
}

/* The rules an event of kind may match (made at its first event), or
 * NULL: past KINDS_MAX kinds, every rule is tried. */
static const struct kind_rules *rules_of_kind(struct detect *d, const char *kind)
{
	for (size_t i = 0; i < d->nkinds; i++)
		if (strcmp(d->kinds[i].kind, kind) == 0)
			return &d->kinds[i];
	if (d->nkinds == KINDS_MAX)
		return NULL;
	struct kind_rules *k = &d->kinds[d->nkinds++];
	*k = (struct kind_rules){ .kind = xstrdup(kind), .rule = xcalloc(d->rs.nrules + 1, sizeof *k->rule) };
	for (size_t i = 0; i < d->rs.nrules; i++)
		for (size_t j = 0; j < d->rs.rules[i].nsteps; j++) {
			const char *sk = d->rs.rules[i].steps[j].kind;
			if (strcmp(sk, "*") == 0 || strcmp(sk, kind) == 0) {
				k->rule[k->n++] = i;
				break;
			}
		}
	return k;
}

unsigned detect_feed(struct detect *d, const char *kind, const json_t *fields, unsigned long seq,
		     double now)
{
	static const json_t *empty;
	if (!empty)
		empty = json_object();
	d->ev = fields ? fields : empty;
	d->ev_kind = kind;
	textmemo_event(d->tm);
	derive_note(d->dv, kind, d->ev); /* first: a derived field then is what the rules see */
	for (size_t i = 0; i < d->nseen; i++) {
		struct seen *s = &d->seen[i];
		s->cur_set = false;
		if (strcmp(s->kind, kind) != 0)
			continue;
		json_t *tmp = NULL; /* a derived field (`new:dest`) too */
		const json_t *v = field_of(d, s->field, &tmp);
		char buf[64];
		const char *t = v ? scalar_text(v, buf, sizeof buf) : NULL;
		if (t) {
			s->cur = strset_add(&s->set, t, SEEN_MAX);
			s->cur_set = true;
		}
		json_decref(tmp);
	}
	if (d->pids && strcmp(kind, "exec") == 0) {
		const json_t *pp = json_object_get(d->ev, "ppid");
		if (json_is_integer(pp))
			pid_note(d->pids, event_pid(d->ev), (long)json_integer_value(pp));
	}
	if (strcmp(kind, "alert") == 0) {
		enum severity sev;
		if (rated(d, d->ev, &sev))
			raise_risk(d, json_string_value(json_object_get(d->ev, "rule")) ?: "?", sev, seq, now);
	}
	unsigned fired = 0;
	const struct kind_rules *kr = rules_of_kind(d, kind);
	for (size_t n = 0; n < (kr ? kr->n : d->rs.nrules); n++) {
		size_t i = kr ? kr->rule[n] : n;
		const struct rule *r = &d->rs.rules[i];
		if (r->disabled)
			continue;
		d->budget = REGEX_BUDGET;
		if (r->nsteps > 1)
			fired += run_sequence(d, r, &d->st[i], seq, now);
		else if (r->count > 1)
			fired += run_count(d, r, &d->st[i], seq, now);
		else if (step_matches(d, &r->steps[0])) {
			fire(d, r, &seq, 1, seq, now);
			fired++;
		}
		if (d->over)
			rule_bounded(d, i, seq, now);
	}
	for (size_t i = 0; i < d->nderived; i++)
		json_decref(d->derived[i].v);
	d->nderived = 0;
	d->ev = NULL;
	return fired;
}

static int on_event(void *ctx, const struct event *ev, struct werr *e)
{
	(void)e;
	struct detect *d = ctx;
	if (!d->emitting)
		detect_feed(d, ev->kind, ev->fields, ev->seq, detect_now());
	return 0;
}

/* ---- set-up ---------------------------------------------------------------- */

struct detect *detect_new(struct ruleset *rs, const struct detect_env *env,
			  const struct detect_risk *risk)
{
	struct detect *d = xcalloc(1, sizeof *d);
	d->rs = *rs;
	*rs = (struct ruleset){ 0 };
	d->workspace = env && env->workspace ? xstrdup(env->workspace) : NULL;
	d->home = env && env->home ? xstrdup(env->home) : NULL;
	d->risk = risk ? *risk : DETECT_RISK_DEFAULT;
	d->st = xcalloc(d->rs.nrules + 1, sizeof *d->st);
	d->ab = xcalloc(d->rs.nrules + 1, sizeof *d->ab);
	for (size_t i = 0; i < d->rs.nrules; i++)
		d->ab[i].c[0] = recbound_class(ALERT_RATE, ALERT_BURST, ALERT_CAP);
	d->dv = derive_new(d->workspace);
	d->tm = textmemo_new();
	size_t globs = 0, regexes = 0;
	for (size_t i = 0; i < d->rs.nrules && !d->pids; i++)
		if (d->rs.rules[i].tree)
			d->pids = xcalloc(1, sizeof *d->pids);
	for (size_t i = 0; i < d->rs.nrules; i++)
		for (size_t k = 0; k < d->rs.rules[i].nsteps; k++) {
			struct step *s = &d->rs.rules[i].steps[k];
			for (size_t c = 0; c < s->nconds; c++) {
				struct cond *cd = &s->conds[c];
				if (cd->op == COND_NEW)
					cd->seen = seen_find(d, s->kind, cd->field);
				if (cd->op == COND_REGEX)
					cd->memo = regexes < textmemo_regexes() ? (int)regexes++ : -1;
				else
					cd->memo = cd->nalts && globs < textmemo_globs() ? (int)globs++ : -1;
				if (cd->nalts && !cd->globs)
					cd->globs = xcalloc(cd->nalts, sizeof *cd->globs);
				for (size_t a = 0; a < cd->nalts; a++) {
					char *x = expand(d, cd->alts[a]);
					if (x) {
						free(cd->alts[a]);
						cd->alts[a] = x;
					}
					glob_compile(&cd->globs[a], cd->alts[a]);
				}
			}
		}
	return d;
}

void detect_free(struct detect *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->rs.nrules; i++) {
		while (d->st[i].np)
			partial_drop(&d->st[i], 0);
		for (size_t k = 0; k < d->st[i].nh; k++)
			hit_free(&d->st[i].h[k]);
		free(d->st[i].p);
		free(d->st[i].h);
	}
	free(d->st);
	free(d->ab);
	textmemo_free(d->tm);
	for (size_t i = 0; i < d->nkinds; i++) {
		free(d->kinds[i].kind);
		free(d->kinds[i].rule);
	}
	free(d->pids);
	derive_free(d->dv);
	for (size_t i = 0; i < d->nseen; i++) {
		strset_free(&d->seen[i].set);
		free(d->seen[i].kind);
		free(d->seen[i].field);
	}
	free(d->seen);
	drules_free(&d->rs);
	free(d->workspace);
	free(d->home);
	free(d);
}

void detect_freep(struct detect **d)
{
	detect_free(*d);
}

/* An alert of another check's, rated as the risk score counts it. */
static const char *rate_alert(void *ctx, const json_t *fields)
{
	enum severity sev;
	return rated(ctx, fields, &sev) ? severity_name(sev) : NULL;
}

void detect_attach(struct detect *d, struct audit *log)
{
	d->log = log;
	audit_subscribe(log, on_event, d);
	audit_rate_alerts(log, rate_alert, d);
}

void detect_set_actor(struct detect *d, detect_act_fn fn, void *ctx)
{
	d->act = fn;
	d->act_ctx = ctx;
}

double detect_risk_peak(const struct detect *d)
{
	return round(d->peak * 10) / 10;
}

json_t *detect_status(void *ctx)
{
	struct detect *d = ctx;
	json_t *a = json_array();
	for (size_t i = 0; i < d->nrecent; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:I}", "rule", d->recent[i].rule,
						   "severity", severity_name(d->recent[i].sev), "seq",
						   (json_int_t)d->recent[i].seq));
	return json_pack("{s:f, s:I, s:o}", "risk", round(decayed(d, detect_now()) * 10) / 10,
			 "alerts_total", (json_int_t)d->alerts, "alerts", a);
}
