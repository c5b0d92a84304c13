/* test_sandbox_seccache.c - the compiled seccomp filter kept in warden's
 * cache directory (src/sandbox/seccache.c): what a warm cache gives is
 * byte for byte what libseccomp compiles, for every kind; each kind has a
 * file of its own; a file that is changed, cut short, of another kind,
 * writable by others, a symbolic link, or (as root) owned by someone else
 * is not taken, and the next compile replaces it; the files of other
 * builds are removed when there are more than 32 and a new one is written;
 * an unwritable cache is no error. */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/sandbox/seccache.h"
#include "check.h"

static char dir[] = "/tmp/test-seccache-XXXXXX";

static struct seccomp_kind kind_of(unsigned bits)
{
	return (struct seccomp_kind){ .files = bits & 1, .strict = bits & 2, .made = bits & 4,
				      .kernel = bits & 8 };
}

/* The one cache file (of kind k): its path, or NULL. */
static char *file_of(struct seccomp_kind k)
{
	unsigned bits = (unsigned)k.files | (unsigned)k.strict << 1 | (unsigned)k.made << 2 |
			(unsigned)k.kernel << 3;
	char *pat = xasprintf("%s/seccomp-*-%x", dir, bits);
	glob_t g;
	char *path = NULL;
	if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1)
		path = xstrdup(g.gl_pathv[0]);
	if (path || glob(pat, 0, NULL, &g) == 0)
		globfree(&g);
	free(pat);
	return path;
}

static size_t nfiles(void)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Compiled without a cache. */
static void *compiled(struct seccomp_kind k, size_t *len)
{
	struct werr e = { 0 };
	void *p = NULL;
	if (seccomp_prepare(k, NULL, &p, len, &e) < 0)
		fprintf(stderr, "seccomp_prepare: %s\n", e.msg);
	return p;
}

/* What the cache holds for k equals what compiling gives. */
static bool cache_holds(struct seccomp_kind k)
{
	size_t want_len, len;
	void *prog;
	_cleanup_free_ void *want = compiled(k, &want_len);
	if (!want || !seccache_get(dir, k, &prog, &len))
		return false;
	bool same = len == want_len && memcmp(prog, want, len * 8) == 0;
	free(prog);
	return same;
}

/* seccomp_prepare through the cache gives what compiling gives. */
static bool prepared_right(struct seccomp_kind k)
{
	struct werr e = { 0 };
	size_t want_len, len;
	_cleanup_free_ void *want = compiled(k, &want_len);
	_cleanup_free_ void *prog = NULL;
	return want && seccomp_prepare(k, dir, &prog, &len, &e) == 0 && len == want_len &&
	       memcmp(prog, want, len * 8) == 0;
}

static void write_bytes(const char *path, const void *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, buf, n) == (ssize_t)n);
	close(fd);
}

/* The file of k changed by how; then not taken, and replaced by the next
 * prepare, which gives the compiled filter. */
enum spoil { FLIP, CUT, OTHER_KIND, GROUP_WRITABLE, SYMLINK, FOREIGN };

static void spoiled(struct seccomp_kind k, enum spoil how)
{
	_cleanup_free_ char *path = file_of(k);
	CHECK(path && cache_holds(k));
	if (!path)
		return;
	struct stat st;
	CHECK(stat(path, &st) == 0);
	_cleanup_free_ unsigned char *buf = xmalloc((size_t)st.st_size);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	if (how == FLIP) {
		buf[st.st_size - 3] ^= 0x40; /* in the program */
		write_bytes(path, buf, (size_t)st.st_size);
	} else if (how == CUT) {
		CHECK(truncate(path, st.st_size - 8) == 0);
	} else if (how == OTHER_KIND) {
		struct seccomp_kind o = kind_of(15);
		_cleanup_free_ void *p = NULL;
		size_t n;
		struct werr e = { 0 };
		CHECK(seccomp_prepare(o, dir, &p, &n, &e) == 0);
		_cleanup_free_ char *opath = file_of(o);
		CHECK(opath && unlink(path) == 0 && link(opath, path) == 0);
	} else if (how == GROUP_WRITABLE) {
		CHECK(chmod(path, 0620) == 0);
	} else if (how == SYMLINK) {
		_cleanup_free_ char *aside = xasprintf("%s/aside", dir);
		CHECK(rename(path, aside) == 0 && symlink(aside, path) == 0);
	} else if (how == FOREIGN) {
		CHECK(chown(path, 12345, 12345) == 0);
	}
	size_t len;
	void *prog;
	CHECK(!seccache_get(dir, k, &prog, &len));
	CHECK(prepared_right(k));
	CHECK(cache_holds(k));
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	      (st.st_mode & 07777) == 0600);
	_cleanup_free_ char *aside = xasprintf("%s/aside", dir);
	unlink(aside);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	/* a cold cache: compiled and kept, one file a kind, each what
	 * compiling gives; warm: the same from the cache */
	for (unsigned b = 0; b < 16; b++) {
		CHECK(!seccache_get(dir, kind_of(b), &(void *){ 0 }, &(size_t){ 0 }));
		CHECK(prepared_right(kind_of(b)));
		CHECK(cache_holds(kind_of(b)));
		CHECK(prepared_right(kind_of(b)));
	}
	CHECK(nfiles() == 16);
	/* kinds with different rules, different filters */
	size_t l0, l1;
	_cleanup_free_ void *p0 = compiled(kind_of(0), &l0), *p1 = compiled(kind_of(1), &l1);
	CHECK(p0 && p1 && (l0 != l1 || memcmp(p0, p1, l0 * 8) != 0));
	/* a file not to trust: not taken, and replaced */
	spoiled(kind_of(1), FLIP);
	spoiled(kind_of(1), CUT);
	spoiled(kind_of(2), OTHER_KIND);
	spoiled(kind_of(3), GROUP_WRITABLE);
	spoiled(kind_of(4), SYMLINK);
	if (geteuid() == 0)
		spoiled(kind_of(5), FOREIGN);
	else
		printf("skipped: a file owned by another user (needs root)\n");
	/* other builds' files: a few kept (two builds used in turn keep
	 * theirs), more than 32 removed when one is written */
	_cleanup_free_ char *stale = xasprintf("%s/seccomp-00000000000000000000000000000000-0", dir);
	_cleanup_free_ char *f0 = file_of(kind_of(0));
	CHECK(f0 && unlink(f0) == 0);
	write_bytes(stale, "x", 1);
	CHECK(prepared_right(kind_of(0)));
	CHECK(access(stale, F_OK) == 0);
	CHECK(nfiles() == 17);
	for (unsigned i = 1; i <= 32; i++) {
		_cleanup_free_ char *other = xasprintf("%s/seccomp-%032x-0", dir, i);
		write_bytes(other, "x", 1);
	}
	CHECK(f0 && unlink(f0) == 0);
	CHECK(prepared_right(kind_of(0)));
	CHECK(access(stale, F_OK) != 0);
	CHECK(nfiles() == 16);
	/* a cache directory that cannot be made: compiled all the same */
	_cleanup_free_ char *blocked = xasprintf("%s/seccomp-00000000000000000000000000000000-0/x", dir);
	write_bytes(stale, "x", 1);
	struct werr e = { 0 };
	_cleanup_free_ void *p = NULL;
	size_t n;
	CHECK(seccomp_prepare(kind_of(0), blocked, &p, &n, &e) == 0 && n == l0 &&
	      memcmp(p, p0, n * 8) == 0);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	free(cmd);
	return check_status_counted("sandbox-seccache");
}
