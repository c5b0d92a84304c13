/* phstash.c - empty placeholder directories kept between sessions, renamed
 * into the workspace and back instead of made and removed, and the socket
 * placeholder linked to each socket name (phstash.h). */
#include "phstash.h"

#include "../common/walk.h"

#define STASH_MODE 0700 /* a user's (p-): the mode a move needs */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void phstash_open(struct phstash *st, const char *dir)
{
	*st = (struct phstash){ .fd = -1, .ws_same = -1 };
	_cleanup_free_ char *path = xasprintf("%s/placeholders", dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	if (fd < 0)
		return;
	/* warden's own: the user's, 0700, a real directory */
	if (fstat(fd, &sb) < 0 || sb.st_uid != geteuid() || (sb.st_mode & 077)) {
		close(fd);
		return;
	}
	st->fd = fd;
	st->dev = sb.st_dev;
	st->root = sb.st_uid == 0;
	st->ok = true;
}

static void list(struct phstash *st)
{
	st->listed = true;
	_cleanup_dir_ DIR *d = dir_open_at(st->fd, ".", 0);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && (de->d_name[0] == 'p' || de->d_name[0] == 'r') &&
		    de->d_name[1] == '-')
			strv_push(&st->names, de->d_name);
	st->held = st->names.n;
}

/* The workspace on the stash's file system (renames work): looked at once. */
static bool same_fs(struct phstash *st, int wsfd)
{
	struct stat wsb;
	if (st->ws_same < 0)
		st->ws_same = fstat(wsfd, &wsb) == 0 && wsb.st_dev == st->dev;
	return st->ws_same > 0;
}

static void drop_last(struct phstash *st)
{
	free(st->names.v[--st->names.n]);
	if (st->held)
		st->held--;
}

int phstash_take(struct phstash *st, int wsfd, const char *rel)
{
	if (!st->ok || !same_fs(st, wsfd))
		return -1;
	if (!st->listed)
		list(st);
	while (st->names.n > 0) {
		const char *name = st->names.v[st->names.n - 1];
		if (renameat2(st->fd, name, wsfd, rel, RENAME_NOREPLACE) == 0) {
			/* a user's waited writable: the placeholder mode now (the
			 * caller checks it) */
			if (name[0] == 'p')
				(void)!fchmodat(wsfd, rel, PLACEHOLDER_DIR_MODE, 0);
			drop_last(st);
			return 0;
		}
		if (errno != ENOENT)
			return -1; /* rel exists, or the file system says no: the caller's mkdir decides */
		/* taken by another session meanwhile: the next */
		drop_last(st);
	}
	return -1;
}

/* Move rel into the stash as name: as it is where the kernel lets this
 * process move a directory it may not write (root), else made writable
 * first (and back, should the move fail). The name's first letter says
 * which. */
static bool put(struct phstash *st, int wsfd, const char *rel, ino_t ino, char name[64])
{
	if (st->root && !st->as_is_refused) {
		snprintf(name, 64, "r-%llu", (unsigned long long)ino);
		if (renameat2(wsfd, rel, st->fd, name, RENAME_NOREPLACE) == 0)
			return true;
		if (errno != EACCES && errno != EPERM)
			return false;
		st->as_is_refused = true; /* no CAP_DAC_OVERRIDE, a root-squashing server */
	}
	snprintf(name, 64, "p-%llu", (unsigned long long)ino);
	if (fchmodat(wsfd, rel, STASH_MODE, 0) < 0)
		return false;
	if (renameat2(wsfd, rel, st->fd, name, RENAME_NOREPLACE) == 0)
		return true;
	(void)!fchmodat(wsfd, rel, PLACEHOLDER_DIR_MODE, 0); /* else removed by the caller */
	return false;
}

bool phstash_give(struct phstash *st, int wsfd, const char *rel, const struct stat *sb,
		  bool untouched)
{
	if (!st->ok || sb->st_dev != st->dev || !S_ISDIR(sb->st_mode) ||
	    (sb->st_mode & 07777) != PLACEHOLDER_DIR_MODE || st->held >= PHSTASH_MAX ||
	    (!untouched && !walk_dir_empty(wsfd, rel)))
		return false;
	char name[64];
	if (!put(st, wsfd, rel, sb->st_ino, name))
		return false;
	/* filled between the look (or its making, untouched) and the rename
	 * (its mode lets nobody but root, or its owner after a chmod): back
	 * where it was */
	struct stat now;
	if (!walk_dir_empty(st->fd, name) || fstatat(st->fd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    now.st_ino != sb->st_ino) {
		if (renameat2(st->fd, name, wsfd, rel, RENAME_NOREPLACE) == 0 && name[0] == 'p')
			(void)!fchmodat(wsfd, rel, PLACEHOLDER_DIR_MODE, 0);
		return false;
	}
	st->held++;
	return true;
}

/* The socket placeholder kept, linked to each socket name at start: no
 * inode allocated (and freed) each session. Made here, in the stash, never
 * taken from the workspace: what it is cannot be raced by anything there. */
#define SOCKET_NAME "s-socket"

static int kept_socket(struct phstash *st, mode_t mode, struct stat *sb)
{
	if (fstatat(st->fd, SOCKET_NAME, sb, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != ENOENT || mknodat(st->fd, SOCKET_NAME, S_IFSOCK | mode, 0) < 0 ||
	    fstatat(st->fd, SOCKET_NAME, sb, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	/* exactly that mode whatever the umask */
	if ((sb->st_mode & 07777) != mode && fchmodat(st->fd, SOCKET_NAME, mode, 0) < 0)
		return -1;
	sb->st_mode = (sb->st_mode & ~(mode_t)07777) | mode;
	return 0;
}

int phstash_socket(struct phstash *st, int wsfd, const char *rel, mode_t mode)
{
	struct stat sb;
	if (!st->ok || !same_fs(st, wsfd) || kept_socket(st, mode, &sb) < 0)
		return -1;
	if (!S_ISSOCK(sb.st_mode) || (sb.st_mode & 07777) != mode || sb.st_uid != geteuid()) {
		(void)!unlinkat(st->fd, SOCKET_NAME, 0); /* not as left: made again next time */
		return -1;
	}
	return linkat(st->fd, SOCKET_NAME, wsfd, rel, 0);
}

void phstash_forget(struct phstash *st)
{
	if (st->ok && st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	st->ok = false;
}

void phstash_close(struct phstash *st)
{
	if (st->ok && st->fd >= 0)
		close(st->fd);
	strv_free(&st->names);
	*st = (struct phstash){ .fd = -1, .ws_same = -1 };
}
