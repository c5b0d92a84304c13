/* execpath.h - when the kernel's exec must open the very file warden
 * checked, so that watching the exec through to its stop (exectrace.h) can
 * be left out: the path cannot be made to resolve elsewhere, and its string
 * cannot be changed before the kernel reads it again.
 *
 * Paths: an absolute path whose every lookup happens in a directory on a
 * read-only mount (symlinks followed, each in such a directory: their
 * targets cannot change either), never through "..", /proc or more than 40
 * symlinks. The sandbox's mounts cannot change (the mount calls are
 * refused), nor can its root (chroot, pivot_root refused).
 *
 * Strings: in a process of one thread, whose memory is shared with no
 * other running task (the seccomp filter refuses CLONE_VM without
 * CLONE_THREAD or CLONE_VFORK; a vfork child's memory is its parent's, as
 * kcmp tells, whose one thread waits in vfork until the exec), on pages
 * that are private and anonymous (/proc/PID/pagemap), the only writer is
 * the thread itself, blocked in its exec; /proc/PID/mem is read-only
 * inside (Landlock), process_vm_writev and ptrace are refused. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct execpath;

struct execpath *execpath_new(void);
void execpath_free(struct execpath *ep);

/* Does path (absolute, inside the sandbox whose root is the O_PATH fd
 * root) resolve to the inode (dev, ino) through read-only directories
 * only? resolved: where warden's open of path reached it (its
 * /proc/self/fd link), kept with a path found stable. */
bool execpath_stable(struct execpath *ep, int root, const char *path, dev_t dev, ino_t ino,
		     const char *resolved);

/* The flags (statvfs's f_flag) of mount id, which fd (O_PATH will do) lies
 * on: read once a mount (the sandbox's mounts do not change: the mount
 * calls are refused inside). false when fstatvfs fails. */
bool execpath_mount_flags(struct execpath *ep, int fd, uint64_t id, unsigned long *flags);

/* The process that execs, as /proc/PID/status said when its exec was
 * noticed: pid, the thread (its process's only one, threads), ppid its
 * parent. A parent's own parent and threads are read when the memory is
 * its (a vfork): its one thread waits in vfork, so it cannot start
 * another meanwhile. */
struct execpath_proc {
	pid_t pid, ppid;
	int threads;
	int ppidfd;                 /* a pidfd of ppid (-1: none) */
};

/* Can nobody but the process's one thread, blocked in its exec, change the
 * len bytes at addr in its memory? init: sandbox init (which forks its
 * children, never vforks). */
bool execpath_string_private(const struct execpath_proc *pr, pid_t init, uint64_t addr, size_t len);

/* The file open at fd (O_PATH will do), as an exec's subject needs it:
 * its stat; where it lies inside the sandbox (resolved, malloc'd): what
 * execpath_stable kept for path when path reaches the same inode (the
 * same read-only directories, which nothing inside can change, lead
 * there), else its /proc/self/fd link (path NULL: not known); whether the
 * agent cannot change it (immutable.h, on the mount's flags, read once a
 * mount) and whether its mount is noexec (both false when the flags
 * cannot be read); a file of several links the rule refuses is immutable
 * still when all its links are on its read-only mount (linkwalk.h,
 * searched from the sandbox's root, the O_PATH fd root, once a file as it
 * is). 0, or -1 with errno when fd cannot be looked at. */
int execpath_file(struct execpath *ep, int root, int fd, const char *path, const dev_t *wdev,
		  size_t nwdev, struct stat *st, char **resolved, bool *immutable, bool *noexec);
