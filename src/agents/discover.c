/* discover.c - the client found on the host and the smallest tree that
 * makes it run inside: the enclosing node_modules of an npm package, the
 * version directory of a native install, an install prefix (DIR/bin/CMD:
 * DIR), or the file alone; the same for the interpreter its shebang names,
 * for those a version manager's shim stands for on PATH, and for the base
 * interpreters of the workspace's Python virtual environments. Refused: a
 * tree that is the home directory or an ancestor of it, and one that holds
 * or lies in a credential store. */
#include "discover.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "../audit/escape.h"
#include "shim.h"
#include "venv.h"
#include "vmshim.h"

static const char *const system_roots[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};

/* Directories too broad to expose whole, whatever lies in them. */
static const char *const too_broad[] = {
	"/", "/var", "/tmp", "/var/tmp", "/home", "/root", "/mnt", "/media", "/opt", "/srv",
	"/dev/shm", "/run", "/usr",
};

static bool is_too_broad(const char *path)
{
	for (size_t i = 0; i < ARRAY_LEN(too_broad); i++)
		if (strcmp(path, too_broad[i]) == 0)
			return true;
	return false;
}

static void push_resolved(struct strv *out, const char *path)
{
	char buf[PATH_MAX];
	if (realpath(path, buf) && !strv_contains(out, buf))
		strv_push(out, buf);
}

void discover_visible_roots(const struct policy *p, const char *workspace, struct strv *out)
{
	for (size_t i = 0; i < ARRAY_LEN(system_roots); i++)
		push_resolved(out, system_roots[i]);
	for (size_t i = 0; p && i < p->npaths; i++)
		push_resolved(out, p->paths[i].path);
	if (workspace)
		push_resolved(out, workspace);
}

static bool is_visible(const struct strv *visible, const char *path)
{
	for (size_t i = 0; i < visible->n; i++)
		if (path_is_within(path, visible->v[i]))
			return true;
	return false;
}

/* Is PATH's entry [p, end) one of env's earlier ones? Its files were
 * looked at already (PATH lists ~/.cargo/bin twice after rustup's
 * installer ran twice). */
static bool path_entry_seen(const char *env, const char *p, const char *end)
{
	size_t n = (size_t)(end - p);
	for (const char *q = env; q < p;) {
		const char *qend = strchrnul(q, ':');
		if ((size_t)(qend - q) == n && strncmp(q, p, n) == 0)
			return true;
		q = qend + 1;
	}
	return false;
}

/* The first executable regular file `name` on path_env, as the shell would
 * find it, past warden's own shims (shim.h): the first one skipped to
 * *shim when shim is not NULL (free it), the directory skip (may be NULL)
 * passed over. NULL when there is none. A name with a slash is taken as
 * is. */
static char *path_lookup(const char *name, const char *path_env, const char *skip, char **shim)
{
	struct stat st;
	if (strchr(name, '/'))
		return stat(name, &st) == 0 && S_ISREG(st.st_mode) ? xstrdup(name) : NULL;
	const char *env = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = env; *p;) {
		const char *end = strchrnul(p, ':');
		bool skipped = (skip && (size_t)(end - p) == strlen(skip) &&
				strncmp(p, skip, (size_t)(end - p)) == 0) ||
			       path_entry_seen(env, p, end);
		if (end > p && *p == '/' && !skipped) {
			_cleanup_free_ char *c = xasprintf("%.*s/%s", (int)(end - p), p, name);
			if (stat(c, &st) == 0 && S_ISREG(st.st_mode) && access(c, X_OK) == 0) {
				if (!shim_is(c))
					return steal_ptr(&c);
				if (shim && !*shim)
					*shim = steal_ptr(&c);
			}
		}
		p = *end ? end + 1 : end;
	}
	return NULL;
}

/* May DIR/bin/FILE's DIR be exposed whole? Not the home, what holds it, a
 * directory directly in it (~/.local holds the log, ~/.local/share
 * keyrings), nor ~/.local/share or ~/.local/state. */
static bool prefix_ok(const char *prefix, const char *home)
{
	if (!prefix[0] || is_too_broad(prefix))
		return false;
	if (!home)
		return true;
	if (path_is_within(home, prefix))
		return false;
	if (!path_is_within(prefix, home))
		return true;
	const char *rel = prefix + strlen(home) + (strcmp(home, "/") != 0);
	return strchr(rel, '/') && strcmp(rel, ".local/share") != 0 &&
	       strcmp(rel, ".local/state") != 0;
}

