/* tls.c - the per-session CA (in memory, name-constrained), the leaf and
 * server context per intercepted host, and the upstream client context. */
#include "tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "../common/util.h"

#define CA_DAYS 90
#define LEAF_SECONDS (24 * 3600)
#define LEAF_RENEW_SECONDS 3600  /* mint again when less than this is left */
#define BACKDATE_SECONDS 300

static const unsigned char alpn_http11[] = "\x08http/1.1";

struct leaf {
	struct net_host host;
	SSL_CTX *ctx;
	time_t expires;
};

struct tls_ca {
	EVP_PKEY *key;
	X509 *cert;
	char *pem;
	struct net_host *hosts;
	size_t nhosts;
	pthread_mutex_t mu;
	struct leaf *leaves;
	size_t nleaves, cap;
};

const char *tls_error_string(char *buf, size_t len, const char *fallback)
{
	unsigned long err = ERR_get_error();
	const char *r = NULL;
	if (err && ERR_SYSTEM_ERROR(err))
		r = strerror(ERR_GET_REASON(err));
	else if (err)
		r = ERR_reason_error_string(err);
	if (err && !r)
		snprintf(buf, len, "OpenSSL error %lx", err);
	else
		snprintf(buf, len, "%s", r ? r : fallback);
	ERR_clear_error();
	return buf;
}

static int ssl_fail(struct werr *e, const char *what)
{
	char why[256];
	return werr_set(e, 0, "%s: %s", what, tls_error_string(why, sizeof why, "OpenSSL failed"));
}

/* "*.example.com" -> "example.com", else NULL. */
static const char *wildcard_suffix(const struct net_host *h)
{
	if (h->kind == NET_HOST_NAME && h->name[0] == '*' && h->name[1] == '.')
		return h->name + 2;
	return NULL;
}

/* A host given to tls_ca_new: a canonical name, "*." and one, or an address. */
static bool host_valid(const struct net_host *h)
{
	if (h->kind != NET_HOST_NAME)
		return h->kind == NET_HOST_IPV4 || h->kind == NET_HOST_IPV6;
	const char *name = wildcard_suffix(h);
	if (!name)
		name = h->name;
	struct net_host c;
	const char *why;
	size_t len = strnlen(name, sizeof h->name);
	if (len == 0 || len >= sizeof h->name || net_host_parse(&c, name, len, &why) < 0)
		return false;
	return c.kind == NET_HOST_NAME && strcmp(c.name, name) == 0;
}

bool tls_ca_covers(const struct tls_ca *ca, const struct net_host *h)
{
	if (h->kind == NET_HOST_NAME && wildcard_suffix(h))
		return false; /* a leaf is for one host */
	for (size_t i = 0; i < ca->nhosts; i++) {
		const struct net_host *c = &ca->hosts[i];
		const char *suffix = wildcard_suffix(c);
		if (h->kind != c->kind)
			continue;
		if (h->kind != NET_HOST_NAME) {
			if (addr_ip_equal(&h->ip, &c->ip))
				return true;
		} else if (!suffix) {
			if (strcmp(h->name, c->name) == 0)
				return true;
		} else {
			size_t hl = strlen(h->name), sl = strlen(suffix);
			if (hl > sl + 1 && h->name[hl - sl - 1] == '.' &&
			    strcmp(h->name + hl - sl, suffix) == 0)
				return true;
		}
	}
	return false;
}

/* ---- certificates ------------------------------------------------------- */

static EVP_PKEY *new_key(struct werr *e)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	if (!k)
		ssl_fail(e, "generating an EC P-256 key");
	return k;
}

/* A random positive 127-bit serial; its hex (8 digits) in tag when tag. */
static int set_serial(X509 *x, char tag[9], struct werr *e)
{
	BIGNUM *bn = BN_new();
	int ok = bn && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
		 BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	/* the tag: the serial's low 32 bits (BN_get_word of a number wider
	 * than a word is all ones) */
	if (ok && tag) {
		unsigned char low[4] = { 0 };
		int n = BN_num_bytes(bn);
		unsigned char *all = n > 0 ? xmalloc((size_t)n) : NULL;
		if (all && BN_bn2bin(bn, all) == n)
			for (int i = 0; i < 4 && i < n; i++)
				low[3 - i] = all[n - 1 - i];
		free(all);
		snprintf(tag, 9, "%02x%02x%02x%02x", low[0], low[1], low[2], low[3]);
	}
	BN_free(bn);
	return ok ? 0 : ssl_fail(e, "making a certificate serial number");
}

