/* hookmsg.c - a tool call as data (hookmsg.h): the client's hook input
 * made into the hook socket's line, the line read back strictly, the
 * per-tool string the rules match (the rule that decides: hookrule.c; this
 * file is also built into the hook client, src/hookbin). */
#include "hookmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define INPUT_DEPTH_MAX 16

/* The keys a line may hold, and which must be strings. */
static const char *const line_keys[] = { "op", "client", "tool_name", "tool_input", "session_id",
					 "tool_use_id", "cwd", "truncated" };

static const struct {
	const char *tool, *key;
} what_keys[] = {
	{ "Bash", "command" },       { "Write", "file_path" },  { "Edit", "file_path" },
	{ "MultiEdit", "file_path" }, { "Read", "file_path" },  { "NotebookEdit", "notebook_path" },
	{ "WebFetch", "url" },        { "WebSearch", "query" },
};

const char *hookmsg_what_key(const char *tool)
{
	for (size_t i = 0; tool && i < ARRAY_LEN(what_keys); i++)
		if (strcmp(what_keys[i].tool, tool) == 0)
			return what_keys[i].key;
	return NULL;
}

char *hookmsg_what(const char *tool, json_t *input)
{
	const char *key = hookmsg_what_key(tool);
	const char *s = key ? json_string_value(json_object_get(input, key)) : NULL;
	if (s)
		return xstrdup(s);
	char *j = input ? json_dumps(input, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
	return j ? j : xstrdup("{}");
}

void hook_call_clear(struct hook_call *c)
{
	free(c->what);
	json_decref(c->msg);
	*c = (struct hook_call){ 0 };
}

/* A name the client gives itself: [a-z0-9_-], 1 to 32. */
static bool client_name_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= 32 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static bool key_known(const char *k)
{
	for (size_t i = 0; i < ARRAY_LEN(line_keys); i++)
		if (strcmp(line_keys[i], k) == 0)
			return true;
	return false;
}

int hookmsg_parse(const char *line, size_t len, struct hook_call *c, char *why, size_t whylen)
{
	*c = (struct hook_call){ 0 };
	json_error_t err;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	if (!j || !json_is_object(j)) {
		snprintf(why, whylen, "not a JSON object%s%.100s", j ? "" : ": ", j ? "" : err.text);
		json_decref(j);
		return -1;
	}
	c->msg = j;
	/* what it asks for first: anything but a report is refused by its op */
	json_t *opv = json_object_get(j, "op");
	const char *op = json_string_value(opv);
	if (!op || (strcmp(op, "pre") != 0 && strcmp(op, "post") != 0)) {
		snprintf(why, whylen, "op \"%.60s\": the hook socket takes reports of tool calls only "
			 "(op pre or post), never an answer or a rule", op ? op : opv ? "(not a string)" : "");
		goto refused;
	}
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v) {
		if (!key_known(k)) {
			snprintf(why, whylen, "\"%.60s\": the hook socket takes reports of tool calls only "
				 "(op pre or post), never an answer or a rule", k);
			goto refused;
		}
		bool want_string = strcmp(k, "tool_input") != 0 && strcmp(k, "truncated") != 0;
		if (want_string ? !json_is_string(v)
				: strcmp(k, "tool_input") == 0 ? !json_is_object(v) : !json_is_boolean(v)) {
			snprintf(why, whylen, "\"%s\" is not a %s", k,
				 want_string ? "string" : strcmp(k, "tool_input") == 0 ? "JSON object" : "boolean");
			goto refused;
		}
	}
	c->phase = op[1] == 'r' ? HOOK_PRE : HOOK_POST;
	c->tool = json_string_value(json_object_get(j, "tool_name"));
	json_t *input = json_object_get(j, "tool_input");
	if (!c->tool || !c->tool[0] || strlen(c->tool) > 256 || !input) {
		snprintf(why, whylen, "a report needs \"tool_name\" (1 to 256 bytes) and \"tool_input\"");
		goto refused;
	}
	c->client = json_string_value(json_object_get(j, "client"));
	if (c->client && !client_name_ok(c->client)) {
		snprintf(why, whylen, "\"client\" is a short name ([a-z0-9_-], at most 32)");
		goto refused;
	}
	c->session_id = json_string_value(json_object_get(j, "session_id"));
	c->tool_use_id = json_string_value(json_object_get(j, "tool_use_id"));
	c->cwd = json_string_value(json_object_get(j, "cwd"));
	c->truncated = json_is_true(json_object_get(j, "truncated"));
	c->what = hookmsg_what(c->tool, input);
	return 0;
refused:
	hook_call_clear(c);
	return -1;
}

