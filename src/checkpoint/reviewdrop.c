/* reviewdrop.c - what a --review session's result leaves out
 * (reviewdrop.h). The live end-of-session sweep (src/workspace/sweep.c)
 * moves aside a new .git, a new protected name, a bare-repository
 * lookalike, a rebase's state that would run a program, and removes a
 * symlink made inside a git directory; `warden apply` must write none of
 * them either. The rule here is the conservative one: inside a git
 * directory that was there at start, a new or changed entry is written
 * only when it is git's ordinary data (objects, refs, logs, the index and
 * the HEAD files), which git reads and never runs; everything else there
 * (its configuration, hooks, modules/, worktrees/, info/, a rebase's or
 * cherry-pick's state) is left out, new, or kept as it was at start. A
 * .git that is new or changed (a .git file's gitdir: rewritten) is left
 * out the same way, and so is a directory made to look like a repository
 * (HEAD, objects/ and refs/) anywhere. */
#include "reviewdrop.h"

#include <stdlib.h>
#include <string.h>

#define WHY_GIT_NEW "its configuration or hooks would run on your next command there"
#define WHY_GIT_CHANGED "a .git changed in the session: a .git file's gitdir: sends git to " \
	"another repository, whose configuration and hooks would run"
#define WHY_STATE "git's state inside .git other than its objects, refs and logs: its " \
	"configuration, hooks, submodules or worktrees name what git would run"
#define WHY_REBASE "a rebase's or cherry-pick's state: git's next --continue would run the " \
	"commands and the merge strategy it names"
#define WHY_LINK "a symlink made inside a git directory: git on your host opens what it " \
	"finds there"
#define WHY_OBJECT "an object or a pack git never rewrites, changed: a forgery of what " \
	"git trusts"
#define WHY_ALTERNATES "objects/info/alternates sends git to objects elsewhere"
#define WHY_BARE "a directory made to look like a git repository (HEAD, objects/, refs/): " \
	"git would take it for one and run its configuration and hooks"
#define WHY_NAMED "a configuration that tools on your host read to start commands"
#define WHY_MODE "its mode changed in the session"

/* The files at a git directory's top that are git's data, which git reads
 * and never runs ("shallow" and a split index's "sharedindex.*" too: left
 * out, git would find the repository broken). */
static const char *const git_files[] = {
	"index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG", "packed-refs",
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "REBASE_HEAD",
	"CHERRY_PICK_HEAD", "REVERT_HEAD", "description", "shallow",
};

bool review_self_or_above(char *const *v, size_t n, const char *path, bool self)
{
	_cleanup_free_ char *p = xstrdup(path);
	for (bool first = true;; first = false) {
		if ((!first || self) && n) {
			size_t lo = 0, hi = n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				int cmp = strcmp(p, v[mid]);
				if (cmp == 0)
					return true;
				if (cmp < 0)
					hi = mid;
				else
					lo = mid + 1;
			}
		}
		char *sl = strrchr(p, '/');
		if (!sl)
			return false;
		*sl = '\0';
	}
}

/* dir/name in m ("" is the top) */
static const struct mf_entry *child(const struct manifest *m, const char *dir, const char *name)
{
	_cleanup_free_ char *p = *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
	return manifest_find(m, p);
}

/* dir in m holds what git takes a directory for a repository by (plan.c's
 * ws_bare_part): HEAD (a file or a link), objects/ and refs/. */
static bool repo_parts(const struct manifest *m, const char *dir)
{
	const struct mf_entry *h = child(m, dir, "HEAD"), *o = child(m, dir, "objects"),
			      *r = child(m, dir, "refs");
	return h && (h->type == MF_FILE || h->type == MF_LINK) && o && o->type == MF_DIR && r &&
	       r->type == MF_DIR;
}

/* dir was a git directory at start: a .git directory, a repository's
 * lookalike (a bare one, a submodule's in .git/modules), a linked
 * worktree's (HEAD and commondir, in .git/worktrees). */
static bool git_dir_at_start(const struct manifest *start, const char *dir)
{
	if (strcmp(path_base(dir), ".git") == 0) {
		const struct mf_entry *g = manifest_find(start, dir);
		return g && g->type == MF_DIR;
	}
	if (repo_parts(start, dir))
		return true;
	const struct mf_entry *h = child(start, dir, "HEAD"), *c = child(start, dir, "commondir");
	return h && (h->type == MF_FILE || h->type == MF_LINK) && c && c->type == MF_FILE;
}

/* The deepest directory above path that was a git directory at start
 * (malloc'd, "" for the top), or NULL. */
static char *git_root(const struct manifest *start, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	for (;;) {
		char *sl = strrchr(p, '/');
		if (!sl)
			return git_dir_at_start(start, "") ? xstrdup("") : NULL;
		*sl = '\0';
		if (git_dir_at_start(start, p))
			return steal_ptr(&p);
	}
}

static bool one_of(const char *s, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, v[i]) == 0)
			return true;
	return false;
}

static bool all_hex(const char *s, size_t min)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n >= min && !s[n];
}

/* objects/xx/<hex> or objects/pack/pack-*: git writes each once, never
 * over */
static bool written_once(const char *rel)
{
	if (strncmp(rel, "objects/pack/pack-", 18) == 0)
		return true;
	const char *s = rel + 8;
	return strlen(s) > 3 && s[2] == '/' && !strchr(s + 3, '/') && all_hex(s + 3, 1) &&
	       strspn(s, "0123456789abcdef") == 2;
}

/* rel is below the directory top */
static bool below(const char *rel, const char *top)
{
	size_t n = strlen(top);
	return strncmp(rel, top, n) == 0 && rel[n] == '/';
}

