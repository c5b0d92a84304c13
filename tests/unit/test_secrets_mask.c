/* test_secrets_mask.c - the masking of responses (src/secrets/mask.c),
 * against encoders of the test's own (OpenSSL's EVP_EncodeBlock, and hex
 * by printf): a value quoted back as it is, in hex (lower and upper case)
 * and in base64 (standard and URL-safe, padded or not) inside a longer
 * encoded string - every prefix length modulo 3, every suffix - becomes
 * exactly the same encoding of prefix + phantom + suffix, Basic
 * credentials "user:VALUE" included, and a value quoted twice back to back; hits counted per secret; the same
 * text fed in two chunks at every split, in three, and a byte at a time,
 * with the caller's protocol (the held end given again first), masked as
 * when it is whole, but for the one split documented (right after the
 * character before a base64 form); masking is idempotent; the phantom's
 * own encodings, another value's, and base64 broken by a line end are
 * left alone; what is held is bounded by the longest form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "src/policy/policy.h"
#include "src/secrets/mask.h"
#include "check.h"

/* A: a vendor token (the phantom keeps its prefix, so the characters at a
 * base64 form's edges hold the same bits either way). P: a password whose
 * phantom differs from it in the first byte's high bits and the last
 * byte's low bits, and whose base64 holds '+' and '/' (so the URL-safe
 * alphabet differs). */
#define VAL_A "sk-ant-api03-REALvalueAAAAAAAAAAAAAAAAAAAA"
#define PH_A  "sk-ant-api03-phantomXw3k9Tq2Lm8Zr5Yb7Nc4Vd"
#define VAL_P "correct~horse?battery>>staple"
#define PH_P  "9Tq2Lm8Zr5Yb7Nc4Vdw3k9Tq2Lm8Z"

static struct policy pol;
static struct secrets sec;
static struct mask m;

static void setup(void)
{
	const char *text = "secret A host a.test\nsecret P host p.test\n";
	struct werr e;
	if (policy_parse_text(&pol, "t.profile", NULL, "/home/u", text, strlen(text), &e) < 0) {
		fprintf(stderr, "profile: %s\n", e.msg);
		exit(2);
	}
	static const char *const v[][2] = { { VAL_A, PH_A }, { VAL_P, PH_P } };
	sec.n = ARRAY_LEN(v);
	sec.v = xcalloc(sec.n, sizeof *sec.v);
	for (size_t i = 0; i < sec.n; i++) {
		if (strlen(v[i][0]) != strlen(v[i][1]))
			abort();
		sec.v[i] = (struct secret){ &pol.secrets[i], xstrdup(v[i][0]), xstrdup(v[i][1]) };
	}
	mask_init(&m, &sec);
}

enum enc { LITERAL, HEX, HEX_UPPER, B64, B64_NOPAD, B64URL, B64URL_NOPAD, NENC };
static const char *const enc_name[] = { "literal", "hex", "HEX", "b64", "b64 unpadded", "b64url",
					"b64url unpadded" };

/* in[0..n) encoded as e, malloc'd */
static char *encode(enum enc e, const char *in, size_t n)
{
	char *out = xmalloc(2 * n + 5);
	if (e == LITERAL) {
		memcpy(out, in, n);
		out[n] = '\0';
	} else if (e == HEX || e == HEX_UPPER) {
		for (size_t i = 0; i < n; i++)
			sprintf(out + 2 * i, e == HEX ? "%02x" : "%02X", (unsigned char)in[i]);
	} else {
		int k = EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)n);
		for (int i = 0; i < k && (e == B64URL || e == B64URL_NOPAD); i++)
			out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
		while ((e == B64_NOPAD || e == B64URL_NOPAD) && k > 0 && out[k - 1] == '=')
			out[--k] = '\0';
	}
	return out;
}

/* "Authorization: Basic " + e(pre + v + post) + "\r\n", malloc'd */
static char *quote(enum enc e, const char *pre, const char *v, const char *post)
{
	char *raw = xasprintf("%s%s%s", pre, v, post);
	char *enc = encode(e, raw, strlen(raw));
	char *t = xasprintf("Authorization: Basic %s\r\n", enc);
	free(raw);
	free(enc);
	return t;
}
#define LEAD0 21 /* strlen("Authorization: Basic ") */

static unsigned hits[2];

static void on_hit(void *ctx, const struct secret *s, unsigned n)
{
	(void)ctx;
	hits[s - sec.v] += n;
}

