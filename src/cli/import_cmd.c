/* import_cmd.c - `warden import claude|codex|srt [FILE] [-o FILE]
 * [--force]`: another sandbox's settings as a warden profile (src/import/),
 * on stdout or into a new file; what cannot be mapped said on stderr too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../import/import.h"
#include "cli.h"
#include "cmdtab.h"

static const char import_usage[] =
	"usage: warden import claude|codex|srt [FILE] [-o FILE] [--force]\n"
	"\n"
	"Write a warden profile from another sandbox's settings: Claude Code's\n"
	"settings.json (sandbox and permissions), Anthropic sandbox-runtime's\n"
	"settings (srt), Codex's config.toml. Without FILE: for claude the managed,\n"
	"user (~/.claude/settings.json), project (.claude/settings.json) and local\n"
	"(.claude/settings.local.json) settings that exist, layered; for srt\n"
	"~/.srt-settings.json; for codex $CODEX_HOME/config.toml (~/.codex/config.toml)\n"
	"and the project's .codex/config.toml. The profile is at least as strict as\n"
	"the settings; what cannot be mapped is listed in it and on stderr.\n"
	"\n"
	"  -o, --output FILE  write the profile to FILE (default: stdout)\n"
	"  -f, --force        write over FILE when it exists\n"
	"  -h, --help         this text\n"
	"\n"
	"Exit status: 0 written; 2 bad usage or settings that cannot be read.\n";

/* FILE as shown: "~/..." for the home. */
static char *shown_path(const char *p, const char *home)
{
	size_t n = home ? strlen(home) : 0;
	if (n > 1 && strncmp(p, home, n) == 0 && p[n] == '/')
		return xasprintf("~%s", p + n);
	return xstrdup(p);
}

/* A message from the settings on stderr: their control characters as '?'
 * (no terminal escapes from a settings file). */
static void say(const char *what, const char *msg)
{
	_cleanup_free_ char *p = import_printable(msg);
	fprintf(stderr, "warden: import: %s%s\n", what, p);
}

/* The settings files to read into paths: the one named, else the default
 * ones that exist. 0, or 2 when there is none (said). */
static int import_paths(const struct imp *m, const char *name, const char *file,
			struct strv *paths)
{
	if (file) {
		strv_push(paths, file);
		return 0;
	}
	_cleanup_strv_ struct strv all = { 0 };
	import_default_files(m->src, m->home, &all);
	for (size_t i = 0; i < all.n; i++)
		if (access(all.v[i], F_OK) == 0)
			strv_push(paths, all.v[i]);
	if (paths->n)
		return 0;
	fprintf(stderr, "warden: import %s: no settings found; looked for", name);
	for (size_t i = 0; i < all.n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", all.v[i]);
	fputs("; name the file\n", stderr);
	return 2;
}

/* Each file read into m, in order: 0, or 2 at the first that cannot be
 * read (said). */
static int import_files(struct imp *m, const struct strv *paths)
{
	int rc = 0;
	for (size_t i = 0; i < paths->n && !rc; i++) {
		char *text;
		size_t len;
		char what[READ_WHY_MAX];
		if (read_regular_file(paths->v[i], IMPORT_MAX_FILE, &text, &len, what) < 0) {
			if (errno)
				fprintf(stderr, "warden: import: %s: %s: %s\n", paths->v[i], what, strerror(errno));
			else
				fprintf(stderr, "warden: import: %s: %s\n", paths->v[i], what);
			return 2;
		}
		struct werr e = { 0 };
		if (import_read(m, m->files.v[i], text, len, &e) < 0) {
			say("", e.msg);
			rc = 2;
		}
		free(text);
	}
	return rc;
}

/* The profile on stdout (no -o, or -o -) or into the new file out. */
static int import_write(const char *profile, const char *out, bool force)
{
	if (!out || strcmp(out, "-") == 0) {
		fputs(profile, stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_WARDEN;
	}
	struct werr e = { 0 };
	if (profile_write(out, profile, force, &e) < 0) {
		werr_print(&e);
		return e.errnum == EEXIST ? 2 : EXIT_WARDEN;
	}
	fprintf(stderr, "warden: import: wrote %s; check it with: warden policy show --profile %s\n",
		out, out);
	return 0;
}

/* claude, codex or srt: the source, or -1 (said). */
static int import_source(const char *name)
{
	if (strcmp(name, "claude") == 0)
		return IMPORT_CLAUDE;
	if (strcmp(name, "codex") == 0)
		return IMPORT_CODEX;
	if (strcmp(name, "srt") == 0)
		return IMPORT_SRT;
	fprintf(stderr, "warden: import: '%.100s' is not claude, codex or srt\n", name);
	return -1;
}

int cmd_import(int argc, char **argv)
{
	const char *out = NULL;
	bool force = false;
	int c;
	while ((c = cli_getopt(argc, argv, "import")) != -1) {
		if (c == 'o') {
			out = optarg;
		} else if (c == 'f') {
			force = true;
		} else {
			fputs(import_usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fputs(import_usage, stderr);
		return 2;
	}
	const char *pos[2] = { argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL };
	if (!pos[0]) {
		fputs(import_usage, stderr);
		return 2;
	}
	struct imp m = { 0 };
	int src = import_source(pos[0]);
	if (src < 0)
		return 2;
	m.src = src;
	m.home = user_home();
	_cleanup_free_ char *cwd = realpath(".", NULL);
	m.cwd = cwd;
	if (!m.home) {
		fputs("warden: import: no home directory is known ($HOME)\n", stderr);
		return 2;
	}
	_cleanup_strv_ struct strv paths = { 0 };
	if (import_paths(&m, pos[0], pos[1], &paths))
		return 2;
	for (size_t i = 0; i < paths.n; i++)
		strv_push_owned(&m.files, shown_path(paths.v[i], m.home));
	int rc = import_files(&m, &paths);
	if (rc) {
		imp_free(&m);
		return rc;
	}
	_cleanup_free_ char *profile = import_emit(&m);
	for (size_t i = 0; i < m.weaker.n; i++)
		say("LESS STRICT: ", m.weaker.v[i]);
	for (size_t i = 0; i < m.unmapped.n; i++)
		say("not mapped: ", m.unmapped.v[i]);
	imp_free(&m);
	return import_write(profile, out, force);
}
