/* caches.h - `cache ~/PATH` (warden-profile(5)): a directory of the
 * sandbox's home kept from one session to the next of the same workspace.
 * Each is a directory of warden's own on the host,
 * XDG_DATA_HOME/warden/caches/KEY/NAME (KEY from the workspace's path, NAME
 * the PATH with '%' and '/' written %25 and %2F), bound read-write, with no
 * exec, suid or devices, at ~/PATH in the home inside, as the agent's state
 * is. Never the host's own ~/PATH: what the agent leaves there reaches only
 * later sandboxes of that workspace. Not kept in a --review session or with a
 * read-only workspace (what the agent wrote would reach the next session
 * unreviewed): the home's tmpfs holds PATH then, and warden says so. */
#pragma once

#include "../agents/state.h"
#include "../sandbox/sandbox.h"

/* Empty (lock_fd -1) until caches_prepare. */
struct home_caches {
	struct home_bind *all; /* the agent's state (borrowed), then the caches (owned) */
	size_t n, nstate;
	char *dir;             /* the workspace's directory of caches, when kept */
	int lock_fd;           /* ... open, a shared flock on it while the session runs
				  (`warden cache clear` takes it exclusive), or -1 */
};

#define CACHES_KEY_LEN 32
/* The file beside a workspace's caches that names it (a name the
 * encoding never makes) */
#define CACHES_WORKSPACE_FILE "%workspace"

/* XDG_DATA_HOME/warden/caches (the caches of every workspace), or NULL
 * when neither XDG_DATA_HOME nor home is an absolute path. */
char *caches_base(const char *home);
/* The name of workspace ws's directory there: CACHES_KEY_LEN hex digits
 * of the SHA-256 of its path. */
void caches_key(const char *ws, char out[CACHES_KEY_LEN + 1]);
/* A cache's directory name back to its PATH (malloc'd), or NULL when the
 * name is not one that encoding makes. */
char *caches_decode(const char *name);

/* The sandbox's home binds into s (home_binds): the agent's state st, then
 * the policy's caches, each directory made (0700) when missing and refused
 * when it, or the workspace's directory above it, is a symlink, not a
 * directory, not the user's or writable by others, or overlaps the
 * workspace or warden's own directories; a cache at or within a name of
 * the agent's state is refused. not_kept ("in a --review session"): no
 * cache bound, and a note saying so. */
int caches_prepare(const struct policy *pol, const char *home, const struct agent_state *st,
		   const char *not_kept, struct sandbox_spec *s, struct home_caches *c,
		   struct werr *e);

/* session.start's record of the caches, into its layout object (returned):
 * "caches": {"paths": ["~/PATH"...], "dir": DIR|null (null: not kept)},
 * only when the policy has some. */
json_t *caches_to_json(const struct home_caches *c, const struct policy *pol, json_t *layout);

void caches_free(struct home_caches *c);
