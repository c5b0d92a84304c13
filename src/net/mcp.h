/* mcp.h - MCP over HTTP, read at the proxy: the `mcp` rules of a profile
 * (which tools of a server are allowed, denied or asked, which other
 * JSON-RPC methods pass) and the reading of one request body sent to such
 * a server (a JSON-RPC message or a batch of them) into the methods and
 * tool names the rules decide on; the JSON-RPC error answer warden gives
 * in place of a refused call. Pure: no I/O. The connection's side (holding
 * the body, asking a human, the events) is proxy_mcp.h's.
 *
 * What passes without a rule: initialize, ping, tools/list, every method
 * under notifications/, and a client's answer to the server's own
 * request (a message with an id and a result or error, no method). A
 * tools/call passes when an `mcp HOST allow|ask TOOL` rule names its tool
 * and no deny rule does (deny wins over ask over allow); any other method
 * when an `mcp HOST method allow METHOD` rule names it. What no rule names
 * is refused: the safe default for a server whose tools the profile chose. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/util.h"
#include "rules.h"

/* A request body to an mcp host is read whole before any of it goes
 * upstream; a longer one is refused (413). */
#define MCP_BODY_MAX (1024 * 1024)
/* Messages read from one batch, at most. */
#define MCP_BATCH_MAX 64
#define MCP_NAME_MAX 128   /* a method's or tool's name as kept (longer: cut, for events) */
#define MCP_RULE_TEXT_MAX 720

enum mcp_kind { MCP_TOOL, MCP_METHOD };

struct mcp_rule {
	struct net_rule host;      /* HOST[:PORT] as `net allow` reads it */
	enum mcp_kind kind;
	enum rules_verdict action; /* ALLOW, DENY; ASK for tools only */
	struct strv names;         /* tool names or methods, fnmatch(3) globs */
	char text[MCP_RULE_TEXT_MAX]; /* "mcp HOST ask NAME,NAME", for events and reasons */
	char *origin;              /* "FILE:LINE" */
};

struct mcp_rules {
	struct mcp_rule *v;
	size_t n;
	size_t nask;               /* rules with action ask */
};

void mcp_rules_free(struct mcp_rules *r);
/* Does a rule name h:port (an mcp server warden must read)? */
bool mcp_rules_cover(const struct mcp_rules *r, const struct net_host *h, uint16_t port);

/* One JSON-RPC message of a body. */
struct mcp_msg {
	char method[MCP_NAME_MAX];  /* "" for an answer (result or error) */
	char tool[MCP_NAME_MAX];    /* tools/call: params.name; else "" */
	json_t *id;                 /* the id (borrowed from the parsed body), NULL: a notification */
	bool truncated;             /* method or tool longer than kept: never matches a rule */
};

struct mcp_body {
	json_t *root;               /* owned */
	bool batch;
	size_t n;
	struct mcp_msg msg[MCP_BATCH_MAX];
};

/* Read a request body. 0, or -1 with *why (static) when it is not JSON-RPC
 * as MCP sends it: not JSON, not an object or a non-empty array of
 * objects, over MCP_BATCH_MAX messages, a method that is not a string, a
 * tools/call without a string params.name, a message with neither method
 * nor result/error. */
int mcp_body_read(struct mcp_body *b, const char *body, size_t len, const char **why);
void mcp_body_free(struct mcp_body *b);

/* The verdict on one message toward h:port: RULES_ALLOW, RULES_DENY or
 * RULES_ASK; *rule the rule that decided, NULL when the default did. */
enum rules_verdict mcp_decide(const struct mcp_rules *r, const struct net_host *h, uint16_t port,
			      const struct mcp_msg *m, const struct mcp_rule **rule);

/* The body of the answer to a refused request: a JSON-RPC error (code
 * MCP_ERROR_DENIED, message msg) for each message with an id, an array
 * for a batch; NULL when no message has an id (malloc'd, NUL-terminated). */
#define MCP_ERROR_DENIED (-32001)
char *mcp_error_body(const struct mcp_body *b, const char *msg);

/* Undo chunked framing (already checked by http.h's body reader) into
 * out (at most len bytes). Returns the decoded length, or -1 when the
 * framing is not chunked as http.h accepts it. */
ssize_t mcp_dechunk(const char *in, size_t len, char *out);
