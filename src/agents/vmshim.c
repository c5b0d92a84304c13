/* vmshim.c - version managers' shims resolved to the interpreter they
 * would run (see vmshim.h): which manager made the shim (read from the
 * shim), which version the workspace asks for (its variable, the version
 * files from the workspace up, the global setting), and where that
 * version is installed. */
#include "vmshim.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"
#include "rustup.h"

#define SHIM_HEAD 4096      /* what of a shim is read to tell its manager */
#define VERSION_FILE_MAX (64 * 1024)

/* One manager: how its shims look, where it keeps versions. */
struct manager {
	const char *name;
	const char *marker;   /* bytes every shim of it holds */
	const char *root_var; /* the variable naming its root, in the shim too */
	const char *ver_var;  /* the variable naming the version (rbenv's kin) */
	const char *file;     /* the workspace's version file (rbenv's kin) */
};

static const struct manager managers[] = {
	{ "pyenv", "pyenv\" exec \"$program\"", "PYENV_ROOT", "PYENV_VERSION", ".python-version" },
	{ "rbenv", "rbenv)\" exec \"$program\"", "RBENV_ROOT", "RBENV_VERSION", ".ruby-version" },
	{ "rbenv", "rbenv\" exec \"$program\"", "RBENV_ROOT", "RBENV_VERSION", ".ruby-version" },
	{ "asdf", "# asdf-plugin: ", "ASDF_DATA_DIR", NULL, ".tool-versions" },
	{ "mise", "mise x -- ", "MISE_DATA_DIR", NULL, ".tool-versions" },
	/* rbenv's kin: the same shim, ROOT/versions/VERSION/bin */
	{ "goenv", "goenv\" exec \"$program\"", "GOENV_ROOT", "GOENV_VERSION", ".go-version" },
	{ "nodenv", "nodenv\" exec \"$program\"", "NODENV_ROOT", "NODENV_VERSION", ".node-version" },
};

void vm_pick_free(struct vm_pick *p)
{
	free(p->shims);
	free(p->version);
	free(p->from);
	free(p->program);
	*p = (struct vm_pick){ 0 };
}

bool vmshim_name_ok(const char *v)
{
	size_t n = strlen(v);
	return n > 0 && n <= 128 && !strchr(v, '/') && strcmp(v, ".") != 0 && strcmp(v, "..") != 0;
}

/* The value of `export VAR="VALUE"` in a shim's text, or NULL. */
static char *shim_export(const char *text, const char *var)
{
	_cleanup_free_ char *pat = xasprintf("export %s=\"", var);
	const char *s = strstr(text, pat);
	if (!s)
		return NULL;
	s += strlen(pat);
	size_t n = strcspn(s, "\"\n");
	return s[n] == '"' && n > 0 && s[0] == '/' ? xasprintf("%.*s", (int)n, s) : NULL;
}

