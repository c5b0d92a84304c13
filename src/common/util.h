/* util.h - small shared helpers: cleanup attributes, allocation that aborts
 * on exhaustion, growable string vectors, path helpers, a
 * safe openat2 beneath a directory, spawn attributes for outside commands. */
#pragma once
#include <dirent.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_strv_ _cleanup_(strv_freep)
#define _cleanup_json_ _cleanup_(json_decrefp) /* jansson's own, from <jansson.h> */
#define _cleanup_dir_ _cleanup_(closedirp)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void freep(void *p);
/* close *fd when open, and leave -1 there: safe to call again on the same
 * variable (an explicit close, then its cleanup) */
void closep(int *fd);
/* closedir *d when open, and leave NULL there (for _cleanup_dir_) */
void closedirp(DIR **d);

/* Take ownership out of a cleanup variable: return its value and leave NULL
 * (or -1) behind, so the cleanup attribute no longer releases it. */
static inline void *steal_ptr(void *pp)
{
	void **p = pp, *v = *p;
	*p = NULL;
	return v;
}
static inline int steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A NULL-terminated, growable vector of owned strings. */
struct strv {
	char **v;
	size_t n, cap;
};
void strv_push(struct strv *s, const char *str);       /* copies str */
void strv_push_owned(struct strv *s, char *str);        /* takes str */
bool strv_contains(const struct strv *s, const char *str);
void strv_remove(struct strv *s, const char *str);      /* every equal entry */
void strv_free(struct strv *s);
void strv_freep(struct strv *s);                        /* for _cleanup_strv_ */

/* true when path is dir or below it ("/a/b" in "/a", not "/ab"); every
 * absolute path is within "/". Both must be absolute and normalised (no
 * trailing slash, no "." or ".."); a relative path is never within "/". */
bool path_is_within(const char *path, const char *dir);
/* true when a is within b or b within a (the same rules): one of them
 * holds or is the other. */
bool path_overlaps(const char *a, const char *b);

/* The last component of p: what follows its last '/', or p itself. */
const char *path_base(const char *p);

/* true when the relative path is a .git or lies inside one (a component
 * named .git). */
bool path_in_git(const char *rel);

/* true when the string has a "." or ".." component or an empty one ("a//b"). */
bool path_has_dot_components(const char *path);

/* The absolute path written plainly, as text alone (nothing looked up):
 * empty and "." components dropped, and with dotdot each ".." taking the
 * component before it away (at "/", nothing) where without it ".." stays;
 * no trailing slash but for "/" itself. What the kernel would reach when
 * no component before a ".." is a symlink. malloc'd. */
char *path_lexical(const char *path, bool dotdot);

/* An absolute path with every symlink of its longest existing ancestor
 * resolved (realpath) and the part that does not exist yet kept as written:
 * what a path that may not exist yet will be once it does, for comparing it
 * with resolved paths. path must be absolute without "." or ".." components;
 * NULL otherwise or when the ancestor cannot be resolved (malloc'd). */
char *path_resolve_existing(const char *path);

/* snprintf for a message that may be cut short: what fits of it, always
 * NUL-terminated (len > 0), without the compiler's warning of the cut. */
__attribute__((format(printf, 3, 4)))
void snprintf_cut(char *buf, size_t len, const char *fmt, ...);

/* The octal escapes the kernel writes in /proc/PID/mountinfo's paths
 * (\040 a space, \011 a tab, \012 a newline, \134 a backslash) decoded in
 * place: the path as the file system has it. */
void unescape_octal(char *s);

/* What fd holds from where it is to its end, malloc'd and NUL-terminated
 * after its *len bytes; hint: the size expected (a file's st_size; 0 when
 * unknown), max: at most so many bytes. NULL with errno (EFBIG: more than
 * max). */
char *read_fd_all(int fd, size_t hint, size_t max, size_t *len);

/* A whole file read to its end (a /proc file reports no size), malloc'd
 * and NUL-terminated; NULL with errno. */
char *read_text_file(const char *path);

/* One read of a small file (a /proc or /sys value, a bait file) into buf,
 * NUL-terminated: at most len - 1 bytes (len > 0). Opened O_RDONLY |
 * O_CLOEXEC and flags (O_NONBLOCK: a FIFO is not waited on). The bytes
 * read, or -1 with errno. */
ssize_t read_small_file(const char *path, char *buf, size_t len, int flags);

/* The whole of dirfd/name, a regular file opened without blocking (a FIFO
 * is refused, not waited on) with flags added (O_NOFOLLOW: never through a
 * symlink), at most max bytes: malloc'd, NUL-terminated after its *len
 * bytes. *st (when not NULL) is the file's stat for the caller's own checks
 * (owner, mode), st_mode 0 when it could not be opened. NULL with errno:
 * EINVAL not a regular file, EFBIG more than max bytes. */
