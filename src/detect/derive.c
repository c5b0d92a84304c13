/* derive.c - the detector's derived fields (derive.h): a table of the
 * processes the exec events showed (pid -> program, cwd), the symlinks the
 * file events showed (link -> target), and the paths taken apart as text
 * (".", ".." and empty components), never looked up on disk. */
#include "derive.h"

#include <stdlib.h>
#include <string.h>

#include "../common/hosttext.h"
#include "../common/util.h"

#define PROCS_MAX 8192         /* the table's most slots; full, a new pid overwrites */
#define PROCS_FIRST 64
#define LINKS_MAX 256

struct proc {
	long pid;                    /* 0: free */
	char *program, *cwd;
};

struct link {
	char *path, *target;         /* both made absolute as text */
};

struct derive {
	char *ws;                    /* the workspace inside, or NULL */
	struct proc *procs;          /* nprocs_cap slots (a power of two), made on the
				      * first exec and doubled at three quarters full,
				      * up to PROCS_MAX */
	size_t nprocs, nprocs_cap;
	char *last_program;          /* the last exec's */
	struct link links[LINKS_MAX];
	size_t nlinks, next_link;
};

struct derive *derive_new(const char *workspace)
{
	struct derive *dv = xcalloc(1, sizeof *dv);
	dv->ws = workspace ? xstrdup(workspace) : NULL;
	return dv;
}

void derive_free(struct derive *dv)
{
	if (!dv)
		return;
	for (size_t i = 0; i < dv->nprocs_cap; i++) {
		free(dv->procs[i].program);
		free(dv->procs[i].cwd);
	}
	free(dv->procs);
	for (size_t i = 0; i < dv->nlinks; i++) {
		free(dv->links[i].path);
		free(dv->links[i].target);
	}
	free(dv->last_program);
	free(dv->ws);
	free(dv);
}

/* ---- paths as text ------------------------------------------------------ */

static bool is_dotdot(const char *c, size_t n) { return n == 2 && c[0] == '.' && c[1] == '.'; }

/* p taken from base (when relative), ".", ".." and empty components out.
 * before: the path just before the first ".." (NULL: none), malloc'd. */
