/* gitplain.c - a repository the sandbox made from which the host's git
 * would run nothing (ws_git_plain, plan.h): what `git init` leaves, or
 * libgit2's for `cargo new`, or `git clone`'s. The sweep keeps such a
 * .git where it moves any other new one aside. Its config holds only the
 * settings git init writes (the repository's format, core's booleans),
 * a clone's remotes (a URL of git's own transports, a refspec), and what
 * gitsafe.h names (an identity, an upstream toward one of those remotes),
 * read as git reads it (gitconfig.h): no hook path, no fsmonitor, pager,
 * editor, alias, filter, include, upload-pack or helper. Its hooks are
 * git's samples alone: git runs a hook by its exact name, never
 * NAME.sample. None of the entries that send git to configuration
 * elsewhere is there (ws_git_redirects: commondir, config.worktree,
 * worktrees/, modules/). Nothing of it is
 * followed through a symlink. And the host's own configuration, which
 * git reads first for every repository, must not send a new one's hooks
 * into the workspace: a relative core.hooksPath starts at the
 * repository's top, where the agent wrote what it liked
 * (ws_host_hooks_outside). What stays is swept as any repository that
 * stays (its FIFOs, devices and new symlinks removed). */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitconfig.h"
#include "gitsafe.h"

#define HOOKS_MAX 256
#define HOST_CONFIG_MAX (1024 * 1024)
#define INCLUDE_DEPTH 10 /* git's own limit */

/* The settings git init (2.x) and libgit2 write, and the two extensions a
 * repository of another object or ref format names: none of them starts a
 * program or names a file. */
static const char *const plain_settings[] = {
	"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
	"core.ignorecase", "core.precomposeunicode", "core.symlinks",
	"extensions.objectformat", "extensions.refstorage",
};

/* remote.<name>.url and .fetch, as git clone writes them: a URL git
 * reaches by a transport of its own (no "<helper>::", never an option),
 * a refspec of text. */
static bool clone_setting(const char *var, const char *val)
{
	const char *key = strrchr(var, '.');
	if (!val || !*val || strncmp(var, "remote.", 7) != 0 || key == var + 6 ||
	    !gitsafe_plain(val, false))
		return false;
	if (strcmp(key, ".url") == 0)
		return val[0] != '-' && !strstr(val, "::");
	return strcmp(key, ".fetch") == 0;
}

bool ws_say(char why[WS_WHY_MAX], const char *fmt, ...)
{
	if (!why || why[0])
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, WS_WHY_MAX, fmt, ap);
	va_end(ap);
	for (char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	return false;
}

/* Every setting git init's, a clone's remote, or one gitsafe.h names
 * with its plain value (an identity, an upstream toward a remote defined
 * here). */
static bool plain_config(const char *text, size_t len, char why[WS_WHY_MAX])
{
	struct gitsafe_list l = { 0 };
	if (gitsafe_read(text, len, &l) < 0) {
		gitsafe_free(&l);
		return ws_say(why, "its config is not in git's syntax as warden reads it");
	}
	bool ok = true;
	for (size_t i = 0; ok && i < l.n; i++) {
		const struct gitsafe_setting *x = &l.v[i];
		bool init = false;
		for (size_t k = 0; k < ARRAY_LEN(plain_settings) && !init; k++)
			init = strcmp(x->var, plain_settings[k]) == 0;
		ok = init || clone_setting(x->var, x->val) ||
		     (gitsafe_var(x->var) && gitsafe_value(x->var, x->val, &l));
		if (!ok)
			ws_say(why, "its config sets %.80s", x->var);
	}
	gitsafe_free(&l);
	return ok;
}

/* hooks/ absent, or a directory (not a link to one) of regular files
 * named *.sample and nothing else. */