/* One extension from OpenSSL's configuration syntax ("critical,CA:TRUE"). */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value, struct werr *e)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
	int ok = ext && X509_add_ext(x, ext, -1) == 1;
	X509_EXTENSION_free(ext);
	return ok ? 0 : ssl_fail(e, "adding a certificate extension");
}

/* Append one GeneralSubtree: a DNS name (len bytes of data) or an address
 * and its mask (8 or 32 bytes). */
static int add_subtree(STACK_OF(GENERAL_SUBTREE) *sk, int type, const void *data, int len)
{
	GENERAL_SUBTREE *st = GENERAL_SUBTREE_new();
	ASN1_STRING *s = type == GEN_DNS ? ASN1_IA5STRING_new() : ASN1_OCTET_STRING_new();
	if (!st || !s || ASN1_STRING_set(s, data, len) != 1) {
		GENERAL_SUBTREE_free(st);
		ASN1_STRING_free(s);
		return -1;
	}
	GENERAL_NAME_set0_value(st->base, type, s);
	if (sk_GENERAL_SUBTREE_push(sk, st) <= 0) {
		GENERAL_SUBTREE_free(st);
		return -1;
	}
	return 0;
}

/* nameConstraints (critical): each host name permitted, or every name
 * excluded (the empty DNS constraint matches all) when no host is a name.
 * Addresses are left unconstrained: BoringSSL (Bun, and so Claude Code's
 * native binary) refuses a certificate with an address under any address
 * constraint (X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE), permitted or
 * excluded. The CA still signs only the leaves warden mints, for the bound
 * hosts; the constraint is a second wall for the names. */
static int add_name_constraints(X509 *x, const struct net_host *hosts, size_t n, struct werr *e)
{
	NAME_CONSTRAINTS *nc = NAME_CONSTRAINTS_new();
	bool names = false;
	int ok = nc != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		const struct net_host *h = &hosts[i];
		if (h->kind != NET_HOST_NAME)
			continue;
		if (!nc->permittedSubtrees)
			ok = (nc->permittedSubtrees = sk_GENERAL_SUBTREE_new_null()) != NULL;
		/* "*.example.com" -> ".example.com": subdomains only */
		const char *s = wildcard_suffix(h) ? h->name + 1 : h->name;
		ok = ok && add_subtree(nc->permittedSubtrees, GEN_DNS, s, (int)strlen(s)) == 0;
		names = true;
	}
	if (ok && !names)
		ok = (nc->excludedSubtrees = sk_GENERAL_SUBTREE_new_null()) != NULL &&
		     add_subtree(nc->excludedSubtrees, GEN_DNS, "", 0) == 0;
	ok = ok && X509_add1_ext_i2d(x, NID_name_constraints, nc, 1, X509V3_ADD_DEFAULT) == 1;
	NAME_CONSTRAINTS_free(nc);
	return ok ? 0 : ssl_fail(e, "adding the CA's name constraints");
}

static int set_validity(X509 *x, long seconds, struct werr *e)
{
	if (!X509_gmtime_adj(X509_getm_notBefore(x), -BACKDATE_SECONDS) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), seconds))
		return ssl_fail(e, "setting a certificate's validity");
	return 0;
}

static X509 *make_ca_cert(EVP_PKEY *key, const struct net_host *hosts, size_t n, struct werr *e)
{
	X509 *x = X509_new();
	char tag[9], cn[64];
	if (!x) {
		ssl_fail(e, "making the session CA");
		return NULL;
	}
	X509_NAME *name = X509_get_subject_name(x);
	if (X509_set_version(x, X509_VERSION_3) != 1 || set_serial(x, tag, e) < 0)
		goto fail;
	snprintf(cn, sizeof cn, "warden session CA %s", tag);
	if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"warden", -1,
				       -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
				       0) != 1 ||
	    X509_set_issuer_name(x, name) != 1 || X509_set_pubkey(x, key) != 1) {
		ssl_fail(e, "naming the session CA");
		goto fail;
	}
	if (set_validity(x, (long)CA_DAYS * 86400, e) < 0 ||
	    add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0", e) < 0 ||
	    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign", e) < 0 ||
	    add_ext(x, x, NID_subject_key_identifier, "hash", e) < 0 ||
	    add_name_constraints(x, hosts, n, e) < 0)
		goto fail;
	if (X509_sign(x, key, EVP_sha256()) <= 0) {
		ssl_fail(e, "signing the session CA");
		goto fail;
	}
	return x;