static bool at_or_below(const char *rel, const char *top)
{
	return strcmp(rel, top) == 0 || below(rel, top);
}

/* rel, at a git directory's top, is one of git's data */
static bool top_data(const char *rel, const struct mf_entry *en)
{
	static const char *const dirs[] = { "objects", "refs", "logs" };
	if (en->type == MF_DIR)
		return one_of(rel, dirs, ARRAY_LEN(dirs));
	return one_of(rel, git_files, ARRAY_LEN(git_files)) ||
	       (strncmp(rel, "sharedindex.", 12) == 0 && all_hex(rel + 12, 40));
}

/* rel (below a git directory) is git's ordinary data: NULL, or why not */
static const char *not_git_data(const char *rel, const struct mf_entry *en,
				const struct mf_entry *was)
{
	if (!strchr(rel, '/')) {
		if (top_data(rel, en))
			return NULL;
	} else if (below(rel, "objects")) {
		if (strcmp(rel, "objects/info/alternates") == 0 ||
		    strcmp(rel, "objects/info/http-alternates") == 0)
			return WHY_ALTERNATES;
		return was && written_once(rel) ? WHY_OBJECT : NULL;
	} else if (below(rel, "refs") || below(rel, "logs")) {
		return NULL;
	}
	if (at_or_below(rel, "rebase-merge") || at_or_below(rel, "rebase-apply") ||
	    at_or_below(rel, "sequencer"))
		return WHY_REBASE;
	return WHY_STATE;
}

/* A directory made to look like a repository: one new that holds HEAD,
 * objects/ and refs/, or one of those three new (or of another type) in a
 * directory there at start, not a git directory then, that holds the
 * three now. */
static bool fake_repo(const struct manifest *start, const struct manifest *all,
		      const struct mf_entry *en, const struct mf_entry *was)
{
	if (en->type == MF_DIR && !was && repo_parts(all, en->path))
		return true;
	const char *b = path_base(en->path);
	if (strcmp(b, "HEAD") && strcmp(b, "objects") && strcmp(b, "refs"))
		return false;
	if (was && was->type == en->type)
		return false;
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(b == en->path ? 0 : b - en->path - 1),
					     en->path);
	return !git_dir_at_start(start, dir) && repo_parts(all, dir);
}

struct verdict {
	const char *why, *rule;
	bool mode_only;
};

/* Inside the git directory root (there at start): git's data is kept. */
static struct verdict in_git(const char *root, const struct mf_entry *en,
			     const struct mf_entry *was)
{
	if (en->type == MF_LINK)
		return (struct verdict){ WHY_LINK, "git.odd-file-in-sandbox", false };
	const char *rel = en->path + (*root ? strlen(root) + 1 : 0);
	const char *why = not_git_data(rel, en, was);
	if (!why)
		return (struct verdict){ 0 };
	if (en->type == MF_DIR && was && was->type == MF_DIR)
		return (struct verdict){ WHY_MODE, "git.created-in-sandbox", true };
	bool rebase = strcmp(why, WHY_REBASE) == 0;
	return (struct verdict){ why, rebase ? "git.rebase-runs-in-sandbox"
					     : "git.created-in-sandbox", false };
}

/* en, new or changed (was: the start's, or NULL) */
static struct verdict judge(const struct manifest *start, const struct manifest *all,
			    const struct strv *protected, const struct mf_entry *en,
			    const struct mf_entry *was)
{
	const char *b = path_base(en->path);
	if (strcmp(b, ".git") == 0) {
		if (was && was->type == MF_DIR && en->type == MF_DIR)
			return (struct verdict){ WHY_MODE, "git.created-in-sandbox", true };
		return (struct verdict){ was ? WHY_GIT_CHANGED : WHY_GIT_NEW,
					 "git.created-in-sandbox", false };
	}
	if (fake_repo(start, all, en, was))
		return (struct verdict){ WHY_BARE, "git.bare-created-in-sandbox", false };
	_cleanup_free_ char *root = git_root(start, en->path);
	struct verdict v = root ? in_git(root, en, was) : (struct verdict){ 0 };
	if (!v.why && !was && protected && strv_contains(protected, b))
		return (struct verdict){ WHY_NAMED, "config.created-in-sandbox", false };
	return v;
}

static void drop_add(struct review_drops *d, struct review_drop it)
{
	if (d->n == d->cap)
		d->v = xrealloc(d->v, (d->cap = d->cap ? 2 * d->cap : 8) * sizeof *d->v);
	d->v[d->n++] = it;
}

void review_drops_judge(const struct manifest *start, struct manifest *all,
			const struct strv *protected, struct review_drops *out)
{
	/* the tops left out so far, sorted: the walk is in path order */
	struct strv tops = { 0 };
	for (size_t i = 0; i < all->n; i++) {
		struct mf_entry *en = &all->v[i];
		const struct mf_entry *was = manifest_find(start, en->path);
		if ((was && mf_same_content(was, en)) ||
		    review_self_or_above(tops.v, tops.n, en->path, false))
			continue;
		struct verdict v = judge(start, all, protected, en, was);
		if (!v.why)
			continue;
		if (v.mode_only)
			en->mode = was->mode;
		else
			strv_push(&tops, en->path);
		drop_add(out, (struct review_drop){ .path = xstrdup(en->path), .why = v.why,
			.rule = v.rule, .changed = was != NULL, .mode_only = v.mode_only });
	}
	strv_free(&tops);
}

void review_drops_free(struct review_drops *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].path);
	free(d->v);
	*d = (struct review_drops){ 0 };
}
