/* sweep.c - the end-of-session sweep (workspace_sweep, workspace.h): with
 * every sandbox process gone, each .git, git redirect, bare-repository
 * lookalike and protected name below the top that the plan did not record
 * at start is moved aside (a .git git init made, from which git runs
 * nothing, stays: gitplain.c; so do a worktree `git worktree add` made and
 * its .git file: gitworktree.c; so does a protected name holding only what
 * the top's own one holds: sameastop.c), and so is a rebase's or
 * cherry-pick's state inside a git directory that would run on the next
 * --continue what was not there at start (gitrebase.c); regular files
 * whose inode changed during the session lose their setuid and setgid bits (what an earlier sweep moved
 * aside, read-only all session, is passed by), and inside each git
 * directory that stays every FIFO, socket and device, and each symlink
 * made during the session, is removed: git on the host opens what it
 * finds there, and waits on a FIFO forever; so is, in the working tree, a
 * FIFO, socket or device at a name git reads there (.gitignore,
 * .gitattributes, .gitmodules, .mailmap); the files of its object store
 * changed during the session are noted for the check of their content
 * (objcheck.h). */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wsclock.h"

#define SETID_BITS (S_ISUID | S_ISGID)
#define WORKTREES_KEPT "the worktrees git worktree add made: git's own entries, their " \
	"configuration and hooks this repository's"
#define WORKTREE_KEPT "a linked worktree (git worktree add) of a repository there at start: " \
	"git runs nothing of its own"

struct known {
	const char *rel, *id;
};

/* What was there at start, sorted by rel. */
struct table {
	struct known *v;
	size_t n;
};

static int cmp_known(const void *a, const void *b)
{
	return strcmp(((const struct known *)a)->rel, ((const struct known *)b)->rel);
}

static void table_make(struct table *t, const struct strv *rels, const struct strv *ids)
{
	t->n = rels->n;
	t->v = xcalloc(t->n ? t->n : 1, sizeof *t->v);
	for (size_t i = 0; i < t->n; i++)
		t->v[i] = (struct known){ .rel = rels->v[i], .id = ids->v[i] };
	qsort(t->v, t->n, sizeof *t->v, cmp_known);
}

static const char *table_id(const struct table *t, const char *rel)
{
	struct known key = { .rel = rel };
	const struct known *k = bsearch(&key, t->v, t->n, sizeof *t->v, cmp_known);
	return k ? k->id : NULL;
}

struct sweep {
	const struct ws_plan *plan;
	struct table git;          /* the plan's .git entries and redirects */
	struct table bare;         /* its bare-repository lookalikes */
	struct table named;        /* its protected names below the top */
	struct table links;        /* its symlinks on the way to git's configuration */
	char *suffix;              /* WS_QUARANTINE_TAG "SESSION" */
	struct ws_sweep *out;
	/* in the directory being read: names to move aside once it is read */
	struct strv pending_git, pending_config, pending_odd, pending_rebase, pending_tree_odd;
	struct strv pending_why;   /* for each of pending_git: why it was not kept */
	struct strv rebase_why;    /* for each of pending_rebase: what it would run */
	unsigned bare_parts;       /* and what it holds of a repository */
	bool all_git;              /* every entry is inside a git directory */
	int host_ok;               /* ws_host_hooks_outside, asked once: -1 not yet */
	struct timespec t0;        /* changed since: the plan's start, less what the
				      wall clock was set back meanwhile */
};

/* From when the sweep counts a change: the plan's start, moved back by
 * what the wall clock was set back since (a step after the loop's last
 * look included). */
static struct timespec changes_since(const struct ws_plan *plan)
{
	wsclock_update(plan->clock);
	return wsclock_earlier(plan->clock, plan->t0);
}

/* There at start, and the same entry: a name alone is not enough (a
 * concurrent session's sweep may have moved the original away, and an
 * agent made a new one under the same name). */
static bool known(const struct table *t, const char *rel, const char *id)
{
	const char *was = table_id(t, rel);
	return was && strcmp(was, id) == 0;
}

