/* mounts.c - the sandbox's file system, built from nothing in a new mount
 * namespace: a tmpfs root holding read-only binds of the system directories,
 * a curated read-only /etc with a synthesized passwd and group, one tmpfs
 * behind /tmp, /var/tmp and /dev/shm and one for the home, each of the size
 * the policy's `limit tmp` and `limit home` give, a fresh /proc with
 * sensitive entries masked, a minimal /dev, the workspace read-write at its
 * real path with protected paths read-only and secrets masked, then
 * pivot_root into it and make / read-only. What the agent can write is
 * noexec (the workspace only in strict mode) but the policy's `exec
 * allow-writable` paths; strict mode hides the denied programs the sandbox
 * shows (execplan.c decides both).
 *
 * The host tree stays reachable at /oldroot of a staging tmpfs while the new
 * root is assembled, and is detached at the end.
 *
 * The mount table inside (/proc/self/mountinfo) names the source of each
 * bind mount by its path within its file system, so nothing is bound from
 * a host path that the sandbox does not show at that same path: warden's
 * cached /etc is the lower layer of a read-only overlay whose options name
 * only links on the staging tmpfs (or /etc is copied), and the session's
 * trust store and warden's own binary are copied onto the root tmpfs. The
 * agent state in the home (build_home) is the exception: it must stay live,
 * and the kernel shows the state directory's path. Mounts inside the workspace
 * (which the agent may have shaped in an earlier session) are opened with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a symlink cannot
 * redirect them (wsmounts.c: the workspace's protected paths, placeholders
 * and masks; mounts_int.h: what the two files share). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostid.h"
#include "mounts_int.h"

#define SCRATCH_ATTRS MOUNT_SCRATCH_ATTRS
#define OLD "/oldroot"
/* The tmpfs of the sandbox's scratch space, in the staging area: its
 * directories tmp, var-tmp and shm are bound at /tmp, /var/tmp and /dev/shm,
 * which so share one size (`limit tmp`). */
#define SCRATCH "/scratch"

static int setattrs_fd(int fd, const char *path, uint64_t set, uint64_t clr, bool recursive)
{
	struct w_mount_attr a = { .attr_set = set, .attr_clr = clr };
	unsigned flags = (recursive ? W_AT_RECURSIVE : 0) | (*path ? 0 : AT_EMPTY_PATH);
	return (int)syscall(SYS_mount_setattr, fd, path, flags, &a, sizeof a);
}

int mnt_setattr_fd(int fd, const char *path, uint64_t attrs, bool recursive)
{
	return setattrs_fd(fd, path, attrs, 0, recursive);
}

/* mnt_setattr_fd, mnt_bind_attrs, mnt_bind_at, mnt_stage_tree: mounts_int.h */
int mnt_bind_attrs(int srcfd, const char *src, int dstfd, const char *dst, uint64_t set,
		      uint64_t clr, struct werr *e, const char *what)
{
	_cleanup_close_ int tree = (int)syscall(SYS_open_tree, srcfd, src,
		W_OPEN_TREE_CLONE | O_CLOEXEC | W_AT_RECURSIVE | (*src ? 0 : AT_EMPTY_PATH));
	if (tree < 0)
		return werr_errno(e, "mounts: cloning %s", what);
	if ((set || clr) && setattrs_fd(tree, "", set, clr, true) < 0)
		return werr_errno(e, "mounts: setting attributes of %s", what);
	unsigned flags = W_MOVE_MOUNT_F_EMPTY_PATH | (*dst ? 0 : W_MOVE_MOUNT_T_EMPTY_PATH);
	if (syscall(SYS_move_mount, tree, "", dstfd, dst, flags) < 0)
		return werr_errno(e, "mounts: attaching %s", what);
	return 0;
}

int mnt_bind_at(int srcfd, const char *src, int dstfd, const char *dst, uint64_t attrs,
		   struct werr *e, const char *what)
{
	return mnt_bind_attrs(srcfd, src, dstfd, dst, attrs, 0, e, what);
}

static int bind_path(const char *src, const char *dst, uint64_t attrs, struct werr *e)
{
	return mnt_bind_at(AT_FDCWD, src, AT_FDCWD, dst, attrs, e, dst + strlen(STAGE));
}

/* bind_path onto a dst that is no link (init made it): mount(2)'s bind
 * (and a mount_setattr of what it attached), without the detached tree
 * and the namespace open_tree makes; the staging tree propagates nothing
 * (MS_PRIVATE), so the attributes end the same. */
static int bind_fresh(const char *src, const char *dst, uint64_t attrs, struct werr *e)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return werr_errno(e, "mounts: attaching %s", dst + strlen(STAGE));
	if (attrs && mnt_setattr_fd(AT_FDCWD, dst, attrs, true) < 0)
		return werr_errno(e, "mounts: setting attributes of %s", dst + strlen(STAGE));
	return 0;
}

