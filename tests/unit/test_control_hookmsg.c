/* test_control_hookmsg.c - a tool call as data (src/control/hookmsg.c):
 * what a call is about per tool, the first tool rule that matches deciding
 * (NAME and PATTERN globs, the default), the hook socket's line read
 * strictly (reports only: an answer, a decision, an id, a rule, a field of
 * the wrong type, junk refused, saying why), and Claude Code's and Codex's
 * hook input made into that line (phases, other events let be, long
 * strings cut and said). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "src/common/util.h"
#include "src/control/hookmsg.h"

static void what(const char *tool, const char *input, const char *want)
{
	json_t *in = json_loads(input, 0, NULL);
	char *w = hookmsg_what(tool, in);
	CHECK_STR(w, want);
	free(w);
	json_decref(in);
}

static void test_what(void)
{
	what("Bash", "{\"command\":\"npm test\",\"description\":\"d\"}", "npm test");
	what("Write", "{\"file_path\":\"/w/a.c\",\"content\":\"x\"}", "/w/a.c");
	what("Edit", "{\"file_path\":\"/w/b\",\"old_string\":\"a\"}", "/w/b");
	what("MultiEdit", "{\"file_path\":\"/w/c\",\"edits\":[]}", "/w/c");
	what("Read", "{\"file_path\":\"/etc/passwd\"}", "/etc/passwd");
	what("NotebookEdit", "{\"notebook_path\":\"/w/n.ipynb\"}", "/w/n.ipynb");
	what("WebFetch", "{\"url\":\"https://example.com/\",\"prompt\":\"p\"}", "https://example.com/");
	what("WebSearch", "{\"query\":\"q\"}", "q");
	/* anything else, or the key missing: the input, compact, keys sorted */
	what("Grep", "{\"pattern\":\"x\",\"-i\":true}", "{\"-i\":true,\"pattern\":\"x\"}");
	what("mcp__gh__issue", "{\"b\":1,\"a\":[\"x\"]}", "{\"a\":[\"x\"],\"b\":1}");
	what("Bash", "{\"cmd\":\"ls\"}", "{\"cmd\":\"ls\"}");
}

static void test_decide(void)
{
	struct policy p = { 0 };
	struct werr e = { 0 };
	const char *text = "tool deny Bash rm -rf *\n"
			   "tool allow Bash rm -rf ./build\n" /* after the deny: never decides */
			   "tool ask Web* https://*\n"
			   "tool allow mcp__github__*\n";
	CHECK(policy_parse_text(&p, "t", NULL, NULL, text, strlen(text), &e) == 0);
	const struct policy_tool_rule *r;
	CHECK(hookmsg_decide(&p, "Bash", "rm -rf /", &r) == RULES_DENY && r == &p.tools[0]);
	CHECK(hookmsg_decide(&p, "Bash", "rm -rf ./build", &r) == RULES_DENY && r == &p.tools[0]);
	CHECK(hookmsg_decide(&p, "Bash", "ls", &r) == RULES_ALLOW && r == NULL);
	CHECK(hookmsg_decide(&p, "WebFetch", "https://a/b", &r) == RULES_ASK && r == &p.tools[2]);
	CHECK(hookmsg_decide(&p, "WebFetch", "http://a/b", &r) == RULES_ALLOW && !r);
	CHECK(hookmsg_decide(&p, "mcp__github__issue", "{}", &r) == RULES_ALLOW && r == &p.tools[3]);
	CHECK(hookmsg_pattern_rules(&p, "Bash") && hookmsg_pattern_rules(&p, "WebSearch"));
	CHECK(!hookmsg_pattern_rules(&p, "mcp__github__issue") && !hookmsg_pattern_rules(&p, "Read"));
	CHECK(policy_parse_text(&p, "t", NULL, NULL, "tool default deny\n", 18, &e) == 0);
	CHECK(hookmsg_decide(&p, "Read", "/x", &r) == RULES_DENY && !r);
	policy_free(&p);
}

static int parse(const char *line, struct hook_call *c, char *why)
{
	return hookmsg_parse(line, strlen(line), c, why, 300);
}

