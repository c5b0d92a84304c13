/* workspace.c - the start-of-session scan, on the host side before the
 * sandbox exists (workspace_plan): one walk of the whole tree that plans
 * the mounts keeping protected paths read-only and secret files masked
 * inside the workspace, records each .git, git redirect, bare-repository
 * lookalike and protected name below the top for the sweep (sweep.c),
 * and what a rebase or cherry-pick in progress would run (gitrebase.c),
 * binds what an earlier sweep moved aside read-only, and adds each
 * directory to the host-side watch (wswatch.h). What git would
 * read or run is protected by gitprotect.c; the plan's entries are made by
 * plan.c; plan.h shares the scan between them. */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "certcopy.h"
#include "gitconfig.h"
#include "wsclock.h"
#include "wswatch.h"

#define SCAN_MAX_ENTRIES 1000000

#define WORKTREES_RW_MAX 256 /* administrative directories; more: read-only whole */

/* Does the administrative directory afd (rel) belong to a worktree in
 * the workspace ws: does its gitdir file name a .git there? */
static bool worktree_inside(int afd, const char *ws, const char *rel)
{
	size_t len = 0;
	_cleanup_free_ char *g = read_regular_at(afd, "gitdir", O_NOFOLLOW, 4096, &len, NULL);
	if (!g || strlen(g) != len)
		return false;
	g[strcspn(g, "\r\n")] = '\0';
	if (!*g)
		return false;
	_cleanup_free_ char *dir = xasprintf("%s/%s", ws, rel);
	_cleanup_free_ char *abs = g[0] == '/' ? xstrdup(g) : ws_join_lexically(dir, g);
	_cleanup_free_ char *in = ws_relative_abs(ws, abs);
	return in != NULL;
}

static int worktree_config_on(void *ctx, char *var, const char *value)
{
	bool *on = ctx;
	if (strcmp(var, "extensions.worktreeconfig") == 0)
		*on = !value || !(strcasecmp(value, "false") == 0 || strcasecmp(value, "no") == 0 ||
				  strcasecmp(value, "off") == 0 || strcmp(value, "0") == 0 || !*value);
	return 0;
}

/* Does the repository's config (at gfd) make git read each worktree's
 * config.worktree (extensions.worktreeConfig, which git takes from that
 * file alone)? true too when it cannot be read. */
static bool reads_worktree_config(int gfd)
{
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(gfd, "config", O_NOFOLLOW, 1 << 20, &len, NULL);
	bool on = false;
	if (!text || gitcfg_each(text, len, worktree_config_on, &on) < 0)
		return true;
	return on;
}

/* A .git/worktrees there at start (rel, in the .git at gfd): each
 * worktrees/NAME and the redirects in it recorded for the sweep, and the
 * directory writable for the session (`git worktree add`) when each NAME
 * is a directory and the repository reads no config.worktree, read-only
 * whole otherwise. A NAME of a worktree in the workspace is writable too
 * (a commit there); one of a worktree elsewhere stays read-only (its
 * index and HEAD are not the agent's to set). */
