/* fnv.h - FNV-1a, 64 bits: the tree's one hash for in-memory tables (the
 * detector's seen-sets and its text memo), not a digest: nothing that an
 * adversary's choice of keys could turn into a weakness relies on it
 * beyond a slower probe. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* The hash of s up to its NUL or max bytes, whichever is first; *len (when
 * not NULL) the bytes hashed. */
static inline uint64_t fnv1a(const char *s, size_t max, size_t *len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t n = 0;
	for (; n < max && s[n]; n++)
		h = (h ^ (unsigned char)s[n]) * 1099511628211ULL;
	if (len)
		*len = n;
	return h;
}
