/* shim_cmd.c - `warden shim install|remove|list [--dir DIR | --system]
 * [NAME...]`: shims first on PATH, so that typing `claude` runs it under
 * warden with its agent profile and nobody has to remember `warden run --`
 * (agents/shim.h says what a shim holds). A user's shims go in ~/.local/bin
 * (Debian's ~/.profile puts it first on PATH when it exists); --system's in
 * /usr/local/lib/warden/shims, put first on every login shell's PATH by
 * /etc/profile.d/warden-shims.sh. Nothing but a shim is ever overwritten or
 * removed; a directory warden made for shims goes with the last of them. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../agents/shim.h"
#include "../common/err.h"
#include "../common/util.h"
#include "cli.h"
#include "cmdtab.h"

static const char shim_usage[] =
	"usage: warden shim install [--dir DIR | --system] NAME...\n"
	"       warden shim remove [--dir DIR | --system] NAME...\n"
	"       warden shim list [--dir DIR | --system]\n"
	"\n"
	"A shim NAME first on PATH runs `warden run -- NAME`: typing `claude` runs\n"
	"Claude Code sandboxed, with its agent profile. Shims go in ~/.local/bin, or\n"
	"with --system (as root) in " SHIM_SYSTEM_DIR " for every user\n"
	"(" SHIM_SYSTEM_PROFILE " puts it first on PATH).\n";

/* Where the shims go, and what this run makes of it. */
struct shim_place {
	char *dir;     /* the shims' directory */
	bool system;   /* --system */
	char *made;    /* the file recording that warden made dir (user shims) */
};

static void place_free(struct shim_place *p)
{
	free(p->dir);
	free(p->made);
}

static int place_pick(struct shim_place *p, const char *dir, bool system, struct werr *e)
{
	p->system = system;
	if (system) {
		if (geteuid() != 0)
			return werr_set(e, EPERM, "shim --system writes %s and %s: run it as root",
					SHIM_SYSTEM_DIR, SHIM_SYSTEM_PROFILE);
		p->dir = xstrdup(SHIM_SYSTEM_DIR);
		return 0;
	}
	const char *home = user_home();
	if (!dir && !home)
		return werr_set(e, 0, "shim: no home directory (HOME unset): name one with --dir DIR");
	if (dir && dir[0] != '/')
		return werr_set(e, EINVAL, "shim --dir %s: give an absolute path", dir);
	p->dir = dir ? xstrdup(dir) : xasprintf("%s/.local/bin", home);
	_cleanup_free_ char *state = xdg_warden_dir("XDG_STATE_HOME", home, ".local/state");
	if (state)
		p->made = xasprintf("%s/shim-dir-made", state);
	return 0;
}

/* Did warden make the shims' directory (recorded in p->made)? */
static bool place_made_by_us(const struct shim_place *p)
{
	if (p->system)
		return true; /* SHIM_SYSTEM_DIR is warden's alone */
	char buf[PATH_MAX + 2];
	ssize_t n = p->made ? read_small_file(p->made, buf, sizeof buf, 0) : -1;
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return strcmp(buf, p->dir) == 0;
}

static int place_record_made(const struct shim_place *p, struct werr *e)
{
	if (p->system || !p->made)
		return 0;
	_cleanup_free_ char *parent = xstrdup(p->made);
	*strrchr(parent, '/') = '\0';
	if (mkdir_p(parent, 0700, NULL) < 0)
		return werr_errno(e, "shim: %s", parent);
	_cleanup_close_ int fd = open(p->made, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				      0600);
	if (fd < 0 || dprintf(fd, "%s\n", p->dir) < 0)
		return werr_errno(e, "shim: recording %s in %s", p->dir, p->made);
	return 0;
}

static int write_profile_snippet(struct werr *e)
{
	static const char text[] =
		"# warden-shims: made by `warden shim install --system`; put warden's\n"
		"# shims first on PATH, so `claude` and `codex` run sandboxed.\n"
		"case \":$PATH:\" in\n"
		"*:" SHIM_SYSTEM_DIR ":*) ;;\n"
		"*) PATH=\"" SHIM_SYSTEM_DIR ":$PATH\" ;;\n"
		"esac\n";
	_cleanup_free_ char *tmp = xasprintf("%s.warden-new", SHIM_SYSTEM_PROFILE);
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				      0644);
	if (fd < 0 || write_all(fd, text, sizeof text - 1) < 0 || fchmod(fd, 0644) < 0 ||
	    rename(tmp, SHIM_SYSTEM_PROFILE) < 0) {
		int err = errno;
		unlink(tmp);
		return werr_set(e, err, "shim --system: writing %s: %s", SHIM_SYSTEM_PROFILE,
				strerror(err));
	}
	return 0;
}

