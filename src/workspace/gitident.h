/* gitident.h - the identity a commit made inside takes: user.name and
 * user.email as the host's git would take them from the user's global
 * configuration for the workspace's repository (gitcfg_host_files: its
 * files and what they include, includeIf's gitdir and onbranch conditions
 * judged for the repository at the workspace's top), as the text of the
 * sandbox's ~/.gitconfig. Nothing else of that configuration is in it: no
 * credential helper, URL rewrite, signing key, alias or hook path enters
 * the sandbox. /etc/gitconfig and the repository's own .git/config are
 * read inside as they are; a value set in the latter still wins. */
#pragma once
#include <stdbool.h>

/* The text, or NULL when the global configuration sets neither (or
 * cannot be read: a file that is not a regular one, larger than 1 MiB, or
 * a line git refuses, after which git refuses it all). ws: the workspace,
 * absolute. */
char *gitident_text(const char *ws);

/* git's wildmatch with WM_PATHNAME, as includeIf's gitdir and onbranch
 * take it: '*' and '?' within a path's component, "**" across them, a
 * bracket expression as fnmatch's; icase for "gitdir/i". */
bool gitident_wildmatch(const char *pattern, const char *text, bool icase);
