/* fuzz_subst.c - libFuzzer target for the phantom substitution in request
 * heads and the phantom scanner (src/secrets/subst.c). The first input byte
 * picks where the head goes (a host and port, bound to some of four fixed
 * secrets or to none), the rest is the head. Invariants: subst_head returns
 * 0 or -1 and gives the same answer twice; a refused head has no output, no
 * hits and a leak with a printable place; an accepted head keeps its length
 * and its request line, holds no phantom (not even in Basic credentials
 * that decode canonically), is the input itself when nothing was hit, hits
 * only secrets bound to the destination, and holds the value of a secret
 * not bound there exactly as often as the input did. The scanner, fed the
 * input in pieces whose sizes come from the input, sees a phantom exactly
 * when there is one in the whole. Linked with replay.c it is
 * fuzz-subst-replay, which replays the seed corpus without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "src/policy/policy.h"
#include "src/secrets/subst.h"
#include "replay.h"

/* Fixed secrets (each value as long as its phantom); C overlaps itself,
 * D's phantom ends with its value's first byte. The seeds use them. */
static const char *const fixed[][2] = {
	{ "sk-ant-api03-REALvalueAAAAAAAAAAAAAAAAAAAA", "sk-ant-api03-phantomXw3k9Tq2Lm8Zr5Yb7Nc4Vd" },
	{ "ghp_REALvalueBBBBBBBBBBBBBBBBBBBBBBBBBBB", "ghp_phantomQ7w2E9r4T6y1U3i5O8p0A2s4D6f8h" },
	{ "realvalue-CCCCCCCC", "ph-abcd-ph-abcd-ph" },
	{ "9a-XXXXXXXXXX", "pa-0123456789" },
};

static const char profile[] = "secret A host api.bound.test *.wild.test:8443\n"
			      "secret B host [::1]:8080 127.0.0.1\n"
			      "secret C host c.test\n"
			      "secret D host d.test\n";

static const struct {
	const char *host;
	uint16_t port;
} dests[8] = {
	{ "api.bound.test", 443 }, { "x.wild.test", 8443 }, { "x.wild.test", 443 },
	{ "[::1]", 8080 },         { "127.0.0.1", 80 },     { "c.test", 443 },
	{ "d.test", 443 },         { "evil.test", 443 },
};

static struct policy pol;
static struct secrets sec;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct werr e;
	if (policy_parse_text(&pol, "fuzz", NULL, NULL, profile, strlen(profile), &e) < 0)
		abort();
	sec.n = ARRAY_LEN(fixed);
	sec.v = xcalloc(sec.n, sizeof *sec.v);
	for (size_t i = 0; i < sec.n; i++) {
		sec.v[i] = (struct secret){ &pol.secrets[i], xstrdup(fixed[i][0]), xstrdup(fixed[i][1]) };
		if (strlen(fixed[i][0]) != strlen(fixed[i][1]))
			abort();
		if (strlen(fixed[i][1]) > sec.maxlen)
			sec.maxlen = strlen(fixed[i][1]);
	}
	return 0;
}

static size_t count(const char *hay, size_t n, const char *needle)
{
	size_t c = 0, nl = strlen(needle);
	for (const char *p = hay; n && (p = memmem(p, n - (size_t)(p - hay), needle, nl)); p++)
		c++;
	return c;
}

static int b64v(char c)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(a, c) : NULL;
	return p ? (int)(p - a) : -1;
}

/* Canonical base64 (padding optional) of t[0..n) into out: length or -1. */
static long unb64(const char *t, size_t n, unsigned char *out)
{
	while (n && t[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return -1;
	unsigned acc = 0, bits = 0;
	long k = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64v(t[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6 | (unsigned)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(acc >> bits);
		}
	}
	return (acc & ((1u << bits) - 1)) ? -1 : k;
}

/* No "Basic TOKEN" of an output line decodes to a phantom. */
static void check_basic(const char *out, size_t len)
{
	unsigned char *dec = xmalloc(len + 1);
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(out + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - out) : len;
		for (size_t i = pos; i + 6 <= end; i++) {
			if (strncasecmp(out + i, "basic ", 6) != 0)
				continue;
			size_t ts = i + 6;
			while (ts < end && out[ts] == ' ')
				ts++;
			size_t te = ts;
			while (te < end && b64v(out[te]) >= 0)
				te++;
			while (te < end && out[te] == '=')
				te++;
			long dn = unb64(out + ts, te - ts, dec);
			if (dn > 0 && secrets_find_phantom(&sec, dec, (size_t)dn))
				abort();
		}
		pos = nl ? end + 1 : len;
	}
	free(dec);
}

static void check_scan(const uint8_t *data, size_t size)
{
	struct phantom_scan sc;
	scan_init(&sc, &sec);
	const struct secret *seen = NULL;
	for (size_t off = 0, k = 0; off < size; k++) {
		size_t piece = 1 + (data[k % size] % 64);
		if (piece > size - off)
			piece = size - off;
		const struct secret *h = scan_feed(&sc, data + off, piece);
		if (h && !seen)
			seen = h;
		off += piece;
	}
	scan_free(&sc);
	const struct secret *whole = secrets_find_phantom(&sec, data, size);
	if ((seen == NULL) != (whole == NULL))
		abort();
	if (seen && !memmem(data, size, seen->phantom, strlen(seen->phantom)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct net_host h;
	const char *host = dests[data[0] % 8].host;
	uint16_t port = dests[data[0] % 8].port;
	if (net_host_parse(&h, host, strlen(host), NULL) < 0)
		abort();
	const char *head = (const char *)data + 1;
	size_t len = size - 1;

	char *out = NULL, *out2 = NULL;
	size_t outlen = 0, outlen2 = 0;
	struct subst_result r, r2;
	int rc = subst_head(&sec, &h, port, head, len, &out, &outlen, &r);
	int rc2 = subst_head(&sec, &h, port, head, len, &out2, &outlen2, &r2);
	if (rc != rc2 || r.leak != r2.leak || r.nhits != r2.nhits)
		abort();
	if (rc == -1) {
		if (out || r.nhits || !r.leak || !r.leak_where || !fuzz_printable(r.leak_where))
			abort();
		if (r.leak < sec.v || r.leak >= sec.v + sec.n)
			abort();
	} else if (rc == 0) {
		if (!out || outlen != len || out[len] != '\0' || memcmp(out, out2, len) != 0)
			abort();
		if (r.leak || r.nhits > SUBST_HITS_MAX)
			abort();
		if (secrets_find_phantom(&sec, out, outlen))
			abort();
		check_basic(out, outlen);
		if (r.nhits == 0 && memcmp(out, head, len) != 0)
			abort();
		for (size_t i = 0; i < r.nhits; i++)
			if (!secret_bound(r.hits[i].secret, &h, port) || strlen(r.hits[i].header) > 63)
				abort();
		for (size_t i = 0; i < sec.n; i++)
			if (!secret_bound(&sec.v[i], &h, port) &&
			    count(out, outlen, sec.v[i].value) != count(head, len, sec.v[i].value))
				abort();
		/* the request line is never rewritten */
		const char *nl = memchr(head, '\n', len);
		size_t rl = nl ? (size_t)(nl - head) : len;
		if (memcmp(out, head, rl) != 0)
			abort();
	} else {
		abort();
	}
	free(out);
	free(out2);
	check_scan(data, size);
	return 0;
}
