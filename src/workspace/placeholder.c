/* placeholder.c - the placeholders the plan holds missing protected paths
 * with: made before init is cloned, removed (or stashed, phstash.h) by the
 * last session out; those a killed session left; and the workspace's lock,
 * shared by the sessions that use its placeholders. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/hash.h"
#include "workspace.h"
#include "wsrules.h"

/* rel exists though the plan found it missing: a session started together
 * with this one made it in between (each makes the names it gets to
 * first). Adopted as the plan adopts the placeholder of a running session,
 * so that whichever session ends last removes it: its inode now, of the
 * kind planned (its mode may not be the placeholder's yet: the other
 * session sets it after making it; the removal checks it then). Anything
 * else there is the host's: bound read-only as it is, never removed. */
static bool adopt_raced(int wsfd, struct ws_mount *m)
{
	struct stat st;
	if (fstatat(wsfd, m->rel, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !(m->dir ? S_ISDIR(st.st_mode) : S_ISSOCK(st.st_mode)) || st.st_uid != geteuid())
		return false;
	m->adopted = true;
	m->made = (struct ws_made){ .dev = st.st_dev, .ino = st.st_ino };
	return true;
}

/* A socket placeholder: a link to the first one made, else to the one
 * kept in the stash (phstash_socket), else a new inode. */
static int make_socket(struct ws_plan *plan, const struct ws_mount *first, const char *rel)
{
	int wsfd = plan->ws_fd;
	if (first) {
		if (linkat(wsfd, first->rel, wsfd, rel, 0) == 0)
			return 0;
		if (errno == EEXIST || errno == EACCES || errno == EROFS)
			return -1;
	} else if (phstash_socket(&plan->stash, wsfd, rel, PLACEHOLDER_SOCK_MODE) == 0) {
		return 0;
	}
	return mknodat(wsfd, rel, S_IFSOCK | PLACEHOLDER_SOCK_MODE, 0);
}

/* A directory placeholder is an inode of its own. The socket placeholders
 * are links to one inode, kept in the stash between sessions (a new one
 * where linking fails: another file system, a link limit). */
static void make_placeholders(struct ws_plan *plan)
{
	int wsfd = plan->ws_fd;
	const struct ws_mount *first = NULL;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->adopted)
			continue;
		int r;
		if (m->dir) /* from the stash (phstash.h), else made */
			r = phstash_take(&plan->stash, wsfd, m->rel) == 0
				    ? 0 : mkdirat(wsfd, m->rel, PLACEHOLDER_DIR_MODE);
		else
			r = make_socket(plan, first, m->rel);
	mode_t want = m->dir ? PLACEHOLDER_DIR_MODE : PLACEHOLDER_SOCK_MODE;
		struct stat st;
		if (r < 0 && errno == EEXIST && adopt_raced(wsfd, m)) {
			continue;
		} else if (r < 0) {
			m->made = (struct ws_made){ .err = errno };
		} else if (fstatat(wsfd, m->rel, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			   !(m->dir ? S_ISDIR(st.st_mode) : S_ISSOCK(st.st_mode))) {
			m->made = (struct ws_made){ .err = EIO }; /* replaced at once: not ours */
		} else if ((st.st_mode & 07777) != want && fchmodat(wsfd, m->rel, want, 0) < 0) {
			/* exactly that mode whatever the umask: how sessions recognise it */
			m->made = (struct ws_made){ .err = errno };
		} else {
			m->made = (struct ws_made){ .dev = st.st_dev, .ino = st.st_ino,
						    .ctime_set = (st.st_mode & 07777) == want,
						    .ctime = st.st_ctim };
			if (!m->dir && (!first || first->made.ino != st.st_ino || first->made.dev != st.st_dev))
				first = m;
		}
	}
}

static void making_lock(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	while (fd >= 0 && fcntl(fd, F_OFD_SETLKW, &fl) < 0 && errno == EINTR)
		;
}

void workspace_hold_making(struct ws_plan *plan, bool exclusive)
{
	making_lock(plan->lock_fd, exclusive ? F_WRLCK : F_RDLCK);
}

void workspace_release_making(struct ws_plan *plan)
{
	making_lock(plan->lock_fd, F_UNLCK);
}

int workspace_make_placeholders(struct ws_plan *plan, struct werr *e)
{
	workspace_hold_making(plan, true);
	make_placeholders(plan);
	workspace_release_making(plan);
	plan->placed = true;
	int r = 0;
	for (size_t i = 0; i < plan->n; i++) {
		const struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->made.err == 0)
			continue;
		/* Created meanwhile: init binds it read-only as it is. Not
		 * creatable by this user: not creatable by the agent either (same
		 * uid), and init skips it. */
		if (m->made.err != EEXIST && m->made.err != EACCES && m->made.err != EROFS &&
		    m->made.err != EPERM && r == 0)
			r = werr_set(e, m->made.err, "creating placeholder for protected path %s", m->abs);
	}
	return r;
}