/* text masked as the proxy does it: in chunks that end at cuts[] (and at
 * the end), what mask_apply holds given again first with the next; what is
 * held at the end goes as it is. malloc'd, as long as text. */
static char *stream(const char *text, const size_t *cuts, size_t ncuts)
{
	size_t len = strlen(text), held = 0, done = 0, at = 0;
	char *out = xmalloc(len + 1), *work = xmalloc(len + 1);
	for (size_t c = 0; c <= ncuts; c++) {
		size_t to = c < ncuts ? cuts[c] : len;
		memcpy(work + held, text + at, to - at);
		size_t wl = held + to - at;
		size_t h = mask_apply(&m, work, wl, on_hit, NULL);
		CHECK(h <= wl);
		memcpy(out + done, work, wl - h);
		done += wl - h;
		memmove(work, work + wl - h, h);
		held = h;
		at = to;
	}
	memcpy(out + done, work, held);
	out[len] = '\0';
	free(work);
	return out;
}

static char *whole(const char *text, size_t *hold)
{
	char *t = xstrdup(text);
	*hold = mask_apply(&m, t, strlen(t), on_hit, NULL);
	return t;
}

/* Each encoding, each prefix length (0 to 5: every alignment, twice) and
 * each suffix length (0 to 3): masked whole into the phantom's encoding. */
static void test_forms(void)
{
	static const char *const pres[] = { "", "u", "us", "use", "user", "user:", "\xff\x01" };
	static const char *const posts[] = { "", "!", "xy", "xyz" };
	for (size_t s = 0; s < sec.n; s++)
		for (int e = 0; e < NENC; e++)
			for (size_t p = 0; p < ARRAY_LEN(pres); p++)
				for (size_t q = 0; q < ARRAY_LEN(posts); q++) {
					char *t = quote(e, pres[p], sec.v[s].value, posts[q]);
					char *want = quote(e, pres[p], sec.v[s].phantom, posts[q]);
					memset(hits, 0, sizeof hits);
					size_t hold;
					char *got = whole(t, &hold);
					checks++;
					if (strcmp(got, want) != 0 || hold != 0 || hits[s] == 0 || hits[1 - s]) {
						fprintf(stderr, "secret %zu %s pre %zu post %zu: hold %zu hits %u/%u\n"
							"  got:  %s  want: %s", s, enc_name[e], p, q, hold,
							hits[0], hits[1], got, want);
						failures++;
					}
					free(t);
					free(want);
					free(got);
				}
}

/* A value quoted twice back to back (in base64 the second at another
 * alignment, the character between them holding bits of both): both
 * masked. */
static void test_adjacent(void)
{
	for (size_t s = 0; s < sec.n; s++)
		for (int e = 0; e < NENC; e++) {
			char *two = xasprintf("%s%s", sec.v[s].value, sec.v[s].value);
			char *ph2 = xasprintf("%s%s", sec.v[s].phantom, sec.v[s].phantom);
			char *t = quote(e, "", two, ""), *want = quote(e, "", ph2, "");
			size_t hold;
			char *got = whole(t, &hold);
			CHECK_STR(got, want);
			free(two);
			free(ph2);
			free(t);
			free(want);
			free(got);
		}
}

/* Basic credentials: what an agent decodes from the echo is user:PHANTOM. */
static void test_basic(void)
{
	char *t = quote(B64, "user:", VAL_P, "");
	size_t hold;
	char *got = whole(t, &hold);
	unsigned char dec[128];
	char *b = got + LEAD0;
	int n = EVP_DecodeBlock(dec, (unsigned char *)b, (int)(strchr(b, '\r') - b));
	CHECK(n >= 5 + (int)strlen(PH_P));
	dec[5 + strlen(PH_P)] = '\0';
	CHECK_STR((char *)dec, "user:" PH_P);
	free(t);
	free(got);
}

/* The position of the character before the base64 form of the value after
 * pre, when it holds value bits (else -1). */
static long lead_at(enum enc e, const char *pre)
{
	size_t bits = 8 * strlen(pre);
	if (e < B64 || bits % 6 == 0)
		return -1;
	return (long)(LEAD0 + bits / 6);
}

/* Two chunks at every split, three at a sample of pairs, and a byte at a
 * time: as whole, but for the split right after the character before a
 * base64 form, where that character alone may keep its bits. */
