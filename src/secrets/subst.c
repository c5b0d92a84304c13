/* subst.c - phantoms replaced by their values in a request head bound for
 * a host, refused anywhere else; the stream scanner for phantoms. */
#include "subst.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/util.h"

/* One phantom found at off in some buffer. */
struct occ {
	const struct secret *sc;
	size_t off, len;
};

struct occs {
	struct occ *v;
	size_t n, cap;
};

static int occ_cmp(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Every occurrence of every phantom in buf[0..n), by offset. */
static void find_all(const struct secrets *s, const char *buf, size_t n, struct occs *o)
{
	o->n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const char *ph = s->v[i].phantom;
		size_t pl = ph ? strlen(ph) : 0;
		if (!pl)
			continue;
		for (size_t at = 0; at + pl <= n;) {
			const char *q = memmem(buf + at, n - at, ph, pl);
			if (!q)
				break;
			if (o->n == o->cap) {
				o->cap = o->cap ? 2 * o->cap : 8;
				o->v = xrealloc(o->v, o->cap * sizeof *o->v);
			}
			o->v[o->n++] = (struct occ){ &s->v[i], (size_t)(q - buf), pl };
			at = (size_t)(q - buf) + 1;
		}
	}
	if (o->n > 1)
		qsort(o->v, o->n, sizeof *o->v, occ_cmp);
}

static bool overlapping(const struct occs *o)
{
	for (size_t i = 1; i < o->n; i++)
		if (o->v[i].off < o->v[i - 1].off + o->v[i - 1].len)
			return true;
	return false;
}

static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

size_t pct_decode(const char *s, size_t n, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hex_digit((unsigned char)s[i + 1])) >= 0 && (lo = hex_digit((unsigned char)s[i + 2])) >= 0) {
			out[k++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[k++] = s[i];
		}
	}
	return k;
}

/* ---- base64 (RFC 4648 section 4, the alphabet of Basic credentials) ---- */

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_val(char c)
{
	return base64_digit(b64_alphabet, c);
}

/* Decode t[0..n), canonical base64 followed by any number of '=' (servers
 * differ in how strict they are about padding; a phantom is found either
 * way), into out (room for n bytes): its length, or -1 when t is not that.
 * *body: the characters before the '='s. */
static long b64_decode(const char *t, size_t n, unsigned char *out, size_t *body)
{
	while (n > 0 && t[n - 1] == '=')
		n--;
	*body = n;
	if (n == 0 || n % 4 == 1)
		return -1;
	size_t k = 0;
	unsigned acc = 0, bits = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64_val(t[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6 | (unsigned)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(acc >> bits);
		}
	}
	/* canonical: the bits left over are zero, so encoding again gives t */
	if (acc & ((1u << bits) - 1))
		return -1;
	return (long)k;
}

/* Encoded length of n bytes, without padding. */
static size_t b64_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

/* n bytes encoded without padding (the caller keeps the '='s it had). */
static void b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		size_t left = n - i;
		if (left > 1)
			v |= (unsigned)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		out[k++] = b64_alphabet[v >> 18 & 63];
		out[k++] = b64_alphabet[v >> 12 & 63];
		if (left > 1)
			out[k++] = b64_alphabet[v >> 6 & 63];
		if (left > 2)
			out[k++] = b64_alphabet[v & 63];
	}
}

/* A phantom inside "Basic TOKEN" anywhere in buf[0..n) (the scheme word
 * case-insensitive, TOKEN canonical base64): what the rewrite did not place. */
static const struct secret *basic_hidden(const struct secrets *s, const char *buf, size_t n)
{
	const struct secret *found = NULL;
	unsigned char *dec = NULL;
	for (size_t i = 0; !found && i + 6 <= n; i++) {
		if (strncasecmp(buf + i, "basic ", 6) != 0)
			continue;
		size_t ts = i + 6;
		while (ts < n && buf[ts] == ' ')
			ts++;
		size_t te = ts;
		while (te < n && b64_val(buf[te]) >= 0)
			te++;
		while (te < n && buf[te] == '=')
			te++;
		if (te == ts)
			continue;
		if (!dec)
			dec = xmalloc(n);
		size_t body;
		long dn = b64_decode(buf + ts, te - ts, dec, &body);
		if (dn > 0)
			found = secrets_find_phantom(s, dec, (size_t)dn);
	}
	if (dec) {
		explicit_bzero(dec, n);
		free(dec);
	}
	return found;
}

/* ---- the head ---- */