char *read_regular_at(int dirfd, const char *name, int flags, size_t max, size_t *len,
		      struct stat *st);

/* A regular file's whole content, at most max bytes (opened without
 * blocking, so a FIFO is refused, not waited on): 0 with *text (malloc'd,
 * NUL-terminated after its *len bytes) and *len; -1 with the caller's what
 * saying why ("cannot open", "not a regular file", "file too large (max N
 * MiB)", "cannot read") and errno set (0 for the two that are not a call's
 * failure). */
#define READ_WHY_MAX 64
int read_regular_file(const char *path, size_t max, char **text, size_t *len,
		      char what[READ_WHY_MAX]);
/* The same, path relative to dirfd and opened with flags added (O_NOFOLLOW:
 * never through a symlink). */
int read_regular_file_at(int dirfd, const char *path, int flags, size_t max, char **text,
			 size_t *len, char what[READ_WHY_MAX]);

/* The invoking user's home: $HOME when it is absolute, else the passwd
 * entry's; NULL when neither is. */
const char *user_home(void);

/* warden's directory under an XDG base: "$VAR/warden" when the variable is
 * an absolute path, else "HOME/home_rel/warden"; NULL when neither is. */
char *xdg_warden_dir(const char *var, const char *home, const char *home_rel);

/* mkdir -p: every missing component is made with mode. *created (may be
 * NULL) tells whether the last one was. -1 with errno. */
int mkdir_p(const char *path, mode_t mode, bool *created);

/* Remove the entry name of the directory parent and, when it is a
 * directory, everything under it, depth first, never following a symlink
 * (directories the owner cannot read or search are made so first). A
 * directory more than 64 levels down is moved up into the tree's top and
 * removed from there: any depth costs 64 open directories at most. 0, or
 * -1 with errno when something could not be removed. */
int remove_tree_at(int parent, const char *name);

/* A directory stream of path under dirfd (openat with O_RDONLY |
 * O_DIRECTORY | O_CLOEXEC and flags, such as O_NOFOLLOW), which owns its
 * own descriptor: closedir (or _cleanup_dir_) closes it. path "." reads
 * the open directory dirfd from its start, dirfd staying the caller's.
 * NULL with errno, nothing left open. */
DIR *dir_open_at(int dirfd, const char *path, int flags);

/* openat2 of rel beneath dirfd with no symlink (nor magic link) on the
 * way and none at the end; O_CLOEXEC added. A rel of PATH_MAX or more
 * (what the kernel refuses in one call) is opened a run of whole
 * components at a time, each beneath the last. -1 with errno. */
int open_beneath(int dirfd, const char *rel, int flags, mode_t mode);

/* text written as dirfd/name through a new file (beneath dirfd, mode 0600)
 * renamed into place: 0, or -1 with errno. */
int replace_beneath(int dirfd, const char *name, const char *text);
/* The same with len bytes of data (which may hold NULs). */
int replace_beneath_n(int dirfd, const char *name, const void *data, size_t len);

/* A command warden runs outside the sandbox, spawned fresh: no signal
 * blocked, every signal's action the default, plus flags
 * (POSIX_SPAWN_SETSID, POSIX_SPAWN_SETPGROUP with pgroup 0, ...), and the
 * user's CPUs (src/common/cpupin.h). argv[0] looked up in PATH when
 * search (posix_spawnp), else a path. 0 with *pid, or the error number. */
int spawn_fresh(pid_t *pid, bool search, const posix_spawn_file_actions_t *fa, short flags,
		char *const argv[], char *const envp[]);

/* Recreate the symlink src at (dirfd, dst), same target; -1 with errno. */
int copy_symlink(const char *src, int dirfd, const char *dst);

/* The value of a hexadecimal digit (either case), or -1. */
static inline int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The value of c as a digit of the base64 alphabet alpha (its 64
 * characters: RFC 4648's standard or URL-safe one), or -1. */
static inline int base64_digit(const char *alpha, char c)
{
	const char *at = c ? memchr(alpha, c, 64) : NULL;
	return at ? (int)(at - alpha) : -1;
}

/* Write all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);
/* Write a whole file (O_WRONLY|O_CLOEXEC, no O_CREAT) e.g. /proc files. */
int write_file(const char *path, const char *text);
/* This boot's id (/proc/sys/kernel/random/boot_id) into out, without its
 * newline; false when it cannot be read. */
bool kernel_boot_id(char *out, size_t len);

/* Offset of the first byte of s[0..n) that is not part of valid UTF-8, or n. */
size_t utf8_invalid_at(const unsigned char *s, size_t n);
