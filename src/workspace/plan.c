/* plan.c - the plan's building blocks, shared by the scan (workspace.c),
 * the git protections (gitprotect.c) and the sweep (sweep.c): adding an
 * entry, planning one protected path (the directories on the way pinned,
 * the path read-only, or a placeholder when it is missing), and what the
 * scan and the sweep both recognise of an entry (its identity, a
 * repository's parts, a protected name, git's redirects). A leaf of the
 * workspace's files: it calls none of them. */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

void wsplan_add(struct ws_plan *plan, enum ws_mount_kind kind, const char *rel)
{
	if (plan->n == plan->cap) {
		plan->cap = plan->cap ? plan->cap * 2 : 16;
		plan->m = xrealloc(plan->m, plan->cap * sizeof *plan->m);
	}
	plan->m[plan->n] = (struct ws_mount){ .kind = kind, .rel = xstrdup(rel) };
	plan->n++;
}

/* The sandbox mounts the plan's paths by their workspace-relative name,
 * which the kernel takes up to PATH_MAX: a path to protect or mask deeper
 * than that refuses the workspace rather than leave it open. */
int wsplan_check_length(const char *rel, const char *what, struct werr *e)
{
	size_t len = strlen(rel);
	if (len < PATH_MAX)
		return 0;
	const char *name = strrchr(rel, '/');
	return werr_set(e, ENAMETOOLONG, "refusing the workspace: %s %.100s ... %s lies %zu "
			"characters deep, more than warden can %s (remove it or move it nearer "
			"the top: `find . -name '%s'` finds it)", what, rel, rel + len - 100, len,
			strcmp(what, "secret") == 0 ? "mask" : "keep read-only", name ? name + 1 : rel);
}

bool wsplan_has(const struct ws_plan *plan, const char *rel)
{
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0)
			return true;
	return false;
}

void wsplan_pin(struct ws_plan *plan, const char *rel)
{
	if (!wsplan_has(plan, rel))
		wsplan_add(plan, WS_PIN, rel);
}

/* Bind rel read-only: planned so, or made so where it was only pinned on
 * the way to a deeper protected path. */
void wsplan_readonly(struct ws_plan *plan, const char *rel)
{
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0) {
			if (plan->m[i].kind == WS_PIN)
				plan->m[i].kind = WS_PROTECT;
			return;
		}
	wsplan_add(plan, WS_PROTECT, rel);
}

/* Protected names that are directories by convention, at any depth: a tool
 * that finds anything else there fails (Claude Code shows a blocking
 * settings error for a .claude that is not a directory). */
static const char *const dir_names[] = {
	".amazonq", ".claude", ".codex", ".continue", ".cursor", ".devcontainer", ".gemini",
	".idea", ".roo", ".vscode", ".warden", ".windsurf", ".zed",
	"hooks", /* a repository's, .git/hooks or a bare one's */
};

static bool dir_by_convention(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	for (size_t i = 0; i < ARRAY_LEN(dir_names); i++)
		if (strcmp(base, dir_names[i]) == 0)
			return true;
	return false;
}

/* Plan one protected path: pin every directory on the way (so it cannot be
 * renamed away), bind the path read-only, or create a placeholder when it is
 * missing and its parent exists. */
