/* recbound.c - the record's bound on one sort of event (recbound.h): a
 * token bucket and a cap for each of two classes, and the summaries'
 * clock. */
#include "recbound.h"

#define SUMMARY_EVERY_MS 10000.0

struct recbound_class recbound_class(double rate, double burst, unsigned long cap)
{
	return (struct recbound_class){ .rate = rate, .burst = burst, .cap = cap, .tokens = burst,
					.last_ms = -1.0 };
}

bool recbound_admit(struct recbound *b, int cls, double now_ms)
{
	struct recbound_class *c = &b->c[cls ? 1 : 0];
	if (b->summary_ms == 0)
		b->summary_ms = now_ms; /* the summaries' clock starts with the first */
	if (c->rate > 0) {
		if (c->last_ms >= 0 && now_ms > c->last_ms)
			c->tokens += (now_ms - c->last_ms) / 1000.0 * c->rate;
		if (c->tokens > c->burst)
			c->tokens = c->burst;
		c->last_ms = now_ms;
	}
	if (c->admitted < c->cap && (c->rate <= 0 || c->tokens >= 1.0)) {
		if (c->rate > 0)
			c->tokens -= 1.0;
		c->admitted++;
		return true;
	}
	c->held++;
	return false;
}

bool recbound_due(struct recbound *b, bool end, double now_ms, int *cls, unsigned long *count)
{
	if (!b->c[0].held && !b->c[1].held)
		return false;
	if (!end && now_ms - b->summary_ms < SUMMARY_EVERY_MS)
		return false;
	*cls = b->c[0].held ? 0 : 1;
	*count = b->c[*cls].held;
	b->c[*cls].held = 0;
	b->summary_ms = now_ms;
	return true;
}
