/* fuzz_ttyfilter.c - libFuzzer target for the filter of the agent's
 * terminal output (src/supervisor/ttyfilter.c). The first input byte picks
 * the settings (clipboard allowed, queries dropped) and the size of the
 * pieces the rest is fed in. Invariants: the output is the same whatever
 * the pieces (a sequence split across writes is judged whole); it never
 * outgrows the input by more than the hold allows; fed to a fresh filter
 * with the same settings, the output has nothing left to drop (no OSC 52
 * unless allowed, no query when queries are dropped, no title with a
 * control byte). Linked with replay.c it is fuzz-ttyfilter-replay, which
 * replays the seed corpus without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/supervisor/ttyfilter.h"
#include "replay.h"

static size_t filter(const uint8_t *in, size_t n, size_t piece, bool clip, bool queries, char *out,
		     unsigned long *dropped)
{
	struct ttyfilter f;
	ttyfilter_init(&f, clip, queries);
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = piece && n - i > piece ? piece : n - i;
		o += ttyfilter_run(&f, (const char *)in + i, k, out + o);
		i += k;
	}
	o += ttyfilter_flush(&f, out + o);
	*dropped = f.dropped;
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	bool clip = data[0] & 1, queries = data[0] & 2;
	size_t piece = (data[0] >> 2) + 1;
	const uint8_t *in = data + 1;
	size_t n = size - 1;
	size_t cap = n + 2 * TTYFILTER_HOLD + 16;
	char *a = malloc(cap), *b = malloc(cap), *c = malloc(cap);
	unsigned long da, db, dc;
	size_t na = filter(in, n, 0, clip, queries, a, &da);
	size_t nb = filter(in, n, piece, clip, queries, b, &db);
	if (na != nb || memcmp(a, b, na) != 0 || da != db)
		abort(); /* the pieces changed the output */
	if (na > n + 2 * ((n / 2) + 1))
		abort(); /* only synthesized terminators may add bytes */
	size_t nc = filter((const uint8_t *)a, na, 0, clip, queries, c, &dc);
	if (dc != 0)
		abort(); /* something the first pass should have dropped */
	(void)nc;
	free(a);
	free(b);
	free(c);
	return 0;
}
