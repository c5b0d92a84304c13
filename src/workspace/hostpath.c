/* hostpath.c - paths as the host resolves them before the agent runs: an
 * absolute path through the kernel's symlinks and "..", as far as it
 * exists; a workspace-relative path from one; "~" as git expands it; and
 * the workspace's symlinks on the way to what git reads (plan.h), which
 * the sweep checks again. */
#include "plan.h"

#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* rest appended to the resolved directory base, "." and ".." taken
 * lexically (what does not exist yet has no symlinks to follow). */
char *ws_join_lexically(const char *base, const char *rest)
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
char *ws_resolve_abs(const char *abs)
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
			return ws_join_lexically(buf, abs + (slash - head) + 1);
	}
}

/* An absolute path as a workspace-relative one when it lies in the
 * workspace (symlinks resolved as the host sees them now, before the agent
 * runs); NULL otherwise. */
char *ws_relative_abs(const char *ws, const char *abs)
{
	_cleanup_free_ char *real = ws_resolve_abs(abs);
	_cleanup_free_ char *rws = ws_resolve_abs(ws);
	if (!real || !rws || !path_is_within(real, rws) || strcmp(real, rws) == 0)
		return NULL;
	return xstrdup(real + strlen(rws) + (strcmp(rws, "/") == 0 ? 0 : 1));
}

/* target, given relative to the directory `base` (workspace-relative, ""
 * for the top) or absolute: see ws_relative_abs. */
char *ws_relative(const char *ws, const char *base, const char *target)
{
	_cleanup_free_ char *abs = target[0] == '/' ? xstrdup(target)
			       : xasprintf("%s%s%s/%s", ws, *base ? "/" : "", base, target);
	return ws_relative_abs(ws, abs);
}

/* A path setting as git expands it: "~/" from $HOME, "~user/" from that
 * user's home directory. NULL when there is none (git refuses the value). */
char *ws_expand_user(const char *v)
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
void ws_note_links(struct ws_plan *plan, const char *ws, const char *abs)
{
	_cleanup_free_ char *rws = ws_resolve_abs(ws);
	int hops = 0;
	if (rws)
		free(follow_links(plan, rws, abs, &hops));
}

