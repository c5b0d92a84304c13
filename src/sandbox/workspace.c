/* workspace.c - choosing and scanning the workspace, on the host side before
 * the sandbox exists: refuse a workspace that would expose what the sandbox
 * hides, and plan the mounts that keep protected paths read-only and secret
 * files masked inside it. */
#include "sandbox.h"

#include "../common/hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

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

#define SCAN_MAX_ENTRIES 1000000

int workspace_resolve(const char *requested, const char *home, char **out, struct werr *e)
{
	char buf[PATH_MAX];
	const char *req = requested ? requested : ".";
	if (!realpath(req, buf))
		return werr_errno(e, "workspace %s", req);
	struct stat st;
	if (stat(buf, &st) < 0)
		return werr_errno(e, "workspace %s", buf);
	if (!S_ISDIR(st.st_mode))
		return werr_set(e, ENOTDIR, "workspace %s", buf);

	for (size_t i = 0; i < ARRAY_LEN(forbidden_exact); i++)
		if (strcmp(buf, forbidden_exact[i]) == 0)
			return werr_set(e, 0, "refusing workspace %s: it would expose far more "
				"than a project (choose a project directory)", buf);
	for (size_t i = 0; i < ARRAY_LEN(forbidden_trees); i++)
		if (path_is_within(buf, forbidden_trees[i]))
			return werr_set(e, 0, "refusing workspace %s: it lies inside the system "
				"directory %s", buf, forbidden_trees[i]);
	if (home) {
		char hbuf[PATH_MAX];
		const char *h = realpath(home, hbuf) ? hbuf : home;
		if (strcmp(buf, h) == 0)
			return werr_set(e, 0, "refusing workspace %s: it is your home directory, "
				"whose dotfiles and credentials the sandbox hides", buf);
		if (path_is_within(h, buf))
			return werr_set(e, 0, "refusing workspace %s: it contains your home "
				"directory %s", buf, h);
	}
	for (size_t i = 0; i < credential_stores_n; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", buf, credential_stores[i]);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return werr_set(e, 0, "refusing workspace %s: it holds %s, a credential "
				"store (is this a home directory?)", buf, credential_stores[i]);
	}
	*out = xstrdup(buf);
	return 0;
}

static void plan_add(struct ws_plan *plan, enum ws_mount_kind kind, const char *rel)
{
	if (plan->n == plan->cap) {
		plan->cap = plan->cap ? plan->cap * 2 : 16;
		plan->m = xrealloc(plan->m, plan->cap * sizeof *plan->m);
	}
	plan->m[plan->n] = (struct ws_mount){ .kind = kind, .rel = xstrdup(rel) };
	plan->n++;
}

static bool plan_has(const struct ws_plan *plan, const char *rel)
{
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0)
			return true;
	return false;
}

/* What warden makes for a missing protected path: an empty directory of
 * mode 01555 for a name that is a directory by convention (sticky and
 * read-only: a mode no tool gives a directory, which is how sessions
 * recognise it), a socket entry of mode 0444 for any other (a listening
 * socket's entry has the umask's mode, and is never created read-only). */
#define PLACEHOLDER_DIR_MODE 01555
#define PLACEHOLDER_SOCK_MODE 0444

static bool is_placeholder(const struct stat *st)
{
	mode_t mode = st->st_mode & 07777;
	return (S_ISSOCK(st->st_mode) && mode == PLACEHOLDER_SOCK_MODE) ||
	       (S_ISDIR(st->st_mode) && mode == PLACEHOLDER_DIR_MODE);
}

/* Protected names that are directories by convention, at any depth: a tool
 * that finds anything else there fails (Claude Code shows a blocking
 * settings error for a .claude that is not a directory). */
static const char *const dir_names[] = { ".claude", ".codex", ".cursor", ".idea", ".vscode", ".warden" };

static bool dir_by_convention(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	for (size_t i = 0; i < ARRAY_LEN(dir_names); i++)
		if (strcmp(base, dir_names[i]) == 0)
			return true;
	size_t n = strlen(rel);
	return strcmp(rel, ".git/hooks") == 0 ||
	       (n > strlen("/.git/hooks") && strcmp(rel + n - strlen("/.git/hooks"), "/.git/hooks") == 0);
}

/* An empty directory: only such a one is adopted as a placeholder (one a
 * user filled stays theirs, bound read-only like any protected path). */