struct job {
	const struct secrets *s;
	const struct net_host *h;
	uint16_t port;
	const char *in;   /* the head as given */
	char *out;        /* the head being rewritten (same offsets) */
	struct subst_result *r;
	struct occs found;
};

static int refuse(struct job *j, const struct secret *sc, const char *where)
{
	j->r->leak = sc;
	j->r->leak_where = where;
	return -1;
}

static void add_hit(struct subst_result *r, const struct secret *sc, const char *name, size_t nlen)
{
	size_t cut = nlen > 63 ? 63 : nlen;
	for (size_t i = 0; i < r->nhits; i++)
		if (r->hits[i].secret == sc && strlen(r->hits[i].header) == cut &&
		    memcmp(r->hits[i].header, name, cut) == 0)
			return;
	if (r->nhits == SUBST_HITS_MAX)
		return;
	struct subst_hit *hit = &r->hits[r->nhits++];
	hit->secret = sc;
	memcpy(hit->header, name, cut);
	hit->header[cut] = '\0';
}

/* Replace the occurrences j->found (offsets into buf) in dst, each by its
 * value; every secret must be bound, no two may overlap. */
static int replace_found(struct job *j, char *dst, const char *name, size_t nlen)
{
	if (overlapping(&j->found))
		return refuse(j, j->found.v[0].sc, "overlapping phantoms");
	for (size_t i = 0; i < j->found.n; i++)
		if (!secret_bound(j->found.v[i].sc, j->h, j->port))
			return refuse(j, j->found.v[i].sc, "header to an unbound host");
	for (size_t i = 0; i < j->found.n; i++) {
		const struct occ *o = &j->found.v[i];
		memcpy(dst + o->off, o->sc->value, o->len);
		add_hit(j->r, o->sc, name, nlen);
	}
	return 0;
}

/* "Basic TOKEN" in the value [vs, ve): phantoms inside the decoded
 * credentials. literal: phantoms were found in the value as written. */
static int basic(struct job *j, size_t vs, size_t ve, const char *name, size_t nlen, bool literal)
{
	const char *in = j->in;
	size_t i = vs;
	while (i < ve && is_ows(in[i]))
		i++;
	if (ve - i < 7 || strncasecmp(in + i, "Basic", 5) != 0 || in[i + 5] != ' ')
		return 0;
	i += 5;
	while (i < ve && in[i] == ' ')
		i++;
	size_t ts = i;
	while (i < ve && !is_ows(in[i]))
		i++;
	size_t te = i;
	while (i < ve && is_ows(in[i]))
		i++;
	if (i != ve || te == ts)
		return 0;
	unsigned char *dec = xmalloc(te - ts);
	size_t body = 0;
	long dn = b64_decode(in + ts, te - ts, dec, &body);
	int rc = 0;
	if (dn > 0) {
		find_all(j->s, (const char *)dec, (size_t)dn, &j->found);
		if (j->found.n && literal) {
			rc = refuse(j, j->found.v[0].sc, "overlapping phantoms");
		} else if (j->found.n && (rc = replace_found(j, (char *)dec, name, nlen)) == 0) {
			const struct secret *again = secrets_find_phantom(j->s, dec, (size_t)dn);
			if (again)
				rc = refuse(j, again, "after substitution");
			else if (b64_len((size_t)dn) != body)
				rc = refuse(j, j->found.v[0].sc, "malformed header");
			else
				b64_encode(dec, (size_t)dn, j->out + ts);
		}
	}
	explicit_bzero(dec, te - ts);
	free(dec);
	return rc;
}

/* One header line [ls, le) (le before its CRLF); ok: it ended in CRLF and
 * holds no bare CR. */
static int header(struct job *j, size_t ls, size_t le, bool ok)
{
	const char *in = j->in;
	const char *colon = memchr(in + ls, ':', le - ls);
	size_t ns = ls, ne = colon ? (size_t)(colon - in) : le;
	bool valid = ok && colon && ne > ns;
	for (size_t i = ns; valid && i < ne; i++)
		valid = is_tchar(in[i]);
	const struct secret *any = secrets_find_phantom(j->s, in + ls, le - ls);
	if (!valid) {
		/* nothing can be placed here; without a phantom it stays as it is */
		return any ? refuse(j, any, "malformed header") : 0;
	}
	if ((any = secrets_find_phantom(j->s, in + ns, ne - ns)))
		return refuse(j, any, "header name");
	size_t vs = ne + 1, ve = le;
	find_all(j->s, in + vs, ve - vs, &j->found);
	bool literal = j->found.n > 0;
	if (literal && replace_found(j, j->out + vs, in + ns, ne - ns) < 0)
		return -1;
	return basic(j, vs, ve, in + ns, ne - ns, literal);
}

