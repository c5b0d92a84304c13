/* hooks.c - warden's tool-call hook (the hook client /.warden/warden-hook,
 * src/hookbin; src/control/hook.h) in a client's settings (agents.h).
 *
 * For Claude Code, first as managed settings: a file in the sandbox's
 * read-only /etc (/etc/claude-code/managed-settings.json), whose hooks the
 * user's, project's and local settings cannot turn off ("disableAllHooks"
 * there leaves managed hooks running), with "allowManagedHooksOnly", so
 * that no hook of the agent's (a project's .claude/settings.json, the
 * state's settings) runs beside warden's to answer for a call or rewrite
 * its input after warden judged it. Then, as before, merged into
 * settings.json in warden's state directory for claude (hooks.PreToolUse
 * and hooks.PostToolUse, one matcher group for every tool; the command
 * with "args", which Claude Code starts without a shell, one process less
 * per call; a hook of an older warden, `/.warden/warden hook`, made the new
 * one), leaving what the user or the client put there as it is;
 * idempotent, and written through a new file renamed into place, never
 * through a link the agent planted. That copy is for a client whose
 * managed settings come from elsewhere (an organisation's server-managed
 * settings replace the file in /etc); where the file in /etc is in force,
 * allowManagedHooksOnly makes the client ignore the copy, so a call is
 * reported once. The state's copy can be changed by the agent: guard.c
 * checks it at the session's end. For Codex, a system-wide config
 * (/etc/codex/config.toml inside the sandbox, read-only): Codex 0.169 runs
 * a hook of its user config only once a person has reviewed and trusted
 * it, a hook of the system config (managed) at once. */
#include "agents.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SETTINGS_MAX (1 << 20)

const char agent_codex_etc_config[] =
	"# Written by warden for Codex inside the sandbox: warden's tool-call hook,\n"
	"# as a system-wide (managed) setting. Each tool call is reported to warden\n"
	"# before it runs and after; the policy's `tool` rules decide.\n"
	"[[hooks.PreToolUse]]\n"
	"matcher = \"*\"\n"
	"[[hooks.PreToolUse.hooks]]\n"
	"type = \"command\"\n"
	"command = \"" AGENT_HOOK_COMMAND " --client codex\"\n"
	"timeout = " AGENT_HOOK_TIMEOUT "\n"
	"\n"
	"[[hooks.PostToolUse]]\n"
	"matcher = \"*\"\n"
	"[[hooks.PostToolUse.hooks]]\n"
	"type = \"command\"\n"
	"command = \"" AGENT_HOOK_COMMAND " --client codex\"\n"
	"timeout = " AGENT_HOOK_TIMEOUT "\n";

/* The managed hook group of one event, as hook_entry() writes it. */
#define MANAGED_GROUP                                                                          \
	"[{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", \"command\": \"" AGENT_HOOK_COMMAND \
	"\", \"args\": [\"--client\", \"claude\"], \"timeout\": " AGENT_HOOK_TIMEOUT "}]}]"

const char agent_claude_managed_settings[] =
	"{\n"
	"  \"allowManagedHooksOnly\": true,\n"
	"  \"hooks\": {\n"
	"    \"PreToolUse\": " MANAGED_GROUP ",\n"
	"    \"PostToolUse\": " MANAGED_GROUP "\n"
	"  }\n"
	"}\n";

/* Is this hook warden's (this warden's, or an older one's)? */
static bool our_hook(json_t *h)
{
	const char *cmd = json_string_value(json_object_get(h, "command"));
	return cmd && (strcmp(cmd, AGENT_HOOK_COMMAND) == 0 || strcmp(cmd, AGENT_HOOK_COMMAND_OLD) == 0);
}

/* Does this matcher group run warden's hook? */
static bool ours(json_t *group)
{
	size_t i;
	json_t *h;
	json_array_foreach(json_object_get(group, "hooks"), i, h)
		if (our_hook(h))
			return true;
	return false;
}

/* warden's hook as this warden writes it. */
static json_t *hook_entry(void)
{
	return json_pack("{s:s, s:s, s:[s, s], s:i}", "type", "command", "command", AGENT_HOOK_COMMAND,
			 "args", "--client", "claude", "timeout", atoi(AGENT_HOOK_TIMEOUT));
}