fail:
	X509_free(x);
	return NULL;
}

X509 *tls_ca_issue(struct tls_ca *ca, const struct net_host *h, EVP_PKEY *key, struct werr *e)
{
	X509 *x = X509_new();
	if (!x) {
		ssl_fail(e, "making a certificate");
		return NULL;
	}
	X509_NAME *name = X509_get_subject_name(x);
	char *san = NULL;
	if (X509_set_version(x, X509_VERSION_3) != 1 || set_serial(x, NULL, e) < 0)
		goto fail;
	/* The subject names the host only when it is a name: a verifier may
	 * check a commonName that looks like a host name against the DNS
	 * constraints, which an address would not pass. */
	if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"warden", -1,
				       -1, 0) != 1 ||
	    (h->kind == NET_HOST_NAME &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)h->name,
					-1, -1, 0) != 1) ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    X509_set_pubkey(x, key) != 1) {
		ssl_fail(e, "naming a certificate");
		goto fail;
	}
	san = xasprintf("%s:%s", h->kind == NET_HOST_NAME ? "DNS" : "IP", h->name);
	if (set_validity(x, LEAF_SECONDS, e) < 0 ||
	    add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE", e) < 0 ||
	    add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature", e) < 0 ||
	    add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth", e) < 0 ||
	    add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always", e) < 0 ||
	    add_ext(x, ca->cert, NID_subject_alt_name, san, e) < 0)
		goto fail;
	if (X509_sign(x, ca->key, EVP_sha256()) <= 0) {
		ssl_fail(e, "signing a certificate");
		goto fail;
	}
	free(san);
	return x;
fail:
	free(san);
	X509_free(x);
	return NULL;
}

/* ---- the CA ------------------------------------------------------------- */

struct tls_ca *tls_ca_new(const struct net_host *hosts, size_t n, struct werr *e)
{
	if (n == 0) {
		werr_set(e, 0, "a session CA needs at least one host");
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!host_valid(&hosts[i])) {
			werr_set(e, 0, "a session CA for \"%.253s\": not a host name or address",
				 hosts[i].name);
			return NULL;
		}
	struct tls_ca *ca = xcalloc(1, sizeof *ca);
	pthread_mutex_init(&ca->mu, NULL);
	ca->hosts = xmalloc(n * sizeof *hosts);
	memcpy(ca->hosts, hosts, n * sizeof *hosts);
	ca->nhosts = n;
	if (!(ca->key = new_key(e)) || !(ca->cert = make_ca_cert(ca->key, hosts, n, e)))
		goto fail;
	BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long len;
	if (!bio || PEM_write_bio_X509(bio, ca->cert) != 1 || (len = BIO_get_mem_data(bio, &data)) <= 0) {
		BIO_free(bio);
		ssl_fail(e, "writing the session CA as PEM");
		goto fail;
	}
	ca->pem = xmalloc((size_t)len + 1);
	memcpy(ca->pem, data, (size_t)len);
	ca->pem[len] = '\0';
	BIO_free(bio);
	return ca;
fail:
	tls_ca_free(ca);
	return NULL;
}

const char *tls_ca_pem(const struct tls_ca *ca)
{
	return ca->pem;
}

void tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < ca->nleaves; i++)
		SSL_CTX_free(ca->leaves[i].ctx);
	free(ca->leaves);
	EVP_PKEY_free(ca->key); /* OpenSSL clears the private key as it frees it */
	X509_free(ca->cert);
	free(ca->pem);
	free(ca->hosts);
	pthread_mutex_destroy(&ca->mu);
	free(ca);
}

