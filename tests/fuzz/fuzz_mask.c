/* fuzz_mask.c - libFuzzer target for the masking of responses
 * (src/secrets/mask.c) with three fixed secrets: a vendor token, a
 * password whose base64 differs between the two alphabets and whose
 * phantom differs in the bits at a base64 form's edges, and a value of
 * the least length. The first two input bytes pick two cuts, the rest is
 * what a server sent. Invariants, on every input: what is held is no more
 * than the bytes given nor than the longest form. On an input where the
 * forms it holds (each real and phantom form, with the character on
 * either side) do not overlap: each real form becomes a phantom form of
 * the same place, every other byte but those edges stays as it is, and
 * masking in pieces (at the two cuts, and a byte at a time), with the held
 * end given again first, gives what masking the whole gives, but for the
 * character before a base64 form that a cut falls right after (mask.h
 * says so) and the character after a phantom's base64 form that was in
 * the input (in pieces it may get the phantom's bits: harmless). Linked
 * with replay.c it is fuzz-mask-replay, which replays the seed corpus
 * without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/secrets/mask.h"
#include "replay.h"

static const char *const fixed[][2] = {
	{ "sk-ant-api03-REALvalueAAAAAAAAAAAAAAAAAAAA", "sk-ant-api03-phantomXw3k9Tq2Lm8Zr5Yb7Nc4Vd" },
	{ "correct~horse?battery>>staple", "9Tq2Lm8Zr5Yb7Nc4Vdw3k9Tq2Lm8Z" },
	{ "s3cr3t!!", "Qw9Zx2Lp" },
};

static struct secrets sec;
static struct mask m;
static size_t longest;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sec.n = ARRAY_LEN(fixed);
	sec.v = xcalloc(sec.n, sizeof *sec.v);
	for (size_t i = 0; i < sec.n; i++) {
		if (strlen(fixed[i][0]) != strlen(fixed[i][1]))
			abort();
		sec.v[i] = (struct secret){ NULL, xstrdup(fixed[i][0]), xstrdup(fixed[i][1]) };
	}
	mask_init(&m, &sec);
	for (size_t i = 0; i < m.n; i++)
		if (m.v[i].len > longest)
			longest = m.v[i].len;
	return 0;
}

/* Where a form is: [at - 1, at + len + 1), its edges with it. */
struct span {
	size_t from, to, at;
	const struct mask_form *f;
	bool real;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* Every place of every form, real or fake, overlapping ones too. */
static struct span *spans(const char *t, size_t n, size_t *count)
{
	size_t cap = 16, k = 0;
	struct span *v = xmalloc(cap * sizeof *v);
	for (size_t i = 0; i < 2 * m.n; i++) {
		const struct mask_form *f = &m.v[i / 2];
		const char *s = i % 2 ? f->fake : f->real;
		for (const char *p = t; n && (p = memmem(p, n - (size_t)(p - t), s, f->len)); p++) {
			if (k == cap)
				v = xrealloc(v, (cap *= 2) * sizeof *v);
			size_t at = (size_t)(p - t);
			v[k++] = (struct span){ at ? at - 1 : 0, at + f->len + 1, at, f, i % 2 == 0 };
		}
	}
	qsort(v, k, sizeof *v, span_cmp);
	*count = k;
	return v;
}

/* No two places overlap (the same real string at the same place, two
 * forms alike, counts once). */
static bool apart(const struct span *v, size_t k)
{
	for (size_t i = 0; i + 1 < k; i++) {
		const struct span *a = &v[i], *b = &v[i + 1];
		bool same = a->real && b->real && a->at == b->at && a->f->len == b->f->len &&
			    memcmp(a->f->real, b->f->real, a->f->len) == 0;
		if (!same && b->from < a->to)
			return false;
	}
	return true;
}

static void mark(bool *touched, size_t n, const struct span *v, size_t k)
{
	for (size_t i = 0; i < k; i++)
		for (size_t j = v[i].from; j < v[i].to && j < n; j++)
			touched[j] = true;
}

/* The first form with f's real one: the one masking writes. */
static const struct mask_form *first_alike(const struct mask_form *f)
{
	for (size_t g = 0; g < m.n; g++)
		if (m.v[g].len == f->len && memcmp(m.v[g].real, f->real, f->len) == 0)
			return &m.v[g];
	abort();
}

/* out, from in masked whole: each real form of in is a fake one there,
 * each byte outside them and their edges as it was. */
static void check_whole(const char *in, const char *out, size_t n, const struct span *v, size_t k)
{
	bool *touched = xcalloc(n ? n : 1, sizeof *touched);
	mark(touched, n, v, k);
	for (size_t i = 0; i < k; i++) {
		const struct mask_form *f = first_alike(v[i].f);
		if (v[i].real && memcmp(out + v[i].at, f->fake, f->len) != 0)
			abort();
	}
	for (size_t j = 0; j < n; j++)
		if (!touched[j] && out[j] != in[j])
			abort();
	free(touched);
}

/* in masked in the pieces that end at cuts[] (sorted) and at n, the held
 * end given again first; what is held at the end goes as it is. */
static char *pieces(const char *in, size_t n, const size_t *cuts, size_t ncuts)
{
	char *out = xmalloc(n + 1), *work = xmalloc(n + 1);
	size_t held = 0, done = 0, at = 0;
	for (size_t c = 0; c <= ncuts; c++) {
		size_t to = c < ncuts ? cuts[c] : n;
		memcpy(work + held, in + at, to - at);
		size_t wl = held + to - at, h = mask_apply(&m, work, wl, NULL, NULL);
		if (h > wl || h > longest)
			abort();
		memcpy(out + done, work, wl - h);
		done += wl - h;
		memmove(work, work + wl - h, h);
		held = h;
		at = to;
	}
	memcpy(out + done, work, held);
	free(work);
	return out;
}

/* A difference at j is allowed only where a cut falls at j + 1 and a real
 * base64 form whose character before it holds value bits begins there
 * (that character went with the piece before); or right after a phantom's
 * base64 form that the input held (not one masked), whose next character
 * got the phantom's bits in pieces, where the form began a piece (a cut
 * at it, or held at the end of the piece before). */
static bool lead_split(size_t j, const size_t *cuts, size_t ncuts, const struct span *v, size_t k)
{
	bool cut = false;
	for (size_t c = 0; c < ncuts; c++)
		cut |= cuts[c] == j + 1;
	for (size_t i = 0; i < k; i++) {
		if (cut && v[i].real && v[i].at == j + 1 && v[i].f->lead_bits)
			return true;
		if (!v[i].real && v[i].f->trail_bits && v[i].at + v[i].f->len == j)
			return true;
	}
	return false;
}

static void check_pieces(const char *in, const char *whole, size_t n, const size_t *cuts,
			 size_t ncuts, const struct span *v, size_t k)
{
	char *got = pieces(in, n, cuts, ncuts);
	for (size_t j = 0; j < n; j++)
		if (got[j] != whole[j] && !lead_split(j, cuts, ncuts, v, k))
			abort();
	free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const char *in = (const char *)data + 2;
	size_t n = size - 2;
	char *whole = xmalloc(n + 1);
	memcpy(whole, in, n);
	size_t h = mask_apply(&m, whole, n, NULL, NULL);
	if (h > n || h > longest)
		abort();
	size_t k;
	struct span *v = spans(in, n, &k);
	if (apart(v, k)) {
		check_whole(in, whole, n, v, k);
		size_t cuts[2] = { data[0] * n / 256, data[1] * n / 256 };
		if (cuts[0] > cuts[1]) {
			size_t t = cuts[0];
			cuts[0] = cuts[1];
			cuts[1] = t;
		}
		check_pieces(in, whole, n, cuts, 2, v, k);
		if (n <= 512) {
			size_t *each = xcalloc(n ? n : 1, sizeof *each);
			for (size_t i = 0; i + 1 < n; i++)
				each[i] = i + 1;
			check_pieces(in, whole, n, each, n ? n - 1 : 0, v, k);
			free(each);
		}
	}
	free(v);
	free(whole);
	return 0;
}
