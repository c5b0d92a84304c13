/* filebound.h - the bound on how many `file` events a session writes
 * (filebound.c): a rate and a cap a session for allowed operations, a cap
 * for refused ones; past them an operation on a path not yet on the record
 * (its access, op, decision and paths) is still written, while the record
 * keeps no more than a bound of such keys in memory, and only the repeats
 * (and the new ones past that bound) are counted, by kind, and said by a
 * `file` event with op "summary". */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../audit/events.h"
#include "../audit/recbound.h"

/* The kinds a summary counts: the ops, and "read" for a read. */
#define FILEBOUND_KINDS 14

/* What the bound held back of one decision since its last summary. */
struct filebound_held {
	unsigned long total;
	unsigned long repeats;                /* of an operation already on the record */
	unsigned long kinds[FILEBOUND_KINDS]; /* by kind */
};

struct filebound {
	struct recbound rb;                  /* the rate and caps: class 0 refused, 1 allowed */
	double summary_ms;
	/* the operations on the record, each a keyed hash (SipHash, a key of
	 * the session's: no name can be chosen to pass for another's) in an
	 * open-addressed table of `slots`, at most `names_cap` of them */
	uint64_t *seen;
	size_t slots;
	unsigned long names, names_cap;
	unsigned char key[16];
	struct filebound_held held[2];       /* [0] allowed, [1] refused (or kept as such) */
	/* the last summary's counts, which its event points at */
	unsigned long sum_kinds[FILEBOUND_KINDS];
	const char *sum_names[FILEBOUND_KINDS];
	char sum_text[320];
};

/* levels: 1 default, 2 `audit files` (a wider bound). */
void filebound_init(struct filebound *b, int level);
void filebound_free(struct filebound *b);

/* May the operation x (its access, op and paths set; deny: refused, or to
 * be kept as a refusal is) be recorded one by one? Under the rate and the
 * caps, yes; past them, when its key is not on the record yet and the
 * record keeps fewer than names_cap keys; else it is counted. */
bool filebound_admit(struct filebound *b, const struct ev_file *x, bool deny, double now_ms);

/* The summary of what was held back, when due (at least 10 s since the
 * last one, or at the end when `end`): true with *x filled (op "summary",
 * decision, count, repeats, ops) and the counts reset; call until false.
 * *x points into b, valid until the next call. */
bool filebound_summary(struct filebound *b, bool end, double now_ms, struct ev_file *x);