/* hooks.EVENT of settings with warden's group in it; *changed when added
 * or its timeout brought up to date. -1 with why: the settings' shape is
 * not what Claude Code reads. */
static int merge_event(json_t *hooks, const char *event, bool *changed, const char **why)
{
	json_t *list = json_object_get(hooks, event);
	if (!list) {
		list = json_array();
		json_object_set_new(hooks, event, list);
	}
	if (!json_is_array(list)) {
		*why = "is not a list";
		return -1;
	}
	size_t i;
	json_t *g;
	json_array_foreach(list, i, g) {
		if (!json_is_object(g) || !ours(g))
			continue;
		size_t k;
		json_t *h;
		json_t *entries = json_object_get(g, "hooks");
		json_array_foreach(entries, k, h) {
			if (!our_hook(h))
				continue;
			/* an older command, timeout or arguments: this warden's */
			json_t *want = hook_entry();
			if (!json_equal(h, want)) {
				json_array_set(entries, k, want);
				*changed = true;
			}
			json_decref(want);
		}
		return 0;
	}
	json_array_append_new(list, json_pack("{s:s, s:[o]}", "matcher", "*", "hooks", hook_entry()));
	*changed = true;
	return 0;
}

int agent_claude_install_hook(int statefd, const char *dir, bool *added, struct werr *e)
{
	*added = false;
	_cleanup_close_ int cfd = open_beneath(statefd, ".claude", O_RDONLY | O_DIRECTORY, 0);
	if (cfd < 0)
		return werr_errno(e, "%s/.claude", dir);
	_cleanup_json_ json_t *j = NULL;
	_cleanup_close_ int fd = open_beneath(cfd, "settings.json", O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0 && errno == ELOOP)
		return werr_set(e, 0, "%s/.claude/settings.json is a symlink: warden adds its tool-call "
				"hook only to a regular file (`warden state reset claude` starts afresh)", dir);
	if (fd < 0 && errno != ENOENT)
		return werr_errno(e, "%s/.claude/settings.json", dir);
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SETTINGS_MAX)
			return werr_set(e, 0, "%s/.claude/settings.json is not a regular file of at most "
					"1 MiB: warden adds its tool-call hook there (`warden state reset "
					"claude` starts afresh)", dir);
		_cleanup_free_ char *buf = xmalloc((size_t)st.st_size + 1);
		ssize_t n = read(fd, buf, (size_t)st.st_size);
		if (n < 0)
			return werr_errno(e, "%s/.claude/settings.json", dir);
		json_error_t je;
		j = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
		if (!j || !json_is_object(j))
			return werr_set(e, 0, "%s/.claude/settings.json:%d: %s: warden adds its tool-call "
					"hook there; fix the file or `warden state reset claude`", dir,
					j ? 1 : je.line, j ? "not a JSON object" : je.text);
	} else {
		j = json_object();
	}
	json_t *hooks = json_object_get(j, "hooks");
	if (!hooks) {
		hooks = json_object();
		json_object_set_new(j, "hooks", hooks);
	}
	bool changed = false;
	const char *why = "is not an object";
	if (!json_is_object(hooks) || merge_event(hooks, "PreToolUse", &changed, &why) < 0 ||
	    merge_event(hooks, "PostToolUse", &changed, &why) < 0)
		return werr_set(e, 0, "%s/.claude/settings.json: \"hooks\" (or an event in it) %s: warden "
				"adds its tool-call hook there; fix the file or `warden state reset "
				"claude`", dir, why);
	/* hooks switched off would switch warden's gate off: on again */
	if (json_is_true(json_object_get(j, "disableAllHooks"))) {
		json_object_del(j, "disableAllHooks");
		changed = true;
		wnote("%s/.claude/settings.json had \"disableAllHooks\": true, which would turn warden's "
		      "tool-call hook off: removed", dir);
	}
	if (!changed)
		return 0;
	_cleanup_free_ char *text = json_dumps(j, JSON_INDENT(2));
	if (!text)
		return werr_set(e, ENOMEM, "%s/.claude/settings.json", dir);
	_cleanup_free_ char *line = xasprintf("%s\n", text);
	if (replace_beneath(cfd, "settings.json", line) < 0)
		return werr_errno(e, "writing %s/.claude/settings.json", dir);
	*added = true;
	return 0;
}
