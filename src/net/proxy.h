/* proxy.h - warden's egress proxy, served by the supervisor from outside the
 * sandbox: HTTP (CONNECT and absolute-form requests) and SOCKS5 on listening
 * sockets that sandbox init created inside the sandbox's network namespace;
 * and the host loopback ports (forward.h), relayed as they are.
 * The proxy owns an epoll fd that the supervisor's event loop watches. */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include <jansson.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "forward.h"
#include "rules.h"
#include "sockdiag.h"

#define PROXY_HTTP_PORT 3128
#define PROXY_SOCKS_PORT 1080

struct proxy;

/* What a guard says when its connection ends. */
struct guard_end {
	json_t *secrets;          /* [{"secret": NAME, "header": H}] put in (new reference), or NULL */
	const char *leak_secret;  /* a phantom seen where it does not belong: its secret's name */
	const char *leak_where;   /* and where: "url", "header", "body", "stream" */
	const char *leak_canary;  /* a decoy's token seen (canary.h): the decoy's path inside */
	const char *leak_canary_where; /* and where, as leak_where */
};

/* Secrets by reference, as the proxy sees them (src/session/egress.c
 * implements it): open is called on the proxy's thread once a connection's
 * destination is allowed; head and data on the thread that carries the
 * connection (an interception's own, or the proxy's); end on the proxy's,
 * once, for every guard open returned. */
struct proxy_guard {
	void *ctx;
	/* A guard for one connection to h:port, or NULL: nothing to watch.
	 * clear: what the client sends goes upstream as it is (an absolute-form
	 * request, SOCKS5, a host loopback port), not through a tunnel warden
	 * could terminate. *intercept: a secret may be put in there, so the
	 * proxy terminates TLS (CONNECT) or parses the plain HTTP (a host
	 * loopback port) and rewrites each request head with head(); otherwise
	 * it shows data() what the client sends (and head() the head of an
	 * absolute-form request). */
	void *(*open)(void *ctx, const struct net_host *h, uint16_t port, bool clear,
		      bool *intercept);
	/* open, told the program that made the connection (proxy_cfg.owner;
	 * prog->unknown set: not told): a secret scoped to a program is bound
	 * only for it. When set, the proxy calls it instead of open. */
	void *(*open_for)(void *ctx, const struct net_host *h, uint16_t port, bool clear,
			  const struct net_program *prog, bool *intercept);
	/* A request head to h:port: 0 with *out (malloc'd) to send instead; -1
	 * refuses the request (why filled). */
	int (*head)(void *g, const char *head, size_t len, char **out, size_t *outlen, char *why,
		    size_t whylen);
	/* Bytes the client sends that are not a head: -1 refuses (why). */
	int (*data)(void *g, const void *data, size_t len, char *why, size_t whylen);
	/* An intercepted connection's response bytes, rewritable in place (as
	 * intercept.h's on_resp); NULL: relayed as they come. */
	size_t (*resp)(void *g, char *buf, size_t len);
	void (*end)(void *g, struct guard_end *out);
	/* open_for needs the connection's program before the connection goes
	 * on (a secret scoped to a program); else it is looked up later, off
	 * the client's wait, and open_for is told none. */
	bool by_program;
	/* Does g put a secret in (so TRACE and TRACK are refused)? NULL: yes,
	 * wherever TLS is terminated. */
	bool (*bound)(void *g);
	/* The TLS contexts: the sandbox's side for h (a leaf of the session CA;
	 * a reference the proxy frees), and the upstream side (verifying). */
	struct ssl_ctx_st *(*server_ctx)(void *ctx, const struct net_host *h);
	struct ssl_ctx_st *client_ctx;
};

/* Serve a host loopback port: take its listener (inside the sandbox) and
 * relay each connection accepted on it to fw's port on the host's loopback,
 * with a `net` event (method "tcp", via "loopback") when it ends. The rules
 * decide again at each connection (a deny rule wins). fw is copied. */
