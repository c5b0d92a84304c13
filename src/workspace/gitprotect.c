/* gitprotect.c - the plan's git protections: what the host's git would read
 * or run from the workspace after the session is kept out of the agent's
 * reach. The hooks and config inside each repository's gitdir (a .git
 * directory, a bare lookalike, the gitdir a .git file names); every file
 * its configuration includes, at any depth git allows (gitconfig.c reads
 * each); each directory a core.hooksPath names, in its configuration or the
 * host's own, and the one above a husky hooks directory (`.husky/_`), whose
 * hooks run the scripts there; the configuration a pre-commit hook runs.
 * What lies in the workspace is protected, held by a
 * placeholder when missing; what the sandbox could write elsewhere refuses
 * the workspace. */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitconfig.h"

/* The protected paths inside .git ("hooks", "config"), applied to the
 * repository whose gitdir is at gitdir ("" for the workspace itself). */
int ws_protect_repo(struct scan *sc, const char *gitdir, struct werr *e)
{
	for (size_t i = 0; i < sc->git_subs.n; i++) {
		_cleanup_free_ char *rel = *gitdir ? xasprintf("%s/%s", gitdir, sc->git_subs.v[i])
						   : xstrdup(sc->git_subs.v[i]);
		if (wsplan_protect(sc->ws, rel, sc->plan, e) < 0)
			return -1;
	}
	return 0;
}

/* A small regular file of the workspace (never through a symlink, never a
 * FIFO), NUL-terminated, malloc'd; NULL when it is not one. */
static char *read_small(int wsfd, const char *rel)
{
	char *text, why[READ_WHY_MAX];
	size_t len;
	return read_regular_file_at(wsfd, rel, O_NOFOLLOW, 65536, &text, &len, why) < 0 ? NULL : text;
}

/* What protect_to_missing found of a path. */
enum presence { PRESENT, LAST_MISSING, DIR_MISSING };

/* Protect rel down to its first part that is missing, which a placeholder
 * holds (a directory for a part with more below it, and for the last part
 * when dir): nothing can be made where git would look. */
