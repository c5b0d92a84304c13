/* test_net_tls.c - unit tests of the per-session CA and its leaves
 * (src/net/tls.c), checked with OpenSSL's own verification: a leaf for each
 * kind of host verifies against the CA alone; a leaf outside the name
 * constraints (another name, the bare name of a "*." host, another address,
 * a name from a CA of addresses only and the reverse) does not; the
 * refusals of tls_ca_new and tls_server_ctx; the leaf cache; the client
 * context's CA files and the SNI and verification names of its SSLs; and
 * what tls_ca_new costs, cold and warm. No network. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "src/net/tls.h"
#include "check.h"

static struct net_host H(const char *s)
{
	struct net_host h;
	const char *why;
	if (s[0] == '*') {
		memset(&h, 0, sizeof h);
		h.kind = NET_HOST_NAME;
		snprintf(h.name, sizeof h.name, "%s", s);
	} else if (net_host_parse(&h, s, strlen(s), &why) < 0) {
		fprintf(stderr, "bad host in the test: %s\n", s);
		abort();
	}
	return h;
}

static X509 *ca_cert(const struct tls_ca *ca)
{
	BIO *b = BIO_new_mem_buf(tls_ca_pem(ca), -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	return x;
}

/* Verify leaf against the CA alone, as a client verifying host would
 * (host NULL: no name check). Returns the X509_V_ result. */
static int verify(const struct tls_ca *ca, X509 *leaf, const char *host)
{
	X509_STORE *st = X509_STORE_new();
	X509 *root = ca_cert(ca);
	X509_STORE_add_cert(st, root);
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_STORE_CTX_init(ctx, st, leaf, NULL);
	X509_VERIFY_PARAM *vp = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_purpose(vp, X509_PURPOSE_SSL_SERVER);
	if (host && X509_VERIFY_PARAM_set1_ip_asc(vp, host) != 1)
		X509_VERIFY_PARAM_set1_host(vp, host, 0);
	int ok = X509_verify_cert(ctx);
	int err = X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(root);
	ERR_clear_error();
	return ok == 1 ? X509_V_OK : (err == X509_V_OK ? -1 : err);
}

/* A leaf for host minted by the CA without the constraints check. */
static X509 *issue(struct tls_ca *ca, const char *host)
{
	struct net_host h = H(host);
	struct werr e = { 0 };
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = tls_ca_issue(ca, &h, k, &e);
	EVP_PKEY_free(k);
	if (!x)
		fprintf(stderr, "tls_ca_issue %s: %s\n", host, e.msg);
	return x;
}

static int verify_issued(struct tls_ca *ca, const char *host, const char *check_as)
{
	X509 *x = issue(ca, host);
	int r = x ? verify(ca, x, check_as) : -2;
	X509_free(x);
	return r;
}