/* A mask onto what lstat found (st): a link by move_mount, which does not follow it. */
static int mask_path(const char *src, const char *dst, const struct stat *st, struct werr *e)
{
	return S_ISLNK(st->st_mode) ? bind_path(src, dst, MASK_ATTRS, e)
				    : bind_fresh(src, dst, MASK_ATTRS, e);
}

/* The directories above path, so something can be created at path. */
static int make_parents(const char *path, struct werr *e)
{
	char parent[4096];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (mkdir_p(parent, 0755, NULL) < 0)
			return werr_errno(e, "mounts: creating %s", parent + strlen(STAGE));
	}
	return 0;
}

/* Made without a look first: a directory by mkdir_p (there already is
 * success), a file by mknod (made without being opened), its parents only
 * when they are missing. Whatever stat finds there already will do, as
 * before. */
static int make_mountpoint(const char *path, bool dir, struct werr *e)
{
	if (dir) {
		if (mkdir_p(path, 0755, NULL) < 0)
			return werr_errno(e, "mounts: creating mount point %s", path + strlen(STAGE));
		return 0;
	}
	if (mknod(path, S_IFREG | 0644, 0) == 0)
		return 0;
	if (errno == ENOENT) {
		if (make_parents(path, e) < 0)
			return -1;
		if (mknod(path, S_IFREG | 0644, 0) == 0)
			return 0;
	}
	int err = errno;
	struct stat st;
	if (err == EEXIST) {
		if (stat(path, &st) == 0)
			return 0;
		err = errno;
	}
	return werr_set(e, err, "mounts: creating mount point %s", path + strlen(STAGE));
}

/* The options of a tmpfs of `size` bytes (0: the kernel's default, half
 * the memory): as many inodes as pages, so that empty files cannot pin
 * more kernel memory than the size allows in pages. */
static void tmpfs_opts(char *buf, size_t len, const char *mode, unsigned long long size)
{
	if (!size) {
		snprintf(buf, len, "mode=%s", mode);
		return;
	}
	unsigned long long inodes = size / 4096 < 1024 ? 1024 : size / 4096;
	snprintf(buf, len, "mode=%s,size=%llu,nr_inodes=%llu", mode, size, inodes);
}

static int mount_tmpfs(const char *where, const char *opts, unsigned long flags, struct werr *e)
{
	if (mkdir_p(where, 0755, NULL) < 0)
		return werr_errno(e, "mounts: creating %s", where);
	if (mount("tmpfs", where, "tmpfs", flags, opts) < 0)
		return werr_errno(e, "mounts: tmpfs on %s", where);
	return 0;
}

/* Mirror one host path (OLD + p) at STAGE + p: a symlink is recreated with
 * the same target, a directory or file is bound with attrs. Missing is fine
 * unless required. */
static int mirror(const char *p, uint64_t attrs, bool required, struct werr *e)
{
	char src[4096], dst[4096];
	snprintf(src, sizeof src, OLD "%s", p);
	snprintf(dst, sizeof dst, STAGE "%s", p);
	struct stat st;
	if (lstat(src, &st) < 0) {
		if (errno == ENOENT && !required)
			return 0;
		return werr_errno(e, "mounts: %s", p);
	}
	if (S_ISLNK(st.st_mode)) {
		/* the parents made only when missing */
		int r = copy_symlink(src, AT_FDCWD, dst);
		if (r < 0 && errno == ENOENT) {
			if (make_parents(dst, e) < 0)
				return -1;
			r = copy_symlink(src, AT_FDCWD, dst);
		}
		if (r < 0)
			return werr_errno(e, "mounts: recreating the link %s", p);
		return 0;
	}
	if (make_mountpoint(dst, S_ISDIR(st.st_mode), e) < 0)
		return -1;
	return bind_path(src, dst, attrs, e);
}

/* Copy the regular file src (a host path under OLD) to `path` on the
 * root tmpfs with mode `mode`; the root becomes read-only at the end. */
static int copy_fd_to_root(int in, const char *name, const char *path, mode_t mode,
			   struct werr *e)
{
	char dst[4200];
	snprintf(dst, sizeof dst, STAGE "%s", path);
	if (make_parents(dst, e) < 0)
		return -1;
	struct stat st;
	if (fstat(in, &st) < 0)
		return werr_errno(e, "mounts: %s", name);
	if (!S_ISREG(st.st_mode))
		return werr_set(e, EINVAL, "mounts: %s is not a regular file", name);
	if (lseek(in, 0, SEEK_SET) < 0)
		return werr_errno(e, "mounts: %s", name);
	_cleanup_close_ int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0)
		return werr_errno(e, "mounts: creating %s", path);
	for (off_t left = st.st_size; left > 0;) {
		ssize_t n = sendfile(out, in, NULL, (size_t)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return werr_set(e, n < 0 ? errno : EIO, "mounts: copying %s", path);
		left -= n;
	}
	return 0;
}

