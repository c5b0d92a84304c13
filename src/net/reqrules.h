/* reqrules.h - rules on the method and path of a request (`net allow|ask|
 * deny HOST [METHOD[,METHOD...]] [PATH-GLOB]`), for the requests warden
 * sees: plain HTTP through the proxy, and TLS it terminates (a host a
 * secret is bound to, or one these rules name: the rule is the request to
 * inspect it, src/session/egress.h). The rules live in struct net_rules (rules.h, the
 * list `req`); this is their syntax and their verdict on one request.
 *
 * A host that some allow or ask request rule names is narrowed to them:
 * its requests go only where such a rule matches (its method among the
 * rule's, its normalised path matching the glob), whatever host rule
 * allowed the connection. A deny request rule refuses the requests it
 * matches (deny wins, then ask, then allow). A host that only deny request
 * rules name keeps its host rules for everything else. A connection to a
 * host request rules name, where warden would not see the requests
 * (SOCKS5), is refused: it could carry any path.
 *
 * TRACE and TRACK toward a host a secret is bound to are refused (405)
 * whatever the rules say: the response echoes the request, the secret put
 * in it included. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

/* A METHODS token ("GET", "GET,HEAD": HTTP methods warden knows, at most
 * 8) into r->methods; or a glob (such as "/repos/" then "*") into r->path,
 * normalised (reqpath.h). 0, or -1 with *why (static). */
bool reqrules_is_method_list(const char *tok); /* does it start with a method warden knows? */
int reqrules_methods(struct net_rule *r, const char *tok, const char **why);
int reqrules_path(struct net_rule *r, const char *tok, const char **why);

/* The first request rule that names h:port (any action), or NULL. */
const struct net_rule *reqrules_names(const struct net_rules *s, const struct net_host *h,
				      uint16_t port);

/* One request's verdict. */
struct req_verdict {
	enum rules_verdict v;      /* RULES_ALLOW (also: no request rule names the host),
				    * RULES_DENY or RULES_ASK */
	int status;                /* DENY: 403, 400 (a path refused), 405 (TRACE) */
	const struct net_rule *rule; /* the rule that decided, or NULL */
	char rule_text[NET_RULE_TEXT_MAX + NET_METHODS_MAX + REQGLOB_MAX];
	char path[REQPATH_MAX];    /* the normalised path, or the target as sent (printable, cut) */
	char why[1024];            /* DENY: the reason the client and the event get */
};

/* The verdict on METHOD TARGET (target[0..tlen): origin-form, as sent) to
 * h:port. bound: a secret is bound there (TRACE, TRACK refused). */
void reqrules_decide(const struct net_rules *s, const struct net_host *h, uint16_t port,
		     const char *method, const char *target, size_t tlen, bool bound,
		     struct req_verdict *out);

/* A complete response of our own that keeps the connection open: status,
 * X-Warden-Reason, a text/plain body with the reason (none when head_only:
 * the answer to HEAD). Returns the length, or -1 when cap is too small
 * (1024 is enough). */
long reqrules_response(int status, const char *reason, bool head_only, char *out, size_t cap);
