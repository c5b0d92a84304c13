/* linkwalk.c - every link of a hard-linked program found on its read-only
 * mount (linkwalk.h). */
#include "linkwalk.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../common/walk.h"

struct search {
	const struct stat *st;
	uint64_t mnt_id;
	const char *skip;     /* the directory searched before, at the top: not again */
	nlink_t found;
	unsigned seen;
};

static bool mount_of(int dirfd, const char *name, int flags, uint64_t *id)
{
	struct statx sx;
	if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) < 0 ||
	    !(sx.stx_mask & STATX_MNT_ID))
		return false;
	*id = sx.stx_mnt_id;
	return true;
}

static int entry(void *ctx, const struct walk_entry *we, struct werr *e)
{
	struct search *s = ctx;
	if (++s->seen > LINKWALK_MAX)
		return werr_set(e, 0, "too many entries");
	uint64_t id;
	if (we->type == DT_DIR) {
		if (s->skip && strcmp(we->rel, s->skip) == 0)
			return WALK_SKIP;
		return mount_of(we->dirfd, we->name, 0, &id) && id == s->mnt_id ? WALK_DESCEND
										: WALK_SKIP;
	}
	struct stat st;
	if (we->type == DT_REG && fstatat(we->dirfd, we->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_ino == s->st->st_ino && st.st_dev == s->st->st_dev &&
	    mount_of(we->dirfd, we->name, 0, &id) && id == s->mnt_id)
		s->found++;
	return WALK_SKIP;
}

/* dir (a path inside the sandbox, no symlink on the way) opened from root,
 * when it is on the mount mnt_id. */
static int open_on(int root, const char *dir, uint64_t mnt_id)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, root, dir[0] ? dir : ".", &how, sizeof how);
	uint64_t id;
	if (fd >= 0 && (!mount_of(fd, "", AT_EMPTY_PATH, &id) || id != mnt_id))
		closep(&fd);
	return fd;
}

bool linkwalk_all_here(int root, const char *resolved, const struct stat *st, uint64_t mnt_id)
{
	if (root < 0 || !resolved || resolved[0] != '/' || st->st_nlink < 2 ||
	    path_has_dot_components(resolved))
		return false;
	_cleanup_free_ char *dir = xstrdup(resolved + 1); /* from the root: "a/b/file" */
	char *slash = strrchr(dir, '/');
	_cleanup_free_ char *child = NULL; /* the directory searched last, its name */
	struct search s = { .st = st, .mnt_id = mnt_id };
	for (;;) {
		if (slash)
			*slash = '\0';
		else
			dir[0] = '\0';
		_cleanup_close_ int fd = open_on(root, dir, mnt_id);
		if (fd < 0)
			return false; /* above the mount, or not there */
		s.skip = child;
		struct werr e = { 0 };
		if (walk_tree(fd, &(struct walk_ops){ .entry = entry }, &s, &e) < 0)
			return false;
		if (s.found >= st->st_nlink)
			return s.found == st->st_nlink;
		if (!dir[0])
			return false;
		slash = strrchr(dir, '/');
		free(child);
		child = xstrdup(slash ? slash + 1 : dir);
	}
}
