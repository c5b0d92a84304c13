/* proxy_req.c - request rules (reqrules.h) where the proxy sees requests:
 * a plain request decided before it is dialled (refused with 403, or a
 * question for a human); each request of an intercepted connection decided
 * on its thread (proxy_req_intercepted, refused there with the connection
 * kept, or a question the thread waits on while the loop puts it: askq.h)
 * and its refusals and answers logged when the connection ends; a
 * connection whose requests warden would not see (SOCKS5), to a host
 * request rules name, refused; and the reason of a handshake refused by a
 * client, naming the rule warden terminated the TLS for. */
#include "proxy_conn.h"
#include "proxy_mcp.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>

/* s into d, cut to fit. */
static void cut(char *d, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);
	memcpy(d, s, n);
	d[n] = '\0';
}

#define SUBJECT_MAX (NET_HOST_PORT_MAX + 600) /* "HOST:PORT METHOD PATH", the method and path cut */

/* The question about METHOD v->path to h:port (proxy_asker's subject,
 * summary and fields): the subject alike wherever warden reads the
 * request, so that an answer for the session or a pattern covers it
 * there too. */
static json_t *question(const struct net_host *h, uint16_t port, const char *method,
			const struct req_verdict *v, const char *how, char *subject,
			char summary[SUBJECT_MAX + 64])
{
	char hp[NET_HOST_PORT_MAX];
	net_host_port(h, port, hp, sizeof hp);
	snprintf(subject, SUBJECT_MAX, "%s %.32s %.500s", hp, method, v->path);
	snprintf(summary, SUBJECT_MAX + 64, "%.32s %s://%s%.500s (%s)", method,
		 strcmp(how, "HTTPS") == 0 ? "https" : "http", hp, v->path, how);
	return json_pack("{s:s,s:i,s:s,s:s,s:s}", "host", h->name, "port", port, "method", method,
			 "path", v->path, "rule", v->rule_text);
}

static void ask_request(struct conn *c, const struct req_verdict *v, proxy_answered_fn done)
{
	char subject[SUBJECT_MAX], summary[SUBJECT_MAX + 64];
	json_t *detail = question(&c->dest, c->port, c->method, v, "HTTP", subject, summary);
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
	char hp[NET_HOST_PORT_MAX], why[1200];
	net_host_port(&c->dest, c->port, hp, sizeof hp);
	rules_rule_text(r, c->rule, sizeof c->rule);
	snprintf(why, sizeof why, "rule %.400s narrows %s to methods and paths, but warden does not "
		 "see the requests of this %s: it terminates TLS for such a host only in a tunnel "
		 "through its HTTP proxy (CONNECT, HTTPS_PROXY): use that, or plain HTTP", c->rule,
		 hp, c->socks ? "SOCKS5 connection" : c->fw ? "host loopback port" : "tunnel");
	conn_refuse(c, 403, SOCKS5_NOT_ALLOWED, why);
	return true;
}

void proxy_req_terminated_error(struct conn *c, const char *error)
{
	static const char hs[] = "client TLS handshake:";
	if (strncmp(error, hs, sizeof hs - 1) != 0 || c->fw) {
		snprintf(c->reason, sizeof c->reason, "%s", error);
		return;
	}
	/* the client refused the session CA's certificate (it pins, or does
	 * not read the sandbox's trust store): say why warden was there */
	char hp[NET_HOST_PORT_MAX], why[400];
	net_host_port(&c->dest, c->port, hp, sizeof hp);
	const struct net_rule *r = reqrules_names(c->px->rules, &c->dest, c->port);
	if (r) {
		char text[NET_RULE_TEXT_MAX + NET_METHODS_MAX + REQGLOB_MAX + 8];
		rules_rule_text(r, text, sizeof text);
		snprintf(why, sizeof why, "for rule \"%.300s\" (methods and paths)", text);
	} else if (proxy_mcp_covers(c->px->mcp, &c->dest, c->port)) {
		snprintf(why, sizeof why, "for the mcp rules on it");
	} else {
		snprintf(why, sizeof why, "to put in a secret bound to it");
	}
	char out[1400];
	snprintf(out, sizeof out, "%.250s (warden terminated the TLS to %s %s, with the session CA: "
		 "a client that pins certificates or does not trust the sandbox's trust store fails "
		 "here)", error, hp, why);
	cut(c->reason, sizeof c->reason, out);
}

/* Did the server close its side (the answer came after its idle timeout)?
 * The request would go nowhere, the client left with an empty reply. */
