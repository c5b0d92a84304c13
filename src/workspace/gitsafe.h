/* gitsafe.h - the git settings from which the host's git neither runs
 * anything nor sends anything anywhere the configuration did not already
 * name: the identity (user.name, user.email) and a branch's upstream and
 * notes (branch.<name>.remote, .pushRemote, .merge, .rebase,
 * .description), each with a value of its plain shape. Asked of git's own
 * rewrite of a protected config (src/supervisor/cfgwrite.c), which may
 * change these alone, and of a repository the sandbox made
 * (gitplain.c), which may hold these besides git init's and a clone's. A
 * configuration is read whole first (gitsafe_read), since an upstream
 * must name a remote the same configuration defines. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct gitsafe_setting {
	char *var, *val; /* var as gitcfg_each gives it; val NULL: a key without "=" */
};

struct gitsafe_list {
	struct gitsafe_setting *v;
	size_t n, cap;
};

/* text's settings in order, as git reads them: 0, or -1 for a text git
 * refuses, one with a NUL (git would stop reading there) or with too many
 * settings. The list is the caller's to free, whatever the result. */
int gitsafe_read(const char *text, size_t len, struct gitsafe_list *l);
void gitsafe_free(struct gitsafe_list *l);

/* Is var one of the settings this file names? */
bool gitsafe_var(const char *var);

/* Is val a value of var's plain shape, a remote it names defined in all
 * (remote.<name>.url)? false for a var gitsafe_var refuses. */
bool gitsafe_value(const char *var, const char *val, const struct gitsafe_list *all);

/* Is v free of control characters (lines: but for new lines and tabs)? */
bool gitsafe_plain(const char *v, bool lines);