static int protect_to_missing(struct scan *sc, const char *rel, bool dir, enum presence *there,
			      struct werr *e)
{
	_cleanup_free_ char *path = xstrdup(rel);
	char *p = path;
	struct stat st;
	for (;;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		bool missing = fstatat(sc->plan->ws_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0;
		if (missing || !slash) {
			*there = !missing ? PRESENT : slash ? DIR_MISSING : LAST_MISSING;
			if (wsplan_protect(sc->ws, path, sc->plan, e) < 0)
				return -1;
			for (size_t i = 0; missing && (slash || dir) && i < sc->plan->n; i++)
				if (sc->plan->m[i].kind == WS_PLACEHOLDER && !sc->plan->m[i].adopted &&
				    strcmp(sc->plan->m[i].rel, path) == 0)
					sc->plan->m[i].dir = true;
			return 0;
		}
		*slash = '/';
		p = slash + 1;
	}
}

/* A repository's configuration as the host's git reads it: its config
 * files and every file they include, at any depth git allows. */
#define INCLUDE_DEPTH_MAX 10   /* git's: deeper, it refuses the configuration */
#define INCLUDED_FILES_MAX 256 /* files read for one repository */
#define CONFIG_SIZE_MAX (1 << 20)

struct gitcfg_walk {
	struct scan *sc;
	const char *gitdir;       /* the repository (workspace-relative, "" for the top) */
	struct strv hooks;        /* every core.hooksPath value found */
	struct strv seen;         /* what was read: "FILE\nDIRECTORY", both resolved */
	struct strv chain;        /* the files being read, outermost first (their keys) */
	struct strv found;        /* one file's includes, for the scan's callback */
	unsigned files;
	bool host;                /* reading the host's own configuration: its includes
				   * outside the workspace are read too */
};

static void gitcfg_found(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value)
{
	struct gitcfg_walk *w = ctx;
	(void)cond; /* every condition's file is protected, whatever it says */
	if (kind == GITCFG_HOOKS_PATH)
		strv_push(&w->hooks, value);
	else if (kind == GITCFG_INCLUDE || kind == GITCFG_INCLUDE_IF)
		strv_push(&w->found, value);
}

/* A configuration file of the workspace, whole, NUL-terminated, in *text
 * (NULL when it is missing or not a regular file: git reads nothing
 * there); -1 when it is too large for warden to read all of. */
static int read_config(int wsfd, const char *rel, char **text, size_t *len, struct werr *e)
{
	*text = NULL;
	*len = 0;
	/* rel absolute: a file of the host's own configuration, opened as
	 * git opens it */
	_cleanup_close_ int fd = rel[0] == '/' ? open(rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
					       : open_beneath(wsfd, rel, O_RDONLY | O_NONBLOCK, 0);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (st.st_size > CONFIG_SIZE_MAX)
		return werr_set(e, EFBIG, "refusing the workspace: the git configuration %s is "
				"larger than %d bytes, more than warden reads to find its "
				"core.hooksPath", rel, CONFIG_SIZE_MAX);
	char *buf = xmalloc((size_t)st.st_size + 1);
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	*len = n > 0 ? (size_t)n : 0;
	buf[*len] = '\0';
	*text = buf;
	return 0;
}

/* Is abs (outside the workspace) a path the sandbox can write? */
static const char *writable_inside(const struct policy *pol, const char *abs)
{
	_cleanup_free_ char *real = ws_resolve_abs(abs), *lexical = ws_join_lexically("/", abs);
	for (size_t i = 0; i < pol->npaths; i++)
		if (pol->paths[i].mode == POLICY_RW && ((real && path_is_within(real,
		    pol->paths[i].path)) || path_is_within(lexical, pol->paths[i].path)))
			return pol->paths[i].origin;
	return NULL;
}

static int gitcfg_file(struct gitcfg_walk *w, const char *lex, const char *rel, struct werr *e);
static int gitcfg_follow(struct gitcfg_walk *w, const char *lex, const char *abs, const char *rel,
			 struct werr *e);

/* What tells one reading of a file from another: the file, and the
 * directory its own relative includes start from (that of its path as
 * git names it, lex). */
static char *gitcfg_key(const char *lex, const char *rel)
{
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(strrchr(lex, '/') - lex), lex);
	_cleanup_free_ char *rdir = ws_resolve_abs(*dir ? dir : "/");
	return xasprintf("%s\n%s", rel, rdir ? rdir : dir);
}

/* One include directive of the file lex (its path as git names it:
 * relative includes start from its directory). The file it names, when in
 * the workspace, is protected (held by a placeholder when missing) and
 * read in turn. */
static int gitcfg_include(struct gitcfg_walk *w, const char *lex, const char *value,
			  struct werr *e)
{
	_cleanup_free_ char *path = ws_expand_user(value);
	if (!path || !*path || strncmp(path, "%(prefix)/", 10) == 0)
		return 0; /* none, or below git's own installation: outside */
	_cleanup_free_ char *abs = path[0] == '/' ? xstrdup(path)
			       : xasprintf("%.*s/%s", (int)(strrchr(lex, '/') - lex), lex, path);
	ws_note_links(w->sc->plan, w->sc->ws, abs);
	_cleanup_free_ char *rel = ws_relative_abs(w->sc->ws, abs);
	if (!rel) {
		/* outside: not the agent's to write unless the sandbox can
		 * write where it is; read only from the host's own
		 * configuration (the sandbox cannot reach it, but it can set
		 * a hooksPath in the workspace) */
		const char *origin = writable_inside(w->sc->pol, abs);
		if (origin)
			return werr_set(e, 0, "refusing the workspace: the git configuration %s "
					"includes %s, which the sandbox can write (%s); the host's "
					"git would take settings that run commands from it", lex, abs,
					origin);
		return w->host ? gitcfg_follow(w, lex, abs, abs, e) : 0;
	}
	enum presence there;
	if (protect_to_missing(w->sc, rel, false, &there, e) < 0)
		return -1;
	if (there == DIR_MISSING)
		return 0; /* git passes it by, and its placeholder holds the way */
	if (there == LAST_MISSING) {
		wnote("%s includes %s, which does not exist: it is held by a placeholder for the "
		      "session, at which git stops (\"bad config line\"); create the file to "
		      "avoid that", lex, rel);
		return 0;
	}
	return gitcfg_follow(w, lex, abs, rel, e);
}

/* An included file read in turn (rel: in the workspace, or abs again for
 * a host file), once, as deep as git goes. */
static int gitcfg_follow(struct gitcfg_walk *w, const char *lex, const char *abs, const char *rel,
			 struct werr *e)
{
	_cleanup_free_ char *key = gitcfg_key(abs, rel);
	if (strv_contains(&w->chain, key)) {
		wnote("%s includes %s, which includes it again: git refuses this configuration "
		      "(\"exceeded maximum include depth\")", lex, rel);
		return 0;
	}
	if (strv_contains(&w->seen, key))
		return 0;
	if (w->chain.n > INCLUDE_DEPTH_MAX) { /* the repository's own file is the first */
		wnote("%s: includes nest deeper than git allows (%d) at %s; git refuses this "
		      "configuration", lex, INCLUDE_DEPTH_MAX, rel);
		return 0;
	}
	if (++w->files > INCLUDED_FILES_MAX)
		return werr_set(e, 0, "refusing the workspace: the git configuration of %s "
				"includes more than %d files", *w->gitdir ? w->gitdir : ".",
				INCLUDED_FILES_MAX);
	strv_push(&w->seen, key);
	strv_push(&w->chain, key);
	int r = gitcfg_file(w, abs, rel, e);
	strv_remove(&w->chain, key);
	return r;
}

/* Read one configuration file (lex: absolute, as git names it; rel: where
 * it is in the workspace, or lex again for a file of the host's own
 * configuration) and what it includes. */
static int gitcfg_file(struct gitcfg_walk *w, const char *lex, const char *rel, struct werr *e)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_config(w->sc->plan->ws_fd, rel, &text, &len, e) < 0)
		return -1;
	if (!text)
		return 0;
	strv_free(&w->found);
	gitcfg_scan(text, len, gitcfg_found, w);
	_cleanup_strv_ struct strv includes = w->found;
	w->found = (struct strv){ 0 };
	for (size_t i = 0; i < includes.n; i++)
		if (gitcfg_include(w, lex, includes.v[i], e) < 0)
			return -1;
	return 0;
}

