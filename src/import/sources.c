/* sources.c - reading the settings of other sandboxes into the import model
 * (import.h): Claude Code's settings.json (`permissions` and `sandbox`),
 * Anthropic sandbox-runtime's settings (the same `network` and
 * `filesystem` objects Claude Code's `sandbox` holds) and Codex's
 * config.toml (`sandbox_mode`, `[sandbox_workspace_write]`). Every key is
 * either read, said to be no sandbox setting, or listed as not mapped; a
 * value of the wrong type is an error naming the key. */
#include "import.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sbuf.h"
#include "toml.h"

void imp_add(struct imp_list *l, const char *text, const char *origin, const char *base)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = (struct imp_item){ .text = xstrdup(text), .origin = xstrdup(origin),
					  .base = base ? xstrdup(base) : NULL };
}

static void list_free(struct imp_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].text);
		free(l->v[i].origin);
		free(l->v[i].base);
	}
	free(l->v);
	*l = (struct imp_list){ 0 };
}

void imp_free(struct imp *m)
{
	struct imp_list *ls[] = { &m->net_allow, &m->net_deny, &m->read_deny, &m->read_allow,
				  &m->write_deny, &m->write_allow, &m->tool_deny, &m->tool_ask,
				  &m->tool_allow };
	for (size_t i = 0; i < ARRAY_LEN(ls); i++)
		list_free(ls[i]);
	free(m->ws_write_why);
	strv_free(&m->files);
	strv_free(&m->stricter);
	strv_free(&m->unmapped);
	strv_free(&m->weaker);
	strv_free(&m->ignored);
}

/* Reading one file: the model, the file's name as shown, and (Claude Code)
 * the directory its settings-relative paths are under. */
struct rd {
	struct imp *m;
	const char *file, *dir;
	struct werr *e;
};

__attribute__((format(printf, 3, 4)))
static void say(struct strv *s, const struct rd *r, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r->m->files.n > 1)
		strv_push_owned(s, xasprintf("%s: %s", r->file, msg));
	else
		strv_push(s, msg);
}

static void say_once(struct strv *s, const char *msg)
{
	if (!strv_contains(s, msg))
		strv_push(s, msg);
}

static int type_err(const struct rd *r, const char *key, const char *want)
{
	return werr_set(r->e, 0, "%s: %s must be %s", r->file, key, want);
}

/* A value shown in a message: compact JSON, cut. */
static char *shown(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (s && strlen(s) > 160)
		strcpy(s + 150, "...");
	return s ? s : xstrdup("?");
}

/* An array of strings at key (may be absent): each pushed to l. */
static int strings(const struct rd *r, const json_t *o, const char *key, const char *path,
		   struct imp_list *l)
{
	json_t *a = json_object_get(o, key);
	if (!a)
		return 0;
	if (!json_is_array(a))
		return type_err(r, path, "an array of strings");
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return type_err(r, path, "an array of strings");
		if (l) {
			_cleanup_free_ char *origin = r->m->files.n > 1 ? xasprintf("%s: %s", r->file, path)
									: xstrdup(path);
			imp_add(l, json_string_value(v), origin, r->dir);
		}
	}
	return 0;
}

/* strings() of directories the agent works in (additionalDirectories,
 * writable_roots): plain paths, never a permission rule's settings-relative
 * "/x", and bound under /tmp too (imp_item.dir). */
static int dir_strings(const struct rd *r, const json_t *o, const char *key, const char *path,
		       struct imp_list *l)
{
	size_t from = l ? l->n : 0;
	if (strings(r, o, key, path, l) < 0)
		return -1;
	for (size_t i = from; l && i < l->n; i++) {
		free(l->v[i].base);
		l->v[i].base = NULL;
		l->v[i].dir = true;
	}
	return 0;
}