bool vmshim_is_exec(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The first version file `name` from dir up to /: its path, or NULL. */
static char *find_up(const char *dir, const char *name)
{
	if (!dir || dir[0] != '/')
		return NULL;
	_cleanup_free_ char *d = xstrdup(dir);
	for (;;) {
		char *f = xasprintf("%s/%s", strcmp(d, "/") == 0 ? "" : d, name);
		struct stat st;
		if (stat(f, &st) == 0 && S_ISREG(st.st_mode))
			return f;
		free(f);
		char *slash = strrchr(d, '/');
		if (!slash || slash == d) {
			if (strcmp(d, "/") == 0)
				return NULL;
			strcpy(d, "/");
			continue;
		}
		*slash = '\0';
	}
}

static char *xstrdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

char *vmshim_read_file(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	char why[READ_WHY_MAX];
	if (read_regular_file(path, VERSION_FILE_MAX, &text, &len, why) < 0)
		return NULL;
	return text;
}

/* The versions a version file or variable lists (words; `#` to the end of
 * a line is a comment), in order; with tool, those of the line whose first
 * word is tool (a .tool-versions file), the rest of its words. */
static void words_of(const char *text, const char *seps, const char *tool, struct strv *out)
{
	_cleanup_free_ char *t = xstrdup(text);
	for (char *line = t, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line[strcspn(line, "#")] = '\0';
		char *save = NULL, *w = strtok_r(line, seps, &save);
		if (tool && (!w || strcmp(w, tool) != 0))
			continue;
		for (w = tool ? strtok_r(NULL, seps, &save) : w; w; w = strtok_r(NULL, seps, &save))
			strv_push(out, w);
		if (tool)
			return;
	}
}

/* The installed version dir/VERSION or, for a prefix ("3.11"), the
 * highest dir/VERSION.*; NULL when none. */
static char *installed(const char *dir, const char *version)
{
	_cleanup_free_ char *exact = xasprintf("%s/%s", dir, version);
	struct stat st;
	if (stat(exact, &st) == 0 && S_ISDIR(st.st_mode))
		return xstrdup(version);
	_cleanup_dir_ DIR *d = opendir(dir);
	if (!d)
		return NULL;
	bool latest = strcmp(version, "latest") == 0;
	_cleanup_free_ char *prefix = xasprintf("%s.", version), *best = NULL;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.' || (!latest && strncmp(de->d_name, prefix, strlen(prefix))))
			continue;
		if (!best || strverscmp(de->d_name, best) > 0) {
			free(best);
			best = xstrdup(de->d_name);
		}
	}
	return steal_ptr(&best);
}

/* pyenv, rbenv, goenv, nodenv: the variable, then the version file from
 * the workspace up, then ROOT/version; the first listed version that has
 * cmd. */
static int pick_env_manager(const struct manager *m, const char *root, const char *cmd,
			    const char *workspace, struct vm_pick *p, struct werr *e)
{
	_cleanup_strv_ struct strv vers = { 0 };
	const char *env = getenv(m->ver_var);
	if (env && *env) {
		words_of(env, ":", NULL, &vers);
		p->from = xasprintf("$%s", m->ver_var);
	} else {
		_cleanup_free_ char *file = find_up(workspace, m->file);
		if (!file) {
			file = xasprintf("%s/version", root);
			if (access(file, R_OK) != 0) {
				free(file);
				file = NULL;
			}
		}
		_cleanup_free_ char *text = file ? vmshim_read_file(file) : NULL;
		if (text)
			words_of(text, " \t\r", NULL, &vers);
		if (file)
			p->from = steal_ptr(&file);
	}
	if (!vers.n) {
		strv_push(&vers, "system");
		free(p->from);
		p->from = xstrdup("default");
	}
	_cleanup_free_ char *vdir = xasprintf("%s/versions", root);
	for (size_t i = 0; i < vers.n; i++) {
		if (strcmp(vers.v[i], "system") == 0)
			return 1;
		if (!vmshim_name_ok(vers.v[i]))
			return werr_set(e, 0, "%s is %s's shim: refusing the version name '%s' "
					"(from %s)", cmd, m->name, vers.v[i], p->from);
		_cleanup_free_ char *v = installed(vdir, vers.v[i]);
		_cleanup_free_ char *prog = v ? xasprintf("%s/%s/bin/%s", vdir, v, cmd) : NULL;
		if (prog && vmshim_is_exec(prog)) {
			p->version = steal_ptr(&v);
			p->program = steal_ptr(&prog);
			return 1;
		}
	}
	return werr_set(e, 0, "%s is %s's shim: no version it picks here (%s, from %s) is "
			"installed in %s with %s: install it, or run the interpreter by its path",
			cmd, m->name, vers.v[0], p->from, vdir, cmd);
}

/* The versions of tool a mise.toml's [tools] table lists: `tool = "V"`,
 * `tool = ["V1", "V2"]` or `tool = { version = "V" }`. */