/* The shim dir/name written (a new file renamed over it, so a running
 * shim is never seen half written); an existing file that is not a shim
 * is left alone. */
static int shim_write(const char *dir, const char *name, const char *warden, struct werr *e)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	if (lstat(path, &st) == 0 && !(S_ISREG(st.st_mode) && shim_is(path)))
		return werr_set(e, EEXIST, "%s exists and is not a warden shim (is it %s itself? then "
				"put the shim in a directory earlier on PATH: --dir DIR)", path, name);
	_cleanup_free_ char *text = shim_text(warden, name);
	if (!text)
		return werr_set(e, EINVAL, "shim: warden's path %s cannot be written into a shell "
				"script", warden);
	_cleanup_free_ char *tmp = xasprintf("%s/.%s.warden-new", dir, name);
	unlink(tmp);
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				      0755);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0 || fchmod(fd, 0755) < 0 ||
	    rename(tmp, path) < 0) {
		int err = errno;
		unlink(tmp);
		return werr_set(e, err, "shim: writing %s: %s", path, strerror(err));
	}
	return 0;
}

/* The index of dir in PATH (-1: not on it). */
static int path_index(const char *path_env, const char *dir)
{
	int i = 0;
	for (const char *p = path_env ? path_env : ""; *p; i++) {
		const char *end = strchrnul(p, ':');
		if ((size_t)(end - p) == strlen(dir) && strncmp(p, dir, (size_t)(end - p)) == 0)
			return i;
		p = *end ? end + 1 : end;
	}
	return -1;
}

/* The first directory of PATH holding an executable name that is not a
 * shim, and its index (-1: none). */
static int real_index(const char *path_env, const char *name, char *dir, size_t len)
{
	int i = 0;
	for (const char *p = path_env ? path_env : ""; *p; i++) {
		const char *end = strchrnul(p, ':');
		_cleanup_free_ char *c = xasprintf("%.*s/%s", (int)(end - p), p, name);
		if (end > p && access(c, X_OK) == 0 && !shim_is(c)) {
			snprintf(dir, len, "%.*s", (int)(end - p), p);
			return i;
		}
		p = *end ? end + 1 : end;
	}
	return -1;
}

/* Does the user's ~/.profile put ~/.local/bin on PATH (Debian's does,
 * when the directory exists)? */
static bool profile_adds_local_bin(void)
{
	const char *home = user_home();
	_cleanup_free_ char *prof = home ? xasprintf("%s/.profile", home) : NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	char why[READ_WHY_MAX];
	if (!prof || read_regular_file(prof, 1 << 20, &text, &len, why) < 0)
		return false;
	return strstr(text, "$HOME/.local/bin") != NULL;
}

/* What this shell's PATH makes of the shim: said, so the user knows
 * whether typing NAME runs it now, after a new login, or not at all. */
static void say_path(const struct shim_place *p, const char *name)
{
	const char *path_env = getenv("PATH");
	char real[PATH_MAX];
	int at = path_index(path_env, p->dir), ri = real_index(path_env, name, real, sizeof real);
	if (at >= 0 && (ri < 0 || at < ri)) {
		printf("  `%s` runs sandboxed from now on%s\n", name,
		       ri < 0 ? " (the client itself is not on PATH yet: install it)" : "");
		return;
	}
	if (at >= 0) {
		printf("  warning: PATH finds %s in %s before %s: put %s ahead of it, or typing "
		       "`%s` runs it unsandboxed\n", name, real, p->dir, p->dir, name);
		return;
	}
	const char *home = user_home();
	_cleanup_free_ char *local = home ? xasprintf("%s/.local/bin", home) : NULL;
	if (p->system)
		printf("  a new login shell puts %s first on PATH (%s)\n", p->dir,
		       SHIM_SYSTEM_PROFILE);
	else if (local && strcmp(p->dir, local) == 0 && profile_adds_local_bin())
		printf("  %s is not on this shell's PATH yet: a new login shell puts it first "
		       "(~/.profile adds it)\n", p->dir);
	else
		printf("  warning: %s is not on PATH: add it first, e.g. in ~/.profile: "
		       "PATH=\"%s:$PATH\"\n", p->dir, p->dir);
}

