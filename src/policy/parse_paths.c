/* parse_paths.c - the profile's directives about what the sandbox sees of
 * the host's files and environment: `read-only`, `read-write`, `protect`,
 * `unprotect`, `mask`, `unmask`, `cache` and `env`; and the same paths
 * given from the command line (policy_add_path, policy_add_bind). */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

static const char *const ro_refused[] = { "/proc", "/sys", "/dev" };
static const char *const rw_refused[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/boot" };

const char *policy_path_refused(const char *full, enum policy_path_mode mode)
{
	bool refused = strcmp(full, "/") == 0 || path_is_within(full, "/proc");
	for (size_t i = 0; i < ARRAY_LEN(ro_refused); i++)
		refused = refused || strcmp(full, ro_refused[i]) == 0;
	if (refused)
		return "cannot be bound into the sandbox";
	if (mode == POLICY_RW) {
		for (size_t i = 0; i < ARRAY_LEN(ro_refused); i++)
			refused = refused || path_is_within(full, ro_refused[i]);
		for (size_t i = 0; i < ARRAY_LEN(rw_refused); i++)
			refused = refused || strcmp(full, rw_refused[i]) == 0;
		if (refused)
			return "may not be writable in the sandbox";
	}
	return NULL;
}

/* Add or update the path full (taken) with mode and origin (taken). */
static void path_set(struct policy *p, char *full, enum policy_path_mode mode, char *origin)
{
	for (size_t i = 0; i < p->npaths; i++) {
		if (strcmp(p->paths[i].path, full) == 0) {
			p->paths[i].mode = mode;
			free(p->paths[i].origin);
			p->paths[i].origin = origin;
			free(p->paths[i].source);
			p->paths[i].source = NULL;
			free(full);
			return;
		}
	}
	p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof *p->paths);
	p->paths[p->npaths++] = (struct policy_path){ .path = full, .mode = mode, .origin = origin };
}

static int pol_do_path(struct parser *ps, const struct line *l, enum policy_path_mode mode)
{
	const char *d = l->tok[0], *t = l->tok[1];
	size_t off = l->off[1];
	_cleanup_free_ char *full = NULL;
	if (pol_expand_path(ps, l, off, d, t, &full) < 0)
		return -1;
	const char *why = policy_path_refused(full, mode);
	if (why)
		return pol_lerr(ps->e, 0, l, off, "%s: '%.200s' %s", d, full, why);
	if (pol_room(ps, l, ps->p->npaths) < 0)
		return -1;
	path_set(ps->p, steal_ptr(&full), mode, xasprintf("%s:%lu", l->name, l->lineno));
	return 0;
}

int policy_add_path(struct policy *p, const char *path, enum policy_path_mode mode,
		    const char *origin, struct werr *e)
{
	if (path[0] != '/' || path_has_dot_components(path) ||
	    (strlen(path) > 1 && path[strlen(path) - 1] == '/'))
		return werr_set(e, 0, "%s: '%.200s' is not an absolute, normalised path", origin, path);
	const char *why = policy_path_refused(path, mode);
	if (why)
		return werr_set(e, 0, "%s: '%.200s' %s", origin, path, why);
	if (p->npaths >= MAX_ENTRIES)
		return werr_set(e, 0, "%s: more than %d paths", origin, MAX_ENTRIES);
	path_set(p, xstrdup(path), mode, xstrdup(origin));
	return 0;
}

int policy_add_bind(struct policy *p, const char *inside, const char *source,
		    enum policy_path_mode mode, const char *origin, struct werr *e)
{
	if (policy_add_path(p, inside, mode, origin, e) < 0)
		return -1;
	for (size_t i = 0; i < p->npaths; i++)
		if (strcmp(p->paths[i].path, inside) == 0)
			p->paths[i].source = xstrdup(source);
	return 0;
}

int pol_do_read_only(struct parser *ps, const struct line *l)
{
	return pol_do_path(ps, l, POLICY_RO);
}

int pol_do_read_write(struct parser *ps, const struct line *l)
{
	return pol_do_path(ps, l, POLICY_RW);
}

/* `protect RELPATH`, `unprotect RELPATH` */
/* `protect !RELPATH`, `unprotect !RELPATH`: a directory kept writable
 * inside the protected one above it (PARENT/NAME). */
