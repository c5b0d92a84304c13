/* fuzz_agentconf.c - libFuzzer target for what warden reads of a client's
 * API configuration (src/agents/endpoint.c): the input is Codex's
 * config.toml for agent_codex_config, and each of its lines is a base URL
 * for agent_url_pattern. Invariants: errors are printable and name a line;
 * a URL's pattern is accepted by the allow-rule parser as it is, or
 * refused as no destination (0.0.0.0/8, ::); what is
 * imported never holds an http_headers line; the values found hold no line break. Linked with
 * replay.c it is fuzz-agentconf-replay, which replays files and corpus
 * directories without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/agents/agents.h"
#include "src/common/util.h"
#include "src/net/rules.h"
#include "replay.h"

static void check_url(const char *line)
{
	struct werr e = { 0 };
	char *pat = NULL;
	if (agent_url_pattern(line, &pat, &e) < 0) {
		/* the message quotes the URL: printable when the URL is */
		if (!e.msg[0] || (fuzz_printable(line) && !fuzz_printable(e.msg)))
			abort();
		return;
	}
	/* The pattern made from a URL is a rule as it is; or, for an address
	 * that is no destination (0.0.0.0/8, ::), refused as the policy
	 * refuses it, saying so: a URL's host may name one, a rule may not. */
	struct net_rule r;
	int rr = rules_parse_pattern(&r, pat, &e);
	if (rr < 0 ? !strstr(e.msg, "is no destination") : strcmp(r.text, pat) != 0)
		abort();
	free(pat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	struct codex_conf c;
	struct werr e = { 0 };
	if (agent_codex_config((const char *)data, size, &c, &e) < 0) {
		if (!strstr(e.msg, "line "))
			abort();
	} else {
		for (const char *l = c.import_tables; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
			l += strspn(l, " \t");
			if (strncmp(l, "http_headers", 12) == 0 || strncmp(l, "\"http_headers", 13) == 0)
				abort();
		}
		/* the top-level lines hold no table header, so that the merge
		 * keeps them before the seed's first table */
		for (const char *l = c.import_top; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
			if (*l == '[')
				abort();
		char *merged = agent_codex_merge("a = 1\n[t]\nb = 2\n", &c);
		if (strncmp(merged, "a = 1\n", 6) != 0 || !strstr(merged, "[t]\nb = 2\n"))
			abort();
		free(merged);
		if ((c.base_url && strchr(c.base_url, '\n')) || (c.env_key && strchr(c.env_key, '\n')) ||
		    (c.provider && strchr(c.provider, '\n')))
			abort();
		codex_conf_free(&c);
	}
	size_t start = 0;
	for (size_t i = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			char *l = xmalloc(i - start + 1);
			memcpy(l, data + start, i - start);
			l[i - start] = '\0';
			check_url(l);
			free(l);
			start = i + 1;
		}
	}
	return 0;
}
