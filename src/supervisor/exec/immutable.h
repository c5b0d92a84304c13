/* immutable.h - the one rule of "the agent cannot change this file", shared
 * by the exec pipeline of seccomp notifications (execs.h) and the rules the
 * kernel enforces (bpfexec.h). An immutable file's hash may be cached by
 * its inode, and only an immutable file may be allowed by its directory
 * (`exec allow DIR`) or run unwatched. The exec pipeline takes a file this
 * rule refuses for its hard links alone as immutable still when every one
 * of its links is on its read-only mount (linkwalk.h); the kernel's rules
 * do not. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Can the agent not change the file open at fd (O_PATH will do; st: its
 * fstat, resolved: where it lies inside the sandbox, NULL unknown)? It must
 * lie on a read-only mount, and not be a hard link of a file a writable
 * mount reaches: a file of one link, or in the system directories (a hard
 * link between those and a writable tree could only be made on the host,
 * by someone who can write both), or on a device none of the nwdev
 * writable devices wdev is. wdev NULL: the writable devices are not known,
 * and any may be one (a hard link elsewhere is not immutable). noexec (may
 * be NULL): set to whether the mount is noexec (false when fstatvfs
 * fails: then the file is not immutable either). */
bool exec_file_immutable(int fd, const struct stat *st, const char *resolved, const dev_t *wdev,
			 size_t nwdev, bool *noexec);

/* The flags (statvfs's f_flag) of the mount fd lies on; false when
 * fstatvfs fails. */
bool exec_mount_flags(int fd, unsigned long *flags);

/* The rule itself, on the mount's flags (statvfs's f_flag) as fstatvfs
 * gave them: what exec_file_immutable decides after that call. */
bool exec_immutable_rule(unsigned long mount_flags, const struct stat *st, const char *resolved,
			 const dev_t *wdev, size_t nwdev);
