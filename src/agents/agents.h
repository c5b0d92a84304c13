/* agents.h - the built-in agent profiles: for each coding client warden
 * knows (Claude Code, Codex), the command names that pick it, the profile
 * layered between the built-in default and the user's profile (the client's
 * non-secret settings variables passed, its telemetry, auto-update and
 * error-reporting switches set), the API host taken from the client's own
 * configuration, the CA file it is told to trust, and the state it keeps in
 * the home directory (state.h makes that persist). Host-side only. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../policy/policy.h"

/* A name in the agent's home that persists across sessions (state.h): a
 * directory (".claude") or a file (".claude.json"). */
struct agent_state_entry {
	const char *name;
	bool dir;
	const char *seed;      /* files: the content a new one starts with */
};

/* A file warden writes into the agent's state when it is not there yet: the
 * client's own inner sandbox switched off (warden is the sandbox, and nested
 * user namespaces stay refused). */
struct agent_seed {
	const char *path;      /* relative to the state directory */
	const char *text;
	const char *said;      /* the one line said on stderr when it is written */
};

/* warden's tool-call hook as a client runs it: the small hook client
 * (SANDBOX_HOOK_EXE, src/hookbin), which Claude Code starts with its
 * arguments and no shell (AGENT_HOOK_ARGS: a hook's "args"), and the time
 * the client gives it (seconds: longer than any `approve timeout`, so that
 * the question's own timeout, after which the hook denies, comes first).
 * AGENT_HOOK_COMMAND_OLD: the command warden installed before, `warden
 * hook` in warden's whole binary (still there), replaced where found. */
#define AGENT_HOOK_COMMAND "/.warden/warden-hook"
#define AGENT_HOOK_COMMAND_OLD "/.warden/warden hook"
#define AGENT_HOOK_TIMEOUT "86460"

/* A JSON file in an agent's state (path, relative to it) whose keys decide
 * what runs and what is allowed: its top-level keys, and, when each is
 * set, the each_keys of every member of its top-level object each (Claude
 * Code's "projects", keyed by a project's path). record: the name of what
 * was checked in warden's record (guardrec.h). */
struct agent_guard {
	const char *path;
	const char *record;
	const char *const *keys;
	const char *each;
	const char *const *each_keys;
};

#define AGENT_GUARDS_MAX 2

struct agent_def {
	const char *name;                    /* "claude" */
	const char *title;                   /* "Claude Code" */
	const char *const *commands;         /* command names that pick it */
	const char *profile;                 /* profile text (policy language) */
	const struct agent_state_entry *state;
	size_t nstate;
	const struct agent_seed *seeds;
	size_t nseeds;
	/* warden's tool-call hook (hooks.c): merged into the client's settings
	 * in the state directory (statefd), *added when it was not there; or
	 * a file of /etc inside (etc_path relative to /etc, etc_text) */
	int (*install_hook)(int statefd, const char *dir, bool *added, struct werr *e);
	const char *etc_path, *etc_text;
	/* the files in the state whose keys decide what runs and what is
	 * allowed: checked at the session's end (guard.c) */
	const struct agent_guard *guards;
	size_t nguards;
};

/* hooks.c: Claude Code's settings.json (.claude/settings.json in the state
 * directory) with warden's hook for PreToolUse and PostToolUse; Codex's
 * system-wide config.toml with the same. */
int agent_claude_install_hook(int statefd, const char *dir, bool *added, struct werr *e);
extern const char agent_codex_etc_config[];
/* Claude Code's managed settings (/etc/claude-code/managed-settings.json
 * inside): warden's hook, allowManagedHooksOnly. */
extern const char agent_claude_managed_settings[];

extern const struct agent_def agent_defs[];
extern const size_t agent_defs_n;

/* The agent named name ("claude", "codex"), or NULL. */
const struct agent_def *agent_find(const char *name);
/* Their names, ", " between them ("claude, codex"), into buf (cut short
 * at len), for a message. */
void agent_names(char *buf, size_t len);

/* The agent a command picks by its name (argv[0]'s last component), or
 * NULL. */
const struct agent_def *agent_for_command(const char *argv0);

/* The agent of a session: opt is --agent's value (NULL: picked by argv0's
 * name; "none": no agent profile); *out NULL for none. -1 with e filled
 * for an unknown name. */
int agent_pick(const char *opt, const char *argv0, const struct agent_def **out, struct werr *e);

/* Codex's config.toml as warden reads it: the top-level model_provider
 * (default "openai"), model and openai_base_url (the built-in provider's
 * URL), and the [model_providers.NAME] table of that provider: its base_url
 * and env_key, and its keys that say where and how to reach it (never
 * http_headers), all written again by warden as text to import into new
 * state. A key warden reads that is not a one-line string is an error
 * naming the line; the rest of the file is not judged. */
struct codex_conf {
	char *provider, *base_url, *env_key;
	char *import_top;     /* top-level lines, or NULL */
	char *import_tables;  /* the provider's table, or NULL */
};
int agent_codex_config(const char *text, size_t len, struct codex_conf *c, struct werr *e);
void codex_conf_free(struct codex_conf *c);

/* The config.toml warden writes into new Codex state: seed with c's
 * top-level lines before its first table and c's tables at the end. */
char *agent_codex_merge(const char *seed, const struct codex_conf *c);

/* The API endpoint the client is configured for, as the agent profile
 * allows it: the base URL (from the client's variable in the host's
 * environment, else the user's own settings file, else the default hosts),
 * and the allow rule it makes. */
struct agent_endpoint {
	char *url;           /* as configured; NULL: the default hosts */
	char *source;        /* "ANTHROPIC_BASE_URL", "/home/u/.codex/config.toml", ... */
	bool from_settings;  /* url came from the settings file */
	char *pattern;       /* "host:port" in --allow-net's language */
	char *key_var;       /* Codex: the provider's env_key (passed through) */
	struct codex_conf codex; /* Codex: what new state imports */
};
void agent_endpoint_free(struct agent_endpoint *ep);

/* Parse a base URL ("http[s]://[user@]host[:port][/path]") into the allow
 * pattern "host:port" (the scheme's port when none is given; IPv6 in
 * brackets). -1 with e filled when it is not one. */
int agent_url_pattern(const char *url, char **pattern, struct werr *e);

/* Layer the agent onto p, whose profile text the caller parsed already
 * (policy_load_layered puts it between the built-in default and the user's
 * profile): the allow rule for the endpoint the client is configured for
 * (a configured host may be on the host's loopback, forwarded, or on a
 * private address: the user named it), else the agent's default hosts; the
 * CA file its variable names, exposed read-only; the key variables that are
 * set bound to the API host, narrowed then by agent_narrow. getenv_fn reads the host's
 * environment; home (may be NULL) is where the user's settings are. The
 * state directory is never read here: the agent writes it, and nothing it
 * writes may widen what the next session reaches. */
int agent_apply(const struct agent_def *a, struct policy *p, const char *home,
		const char *(*getenv_fn)(const char *), struct agent_endpoint *ep, struct werr *e);

/* The request rules (reqrules.h) that narrow host, which the profile bound
 * the client's API key to, to the paths the client calls (narrow.c), under
 * the base URL's path; origin "agent NAME". A base URL whose path no glob
 * says exactly leaves the host as it was. */
int agent_narrow(const struct agent_def *a, struct policy *p, const struct agent_endpoint *ep,
		 const char *host, struct werr *e);

/* The agent's description for `session.start` and `policy show`. */
json_t *agent_to_json(const struct agent_def *a, const struct agent_endpoint *ep,
		      const char *statedir);
