/* netbound.h - the record's bound on refused connections out (recbound.h),
 * one for the direct ones (src/supervisor/notify.c) and one for the
 * proxy's (src/net/proxy_conn.c): to a destination new to the session
 * (class 0: a burst of 1000, then 20 a second, 20000 a session) each is
 * recorded while that bound allows, so that the record names what was
 * tried and the detector's `new:dest` sees it; a retry of one already
 * there (class 1: 100, then 10 a second, 5000) at a lower rate; the rest
 * counted in `net` events with method "summary". The destinations are
 * remembered up to NETBOUND_DESTS_MAX, past which any other is new. */
#pragma once
#include <stdbool.h>

#include "../common/strset.h"
#include "audit.h"
#include "recbound.h"

#define NETBOUND_DESTS_MAX 32768

struct netbound {
	struct recbound b;
	struct strset dests; /* the destinations refused so far */
};

void netbound_init(struct netbound *nb);

/* May the refused connection to dest ("ADDRESS:PORT", "HOST:PORT", a unix
 * socket's path) be recorded one by one at now_ms (CLOCK_MONOTONIC
 * milliseconds)? Else it is counted. The summaries due are written to log
 * first. */
bool netbound_admit(struct netbound *nb, struct audit *log, const char *dest, double now_ms);

/* The summaries of what was counted, written to log when due, or all of
 * them when end. */
void netbound_summaries(struct netbound *nb, struct audit *log, bool end, double now_ms);

/* The last summaries written, and the destinations freed. */
void netbound_end(struct netbound *nb, struct audit *log);