static void toml_tool_versions(const char *text, const char *tool, struct strv *out)
{
	bool in_tools = false;
	_cleanup_free_ char *t = xstrdup(text);
	for (char *line = t, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (line[0] == '[') {
			in_tools = strncmp(line, "[tools]", 7) == 0;
			continue;
		}
		size_t n = strlen(tool);
		if (!in_tools || strncmp(line, tool, n) != 0 || !strchr(" \t=", line[n]))
			continue;
		char *val = strchr(line + n, '=');
		if (!val)
			continue;
		if (strstr(val, "version") && strchr(val, '{'))
			val = strchr(strstr(val, "version"), '=');
		for (char *q = val ? strchr(val, '"') : NULL; q; q = strchr(q, '"')) {
			char *end = strchr(q + 1, '"');
			if (!end)
				break;
			*end = '\0';
			strv_push(out, q + 1);
			q = end + 1;
			if (strchr(val, '{'))
				break;
		}
		return;
	}
}

/* The versions of tool for asdf or mise: the variable, the files from the
 * workspace up, then the user's global files. */
static void tool_choice(const char *mgr, const char *tool, const char *workspace,
			const char *home, struct strv *vers, char **from)
{
	_cleanup_free_ char *var = xasprintf("%s_%s_VERSION", strcmp(mgr, "asdf") ? "MISE" : "ASDF",
					     tool);
	for (char *c = var; *c; c++)
		*c = *c == '-' ? '_' : (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
	const char *env = getenv(var);
	if (env && *env) {
		words_of(env, " ", NULL, vers);
		*from = xasprintf("$%s", var);
		return;
	}
	/* the workspace up, then the user's global files */
	static const char *const mise_files[] = { "mise.toml", ".mise.toml", ".tool-versions" };
	static const char *const asdf_files[] = { ".tool-versions" };
	bool mise = strcmp(mgr, "mise") == 0;
	const char *const *names = mise ? mise_files : asdf_files;
	size_t nn = mise ? ARRAY_LEN(mise_files) : ARRAY_LEN(asdf_files);
	_cleanup_free_ char *g1 = home ? xasprintf("%s/.config/mise/config.toml", home) : NULL;
	_cleanup_free_ char *g2 = home ? xasprintf("%s/.tool-versions", home) : NULL;
	for (size_t i = 0; i < nn + 2; i++) {
		_cleanup_free_ char *f = i < nn ? find_up(workspace, names[i])
				       : xstrdup_or_null(i == nn ? (mise ? g1 : NULL) : g2);
		_cleanup_free_ char *text = f ? vmshim_read_file(f) : NULL;
		if (!text)
			continue;
		if (strstr(f, ".toml"))
			toml_tool_versions(text, tool, vers);
		else
			words_of(text, " \t\r", tool, vers);
		if (vers->n) {
			*from = steal_ptr(&f);
			return;
		}
	}
}

/* asdf and mise: each tool the shim may stand for, its versions, the first
 * installed one with cmd under DATA/installs/TOOL/VERSION. */
static int pick_tool_manager(const char *mgr, const char *data, const struct strv *tools,
			     const char *cmd, const char *workspace, const char *home,
			     struct vm_pick *p, struct werr *e)
{
	_cleanup_free_ char *asked = NULL; /* the first tool's versions, for the error */
	for (size_t t = 0; t < tools->n; t++) {
		_cleanup_strv_ struct strv vers = { 0 };
		_cleanup_free_ char *from = NULL;
		tool_choice(mgr, tools->v[t], workspace, home, &vers, &from);
		if (!asked && vers.n)
			asked = xasprintf(" (%s %s, from %s)", tools->v[t], vers.v[0], from);
		_cleanup_free_ char *dir = xasprintf("%s/installs/%s", data, tools->v[t]);
		for (size_t i = 0; i < vers.n; i++) {
			if (strcmp(vers.v[i], "system") == 0) {
				p->from = steal_ptr(&from);
				return 1;
			}
			if (!vmshim_name_ok(vers.v[i]))
				return werr_set(e, 0, "%s is %s's shim: refusing the version name "
						"'%s' (from %s)", cmd, mgr, vers.v[i], from);
			_cleanup_free_ char *v = installed(dir, vers.v[i]);
			_cleanup_free_ char *prog = v ? xasprintf("%s/%s/bin/%s", dir, v, cmd) : NULL;
			if (prog && vmshim_is_exec(prog)) {
				p->version = xasprintf("%s %s", tools->v[t], v);
				p->program = steal_ptr(&prog);
				p->from = steal_ptr(&from);
				return 1;
			}
		}
	}
	if (!asked)
		return werr_set(e, 0, "%s is %s's shim: no version of %s is set for this workspace "
				"(its variable, %s from the workspace up, your global file): set one, "
				"or run the interpreter by its path", cmd, mgr,
				tools->n ? tools->v[0] : cmd,
				strcmp(mgr, "mise") == 0 ? "mise.toml or .tool-versions" : ".tool-versions");
	return werr_set(e, 0, "%s is %s's shim: no version of %s set for this workspace%s is "
			"installed in %s/installs: install it, or run the interpreter by its path",
			cmd, mgr, tools->n ? tools->v[0] : cmd, asked, data);
}

/* mise's tools that might provide cmd: every DATA/installs/TOOL. */
static void mise_tools(const char *data, struct strv *tools)
{
	_cleanup_free_ char *dir = xasprintf("%s/installs", data);
	_cleanup_dir_ DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));)
		if (de->d_name[0] != '.')
			strv_push(tools, de->d_name);
}