/* The tree to expose for the resolved file `real` and what kind it is. */
static char *install_tree(const char *real, const char *home, const char **kind)
{
	/* an npm package: the outermost node_modules, siblings included */
	const char *nm = strstr(real, "/node_modules/");
	if (nm) {
		*kind = "npm packages";
		return xasprintf("%.*s/node_modules", (int)(nm - real), real);
	}
	_cleanup_free_ char *dir = xstrdup(real);
	*strrchr(dir, '/') = '\0';
	/* an install prefix: DIR/bin/FILE, DIR neither / nor the home or above */
	if (strcmp(path_base(dir), "bin") == 0) {
		_cleanup_free_ char *prefix = xstrdup(dir);
		*strrchr(prefix, '/') = '\0';
		if (prefix_ok(prefix, home)) {
			*kind = "install prefix";
			return steal_ptr(&prefix);
		}
	}
	/* a native install: .../versions/VERSION (a file or a directory) */
	const char *v = NULL;
	for (const char *s = strstr(real, "/versions/"); s; s = strstr(s + 1, "/versions/"))
		v = s;
	if (v) {
		const char *ver = v + strlen("/versions/");
		*kind = "version directory";
		return xasprintf("%.*s%.*s", (int)(ver - real), real, (int)strcspn(ver, "/"), ver);
	}
	*kind = "file";
	return xstrdup(real);
}

int discover_refuse_tree(const char *tree, const char *home, const char *what, struct werr *e)
{
	if (home && path_is_within(home, tree))
		return werr_set(e, 0, "refusing to expose %s for %s: it is the home directory or "
				"holds it", tree, what);
	if (is_too_broad(tree) || path_is_within(tree, "/proc") || path_is_within(tree, "/sys") ||
	    path_is_within(tree, "/dev"))
		return werr_set(e, 0, "refusing to expose %s for %s: too broad a directory", tree,
				what);
	const char *around = credential_store_around(tree);
	if (around)
		return werr_set(e, 0, "refusing to expose %s for %s: it lies in %s, a "
				"credential store", tree, what, around);
	for (size_t i = 0; i < credential_stores_n; i++) {
		const char *cs = credential_stores[i];
		_cleanup_free_ char *p = xasprintf("%s/%s", tree, cs);
		struct stat st;
		if (lstat(p, &st) == 0)
			return werr_set(e, 0, "refusing to expose %s for %s: it holds %s, a "
					"credential store", tree, what, p);
	}
	return 0;
}

static void add_exposure(struct discovery *d, const char *tree, const char *why)
{
	for (size_t i = 0; i < d->n; i++)
		if (path_is_within(tree, d->v[i].path))
			return;
	size_t j = 0;
	for (size_t i = 0; i < d->n; i++) {
		if (path_is_within(d->v[i].path, tree)) {
			free(d->v[i].path);
			free(d->v[i].why);
		} else {
			d->v[j++] = d->v[i];
		}
	}
	d->n = j;
	d->v = xrealloc(d->v, (d->n + 1) * sizeof *d->v);
	d->v[d->n++] = (struct exposure){ .path = xstrdup(tree), .why = xstrdup(why) };
}

/* When real is DIR/bin/FILE with DIR directly in the home and holding a
 * lib directory (a conda base, ~/miniconda3), that DIR: an install FILE
 * may need whole, which warden never exposes whole (malloc'd; else NULL). */
static char *home_level_install(const char *real, const char *home)
{
	if (!home || !path_is_within(real, home) || strcmp(home, "/") == 0)
		return NULL;
	const char *rel = real + strlen(home) + 1;
	const char *slash = strchr(rel, '/');
	if (!slash || strncmp(slash, "/bin/", 5) != 0 || strchr(slash + 5, '/'))
		return NULL;
	_cleanup_free_ char *prefix = xasprintf("%s/%.*s", home, (int)(slash - rel), rel);
	_cleanup_free_ char *lib = xasprintf("%s/lib", prefix);
	struct stat st;
	return stat(lib, &st) == 0 && S_ISDIR(st.st_mode) ? steal_ptr(&prefix) : NULL;
}

/* Say, after lead, that install (home_level_install's) is never exposed
 * whole, and the profile line that would add it; need: what needs the rest
 * of it, when one is named. */
