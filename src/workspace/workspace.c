/* workspace.c - choosing and scanning the workspace, on the host side before
 * the sandbox exists: refuse a workspace that would expose what the sandbox
 * hides, and plan the mounts that keep protected paths read-only and secret
 * files masked inside it. */
#include "../sandbox/sandbox.h"

#include "../common/hash.h"
#include "gitconfig.h"
#include "../common/walk.h"
#include "wsrules.h"
#include "wswatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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
	if (!realpath(req, buf))
		return werr_errno(e, "workspace %s", req);
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

static void plan_add(struct ws_plan *plan, enum ws_mount_kind kind, const char *rel)
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
static int check_length(const char *rel, const char *what, struct werr *e)
{
	if (strlen(rel) < PATH_MAX)
		return 0;
	return werr_set(e, ENAMETOOLONG, "refusing the workspace: %s %.200s... lies %zu characters "
			"deep, more than warden can %s", what, rel, strlen(rel),
			strcmp(what, "secret") == 0 ? "mask" : "keep read-only");
}

static bool plan_has(const struct ws_plan *plan, const char *rel)
{
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0)
			return true;
	return false;
}

/* Bind rel read-only: planned so, or made so where it was only pinned on
 * the way to a deeper protected path. */
static void plan_readonly(struct ws_plan *plan, const char *rel)
{
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->m[i].rel, rel) == 0) {
			if (plan->m[i].kind == WS_PIN)
				plan->m[i].kind = WS_PROTECT;
			return;
		}
	plan_add(plan, WS_PROTECT, rel);
}

