/* test_secrets_subst.c - unit tests of subst_head and the phantom scanner
 * (src/secrets/subst.c): a phantom replaced by its value in any header to a
 * host its secret is bound to (exact, wildcard, IP, with or without a
 * port), case-insensitive header names and Basic scheme, Basic credentials
 * decoded, substituted and encoded again (padded or not); refused, with
 * what and where, in the URL (raw or percent-encoded, origin- or
 * absolute-form), in a header name, in a malformed line, to an unbound host
 * or port, across another phantom, after substitution, after the head; two
 * secrets in one head; the hits each (secret, header) once; and the stream
 * scanner finding a phantom split at every offset. Secrets are made by hand
 * here (fixed values and phantoms), and once through secrets_load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/policy/policy.h"
#include "src/secrets/subst.h"
#include "check.h"

static struct policy pol;
static struct secrets sec;

/* Fixed secrets: each value has its phantom's length. */
#define VAL_A "sk-ant-api03-REALvalueAAAAAAAAAAAAAAAAAAAA"
#define PH_A  "sk-ant-api03-phantomXw3k9Tq2Lm8Zr5Yb7Nc4Vd"
#define VAL_B "ghp_REALvalueBBBBBBBBBBBBBBBBBBBBBBBBBBB"
#define PH_B  "ghp_phantomQ7w2E9r4T6y1U3i5O8p0A2s4D6f8h"
#define VAL_C "realvalue-CCCCCCCC"
#define PH_C  "ph-abcd-ph-abcd-ph" /* overlaps itself: "ph-abcd-" twice */
#define VAL_D "9a-XXXXXXXXXX"
#define PH_D  "pa-0123456789"      /* ends with the first byte of its value */

static void setup(void)
{
	const char *text = "secret A host api.anthropic.com api.test:8443 *.corp.test\n"
			   "secret B host github.com [::1]:8080 192.0.2.1\n"
			   "secret C host c.test\n"
			   "secret D host d.test\n";
	struct werr e;
	memset(&pol, 0, sizeof pol);
	if (policy_parse_text(&pol, "t.profile", NULL, "/home/u", text, strlen(text), &e) < 0) {
		fprintf(stderr, "profile: %s\n", e.msg);
		exit(2);
	}
	static const char *const v[][2] = { { VAL_A, PH_A }, { VAL_B, PH_B }, { VAL_C, PH_C },
					    { VAL_D, PH_D } };
	sec.n = ARRAY_LEN(v);
	sec.v = xcalloc(sec.n, sizeof *sec.v);
	for (size_t i = 0; i < sec.n; i++) {
		sec.v[i] = (struct secret){ &pol.secrets[i], xstrdup(v[i][0]), xstrdup(v[i][1]) };
		if (strlen(v[i][0]) != strlen(v[i][1]))
			abort();
		if (strlen(v[i][1]) > sec.maxlen)
			sec.maxlen = strlen(v[i][1]);
	}
}

static const struct secret *A(void) { return &sec.v[0]; }
static const struct secret *B(void) { return &sec.v[1]; }

struct run {
	int rc;
	char *out;
	size_t outlen;
	struct subst_result r;
};

static struct run subst_to(const char *host, uint16_t port, const char *head)
{
	struct net_host h;
	struct run x;
	if (net_host_parse(&h, host, strlen(host), NULL) < 0)
		abort();
	x.rc = subst_head(&sec, &h, port, head, strlen(head), &x.out, &x.outlen, &x.r);
	if (x.rc == 0 && (!x.out || x.outlen != strlen(head) || x.out[x.outlen] != '\0'))
		x.rc = -2;
	if (x.rc < 0 && x.out)
		x.rc = -3;
	return x;
}