static char *lexical(const char *base, const char *p, char **before)
{
	_cleanup_free_ char *all = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", base ? base : "", p);
	size_t n = strlen(all);
	char *out = xmalloc(n + 2);
	size_t o = 0;
	if (before)
		*before = NULL;
	for (const char *c = all; *c;) {
		size_t l = strcspn(c, "/");
		if (is_dotdot(c, l)) {
			if (before && !*before) {
				out[o] = '\0';
				*before = xstrdup(o ? out : "/");
			}
			while (o > 0 && out[--o] != '/')
				;
		} else if (l && !(l == 1 && c[0] == '.')) {
			out[o++] = '/';
			memcpy(out + o, c, l);
			o += l;
		}
		c += l;
		c += *c == '/';
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static bool under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static bool has_dotdot(const char *p)
{
	for (const char *c = p; *c;) {
		size_t l = strcspn(c, "/");
		if (is_dotdot(c, l))
			return true;
		c += l;
		c += *c == '/';
	}
	return false;
}

/* p (from base) starts in the workspace and ends outside it through "..". */
static bool past_top(const struct derive *dv, const char *base, const char *p)
{
	if (!dv->ws || !has_dotdot(p) || (p[0] != '/' && (!base || base[0] != '/')))
		return false;
	_cleanup_free_ char *before = NULL;
	_cleanup_free_ char *end = lexical(base, p, &before);
	return before && under(before, dv->ws) && !under(end, dv->ws);
}

/* ---- the tables ------------------------------------------------------------ */

static struct proc *proc_slot(const struct derive *dv, long pid)
{
	size_t cap = dv->nprocs_cap;
	size_t i = (size_t)pid * 2654435761u % cap;
	for (size_t k = 0; k < cap; k++, i = (i + 1) % cap)
		if (dv->procs[i].pid == pid || dv->procs[i].pid == 0)
			return &dv->procs[i];
	return &dv->procs[(size_t)pid % cap]; /* full: overwrite */
}

/* Room for one more process: the table made, or doubled (its entries
 * placed again) once three quarters full, while below PROCS_MAX. */
static void procs_room(struct derive *dv)
{
	if (dv->procs && (dv->nprocs + 1) * 4 <= dv->nprocs_cap * 3)
		return;
	if (dv->procs && dv->nprocs_cap >= PROCS_MAX)
		return;
	struct derive old = *dv;
	dv->nprocs_cap = old.procs ? old.nprocs_cap * 2 : PROCS_FIRST;
	dv->procs = xcalloc(dv->nprocs_cap, sizeof *dv->procs);
	for (size_t i = 0; i < old.nprocs_cap; i++)
		if (old.procs[i].pid)
			*proc_slot(dv, old.procs[i].pid) = old.procs[i];
	free(old.procs);
}

static const struct proc *proc_of(const struct derive *dv, const json_t *ev)
{
	const json_t *p = json_object_get(ev, "pid");
	if (!dv->procs || !json_is_integer(p) || json_integer_value(p) <= 0)
		return NULL;
	const struct proc *s = proc_slot(dv, (long)json_integer_value(p));
	return s->pid ? s : NULL;
}

static void note_exec(struct derive *dv, const json_t *ev)
{
	const json_t *p = json_object_get(ev, "pid");
	const char *res = json_string_value(json_object_get(ev, "resolved"));
	const char *cwd = json_string_value(json_object_get(ev, "cwd"));
	if (!res)
		res = json_string_value(json_object_get(ev, "path"));
	const char *sc = json_string_value(json_object_get(ev, "syscall"));
	if (!res || json_string_value(json_object_get(ev, "deny")) ||
	    (sc && strncmp(sc, "exec", 4) != 0))
		return; /* refused, or a file mapped executable: not what the process is */
	free(dv->last_program);
	dv->last_program = xstrdup(res);
	if (!json_is_integer(p) || json_integer_value(p) <= 0)
		return;
	procs_room(dv);
	struct proc *s = proc_slot(dv, (long)json_integer_value(p));
	if (!s->pid)
		dv->nprocs++;
	free(s->program);
	free(s->cwd);
	*s = (struct proc){ .pid = (long)json_integer_value(p), .program = xstrdup(res),
			    .cwd = cwd ? xstrdup(cwd) : NULL };
}

static void note_symlink(struct derive *dv, const json_t *ev)
{
	const char *path = json_string_value(json_object_get(ev, "path"));
	const char *target = json_string_value(json_object_get(ev, "target"));
	if (!path || !target || path[0] != '/')
		return;
	char *link = lexical(NULL, path, NULL);
	/* a relative target is taken from the link's directory */
	_cleanup_free_ char *dir = xstrdup(link);
	char *slash = strrchr(dir, '/');
	slash[slash == dir ? 1 : 0] = '\0';
	char *to = lexical(dir, target, NULL);
	struct link *l = &dv->links[dv->next_link];
	if (dv->nlinks == LINKS_MAX) {
		free(l->path);
		free(l->target);
	} else {
		dv->nlinks++;
	}
	*l = (struct link){ .path = link, .target = to };
	dv->next_link = (dv->next_link + 1) % LINKS_MAX;
}

void derive_note(struct derive *dv, const char *kind, const json_t *ev)
{
	if (strcmp(kind, "exec") == 0)
		note_exec(dv, ev);
	else if (strcmp(kind, "file") == 0 &&
		 strcmp(json_string_value(json_object_get(ev, "op")) ?: "", "symlink") == 0)
		note_symlink(dv, ev);
}

/* p (from base) names a symlink the session made, or a path below one:
 * its target (and the rest of p), malloc'd; else NULL. */
static char *link_target(const struct derive *dv, const char *base, const char *p)
{
	if (!dv->nlinks || (p[0] != '/' && (!base || base[0] != '/')))
		return NULL;
	_cleanup_free_ char *abs = lexical(base, p, NULL);
	for (size_t i = 0; i < dv->nlinks; i++)
		if (under(abs, dv->links[i].path))
			return xasprintf("%s%s", dv->links[i].target, abs + strlen(dv->links[i].path));
	return NULL;
}

/* ---- the fields ------------------------------------------------------------ */

/* A net event's destination as one text: "HOST:PORT" (through the proxy),
 * "ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6) for a direct one, or a unix
 * socket's path; NULL when it names none. */
static json_t *dest_of(const json_t *ev)
{
	const char *where = json_string_value(json_object_get(ev, "host"));
	if (!where || !*where)
		where = json_string_value(json_object_get(ev, "address"));
	const json_t *port = json_object_get(ev, "port");
	if (where && *where && json_is_integer(port)) {
		char ht[HOST_TEXT_MAX];
		_cleanup_free_ char *t = xasprintf("%s:%lld", host_text(where, ht),
						   (long long)json_integer_value(port));
		return json_string(t);
	}
	const char *path = json_string_value(json_object_get(ev, "path"));
	return path && *path ? json_string(path) : NULL;
}

/* The strings an event names paths with, and the directory they start
 * from: an exec's arguments (and what follows a "=" in one) from its cwd;
 * a file event's path and path2. Each passed to fn; the array it fills. */
static json_t *each_path(const struct derive *dv, const char *kind, const json_t *ev,
			 char *(*fn)(const struct derive *, const char *, const char *))
{
	json_t *out = json_array();
	if (strcmp(kind, "exec") == 0) {
		const char *cwd = json_string_value(json_object_get(ev, "cwd"));
		size_t i;
		const json_t *a;
		json_array_foreach(json_object_get(ev, "argv"), i, a) {
			const char *s = json_string_value(a);
			if (!s || i == 0 || strpbrk(s, " \t\n"))
				continue; /* a script (sh -c) is not a path */
			char *r = fn(dv, cwd, s);
			const char *eq = strchr(s, '=');
			if (!r && eq && eq[1])
				r = fn(dv, cwd, eq + 1);
			if (r)
				json_array_append_new(out, json_string(r));
			free(r);
		}
	} else {
		static const char *const keys[] = { "path", "path2" };
		for (size_t k = 0; k < ARRAY_LEN(keys); k++) {
			const char *s = json_string_value(json_object_get(ev, keys[k]));
			char *r = s ? fn(dv, NULL, s) : NULL;
			if (r)
				json_array_append_new(out, json_string(r));
			free(r);
		}
	}
	if (json_array_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static char *dotdot_of(const struct derive *dv, const char *base, const char *p)
{
	return past_top(dv, base, p) ? xstrdup(p) : NULL;
}

json_t *derive_field(struct derive *dv, const char *kind, const json_t *ev, const char *field)
{
	bool exec = strcmp(kind, "exec") == 0;
	if (strcmp(field, "program") == 0 && !exec) {
		const struct proc *p = proc_of(dv, ev);
		if (p)
			return json_string(p->program);
		if (!json_object_get(ev, "pid") && dv->last_program)
			return json_string(dv->last_program);
		return NULL;
	}
	if (strcmp(field, "cwd") == 0 && !exec) {
		const struct proc *p = proc_of(dv, ev);
		return p && p->cwd ? json_string(p->cwd) : NULL;
	}
	if (strcmp(field, "paths") == 0 && strcmp(kind, "file") == 0) {
		json_t *a = json_array();
		const json_t *v;
		if ((v = json_object_get(ev, "path")) && json_is_string(v))
			json_array_append(a, (json_t *)v);
		if ((v = json_object_get(ev, "path2")) && json_is_string(v))
			json_array_append(a, (json_t *)v);
		return a;
	}
	if (strcmp(field, "dest") == 0 && strcmp(kind, "net") == 0)
		return dest_of(ev);
	if (strcmp(field, "dotdot") == 0)
		return each_path(dv, kind, ev, dotdot_of);
	if (strcmp(field, "via_symlink") == 0)
		return each_path(dv, kind, ev, link_target);
	return NULL;
}
