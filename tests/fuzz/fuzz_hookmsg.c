/* fuzz_hookmsg.c - libFuzzer target for the tool-call gate's parsing
 * (src/control/hookmsg.c): the input is read both as a line from the hook
 * socket (hookmsg_parse, what the supervisor reads from inside the
 * sandbox) and as a client's hook input on stdin (hookmsg_from_client,
 * what `warden hook` reads from Claude Code or Codex). Invariants: a
 * refusal says why in printable words; an accepted line is a report (op
 * pre or post) holding no key but the report's (never an answer, an id, a
 * decision or a rule), with a tool name of 1 to 256 bytes and a `what`;
 * a client's input made into a line is one newline-terminated line within
 * HOOKMSG_LINE_MAX that the socket's parser accepts, with the same phase,
 * tool, and `what` (unless cut, and then said); the tool rules' decision
 * is allow, deny or ask, and a rule that decides matches. Linked with
 * replay.c it is fuzz-hookmsg-replay, which replays files and corpus
 * directories without clang. */
#include <fnmatch.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/util.h"
#include "src/control/hookmsg.h"
#include "src/policy/policy.h"
#include "replay.h"

static struct policy pol;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char profile[] = "tool deny Bash rm -rf *\n"
				      "tool ask WebFetch https://*.example.com/*\n"
				      "tool allow mcp__*\n"
				      "tool deny Write /etc/*\n"
				      "tool default ask\n";
	struct werr e = { 0 };
	if (policy_parse_text(&pol, "fuzz", NULL, NULL, profile, strlen(profile), &e) < 0)
		abort();
	return 0;
}

static const char *const report_keys[] = { "op", "client", "tool_name", "tool_input", "session_id",
					   "tool_use_id", "cwd", "truncated" };

static void check_decision(const char *tool, const char *what)
{
	const struct policy_tool_rule *r;
	enum rules_verdict v = hookmsg_decide(&pol, tool, what, &r);
	if (v != RULES_ALLOW && v != RULES_DENY && v != RULES_ASK)
		abort();
	if (r && (r->action != v || fnmatch(r->name, tool, 0) != 0 ||
		  (r->pattern && fnmatch(r->pattern, what, 0) != 0)))
		abort();
	if (!r && v != RULES_ASK) /* the default of the profile above */
		abort();
}

/* An accepted line: a report and nothing else. */
static void check_call(const struct hook_call *c)
{
	if (!c->tool || !c->tool[0] || strlen(c->tool) > 256 || !c->what || !c->msg)
		abort();
	if (c->phase != HOOK_PRE && c->phase != HOOK_POST)
		abort();
	const char *k;
	json_t *v;
	json_object_foreach(c->msg, k, v) {
		bool known = false;
		for (size_t i = 0; i < ARRAY_LEN(report_keys); i++)
			known |= strcmp(k, report_keys[i]) == 0;
		if (!known)
			abort();
	}
	const char *op = json_string_value(json_object_get(c->msg, "op"));
	if (!op || (strcmp(op, "pre") != 0 && strcmp(op, "post") != 0))
		abort();
	check_decision(c->tool, c->what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 20)
		return 0;
	char why[300] = "";
	struct hook_call c;
	if (hookmsg_parse((const char *)data, size, &c, why, sizeof why) == 0) {
		check_call(&c);
		hook_call_clear(&c);
	} else if (!why[0]) {
		abort();
	}

	enum hook_phase phase;
	bool ignored;
	why[0] = '\0';
	char *line = hookmsg_from_client((const char *)data, size, size % 2 ? "codex" : NULL, &phase,
					 &ignored, why, sizeof why);
	if (!line) {
		if (!why[0])
			abort();
		return 0;
	}
	size_t n = strlen(line);
	if (n == 0 || n >= HOOKMSG_LINE_MAX || line[n - 1] != '\n' || memchr(line, '\n', n - 1))
		abort();
	struct hook_call back;
	if (hookmsg_parse(line, n - 1, &back, why, sizeof why) < 0)
		abort(); /* what warden hook sends, the socket takes */
	check_call(&back);
	json_t *in = json_loadb((const char *)data, size, 0, NULL);
	const char *tool = json_string_value(json_object_get(in, "tool_name"));
	if (back.phase != phase || !tool || strcmp(back.tool, tool) != 0)
		abort();
	json_t *input = json_object_get(in, "tool_input");
	char *what = hookmsg_what(tool, json_is_object(input) ? input : NULL);
	if (!back.truncated && json_is_object(input) && strcmp(what, back.what) != 0)
		abort(); /* not cut: the socket judges what the client said */
	free(what);
	json_decref(in);
	hook_call_clear(&back);
	free(line);
	return 0;
}