static int copy_to_root(const char *src, const char *path, mode_t mode, struct werr *e)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return werr_errno(e, "mounts: opening %s", src + strlen(OLD));
	return copy_fd_to_root(in, src + strlen(OLD), path, mode, e);
}

/* Attach a detached tree the supervisor made (hostid.h) at dst. */
static int attach_tree(int tree, const char *dst, struct werr *e, const char *what)
{
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, dst, W_MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return werr_errno(e, "mounts: attaching %s", what);
	return 0;
}

const char *mnt_stage_tree(int tree, const char *name)
{
	if (mkdir(name, 0755) < 0 ||
	    syscall(SYS_move_mount, tree, "", AT_FDCWD, name, W_MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return NULL;
	return name;
}

static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};

/* The user's cached /etc as the lower layer of a read-only overlay on
 * STAGE/etc: one mount, like a bind, but the mount table shows the layers
 * as the option string gave them, here "etc" and "etc.empty" (links and a
 * directory on the staging tmpfs, relative to its root, the current
 * directory), never the cache's host path. An overlay without an upper
 * layer needs two lower ones: the second is empty. -1 (errno) when the
 * kernel refuses (no overlayfs in user namespaces, a cache on a file system
 * it cannot stack on): the caller copies /etc instead. */
/* The spec's extra /etc file (etc_extra_path) written under root, mode
 * 0644, with its directories. */
static int etc_extra(const struct sandbox_spec *s, const char *root, struct werr *e)
{
	if (!s->etc_extra_path)
		return 0;
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", root, s->etc_extra_path);
	if (make_parents(path, e) < 0)
		return -1;
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write_all(fd, s->etc_extra_text, strlen(s->etc_extra_text)) < 0)
		return werr_errno(e, "mounts: writing /etc/%s", s->etc_extra_path);
	return 0;
}

static int etc_overlay(const struct sandbox_spec *s, struct werr *e)
{
	char src[4200];
	snprintf(src, sizeof src, OLD "%s", s->etc_cache);
	if (s->ids.active && (s->ids.etc_tree < 0 || !mnt_stage_tree(s->ids.etc_tree, "/etc.cache")))
		return -1;
	if (symlink(s->ids.active ? "/etc.cache" : src, "etc") < 0 || mkdir("etc.empty", 0555) < 0 ||
	    mkdir(STAGE "/etc", 0755) < 0)
		return -1;
	/* the extra file in a layer of its own, above the cache */
	bool extra = s->etc_extra_path && mkdir("etc.extra", 0755) == 0 &&
		     etc_extra(s, "etc.extra", e) == 0;
	if (mount("overlay", STAGE "/etc", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
		  extra ? "lowerdir=etc.extra:etc:etc.empty" : "lowerdir=etc:etc.empty") < 0)
		return -1;
	return extra || !s->etc_extra_path ? 0 : -1;
}

/* warden's own binary: the cached copy (selfbin.c) through a read-only
 * overlay on /.warden/bin, named like /etc's by a staging link, and
 * SANDBOX_SELF_EXE a link to it; -1 when the kernel refuses (the caller
 * copies the binary instead). */
static int self_overlay(const struct sandbox_spec *s, const char *dir)
{
	char src[4200];
	snprintf(src, sizeof src, OLD "%s", dir);
	if (s->ids.active &&
	    (s->ids.self_tree < 0 || !mnt_stage_tree(s->ids.self_tree, "/warden-bin.cache")))
		return -1;
	if (symlink(s->ids.active ? "/warden-bin.cache" : src, "warden-bin") < 0 ||
	    mkdir("warden-bin.empty", 0555) < 0 || mkdir_p(STAGE "/.warden/bin", 0755, NULL) < 0)
		return -1;
	if (mount("overlay", STAGE "/.warden/bin", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
		  "lowerdir=warden-bin:warden-bin.empty") < 0) {
		rmdir(STAGE "/.warden/bin");
		return -1;
	}
	return symlink("bin/warden", STAGE SANDBOX_SELF_EXE) == 0 &&
			       symlink("bin/warden-hook", STAGE SANDBOX_HOOK_EXE) == 0
		       ? 0
		       : -1;
}

/* The hook client written onto the root tmpfs, when warden's own binary
 * is copied there too. */
static int hookbin_to_root(struct werr *e)
{
	_cleanup_close_ int out = open(STAGE SANDBOX_HOOK_EXE,
				       O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0555);
	if (out < 0 || write_all(out, hookbin_data, hookbin_size) < 0)
		return werr_errno(e, "mounts: writing %s", SANDBOX_HOOK_EXE);
	return 0;
}

/* /etc (etc.c): the user's cached copy through an overlay, or a copy made
 * now on the root tmpfs; then the directories and large files bound on
 * top. */