static int want(const struct rd *r, const json_t *v, const char *path, json_type t)
{
	static const char *const names[] = {
		[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array", [JSON_STRING] = "a string",
		[JSON_INTEGER] = "an integer", [JSON_REAL] = "a number", [JSON_TRUE] = "true or false",
		[JSON_FALSE] = "true or false", [JSON_NULL] = "null",
	};
	json_type got = json_typeof(v);
	if (got == t || (t == JSON_TRUE && got == JSON_FALSE) || (t == JSON_INTEGER && got == JSON_REAL))
		return 0;
	return type_err(r, path, names[t]);
}

/* ---- the sandbox object: srt's settings, Claude Code's `sandbox` -------- */

static int network(const struct rd *r, const json_t *n, const char *pre)
{
	char key[128];
	struct imp *m = r->m;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)n, k, v) {
		snprintf(key, sizeof key, "%snetwork.%s", pre, k);
		if (strcmp(k, "allowedDomains") == 0) {
			if (strings(r, n, k, key, &m->net_allow) < 0)
				return -1;
		} else if (strcmp(k, "deniedDomains") == 0) {
			if (strings(r, n, k, key, &m->net_deny) < 0)
				return -1;
		} else if (strcmp(k, "allowUnixSockets") == 0) {
			if (strings(r, n, k, key, NULL) < 0)
				return -1;
			if (json_array_size(v))
				say(&m->unmapped, r, "%s: the host's Unix sockets are not in warden's "
				    "sandbox, but for those in a path a profile binds", key);
		} else if (strcmp(k, "allowAllUnixSockets") == 0) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			if (json_is_true(v))
				say(&m->unmapped, r, "%s: the sandbox's own Unix sockets work; the host's "
				    "are not there", key);
		} else if (strcmp(k, "allowLocalBinding") == 0) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			if (json_is_true(v))
				say(&m->unmapped, r, "%s: binding ports works on the sandbox's own loopback; "
				    "the host's loopback is reached only by a `net allow 127.0.0.1:PORT` rule", key);
		} else if (strcmp(k, "httpProxyPort") == 0 || strcmp(k, "socksProxyPort") == 0) {
			if (want(r, v, key, JSON_INTEGER) < 0)
				return -1;
			say(&m->unmapped, r, "%s: warden is the proxy; a proxy of your own is not chained", key);
		} else if (strcmp(k, "deniedDomainReasons") == 0) {
			if (want(r, v, key, JSON_OBJECT) < 0)
				return -1;
			say(&m->unmapped, r, "%s: warden's refusals give warden's own reason", key);
		} else if (strcmp(k, "allowManagedDomainsOnly") == 0) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			say(&m->unmapped, r, "%s: warden reads only the files given to it; the domains "
			    "imported are all those these files list", key);
		} else {
			_cleanup_free_ char *s = shown(v);
			say(&m->unmapped, r, "%s %s: not known to warden's import", key, s);
		}
	}
	return 0;
}

static int filesystem(const struct rd *r, const json_t *f, const char *pre)
{
	char key[128];
	struct imp *m = r->m;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)f, k, v) {
		snprintf(key, sizeof key, "%sfilesystem.%s", pre, k);
		struct imp_list *l = strcmp(k, "denyRead") == 0    ? &m->read_deny
				   : strcmp(k, "allowRead") == 0   ? &m->read_allow
				   : strcmp(k, "denyWrite") == 0   ? &m->write_deny
				   : strcmp(k, "allowWrite") == 0  ? &m->write_allow
								   : NULL;
		if (l) {
			if (strings(r, f, k, key, l) < 0)
				return -1;
			continue;
		}
		_cleanup_free_ char *s = shown(v);
		say(&m->unmapped, r, "%s %s: not known to warden's import", key, s);
	}
	return 0;
}

/* The keys srt's settings and Claude Code's `sandbox` share, and those
 * of each. */
