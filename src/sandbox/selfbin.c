/* selfbin.c - a copy of warden's own binary in the user's cache, for inside
 * the sandbox (ssh's ProxyCommand, `warden check`'s probe runner), and
 * beside it the small hook client warden carries (warden-hook, the agents'
 * tool-call hook: src/hookbin).
 *
 * Why a cached copy: the sandbox must not show the binary's host path in
 * its mount table (a bind of /proc/self/exe would), and copying 6 MB onto
 * the root tmpfs costs milliseconds every session. So the binary is copied
 * once per build into the cache, and init stacks a read-only overlay on it
 * whose options name only a staging link (mounts.c), as for /etc. Keyed by
 * what the binary is (device, inode, size, modification time); a new build
 * replaces the copies of older ones. */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#define PREFIX "self-"

/* Copy in to dir/warden (mode 0555), and write the hook client to
 * dir/warden-hook. 0, or -1. */
static int copy_into(int in, const struct stat *st, const char *dir)
{
	_cleanup_free_ char *dst = xasprintf("%s/warden", dir);
	_cleanup_close_ int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0555);
	if (out < 0)
		return -1;
	off_t off = 0;
	while (off < st->st_size) {
		ssize_t n = sendfile(out, in, &off, (size_t)(st->st_size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
	}
	_cleanup_free_ char *hdst = xasprintf("%s/warden-hook", dir);
	_cleanup_close_ int hout = open(hdst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0555);
	return hout >= 0 && write_all(hout, hookbin_data, hookbin_size) == 0 ? 0 : -1;
}

/* Remove the copies of other builds (a session still running one keeps
 * its overlay's files until it ends). */
static void prune(const char *cache, const char *keep)
{
	DIR *d = opendir(cache);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) != 0 || strcmp(de->d_name, keep) == 0)
			continue;
		_cleanup_free_ char *dir = xasprintf("%s/%s", cache, de->d_name);
		_cleanup_free_ char *file = xasprintf("%s/warden", dir);
		_cleanup_free_ char *hook = xasprintf("%s/warden-hook", dir);
		unlink(file);
		unlink(hook);
		rmdir(dir);
	}
	closedir(d);
}

char *selfbin_prepare(const char *cache)
{
	_cleanup_close_ int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	char name[128];
	snprintf(name, sizeof name, PREFIX "%llx-%llx-%llx-%llx.%09ld", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
		 (unsigned long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	char *dir = xasprintf("%s/%s", cache, name);
	_cleanup_free_ char *file = xasprintf("%s/warden", dir);
	_cleanup_free_ char *hook = xasprintf("%s/warden-hook", dir);
	struct stat have, hhave;
	if (lstat(file, &have) == 0 && S_ISREG(have.st_mode) && have.st_size == st.st_size &&
	    have.st_uid == geteuid() && (have.st_mode & 07777) == 0555 && lstat(hook, &hhave) == 0 &&
	    S_ISREG(hhave.st_mode) && (size_t)hhave.st_size == hookbin_size && hhave.st_uid == geteuid() &&
	    (hhave.st_mode & 07777) == 0555)
		return dir;
	/* made aside, then renamed into place: a session never sees half a copy */
	_cleanup_free_ char *tmp = xasprintf("%s/.%s.XXXXXX", cache, name);
	if (!mkdtemp(tmp)) {
		free(dir);
		return NULL;
	}
	_cleanup_free_ char *tmpfile = xasprintf("%s/warden", tmp);
	_cleanup_free_ char *tmphook = xasprintf("%s/warden-hook", tmp);
	if (copy_into(in, &st, tmp) < 0 || chmod(tmp, 0755) < 0 || rename(tmp, dir) < 0) {
		unlink(tmpfile);
		unlink(tmphook);
		rmdir(tmp);
		/* another session made it meanwhile: take that one */
		if (lstat(file, &have) == 0 && S_ISREG(have.st_mode) && have.st_size == st.st_size &&
		    lstat(hook, &hhave) == 0 && S_ISREG(hhave.st_mode) &&
		    (size_t)hhave.st_size == hookbin_size)
			return dir;
		free(dir);
		return NULL;
	}
	prune(cache, name);
	return dir;
}
