/* leftover.c - the review directories --review sessions left behind:
 * recorded late, listed, removed (leftover.h). */
#include "leftover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "review.h"

char *review_dir(const char *logdir, const char *session)
{
	return xasprintf("%s/review/%s", logdir, session);
}

int review_lock_workspace(const char *logdir, const char *ws, const char *verb, struct werr *e)
{
	_cleanup_free_ char *lockdir = xasprintf("%s/locks", logdir);
	int fd = workspace_lock_open(ws, lockdir, e);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return werr_set(e, 0, "a warden session is running in %s: %s when it has ended", ws,
				verb);
	}
	return fd;
}

static bool dir_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void review_clear_placeholders(const struct ckpt_record *r)
{
	if (!r->placeholders.n)
		return;
	_cleanup_close_ int wsfd = open(r->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd >= 0)
		workspace_remove_stale_placeholders(wsfd, &r->placeholders);
}

int review_recover(struct store *st, const char *logdir, struct ckpt_record *r, struct werr *e)
{
	if (!r->review || r->end[0])
		return 0;
	if (store_ref_read(st, r->session, "end", r->end) == 0)
		return 0;
	r->end[0] = '\0';
	_cleanup_free_ char *dir = review_dir(logdir, r->session);
	_cleanup_free_ char *upper = xasprintf("%s/upper", dir);
	if (!dir_exists(upper))
		return 0;
	_cleanup_close_ int lock = review_lock_workspace(logdir, r->workspace,
							 "read its changes", e);
	if (lock < 0)
		return -1;
	/* the lock held: the session's warden is gone (the kernel let go of
	 * its lock), and no other session runs there */
	char hash[SHA256_HEX_LEN];
	if (review_record(st, r->start, dir, &r->protected, r->session, r->workspace, NULL, hash,
			  NULL, e) < 0)
		return werr_wrap(e, "session %s's review directory %s", r->session, dir);
	review_clear_placeholders(r);
	wnote("review: session %s ended without recording its changes (killed?); they were "
	      "recorded now from %s", r->session, dir);
	memcpy(r->end, hash, SHA256_HEX_LEN);
	return 0;
}

static int cmp_s(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int review_leftovers(const char *logdir, struct strv *ids, struct werr *e)
{
	_cleanup_free_ char *path = xasprintf("%s/review", logdir);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : werr_errno(e, "review directories: %s", path);
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && de->d_type == DT_DIR)
			strv_push(ids, de->d_name);
	closedir(d);
	if (ids->n > 1)
		qsort(ids->v, ids->n, sizeof *ids->v, cmp_s);
	return 0;
}

int review_remove_dir(const char *logdir, const char *session, struct werr *e)
{
	if (!*session || strchr(session, '/') || session[0] == '.')
		return werr_set(e, EINVAL, "review directory: bad session id %s", session);
	_cleanup_free_ char *parent = xasprintf("%s/review", logdir);
	_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (pfd < 0 || fstatat(pfd, session, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : werr_errno(e, "review directory %s/%s", parent, session);
	if (remove_tree_at(pfd, session) < 0)
		return werr_errno(e, "removing the review directory %s/%s", parent, session);
	return 1;
}