static int sandbox_obj(const struct rd *r, const json_t *o, const char *pre, bool claude)
{
	char key[128];
	struct imp *m = r->m;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		snprintf(key, sizeof key, "%s%s", pre, k);
		if (strcmp(k, "network") == 0 || strcmp(k, "filesystem") == 0) {
			if (want(r, v, key, JSON_OBJECT) < 0)
				return -1;
			if ((k[0] == 'n' ? network(r, v, pre) : filesystem(r, v, pre)) < 0)
				return -1;
		} else if (strcmp(k, "ignoreViolations") == 0) {
			if (want(r, v, key, JSON_OBJECT) < 0)
				return -1;
			say(&m->unmapped, r, "%s: warden records every refusal in the audit log", key);
		} else if (strcmp(k, "enableWeakerNestedSandbox") == 0 ||
			   strcmp(k, "enableWeakerNetworkIsolation") == 0 ||
			   strcmp(k, "allowAppleEvents") == 0) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			if (json_is_true(v))
				say(&m->unmapped, r, "%s: warden has no weaker mode", key);
		} else if (claude && strcmp(k, "enabled") == 0) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			if (!json_is_true(v))
				say_once(&m->stricter, "Claude Code's own sandbox is off in these settings "
					 "(sandbox.enabled): warden's holds for the whole agent, not only its "
					 "shell commands");
		} else if (claude && strcmp(k, "excludedCommands") == 0) {
			if (strings(r, o, k, key, NULL) < 0)
				return -1;
			if (json_array_size(v)) {
				_cleanup_free_ char *s = shown(v);
				say(&m->stricter, r, "%s %s: nothing runs outside warden's sandbox; these "
				    "commands run inside it too", key, s);
			}
		} else if (claude && strcmp(k, "allowUnsandboxedCommands") == 0) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			if (!json_is_false(v))
				say(&m->stricter, r, "%s: warden has no escape hatch "
				    "(dangerouslyDisableSandbox does nothing inside it)", key);
		} else if (claude && (strcmp(k, "autoAllowBashIfSandboxed") == 0 ||
				      strcmp(k, "failIfUnavailable") == 0)) {
			if (want(r, v, key, JSON_TRUE) < 0)
				return -1;
			if (k[0] == 'f')
				say(&m->unmapped, r, "%s: warden never runs a command without its sandbox", key);
			else
				say(&m->unmapped, r, "%s: Claude Code's own prompts; warden's tool rules "
				    "below only tighten them", key);
		} else {
			_cleanup_free_ char *s = shown(v);
			say(&m->unmapped, r, "%s %s: not known to warden's import", key, s);
		}
	}
	return 0;
}

/* ---- Claude Code: permissions ------------------------------------------ */

static int permissions(const struct rd *r, const json_t *p)
{
	struct imp *m = r->m;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)p, k, v) {
		char key[128];
		snprintf(key, sizeof key, "permissions.%s", k);
		struct imp_list *l = strcmp(k, "deny") == 0  ? &m->tool_deny
				   : strcmp(k, "ask") == 0   ? &m->tool_ask
				   : strcmp(k, "allow") == 0 ? &m->tool_allow
							     : NULL;
		if (l) {
			if (strings(r, p, k, key, NULL) < 0)
				return -1;
			size_t i;
			json_t *s;
			json_array_foreach(v, i, s) {
				_cleanup_free_ char *o = xasprintf("%s%s%s \"%s\"", m->files.n > 1 ? r->file : "",
								   m->files.n > 1 ? ": " : "", key,
								   json_string_value(s));
				imp_add(l, json_string_value(s), o, r->dir);
			}
		} else if (strcmp(k, "additionalDirectories") == 0) {
			if (dir_strings(r, p, k, key, &m->write_allow) < 0)
				return -1;
		} else if (strcmp(k, "defaultMode") == 0 || strcmp(k, "disableBypassPermissionsMode") == 0) {
			if (want(r, v, key, JSON_STRING) < 0)
				return -1;
			say(&m->unmapped, r, "%s \"%s\": Claude Code's own prompts, which still apply inside "
			    "warden", key, json_string_value(v));
		} else {
			_cleanup_free_ char *s = shown(v);
			say(&m->unmapped, r, "%s %s: not known to warden's import", key, s);
		}
	}
	return 0;
}