static int build_etc(const struct sandbox_spec *s, struct werr *e)
{
	struct strv local = { 0 };
	const struct strv *binds = &s->etc_binds;
	if (s->etc_cache && etc_overlay(s, e) == 0) {
		/* the cache's layout: the binds of the session on top */
	} else {
		if (s->etc_cache)
			umount2(STAGE "/etc", MNT_DETACH); /* an overlay without the extra file */
		if (mkdir_p(STAGE "/etc", 0755, NULL) < 0)
			return werr_errno(e, "mounts: creating /etc");
		_cleanup_close_ int fd = open(STAGE "/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return werr_errno(e, "mounts: opening /etc");
		if (etc_populate(OLD, fd, &local, e) < 0) {
			strv_free(&local);
			return werr_wrap(e, "mounts");
		}
		if (etc_extra(s, STAGE "/etc", e) < 0) {
			strv_free(&local);
			return -1;
		}
		binds = &local;
	}
	int r = 0;
	for (size_t i = 0; r == 0 && i < binds->n; i++) {
		char src[4200], dst[4200];
		snprintf(src, sizeof src, OLD "%s", binds->v[i]);
		snprintf(dst, sizeof dst, STAGE "%s", binds->v[i]);
		struct stat st;
		/* gone from the host since the cache was checked: nothing to bind */
		if (lstat(src, &st) < 0 && errno == ENOENT)
			continue;
		r = bind_path(src, dst, RO_ATTRS, e);
	}
	strv_free(&local);
	return r;
}

/* The scratch tmpfs and its directories, bound at /tmp and /var/tmp (and
 * /dev/shm by build_dev). */
static int build_scratch(const struct sandbox_spec *s, struct werr *e)
{
	static const char *const dirs[][2] = {
		{ SCRATCH "/tmp", STAGE "/tmp" }, { SCRATCH "/var-tmp", STAGE "/var/tmp" },
		{ SCRATCH "/shm", NULL },
	};
	char opts[128];
	tmpfs_opts(opts, sizeof opts, "0755", s->policy->limits[LIMIT_TMP].value);
	if (mount_tmpfs(SCRATCH, opts, MS_NOSUID | MS_NODEV | MS_NOEXEC, e) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		if (mkdir(dirs[i][0], 0) < 0 || chmod(dirs[i][0], 01777) < 0)
			return werr_errno(e, "mounts: creating %s", dirs[i][0]);
		if (!dirs[i][1])
			continue;
		if (mkdir_p(dirs[i][1], 0755, NULL) < 0)
			return werr_errno(e, "mounts: creating %s", dirs[i][1] + strlen(STAGE));
		if (bind_fresh(dirs[i][0], dirs[i][1], SCRATCH_ATTRS, e) < 0)
			return -1;
	}
	return 0;
}

static int build_dev(struct werr *e)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
	if (mount_tmpfs(STAGE "/dev", "mode=0755", MS_NOSUID | MS_NOEXEC, e) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(nodes); i++) {
		char src[64], dst[64];
		snprintf(src, sizeof src, OLD "/dev/%s", nodes[i]);
		snprintf(dst, sizeof dst, STAGE "/dev/%s", nodes[i]);
		if (make_mountpoint(dst, false, e) < 0 ||
		    bind_fresh(src, dst, W_MOUNT_ATTR_NOSUID | W_MOUNT_ATTR_NOEXEC, e) < 0)
			return -1;
	}
	if (mkdir_p(STAGE "/dev/pts", 0755, NULL) < 0 ||
	    mount("devpts", STAGE "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620") < 0)
		return werr_errno(e, "mounts: devpts on /dev/pts");
	if (mkdir(STAGE "/dev/shm", 0755) < 0)
		return werr_errno(e, "mounts: creating /dev/shm");
	if (bind_fresh(SCRATCH "/shm", STAGE "/dev/shm", SCRATCH_ATTRS, e) < 0)
		return -1;
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
	};
	for (size_t i = 0; i < ARRAY_LEN(links); i++) {
		char dst[64];
		snprintf(dst, sizeof dst, STAGE "/dev/%s", links[i][1]);
		if (symlink(links[i][0], dst) < 0)
			return werr_errno(e, "mounts: linking /dev/%s", links[i][1]);
	}
	if (mnt_setattr_fd(AT_FDCWD, STAGE "/dev", W_MOUNT_ATTR_RDONLY | W_MOUNT_ATTR_NOSUID |
		       W_MOUNT_ATTR_NOEXEC, false) < 0)
		return werr_errno(e, "mounts: making /dev read-only");
	return 0;
}