#define is_placeholder workspace_is_placeholder

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
static int plan_protect(const char *ws, const char *rel, struct ws_plan *plan, struct werr *e)
{
	int wsfd = plan->ws_fd;
	if (check_length(rel, "protected path", e) < 0)
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
			if (slash || plan_has(plan, copy))
				return 0; /* parent missing: nothing to protect yet; or planned */
			plan_add(plan, WS_PLACEHOLDER, copy); /* made by workspace_make_placeholders */
			plan->m[plan->n - 1].abs = xstrdup(abs);
			plan->m[plan->n - 1].dir = dir_by_convention(copy);
			return 0;
		}
		if (S_ISLNK(st.st_mode))
			return werr_set(e, 0, "protected path %s is a symbolic link; warden cannot "
				"keep it read-only (remove the link or unprotect the path)", abs);
		if (!slash && is_placeholder(&st) && !plan_has(plan, copy) &&
		    (!S_ISDIR(st.st_mode) || walk_dir_empty(wsfd, copy))) {
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
			plan_readonly(plan, copy);
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

/* Entries of a .git directory that redirect git to configuration and hooks
 * elsewhere. git cannot live with a placeholder at these names (it dies
 * reading one), so they are bound read-only when present and swept after
 * the session when new. */
static const char *const git_redirects[] = { "commondir", "config.worktree", "worktrees", "modules" };

#define SETID_BITS (S_ISUID | S_ISGID)
#define ID_LEN 80

/* What an entry is, "dev:ino:birth" ("dev:ino" where the file system keeps
 * no birth time), or "gone": the birth time tells a directory removed and
 * made again from the original even when the inode number comes back. */
static void id_at(int dirfd, const char *name, char id[ID_LEN])
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

/* The start-of-session scan: masks (inside .git too), every .git and git
 * redirect, every bare-repository lookalike, and the protected names below
 * the top. */
struct scan {
	const struct policy *pol;
	struct ws_plan *plan;
	const char *ws;
	struct strv git_subs;      /* protected paths inside .git ("hooks", "config") */
	struct strv host_hooks;    /* core.hooksPath values of the host's own configuration */
	bool host_read;            /* ... once read (host_hooks_path) */
	unsigned long entries;
	unsigned bare_parts;       /* of the directory being read: HEAD, objects/, refs/ */
};

#define BARE_HEAD 1u
#define BARE_OBJECTS 2u
#define BARE_REFS 4u
#define BARE_ALL (BARE_HEAD | BARE_OBJECTS | BARE_REFS)

/* What git looks for to take a directory for a repository (a bare one, or
 * a gitdir): HEAD, objects/ and refs/. */
static unsigned bare_part(const struct walk_entry *we)
{
	if (strcmp(we->name, "HEAD") == 0 && (we->type == DT_REG || we->type == DT_LNK))
		return BARE_HEAD;
	if (we->type == DT_DIR && strcmp(we->name, "objects") == 0)
		return BARE_OBJECTS;
	if (we->type == DT_DIR && strcmp(we->name, "refs") == 0)
		return BARE_REFS;
	return 0;
}

static bool is_protected_name(const struct strv *names, const char *name)
{
	for (size_t i = 0; i < names->n; i++)
		if (strcmp(names->v[i], name) == 0)
			return true;
	return false;
}

/* Record a .git entry (directory, file or symlink) and the redirects in one
 * that is a directory. */
static void note_git(struct ws_plan *plan, const struct walk_entry *we)
{
	char id[ID_LEN];
	id_at(we->dirfd, we->name, id);
	strv_push(&plan->git, we->rel);
	strv_push(&plan->git_ids, id);
	if (we->type != DT_DIR)
		return;
	mode_t restore;
	struct stat st;
	int gfd = walk_open_dir(we->dirfd, we->name, &restore, &st);
	if (gfd < 0)
		return;
	for (size_t i = 0; i < ARRAY_LEN(git_redirects); i++) {
		id_at(gfd, git_redirects[i], id);
		if (strcmp(id, "gone") == 0)
			continue;
		strv_push_owned(&plan->git, xasprintf("%s/%s", we->rel, git_redirects[i]));
		strv_push(&plan->git_ids, id);
	}
	walk_close_dir(gfd, restore, we->rel);
}

/* The protected paths inside .git ("hooks", "config"), applied to the
 * repository whose gitdir is at gitdir ("" for the workspace itself). */
static int protect_repo(struct scan *sc, const char *gitdir, struct werr *e)
{
	for (size_t i = 0; i < sc->git_subs.n; i++) {
		_cleanup_free_ char *rel = *gitdir ? xasprintf("%s/%s", gitdir, sc->git_subs.v[i])
						   : xstrdup(sc->git_subs.v[i]);
		if (plan_protect(sc->ws, rel, sc->plan, e) < 0)
			return -1;
	}
	return 0;
}

/* A small regular file of the workspace (never through a symlink, never a
 * FIFO), NUL-terminated, malloc'd; NULL when it is not one. */
static char *read_small(int wsfd, const char *rel)
{
	_cleanup_close_ int fd = openat(wsfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 65536)
		return NULL;
	char *buf = xmalloc((size_t)st.st_size + 1);
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* rest appended to the resolved directory base, "." and ".." taken
 * lexically (what does not exist yet has no symlinks to follow). */
static char *join_lexically(const char *base, const char *rest)
{
	char *out = xmalloc(strlen(base) + strlen(rest) + 2);
	strcpy(out, strcmp(base, "/") == 0 ? "" : base);
	for (const char *p = rest; *p;) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(out, '/');
			if (slash)
				*slash = '\0';
		} else if (len && !(len == 1 && p[0] == '.')) {
			size_t o = strlen(out);
			out[o] = '/';
			memcpy(out + o + 1, p, len);
			out[o + 1 + len] = '\0';
		}
		p = *end ? end + 1 : end;
	}
	if (!*out)
		strcpy(out, "/");
	return out;
}

/* An absolute path as the kernel resolves it: symlinks and ".." in the
 * order they come, as far as the path exists; beyond that, as written. */
static char *resolve_abs(const char *abs)
{
	char buf[PATH_MAX];
	if (abs[0] != '/')
		return NULL;
	if (realpath(abs, buf))
		return xstrdup(buf);
	_cleanup_free_ char *head = xstrdup(abs);
	for (;;) {
		char *slash = strrchr(head, '/');
		*slash = '\0';
		if (realpath(slash == head ? "/" : head, buf))
			return join_lexically(buf, abs + (slash - head) + 1);
	}
}