static void note_worktrees(struct ws_plan *plan, const char *ws, int gfd, const char *rel)
{
	/* a new config.worktree would be read on the host during the
	 * session: the old way then, read-only whole */
	if (reads_worktree_config(gfd))
		return;
	_cleanup_close_ int wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	_cleanup_dir_ DIR *d = wfd < 0 ? NULL : dir_open_at(wfd, ".", 0);
	if (!d)
		return;
	_cleanup_strv_ struct strv rels = { 0 }, ids = { 0 }, outside = { 0 };
	size_t n = 0;
	for (struct dirent *de; (errno = 0, de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (++n > WORKTREES_RW_MAX || fstatat(wfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			return;
		char id[ID_LEN];
		ws_id_at(wfd, de->d_name, id);
		strv_push_owned(&rels, xasprintf("%s/%s", rel, de->d_name));
		strv_push(&ids, id);
		_cleanup_close_ int afd = openat(wfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
		if (afd < 0 || !worktree_inside(afd, ws, rels.v[rels.n - 1]))
			strv_push(&outside, rels.v[rels.n - 1]);
		for (size_t k = 0; afd >= 0 && k < ARRAY_LEN(ws_worktree_redirects); k++) {
			ws_id_at(afd, ws_worktree_redirects[k], id);
			if (strcmp(id, "gone") == 0)
				continue;
			strv_push_owned(&rels, xasprintf("%s/%s/%s", rel, de->d_name,
							 ws_worktree_redirects[k]));
			strv_push(&ids, id);
		}
	}
	if (errno)
		return;
	strv_push(&plan->worktrees_rw, rel);
	for (size_t i = 0; i < outside.n; i++)
		wsplan_readonly(plan, outside.v[i]);
	for (size_t i = 0; i < rels.n; i++) {
		strv_push(&plan->git, rels.v[i]);
		strv_push(&plan->git_ids, ids.v[i]);
	}
}

/* Record a .git entry (directory, file or symlink) and the redirects in one
 * that is a directory. */
static void note_git(struct ws_plan *plan, const char *ws, const struct walk_entry *we)
{
	char id[ID_LEN];
	ws_id_at(we->dirfd, we->name, id);
	strv_push(&plan->git, we->rel);
	strv_push(&plan->git_ids, id);
	if (we->type != DT_DIR)
		return;
	mode_t restore;
	struct stat st;
	int gfd = walk_open_dir(we->dirfd, we->name, &restore, &st);
	if (gfd < 0)
		return;
	for (size_t i = 0; i < ARRAY_LEN(ws_git_redirects); i++) {
		ws_id_at(gfd, ws_git_redirects[i], id);
		if (strcmp(id, "gone") == 0)
			continue;
		strv_push_owned(&plan->git, xasprintf("%s/%s", we->rel, ws_git_redirects[i]));
		strv_push(&plan->git_ids, id);
		if (strcmp(ws_git_redirects[i], "worktrees") == 0) {
			_cleanup_free_ char *wrel = xstrdup(plan->git.v[plan->git.n - 1]);
			note_worktrees(plan, ws, gfd, wrel);
		}
	}
	walk_close_dir(gfd, restore, we->rel);
}

/* A protected name below the top, there at start: read-only inside when it
 * can be (not a symlink), and recorded for the sweep either way. */
static int protect_named(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	char id[ID_LEN] = "bound";
	if (we->type == DT_LNK)
		ws_id_at(we->dirfd, we->name, id);
	else if (wsplan_protect(sc->ws, we->rel, sc->plan, e) < 0)
		return -1;
	strv_push(&sc->plan->named, we->rel);
	strv_push(&sc->plan->named_ids, id);
	return 0;
}

/* A *.pem of certificates alone: their copy for the sandbox (certcopy.h),
 * within the session's bound for all copies; else NULL (masked whole). Only
 * where `*.pem` is what masks it: a profile that names the file, or masks it
 * by any other pattern (`mask certs/ca-*.pem`), keeps it masked whole. */
static char *cert_copy(struct scan *sc, const struct walk_entry *we, size_t *len)
{
	size_t n = strlen(we->name);
	if (we->type != DT_REG || n < 5 || strcmp(we->name + n - 4, ".pem") != 0 ||
	    sc->plan->certs_bytes >= CERTCOPY_TOTAL ||
	    workspace_masked_except(sc->pol, we->rel, we->name, "*.pem"))
		return NULL;
	char *c = certcopy_read(we->dirfd, we->name, len);
	if (c && *len > CERTCOPY_TOTAL - sc->plan->certs_bytes) {
		free(c);
		return NULL;
	}
	if (c)
		sc->plan->certs_bytes += *len;
	return c;
}

/* A secret name: masked (and not looked inside); else descend. */
static int plan_mask(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	if (!workspace_masked(sc->pol, we->rel, we->name))
		return WALK_DESCEND;
	if (wsplan_check_length(we->rel, "secret", e) < 0)
		return -1;
	wsplan_add(sc->plan, we->type == DT_DIR ? WS_MASK_DIR : WS_MASK_FILE, we->rel);
	struct ws_mount *m = &sc->plan->m[sc->plan->n - 1];
	struct stat st;
	if (fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		m->mask_dev = st.st_dev;
		m->mask_ino = st.st_ino;
	}
	m->certs = cert_copy(sc, we, &m->certs_len);
	return WALK_SKIP;
}

/* A unix socket there at start is the host's (a language server's, a dev
 * server's, git's fsmonitor daemon's): masked, so that nothing inside can
 * connect or send to it, a datagram sent with sendmsg included, whose
 * address seccomp cannot see (the supervisor refuses connect and sendto by
 * the inode, unixconn.h). Not a placeholder (plan_protect's, or a running
 * session's: nothing listens there). 1 when masked, 0 not, -1 too deep. */
static int plan_host_socket(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	struct stat st;
	if (we->type != DT_SOCK || wsplan_has(sc->plan, we->rel) ||
	    fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) ||
	    workspace_is_placeholder(&st))
		return 0;
	if (wsplan_check_length(we->rel, "secret", e) < 0)
		return -1;
	wsplan_add(sc->plan, WS_MASK_FILE, we->rel);
	return 1;
}

/* What an earlier session's sweep moved aside (NAME.warden-quarantine-S):
 * bound read-only whole, its way pinned, until the user has looked at it;
 * never planned as a repository (its config may be a symlink, which would
 * refuse the workspace), only walked for secrets; left alone by this
 * session's sweep. A mask still hides it, then as any masked entry. */
static int plan_quarantined(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	if (we->type != DT_DIR && we->type != DT_REG)
		return WALK_SKIP;
	int r = plan_mask(sc, we, e);
	if (r != WALK_DESCEND)
		return r;
	if (wsplan_protect(sc->ws, we->rel, sc->plan, e) < 0)
		return -1;
	strv_push(&sc->plan->quarantined, we->rel);
	return we->type == DT_DIR ? WALK_DESCEND_TAGGED : WALK_SKIP;
}

/* g within a writable .git/worktrees: what follows it in g ("" for the
 * directory itself, "/NAME" or "/NAME/commondir"), else NULL. */
static const char *worktrees_rw_of(const struct ws_plan *plan, const char *g)
{
	for (size_t i = 0; i < plan->worktrees_rw.n; i++) {
		size_t n = strlen(plan->worktrees_rw.v[i]);
		if (strncmp(g, plan->worktrees_rw.v[i], n) == 0 && (g[n] == '\0' || g[n] == '/'))
			return g + n;
	}
	return NULL;
}

static int plan_entry(void *ctx, const struct walk_entry *we, struct werr *e)
{
	struct scan *sc = ctx;
	int sock = plan_host_socket(sc, we, e);
	if (sock)
		return sock < 0 ? -1 : WALK_SKIP;
	/* Inside a .git: only secrets to mask (.git/.git-credentials). */
	if (we->tagged) {
		if (we->type == DT_LNK)
			return WALK_SKIP;
		if (we->type == DT_DIR && ws_rebase_dir(we->name))
			ws_rebase_note(sc->plan, we);
		return plan_mask(sc, we, e);
	}
	if (++sc->entries > SCAN_MAX_ENTRIES)
		return werr_set(e, 0, "workspace has more than %d entries; warden cannot check "
				"them all for secrets (choose a smaller workspace)", SCAN_MAX_ENTRIES);
	sc->bare_parts |= ws_bare_part(we);
	if (ws_quarantined(we->name))
		return plan_quarantined(sc, we, e);
	bool below = strchr(we->rel, '/') != NULL;
	/* Before the symlink skip: git follows a .git symlink, and a .git
	 * file ("gitdir: ...") redirects it too. */
	if (strcmp(we->name, ".git") == 0) {
		note_git(sc->plan, sc->ws, we);
		if (we->type == DT_REG) /* a submodule's or worktree's: read-only */
			return wsplan_protect(sc->ws, we->rel, sc->plan, e) < 0 ||
					       ws_protect_gitfile_target(sc, we, e) < 0
				       ? -1 : WALK_SKIP;
		if (we->type != DT_DIR)
			return WALK_SKIP;
		if (below && ws_protect_repo(sc, we->rel, e) < 0)
			return -1;
		_cleanup_free_ char *top = xstrdup(we->rel);
		char *slash = strrchr(top, '/');
		*(slash ? slash : top) = '\0';
		if (ws_protect_hooks_path(sc, we->rel, top, e) < 0)
			return -1;
		wswatch_add(sc->plan->watch, we->dirfd, we->name, we->rel); /* config, hooks */
		return WALK_DESCEND_TAGGED;
	}
	if (below && ws_protected_name(&sc->plan->names, we->name) && protect_named(sc, we, e) < 0)
		return -1;
	if (we->type == DT_LNK)
		return WALK_SKIP;
	int r = plan_mask(sc, we, e);
	if (r == WALK_DESCEND && we->type == DT_DIR)
		wswatch_add(sc->plan->watch, we->dirfd, we->name, we->rel);
	return r;
}

/* After a directory's entries: one that looks like a bare repository is
 * recorded (the sweep moves new ones aside), its hooks and config
 * protected like a .git's. */
static int plan_dir_done(void *ctx, int dirfd, const char *rel, bool tagged, struct werr *e)
{
	struct scan *sc = ctx;
	unsigned parts = sc->bare_parts;
	sc->bare_parts = 0;
	if (tagged || parts != BARE_ALL)
		return 0;
	char id[ID_LEN];
	ws_id_at(dirfd, "", id);
	strv_push(&sc->plan->bare, rel);
	strv_push(&sc->plan->bare_ids, id);
	return ws_protect_repo(sc, rel, e) < 0 ? -1 : ws_protect_hooks_path(sc, rel, rel, e);
}

struct by_depth {
	size_t depth, index;
};

static int cmp_depth(const void *a, const void *b)
{
	const struct by_depth *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index); /* stable */
}

/* Shallow first, each depth in the order planned. */
static void sort_by_depth(struct ws_plan *plan)
{
	if (plan->n < 2)
		return;
	struct by_depth *k = xcalloc(plan->n, sizeof *k);
	for (size_t i = 0; i < plan->n; i++) {
		k[i].index = i;
		for (const char *p = plan->m[i].rel; *p; p++)
			k[i].depth += *p == '/';
	}
	qsort(k, plan->n, sizeof *k, cmp_depth);
	struct ws_mount *m = xcalloc(plan->n, sizeof *m);
	for (size_t i = 0; i < plan->n; i++)
		m[i] = plan->m[k[i].index];
	free(plan->m);
	free(k);
	plan->m = m;
	plan->cap = plan->n;
}

/* rel lies in a directory kept writable (WS_CARVE) inside ro. */
static bool carved(const struct ws_plan *plan, const char *rel, const char *ro)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->m[i].kind == WS_CARVE && path_is_within(rel, plan->m[i].rel) &&
		    path_is_within(plan->m[i].rel, ro))
			return true;
	return false;
}

