/* emit.h - an event from a kind and its fields as they are, unchecked
 * against events.h: private to the audit layer (log.c, which
 * audit_emit_event calls) and its unit tests. Everything else emits what a
 * constructor of events.h made, through audit_emit_event (audit.h), so that
 * each kind has one definition. */
#pragma once
#include <jansson.h>

#include "../common/err.h"

struct audit;

/* One event from a kind and its fields (stolen, may be NULL): the writer adds
 * v, ts, session, seq, event in front and prev at the end. Refused, without
 * using a seq: fields that are not an object or use a header key. */
int audit_emit(struct audit *a, const char *event, json_t *fields, struct werr *e);