/* Does abs resolve to the workspace's top? */
static bool ws_is_top(const char *ws, const char *abs)
{
	_cleanup_free_ char *real = ws_resolve_abs(abs);
	_cleanup_free_ char *rws = ws_resolve_abs(ws);
	return real && rws && strcmp(real, rws) == 0;
}

/* The names git runs as hooks (githooks(5)). */
static const char *const git_hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
	"post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
	"post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
	"sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit", "post-index-change",
};

/* A core.hooksPath naming the workspace's top (".", or ".." from a
 * repository one level down): the top cannot be read-only, so each name
 * git runs from there is (held by a placeholder when missing). */
static int protect_hook_names(struct scan *sc, struct werr *e)
{
	for (size_t i = 0; i < ARRAY_LEN(git_hook_names); i++) {
		enum presence there;
		if (protect_to_missing(sc, git_hook_names[i], false, &there, e) < 0)
			return -1;
	}
	return 0;
}

/* A hooks directory named `_` is husky's (9 and later): each hook there
 * runs the script of its name in the directory above (`.husky/pre-commit`
 * for `.husky/_`), which is protected as well; the top's hook names when
 * that is the workspace's top. */
static int protect_dispatched(struct scan *sc, const char *rel, struct werr *e)
{
	const char *base = strrchr(rel, '/');
	if (strcmp(base ? base + 1 : rel, "_") != 0)
		return 0;
	if (!base)
		return protect_hook_names(sc, e);
	_cleanup_free_ char *parent = xasprintf("%.*s", (int)(base - rel), rel);
	enum presence there;
	return protect_to_missing(sc, parent, true, &there, e);
}

/* pre-commit's hooks (its own template, in the repository's hooks) run
 * what the configuration they name says (`--config=PATH`, from the
 * working tree's top): any command, or code fetched from elsewhere. That
 * file is protected like a hook, held by a placeholder when missing. */
#define PRE_COMMIT_MARK "# File generated by pre-commit: https://pre-commit.com"
#define HOOK_READ_MAX (64 * 1024)

/* The --config= value of a pre-commit hook's text (as shlex quotes it:
 * the whole argument in single quotes when it needs them), malloc'd. */
static char *pre_commit_config(const char *text)
{
	const char *a = strstr(text, "--config=");
	if (!a)
		return xstrdup(".pre-commit-config.yaml");
	bool quoted = a > text && a[-1] == '\'';
	a += 9;
	size_t n = quoted ? strcspn(a, "'\n") : strcspn(a, " \t\n)'\"");
	return xasprintf("%.*s", (int)n, a);
}

