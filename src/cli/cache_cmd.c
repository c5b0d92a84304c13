/* cache_cmd.c - `warden cache list` (each workspace's caches kept by the
 * profiles' `cache` lines, and their size) and `warden cache clear [DIR]`
 * (remove one workspace's, refused while a session uses them). The place
 * and its names: src/session/caches.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/shown.h"
#include "../common/util.h"
#include "../session/caches.h"
#include "cli.h"
#include "cmdtab.h"

static const char cache_usage[] =
	"usage: warden cache list\n"
	"       warden cache clear [DIR]\n"
	"\n"
	"A profile's `cache ~/PATH` keeps that directory of the sandbox's home for\n"
	"the workspace's next sessions, in ~/.local/share/warden/caches (or\n"
	"$XDG_DATA_HOME/warden/caches). list shows each workspace's and its size;\n"
	"clear removes those of workspace DIR (default: the current directory),\n"
	"and refuses while a session uses them.\n";

/* The bytes on disk under name in dirfd, never following a symlink. */
static unsigned long long tree_bytes(int at, const char *name)
{
	struct stat st;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	unsigned long long n = (unsigned long long)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode))
		return n;
	_cleanup_dir_ DIR *d = dir_open_at(at, name, O_NOFOLLOW);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n += tree_bytes(dirfd(d), de->d_name);
	return n;
}

static void print_size(unsigned long long n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;
	while (v >= 1024 && u + 1 < ARRAY_LEN(unit)) {
		v /= 1024;
		u++;
	}
	printf(u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* The workspace a directory of caches names (its CACHES_WORKSPACE_FILE),
 * or NULL. */
static char *named_workspace(int kfd)
{
	_cleanup_close_ int fd = openat(kfd, CACHES_WORKSPACE_FILE,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	char buf[PATH_MAX + 1];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n <= 1 || buf[n - 1] != '\n')
		return NULL;
	buf[n - 1] = '\0';
	return strlen(buf) == (size_t)n - 1 ? xstrdup(buf) : NULL;
}

/* One workspace's caches: its path (and whether it is gone), each cache
 * and its size. 1 when it was listed. */
static size_t list_one(int bfd, const char *key)
{
	_cleanup_close_ int kfd = openat(bfd, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (kfd < 0)
		return 0;
	_cleanup_free_ char *ws = named_workspace(kfd);
	_cleanup_free_ char *shown = text_shown(ws ? ws : "(workspace not named)");
	struct stat st;
	printf("%s%s\n", shown, ws && stat(ws, &st) == 0 && S_ISDIR(st.st_mode) ? "" : " (gone)");
	_cleanup_dir_ DIR *d = dir_open_at(kfd, ".", 0);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		_cleanup_free_ char *path = caches_decode(de->d_name);
		if (!path)
			continue;
		_cleanup_free_ char *p = text_shown(path);
		struct stat cs;
		printf("  ~/%-30s ", p);
		if (fstatat(kfd, de->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cs.st_mode))
			print_size(tree_bytes(kfd, de->d_name));
		else
			fputs("(not a directory: a session refuses it; clear it)", stdout);
		putchar('\n');
	}
	return 1;
}

static int cache_list(void)
{
	_cleanup_free_ char *base = caches_base(user_home());
	if (!base) {
		fputs("warden: no place for caches: HOME and XDG_DATA_HOME are not absolute paths\n",
		      stderr);
		return EXIT_WARDEN;
	}
	_cleanup_close_ int bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0) {
		if (errno != ENOENT) {
			fprintf(stderr, "warden: %s: %s\n", base, strerror(errno));
			return EXIT_WARDEN;
		}
		printf("no caches (%s)\n", base);
		return 0;
	}
	_cleanup_dir_ DIR *d = dir_open_at(bfd, ".", 0);
	struct dirent *de;
	size_t n = 0;
	while (d && (de = readdir(d)))
		if (strlen(de->d_name) == CACHES_KEY_LEN &&
		    strspn(de->d_name, "0123456789abcdef") == CACHES_KEY_LEN)
			n += list_one(bfd, de->d_name);
	if (!n)
		printf("no caches (%s)\n", base);
	return 0;
}

/* The workspace DIR names: its real path, or (a workspace gone since)
 * DIR itself when absolute and normalised. */
static char *workspace_of(const char *dir)
{
	char buf[PATH_MAX];
	if (realpath(dir, buf))
		return xstrdup(buf);
	if (dir[0] == '/' && !path_has_dot_components(dir + 1) && (strlen(dir) == 1 ||
								    dir[strlen(dir) - 1] != '/'))
		return xstrdup(dir);
	return NULL;
}

static int cache_clear(const char *dir)
{
	_cleanup_free_ char *base = caches_base(user_home());
	_cleanup_free_ char *ws = workspace_of(dir ? dir : ".");
	if (!base || !ws) {
		fprintf(stderr, "warden: cache clear: %s\n", !base ? "no place for caches: HOME and "
			"XDG_DATA_HOME are not absolute paths" : "name the workspace by its absolute "
			"path (it is gone)");
		return EXIT_WARDEN;
	}
	_cleanup_free_ char *shown = text_shown(ws);
	char key[CACHES_KEY_LEN + 1];
	caches_key(ws, key);
	_cleanup_close_ int bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int kfd = bfd < 0 ? -1 : openat(bfd, key, O_RDONLY | O_DIRECTORY |
							 O_NOFOLLOW | O_CLOEXEC);
	if (kfd < 0 && errno == ENOENT) {
		printf("no caches for %s\n", shown);
		return 0;
	}
	if (kfd < 0 || flock(kfd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "warden: cache clear: the caches of %s (%s/%s): %s\n", shown, base,
			key, errno == EWOULDBLOCK ? "a running session uses them" : strerror(errno));
		return EXIT_WARDEN;
	}
	if (remove_tree_at(bfd, key) < 0) {
		fprintf(stderr, "warden: cache clear: removing %s/%s: %s\n", base, key, strerror(errno));
		return EXIT_WARDEN;
	}
	printf("cleared the caches of %s\n", shown);
	return 0;
}

int cmd_cache(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(cache_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "list") == 0 && argc == 2)
		return cache_list();
	if (strcmp(argv[1], "clear") != 0) {
		fputs(cache_usage, stderr);
		return EXIT_USAGE;
	}
	int rc = cli_operands_only(argc, argv, 2, "cache clear", cache_usage);
	if (rc >= 0)
		return rc;
	if (argc - optind > 1) {
		fputs(cache_usage, stderr);
		return EXIT_USAGE;
	}
	return cache_clear(optind < argc ? argv[optind] : NULL);
}