static int protect_except(struct parser *ps, const struct line *l, bool add)
{
	const char *d = l->tok[0], *t = l->tok[1] + 1;
	_cleanup_free_ char *r = xstrdup(t);
	pol_strip_trailing_slashes(r, 0);
	if (!*r || r[0] == '/' || path_has_dot_components(r) || !strchr(r, '/'))
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: '!' takes a directory inside a protected "
				"one, relative to the workspace (PARENT/NAME), without '.', '..' or "
				"empty components: '%.200s'", d, l->tok[1]);
	if (path_in_git(r))
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: nothing in .git can be made writable: "
				"'%.200s'", d, l->tok[1]);
	if (!add) {
		strv_remove(&ps->p->protect_except, r);
		return 0;
	}
	if (!strv_contains(&ps->p->protect_except, r) &&
	    ps->p->protect_except.n >= POLICY_EXCEPT_MAX)
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: more than %d exceptions", d,
				POLICY_EXCEPT_MAX);
	return pol_push_unique(ps, l, &ps->p->protect_except, r);
}

static int protect(struct parser *ps, const struct line *l, bool add)
{
	const char *d = l->tok[0], *t = l->tok[1];
	if (t[0] == '!')
		return protect_except(ps, l, add);
	if (t[0] == '/')
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: path must be relative to the workspace: '%.200s'",
				d, t);
	_cleanup_free_ char *r = xstrdup(t);
	pol_strip_trailing_slashes(r, 0);
	if (path_has_dot_components(r))
		return pol_lerr(ps->e, 0, l, l->off[1],
				"%s: '.', '..' and empty components are not allowed: '%.200s'", d, t);
	if (!add) {
		strv_remove(&ps->p->protect, r);
		return 0;
	}
	return pol_push_unique(ps, l, &ps->p->protect, r);
}

/* `cache ~/PATH`: a directory of the sandbox's home kept for the
 * workspace's next sessions (src/session/caches.h), stored without "~/".
 * Printable ASCII, no "." or ".." component, none within another. */
int pol_do_cache(struct parser *ps, const struct line *l)
{
	const char *d = l->tok[0], *t = l->tok[1];
	if (strncmp(t, "~/", 2) != 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: the path must start with ~/ (a directory "
				"of the sandbox's home): '%.200s'", d, t);
	_cleanup_free_ char *r = xstrdup(t + 2);
	pol_strip_trailing_slashes(r, 0);
	if (!*r || path_has_dot_components(r))
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: name a directory below ~, without '.', "
				"'..' or empty components: '%.200s'", d, t);
	if (strlen(r) > POLICY_CACHE_PATH_MAX)
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: a path longer than %d bytes", d,
				POLICY_CACHE_PATH_MAX);
	for (const char *c = r; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return pol_lerr(ps->e, 0, l, l->off[1], "%s: only printable ASCII in the path", d);
	struct strv *v = &ps->p->caches;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], r) != 0 && path_overlaps(r, v->v[i]))
			return pol_lerr(ps->e, 0, l, l->off[1], "%s: ~/%s and ~/%s overlap: keep one", d, r,
					v->v[i]);
	if (!strv_contains(v, r) && v->n >= POLICY_CACHES_MAX)
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: more than %d caches", d, POLICY_CACHES_MAX);
	return pol_push_unique(ps, l, v, r);
}

/* `mask GLOB`, `unmask GLOB`; `mask !GLOB`: an exception, which no
 * pattern masks (`unmask !GLOB` takes it back) */
static int mask(struct parser *ps, const struct line *l, bool add)
{
	const char *d = l->tok[0], *t = l->tok[1], *g = t + (t[0] == '!');
	if (!add) {
		strv_remove(&ps->p->mask, t);
		return 0;
	}
	if (!*g)
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: '!' needs a pattern after it", d);
	if (g[0] == '/')
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: pattern must be relative to the workspace: '%.200s'",
				d, t);
	if (pol_has_dotdot_component(g))
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: '..' components are not allowed: '%.200s'", d, t);
	return pol_push_unique(ps, l, &ps->p->mask, t);
}

int pol_do_protect(struct parser *ps, const struct line *l)
{
	return protect(ps, l, true);
}

int pol_do_unprotect(struct parser *ps, const struct line *l)
{
	return protect(ps, l, false);
}

int pol_do_mask(struct parser *ps, const struct line *l)
{
	return mask(ps, l, true);
}

int pol_do_unmask(struct parser *ps, const struct line *l)
{
	return mask(ps, l, false);
}

/* `env pass NAME` and `env set NAME=...` of a secret's NAME: refused, the
 * value never passes as a variable. */
static int env_not_secret(struct parser *ps, const struct line *l, size_t off, const char *what,
			  const char *name, size_t n)
{
	for (size_t i = 0; i < ps->p->nsecrets; i++) {
		const struct policy_secret *s = &ps->p->secrets[i];
		if (strlen(s->name) == n && memcmp(s->name, name, n) == 0)
			return pol_lerr(ps->e, 0, l, off,
					"%s: %s is a secret (bound at %.200s): its value never passes into the sandbox",
					what, s->name, s->origin);
	}
	return 0;
}