static int protect_hook_configs(struct scan *sc, const char *gitdir, const char *worktree,
				struct werr *e)
{
	_cleanup_free_ char *hooks = *gitdir ? xasprintf("%s/hooks", gitdir) : xstrdup("hooks");
	_cleanup_close_ int hfd = open_beneath(sc->plan->ws_fd, hooks, O_RDONLY | O_DIRECTORY, 0);
	_cleanup_dir_ DIR *d = hfd < 0 ? NULL : dir_open_at(hfd, ".", 0);
	for (struct dirent *de; d && (de = readdir(d));) {
		size_t nl = strlen(de->d_name);
		if (de->d_name[0] == '.' || (nl > 7 && strcmp(de->d_name + nl - 7, ".sample") == 0))
			continue;
		size_t len;
		_cleanup_free_ char *text = read_regular_at(hfd, de->d_name, O_NOFOLLOW,
							    HOOK_READ_MAX, &len, NULL);
		if (!text || !strstr(text, PRE_COMMIT_MARK))
			continue;
		_cleanup_free_ char *cfg = pre_commit_config(text);
		if (!*cfg)
			continue;
		_cleanup_free_ char *abs = cfg[0] == '/' ? xstrdup(cfg)
			: xasprintf("%s%s%s/%s", sc->ws, *worktree ? "/" : "", worktree, cfg);
		_cleanup_free_ char *rel = ws_relative_abs(sc->ws, abs);
		const char *origin = rel ? NULL : writable_inside(sc->pol, abs);
		enum presence there;
		if (origin)
			return werr_set(e, 0, "refusing the workspace: the pre-commit hook %s/%s/%s runs "
					"what %s says, which the sandbox can write (%s)", sc->ws, hooks,
					de->d_name, abs, origin);
		if (rel && protect_to_missing(sc, rel, false, &there, e) < 0)
			return -1;
	}
	return 0;
}

/* The core.hooksPath values of the host's own configuration (and what it
 * includes), read once per scan into sc->host_hooks: they apply to every
 * repository. An included file in the workspace is protected like one a
 * repository's own configuration includes. */
static int host_hooks_path(struct scan *sc, struct werr *e)
{
	if (sc->host_read)
		return 0;
	sc->host_read = true;
	struct gitcfg_walk w = { .sc = sc, .gitdir = "", .host = true };
	_cleanup_strv_ struct strv files = gitcfg_host_files(true);
	int r = 0;
	for (size_t i = 0; r == 0 && i < files.n; i++) {
		_cleanup_free_ char *key = gitcfg_key(files.v[i], files.v[i]);
		if (strv_contains(&w.seen, key))
			continue;
		strv_push(&w.seen, key);
		strv_push(&w.chain, key);
		r = gitcfg_file(&w, files.v[i], files.v[i], e);
		strv_remove(&w.chain, key);
	}
	sc->host_hooks = w.hooks;
	strv_free(&w.seen);
	strv_free(&w.chain);
	strv_free(&w.found);
	return r;
}

/* The directories a repository's core.hooksPath can name, in every file
 * of its configuration (config, config.worktree, and what they include,
 * whatever an includeIf's condition: it can hold later), when they lie in
 * the workspace: protected like .git/hooks. gitdir: the repository's git
 * directory; worktree: where a relative hooksPath starts (the top of its
 * working tree, or the bare repository itself). */
int ws_protect_hooks_path(struct scan *sc, const char *gitdir, const char *worktree,
			      struct werr *e)
{
	struct gitcfg_walk w = { .sc = sc, .gitdir = gitdir };
	int r = 0;
	static const char *const roots[] = { "config", "config.worktree" };
	for (size_t i = 0; r == 0 && i < ARRAY_LEN(roots); i++) {
		_cleanup_free_ char *rel = *gitdir ? xasprintf("%s/%s", gitdir, roots[i])
						   : xstrdup(roots[i]);
		_cleanup_free_ char *lex = xasprintf("%s/%s", sc->ws, rel);
		_cleanup_free_ char *key = gitcfg_key(lex, rel);
		strv_push(&w.seen, key);
		strv_push(&w.chain, key);
		r = gitcfg_file(&w, lex, rel, e);
		strv_remove(&w.chain, key);
	}
	/* what git reads before the repository's own files: a relative
	 * core.hooksPath there starts at this repository's top too */
	if (r == 0 && (r = host_hooks_path(sc, e)) == 0)
		for (size_t i = 0; i < sc->host_hooks.n; i++)
			strv_push(&w.hooks, sc->host_hooks.v[i]);
	for (size_t i = 0; r == 0 && i < w.hooks.n; i++) {
		_cleanup_free_ char *hp = ws_expand_user(w.hooks.v[i]);
		if (!hp || !*hp)
			continue;
		_cleanup_free_ char *abs = hp[0] == '/' ? xstrdup(hp)
				       : xasprintf("%s%s%s/%s", sc->ws, *worktree ? "/" : "", worktree, hp);
		ws_note_links(sc->plan, sc->ws, abs);
		_cleanup_free_ char *rel = ws_relative_abs(sc->ws, abs);
		const char *origin = rel ? NULL : writable_inside(sc->pol, abs);
		enum presence there;
		if (rel && (protect_to_missing(sc, rel, true, &there, e) < 0 ||
			    protect_dispatched(sc, rel, e) < 0))
			r = -1;
		else if (!rel && ws_is_top(sc->ws, abs))
			r = protect_hook_names(sc, e);
		else if (origin)
			r = werr_set(e, 0, "refusing the workspace: the git configuration of %s/%s names "
				     "%s as core.hooksPath, which the sandbox can write (%s); the host's "
				     "git would run hooks from it", sc->ws, *gitdir ? gitdir : ".", abs,
				     origin);
	}
	strv_free(&w.hooks);
	strv_free(&w.seen);
	strv_free(&w.chain);
	strv_free(&w.found);
	return r < 0 ? -1 : protect_hook_configs(sc, gitdir, worktree, e);
}

