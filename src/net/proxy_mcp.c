/* proxy_mcp.c - MCP servers read request by request (proxy_mcp.h): the
 * hold's decision on the interception thread; its events and questions go
 * to the session's loop through an askq (askq.h).
 *
 * A body is read only when it is whole (mcp.h): a batch is sent on only
 * when every message in it is allowed; otherwise every message with an id
 * gets the JSON-RPC error (HTTP 200, application/json), and a body of
 * notifications only gets 202 with no body, the connection kept. A body
 * that is not JSON-RPC gets 400 with a parse error (-32700); an upgrade
 * (a WebSocket, whose bytes would not be read) is refused. A question
 * waits on the thread (its connection waits with it) until answered, timed
 * out by the broker, or the session ends (refused). */
#include "proxy_mcp.h"

#include "askq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct proxy_mcp {
	const struct mcp_rules *rules;
	struct askq *q;          /* events and questions, to the loop */
};

struct mconn {
	struct proxy_mcp *m;
	struct net_host host;
	uint16_t port;
	int stop_fd;
	int client_fd;              /* the sandbox's side: a question is withdrawn when it shuts */
};

/* ---- the loop's side ---------------------------------------------------- */

static void take_items(struct loop *l, const struct source *src, uint32_t events)
{
	struct proxy_mcp *m = src->ctx;
	askq_drain(m->q);
}

struct proxy_mcp *proxy_mcp_new(const struct mcp_rules *rules, struct audit *log,
				const struct proxy_asker *asker, struct werr *e)
{
	struct askq *q = askq_new(log, asker, e);
	if (!q)
		return NULL;
	struct proxy_mcp *m = xcalloc(1, sizeof *m);
	m->rules = rules;
	m->q = q;
	return m;
}

int proxy_mcp_watch(struct loop *l, struct proxy_mcp *m, struct werr *e)
{
	return loop_add(l, "mcp rules", askq_fd(m->q), take_items, m, e);
}

void proxy_mcp_free(struct proxy_mcp *m)
{
	if (!m)
		return;
	askq_free(m->q); /* the last events of the connections that ended */
	free(m);
}

bool proxy_mcp_covers(const struct proxy_mcp *m, const struct net_host *h, uint16_t port)
{
	return m && mcp_rules_cover(m->rules, h, port);
}

/* ---- the thread's side -------------------------------------------------- */

static void event(struct mconn *c, const struct mcp_msg *msg, bool allow, bool asked,
		  const struct mcp_rule *rule, const char *reason)
{
	askq_emit(c->m->q, ev_mcp(&(struct ev_mcp){ .host = c->host.name, .port = c->port,
		.method = msg ? msg->method : "", .tool = msg ? msg->tool : "", .allowed = allow,
		.asked = asked, .rule = rule ? rule->text : "", .reason = reason }));
}

/* An ask rule's tool: the loop puts the question; this thread waits. */
static bool ask(struct mconn *c, const struct mcp_msg *msg, const struct mcp_rule *rule,
		char *why, size_t whylen)
{
	char subject[NET_HOST_MAX + MCP_NAME_MAX + 32], summary[NET_HOST_MAX + MCP_NAME_MAX + 64];
	char hp[NET_HOST_PORT_MAX];
	net_host_port(&c->host, c->port, hp, sizeof hp);
	snprintf(subject, sizeof subject, "mcp %s tool %s", hp, msg->tool);
	snprintf(summary, sizeof summary, "call the MCP tool %s on %s", msg->tool, hp);
	json_t *detail = json_pack("{s:s, s:i, s:s, s:s}", "host", c->host.name, "port", c->port,
				   "mcp_tool", msg->tool, "rule", rule->text);
	return askq_ask(c->m->q, subject, summary, detail, c->stop_fd, c->client_fd, why, whylen);
}

static bool want(void *ctx, const char *head, size_t len)
{
	return true; /* every request to the server: a body is read, none is not */
}

/* Does the head have the header name ("\r\nname:", lower case)? */
static bool has_header(const char *head, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(head + i, name, n) == 0)
			return true;
	return false;
}

static void reply_with(int status, const char *reason, const char *body, char **reply,
		       size_t *rlen)
{
	size_t bl = body ? strlen(body) : 0;
	*reply = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: "
			   "%zu\r\nX-Warden-Reason: mcp rules\r\n\r\n%s", status, reason, bl,
			   body ? body : "");
	*rlen = strlen(*reply);
}