/* Nothing of the host's git configuration sends hooks into the workspace
 * (asked once). */
static bool host_ok(struct sweep *sw, char why[WS_WHY_MAX])
{
	if (sw->host_ok < 0)
		sw->host_ok = ws_host_hooks_outside(sw->out->ws);
	if (!sw->host_ok)
		snprintf(why, WS_WHY_MAX, "your own git configuration sends a new repository's "
			 "hooks into the workspace, or cannot be read");
	return sw->host_ok;
}

/* May a new .git directory stay: git init's own, and nothing of the
 * host's configuration sends its hooks into the workspace? */
static bool plain_repo(struct sweep *sw, const struct walk_entry *we, char why[WS_WHY_MAX])
{
	return ws_git_plain(we->dirfd, we->name, why) && host_ok(sw, why);
}

/* May a new .git file stay: a linked worktree (gitworktree.c) of a
 * repository there at start, whose worktrees/ are all git's own? */
static bool worktree_link(struct sweep *sw, const struct walk_entry *we, char why[WS_WHY_MAX])
{
	size_t dl = strlen(we->rel) - strlen(we->name);
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(dl ? dl - 1 : 0), we->rel);
	_cleanup_free_ char *gd = ws_worktree_gitdir(we->dirfd, we->name, sw->out->ws, dir, why);
	if (!gd)
		return false;
	char *wt = strstr(gd, ".git/worktrees/");
	_cleanup_free_ char *gitrel = xasprintf("%.*s", (int)(wt - gd + 4), gd);
	_cleanup_close_ int gfd = open_beneath(sw->plan->ws_fd, gitrel, O_RDONLY | O_DIRECTORY, 0);
	char id[ID_LEN] = "gone";
	if (gfd >= 0)
		ws_id_at(gfd, "", id);
	if (!known(&sw->git, gitrel, id)) {
		snprintf(why, WS_WHY_MAX, "it sends git to a worktree of %.80s, which was not there "
			 "at start", gitrel);
		return false;
	}
	_cleanup_close_ int wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	struct stat st;
	if (wfd < 0 || fstatat(wfd, wt + 15, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, WS_WHY_MAX, "it sends git to %.100s, which is no directory", gd);
		return false;
	}
	return ws_worktree_admin_plain(gfd, wt + 15, why) && host_ok(sw, why);
}

/* A new .git kept: a repository git init made, or a linked worktree. */
static bool new_git_kept(struct sweep *sw, const struct walk_entry *we, char why[WS_WHY_MAX])
{
	return we->type == DT_REG ? worktree_link(sw, we, why) : plain_repo(sw, we, why);
}

static void swept_add(struct ws_sweep *out, struct ws_swept it)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 8;
		out->v = xrealloc(out->v, out->cap * sizeof *out->v);
	}
	out->v[out->n++] = it;
}

/* Move name (whose workspace path is rel) aside in dirfd, and record it
 * (why: a new .git's reason, or NULL). */
static void move_aside(struct sweep *sw, enum ws_swept_kind kind, int dirfd, const char *name,
		       const char *rel, const char *why)
{
	char *to = walk_rename_aside(dirfd, name, sw->suffix);
	size_t dir_len = strlen(rel) - strlen(name);
	if (!to) {
		wnote("could not move %s/%s aside: %s", sw->out->ws, rel, strerror(errno));
		return;
	}
	swept_add(sw->out, (struct ws_swept){ .kind = kind, .rel = xstrdup(rel),
		.to = xasprintf("%s/%.*s%s", sw->out->ws, (int)dir_len, rel, to),
		.why = why && *why ? xstrdup(why) : NULL });
	free(to);
}

/* A .git/worktrees there at start, writable all session (rel): each
 * worktrees/NAME made or replaced since is judged as a new worktrees/
 * would be (kept when git's own, else moved aside); in each one there at
 * start, what redirects git (commondir, config.worktree, modules) and was
 * not there is moved aside. */