static void note_home_install(const char *lead, const char *install, const char *need)
{
	wnote("%s: %s is directly in your home, and warden never exposes such a directory "
	      "whole; if %s%snothing there is secret, add `read-only %s` to a profile "
	      "(warden-profile(5))", lead, install, need ? need : "",
	      need ? " needs the rest of it and " : "", install);
}

/* Expose what makes the resolved file `real` reachable, unless it is: 0.
 * With whole, only an install it belongs to, never the file alone (1: left
 * alone): so for a prefix directly in the home (a conda base,
 * ~/miniconda3/bin/python3; volta's ~/.volta/bin shim), never exposed
 * whole, whose file alone would not run inside and would hide the system's
 * interpreter on PATH. */
static int expose(struct discovery *d, const char *real, const char *home,
		  const struct strv *visible, const char *what, bool whole, struct werr *e)
{
	if (is_visible(visible, real))
		return 0;
	const char *kind;
	_cleanup_free_ char *tree = install_tree(real, home, &kind);
	if (whole && strcmp(kind, "file") == 0)
		return 1;
	/* an install exposed already (python3's and python's version
	 * directory, cargo's and rustc's toolchain): judged once */
	for (size_t i = 0; strcmp(kind, "file") != 0 && i < d->n; i++)
		if (strcmp(d->v[i].path, tree) == 0)
			return 0;
	if (discover_refuse_tree(tree, home, what, e) < 0)
		return -1;
	_cleanup_free_ char *install = strcmp(kind, "file") == 0 ? home_level_install(real, home)
								 : NULL;
	if (install) {
		_cleanup_free_ char *lead = xasprintf("only %s of %s is in the sandbox", real, install);
		note_home_install(lead, install, what);
	}
	_cleanup_free_ char *why = xasprintf("%s of %s", kind, what);
	add_exposure(d, tree, why);
	return 0;
}

/* The interpreter named by the shebang of `file`: NULL when none; for
 * `#!/usr/bin/env [-S] NAME`, NAME (*by_name set). */