/* The verdict on one message, a question answered if need be: true allows;
 * else why says so for the client. */
static bool judge(struct mconn *c, const struct mcp_msg *msg, char *why, size_t whylen)
{
	const struct mcp_rule *rule = NULL;
	enum rules_verdict v = mcp_decide(c->m->rules, &c->host, c->port, msg, &rule);
	bool call = strcmp(msg->method, "tools/call") == 0;
	const char *what = call ? "tool" : "method";
	const char *name = call ? msg->tool : msg->method;
	char reason[1024] = "";
	bool allow = v == RULES_ALLOW, asked = v == RULES_ASK;
	if (asked) {
		char ans[256] = "";
		allow = ask(c, msg, rule, ans, sizeof ans);
		if (!allow)
			snprintf(reason, sizeof reason, "%s %s denied by approve%s%s", what, name,
				 ans[0] ? ": " : "", ans);
	} else if (!allow && rule) {
		snprintf(reason, sizeof reason, "%s %s denied by rule %s", what, name, rule->text);
	} else if (!allow) {
		snprintf(reason, sizeof reason, "no mcp rule allows %s %s", what, name);
	}
	event(c, msg, allow, asked, rule, reason);
	if (!allow)
		snprintf(why, whylen, "warden: %s", reason);
	return allow;
}

static int decide(void *ctx, const char *head, size_t hlen, const char *body, size_t blen,
		  char **reply, size_t *rlen, char *why, size_t whylen)
{
	struct mconn *c = ctx;
	if (has_header(head, hlen, "\r\nupgrade:")) {
		/* what follows an upgrade (a WebSocket) would not be read */
		snprintf(why, whylen, "an upgrade toward an MCP server whose requests warden reads");
		event(c, NULL, false, false, NULL, why);
		return -1;
	}
	if (!blen)
		return 0; /* a GET (a stream), a DELETE: no message */
	_cleanup_free_ char *plain = NULL;
	if (has_header(head, hlen, "\r\ntransfer-encoding:")) {
		plain = xmalloc(blen);
		ssize_t n = mcp_dechunk(body, blen, plain);
		if (n < 0) {
			snprintf(why, whylen, "malformed chunked body toward an MCP server");
			return -1;
		}
		body = plain;
		blen = (size_t)n;
	}
	struct mcp_body b;
	const char *bad = NULL;
	if (mcp_body_read(&b, body, blen, &bad) < 0) {
		char reason[200];
		snprintf(reason, sizeof reason, "not JSON-RPC: %s", bad);
		event(c, NULL, false, false, NULL, reason);
		_cleanup_free_ char *e = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
						   "-32700,\"message\":\"warden: %s\"}}", reason);
		reply_with(400, "Bad Request", e, reply, rlen);
		return 1;
	}
	char first[1100] = "";
	bool refused = false;
	for (size_t i = 0; i < b.n; i++) {
		char w[1100] = "";
		if (!judge(c, &b.msg[i], w, sizeof w) && !refused) {
			refused = true;
			snprintf(first, sizeof first, "%s", w);
		}
	}
	if (!refused) {
		mcp_body_free(&b);
		return 0;
	}
	_cleanup_free_ char *err = mcp_error_body(&b, first);
	mcp_body_free(&b);
	if (err)
		reply_with(200, "OK", err, reply, rlen);
	else
		reply_with(202, "Accepted", NULL, reply, rlen);
	return 1;
}

void proxy_mcp_attach(struct proxy_mcp *m, struct intercept_job *j, const struct net_host *h,
		      uint16_t port, int stop_fd, int client_fd)
{
	struct mconn *c = xcalloc(1, sizeof *c);
	*c = (struct mconn){ .m = m, .host = *h, .port = port, .stop_fd = stop_fd,
			     .client_fd = client_fd };
	j->hold = (struct intercept_hold){ .want = want, .decide = decide, .ctx = c,
					   .body_max = MCP_BODY_MAX };
}

void proxy_mcp_detach(struct intercept_job *j)
{
	if (j->hold.decide == decide)
		free(j->hold.ctx);
	j->hold = (struct intercept_hold){ 0 };
}
