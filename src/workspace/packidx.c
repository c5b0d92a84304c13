/* packidx.c - the ids a git pack's index lists, read within its bounds
 * (packidx.h). */
#include "packidx.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../common/hash.h"

#define FANOUT 256
#define V2_HEADER 8 /* "\377tOc" and the version */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The fan-out at fan (256 words, in bounds): its last word, the number of
 * objects, or -1 when a word is less than the one before (git refuses
 * such an index). */
static long fanout_count(const unsigned char *fan)
{
	uint32_t prev = 0;
	for (unsigned i = 0; i < FANOUT; i++) {
		uint32_t n = be32(fan + 4 * i);
		if (n < prev)
			return -1;
		prev = n;
	}
	return (long)prev;
}

long packidx_ids(const unsigned char *buf, size_t len, size_t hashsz, packidx_fn fn, void *ctx,
		 const char **why)
{
	if (hashsz != PACKIDX_SHA1 && hashsz != PACKIDX_SHA256) {
		*why = "no hash of git's";
		return -1;
	}
	bool v2 = len >= V2_HEADER && memcmp(buf, "\377tOc", 4) == 0;
	if (v2 && be32(buf + 4) != 2) {
		*why = "an index version git does not read";
		return -1;
	}
	size_t fan = v2 ? V2_HEADER : 0;
	if (len < fan + 4 * FANOUT + 2 * hashsz) {
		*why = "shorter than its fan-out";
		return -1;
	}
	long n = fanout_count(buf + fan);
	if (n < 0) {
		*why = "its fan-out goes down";
		return -1;
	}
	/* version 2: the ids, then a CRC and an offset each; version 1: an
	 * offset and an id each; both end in two hashes */
	size_t entry = v2 ? hashsz + 8 : hashsz + 4;
	size_t room = len - fan - 4 * FANOUT - 2 * hashsz;
	if ((size_t)n > room / entry) {
		*why = "shorter than the objects its fan-out counts";
		return -1;
	}
	const unsigned char *ids = buf + fan + 4 * FANOUT;
	char hex[2 * PACKIDX_SHA256 + 1];
	for (long i = 0; i < n; i++) {
		hex_encode(v2 ? ids + (size_t)i * hashsz : ids + (size_t)i * entry + 4, hashsz, hex);
		fn(ctx, hex);
	}
	return n;
}
