/* plan.h - the workspace plan's internals, shared by the files that make,
 * keep and sweep it (not for use outside src/workspace/; the public entry
 * points are in workspace.h):
 *   plan.c         adding an entry, planning one protected path, what
 *                  the scan and the sweep both recognise of an entry
 *   workspace.c    the start-of-session scan
 *   gitprotect.c   what git would read or run: config includes,
 *                  core.hooksPath, the repositories .git files name
 *   hostpath.c     paths as the host's kernel and git resolve them
 *   sweep.c        the end-of-session sweep
 *   gitplain.c, gitworktree.c, gitrebase.c
 *                  what the sweep keeps of a new .git, a new worktree,
 *                  a rebase's state
 *   placeholder.c  the placeholders and the workspace's lock
 *   place.c        which directories may be a workspace at all */
#pragma once
#include <stdbool.h>

#include "../common/util.h"
#include "../common/walk.h"
#include "workspace.h"

/* plan.c */

/* Entries of a .git directory that redirect git elsewhere (commondir,
 * config.worktree, worktrees, modules). */
#define WS_GIT_REDIRECTS 4
extern const char *const ws_git_redirects[WS_GIT_REDIRECTS];

/* What redirects git in a worktree's administrative directory
 * (.git/worktrees/NAME): commondir, config.worktree, modules. */
#define WS_WORKTREE_REDIRECTS 3
extern const char *const ws_worktree_redirects[WS_WORKTREE_REDIRECTS];

#define ID_LEN 80

/* What git looks for to take a directory for a repository. */
#define BARE_HEAD 1u
#define BARE_OBJECTS 2u
#define BARE_REFS 4u
#define BARE_ALL (BARE_HEAD | BARE_OBJECTS | BARE_REFS)

void wsplan_add(struct ws_plan *plan, enum ws_mount_kind kind, const char *rel);
/* rel within what the sandbox can mount (PATH_MAX), or the workspace
 * refused; what: "secret" or "protected path". */
int wsplan_check_length(const char *rel, const char *what, struct werr *e);
/* Is rel planned (any kind)? */
bool wsplan_has(const struct ws_plan *plan, const char *rel);
/* Pin the directory rel (bound onto itself: never renamed or removed)
 * unless it is planned already. */
void wsplan_pin(struct ws_plan *plan, const char *rel);
/* Plan one protected path: the directories on the way pinned, the path
 * read-only, or a placeholder when it is missing and its parent exists. */
int wsplan_protect(const char *ws, const char *rel, struct ws_plan *plan, struct werr *e);
/* A directory kept writable inside the protected directory above it
 * (`protect !PARENT/NAME`), made when missing: only where PARENT is
 * planned read-only as it is (a placeholder holds nothing), else
 * nothing. */
void wsplan_carve(const char *ws, const char *rel, struct ws_plan *plan);
/* rel read-only: planned so, or made so where it was only pinned. */
void wsplan_readonly(struct ws_plan *plan, const char *rel);
/* What an entry is: "dev:ino:birth", "dev:ino", or "gone". */
void ws_id_at(int dirfd, const char *name, char id[ID_LEN]);
/* The BARE_* part of a repository that entry is, or 0. */
unsigned ws_bare_part(const struct walk_entry *we);
/* What the sweep adds to a name it moves aside (NAME.TAG-SESSION[.N]), and
 * whether a name carries it. */
#define WS_QUARANTINE_TAG "warden-quarantine-"
bool ws_quarantined(const char *name);
/* gitplain.c: the first why of a judgement (a later one does not replace
 * it), bytes outside printable ASCII shown as '?' (names come from the
 * agent), cut to fit; false, for the judgement's return. */
__attribute__((format(printf, 2, 3)))
bool ws_say(char why[WS_WHY_MAX], const char *fmt, ...);
/* gitplain.c: is dirfd/name a .git directory the host's git would run
 * nothing from, git init's own (its settings, its sample hooks, no
 * redirect)? When not, why (may be NULL) says the first thing that is
 * not ("its config sets core.hookspath"), printable ASCII. */
bool ws_git_plain(int dirfd, const char *name, char why[WS_WHY_MAX]);
/* ... and does the host's own git configuration (what it includes too)
 * keep a new repository's hooks out of the workspace ws: no relative
 * core.hooksPath (from each repository's top), none inside ws, no
 * include inside ws? false too when a file of it cannot be read. */
