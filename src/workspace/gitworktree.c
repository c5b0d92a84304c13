/* gitworktree.c - a linked worktree the sandbox made (`git worktree add`)
 * from which the host's git would run nothing (plan.h): its .git file names
 * an administrative directory .git/worktrees/NAME of a repository that was
 * there at start, and each such directory holds only what git keeps there
 * for a worktree (its HEAD, index, logs, refs, a rebase's state), with
 * commondir "../..": git reads that repository's configuration and hooks,
 * protected all session, and nothing else. No config.worktree (read when
 * the repository enables it), no modules/ (a submodule's own git
 * directory), nothing through a symlink. And a relative core.hooksPath
 * would start at the new worktree's top, which the agent wrote: so the
 * repository's configuration must set none, nor include another file; the
 * host's own is the sweep's to ask (ws_host_hooks_outside). */
#include "plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gitconfig.h"

#define ADMIN_MAX 256        /* worktrees judged in one repository */
#define GITFILE_MAX 4096

/* What git keeps in a worktree's administrative directory: files, then
 * (from "logs" on) directories. */
static const char *const admin_files[] = {
	"HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR",
	"MERGE_AUTOSTASH", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
	"BISECT_LOG", "BISECT_START", "BISECT_EXPECTED_REV", "BISECT_ANCESTORS_OK",
	"BISECT_NAMES", "BISECT_TERMS", "BISECT_HEAD", "BISECT_FIRST_PARENT", "COMMIT_EDITMSG",
	"SQUASH_MSG", "TAG_EDITMSG", "index", "gitdir", "commondir", "locked",
	"CLAUDE_BASE", /* Claude Code's, for its worktrees: the commit it started from */
};
static const char *const admin_dirs[] = {
	"logs", "refs", "rebase-merge", "rebase-apply", "sequencer", "info",
};