/* ---- from the client's input ----------------------------------------- */

/* s cut to at most max bytes, at a UTF-8 boundary. */
static json_t *cut_string(const char *s, size_t max, bool *cut)
{
	size_t n = strlen(s);
	if (n <= max)
		return json_string(s);
	*cut = true;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return json_stringn(s, max);
}

/* A copy of v with every string cut at HOOKMSG_STRING_MAX (the key of
 * the top level named `keep` at HOOKMSG_WHAT_MAX), nesting cut at
 * INPUT_DEPTH_MAX. */
static json_t *reduce(json_t *v, const char *keep, int depth, bool *cut)
{
	if (depth > INPUT_DEPTH_MAX) {
		*cut = true;
		return json_null();
	}
	if (json_is_string(v))
		return cut_string(json_string_value(v), HOOKMSG_STRING_MAX, cut);
	if (json_is_object(v)) {
		json_t *o = json_object();
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			json_t *r = keep && json_is_string(x) && strcmp(k, keep) == 0
					    ? cut_string(json_string_value(x), HOOKMSG_WHAT_MAX, cut)
					    : reduce(x, NULL, depth + 1, cut);
			json_object_set_new(o, k, r ? r : json_null());
		}
		return o;
	}
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			json_t *r = reduce(x, NULL, depth + 1, cut);
			json_array_append_new(a, r ? r : json_null());
		}
		return a;
	}
	return json_copy(v);
}

char *hookmsg_from_client(const char *text, size_t len, const char *client,
			  enum hook_phase *phase, bool *ignored, char *why, size_t whylen)
{
	*ignored = false;
	json_error_t err;
	_cleanup_json_ json_t *in = json_loadb(text, len, 0, &err);
	if (!in || !json_is_object(in)) {
		snprintf(why, whylen, "the hook's input is not a JSON object%s%.100s", in ? "" : ": ",
			 in ? "" : err.text);
		return NULL;
	}
	const char *ev = json_string_value(json_object_get(in, "hook_event_name"));
	if (ev && strcmp(ev, "PreToolUse") == 0) {
		*phase = HOOK_PRE;
	} else if (ev && (strcmp(ev, "PostToolUse") == 0 || strcmp(ev, "PostToolUseFailure") == 0)) {
		*phase = HOOK_POST;
	} else {
		*ignored = true;
		snprintf(why, whylen, "hook event \"%.60s\": warden's gate takes PreToolUse and PostToolUse",
			 ev ? ev : "");
		return NULL;
	}
	const char *tool = json_string_value(json_object_get(in, "tool_name"));
	json_t *input = json_object_get(in, "tool_input");
	if (!tool || !tool[0] || strlen(tool) > 256) {
		snprintf(why, whylen, "the hook's input has no tool_name");
		return NULL;
	}
	bool cut = false;
	json_t *reduced = json_is_object(input) ? reduce(input, hookmsg_what_key(tool), 0, &cut)
						: json_object();
	_cleanup_json_ json_t *out = json_pack("{s:s, s:s, s:s, s:o}", "op",
					       *phase == HOOK_PRE ? "pre" : "post", "client",
					       client ? client : "claude", "tool_name", tool,
					       "tool_input", reduced ? reduced : json_object());
	if (!out) {
		snprintf(why, whylen, "the hook's input could not be read");
		return NULL;
	}
	static const char *const opt[] = { "session_id", "tool_use_id", "cwd" };
	for (size_t i = 0; i < ARRAY_LEN(opt); i++) {
		const char *s = json_string_value(json_object_get(in, opt[i]));
		if (s)
			json_object_set_new(out, opt[i], cut_string(s, 1024, &(bool){ false }));
	}
	char *line = NULL;
	for (int pass = 0; pass < 2; pass++) {
		if (cut)
			json_object_set_new(out, "truncated", json_true());
		line = json_dumps(out, JSON_COMPACT);
		if (line && strlen(line) + 1 < HOOKMSG_LINE_MAX)
			break;
		/* still too long: only what the rules match stays */
		free(line);
		line = NULL;
		cut = true;
		const char *key = hookmsg_what_key(tool);
		json_t *keep = json_object();
		json_t *w = key ? json_object_get(json_object_get(out, "tool_input"), key) : NULL;
		if (w)
			json_object_set(keep, key, w);
		json_object_set_new(out, "tool_input", keep);
	}
	if (!line) {
		snprintf(why, whylen, "the hook's input is too large to report");
		return NULL;
	}
	size_t n = strlen(line);
	line = xrealloc(line, n + 2);
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}