bool ws_host_hooks_outside(const char *ws);

/* gitworktree.c: are the worktrees/ of the .git at gfd what `git worktree
 * add` made, each with git's own entries alone and commondir "../..",
 * and does that repository's config set no core.hooksPath and include
 * nothing (a relative one would start at a new worktree's top)? why as
 * ws_git_plain's. */
bool ws_worktrees_plain(int gfd, char why[WS_WHY_MAX]);
/* ... and one of them, worktrees/name, alone (a worktree added where
 * others were there at start, or named by a new .git file). */
bool ws_worktree_admin_plain(int gfd, const char *name, char why[WS_WHY_MAX]);
/* The gitdir a .git file dirfd/name names (ws/dir its directory), as a
 * workspace-relative path of the form [X/].git/worktrees/NAME, taken as
 * written (a relative path's leading ".." alone); NULL, with why, for any
 * other content or place. */
char *ws_worktree_gitdir(int dirfd, const char *name, const char *ws, const char *dir,
			 char why[WS_WHY_MAX]);

/* gitrebase.c: is name a directory of a rebase's or a cherry-pick's
 * state (rebase-merge, sequencer) when inside a git directory? */
bool ws_rebase_dir(const char *name);
/* Note in the plan what the one at we (inside a git directory) would run
 * on the next --continue: its todo's exec lines, a merge strategy. */
void ws_rebase_note(struct ws_plan *plan, const struct walk_entry *we);
/* Would the one at we run nothing but what plan noted there at start (plan
 * NULL: nothing) and git's own merge strategies? When not, why says what
 * ("its todo runs `CMD` ..."); a file of it that is no regular file or
 * cannot be read counts as not. */
bool ws_rebase_plain(const struct ws_plan *plan, const struct walk_entry *we,
		     char why[WS_WHY_MAX]);

/* sameastop.c: does dirfd/name (a protected name made below the top)
 * hold only what the top's own name holds, read-only all session: each
 * file the same bytes at the same place, each directory there too? */
bool ws_same_as_top(const struct ws_plan *plan, int dirfd, const char *name);

/* Is name one of the protected names that apply at any depth? */
bool ws_protected_name(const struct strv *names, const char *name);

/* workspace.c */

/* The start-of-session scan: masks (inside .git too), every .git and git
 * redirect, every bare-repository lookalike, and the protected names below
 * the top. */
struct scan {
	const struct policy *pol;
	struct ws_plan *plan;
	const char *ws;
	struct strv git_subs;      /* protected paths inside .git ("hooks", "config") */
	struct strv host_hooks;    /* core.hooksPath values of the host's own configuration */
	bool host_read;            /* ... once read (host_hooks_path) */
	unsigned long entries;
	unsigned bare_parts;       /* of the directory being read: HEAD, objects/, refs/ */
};

/* gitprotect.c */

/* The protected paths inside .git ("hooks", "config") applied to the
 * repository whose gitdir is at gitdir ("" for the workspace itself). */
int ws_protect_repo(struct scan *sc, const char *gitdir, struct werr *e);
/* The directories the repository's core.hooksPath can name, in every file
 * of its configuration and the host's, protected when in the workspace;
 * refused when the sandbox can write them elsewhere. */
int ws_protect_hooks_path(struct scan *sc, const char *gitdir, const char *worktree,
			  struct werr *e);
/* A .git file ("gitdir: PATH"): the repository it names protected. */
int ws_protect_gitfile_target(struct scan *sc, const struct walk_entry *we, struct werr *e);

/* hostpath.c (each result malloc'd) */

/* rest appended to the resolved directory base, "." and ".." lexically. */
char *ws_join_lexically(const char *base, const char *rest);
/* An absolute path as the kernel resolves it, as far as it exists. */
char *ws_resolve_abs(const char *abs);
/* abs as a workspace-relative path when it lies in the workspace, or NULL. */
char *ws_relative_abs(const char *ws, const char *abs);
/* target, relative to the workspace directory base or absolute: the same. */
char *ws_relative(const char *ws, const char *base, const char *target);
/* A path setting as git expands "~/" and "~user/", or NULL. */
char *ws_expand_user(const char *v);
/* Record in the plan each workspace symlink on the way to abs. */
void ws_note_links(struct ws_plan *plan, const char *ws, const char *abs);