static bool listed(const char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

/* One entry of an administrative directory: git's, of its kind. */
static bool admin_entry(int afd, const char *wt, const char *name, char why[WS_WHY_MAX])
{
	struct stat st;
	if (fstatat(afd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ws_say(why, "worktrees/%.40s/%.40s cannot be read", wt, name);
	size_t len = strlen(name);
	bool lock = len > 5 && strcmp(name + len - 5, ".lock") == 0; /* a git killed midway */
	if (S_ISREG(st.st_mode) && (lock || listed(admin_files, ARRAY_LEN(admin_files), name)))
		return true;
	if (S_ISDIR(st.st_mode) && listed(admin_dirs, ARRAY_LEN(admin_dirs), name))
		return true;
	if (lock || listed(admin_files, ARRAY_LEN(admin_files), name) ||
	    listed(admin_dirs, ARRAY_LEN(admin_dirs), name))
		return ws_say(why, "worktrees/%.40s/%.60s is not the kind of entry git makes there",
			      wt, name);
	return ws_say(why, "worktrees/%.40s has %.60s, which git does not keep there", wt, name);
}

/* worktrees/wt: a directory of git's entries alone, commondir "../..". */
static bool admin_plain(int wfd, const char *wt, char why[WS_WHY_MAX])
{
	_cleanup_close_ int afd = openat(wfd, wt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_dir_ DIR *d = afd < 0 ? NULL : dir_open_at(afd, ".", 0);
	if (!d)
		return ws_say(why, "worktrees/%.60s is no directory of its own", wt);
	for (struct dirent *de; (errno = 0, de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !admin_entry(afd, wt, de->d_name, why))
			return false;
	if (errno)
		return ws_say(why, "worktrees/%.60s cannot be read", wt);
	size_t len = 0;
	_cleanup_free_ char *cd = read_regular_at(afd, "commondir", O_NOFOLLOW, 64, &len, NULL);
	if (!cd || (strcmp(cd, "../..\n") != 0 && strcmp(cd, "../..") != 0))
		return ws_say(why, "worktrees/%.60s/commondir does not name its own repository", wt);
	return true;
}

/* The repository's config: no core.hooksPath, no include. */
static void config_found(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value)
{
	(void)cond;
	(void)value;
	bool *bad = ctx;
	*bad |= kind == GITCFG_HOOKS_PATH || kind == GITCFG_INCLUDE || kind == GITCFG_INCLUDE_IF;
}

/* The repository's config: no core.hooksPath, no include. */
static bool repo_config_plain(int gfd, char why[WS_WHY_MAX])
{
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(gfd, "config", O_NOFOLLOW, GITCFG_REPO_MAX,
						    &len, NULL);
	bool bad = false;
	if (!text || gitcfg_scan(text, len, config_found, &bad) < 0)
		bad = true;
	if (bad)
		return ws_say(why, "the repository's config sets core.hooksPath or includes a file "
			   "(a new worktree's top would take part in it)");
	return true;
}

bool ws_worktree_admin_plain(int gfd, const char *name, char why[WS_WHY_MAX])
{
	if (why)
		why[0] = '\0';
	_cleanup_close_ int wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	if (wfd < 0)
		return ws_say(why, "worktrees is no directory of its own");
	return admin_plain(wfd, name, why) && repo_config_plain(gfd, why);
}

bool ws_worktrees_plain(int gfd, char why[WS_WHY_MAX])
{
	if (why)
		why[0] = '\0';
	_cleanup_close_ int wfd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	_cleanup_dir_ DIR *d = wfd < 0 ? NULL : dir_open_at(wfd, ".", 0);
	if (!d)
		return ws_say(why, "worktrees is no directory of its own");
	size_t n = 0;
	for (struct dirent *de; (errno = 0, de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++n > ADMIN_MAX)
			return ws_say(why, "worktrees holds more than %d entries", ADMIN_MAX);
		if (!admin_plain(wfd, de->d_name, why))
			return false;
	}
	if (errno)
		return ws_say(why, "worktrees cannot be read");
	return repo_config_plain(gfd, why);
}

char *ws_worktree_gitdir(int dirfd, const char *name, const char *ws, const char *dir,
			 char why[WS_WHY_MAX])
{
	if (why)
		why[0] = '\0';
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(dirfd, name, O_NOFOLLOW, GITFILE_MAX, &len, NULL);
	if (!text || strncmp(text, "gitdir: ", 8) != 0 || strlen(text) != len) {
		ws_say(why, "it is no directory, nor a worktree's .git file");
		return NULL;
	}
	/* one line, as git writes it: a path with a line break is no place of
	 * a worktree's */
	char *v = text + 8;
	if (text[len - 1] == '\n')
		text[len - 1] = '\0';
	if (!*v || strchr(v, '\n') || strchr(v, '\r')) {
		ws_say(why, "its gitdir line is not git's");
		return NULL;
	}
	/* taken as written, so as the kernel would take it: only a relative
	 * path's leading ".." (from a directory the walk reached, no link) */
	const char *rest = v;
	while (v[0] != '/' && strncmp(rest, "../", 3) == 0)
		rest += 3;
	if (!*rest || path_has_dot_components(rest) || rest[strlen(rest) - 1] == '/') {
		ws_say(why, "its gitdir is not a plain path");
		return NULL;
	}
	_cleanup_free_ char *here = *dir ? xasprintf("%s/%s", ws, dir) : xstrdup(ws);
	_cleanup_free_ char *abs = v[0] == '/' ? xstrdup(v) : ws_join_lexically(here, v);
	size_t wl = strlen(ws);
	const char *rel = strncmp(abs, ws, wl) == 0 && abs[wl] == '/' ? abs + wl + 1 : NULL;
	const char *wt = rel ? strstr(rel, ".git/worktrees/") : NULL;
	if (!wt || (wt != rel && wt[-1] != '/') || !wt[15] || strchr(wt + 15, '/')) {
		ws_say(why, "it sends git to %.100s, no worktree of a repository in the workspace", v);
		return NULL;
	}
	return xstrdup(rel);
}
