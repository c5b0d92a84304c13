/* egress.h - secrets by reference at the proxy: the session's CA and TLS
 * contexts, and the guard (net/proxy.h) that puts each secret's real value
 * in place of its phantom toward the hosts it is bound to and refuses the
 * phantom everywhere else. */
#pragma once
#include <openssl/ssl.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../net/proxy.h"
#include "../secrets/secrets.h"

struct egress {
	const struct secrets *secrets;  /* borrowed */
	/* borrowed, or NULL: the decoys' tokens (src/detect/canary.h), as
	 * phantoms bound to no host: refused wherever the proxy sees one */
	const struct secrets *canaries;
	struct tls_ca *ca;              /* the session CA: its key in this process only */
	SSL_CTX *client;                /* upstream: the system store plus the user's CAs */
	struct proxy_guard guard;       /* for the spec (ctx: this) */
};

/* Nothing to do without secrets or canaries. With canaries only, a guard
 * that watches for their tokens and intercepts nothing (eg->ca stays NULL).
 * With secrets, the session CA, name-constrained to the secrets' hosts, and
 * the upstream context trusting the system store and user_cas. */
int egress_init(struct egress *eg, const struct secrets *s, const struct secrets *canaries,
		const struct strv *user_cas, struct werr *e);
void egress_free(struct egress *eg);
