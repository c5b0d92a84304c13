/* proxy_req.c - request rules (reqrules.h) where the proxy sees requests:
 * a plain request decided before it is dialled (refused with 403, or a
 * question for a human); each request of an intercepted connection decided
 * on its thread (proxy_req_intercepted, answered there, the connection
 * kept) and its refusals logged when the connection ends; and a
 * connection whose requests warden would not see, to a host request rules
 * name, refused. */
#include "proxy_conn.h"

#include <stdio.h>
#include <string.h>

/* s into d, cut to fit. */
static void cut(char *d, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);
	memcpy(d, s, n);
	d[n] = '\0';
}

static void host_port(const struct conn *c, char *out, size_t cap)
{
	bool v6 = c->dest.kind == NET_HOST_IPV6;
	snprintf(out, cap, "%s%s%s:%u", v6 ? "[" : "", c->dest.name, v6 ? "]" : "", c->port);
}

static void ask_request(struct conn *c, const struct req_verdict *v, proxy_answered_fn done)
{
	char hp[NET_HOST_MAX + 16], subject[NET_HOST_MAX + 16 + 600], summary[sizeof subject + 32];
	host_port(c, hp, sizeof hp);
	snprintf(subject, sizeof subject, "%s %.32s %.500s", hp, c->method, v->path);
	snprintf(summary, sizeof summary, "%.32s http://%s%.500s (HTTP)", c->method, hp, v->path);
	json_t *detail = json_pack("{s:s,s:i,s:s,s:s,s:s}", "host", c->dest.name, "port", c->port,
				   "method", c->method, "path", v->path, "rule", v->rule_text);
	c->state = S_ASKING;
	conn_interest(c);
	const void *q = c->px->asker.ask(c->px->asker.ctx, subject, summary, detail, done, c);
	if (q && c->state == S_ASKING)
		c->question = q;
}

int proxy_req_plain(struct conn *c, proxy_answered_fn done)
{
	const struct net_rules *s = c->px->rules;
	if (!s->nreq || !c->hp)
		return 0;
	size_t tl = 0;
	const char *t = http_path(c->hp, &tl);
	char buf[HTTP_REQUEST_LINE_MAX + 2];
	if (tl == 0 || t[0] == '?') { /* forwarded with a '/' in front */
		buf[0] = '/';
		memcpy(buf + 1, t, tl < sizeof buf - 1 ? tl : sizeof buf - 1);
		t = buf;
		tl = tl + 1 < sizeof buf ? tl + 1 : sizeof buf;
	}
	struct req_verdict v;
	reqrules_decide(s, &c->dest, c->port, c->method, t, tl, false, &v);
	cut(c->path, sizeof c->path, v.path);
	if (v.rule_text[0])
		snprintf(c->rule, sizeof c->rule, "%s", v.rule_text);
	if (v.v == RULES_DENY) {
		if (!v.rule_text[0])
			c->rule[0] = '\0';
		conn_refuse(c, v.status, 0, v.why);
		return -1;
	}
	if (v.v == RULES_ASK) {
		if (!c->px->asker.ask) {
			conn_refuse(c, 403, 0, "an ask rule names this request and nobody can answer");
			return -1;
		}
		ask_request(c, &v, done);
		return 1;
	}
	return 0;
}

bool proxy_req_unseen(struct conn *c, bool intercepted)
{
	if (c->plain || intercepted || !c->px->rules->nreq)
		return false;
	const struct net_rule *r = reqrules_names(c->px->rules, &c->dest, c->port);
	if (!r)
		return false;
	char hp[NET_HOST_MAX + 16], why[1200];
	host_port(c, hp, sizeof hp);
	rules_rule_text(r, c->rule, sizeof c->rule);
	snprintf(why, sizeof why, "rule %.400s narrows %s to methods and paths, but warden does not "
		 "see the requests of this %s: bind a secret to %s (warden then terminates its "
		 "TLS) or use plain HTTP", c->rule, hp,
		 c->socks ? "SOCKS5 connection" : c->fw ? "host loopback port" : "tunnel", c->dest.name);
	conn_refuse(c, 403, SOCKS5_NOT_ALLOWED, why);
	return true;
}

int proxy_req_intercepted(void *ctx, const char *method, const char *target, size_t tlen,
			  char *why, size_t whylen)
{
	struct req_check *rc = ctx;
	struct req_verdict v;
	reqrules_decide(rc->rules, &rc->host, rc->port, method, target, tlen, true, &v);
	if (v.v == RULES_ALLOW)
		return 0;
	if (v.v == RULES_ASK) { /* not asked from an interception thread yet */
		v.status = 403;
		snprintf(v.why, sizeof v.why, "%.32s %.300s: rule %.400s asks, and warden asks about "
			 "requests only in plain HTTP: refused", method, v.path, v.rule_text);
	}
	cut(why, whylen, v.why);
	if (rc->n == REQ_REFUSALS_KEPT) {
		rc->dropped++;
		return v.status;
	}
	struct req_refusal *f = &rc->v[rc->n++];
	snprintf(f->method, sizeof f->method, "%s", method);
	cut(f->path, sizeof f->path, v.path);
	snprintf(f->rule, sizeof f->rule, "%s", v.rule_text);
	cut(f->reason, sizeof f->reason, v.why);
	f->status = v.status;
	return v.status;
}

void proxy_req_events(struct conn *c, const struct req_check *rc)
{
	for (unsigned i = 0; i < rc->n; i++) {
		const struct req_refusal *f = &rc->v[i];
		char reason[sizeof f->reason + 64];
		if (i + 1 == rc->n && rc->dropped)
			snprintf(reason, sizeof reason, "%s (and %u more requests refused)", f->reason,
				 rc->dropped);
		else
			snprintf(reason, sizeof reason, "%s", f->reason);
		struct event ev = ev_net_proxy(&(struct ev_net_proxy){
			.method = f->method, .host = c->host, .port = c->port, .address = c->address,
			.loopback = c->fw != NULL, .allowed = false, .status = f->status, .rule = f->rule,
			.reason = reason,
			.path = f->path, .tool = c->tool[0] ? c->tool : NULL });
		if (ev.fields)
			audit_emit_event(c->px->log, ev, NULL);
	}
}
