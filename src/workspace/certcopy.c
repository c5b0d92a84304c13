/* certcopy.c - the certificates of a *.pem in the workspace, copied out for
 * the sandbox when the file holds nothing else that is framed as PEM
 * (certcopy.h says why and what stays masked). */
#include "certcopy.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/evp.h> /* EVP_DecodeBlock and EVP_EncodeBlock alone: no provider */

#include "../common/sbuf.h"
#include "../common/util.h"

#define BEGIN_CERT "-----BEGIN CERTIFICATE-----"
#define END_CERT "-----END CERTIFICATE-----"

/* One DER element at p[0..n): its tag, and its header's and content's
 * lengths; false when it is not DER's form (a tag of more than one byte,
 * an indefinite or overlong length, or a content past n). */
static bool der_next(const unsigned char *p, size_t n, unsigned char *tag, size_t *hdr,
		     size_t *clen)
{
	if (n < 2 || (p[0] & 0x1f) == 0x1f)
		return false;
	size_t len = p[1], h = 2;
	if (len & 0x80) {
		size_t k = len & 0x7f;
		if (k == 0 || k > 3 || n < 2 + k)
			return false;
		len = 0;
		for (size_t i = 0; i < k; i++)
			len = len << 8 | p[2 + i];
		h += k;
	}
	if (len > n - h)
		return false;
	*tag = p[0];
	*hdr = h;
	*clen = len;
	return true;
}

/* A certificate's outer shape (RFC 5280): SEQUENCE { tbsCertificate
 * SEQUENCE { [0] version or the serial INTEGER, ... }, signatureAlgorithm
 * SEQUENCE, signatureValue BIT STRING }, and nothing after it. A private
 * key (PKCS#1, PKCS#8, SEC 1) starts its SEQUENCE with an INTEGER. */
static bool cert_shape(const unsigned char *d, size_t n)
{
	static const unsigned char want[3] = { 0x30, 0x30, 0x03 };
	unsigned char tag;
	size_t h, len;
	if (!der_next(d, n, &tag, &h, &len) || tag != 0x30 || h + len != n)
		return false;
	const unsigned char *p = d + h;
	size_t left = len;
	for (size_t i = 0; i < 3; i++) {
		if (!der_next(p, left, &tag, &h, &len) || tag != want[i])
			return false;
		unsigned char first;
		size_t h1, l1;
		if (i == 0 && (!der_next(p + h, len, &first, &h1, &l1) ||
			       (first != 0xa0 && first != 0x02)))
			return false;
		p += h + len;
		left -= h + len;
	}
	return left == 0;
}

static bool b64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/' || c == '=';
}

/* One block's base64 (its lines joined) decoded, checked and written to out
 * again, 64 characters a line; false when it is no certificate. */
static bool put_cert(struct sbuf *out, const char *b64, size_t n)
{
	if (n == 0 || n % 4 != 0 || n > CERTCOPY_MAX)
		return false;
	size_t pad = b64[n - 1] == '=' ? (b64[n - 2] == '=' ? 2 : 1) : 0;
	for (size_t i = 0; i < n - pad; i++)
		if (b64[i] == '=')
			return false;
	_cleanup_free_ unsigned char *der = xmalloc(n / 4 * 3 + 1);
	int got = EVP_DecodeBlock(der, (const unsigned char *)b64, (int)n);
	if (got < 0 || (size_t)got < pad)
		return false;
	size_t dlen = (size_t)got - pad;
	if (!cert_shape(der, dlen))
		return false;
	sb_puts(out, BEGIN_CERT "\n");
	unsigned char line[65];
	for (size_t i = 0; i < dlen; i += 48) {
		int w = EVP_EncodeBlock(line, der + i, (int)(dlen - i < 48 ? dlen - i : 48));
		sb_put(out, (const char *)line, (size_t)w);
		sb_putc(out, '\n');
	}
	sb_puts(out, END_CERT "\n");
	return true;
}

/* The line at *p (to '\n' or end), *p moved past it; its length with the
 * trailing '\r', spaces and tabs left out. */
static size_t next_line(const char **p, const char *end, const char **line)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl ? nl : end;
	*p = nl ? nl + 1 : end;
	while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*line = s;
	return (size_t)(e - s);
}

static bool is(const char *line, size_t n, const char *what)
{
	return n == strlen(what) && memcmp(line, what, n) == 0;
}

char *certcopy_parse(const char *buf, size_t n, size_t *len)
{
	if (n > CERTCOPY_MAX || memchr(buf, '\0', n))
		return NULL;
	struct sbuf out = { 0 }, b64 = { 0 };
	bool inside = false, ok = true;
	size_t certs = 0;
	for (const char *p = buf, *end = buf + n; ok && p < end;) {
		const char *line;
		size_t ln = next_line(&p, end, &line);
		if (!inside) {
			/* text between blocks is left out; dashes that frame anything
			 * but a certificate mean the file holds more than certificates */
			if (is(line, ln, BEGIN_CERT)) {
				inside = true;
				b64.n = 0;
			} else if (memmem(line, ln, "-----", 5)) {
				ok = false;
			}
			continue;
		}
		if (is(line, ln, END_CERT)) {
			ok = put_cert(&out, b64.p ? b64.p : "", b64.n);
			certs++;
			inside = false;
			continue;
		}
		for (size_t i = 0; ok && i < ln; i++)
			ok = b64_char(line[i]); /* a header ("Proc-Type:") is no certificate's */
		if (ok)
			sb_put(&b64, line, ln);
	}
	free(b64.p);
	if (!ok || inside || certs == 0) {
		free(out.p);
		return NULL;
	}
	*len = out.n;
	return out.p;
}

char *certcopy_read(int dirfd, const char *name, size_t *len)
{
	size_t n;
	_cleanup_free_ char *text = read_regular_at(dirfd, name, O_NOFOLLOW, CERTCOPY_MAX, &n, NULL);
	return text ? certcopy_parse(text, n, len) : NULL;
}
