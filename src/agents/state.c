/* state.c - the per-agent state directory (state.h): where it is, the
 * checks that refuse one another user or the agent could have arranged,
 * making its entries and seeds, the shared lock a session holds, and
 * `warden state reset`. */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "discover.h"

char *state_default_dir(const char *name, const char *home)
{
	_cleanup_free_ char *base = xdg_warden_dir("XDG_DATA_HOME", home, ".local/share");
	return base ? xasprintf("%s/agents/%s", base, name) : NULL;
}

/* dir made absolute (relative to the current directory) and checked for
 * "." and ".." components. */
static int absolute(const char *dir, char **out, struct werr *e)
{
	if (!*dir)
		return werr_set(e, 0, "--state: an empty path");
	if (dir[0] == '/') {
		*out = xstrdup(dir);
	} else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return werr_errno(e, "the current directory");
		*out = xasprintf("%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, dir);
	}
	size_t n = strlen(*out);
	while (n > 1 && (*out)[n - 1] == '/')
		(*out)[--n] = '\0';
	if (path_has_dot_components(*out)) {
		free(*out);
		*out = NULL;
		return werr_set(e, 0, "agent state directory %s: write it without . or .. "
				"components", dir);
	}
	return 0;
}

/* The checks on st, the state directory's own lstat. */
static int check_owner(const char *dir, const struct stat *st, struct werr *e)
{
	if (S_ISLNK(st->st_mode))
		return werr_set(e, 0, "agent state directory %s is a symlink: warden keeps agent "
				"state only in a real directory of yours (remove the link, or pass "
				"--state with a real directory)", dir);
	if (!S_ISDIR(st->st_mode))
		return werr_set(e, 0, "agent state directory %s is not a directory", dir);
	if (st->st_uid != getuid())
		return werr_set(e, 0, "agent state directory %s is owned by uid %u, not by you "
				"(uid %u): whoever owns it could plant what the agent loads",
				dir, (unsigned)st->st_uid, (unsigned)getuid());
	if (st->st_mode & 022)
		return werr_set(e, 0, "agent state directory %s is writable by other users "
				"(mode %04o): `chmod go-w %s`", dir, (unsigned)(st->st_mode & 07777),
				dir);
	return 0;
}

/* Where the state directory may not be: the home directory or above it, the
 * user's own configuration of a client (the sandbox never makes it
 * writable), a credential store, a directory too broad. */
static int check_place(const char *real, const char *home, struct werr *e)
{
	_cleanup_free_ char *rhome = home ? path_resolve_existing(home) : NULL;
	if (rhome && path_is_within(rhome, real))
		return werr_set(e, 0, "refusing agent state directory %s: it is your home "
				"directory or holds it", real);
	for (size_t i = 0; rhome && i < agent_defs_n; i++)
		for (size_t k = 0; k < agent_defs[i].nstate; k++) {
			_cleanup_free_ char *own = xasprintf("%s/%s", rhome, agent_defs[i].state[k].name);
			if (path_is_within(real, own))
				return werr_set(e, 0, "refusing agent state directory %s: it lies in "
						"your own %s configuration %s, which the sandbox never "
						"makes writable", real, agent_defs[i].title, own);
		}
	return discover_refuse_tree(real, rhome, "agent state", e);
}

static int write_new(int dirfd, const char *rel, const char *text)
{
	_cleanup_close_ int fd = open_beneath(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL, 0600);
	return fd < 0 ? -1 : write_all(fd, text, strlen(text));
}

