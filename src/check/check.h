/* check.h - `warden check`: run the probe matrix inside a sandbox (and, with
 * --compare, outside it) against fresh bait, verify write probes on the
 * host, and report whether the boundary held. */
#pragma once
#include <stdbool.h>

struct check_opts {
	const char *profile; /* NULL: the built-in default */
	bool json;           /* one JSON document instead of the table */
	bool compare;        /* run the probes outside the sandbox too */
};

/* Returns the exit status: 0 every probe held, 1 one did not, 125 warden
 * failed (the message is printed). */
int check_run(const struct check_opts *o);