/* The workspace's own .git file naming a git directory outside it that
 * the policy does not show (a linked worktree, `git init
 * --separate-git-dir`): git fails inside with "not a git repository", so
 * say why and what to do instead. */
static void outside_gitdir(const struct scan *sc, const char *rel, const char *gabs)
{
	struct stat st;
	if (strcmp(rel, ".git") != 0 || stat(gabs, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	for (size_t i = 0; i < sc->pol->npaths; i++)
		if (path_is_within(gabs, sc->pol->paths[i].path))
			return;
	const char *wts = strstr(gabs, "/worktrees/");
	if (!wts) {
		wnote("%s is a git working tree whose git directory %s lies outside the workspace, "
		      "out of the sandbox's sight: git does not work inside. Run the session in a "
		      "directory that holds both", sc->ws, gabs);
		return;
	}
	/* the main worktree: the common directory's, or that directory itself
	 * for a bare repository */
	int n = (int)(wts - gabs);
	bool dotgit = n >= 5 && strncmp(wts - 5, "/.git", 5) == 0;
	wnote("%s is a linked git worktree whose repository %.*s lies outside the workspace, out "
	      "of the sandbox's sight: git does not work inside. Run the session in %.*s, or "
	      "`warden run --task NAME` there for a worktree of its own that git works in",
	      sc->ws, n, gabs, dotgit ? n - 5 : n, gabs);
}

/* A .git file ("gitdir: PATH"): the repository it points at, when it lies
 * in the workspace, has its hooks and config protected like a .git's. */
int ws_protect_gitfile_target(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	_cleanup_free_ char *text = read_small(sc->plan->ws_fd, we->rel);
	if (!text || strncmp(text, "gitdir:", 7) != 0)
		return 0;
	char *v = text + 7;
	v += strspn(v, " \t");
	v[strcspn(v, "\r\n")] = '\0';
	_cleanup_free_ char *dir = xstrdup(we->rel);
	char *slash = strrchr(dir, '/');
	*(slash ? slash : dir) = '\0';
	if (!*v)
		return 0;
	_cleanup_free_ char *gabs = v[0] == '/' ? xstrdup(v)
				: xasprintf("%s%s%s/%s", sc->ws, *dir ? "/" : "", dir, v);
	ws_note_links(sc->plan, sc->ws, gabs);
	_cleanup_free_ char *gitdir = ws_relative_abs(sc->ws, gabs);
	if (!gitdir) {
		outside_gitdir(sc, we->rel, gabs);
		return 0;
	}
	if (ws_protect_repo(sc, gitdir, e) < 0 || ws_protect_hooks_path(sc, gitdir, dir, e) < 0)
		return -1;
	/* a linked worktree's gitdir: its configuration is the common
	 * directory's, whose relative hooksPath starts here too */
	_cleanup_free_ char *cd_rel = xasprintf("%s/commondir", gitdir);
	_cleanup_free_ char *cd = read_small(sc->plan->ws_fd, cd_rel);
	if (!cd)
		return 0;
	cd[strcspn(cd, "\r\n")] = '\0';
	_cleanup_free_ char *common = *cd ? ws_relative(sc->ws, gitdir, cd) : NULL;
	return common ? ws_protect_hooks_path(sc, common, dir, e) : 0;
}

