/* tls.h - TLS for the connections the proxy intercepts (intercept.h): a
 * per-session certificate authority that lives in memory only, the leaf
 * certificate and server context for each host it speaks for, and the client
 * context that verifies the real server upstream.
 *
 * The session CA: an EC P-256 key generated in memory and never written
 * anywhere (the supervisor alone holds it; OpenSSL clears it when freed), a
 * self-signed certificate with a subject unique to the session, and X.509
 * name constraints (critical) permitting exactly the hosts it was made for:
 * "example.com" permits that name, "*.example.com" its subdomains, an IP
 * address that address. A certificate it would sign for any other name or
 * address fails to verify, in any verifier that honours name constraints:
 * when no host is a name, every DNS name is excluded; when none is an
 * address, every IPv4 and IPv6 address is.
 *
 * Leaves: per host, on first use, an EC P-256 key of its own and a
 * certificate with the host as its only subjectAltName (DNS or IP), valid
 * for a day (minted again when less than an hour is left), serverAuth only.
 *
 * Thread-safety: tls_server_ctx may be called from any thread (the cache
 * has a lock); the contexts returned are OpenSSL objects with reference
 * counts, safe to use from several threads at once. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "../common/err.h"
#include "rules.h"

struct tls_ca;

/* A new session CA for hosts[0..n): names (canonical, as rules.h makes
 * them, or "*." and such a name: the subdomains of that name), IPv4 and
 * IPv6 addresses. Errors: n == 0, a malformed name, OpenSSL failing. */
struct tls_ca *tls_ca_new(const struct net_host *hosts, size_t n, struct werr *e);

/* The CA certificate, PEM, NUL-terminated; owned by ca. */
const char *tls_ca_pem(const struct tls_ca *ca);

/* Free the CA, its key and the leaves it holds (contexts still referenced
 * elsewhere live on until their last SSL_CTX_free). NULL is fine. */
void tls_ca_free(struct tls_ca *ca);

/* Give back a reference to a context of tls_server_ctx's or
 * tls_client_ctx's (SSL_CTX_free; NULL is fine): outside the TLS module
 * (tlsmod.h), contexts are freed through here. */
void tls_ctx_free(SSL_CTX *ctx);

/* Is h among the CA's hosts (a name, a subdomain of a "*." name, an
 * address)? */
bool tls_ca_covers(const struct tls_ca *ca, const struct net_host *h);

/* The server context that presents h's leaf to the sandbox's client:
 * TLS 1.2 or later, ALPN "http/1.1" only unless the SSL's tls_alpn allows h2
 * (a client offering only other protocols gets no ALPN answer), no
 * renegotiation. h must be covered by
 * the CA. Returns a reference of the caller's: tls_ctx_free it. */
SSL_CTX *tls_server_ctx(struct tls_ca *ca, const struct net_host *h, struct werr *e);

/* The ALPN choice of one connection of a server context: hold pauses its
 * handshake once, at the ClientHello (SSL_accept fails with
 * SSL_ERROR_WANT_CLIENT_HELLO_CB; call it again to go on), client_h2 then
 * says whether the client offers h2; allow_h2, when set before going on,
 * answers h2 to a client that offers it (h2 preferred to http/1.1). a must
 * outlive the handshake. */
struct tls_alpn {
	bool hold;
	bool client_h2;
	bool allow_h2;
	/* the ClientHello's server name (SNI) as sent, read at the hold:
	 * sni_len 0 none; sni_bad: an extension that does not parse */
	char sni[256];
	size_t sni_len;
	bool sni_bad;
};
void tls_server_alpn(SSL *ssl, struct tls_alpn *a);

/* A leaf certificate for h with key's public key, signed by the CA - with no
 * check that the CA covers h: that is for the verifier to refuse (the tests
 * mint one outside the constraints). tls_server_ctx uses it. */
X509 *tls_ca_issue(struct tls_ca *ca, const struct net_host *h, EVP_PKEY *key, struct werr *e);

/* The client context for the upstream connections: TLS 1.2 or later, peer
 * verification against the system trust store (SSL_CTX_set_default_verify_paths:
 * SSL_CERT_FILE and SSL_CERT_DIR as the host sets them) plus each PEM file of
 * extra_ca_files (NULL-terminated; may be NULL), any certificate of those
 * files being a trust anchor (X509_V_FLAG_PARTIAL_CHAIN, as curl does), ALPN
 * "http/1.1" (an SSL of it may offer h2 too: intercept.c does when its client
 * does), no renegotiation. Errors: a CA file that cannot be loaded. */
SSL_CTX *tls_client_ctx(const char *const *extra_ca_files, struct werr *e);

/* An SSL for one upstream connection on fd that verifies h: SNI and the
 * certificate's DNS names for a name (no partial wildcards), the certificate's
 * IP addresses for an address (no SNI). NULL when OpenSSL fails. */
SSL *tls_client_ssl(SSL_CTX *ctx, int fd, const struct net_host *h);

/* The reason of the oldest error in this thread's OpenSSL error queue
 * ("certificate verify failed"), or fallback when it is empty; the queue is
 * cleared. Returns buf. */
const char *tls_error_string(char *buf, size_t len, const char *fallback);
