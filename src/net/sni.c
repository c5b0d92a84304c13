/* sni.c - the host name of a TLS ClientHello (its server_name extension),
 * read from a tunnel's first bytes for the proxy to hold it to the name the
 * tunnel was allowed for. The handshake message is gathered across TLS
 * records; anything malformed is SNI_BAD, never a guess. */
#include "sni.h"

#include <string.h>

#define TLS_CHANGE_CIPHER_SPEC 0x14
#define TLS_HANDSHAKE 0x16
#define TLS_HEARTBEAT 0x18
#define SSL2_CLIENT_HELLO 1
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define RECORD_MAX 16384

struct reader {
	const uint8_t *p, *end;
	bool bad;
};

static size_t take(struct reader *r, size_t bytes)
{
	size_t v = 0;
	if ((size_t)(r->end - r->p) < bytes) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (size_t i = 0; i < bytes; i++)
		v = v << 8 | *r->p++;
	return v;
}

static void skip(struct reader *r, size_t bytes)
{
	if ((size_t)(r->end - r->p) < bytes) {
		r->bad = true;
		r->p = r->end;
	} else {
		r->p += bytes;
	}
}

/* The server_name extension's body: one host_name entry at most. */
static enum sni_result server_name(struct reader *x, struct net_host *h, const char **why)
{
	size_t list = take(x, 2);
	if (x->bad || list != (size_t)(x->end - x->p) || list == 0) {
		*why = "malformed server_name in the ClientHello";
		return SNI_BAD;
	}
	bool found = false;
	while (x->p < x->end) {
		size_t type = take(x, 1), len = take(x, 2);
		const uint8_t *name = x->p;
		skip(x, len);
		if (x->bad || len == 0) {
			*why = "malformed server_name in the ClientHello";
			return SNI_BAD;
		}
		if (type != 0)
			continue;
		if (found) {
			*why = "two host names in the ClientHello";
			return SNI_BAD;
		}
		if (net_host_parse(h, (const char *)name, len, why) < 0)
			return SNI_BAD;
		found = true;
	}
	return found ? SNI_NAME : SNI_NONE;
}

/* A whole ClientHello, hs[0..n) with its 4-byte header. */
static enum sni_result hello(const uint8_t *hs, size_t n, struct net_host *h, const char **why)
{
	struct reader r = { hs + 4, hs + n, false };
	skip(&r, 2 + 32);        /* legacy_version, random */
	skip(&r, take(&r, 1));   /* legacy_session_id */
	skip(&r, take(&r, 2));   /* cipher_suites */
	skip(&r, take(&r, 1));   /* legacy_compression_methods */
	if (r.bad) {
		*why = "malformed ClientHello";
		return SNI_BAD;
	}
	if (r.p == r.end)
		return SNI_NONE; /* no extensions */
	size_t all = take(&r, 2);
	if (r.bad || all != (size_t)(r.end - r.p)) {
		*why = "malformed ClientHello extensions";
		return SNI_BAD;
	}
	enum sni_result res = SNI_NONE;
	while (r.p < r.end) {
		size_t type = take(&r, 2), len = take(&r, 2);
		struct reader x = { r.p, r.p + len, false };
		skip(&r, len);
		if (r.bad) {
			*why = "malformed ClientHello extensions";
			return SNI_BAD;
		}
		if (type != EXT_SERVER_NAME)
			continue;
		if (res != SNI_NONE) {
			*why = "two server_name extensions in the ClientHello";
			return SNI_BAD;
		}
		res = server_name(&x, h, why);
		if (res == SNI_BAD)
			return res;
	}
	return res;
}

/* A record of TLS's other kinds (change_cipher_spec, alert,
 * application_data, heartbeat). */
static bool other_record(uint8_t t)
{
	return t >= TLS_CHANGE_CIPHER_SPEC && t <= TLS_HEARTBEAT && t != TLS_HANDSHAKE;
}

/* The first bytes when they are not a handshake record: not TLS; TLS that
 * does not begin with its ClientHello (a client always sends that first: a
 * lenient server might take one after, which the check would not have
 * read), refused; or SSLv2's form of a ClientHello (which servers still
 * take), which cannot name a host. Its first three bytes alone (a length
 * with the top bit set, then CLIENT-HELLO) need the fourth to tell: a
 * client that sent them apart would otherwise pass as not TLS. */
static enum sni_result not_handshake(const uint8_t *d, size_t n, const char **why)
{
	if (other_record(d[0])) {
		if (n < 2)
			return SNI_NEED_MORE;
		if (d[1] != 3)
			return SNI_NOT_TLS;
		*why = "a TLS record other than the ClientHello first";
		return SNI_BAD;
	}
	if (d[0] & 0x80) {
		if (n < 3 || (n < 4 && d[2] == SSL2_CLIENT_HELLO))
			return SNI_NEED_MORE;
		if (d[2] == SSL2_CLIENT_HELLO && d[3] == 3)
			return SNI_NONE;
	}
	return SNI_NOT_TLS;
}

enum sni_result sni_read(const uint8_t *d, size_t n, struct net_host *h, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	memset(h, 0, sizeof *h);
	if (n >= 1 && d[0] != TLS_HANDSHAKE)
		return not_handshake(d, n, why);
	if (n >= 2 && d[1] != 3)
		return SNI_NOT_TLS;
	uint8_t hs[SNI_HELLO_MAX];
	size_t hn = 0, off = 0;
	for (;;) {
		if (hn >= 1 && hs[0] != HS_CLIENT_HELLO) {
			*why = "the first TLS message is not a ClientHello";
			return SNI_BAD;
		}
		if (hn >= 4) {
			size_t need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (need > SNI_HELLO_MAX) {
				*why = "ClientHello over 16 KiB";
				return SNI_BAD;
			}
			if (hn >= need)
				return hello(hs, need, h, why);
		}
		if (off + 5 > n)
			return SNI_NEED_MORE;
		if (d[off] != TLS_HANDSHAKE || d[off + 1] != 3) {
			*why = "a TLS record other than the ClientHello's before its end";
			return SNI_BAD;
		}
		size_t rl = (size_t)d[off + 3] << 8 | d[off + 4];
		if (rl == 0 || rl > RECORD_MAX) {
			*why = "bad TLS record length";
			return SNI_BAD;
		}
		if (off + 5 + rl > n)
			return SNI_NEED_MORE;
		size_t copy = rl < SNI_HELLO_MAX - hn ? rl : SNI_HELLO_MAX - hn;
		memcpy(hs + hn, d + off + 5, copy);
		hn += copy;
		off += 5 + rl;
		if (copy < rl && hn >= 4) {
			*why = "ClientHello over 16 KiB";
			return SNI_BAD;
		}
	}
}
