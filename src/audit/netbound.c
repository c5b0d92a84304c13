/* netbound.c - the record's bound on refused connections out
 * (netbound.h): recbound's two classes, new destinations and retries. */
#include "netbound.h"

#include "events.h"

void netbound_init(struct netbound *nb)
{
	*nb = (struct netbound){ 0 };
	nb->b.c[0] = recbound_class(20.0, 1000.0, 20000UL);
	nb->b.c[1] = recbound_class(10.0, 100.0, 5000UL);
}

static const char *words(int cls)
{
	return cls == 0 ? "refused connections out to destinations not on the record before, past "
			  "the record's bound (1000 at once, then 20 a second, 20000 a session), "
			  "counted, not listed one by one"
			: "refused connections out to destinations already on the record, past the "
			  "record's bound (100 at once, then 10 a second, 5000 a session), counted, "
			  "not listed one by one";
}

void netbound_summaries(struct netbound *nb, struct audit *log, bool end, double now_ms)
{
	int cls;
	unsigned long count;
	while (recbound_due(&nb->b, end, now_ms, &cls, &count))
		audit_emit_event(log, ev_net_summary(&(struct ev_net_summary){
			.count = count, .new_dests = cls == 0, .summary = words(cls) }), NULL);
}

bool netbound_admit(struct netbound *nb, struct audit *log, const char *dest, double now_ms)
{
	netbound_summaries(nb, log, false, now_ms);
	bool fresh = strset_add(&nb->dests, dest, NETBOUND_DESTS_MAX);
	return recbound_admit(&nb->b, fresh ? 0 : 1, now_ms);
}

void netbound_end(struct netbound *nb, struct audit *log)
{
	netbound_summaries(nb, log, true, 0);
	strset_free(&nb->dests);
}
