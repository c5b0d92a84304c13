/* discover.h - finding the client on the host before the sandbox starts:
 * COMMAND resolved with the user's PATH, and when it (or the interpreter
 * its shebang names) lies outside what the sandbox shows, the smallest
 * install tree that makes it run, to be exposed read-only. Also the
 * settling of profile paths (symlinks followed, missing ones warned about).
 * Host-side only: no privilege, no namespace. */
#pragma once
#include <jansson.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../policy/policy.h"

struct exposure {
	char *path;   /* absolute, resolved: exposed read-only at the same path */
	char *why;    /* e.g. "npm packages of claude" */
};

struct discovery {
	struct exposure *v;
	size_t n;
	char *exec_path;        /* what init executes for argv[0] (resolved on the
				   host), NULL: searched on the PATH inside */
	struct strv path_dirs;  /* directories put in front of PATH inside */
};

/* The roots the sandbox shows, resolved: the system directories, the
 * policy's paths and the workspace (may be NULL). */
void discover_visible_roots(const struct policy *p, const char *workspace, struct strv *out);

/* Resolve cmd (argv[0]) with path_env (the host's PATH) and fill d: past
 * warden's shims (shim.h), and through a version manager's shim to the
 * interpreter it picks for workspace (vmshim.h; workspace may be NULL). A
 * command not found on the host leaves d empty (init says it is missing).
 * A tree that is the home directory or holds it, or that holds or lies in a
 * credential store, is refused with e filled. home may be NULL. */
int discover_client(const char *cmd, const char *path_env, const char *workspace,
		    const char *home, const struct strv *visible, struct discovery *d,
		    struct werr *e);

/* -1 with e filled when tree (resolved) may not be exposed for `what`: it
 * is the home directory or holds it, is too broad (/, /usr, /tmp, ...), or
 * holds or lies in a credential store. */
int discover_refuse_tree(const char *tree, const char *home, const char *what, struct werr *e);

/* Add d's exposures to the policy as read-only paths (origin "client:NAME"). */
void discover_apply(const struct discovery *d, const char *cmd, struct policy *p);

/* Put d's path_dirs in front of PATH= in envp. */
void discover_env_path(const struct discovery *d, struct strv *envp);

/* [{"path": P, "why": W}, ...] (new reference). */
json_t *discovery_to_json(const struct discovery *d);

void discovery_free(struct discovery *d);

/* Profile paths as the sandbox will show them: a path that is a symlink
 * itself gets its target added (same mode and origin), a path that does not
 * exist is a warning on stderr naming its file and line. */
void discover_settle_paths(struct policy *p);

/* All of it for one session (or `policy show -- COMMAND`): settle the
 * profile paths, find cmd with path_env against what the sandbox shows
 * (workspace may be NULL), with managed the interpreters version managers'
 * shims on path_env stand for (what the command may run by name inside)
 * and those the workspace's Python virtual environments were made from
 * (venv.h), and add the exposures to the policy. cmd NULL: only the
 * settling. */
int discover_for(struct policy *p, const char *cmd, const char *path_env, const char *workspace,
		 const char *home, bool managed, struct discovery *d, struct werr *e);
