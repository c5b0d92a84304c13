/* layout.h - a session's layout beyond the workspace: whether the workspace
 * is read-only (--read-only, `workspace read-only`), the writable scratch
 * directory (--scratch DIR, else one the session makes and removes), the
 * writable output directories (--output PATH), and the task it runs for
 * (--task NAME, src/session/task.h). The writable places reach the sandbox
 * as read-write paths of the policy (at the same path inside), so the mount
 * layer, Landlock and the root tier's idmapped trees treat them as they
 * treat a profile's `read-write PATH`. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../policy/policy.h"
#include "../sandbox/sandbox.h"

struct session_layout {
	bool read_only;        /* the workspace is mounted read-only */
	char *scratch;         /* resolved host path (the same inside), or NULL: none */
	bool scratch_made;     /* made by warden for this session: removed at its end */
	struct strv outputs;   /* resolved host paths (the same inside), each a directory */
	bool output_inside;    /* one of them lies in the workspace */
	char *artifacts;       /* --ci's artifacts directory, resolved, made and checked; or NULL */
	char *task;            /* --task NAME, or NULL */
	char *task_branch;     /* its branch (git) or NULL (a copy) */
	char *task_repo;       /* the repository (git) or the source directory (a copy) */
	/* the writable places outside the workspace that outlive the session
	 * (outputs, a --scratch DIR): scanned at start like the workspace, so
	 * the end-of-session sweep covers them too (layout_plan_outside) */
	struct ws_plan *plans;
	const char **planned;  /* their paths (borrowed from outputs, scratch) */
	size_t nplans;
};

struct session_layout_opts {
	bool read_only;             /* --read-only */
	const char *scratch;        /* --scratch DIR, or NULL */
	bool want_scratch;          /* make a scratch directory (read-only sessions) */
	const struct strv *outputs; /* --output PATH..., may be NULL */
	const char *artifacts;      /* --ci's artifacts directory, or NULL */
};

/* Check and make the writable places for the workspace ws (resolved), each
 * added to pol as a read-write path. An --output is a directory, made when
 * missing (with its parents), checked where it really is; it is refused
 * when it is a symlink, goes through one in the workspace that leads out of
 * it, is or holds the workspace, lies in a
 * `.git` directory, is or holds a protected or masked path of the
 * workspace, or is a place a workspace could not be (a system directory,
 * the home itself, a tree holding credential stores: workspace_resolve), or
 * a hidden entry of the home (~/.config, ...). The scratch directory is
 * checked the same way and must lie outside the workspace; without
 * --scratch, when o->want_scratch, a fresh one is made under $TMPDIR (else
 * /tmp), mode 0700. The artifacts directory of `--ci` is checked and made
 * as an output is; in the workspace it is protected (read-only inside:
 * what warden writes there at the end is its own). */
int layout_prepare(struct session_layout *l, const struct session_layout_opts *o,
		   struct policy *pol, const char *ws, const char *home, struct werr *e);

/* Scan each output outside the workspace ws, and a --scratch DIR, as
 * workspace_plan scans a workspace (the .git entries, git redirects and
 * protected names there at start), for the sweep at the end; the wall
 * clock's steps as the workspace's plan sees them (clock, wsclock.h). */
int layout_plan_outside(struct session_layout *l, const char *ws, struct wsclock *clock,
			const struct policy *pol, struct werr *e);

/* {"read_only": B, "scratch": P|null, "outputs": [...], "task": {...}|null}
 * for session.start. */
json_t *layout_to_json(const struct session_layout *l);

/* The scratch directory the session made is removed (what it holds too). */
void layout_end(struct session_layout *l);
void layout_free(struct session_layout *l);
