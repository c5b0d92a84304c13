/* fuzz_dre.c - libFuzzer target for the detection rules' regular
 * expressions (src/detect/dre.c, dre_run.c). The input is a pattern, a
 * newline, and the value to match. Invariants: a pattern refused says why in
 * printable words; one compiled has at most DRE_MAX_STATES states; the NFA
 * alone takes at most (bytes + 2) x (states + 1) steps, through the cache
 * at most three times (bytes + 2) x (states + 4) (a new set costs its states
 * again); both answer alike, the cache cold, then warm, then on each half of
 * the value; given one step fewer than it took, the NFA runs out (-1, the
 * budget 0). Linked with replay.c it is fuzz-dre-replay, which replays files
 * and corpus directories without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/detect/dre.h"

static void must(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_dre: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl ? (size_t)(nl - data) : size;
	if (plen > 4200 || memchr(data, '\0', plen))
		return 0;
	char *pat = malloc(plen + 1);
	memcpy(pat, data, plen);
	pat[plen] = '\0';
	const char *v = nl ? (const char *)nl + 1 : "";
	size_t vlen = nl ? size - plen - 1 : 0;
	struct werr e = { 0 };
	struct dre *re = dre_compile(pat, &e);
	free(pat);
	if (!re) {
		must(fuzz_printable(e.msg), "an error that is not a printable line");
		return 0;
	}
	size_t states = dre_states(re);
	must(states >= 1 && states <= DRE_MAX_STATES, "more states than allowed");
	const unsigned long big = ~0UL;
	unsigned long budget = big;
	int want = dre_match_nfa(re, v, vlen, &budget);
	unsigned long used = big - budget;
	must(want == 0 || want == 1, "out of an unbounded budget");
	must(used <= (vlen + 2) * (states + 1), "the NFA took more steps than bytes times states");
	budget = used - 1;
	must(dre_match_nfa(re, v, vlen, &budget) == -1 && budget == 0, "an answer with fewer steps");
	for (int pass = 0; pass < 2; pass++) { /* the cache cold, then warm */
		budget = big;
		must(dre_match(re, v, vlen, &budget) == want, "the cache answers otherwise");
		must(big - budget <= (vlen + 2) * 3 * (states + 4), "more steps than bytes times states");
	}
	for (size_t half = 0; half < 2; half++) {
		size_t at = half ? vlen / 2 : 0, n = half ? vlen - vlen / 2 : vlen / 2;
		unsigned long b1 = big, b2 = big;
		must(dre_match(re, v + at, n, &b1) == dre_match_nfa(re, v + at, n, &b2),
		     "the cache answers otherwise on half the value");
	}
	dre_free(re);
	return 0;
}
