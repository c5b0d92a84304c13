/* ctldir.c - where the sessions' control sockets live (ctldir.h): the
 * runtime directory, checked and made one level at a time, and the state
 * directory's fallback. */
#include "ctldir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../common/procfacts.h"
#include "../common/util.h"
#include "control.h"

/* A base for the runtime directory: an absolute directory of the user's
 * that no one else can write to (stat: it may be a symlink, as long as
 * where it leads is ours). */
static bool base_ok(const char *p)
{
	struct stat st;
	return p && p[0] == '/' && stat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_uid == geteuid() && !(st.st_mode & 022);
}

/* RUNTIME (ctldir.h), malloc'd, without a trailing slash; NULL: none. */
static char *runtime_base(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	if (base_ok(x)) {
		size_t n = strlen(x);
		while (n > 1 && x[n - 1] == '/')
			n--;
		return n == 1 ? xstrdup("") : xasprintf("%.*s", (int)n, x);
	}
	if (geteuid() == 0)
		return base_ok("/run") ? xstrdup("/run") : NULL;
	char *u = xasprintf("/run/user/%u", (unsigned)geteuid());
	if (base_ok(u))
		return u;
	free(u);
	return NULL;
}

char *control_runtime_dir(void)
{
	_cleanup_free_ char *base = runtime_base();
	return base ? xasprintf("%s/warden/control", base) : NULL;
}

/* The directory name under parent (an fd), made 0700 when missing, opened
 * (O_NOFOLLOW): -1 with e set when it is a symlink, not a directory, or
 * another's; one of ours open to others is made 0700. path: its whole path,
 * for the messages. */
static int private_subdir(int parent, const char *name, const char *path, struct werr *e)
{
	if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "making %s", path);
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		int err = errno;
		if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return werr_set(e, 0, "%s is a symbolic link", path);
		return werr_set(e, err, "%s", path);
	}
	if (fstat(fd, &st) < 0) {
		werr_errno(e, "%s", path);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		werr_set(e, 0, "%s is owned by uid %u, not by you (uid %u)", path,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if ((st.st_mode & 077) && fchmod(fd, 0700) < 0) {
		werr_errno(e, "making %s private (mode 0700)", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* RUNTIME/warden/control made (ctldir.h), its path; NULL with e set when
 * refused, or with e clear when there is no RUNTIME. */
static char *runtime_make(struct werr *e)
{
	_cleanup_free_ char *base = runtime_base();
	if (!base)
		return NULL;
	_cleanup_free_ char *top = xasprintf("%s/warden", base);
	char *dir = xasprintf("%s/control", top);
	_cleanup_close_ int bfd = open(base[0] ? base : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0) {
		werr_errno(e, "%s", base);
		free(dir);
		return NULL;
	}
	_cleanup_close_ int tfd = private_subdir(bfd, "warden", top, e);
	_cleanup_close_ int cfd = tfd < 0 ? -1 : private_subdir(tfd, "control", dir, e);
	if (cfd < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *control_dir_make(const char *logdir, char **why)
{
	struct werr re = { 0 };
	*why = NULL;
	char *dir = runtime_make(&re);
	if (dir)
		return dir;
	if (re.msg[0]) {
		char buf[1200];
		*why = xstrdup(werr_str(&re, buf, sizeof buf));
	}
	return control_dir_of(logdir);
}

/* dir onto dirs, when it is a directory of the user's (lstat: not a
 * symlink) and not there already by another name (seen: the dev and inode
 * of those pushed, *nseen of them, at most 2). */
static void push_existing(struct strv *dirs, const char *dir, struct stat *seen, size_t *nseen)
{
	struct stat st;
	if (!dir || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return;
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i].st_dev == st.st_dev && seen[i].st_ino == st.st_ino)
			return;
	seen[(*nseen)++] = st;
	strv_push(dirs, dir);
}

size_t control_dirs_existing(const char *logdir, struct strv *dirs)
{
	_cleanup_free_ char *rt = control_runtime_dir();
	_cleanup_free_ char *own = logdir ? NULL : audit_dir(user_home());
	_cleanup_free_ char *fb = logdir || own ? control_dir_of(logdir ? logdir : own) : NULL;
	struct stat seen[2];
	size_t n = 0;
	push_existing(dirs, rt, seen, &n);
	push_existing(dirs, fb, seen, &n);
	return n;
}

bool ctldir_marker(const char *sock, char *out, size_t len)
{
	size_t l = strlen(sock);
	if (l <= 5 || strcmp(sock + l - 5, ".sock") != 0)
		return false;
	return snprintf(out, len, "%.*s.stopped", (int)(l - 5), sock) < (int)len;
}

pid_t ctldir_marked_stopped(const char *sock)
{
	char m[PATH_MAX], text[64];
	if (!ctldir_marker(sock, m, sizeof m) ||
	    read_small_file(m, text, sizeof text, O_NOFOLLOW | O_NONBLOCK) < 0)
		return 0;
	int pid = 0;
	unsigned long long start = 0, now = 0;
	char state = 0;
	if (sscanf(text, "%d %llu", &pid, &start) != 2 || pid <= 0)
		return 0;
	if (!proc_state_start(pid, &state, &now) || now != start) {
		unlink(m); /* its warden is gone (killed while stopped) */
		return 0;
	}
	return state == 'T' ? pid : 0;
}