static bool upstream_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* An ask rule names a request of an intercepted connection: the loop puts
 * the question (askq.h), this thread waits; v->why says the answer, with
 * the rule (the client's 403 when refused). */
static bool ask_intercepted(struct req_check *rc, const char *method, struct req_verdict *v)
{
	char hp[NET_HOST_PORT_MAX], ans[256], w[1400];
	net_host_port(&rc->host, rc->port, hp, sizeof hp);
	v->status = 403;
	if (!askq_can_ask(rc->asks)) {
		snprintf(w, sizeof w, "%.32s %.300s on %s: rule %.400s asks, and nobody can answer",
			 method, v->path, hp, v->rule_text);
		cut(v->why, sizeof v->why, w);
		return false;
	}
	char subject[SUBJECT_MAX], summary[SUBJECT_MAX + 64];
	json_t *detail = question(&rc->host, rc->port, method, v,
				  rc->tls ? "HTTPS" : "HTTP, host loopback port", subject, summary);
	bool allow = askq_ask(rc->asks, subject, summary, detail, rc->stop_fd, rc->client_fd, ans,
			      sizeof ans);
	bool gone = allow && upstream_gone(rc->upstream_fd);
	snprintf(w, sizeof w, "%.32s %.300s on %s asked by rule %.400s: %s%s", method, v->path, hp,
		 v->rule_text, ans, gone ? ", but the server closed the connection while warden "
		 "waited for the answer: send the request again" : "");
	if (gone) {
		v->status = 502;
		allow = false;
	}
	cut(v->why, sizeof v->why, w);
	return allow;
}

int proxy_req_intercepted(void *ctx, const char *method, const char *target, size_t tlen,
			  char *why, size_t whylen)
{
	struct req_check *rc = ctx;
	struct req_verdict v;
	reqrules_decide(rc->rules, &rc->host, rc->port, method, target, tlen, rc->bound, &v);
	if (v.v == RULES_ALLOW) {
		if (v.rule && rc->npass < REQ_ALLOWED_KEPT) { /* a request rule let it through */
			struct req_pass *p = &rc->ok[rc->npass++];
			snprintf(p->method, sizeof p->method, "%s", method);
			cut(p->path, sizeof p->path, v.path);
			p->rule = v.rule;
		}
		return 0;
	}
	bool allow = v.v == RULES_ASK && ask_intercepted(rc, method, &v);
	if (!allow)
		cut(why, whylen, v.why);
	if (rc->n == REQ_REFUSALS_KEPT) {
		rc->dropped++;
		return allow ? 0 : v.status;
	}
	struct req_refusal *f = &rc->v[rc->n++];
	snprintf(f->method, sizeof f->method, "%s", method);
	cut(f->path, sizeof f->path, v.path);
	snprintf(f->rule, sizeof f->rule, "%s", v.rule_text);
	cut(f->reason, sizeof f->reason, v.why);
	f->allowed = allow;
	f->status = allow ? 0 : v.status;
	return f->status;
}

void proxy_req_events(struct conn *c, const struct req_check *rc)
{
	for (unsigned i = 0; i < rc->npass; i++) {
		const struct req_pass *p = &rc->ok[i];
		char rule[NET_RULE_TEXT_MAX + NET_METHODS_MAX + REQGLOB_MAX];
		rules_rule_text(p->rule, rule, sizeof rule);
		struct event ev = ev_net_proxy(&(struct ev_net_proxy){
			.method = p->method, .host = c->host, .port = c->port, .address = c->address,
			.loopback = c->fw != NULL, .allowed = true, .rule = rule, .reason = "", .path = p->path,
			.tool = c->tool[0] ? c->tool : NULL });
		if (ev.fields)
			audit_emit_event(c->px->log, ev, NULL);
	}
	for (unsigned i = 0; i < rc->n; i++) {
		const struct req_refusal *f = &rc->v[i];
		char reason[sizeof f->reason + 64];
		if (i + 1 == rc->n && rc->dropped)
			snprintf(reason, sizeof reason, "%s (and %u more requests refused or asked)",
				 f->reason, rc->dropped);
		else
			snprintf(reason, sizeof reason, "%s", f->reason);
		struct event ev = ev_net_proxy(&(struct ev_net_proxy){
			.method = f->method, .host = c->host, .port = c->port, .address = c->address,
			.loopback = c->fw != NULL, .allowed = f->allowed, .status = f->status, .rule = f->rule,
			.reason = reason,
			.path = f->path, .tool = c->tool[0] ? c->tool : NULL });
		if (ev.fields)
			audit_emit_event(c->px->log, ev, NULL);
	}
}