static int build_proc(struct werr *e)
{
	/* Entries that leak kernel state or reach beyond the namespace. */
	static const char *const masked_files[] = {
		"kcore", "keys", "key-users", "timer_list", "sched_debug", "latency_stats",
		"kallsyms", "kmsg", "kpagecount", "kpageflags", "kpagecgroup", "sysrq-trigger",
		"vmallocinfo", "slabinfo", "iomem", "ioports", "mtrr", "pagetypeinfo",
	};
	static const char *const masked_dirs[] = { "acpi", "scsi", "bus", "irq", "fs", "driver", "tty" };
	if (mkdir_p(STAGE "/proc", 0755, NULL) < 0 ||
	    mount("proc", STAGE "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return werr_errno(e, "mounts: mounting a fresh /proc (the kernel refuses it "
				  "while this /proc has paths masked or read-only, as a container's "
				  "has: run the container with /proc unmasked: podman --security-opt "
				  "'unmask=/proc/*', docker --security-opt systempaths=unconfined, a "
				  "Kubernetes pod's procMount: Unmasked with hostUsers: false; warden "
				  "masks the same files in its own /proc; see doc/containers.md)");
	if (bind_path(STAGE "/proc/sys", STAGE "/proc/sys", RO_ATTRS | W_MOUNT_ATTR_NOEXEC, e) < 0)
		return -1;
	struct stat st;
	for (size_t i = 0; i < ARRAY_LEN(masked_files); i++) {
		char dst[128];
		snprintf(dst, sizeof dst, STAGE "/proc/%s", masked_files[i]);
		if (lstat(dst, &st) == 0 && mask_path("/mask_file", dst, &st, e) < 0)
			return -1;
	}
	for (size_t i = 0; i < ARRAY_LEN(masked_dirs); i++) {
		char dst[128];
		snprintf(dst, sizeof dst, STAGE "/proc/%s", masked_dirs[i]);
		if (lstat(dst, &st) == 0 && mask_path("/mask_dir", dst, &st, e) < 0)
			return -1;
	}
	return 0;
}

static int path_depth(const char *p)
{
	int d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* --review: the workspace as an overlay, the real tree its lower layer
 * (never written), the session's writes in the upper directory under
 * warden's log directory (userxattr: its whiteouts and opaque marks are
 * user.overlay.* attributes, as a user namespace allows). As root, both
 * come as the supervisor's idmapped trees (hostid.h), staged and named by
 * their staging names (overlayfs takes idmapped layers since Linux 5.19;
 * session.c refuses older kernels before anything starts). */
static int review_overlay(const struct sandbox_spec *s, const char *lower, const char *dst,
			  struct werr *e)
{
	_cleanup_free_ char *opts = NULL;
	if (s->ids.active) {
		if (s->ids.ws_tree < 0 || s->ids.review_tree < 0 ||
		    !mnt_stage_tree(s->ids.ws_tree, "/review.lower") ||
		    !mnt_stage_tree(s->ids.review_tree, "/review.layers"))
			return werr_errno(e, "--review: staging the overlay's layers");
		opts = xstrdup("lowerdir=review.lower,upperdir=review.layers/upper,"
			       "workdir=review.layers/work,userxattr");
	} else {
		char up[4200], work[4200];
		snprintf(up, sizeof up, OLD "%s", s->review_upper);
		snprintf(work, sizeof work, OLD "%s", s->review_work);
		if (strpbrk(lower, ",:\\") || strpbrk(up, ",:\\") || strpbrk(work, ",:\\"))
			return werr_set(e, 0, "--review: a path with ',', ':' or '\\' cannot be an "
					"overlay layer");
		opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, up, work);
	}
	unsigned long flags = MS_NOSUID | MS_NODEV | (s->exec.strict ? MS_NOEXEC : 0);
	if (mount("overlay", dst, "overlay", flags, opts) < 0)
		return werr_errno(e, "--review: mounting the workspace's overlay%s", s->ids.active ?
				  " on idmapped layers (as root)" : "");
	return 0;
}

/* The workspace and the policy's extra paths, shallow first so a path nested
 * in another is mounted on top of it. */
static int build_binds(const struct sandbox_spec *s, struct werr *e)
{
	const struct policy *p = s->policy;
	int maxd = path_depth(s->workspace);
	for (size_t i = 0; i < p->npaths; i++)
		if (path_depth(p->paths[i].path) > maxd)
			maxd = path_depth(p->paths[i].path);
	for (int d = 1; d <= maxd; d++) {
		for (size_t i = 0; i < p->npaths; i++) {
			const struct policy_path *pp = &p->paths[i];
			if (path_depth(pp->path) != d || strcmp(pp->path, s->workspace) == 0)
				continue;
			char src[4096];
			snprintf(src, sizeof src, OLD "%s", pp->source ? pp->source : pp->path);
			int tree = s->ids.active ? s->ids.path_trees[i] : -1;
			struct stat st;
			if (s->ids.active ? tree < 0 || fstat(tree, &st) < 0 : stat(src, &st) < 0)
				continue; /* a missing extra path is simply not there */
			char dst[4096];
			snprintf(dst, sizeof dst, STAGE "%s", pp->path);
			if (make_mountpoint(dst, S_ISDIR(st.st_mode), e) < 0 ||
			    (tree >= 0 ? attach_tree(tree, dst, e, pp->path) :
			     bind_path(src, dst, pp->mode == POLICY_RW ? SCRATCH_ATTRS : RO_ATTRS, e)) < 0)
				return werr_wrap(e, "%s %s (%s)", pp->mode == POLICY_RW ? "read-write" :
						 "read-only", pp->path, pp->origin);
		}
		if (path_depth(s->workspace) == d) {
			char src[4096], dst[4096];
			snprintf(src, sizeof src, OLD "%s", s->workspace);
			snprintf(dst, sizeof dst, STAGE "%s", s->workspace);
			/* strict mode: nothing the agent writes there runs; the
			 * plan's pins and protections, cloned from it, inherit
			 * noexec */
			uint64_t attrs = (s->workspace_ro ? RO_ATTRS : RW_ATTRS) |
					 (s->exec.strict ? W_MOUNT_ATTR_NOEXEC : 0);
			if (make_mountpoint(dst, true, e) < 0 ||
			    (s->review_upper ? review_overlay(s, src, dst, e) :
			     s->ids.active ? attach_tree(s->ids.ws_tree, dst, e, "the workspace") :
			     bind_path(src, dst, attrs, e)) < 0)
				return werr_wrap(e, "workspace");
		}
	}
	return 0;
}

/* Agent state and caches: each name bound read-write (no exec, suid or
 * devices) into the home tmpfs from the host path that backs it, opened
 * with no symlink followed at its last component and checked to be of its
 * kind; a cache's parents in the home made on the tmpfs. */
static int build_home(const struct sandbox_spec *s, struct werr *e)
{
	for (size_t i = 0; i < s->nhome_binds; i++) {
		const struct home_bind *b = &s->home_binds[i];
		if (!*b->name || b->name[0] == '/' || path_has_dot_components(b->name))
			return werr_set(e, EINVAL, "mounts: home bind name \"%s\"", b->name);
		char src[4096], dst[4096];
		snprintf(src, sizeof src, OLD "%s", b->src);
		snprintf(dst, sizeof dst, STAGE AGENT_HOME "/%s", b->name);
		int tree = s->ids.active ? s->ids.home_trees[i] : -1;
		_cleanup_close_ int fd = s->ids.active ? -1 : open(src, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if ((tree < 0 && fd < 0) || fstat(tree >= 0 ? tree : fd, &st) < 0)
			return werr_errno(e, "mounts: agent state %s", b->src);
		if (b->dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
			return werr_set(e, ESTALE, "mounts: agent state %s changed kind while the "
					"sandbox was built", b->src);
		if (make_mountpoint(dst, b->dir, e) < 0 ||
		    (tree >= 0 ? attach_tree(tree, dst, e, dst + strlen(STAGE)) :
		     mnt_bind_at(fd, "", AT_FDCWD, dst, SCRATCH_ATTRS, e, dst + strlen(STAGE))) < 0)
			return werr_wrap(e, "agent state %s", b->src);
	}
	return 0;
}

/* `exec allow-writable`: each path bound onto itself without noexec (nosuid
 * and nodev stay), with what is mounted beneath it (masks, protections),
 * shallow first; made first when its place is a tmpfs of the sandbox's own
 * (the supervisor made the others on the host). Opened beneath its place
 * with no symlink followed. Placed after the workspace's own mounts, so a
 * pin above it does not cover it. */
static int build_exec_writable(const struct sandbox_spec *s, struct werr *e)
{
	for (size_t i = 0; i < s->exec.n; i++) {
		const struct exec_writable *w = &s->exec.w[i];
		char root[4200];
		snprintf(root, sizeof root, STAGE "%s", w->place);
		_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0)
			return werr_errno(e, "exec allow-writable %s: opening %s", w->path, w->place);
		const char *rel = w->path + strlen(w->place);
		while (*rel == '/')
			rel++;
		_cleanup_close_ int fd = exec_open_dir_beneath(rfd, rel, w->tmpfs);
		if (fd < 0)
			return werr_errno(e, "exec allow-writable %s: %s", w->path,
					  errno == ELOOP ? "a symlink on its way, since the check" :
					  errno == ENOTDIR ? "no longer a directory" : "opening it");
		if (mnt_bind_attrs(fd, "", fd, "", RW_ATTRS, W_MOUNT_ATTR_NOEXEC, e, w->path) < 0)
			return werr_wrap(e, "exec allow-writable %s%s", w->path, e->errnum == EPERM ?
					 " (a file system the host mounts noexec stays so)" : "");
	}
	return 0;
}

/* Strict mode: each denied file the sandbox shows read-only is hidden
 * under the empty mode-0 file, so it can be neither run nor read (copied);
 * a symlink to it leads to the mask. Opened beneath the new root with no
 * symlink followed; one the sandbox does not show is skipped. */
static int hide_denied(const struct sandbox_spec *s, struct werr *e)
{
	if (!s->exec.hidden.n)
		return 0;
	_cleanup_close_ int root = open(STAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return werr_errno(e, "mounts: opening the new root");
	for (size_t i = 0; i < s->exec.hidden.n; i++) {
		const char *f = s->exec.hidden.v[i];
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		_cleanup_close_ int fd = (int)syscall(SYS_openat2, root, f + 1, &how, sizeof how);
		if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
			continue; /* not in the sandbox's view */
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0)
			return werr_errno(e, "exec deny %s: opening it to hide it", f);
		if (!S_ISREG(st.st_mode))
			continue;
		if (mnt_bind_at(AT_FDCWD, "/mask_file", fd, "", MASK_ATTRS, e, f) < 0)
			return werr_wrap(e, "exec deny %s: hiding it", f);
	}
	return 0;
}

static int mask_private(const struct sandbox_spec *s, const char *dir, struct werr *e)
{
	for (size_t i = 0; dir && i < s->policy->npaths; i++) {
		char dst[4096];
		struct stat st;
		snprintf(dst, sizeof dst, STAGE "%s", dir);
		if (path_is_within(dir, s->policy->paths[i].path) && lstat(dst, &st) == 0) {
			/* a host's: made a link after lstat, mount(2) would follow */
			if (bind_path("/mask_dir", dst, MASK_ATTRS, e) < 0)
				return werr_wrap(e, "masking %s", dir);
			break;
		}
	}
	return 0;
}

/* A tmpfs to build on, made the root for a moment, the host's tree moved
 * to OLD; the new root a tmpfs at STAGE on it; the masks' sources
 * (/mask_file and /mask_dir) with the masks' attributes (MASK_SRC_ATTRS). */
static int stage_root(struct werr *e)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return werr_errno(e, "mounts: making / private");
	/* Stage on a tmpfs that becomes the root for a moment; the host's tree
	 * moves to /oldroot. */
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return werr_errno(e, "mounts: staging tmpfs");
	if (mkdir("/tmp/newroot", 0755) < 0 || mkdir("/tmp/oldroot", 0755) < 0 ||
	    mkdir("/tmp/mask_dir", 0) < 0)
		return werr_errno(e, "mounts: staging directories");
	int mfd = open("/tmp/mask_file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (mfd < 0)
		return werr_errno(e, "mounts: staging mask file");
	close(mfd);
	if (syscall(SYS_pivot_root, "/tmp", "/tmp/oldroot") < 0 || chdir("/") < 0)
		return werr_errno(e, "mounts: pivot_root into the staging area");
	if (mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return werr_errno(e, "mounts: root tmpfs");
	/* the masks' sources with the masks' attributes (MASK_SRC_ATTRS) */
	if (mnt_bind_at(AT_FDCWD, "/mask_file", AT_FDCWD, "/mask_file", MASK_SRC_ATTRS, e,
		    "the mask file") < 0 ||
	    mnt_bind_at(AT_FDCWD, "/mask_dir", AT_FDCWD, "/mask_dir", MASK_SRC_ATTRS, e,
		    "the mask directory") < 0)
		return -1;
	return 0;
}

/* The system directories, read-only. */
static int build_system(struct werr *e)
{
	for (size_t i = 0; i < ARRAY_LEN(system_dirs); i++)
		if (mirror(system_dirs[i], RO_ATTRS, strcmp(system_dirs[i], "/usr") == 0, e) < 0)
			return -1;
	return 0;
}

/* The home's tmpfs, of the size `limit home` gives: no exec, suid or
 * devices. */
static int build_home_tmpfs(const struct sandbox_spec *s, struct werr *e)
{
	char opts[128];
	tmpfs_opts(opts, sizeof opts, "0700", s->policy->limits[LIMIT_HOME].value);
	return mount_tmpfs(STAGE AGENT_HOME, opts, MS_NOSUID | MS_NODEV | MS_NOEXEC, e);
}

/* A profile path that covers the audit log directory or the cache
 * (read-only ~, say) must not hand the agent the logs, nor the cached
 * /etc of later sessions, nor the control sockets' directory (where a
 * socket of the agent's would answer `warden kill`): mask the directory. */
static int mask_private_dirs(const struct sandbox_spec *s, struct werr *e)
{
	if (mask_private(s, s->logdir, e) < 0 || mask_private(s, s->cachedir, e) < 0 ||
	    mask_private(s, s->storedir, e) < 0 || mask_private(s, s->runtimedir, e) < 0)
		return -1;
	return 0;
}

/* warden check: its own binary as the probe runner, copied (the
 * file that runs, through /proc/self/exe) onto the root tmpfs, which
 * becomes read-only: a bind would show the binary's host path. */
static int build_self(const struct sandbox_spec *s, struct werr *e)
{
	if (s->self_exe && !(s->self_cache && self_overlay(s, s->self_cache) == 0) &&
	    (copy_to_root(OLD "/proc/self/exe", SANDBOX_SELF_EXE, 0555, e) < 0 ||
	     hookbin_to_root(e) < 0))
		return werr_wrap(e, "warden's own binary");
	return 0;
}

/* The session's trust store, when warden terminates TLS: read-only, at
 * its own path and over the system bundle (curl, git, openssl and
 * Python's ssl read that one by default). */
static int build_trust_store(const struct sandbox_spec *s, struct werr *e)
{
	if (!s->ca_bundle)
		return 0;
	char src[4200];
	snprintf(src, sizeof src, OLD "%s", s->ca_bundle);
	struct stat st;
	/* a copy on the root tmpfs: its host path is in warden's cache */
	if ((s->ids.active ? copy_fd_to_root(s->ids.ca_fd, s->ca_bundle, SANDBOX_CA_BUNDLE,
					     0444, e) :
	     copy_to_root(src, SANDBOX_CA_BUNDLE, 0444, e)) < 0)
		return werr_wrap(e, "the session's trust store");
	if (lstat(STAGE SYSTEM_CA_BUNDLE, &st) == 0 && S_ISREG(st.st_mode) &&
	    bind_path(STAGE SANDBOX_CA_BUNDLE, STAGE SYSTEM_CA_BUNDLE,
		      RO_ATTRS | W_MOUNT_ATTR_NOEXEC, e) < 0)
		return werr_wrap(e, "the session's trust store over " SYSTEM_CA_BUNDLE);
	return 0;
}

/* What a mask re-applied during the session binds (remask.c): an
 * empty file and directory of mode 0 on the root, which stays. */
static int build_mask_sources(struct werr *e)
{
	if (mkdir_p(STAGE "/.warden", 0755, NULL) < 0 || mkdir(STAGE MASK_DIR, 0) < 0)
		return werr_errno(e, "mounts: the masks' sources");
	int mf = open(STAGE MASK_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (mf < 0)
		return werr_errno(e, "mounts: the masks' sources");
	close(mf);
	return 0;
}

/* Into the new root; the staging area and the host tree go away. */
static int enter_root(struct werr *e)
{
	if (chdir(STAGE) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return werr_errno(e, "mounts: pivot_root into the new root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return werr_errno(e, "mounts: detaching the host tree");
	return 0;
}

int mounts_seal(const struct sandbox_spec *s, int *hook_fd, int *ssh_fd, struct werr *e)
{
	if ((*hook_fd = net_hook_listener(SANDBOX_HOOK_SOCK, e)) < 0)
		return -1;
	if (s->policy->ssh_agent.on && (*ssh_fd = net_hook_listener(SANDBOX_SSH_AGENT_SOCK, e)) < 0)
		return werr_wrap(e, "the ssh-agent socket");
	if (mnt_setattr_fd(AT_FDCWD, "/", RO_ATTRS, false) < 0)
		return werr_errno(e, "mounts: making / read-only");
	return 0;
}

/* The layers in the order they are mounted: a bind onto a directory clones
 * what is mounted below it, so each goes after what it covers. */
int mounts_build_start(const struct sandbox_spec *s, struct werr *e)
{
	return stage_root(e) < 0 ||               /* a tmpfs to build on, the host at OLD */
	       build_system(e) < 0 ||             /* /usr, /bin, /lib...: read-only */
	       build_etc(s, e) < 0 ||             /* the curated /etc */
	       build_scratch(s, e) < 0 ||         /* /tmp, /var/tmp, /dev/shm */
	       build_home_tmpfs(s, e) < 0 ||      /* AGENT_HOME */
	       build_home(s, e) < 0 ||            /* agent state in it */
	       build_dev(e) < 0 ||
	       build_proc(e) < 0 ||
	       build_binds(s, e) < 0              /* the workspace, the profile's paths */
	       ? -1 : 0;
}

int mounts_build_finish(const struct sandbox_spec *s, struct werr *e)
{
	if (mounts_workspace_plan(s, e) < 0 ||  /* protected paths, placeholders, masks */
	    build_exec_writable(s, e) < 0 ||   /* `exec allow-writable` */
	    hide_denied(s, e) < 0 ||           /* `exec strict`'s denied programs */
	    mask_private_dirs(s, e) < 0 ||     /* the logs, the cache, the store */
	    build_self(s, e) < 0 ||            /* warden check's binary */
	    build_trust_store(s, e) < 0 ||     /* when warden terminates TLS */
	    build_mask_sources(e) < 0)         /* for the re-masker */
		return -1;
	return enter_root(e);
}