/* asdf's plugins named in the shim: `# asdf-plugin: NAME VERSION`. */
static void asdf_tools(const char *text, struct strv *tools)
{
	for (const char *s = strstr(text, "# asdf-plugin: "); s; s = strstr(s + 1, "# asdf-plugin: ")) {
		const char *n = s + strlen("# asdf-plugin: ");
		_cleanup_free_ char *name = xasprintf("%.*s", (int)strcspn(n, " \n"), n);
		if (vmshim_name_ok(name) && !strv_contains(tools, name))
			strv_push(tools, name);
	}
}

/* The head of the shim (a regular file, or a symlink to mise), and which
 * manager made it; NULL when none. */
static const struct manager *which_manager(const char *found, char *head, size_t len)
{
	char target[PATH_MAX];
	ssize_t tl = readlink(found, target, sizeof target - 1);
	if (tl > 0) {
		target[tl] = '\0';
		const char *b = strrchr(target, '/');
		for (size_t i = 0; strcmp(b ? b + 1 : target, "mise") == 0 && i < ARRAY_LEN(managers); i++)
			if (strcmp(managers[i].name, "mise") == 0)
				return &managers[i];
	}
	_cleanup_close_ int fd = open(found, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	ssize_t n = pread(fd, head, len - 1, 0);
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return NULL;
	head[n] = '\0';
	for (size_t i = 0; i < ARRAY_LEN(managers); i++)
		if (strstr(head, managers[i].marker))
			return &managers[i];
	return NULL;
}

int vmshim_resolve(const char *found, const char *cmd, const char *workspace, const char *home,
		   struct vm_pick *p, struct werr *e)
{
	if (rustup_is_proxy(found, cmd)) {
		int r = rustup_pick(found, cmd, workspace, home, p, e);
		if (r < 0)
			vm_pick_free(p);
		return r;
	}
	char head[SHIM_HEAD];
	head[0] = '\0';
	const struct manager *m = which_manager(found, head, sizeof head);
	if (!m)
		return 0;
	*p = (struct vm_pick){ .manager = m->name, .shims = xstrdup(found) };
	*strrchr(p->shims, '/') = '\0';
	/* the root (data directory): the shim's own export, the variable,
	 * else the shims directory's parent */
	char *root = shim_export(head, m->root_var);
	const char *env = getenv(m->root_var);
	if (!root && env && env[0] == '/')
		root = xstrdup(env);
	if (!root) {
		root = xstrdup(p->shims);
		char *s = strrchr(root, '/');
		if (s)
			*(s == root ? s + 1 : s) = '\0';
	}
	_cleanup_free_ char *rootp = root;
	int r;
	if (m->ver_var) {
		r = pick_env_manager(m, rootp, cmd, workspace, p, e);
	} else {
		_cleanup_strv_ struct strv tools = { 0 };
		if (strcmp(m->name, "asdf") == 0)
			asdf_tools(head, &tools);
		else
			mise_tools(rootp, &tools);
		r = pick_tool_manager(m->name, rootp, &tools, cmd, workspace, home, p, e);
	}
	if (r < 0)
		vm_pick_free(p);
	return r;
}