/* An entry the agent keeps: made when missing, else of its kind and ours. */
static int entry(int dfd, const char *dir, const struct agent_state_entry *en,
		 struct agent_state *st, struct werr *e)
{
	struct stat sb;
	if (fstatat(dfd, en->name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return werr_errno(e, "%s/%s", dir, en->name);
		if (en->dir ? mkdirat(dfd, en->name, 0700) < 0
			    : write_new(dfd, en->name, en->seed ? en->seed : "") < 0)
			return werr_errno(e, "making %s/%s", dir, en->name);
		if (fstatat(dfd, en->name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			return werr_errno(e, "%s/%s", dir, en->name);
	}
	if (S_ISLNK(sb.st_mode) || (en->dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode)))
		return werr_set(e, 0, "%s/%s is not a %s: warden binds only a real one into the "
				"sandbox (`warden state reset` starts afresh)", dir, en->name,
				en->dir ? "directory" : "regular file");
	if (sb.st_uid != getuid())
		return werr_set(e, 0, "%s/%s is owned by uid %u, not by you", dir, en->name,
				(unsigned)sb.st_uid);
	st->v = xrealloc(st->v, (st->n + 1) * sizeof *st->v);
	st->v[st->n++] = (struct home_bind){ .src = xasprintf("%s/%s", dir, en->name),
					      .name = xstrdup(en->name), .dir = en->dir };
	return 0;
}

/* The state directory at path (resolved, or as it will be once made)
 * kept apart from each of apart (NULL, or ending with a NULL path): -1
 * with e filled when it overlaps one in either direction. */
static int keep_apart(const char *path, const struct state_apart *apart, struct werr *e)
{
	for (; apart && apart->what; apart++) {
		if (!apart->path)
			continue;
		_cleanup_free_ char *r = path_resolve_existing(apart->path);
		const char *o = r ? r : apart->path;
		if (path_overlaps(path, o))
			return werr_set(e, 0, "refusing agent state directory %s: it overlaps %s %s",
					path, apart->what, o);
	}
	return 0;
}

/* Resolve, place-check (apart too) and (when make) create the state
 * directory; open it with its lstat checked against the descriptor. *fd -1
 * and 0 when it does not exist and make is false. */
static int open_dir(const struct agent_def *a, const char *dir, const char *home, bool make,
		    const struct state_apart *apart, char **real, int *fd, struct werr *e)
{
	_cleanup_free_ char *def = NULL, *abs = NULL;
	*fd = -1;
	if (!dir) {
		if (!(def = state_default_dir(a->name, home)))
			return werr_set(e, 0, "no place for agent state (HOME and XDG_DATA_HOME are "
					"not absolute paths): pass --state DIR");
		dir = def;
	}
	if (absolute(dir, &abs, e) < 0)
		return -1;
	struct stat ls;
	if (lstat(abs, &ls) < 0) {
		if (errno != ENOENT)
			return werr_errno(e, "agent state directory %s", abs);
		if (!make)
			return 0;
		_cleanup_free_ char *pre = path_resolve_existing(abs);
		if (!pre || check_place(pre, home, e) < 0 || keep_apart(pre, apart, e) < 0)
			return pre ? -1 : werr_set(e, 0, "agent state directory %s: cannot resolve "
						   "its parent", abs);
		if (mkdir_p(abs, 0700, NULL) < 0)
			return werr_errno(e, "making agent state directory %s", abs);
		if (lstat(abs, &ls) < 0)
			return werr_errno(e, "agent state directory %s", abs);
	}
	if (check_owner(abs, &ls, e) < 0)
		return -1;
	char buf[PATH_MAX];
	if (!realpath(abs, buf))
		return werr_errno(e, "agent state directory %s", abs);
	if (check_place(buf, home, e) < 0 || keep_apart(buf, apart, e) < 0)
		return -1;
	_cleanup_close_ int d = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat fs;
	if (d < 0 || fstat(d, &fs) < 0)
		return werr_errno(e, "agent state directory %s", buf);
	if (fs.st_dev != ls.st_dev || fs.st_ino != ls.st_ino)
		return werr_set(e, 0, "agent state directory %s changed while warden checked it",
				abs);
	*real = xstrdup(buf);
	*fd = steal_fd(&d);
	return 0;
}

int state_open(const struct agent_def *a, const char *dir, const char *home,
	       const struct codex_conf *import, const struct state_apart *apart,
	       struct agent_state *st, struct werr *e)
{
	*st = (struct agent_state){ .lock_fd = -1, .guard_marker = -1 };
	_cleanup_close_ int dfd = -1;
	if (open_dir(a, dir, home, true, apart, &st->dir, &dfd, e) < 0)
		return -1;
	if (flock(dfd, LOCK_SH | LOCK_NB) < 0)
		return werr_errno(e, "agent state directory %s is being reset", st->dir);
	for (size_t i = 0; i < a->nstate; i++)
		if (entry(dfd, st->dir, &a->state[i], st, e) < 0)
			return -1;
	for (size_t i = 0; i < a->nseeds; i++) {
		const struct agent_seed *sd = &a->seeds[i];
		/* there (whatever it is: a FIFO a killed session left is opened
		 * without waiting, and refused where it is read) */
		_cleanup_close_ int fd = open_beneath(dfd, sd->path, O_RDONLY | O_NONBLOCK, 0);
		if (fd >= 0)
			continue;
		if (errno != ENOENT)
			return werr_errno(e, "%s/%s", st->dir, sd->path);
		bool toml = strstr(sd->path, ".toml") != NULL;
		bool imported = toml && import && (import->import_top || import->import_tables);
		_cleanup_free_ char *text = imported ? agent_codex_merge(sd->text, import)
						     : xstrdup(sd->text);
		if (write_new(dfd, sd->path, text) < 0)
			return werr_errno(e, "writing %s/%s", st->dir, sd->path);
		wnote("%s (%s/%s)", sd->said, st->dir, sd->path);
		if (imported)
			wnote("imported into it from your own ~/.codex/config.toml: the model, the "
			      "provider and how to reach it (never its http_headers)");
	}
	if (state_guard_mend(a, dfd, st, e) < 0)
		return -1;
	bool added = false;
	if (a->install_hook && a->install_hook(dfd, st->dir, &added, e) < 0)
		return -1;
	if (added)
		wnote("warden's tool-call hook is in %s's settings in warden's state for %s "
		      "(PreToolUse, PostToolUse: %s)", a->title, a->name, AGENT_HOOK_COMMAND);
	if (state_guard_snapshot(a, dfd, st, e) < 0)
		return -1;
	st->lock_fd = steal_fd(&dfd);
	return 0;
}

void agent_state_free(struct agent_state *st)
{
	/* a session that ends in this process has nothing left unchecked: its
	 * agent never ran, or its end checked (only one killed before its
	 * check leaves its marker) */
	state_guard_leave(st);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i].src);
		free(st->v[i].name);
	}
	free(st->v);
	free(st->dir);
	for (size_t i = 0; i < AGENT_GUARDS_MAX; i++) {
		json_decref(st->guard[i].keys);
		free(st->guard[i].text);
		state_guard_change_free(&st->recovered[i]);
	}
	if (st->guard_marker >= 0)
		close(st->guard_marker);
	*st = (struct agent_state){ .lock_fd = -1, .guard_marker = -1 };
}

int state_reset(const struct agent_def *a, const char *dir, const char *home, bool *removed,
		struct werr *e)
{
	*removed = false;
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int dfd = -1;
	if (open_dir(a, dir, home, false, NULL, &real, &dfd, e) < 0)
		return -1;
	if (dfd < 0)
		return 0;
	if (flock(dfd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK
			       ? werr_set(e, 0, "a session of %s is running with %s: reset it once "
					  "that session ends", a->name, real)
			       : werr_errno(e, "locking %s", real);
	for (size_t i = 0; i < a->nstate; i++) {
		struct stat sb;
		if (fstatat(dfd, a->state[i].name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (remove_tree_at(dfd, a->state[i].name) < 0)
			return werr_errno(e, "removing %s/%s", real, a->state[i].name);
		*removed = true;
	}
	return 0;
}