/* A directory placeholder nothing changed since it was made: adding an
 * entry sets its ctime, which no one can set back. A change within the
 * clock's tick of the making (a kernel without fine-grained ctimes) goes
 * unseen here, not by phstash_give's look after the move. */
static bool untouched(const struct ws_mount *m, const struct stat *st)
{
	return m->made.ctime_set && st->st_ctim.tv_sec == m->made.ctime.tv_sec &&
	       st->st_ctim.tv_nsec == m->made.ctime.tv_nsec;
}

void workspace_remove_placeholders(struct ws_plan *plan)
{
	if (!plan->placed)
		return;
	plan->placed = false;
	/* Another session still runs here: its sandbox has these mounted. */
	if (plan->lock_fd >= 0 && flock(plan->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		plan->left_shared = true;
		return;
	}
	/* A workspace directory the agent closed (chmod 000 .; the user's
	 * own) is opened for the removal and given its mode back. */
	struct stat root;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", plan->ws_fd);
	bool reopen = fstat(plan->ws_fd, &root) == 0 && root.st_uid == geteuid() &&
		      (root.st_mode & 0300) != 0300 && chmod(self, (root.st_mode & 07777) | 0300) == 0;
	for (size_t i = 0; i < plan->n; i++) {
		struct ws_mount *m = &plan->m[i];
		if (m->kind != WS_PLACEHOLDER || m->made.err != 0)
			continue;
		struct stat st;
		if (fstatat(plan->ws_fd, m->rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				wnote("could not check placeholder %s: %s", m->abs, strerror(errno));
			continue;
		}
		if (!workspace_is_placeholder(&st) || st.st_dev != m->made.dev || st.st_ino != m->made.ino) {
			if (!m->adopted) /* another session's: its owner's to tell */
				wnote("placeholder %s was replaced or changed during the session; left as it is",
				      m->abs);
		} else if (phstash_give(&plan->stash, plan->ws_fd, m->rel, &st, untouched(m, &st)) ||
			 unlinkat(plan->ws_fd, m->rel, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0)
			continue;
		else if (errno == ENOTEMPTY || errno == EEXIST)
			wnote("placeholder %s was filled during the session; left as it is", m->abs);
		else if (errno != ENOENT)
			wnote("could not remove placeholder %s: %s", m->abs, strerror(errno));
	}
	if (reopen && chmod(self, root.st_mode & 07777) < 0)
		wnote("could not give the workspace its mode %04o back: %s",
		      (unsigned)(root.st_mode & 07777), strerror(errno));
}

void workspace_remove_stale_placeholders(int wsfd, const struct strv *rels)
{
	for (size_t i = 0; i < rels->n; i++) {
		const char *rel = rels->v[i];
		const char *sl = strrchr(rel, '/');
		_cleanup_free_ char *parent = sl ? xasprintf("%.*s", (int)(sl - rel), rel) : NULL;
		_cleanup_close_ int pfd = parent ? open_beneath(wsfd, parent, O_RDONLY | O_DIRECTORY, 0)
						 : fcntl(wsfd, F_DUPFD_CLOEXEC, 0);
		const char *name = sl ? sl + 1 : rel;
		struct stat st;
		if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !workspace_is_placeholder(&st))
			continue;
		if (unlinkat(pfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 &&
		    errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
			wnote("could not remove the placeholder %s left by a killed session: %s", rel,
			      strerror(errno));
	}
}

int workspace_lock_open(const char *ws, const char *lockdir, struct werr *e)
{
	if (mkdir(lockdir, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "creating warden's lock directory %s (in the audit log's "
				  "directory: $XDG_STATE_HOME/warden, or ~/.local/state/warden)", lockdir);
	char sum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), sum);
	_cleanup_free_ char *path = xasprintf("%s/ws-%.32s.lock", lockdir, sum);
	/* read-write: workspace_hold_making's exclusive lock needs it */
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EACCES || errno == EROFS))
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "opening the workspace lock %s", path);
	return fd;
}

int workspace_lock(const char *ws, const char *lockdir, struct ws_plan *plan, struct werr *e)
{
	int fd = workspace_lock_open(ws, lockdir, e);
	if (fd < 0)
		return -1;
	/* only warden takes it, and holds it exclusively for a moment */
	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			return werr_errno(e, "locking the lock of workspace %s", ws);
		}
	plan->lock_fd = fd;
	phstash_open(&plan->stash, lockdir);
	return 0;
}

