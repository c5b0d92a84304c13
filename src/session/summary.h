/* summary.h - what was refused during a session, told once on stderr at its
 * end (see summary.c). */
#pragma once
#include <stdio.h>

#include "../audit/audit.h"

/* At most this many refusals are listed; the rest are counted. */
#define SUMMARY_LINES 10
/* Distinct refusals kept (counted once each); further ones are counted only. */
#define SUMMARY_KEEP 64

struct refusal {
	char *key;               /* what was refused, as shown: host:port, ... */
	char *why;               /* the reason, and the flag that would allow it */
	unsigned long times;
};

/* The connections to one published port (src/supervisor/publish.h). */
struct inbound_count {
	unsigned host_port, port;
	unsigned long conns, failed; /* failed: reached nothing inside */
	char capped[120];            /* the alert publish.connection-cap's action, or "" */
};

/* An allowed destination that could not be reached (the proxy's 502: it
 * did not answer, or its name does not resolve). */
struct unreached {
	char key[280];           /* host:port */
	char why[160];
	unsigned long times;
};

struct summary {
	struct inbound_count inbound[16]; /* by host port, as they come */
	size_t ninbound;
	struct unreached unreached[4];    /* the first few, as they come */
	size_t nunreached;
	unsigned long unreached_more;
	struct refusal *v;
	size_t n, cap;
	unsigned long unlisted;  /* refusals counted only (past SUMMARY_KEEP, or
				  * syscalls the log only counted) */
	long long exec_pid;      /* the last refused exec's process: a shell's
				  * PATH search tries one program more than once */
};

/* Subscribe s to the session's events: it keeps each refused thing once. */
void summary_attach(struct summary *s, struct audit *a);
/* Print the connections to published ports, the allowed destinations that
 * could not be reached, then the refusals (nothing when there were none); log names the audit log where the details
 * are, may be NULL. */
void summary_print(const struct summary *s, const char *log, FILE *f);
void summary_free(struct summary *s);
