/* test_net_sni.c - unit tests of the ClientHello reader (src/net/sni.c):
 * OpenSSL's own ClientHello with and without a server name (folded as every
 * other name the proxy reads), each prefix of it needing more, the same
 * hello split over records, bytes that are not TLS, and malformed hellos and
 * names (a NUL in the name, two names, lengths that lie) refused. */
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/sni.h"
#include "check.h"

/* OpenSSL's ClientHello for name (NULL: none) into out; its length. */
static size_t openssl_hello(const char *name, uint8_t *out, size_t cap)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = SSL_new(ctx);
	BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
	SSL_set_bio(ssl, rb, wb);
	if (name)
		SSL_set_tlsext_host_name(ssl, name);
	SSL_set_connect_state(ssl);
	SSL_do_handshake(ssl);
	int n = BIO_read(wb, out, (int)cap);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return n > 0 ? (size_t)n : 0;
}

/* A minimal ClientHello in one record whose extensions are ext[0..en). */
static size_t hand_hello(const uint8_t *ext, size_t en, uint8_t *out)
{
	uint8_t body[1024];
	size_t b = 0;
	body[b++] = 3, body[b++] = 3;
	memset(body + b, 0x11, 32), b += 32;
	body[b++] = 0;                                  /* session id */
	body[b++] = 0, body[b++] = 2, body[b++] = 0x13, body[b++] = 1; /* one suite */
	body[b++] = 1, body[b++] = 0;                   /* null compression */
	body[b++] = (uint8_t)(en >> 8), body[b++] = (uint8_t)en;
	memcpy(body + b, ext, en), b += en;
	size_t hl = b + 4;
	out[0] = 0x16, out[1] = 3, out[2] = 1, out[3] = (uint8_t)(hl >> 8), out[4] = (uint8_t)hl;
	out[5] = 1, out[6] = 0, out[7] = (uint8_t)(b >> 8), out[8] = (uint8_t)b;
	memcpy(out + 9, body, b);
	return 9 + b;
}

/* A server_name extension naming name[0..n). */
static size_t sni_ext(const char *name, size_t n, uint8_t *out)
{
	out[0] = 0, out[1] = 0;
	out[2] = (uint8_t)((n + 5) >> 8), out[3] = (uint8_t)(n + 5);
	out[4] = (uint8_t)((n + 3) >> 8), out[5] = (uint8_t)(n + 3);
	out[6] = 0, out[7] = (uint8_t)(n >> 8), out[8] = (uint8_t)n;
	memcpy(out + 9, name, n);
	return 9 + n;
}

static void test_openssl(void)
{
	static uint8_t buf[SNI_BUF_MAX];
	struct net_host h;
	const char *why = NULL;
	size_t n = openssl_hello("Other.Example", buf, sizeof buf);
	CHECK(n > 100);
	CHECK(sni_read(buf, n, &h, &why) == SNI_NAME);
	CHECK_STR(h.name, "other.example");
	for (size_t i = 0; i < n; i++)
		if (sni_read(buf, i, &h, &why) != SNI_NEED_MORE) {
			CHECK(!"a prefix of a ClientHello needs more");
			break;
		}
	/* the same handshake message split over two records */
	static uint8_t two[SNI_BUF_MAX];
	size_t body = n - 5, first = 40;
	memcpy(two, buf, 5);
	two[3] = (uint8_t)(first >> 8), two[4] = (uint8_t)first;
	memcpy(two + 5, buf + 5, first);
	memcpy(two + 5 + first, buf, 5);
	two[5 + first + 3] = (uint8_t)((body - first) >> 8);
	two[5 + first + 4] = (uint8_t)(body - first);
	memcpy(two + 10 + first, buf + 5 + first, body - first);
	CHECK(sni_read(two, n + 5, &h, &why) == SNI_NAME);
	CHECK_STR(h.name, "other.example");
	CHECK(sni_read(two, n + 4, &h, &why) == SNI_NEED_MORE);

	n = openssl_hello(NULL, buf, sizeof buf);
	CHECK(n > 100);
	CHECK(sni_read(buf, n, &h, &why) == SNI_NONE);
}

