/* sameastop.c - a protected name made below the top that holds only what
 * the workspace's own one at the top holds (plan.h: ws_same_as_top): a
 * checkout of the repository in a new worktree (`.claude/worktrees/x/
 * .claude`, `wt/.vscode`) carries the files the repository tracks, which
 * are the top's when the branch is. The top's was read-only all session
 * (there at start: the user's), so each file of the new one byte for byte
 * the same as the top's at the same place, each directory one there too,
 * brings nothing the host did not already take from the top (what such a
 * setting names relative to its directory is that checkout's, as the
 * top's is the workspace's: doc/threat-model.md). Anything else
 * (a file the top lacks or holds otherwise, a symlink, a FIFO) and the
 * sweep moves it aside as before. Bounded: deeper or larger than the
 * limits counts as not the same. */
#include "plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SAME_DEPTH_MAX 8
#define SAME_ENTRIES_MAX 1000
#define SAME_FILE_MAX (1 << 20)

struct same {
	size_t entries;
};

static bool same_file(int nfd, int tfd, const char *name)
{
	size_t nl = 0, tl = 0;
	struct stat ns, ts;
	_cleanup_free_ char *a = read_regular_at(nfd, name, O_NOFOLLOW, SAME_FILE_MAX, &nl, &ns);
	_cleanup_free_ char *b = a ? read_regular_at(tfd, name, O_NOFOLLOW, SAME_FILE_MAX, &tl, &ts)
				   : NULL;
	return a && b && nl == tl && memcmp(a, b, nl) == 0;
}

/* Every entry of the directory nfd is in tfd, the same. */
static bool same_dir(struct same *s, int nfd, int tfd, unsigned depth)
{
	if (depth > SAME_DEPTH_MAX)
		return false;
	_cleanup_dir_ DIR *d = dir_open_at(nfd, ".", 0);
	if (!d)
		return false;
	for (struct dirent *de; (de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++s->entries > SAME_ENTRIES_MAX)
			return false;
		struct stat ns, ts;
		if (fstatat(nfd, de->d_name, &ns, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fstatat(tfd, de->d_name, &ts, AT_SYMLINK_NOFOLLOW) < 0)
			return false;
		if (S_ISREG(ns.st_mode) && S_ISREG(ts.st_mode)) {
			if (!same_file(nfd, tfd, de->d_name))
				return false;
			continue;
		}
		if (!S_ISDIR(ns.st_mode) || !S_ISDIR(ts.st_mode))
			return false;
		_cleanup_close_ int n2 = openat(nfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC);
		_cleanup_close_ int t2 = openat(tfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC);
		if (n2 < 0 || t2 < 0 || !same_dir(s, n2, t2, depth + 1))
			return false;
	}
	return true;
}

bool ws_same_as_top(const struct ws_plan *plan, int dirfd, const char *name)
{
	struct stat ns, ts;
	if (!workspace_planned_as(plan, name, WS_PROTECT) ||
	    fstatat(dirfd, name, &ns, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fstatat(plan->ws_fd, name, &ts, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	if (S_ISREG(ns.st_mode) && S_ISREG(ts.st_mode))
		return same_file(dirfd, plan->ws_fd, name);
	if (!S_ISDIR(ns.st_mode) || !S_ISDIR(ts.st_mode))
		return false;
	_cleanup_close_ int nfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int tfd = openat(plan->ws_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	struct same s = { 0 };
	return nfd >= 0 && tfd >= 0 && same_dir(&s, nfd, tfd, 0);
}
