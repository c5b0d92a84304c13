/* gitident.h - the identity a commit made inside takes, and the branch a
 * repository made inside starts on: user.name, user.email and
 * init.defaultBranch as the host's git would take them from the user's
 * global configuration for the workspace's repository (gitcfg_host_files:
 * its files and what they include, includeIf's gitdir and onbranch
 * conditions judged for the repository at the workspace's top,
 * hasconfig:remote.*.url against the remote URLs of the system's, the
 * global and the repository's files, the last without its includes), as
 * the text of the sandbox's ~/.gitconfig; and the signing settings that
 * can work inside (gitsign.h: SSH signing with the user's agent inside,
 * the key as its public text). Nothing else of that configuration is in
 * it: no credential helper, URL rewrite, key file's path, alias or hook
 * path enters the sandbox. /etc/gitconfig and the
 * repository's own .git/config are read inside as they are; a value set
 * in the latter still wins. */
#pragma once

#include "gitsign.h"

/* The text (malloc'd), or NULL when the global configuration sets none
 * of them and no signing setting is carried, or git would refuse it whole (a line it refuses, includes
 * nested deeper than it goes, a remote URL in a file an includeIf brought
 * in once a hasconfig: condition is asked). A file missing, not a regular
 * one (a FIFO is never opened for a read that waits) or larger than 1 MiB
 * counts as empty. ws: the workspace, absolute. sign: what the session
 * offers for signing (its agent's keys) and, filled, what is carried and
 * the line to say when the host's git signs and the sandbox's will not
 * (gitsign.h); NULL: no agent, nothing said. */
char *gitident_text(const char *ws, struct gitsign *sign);
