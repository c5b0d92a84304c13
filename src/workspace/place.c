/* place.c - choosing the workspace: refuse a directory that would expose
 * what the sandbox hides (/, a system directory, a home or what holds one,
 * a credential store, a directory in one or with one in it, the home's
 * .config); and find the repository a workspace lies inside of, which the
 * sandbox does not see. */
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
/* Credential stores, by their names relative to a home: the directories
 * among the stores the detector's rules name (src/detect/builtin_rules.c)
 * and warden's decoys stand in (src/detect/canary.c). A workspace that is
 * one, lies in one or holds one is refused (and so is a client's install
 * tree, src/agents/discover.c). */
const char *const credential_stores[] = {
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".password-store",
	".config/gcloud", ".config/gh", ".local/share/keyrings", ".azure",
};
const size_t credential_stores_n = ARRAY_LEN(credential_stores);

/* The home's directory where many programs keep their settings and
 * tokens, the stores above and others (hub, rclone, ...): not a workspace
 * itself nor held by one; a directory in it that is no credential store
 * may be (~/.config/nvim). */
static const char home_config[] = ".config";

const char *credential_store_around(const char *path)
{
	for (size_t i = 0; i < credential_stores_n; i++) {
		const char *cs = credential_stores[i];
		size_t n = strlen(cs);
		for (const char *s = strstr(path, cs); s; s = strstr(s + 1, cs))
			if (s > path && s[-1] == '/' && (s[n] == '/' || s[n] == '\0'))
				return cs;
	}
	return NULL;
}

const char *credential_store_exposed(const char *path, const char *home, const char **how)
{
	char rbuf[PATH_MAX], real[PATH_MAX];
	if (!home)
		return NULL;
	/* where it leads; one not made yet (a directory a check is about to
	 * make) as it is named */
	const char *rp = realpath(path, rbuf) ? rbuf : path;
	for (size_t i = 0; i < credential_stores_n; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", home, credential_stores[i]);
		/* most homes hold few of them: one stat answers for a missing
		 * one, where realpath reads each component on the way first */
		struct stat st;
		if (stat(p, &st) < 0 || !realpath(p, real))
			continue;
		*how = strcmp(real, rp) == 0 ? "is" : path_is_within(rp, real) ? "lies in" :
		       path_is_within(real, rp) ? "holds" : NULL;
		if (*how)
			return credential_stores[i];
	}
	return NULL;
}

/* buf against the home h's own stores and .config, where they lead (a
 * store may be a symbolic link to another place): the store itself, in
 * it, or holding it; the home's .config itself or holding it. */
static int home_stores_check(const char *buf, const char *h, const char *what, struct werr *e)
{
	char real[PATH_MAX];
	_cleanup_free_ char *config = xasprintf("%s/%s", h, home_config);
	if (realpath(config, real) && path_is_within(real, buf))
		return werr_set(e, 0, "refusing %s %s: it %s your ~/%s, where programs keep their "
				"settings and tokens (~/.config/gh, ~/.config/gcloud, ...); choose "
				"a project's own directory", what, buf,
				strcmp(real, buf) == 0 ? "is" : "holds", home_config);
	const char *how = NULL;
	const char *cs = credential_store_exposed(buf, h, &how);
	if (cs)
		return werr_set(e, 0, "refusing %s %s: it %s your ~/%s, a credential store", what,
				buf, how, cs);
	return 0;
}

/* dir holds a directory named as the store cs: dir/cs, or, dir ending in
 * the first components of a longer name (a .config), the rest of it. */
static bool holds_store(const char *dir, const char *cs)
{
	struct stat st;
	size_t dl = strlen(dir);
	for (const char *rest = cs; rest; rest = strchr(rest, '/')) {
		if (*rest == '/')
			rest++;
		size_t pl = (size_t)(rest - cs); /* the components dir must end in, and '/' */
		if (pl && (dl < pl || dir[dl - pl] != '/' ||
			   strncmp(dir + dl - pl + 1, cs, pl - 1) != 0))
			continue;
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, rest);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return true;
	}
	return false;
}

/* buf by the names of the stores: one, in one, or holding one (a home's
 * copy: is this a home directory?). */
static int named_stores_check(const char *buf, const char *what, struct werr *e)
{
	const char *around = credential_store_around(buf);
	if (around)
		return werr_set(e, 0, "refusing %s %s: it is or lies in %s, a credential store",
				what, buf, around);
	for (size_t i = 0; i < credential_stores_n; i++)
		if (holds_store(buf, credential_stores[i]))
			return werr_set(e, 0, "refusing %s %s: it holds %s, a credential "
				"store (is this a home directory?)", what, buf, credential_stores[i]);
	return 0;
}

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
		if (home_stores_check(buf, h, what, e) < 0)
			return -1;
	}
	return named_stores_check(buf, what, e);
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
