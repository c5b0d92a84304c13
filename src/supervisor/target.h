/* target.h - a path as a sandboxed process sees it, opened by the
 * supervisor: resolved inside the process's root (/proc/PID/root with
 * RESOLVE_IN_ROOT, so no symlink or ".." leads out of it), relative paths
 * from the process's cwd or from one of its directory fds. Used for what an
 * exec is about to run (notify.c) and for the socket a connect names
 * (unixconn.c); and the files mapped in a range of its memory, for the
 * exec rules in the kernel when an mprotect makes it executable. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/procfacts.h" /* target_pid_info, target_status */
#include "../common/util.h"

/* The process's cwd as the supervisor reads it ("" when unreadable). */
void target_cwd(pid_t pid, char *buf, size_t len);

/* path as the process gave it, made absolute (from its cwd) with ".", ".."
 * and empty components taken out, as text: what it names whatever the
 * symlinks on the way (malloc'd). NULL for a relative path when the cwd
 * has no name the supervisor can read (deeper than PATH_MAX). */
char *target_lexical_path(pid_t pid, const char *path);

/* Open path (oflags: O_RDONLY, O_PATH, ... with O_CLOEXEC) as process pid
 * would resolve it: relative to dirfd_arg when `at` (AT_EMPTY_PATH in
 * at_flags with an empty path: that fd itself), else to cwd. A relative
 * path from a directory whose name cannot be read ("" cwd) or that makes
 * the whole longer than PATH_MAX is opened from that directory itself,
 * with no symlink or ".." out of it on the way, else ENAMETOOLONG.
 * resolved gets the path of what was opened (from /proc/self/fd). -1 with
 * errno. */
int target_open(pid_t pid, int dirfd_arg, bool at, const char *path, int at_flags, int oflags,
		const char *cwd, char *resolved, size_t rlen);
/* The same inside rootfd, an O_PATH fd of the sandbox's root that the
 * caller holds (no process inside can change its root: chroot and
 * pivot_root are refused), saving its opening per call. */
int target_open_root(int rootfd, pid_t pid, int dirfd_arg, bool at, const char *path, int at_flags,
		     int oflags, const char *cwd, char *resolved, size_t rlen);

/* Does full (absolute and lexical, as the process sees it) name one of
 * the process's own fds, nothing after it: /dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, /proc/PID/fd/N with its own pid? Then the fd in *fd. */
bool target_own_fd(pid_t pid, const char *full, int *fd);

/* full (absolute and lexical, as process pid sees it) with the magic links
 * of /proc it starts with -- its own (/proc/self/cwd/..., /proc/self/root/...,
 * /proc/thread-self/..., /proc/PID/fd/N with its own pid, /dev/fd/N/...,
 * /dev/stdout) or another process's of the sandbox (/proc/ID/cwd/...) --
 * replaced by the path inside of what each names, when that path names
 * that very file inside: 1 with *out that path (lexical, malloc'd). 0 when
 * full starts with no such link; -1 when one names what has no such path
 * (a pipe, a deleted file, a file handed in from outside, a directory
 * deeper than PATH_MAX, a process gone). The kernel follows these links to
 * the file itself, and so do its walls: the path judges the call. */
int target_proc_resolve(pid_t pid, const char *full, char **out);

/* Does full (absolute and lexical) start with a magic link of /proc (any
 * process's cwd, root, exe or fd/N, /dev/fd/N, /dev/stdout), as text?
 * *beyond (may be NULL): a name follows the link (/proc/self/cwd/x). */
bool target_proc_magic(const char *full, bool *beyond);

/* Reading a process's memory (mem: its /proc/PID/mem). A NUL-terminated
 * string at addr, up to max-1 bytes: 0 when whole, 1 when cut at max, -1
 * when unreadable. */
int target_read_str(int mem, uint64_t addr, char *buf, size_t max);
/* The strings at a notification's arguments (its paths), each read once
 * from process pid by process_vm_readv (no descriptor to open and close:
 * the caller checks the notification still valid after), up to three. */
struct target_args {
	pid_t pid;
	const unsigned long long *args; /* the notification's (__u64) */
	int n;
	int idx[3], rc[3];
	char buf[3][PATH_MAX];
};
void target_args_init(struct target_args *t, pid_t pid, const unsigned long long *args);
/* The string at argument arg in *s (valid while t is), and what
 * target_read_str said of it: 0 whole, 1 cut, -1 unreadable (or a fourth
 * argument asked for). */
int target_arg_str(struct target_args *t, int arg, const char **s);
/* The last stretch of memory read whole (8 KiB from the page where a
 * string began, less at a hole): an exec's path, its argv pointers and its strings
 * usually lie together, and each pread of /proc/PID/mem is a page walk.
 * pid: with mem -1, the memory is read from this process with
 * process_vm_readv instead (no descriptor to open and close; errno EPERM
 * or ENOMEM when warden may not read it, EFAULT where nothing is mapped). */
struct target_chunk {
	pid_t pid;
	uint64_t base;
	size_t len;
	char buf[8192];
};
/* target_read_str through the chunk (refilled from addr when addr is not
 * in it). */
int target_read_str_chunk(int mem, struct target_chunk *c, uint64_t addr, char *buf, size_t max);
/* What target_read_argv reads of an exec's argv, at most. */
#define TARGET_ARGV_MAX 128        /* arguments */
#define TARGET_ARG_MAX_LEN 4096    /* bytes of each, its NUL included */
#define TARGET_ARGV_TOTAL 32768    /* bytes in all (read up to the argument that passes it) */
/* The NULL-terminated array of strings at addr (an exec's argv), bounded:
 * at most 128 strings, 4096 bytes each, 32 KiB in all; *truncated set when
 * cut. Then a string may be cut only when it is the last one read or has
 * TARGET_ARG_MAX_LEN - 1 bytes. c: a chunk to read through, or NULL. */
void target_read_argv(int mem, struct target_chunk *c, uint64_t addr, struct strv *v,
		      bool *truncated);

/* The files mapped in [lo, lo + len) of process pid (its /proc/PID/maps),
 * opened O_PATH through map_files into fds (at most max). How many. */
size_t target_mapped_files(pid_t pid, uint64_t lo, uint64_t len, int *fds, size_t max);