int subst_head(const struct secrets *s, const struct net_host *h, uint16_t port, const char *head,
	       size_t len, char **out, size_t *outlen, struct subst_result *r)
{
	memset(r, 0, sizeof *r);
	*out = NULL;
	*outlen = 0;
	struct job j = { .s = s, .h = h, .port = port, .in = head, .r = r };
	j.out = xmalloc(len + 1);
	if (len)
		memcpy(j.out, head, len);
	j.out[len] = '\0';
	int rc = 0;
	bool first = true;
	size_t pos = 0;
	while (rc == 0 && pos < len) {
		const char *nl = memchr(head + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - head) : len;
		bool crlf = nl && end > pos && head[end - 1] == '\r';
		size_t le = crlf ? end - 1 : end;
		size_t next = nl ? end + 1 : len;
		if (first) {
			const struct secret *any = secrets_find_phantom(s, head + pos, end - pos);
			if (!any && end > pos) {
				char *dec = xmalloc(end - pos);
				size_t dn = pct_decode(head + pos, end - pos, dec);
				any = secrets_find_phantom(s, dec, dn);
				free(dec);
			}
			if (any)
				rc = refuse(&j, any, "url");
			first = false;
		} else if (le == pos) {
			/* the empty line: the head ends */
			const struct secret *any = secrets_find_phantom(s, head + next, len - next);
			if (any)
				rc = refuse(&j, any, "after the head");
			break;
		} else {
			bool ok = (crlf || !nl) && !memchr(head + pos, '\r', le - pos);
			rc = header(&j, pos, le, ok);
		}
		pos = next;
	}
	if (rc == 0) {
		const struct secret *again = secrets_find_phantom(s, j.out, len);
		if (again)
			rc = refuse(&j, again, "after substitution");
		else if ((again = basic_hidden(s, j.out, len)))
			rc = refuse(&j, again, "basic credentials out of place");
	}
	free(j.found.v);
	if (rc < 0) {
		r->nhits = 0;
		explicit_bzero(j.out, len);
		free(j.out);
		return -1;
	}
	*out = j.out;
	*outlen = len;
	return 0;
}

/* ---- the stream scanner ---- */

void scan_init(struct phantom_scan *sc, const struct secrets *s)
{
	sc->s = s;
	sc->tail_len = 0;
	sc->tail = s->maxlen > 1 ? xmalloc(2 * (s->maxlen - 1)) : NULL;
}

/* A phantom that begins in the tail and ends in data[0..n). */
static const struct secret *across(const struct phantom_scan *sc, const char *buf, size_t blen)
{
	const struct secrets *s = sc->s;
	for (size_t i = 0; i < s->n; i++) {
		const char *ph = s->v[i].phantom;
		size_t pl = strlen(ph);
		/* starts at k < tail_len, ends past tail_len */
		for (size_t k = sc->tail_len >= pl ? sc->tail_len - pl + 1 : 0; k < sc->tail_len; k++)
			if (k + pl <= blen && memcmp(buf + k, ph, pl) == 0)
				return &s->v[i];
	}
	return NULL;
}

const struct secret *scan_feed(struct phantom_scan *sc, const void *data, size_t len)
{
	if (!sc->s || sc->s->maxlen == 0 || len == 0)
		return NULL;
	size_t keep = sc->s->maxlen - 1;
	const struct secret *hit = NULL;
	if (sc->tail_len) {
		/* the tail and the first bytes of data, to catch a split phantom */
		size_t more = len < keep ? len : keep;
		memcpy(sc->tail + sc->tail_len, data, more);
		hit = across(sc, sc->tail, sc->tail_len + more);
	}
	if (!hit)
		hit = secrets_find_phantom(sc->s, data, len);
	/* the new tail: the last keep bytes of tail + data */
	if (len >= keep) {
		memcpy(sc->tail, (const char *)data + len - keep, keep);
		sc->tail_len = keep;
	} else {
		if (!sc->tail_len)
			memcpy(sc->tail, data, len);
		/* tail and data side by side in sc->tail: keep the last bytes */
		size_t total = sc->tail_len + len, drop = total > keep ? total - keep : 0;
		memmove(sc->tail, sc->tail + drop, total - drop);
		sc->tail_len = total - drop;
	}
	return hit;
}

void scan_free(struct phantom_scan *sc)
{
	free(sc->tail);
	memset(sc, 0, sizeof *sc);
}
