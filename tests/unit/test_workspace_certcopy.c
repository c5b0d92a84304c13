/* test_workspace_certcopy.c - unit tests of what the sandbox reads of a
 * *.pem of certificates (src/workspace/certcopy.c), on certificates and
 * keys this test makes with libcrypto: a certificate's copy is the same
 * bytes as OpenSSL writes it, a bundle's holds its certificates in order
 * and none of the text around them (comments, CRLF line ends, trailing
 * blanks), and a copy read again is itself; masked whole: a certificate
 * with its private key, a key alone, a key's DER framed as a certificate,
 * a certificate with one byte more after its DER, a block with headers,
 * dashes in a comment, a block not ended, bad base64, a NUL, no
 * certificate at all; and certcopy_read refuses a FIFO (at once), a
 * symlink and a file over the bound. */
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/sbuf.h"
#include "src/workspace/certcopy.h"
#include "check.h"
#include "files.h"

struct made {
	char *cert, *key; /* PEM, as OpenSSL writes them */
	unsigned char *cert_der, *key_der;
	int cert_der_len, key_der_len;
};

static char *bio_text(BIO *b)
{
	char *p;
	long n = BIO_get_mem_data(b, &p);
	char *s = xmalloc((size_t)n + 1);
	memcpy(s, p, (size_t)n);
	s[n] = '\0';
	BIO_free(b);
	return s;
}

/* A self-signed P-256 certificate and its key. */
static struct made make(const char *cn)
{
	struct made m = { 0 };
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_set_pubkey(x, k);
	if (!k || !x || !X509_sign(x, k, EVP_sha256())) {
		fprintf(stderr, "cannot make a certificate\n");
		exit(2);
	}
	BIO *b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, x);
	m.cert = bio_text(b);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	m.key = bio_text(b);
	m.cert_der_len = i2d_X509(x, &m.cert_der);
	m.key_der_len = i2d_PrivateKey(k, &m.key_der);
	X509_free(x);
	EVP_PKEY_free(k);
	return m;
}

static char *copy_of(const char *text)
{
	size_t n = 0;
	char *c = certcopy_parse(text, strlen(text), &n);
	CHECK(!c || strlen(c) == n);
	return c;
}

/* der framed as a certificate, 64 base64 characters a line */
static char *framed(const unsigned char *der, int len)
{
	struct sbuf b = { 0 };
	sb_puts(&b, "-----BEGIN CERTIFICATE-----\n");
	unsigned char line[65];
	for (int i = 0; i < len; i += 48) {
		int w = EVP_EncodeBlock(line, der + i, len - i < 48 ? len - i : 48);
		sb_put(&b, (const char *)line, (size_t)w);
		sb_putc(&b, '\n');
	}
	sb_puts(&b, "-----END CERTIFICATE-----\n");
	return b.p;
}

static void test_certificates(const struct made *a, const struct made *b)
{
	_cleanup_free_ char *one = copy_of(a->cert);
	CHECK_STR(one, a->cert);
	/* a bundle as certifi's: comments, blank lines; CRLF and trailing blanks */
	_cleanup_free_ char *bundle = xasprintf("# Issuer: CN=a SECRET\n\n%s\n# Label: \"b\"\n%s", a->cert,
						b->cert);
	_cleanup_free_ char *want = xasprintf("%s%s", a->cert, b->cert);
	_cleanup_free_ char *got = copy_of(bundle);
	CHECK_STR(got, want);
	CHECK(got && !strstr(got, "SECRET"));
	_cleanup_free_ char *again = got ? copy_of(got) : NULL;
	CHECK_STR(again, want);
	struct sbuf crlf = { 0 };
	for (const char *p = a->cert; *p; p++)
		sb_puts(&crlf, *p == '\n' ? "  \r\n" : (char[]){ *p, 0 });
	_cleanup_free_ char *fromcrlf = copy_of(crlf.p);
	CHECK_STR(fromcrlf, a->cert);
	free(crlf.p);
	/* its DER re-framed at another width reads the same */
	_cleanup_free_ char *der = framed(a->cert_der, a->cert_der_len);
	_cleanup_free_ char *fromder = copy_of(der);
	CHECK_STR(fromder, a->cert);
}

