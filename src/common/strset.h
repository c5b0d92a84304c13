/* strset.h - a set of strings, as the detector keeps the values of a
 * `new:` field (src/detect/) and the record the destinations refused
 * (src/audit/netbound.h): open addressing,
 * doubled as it fills, up to a bound past which a value not there is new
 * and stays out (the set's memory bounded whatever the agent makes the
 * values). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct strset {
	char **slot;
	size_t cap, n;
};

/* v added (copied) unless the set holds max values already: true when v
 * was not there. */
bool strset_add(struct strset *s, const char *v, size_t max);
void strset_free(struct strset *s);