static char *shebang(const char *file, bool *by_name)
{
	char buf[512];
	/* without waiting: a FIFO in the client's place is no script */
	_cleanup_close_ int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	char *save = NULL;
	char *interp = strtok_r(buf + 2, " \t", &save);
	if (!interp)
		return NULL;
	*by_name = false;
	if (strcmp(path_base(interp), "env") != 0)
		return xstrdup(interp);
	for (char *t = strtok_r(NULL, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (t[0] == '-' || strchr(t, '='))
			continue;
		*by_name = true;
		return xstrdup(t);
	}
	return NULL;
}

/* name on path_env (path_lookup), and when PATH gives a version manager's
 * shim, the interpreter it would pick for the workspace (vmshim.h) instead,
 * or for "system" the next one on PATH past the manager's shims; *pick
 * says which (pick->manager NULL: no manager's shim). */
static int lookup(const char *name, const char *path_env, const char *workspace,
		  const char *home, char **shim, struct vm_pick *pick, char **out, struct werr *e)
{
	*pick = (struct vm_pick){ 0 };
	*out = path_lookup(name, path_env, NULL, shim);
	if (!*out || strchr(name, '/'))
		return 0;
	int r = vmshim_resolve(*out, path_base(name), workspace, home, pick, e);
	if (r == 0)
		return 0;
	free(*out);
	*out = NULL;
	if (r < 0)
		return -1;
	*out = pick->program ? xstrdup(pick->program)
			     : path_lookup(name, path_env, pick->shims, NULL);
	return 0;
}

/* program's directory in front of PATH inside (once). */
static void path_first(struct discovery *d, const char *program)
{
	_cleanup_free_ char *bin = xstrdup(program);
	*strrchr(bin, '/') = '\0';
	if (bin[0] && !strv_contains(&d->path_dirs, bin))
		strv_push(&d->path_dirs, bin);
}

/* What discovery says it exposed for: "python3 (pyenv 3.11.7, from
 * FILE)", or the name alone. */
static char *what_of(const char *name, const struct vm_pick *pick)
{
	if (!pick->manager)
		return xstrdup(path_base(name));
	return xasprintf("%s (%s %s, from %s)", path_base(name), pick->manager,
			 pick->version ? pick->version : "system", pick->from ? pick->from : "default");
}

/* The interpreter the shebang of the resolved client `real` names, exposed
 * when the sandbox does not show it, its directory first on PATH inside
 * when named through env. managers_only: only when a version manager's
 * shim stands for it (a client the sandbox shows as it is). */
static int discover_interp(const char *real, const char *what, const char *path_env,
			   const char *workspace, const char *home, const char *rhome,
			   const struct strv *visible, bool managers_only, struct discovery *d,
			   struct werr *e)
{
	bool by_name = false;
	_cleanup_free_ char *interp = shebang(real, &by_name);
	if (!interp || (managers_only && !by_name))
		return 0;
	_cleanup_(vm_pick_free) struct vm_pick ipick = { 0 };
	_cleanup_free_ char *ifound = NULL;
	if (!by_name)
		ifound = interp[0] == '/' ? xstrdup(interp) : NULL;
	else if (lookup(interp, path_env, workspace, home, NULL, &ipick, &ifound, e) < 0)
		return -1;
	char ireal[PATH_MAX];
	if (!ifound || !realpath(ifound, ireal) || (managers_only && !ipick.program))
		return 0;
	_cleanup_free_ char *iname = what_of(interp, &ipick);
	_cleanup_free_ char *iwhat = xasprintf("interpreter %s of %s", iname, what);
	if (!is_visible(visible, ireal)) {
		if (expose(d, ireal, rhome, visible, iwhat, false, e) < 0)
			return -1;
	}
	if (by_name) {
		_cleanup_free_ char *idir = ipick.program ? xstrdup(ipick.program) : xstrdup(ireal);
		*strrchr(idir, '/') = '\0';
		if (idir[0] && !strv_contains(&d->path_dirs, idir))
			strv_push(&d->path_dirs, idir);
	}
	return 0;
}

int discover_client(const char *cmd, const char *path_env, const char *workspace,
		    const char *home, const struct strv *visible, struct discovery *d,
		    struct werr *e)
{
	_cleanup_free_ char *shim = NULL;
	_cleanup_(vm_pick_free) struct vm_pick pick = { 0 };
	_cleanup_free_ char *found = NULL;
	if (lookup(cmd, path_env, workspace, home, &shim, &pick, &found, e) < 0)
		return -1;
	if (strchr(cmd, '/') && shim_is(cmd))
		return werr_set(e, 0, "%s is warden's shim, not the client: run the client by its "
				"name or its own path", cmd);
	if (!found && shim)
		return werr_set(e, 0, "%s: the only %s on PATH is warden's shim %s: install %s, or "
				"remove the shim (`warden shim remove %s`)", cmd, cmd, shim, cmd, cmd);
	char real[PATH_MAX], rhome_buf[PATH_MAX];
	if (!found || !realpath(found, real))
		return 0;
	const char *rhome = home && realpath(home, rhome_buf) ? rhome_buf : NULL;
	_cleanup_free_ char *dir = xstrdup(found);
	*strrchr(dir, '/') = '\0';
	char rdir[PATH_MAX];
	bool dir_visible = realpath(dir[0] ? dir : "/", rdir) && is_visible(visible, rdir);
	_cleanup_free_ char *what = what_of(cmd, &pick);
	/* past a shim (warden's or a version manager's), the client run by
	 * its path: the sandbox's own PATH might lead to the shim again */
	bool seen = is_visible(visible, real) && (strchr(cmd, '/') || dir_visible);
	if (seen && !shim && !pick.manager)
		return discover_interp(real, what, path_env, workspace, home, rhome, visible, true,
				       d, e);
	if (!seen && expose(d, real, rhome, visible, what, false, e) < 0)
		return -1;
	d->exec_path = xstrdup(real);
	/* the interpreter a manager picked: its bin directory first on PATH
	 * inside, so that what it runs by name (pip, a script's `env python3`)
	 * is the same version */
	if (pick.program)
		path_first(d, pick.program);
	return discover_interp(real, what, path_env, workspace, home, rhome, visible, false, d, e);
}

void discover_apply(const struct discovery *d, const char *cmd, struct policy *p)
{
	for (size_t i = 0; i < d->n; i++) {
		bool dup = false;
		for (size_t j = 0; j < p->npaths && !dup; j++)
			dup = strcmp(p->paths[j].path, d->v[i].path) == 0;
		if (dup)
			continue;
		p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof *p->paths);
		p->paths[p->npaths++] = (struct policy_path){ .path = xstrdup(d->v[i].path),
			.mode = POLICY_RO, .origin = xasprintf("client:%s", path_base(cmd)) };
	}
}