static bool dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *de;
	bool empty = true;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* Plan one protected path: pin every directory on the way (so it cannot be
 * renamed away), bind the path read-only, or create a placeholder when it is
 * missing and its parent exists. */
static int plan_protect(const char *ws, const char *rel, struct ws_plan *plan, struct werr *e)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	char *p = copy;
	struct stat st;
	for (;;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		_cleanup_free_ char *abs = xasprintf("%s/%s", ws, copy);
		if (lstat(abs, &st) < 0) {
			if (errno != ENOENT)
				return werr_errno(e, "protected path %s", abs);
			if (slash)
				return 0; /* parent missing: nothing to protect yet */
			plan_add(plan, WS_PLACEHOLDER, copy); /* made by workspace_make_placeholders */
			plan->m[plan->n - 1].abs = xstrdup(abs);
			plan->m[plan->n - 1].dir = dir_by_convention(copy);
			return 0;
		}
		if (S_ISLNK(st.st_mode))
			return werr_set(e, 0, "protected path %s is a symbolic link; warden cannot "
				"keep it read-only (remove the link or unprotect the path)", abs);
		if (!slash && is_placeholder(&st) && !plan_has(plan, copy) &&
		    (!S_ISDIR(st.st_mode) || dir_is_empty(abs))) {
			/* a running session's: shared, and removed by the last */
			plan_add(plan, WS_PLACEHOLDER, copy);
			struct ws_mount *m = &plan->m[plan->n - 1];
			m->abs = xstrdup(abs);
			m->adopted = true;
			m->dir = S_ISDIR(st.st_mode);
			m->made = (struct ws_made){ .dev = st.st_dev, .ino = st.st_ino };
			return 0;
		}
		if (!slash) {
			if (!plan_has(plan, copy))
				plan_add(plan, WS_PROTECT, copy);
			return 0;
		}
		if (!S_ISDIR(st.st_mode))
			return 0; /* a file where a directory would be: path cannot exist */
		if (!plan_has(plan, copy))
			plan_add(plan, WS_PIN, copy);
		*slash = '/';
		p = slash + 1;
	}
}

static bool mask_matches(const struct policy *pol, const char *rel, const char *name)
{
	for (size_t i = 0; i < pol->mask.n; i++) {
		const char *pat = pol->mask.v[i];
		if (strchr(pat, '/') ? fnmatch(pat, rel, FNM_PATHNAME) == 0
				     : fnmatch(pat, name, 0) == 0)
			return true;
	}
	return false;
}

/* Entries of a .git directory that redirect git to configuration and hooks
 * elsewhere. git cannot live with a placeholder at these names (it dies
 * reading one), so they are bound read-only when present and swept after
 * the session when new. */
static const char *const git_redirects[] = { "commondir", "config.worktree", "worktrees", "modules" };

struct scan {
	const struct policy *pol;
	struct ws_plan *plan;      /* masks go here; NULL on the sweep's rescan */
	struct strv *git;          /* every .git and git redirect found */
	struct strv *ids;          /* the inode of each ("dev:ino") */
	unsigned long entries;
};

