/* target.c - opening a path the way a sandboxed process sees it (target.h). */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/util.h"

void target_cwd(pid_t pid, char *buf, size_t len)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/cwd", (int)pid);
	ssize_t n = readlink(p, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

int target_open(pid_t pid, int dirfd_arg, bool at, const char *path, int at_flags, int oflags,
		const char *cwd, char *resolved, size_t rlen)
{
	char p[PATH_MAX + 64];
	int fd = -1;
	if (at && (at_flags & AT_EMPTY_PATH) && !path[0]) {
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, dirfd_arg);
		fd = open(p, oflags);
	} else {
		char base[PATH_MAX] = "";
		if (path[0] != '/') {
			if (at && dirfd_arg != AT_FDCWD) {
				snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)pid, dirfd_arg);
				ssize_t n = readlink(p, base, sizeof base - 1);
				base[n > 0 ? n : 0] = '\0';
			} else {
				snprintf(base, sizeof base, "%s", cwd);
			}
		}
		char full[PATH_MAX * 2 + 2];
		snprintf(full, sizeof full, "%s%s%s", base, base[0] && path[0] != '/' ? "/" : "", path);
		snprintf(p, sizeof p, "/proc/%d/root", (int)pid);
		_cleanup_close_ int root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			return -1;
		struct open_how how = { .flags = (unsigned)oflags, .resolve = RESOLVE_IN_ROOT };
		fd = (int)syscall(SYS_openat2, root, full, &how, sizeof how);
	}
	if (fd >= 0 && resolved) {
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		int saved = errno;
		ssize_t n = readlink(p, resolved, rlen - 1);
		resolved[n > 0 ? n : 0] = '\0';
		errno = saved;
	}
	return fd;
}
