/* mask_rate.c - the cost of masking the responses of a host a secret is
 * bound to (the proxy's guard, src/session/egress.c, which asks
 * src/secrets/mask.c): MIB MiB of response text (words, digits, JSON
 * punctuation, base64 and hex runs; never a secret's value; 1 MiB of it
 * over and over) given to the guard's resp in reads of 16 KiB, what it holds given again first as the
 * proxy does, with NSECRETS secrets of 40 characters bound. It is built
 * from the tree it is in, and calls only what every build since the
 * masking began has (egress_init, the guard's open and resp), so the same
 * file built in another tree times that tree's masking.
 *
 *   mask_rate MIB NSECRETS ROUNDS
 * Prints per round "MB/s ns/read held%" (held%: the reads whose end was
 * held for the next one) and the median of the rounds' MB/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/util.h"
#include "src/policy/policy.h"
#include "src/secrets/secrets.h"
#include "src/session/egress.h"

#define READ 16384
#define TEXT (1u << 20) /* the text given over and over: in the cache, as a read just decrypted is */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 32);
}

/* n bytes of text shaped like an API's JSON answers. */
static char *text(size_t n)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static const char *const punct[] = { "\": \"", "\", \"", " ", ". ", "\n", "{\"", "}", "[1, 2]" };
	char *t = xmalloc(n);
	for (size_t i = 0; i < n;) {
		unsigned r = next();
		size_t w = 1 + r % 12;
		if (r % 50 == 0)
			w = 40 + r % 200; /* a base64 or hex run */
		for (size_t j = 0; j < w && i < n; j++)
			t[i++] = r % 50 == 0 && r % 3 == 0 ? "0123456789abcdef"[next() % 16] :
								 alnum[next() % (sizeof alnum - 1)];
		const char *p = punct[next() % 8];
		for (size_t j = 0; p[j] && i < n; j++)
			t[i++] = p[j];
	}
	return t;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: mask_rate MIB NSECRETS ROUNDS\n");
		return 2;
	}
	size_t mib = strtoul(argv[1], NULL, 10), ns = strtoul(argv[2], NULL, 10);
	size_t rounds = strtoul(argv[3], NULL, 10);
	struct werr e = { 0 };
	struct policy p;
	if (policy_load(&p, NULL, "/home/u", &e) < 0)
		return 1;
	for (size_t i = 0; i < ns; i++) {
		char name[32], val[41], spec[64];
		snprintf(name, sizeof name, "MASKTOK%zu", i);
		for (size_t j = 0; j < 40; j++)
			val[j] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[next() % 62];
		val[40] = '\0';
		setenv(name, val, 1);
		snprintf(spec, sizeof spec, "%s@api.test", name);
		if (policy_add_secret(&p, spec, "--secret", &e) < 0)
			return 1;
	}
	struct secrets s = { 0 };
	struct strv cas = { 0 };
	struct egress eg;
	if (secrets_load(&s, &p, NULL, &e) < 0 || egress_init(&eg, &s, NULL, NULL, NULL, &cas, &e) < 0) {
		fprintf(stderr, "mask_rate: %s\n", e.msg);
		return 1;
	}
	const struct proxy_guard *g = &eg.guard;
	struct net_host api;
	const char *why;
	bool icpt = false;
	if (net_host_parse(&api, "api.test", 8, &why) < 0)
		return 1;
	void *c = g->open(g->ctx, &api, 443, false, &icpt);
	size_t n = mib << 20, tn = n < TEXT ? n : TEXT;
	char *t = text(tn), *buf = xmalloc(2 * READ);
	double *rate = xcalloc(rounds, sizeof *rate);
	for (size_t r = 0; r < rounds; r++) {
		size_t held = 0, reads = 0, holds = 0;
		double t0 = now();
		for (size_t off = 0; off < n; off += READ) {
			size_t k = n - off < READ ? n - off : READ, at = off % tn;
			if (k > tn - at)
				k = tn - at;
			memcpy(buf + held, t + at, k);
			size_t h = g->resp(c, buf, held + k);
			memmove(buf, buf + held + k - h, h);
			held = h;
			reads++;
			holds += h > 0;
		}
		double dt = now() - t0;
		rate[r] = (double)n / dt / 1e6;
		printf("round %zu: %.0f MB/s %.0f ns/read held %.2f%%\n", r, rate[r], dt * 1e9 / (double)reads,
		       100.0 * (double)holds / (double)reads);
	}
	qsort(rate, rounds, sizeof *rate, cmp);
	printf("secrets=%zu median %.0f MB/s\n", ns, rate[rounds / 2]);
	struct guard_end end;
	g->end(c, &end);
	return 0;
}