static void note_one(struct scan *sc, int dirfd_, const char *name, const char *rel)
{
	struct stat st;
	strv_push(sc->git, rel);
	if (fstatat(dirfd_, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		strv_push_owned(sc->ids, xasprintf("%llu:%llu", (unsigned long long)st.st_dev,
						   (unsigned long long)st.st_ino));
	else
		strv_push(sc->ids, "gone");
}

/* Record a .git entry (directory or file) and the redirects inside it. */
static void note_git(struct scan *sc, int dirfd_, const char *rel, bool is_dir)
{
	note_one(sc, dirfd_, ".git", rel);
	if (!is_dir)
		return;
	for (size_t i = 0; i < ARRAY_LEN(git_redirects); i++) {
		_cleanup_free_ char *sub = xasprintf("%s/%s", rel, git_redirects[i]);
		_cleanup_free_ char *in = xasprintf(".git/%s", git_redirects[i]);
		struct stat st;
		if (fstatat(dirfd_, in, &st, AT_SYMLINK_NOFOLLOW) == 0)
			note_one(sc, dirfd_, in, sub);
	}
}

/* Depth-first walk below fd (whose workspace-relative path is rel, "" for
 * the root), never following symlinks, skipping .git. */
static int scan_dir(struct scan *sc, int fd, const char *rel, struct werr *e)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return werr_errno(e, "scanning workspace directory %s", *rel ? rel : ".");
	}
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		/* The sweep has no limit: an agent must not be able to hide a
		 * repository behind a million files. */
		if (++sc->entries > SCAN_MAX_ENTRIES && sc->plan) {
			r = werr_set(e, 0, "workspace has more than %d entries; warden cannot "
				"check them all for secrets (choose a smaller workspace)", SCAN_MAX_ENTRIES);
			break;
		}
		_cleanup_free_ char *child = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		/* Before the symlink skip: git follows a .git symlink, and a .git
		 * file ("gitdir: ...") redirects it too. */
		if (strcmp(name, ".git") == 0) {
			note_git(sc, dirfd(d), child, type == DT_DIR);
			continue;
		}
		if (type == DT_LNK)
			continue;
		if (sc->plan && mask_matches(sc->pol, child, name)) {
			plan_add(sc->plan, type == DT_DIR ? WS_MASK_DIR : WS_MASK_FILE, child);
			continue;
		}
		if (type == DT_DIR) {
			int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				/* unreadable to the user is unreadable to the agent; gone
				 * since readdir (a placeholder being removed, a host
				 * process at work) is nothing to scan */
				if (errno == EACCES && !sc->plan)
					wnote("sweep: cannot look inside %s (permission denied); a git "
					      "repository there was not moved aside", child);
				if (errno == EACCES || errno == ENOENT || errno == ENOTDIR)
					continue;
				r = werr_errno(e, "scanning workspace directory %s", child);
				break;
			}
			if ((r = scan_dir(sc, sub, child, e)) < 0)
				break;
		}
	}
	closedir(d);
	return r;
}

int workspace_plan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e)
{
	for (size_t i = 0; i < p->protect.n; i++)
		if (plan_protect(ws, p->protect.v[i], plan, e) < 0)
			return -1;
	int fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "opening workspace %s", ws);
	struct scan sc = { .pol = p, .plan = plan, .git = &plan->git, .ids = &plan->git_ids };
	if (scan_dir(&sc, fd, "", e) < 0)
		return -1;
	/* Git redirects present now stay as they are: read-only. */
	for (size_t i = 0; i < plan->git.n; i++) {
		const char *g = plan->git.v[i];
		const char *base = strrchr(g, '/');
		if (strcmp(base ? base + 1 : g, ".git") != 0 && !plan_has(plan, g))
			plan_add(plan, WS_PROTECT, g);
	}
	return 0;
}

/* Rename path aside as PATH.warden-quarantine-SESSION; the new name is
 * returned (malloc'd) or NULL when the rename failed. */
static char *quarantine(const char *ws, const char *rel, const char *session)
{
	_cleanup_free_ char *from = xasprintf("%s/%s", ws, rel);
	char *to = xasprintf("%s.warden-quarantine-%s", from, session);
	if (rename(from, to) == 0)
		return to;
	wnote("could not move %s aside: %s", from, strerror(errno));
	free(to);
	return NULL;
}

int workspace_sweep(const char *ws, const struct ws_plan *plan, const char *session,
		    struct strv *moved, struct werr *e)
{
	int fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "sweep: opening workspace %s", ws);
	struct strv now = { 0 }, ids = { 0 };
	struct scan sc = { .git = &now, .ids = &ids };
	int r = scan_dir(&sc, fd, "", e);
	const char *last = NULL; /* a quarantined .git: its redirects went along */
	for (size_t i = 0; r == 0 && i < now.n; i++) {
		const char *g = now.v[i];
		/* There at start, and the same entry: a name alone is not enough
		 * (a concurrent session's sweep may have moved the original away,
		 * and an agent made a new one under the same name). */
		bool known = false;
		for (size_t k = 0; !known && k < plan->git.n; k++)
			known = strcmp(plan->git.v[k], g) == 0 && strcmp(plan->git_ids.v[k], ids.v[i]) == 0;
		if (known || (last && path_is_within(g, last)))
			continue;
		char *to = quarantine(ws, g, session);
		if (!to)
			continue;
		strv_push(moved, g);
		strv_push_owned(moved, to);
		last = g;
	}
	strv_free(&now);
	strv_free(&ids);
	return r;
}

