/* etc.c - the sandbox's curated /etc: which host entries it holds, the files
 * warden writes itself (passwd, group, hostname, hosts), and a per-user cache
 * of the copies so a session binds one directory instead of copying a few
 * dozen files.
 *
 * The cache lives in warden's cache directory ($XDG_CACHE_HOME/warden),
 * which, like the audit log directory, no sandbox ever reaches (a workspace
 * overlapping it and profile paths inside it are refused, and it is masked
 * when a profile path covers it): an agent cannot plant anything there for a
 * later session. A version is named after the SHA-256 of what lstat says of every
 * host entry (type, inode, size, mtimes, ctime), so any change on the host
 * makes a new version; each is built in a temporary directory and renamed into
 * place whole. Sessions hold a shared flock on the version they use; a new
 * version removes the old ones nobody holds. Directories (ssl/certs,
 * alternatives, ...) and large files are not copied: init binds them live on
 * top of the copy. Any failure falls back to copying into the session's own
 * root, as without a cache. */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/hash.h"

/* The read-only subset of /etc: loader, certificates, time zone, name
 * service, alternatives and what common toolchains read. Never shadow,
 * gshadow, sudoers, ssh/, the ssl private keys or the machine identity. */
static const char *const etc_entries[] = {
	"ld.so.cache", "ld.so.conf", "ssl/certs", "ssl/openssl.cnf", "ca-certificates.conf",
	"localtime", "timezone", "nsswitch.conf", "host.conf", "gai.conf", "protocols",
	"services", "rpc", "networks", "alternatives", "os-release", "debian_version",
	"lsb-release", "mime.types", "magic", "magic.mime", "inputrc", "bash.bashrc", "profile",
	"shells", "terminfo", "locale.alias", "locale.conf", "mtab", "perl", "fonts", "mailcap",
	"manpath.config", "bash_completion", "bash_completion.d", "pkgconfig", "gprofng.rc",
	"chromium",
};

/* Directories copied, not bound, so that warden can add a file of its own:
 * Debian's chromium launcher sources every /etc/chromium.d/ file (it resets
 * CHROMIUM_FLAGS from the environment), and Chromium's own sandbox wants the
 * user namespaces warden refuses inside (doc/agents.md, browsers). Only the
 * directory's small regular files are copied; the extra file is written when
 * the host has the directory (a Chromium installed). */
static const struct {
	const char *dir, *name, *text;
} etc_copied_dirs[] = {
	{ "chromium.d", "zz-warden",
	  "# Written by warden: Chromium's sandbox needs user namespaces, which warden\n"
	  "# refuses inside; warden's walls stand in for it. And warden's HTTP proxy\n"
	  "# for every scheme (Chromium does not read ALL_PROXY's socks5h://).\n"
	  "export CHROMIUM_FLAGS=\"$CHROMIUM_FLAGS --no-sandbox --disable-component-update"
	  "${HTTPS_PROXY:+ --proxy-server=$HTTPS_PROXY}\"\n"
	  "# Chromium's own requests to Google (network time, optimization hints,\n"
	  "# pings, reliability reports) off: warden would refuse them at every start.\n"
	  "export CHROMIUM_FLAGS=\"$CHROMIUM_FLAGS --disable-background-networking --no-pings"
	  " --disable-domain-reliability --disable-features=NetworkTimeServiceQuerying,"
	  "OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading\"\n" },
};

