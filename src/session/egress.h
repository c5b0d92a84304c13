/* egress.h - secrets by reference at the proxy: the session's CA and TLS
 * contexts, and the guard (net/proxy.h) that puts each secret's real value
 * in place of its phantom toward the hosts it is bound to and refuses the
 * phantom everywhere else; and the hosts warden inspects for their rules
 * (request rules, `mcp` rules), whose TLS it terminates too. */
#pragma once
#include <openssl/ssl.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../net/mcp.h"
#include "../net/proxy.h"
#include "../secrets/mask.h"
#include "../secrets/secrets.h"

struct egress {
	const struct secrets *secrets;  /* borrowed */
	/* borrowed, or NULL: the decoys' tokens (src/detect/canary.h), as
	 * phantoms bound to no host: refused wherever the proxy sees one */
	const struct secrets *canaries;
	struct mask mask;               /* the secrets' forms masked in responses */
	struct tls_ca *ca;              /* the session CA: its key in this process only */
	SSL_CTX *client;                /* upstream: the system store plus the user's CAs */
	struct proxy_guard guard;       /* for the spec (ctx: this) */
	/* borrowed, or NULL: the rules whose hosts are inspected (their TLS
	 * terminated, secret or not): request rules (rules->req) and mcp */
	const struct net_rules *rules;
	const struct mcp_rules *mcp;
};

/* Nothing to do without secrets, canaries or inspected hosts. With
 * canaries only, a guard that watches for their tokens and intercepts
 * nothing (eg->ca stays NULL). With secrets, or a host that request rules
 * or mcp rules name (rules, mcp: borrowed, may be NULL), the session CA,
 * name-constrained to the secrets' and those rules' hosts, and the upstream
 * context trusting the system store and user_cas; the guard asks for the
 * TLS of such a host to be terminated. */
int egress_init(struct egress *eg, const struct secrets *s, const struct secrets *canaries,
		const struct net_rules *rules, const struct mcp_rules *mcp,
		const struct strv *user_cas, struct werr *e);
/* Do the rules of eg name h:port for inspection (a request rule or an mcp
 * rule)? */
bool egress_inspects(const struct egress *eg, const struct net_host *h, uint16_t port);
/* Does any rule ask for a host to be inspected? (No CA is made otherwise.) */
bool egress_any_inspected(const struct net_rules *rules, const struct mcp_rules *mcp);
void egress_free(struct egress *eg);
