/* workspace.h - the workspace's public face: the plan the supervisor makes
 * of a workspace before a session (struct ws_plan: the mounts init makes
 * inside it, what was there at start), the placeholders and the lock, and
 * the sweep after it. The internals are in plan.h; the two questions asked of
 * a workspace path (masked? a placeholder?) in wsrules.h. */
#pragma once
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../policy/policy.h"
#include "phstash.h"
#include "wsrules.h"

/* A mount inside the workspace, relative to the workspace root. */
enum ws_mount_kind {
	WS_PIN,        /* directory bound onto itself read-write: cannot be renamed or removed */
	WS_PROTECT,    /* existing file or directory bound onto itself read-only */
	WS_PLACEHOLDER,/* entry warden created for a missing protected path, read-only */
	WS_MASK_FILE,  /* file masked by an unreadable empty file */
	WS_MASK_DIR,   /* directory masked by an unreadable empty tmpfs */
	WS_CARVE,      /* directory bound onto itself read-write inside a protected one
			* (`protect !PARENT/NAME`), after it: writable, pinned */
};

struct ws_mount {
	enum ws_mount_kind kind;
	char *rel;
	char *abs;      /* WS_PLACEHOLDER: the host path to create */
	/* WS_PLACEHOLDER: what making it gave: errno (0: created) and the
	 * inode created, which is what the removal checks before unlinking;
	 * a directory's ctime once made, when nothing changed it after the
	 * look (ctime set): the same at the end, nothing was added to it */
	struct ws_made {
		int err;
		dev_t dev;
		ino_t ino;
		bool ctime_set;
		struct timespec ctime;
	} made;
	bool adopted;   /* WS_PLACEHOLDER: another session's, there already */
	bool dir;       /* WS_PLACEHOLDER: an empty directory (the name is one by
			 * convention: .claude, .vscode, ...), not a socket entry */
	/* WS_MASK_FILE: a *.pem of certificates alone (certcopy.h), bound as a
	 * read-only copy of them in place of the empty file; NULL: masked */
	char *certs;
	size_t certs_len;
	/* WS_MASK_FILE, WS_MASK_DIR: the masked file's identity at the scan
	 * (0: not had), so that the watch knows it moved (its mask moves with
	 * it: a rename keeps the mount) from a secret the host made */
	dev_t mask_dev;
	ino_t mask_ino;
};

struct wswatch;
struct wsclock;

struct ws_plan {
	struct ws_mount *m;
	size_t n, cap;
	bool placed;              /* placeholders made: remove what `made` says was created */
	bool left_shared;         /* at the end, the placeholders left in place: another
				   * session in the workspace still runs (its sandbox has
				   * them mounted) */
	int lock_fd;              /* shared flock on this workspace's lock file, or -1 */
	int ws_fd;                /* the workspace directory, opened by workspace_plan and
				     kept for the session (placeholders, the sweep), or -1 */
	struct strv git;          /* .git entries and git redirects present at start */
	struct strv git_ids;      /* and what each was: "dev:ino:birth", same order */
	struct strv bare;         /* directories that look like bare repositories at start */
	struct strv bare_ids;
	struct strv names;        /* the protected names that apply at any depth */
	struct strv named;        /* entries below the top with one of those names at start */
	struct strv named_ids;    /* "bound" (read-only inside) or what it was */
	struct strv links;        /* symlinks on the way to a gitdir, a hooksPath or an
				     included configuration at start */
	struct strv link_targets; /* and what each pointed at, same order */
	struct strv quarantined;  /* what a sweep moved aside, bound read-only here */
	struct strv worktrees_rw; /* .git/worktrees there at start, writable: each NAME in
				     it pinned, its redirects read-only (workspace.c) */
	struct strv rebase_dirs;  /* a rebase's or cherry-pick's state in a git directory
				     at start (gitrebase.c), once for each thing */
	struct strv rebase_runs;  /* it would run there: "exec CMD", "strategy NAME" */
	struct timespec t0;       /* when the plan began, on the coarse wall clock the
				     kernel stamps ctime with: an inode changed since has
				     a ctime no earlier (the sweep's test for what
				     changed during the session) */
	struct wsclock *clock;    /* how far the wall clock was set back since
				     (wsclock.h): made by workspace_plan, or given
				     before it (another plan's, which owns it) */
	bool own_clock;           /* made by workspace_plan: freed by its cleanup */
	struct wswatch *watch;    /* its directories watched from the start (wswatch.h) */
	struct phstash stash;     /* directory placeholders kept between sessions */
	size_t certs_bytes;       /* the certificates' copies, in all (CERTCOPY_TOTAL) */
};