/* The head must become `want` with these hits ("A:header,B:header"). */
static void expect_ok_n(int line, const char *host, uint16_t port, const char *head,
			const char *want, const char *hits)
{
	struct run x = subst_to(host, port, head);
	char got[512] = "";
	for (size_t i = 0; x.rc == 0 && i < x.r.nhits; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s:%s", i ? "," : "",
			 x.r.hits[i].secret->spec->name, x.r.hits[i].header);
	checks++;
	if (x.rc != 0 || strcmp(x.out, want) != 0 || strcmp(got, hits) != 0 || x.r.leak) {
		fprintf(stderr, "%s:%d: subst to %s:%u: rc %d (%s)\n  got:      %s [%s]\n  expected: %s [%s]\n",
			__FILE__, line, host, port, x.rc, x.r.leak_where ? x.r.leak_where : "-",
			x.out ? x.out : "(null)", got, want, hits);
		failures++;
	}
	free(x.out);
}
#define EXPECT_OK(host, port, head, want, hits) expect_ok_n(__LINE__, host, port, head, want, hits)

static void expect_refused_n(int line, const char *host, uint16_t port, const char *head,
			     const struct secret *leak, const char *where)
{
	struct run x = subst_to(host, port, head);
	checks++;
	if (x.rc != -1 || x.out || x.r.leak != leak || !x.r.leak_where ||
	    strcmp(x.r.leak_where, where) != 0 || x.r.nhits != 0) {
		fprintf(stderr, "%s:%d: subst to %s:%u: rc %d, leak %s at %s (expected %s at %s)\n",
			__FILE__, line, host, port, x.rc,
			x.r.leak ? x.r.leak->spec->name : "-", x.r.leak_where ? x.r.leak_where : "-",
			leak->spec->name, where);
		failures++;
	}
	free(x.out);
}
#define EXPECT_REFUSED(host, port, head, leak, where) \
	expect_refused_n(__LINE__, host, port, head, leak, where)

static void test_bound(void)
{
	const char *head = "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\n"
			   "x-api-key: " PH_A "\r\ncontent-type: application/json\r\n\r\n";
	const char *want = "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\n"
			   "x-api-key: " VAL_A "\r\ncontent-type: application/json\r\n\r\n";
	EXPECT_OK("api.anthropic.com", 443, head, want, "A:x-api-key");
	EXPECT_OK("API.Anthropic.com.", 443, head, want, "A:x-api-key");
	EXPECT_REFUSED("evil.test", 443, head, A(), "header to an unbound host");
	EXPECT_REFUSED("anthropic.com", 443, head, A(), "header to an unbound host");
	EXPECT_REFUSED("github.com", 443, head, A(), "header to an unbound host");

	/* a port-specific binding */
	EXPECT_OK("api.test", 8443, head, want, "A:x-api-key");
	EXPECT_REFUSED("api.test", 443, head, A(), "header to an unbound host");
	/* a wildcard: subdomains only */
	EXPECT_OK("git.corp.test", 443, head, want, "A:x-api-key");
	EXPECT_OK("a.b.corp.test", 80, head, want, "A:x-api-key");
	EXPECT_REFUSED("corp.test", 443, head, A(), "header to an unbound host");
	EXPECT_REFUSED("evilcorp.test", 443, head, A(), "header to an unbound host");
	/* IP literals */
	const char *hb = "GET / HTTP/1.1\r\nAuthorization: token " PH_B "\r\n\r\n";
	const char *wb = "GET / HTTP/1.1\r\nAuthorization: token " VAL_B "\r\n\r\n";
	EXPECT_OK("[::1]", 8080, hb, wb, "B:Authorization");
	EXPECT_REFUSED("[::1]", 8081, hb, B(), "header to an unbound host");
	EXPECT_OK("192.0.2.1", 443, hb, wb, "B:Authorization");
	EXPECT_REFUSED("192.0.2.2", 443, hb, B(), "header to an unbound host");

	/* any header, case as sent; several places in one header; the same
	 * secret in several headers: one hit per header */
	EXPECT_OK("github.com", 443,
		  "GET /user HTTP/1.1\r\nAUTHORIZATION: Bearer " PH_B "\r\nX-Both: " PH_B "," PH_B
		  "\r\nx-both: " PH_B "\r\nCookie: t=" PH_B "; x=1\r\n\r\n",
		  "GET /user HTTP/1.1\r\nAUTHORIZATION: Bearer " VAL_B "\r\nX-Both: " VAL_B "," VAL_B
		  "\r\nx-both: " VAL_B "\r\nCookie: t=" VAL_B "; x=1\r\n\r\n",
		  "B:AUTHORIZATION,B:X-Both,B:x-both,B:Cookie");
	/* no phantom: the head as it is, malformed or not */
	const char *plain = "GET /x HTTP/1.1\r\nHost: a\r\nno colon here\r\n folded\r\nbare\nlf\r\n\r\nbody";
	EXPECT_OK("evil.test", 443, plain, plain, "");
	EXPECT_OK("evil.test", 443, "", "", "");
	/* the head without its empty line, the last line without CRLF */
	EXPECT_OK("github.com", 443, "GET / HTTP/1.1\r\nX-T: " PH_B,
		  "GET / HTTP/1.1\r\nX-T: " VAL_B, "B:X-T");
	/* absolute-form request line */
	EXPECT_OK("github.com", 80, "GET http://github.com/x HTTP/1.1\r\nX-T: " PH_B "\r\n\r\n",
		  "GET http://github.com/x HTTP/1.1\r\nX-T: " VAL_B "\r\n\r\n", "B:X-T");
}

