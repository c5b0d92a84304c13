/* reqrules.c - the syntax of request rules (methods, a path glob) and
 * their verdict on one request (reqrules.h). */
#include "reqrules.h"

#include <stdio.h>
#include <string.h>

#define METHODS_AT_MOST 8

static const char *const known[] = { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
	"TRACE", "TRACK", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK",
	"REPORT", "SEARCH", "QUERY" };

static bool known_method(const char *m, size_t n)
{
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (strlen(known[i]) == n && memcmp(known[i], m, n) == 0)
			return true;
	return false;
}

bool reqrules_is_method_list(const char *tok)
{
	const char *c = strchr(tok, ',');
	return known_method(tok, c ? (size_t)(c - tok) : strlen(tok));
}

int reqrules_methods(struct net_rule *r, const char *tok, const char **why)
{
	size_t n = strlen(tok), count = 1;
	if (n == 0 || n >= sizeof r->methods || tok[0] == ',' || tok[n - 1] == ',') {
		*why = "bad method list (METHOD[,METHOD...], upper case)";
		return -1;
	}
	for (const char *p = tok;;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (!known_method(p, l)) {
			*why = l ? "unknown method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, ...: "
				   "upper case)" : "empty method in the list";
			return -1;
		}
		if (!c)
			break;
		count++;
		p = c + 1;
	}
	if (count > METHODS_AT_MOST) {
		*why = "more than 8 methods";
		return -1;
	}
	memcpy(r->methods, tok, n + 1);
	return 0;
}

int reqrules_path(struct net_rule *r, const char *tok, const char **why)
{
	size_t n = strlen(tok);
	if (n >= REQGLOB_MAX) {
		*why = "path glob too long (255 bytes at most)";
		return -1;
	}
	return reqpath_normalise(tok, n, true, r->path, sizeof r->path, why);
}

const struct net_rule *reqrules_names(const struct net_rules *s, const struct net_host *h,
				      uint16_t port)
{
	for (size_t i = 0; i < s->nreq; i++)
		if (rules_rule_matches(&s->req[i].r, h, port))
			return &s->req[i].r;
	return NULL;
}

static bool method_in(const char *list, const char *m)
{
	if (!list[0])
		return true;
	size_t ml = strlen(m);
	for (const char *p = list;;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l == ml && memcmp(p, m, l) == 0)
			return true;
		if (!c)
			return false;
		p = c + 1;
	}
}

static void printable(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++)
		out[o++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[o] = '\0';
}

static void deny(struct req_verdict *o, int status, const struct net_rule *r)
{
	o->v = RULES_DENY;
	o->status = status;
	o->rule = r;
	if (r)
		rules_rule_text(r, o->rule_text, sizeof o->rule_text);
}

/* What the request rules for h:port do allow, appended to a refusal's
 * reason (at most out's room, the rest counted): "; its rules allow POST
 * /v1/messages, GET /v1/models (+2 more)", so that the client's 403 and
 * the event name the rules that narrowed the host. */
static void allowed_here(const struct net_rules *s, const struct net_host *h, uint16_t port,
			 char *out, size_t cap)
{
	size_t used = 0, more = 0;
	for (size_t i = 0; i < s->nreq; i++) {
		const struct net_req_rule *q = &s->req[i];
		if (q->action != RULES_ALLOW || !rules_rule_matches(&q->r, h, port))
			continue;
		char one[NET_METHODS_MAX + REQGLOB_MAX + 8];
		snprintf(one, sizeof one, "%s %s", q->r.methods[0] ? q->r.methods : "any method",
			 q->r.path[0] ? q->r.path : "any path");
		const char *lead = used ? ", " : "; its rules allow ";
		if (!more && used + strlen(lead) + strlen(one) + 16 < cap) {
			used += (size_t)snprintf(out + used, cap - used, "%s%s", lead, one);
		} else {
			more++;
		}
	}
	if (more && used + 16 < cap)
		snprintf(out + used, cap - used, " (+%zu more)", more);
}

void reqrules_decide(const struct net_rules *s, const struct net_host *h, uint16_t port,
		     const char *method, const char *target, size_t tlen, bool bound,
		     struct req_verdict *o)
{
	memset(o, 0, offsetof(struct req_verdict, path));
	o->v = RULES_ALLOW;
	o->path[0] = o->why[0] = '\0';
	char ht[NET_HOST_PORT_MAX];
	if (bound && (strcmp(method, "TRACE") == 0 || strcmp(method, "TRACK") == 0)) {
		printable(o->path, sizeof o->path, target, tlen < 200 ? tlen : 200);
		net_host_port(h, port, ht, sizeof ht);
		deny(o, 405, NULL);
		snprintf(o->why, sizeof o->why, "%s toward %s, which a secret is bound to, is refused: "
			 "the response would echo the secret", method, ht);
		return;
	}
	if (!s->nreq || !reqrules_names(s, h, port))
		return;
	const char *bad = NULL;
	if (reqpath_normalise(target, tlen, false, o->path, sizeof o->path, &bad) < 0) {
		printable(o->path, sizeof o->path, target, tlen < 200 ? tlen : 200);
		net_host_port(h, port, ht, sizeof ht);
		deny(o, 400, NULL);
		snprintf(o->why, sizeof o->why, "path of %.32s %.200s on %s refused: %s", method, o->path,
			 ht, bad);
		return;
	}
	const struct net_rule *hit[4] = { NULL }; /* by action */
	bool narrowed = false;
	for (size_t i = 0; i < s->nreq; i++) {
		const struct net_req_rule *q = &s->req[i];
		if (!rules_rule_matches(&q->r, h, port))
			continue;
		narrowed |= q->action != RULES_DENY;
		if (!hit[q->action] && method_in(q->r.methods, method) &&
		    (!q->r.path[0] || reqpath_match(q->r.path, o->path)))
			hit[q->action] = &q->r;
	}
	net_host_port(h, port, ht, sizeof ht);
	if (hit[RULES_DENY]) {
		deny(o, 403, hit[RULES_DENY]);
		snprintf(o->why, sizeof o->why, "%.32s %.300s on %s denied by rule %.400s", method, o->path,
			 ht, o->rule_text);
	} else if (hit[RULES_ASK] || hit[RULES_ALLOW]) {
		o->v = hit[RULES_ASK] ? RULES_ASK : RULES_ALLOW;
		o->rule = hit[o->v];
		rules_rule_text(o->rule, o->rule_text, sizeof o->rule_text);
	} else if (narrowed) {
		deny(o, 403, NULL);
		int n = snprintf(o->why, sizeof o->why, "no rule allows %.32s %.300s on %s", method,
				 o->path, ht);
		allowed_here(s, h, port, o->why + n, sizeof o->why - (size_t)n);
	}
}

long reqrules_response(int status, const char *reason, bool head_only, char *out, size_t cap)
{
	const char *text = status == 400 ? "Bad Request" : status == 405 ? "Method Not Allowed"
							 : "Forbidden";
	char r[256];
	printable(r, sizeof r, reason, strlen(reason));
	int n = snprintf(out, cap, "HTTP/1.1 %d %s\r\nX-Warden-Reason: %s\r\n%s"
			 "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s%s",
			 status, text, r, status == 405 ? "Allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n" : "",
			 strlen(r) + 1, head_only ? "" : r, head_only ? "" : "\n");
	return n > 0 && (size_t)n < cap ? n : -1;
}
