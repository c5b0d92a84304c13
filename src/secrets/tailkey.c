/* tailkey.c - reading and making the phantom tail key (tailkey.h). */
#include "tailkey.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"

char *tail_key_path(const char *home)
{
	_cleanup_free_ char *dir = xdg_warden_dir("XDG_DATA_HOME", home, ".local/share");
	return dir ? xasprintf("%s/phantom-key", dir) : NULL;
}

static int read_key(int fd, const char *path, unsigned char key[TAIL_KEY_LEN], struct werr *e)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return werr_errno(e, "%s", path);
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return werr_set(e, 0, "%s: not a regular file of yours; remove it and warden makes "
				"a new one", path);
	if (st.st_mode & 077)
		return werr_set(e, 0, "%s: others may read or write it (mode %04o); remove it and "
				"warden makes a new one", path, (unsigned)(st.st_mode & 07777));
	unsigned char buf[TAIL_KEY_LEN + 1];
	size_t got = 0;
	while (got < sizeof buf) {
		ssize_t r = read(fd, buf + got, sizeof buf - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return werr_errno(e, "reading %s", path);
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got != TAIL_KEY_LEN) {
		explicit_bzero(buf, sizeof buf);
		return werr_set(e, 0, "%s: %zu bytes, not %d; remove it and warden makes a new one",
				path, got, TAIL_KEY_LEN);
	}
	memcpy(key, buf, TAIL_KEY_LEN);
	explicit_bzero(buf, sizeof buf);
	return 0;
}

/* Make the key: written whole to a temporary file, then linked in place, so
 * that no reader ever sees a short one; EEXIST from link means another
 * session made it first. 1 made, 0 someone else did, -1 error. */
static int make_key(const char *path, struct werr *e)
{
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (mkdir_p(dir, 0700, NULL) < 0)
		return werr_errno(e, "making %s", dir);
	_cleanup_free_ char *tmp = xasprintf("%s.XXXXXX", path);
	_cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "making %s", path);
	unsigned char key[TAIL_KEY_LEN];
	int rc = -1;
	if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
		werr_errno(e, "getrandom");
	else if (fchmod(fd, 0600) < 0 || write(fd, key, sizeof key) != (ssize_t)sizeof key ||
		 fsync(fd) < 0)
		werr_errno(e, "writing %s", tmp);
	else if (link(tmp, path) == 0)
		rc = 1;
	else if (errno == EEXIST)
		rc = 0;
	else
		werr_errno(e, "making %s", path);
	explicit_bzero(key, sizeof key);
	unlink(tmp);
	return rc;
}

int tail_key_load(const char *path, unsigned char key[TAIL_KEY_LEN], struct werr *e)
{
	for (int tries = 0; tries < 2; tries++) {
		_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0)
			return read_key(fd, path, key, e);
		if (errno != ENOENT)
			return werr_errno(e, "%s", path);
		if (make_key(path, e) < 0)
			return -1;
	}
	return werr_set(e, 0, "%s: made, then gone", path);
}