static void sweep_worktree_names(struct sweep *sw, int gfd, const char *rel)
{
	mode_t restore;
	struct stat st;
	int wfd = walk_open_dir(gfd, "worktrees", &restore, &st);
	_cleanup_dir_ DIR *d = wfd < 0 ? NULL : dir_open_at(wfd, ".", 0);
	_cleanup_strv_ struct strv names = { 0 };
	for (struct dirent *de; d && (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !strstr(de->d_name, sw->suffix))
			strv_push(&names, de->d_name);
	for (size_t i = 0; i < names.n; i++) {
		const char *name = names.v[i];
		char id[ID_LEN], why[WS_WHY_MAX] = "";
		ws_id_at(wfd, name, id);
		_cleanup_free_ char *nrel = xasprintf("%s/%s", rel, name);
		if (!known(&sw->git, nrel, id)) {
			if (ws_worktree_admin_plain(gfd, name, why) && host_ok(sw, why))
				swept_add(sw->out, (struct ws_swept){ .kind = WS_SWEPT_GIT_KEPT,
					.rel = xstrdup(nrel), .why = xstrdup(WORKTREES_KEPT) });
			else
				move_aside(sw, WS_SWEPT_GIT, wfd, name, nrel, why);
			continue;
		}
		_cleanup_close_ int afd = openat(wfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
		for (size_t k = 0; afd >= 0 && k < ARRAY_LEN(ws_worktree_redirects); k++) {
			const char *x = ws_worktree_redirects[k];
			ws_id_at(afd, x, id);
			_cleanup_free_ char *xrel = xasprintf("%s/%s", nrel, x);
			if (strcmp(id, "gone") != 0 && !known(&sw->git, xrel, id))
				move_aside(sw, WS_SWEPT_GIT, afd, x, xrel, NULL);
		}
	}
	if (wfd >= 0)
		walk_close_dir(wfd, restore, rel);
}

/* The redirects of a .git that was there at start. */
static void sweep_redirects(struct sweep *sw, const struct walk_entry *we)
{
	mode_t restore;
	struct stat st;
	int gfd = walk_open_dir(we->dirfd, we->name, &restore, &st);
	if (gfd < 0) {
		if (errno != ENOENT)
			wnote("sweep: cannot look inside %s (%s); a git redirect there was not "
			      "moved aside", we->rel, strerror(errno));
		return;
	}
	for (size_t i = 0; i < ARRAY_LEN(ws_git_redirects); i++) {
		char id[ID_LEN];
		ws_id_at(gfd, ws_git_redirects[i], id);
		if (strcmp(id, "gone") == 0)
			continue;
		_cleanup_free_ char *rel = xasprintf("%s/%s", we->rel, ws_git_redirects[i]);
		if (known(&sw->git, rel, id)) {
			if (strv_contains(&sw->plan->worktrees_rw, rel))
				sweep_worktree_names(sw, gfd, rel);
			continue;
		}
		/* `git worktree add`'s own: kept (the .git files judged alike) */
		char why[WS_WHY_MAX] = "";
		if (strcmp(ws_git_redirects[i], "worktrees") == 0 && ws_worktrees_plain(gfd, why) &&
		    host_ok(sw, why)) {
			swept_add(sw->out, (struct ws_swept){ .kind = WS_SWEPT_GIT_KEPT,
				.rel = xstrdup(rel), .why = xstrdup(WORKTREES_KEPT) });
			continue;
		}
		move_aside(sw, WS_SWEPT_GIT, gfd, ws_git_redirects[i], rel, why);
	}
	walk_close_dir(gfd, restore, we->rel);
}

/* The inode has not changed since the plan began: its ctime, which no
 * process can set back, is earlier than the start (an inode changed in the
 * start's own clock tick, before or after it, counts as changed), the
 * start moved back by what the wall clock was set back meanwhile. */
static bool before_start(const struct sweep *sw, const struct stat *st)
{
	const struct timespec *t0 = &sw->t0;
	return st->st_ctim.tv_sec < t0->tv_sec ||
	       (st->st_ctim.tv_sec == t0->tv_sec && st->st_ctim.tv_nsec < t0->tv_nsec);
}

/* A regular file with a setuid or setgid bit whose inode changed during
 * the session loses the bits. Its ctime says so without a record of every
 * file at start (which would cost the start a stat per file): chmod, link,
 * rename and write all set it, and no process can set it back. */
static void sweep_setid(struct sweep *sw, const struct walk_entry *we)
{
	struct stat st;
	if (fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    !(st.st_mode & SETID_BITS))
		return;
	if (before_start(sw, &st))
		return;
	mode_t bits = st.st_mode & SETID_BITS;
	mode_t mode = st.st_mode & 07777 & ~bits;
	if (fchmodat(we->dirfd, we->name, mode, AT_SYMLINK_NOFOLLOW) < 0) {
		wnote("could not clear the %s bit of %s/%s: %s", bits == SETID_BITS ?
		      "setuid and setgid" : bits == S_ISUID ? "setuid" : "setgid",
		      sw->out->ws, we->rel, strerror(errno));
		return;
	}
	swept_add(sw->out, (struct ws_swept){ .kind = WS_SWEPT_SETID, .rel = xstrdup(we->rel),
		.mode_was = st.st_mode & 07777, .mode = mode });
}

/* A protected name below the top that was not there at start (or, not
 * bound read-only, was replaced): made during the session. A placeholder
 * (another session's) is none. */
static bool new_config(const struct sweep *sw, const struct walk_entry *we)
{
	const char *was = table_id(&sw->named, we->rel);
	if (was && strcmp(was, "bound") == 0)
		return false; /* read-only inside all along: only the host changed it */
	char id[ID_LEN];
	ws_id_at(we->dirfd, we->name, id);
	if (was && strcmp(was, id) == 0)
		return false;
	if (wsplan_has(sw->plan, we->rel))
		return false; /* the plan's own placeholder, or a path it protected */
	struct stat st;
	if (fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && workspace_is_placeholder(&st)) {
		if (!S_ISDIR(st.st_mode))
			return false;
		if (walk_dir_empty(we->dirfd, we->name))
			return false;
	}
	return true;
}

/* A new protected name that holds only what the top's own one holds (a
 * new worktree's checkout, sameastop.c): kept, on the record. */
static bool same_as_top(struct sweep *sw, const struct walk_entry *we)
{
	if (!ws_same_as_top(sw->plan, we->dirfd, we->name))
		return false;
	swept_add(sw->out, (struct ws_swept){ .kind = WS_SWEPT_CONFIG_KEPT,
		.rel = xstrdup(we->rel) });
	return true;
}

/* A symlink on the way to git's configuration at start is still that
 * link (else whatever replaced it is moved aside); true for any other. */
static bool same_link(const struct sweep *sw, const struct walk_entry *we)
{
	const char *was = table_id(&sw->links, we->rel);
	if (!was)
		return true;
	char target[PATH_MAX];
	ssize_t n = we->type == DT_LNK ? readlinkat(we->dirfd, we->name, target, sizeof target - 1) : -1;
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, was) == 0;
}

/* A directory inside a git directory: a rebase's or cherry-pick's state
 * that would run what was not there at start is moved aside once the
 * directory holding it is read (a gitdir outside the workspace had no
 * record at start: all_git); the walk goes on into any other. */
static int sweep_git_dir(struct sweep *sw, const struct walk_entry *we)
{
	if (!ws_rebase_dir(we->name))
		return WALK_DESCEND;
	char why[WS_WHY_MAX];
	if (ws_rebase_plain(sw->all_git ? NULL : sw->plan, we, why))
		return WALK_DESCEND;
	strv_push(&sw->pending_rebase, we->name);
	strv_push(&sw->rebase_why, why);
	return WALK_SKIP;
}

/* A loose object's name: 38 hex digits (SHA-1) or 62 (SHA-256). */
static bool loose_name(const char *name)
{
	size_t n = strlen(name);
	return (n == 38 || n == 62) && strspn(name, "0123456789abcdef") == n;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The component of path that ends at end (exclusive) is comp. */
static bool comp_is(const char *path, const char *end, const char *comp)
{
	size_t n = strlen(comp);
	return (size_t)(end - path) >= n && strncmp(end - n, comp, n) == 0 &&
	       (end - n == path || end[-(ptrdiff_t)n - 1] == '/');
}

/* A file of a git object store whose inode changed during the session
 * (made, renamed in, written or chmod'ed: its ctime, which no process can
 * set back), noted whole for the check of its content (objcheck.h): a
 * loose object in objects/XX/, or a pack's index or the pack in
 * objects/pack/ (git takes any *.idx there for one). Only such names are
 * looked at, with a stat each. */
static void note_object(struct sweep *sw, const struct walk_entry *we)
{
	bool loose = loose_name(we->name);
	if (!loose && !ends_with(we->name, ".idx") && !ends_with(we->name, ".pack"))
		return;
	struct stat st;
	if (fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    before_start(sw, &st))
		return;
	_cleanup_free_ char *full = xasprintf("%s/%s", sw->out->ws, we->rel);
	const char *parent_end = full + strlen(full) - strlen(we->name) - 1;
	const char *parent = parent_end;
	while (parent > full && parent[-1] != '/')
		parent--;
	bool in_dir = loose ? parent_end - parent == 2 && strspn(parent, "0123456789abcdef") >= 2
			    : comp_is(full, parent_end, "pack");
	if (in_dir && parent > full && comp_is(full, parent - 1, "objects"))
		strv_push_owned(&sw->out->objects, steal_ptr(&full));
}

/* Inside a git directory: a FIFO, socket or device is removed once the
 * directory is read, whenever it was made (git makes none; one a killed
 * session left, or one inside a directory moved in whole, has an old
 * ctime), and so is a symlink made during the session (its ctime later
 * than the start, which no process can set back); a symlink there before
 * stays (a `repo` checkout links its .git's parts). What this session's
 * sweep moved aside is left. The whole tree is read: a directory's old
 * ctime says nothing of what was moved in inside it. */
static int sweep_in_git(struct sweep *sw, const struct walk_entry *we)
{
	if (strstr(we->name, sw->suffix))
		return WALK_SKIP;
	if (we->type == DT_REG) {
		note_object(sw, we);
		return WALK_SKIP;
	}
	if (we->type == DT_DIR)
		return sweep_git_dir(sw, we);
	struct stat st;
	if (fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return WALK_SKIP;
	if (S_ISREG(st.st_mode)) {
		note_object(sw, we);
		return WALK_SKIP;
	}
	if (S_ISDIR(st.st_mode))
		return sweep_git_dir(sw, we);
	if (!S_ISLNK(st.st_mode) || !before_start(sw, &st))
		strv_push(&sw->pending_odd, we->name);
	return WALK_SKIP;
}

/* In the working tree, a name git opens and reads by itself (`git status`
 * reads every directory's .gitignore) is a FIFO, socket or device: git on
 * the host would wait on a FIFO forever. Whenever it was made (one a
 * killed session left has an old ctime). */
static bool odd_git_name(const struct walk_entry *we)
{
	static const char *const names[] = { ".gitignore", ".gitattributes", ".gitmodules",
					     ".mailmap" };
	bool named = false;
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		named |= strcmp(we->name, names[i]) == 0;
	struct stat st;
	return named && we->type != DT_REG && we->type != DT_DIR && we->type != DT_LNK &&
	       fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode) ||
		S_ISBLK(st.st_mode));
}

static int sweep_entry(void *ctx, const struct walk_entry *we, struct werr *e)
{
	(void)e;
	struct sweep *sw = ctx;
	if (we->tagged || sw->all_git)
		return sweep_in_git(sw, we);
	sw->bare_parts |= ws_bare_part(we);
	if (sw->plan->quarantined.n && ws_quarantined(we->name) &&
	    strv_contains(&sw->plan->quarantined, we->rel))
		return WALK_SKIP; /* read-only all along, its way pinned */
	if (strcmp(we->name, ".git") == 0) {
		char id[ID_LEN];
		ws_id_at(we->dirfd, we->name, id);
		if (!known(&sw->git, we->rel, id)) {
			char why[WS_WHY_MAX] = "";
			if (new_git_kept(sw, we, why)) {
				swept_add(sw->out, (struct ws_swept){ .kind = WS_SWEPT_GIT_KEPT,
					.rel = xstrdup(we->rel),
					.why = we->type == DT_REG ? xstrdup(WORKTREE_KEPT) : NULL });
				return WALK_DESCEND_TAGGED; /* swept as one that was there */
			}
			strv_push(&sw->pending_git, we->name); /* after the directory is read */
			strv_push(&sw->pending_why, why);
			return WALK_SKIP;
		}
		if (we->type != DT_DIR)
			return WALK_SKIP;
		sweep_redirects(sw, we);
		return WALK_DESCEND_TAGGED;
	}
	if (!same_link(sw, we) || (strchr(we->rel, '/') &&
				   ws_protected_name(&sw->plan->names, we->name) && new_config(sw, we) &&
				   !same_as_top(sw, we))) {
		strv_push(&sw->pending_config, we->name);
		return WALK_SKIP;
	}
	if (we->type == DT_REG)
		sweep_setid(sw, we);
	else if (odd_git_name(we))
		strv_push(&sw->pending_tree_odd, we->name);
	return WALK_DESCEND;
}

/* Remove name (neither a file nor a directory) from dirfd, and record it
 * as kind: its type, and a symlink's target. */
static void remove_odd(struct sweep *sw, int dirfd, const char *rel, const char *name,
		       enum ws_swept_kind kind)
{
	_cleanup_free_ char *r = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	char target[PATH_MAX];
	ssize_t n = S_ISLNK(st.st_mode) ? readlinkat(dirfd, name, target, sizeof target - 1) : -1;
	if (n >= 0)
		target[n] = '\0';
	if (unlinkat(dirfd, name, 0) < 0) {
		wnote("could not remove %s/%s: %s", sw->out->ws, r, strerror(errno));
		return;
	}
	swept_add(sw->out, (struct ws_swept){ .kind = kind, .rel = steal_ptr(&r),
		.mode_was = st.st_mode, .to = n >= 0 ? xstrdup(target) : NULL });
}

static void pending_free(struct sweep *sw)
{
	strv_free(&sw->pending_git);
	strv_free(&sw->pending_why);
	strv_free(&sw->pending_config);
	strv_free(&sw->pending_rebase);
	strv_free(&sw->rebase_why);
	strv_free(&sw->pending_odd);
	strv_free(&sw->pending_tree_odd);
}

static int sweep_dir_done(void *ctx, int dirfd, const char *rel, bool tagged, struct werr *e)
{
	(void)e;
	struct sweep *sw = ctx;
	const struct { struct strv *names, *whys; enum ws_swept_kind kind; } lists[] = {
		{ &sw->pending_git, &sw->pending_why, WS_SWEPT_GIT },
		{ &sw->pending_config, NULL, WS_SWEPT_CONFIG },
		{ &sw->pending_rebase, &sw->rebase_why, WS_SWEPT_REBASE },
	};
	for (size_t l = 0; l < ARRAY_LEN(lists); l++)
		for (size_t i = 0; i < lists[l].names->n; i++) {
			const char *name = lists[l].names->v[i];
			_cleanup_free_ char *r = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
			move_aside(sw, lists[l].kind, dirfd, name, r,
				   lists[l].whys ? lists[l].whys->v[i] : NULL);
		}
	for (size_t i = 0; i < sw->pending_odd.n; i++)
		remove_odd(sw, dirfd, rel, sw->pending_odd.v[i], WS_SWEPT_ODD);
	for (size_t i = 0; i < sw->pending_tree_odd.n; i++)
		remove_odd(sw, dirfd, rel, sw->pending_tree_odd.v[i], WS_SWEPT_ODD_TREE);
	pending_free(sw);
	/* A directory made to look like a repository (git would take it for
	 * a bare one, or for the gitdir a .git file names, and run its hooks
	 * and config): its HEAD moved aside, which is enough for git not to
	 * take it for one, and works for the workspace itself too. */
	unsigned parts = sw->bare_parts;
	sw->bare_parts = 0;
	if (tagged || parts != BARE_ALL)
		return 0;
	char id[ID_LEN];
	ws_id_at(dirfd, "", id);
	if (known(&sw->bare, rel, id))
		return 0;
	_cleanup_free_ char *head = *rel ? xasprintf("%s/HEAD", rel) : xstrdup("HEAD");
	move_aside(sw, WS_SWEPT_BARE, dirfd, "HEAD", head, NULL);
	return 0;
}

static void sweep_closed(void *ctx, const char *rel, int err)
{
	(void)ctx;
	wnote("sweep: cannot look inside %s (%s); a git repository there was not moved aside",
	      rel, strerror(err));
}

/* The workspace's path now, from the directory itself. */
static char *path_now(int fd, const char *fallback)
{
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n <= 0 || buf[0] != '/')
		return xstrdup(fallback);
	buf[n] = '\0';
	return xstrdup(buf);
}

