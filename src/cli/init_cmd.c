/* init_cmd.c - `warden init [-o FILE] [--force]`: a commented profile for
 * the project in the current directory (src/import/init.c), written to
 * ./warden.profile unless -o says otherwise; an existing file is kept
 * unless --force. warden does not look for it: `warden run --profile
 * warden.profile` uses it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../import/import.h"
#include "cli.h"
#include "cmdtab.h"

static const char init_usage[] =
	"usage: warden init [-o FILE] [--force]\n"
	"\n"
	"Write a commented profile for the project in the current directory: the\n"
	"package registries of the toolchains found (package.json, pyproject.toml,\n"
	"Cargo.toml, go.mod, Gemfile, pom.xml, build.gradle, composer.json, ...), their\n"
	"caches and the git remotes' hosts as commented-out lines. Use it with\n"
	"warden run --profile warden.profile.\n"
	"\n"
	"  -o, --output FILE  write to FILE (default: warden.profile; '-': stdout)\n"
	"  -f, --force        write over FILE when it exists\n"
	"  -h, --help         this text\n";

int cmd_init(int argc, char **argv)
{
	const char *out = "warden.profile";
	bool force = false;
	int c;
	while ((c = cli_getopt(argc, argv, "init")) != -1) {
		if (c == 'o') {
			out = optarg;
		} else if (c == 'f') {
			force = true;
		} else {
			fputs(init_usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc || !out[0]) {
		fputs(init_usage, stderr);
		return 2;
	}
	_cleanup_free_ char *cwd = realpath(".", NULL);
	if (!cwd) {
		perror("warden: init: the current directory");
		return EXIT_WARDEN;
	}
	bool to_stdout = strcmp(out, "-") == 0;
	/* a file in the project is protected from the agent by its own profile */
	const char *name = NULL;
	_cleanup_free_ char *rel = NULL;
	if (!to_stdout && out[0] != '/' && !strstr(out, "..") && strncmp(out, "./", 2) != 0)
		name = out;
	else if (!to_stdout && strncmp(out, "./", 2) == 0 && !strstr(out, ".."))
		name = out + 2;
	else if (!to_stdout && path_is_within(out, cwd) && strcmp(out, cwd) != 0)
		name = rel = xstrdup(out + strlen(cwd) + 1);
	if (name && (strpbrk(name, " \t#") || !name[0]))
		name = NULL;
	_cleanup_strv_ struct strv found = { 0 };
	const char *home = user_home();
	if (!home) {
		fputs("warden: init: no home directory is known ($HOME)\n", stderr);
		return 2;
	}
	_cleanup_free_ char *text = init_profile(cwd, name, home, &found);
	if (to_stdout) {
		fputs(text, stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_WARDEN;
	}
	struct werr e = { 0 };
	if (profile_write(out, text, force, &e) < 0) {
		werr_print(&e);
		return e.errnum == EEXIST ? 2 : EXIT_WARDEN;
	}
	fprintf(stderr, "warden: init: wrote %s (", out);
	if (!found.n)
		fputs("no toolchain found", stderr);
	for (size_t i = 0; i < found.n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", found.v[i]);
	fprintf(stderr, "); use it with: warden run --profile %s -- COMMAND\n", out);
	return 0;
}