void discover_env_path(const struct discovery *d, struct strv *envp)
{
	if (!d->path_dirs.n)
		return;
	for (size_t i = 0; i < envp->n; i++) {
		if (strncmp(envp->v[i], "PATH=", 5) != 0)
			continue;
		char *path = xstrdup(envp->v[i] + 5);
		for (size_t k = d->path_dirs.n; k-- > 0;) {
			char *np = xasprintf("%s%s%s", d->path_dirs.v[k], path[0] ? ":" : "", path);
			free(path);
			path = np;
		}
		free(envp->v[i]);
		envp->v[i] = xasprintf("PATH=%s", path);
		free(path);
		return;
	}
}

json_t *discovery_to_json(const struct discovery *d)
{
	json_t *a = json_array();
	for (size_t i = 0; d && i < d->n; i++) {
		/* a host path is any bytes (src/audit/escape.h) */
		json_t *o = json_object(), *esc = NULL;
		json_set_bytes(o, "path", d->v[i].path, &esc);
		json_set_bytes(o, "why", d->v[i].why, &esc);
		if (esc)
			json_object_set_new(o, "escaped", esc);
		json_array_append_new(a, o);
	}
	return a;
}

void discovery_free(struct discovery *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].path);
		free(d->v[i].why);
	}
	free(d->v);
	free(d->exec_path);
	strv_free(&d->path_dirs);
	*d = (struct discovery){ 0 };
}

static const char *const never_target[] = { "/proc", "/sys", "/dev" };
static const char *const never_rw[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/boot" };

void discover_settle_paths(struct policy *p)
{
	size_t n = p->npaths;
	for (size_t i = 0; i < n; i++) {
		char real[PATH_MAX];
		if (p->paths[i].source)
			continue; /* warden's own bind (a task's git directory) */
		if (!realpath(p->paths[i].path, real)) {
			if (errno == ENOENT || errno == ENOTDIR)
				wnote("%s: %s does not exist: it is not in the sandbox",
				      p->paths[i].origin, p->paths[i].path);
			continue;
		}
		/* the path itself a symlink; one reached through a symlinked
		 * directory (a HOME that is one) stays as written */
		struct stat st;
		if (lstat(p->paths[i].path, &st) < 0 || !S_ISLNK(st.st_mode))
			continue;
		bool known = false;
		for (size_t j = 0; j < p->npaths && !known; j++)
			known = strcmp(p->paths[j].path, real) == 0;
		if (known)
			continue;
		/* the parser's refusals hold for the target too */
		bool refused = strcmp(real, "/") == 0;
		for (size_t k = 0; k < ARRAY_LEN(never_target); k++)
			refused = refused || path_is_within(real, never_target[k]);
		for (size_t k = 0; p->paths[i].mode == POLICY_RW && k < ARRAY_LEN(never_rw); k++)
			refused = refused || strcmp(real, never_rw[k]) == 0;
		if (refused) {
			wnote("%s: %s leads to %s, which cannot be bound into the sandbox so",
			      p->paths[i].origin, p->paths[i].path, real);
			continue;
		}
		p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof *p->paths);
		p->paths[p->npaths++] = (struct policy_path){ .path = xstrdup(real),
			.mode = p->paths[i].mode, .origin = xstrdup(p->paths[i].origin) };
	}
}

/* A regular file that starts as an ELF object does (opened without
 * following a link or waiting on a FIFO). */
static bool is_elf(const char *path)
{
	unsigned char m[4];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, m, 4) == 4 &&
	       memcmp(m, "\x7f" "ELF", 4) == 0;
}

/* Do paths a and b name the same directory's entries, as written? */
static bool same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

/* The interpreters and tools the command runs by name inside (an agent's
 * `python3 -m pytest`, a Makefile's `ruby`, `npm test`'s `node`, `cargo
 * test`, Gradle's `java`) as the host's PATH finds them, where the sandbox
 * would not show them. A version manager's shim cannot run inside, and PATH
 * would pass it by to the system's interpreter: it is resolved for the
 * workspace as a command that is a shim is (lookup), the version's tree
 * exposed read-only, its bin first on PATH inside. One in an install prefix
 * in the home (nvm's ~/.nvm/versions/node/V/bin/node) has that prefix
 * exposed read-only, at its place on PATH; where PATH reaches it through a
 * symlink (sdkman's ~/.sdkman/candidates/java/current), its own bin goes
 * first. A choice that does not resolve here (not installed, a name that is
 * no version, "system", a tree refused: the home itself, a credential
 * store, a prefix directly in the home) is left alone, without a word: the
 * name then finds what the sandbox shows on PATH.
 *
 * And the tools that are one program each, installed in the home by
 * their own installers (uv's and uvx in ~/.local/bin, bun's ~/.bun/bin,
 * deno's ~/.deno/bin): an agent's `uv run pytest`. Such a file runs
 * alone, so it is exposed alone, read-only, at its place (never its
 * directory: ~/.local/bin holds what else the user put there), when it
 * is an ELF program: a script of that name could hold anything. */