/* ---- contexts ----------------------------------------------------------- */

static const unsigned char alpn_h2_http11[] = "\x02h2\x08http/1.1";

static int alpn_idx = -1;
static pthread_once_t alpn_once = PTHREAD_ONCE_INIT;

static void alpn_idx_init(void)
{
	alpn_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

void tls_server_alpn(SSL *ssl, struct tls_alpn *a)
{
	pthread_once(&alpn_once, alpn_idx_init);
	if (alpn_idx >= 0)
		SSL_set_ex_data(ssl, alpn_idx, a);
}

static struct tls_alpn *alpn_of(SSL *ssl)
{
	return alpn_idx >= 0 ? SSL_get_ex_data(ssl, alpn_idx) : NULL;
}

/* Does the ClientHello's ALPN list name h2? */
static bool hello_offers_h2(SSL *ssl)
{
	const unsigned char *d;
	size_t len;
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &d,
				      &len) != 1 || len < 2)
		return false;
	size_t i = 2, end = 2 + ((size_t)d[0] << 8 | d[1]);
	if (end > len)
		return false;
	while (i < end) {
		size_t n = d[i++];
		if (n > end - i)
			return false;
		if (n == 2 && memcmp(d + i, "h2", 2) == 0)
			return true;
		i += n;
	}
	return false;
}

/* The ClientHello's server name (RFC 6066: a list of (type, name), the
 * host_name type 0 taken) into a->sni; a list that does not parse sets
 * a->sni_bad. */
static void hello_sni(SSL *ssl, struct tls_alpn *a)
{
	const unsigned char *d;
	size_t len;
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &d, &len) != 1)
		return;
	size_t end = len >= 2 ? 2 + ((size_t)d[0] << 8 | d[1]) : 0;
	if (end != len || len < 5) {
		a->sni_bad = true;
		return;
	}
	for (size_t i = 2; i < end;) {
		if (end - i < 3) {
			a->sni_bad = true;
			return;
		}
		size_t n = (size_t)d[i + 1] << 8 | d[i + 2];
		if (n > end - i - 3 || (d[i] == 0 && (n == 0 || n >= sizeof a->sni))) {
			a->sni_bad = true;
			return;
		}
		if (d[i] == 0 && !a->sni_len) {
			memcpy(a->sni, d + i + 3, n);
			a->sni_len = n;
		}
		i += 3 + n;
	}
}

/* With a tls_alpn that holds: note what the client offers and pause the
 * handshake once. */
