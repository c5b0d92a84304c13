/* import.h - `warden import`: other sandboxes' settings (Claude Code's
 * settings.json, Anthropic's sandbox-runtime settings, Codex's config.toml)
 * into a warden profile.
 *
 * Reading (sources.c) fills one model of what the source allows and denies:
 * network patterns, paths denied or allowed for reading and writing, tool
 * rules, and what cannot be mapped. Writing (emit.c) turns the model into a
 * commented profile that is at least as strict as the source for every
 * rule: an allow may come out narrower or not at all, a deny always stays a
 * deny (a mask, a protected path, a net deny, a tool deny, or a path warden
 * never shows), and what warden cannot match is said, never dropped. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "../common/util.h"

enum import_source { IMPORT_CLAUDE, IMPORT_CODEX, IMPORT_SRT };

#define IMPORT_MAX_FILE (1u << 20) /* a settings file larger than this is refused */

/* One rule as the source says it, with where it says it (for the comment
 * after the line warden writes). */
struct imp_item {
	char *text;      /* a pattern, a path, or "NAME\tPATTERN" for tool rules */
	char *origin;    /* `network.allowedDomains`, `permissions.deny "Bash(rm:*)"` */
	char *base;      /* paths: the directory a settings-relative "/x" is under
			    (Claude Code), else NULL */
	bool dir;        /* a directory the agent works in (additionalDirectories,
			    writable_roots): bound, under /tmp too, whose private
			    tmpfs would hide the host's */
};

struct imp_list {
	struct imp_item *v;
	size_t n;
};

struct imp {
	enum import_source src;
	const char *home, *cwd;   /* for "~/" and for paths inside the workspace */
	struct imp_list net_allow, net_deny;
	struct imp_list read_deny, read_allow, write_deny, write_allow;
	struct imp_list tool_deny, tool_ask, tool_allow; /* text "NAME\tPATTERN" ("" any) */
	bool ws_write_limited;    /* the source does not let the workspace be written as a whole */
	char *ws_write_why;       /* what it lets be written instead */
	bool mode_set;            /* Codex: a file read set sandbox_mode (the last one wins) */
	struct strv files;        /* the settings files read, as shown */
	struct strv stricter;     /* what warden does stricter than these settings */
	struct strv unmapped;     /* "KEY: why" (narrower or merely informative) */
	struct strv weaker;       /* "KEY: why": where warden's profile is less strict */
	struct strv ignored;      /* keys that are no sandbox settings */
};

void imp_add(struct imp_list *l, const char *text, const char *origin, const char *base);
void imp_free(struct imp *m);

/* Read one settings file's text into m (sources.c). `shown` names the file
 * in messages and comments. -1 with e ("FILE: KEY: what") for malformed
 * input or a wrong type. */
int import_read(struct imp *m, const char *shown, const char *text, size_t len, struct werr *e);

/* The files read when none is given (malloc'd, existing or not, in the
 * order they are layered): Claude Code's managed, user, project and local
 * settings; ~/.srt-settings.json; $CODEX_HOME/config.toml (or
 * ~/.codex/config.toml) and the project's .codex/config.toml. */
void import_default_files(enum import_source s, const char *home, struct strv *out);

/* The profile text (malloc'd) for m (emit.c). Fills m->unmapped and
 * m->weaker on the way. */
char *import_emit(struct imp *m);

/* s with its control characters as '?' (malloc'd): for what a settings
 * file says, in the profile and on the terminal. */
char *import_printable(const char *s);

/* Write text to path (write.c): refused when path exists unless force
 * (and then only over a regular file); never half a file. */
int profile_write(const char *path, const char *text, bool force, struct werr *e);

/* `warden init` (init.c): a commented profile for the project in dir, with
 * the hosts and caches of the toolchains found there (caches under `home`,
 * written out in the variables that point the tools at them); their names
 * pushed to found. `name` is the profile's file name when it lies in dir (it is then
 * protected from the agent), else NULL. */
char *init_profile(const char *dir, const char *name, const char *home, struct strv *found);
