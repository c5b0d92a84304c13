/* cisummary.h - `warden run --ci`: what a session did, kept from its event
 * stream and written at the end as Markdown for a CI job's page (GitHub's
 * $GITHUB_STEP_SUMMARY) and its artifacts: the refusals, the alerts and
 * the risk peak, the destinations, the execs by program (see cisummary.c). */
#pragma once
#include <stdio.h>

#include "../audit/audit.h"

struct cisummary;

struct cisummary *cisummary_new(void);
void cisummary_free(struct cisummary *c);
static inline void cisummary_freep(struct cisummary **c) { cisummary_free(*c); }

/* Subscribe c to the session's events (and note the log's path). */
void cisummary_attach(struct cisummary *c, struct audit *a);

/* The log's path and the session's id, once attached (else NULL); the
 * workspace session.start named (or NULL). */
const char *cisummary_log(const struct cisummary *c);
const char *cisummary_id(const struct cisummary *c);
const char *cisummary_workspace(const struct cisummary *c);

/* The artifacts directory the session checked and made (layout.h), or
 * NULL: the session stopped before it (or refused it), and nothing may be
 * written there. */
void cisummary_set_artifacts(struct cisummary *c, const char *dir);
const char *cisummary_artifacts(const struct cisummary *c);

/* The highest severity of the session's alerts: 0 low .. 3 critical; -1
 * when there was none. */
int cisummary_max_severity(const struct cisummary *c);
/* The risk score's peak, from the detector at the session's end (the
 * `risk` events mark only the thresholds it crossed). */
void cisummary_set_risk_peak(struct cisummary *c, double peak);
/* low, medium, high, critical: 0..3; -1 for another word. */
int cisummary_severity(const char *word);

/* What the end adds to the summary (each may be NULL). */
struct cisummary_end {
	int status;               /* warden's exit status */
	int command_status;       /* the command's own (before --fail-on) */
	const char *error;        /* warden's own error, when it failed (or NULL) */
	const char *fail_on;      /* --fail-on SEVERITY */
	bool failed_on;           /* an alert at or above it */
	bool not_evaluated;       /* warden failed: --fail-on not applied */
	const char *verify;       /* `warden log verify`'s line */
	bool verified;
	const char *changes;      /* `warden diff SESSION --list`: the session's changes */
	const char *diffstat;     /* `git diff --stat` of the workspace */
	const char *artifacts;    /* the directory */
};

/* The Markdown summary to f. */
void cisummary_write(const struct cisummary *c, const struct cisummary_end *x, FILE *f);