/* The plan made consistent once the scan is done. A directory pinned on
 * the way to a protected path that is itself protected, or inside one
 * that is (a .git/modules or .git/worktrees holding the gitdir a .git file
 * names), is bound read-only: a read-write bind there would open what the
 * outer one closes. What lies inside a masked directory (a hooksPath or an
 * included configuration there) is out of the sandbox's sight, an empty
 * tmpfs in its place: nothing is mounted below it, and no placeholder is
 * made for it on the host. */
static void settle(struct ws_plan *plan)
{
	/* the few entries the others are judged against */
	size_t *ro = xcalloc(plan->n + 1, sizeof *ro), *masked = xcalloc(plan->n + 1, sizeof *masked);
	size_t nro = 0, nmasked = 0;
	for (size_t i = 0; i < plan->n; i++) {
		if (plan->m[i].kind == WS_PROTECT)
			ro[nro++] = i;
		else if (plan->m[i].kind == WS_MASK_DIR)
			masked[nmasked++] = i;
	}
	for (size_t i = 0; i < plan->n; i++)
		for (size_t j = 0; plan->m[i].kind == WS_PIN && j < nro; j++)
			if (path_is_within(plan->m[i].rel, plan->m[ro[j]].rel) &&
			    !carved(plan, plan->m[i].rel, plan->m[ro[j]].rel))
				plan->m[i].kind = WS_PROTECT;
	size_t kept = 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		bool hidden = false;
		for (size_t j = 0; !hidden && m->kind != WS_MASK_FILE && m->kind != WS_MASK_DIR &&
				   j < nmasked; j++)
			hidden = strcmp(m->rel, plan->m[masked[j]].rel) != 0 &&
				 path_is_within(m->rel, plan->m[masked[j]].rel);
		if (hidden) {
			free(m->rel);
			free(m->abs);
			free(m->certs);
			continue;
		}
		plan->m[kept++] = *m;
	}
	plan->n = kept;
	free(ro);
	free(masked);
}