/* What the sweep did to one entry: moved it aside, or cleared its setuid
 * and setgid bits. */
enum ws_swept_kind {
	WS_SWEPT_GIT,             /* a new .git or git redirect, moved aside */
	WS_SWEPT_BARE,            /* a new bare-repository lookalike: its HEAD moved aside */
	WS_SWEPT_CONFIG,          /* a new protected name below the top, moved aside */
	WS_SWEPT_SETID,           /* setuid/setgid bits cleared */
	WS_SWEPT_ODD,             /* inside a git directory, a FIFO, socket or device or a
				     new symlink removed (mode_was: its type; to: a
				     symlink's target) */
	WS_SWEPT_GIT_KEPT,        /* a new .git left in place: git init's own (gitplain.c),
				     or a linked worktree's and its worktrees/ (gitworktree.c) */
	WS_SWEPT_CONFIG_KEPT,     /* a new protected name below the top left in place: it
				     holds only what the top's own one holds (sameastop.c) */
	WS_SWEPT_REBASE,          /* a rebase's or cherry-pick's state that would run what
				     was not there at start (gitrebase.c), moved aside */
	WS_SWEPT_ODD_TREE,        /* in the working tree, a FIFO, socket or device at a
				     name git reads (.gitignore, ...) removed (mode_was) */
};
#define WS_WHY_MAX 160
struct ws_swept {
	enum ws_swept_kind kind;
	char *rel;                /* workspace-relative path */
	char *to;                 /* moved: where to (absolute); NULL: bits cleared */
	char *why;                /* a new .git moved aside: why it was not kept; one kept:
				     what it is (NULL: git init's own) */
	mode_t mode_was, mode;    /* bits cleared: the mode before and after */
};
struct ws_sweep {
	struct ws_swept *v;
	size_t n, cap;
	char *ws;                 /* the workspace's path at the sweep (a new one when it
				     was renamed during the session) */
	struct strv objects;      /* the files of git object stores (a loose object in
				     objects/XX/, a *.idx or *.pack in objects/pack/) made
				     or changed during the session, whole paths: what
				     objcheck.h verifies */
};
void ws_sweep_free(struct ws_sweep *s);

/* Does the plan hold rel as an entry of that kind (WS_PROTECT: read-only by
 * a mount of its own)? Inline: the supervisor's config-write check
 * (cfgwrite.c) asks it without the planning code. */
static inline bool workspace_planned_as(const struct ws_plan *plan, const char *rel,
					enum ws_mount_kind kind)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->m[i].kind == kind && strcmp(plan->m[i].rel, rel) == 0)
			return true;
	return false;
}

/* workspace.c (supervisor side) */
/* Home-relative names of credential stores (".ssh", ".aws",
 * ".config/gh", ...): a workspace or an exposed install tree that is one,
 * lies in one or holds one is refused. */
extern const char *const credential_stores[];
extern const size_t credential_stores_n;
/* The credential store path (absolute, normalised) is or lies in, by its
 * components ("/x/.config/gh/y": ".config/gh"), or NULL. */
const char *credential_store_around(const char *path);
/* The credential store of home that path is, lies in or holds, where they
 * lead (path as named when it does not exist; *how: "is", "lies in",
 * "holds"), or NULL. The workspace's check refuses such a place; a
 * profile path is said. */
const char *credential_store_exposed(const char *path, const char *home, const char **how);
int workspace_resolve(const char *requested, const char *home, char **out, struct werr *e);
/* The directory above the workspace ws (an absolute path) that holds a
 * .git, when ws holds none: the repository ws lies inside of, which the
 * sandbox does not see (git inside finds no repository); NULL otherwise,
 * and for the home directory or one that holds it (home, may be NULL: a
 * home kept in git holds every workspace). malloc'd. */
char *workspace_repo_above(const char *ws, const char *home);
/* The checks workspace_resolve makes of a resolved directory path buf
 * (what names it in the error: "workspace", "--output"): not /, /tmp, a
 * home or a system directory, not holding the home, not a credential store,
 * in one or holding one (by name, and the home's own wherever they lead),
 * not the home's .config or holding it. */
int workspace_place_check(const char *buf, const char *home, const char *what, struct werr *e);
int workspace_plan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e);
/* Sessions in one workspace share its placeholders: each holds a shared
 * flock on a lock file of that workspace in lockdir (warden's own, out of
 * every sandbox's reach) from before it plans until it ends; the last one
 * out, the one that gets the lock exclusively, removes them. A session that
 * starts finds the placeholders of one still running and adopts them. Without
 * this, one session's removal would unmount the other's (an unlink of a mount
 * point in another namespace detaches the mount). */