int wsplan_protect(const char *ws, const char *rel, struct ws_plan *plan, struct werr *e)
{
	int wsfd = plan->ws_fd;
	if (wsplan_check_length(rel, "protected path", e) < 0)
		return -1;
	_cleanup_free_ char *copy = xstrdup(rel);
	char *p = copy;
	struct stat st;
	for (;;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		_cleanup_free_ char *abs = xasprintf("%s/%s", ws, copy);
		if (fstatat(wsfd, copy, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return werr_errno(e, "protected path %s", abs);
			if (slash || wsplan_has(plan, copy))
				return 0; /* parent missing: nothing to protect yet; or planned */
			wsplan_add(plan, WS_PLACEHOLDER, copy); /* made by workspace_make_placeholders */
			plan->m[plan->n - 1].abs = xstrdup(abs);
			plan->m[plan->n - 1].dir = dir_by_convention(copy);
			return 0;
		}
		if (S_ISLNK(st.st_mode))
			return werr_set(e, 0, "protected path %s is a symbolic link; warden cannot "
				"keep it read-only (remove the link or unprotect the path)", abs);
		if (!slash && workspace_is_placeholder(&st) && !wsplan_has(plan, copy) &&
		    (!S_ISDIR(st.st_mode) || walk_dir_empty(wsfd, copy))) {
			/* a running session's: shared, and removed by the last */
			wsplan_add(plan, WS_PLACEHOLDER, copy);
			struct ws_mount *m = &plan->m[plan->n - 1];
			m->abs = xstrdup(abs);
			m->adopted = true;
			m->dir = S_ISDIR(st.st_mode);
			m->made = (struct ws_made){ .dev = st.st_dev, .ino = st.st_ino };
			return 0;
		}
		if (!slash) {
			wsplan_readonly(plan, copy);
			return 0;
		}
		if (!S_ISDIR(st.st_mode))
			return 0; /* a file where a directory would be: path cannot exist */
		wsplan_pin(plan, copy);
		*slash = '/';
		p = slash + 1;
	}
}

void wsplan_carve(const char *ws, const char *rel, struct ws_plan *plan)
{
	_cleanup_free_ char *parent = xstrdup(rel);
	*strrchr(parent, '/') = '\0';
	struct stat st;
	if (!workspace_planned_as(plan, parent, WS_PROTECT) ||
	    fstatat(plan->ws_fd, parent, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return;
	if (mkdirat(plan->ws_fd, rel, 0755) < 0 && errno != EEXIST) {
		wnote("%s/%s could not be made (%s): it stays read-only, as %s is", ws, rel,
		      strerror(errno), parent);
		return;
	}
	if (fstatat(plan->ws_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
		wnote("%s/%s is no directory: it stays read-only, as %s is", ws, rel, parent);
		return;
	}
	if (!wsplan_has(plan, rel))
		wsplan_add(plan, WS_CARVE, rel);
}

/* Entries of a .git directory that redirect git to configuration and hooks
 * elsewhere. git cannot live with a placeholder at these names (it dies
 * reading one), so they are bound read-only when present and swept after
 * the session when new. */
const char *const ws_git_redirects[WS_GIT_REDIRECTS] = {
	"commondir", "config.worktree", "worktrees", "modules",
};

/* In a worktree's administrative directory (.git/worktrees/NAME), what
 * sends git to configuration and hooks elsewhere: bound read-only when
 * there at start, moved aside by the sweep when new. */
const char *const ws_worktree_redirects[WS_WORKTREE_REDIRECTS] = {
	"commondir", "config.worktree", "modules",
};

/* What an entry is, "dev:ino:birth" ("dev:ino" where the file system keeps
 * no birth time), or "gone": the birth time tells a directory removed and
 * made again from the original even when the inode number comes back. */
void ws_id_at(int dirfd, const char *name, char id[ID_LEN])
{
	struct statx sx;
	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH),
		  STATX_INO | STATX_BTIME, &sx) < 0) {
		snprintf(id, ID_LEN, "gone");
		return;
	}
	unsigned long long dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	if (sx.stx_mask & STATX_BTIME)
		snprintf(id, ID_LEN, "%llu:%llu:%lld.%09u", dev, (unsigned long long)sx.stx_ino,
			 (long long)sx.stx_btime.tv_sec, (unsigned)sx.stx_btime.tv_nsec);
	else
		snprintf(id, ID_LEN, "%llu:%llu", dev, (unsigned long long)sx.stx_ino);
}

/* What git looks for to take a directory for a repository (a bare one, or
 * a gitdir): HEAD, objects/ and refs/. */
unsigned ws_bare_part(const struct walk_entry *we)
{
	if (strcmp(we->name, "HEAD") == 0 && (we->type == DT_REG || we->type == DT_LNK))
		return BARE_HEAD;
	if (we->type == DT_DIR && strcmp(we->name, "objects") == 0)
		return BARE_OBJECTS;
	if (we->type == DT_DIR && strcmp(we->name, "refs") == 0)
		return BARE_REFS;
	return 0;
}

bool ws_quarantined(const char *name)
{
	const char *tag = strstr(name, "." WS_QUARANTINE_TAG);
	return tag && tag != name;
}

bool ws_protected_name(const struct strv *names, const char *name)
{
	for (size_t i = 0; i < names->n; i++)
		if (strcmp(names->v[i], name) == 0)
			return true;
	return false;
}