static void test_two_secrets(void)
{
	/* A and B in one head: each needs its own host */
	const char *head = "GET / HTTP/1.1\r\nx-api-key: " PH_A "\r\nx-gh: " PH_B "\r\n\r\n";
	EXPECT_REFUSED("api.anthropic.com", 443, head, B(), "header to an unbound host");
	EXPECT_REFUSED("github.com", 443, head, A(), "header to an unbound host");
	/* both bound to one host */
	const char *text = "secret B host github.com api.anthropic.com\n";
	struct werr e;
	CHECK(policy_parse_text(&pol, "u.profile", NULL, "/home/u", text, strlen(text), &e) == 0);
	sec.v[1].spec = policy_secret_find(&pol, "B");
	EXPECT_OK("api.anthropic.com", 443, head,
		  "GET / HTTP/1.1\r\nx-api-key: " VAL_A "\r\nx-gh: " VAL_B "\r\n\r\n", "A:x-api-key,B:x-gh");
	EXPECT_OK("api.anthropic.com", 443, "GET / HTTP/1.1\r\nX: " PH_B PH_A "\r\n\r\n",
		  "GET / HTTP/1.1\r\nX: " VAL_B VAL_A "\r\n\r\n", "B:X,A:X");
	text = "secret B host github.com [::1]:8080 192.0.2.1\n";
	CHECK(policy_parse_text(&pol, "u.profile", NULL, "/home/u", text, strlen(text), &e) == 0);
}

