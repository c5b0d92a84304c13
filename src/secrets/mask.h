/* mask.h - a response from a host a secret went to, masked before the
 * sandbox reads it: each secret's real value becomes its phantom again,
 * as it is and in the encoded forms a server most often quotes it in:
 *   - the value itself;
 *   - its hex, lower-case and upper-case;
 *   - its base64, standard (RFC 4648 section 4) and URL-safe (section 5)
 *     alphabets, at each of the three alignments the value can have inside
 *     a longer encoded string: the characters of base64(P + VALUE + S) that
 *     depend on the value's bytes alone, for a prefix P of 0, 1 or 2 bytes
 *     (modulo 3), whatever P and S are. So base64("user:VALUE"), Basic
 *     credentials that the proxy itself encoded with the real value in
 *     them, is found whatever the user name.
 * Each form becomes the same form of the phantom (a value and its phantom
 * have the same length, so every form keeps its length and every byte
 * that is not one stays where it was): hex of the phantom in the same
 * case, base64 of the phantom in the same alphabet and alignment. A base64
 * form has up to one character at each end that carries bits of the value
 * together with bits of P or S (up to 4 bits of its first byte, up to 4 of
 * its last): that character's value bits become the phantom's too when it
 * is in the bytes mask_apply is given with the form, so that the decoded
 * text reads P + PHANTOM + S.
 *
 * Streaming: mask_apply returns how many bytes at the end of buf may begin
 * a form (or, for a base64 form, end one whose next character is still to
 * come); the caller sends the rest and gives those bytes again, first,
 * with what it reads next (intercept.h's on_resp), so a form split across
 * reads is masked whole. The one character before a base64 form is fixed
 * only when it arrives in the same read as at least one character of the
 * form (the split exactly after it leaves those few bits as they came).
 *
 * Not masked: anything else a server does to the value (compression,
 * other encodings, base64 broken into lines, hex in mixed case or with
 * separators, the value cut or reordered). */
#pragma once
#include <stddef.h>

#include "secrets.h"

struct mask_form {
	const struct secret *secret;
	char *real;                 /* what is looked for (wiped when freed) */
	char *fake;                 /* what it becomes: the phantom's same form */
	size_t len;                 /* of each */
	const char *alpha;          /* base64's alphabet; NULL: the value or its hex */
	/* base64: the character before real holds the value's bits in its low
	 * lead_bits bits (0: none, or the phantom's are the same), lead_real
	 * in a real form and lead_fake in the phantom's; the character after
	 * it holds them in its high trail_bits bits */
	unsigned char lead_bits, lead_real, lead_fake;
	unsigned char trail_bits, trail_real, trail_fake;
	unsigned block;             /* real's two bytes that end its first min */
};

/* The forms are found in one pass over a read for all of them: a window
 * of the shortest form's length (min) moves along by what its last two
 * bytes allow (shift: 0 where they end some form's first min bytes, less
 * than min - 1 where they are elsewhere in them), so that a read that
 * holds none of them is mostly skipped over. */
struct mask {
	struct mask_form *v;        /* each secret's forms one after the other */
	size_t n;
	size_t min;
	unsigned char *shift;       /* 65536, by the two bytes */
};

/* The forms of every secret of s (borrowed: it outlives m). */
void mask_init(struct mask *m, const struct secrets *s);
/* Wipe the forms, free them; m is empty after. */
void mask_free(struct mask *m);

/* Told of forms masked (n of secret s's). */
typedef void (*mask_hit_fn)(void *ctx, const struct secret *s, unsigned n);

/* Mask buf[0..len) in place (hit, if not NULL, told what was); returns
 * the bytes at its end to give again with the next read (at most len). */
size_t mask_apply(const struct mask *m, char *buf, size_t len, mask_hit_fn hit, void *ctx);