static void test_parse(void)
{
	struct hook_call c;
	char why[300];
	CHECK(parse("{\"op\":\"pre\",\"client\":\"claude\",\"tool_name\":\"Bash\",\"tool_input\":"
		    "{\"command\":\"ls\"},\"session_id\":\"s\",\"tool_use_id\":\"u\",\"cwd\":\"/w\"}",
		    &c, why) == 0);
	CHECK(c.phase == HOOK_PRE);
	CHECK_STR(c.tool, "Bash");
	CHECK_STR(c.what, "ls");
	CHECK_STR(c.client, "claude");
	CHECK_STR(c.tool_use_id, "u");
	CHECK(!c.truncated);
	hook_call_clear(&c);
	CHECK(parse("{\"op\":\"post\",\"tool_name\":\"Read\",\"tool_input\":{},\"truncated\":true}", &c,
		    why) == 0 && c.phase == HOOK_POST && c.truncated && !c.client);
	hook_call_clear(&c);

	/* never an answer, a decision, an id, a rule */
	CHECK(parse("{\"op\":\"answer\",\"id\":\"q-1\",\"decision\":\"allow\"}", &c, why) < 0 &&
	      strstr(why, "op \"answer\"") && strstr(why, "never an answer"));
	CHECK(parse("{\"op\":\"pre\",\"tool_name\":\"Bash\",\"tool_input\":{},\"decision\":\"allow\"}", &c,
		    why) < 0 && strstr(why, "\"decision\""));
	CHECK(parse("{\"op\":\"pre\",\"tool_name\":\"Bash\",\"tool_input\":{},\"id\":\"q-1\"}", &c, why) < 0);
	CHECK(parse("{\"op\":\"rule\",\"action\":\"allow\"}", &c, why) < 0);
	CHECK(parse("{\"tool_name\":\"Bash\",\"tool_input\":{}}", &c, why) < 0 && strstr(why, "op"));
	/* fields of the wrong type, missing, duplicated; junk */
	CHECK(parse("{\"op\":\"pre\",\"tool_name\":\"Bash\",\"tool_input\":\"ls\"}", &c, why) < 0 &&
	      strstr(why, "JSON object"));
	CHECK(parse("{\"op\":\"pre\",\"tool_name\":1,\"tool_input\":{}}", &c, why) < 0);
	CHECK(parse("{\"op\":\"pre\",\"tool_name\":\"\",\"tool_input\":{}}", &c, why) < 0);
	CHECK(parse("{\"op\":\"pre\",\"tool_input\":{}}", &c, why) < 0);
	CHECK(parse("{\"op\":\"pre\",\"tool_name\":\"A\",\"tool_name\":\"B\",\"tool_input\":{}}", &c, why) < 0);
	CHECK(parse("{\"op\":\"pre\",\"client\":\"Mr X\",\"tool_name\":\"A\",\"tool_input\":{}}", &c, why) < 0);
	CHECK(parse("{\"op\":\"pre\"", &c, why) < 0 && strstr(why, "not a JSON object"));
	CHECK(parse("[]", &c, why) < 0);
}

static void test_from_client(void)
{
	enum hook_phase ph;
	bool ignored;
	char why[300];
	const char *pre = "{\"session_id\":\"s\",\"cwd\":\"/w\",\"hook_event_name\":\"PreToolUse\","
			  "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"tool_use_id\":\"u\","
			  "\"permission_mode\":\"default\"}";
	char *line = hookmsg_from_client(pre, strlen(pre), NULL, &ph, &ignored, why, sizeof why);
	CHECK(line && ph == HOOK_PRE);
	CHECK_STR(line, "{\"op\":\"pre\",\"client\":\"claude\",\"tool_name\":\"Bash\",\"tool_input\":"
			"{\"command\":\"ls\"},\"session_id\":\"s\",\"tool_use_id\":\"u\",\"cwd\":\"/w\"}\n");
	free(line);
	const char *fail = "{\"hook_event_name\":\"PostToolUseFailure\",\"tool_name\":\"Bash\","
			   "\"tool_input\":{\"command\":\"false\"}}";
	line = hookmsg_from_client(fail, strlen(fail), "codex", &ph, &ignored, why, sizeof why);
	CHECK(line && ph == HOOK_POST && strstr(line, "\"client\":\"codex\""));
	free(line);
	/* other events: let be */
	const char *stop = "{\"hook_event_name\":\"Stop\"}";
	CHECK(!hookmsg_from_client(stop, strlen(stop), NULL, &ph, &ignored, why, sizeof why) && ignored);
	CHECK(!hookmsg_from_client("nope", 4, NULL, &ph, &ignored, why, sizeof why) && !ignored &&
	      strstr(why, "not a JSON object"));
	/* long strings cut: the command at HOOKMSG_WHAT_MAX, others at
	 * HOOKMSG_STRING_MAX, and said */
	size_t big = HOOKMSG_WHAT_MAX + 10;
	char *cmd = xmalloc(big + 1);
	memset(cmd, 'a', big);
	cmd[big] = '\0';
	char *in = xasprintf("{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":"
			     "{\"command\":\"%s\",\"description\":\"%.5000s\"}}", cmd, cmd);
	line = hookmsg_from_client(in, strlen(in), NULL, &ph, &ignored, why, sizeof why);
	CHECK(line && strlen(line) < HOOKMSG_LINE_MAX);
	struct hook_call c;
	CHECK(line && hookmsg_parse(line, strlen(line) - 1, &c, why, sizeof why) == 0);
	CHECK(c.truncated && strlen(c.what) == HOOKMSG_WHAT_MAX);
	CHECK(strlen(json_string_value(json_object_get(json_object_get(c.msg, "tool_input"),
							"description"))) == HOOKMSG_STRING_MAX);
	hook_call_clear(&c);
	free(line);
	free(in);
	free(cmd);
}

int main(void)
{
	test_what();
	test_decide();
	test_parse();
	test_from_client();
	return check_status();
}