static int read_claude(const struct rd *r, const json_t *root)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)root, k, v) {
		if (strcmp(k, "permissions") == 0) {
			if (want(r, v, k, JSON_OBJECT) < 0 || permissions(r, v) < 0)
				return -1;
		} else if (strcmp(k, "sandbox") == 0) {
			if (want(r, v, k, JSON_OBJECT) < 0 || sandbox_obj(r, v, "sandbox.", true) < 0)
				return -1;
		} else if (strcmp(k, "$schema") != 0) {
			say_once(&r->m->ignored, k);
		}
	}
	if (!json_object_get(root, "sandbox"))
		say_once(&r->m->stricter, "Claude Code's own sandbox is not set up in these settings: "
			 "warden's holds for the whole agent, not only its shell commands");
	return 0;
}

static int read_srt(const struct rd *r, const json_t *root)
{
	if (sandbox_obj(r, root, "", false) < 0)
		return -1;
	/* srt: writes are denied unless allowed; "." is the workspace */
	json_t *fs = json_object_get(root, "filesystem");
	json_t *aw = fs ? json_object_get(fs, "allowWrite") : NULL;
	bool whole = false;
	size_t i;
	json_t *v;
	json_array_foreach(aw, i, v) {
		const char *s = json_string_value(v);
		whole = whole || strcmp(s, ".") == 0 || strcmp(s, "./") == 0 ||
			(r->m->cwd && s[0] == '/' && path_is_within(r->m->cwd, s));
	}
	if (!whole) {
		r->m->ws_write_limited = true;
		free(r->m->ws_write_why);
		_cleanup_free_ char *s = aw ? shown(aw) : xstrdup("nothing");
		r->m->ws_write_why = xasprintf("filesystem.allowWrite %s does not hold \".\"", s);
	}
	return 0;
}

/* ---- Codex: config.toml ------------------------------------------------- */

