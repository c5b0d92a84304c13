/* fspath.c - a host path as the mount table spells it: its file system's
 * device and the path within that file system (see fspath.h). */
#include "fspath.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

/* realpath of path, or, where path does not exist yet (an audit directory
 * before the first session), of its nearest existing ancestor with the
 * rest appended; NULL when the rest would need resolving itself (".", "..",
 * an empty component) or nothing resolves. */
static char *real_or_parent(const char *path)
{
	char *real = realpath(path, NULL);
	if (real || errno != ENOENT)
		return real;
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : "";
	if (!slash || slash == path || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return NULL;
	_cleanup_free_ char *parent = xasprintf("%.*s", (int)(slash - path), path);
	_cleanup_free_ char *up = real_or_parent(parent);
	if (!up)
		return NULL;
	return xasprintf("%s%s%s", up, strcmp(up, "/") == 0 ? "" : "/", name);
}

bool fspath_mount_line(const char *line, unsigned *maj, unsigned *min, char root[PATH_MAX],
		       char point[PATH_MAX])
{
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... (the device as the mount table
	 * gives it: a btrfs subvolume's stat() says another) */
	if (sscanf(line, "%*s %*s %u:%u %4095s %4095s", maj, min, root, point) != 4)
		return false;
	/* as the kernel escapes them (\040 a space): decoded */
	unescape_octal(root);
	unescape_octal(point);
	return true;
}

bool fspath_of(const char *path, struct fspath *out)
{
	_cleanup_free_ char *real = path && path[0] == '/' ? real_or_parent(path) : NULL;
	if (!real || strlen(real) >= sizeof out->real)
		return false;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char *line = NULL, root[PATH_MAX], point[PATH_MAX], best_root[PATH_MAX];
	size_t cap = 0, best = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		if (!fspath_mount_line(line, &maj, &min, root, point) || !path_is_within(real, point))
			continue;
		/* the deepest mount over the path; of two at one point the
		 * later, which hides the other */
		size_t n = strlen(point);
		if (n < best)
			continue;
		best = n;
		out->maj = maj;
		out->min = min;
		strcpy(best_root, root);
	}
	free(line);
	fclose(f);
	if (!best)
		return false;
	const char *rest = best == 1 ? real : real + best; /* "/" is the one point of length 1 */
	int w = snprintf(out->within, sizeof out->within, "%s%s",
			 strcmp(best_root, "/") == 0 && rest[0] ? "" : best_root, rest);
	if (w <= 0 || (size_t)w >= sizeof out->within)
		return false;
	strcpy(out->real, real);
	return true;
}

char *fspath_format(const struct fspath *f)
{
	return xasprintf("%u:%u:%zu:%s%s", f->maj, f->min, strlen(f->within), f->within, f->real);
}

bool fspath_parse(const char *s, struct fspath *out)
{
	int at = 0;
	size_t n = 0;
	if (!s || sscanf(s, "%u:%u:%zu:%n", &out->maj, &out->min, &n, &at) != 3 || at == 0)
		return false;
	const char *w = s + at;
	size_t len = strlen(w);
	if (n == 0 || n >= len || n >= sizeof out->within || len - n >= sizeof out->real ||
	    w[0] != '/' || w[n] != '/')
		return false;
	memcpy(out->within, w, n);
	out->within[n] = '\0';
	strcpy(out->real, w + n);
	return true;
}

const char *fspath_below(const struct fspath *f, unsigned maj, unsigned min, const char *root)
{
	if (maj != f->maj || min != f->min || !path_is_within(root, f->within))
		return NULL;
	if (strcmp(f->within, "/") == 0)
		return strcmp(root, "/") == 0 ? "" : root;
	return root + strlen(f->within);
}