static void test_splits(void)
{
	static const char *const pres[] = { "", "u", "us", "user:" };
	for (size_t s = 0; s < sec.n; s++)
		for (int e = 0; e < NENC; e++)
			for (size_t p = 0; p < ARRAY_LEN(pres); p++) {
				char *t = quote(e, pres[p], sec.v[s].value, p % 2 ? "z" : "");
				size_t len = strlen(t), hold;
				char *want = whole(t, &hold);
				long lead = lead_at(e, pres[p]);
				for (size_t cut = 1; cut < len; cut++) {
					char *got = stream(t, &cut, 1);
					size_t diff = 0, where = 0;
					for (size_t i = 0; i < len; i++)
						if (got[i] != want[i])
							diff++, where = i;
					checks++;
					if (diff && !(diff == 1 && (long)where == lead && cut == where + 1)) {
						fprintf(stderr, "secret %zu %s pre %zu cut %zu:\n  got:  %s  want: %s",
							s, enc_name[e], p, cut, got, want);
						failures++;
					}
					free(got);
				}
				for (size_t a = 1; a + 2 < len; a += 3)
					for (size_t b = a + 2; b < len; b += 5) {
						size_t cuts[2] = { a, b };
						char *got = stream(t, cuts, 2);
						bool ok = strcmp(got, want) == 0 || (long)a - 1 == lead ||
							  (long)b - 1 == lead;
						CHECK(ok);
						free(got);
					}
				size_t *cuts = xcalloc(len, sizeof *cuts);
				for (size_t i = 0; i + 1 < len; i++)
					cuts[i] = i + 1;
				char *got = stream(t, cuts, len - 1);
				/* a byte at a time: every read is a split, that one too */
				for (size_t i = 0; i < len; i++)
					CHECK(got[i] == want[i] || (long)i == lead);
				free(got);
				free(cuts);
				free(t);
				free(want);
			}
}

/* The held end: no longer than the longest form, and the start of a form
 * at the end held (with the character before a base64 one); a base64 form
 * that ends the read held until the character after it comes. */
static void test_hold(void)
{
	size_t longest = 0;
	for (size_t i = 0; i < m.n; i++)
		if (m.v[i].len > longest)
			longest = m.v[i].len;
	char *t = quote(HEX, "", VAL_A, "");
	size_t n = strlen(t) - 2;
	char *b = xstrdup(t);
	CHECK(mask_apply(&m, b, n, NULL, NULL) == 0);  /* the form whole: masked, nothing held */
	free(b);
	b = xstrdup(t);
	CHECK(mask_apply(&m, b, n - 1, NULL, NULL) == 2 * strlen(VAL_A) - 1);
	free(b);
	free(t);
	char big[4096];
	memset(big, 'A', sizeof big);
	CHECK(mask_apply(&m, big, sizeof big, NULL, NULL) <= longest);
	/* P's base64 after "user:" ends with a character holding its last bits */
	t = quote(B64_NOPAD, "user:", VAL_P, "");
	n = strlen(t) - 2;
	b = xstrdup(t);
	size_t h = mask_apply(&m, b, n - 1, NULL, NULL); /* the form, not the character after */
	CHECK(h > 0 && h < n);
	free(b);
	free(t);
}

/* What is not the value stays as it is: masking again changes nothing;
 * the phantom's own base64 and hex, another value's; and a base64 form
 * that a line end breaks is not masked (mask.h says so). */
static void test_left_alone(void)
{
	for (int e = 0; e < NENC; e++) {
		char *t = quote(e, "user:", VAL_P, "");
		size_t hold;
		char *once = whole(t, &hold);
		memset(hits, 0, sizeof hits);
		char *twice = whole(once, &hold);
		CHECK_STR(twice, once);
		CHECK(hits[0] == 0 && hits[1] == 0);
		free(t);
		free(once);
		free(twice);
		t = quote(e, "x", "another-value-0123456789abcdef", "");
		once = whole(t, &hold);
		CHECK_STR(once, t);
		free(t);
		free(once);
	}
	char *t = quote(B64, "user:", VAL_A, "");
	char *broken = xasprintf("%.40s\n%s", t, t + 40);
	size_t hold;
	memset(hits, 0, sizeof hits);
	char *got = whole(broken, &hold);
	CHECK_STR(got, broken);
	CHECK(hits[0] == 0);
	free(t);
	free(broken);
	free(got);
}

int main(void)
{
	setup();
	test_forms();
	test_adjacent();
	test_basic();
	test_splits();
	test_hold();
	test_left_alone();
	mask_free(&m);
	CHECK(m.n == 0 && m.v == NULL);
	return check_status();
}