/* An absolute path as a workspace-relative one when it lies in the
 * workspace (symlinks resolved as the host sees them now, before the agent
 * runs); NULL otherwise. */
static char *ws_relative_abs(const char *ws, const char *abs)
{
	_cleanup_free_ char *real = resolve_abs(abs);
	_cleanup_free_ char *rws = resolve_abs(ws);
	if (!real || !rws || !path_is_within(real, rws) || strcmp(real, rws) == 0)
		return NULL;
	return xstrdup(real + strlen(rws) + (strcmp(rws, "/") == 0 ? 0 : 1));
}

/* target, given relative to the directory `base` (workspace-relative, ""
 * for the top) or absolute: see ws_relative_abs. */
static char *ws_relative(const char *ws, const char *base, const char *target)
{
	_cleanup_free_ char *abs = target[0] == '/' ? xstrdup(target)
			       : xasprintf("%s%s%s/%s", ws, *base ? "/" : "", base, target);
	return ws_relative_abs(ws, abs);
}

/* A path setting as git expands it: "~/" from $HOME, "~user/" from that
 * user's home directory. NULL when there is none (git refuses the value). */
static char *expand_user(const char *v)
{
	if (v[0] != '~')
		return xstrdup(v);
	const char *rest = strchrnul(v, '/');
	const char *home = NULL;
	if (rest == v + 1) {
		home = getenv("HOME");
	} else {
		_cleanup_free_ char *name = xasprintf("%.*s", (int)(rest - v - 1), v + 1);
		struct passwd *pw = getpwnam(name);
		home = pw ? pw->pw_dir : NULL;
	}
	return home && *home ? xasprintf("%s%s", home, rest) : NULL;
}

/* Record each symbolic link in the workspace that resolving abs goes
 * through, as the kernel would (its own workspace-relative path and its
 * target): a link cannot be bound read-only, so the sweep moves aside what
 * replaced one. rws: the workspace, resolved. The path resolved so far, or
 * NULL once resolving stops (a dangling link, a loop). */
static char *follow_links(struct ws_plan *plan, const char *rws, const char *abs, int *hops)
{
	char *cur = xstrdup("/");
	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		const char *next_p = end;
		if (!len || (len == 1 && p[0] == '.')) {
			p = next_p;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(cur, '/');
			slash[slash == cur ? 1 : 0] = '\0';
			p = next_p;
			continue;
		}
		char *next = xasprintf("%s/%.*s", strcmp(cur, "/") == 0 ? "" : cur, (int)len, p);
		struct stat st;
		if (lstat(next, &st) < 0) {
			free(next);
			return cur; /* the rest does not exist: no link there */
		}
		if (!S_ISLNK(st.st_mode)) {
			free(cur);
			cur = next;
			p = next_p;
			continue;
		}
		char target[PATH_MAX];
		ssize_t n = readlink(next, target, sizeof target - 1);
		if (n <= 0 || ++*hops > 40) {
			free(next);
			free(cur);
			return NULL;
		}
		target[n] = '\0';
		if (path_is_within(next, rws) && strcmp(next, rws) != 0) {
			const char *rel = next + strlen(rws) + 1;
			if (!strv_contains(&plan->links, rel)) {
				strv_push(&plan->links, rel);
				strv_push(&plan->link_targets, target);
			}
		}
		free(next);
		_cleanup_free_ char *via = target[0] == '/' ? xstrdup(target)
				       : xasprintf("%s/%s", strcmp(cur, "/") == 0 ? "" : cur, target);
		free(cur);
		if (!(cur = follow_links(plan, rws, via, hops)))
			return NULL;
		p = next_p;
	}
	return cur;
}

