/* execplan.c - where the exec rules of the policy change the sandbox's file
 * system, decided on the supervisor side before the sandbox starts: each
 * `exec allow-writable PATH` placed in the writable place that holds it
 * inside (the workspace, /tmp, /var/tmp, /dev/shm, the home, an agent's
 * state, a read-write path of the profile), refused anywhere else, and made
 * as a directory on the host when missing, never through a symlink; and, in
 * strict mode (`exec strict`), the denied programs (`exec deny FILE`) that
 * the sandbox shows read-only, which init hides (mounts.c). */
#include "sandbox.h"
#include "../audit/escape.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A place of the sandbox's file system a path can lie in. */
enum place_kind {
	PLACE_NONE,
	PLACE_TMPFS,     /* /tmp, /var/tmp, /dev/shm, the home: the sandbox's own tmpfs */
	PLACE_STATE,     /* an agent's state in the home, bound from the host */
	PLACE_PATH,      /* a read-only or read-write path of the profile */
	PLACE_WORKSPACE,
	PLACE_SYSTEM,    /* the system directories and /etc, read-only */
};

struct place {
	enum place_kind kind;
	const char *inside;              /* where it is inside */
	const struct policy_path *pp;    /* PLACE_PATH */
	const struct home_bind *hb;      /* PLACE_STATE */
	char *own;                       /* PLACE_STATE: inside, allocated */
};

static const char *const scratch_places[] = { "/tmp", "/var/tmp", "/dev/shm", AGENT_HOME };
static const char *const system_places[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
};

static void place_free(struct place *p)
{
	free(p->own);
}

/* Take candidate c as the best place for path when it holds path and lies
 * at least as deep as the best so far (equal depth: the same directory,
 * mounted later). */
static void consider(struct place *best, const char *path, struct place c)
{
	if (path_is_within(path, c.inside) &&
	    (best->kind == PLACE_NONE || strlen(c.inside) >= strlen(best->inside))) {
		place_free(best);
		*best = c;
	} else {
		place_free(&c);
	}
}

/* The place holding path inside: of the places that contain it, the one
 * mounted last, which is the deepest (mounts.c mounts the tmpfs, the
 * agent's state, then the profile's paths and the workspace shallow first,
 * the workspace after a path of its own depth). A profile path missing on
 * the host is not in the sandbox (build_binds skips it). */
static struct place place_of(const struct sandbox_spec *s, const char *path)
{
	struct place best = { .kind = PLACE_NONE };
	for (size_t i = 0; i < ARRAY_LEN(system_places); i++)
		consider(&best, path, (struct place){ .kind = PLACE_SYSTEM, .inside = system_places[i] });
	for (size_t i = 0; i < ARRAY_LEN(scratch_places); i++)
		consider(&best, path, (struct place){ .kind = PLACE_TMPFS, .inside = scratch_places[i] });
	for (size_t i = 0; i < s->nhome_binds; i++) {
		char *in = xasprintf(AGENT_HOME "/%s", s->home_binds[i].name);
		consider(&best, path, (struct place){ .kind = PLACE_STATE, .inside = in, .own = in,
						      .hb = &s->home_binds[i] });
	}
	const struct policy *pol = s->policy;
	for (size_t i = 0; i < pol->npaths; i++) {
		const struct policy_path *pp = &pol->paths[i];
		struct stat st;
		if (strcmp(pp->path, s->workspace) == 0 || stat(pp->path, &st) < 0)
			continue;
		consider(&best, path, (struct place){ .kind = PLACE_PATH, .inside = pp->path, .pp = pp });
	}
	consider(&best, path, (struct place){ .kind = PLACE_WORKSPACE, .inside = s->workspace });
	return best;
}

int exec_open_dir_beneath(int dirfd, const char *rel, bool make)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf)
		return errno = ENAMETOOLONG, -1;
	int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
		_cleanup_close_ int cur = fd;
		if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0)
			return errno = EINVAL, -1;
		if (make && mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
			return -1;
		fd = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			int err = errno;
			struct stat st;
			if (fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
				err = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
			return errno = err, -1;
		}
	}
	return fd;
}

/* Why exec_open_dir_beneath failed, for a message. */
static const char *beneath_why(int err)
{
	switch (err) {
	case ELOOP:
		return "it or a directory on its way is a symlink, which warden does not follow";
	case ENOTDIR:
		return "it or a part of its way is not a directory";
	default:
		return "it cannot be made or opened as a directory";
	}
}

