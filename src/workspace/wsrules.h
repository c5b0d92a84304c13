/* wsrules.h - what a workspace path is, asked by the plan (workspace.c), the
 * host-side watch (wswatch.c), the exec layout and the supervisor's file
 * handlers: is it masked by the policy, is it one of warden's placeholders.
 * A leaf: it calls nothing of the workspace's, so the watch can ask it while
 * the plan creates the watch. The two questions, workspace_masked and
 * workspace_is_placeholder, are declared here. */
#pragma once
#include <stdbool.h>

#include "phstash.h" /* PLACEHOLDER_DIR_MODE */

struct policy;

/* What warden makes for a missing protected path: an empty directory of
 * mode 01555 for a name that is a directory by convention (sticky and
 * read-only: a mode no tool gives a directory, which is how sessions
 * recognise it), a socket entry of mode 0444 for any other (a listening
 * socket's entry has the umask's mode, and is never created read-only).
 * PLACEHOLDER_DIR_MODE is in phstash.h, which keeps them between sessions. */
#define PLACEHOLDER_SOCK_MODE 0444

/* Does a mask pattern of the policy cover this workspace path (name: its
 * last component), and no exception ("!GLOB") of it? */
bool workspace_masked(const struct policy *pol, const char *rel, const char *name);
/* The same, with the pattern except (exactly as written) left out. */
bool workspace_masked_except(const struct policy *pol, const char *rel, const char *name,
			     const char *except);
/* Is st one of the placeholders warden makes for missing protected paths
 * (a running session's, or a killed one's)? */
struct stat;
bool workspace_is_placeholder(const struct stat *st);