static int shim_install(struct shim_place *p, char **names, int n, struct werr *e)
{
	char warden[PATH_MAX];
	ssize_t wl = readlink("/proc/self/exe", warden, sizeof warden - 1);
	if (wl <= 0)
		return werr_errno(e, "shim: finding warden's own path (/proc/self/exe)");
	warden[wl] = '\0';
	for (int i = 0; i < n; i++) {
		if (!shim_name_ok(names[i]) || strcmp(names[i], "warden") == 0)
			return werr_set(e, EINVAL, "shim: '%s' is not a command name a shim can "
					"take", names[i]);
	}
	bool created = false;
	if (mkdir_p(p->dir, 0755, &created) < 0)
		return werr_errno(e, "shim: making %s", p->dir);
	if (created && place_record_made(p, e) < 0)
		return -1;
	if (p->system && write_profile_snippet(e) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (shim_write(p->dir, names[i], warden, e) < 0)
			return -1;
		printf("installed %s/%s: `%s` runs `warden run -- %s`\n", p->dir, names[i],
		       names[i], names[i]);
		say_path(p, names[i]);
	}
	return 0;
}

/* The directory gone with its last shim when warden made it (and with
 * --system the profile snippet), so PATH is as it was before. */
static void place_tidy(const struct shim_place *p)
{
	if (!place_made_by_us(p) || rmdir(p->dir) < 0)
		return;
	printf("removed %s (warden made it for shims; none is left)\n", p->dir);
	if (p->made)
		unlink(p->made);
	if (p->system && unlink(SHIM_SYSTEM_PROFILE) == 0)
		printf("removed %s\n", SHIM_SYSTEM_PROFILE);
}

static int shim_remove(const struct shim_place *p, char **names, int n, struct werr *e)
{
	int failed = 0;
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", p->dir, names[i]);
		struct stat st;
		if (!shim_name_ok(names[i]) || lstat(path, &st) < 0) {
			fprintf(stderr, "warden: shim remove: no shim %s in %s\n", names[i], p->dir);
			failed = 1;
		} else if (!S_ISREG(st.st_mode) || !shim_is(path)) {
			fprintf(stderr, "warden: shim remove: %s is not a warden shim: left alone\n",
				path);
			failed = 1;
		} else if (unlink(path) < 0) {
			fprintf(stderr, "warden: shim remove: %s: %s\n", path, strerror(errno));
			failed = 1;
		} else {
			printf("removed %s\n", path);
		}
	}
	place_tidy(p);
	return failed ? werr_set(e, 0, "shim remove: not every shim named was removed") : 0;
}

static void list_dir(const char *dir)
{
	_cleanup_dir_ DIR *d = opendir(dir);
	if (!d)
		return;
	const char *path_env = getenv("PATH");
	int at = path_index(path_env, dir);
	for (struct dirent *de; (de = readdir(d));) {
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.' || !shim_is(path))
			continue;
		char real[PATH_MAX];
		int ri = real_index(path_env, de->d_name, real, sizeof real);
		const char *state = at < 0 ? "not on this PATH"
				    : ri >= 0 && ri < at ? "behind the client on PATH"
				    : "first on PATH";
		printf("%-12s %s (%s)\n", de->d_name, path, state);
	}
}

static int shim_list(const struct shim_place *p, bool named)
{
	list_dir(p->dir);
	if (!named && !p->system)
		list_dir(SHIM_SYSTEM_DIR);
	return 0;
}

int cmd_shim(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(shim_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1], *dir = NULL;
	bool system = false;
	bool known = !strcmp(sub, "install") || !strcmp(sub, "remove") || !strcmp(sub, "list");
	_cleanup_free_ char *path = xasprintf("shim %s", sub);
	int c;
	optind = 2;
	while (known && (c = cli_getopt(argc, argv, path)) != -1) {
		if (c == 'd')
			dir = optarg;
		else if (c == 'Y')
			system = true;
		else
			known = false;
	}
	int n = argc - optind;
	if (!known || (dir && system) || (strcmp(sub, "list") == 0) != (n == 0)) {
		fputs(shim_usage, stderr);
		return 2;
	}
	struct werr e = { 0 };
	struct shim_place p = { 0 };
	int r = place_pick(&p, dir, system, &e);
	if (r == 0 && strcmp(sub, "install") == 0)
		r = shim_install(&p, argv + optind, n, &e);
	else if (r == 0 && strcmp(sub, "remove") == 0)
		r = shim_remove(&p, argv + optind, n, &e);
	else if (r == 0)
		r = shim_list(&p, dir != NULL);
	place_free(&p);
	if (r < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	return 0;
}
