/* supervisor.h - start the sandbox and stay with it until it ends. */
#pragma once
#include <jansson.h>

#include "../audit/audit.h"
#include "../sandbox/sandbox.h"

/* Create the sandbox (clone into new namespaces), map its identity, wait for
 * init to report every layer built, relay the terminal and signals, and
 * return the command's exit status in *status, and what the exec pipeline
 * counted in *exec_stats (execs_stats; may be NULL). -1 with e filled when
 * the sandbox could not be built (status then meaningless). */
int supervisor_run(struct sandbox_spec *s, struct audit *log, int *status, json_t **exec_stats,
		   struct werr *e);
