/* rustup.c - rustup's proxies resolved to the toolchain's program (see
 * rustup.h): which toolchain the workspace asks for, and where rustup
 * installed it. */
#include "rustup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../common/util.h"

bool rustup_is_proxy(const char *found, const char *cmd)
{
	if (strcmp(path_base(cmd), "rustup") == 0 || !strchr(found, '/'))
		return false;
	_cleanup_free_ char *r = xasprintf("%.*s/rustup", (int)(path_base(found) - 1 - found), found);
	struct stat a, b;
	return stat(found, &a) == 0 && S_ISREG(a.st_mode) && stat(r, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A line's `"KEY" = "VALUE"` or `KEY = "VALUE"`: key and value unquoted
 * (malloc'd) and true; false for any other line. */
static bool toml_pair(const char *line, char **key, char **val)
{
	line += strspn(line, " \t");
	size_t kn;
	const char *k = line;
	if (*k == '"') {
		k++;
		kn = strcspn(k, "\"");
		if (k[kn] != '"')
			return false;
		line = k + kn + 1;
	} else {
		kn = strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
		line = k + kn;
	}
	line += strspn(line, " \t");
	if (kn == 0 || *line != '=')
		return false;
	line += 1 + strspn(line + 1, " \t");
	if (*line != '"' && *line != '\'')
		return false;
	const char *v = line + 1;
	size_t vn = strcspn(v, line[0] == '"' ? "\"" : "'");
	if (v[vn] != line[0] || vn == 0) /* an empty value: as none */
		return false;
	*key = xasprintf("%.*s", (int)kn, k);
	*val = xasprintf("%.*s", (int)vn, v);
	return true;
}

/* The value of key in text's table (NULL: the top, before any table); or,
 * with want, the value whose key is the deepest path want lies in, that
 * key in *where. */
static char *toml_get(const char *text, const char *table, const char *key, const char *want,
		      char **where)
{
	_cleanup_free_ char *t = xstrdup(text), *best = NULL, *best_key = NULL;
	bool in = table == NULL;
	for (char *line = t, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line[strcspn(line, "\r#")] = '\0';
		const char *l = line + strspn(line, " \t");
		if (*l == '[') {
			in = table && strncmp(l, table, strlen(table)) == 0 &&
			     !*(l + strlen(table) + strspn(l + strlen(table), " \t"));
			continue;
		}
		_cleanup_free_ char *k = NULL, *v = NULL;
		if (!in || !toml_pair(l, &k, &v))
			continue;
		bool hit = want ? k[0] == '/' && path_is_within(want, k) &&
					  (!best_key || strlen(k) > strlen(best_key))
				: strcmp(k, key) == 0;
		if (hit) {
			free(best);
			free(best_key);
			best = steal_ptr(&v);
			best_key = steal_ptr(&k);
			if (!want)
				break;
		}
	}
	if (where)
		*where = steal_ptr(&best_key);
	return steal_ptr(&best);
}

char *rustup_override(const char *settings, const char *dir, char **key)
{
	return toml_get(settings, "[overrides]", NULL, dir, key);
}

char *rustup_file_channel(const char *text)
{
	if (strstr(text, "[toolchain]"))
		return toml_get(text, "[toolchain]", "channel", NULL, NULL);
	const char *s = text + strspn(text, " \t\r\n");
	size_t n = strcspn(s, " \t\r\n");
	return n ? xasprintf("%.*s", (int)n, s) : NULL;
}

/* The toolchain asked for from the workspace up, the nearest directory's
 * first: its override (settings.toml's [overrides]), else its toolchain
 * file; *from where it was read. */
static char *workspace_choice(const char *workspace, const char *settings,
			      const char *settings_path, char **from)
{
	if (!workspace || workspace[0] != '/')
		return NULL;
	_cleanup_free_ char *over_dir = NULL;
	_cleanup_free_ char *over =
		settings ? rustup_override(settings, workspace, &over_dir) : NULL;
	_cleanup_free_ char *d = xstrdup(workspace);
	for (;;) {
		if (over && strcmp(d, over_dir) == 0) {
			*from = xasprintf("%s (the override for %s)", settings_path, over_dir);
			return steal_ptr(&over);
		}
		static const char *const files[] = { "rust-toolchain.toml", "rust-toolchain" };
		for (size_t i = 0; i < ARRAY_LEN(files); i++) {
			_cleanup_free_ char *f =
				xasprintf("%s/%s", strcmp(d, "/") ? d : "", files[i]);
			_cleanup_free_ char *text = vmshim_read_file(f); /* a regular file's */
			char *c = text ? rustup_file_channel(text) : NULL;
			if (c) {
				*from = steal_ptr(&f);
				return c;
			}
		}
		char *slash = strrchr(d, '/');
		if (!slash || d[1] == '\0')
			return NULL;
		*(slash == d ? slash + 1 : slash) = '\0';
	}
}

/* The installed toolchain directory's name for a channel: itself, or with
 * the host's triple; NULL when neither is installed. */
static char *installed(const char *toolchains, const char *name, const char *triple)
{
	struct stat st;
	_cleanup_free_ char *exact = xasprintf("%s/%s", toolchains, name);
	if (stat(exact, &st) == 0 && S_ISDIR(st.st_mode))
		return xstrdup(name);
	_cleanup_free_ char *full = xasprintf("%s-%s", name, triple);
	_cleanup_free_ char *path = xasprintf("%s/%s", toolchains, full);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? steal_ptr(&full) : NULL;
}

int rustup_pick(const char *found, const char *cmd, const char *workspace, const char *home,
		struct vm_pick *p, struct werr *e)
{
	const char *name = path_base(cmd);
	*p = (struct vm_pick){ .manager = "rustup", .shims = xasprintf("%.*s",
		(int)(path_base(found) - 1 - found), found) };
	const char *env_home = getenv("RUSTUP_HOME");
	_cleanup_free_ char *rhome = env_home && env_home[0] == '/' ? xstrdup(env_home)
				   : home ? xasprintf("%s/.rustup", home) : NULL;
	if (!rhome)
		return werr_set(e, 0, "%s is rustup's proxy: no RUSTUP_HOME or home directory to "
				"find its toolchains in: run the toolchain's %s by its path",
				name, name);
	_cleanup_free_ char *spath = xasprintf("%s/settings.toml", rhome);
	_cleanup_free_ char *settings = vmshim_read_file(spath);
	const char *env = getenv("RUSTUP_TOOLCHAIN");
	_cleanup_free_ char *tc = NULL;
	if (env && *env) {
		tc = xstrdup(env);
		p->from = xstrdup("$RUSTUP_TOOLCHAIN");
	} else if (!(tc = workspace_choice(workspace, settings, spath, &p->from)) && settings &&
		   (tc = toml_get(settings, NULL, "default_toolchain", NULL, NULL))) {
		p->from = xasprintf("%s (default_toolchain)", spath);
	}
	if (!tc)
		return werr_set(e, 0, "%s is rustup's proxy: no toolchain is set for this "
				"workspace or as the default (%s): `rustup default stable`, or "
				"run the toolchain's %s by its path", name, spath, name);
	if (!vmshim_name_ok(tc))
		return werr_set(e, 0, "%s is rustup's proxy: refusing the toolchain name '%s' "
				"(from %s)", name, tc, p->from);
	_cleanup_free_ char *triple = settings ? toml_get(settings, NULL, "default_host_triple",
							  NULL, NULL) : NULL;
	if (!triple || !vmshim_name_ok(triple)) {
		struct utsname u;
		free(triple);
		triple = xasprintf("%s-unknown-linux-gnu", uname(&u) == 0 ? u.machine : "x86_64");
	}
	_cleanup_free_ char *toolchains = xasprintf("%s/toolchains", rhome);
	_cleanup_free_ char *dir = installed(toolchains, tc, triple);
	_cleanup_free_ char *prog = dir ? xasprintf("%s/%s/bin/%s", toolchains, dir, name) : NULL;
	if (!prog || !vmshim_is_exec(prog))
		return werr_set(e, 0, "%s is rustup's proxy: the toolchain it picks here (%s, "
				"from %s) is not installed in %s with %s: `rustup toolchain "
				"install %s`, or run the toolchain's %s by its path", name, tc,
				p->from, toolchains, name, tc, name);
	p->version = steal_ptr(&dir);
	p->program = steal_ptr(&prog);
	return 1;
}