static int hello_cb(SSL *ssl, int *al, void *arg)
{
	struct tls_alpn *a = alpn_of(ssl);
	if (a && a->hold) {
		a->hold = false;
		a->client_h2 = hello_offers_h2(ssl);
		hello_sni(ssl, a);
		return SSL_CLIENT_HELLO_RETRY;
	}
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* Offer the client http/1.1, and h2 first where its tls_alpn allows it; no
 * ALPN answer when it offers neither. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned char *sel;
	struct tls_alpn *a = alpn_of(ssl);
	bool h2 = a && a->allow_h2;
	const unsigned char *ours = h2 ? alpn_h2_http11 : alpn_http11;
	unsigned ourlen = h2 ? sizeof alpn_h2_http11 - 1 : sizeof alpn_http11 - 1;
	if (SSL_select_next_proto(&sel, outlen, ours, ourlen, in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* TLS 1.3 suites, both legs: AES-128-GCM first, as browsers order them (the
 * suite every TLS 1.3 peer has; OpenSSL's own order starts with AES-256,
 * about a third more work a byte, which a proxy that decrypts and encrypts
 * again pays twice), then OpenSSL's others. */
#define TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

static SSL_CTX *mint_server_ctx(struct tls_ca *ca, const struct net_host *h, struct werr *e)
{
	EVP_PKEY *key = new_key(e);
	X509 *x = key ? tls_ca_issue(ca, h, key, e) : NULL;
	SSL_CTX *ctx = x ? SSL_CTX_new(TLS_server_method()) : NULL;
	if (x && !ctx)
		ssl_fail(e, "making a TLS server context");
	if (ctx && (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
		    SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) != 1 ||
		    SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1 ||
		    SSL_CTX_check_private_key(ctx) != 1)) {
		ssl_fail(e, "setting up a TLS server context");
		SSL_CTX_free(ctx);
		ctx = NULL;
	}
	if (ctx) {
		/* our order (a client without AES in hardware that asks for
		 * ChaCha20 first still gets it) */
		SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
						 SSL_OP_PRIORITIZE_CHACHA);
		SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
					      SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
		SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
		SSL_CTX_set_client_hello_cb(ctx, hello_cb, NULL);
	}
	X509_free(x);
	EVP_PKEY_free(key);
	return ctx;
}

SSL_CTX *tls_server_ctx(struct tls_ca *ca, const struct net_host *h, struct werr *e)
{
	if (!tls_ca_covers(ca, h)) {
		werr_set(e, 0, "%.253s is not a host of the session CA", h->name);
		return NULL;
	}
	time_t now = time(NULL);
	SSL_CTX *ctx = NULL;
	pthread_mutex_lock(&ca->mu);
	struct leaf *l = NULL;
	for (size_t i = 0; i < ca->nleaves && !l; i++)
		if (ca->leaves[i].host.kind == h->kind && strcmp(ca->leaves[i].host.name, h->name) == 0)
			l = &ca->leaves[i];
	if (!l || now >= l->expires - LEAF_RENEW_SECONDS) {
		SSL_CTX *fresh = mint_server_ctx(ca, h, e);
		if (fresh) {
			if (!l) {
				if (ca->nleaves == ca->cap) {
					ca->cap = ca->cap ? 2 * ca->cap : 8;
					ca->leaves = xrealloc(ca->leaves, ca->cap * sizeof *ca->leaves);
				}
				l = &ca->leaves[ca->nleaves++];
				l->host = *h;
			} else {
				SSL_CTX_free(l->ctx); /* connections holding it keep theirs */
			}
			l->ctx = fresh;
			l->expires = now + LEAF_SECONDS;
		} else {
			l = NULL;
		}
	}
	if (l && SSL_CTX_up_ref(l->ctx) == 1)
		ctx = l->ctx;
	else if (l)
		ssl_fail(e, "taking a TLS server context");
	pthread_mutex_unlock(&ca->mu);
	return ctx;
}

void tls_ctx_free(SSL_CTX *ctx)
{
	SSL_CTX_free(ctx);
}

SSL_CTX *tls_client_ctx(const char *const *extra_ca_files, struct werr *e)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		ssl_fail(e, "making the TLS client context");
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof alpn_http11 - 1) != 0) {
		ssl_fail(e, "setting up the TLS client context");
		goto fail;
	}
	/* The system's trusted certificates by their hashed directory, read as
	 * verification needs them: loading the whole bundle file (what
	 * SSL_CTX_set_default_verify_paths does) costs 40-50 ms at startup. */
	const char *dir = getenv(X509_get_default_cert_dir_env());
	if (!dir || !*dir)
		dir = X509_get_default_cert_dir();
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? SSL_CTX_load_verify_dir(ctx, dir) != 1
						       : SSL_CTX_set_default_verify_paths(ctx) != 1) {
		ssl_fail(e, "loading the system's trusted certificates");
		goto fail;
	}
	for (size_t i = 0; extra_ca_files && extra_ca_files[i]; i++)
		if (SSL_CTX_load_verify_file(ctx, extra_ca_files[i]) != 1) {
			char why[256];
			werr_set(e, 0, "loading CA certificates from %s: %s", extra_ca_files[i],
				 tls_error_string(why, sizeof why, "no certificate in it"));
			goto fail;
		}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx), X509_V_FLAG_PARTIAL_CHAIN);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

SSL *tls_client_ssl(SSL_CTX *ctx, int fd, const struct net_host *h)
{
	SSL *ssl = SSL_new(ctx);
	if (!ssl)
		return NULL;
	bool ok = SSL_set_fd(ssl, fd) == 1;
	if (ok && h->kind == NET_HOST_NAME) {
		ok = SSL_set_tlsext_host_name(ssl, h->name) == 1 && SSL_set1_host(ssl, h->name) == 1;
		SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	} else if (ok) {
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), h->name) == 1;
	}
	if (!ok) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_connect_state(ssl);
	return ssl;
}
