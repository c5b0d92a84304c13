/* util.c - implementations of the small helpers in util.h. */
#include "util.h"
#include "cpupin.h"
#include "shown.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

void strv_push_owned(struct strv *s, char *str)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strv_push(struct strv *s, const char *str) { strv_push_owned(s, xstrdup(str)); }

bool strv_contains(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return true;
	return false;
}

void strv_remove(struct strv *s, const char *str)
{
	size_t j = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->v[i], str) == 0)
			free(s->v[i]);
		else
			s->v[j++] = s->v[i];
	}
	s->n = j;
	if (s->v)
		s->v[j] = NULL;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void strv_freep(struct strv *s) { strv_free(s); }

const char *path_base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

bool path_is_within(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool path_overlaps(const char *a, const char *b)
{
	return path_is_within(a, b) || path_is_within(b, a);
}

bool path_in_git(const char *rel)
{
	size_t n = strlen(rel);
	return strcmp(rel, ".git") == 0 || strncmp(rel, ".git/", 5) == 0 || strstr(rel, "/.git/") ||
	       (n >= 5 && strcmp(rel + n - 5, "/.git") == 0);
}

/* The next component of a path at *p (slashes before it passed over): its
 * start, *len its length, *p past it; NULL at the end. */
static const char *next_component(const char **p, size_t *len)
{
	while (**p == '/')
		(*p)++;
	if (!**p)
		return NULL;
	const char *c = *p;
	*p = strchrnul(c, '/');
	*len = (size_t)(*p - c);
	return c;
}

bool path_has_dot_components(const char *path)
{
	const char *p = path, *c;
	size_t len;
	while ((c = next_component(&p, &len)))
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return true;
	return strstr(path, "//") != NULL;
}

char *path_lexical(const char *path, bool dotdot)
{
	size_t n = strlen(path);
	char *out = xmalloc(n + 2);
	size_t o = 0, len;
	const char *p = path, *c;
	while ((c = next_component(&p, &len))) {
		if (len == 1 && c[0] == '.') {
			/* nothing */
		} else if (dotdot && len == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* and its slash */
		} else {
			out[o++] = '/';
			memcpy(out + o, c, len);
			o += len;
		}
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

char *path_resolve_existing(const char *path)
{
	if (path[0] != '/' || path_has_dot_components(path + 1))
		return NULL;
	_cleanup_free_ char *head = xstrdup(path);
	size_t len = strlen(head);
	while (len > 1 && head[len - 1] == '/')
		head[--len] = '\0';
	/* Walk up until an ancestor exists; the rest is appended as written. */
	for (;;) {
		char buf[PATH_MAX];
		if (realpath(head, buf)) {
			const char *rest = path + strlen(head);
			while (*rest == '/')
				rest++;
			if (!*rest)
				return xstrdup(buf);
			return xasprintf("%s%s%s", buf, strcmp(buf, "/") == 0 ? "" : "/", rest);
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return NULL;
		char *slash = strrchr(head, '/');
		if (slash == head) {
			head[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = write_all(fd, text, strlen(text));
	int saved = errno;
	close(fd);
	errno = saved;
	return r;
}

bool kernel_boot_id(char *out, size_t len)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, out, len - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return true;
}

const char *user_home(void)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		return h;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

char *xdg_warden_dir(const char *var, const char *home, const char *home_rel)
{
	const char *x = getenv(var);
	const char *base = x && x[0] == '/' ? x : home && home[0] == '/' ? home : NULL;
	if (!base)
		return NULL;
	size_t n = strlen(base);
	while (n > 1 && base[n - 1] == '/')
		n--;
	if (n == 1)
		n = 0; /* "/" */
	return base == x ? xasprintf("%.*s/warden", (int)n, base)
			 : xasprintf("%.*s/%s/warden", (int)n, base, home_rel);
}

int copy_symlink(const char *src, int dirfd, const char *dst)
{
	char target[4096];
	ssize_t n = readlink(src, target, sizeof target - 1);
	if (n < 0)
		return -1;
	target[n] = '\0';
	return symlinkat(target, dirfd, dst);
}

/* mkdir of buf, its missing parents made first: looked for from the end,
 * where they usually are (a parent that exists costs one failed mkdir, not
 * one for each component from the root). -1 with errno (EEXIST when buf
 * itself is there); buf is changed on the way and restored. */
static int mkdir_back(char *buf, mode_t mode)
{
	if (mkdir(buf, mode) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return errno = ENOENT, -1;
	*slash = '\0';
	int r = mkdir_back(buf, mode);
	if (r < 0 && errno == EEXIST)
		r = 0;
	*slash = '/';
	return r < 0 ? -1 : mkdir(buf, mode);
}

int mkdir_p(const char *path, mode_t mode, bool *created)
{
	char buf[4096];
	if (created)
		*created = false;
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return errno = ENAMETOOLONG, -1;
	if (mkdir_back(buf, mode) < 0)
		return errno == EEXIST ? 0 : -1;
	if (created)
		*created = true;
	return 0;
}

/* Past this depth a directory is moved up into the top of the tree being
 * removed rather than entered, so that a tree nested any deeper costs at
 * most this many open directories and stack frames (an agent can nest
 * one past RLIMIT_NOFILE, or past the stack). */
#define RM_DEPTH_MAX 64

struct rm_walk {
	int top;             /* the tree's top directory, -1 until opened */
	unsigned long moved; /* directories moved up into it so far */
};

static int rm_at(struct rm_walk *w, int parent, const char *name, unsigned depth)
{
	struct stat st;
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if ((st.st_mode & 0700) != 0700 && fchmodat(parent, name, (st.st_mode & 07777) | 0700, 0) < 0)
		return -1;
	if (depth >= RM_DEPTH_MAX && w->top >= 0) {
		char up[64];
		snprintf(up, sizeof up, ".warden-rm.%d.%lu", (int)getpid(), ++w->moved);
		if (renameat2(parent, name, w->top, up, RENAME_NOREPLACE) == 0)
			return 0; /* the top's next pass removes it; else entered here */
	}
	int r = 0, saved = 0;
	/* not opened: unlinkat below says why it is not removed */
	_cleanup_dir_ DIR *d = dir_open_at(parent, name, O_NOFOLLOW);
	bool top = w->top < 0 && d;
	if (top)
		w->top = dirfd(d);
	unsigned long before;
	do { /* the top again while directories were moved up into it */
		before = w->moved;
		if (d)
			rewinddir(d);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (rm_at(w, dirfd(d), de->d_name, depth + 1) < 0 && !saved) {
				saved = errno;
				r = -1;
			}
		}
	} while (top && w->moved != before);
	if (top)
		w->top = -1;
	closedirp(&d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
		if (!saved)
			saved = errno;
		r = -1;
	}
	errno = saved;
	return r;
}

int remove_tree_at(int parent, const char *name)
{
	struct rm_walk w = { .top = -1 };
	return rm_at(&w, parent, name, 0);
}

void snprintf_cut(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void unescape_octal(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

char *read_fd_all(int fd, size_t hint, size_t max, size_t *len)
{
	/* a buffer of the size expected and two (its end seen in the second
	 * read), grown by doubling */
	size_t cap = (hint ? hint : 4094) + 2, n = 0;
	_cleanup_free_ char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 == cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return NULL;
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max) {
			errno = EFBIG;
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return steal_ptr(&buf);
}

char *read_text_file(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len;
	return fd < 0 ? NULL : read_fd_all(fd, 0, SIZE_MAX, &len);
}

DIR *dir_open_at(int dirfd, const char *path, int flags)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d)
		closep(&fd);
	return d;
}

static int openat2_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
}

int open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	size_t len = strlen(rel);
	if (len < PATH_MAX)
		return openat2_beneath(dirfd, rel, flags, mode);
	/* Longer than the kernel takes in one call (a tree the agent nested
	 * that deep): whole components at a time, each step beneath the
	 * directory the last one opened, so the end is beneath dirfd too. */
	_cleanup_close_ int cur = -1;
	char step[PATH_MAX];
	while (len >= PATH_MAX) {
		size_t cut = PATH_MAX - 1;
		while (cut > 0 && rel[cut] != '/')
			cut--;
		if (cut == 0) {
			errno = ENAMETOOLONG; /* no component boundary in reach */
			return -1;
		}
		memcpy(step, rel, cut);
		step[cut] = '\0';
		int next = openat2_beneath(cur >= 0 ? cur : dirfd, step, O_PATH | O_DIRECTORY, 0);
		if (next < 0)
			return -1;
		closep(&cur);
		cur = next;
		while (rel[cut] == '/')
			cut++;
		rel += cut;
		len -= cut;
	}
	return openat2_beneath(cur, rel, flags, mode);
}

int replace_beneath(int dirfd, const char *name, const char *text)
{
	return replace_beneath_n(dirfd, name, text, strlen(text));
}

int replace_beneath_n(int dirfd, const char *name, const void *data, size_t len)
{
	char tmp[128];
	if (snprintf(tmp, sizeof tmp, ".%s.warden-%d", name, (int)getpid()) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlinkat(dirfd, tmp, 0);
	_cleanup_close_ int out = open_beneath(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (out < 0 || write_all(out, data, len) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		int err = errno;
		unlinkat(dirfd, tmp, 0);
		errno = err;
		return -1;
	}
	return 0;
}

int spawn_fresh(pid_t *pid, bool search, const posix_spawn_file_actions_t *fa, short flags,
		char *const argv[], char *const envp[])
{
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, (short)(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	int err = search ? posix_spawnp(pid, argv[0], fa, &at, argv, envp)
			 : posix_spawn(pid, argv[0], fa, &at, argv, envp);
	posix_spawnattr_destroy(&at);
	if (!err)
		cpupin_release(*pid); /* at once, as it starts */
	return err;
}

/* Offset of the first byte that is not part of valid UTF-8, or n. */
size_t utf8_invalid_at(const unsigned char *s, size_t n)
{
	unsigned cp;
	for (size_t i = 0, k; i < n; i += k)
		if (s[i] < 0x80) /* ASCII, the bulk of what is checked, without the call */
			k = 1;
		else if (!(k = utf8_seq(s + i, n - i, &cp)))
			return i;
	return n;
}

ssize_t read_small_file(const char *path, char *buf, size_t len, int flags)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int read_regular_file(const char *path, size_t max, char **text, size_t *len,
		      char what[READ_WHY_MAX])
{
	return read_regular_file_at(AT_FDCWD, path, 0, max, text, len, what);
}

char *read_regular_at(int dirfd, const char *name, int flags, size_t max, size_t *len,
		      struct stat *st)
{
	struct stat own;
	if (!st)
		st = &own;
	st->st_mode = 0;
	_cleanup_close_ int fd =
		openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
	if (fd < 0)
		return NULL;
	if (fstat(fd, st) < 0) {
		st->st_mode = 0;
		return NULL;
	}
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	if ((unsigned long long)st->st_size > max) {
		errno = EFBIG;
		return NULL;
	}
	return read_fd_all(fd, (size_t)st->st_size, max, len);
}

int read_regular_file_at(int dirfd, const char *path, int flags, size_t max, char **text,
			 size_t *len, char what[READ_WHY_MAX])
{
	struct stat st;
	*text = read_regular_at(dirfd, path, flags, max, len, &st);
	if (*text)
		return 0;
	if (st.st_mode == 0) {
		snprintf(what, READ_WHY_MAX, "cannot open");
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(what, READ_WHY_MAX, "not a regular file");
		errno = 0;
	} else if (errno == EFBIG) {
		snprintf(what, READ_WHY_MAX, "file too large (max %zu MiB)", max >> 20);
		errno = 0;
	} else {
		snprintf(what, READ_WHY_MAX, "cannot read");
	}
	return -1;
}
