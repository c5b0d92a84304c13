/* mcp.c - the `mcp` rules and the reading of a JSON-RPC request body sent
 * to an MCP server (mcp.h): what a body holds, what the rules say of each
 * message, and the JSON-RPC error that answers a refused one. */
#include "mcp.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mcp_rules_free(struct mcp_rules *r)
{
	for (size_t i = 0; i < r->n; i++) {
		strv_free(&r->v[i].names);
		free(r->v[i].origin);
	}
	free(r->v);
	*r = (struct mcp_rules){ 0 };
}

bool mcp_rules_cover(const struct mcp_rules *r, const struct net_host *h, uint16_t port)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (rules_rule_matches(&r->v[i].host, h, port))
			return true;
	return false;
}

/* ---- reading ------------------------------------------------------------ */

static void keep(char *dst, const char *s, bool *truncated)
{
	size_t n = strlen(s);
	if (n >= MCP_NAME_MAX) {
		n = MCP_NAME_MAX - 1;
		*truncated = true;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
	/* nothing unprintable or beyond ASCII reaches an event or a reason;
	 * such a name matches no rule */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)dst[i] < 0x20 || (unsigned char)dst[i] >= 0x7f) {
			dst[i] = '?';
			*truncated = true;
		}
}

static int read_msg(struct mcp_msg *m, json_t *o, const char **why)
{
	if (!json_is_object(o)) {
		*why = "a JSON-RPC message is not an object";
		return -1;
	}
	*m = (struct mcp_msg){ 0 };
	json_t *id = json_object_get(o, "id");
	m->id = id && !json_is_null(id) ? id : NULL;
	json_t *method = json_object_get(o, "method");
	if (!method) {
		if (!m->id || (!json_object_get(o, "result") && !json_object_get(o, "error"))) {
			*why = "a JSON-RPC message with no method, result or error";
			return -1;
		}
		return 0; /* the client's answer to the server's request */
	}
	if (!json_is_string(method) || json_string_length(method) != strlen(json_string_value(method))) {
		*why = "a JSON-RPC method that is not a string";
		return -1;
	}
	keep(m->method, json_string_value(method), &m->truncated);
	if (strcmp(json_string_value(method), "tools/call") != 0)
		return 0;
	json_t *name = json_object_get(json_object_get(o, "params"), "name");
	if (!json_is_string(name) || json_string_length(name) != strlen(json_string_value(name))) {
		*why = "a tools/call without a tool's name (params.name)";
		return -1;
	}
	keep(m->tool, json_string_value(name), &m->truncated);
	return 0;
}

int mcp_body_read(struct mcp_body *b, const char *body, size_t len, const char **why)
{
	*b = (struct mcp_body){ 0 };
	json_error_t je;
	/* duplicate keys refused: a server reading the last "name" must see
	 * the one warden read */
	b->root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!b->root) {
		*why = "not JSON";
		return -1;
	}
	if (json_is_array(b->root)) {
		b->batch = true;
		size_t n = json_array_size(b->root);
		if (n == 0 || n > MCP_BATCH_MAX) {
			*why = n ? "a batch of too many messages" : "an empty batch";
			goto fail;
		}
		for (size_t i = 0; i < n; i++)
			if (read_msg(&b->msg[i], json_array_get(b->root, i), why) < 0)
				goto fail;
		b->n = n;
		return 0;
	}
	if (read_msg(&b->msg[0], b->root, why) < 0)
		goto fail;
	b->n = 1;
	return 0;
fail:
	mcp_body_free(b);
	return -1;
}

void mcp_body_free(struct mcp_body *b)
{
	json_decref(b->root);
	*b = (struct mcp_body){ 0 };
}

/* ---- deciding ----------------------------------------------------------- */

static bool names_match(const struct strv *names, const char *s)
{
	for (size_t i = 0; i < names->n; i++)
		if (fnmatch(names->v[i], s, 0) == 0)
			return true;
	return false;
}

static bool passes_unasked(const char *method)
{
	return strcmp(method, "initialize") == 0 || strcmp(method, "ping") == 0 ||
	       strcmp(method, "tools/list") == 0 || strncmp(method, "notifications/", 14) == 0;
}

enum rules_verdict mcp_decide(const struct mcp_rules *r, const struct net_host *h, uint16_t port,
			      const struct mcp_msg *m, const struct mcp_rule **rule)
{
	*rule = NULL;
	if (!m->method[0])
		return RULES_ALLOW; /* an answer to the server */
	bool call = strcmp(m->method, "tools/call") == 0;
	const char *name = call ? m->tool : m->method;
	const struct mcp_rule *best[4] = { 0 }; /* by verdict */
	for (size_t i = 0; !m->truncated && i < r->n; i++) {
		const struct mcp_rule *x = &r->v[i];
		if ((x->kind == MCP_TOOL) != call || !rules_rule_matches(&x->host, h, port))
			continue;
		if (!best[x->action] && names_match(&x->names, name))
			best[x->action] = x;
	}
	static const enum rules_verdict order[] = { RULES_DENY, RULES_ASK, RULES_ALLOW };
	for (size_t i = 0; i < 3; i++)
		if (best[order[i]]) {
			*rule = best[order[i]];
			return order[i];
		}
	return !call && passes_unasked(m->method) ? RULES_ALLOW : RULES_DENY;
}

/* ---- answering ---------------------------------------------------------- */

char *mcp_error_body(const struct mcp_body *b, const char *msg)
{
	json_t *out = json_array();
	for (size_t i = 0; i < b->n; i++) {
		if (!b->msg[i].id)
			continue;
		json_array_append_new(out, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
						     b->msg[i].id, "error", "code", MCP_ERROR_DENIED,
						     "message", msg));
	}
	char *s = NULL;
	if (json_array_size(out))
		s = json_dumps(b->batch ? out : json_array_get(out, 0), JSON_COMPACT);
	json_decref(out);
	return s;
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0'
	       : isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10 : -1;
}

ssize_t mcp_dechunk(const char *in, size_t len, char *out)
{
	size_t i = 0, o = 0;
	for (;;) {
		uint64_t size = 0;
		size_t digits = 0;
		for (; i < len && hexval(in[i]) >= 0; i++, digits++) {
			if (size > (UINT64_MAX >> 4))
				return -1;
			size = size * 16 + (uint64_t)hexval(in[i]);
		}
		if (!digits)
			return -1;
		/* chunk extensions: to the line's end */
		const char *eol = memmem(in + i, len - i, "\r\n", 2);
		if (!eol)
			return -1;
		i = (size_t)(eol - in) + 2;
		if (size == 0)
			return (ssize_t)o; /* trailers follow: not the body */
		if (size > len - i || len - i - size < 2 || in[i + size] != '\r' || in[i + size + 1] != '\n')
			return -1;
		memcpy(out + o, in + i, size);
		o += size;
		i += size + 2;
	}
}
