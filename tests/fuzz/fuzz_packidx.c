/* fuzz_packidx.c - libFuzzer target for the reader of a git pack's index
 * (src/workspace/packidx.c), which the end of a session runs on an index
 * the agent wrote. The input's first byte picks the id's size (even:
 * SHA-1's 20 bytes, odd: SHA-256's 32), the rest is the index. Invariants:
 * - it never reads out of the input, crashes or loops (ASan, the replay);
 * - it refuses with a printable reason and no id given, or gives as many
 *   ids as it counts, each 2 * size lower-case hex digits, no more than
 *   the input has room for;
 * - the same input reads the same way twice.
 * Linked with replay.c it is fuzz-packidx-replay, which replays the corpus
 * (tests/fuzz/corpus/packidx: indexes git wrote, versions 1 and 2, SHA-1
 * and SHA-256, truncated, a fan-out that goes down, one that counts more
 * objects than there are) in `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/workspace/packidx.h"
#include "replay.h"

struct seen {
	size_t hashsz;
	long n;
	unsigned long sum;
};

static void each(void *ctx, const char *hex)
{
	struct seen *s = ctx;
	size_t len = strlen(hex);
	if (len != 2 * s->hashsz || strspn(hex, "0123456789abcdef") != len)
		abort();
	s->n++;
	for (size_t i = 0; i < len; i++)
		s->sum = s->sum * 31 + (unsigned char)hex[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t hashsz = data[0] & 1 ? PACKIDX_SHA256 : PACKIDX_SHA1;
	struct seen a = { .hashsz = hashsz }, b = { .hashsz = hashsz };
	const char *why = NULL, *why2 = NULL;
	long n = packidx_ids(data + 1, size - 1, hashsz, each, &a, &why);
	long m = packidx_ids(data + 1, size - 1, hashsz, each, &b, &why2);
	if (n != m || a.n != b.n || a.sum != b.sum)
		abort();
	if (n < 0) {
		if (a.n != 0 || !why || !fuzz_printable(why) || strcmp(why, why2) != 0)
			abort();
		return 0;
	}
	if (a.n != n || (size_t)n * (hashsz + 4) > size)
		abort();
	return 0;
}
