/* write.c - writing a profile that `warden import -o` or `warden init` made:
 * never over an existing file unless asked (--force), never through a
 * symlink, and whole or not at all (a new file renamed into place). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

int profile_write(const char *path, const char *text, bool force, struct werr *e)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return werr_set(e, 0, "%s is %s; not written over, --force or not", path,
					S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
		if (!force)
			return werr_set(e, EEXIST, "%s exists; --force writes over it", path);
	} else if (errno != ENOENT) {
		return werr_errno(e, "cannot look at %s", path);
	}
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return werr_errno(e, "cannot create %s (a file beside it first)", path);
	if (write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
		werr_errno(e, "cannot write %s", tmp);
		unlink(tmp);
		return -1;
	}
	/* without --force, link() refuses a file that appeared meanwhile */
	int r = force ? rename(tmp, path) : link(tmp, path);
	int err = errno;
	unlink(tmp);
	if (r < 0)
		return werr_set(e, err, "cannot write %s", path);
	return 0;
}
