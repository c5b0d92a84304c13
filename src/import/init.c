/* init.c - `warden init`'s profile: the toolchains a project's files show
 * (package.json, pyproject.toml, Cargo.toml, go.mod, ...) and the hosts
 * their package managers fetch from, as `net allow` lines; their caches
 * kept for the workspace's sessions, as `cache` lines (warden's own
 * directories, which reach no build outside); their caches in the home as
 * `read-write` lines with the variable that points the tool at them, left
 * commented out (a cache the agent can write is code that runs later
 * outside the sandbox); the hosts of the git
 * remotes, commented out too (an allowed host receives what the agent
 * sends). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/sbuf.h"
#include "import.h"

/* A cache in the home and the variable that points its tool at it: a
 * profile path is bound at the same path inside, where the home is
 * another, so the tool must be told. None for caches that live beside the
 * tool's credentials (CARGO_HOME, GRADLE_USER_HOME, HEX_HOME). */
struct cache {
	const char *dir; /* under the home */
	const char *var; /* NAME=, the value the directory's path (or PREFIX then it) */
	const char *prefix;
};

static const struct toolchain {
	const char *name;
	const char *markers[8]; /* files in the project's top directory */
	const char *hosts[4];
	struct cache caches[3];
	const char *keep[3];    /* `cache` lines (none: the caches' directories) */
	const char *nocache;    /* why its cache in the home is not offered */
} chains[] = {
	{ .name = "Node (npm, pnpm)",
	  .markers = { "package.json", "package-lock.json", "pnpm-lock.yaml", "npm-shrinkwrap.json" },
	  .hosts = { "registry.npmjs.org" },
	  .caches = { { .dir = ".npm", .var = "npm_config_cache" }, { .dir = ".local/share/pnpm/store", .var = "npm_config_store_dir" } } },
	{ .name = "Yarn",
	  .markers = { "yarn.lock", ".yarnrc.yml" },
	  .hosts = { "registry.yarnpkg.com" },
	  .caches = { { .dir = ".cache/yarn", .var = "YARN_CACHE_FOLDER" } } },
	{ .name = "Python (pip, uv, Poetry)",
	  .markers = { "pyproject.toml", "requirements.txt", "requirements-dev.txt", "setup.py", "setup.cfg", "Pipfile", "poetry.lock", "uv.lock" },
	  .hosts = { "pypi.org", "files.pythonhosted.org" },
	  .caches = { { .dir = ".cache/pip", .var = "PIP_CACHE_DIR" }, { .dir = ".cache/uv", .var = "UV_CACHE_DIR" }, { .dir = ".cache/pypoetry", .var = "POETRY_CACHE_DIR" } } },
	{ .name = "Rust (cargo)",
	  .markers = { "Cargo.toml", "Cargo.lock" },
	  .hosts = { "crates.io", "static.crates.io", "index.crates.io" },
	  .keep = { ".cargo/registry", ".cargo/git" },
	  .nocache = "cargo keeps its cache in CARGO_HOME, beside its credentials" },
	{ .name = "Go (modules)",
	  .markers = { "go.mod", "go.sum" },
	  .hosts = { "proxy.golang.org", "sum.golang.org" },
	  .caches = { { .dir = "go/pkg/mod", .var = "GOMODCACHE" }, { .dir = ".cache/go-build", .var = "GOCACHE" } } },
	{ .name = "Ruby (Bundler)",
	  .markers = { "Gemfile", "Gemfile.lock" },
	  .hosts = { "rubygems.org", "index.rubygems.org" } },
	{ .name = "Java (Maven)",
	  .markers = { "pom.xml", "mvnw" },
	  .hosts = { "repo.maven.apache.org", "repo1.maven.org" },
	  .caches = { { .dir = ".m2/repository", .var = "MAVEN_OPTS", .prefix = "-Dmaven.repo.local=" } } },
	{ .name = "Java (Gradle)",
	  .markers = { "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradlew" },
	  .hosts = { "services.gradle.org", "plugins.gradle.org", "repo.maven.apache.org" },
	  .nocache = "Gradle keeps its cache in GRADLE_USER_HOME, beside gradle.properties" },
	{ .name = "PHP (Composer)",
	  .markers = { "composer.json", "composer.lock" },
	  .hosts = { "repo.packagist.org" },
	  .caches = { { .dir = ".cache/composer", .var = "COMPOSER_CACHE_DIR" } } },
	{ .name = "Deno",
	  .markers = { "deno.json", "deno.jsonc" },
	  .hosts = { "deno.land", "jsr.io" },
	  .caches = { { .dir = ".cache/deno", .var = "DENO_DIR" } } },
	{ .name = "Elixir (Hex)",
	  .markers = { "mix.exs" },
	  .hosts = { "repo.hex.pm", "builds.hex.pm" },
	  .nocache = "Hex keeps its cache in HEX_HOME, beside its API key" },
	{ .name = "Dart (pub)",
	  .markers = { "pubspec.yaml" },
	  .hosts = { "pub.dev" },
	  .caches = { { .dir = ".pub-cache", .var = "PUB_CACHE" } } },
};

/* The toolchain's `cache` lines, said what they are the first time. */
static void keep_lines(struct sbuf *b, const struct toolchain *c, bool *said)
{
	const char *const *v = c->keep;
	const char *dirs[ARRAY_LEN(c->caches)] = { 0 };
	if (!v[0]) {
		for (size_t k = 0; k < ARRAY_LEN(c->caches); k++)
			dirs[k] = c->caches[k].dir;
		v = dirs;
	}
	if (!v[0])
		return;
	sb_puts(b, *said ? "# Its downloads kept (see above):\n"
			 : "# Its downloads kept for this workspace's next sessions, in warden's\n"
			   "# own directory, never your home's, and not in a --review session\n"
			   "# (warden-profile(5)). Without them the home inside is a fresh tmpfs\n"
			   "# each session.\n");
	*said = true;
	for (size_t k = 0; k < ARRAY_LEN(c->keep) && v[k]; k++)
		sb_printf(b, "cache ~/%s\n", v[k]);
}