/* The links on the way to abs (see follow_links). */
static void note_links(struct scan *sc, const char *abs)
{
	_cleanup_free_ char *rws = resolve_abs(sc->ws);
	int hops = 0;
	if (rws)
		free(follow_links(sc->plan, rws, abs, &hops));
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
			if (plan_protect(sc->ws, path, sc->plan, e) < 0)
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

static void gitcfg_found(void *ctx, enum gitcfg_kind kind, const char *value)
{
	struct gitcfg_walk *w = ctx;
	strv_push(kind == GITCFG_HOOKS_PATH ? &w->hooks : &w->found, value);
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
	_cleanup_free_ char *real = resolve_abs(abs), *lexical = join_lexically("/", abs);
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
	_cleanup_free_ char *rdir = resolve_abs(*dir ? dir : "/");
	return xasprintf("%s\n%s", rel, rdir ? rdir : dir);
}

/* One include directive of the file lex (its path as git names it:
 * relative includes start from its directory). The file it names, when in
 * the workspace, is protected (held by a placeholder when missing) and
 * read in turn. */
static int gitcfg_include(struct gitcfg_walk *w, const char *lex, const char *value,
			  struct werr *e)
{
	_cleanup_free_ char *path = expand_user(value);
	if (!path || !*path || strncmp(path, "%(prefix)/", 10) == 0)
		return 0; /* none, or below git's own installation: outside */
	_cleanup_free_ char *abs = path[0] == '/' ? xstrdup(path)
			       : xasprintf("%.*s/%s", (int)(strrchr(lex, '/') - lex), lex, path);
	note_links(w->sc, abs);
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

/* The host's own git configuration files, system and global, as git
 * finds them from warden's environment: $GIT_CONFIG_SYSTEM or
 * /etc/gitconfig (none with $GIT_CONFIG_NOSYSTEM), $GIT_CONFIG_GLOBAL or
 * ~/.gitconfig and $XDG_CONFIG_HOME/git/config. */
static struct strv host_git_config(void)
{
	struct strv v = { 0 };
	const char *nosys = getenv("GIT_CONFIG_NOSYSTEM"), *sys = getenv("GIT_CONFIG_SYSTEM");
	if (!nosys || !*nosys || strcmp(nosys, "0") == 0 || strcasecmp(nosys, "false") == 0)
		strv_push(&v, sys && sys[0] == '/' ? sys : "/etc/gitconfig");
	const char *global = getenv("GIT_CONFIG_GLOBAL"), *home = getenv("HOME"),
		   *xdg = getenv("XDG_CONFIG_HOME");
	if (global) {
		if (global[0] == '/')
			strv_push(&v, global);
		return v;
	}
	if (home && home[0] == '/') {
		_cleanup_free_ char *g = xasprintf("%s/.gitconfig", home);
		strv_push(&v, g);
	}
	_cleanup_free_ char *x = xdg && xdg[0] == '/' ? xasprintf("%s/git/config", xdg)
			       : home && home[0] == '/' ? xasprintf("%s/.config/git/config", home)
			       : NULL;
	if (x)
		strv_push(&v, x);
	return v;
}

/* Does abs resolve to the workspace's top? */
static bool ws_is_top(const char *ws, const char *abs)
{
	_cleanup_free_ char *real = resolve_abs(abs);
	_cleanup_free_ char *rws = resolve_abs(ws);
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
	_cleanup_strv_ struct strv files = host_git_config();
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
static int protect_hooks_path(struct scan *sc, const char *gitdir, const char *worktree,
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
		_cleanup_free_ char *hp = expand_user(w.hooks.v[i]);
		if (!hp || !*hp)
			continue;
		_cleanup_free_ char *abs = hp[0] == '/' ? xstrdup(hp)
				       : xasprintf("%s%s%s/%s", sc->ws, *worktree ? "/" : "", worktree, hp);
		note_links(sc, abs);
		_cleanup_free_ char *rel = ws_relative_abs(sc->ws, abs);
		const char *origin = rel ? NULL : writable_inside(sc->pol, abs);
		enum presence there;
		if (rel && protect_to_missing(sc, rel, true, &there, e) < 0)
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
	return r;
}

/* A .git file ("gitdir: PATH"): the repository it points at, when it lies
 * in the workspace, has its hooks and config protected like a .git's. */
static int protect_gitfile_target(struct scan *sc, const struct walk_entry *we, struct werr *e)
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
	note_links(sc, gabs);
	_cleanup_free_ char *gitdir = ws_relative_abs(sc->ws, gabs);
	if (!gitdir)
		return 0;
	if (protect_repo(sc, gitdir, e) < 0 || protect_hooks_path(sc, gitdir, dir, e) < 0)
		return -1;
	/* a linked worktree's gitdir: its configuration is the common
	 * directory's, whose relative hooksPath starts here too */
	_cleanup_free_ char *cd_rel = xasprintf("%s/commondir", gitdir);
	_cleanup_free_ char *cd = read_small(sc->plan->ws_fd, cd_rel);
	if (!cd)
		return 0;
	cd[strcspn(cd, "\r\n")] = '\0';
	_cleanup_free_ char *common = *cd ? ws_relative(sc->ws, gitdir, cd) : NULL;
	return common ? protect_hooks_path(sc, common, dir, e) : 0;
}

/* A protected name below the top, there at start: read-only inside when it
 * can be (not a symlink), and recorded for the sweep either way. */
static int protect_named(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	char id[ID_LEN] = "bound";
	if (we->type == DT_LNK)
		id_at(we->dirfd, we->name, id);
	else if (plan_protect(sc->ws, we->rel, sc->plan, e) < 0)
		return -1;
	strv_push(&sc->plan->named, we->rel);
	strv_push(&sc->plan->named_ids, id);
	return 0;
}

/* A secret name: masked (and not looked inside); else descend. */
static int plan_mask(struct scan *sc, const struct walk_entry *we, struct werr *e)
{
	if (!workspace_masked(sc->pol, we->rel, we->name))
		return WALK_DESCEND;
	if (check_length(we->rel, "secret", e) < 0)
		return -1;
	plan_add(sc->plan, we->type == DT_DIR ? WS_MASK_DIR : WS_MASK_FILE, we->rel);
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
	if (we->type != DT_SOCK || plan_has(sc->plan, we->rel) ||
	    fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) ||
	    is_placeholder(&st))
		return 0;
	if (check_length(we->rel, "secret", e) < 0)
		return -1;
	plan_add(sc->plan, WS_MASK_FILE, we->rel);
	return 1;
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
		return plan_mask(sc, we, e);
	}
	if (++sc->entries > SCAN_MAX_ENTRIES)
		return werr_set(e, 0, "workspace has more than %d entries; warden cannot check "
				"them all for secrets (choose a smaller workspace)", SCAN_MAX_ENTRIES);
	sc->bare_parts |= bare_part(we);
	bool below = strchr(we->rel, '/') != NULL;
	/* Before the symlink skip: git follows a .git symlink, and a .git
	 * file ("gitdir: ...") redirects it too. */
	if (strcmp(we->name, ".git") == 0) {
		note_git(sc->plan, we);
		if (we->type == DT_REG) /* a submodule's or worktree's: read-only */
			return plan_protect(sc->ws, we->rel, sc->plan, e) < 0 ||
					       protect_gitfile_target(sc, we, e) < 0
				       ? -1 : WALK_SKIP;
		if (we->type != DT_DIR)
			return WALK_SKIP;
		if (below && protect_repo(sc, we->rel, e) < 0)
			return -1;
		_cleanup_free_ char *top = xstrdup(we->rel);
		char *slash = strrchr(top, '/');
		*(slash ? slash : top) = '\0';
		if (protect_hooks_path(sc, we->rel, top, e) < 0)
			return -1;
		wswatch_add(sc->plan->watch, we->dirfd, we->name, we->rel); /* config, hooks */
		return WALK_DESCEND_TAGGED;
	}
	if (below && is_protected_name(&sc->plan->names, we->name) && protect_named(sc, we, e) < 0)
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
	id_at(dirfd, "", id);
	strv_push(&sc->plan->bare, rel);
	strv_push(&sc->plan->bare_ids, id);
	return protect_repo(sc, rel, e) < 0 ? -1 : protect_hooks_path(sc, rel, rel, e);
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
			if (path_is_within(plan->m[i].rel, plan->m[ro[j]].rel))
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
			continue;
		}
		plan->m[kept++] = *m;
	}
	plan->n = kept;
	free(ro);
	free(masked);
}