/* base64 of s, padded */
static void b64(const char *s, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), k = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[k++] = a[v >> 18 & 63];
		out[k++] = a[v >> 12 & 63];
		out[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[k++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[k] = '\0';
}

static void test_basic(void)
{
	static const char *const creds[][2] = {
		{ "x-access-token:" PH_B, "x-access-token:" VAL_B },   /* padded: 55 bytes */
		{ PH_B ":x-oauth-basic", VAL_B ":x-oauth-basic" },     /* 54 bytes: no '=' */
		{ "u:" PH_B, "u:" VAL_B },                             /* 42 bytes: '=' */
		{ "u:" PH_B "1", "u:" VAL_B "1" },                     /* 43 bytes: '==' */
	};
	for (size_t i = 0; i < ARRAY_LEN(creds); i++) {
		char e1[128], e2[128], head[256], want[256];
		b64(creds[i][0], e1);
		b64(creds[i][1], e2);
		snprintf(head, sizeof head, "GET /r.git/info/refs HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", e1);
		snprintf(want, sizeof want, "GET /r.git/info/refs HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", e2);
		EXPECT_OK("github.com", 443, head, want, "B:Authorization");
		EXPECT_REFUSED("gitlab.test", 443, head, B(), "header to an unbound host");
		/* case-insensitive scheme and header name, blanks around */
		snprintf(head, sizeof head, "GET / HTTP/1.1\r\nauthorization:\tbasic  %s \r\n\r\n", e1);
		snprintf(want, sizeof want, "GET / HTTP/1.1\r\nauthorization:\tbasic  %s \r\n\r\n", e2);
		EXPECT_OK("github.com", 443, head, want, "B:authorization");
		/* one '=' too many: decoded as a lenient server would, the '='s kept */
		snprintf(head, sizeof head, "GET / HTTP/1.1\r\nAuthorization: Basic %s=\r\n\r\n", e1);
		snprintf(want, sizeof want, "GET / HTTP/1.1\r\nAuthorization: Basic %s=\r\n\r\n", e2);
		EXPECT_OK("github.com", 443, head, want, "B:Authorization");
		/* unpadded, as some clients send it */
		char *eq = strchr(e1, '=');
		if (eq) {
			*eq = '\0';
			*strchr(e2, '=') = '\0';
			snprintf(head, sizeof head, "GET / HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", e1);
			snprintf(want, sizeof want, "GET / HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", e2);
			EXPECT_OK("github.com", 443, head, want, "B:Authorization");
		}
	}
	/* not base64, or not only the token: left alone */
	const char *odd = "GET / HTTP/1.1\r\nAuthorization: Basic !!!\r\nX: Basic YWJj ZGVm\r\n\r\n";
	EXPECT_OK("github.com", 443, odd, odd, "");
	char e1[128], head[256];
	/* Basic credentials where they cannot be substituted */
	b64("u:" PH_B, e1);
	snprintf(head, sizeof head, "GET / HTTP/1.1\r\nX: token Basic %s\r\n\r\n", e1);
	EXPECT_REFUSED("github.com", 443, head, B(), "basic credentials out of place");
	snprintf(head, sizeof head, "GET / HTTP/1.1\r\nAuthorization: Basic %s\r(\r\n\r\n", e1);
	EXPECT_REFUSED("github.com", 443, head, B(), "basic credentials out of place");
	/* Basic credentials of a secret bound elsewhere, in any header */
	b64("user:" PH_A, e1);
	snprintf(head, sizeof head, "GET / HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n", e1);
	EXPECT_REFUSED("github.com", 443, head, A(), "header to an unbound host");
}

static void test_refused(void)
{
	const char *to = "api.anthropic.com";
	/* the URL, even to the bound host */
	EXPECT_REFUSED(to, 443, "GET /v1/x?key=" PH_A " HTTP/1.1\r\nHost: x\r\n\r\n", A(), "url");
	EXPECT_REFUSED(to, 443, "GET /" PH_A "/x HTTP/1.1\r\n\r\n", A(), "url");
	EXPECT_REFUSED(to, 443, "GET http://u:" PH_A "@api.anthropic.com/ HTTP/1.1\r\n\r\n", A(), "url");
	EXPECT_REFUSED(to, 443, "GET /?k=%73%6b-ant-api03-phantomXw3k9Tq2Lm8Zr5Yb7Nc4Vd HTTP/1.1\r\n\r\n",
		       A(), "url");
	EXPECT_REFUSED(to, 443, "GET /?k=sk-ant-api03-phantomXw3k9Tq2Lm8Zr5Yb7Nc4V%64 HTTP/1.1\r\n\r\n",
		       A(), "url");
	EXPECT_REFUSED(to, 443, PH_A " / HTTP/1.1\r\n\r\n", A(), "url");
	EXPECT_REFUSED("evil.test", 443, "GET /?k=" PH_B " HTTP/1.1\r\nx-api-key: " PH_A "\r\n\r\n",
		       B(), "url");
	/* a header's name */
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\n" PH_A ": 1\r\n\r\n", A(), "header name");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nX-" PH_A ": 1\r\n\r\n", A(), "header name");
	/* lines that are no header */
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nx-api-key " PH_A "\r\n\r\n", A(), "malformed header");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nx-api-key:\r\n " PH_A "\r\n\r\n", A(), "malformed header");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nx-api-key: " PH_A "\n\r\n", A(), "malformed header");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nx-api-key: a\rb " PH_A "\r\n\r\n", A(), "malformed header");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nx api key: " PH_A "\r\n\r\n", A(), "malformed header");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\n: " PH_A "\r\n\r\n", A(), "malformed header");
	/* after the empty line */
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\nX: 1\r\n\r\nkey=" PH_A, A(), "after the head");
	EXPECT_REFUSED(to, 443, "GET / HTTP/1.1\r\n\r\nX: " PH_A "\r\n\r\n", A(), "after the head");
	/* a phantom across another */
	EXPECT_REFUSED("c.test", 443, "GET / HTTP/1.1\r\nX: ph-abcd-ph-abcd-ph-abcd-ph\r\n\r\n", &sec.v[2],
		       "overlapping phantoms");
	EXPECT_OK("c.test", 443, "GET / HTTP/1.1\r\nX: " PH_C PH_C "\r\n\r\n",
		  "GET / HTTP/1.1\r\nX: " VAL_C VAL_C "\r\n\r\n", "C:X");
	/* a value next to text that makes its phantom again */
	EXPECT_REFUSED("d.test", 443, "GET / HTTP/1.1\r\nX: pa-012345678" PH_D "\r\n\r\n", &sec.v[3],
		       "after substitution");
	EXPECT_OK("d.test", 443, "GET / HTTP/1.1\r\nX: pa-01234567" PH_D "\r\n\r\n",
		  "GET / HTTP/1.1\r\nX: pa-01234567" VAL_D "\r\n\r\n", "D:X");
}

