/* ci_end.h - what `warden run --ci` does once the session has ended: the
 * artifacts, the summary, --fail-on (see ci_end.c). */
#pragma once
#include "../session/cisummary.h"

/* The exit status of a session with an alert at or above --fail-on. */
#define EXIT_FAIL_ON 123

struct ci_opts {
	const char *artifacts;   /* --artifacts DIR, or NULL: ci_artifacts_dir's */
	const char *fail_on;     /* --fail-on SEVERITY, or NULL */
};

/* --artifacts DIR, else $RUNNER_TEMP/warden-artifacts when RUNNER_TEMP is
 * an absolute path, else ./warden-artifacts. */
char *ci_artifacts_dir(const char *opt);

/* Fill the artifacts directory and write the summary for the session c
 * saw, which ended with status (error: warden's own, when it failed, or
 * NULL); the exit status to give: EXIT_FAIL_ON for --fail-on, EXIT_WARDEN
 * for a session that succeeded but whose artifacts could not all be
 * written (said, with what could not). */
int ci_end(const struct cisummary *c, const struct ci_opts *o, int status, const char *error);