int workspace_plan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e)
{
	/* Before anything is looked at: an inode changed from now on has a
	 * later ctime (ctime is never earlier than the real-time clock's
	 * reading before the change). */
	clock_gettime(CLOCK_REALTIME, &plan->t0);
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
		if (plan_protect(ws, pr, plan, e) < 0)
			goto fail;
	}
	/* the top's .git as a file (a submodule or a worktree): read-only */
	struct stat st;
	if (fstatat(plan->ws_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    plan_protect(ws, ".git", plan, e) < 0)
		goto fail;
	const struct walk_ops ops = { .entry = plan_entry, .dir_done = plan_dir_done };
	if (walk_tree(plan->ws_fd, &ops, &sc, e) < 0)
		goto fail;
	strv_free(&sc.git_subs);
	strv_free(&sc.host_hooks);
	/* Git redirects present now stay as they are: read-only. */
	for (size_t i = 0; i < plan->git.n; i++) {
		const char *g = plan->git.v[i];
		const char *base = strrchr(g, '/');
		if (strcmp(base ? base + 1 : g, ".git") != 0)
			plan_readonly(plan, g);
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

/* The end-of-session sweep. */
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
	char *suffix;              /* "warden-quarantine-SESSION" */
	struct ws_sweep *out;
	/* in the directory being read: names to move aside once it is read */
	struct strv pending_git, pending_config;
	unsigned bare_parts;       /* and what it holds of a repository */
};

/* There at start, and the same entry: a name alone is not enough (a
 * concurrent session's sweep may have moved the original away, and an
 * agent made a new one under the same name). */
static bool known(const struct table *t, const char *rel, const char *id)
{
	const char *was = table_id(t, rel);
	return was && strcmp(was, id) == 0;
}

static void swept_add(struct ws_sweep *out, struct ws_swept it)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 8;
		out->v = xrealloc(out->v, out->cap * sizeof *out->v);
	}
	out->v[out->n++] = it;
}

