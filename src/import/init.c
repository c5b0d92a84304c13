/* init.c - `warden init`'s profile: the toolchains a project's files show
 * (package.json, pyproject.toml, Cargo.toml, go.mod, ...) and the hosts
 * their package managers fetch from, as `net allow` lines; their caches in
 * the home as `read-write` lines left commented out (a cache the agent can
 * write is code that runs later outside the sandbox); the hosts of the git
 * remotes, commented out too (an allowed host receives what the agent
 * sends). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/sbuf.h"
#include "import.h"

static const struct toolchain {
	const char *name;
	const char *markers[8]; /* files in the project's top directory */
	const char *hosts[4];
	const char *caches[3];  /* in the home */
} chains[] = {
	{ "Node (npm, pnpm)", { "package.json", "package-lock.json", "pnpm-lock.yaml", "npm-shrinkwrap.json" },
	  { "registry.npmjs.org" }, { "~/.npm", "~/.local/share/pnpm" } },
	{ "Yarn", { "yarn.lock", ".yarnrc.yml" }, { "registry.yarnpkg.com" }, { "~/.cache/yarn" } },
	{ "Python (pip, uv, Poetry)",
	  { "pyproject.toml", "requirements.txt", "requirements-dev.txt", "setup.py", "setup.cfg",
	    "Pipfile", "poetry.lock", "uv.lock" },
	  { "pypi.org", "files.pythonhosted.org" }, { "~/.cache/pip", "~/.cache/uv", "~/.cache/pypoetry" } },
	{ "Rust (cargo)", { "Cargo.toml", "Cargo.lock" }, { "crates.io", "static.crates.io", "index.crates.io" },
	  { "~/.cargo/registry", "~/.cargo/git" } },
	{ "Go (modules)", { "go.mod", "go.sum" }, { "proxy.golang.org", "sum.golang.org" },
	  { "~/go/pkg/mod", "~/.cache/go-build" } },
	{ "Ruby (Bundler)", { "Gemfile", "Gemfile.lock" }, { "rubygems.org", "index.rubygems.org" },
	  { "~/.gem", "~/.bundle" } },
	{ "Java (Maven)", { "pom.xml", "mvnw" }, { "repo.maven.apache.org", "repo1.maven.org" },
	  { "~/.m2/repository" } },
	{ "Java (Gradle)", { "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradlew" },
	  { "services.gradle.org", "plugins.gradle.org", "repo.maven.apache.org" },
	  { "~/.gradle/caches", "~/.gradle/wrapper" } },
	{ "PHP (Composer)", { "composer.json", "composer.lock" }, { "repo.packagist.org" },
	  { "~/.cache/composer" } },
	{ "Deno", { "deno.json", "deno.jsonc" }, { "deno.land", "jsr.io" }, { "~/.cache/deno" } },
	{ "Elixir (Hex)", { "mix.exs" }, { "repo.hex.pm", "builds.hex.pm" }, { "~/.hex", "~/.mix" } },
	{ "Dart (pub)", { "pubspec.yaml" }, { "pub.dev" }, { "~/.pub-cache" } },
};

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
	char *text;
	size_t len;
	const char *what;
	if (read_regular_file(p, IMPORT_MAX_FILE, &text, &len, &what) < 0)
		return;
	_cleanup_free_ char *t = xmalloc(len + 1);
	memcpy(t, text, len);
	t[len] = '\0';
	free(text);
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

char *init_profile(const char *dir, const char *name, struct strv *found)
{
	struct sbuf b = { 0 };
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
		if (found->n == 1)
			sb_puts(&b, "# Its cache in your home, shared with the sandbox, saves downloads; but\n"
				    "# what the agent writes there runs later outside the sandbox. Without\n"
				    "# it the home inside is a fresh tmpfs each session.\n");
		else
			sb_puts(&b, "# Its cache (shared, see above):\n");
		for (size_t k = 0; k < ARRAY_LEN(c->caches) && c->caches[k]; k++)
			sb_printf(&b, "#read-write %s\n", c->caches[k]);
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
