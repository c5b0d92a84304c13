/* detect.h - the detector: the rules (ruleset.h) run over a session's event
 * stream, as one more subscriber of it (audit.h), on the supervisor's event
 * loop, in the order the events happen. A rule that fires is an `alert`
 * event (rule, severity, the seqs of the events it links, what it means);
 * alerts raised by warden's other checks are rated by the `rate` lines.
 *
 * The risk score: each alert adds its severity's weight (low 2, medium 10,
 * high 25, critical 100), a rule at most once a minute (a tool retrying one
 * thing is one signal); the score halves every `risk half-life` (default
 * 10 minutes). The default thresholds: warn 10, freeze 60, kill 100: one
 * critical alert (a canary) kills at once, three different high ones
 * freeze the session. Crossing a threshold acts once (again only after the score
 * fell a fifth below it): warn (a line on stderr), ask (freeze, then a question;
 * allowed: resume, else kill), freeze (every process stopped, until `warden
 * resume` or `warden kill`), kill. The highest threshold crossed acts; a
 * rule's own `action` acts at once whatever the score. Each crossing is a
 * `risk` event.
 *
 * Fail closed: the detector runs inside the emission of each event, so it
 * never falls behind the stream; it cannot fail short of memory, and then
 * warden ends (xmalloc), taking the sandbox with it (PR_SET_PDEATHSIG). An
 * action that cannot be carried out (a freeze refused) falls through to
 * kill.
 *
 * Bounded: a rule's regular expressions (dre.h, linear in the value) get
 * 250,000 steps per event, 1-5 ms; a rule past them is off for the
 * rest of the session, and says so in an alert (DETECT_RULE_BOUNDED, high)
 * and on stderr. So no value the agent puts in an event holds the event
 * loop (a freeze, a kill, `warden status`) for longer. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../audit/audit.h"
#include "../policy/policy.h"
#include "ruleset.h"

struct detect;

/* The alert of a rule turned off for its regex's cost. */
#define DETECT_RULE_BOUNDED "detect.rule-bounded"

/* What $WORKSPACE and $HOME stand for in the rules' globs. */
struct detect_env {
	const char *workspace;
	const char *home;
};

/* The thresholds and decay (policy.h's `risk` lines). */
struct detect_risk {
	double warn, ask, freeze, kill; /* 0: off */
	double half_life_s;
};
#define DETECT_RISK_DEFAULT ((struct detect_risk){ .warn = 10, .ask = 0, .freeze = 60, .kill = 100, \
						   .half_life_s = 600 })

/* What the detector asks the session to do (the supervisor carries it out:
 * src/supervisor/freeze.h); reason in words. 0 done, -1 not done. */
typedef int (*detect_act_fn)(void *ctx, enum det_action a, const char *reason);

/* A detector over rs (taken). */
struct detect *detect_new(struct ruleset *rs, const struct detect_env *env,
			  const struct detect_risk *risk);
void detect_free(struct detect *d);
void detect_freep(struct detect **d);

/* Subscribe to log's stream; alerts and risk events go to it; an alert
 * of another check's gets the severity the `rate` lines give it
 * (audit_rate_alerts). */
void detect_attach(struct detect *d, struct audit *log);
void detect_set_actor(struct detect *d, detect_act_fn fn, void *ctx);

/* One event, at now_s (CLOCK_MONOTONIC seconds): what the subscriber does
 * with each; also for tests and the benchmark (no log: alerts counted only).
 * The number of rules that fired. */
unsigned detect_feed(struct detect *d, const char *kind, const json_t *fields, unsigned long seq,
		     double now_s);

/* The summaries of the alerts each rule had past the record's bound
 * (recbound.h) and not yet counted in one, written now (the session's
 * end, before session.end). */
void detect_flush(struct detect *d);

/* The score at now_s; the alerts raised so far (its own and rated ones). */
double detect_risk_at(const struct detect *d, double now_s);
unsigned long detect_alerts(const struct detect *d);

/* For `warden status`: {"risk": N, "alerts": [{"rule","severity","seq"}...]}
 * (the last five; a new reference). */
json_t *detect_status(void *detect);
/* The highest risk score the session reached (decayed between alerts, as
 * the thresholds see it). */
double detect_risk_peak(const struct detect *d);

/* A monotonic clock in seconds. */
double detect_now(void);