static void test_hits(void)
{
	/* at most 16 hits are listed; every phantom is replaced */
	char head[4096] = "GET / HTTP/1.1\r\n", want[4096] = "GET / HTTP/1.1\r\n";
	for (int i = 0; i < 20; i++) {
		snprintf(head + strlen(head), sizeof head - strlen(head), "X-%d: %s\r\n", i, PH_B);
		snprintf(want + strlen(want), sizeof want - strlen(want), "X-%d: %s\r\n", i, VAL_B);
	}
	strcat(head, "\r\n");
	strcat(want, "\r\n");
	struct run x = subst_to("github.com", 443, head);
	CHECK(x.rc == 0 && x.r.nhits == SUBST_HITS_MAX);
	CHECK(x.out && strcmp(x.out, want) == 0);
	CHECK_STR(x.r.hits[15].header, "X-15");
	free(x.out);
	/* a long header name is cut to 63 bytes */
	char name[100];
	memset(name, 'N', 99);
	name[99] = '\0';
	snprintf(head, sizeof head, "GET / HTTP/1.1\r\n%s: %s\r\n\r\n", name, PH_B);
	x = subst_to("github.com", 443, head);
	CHECK(x.rc == 0 && x.r.nhits == 1 && strlen(x.r.hits[0].header) == 63);
	free(x.out);
}

/* The scanner over data cut at the offsets given (ascending, ending with
 * len): the secret it reports and at which piece (-1 when none). */
static const struct secret *scan_pieces(const char *data, const size_t *cuts, size_t ncuts,
					 int *at)
{
	struct phantom_scan sc;
	scan_init(&sc, &sec);
	const struct secret *hit = NULL;
	size_t from = 0;
	*at = -1;
	for (size_t i = 0; i < ncuts; i++) {
		const struct secret *h = scan_feed(&sc, data + from, cuts[i] - from);
		if (h && !hit) {
			hit = h;
			*at = (int)i;
		} else if (h) {
			hit = (const struct secret *)1; /* reported twice */
		}
		from = cuts[i];
	}
	scan_free(&sc);
	return hit;
}