void proxy_add_forward(struct proxy *p, int listener, const struct net_forward *fw);
/* Who answers the question of a destination an ask rule (or `net default
 * ask`) names: ask puts it (subject "host:port", a summary for a human, the
 * fields, taken) and returns a handle, or NULL when it called done at once;
 * cancel withdraws it (the client went away). The connection waits unread
 * meanwhile. Without an asker, such a destination is refused. */
struct proxy_asker {
	const void *(*ask)(void *ctx, const char *subject, const char *summary, json_t *detail,
			   void (*done)(void *cbctx, bool allow, const char *why), void *cbctx);
	void (*cancel)(void *ctx, const void *question);
	void *ctx;
};

/* A connection's program, looked up in three steps so that the slow one
 * (the walk of the sandbox's processes) runs off the proxy's loop. */
struct proxy_owner_query {
	unsigned long sock;            /* begin's: the client's socket (its inode) */
	struct sockdiag_pair pair;     /* begin's: the connection's addresses */
	struct stat exe;               /* find's: an executable only the loop's cache may hash (exe_ask) */
	bool exe_ask;
	struct net_program prog;       /* the answer (prog.unknown says why it cannot be told) */
};
struct proxy_owner {
	/* On the loop, as the connection is accepted (fd: the proxy's end):
	 * what find needs; false: q->prog is the answer already. */
	bool (*begin)(void *ctx, int fd, struct proxy_owner_query *q);
	/* On the proxy's owner thread, one query at a time. */
	void (*find)(void *ctx, struct proxy_owner_query *q);
	/* On the loop again, before the answer is used. */
	void (*end)(void *ctx, struct proxy_owner_query *q);
	void *ctx;
};

/* What the proxy works with, given when it is made. */
struct proxy_cfg {
	int http, socks;               /* the listening sockets, taken (either may be -1) */
	const struct net_rules *rules; /* borrowed, must outlive the proxy */
	struct audit *log;
	/* every connection guarded with it (copied; its ctx must outlive the
	 * proxy); NULL: none */
	const struct proxy_guard *guard;
	/* who answers the questions (copied); NULL: such a destination is
	 * refused. default_ask: `net default ask`. */
	const struct proxy_asker *asker;
	bool default_ask;
	/* `net sni required`: a tunnel's TLS ClientHello without a server name
	 * is refused (one naming another host always is) */
	bool sni_required;
	/* Who says which tool call a connection belongs to
	 * (src/control/hook.h): told of each connection as it is accepted (fd:
	 * the proxy's end), it returns the call's id for the net event's
	 * "tool", or NULL. NULL: none. */
	const char *(*tag)(void *ctx, int fd);
	void *tag_ctx;
	/* Who says which program made a connection (src/supervisor/connowner.h),
	 * copied; NULL: nobody, the events name no program and a rule scoped
	 * to one never matches. */
	const struct proxy_owner *owner;
	/* MCP servers read request by request (proxy_mcp.h), borrowed; NULL:
	 * none. A connection to a host it covers is refused unless warden
	 * reads it (TLS it terminates, or plain on a host loopback port: the
	 * guard asks for both for such a host, src/session/egress.h). */
	struct proxy_mcp *mcp;
	/* The relays that share the supervisor's descriptors (0 or 1: the
	 * proxy alone; 2: published ports too, src/supervisor/publish.h): its
	 * connection cap is its share (selflimits_conns). */
	unsigned fd_shares;
};
/* NULL with e filled (the listeners closed). */
struct proxy *proxy_new(const struct proxy_cfg *cfg, struct werr *e);
/* Its listeners and connections (one epoll fd) watched by l; -1 with e
 * naming it when l cannot take it. */
int proxy_watch(struct loop *l, struct proxy *p, struct werr *e);
/* Close every connection (each logged) and free. NULL is fine. */
void proxy_free(struct proxy *p);
