/* immutable.c - the rule of "the agent cannot change this file"
 * (immutable.h): a read-only mount, and no hard link a writable mount
 * reaches. */
#include "immutable.h"

#include <sys/statvfs.h>

#include "../../common/util.h"

bool exec_immutable_rule(unsigned long mount_flags, const struct stat *st, const char *resolved,
			 const dev_t *wdev, size_t nwdev)
{
	static const char *const system_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32",
		"/lib64", "/libx32", "/etc" };
	if (!(mount_flags & ST_RDONLY))
		return false;
	if (st->st_nlink <= 1)
		return true;
	for (size_t i = 0; resolved && i < ARRAY_LEN(system_dirs); i++)
		if (path_is_within(resolved, system_dirs[i]))
			return true;
	if (!wdev)
		return false;
	for (size_t i = 0; i < nwdev; i++)
		if (wdev[i] == st->st_dev)
			return false;
	return true;
}

bool exec_mount_flags(int fd, unsigned long *flags)
{
	struct statvfs v;
	if (fstatvfs(fd, &v) < 0)
		return false;
	*flags = v.f_flag;
	return true;
}

bool exec_file_immutable(int fd, const struct stat *st, const char *resolved, const dev_t *wdev,
			 size_t nwdev, bool *noexec)
{
	unsigned long flags;
	if (noexec)
		*noexec = false;
	if (!exec_mount_flags(fd, &flags))
		return false;
	if (noexec)
		*noexec = (flags & ST_NOEXEC) != 0;
	return exec_immutable_rule(flags, st, resolved, wdev, nwdev);
}