bool workspace_git_new(const struct ws_plan *plan, const char *rel)
{
	if (plan->ws_fd < 0)
		return false;
	_cleanup_close_ int fd = open_beneath(plan->ws_fd, rel, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return false;
	char id[ID_LEN];
	ws_id_at(fd, "", id);
	for (size_t i = 0; i < plan->git.n; i++)
		if (strcmp(plan->git.v[i], rel) == 0 && strcmp(plan->git_ids.v[i], id) == 0)
			return false;
	return true;
}

int workspace_sweep(const char *ws, const struct ws_plan *plan, const char *session,
		    struct ws_sweep *out, struct werr *e)
{
	if (plan->ws_fd < 0)
		return werr_set(e, EBADF, "sweep: the workspace %s was never opened", ws);
	free(out->ws);
	out->ws = path_now(plan->ws_fd, ws);
	struct sweep sw = { .plan = plan, .out = out, .t0 = changes_since(plan),
		.suffix = xasprintf(WS_QUARANTINE_TAG "%s", session), .host_ok = -1 };
	table_make(&sw.git, &plan->git, &plan->git_ids);
	table_make(&sw.bare, &plan->bare, &plan->bare_ids);
	table_make(&sw.named, &plan->named, &plan->named_ids);
	table_make(&sw.links, &plan->links, &plan->link_targets);
	const struct walk_ops ops = { .entry = sweep_entry, .dir_done = sweep_dir_done,
				      .closed = sweep_closed };
	int r = walk_tree(plan->ws_fd, &ops, &sw, e);
	pending_free(&sw);
	free(sw.git.v);
	free(sw.bare.v);
	free(sw.named.v);
	free(sw.links.v);
	free(sw.suffix);
	return r;
}

void ws_sweep_free(struct ws_sweep *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].rel);
		free(s->v[i].to);
		free(s->v[i].why);
	}
	free(s->v);
	free(s->ws);
	strv_free(&s->objects);
	*s = (struct ws_sweep){ 0 };
}


int workspace_sweep_gitdir(const char *dir, const struct ws_plan *plan, const char *session,
			   struct ws_sweep *out, struct werr *e)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : werr_errno(e, "sweep: %s", dir);
	free(out->ws);
	out->ws = xstrdup(dir);
	struct sweep sw = { .plan = plan, .out = out, .all_git = true, .t0 = changes_since(plan),
		.suffix = xasprintf(WS_QUARANTINE_TAG "%s", session), .host_ok = -1 };
	const struct walk_ops ops = { .entry = sweep_entry, .dir_done = sweep_dir_done,
				      .closed = sweep_closed };
	int r = walk_tree(fd, &ops, &sw, e);
	pending_free(&sw);
	free(sw.suffix);
	return r;
}
