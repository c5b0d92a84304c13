/* trust.h - the trust store of a session in which warden terminates TLS:
 * the CA files the user configured (trusted for the upstream connections
 * too), the bundle the sandbox trusts (the host's system bundle, those
 * files and the session CA's certificate), and the variables that point
 * clients at it. */
#pragma once
#include "../common/err.h"
#include "../common/util.h"

/* The CA files the host's environment names (NODE_EXTRA_CA_CERTS,
 * SSL_CERT_FILE, CODEX_CA_CERTIFICATE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE,
 * GIT_SSL_CAINFO), each an existing regular file, once. */
void trust_user_cas(struct strv *out);

/* Write DIR/trust/SESSION.pem (mode 0644, a new file): the system bundle,
 * user_cas, then ca_pem. *path receives it (the caller unlinks it at the
 * end), *lock a descriptor holding its lock for the session (closed at the
 * end): a store nobody holds so, a killed warden's, is removed here. */
int trust_bundle_write(const char *dir, const char *session, const char *ca_pem,
		       const struct strv *user_cas, char **path, int *lock, struct werr *e);

/* Point every CA variable clients read at the sandbox's bundle. */
void trust_env(struct strv *envp);