static void test_ca_and_leaves(void)
{
	struct net_host hosts[] = { H("api.test"), H("*.example.com"), H("127.0.0.1"), H("[::1]") };
	struct werr e = { 0 };
	struct tls_ca *ca = tls_ca_new(hosts, 4, &e);
	CHECK(ca != NULL);
	if (!ca)
		return;
	const char *pem = tls_ca_pem(ca);
	CHECK(strncmp(pem, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
	X509 *root = ca_cert(ca);
	CHECK(root != NULL);
	/* a CA for leaves only, constrained (critical), EC P-256 */
	CHECK(X509_check_ca(root) == 1);
	CHECK(X509_get_pathlen(root) == 0);
	int crit = -1;
	NAME_CONSTRAINTS *nc = X509_get_ext_d2i(root, NID_name_constraints, &crit, NULL);
	/* the names only: an address constraint makes BoringSSL (Bun) refuse
	 * every leaf with an address */
	CHECK(nc && crit == 1 && sk_GENERAL_SUBTREE_num(nc->permittedSubtrees) == 2 &&
	      sk_GENERAL_SUBTREE_num(nc->excludedSubtrees) <= 0);
	NAME_CONSTRAINTS_free(nc);
	EVP_PKEY *pub = X509_get0_pubkey(root);
	char group[32] = "";
	EVP_PKEY_get_group_name(pub, group, sizeof group, NULL);
	CHECK_STR(group, "prime256v1");
	X509_NAME *subj = X509_get_subject_name(root);
	char cn[128] = "";
	X509_NAME_get_text_by_NID(subj, NID_commonName, cn, sizeof cn);
	CHECK(strncmp(cn, "warden session CA ", 18) == 0 && strlen(cn) == 26);
	X509_free(root);

	/* leaves inside: verify, for their own name only */
	CHECK(verify_issued(ca, "api.test", "api.test") == X509_V_OK);
	CHECK(verify_issued(ca, "api.test", "other.test") == X509_V_ERR_HOSTNAME_MISMATCH);
	CHECK(verify_issued(ca, "a.example.com", "a.example.com") == X509_V_OK);
	CHECK(verify_issued(ca, "b.a.example.com", "b.a.example.com") == X509_V_OK);
	CHECK(verify_issued(ca, "127.0.0.1", "127.0.0.1") == X509_V_OK);
	CHECK(verify_issued(ca, "[::1]", "::1") == X509_V_OK);
	/* outside the constraints: refused by the verifier, whatever the name */
	CHECK(verify_issued(ca, "evil.test", NULL) == X509_V_ERR_PERMITTED_VIOLATION);
	CHECK(verify_issued(ca, "example.com", NULL) == X509_V_ERR_PERMITTED_VIOLATION);
	CHECK(verify_issued(ca, "api.test.evil", NULL) == X509_V_ERR_PERMITTED_VIOLATION);
	CHECK(verify_issued(ca, "badexample.com", NULL) == X509_V_ERR_PERMITTED_VIOLATION);
	/* addresses are not constrained (see tls.c): only what warden mints */
	CHECK(verify_issued(ca, "127.0.0.2", "127.0.0.2") == X509_V_OK);

	/* the server contexts: covered hosts only, cached per host */
	struct net_host h = H("api.test");
	SSL_CTX *c1 = tls_server_ctx(ca, &h, &e);
	SSL_CTX *c2 = tls_server_ctx(ca, &h, &e);
	CHECK(c1 && c1 == c2);
	struct net_host hs = H("a.example.com");
	SSL_CTX *c3 = tls_server_ctx(ca, &hs, &e);
	CHECK(c3 && c3 != c1);
	if (c1) {
		X509 *leaf = SSL_CTX_get0_certificate(c1);
		CHECK(verify(ca, leaf, "api.test") == X509_V_OK);
		/* short validity: a day */
		int days = -1, secs = -1;
		ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(leaf), X509_get0_notAfter(leaf));
		CHECK(days == 1 && secs == 300);
		CHECK(X509_check_ca(leaf) == 0);
		CHECK(X509_check_purpose(leaf, X509_PURPOSE_SSL_SERVER, 0) == 1);
	}
	if (c3)
		CHECK(verify(ca, SSL_CTX_get0_certificate(c3), "a.example.com") == X509_V_OK);
	struct net_host bare = H("example.com"), evil = H("evil.test"), ip2 = H("127.0.0.2");
	struct net_host wild = H("*.example.com");
	CHECK(tls_server_ctx(ca, &bare, &e) == NULL);
	CHECK_STR(e.msg, "example.com is not a host of the session CA");
	CHECK(tls_server_ctx(ca, &evil, &e) == NULL);
	CHECK(tls_server_ctx(ca, &ip2, &e) == NULL);
	CHECK(tls_server_ctx(ca, &wild, &e) == NULL);
	struct net_host ip = H("127.0.0.1");
	SSL_CTX *c4 = tls_server_ctx(ca, &ip, &e);
	CHECK(c4 && verify(ca, SSL_CTX_get0_certificate(c4), "127.0.0.1") == X509_V_OK);
	/* contexts outlive the CA that made them */
	tls_ca_free(ca);
	CHECK(c1 && SSL_CTX_get0_certificate(c1) != NULL);
	SSL_CTX_free(c1);
	SSL_CTX_free(c2);
	SSL_CTX_free(c3);
	SSL_CTX_free(c4);
}

/* A CA of addresses only excludes every name; a CA of names leaves
 * addresses alone (no address constraints: see tls.c). */
static void test_one_kind(void)
{
	struct werr e = { 0 };
	struct net_host n = H("api.test"), a = H("192.0.2.7");
	struct tls_ca *names = tls_ca_new(&n, 1, &e);
	struct tls_ca *addrs = tls_ca_new(&a, 1, &e);
	CHECK(names && addrs);
	if (!names || !addrs)
		return;
	CHECK(verify_issued(names, "api.test", "api.test") == X509_V_OK);
	CHECK(verify_issued(names, "other.test", NULL) == X509_V_ERR_PERMITTED_VIOLATION);
	CHECK(verify_issued(addrs, "192.0.2.7", "192.0.2.7") == X509_V_OK);
	CHECK(verify_issued(addrs, "api.test", NULL) == X509_V_ERR_EXCLUDED_VIOLATION);
	/* two sessions, two CAs: one does not vouch for the other's leaves */
	struct tls_ca *other = tls_ca_new(&n, 1, &e);
	X509 *x = issue(other, "api.test");
	CHECK(x && verify(names, x, "api.test") != X509_V_OK);
	CHECK(strcmp(tls_ca_pem(names), tls_ca_pem(other)) != 0);
	X509_free(x);
	tls_ca_free(other);
	tls_ca_free(names);
	tls_ca_free(addrs);
}

static void test_refusals(void)
{
	struct werr e = { 0 };
	struct net_host h = H("api.test");
	CHECK(tls_ca_new(&h, 0, &e) == NULL);
	CHECK_STR(e.msg, "a session CA needs at least one host");
	const char *bad[] = { "*", "*.", "*.*.example.com", "a*.example.com", "*example.com", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct net_host b = { .kind = NET_HOST_NAME };
		snprintf(b.name, sizeof b.name, "%s", bad[i]);
		e.msg[0] = '\0';
		CHECK(tls_ca_new(&b, 1, &e) == NULL);
		CHECK(strstr(e.msg, "not a host name or address") != NULL);
	}
	struct net_host upper = { .kind = NET_HOST_NAME, .name = "API.test" };
	CHECK(tls_ca_new(&upper, 1, &e) == NULL); /* not canonical */
	tls_ca_free(NULL);
}

static void test_client(void)
{
	struct werr e = { 0 };
	SSL_CTX *c = tls_client_ctx(NULL, &e);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(SSL_CTX_get_verify_mode(c) == SSL_VERIFY_PEER);
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	struct net_host n = H("api.test"), a = H("[2001:db8::5]");
	SSL *s = tls_client_ssl(c, sv[0], &n);
	CHECK(s && SSL_get_fd(s) == sv[0]);
	CHECK(s && strcmp(SSL_get_servername(s, TLSEXT_NAMETYPE_host_name), "api.test") == 0);
	CHECK(s && X509_VERIFY_PARAM_get0_host(SSL_get0_param(s), 0) &&
	      strcmp(X509_VERIFY_PARAM_get0_host(SSL_get0_param(s), 0), "api.test") == 0);
	SSL_free(s);
	s = tls_client_ssl(c, sv[0], &a);
	CHECK(s && SSL_get_servername(s, TLSEXT_NAMETYPE_host_name) == NULL);
	if (s) {
		char *ip = X509_VERIFY_PARAM_get1_ip_asc(SSL_get0_param(s));
		CHECK_STR(ip, "2001:DB8:0:0:0:0:0:5");
		OPENSSL_free(ip);
	}
	SSL_free(s);
	close(sv[0]);
	close(sv[1]);
	SSL_CTX_free(c);

	/* extra CA files: loaded; a missing or empty one is an error naming it */
	struct tls_ca *ca = tls_ca_new(&n, 1, &e);
	char path[] = "/tmp/warden-test-tls-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && ca);
	if (fd < 0 || !ca)
		return;
	CHECK(write(fd, tls_ca_pem(ca), strlen(tls_ca_pem(ca))) == (ssize_t)strlen(tls_ca_pem(ca)));
	close(fd);
	const char *files[] = { path, NULL };
	c = tls_client_ctx(files, &e);
	CHECK(c != NULL);
	SSL_CTX_free(c);
	const char *missing[] = { path, "/nonexistent/ca.pem", NULL };
	CHECK(tls_client_ctx(missing, &e) == NULL);
	CHECK_STR(e.msg, "loading CA certificates from /nonexistent/ca.pem: No such file or directory");
	FILE *f = fopen(path, "w");
	fputs("not a certificate\n", f);
	fclose(f);
	CHECK(tls_client_ctx(files, &e) == NULL);
	CHECK(strstr(e.msg, path) != NULL);
	unlink(path);
	tls_ca_free(ca);
}

static double ms_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* What a session pays for its CA: the first one in the process (with
 * OpenSSL's own one-time setup) and the median of 20 more. */
static void test_cost(double cold)
{
	struct net_host hosts[] = { H("api.anthropic.com"), H("api.openai.com") };
	struct werr e;
	double t[20];
	for (int i = 0; i < 20; i++) {
		double t0 = ms_now();
		struct tls_ca *ca = tls_ca_new(hosts, 2, &e);
		t[i] = ms_now() - t0;
		CHECK(ca != NULL);
		tls_ca_free(ca);
	}
	qsort(t, 20, sizeof t[0], cmp_double);
	printf("tls_ca_new: first in the process %.2f ms, then median %.2f ms, max %.2f ms\n", cold,
	       t[10], t[19]);
	CHECK(t[10] < 10.0);
}

int main(void)
{
	struct net_host h = H("api.anthropic.com");
	struct werr e;
	double t0 = ms_now();
	struct tls_ca *first = tls_ca_new(&h, 1, &e);
	double cold = ms_now() - t0;
	CHECK(first != NULL);
	tls_ca_free(first);

	test_ca_and_leaves();
	test_one_kind();
	test_refusals();
	test_client();
	test_cost(cold);
	return check_status_counted("test-net-tls");
}