/* Move name (whose workspace path is rel) aside in dirfd, and record it. */
static void move_aside(struct sweep *sw, enum ws_swept_kind kind, int dirfd, const char *name,
		       const char *rel)
{
	char *to = walk_rename_aside(dirfd, name, sw->suffix);
	size_t dir_len = strlen(rel) - strlen(name);
	if (!to) {
		wnote("could not move %s/%s aside: %s", sw->out->ws, rel, strerror(errno));
		return;
	}
	swept_add(sw->out, (struct ws_swept){ .kind = kind, .rel = xstrdup(rel),
		.to = xasprintf("%s/%.*s%s", sw->out->ws, (int)dir_len, rel, to) });
	free(to);
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
	for (size_t i = 0; i < ARRAY_LEN(git_redirects); i++) {
		char id[ID_LEN];
		id_at(gfd, git_redirects[i], id);
		if (strcmp(id, "gone") == 0)
			continue;
		_cleanup_free_ char *rel = xasprintf("%s/%s", we->rel, git_redirects[i]);
		if (!known(&sw->git, rel, id))
			move_aside(sw, WS_SWEPT_GIT, gfd, git_redirects[i], rel);
	}
	walk_close_dir(gfd, restore, we->rel);
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
	const struct timespec *t0 = &sw->plan->t0;
	if (st.st_ctim.tv_sec < t0->tv_sec ||
	    (st.st_ctim.tv_sec == t0->tv_sec && st.st_ctim.tv_nsec <= t0->tv_nsec))
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
	id_at(we->dirfd, we->name, id);
	if (was && strcmp(was, id) == 0)
		return false;
	if (plan_has(sw->plan, we->rel))
		return false; /* the plan's own placeholder, or a path it protected */
	struct stat st;
	if (fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_placeholder(&st)) {
		if (!S_ISDIR(st.st_mode))
			return false;
		int fd = openat(we->dirfd, we->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		bool empty = d != NULL;
		struct dirent *de;
		while (empty && (de = readdir(d)))
			empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		if (d)
			closedir(d);
		else if (fd >= 0)
			close(fd);
		if (empty)
			return false;
	}
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

static int sweep_entry(void *ctx, const struct walk_entry *we, struct werr *e)
{
	(void)e;
	struct sweep *sw = ctx;
	sw->bare_parts |= bare_part(we);
	if (strcmp(we->name, ".git") == 0) {
		char id[ID_LEN];
		id_at(we->dirfd, we->name, id);
		if (!known(&sw->git, we->rel, id))
			strv_push(&sw->pending_git, we->name); /* after the directory is read */
		else if (we->type == DT_DIR)
			sweep_redirects(sw, we);
		return WALK_SKIP;
	}
	if (!same_link(sw, we) || (strchr(we->rel, '/') &&
				   is_protected_name(&sw->plan->names, we->name) && new_config(sw, we))) {
		strv_push(&sw->pending_config, we->name);
		return WALK_SKIP;
	}
	if (we->type == DT_REG)
		sweep_setid(sw, we);
	return WALK_DESCEND;
}

static int sweep_dir_done(void *ctx, int dirfd, const char *rel, bool tagged, struct werr *e)
{
	(void)e;
	struct sweep *sw = ctx;
	const struct strv *lists[] = { &sw->pending_git, &sw->pending_config };
	for (size_t l = 0; l < ARRAY_LEN(lists); l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *name = lists[l]->v[i];
			_cleanup_free_ char *r = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
			move_aside(sw, l ? WS_SWEPT_CONFIG : WS_SWEPT_GIT, dirfd, name, r);
		}
	strv_free(&sw->pending_git);
	strv_free(&sw->pending_config);
	/* A directory made to look like a repository (git would take it for
	 * a bare one, or for the gitdir a .git file names, and run its hooks
	 * and config): its HEAD moved aside, which is enough for git not to
	 * take it for one, and works for the workspace itself too. */
	unsigned parts = sw->bare_parts;
	sw->bare_parts = 0;
	if (tagged || parts != BARE_ALL)
		return 0;
	char id[ID_LEN];
	id_at(dirfd, "", id);
	if (known(&sw->bare, rel, id))
		return 0;
	_cleanup_free_ char *head = *rel ? xasprintf("%s/HEAD", rel) : xstrdup("HEAD");
	move_aside(sw, WS_SWEPT_BARE, dirfd, "HEAD", head);
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

int workspace_sweep(const char *ws, const struct ws_plan *plan, const char *session,
		    struct ws_sweep *out, struct werr *e)
{
	if (plan->ws_fd < 0)
		return werr_set(e, EBADF, "sweep: the workspace %s was never opened", ws);
	free(out->ws);
	out->ws = path_now(plan->ws_fd, ws);
	struct sweep sw = { .plan = plan, .out = out,
		.suffix = xasprintf("warden-quarantine-%s", session) };
	table_make(&sw.git, &plan->git, &plan->git_ids);
	table_make(&sw.bare, &plan->bare, &plan->bare_ids);
	table_make(&sw.named, &plan->named, &plan->named_ids);
	table_make(&sw.links, &plan->links, &plan->link_targets);
	const struct walk_ops ops = { .entry = sweep_entry, .dir_done = sweep_dir_done,
				      .closed = sweep_closed };
	int r = walk_tree(plan->ws_fd, &ops, &sw, e);
	strv_free(&sw.pending_git);
	strv_free(&sw.pending_config);
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
	}
	free(s->v);
	free(s->ws);
	*s = (struct ws_sweep){ 0 };
}

/* A directory placeholder is an inode of its own. The first socket
 * placeholder is a new inode; the other sockets are links to it (a new
 * inode where linking fails: another file system, a link limit). */
static void make_placeholders(struct ws_plan *plan)
{
	int wsfd = plan->ws_fd;
	const struct ws_mount *first = NULL;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->adopted)
			continue;
		int r = -1;
		if (m->dir) /* from the stash (phstash.h), else made */
			r = phstash_take(&plan->stash, wsfd, m->rel) == 0
				    ? 0 : mkdirat(wsfd, m->rel, PLACEHOLDER_DIR_MODE);
		else if (first)
			r = linkat(wsfd, first->rel, wsfd, m->rel, 0);
		if (r < 0 && !m->dir && (!first || (errno != EEXIST && errno != EACCES && errno != EROFS)))
			r = mknodat(wsfd, m->rel, S_IFSOCK | PLACEHOLDER_SOCK_MODE, 0);
		mode_t want = m->dir ? PLACEHOLDER_DIR_MODE : PLACEHOLDER_SOCK_MODE;
		struct stat st;
		if (r < 0) {
			m->made = (struct ws_made){ .err = errno };
		} else if (fstatat(wsfd, m->rel, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			   !(m->dir ? S_ISDIR(st.st_mode) : S_ISSOCK(st.st_mode))) {
			m->made = (struct ws_made){ .err = EIO }; /* replaced at once: not ours */
		} else if ((st.st_mode & 07777) != want && fchmodat(wsfd, m->rel, want, 0) < 0) {
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
	/* A workspace directory the agent closed (chmod 000 .; the user's
	 * own) is opened for the removal and given its mode back. */
	struct stat root;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", plan->ws_fd);
	bool reopen = fstat(plan->ws_fd, &root) == 0 && root.st_uid == geteuid() &&
		      (root.st_mode & 0300) != 0300 && chmod(self, (root.st_mode & 07777) | 0300) == 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->made.err != 0)
			continue;
		struct stat st;
		if (fstatat(plan->ws_fd, m->rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				wnote("could not check placeholder %s: %s", m->abs, strerror(errno));
			continue;
		}
		if (!is_placeholder(&st) || st.st_dev != m->made.dev || st.st_ino != m->made.ino)
			wnote("placeholder %s was replaced or changed during the session; left as it is",
			      m->abs);
		else if (phstash_give(&plan->stash, plan->ws_fd, m->rel, &st) ||
			 unlinkat(plan->ws_fd, m->rel, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0)
			continue;
		else if (errno == ENOTEMPTY || errno == EEXIST)
			wnote("placeholder %s was filled during the session; left as it is", m->abs);
		else if (errno != ENOENT)
			wnote("could not remove placeholder %s: %s", m->abs, strerror(errno));
	}
	if (reopen && chmod(self, root.st_mode & 07777) < 0)
		wnote("could not give the workspace its mode %04o back: %s",
		      (unsigned)(root.st_mode & 07777), strerror(errno));
}

void workspace_remove_stale_placeholders(int wsfd, const struct strv *rels)
{
	for (size_t i = 0; i < rels->n; i++) {
		const char *rel = rels->v[i];
		const char *sl = strrchr(rel, '/');
		_cleanup_free_ char *parent = sl ? xasprintf("%.*s", (int)(sl - rel), rel) : NULL;
		_cleanup_close_ int pfd = parent ? open_beneath(wsfd, parent, O_RDONLY | O_DIRECTORY, 0)
						 : fcntl(wsfd, F_DUPFD_CLOEXEC, 0);
		const char *name = sl ? sl + 1 : rel;
		struct stat st;
		if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !is_placeholder(&st))
			continue;
		if (unlinkat(pfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 &&
		    errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
			wnote("could not remove the placeholder %s left by a killed session: %s", rel,
			      strerror(errno));
	}
}

int workspace_lock_open(const char *ws, const char *lockdir, struct werr *e)
{
	if (mkdir(lockdir, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "creating %s", lockdir);
	char sum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), sum);
	_cleanup_free_ char *path = xasprintf("%s/ws-%.32s.lock", lockdir, sum);
	int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return werr_errno(e, "opening the workspace lock %s", path);
	return fd;
}

int workspace_lock(const char *ws, const char *lockdir, struct ws_plan *plan, struct werr *e)
{
	int fd = workspace_lock_open(ws, lockdir, e);
	if (fd < 0)
		return -1;
	/* only warden takes it, and holds it exclusively for a moment */
	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			return werr_errno(e, "locking the lock of workspace %s", ws);
		}
	plan->lock_fd = fd;
	phstash_open(&plan->stash, lockdir);
	return 0;
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
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->m[i].rel);
		free(plan->m[i].abs);
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
}