int workspace_lock(const char *ws, const char *lockdir, struct ws_plan *plan, struct werr *e);
/* The lock file of workspace ws in lockdir, opened (made when missing; not
 * locked): what workspace_lock holds shared and `warden undo` exclusively. */
int workspace_lock_open(const char *ws, const char *lockdir, struct werr *e);
/* Create the plan's placeholders. The supervisor calls it before it clones
 * init, so init never waits for them.
 *
 * A placeholder for a name that is a directory by convention (.claude,
 * .vscode, .idea, .warden, .git/hooks, ...) is an empty directory of mode
 * 01555, each its own inode: tools that expect a directory there find one,
 * and git ignores an empty directory. Any other placeholder is a unix-socket
 * entry of mode 0444 (mknod; nothing listens), all of a session's being hard
 * links of one inode: git ignores sockets (they never reach `git add -A`,
 * inside or out), open() on one fails with ENXIO so no tool reads a
 * configuration from it, and one inode plus links costs a fraction of what
 * a directory each does (about 0.2 ms against 2 ms for 16 on ext4). Inside,
 * each is bound read-only onto itself: the agent can neither remove, rename
 * nor replace it, nor create anything in a directory one. */
int workspace_make_placeholders(struct ws_plan *plan, struct werr *e);
/* Sessions starting together on one workspace: a plan (shared) and the
 * making of placeholders (exclusive) exclude each other, on the first byte
 * of the workspace's lock file (an OFD lock, apart from its flock). A
 * placeholder is half made for a moment (renamed in from the stash, phstash.h,
 * before its mode is set): another session's plan would take it for the
 * host's and leave it when it ends last. No-op without a lock. */
void workspace_hold_making(struct ws_plan *plan, bool exclusive);
void workspace_release_making(struct ws_plan *plan);
/* After the session, with every sandbox process gone: move aside each .git
 * (at any depth) and each git redirect (.git/commondir, config.worktree,
 * worktrees, modules) that was not there at start, so configuration and
 * hooks the agent planted never run on the host, and clear the setuid and
 * setgid bits of every regular file whose inode changed during the session
 * (its ctime later than the plan's start: a chmod, a new link, a write; a
 * file untouched since before keeps its bits); inside each .git directory
 * that stays, remove every FIFO, socket and device, and each symlink made
 * during the session (the host's git opens what it finds, and would wait
 * on a FIFO forever). It works from the workspace directory
 * the plan opened (plan->ws_fd), wherever it was moved meanwhile (ws, its
 * path at start, only names it when its new path cannot be had), walks the
 * whole tree (walk.h: no depth limit, what the user owns but made
 * unreadable opened up for the walk) and records what it did in out. */
int workspace_sweep(const char *ws, const struct ws_plan *plan, const char *session,
		    struct ws_sweep *out, struct werr *e);
/* Is rel (a workspace-relative .git) one the sweep would take for new: it
 * is there, reached with no symlink on the way, and it is not the entry
 * recorded at start? false in any doubt (absent, through a symlink). */
bool workspace_git_new(const struct ws_plan *plan, const char *rel);
/* The same inside a git directory outside the workspace that the sandbox
 * could write (--task's objects, logs and worktree directory): each FIFO,
 * socket and device, and each symlink made since the plan's start, removed
 * and recorded in out (its ws the directory). */
int workspace_sweep_gitdir(const char *dir, const struct ws_plan *plan, const char *session,
			   struct ws_sweep *out, struct werr *e);
/* Remove the placeholders (once the sandbox is gone): each name that still
 * holds the inode warden made, with its mode (a directory only while empty:
 * rmdir); anything else there (a host process replaced or filled it) is left
 * alone with a note. workspace_cleanup does it too when this was
 * not called. */
void workspace_remove_placeholders(struct ws_plan *plan);
/* The placeholders a killed session left (rels, relative to the workspace
 * wsfd, the plan's WS_PLACEHOLDER paths as its session.start recorded
 * them), removed where each is still one (an empty directory of mode 01555,
 * a socket entry of mode 0444); the caller holds the workspace's lock
 * exclusively, so no session has them mounted. */
void workspace_remove_stale_placeholders(int wsfd, const struct strv *rels);
void workspace_cleanup(struct ws_plan *plan);

/* A request to the re-masker (remask_spawn, src/sandbox/sandbox.h), which
 * the workspace watch sends (wswatch.c): mask or protect the workspace
 * path rel again. The answer is an int: 0, or the errno of the failure. */
enum remask_kind { REMASK_MASK = 1, REMASK_PROTECT = 2 };
struct remask_req {
	unsigned kind;
	char rel[4096];
};