static bool is_file(const char *dir, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	return lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

/* The host of a git remote URL (https://[u@]host[:port]/..., ssh://...,
 * git@host:path), or NULL. */
static char *url_host(const char *u)
{
	const char *h = strstr(u, "://");
	if (h)
		h += 3;
	else if (strchr(u, '@') && strchr(u, ':') > strchr(u, '@'))
		h = u; /* scp-like git@host:path */
	else
		return NULL;
	const char *at = strchr(h, '@'), *sl = strchr(h, '/');
	if (at && (!sl || at < sl))
		h = at + 1;
	size_t n = strcspn(h, ":/");
	if (!n || n > 253)
		return NULL;
	char *s = xmalloc(n + 1);
	memcpy(s, h, n);
	s[n] = '\0';
	for (char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '-')) {
			free(s);
			return NULL;
		}
	return s;
}

/* The hosts of the remotes in dir/.git/config, each once. */
static void git_hosts(const char *dir, struct strv *hosts)
{
	_cleanup_free_ char *p = xasprintf("%s/.git/config", dir);
	_cleanup_free_ char *t = NULL;
	size_t len;
	char what[READ_WHY_MAX];
	if (read_regular_file(p, IMPORT_MAX_FILE, &t, &len, what) < 0)
		return;
	for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n")) {
		l += strspn(l, " \t");
		if (strncmp(l, "url", 3) != 0)
			continue;
		char *v = l + 3;
		v += strspn(v, " \t");
		if (*v++ != '=')
			continue;
		v += strspn(v, " \t\"");
		v[strcspn(v, " \t\"\r")] = '\0';
		char *h = url_host(v);
		if (h && !strv_contains(hosts, h))
			strv_push(hosts, h);
		free(h);
	}
}

char *init_profile(const char *dir, const char *name, const char *home, struct strv *found)
{
	struct sbuf b = { 0 };
	bool cache_said = false, keep_said = false;
	const char *base = strrchr(dir, '/') && strrchr(dir, '/')[1] ? strrchr(dir, '/') + 1 : dir;
	const char *shown = name ? name : "FILE";
	sb_printf(&b, "# warden profile for the project %s, written by `warden init`.\n", base);
	sb_printf(&b, "# Use it: warden run --profile %s -- COMMAND\n", shown);
	sb_printf(&b, "# Check it: warden policy show --profile %s\n", shown);
	sb_puts(&b, "# It is layered on warden's built-in default profile: the workspace is\n"
		    "# writable, the home inside is empty, secrets in the workspace are\n"
		    "# unreadable, and there is no network but what `net allow` lines allow.\n");
	if (name)
		sb_printf(&b, "\n# The agent must not widen its own next session: read-only inside.\n"
			      "protect %s\n", name);
	for (size_t i = 0; i < ARRAY_LEN(chains); i++) {
		const struct toolchain *c = &chains[i];
		const char *marker = NULL;
		for (size_t k = 0; !marker && k < ARRAY_LEN(c->markers) && c->markers[k]; k++)
			if (is_file(dir, c->markers[k]))
				marker = c->markers[k];
		if (!marker)
			continue;
		strv_push(found, c->name);
		sb_printf(&b, "\n# ---- %s: %s\n", c->name, marker);
		for (size_t k = 0; k < ARRAY_LEN(c->hosts) && c->hosts[k]; k++)
			sb_printf(&b, "net allow %s\n", c->hosts[k]);
		keep_lines(&b, c, &keep_said);
		if (c->nocache)
			sb_printf(&b, "# Its cache in your home is not offered: %s.\n", c->nocache);
		if (!c->caches[0].dir)
			continue;
		if (!cache_said) {
			sb_puts(&b, "# Or share its cache in your home with the sandbox (your own\n"
				    "# builds' downloads too); but what the agent writes there runs\n"
				    "# later outside the sandbox. Uncomment both lines of one: the path\n"
				    "# is bound at the same path inside, and the variable points the\n"
				    "# tool at it.\n");
			cache_said = true;
		} else {
			sb_puts(&b, "# Its cache (shared, see above):\n");
		}
		for (size_t k = 0; k < ARRAY_LEN(c->caches) && c->caches[k].dir; k++) {
			const struct cache *h = &c->caches[k];
			sb_printf(&b, "#read-write ~/%s\n#env set %s=%s%s/%s\n", h->dir, h->var,
				  h->prefix ? h->prefix : "", home, h->dir);
		}
	}
	if (!found->n)
		sb_puts(&b, "\n# No toolchain found here (package.json, pyproject.toml, Cargo.toml,\n"
			    "# go.mod, Gemfile, pom.xml, build.gradle, composer.json, ...). Allow\n"
			    "# what the work needs, for example:\n"
			    "#net allow registry.npmjs.org\n");
	_cleanup_strv_ struct strv hosts = { 0 };
	git_hosts(dir, &hosts);
	if (hosts.n) {
		sb_puts(&b, "\n# ---- git remotes: not allowed, since an allowed host receives what the\n"
			    "# agent sends (a push); uncomment to fetch and push from the sandbox\n");
		for (size_t i = 0; i < hosts.n; i++)
			sb_printf(&b, "#net allow %s\n", hosts.v[i]);
	}
	return sb_take(&b);
}