static void discover_managed(const char *path_env, const char *workspace, const char *home,
			     const char *rhome, const struct strv *visible, struct discovery *d)
{
	static const char *const names[] = { "python3", "python", "ruby", "node", "cargo", "rustc",
					     "java" };
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		_cleanup_(vm_pick_free) struct vm_pick pick = { 0 };
		_cleanup_free_ char *found = NULL;
		struct werr e = { 0 };
		char real[PATH_MAX];
		if (lookup(names[i], path_env, workspace, home, NULL, &pick, &found, &e) < 0 ||
		    !found || !realpath(found, real))
			continue;
		_cleanup_free_ char *name = what_of(names[i], &pick);
		_cleanup_free_ char *what = xasprintf("%s on PATH inside", name);
		bool hidden = !is_visible(visible, real);
		if (expose(d, real, rhome, visible, what, true, &e) != 0)
			continue;
		/* the manager's pick; or, where PATH reaches the file through a
		 * symlinked directory that is not in the sandbox (sdkman's
		 * candidates/java/current/bin), the file's own directory */
		if (pick.program)
			path_first(d, pick.program);
		else if (hidden && !same_dir(found, real))
			path_first(d, real);
	}
	static const char *const alone[] = { "uv", "uvx", "bun", "deno" };
	for (size_t i = 0; i < ARRAY_LEN(alone); i++) {
		_cleanup_free_ char *found = path_lookup(alone[i], path_env, NULL, NULL);
		char real[PATH_MAX];
		struct werr e = { 0 };
		if (!found || !realpath(found, real) || is_visible(visible, real) || !is_elf(real) ||
		    discover_refuse_tree(real, rhome, alone[i], &e) < 0)
			continue;
		_cleanup_free_ char *why = xasprintf("file of %s on PATH inside", alone[i]);
		add_exposure(d, real, why);
		if (!same_dir(found, real))
			path_first(d, real);
	}
}

/* The base interpreters of the workspace's Python virtual environments
 * (venv.h), where the sandbox would not show them: each one's install
 * exposed read-only, under expose's rules, so that `.venv/bin/python` (and
 * `python` after `activate`) runs inside. One left out (a conda base
 * directly in the home, a tree refused) is said, with what would add it:
 * the environment cannot run inside without it. */
static void discover_venvs(const char *workspace, const char *rhome, const struct strv *visible,
			   struct discovery *d)
{
	_cleanup_strv_ struct strv base = { 0 }, where = { 0 };
	venv_interpreters(workspace, &base, &where);
	for (size_t i = 0; i < base.n; i++) {
		_cleanup_free_ char *what = xasprintf("the virtual environment %s", where.v[i]);
		_cleanup_free_ char *lead =
			xasprintf("%s runs %s, which is not in the sandbox", what, base.v[i]);
		struct werr e = { 0 };
		int r = expose(d, base.v[i], rhome, visible, what, true, &e);
		_cleanup_free_ char *install = r == 1 ? home_level_install(base.v[i], rhome) : NULL;
		if (install)
			note_home_install(lead, install, NULL);
		else if (r != 0)
			wnote("%s%s%s", lead, r < 0 ? ": " : "", r < 0 ? e.msg : "");
	}
}

int discover_for(struct policy *p, const char *cmd, const char *path_env, const char *workspace,
		 const char *home, bool managed, struct discovery *d, struct werr *e)
{
	discover_settle_paths(p);
	if (!cmd)
		return 0;
	_cleanup_strv_ struct strv visible = { 0 };
	discover_visible_roots(p, workspace, &visible);
	if (discover_client(cmd, path_env, workspace, home, &visible, d, e) < 0)
		return -1;
	char rhome_buf[PATH_MAX];
	const char *rhome = managed && home && realpath(home, rhome_buf) ? rhome_buf : NULL;
	if (managed)
		discover_managed(path_env, workspace, home, rhome, &visible, d);
	if (managed && workspace)
		discover_venvs(workspace, rhome, &visible, d);
	discover_apply(d, cmd, p);
	return 0;
}