/* Index of the env_set entry "NAME=..." or -1. */
static long env_set_find(const struct policy *p, const char *name, size_t n)
{
	for (size_t i = 0; i < p->env_set.n; i++)
		if (strncmp(p->env_set.v[i], name, n) == 0 && p->env_set.v[i][n] == '=')
			return (long)i;
	return -1;
}

/* `env pass NAME` of a variable warden sets inside whatever the host's
 * (src/sandbox/env.c): passed, it would be replaced, so the line passes
 * nothing, which is said with why. A glob (LC_*) is not: it passes the
 * others it matches. */
static void env_pass_set_by_warden(struct parser *ps, const struct line *l, const char *name)
{
	static const struct {
		const char *name, *why;
	} set[] = {
		{ "HOME", "the sandbox's own home, /home/agent; `env set HOME=VALUE` sets another" },
		{ "USER", "agent; `env set USER=VALUE` sets another" },
		{ "LOGNAME", "agent; `env set LOGNAME=VALUE` sets another" },
		{ "SHELL", "the sandbox's shell; `env set SHELL=VALUE` sets another" },
		{ "SSH_AUTH_SOCK", "the host's SSH agent is never reachable inside; `ssh-agent on` "
				   "(--ssh-agent) gives warden's, which signs with its keys" },
	};
	static const char *const proxy[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
					     "http_proxy", "https_proxy", "all_proxy", "no_proxy",
					     "NODE_USE_ENV_PROXY" };
	for (size_t i = 0; i < ARRAY_LEN(set); i++)
		if (strcmp(name, set[i].name) == 0)
			pol_note(ps, l, "env pass %s: warden sets %s inside (%s), so this line passes "
				 "nothing", name, name, set[i].why);
	for (size_t i = 0; i < ARRAY_LEN(proxy); i++)
		if (strcmp(name, proxy[i]) == 0)
			pol_note(ps, l, "env pass %s: warden sets %s inside to its own proxy, the one way "
				 "out (net allow lines choose where it leads), so this line passes "
				 "nothing", name, name);
}

int pol_do_env(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "env: missing argument (pass, set or unset)");
	const char *sub = l->tok[1], *name = l->tok[2];
	size_t off = l->off[2];

	if (strcmp(sub, "pass") == 0) {
		if (pol_want_tokens(ps, l, 3, "env pass") < 0)
			return -1;
		if (!policy_env_name_ok(name, strlen(name), true))
			return pol_lerr(ps->e, 0, l, off, "env pass: invalid variable name '%.200s'%s", name,
					strchr(name, '=') ? " (env pass takes a name from your environment; "
					"env set NAME=VALUE gives one a value)" : "");
		if (env_not_secret(ps, l, off, "env pass", name, strlen(name)) < 0)
			return -1;
		env_pass_set_by_warden(ps, l, name);
		return pol_push_unique(ps, l, &p->env_pass, name);
	}
	if (strcmp(sub, "unset") == 0) {
		if (pol_want_tokens(ps, l, 3, "env unset") < 0)
			return -1;
		size_t n = strlen(name);
		if (!policy_env_name_ok(name, n, true))
			return pol_lerr(ps->e, 0, l, off, "env unset: invalid variable name '%.200s'", name);
		strv_remove(&p->env_pass, name);
		long i = env_set_find(p, name, n);
		if (i >= 0) {
			struct strv *set = &p->env_set;
			free(set->v[i]);
			memmove(&set->v[i], &set->v[i + 1], (set->n - (size_t)i) * sizeof *set->v);
			set->n--;
		}
		return 0;
	}
	if (strcmp(sub, "set") == 0) {
		if (l->ntok < 3)
			return pol_lerr(ps->e, 0, l, l->len, "env set: missing argument");
		/* NAME=VALUE: VALUE is the rest of the line after the first '='. */
		const char *start = l->text + off;
		const char *eq = memchr(start, '=', l->len - off);
		if (!eq)
			return pol_lerr(ps->e, 0, l, off, "env set: expected NAME=VALUE");
		size_t n = (size_t)(eq - start);
		if (!policy_env_name_ok(start, n, false))
			return pol_lerr(ps->e, 0, l, off, "env set: invalid variable name '%.*s'",
					(int)(n > 200 ? 200 : n), start);
		if (env_not_secret(ps, l, off, "env set", start, n) < 0)
			return -1;
		char *entry = xasprintf("%.*s", (int)(l->len - off), start);
		long i = env_set_find(p, start, n);
		if (i >= 0) {
			free(p->env_set.v[i]);
			p->env_set.v[i] = entry;
			return 0;
		}
		if (pol_room(ps, l, p->env_set.n) < 0) {
			free(entry);
			return -1;
		}
		strv_push_owned(&p->env_set, entry);
		return 0;
	}
	return pol_lerr(ps->e, 0, l, l->off[1], "env: unknown subcommand '%.200s' (expected pass, set or unset)",
			sub);
}
