/* layout.c - a session's read-only workspace, scratch directory and output
 * directories, checked and made on the host side before the sandbox
 * exists (layout.h). */
#include "layout.h"

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

/* rel (workspace-relative) is dir or lies below it. */
static bool rel_within(const char *rel, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(rel, dir, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

/* An output inside the workspace at rel: never in .git, never a protected
 * or masked path nor below one (the protections and masks are mounted after
 * the outputs, and stay, but an output named for one is a mistake). */
static int check_inside(const struct policy *pol, const char *what, const char *abs,
			const char *rel, struct werr *e)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	for (char *c = copy; c;) {
		char *slash = strchr(c, '/');
		if (slash)
			*slash = '\0';
		if (strcmp(c, ".git") == 0)
			return werr_set(e, 0, "refusing %s %s: it lies in a .git directory, which "
					"the sandbox keeps read-only where git would run from it",
					what, abs);
		for (size_t i = 0; i < pol->protect.n; i++)
			if (!strchr(pol->protect.v[i], '/') && strcmp(c, pol->protect.v[i]) == 0)
				return werr_set(e, 0, "refusing %s %s: '%s' is a protected name "
						"(read-only at any depth)", what, abs, c);
		if (workspace_masked(pol, copy, c))
			return werr_set(e, 0, "refusing %s %s: the profile masks %s (its "
					"content never reaches the sandbox)", what, abs, copy);
		if (slash)
			*slash = '/';
		c = slash ? slash + 1 : NULL;
	}
	for (size_t i = 0; i < pol->protect.n; i++)
		if (strchr(pol->protect.v[i], '/') && rel_within(rel, pol->protect.v[i]))
			return werr_set(e, 0, "refusing %s %s: it lies in the protected path %s",
					what, abs, pol->protect.v[i]);
	return 0;
}

/* What to do instead of naming the workspace itself: an --output is a
 * read-only session's way to write (the others have no such way). */
static const char *itself_hint(const char *what)
{
	return strcmp(what, "--output") == 0 ? " (leave --read-only out to write there)" : "";
}

/* The directory arg names (relative to the current directory), checked as
 * layout.h says and made when missing; *out its resolved path, *inside
 * whether it lies in the workspace (refused before anything is made when
 * !may_be_inside: a --scratch DIR). */
static int place(const char *arg, const char *what, const struct policy *pol, const char *ws,
		 const char *home, bool may_be_inside, char **out, bool *inside, struct werr *e)
{
	if (!*arg)
		return werr_set(e, 0, "%s: an empty path", what);
	char cwd[PATH_MAX];
	if (arg[0] != '/' && !getcwd(cwd, sizeof cwd))
		return werr_errno(e, "%s %s: the current directory", what, arg);
	_cleanup_free_ char *joined = arg[0] == '/' ? xstrdup(arg) : xasprintf("%s/%s", cwd, arg);
	/* ./out and out//x as written; a ".." is not taken (a symlink
	 * before it would lead elsewhere) */
	_cleanup_free_ char *abs = path_lexical(joined, false);
	if (path_has_dot_components(abs))
		return werr_set(e, 0, "%s %s: a path without '..' components, please", what, arg);
	struct stat st;
	if (lstat(abs, &st) == 0 && S_ISLNK(st.st_mode))
		return werr_set(e, 0, "refusing %s %s: it is a symbolic link (name the directory "
				"it leads to)", what, abs);
	if (lstat(abs, &st) == 0 && !S_ISDIR(st.st_mode))
		return werr_set(e, ENOTDIR, "refusing %s %s: not a directory (%s names a "
				"directory, made when missing)", what, abs, what);
	_cleanup_free_ char *res = path_resolve_existing(abs);
	if (!res)
		return werr_errno(e, "%s %s", what, abs);
	*inside = path_is_within(res, ws);
	if (!*inside && path_is_within(abs, ws))
		return werr_set(e, 0, "refusing %s %s: a symbolic link on its way in the "
				"workspace leads out of it, to %s", what, abs, res);
	if (*inside && !may_be_inside)
		return werr_set(e, 0, "refusing %s %s: it lies in the workspace (name it with "
				"--output, or choose a directory outside)", what, abs);
	if (*inside) {
		/* checked by where it is (a symlink on the way: where it leads) */
		if (strcmp(res, ws) == 0)
			return werr_set(e, 0, "refusing %s %s: it is the workspace itself%s", what,
					abs, itself_hint(what));
		if (check_inside(pol, what, abs, res + strlen(ws) + 1, e) < 0)
			return -1;
	} else {
		if (path_is_within(ws, res))
			return werr_set(e, 0, "refusing %s %s: it holds the workspace %s", what,
					res, ws);
		if (workspace_place_check(res, home, what, e) < 0)
			return -1;
		char hbuf[PATH_MAX];
		const char *h = home && realpath(home, hbuf) ? hbuf : home;
		if (h && path_is_within(res, h) && res[strlen(h) + (strcmp(h, "/") != 0)] == '.')
			return werr_set(e, 0, "refusing %s %s: a hidden entry of your home (~/.*: "
					"configuration and credentials the sandbox hides)", what, res);
	}
	if (mkdir_p(res, 0755, NULL) < 0)
		return werr_errno(e, "%s: making %s", what, res);
	/* made through nothing but directories: resolved again, the same */
	char again[PATH_MAX];
	if (!realpath(res, again) || strcmp(again, res) != 0 || lstat(res, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return werr_set(e, 0, "refusing %s %s: it changed while it was checked", what, res);
	*out = steal_ptr(&res);
	return 0;
}

/* --ci's artifacts directory, made now (a directory that cannot be made
 * fails the session before its command runs, not after); in the workspace,
 * protected for the session, so that the agent leaves nothing there for
 * warden to write through or the job to upload as warden's. */
static int artifacts_place(struct session_layout *l, const char *dir, struct policy *pol,
			   const char *ws, const char *home, struct werr *e)
{
	_cleanup_free_ char *res = NULL;
	bool inside = false;
	if (place(dir, "--artifacts", pol, ws, home, true, &res, &inside, e) < 0)
		return -1;
	if (inside && !strv_contains(&pol->protect, res + strlen(ws) + 1))
		strv_push(&pol->protect, res + strlen(ws) + 1);
	l->artifacts = steal_ptr(&res);
	return 0;
}

/* The files the policy comes from (policy.h's inputs) that lie in the
 * workspace: protected for the session, so that the agent cannot rewrite
 * the profile, its rules or its hash lists to loosen its next session. */
static void inputs_protect(struct policy *pol, const char *ws)
{
	size_t wl = strlen(ws);
	for (size_t i = 0; i < pol->inputs.n; i++) {
		_cleanup_free_ char *real = realpath(pol->inputs.v[i], NULL);
		if (!real || strncmp(real, ws, wl) != 0 || real[wl] != '/' || !real[wl + 1])
			continue;
		if (!strv_contains(&pol->protect, real + wl + 1))
			strv_push(&pol->protect, real + wl + 1);
	}
}

/* A fresh scratch directory under $TMPDIR (an absolute one outside the
 * workspace ws, which may be read-only) or /tmp. */
static int scratch_make(struct session_layout *l, const char *ws, struct werr *e)
{
	const char *t = getenv("TMPDIR");
	char base[PATH_MAX];
	bool from_env = t && t[0] == '/' && realpath(t, base) && !path_overlaps(base, ws);
	if (!from_env)
		snprintf(base, sizeof base, "/tmp");
	_cleanup_free_ char *tmpl = xasprintf("%s/warden-scratch-XXXXXX", base);
	if (!mkdtemp(tmpl))
		return werr_errno(e, "making the session's scratch directory in %s%s (name one with "
				  "--scratch DIR)", base, from_env ? " ($TMPDIR)" : "");
	l->scratch = steal_ptr(&tmpl);
	l->scratch_made = true;
	return 0;
}

int layout_prepare(struct session_layout *l, const struct session_layout_opts *o,
		   struct policy *pol, const char *ws, const char *home, struct werr *e)
{
	l->read_only = o->read_only || pol->workspace_ro;
	pol->workspace_ro = l->read_only;
	inputs_protect(pol, ws);
	for (size_t i = 0; o->outputs && i < o->outputs->n; i++) {
		char *p = NULL;
		bool inside = false;
		if (place(o->outputs->v[i], "--output", pol, ws, home, true, &p, &inside, e) < 0)
			return -1;
		if (strv_contains(&l->outputs, p)) {
			free(p);
			continue;
		}
		l->output_inside |= inside;
		strv_push_owned(&l->outputs, p);
		if (policy_add_path(pol, l->outputs.v[l->outputs.n - 1], POLICY_RW, "--output", e) < 0)
			return -1;
	}
	if (o->scratch) {
		bool inside = false;
		if (place(o->scratch, "--scratch", pol, ws, home, false, &l->scratch, &inside, e) < 0)
			return -1;
	} else if (o->want_scratch || l->read_only) {
		if (scratch_make(l, ws, e) < 0)
			return -1;
	}
	if (l->scratch && policy_add_path(pol, l->scratch, POLICY_RW, "--scratch", e) < 0)
		return -1;
	return o->artifacts ? artifacts_place(l, o->artifacts, pol, ws, home, e) : 0;
}

/* A plan outside the workspace, watching the wall clock's steps with the
 * workspace's (clock, which that plan owns). */
static void plan_one(struct session_layout *l, const char *dir, struct wsclock *clock)
{
	l->planned[l->nplans] = dir;
	l->plans[l->nplans++] = (struct ws_plan){ .lock_fd = -1, .ws_fd = -1, .clock = clock };
}

int layout_plan_outside(struct session_layout *l, const char *ws, struct wsclock *clock,
			const struct policy *pol, struct werr *e)
{
	size_t n = l->outputs.n + 1;
	l->plans = xcalloc(n, sizeof *l->plans);
	l->planned = xcalloc(n, sizeof *l->planned);
	for (size_t i = 0; i < l->outputs.n; i++)
		if (!path_is_within(l->outputs.v[i], ws))
			plan_one(l, l->outputs.v[i], clock);
	if (l->scratch && !l->scratch_made)
		plan_one(l, l->scratch, clock);
	for (size_t i = 0; i < l->nplans; i++)
		if (workspace_plan(l->planned[i], pol, &l->plans[i], e) < 0)
			return werr_wrap(e, "%s", l->planned[i]);
	return 0;
}

/* The paths are any bytes: kept losslessly (src/audit/escape.h). */
json_t *layout_to_json(const struct session_layout *l)
{
	json_t *task = json_null(), *esc = NULL, *tesc = NULL;
	if (l->task) {
		task = json_object();
		json_set_bytes(task, "name", l->task, &tesc);
		json_set_bytes(task, "branch", l->task_branch, &tesc);
		json_set_bytes(task, "repository", l->task_repo, &tesc);
		if (tesc)
			json_object_set_new(task, "escaped", tesc);
	}
	json_t *j = json_pack("{s:b}", "read_only", l->read_only);
	json_set_bytes(j, "scratch", l->scratch, &esc);
	json_object_set_new(j, "scratch_kept", json_boolean(l->scratch && !l->scratch_made));
	json_set_bytes_array(j, "outputs", l->outputs.v, l->outputs.n, &esc);
	json_object_set_new(j, "task", task);
	if (esc)
		json_object_set_new(j, "escaped", esc);
	return j;
}

void layout_end(struct session_layout *l)
{
	if (!l->scratch_made || !l->scratch)
		return;
	_cleanup_free_ char *dir = xstrdup(l->scratch);
	char *slash = strrchr(dir, '/');
	*slash = '\0';
	_cleanup_close_ int pfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || remove_tree_at(pfd, slash + 1) < 0)
		wnote("the scratch directory %s could not be removed: %s", l->scratch,
		      strerror(errno));
	l->scratch_made = false;
}

void layout_free(struct session_layout *l)
{
	layout_end(l);
	for (size_t i = 0; i < l->nplans; i++)
		workspace_cleanup(&l->plans[i]);
	free(l->plans);
	free(l->planned);
	free(l->scratch);
	free(l->artifacts);
	strv_free(&l->outputs);
	free(l->task);
	free(l->task_branch);
	free(l->task_repo);
	*l = (struct session_layout){ 0 };
}
