/* place.c - choosing the workspace: refuse a directory that would expose
 * what the sandbox hides (/, a system directory, a home or what holds one,
 * a directory with a credential store in it); and find the repository a
 * workspace lies inside of, which the sandbox does not see. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "workspace.h"

/* Directories whose subtrees are never a workspace. */
static const char *const forbidden_trees[] = {
	"/proc", "/sys", "/dev", "/run", "/var/run", "/boot", "/etc", "/usr",
	"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};
/* Directories that are not a workspace themselves (too much beneath them). */
static const char *const forbidden_exact[] = {
	"/", "/var", "/tmp", "/var/tmp", "/home", "/root", "/mnt", "/media",
	"/opt", "/srv", "/dev/shm",
};
/* Entries that mark a home directory: a workspace holding one is refused
 * (and so is a client's install tree, src/agents/discover.c). */
const char *const credential_stores[] = {
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".password-store",
	".config/gcloud", ".azure",
};
const size_t credential_stores_n = ARRAY_LEN(credential_stores);

int workspace_place_check(const char *buf, const char *home, const char *what, struct werr *e)
{
	for (size_t i = 0; i < ARRAY_LEN(forbidden_exact); i++)
		if (strcmp(buf, forbidden_exact[i]) == 0)
			return werr_set(e, 0, "refusing %s %s: it would expose far more "
				"than a project (choose a project directory)", what, buf);
	for (size_t i = 0; i < ARRAY_LEN(forbidden_trees); i++)
		if (path_is_within(buf, forbidden_trees[i]))
			return werr_set(e, 0, "refusing %s %s: it lies inside the system "
				"directory %s", what, buf, forbidden_trees[i]);
	if (home) {
		char hbuf[PATH_MAX];
		const char *h = realpath(home, hbuf) ? hbuf : home;
		if (strcmp(buf, h) == 0)
			return werr_set(e, 0, "refusing %s %s: it is your home directory, "
				"whose dotfiles and credentials the sandbox hides", what, buf);
		if (path_is_within(h, buf))
			return werr_set(e, 0, "refusing %s %s: it contains your home "
				"directory %s", what, buf, h);
	}
	struct stat st;
	for (size_t i = 0; i < credential_stores_n; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", buf, credential_stores[i]);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return werr_set(e, 0, "refusing %s %s: it holds %s, a credential "
				"store (is this a home directory?)", what, buf, credential_stores[i]);
	}
	return 0;
}

int workspace_resolve(const char *requested, const char *home, char **out, struct werr *e)
{
	char buf[PATH_MAX];
	const char *req = requested ? requested : ".";
	if (!realpath(req, buf)) {
		if (!requested && errno == ENOENT)
			return werr_set(e, ENOENT, "workspace: the current directory was removed "
					"after the shell entered it (cd into the project again, or "
					"pass --workspace DIR)");
		return werr_errno(e, "workspace %s", req);
	}
	struct stat st;
	if (stat(buf, &st) < 0)
		return werr_errno(e, "workspace %s", buf);
	if (!S_ISDIR(st.st_mode))
		return werr_set(e, ENOTDIR, "workspace %s", buf);
	if (workspace_place_check(buf, home, "workspace", e) < 0)
		return -1;
	*out = xstrdup(buf);
	return 0;
}

char *workspace_repo_above(const char *ws, const char *home)
{
	struct stat st;
	_cleanup_free_ char *here = xasprintf("%s/.git", ws);
	if (lstat(here, &st) == 0)
		return NULL;
	_cleanup_free_ char *dir = xstrdup(ws);
	for (char *slash; (slash = strrchr(dir, '/')) && slash != dir;) {
		*slash = '\0';
		if (home && path_is_within(home, dir))
			return NULL; /* a home kept in git (dotfiles) holds every workspace */
		_cleanup_free_ char *git = xasprintf("%s/.git", dir);
		if (lstat(git, &st) == 0)
			return steal_ptr(&dir);
	}
	return NULL;
}