static void test_scan(void)
{
	char data[256];
	size_t plen = strlen(PH_A);
	snprintf(data, sizeof data, "{\"prompt\":\"%s\"}", PH_A);
	size_t len = strlen(data), start = 11;
	/* two pieces, cut at every offset: found once, in the piece where it ends */
	for (size_t cut = 0; cut <= len; cut++) {
		size_t cuts[2] = { cut, len };
		int at;
		const struct secret *h = scan_pieces(data, cuts, 2, &at);
		CHECK(h == A());
		CHECK(at == (cut >= start + plen ? 0 : 1));
	}
	/* three pieces around the phantom, and byte by byte */
	for (size_t c1 = start; c1 < start + plen; c1++) {
		for (size_t c2 = c1 + 1; c2 < start + plen; c2 += 3) {
			size_t cuts[3] = { c1, c2, len };
			int at;
			CHECK(scan_pieces(data, cuts, 3, &at) == A() && at == 2);
		}
	}
	size_t each[256];
	for (size_t i = 0; i < len; i++)
		each[i] = i + 1;
	int at;
	CHECK(scan_pieces(data, each, len, &at) == A() && at == (int)(start + plen - 1));
	/* nothing without the whole phantom */
	snprintf(data, sizeof data, "%.*s and %s", (int)plen - 1, PH_A, &PH_A[1]);
	len = strlen(data);
	for (size_t i = 0; i < len; i++)
		each[i] = i + 1;
	CHECK(scan_pieces(data, each, len, &at) == NULL);
	/* a short phantom inside the kept tail is reported once */
	struct phantom_scan sc;
	scan_init(&sc, &sec);
	CHECK(scan_feed(&sc, PH_D, strlen(PH_D)) == &sec.v[3]);
	CHECK(scan_feed(&sc, "x", 1) == NULL);
	CHECK(scan_feed(&sc, "yz", 2) == NULL);
	CHECK(scan_feed(&sc, "", 0) == NULL);
	/* a big piece, then the phantom across the next */
	char big[10000];
	memset(big, 'q', sizeof big);
	memcpy(big + sizeof big - 5, PH_B, 5);
	CHECK(scan_feed(&sc, big, sizeof big) == NULL);
	CHECK(scan_feed(&sc, &PH_B[5], strlen(PH_B) - 5) == B());
	scan_free(&sc);
	/* no secrets: nothing, ever */
	struct secrets none = { 0 };
	scan_init(&sc, &none);
	CHECK(scan_feed(&sc, PH_A, strlen(PH_A)) == NULL);
	scan_free(&sc);
}

/* Through secrets_load: real phantoms substitute the same way. */
static void test_loaded(void)
{
	struct policy p;
	struct secrets s;
	struct werr e;
	memset(&p, 0, sizeof p);
	const char *text = "secret T_KEY host api.test\n";
	setenv("T_KEY", "sk-ant-api03-" "Real0123456789Real0123456789Real0123456789", 1);
	CHECK(policy_parse_text(&p, "t.profile", NULL, NULL, text, strlen(text), &e) == 0);
	CHECK(secrets_load(&s, &p, NULL, &e) == 0);
	if (s.n == 1) {
		char *head = xasprintf("GET / HTTP/1.1\r\nx-api-key: %s\r\n\r\n", s.v[0].phantom);
		char *want = xasprintf("GET / HTTP/1.1\r\nx-api-key: %s\r\n\r\n", getenv("T_KEY"));
		struct net_host h;
		net_host_parse(&h, "api.test", 8, NULL);
		char *out;
		size_t outlen;
		struct subst_result r;
		CHECK(subst_head(&s, &h, 443, head, strlen(head), &out, &outlen, &r) == 0);
		CHECK(out && strcmp(out, want) == 0 && r.nhits == 1 && r.hits[0].secret == &s.v[0]);
		free(out);
		net_host_parse(&h, "evil.test", 9, NULL);
		CHECK(subst_head(&s, &h, 443, head, strlen(head), &out, &outlen, &r) < 0);
		CHECK(!out && r.leak == &s.v[0]);
		free(head);
		free(want);
	}
	secrets_free(&s);
	policy_free(&p);
}

int main(void)
{
	setup();
	test_bound();
	test_two_secrets();
	test_basic();
	test_refused();
	test_hits();
	test_scan();
	test_loaded();
	secrets_free(&sec);
	policy_free(&pol);
	return check_status_counted("secrets_subst");
}
