/* hookmsg.h - a tool call as data, with no I/O: what `warden hook` reads
 * from the agent's client on stdin (Claude Code's and Codex's hook input),
 * the one line it sends over the hook socket, how the supervisor reads that
 * line (strictly: a report of a tool call, nothing else), what a call is
 * about (the string the policy's `tool` rules match), and which rule
 * decides it. The fuzz target fuzz_hookmsg drives all of it.
 *
 * The line on the hook socket, one JSON object:
 *   {"op":"pre"|"post", "client":S, "tool_name":S, "tool_input":{...},
 *    "session_id":S, "tool_use_id":S, "cwd":S, "truncated":true}
 * op, tool_name and tool_input are required; the others may be left out;
 * no other key is taken (an "id", a "decision", an "answer", a "rule"...:
 * the socket reports calls, it never answers a question nor changes a
 * rule). The answer, one JSON object a line:
 *   {"decision":"allow"|"deny","id":T,"rule":R,"reason":S}   (pre)
 *   {"pending":Q,"id":T,"timeout_s":N}  (pre: a human is asked, question Q;
 *                                  the answer follows)
 *   {"ok":true,"id":T}            (post)
 *   {"error":S}                   (refused; the connection is closed)
 *
 * What a call is about, by tool name: Bash: tool_input.command; Write,
 * Edit, MultiEdit, Read: file_path; NotebookEdit: notebook_path; WebFetch:
 * url; WebSearch: query; any other tool (Glob, Grep, Task, mcp__*, a
 * Codex tool): tool_input as compact JSON with sorted keys. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../policy/policy.h"

/* A line on the hook socket, newline included, at most. */
#define HOOKMSG_LINE_MAX (512 * 1024)
/* What a call is about, at most: `warden hook` cuts the string the tool's
 * rules match there (and says so: "truncated"), every other string of
 * tool_input at HOOKMSG_STRING_MAX. */
#define HOOKMSG_WHAT_MAX (256 * 1024)
#define HOOKMSG_STRING_MAX 4096

enum hook_phase { HOOK_PRE, HOOK_POST };

/* A report read from the socket. The strings point into msg (owned), what
 * is malloc'd. */
struct hook_call {
	enum hook_phase phase;
	const char *client;        /* NULL: not said */
	const char *tool;
	const char *session_id, *tool_use_id, *cwd; /* NULL: not said */
	char *what;
	bool truncated;            /* the client cut what the rules match */
	json_t *msg;
};

/* Read one line (without its newline) from the hook socket. 0 with *c
 * filled; -1 with why filled when it is not a report of a tool call (not
 * JSON, a key or an op the socket does not take, a field of the wrong
 * type). */
int hookmsg_parse(const char *line, size_t len, struct hook_call *c, char *why, size_t whylen);
void hook_call_clear(struct hook_call *c);

/* The key of tool_input a tool's rules match ("command", "file_path",
 * ...), or NULL: the whole input as compact JSON. */
const char *hookmsg_what_key(const char *tool);

/* What a call of tool with input is about (malloc'd; never NULL). */
char *hookmsg_what(const char *tool, json_t *input);

/* From the client's hook input (its stdin: hook_event_name, tool_name,
 * tool_input, session_id, tool_use_id, cwd) to the socket's line (malloc'd,
 * newline-terminated, at most HOOKMSG_LINE_MAX bytes): strings cut as said
 * above. client: "claude", "codex" (NULL: "claude"). *phase: the event's.
 * NULL with why when the input is not a tool call's hook input; *ignored
 * set (and why) when it is another hook event, which warden lets be. */
char *hookmsg_from_client(const char *text, size_t len, const char *client,
			  enum hook_phase *phase, bool *ignored, char *why, size_t whylen);

/* The first of p's tool rules whose NAME glob matches tool and whose
 * PATTERN glob (if any) matches what decides: its action, and *rule;
 * none: `tool default` (allow when not set), *rule NULL. */
enum rules_verdict hookmsg_decide(const struct policy *p, const char *tool, const char *what,
				  const struct policy_tool_rule **rule);

/* Could a rule with a PATTERN apply to tool (one whose NAME matches)?
 * A call whose `what` was cut cannot be judged by such a rule. */
bool hookmsg_pattern_rules(const struct policy *p, const char *tool);