/* rel (workspace-relative) within dir (workspace-relative)? */
static bool rel_within(const char *rel, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(rel, dir, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

/* A path in the workspace that the sandbox keeps read-only or masked, or
 * that the sweep would move aside once made (a .git or a protected name
 * below the top), cannot be an executable writable place. */
static int workspace_allows(const struct sandbox_spec *s, const char *path, const char *rel,
			    struct werr *e)
{
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct ws_mount *m = &s->plan.m[i];
		if (m->kind == WS_PIN || !rel_within(rel, m->rel))
			continue;
		bool mask = m->kind == WS_MASK_FILE || m->kind == WS_MASK_DIR;
		return werr_set(e, 0, "exec allow-writable %s: %s %s, %s in the sandbox", path,
				strcmp(rel, m->rel) == 0 ? "it is" : "it lies in", m->rel,
				mask ? "which is masked" : "which is read-only");
	}
	char prefix[4096];
	for (size_t i = 1, len = strlen(rel); i <= len; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		snprintf(prefix, sizeof prefix, "%.*s", (int)i, rel);
		const char *name = strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
		if (strcmp(name, ".git") == 0 || strv_contains(&s->plan.names, name))
			return werr_set(e, 0, "exec allow-writable %s: %s is a name warden protects "
					"(one made in the session is moved aside at its end)", path, prefix);
		if (workspace_masked(s->policy, prefix, name))
			return werr_set(e, 0, "exec allow-writable %s: %s is masked in the sandbox",
					path, prefix);
	}
	return 0;
}

/* The host directory that backs a place, opened (O_PATH). */
static int place_open_host(const struct sandbox_spec *s, const struct place *pl)
{
	switch (pl->kind) {
	case PLACE_WORKSPACE:
		return s->plan.ws_fd >= 0 ? openat(s->plan.ws_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)
					  : open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	case PLACE_PATH: /* as build_binds binds it: the path as written */
		return open(pl->pp->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	case PLACE_STATE: /* as build_home binds it: no symlink at its last component */
		return open(pl->hb->src, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	default:
		errno = EINVAL;
		return -1;
	}
}

static const char *place_name(const struct place *pl)
{
	switch (pl->kind) {
	case PLACE_WORKSPACE:
		return "the workspace";
	case PLACE_STATE:
		return "the agent's state";
	default:
		return pl->inside;
	}
}

/* Which of warden's own directories (no sandbox reaches them) path lies
 * in, in words, or NULL. */
static const char *own_dir(const struct sandbox_spec *s, const char *path)
{
	const struct { const char *dir, *name; } own[] = {
		{ s->logdir, "log" }, { s->cachedir, "cache" },
		{ s->storedir, "checkpoint store" }, { s->runtimedir, "runtime" },
	};
	for (size_t i = 0; i < ARRAY_LEN(own); i++)
		if (own[i].dir && path_is_within(path, own[i].dir))
			return own[i].name;
	return NULL;
}

/* One `exec allow-writable` entry: where it is inside, its place, made. */
static int plan_writable(struct sandbox_spec *s, const char *entry, struct werr *e)
{
	_cleanup_free_ char *path = entry[0] == '/' ? xstrdup(entry)
						    : xasprintf("%s/%s", s->workspace, entry);
	/* in messages: as written, and where that is when it is relative */
	_cleanup_free_ char *shown = entry[0] == '/' ? xstrdup(entry)
						     : xasprintf("%s (%s)", entry, path);
	for (size_t i = 0; i < s->exec.n; i++)
		if (strcmp(s->exec.w[i].path, path) == 0)
			return 0;
	static const char where[] = "the workspace, /tmp, /var/tmp, /dev/shm, " AGENT_HOME
				    " and the profile's read-write paths";
	const char *own = own_dir(s, path);
	if (own)
		return werr_set(e, 0, "exec allow-writable %s: it lies in warden's own %s directory, "
				"which no sandbox reaches", shown, own);
	_cleanup_(place_free) struct place pl = place_of(s, path);
	if (pl.kind == PLACE_NONE || pl.kind == PLACE_SYSTEM)
		return werr_set(e, 0, "exec allow-writable %s: not in a place the sandbox writes "
				"(%s)%s", shown, where, s->home && path_is_within(path, s->home) ?
				"; \"~\" is your home on the host, the sandbox's is " AGENT_HOME : "");
	if (pl.kind == PLACE_PATH && pl.pp->mode != POLICY_RW)
		return werr_set(e, 0, "exec allow-writable %s: it lies in %s, read-only in the "
				"sandbox (%s)", shown, pl.pp->path, pl.pp->origin);
	const char *rel = path + strlen(pl.inside);
	while (*rel == '/')
		rel++;
	if (pl.kind == PLACE_WORKSPACE && workspace_allows(s, shown, rel, e) < 0)
		return -1;
	if (pl.kind != PLACE_TMPFS) {
		_cleanup_close_ int root = place_open_host(s, &pl);
		if (root < 0)
			return werr_errno(e, "exec allow-writable %s: opening %s", shown, place_name(&pl));
		_cleanup_close_ int fd = exec_open_dir_beneath(root, rel, true);
		int err = errno;
		if (fd < 0)
			return werr_set(e, err == ELOOP || err == ENOTDIR ? 0 : err,
					"exec allow-writable %s: %s", shown, beneath_why(err));
	}
	s->exec.w = xrealloc(s->exec.w, (s->exec.n + 1) * sizeof *s->exec.w);
	s->exec.w[s->exec.n++] = (struct exec_writable){ .path = steal_ptr(&path),
		.place = xstrdup(pl.inside), .tmpfs = pl.kind == PLACE_TMPFS };
	return 0;
}

static int depth_of(const char *p)
{
	int d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int cmp_writable(const void *a, const void *b)
{
	const struct exec_writable *x = a, *y = b;
	int dx = depth_of(x->path), dy = depth_of(y->path);
	return dx != dy ? dx - dy : strcmp(x->path, y->path);
}

/* The other names of file in its own directory (hard links of the same
 * inode), which would show the same bytes. */
static void hide_links(struct strv *hidden, const char *file, const struct stat *st)
{
	_cleanup_free_ char *dir = xstrdup(file);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	_cleanup_dir_ DIR *d = dir_open_at(AT_FDCWD, dir, 0);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat ls;
		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(dirfd(d), de->d_name, &ls, AT_SYMLINK_NOFOLLOW) < 0 ||
		    ls.st_dev != st->st_dev || ls.st_ino != st->st_ino)
			continue;
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, de->d_name);
		if (!strv_contains(hidden, p))
			strv_push(hidden, p);
	}
}

/* Strict mode: the denied files the sandbox shows read-only (the system
 * directories, /etc, a read-only path of the profile such as a client's
 * install), and their hard links beside them. */
static void plan_hidden(struct sandbox_spec *s)
{
	const struct strv *deny = &s->policy->exec.deny_paths;
	for (size_t i = 0; i < deny->n; i++) {
		const char *f = deny->v[i];
		_cleanup_(place_free) struct place pl = place_of(s, f);
		if (pl.kind != PLACE_SYSTEM && !(pl.kind == PLACE_PATH && pl.pp->mode == POLICY_RO))
			continue; /* not in the sandbox, or in a place it writes anyway */
		struct stat st;
		if (lstat(f, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (!strv_contains(&s->exec.hidden, f))
			strv_push(&s->exec.hidden, f);
		if (st.st_nlink > 1)
			hide_links(&s->exec.hidden, f, &st);
	}
}

int exec_layout_plan(struct sandbox_spec *s, struct werr *e)
{
	const struct policy_exec *x = &s->policy->exec;
	s->exec.strict = x->strict;
	for (size_t i = 0; i < x->allow_writable.n; i++)
		if (plan_writable(s, x->allow_writable.v[i], e) < 0)
			return -1;
	if (s->exec.n > 1)
		qsort(s->exec.w, s->exec.n, sizeof *s->exec.w, cmp_writable);
	if (x->strict)
		plan_hidden(s);
	return 0;
}

/* The paths are any bytes: kept losslessly (src/audit/escape.h). */
json_t *exec_layout_to_json(const struct exec_layout *x)
{
	json_t *j = json_pack("{s:b}", "strict", x->strict), *esc = NULL;
	char **w = xcalloc(x->n + 1, sizeof *w);
	for (size_t i = 0; i < x->n; i++)
		w[i] = x->w[i].path;
	json_set_bytes_array(j, "allow_writable", w, x->n, &esc);
	free(w);
	json_set_bytes_array(j, "hidden", x->hidden.v, x->hidden.n, &esc);
	if (esc)
		json_object_set_new(j, "escaped", esc);
	return j;
}

void exec_layout_free(struct exec_layout *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->w[i].path);
		free(x->w[i].place);
	}
	free(x->w);
	strv_free(&x->hidden);
	*x = (struct exec_layout){ 0 };
}
