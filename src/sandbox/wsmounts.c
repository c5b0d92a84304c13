/* wsmounts.c - the workspace's own mounts inside it (init, after the
 * workspace itself is bound: mounts.c): each entry of the plan
 * (src/workspace/plan.h) resolved beneath the staged workspace with no
 * symlink followed and mounted onto itself: a pin read-write, a protected
 * path or a placeholder read-only (the placeholders at the top cloned from
 * one read-only view of the workspace), a secret masked (a file by the
 * empty mode-0 file, a directory by the empty one; a *.pem of
 * certificates alone by the copy of its certificates); and, during the
 * session, a name masked or protected anew (mounts_rebind: remask.h). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mounts_int.h"

/* rel (a path in the plan) opened beneath dir with no symlink followed. */
static int open_planned(int dir, const char *rel)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return (int)syscall(SYS_openat2, dir, rel, &how, sizeof how);
}

/* rel names an entry of the workspace's top: one name, not . or .. */
static bool top_name(const char *rel)
{
	return *rel && !strchr(rel, '/') && strcmp(rel, ".") != 0 && strcmp(rel, "..") != 0;
}

/* The placeholders at the workspace's top (the default profile's 28) are
 * cloned from a read-only view of the workspace with no mounts beneath it,
 * staged once at WS_RO on the staging root (gone with it at enter_root):
 * each clone is read-only as made, no mount_setattr of its own. Its fd, or
 * -1 where it would not pay or not show the same: a path of the policy
 * inside the workspace (a clone of this view would hide it), or a failure
 * (the placeholders are then bound as the protections are). */
#define WS_RO "/ws.ro"
static int placeholder_source(const struct sandbox_spec *s, int ws)
{
	size_t n = 0;
	for (size_t i = 0; i < s->plan.n; i++)
		n += s->plan.m[i].kind == WS_PLACEHOLDER && top_name(s->plan.m[i].rel);
	for (size_t i = 0; n >= 4 && i < s->policy->npaths; i++)
		if (strcmp(s->policy->paths[i].path, s->workspace) != 0 &&
		    path_is_within(s->policy->paths[i].path, s->workspace))
			return -1;
	if (n < 4)
		return -1;
	_cleanup_close_ int tree = (int)syscall(SYS_open_tree, ws, "",
		W_OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0 || mnt_setattr_fd(tree, "", RO_ATTRS, false) < 0 || !mnt_stage_tree(tree, WS_RO))
		return -1;
	return open(WS_RO, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* A top-level placeholder: cloned by its name in the read-only view and
 * attached at its name in the workspace, neither followed (one name,
 * nothing on the way, nothing mounted in the view: as beneath and with no
 * symlink as open_planned, without its open). 0, also when it is not there
 * (not creatable); -1 (e). */
static int bind_placeholder(int rosrc, int ws, const char *rel, struct werr *e)
{
	_cleanup_close_ int tree = (int)syscall(SYS_open_tree, rosrc, rel,
		W_OPEN_TREE_CLONE | O_CLOEXEC | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT);
	if (tree < 0)
		return errno == ENOENT ? 0 : werr_errno(e, "workspace: %s changed while the "
							"sandbox was built", rel);
	if (syscall(SYS_move_mount, tree, "", ws, rel, W_MOVE_MOUNT_F_EMPTY_PATH) < 0 &&
	    errno != ENOENT)
		return werr_errno(e, "mounts: attaching %s", rel);
	return 0;
}

/* A *.pem of certificates alone (workspace/certcopy.h): in its place, the
 * copy of its certificates the plan holds, written to a file of the staging
 * area (/certs-N, N the plan's index), read-only and not executable. What
 * the host writes to the file later does not reach the sandbox. */
static int bind_certs(const struct ws_mount *m, size_t i, int fd, struct werr *e)
{
	char src[64];
	snprintf(src, sizeof src, "/certs-%zu", i);
	_cleanup_close_ int c = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (c < 0 || write_all(c, m->certs, m->certs_len) < 0)
		return werr_errno(e, "mounts: the copy of the certificates in %s", m->rel);
	return mnt_bind_at(AT_FDCWD, src, fd, "", RO_ATTRS | W_MOUNT_ATTR_NOEXEC, e, m->rel);
}

/* Protected paths and masks inside the workspace, resolved beneath it with
 * no symlinks followed. */
int mounts_workspace_plan(const struct sandbox_spec *s, struct werr *e)
{
	char path[4096];
	snprintf(path, sizeof path, STAGE "%s", s->workspace);
	_cleanup_close_ int ws = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ws < 0)
		return werr_errno(e, "mounts: opening the workspace");
	_cleanup_close_ int rosrc = placeholder_source(s, ws);
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct ws_mount *m = &s->plan.m[i];
		if (m->kind == WS_PLACEHOLDER && rosrc >= 0 && top_name(m->rel)) {
			if (bind_placeholder(rosrc, ws, m->rel, e) < 0)
				return werr_wrap(e, "workspace");
			continue;
		}
		_cleanup_close_ int fd = open_planned(ws, m->rel);
		if (fd < 0) {
			if (errno == ENOENT && m->kind != WS_PIN && m->kind != WS_PROTECT &&
			    m->kind != WS_CARVE)
				continue; /* mask: gone since the scan; placeholder: not creatable */
			return werr_errno(e, "workspace: %s changed while the sandbox was built", m->rel);
		}
		/* a mask's source is of the kind found there: looked at */
		struct stat st;
		bool mask = m->kind == WS_MASK_FILE || m->kind == WS_MASK_DIR;
		if (mask && fstat(fd, &st) < 0)
			return werr_errno(e, "workspace: %s", m->rel);
		int r = 0;
		switch (m->kind) {
		case WS_PIN:
			r = mnt_bind_at(fd, "", fd, "", RW_ATTRS, e, m->rel);
			break;
		case WS_CARVE: /* on the read-only bind above it: cleared */
			r = mnt_bind_attrs(fd, "", fd, "", RW_ATTRS, W_MOUNT_ATTR_RDONLY, e, m->rel);
			break;
		case WS_PROTECT:
		case WS_PLACEHOLDER:
			r = mnt_bind_at(fd, "", fd, "", RO_ATTRS, e, m->rel);
			break;
		case WS_MASK_FILE:
		case WS_MASK_DIR:
			if (m->certs && S_ISREG(st.st_mode))
				r = bind_certs(m, i, fd, e);
			else
				r = mnt_bind_at(AT_FDCWD, S_ISDIR(st.st_mode) ? "/mask_dir" : "/mask_file",
					    fd, "", MASK_ATTRS, e, m->rel);
			break;
		}
		if (r < 0)
			return werr_wrap(e, "workspace");
	}
	return 0;
}

int mounts_rebind(int wsfd, const char *rel, bool mask, struct werr *e)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, wsfd, rel, &how, sizeof how);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return werr_errno(e, "workspace: %s", rel);
	/* a socket is masked too: the host's, unreachable inside */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !(mask && S_ISSOCK(st.st_mode)))
		return werr_set(e, EINVAL, "workspace: %s is neither a file nor a directory", rel);
	if (mask)
		return mnt_bind_at(AT_FDCWD, S_ISDIR(st.st_mode) ? MASK_DIR : MASK_FILE, fd, "",
			       RO_ATTRS | W_MOUNT_ATTR_NOEXEC, e, rel);
	return mnt_bind_at(fd, "", fd, "", RO_ATTRS, e, rel);
}