/* A directory placeholder is an inode of its own. The first socket
 * placeholder is a new inode; the other sockets are links to it (a new
 * inode where linking fails: another file system, a link limit). */
static void make_placeholders(struct ws_plan *plan)
{
	const struct ws_mount *first = NULL;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->adopted)
			continue;
		int r = -1;
		if (m->dir)
			r = mkdir(m->abs, PLACEHOLDER_DIR_MODE);
		else if (first)
			r = link(first->abs, m->abs);
		if (r < 0 && !m->dir && (!first || (errno != EEXIST && errno != EACCES && errno != EROFS)))
			r = mknod(m->abs, S_IFSOCK | PLACEHOLDER_SOCK_MODE, 0);
		mode_t want = m->dir ? PLACEHOLDER_DIR_MODE : PLACEHOLDER_SOCK_MODE;
		struct stat st;
		if (r < 0) {
			m->made = (struct ws_made){ .err = errno };
		} else if (lstat(m->abs, &st) < 0 || !(m->dir ? S_ISDIR(st.st_mode) : S_ISSOCK(st.st_mode))) {
			m->made = (struct ws_made){ .err = EIO }; /* replaced at once: not ours */
		} else if ((st.st_mode & 07777) != want && chmod(m->abs, want) < 0) {
			/* exactly that mode whatever the umask: how sessions recognise it */
			m->made = (struct ws_made){ .err = errno };
		} else {
			m->made = (struct ws_made){ .dev = st.st_dev, .ino = st.st_ino };
			if (!m->dir && (!first || first->made.ino != st.st_ino || first->made.dev != st.st_dev))
				first = m;
		}
	}
}

int workspace_make_placeholders(struct ws_plan *plan, struct werr *e)
{
	make_placeholders(plan);
	plan->placed = true;
	int r = 0;
	for (size_t i = 0; i < plan->n; i++) {
		const struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->made.err == 0)
			continue;
		/* Created meanwhile: init binds it read-only as it is. Not
		 * creatable by this user: not creatable by the agent either (same
		 * uid), and init skips it. */
		if (m->made.err != EEXIST && m->made.err != EACCES && m->made.err != EROFS &&
		    m->made.err != EPERM && r == 0)
			r = werr_set(e, m->made.err, "creating placeholder for protected path %s", m->abs);
	}
	return r;
}

void workspace_remove_placeholders(struct ws_plan *plan)
{
	if (!plan->placed)
		return;
	plan->placed = false;
	/* Another session still runs here: its sandbox has these mounted. */
	if (plan->lock_fd >= 0 && flock(plan->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->made.err != 0)
			continue;
		struct stat st;
		if (lstat(m->abs, &st) < 0) {
			if (errno != ENOENT)
				wnote("could not check placeholder %s: %s", m->abs, strerror(errno));
			continue;
		}
		if (!is_placeholder(&st) || st.st_dev != m->made.dev || st.st_ino != m->made.ino)
			wnote("placeholder %s was replaced or changed during the session; left as it is",
			      m->abs);
		else if (!S_ISDIR(st.st_mode) ? unlink(m->abs) == 0 : rmdir(m->abs) == 0)
			continue;
		else if (errno == ENOTEMPTY || errno == EEXIST)
			wnote("placeholder %s was filled during the session; left as it is", m->abs);
		else if (errno != ENOENT)
			wnote("could not remove placeholder %s: %s", m->abs, strerror(errno));
	}
}

int workspace_lock(const char *ws, const char *lockdir, struct ws_plan *plan, struct werr *e)
{
	if (mkdir(lockdir, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "creating %s", lockdir);
	char sum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), sum);
	_cleanup_free_ char *path = xasprintf("%s/ws-%.32s.lock", lockdir, sum);
	int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return werr_errno(e, "opening the workspace lock %s", path);
	/* only warden takes it, and holds it exclusively for a moment */
	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			return werr_errno(e, "locking %s", path);
		}
	plan->lock_fd = fd;
	return 0;
}

void workspace_cleanup(struct ws_plan *plan)
{
	workspace_remove_placeholders(plan);
	if (plan->lock_fd >= 0) {
		close(plan->lock_fd);
		plan->lock_fd = -1;
	}
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->m[i].rel);
		free(plan->m[i].abs);
	}
	free(plan->m);
	plan->m = NULL;
	plan->n = plan->cap = 0;
	strv_free(&plan->git);
	strv_free(&plan->git_ids);
}
