/* kfile.c - files as the BPF LSM program names them (kfile.h): the
 * kernel's device numbers and ctimes, and the file of a record found again
 * as its task sees it (under its root, or among its open files). */
#include "config.h"

#if WARDEN_BPF

#include "kfile.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../common/util.h"

/* The kernel's dev_t (MKDEV: major << 20 | minor) of a userspace st_dev. */
uint64_t kfile_dev(dev_t d)
{
	return ((uint64_t)major(d) << 20) | minor(d);
}

uint64_t kfile_ctime(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000ull + (uint64_t)st->st_ctim.tv_nsec;
}

/* Is the file open at fd the one the kernel named? An overlay reports the
 * device of the layer the file comes from, not its own: there the inode
 * and the ctime (to the nanosecond) must do. */
bool kfile_same(int fd, const struct stat *st, const struct exec_lsm_key *k, uint64_t ctime)
{
	if (!S_ISREG(st->st_mode) || st->st_ino != k->ino || kfile_ctime(st) != ctime)
		return false;
	if (kfile_dev(st->st_dev) == k->dev)
		return true;
	struct statfs sf;
	return fstatfs(fd, &sf) == 0 && sf.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* The file of rec opened O_PATH as its task sees it: by its path under the
 * task's root (resolved as the task would), else among the task's open
 * files (a memfd, a deleted file, execveat of an fd). -1 when not found. */
int kfile_find(const struct exec_lsm_rec *rec, struct stat *st)
{
	struct exec_lsm_key k = { .dev = rec->dev, .ino = rec->ino };
	char p[64];
	size_t plen = strnlen(rec->path, sizeof rec->path);
	static const char deleted[] = " (deleted)";
	bool gone = plen >= sizeof deleted - 1 &&
		    memcmp(rec->path + plen - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0;
	if (plen && plen < sizeof rec->path && rec->path[0] == '/' && !gone) {
		snprintf(p, sizeof p, "/proc/%u/root", rec->pid);
		_cleanup_close_ int root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct open_how how = { .flags = O_PATH | O_CLOEXEC,
					.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
		int fd = root < 0 ? -1 : (int)syscall(SYS_openat2, root, rec->path, &how, sizeof how);
		if (fd >= 0 && fstat(fd, st) == 0 && kfile_same(fd, st, &k, rec->ctime))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	snprintf(p, sizeof p, "/proc/%u/fd", rec->pid);
	DIR *d = opendir(p);
	if (!d)
		return -1;
	int found = -1;
	struct dirent *de;
	while (found < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct stat s;
		if (fstatat(dirfd(d), de->d_name, &s, 0) < 0 || s.st_ino != k.ino)
			continue;
		int fd = openat(dirfd(d), de->d_name, O_PATH | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, st) == 0 && kfile_same(fd, st, &k, rec->ctime))
			found = fd;
		else if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return found;
}

/* The name of the file open at fd as process pid sees it (under its
 * root), into out ("" when none is found: a deleted file, a memfd). Its
 * name from here ends with it (the task's root is somewhere above): the
 * longest tail that, opened under the task's root, is the same file. */
void kfile_task_path(pid_t pid, int fd, const struct stat *st, char *out, size_t len)
{
	char self[64], p[PATH_MAX];
	out[0] = '\0';
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, p, sizeof p - 1);
	if (n <= 0 || p[0] != '/')
		return;
	p[n] = '\0';
	snprintf(self, sizeof self, "/proc/%d/root", (int)pid);
	_cleanup_close_ int root = open(self, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (const char *c = p; root >= 0 && c; c = strchr(c + 1, '/')) {
		struct open_how how = { .flags = O_PATH | O_CLOEXEC,
					.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
		_cleanup_close_ int f = (int)syscall(SYS_openat2, root, c, &how, sizeof how);
		struct stat s;
		if (f >= 0 && fstat(f, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino) {
			snprintf(out, len, "%s", c);
			return;
		}
	}
}

#endif