/* Written by warden, the same in every session. */
static const struct {
	const char *name, *text;
} etc_synthesized[] = {
	{ "passwd", "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		    AGENT_USER ":x:1000:1000:warden agent:" AGENT_HOME ":/bin/sh\n"
		    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" },
	{ "group", "root:x:0:\n" AGENT_USER ":x:1000:\nnogroup:x:65534:\n" },
	{ "hostname", SANDBOX_HOSTNAME "\n" },
	{ "hosts", "127.0.0.1\tlocalhost " SANDBOX_HOSTNAME "\n::1\tlocalhost ip6-localhost\n" },
};

enum etc_view etc_view_of(const char *path)
{
	if (strcmp(path, "/etc") == 0)
		return ETC_HOST;
	if (strncmp(path, "/etc/", 5) != 0)
		return ETC_NONE;
	const char *rel = path + 5;
	for (size_t i = 0; i < ARRAY_LEN(etc_synthesized); i++)
		if (path_is_within(rel, etc_synthesized[i].name))
			return ETC_OWN;
	for (size_t i = 0; i < ARRAY_LEN(etc_entries); i++)
		if (path_overlaps(rel, etc_entries[i]))
			return ETC_HOST;
	for (size_t i = 0; i < ARRAY_LEN(etc_copied_dirs); i++)
		if (path_is_within(rel, etc_copied_dirs[i].dir))
			return ETC_HOST;
	return ETC_NONE;
}

#define COPY_MAX (1 << 20) /* larger regular files are bound, not copied */
#define CACHE_FORMAT "warden-etc-cache 1"

/* Bound live rather than copied: directories and large files. */
static bool bound_live(const struct stat *st)
{
	return S_ISDIR(st->st_mode) || (S_ISREG(st->st_mode) && st->st_size > COPY_MAX);
}

static int make_parents_at(int dirfd, const char *rel)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", rel);
	for (char *p = buf; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdirat(dirfd, buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int copy_file_at(const char *src, off_t size, int dirfd, const char *rel)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -1;
	_cleanup_close_ int out = openat(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
					 0644);
	if (out < 0)
		return -1;
	while (size > 0) {
		ssize_t n = sendfile(out, in, NULL, (size_t)size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? (errno = EIO, -1) : -1;
		size -= n;
	}
	return 0;
}

/* srcroot/etc/dir's small regular files copied to dir (made), and warden's
 * own file `name` with text; nothing when the host has no such directory. */
static int copy_dir_at(const char *srcroot, int dirfd, const char *dir, const char *name,
		       const char *text, struct werr *e)
{
	char src[512];
	snprintf(src, sizeof src, "%s/etc/%s", srcroot, dir);
	_cleanup_dir_ DIR *d = opendir(src);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : werr_errno(e, "/etc/%s", dir);
	if (mkdirat(dirfd, dir, 0755) < 0)
		return werr_errno(e, "/etc: creating %s", dir);
	for (struct dirent *de; (de = readdir(d));) {
		char from[1024], to[512];
		struct stat st;
		snprintf(from, sizeof from, "%s/%s", src, de->d_name);
		snprintf(to, sizeof to, "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.' || strcmp(de->d_name, name) == 0 || lstat(from, &st) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_size > COPY_MAX)
			continue;
		if (copy_file_at(from, st.st_size, dirfd, to) < 0)
			return werr_errno(e, "/etc: mirroring %s", to);
	}
	char own[512];
	snprintf(own, sizeof own, "%s/%s", dir, name);
	_cleanup_close_ int fd = openat(dirfd, own, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
					O_NOFOLLOW, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return werr_errno(e, "/etc: writing %s", own);
	return 0;
}

int etc_populate(const char *srcroot, int dirfd, struct strv *binds, struct werr *e)
{
	for (size_t i = 0; i < ARRAY_LEN(etc_entries); i++) {
		const char *rel = etc_entries[i];
		char src[512];
		snprintf(src, sizeof src, "%s/etc/%s", srcroot, rel);
		struct stat st;
		if (lstat(src, &st) < 0) {
			if (errno == ENOENT)
				continue;
			return werr_errno(e, "/etc/%s", rel);
		}
		if (make_parents_at(dirfd, rel) < 0)
			return werr_errno(e, "/etc: creating the parents of %s", rel);
		int r = 0;
		if (S_ISLNK(st.st_mode)) {
			r = copy_symlink(src, dirfd, rel);
		} else if (S_ISDIR(st.st_mode)) {
			r = mkdirat(dirfd, rel, 0755); /* a mount point */
		} else if (!S_ISREG(st.st_mode)) {
			continue; /* a device or socket in /etc is nothing to mirror */
		} else if (bound_live(&st)) {
			int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			r = fd < 0 ? -1 : close(fd);
		} else {
			r = copy_file_at(src, st.st_size, dirfd, rel);
		}
		if (r < 0)
			return werr_errno(e, "/etc: mirroring %s", rel);
		if (bound_live(&st))
			strv_push_owned(binds, xasprintf("/etc/%s", rel));
	}
	for (size_t i = 0; i < ARRAY_LEN(etc_copied_dirs); i++)
		if (copy_dir_at(srcroot, dirfd, etc_copied_dirs[i].dir, etc_copied_dirs[i].name,
				etc_copied_dirs[i].text, e) < 0)
			return -1;
	for (size_t i = 0; i < ARRAY_LEN(etc_synthesized); i++) {
		_cleanup_close_ int fd = openat(dirfd, etc_synthesized[i].name,
						O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 || write_all(fd, etc_synthesized[i].text, strlen(etc_synthesized[i].text)) < 0)
			return werr_errno(e, "/etc: writing %s", etc_synthesized[i].name);
	}
	return 0;
}

/* ---- the cache ----------------------------------------------------------- */

/* One line of the manifest for path: what lstat says of it. */
static void manifest_line(char **m, size_t *cap, size_t *len, const char *path)
{
	struct stat st;
	if (*cap - *len < 1024)
		*m = xrealloc(*m, *cap *= 2);
	if (lstat(path, &st) < 0) {
		*len += (size_t)snprintf(*m + *len, *cap - *len, "%s missing %d\n", path, errno);
		return;
	}
	*len += (size_t)snprintf(*m + *len, *cap - *len, "%s %o %llu %llu %lld %lld.%09ld %lld.%09ld\n",
				 path, st.st_mode, (unsigned long long)st.st_dev,
				 (unsigned long long)st.st_ino, (long long)st.st_size,
				 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
				 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* A copied directory in the manifest: itself, each entry, warden's text. */
static void manifest_dir(char **m, size_t *cap, size_t *len, const char *dir, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "/etc/%s", dir);
	manifest_line(m, cap, len, path);
	_cleanup_dir_ DIR *d = opendir(path);
	for (struct dirent *de; d && (de = readdir(d));) {
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		if (de->d_name[0] != '.')
			manifest_line(m, cap, len, p);
	}
	char sum[SHA256_HEX_LEN];
	sha256_hex(text, strlen(text), sum);
	if (*cap - *len < 1024)
		*m = xrealloc(*m, *cap *= 2);
	*len += (size_t)snprintf(*m + *len, *cap - *len, "%s own %s\n", path, sum);
}

/* The version's name: the SHA-256 of a manifest of the host's entries (and
 * of what warden writes). The live binds on the way. */
static void version_of(char name[64], struct strv *binds)
{
	size_t cap = 8192, len = 0;
	_cleanup_free_ char *m = xmalloc(cap);
	len += (size_t)snprintf(m, cap, "%s\n", CACHE_FORMAT);
	for (size_t i = 0; i < ARRAY_LEN(etc_synthesized); i++) {
		char sum[SHA256_HEX_LEN];
		sha256_hex(etc_synthesized[i].text, strlen(etc_synthesized[i].text), sum);
		len += (size_t)snprintf(m + len, cap - len, "%s %s\n", etc_synthesized[i].name, sum);
	}
	for (size_t i = 0; i < ARRAY_LEN(etc_entries); i++) {
		char src[512];
		snprintf(src, sizeof src, "/etc/%s", etc_entries[i]);
		struct stat st;
		if (cap - len < 1024)
			m = xrealloc(m, cap *= 2);
		if (lstat(src, &st) < 0) {
			len += (size_t)snprintf(m + len, cap - len, "%s missing %d\n", src, errno);
			continue;
		}
		len += (size_t)snprintf(m + len, cap - len, "%s %o %llu %llu %lld %lld.%09ld %lld.%09ld\n",
					src, st.st_mode, (unsigned long long)st.st_dev,
					(unsigned long long)st.st_ino, (long long)st.st_size,
					(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
					(long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
		if (bound_live(&st))
			strv_push(binds, src);
	}
	for (size_t i = 0; i < ARRAY_LEN(etc_copied_dirs); i++)
		manifest_dir(&m, &cap, &len, etc_copied_dirs[i].dir, etc_copied_dirs[i].text);
	char hex[SHA256_HEX_LEN];
	sha256_hex(m, len, hex);
	snprintf(name, 64, "etc-%.32s", hex);
}

/* Versions other than `keep` that no session holds. */
static void remove_stale(int cachefd, const char *keep)
{
	_cleanup_dir_ DIR *d = dir_open_at(cachefd, ".", 0);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "etc-", 4) != 0 || !strcmp(de->d_name, keep))
			continue;
		_cleanup_close_ int v = openat(cachefd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					       O_CLOEXEC);
		if (v >= 0 && flock(v, LOCK_EX | LOCK_NB) == 0)
			remove_tree_at(cachefd, de->d_name);
	}
}

/* Open a complete version and take its shared lock; -1 when there is none
 * (or it is being removed). */
static int hold(int cachefd, const char *name)
{
	int fd = openat(cachefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 || fstat(fd, &st) < 0 || st.st_nlink == 0 ||
	    faccessat(fd, "passwd", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int build(int cachefd, const char *name, struct werr *e)
{
	char tmp[96];
	snprintf(tmp, sizeof tmp, "%s.tmp-%d", name, (int)getpid());
	if (mkdirat(cachefd, tmp, 0755) < 0)
		return werr_errno(e, "/etc cache: creating %s", tmp);
	_cleanup_close_ int fd = openat(cachefd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* held while building: remove_stale of another session leaves it */
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		werr_errno(e, "/etc cache: opening %s", tmp);
		remove_tree_at(cachefd, tmp);
		return -1;
	}
	struct strv unused = { 0 };
	int r = etc_populate("", fd, &unused, e);
	strv_free(&unused);
	if (r == 0 && renameat(cachefd, tmp, cachefd, name) < 0 && errno != EEXIST && errno != ENOTEMPTY)
		r = werr_errno(e, "/etc cache: renaming %s", tmp);
	if (r < 0 || faccessat(cachefd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		remove_tree_at(cachefd, tmp); /* failed, or another session was first */
	return r;
}

char *etc_cache_dir(const char *home)
{
	return xdg_warden_dir("XDG_CACHE_HOME", home, ".cache");
}

int etc_cache_prepare(const char *cache, char **dir, struct strv *binds, int *lockfd)
{
	*dir = NULL;
	*lockfd = -1;
	if (mkdir_p(cache, 0700, NULL) < 0)
		return -1;
	_cleanup_close_ int cachefd = open(cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cachefd < 0)
		return -1;
	char name[64];
	struct strv live = { 0 };
	version_of(name, &live);
	int fd = hold(cachefd, name);
	if (fd < 0) {
		struct werr e = { 0 };
		if (build(cachefd, name, &e) < 0 || (fd = hold(cachefd, name)) < 0) {
			strv_free(&live);
			return -1;
		}
		remove_stale(cachefd, name);
	}
	*dir = xasprintf("%s/%s", cache, name);
	*binds = live;
	*lockfd = fd;
	return 0;
}
