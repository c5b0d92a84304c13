/* mask.c - each secret's real value masked back to its phantom in what a
 * server sends, as it is, in hex and in base64 (mask.h): the forms made
 * once, then found in each read in one pass for all of them (a window
 * that moves by what its last two bytes allow), masked, and the end that
 * may begin one held. */
#include "mask.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/util.h"

/* The forms of one secret: the value, hex in two cases, base64 in two
 * alphabets at three alignments. */
#define FORMS_PER_SECRET 9

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static struct mask_form *add(struct mask *m, const struct secret *s, size_t len)
{
	struct mask_form *f = &m->v[m->n++];
	*f = (struct mask_form){ .secret = s, .real = xmalloc(len + 1), .fake = xmalloc(len + 1),
				 .len = len };
	f->real[len] = f->fake[len] = '\0';
	return f;
}

static void hex_forms(struct mask *m, const struct secret *s, size_t n)
{
	for (int upper = 0; upper < 2; upper++) {
		struct mask_form *f = add(m, s, 2 * n);
		hex_encode((const unsigned char *)s->value, n, f->real);
		hex_encode((const unsigned char *)s->phantom, n, f->fake);
		for (size_t i = 0; upper && i < 2 * n; i++) {
			f->real[i] = (char)toupper((unsigned char)f->real[i]);
			f->fake[i] = (char)toupper((unsigned char)f->fake[i]);
		}
	}
}

/* The 6-bit groups of r zero bytes, then v[0..n), then zero bytes to the
 * end of a 3-byte group, into out (room for (r + n + 2) / 3 * 4). */
static void sextets(const unsigned char *v, size_t n, size_t r, unsigned char *out)
{
	size_t total = r + n, k = 0;
	for (size_t i = 0; i < total; i += 3) {
		unsigned w = 0;
		for (size_t j = i; j < i + 3; j++)
			w = w << 8 | (j >= r && j < total ? v[j - r] : 0u);
		for (int sh = 18; sh >= 0; sh -= 6)
			out[k++] = (unsigned char)(w >> sh & 63);
	}
}

/* The base64 forms of s at alignment r (the value after r bytes of a
 * 3-byte group): its bits are bits 8r to 8(r + n) of the encoded bits, so
 * the characters i0 to i1 are its alone; the one before holds its first
 * lead bits (the low ones), the one after its last trail bits (the high
 * ones). */
static void b64_forms(struct mask *m, const struct secret *s, size_t n, size_t r)
{
	size_t cap = (r + n + 2) / 3 * 4;
	_cleanup_free_ unsigned char *sv = xmalloc(cap);
	_cleanup_free_ unsigned char *sp = xmalloc(cap);
	sextets((const unsigned char *)s->value, n, r, sv);
	sextets((const unsigned char *)s->phantom, n, r, sp);
	size_t i0 = (8 * r + 5) / 6, i1 = 8 * (r + n) / 6;
	unsigned lead = (unsigned)(6 * i0 - 8 * r), trail = (unsigned)(8 * (r + n) - 6 * i1);
	const char *alphas[] = { b64_std, b64_url };
	for (size_t a = 0; a < ARRAY_LEN(alphas); a++) {
		struct mask_form *f = add(m, s, i1 - i0);
		f->alpha = alphas[a];
		for (size_t i = i0; i < i1; i++) {
			f->real[i - i0] = f->alpha[sv[i]];
			f->fake[i - i0] = f->alpha[sp[i]];
		}
		if (lead && sv[i0 - 1] != sp[i0 - 1]) {
			f->lead_bits = (unsigned char)lead;
			f->lead_real = sv[i0 - 1];
			f->lead_fake = sp[i0 - 1];
		}
		if (trail && sv[i1] != sp[i1]) {
			f->trail_bits = (unsigned char)trail;
			f->trail_real = (unsigned char)(sv[i1] >> (6 - trail));
			f->trail_fake = (unsigned char)(sp[i1] >> (6 - trail));
		}
	}
	explicit_bzero(sv, cap);
}

#define BLOCK(p) ((unsigned)(unsigned char)(p)[0] << 8 | (unsigned char)(p)[1])

/* The window's length, each block's shift, each form's block at its end. */
static void shifts(struct mask *m)
{
	m->min = SIZE_MAX;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].len < m->min)
			m->min = m->v[i].len;
	size_t w = m->min, most = w - 1 < 255 ? w - 1 : 255;
	m->shift = xmalloc(65536);
	memset(m->shift, (int)most, 65536);
	for (size_t i = 0; i < m->n; i++) {
		const char *r = m->v[i].real;
		for (size_t q = 1; q < w; q++)
			if (w - 1 - q < m->shift[BLOCK(r + q - 1)])
				m->shift[BLOCK(r + q - 1)] = (unsigned char)(w - 1 - q);
		m->v[i].block = BLOCK(r + w - 2);
	}
}

void mask_init(struct mask *m, const struct secrets *s)
{
	*m = (struct mask){ .v = xcalloc(s->n ? s->n * FORMS_PER_SECRET : 1, sizeof *m->v) };
	for (size_t i = 0; i < s->n; i++) {
		const struct secret *sc = &s->v[i];
		size_t n = strlen(sc->value);
		if (strlen(sc->phantom) != n)
			continue; /* (never: a phantom is as long as its value) */
		struct mask_form *f = add(m, sc, n);
		memcpy(f->real, sc->value, n);
		memcpy(f->fake, sc->phantom, n);
		hex_forms(m, sc, n);
		for (size_t r = 0; r < 3; r++)
			b64_forms(m, sc, n, r);
	}
	if (m->n)
		shifts(m);
}