static bool plain_hooks(int gfd, char why[WS_WHY_MAX])
{
	_cleanup_dir_ DIR *d = dir_open_at(gfd, "hooks", O_NOFOLLOW);
	if (!d)
		return errno == ENOENT || ws_say(why, "its hooks are no directory of its own");
	size_t n = 0;
	for (struct dirent *de; (errno = 0, de = readdir(d));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		size_t len = strlen(de->d_name);
		struct stat st;
		if (++n > HOOKS_MAX)
			return ws_say(why, "its hooks hold more than %d entries", HOOKS_MAX);
		if (len <= 7 || strcmp(de->d_name + len - 7, ".sample") != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			return ws_say(why, "its hooks hold %.80s", de->d_name);
	}
	return errno == 0 || ws_say(why, "its hooks cannot be read");
}

bool ws_git_plain(int dirfd, const char *name, char why[WS_WHY_MAX])
{
	if (why)
		why[0] = '\0';
	_cleanup_close_ int gfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gfd < 0)
		return ws_say(why, errno == ENOTDIR || errno == ELOOP
				? "it is no directory: a .git file or symlink sends git elsewhere"
				: "it cannot be read");
	for (size_t i = 0; i < ARRAY_LEN(ws_git_redirects); i++) {
		struct stat st;
		if (fstatat(gfd, ws_git_redirects[i], &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			return ws_say(why, "it has %s, which sends git elsewhere for configuration",
				   ws_git_redirects[i]);
	}
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(gfd, "config", O_NOFOLLOW, GITCFG_REPO_MAX, &len, NULL);
	if (!text)
		return ws_say(why, "its config is no regular file of at most 64 KiB");
	return plain_config(text, len, why) && plain_hooks(gfd, why);
}

/* --- the host's configuration ---------------------------------------------- */

struct hostcfg {
	const char *ws;
	const char *file;  /* the file being read: where a relative include starts */
	int depth;
	bool inside;       /* a hook path or an include that lands in the workspace */
};

static void host_file(struct hostcfg *h, const char *path);

static void host_setting(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value)
{
	(void)cond;
	struct hostcfg *h = ctx;
	if (kind != GITCFG_HOOKS_PATH && kind != GITCFG_INCLUDE && kind != GITCFG_INCLUDE_IF)
		return;
	_cleanup_free_ char *v = ws_expand_user(value);
	if (!v || !*v) {
		/* a hook path of "" (the top) or one not expanded here: judged
		 * inside; an include git cannot expand stops git */
		h->inside |= kind == GITCFG_HOOKS_PATH;
		return;
	}
	if (kind == GITCFG_HOOKS_PATH) {
		/* relative: from each repository's top, a new one's included */
		h->inside |= v[0] != '/' || path_is_within(v, h->ws);
		return;
	}
	/* an include, whatever its condition (it can hold later): relative to
	 * the file it is in */
	const char *slash = strrchr(h->file, '/');
	_cleanup_free_ char *inc = v[0] == '/' ? xstrdup(v)
				 : xasprintf("%.*s/%s", (int)(slash ? slash - h->file : 0), h->file, v);
	if (path_is_within(inc, h->ws)) {
		h->inside = true; /* the agent's to write */
		return;
	}
	host_file(h, inc);
}

static void host_file(struct hostcfg *h, const char *path)
{
	if (h->inside)
		return;
	if (++h->depth > INCLUDE_DEPTH) {
		h->inside = true; /* git refuses it; so does this */
		return;
	}
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	char why[READ_WHY_MAX];
	if (read_regular_file(path, HOST_CONFIG_MAX, &text, &len, why) < 0) {
		h->inside |= errno != ENOENT; /* one that cannot be read here: not judged */
	} else {
		const char *was = h->file;
		h->file = path;
		if (gitcfg_scan(text, len, host_setting, h) < 0)
			h->inside = true; /* git refuses it: not judged either */
		h->file = was;
	}
	h->depth--;
}

bool ws_host_hooks_outside(const char *ws)
{
	struct hostcfg h = { .ws = ws };
	_cleanup_strv_ struct strv files = gitcfg_host_files(true);
	for (size_t i = 0; i < files.n && !h.inside; i++)
		host_file(&h, files.v[i]);
	return !h.inside;
}
