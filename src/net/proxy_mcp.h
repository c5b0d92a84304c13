/* proxy_mcp.h - MCP servers reached through the proxy, read request by
 * request: a connection to a host an `mcp` rule names has each request's
 * body held whole (intercept.h's hold) and read as JSON-RPC (mcp.h); a
 * message the rules refuse is answered here with a JSON-RPC error, the
 * connection kept; an ask rule's tool waits for a human (the proxy's
 * asker); every message is an `mcp` event. The interception threads hand
 * their questions and events to the session's loop through an askq
 * (askq.h) this module owns, its eventfd watched by the loop. */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "intercept.h"
#include "mcp.h"
#include "proxy.h"

struct proxy_mcp;

/* rules and log borrowed (they outlive it); asker copied, NULL: an ask
 * rule's tool is refused. NULL with e filled. */
struct proxy_mcp *proxy_mcp_new(const struct mcp_rules *rules, struct audit *log,
				const struct proxy_asker *asker, struct werr *e);
/* Its eventfd watched by l (on the loop's thread: events and questions). */
int proxy_mcp_watch(struct loop *l, struct proxy_mcp *m, struct werr *e);
/* After every interception thread ended (proxy_free). NULL is fine. */
void proxy_mcp_free(struct proxy_mcp *m);

/* Does a rule name h:port? */
bool proxy_mcp_covers(const struct proxy_mcp *m, const struct net_host *h, uint16_t port);
/* Fill j->hold for a connection to h:port (its ctx a state of its own,
 * released by proxy_mcp_detach once the job ended). stop_fd: readable when
 * a waiting question must end (refused); client_fd: the sandbox's side of
 * the connection (the job's), shut by the client: the question withdrawn. */
void proxy_mcp_attach(struct proxy_mcp *m, struct intercept_job *j, const struct net_host *h,
		      uint16_t port, int stop_fd, int client_fd);
void proxy_mcp_detach(struct intercept_job *j);