void mask_free(struct mask *m)
{
	for (size_t i = 0; i < m->n; i++) {
		explicit_bzero(m->v[i].real, m->v[i].len);
		free(m->v[i].real);
		free(m->v[i].fake);
	}
	free(m->v);
	free(m->shift);
	*m = (struct mask){ 0 };
}

/* The character at c, just before a form (lead) or just after it: when it
 * is of the form's alphabet and holds the value's bits, they become the
 * phantom's. (Already the phantom's: nothing changes.) */
static void fix_edge(const struct mask_form *f, char *c, bool lead)
{
	int v = base64_digit(f->alpha, *c);
	if (v < 0)
		return;
	unsigned bits = lead ? f->lead_bits : f->trail_bits, shift = lead ? 0 : 6 - bits;
	unsigned sel = ((1u << bits) - 1) << shift;
	unsigned real = (unsigned)(lead ? f->lead_real : f->trail_real) << shift;
	unsigned fake = (unsigned)(lead ? f->lead_fake : f->trail_fake) << shift;
	if (((unsigned)v & sel) == real)
		*c = f->alpha[((unsigned)v & ~sel & 63) | fake];
}

/* The real form at p made the fake one, with its edges. */
static void put(const struct mask_form *f, char *buf, size_t len, char *p)
{
	memcpy(p, f->fake, f->len);
	if (f->lead_bits && p > buf)
		fix_edge(f, p - 1, true);
	if (f->trail_bits && p + f->len < buf + len)
		fix_edge(f, p + f->len, false);
}

/* The first form (in m's order) whose real one is at buf[at..), its block
 * blk, or NULL. */
static const struct mask_form *form_at(const struct mask *m, const char *buf, size_t len, size_t at,
				       unsigned blk)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct mask_form *f = &m->v[i];
		if (f->block == blk && f->len <= len - at && memcmp(buf + at, f->real, f->len) == 0)
			return f;
	}
	return NULL;
}

/* Every real form in buf[from..) made the fake one, left to right, the
 * search going on after each (a fake form with the bytes after it may
 * look like a real one: what the server sent of it, it sent). Returns
 * where the last one ends (from when none): what is held begins there or
 * after, so that the next read never looks into a form masked already. */
static size_t replace(const struct mask *m, char *buf, size_t len, size_t from, mask_hit_fn hit,
		      void *ctx)
{
	size_t w = m->min, done = from;
	for (size_t pos = from + w - 1; pos < len;) {
		unsigned blk = BLOCK(buf + pos - 1);
		if (m->shift[blk]) {
			pos += m->shift[blk];
			continue;
		}
		size_t at = pos + 1 - w;
		const struct mask_form *f = form_at(m, buf, len, at, blk);
		if (!f) {
			pos++;
			continue;
		}
		put(f, buf, len, buf + at);
		if (hit)
			hit(ctx, f->secret, 1);
		done = at + f->len;
		pos = done + w - 1;
	}
	return done;
}

/* A fake base64 form at buf's start is one masked and held at the end of
 * the last read for the character after it, which is here now: that
 * character fixed, and the search begins after the form (returned). */
static size_t held_fake(const struct mask *m, char *buf, size_t len)
{
	size_t skip = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct mask_form *f = &m->v[i];
		if (f->trail_bits && len > f->len && memcmp(buf, f->fake, f->len) == 0) {
			fix_edge(f, buf + f->len, false);
			if (f->len > skip)
				skip = f->len;
		}
	}
	return skip;
}

/* The longest end of buf[from..len) that is a start of pat (shorter than
 * pat), or 0. */
static size_t start_at_end(const char *pat, size_t plen, const char *buf, size_t from, size_t len)
{
	size_t max = plen - 1 < len - from ? plen - 1 : len - from;
	const char *end = buf + len;
	for (const char *p = end - max; p < end && (p = memchr(p, pat[0], (size_t)(end - p))); p++)
		if (memcmp(p, pat, (size_t)(end - p)) == 0)
			return (size_t)(end - p);
	return 0;
}

/* What of buf's end to give again for f, none of it before from: a start
 * of its real form (and the character before it, which may hold the
 * value's first bits), or a fake form that ends buf while the character
 * after it is still to come. */
static size_t hold_for(const struct mask_form *f, const char *buf, size_t from, size_t len)
{
	size_t k = start_at_end(f->real, f->len, buf, from, len);
	if (k && f->lead_bits && len - k > from)
		k++;
	if (f->trail_bits && len >= f->len && f->len > k &&
	    memcmp(buf + len - f->len, f->fake, f->len) == 0)
		k = f->len;
	return k;
}

size_t mask_apply(const struct mask *m, char *buf, size_t len, mask_hit_fn hit, void *ctx)
{
	if (!m->n)
		return 0;
	size_t done = replace(m, buf, len, held_fake(m, buf, len), hit, ctx);
	size_t hold = 0;
	for (size_t i = 0; i < m->n; i++) {
		size_t k = hold_for(&m->v[i], buf, done, len);
		if (k > hold)
			hold = k;
	}
	return hold;
}