static int read_codex(const struct rd *r, const json_t *root)
{
	struct imp *m = r->m;
	const char *k;
	json_t *v;
	json_t *mode = json_object_get(root, "sandbox_mode");
	if (mode && want(r, mode, "sandbox_mode", JSON_STRING) < 0)
		return -1;
	const char *ms = mode ? json_string_value(mode) : NULL;
	json_object_foreach((json_t *)root, k, v) {
		if (strcmp(k, "sandbox_mode") == 0) {
			m->mode_set = true;
			m->ws_write_limited = false;
			if (strcmp(ms, "read-only") == 0) {
				m->ws_write_limited = true;
				free(m->ws_write_why);
				m->ws_write_why = xstrdup("sandbox_mode \"read-only\"");
			} else if (strcmp(ms, "danger-full-access") == 0) {
				say_once(&m->stricter, "sandbox_mode \"danger-full-access\": Codex has no "
					 "sandbox in these settings; warden's below holds");
			} else if (strcmp(ms, "workspace-write") != 0) {
				return werr_set(r->e, 0, "%s: sandbox_mode \"%.100s\" is not read-only, "
						"workspace-write or danger-full-access", r->file, ms);
			}
		} else if (strcmp(k, "sandbox_workspace_write") == 0) {
			if (want(r, v, k, JSON_OBJECT) < 0)
				return -1;
			bool used = !ms || strcmp(ms, "workspace-write") == 0;
			const char *wk;
			json_t *wv;
			json_object_foreach(v, wk, wv) {
				char key[128];
				snprintf(key, sizeof key, "sandbox_workspace_write.%s", wk);
				if (strcmp(wk, "writable_roots") == 0) {
					if (dir_strings(r, v, wk, key, used ? &m->write_allow : NULL) < 0)
						return -1;
					if (!used && json_array_size(wv))
						say(&m->unmapped, r, "%s: not in force under sandbox_mode \"%s\"",
						    key, ms);
				} else if (strcmp(wk, "network_access") == 0) {
					if (want(r, wv, key, JSON_TRUE) < 0)
						return -1;
					if (json_is_true(wv) && used)
						say(&m->stricter, r, "%s = true: warden has no rule for the whole "
						    "network; add `net allow HOST` for the hosts the work needs "
						    "(warden's summary at exit names those it refused)", key);
				} else if (strcmp(wk, "exclude_slash_tmp") == 0 ||
					   strcmp(wk, "exclude_tmpdir_env_var") == 0) {
					if (want(r, wv, key, JSON_TRUE) < 0)
						return -1;
					if (json_is_true(wv))
						say(&m->unmapped, r, "%s: warden's /tmp is always a private tmpfs; "
						    "nothing written there reaches the host's /tmp", key);
				} else {
					_cleanup_free_ char *s = shown(wv);
					say(&m->unmapped, r, "%s %s: not known to warden's import", key, s);
				}
			}
		} else if (strcmp(k, "profiles") == 0 || strcmp(k, "permissions") == 0 ||
			   strcmp(k, "default_permissions") == 0) {
			say(&m->unmapped, r, "%s: Codex picks these when it starts; import what you run "
			    "with by putting it at the top level", k);
		} else if (strcmp(k, "shell_environment_policy") == 0) {
			say(&m->unmapped, r, "%s: warden passes only PATH, LANG, TERM, TZ and a few more "
			    "to the sandbox (`env pass NAME` adds one)", k);
		} else if (strcmp(k, "approval_policy") == 0) {
			say(&m->unmapped, r, "%s: Codex's own prompts, which still apply inside warden", k);
		} else {
			say_once(&m->ignored, k);
		}
	}
	return 0;
}

int import_read(struct imp *m, const char *file, const char *text, size_t len, struct werr *e)
{
	if (len > IMPORT_MAX_FILE)
		return werr_set(e, 0, "%s: larger than %u KiB: not a settings file", file,
				IMPORT_MAX_FILE >> 10);
	json_t *root;
	if (m->src == IMPORT_CODEX) {
		root = toml_parse(text, len, file, e);
		if (!root)
			return -1;
	} else {
		json_error_t je;
		root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		if (!root)
			return werr_set(e, 0, "%s:%d:%d: not valid JSON: %s", file, je.line, je.column,
					je.text);
		if (!json_is_object(root)) {
			json_decref(root);
			return werr_set(e, 0, "%s: the settings must be a JSON object", file);
		}
	}
	_cleanup_free_ char *dir = xstrdup(file);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	struct rd r = { .m = m, .file = file, .dir = m->src == IMPORT_CLAUDE ? dir : NULL, .e = e };
	int rc = m->src == IMPORT_CLAUDE ? read_claude(&r, root)
	       : m->src == IMPORT_SRT	 ? read_srt(&r, root)
					 : read_codex(&r, root);
	json_decref(root);
	return rc;
}

void import_default_files(enum import_source s, const char *home, struct strv *out)
{
	if (s == IMPORT_CLAUDE) {
		strv_push(out, "/etc/claude-code/managed-settings.json");
		strv_push_owned(out, xasprintf("%s/.claude/settings.json", home));
		strv_push(out, ".claude/settings.json");
		strv_push(out, ".claude/settings.local.json");
	} else if (s == IMPORT_SRT) {
		strv_push_owned(out, xasprintf("%s/.srt-settings.json", home));
	} else {
		const char *ch = getenv("CODEX_HOME");
		if (ch && ch[0] == '/')
			strv_push_owned(out, xasprintf("%s/config.toml", ch));
		else
			strv_push_owned(out, xasprintf("%s/.codex/config.toml", home));
		strv_push(out, ".codex/config.toml");
	}
}
