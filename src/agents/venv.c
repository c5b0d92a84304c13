/* venv.c - a workspace's Python virtual environments and the installations
 * of their base interpreters (venv.h). Reads pyvenv.cfg files; runs
 * nothing. */
#include "venv.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CFG_MAX (64u << 10)  /* a pyvenv.cfg, at most */
#define TOP_MAX 4096         /* entries of the workspace's top read, at most */
#define DIRS_MAX 256         /* and directories among them looked into */

/* The value of cfg's `home` key (site.py's reading: the key's case and the
 * blanks around key and value do not count), malloc'd, or NULL. */
static char *cfg_home(const char *cfg)
{
	for (const char *p = cfg; *p;) {
		size_t n = strcspn(p, "\n");
		const char *eq = memchr(p, '=', n), *end = p + n;
		if (eq) {
			const char *k = p, *ke = eq, *v = eq + 1, *ve = end;
			while (k < ke && isspace((unsigned char)*k))
				k++;
			while (ke > k && isspace((unsigned char)ke[-1]))
				ke--;
			while (v < ve && isspace((unsigned char)*v))
				v++;
			while (ve > v && isspace((unsigned char)ve[-1]))
				ve--;
			if (ke - k == 4 && strncasecmp(k, "home", 4) == 0)
				return xasprintf("%.*s", (int)(ve - v), v);
		}
		p = *end ? end + 1 : end;
	}
	return NULL;
}

/* Is real (resolved) PREFIX/bin/python... of a Python installation: an
 * executable file, and the standard library's landmark PREFIX/lib/
 * python3.N/os.py? */
static bool python_install(const char *real)
{
	const char *base = strrchr(real, '/');
	struct stat st;
	if (!base || strncmp(base + 1, "python", 6) != 0 || stat(real, &st) < 0 ||
	    !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return false;
	_cleanup_free_ char *prefix = xasprintf("%.*s", (int)(base - real), real);
	char *bin = strrchr(prefix, '/');
	if (!bin || strcmp(bin, "/bin") != 0)
		return false;
	*bin = '\0';
	_cleanup_free_ char *lib = xasprintf("%s/lib", prefix);
	_cleanup_dir_ DIR *d = opendir(lib);
	bool found = false;
	for (struct dirent *de; d && !found && (de = readdir(d));) {
		if (strncmp(de->d_name, "python3.", 8) != 0)
			continue;
		_cleanup_free_ char *os = xasprintf("%s/%s/os.py", lib, de->d_name);
		found = stat(os, &st) == 0 && S_ISREG(st.st_mode);
	}
	return found;
}

char *venv_base(const char *cfg)
{
	_cleanup_free_ char *home = cfg_home(cfg);
	if (!home || home[0] != '/')
		return NULL;
	static const char *const names[] = { "python3", "python" };
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", home, names[i]);
		char real[PATH_MAX];
		if (realpath(p, real) && python_install(real))
			return xstrdup(real);
	}
	return NULL;
}

/* A directory entry that is a directory, not a symlink to one. */
static bool entry_dir(int dirfd, const struct dirent *de)
{
	struct stat st;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

struct found {
	int wsfd;
	unsigned read;
	struct strv *out, *where;
};

/* rel/pyvenv.cfg, when it is a regular file: its environment's base. */
static void look(struct found *f, const char *rel)
{
	if (f->read >= VENV_MAX)
		return;
	_cleanup_free_ char *p = xasprintf("%s/pyvenv.cfg", rel);
	size_t n;
	_cleanup_free_ char *text = read_regular_at(f->wsfd, p, O_NOFOLLOW, CFG_MAX, &n, NULL);
	if (!text)
		return;
	f->read++;
	_cleanup_free_ char *base = !memchr(text, '\0', n) ? venv_base(text) : NULL;
	if (base && !strv_contains(f->out, base)) {
		strv_push(f->out, base);
		strv_push(f->where, rel);
	}
}

/* Each environment directory in .tox or .nox. */
static void look_in(struct found *f, const char *rel)
{
	_cleanup_dir_ DIR *d = dir_open_at(f->wsfd, rel, O_NOFOLLOW);
	for (struct dirent *de; d && f->read < VENV_MAX && (de = readdir(d));) {
		if (de->d_name[0] == '.' || !entry_dir(dirfd(d), de))
			continue;
		_cleanup_free_ char *sub = xasprintf("%s/%s", rel, de->d_name);
		look(f, sub);
	}
}

void venv_interpreters(const char *workspace, struct strv *out, struct strv *where)
{
	_cleanup_dir_ DIR *d = dir_open_at(AT_FDCWD, workspace, 0);
	if (!d)
		return;
	int fd = dirfd(d);
	struct found f = { .wsfd = fd, .out = out, .where = where };
	unsigned seen = 0, dirs = 0;
	for (struct dirent *de; seen++ < TOP_MAX && dirs < DIRS_MAX && f.read < VENV_MAX &&
				(de = readdir(d));) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, "..") || !entry_dir(fd, de))
			continue;
		dirs++;
		look(&f, n);
		if (!strcmp(n, ".tox") || !strcmp(n, ".nox")) {
			look_in(&f, n);
			continue;
		}
		_cleanup_free_ char *dot = xasprintf("%s/.venv", n);
		_cleanup_free_ char *plain = xasprintf("%s/venv", n);
		look(&f, dot);
		look(&f, plain);
	}
}