static void masked(const char *text, const char *what)
{
	_cleanup_free_ char *c = copy_of(text);
	if (c)
		fprintf(stderr, "copied, but must stay masked: %s\n", what);
	CHECK(c == NULL);
}

static void test_masked(const struct made *a)
{
	_cleanup_free_ char *with_key = xasprintf("%s%s", a->cert, a->key);
	masked(with_key, "a certificate and its key");
	_cleanup_free_ char *key_first = xasprintf("%s%s", a->key, a->cert);
	masked(key_first, "a key, then a certificate");
	masked(a->key, "a key alone");
	_cleanup_free_ char *disguised = framed(a->key_der, a->key_der_len);
	masked(disguised, "a key's DER framed as a certificate");
	unsigned char *longer = xmalloc((size_t)a->cert_der_len + 1);
	memcpy(longer, a->cert_der, (size_t)a->cert_der_len);
	longer[a->cert_der_len] = 0;
	_cleanup_free_ char *trailing = framed(longer, a->cert_der_len + 1);
	free(longer);
	masked(trailing, "a byte after the certificate's DER");
	_cleanup_free_ char *shorter = framed(a->cert_der, a->cert_der_len - 1);
	masked(shorter, "a certificate's DER cut short");
	const char *body = strchr(a->cert, '\n') + 1;
	_cleanup_free_ char *headers = xasprintf("-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n%s",
						 body);
	masked(headers, "headers in the block");
	_cleanup_free_ char *dashes = xasprintf("# -----BEGIN PRIVATE KEY----- below\n%s", a->cert);
	masked(dashes, "dashes in a comment");
	_cleanup_free_ char *unended = xstrdup(a->cert);
	unended[strlen(unended) - 26] = '\0'; /* the END line cut off */
	masked(unended, "a block not ended");
	_cleanup_free_ char *badb64 = xstrdup(a->cert);
	badb64[40] = '=';
	masked(badb64, "'=' inside the base64");
	masked("", "nothing");
	masked("# a comment, no certificate\n", "no certificate");
	masked("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", "an empty block");
	char nul[64];
	size_t n = (size_t)snprintf(nul, sizeof nul, "-----BEGIN CERTIFICATE-----\n");
	nul[n] = '\0';
	size_t len;
	CHECK(certcopy_parse(nul, n + 1, &len) == NULL);
}

static void test_read(const struct made *a)
{
	tmpdir_make("wcertcopy");
	_cleanup_close_ int dfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *f = xasprintf("%s/ca.pem", tmpdir);
	spit(f, a->cert, strlen(a->cert));
	size_t len = 0;
	_cleanup_free_ char *c = certcopy_read(dfd, "ca.pem", &len);
	CHECK_STR(c, a->cert);
	_cleanup_free_ char *l = xasprintf("%s/link.pem", tmpdir);
	CHECK(symlink("ca.pem", l) == 0);
	CHECK(certcopy_read(dfd, "link.pem", &len) == NULL);
	_cleanup_free_ char *fifo = xasprintf("%s/fifo.pem", tmpdir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(certcopy_read(dfd, "fifo.pem", &len) == NULL); /* at once: no writer waited for */
	_cleanup_free_ char *big = xasprintf("%s/big.pem", tmpdir);
	struct sbuf b = { 0 };
	while (b.n <= CERTCOPY_MAX)
		sb_puts(&b, a->cert);
	spit(big, b.p, b.n);
	free(b.p);
	CHECK(certcopy_read(dfd, "big.pem", &len) == NULL);
	CHECK(certcopy_read(dfd, "missing.pem", &len) == NULL);
	tmpdir_remove();
}

int main(void)
{
	struct made a = make("warden unit a"), b = make("warden unit b");
	test_certificates(&a, &b);
	test_masked(&a);
	test_read(&a);
	free(a.cert);
	free(a.key);
	free(b.cert);
	free(b.key);
	OPENSSL_free(a.cert_der);
	OPENSSL_free(a.key_der);
	OPENSSL_free(b.cert_der);
	OPENSSL_free(b.key_der);
	return check_status();
}