static void test_not_tls(void)
{
	struct net_host h;
	const char *why;
	CHECK(sni_read((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &h, &why) == SNI_NOT_TLS);
	CHECK(sni_read((const uint8_t *)"SSH-2.0-x\r\n", 11, &h, &why) == SNI_NOT_TLS);
	CHECK(sni_read((const uint8_t *)"\x16\x01", 2, &h, &why) == SNI_NOT_TLS);
	CHECK(sni_read(NULL, 0, &h, &why) == SNI_NEED_MORE);
	CHECK(sni_read((const uint8_t *)"\x16", 1, &h, &why) == SNI_NEED_MORE);
	/* TLS, but a record of another kind first (a red team's change_cipher_spec,
	 * alert and heartbeat before a ClientHello naming another host): refused */
	CHECK(sni_read((const uint8_t *)"\x14\x03\x03\x00\x01\x01", 6, &h, &why) == SNI_BAD);
	CHECK_STR(why, "a TLS record other than the ClientHello first");
	CHECK(sni_read((const uint8_t *)"\x15\x03\x01\x00\x02\x01\x00", 7, &h, &why) == SNI_BAD);
	CHECK(sni_read((const uint8_t *)"\x18\x03\x03", 3, &h, &why) == SNI_BAD);
	CHECK(sni_read((const uint8_t *)"\x17\x03\x03", 3, &h, &why) == SNI_BAD);
	CHECK(sni_read((const uint8_t *)"\x14", 1, &h, &why) == SNI_NEED_MORE);
	CHECK(sni_read((const uint8_t *)"\x14\x01", 2, &h, &why) == SNI_NOT_TLS);
	/* SSLv2's ClientHello: no host name it could carry */
	CHECK(sni_read((const uint8_t *)"\x80\x2e\x01\x03\x01", 5, &h, &why) == SNI_NONE);
	CHECK(sni_read((const uint8_t *)"\x80\x2e\x02\x03\x01", 5, &h, &why) == SNI_NOT_TLS);
	/* its first bytes sent apart: more is needed, not a pass as not TLS
	 * (which let `net sni required` be passed by a hello in two writes) */
	CHECK(sni_read((const uint8_t *)"\x80", 1, &h, &why) == SNI_NEED_MORE);
	CHECK(sni_read((const uint8_t *)"\x80\x2e", 2, &h, &why) == SNI_NEED_MORE);
	CHECK(sni_read((const uint8_t *)"\x80\x2e\x01", 3, &h, &why) == SNI_NEED_MORE);
	CHECK(sni_read((const uint8_t *)"\x80\x2e\x01\x03", 4, &h, &why) == SNI_NONE);
	CHECK(sni_read((const uint8_t *)"\x80\x2e\x02", 3, &h, &why) == SNI_NOT_TLS);
	CHECK(sni_read((const uint8_t *)"\x80\x2e\x01\x02", 4, &h, &why) == SNI_NOT_TLS);
}

static void test_malformed(void)
{
	uint8_t ext[600], buf[1200];
	struct net_host h;
	const char *why = NULL;
	size_t en = sni_ext("allowed.example", 15, ext);
	size_t n = hand_hello(ext, en, buf);
	CHECK(sni_read(buf, n, &h, &why) == SNI_NAME);
	CHECK_STR(h.name, "allowed.example");
	/* the 2025 SOCKS5 bug's name, in TLS */
	en = sni_ext("attacker.example\0.allowed.example", 33, ext);
	n = hand_hello(ext, en, buf);
	CHECK(sni_read(buf, n, &h, &why) == SNI_BAD);
	CHECK_STR(why, "control byte in host");
	en = sni_ext("%61llowed.example", 17, ext);
	n = hand_hello(ext, en, buf);
	CHECK(sni_read(buf, n, &h, &why) == SNI_BAD);
	/* two server_name extensions */
	en = sni_ext("a.example", 9, ext);
	en += sni_ext("b.example", 9, ext + en);
	n = hand_hello(ext, en, buf);
	CHECK(sni_read(buf, n, &h, &why) == SNI_BAD);
	/* an extension length past the end */
	en = sni_ext("a.example", 9, ext);
	ext[3] += 1;
	n = hand_hello(ext, en, buf);
	CHECK(sni_read(buf, n, &h, &why) == SNI_BAD);
	/* a handshake that is not a ClientHello */
	en = sni_ext("a.example", 9, ext);
	n = hand_hello(ext, en, buf);
	buf[5] = 2;
	CHECK(sni_read(buf, n, &h, &why) == SNI_BAD);
	/* no extensions at all */
	n = hand_hello(ext, 0, buf);
	CHECK(sni_read(buf, n, &h, &why) == SNI_NONE);
	CHECK(sni_read(buf, n - 2, &h, &why) == SNI_NEED_MORE);
}

int main(void)
{
	test_openssl();
	test_not_tls();
	test_malformed();
	printf("%d checks\n", checks);
	return check_status();
}
