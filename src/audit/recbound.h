/* recbound.h - the bound on how many events of one sort the record takes
 * one by one, for those an agent can make without end (a loop of file
 * writes, of refused connections, the alerts they raise): events of two
 * classes, each with a token bucket (`rate` a second, a burst of `burst`;
 * rate 0: no bucket) and a cap a session; those past it are counted, and
 * the caller writes a summary event with the count (recbound_due): every
 * 10 seconds while it lasts, and at the end. Used by the file events
 * (src/supervisor/filebound.h, which tells repeats from new paths past
 * it), the refused direct connections
 * and the proxy's (netbound.h) and the detector's alerts (src/detect/). */
#pragma once
#include <stdbool.h>

struct recbound_class {
	double rate, burst;     /* rate 0: no bucket, the cap alone */
	unsigned long cap;
	double tokens, last_ms;
	unsigned long admitted; /* recorded one by one */
	unsigned long held;     /* counted since the last summary */
};

struct recbound {
	struct recbound_class c[2];
	double summary_ms;      /* the last summary's time (the first event's at first) */
};

/* A class: a bucket of `rate` a second, a burst of `burst`, a cap a session. */
struct recbound_class recbound_class(double rate, double burst, unsigned long cap);

/* May an event of class cls (0 or 1) be recorded one by one at now_ms
 * (CLOCK_MONOTONIC milliseconds)? Else it is counted. */
bool recbound_admit(struct recbound *b, int cls, double now_ms);

/* A summary due (at least 10 s since the last one, or at once when `end`):
 * true with *cls and *count (how many of that class were counted since
 * the last one), that count reset; call until false. */
bool recbound_due(struct recbound *b, bool end, double now_ms, int *cls, unsigned long *count);
