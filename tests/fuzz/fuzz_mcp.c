/* fuzz_mcp.c - libFuzzer target for the reading of a request body sent to
 * an MCP server (src/net/mcp.c): the input is the body, whole or chunked.
 * Invariants: a body read has 1 to MCP_BATCH_MAX messages, each method and
 * tool name NUL-terminated and printable ASCII (or empty); a refusal's reason is printable;
 * the verdict of fixed rules is one of allow, deny, ask, and a tools/call
 * with no rule naming its tool is never allowed; the error answer, when
 * made, is JSON that reads back. Linked with replay.c it is
 * fuzz-mcp-replay, which replays the corpus in `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/mcp.h"
#include "replay.h"

static void rules_make(struct mcp_rules *r)
{
	static const char *const names[][2] = { { "echo", NULL }, { "rm*", NULL }, { "ask_me", NULL },
						{ "resources/read", NULL } };
	static const enum rules_verdict act[] = { RULES_ALLOW, RULES_DENY, RULES_ASK, RULES_ALLOW };
	r->n = 4;
	r->v = calloc(4, sizeof *r->v);
	for (size_t i = 0; i < 4; i++) {
		struct werr e = { 0 };
		if (rules_parse_pattern(&r->v[i].host, "mcp.example", &e) < 0)
			abort();
		r->v[i].kind = i == 3 ? MCP_METHOD : MCP_TOOL;
		r->v[i].action = act[i];
		strv_push(&r->v[i].names, names[i][0]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mcp_rules rules;
	if (!rules.n)
		rules_make(&rules);
	struct net_host h;
	if (net_host_parse(&h, "mcp.example", 11, NULL) < 0)
		abort();
	const char *in = (const char *)data;
	char *plain = malloc(size ? size : 1);
	ssize_t dl = mcp_dechunk(in, size, plain);
	if (dl > (ssize_t)size)
		abort();
	for (int pass = 0; pass < 2; pass++) {
		const char *body = pass ? plain : in;
		size_t len = pass ? (size_t)(dl > 0 ? dl : 0) : size;
		if (pass && dl < 0)
			break;
		struct mcp_body b;
		const char *why = NULL;
		if (mcp_body_read(&b, body, len, &why) < 0) {
			if (!why || !fuzz_printable(why))
				abort();
			continue;
		}
		if (b.n < 1 || b.n > MCP_BATCH_MAX || (!b.batch && b.n != 1))
			abort();
		for (size_t i = 0; i < b.n; i++) {
			const struct mcp_msg *m = &b.msg[i];
			if (memchr(m->method, 0, sizeof m->method) == NULL ||
			    memchr(m->tool, 0, sizeof m->tool) == NULL || (m->method[0] && !fuzz_printable(m->method)) ||
			    (m->tool[0] && !fuzz_printable(m->tool)))
				abort();
			const struct mcp_rule *rule = NULL;
			enum rules_verdict v = mcp_decide(&rules, &h, 443, m, &rule);
			if (v != RULES_ALLOW && v != RULES_DENY && v != RULES_ASK)
				abort();
			if (strcmp(m->method, "tools/call") == 0 && v != RULES_DENY &&
			    strcmp(m->tool, "echo") != 0 && strcmp(m->tool, "ask_me") != 0)
				abort();
		}
		char *err = mcp_error_body(&b, "warden: denied");
		if (err) {
			json_t *back = json_loads(err, 0, NULL);
			if (!back)
				abort();
			json_decref(back);
		}
		free(err);
		mcp_body_free(&b);
	}
	free(plain);
	return 0;
}