static int plan_scan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e);

/* Never while another session of this workspace makes its placeholders
 * (workspace_hold_making): what the plan finds at a protected name is no
 * placeholder, or one whole. */
int workspace_plan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e)
{
	workspace_hold_making(plan, false);
	int r = plan_scan(ws, p, plan, e);
	workspace_release_making(plan);
	return r;
}

static int plan_scan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e)
{
	/* Before anything is looked at: an inode changed from now on has a
	 * ctime no earlier than the coarse wall clock's reading now (the
	 * kernel stamps ctime from that clock, or from a finer reading, which
	 * is never behind it; the fine clock's own reading can be a tick
	 * ahead of a change made after it). Unless the wall clock is set
	 * back meanwhile: the clock's steps are watched from before it. */
	if (!plan->clock) {
		if (!(plan->clock = wsclock_new(e)))
			return -1;
		plan->own_clock = true;
	}
	clock_gettime(CLOCK_REALTIME_COARSE, &plan->t0);
	/* Kept for the session: the placeholders and the sweep work from it,
	 * wherever the workspace is moved meanwhile. */
	plan->ws_fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (plan->ws_fd < 0)
		return werr_errno(e, "opening workspace %s", ws);
	/* the same walk watches every directory for the session (wswatch.h) */
	if (!(plan->watch = wswatch_new(plan->ws_fd, e)))
		return -1;
	wswatch_add(plan->watch, plan->ws_fd, "", "");
	struct scan sc = { .pol = p, .plan = plan, .ws = ws };
	/* A protected name applies at any depth, a path inside .git to every
	 * repository, any other path where it is. */
	for (size_t i = 0; i < p->protect.n; i++) {
		const char *pr = p->protect.v[i];
		if (!strchr(pr, '/'))
			strv_push(&plan->names, pr);
		else if (strncmp(pr, ".git/", 5) == 0)
			strv_push(&sc.git_subs, pr + 5);
		if (wsplan_protect(ws, pr, plan, e) < 0)
			goto fail;
	}
	/* the directories kept writable inside them (a read-only workspace
	 * has none) */
	for (size_t i = 0; !p->workspace_ro && i < p->protect_except.n; i++)
		wsplan_carve(ws, p->protect_except.v[i], plan);
	/* the top's .git as a file (a submodule or a worktree): read-only */
	struct stat st;
	if (fstatat(plan->ws_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    wsplan_protect(ws, ".git", plan, e) < 0)
		goto fail;
	const struct walk_ops ops = { .entry = plan_entry, .dir_done = plan_dir_done };
	if (walk_tree(plan->ws_fd, &ops, &sc, e) < 0)
		goto fail;
	strv_free(&sc.git_subs);
	strv_free(&sc.host_hooks);
	/* Git redirects present now stay as they are: read-only; but a
	 * .git/worktrees whose administrative directories are all there is
	 * pinned, and so is each of them, with its redirects read-only. */
	for (size_t i = 0; i < plan->git.n; i++) {
		const char *g = plan->git.v[i];
		const char *base = strrchr(g, '/');
		if (strcmp(base ? base + 1 : g, ".git") == 0)
			continue;
		const char *wt = worktrees_rw_of(plan, g);
		if (wt && (!*wt || !strchr(wt + 1, '/')))
			wsplan_pin(plan, g); /* worktrees/, or worktrees/NAME */
		else
			wsplan_readonly(plan, g);
	}
	settle(plan);
	/* Shallow first: each bind onto a directory clones what is mounted
	 * below it with its own attributes, so nothing deeper may be mounted
	 * before it. */
	sort_by_depth(plan);
	return 0;
fail:
	strv_free(&sc.git_subs);
	strv_free(&sc.host_hooks);
	return -1;
}

void workspace_cleanup(struct ws_plan *plan)
{
	workspace_remove_placeholders(plan);
	phstash_close(&plan->stash);
	if (plan->lock_fd >= 0) {
		close(plan->lock_fd);
		plan->lock_fd = -1;
	}
	if (plan->ws_fd >= 0) {
		close(plan->ws_fd);
		plan->ws_fd = -1;
	}
	wswatch_free(plan->watch);
	plan->watch = NULL;
	if (plan->own_clock)
		wsclock_free(plan->clock);
	plan->clock = NULL;
	plan->own_clock = false;
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->m[i].rel);
		free(plan->m[i].abs);
		free(plan->m[i].certs);
	}
	free(plan->m);
	plan->m = NULL;
	plan->n = plan->cap = 0;
	strv_free(&plan->git);
	strv_free(&plan->git_ids);
	strv_free(&plan->bare);
	strv_free(&plan->bare_ids);
	strv_free(&plan->names);
	strv_free(&plan->named);
	strv_free(&plan->named_ids);
	strv_free(&plan->links);
	strv_free(&plan->link_targets);
	strv_free(&plan->quarantined);
	strv_free(&plan->rebase_dirs);
	strv_free(&plan->worktrees_rw);
	strv_free(&plan->rebase_runs);
}
