/* seed.c - files written beneath a directory before anything else runs
 * there (seed.h). */
#include "seed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The directory of rel beneath dirfd, each component made (0700) when
 * missing, none a symlink; -1 with errno. */
static int parent_dir(int dirfd, const char *rel, const char **name)
{
	int fd = dup(dirfd);
	if (fd < 0)
		return -1;
	const char *p = rel;
	for (const char *slash; (slash = strchr(p, '/')); p = slash + 1) {
		char comp[256];
		snprintf(comp, sizeof comp, "%.*s", (int)(slash - p), p);
		if (mkdirat(fd, comp, 0700) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		int next = open_beneath(fd, comp, O_PATH | O_DIRECTORY, 0);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	*name = p;
	return fd;
}

static int place_one(const struct seed_file *f, int dirfd)
{
	const char *name;
	_cleanup_close_ int dir = parent_dir(dirfd, f->path, &name);
	if (dir < 0)
		return -1;
	_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC, f->mode);
	if (fd < 0)
		return -1;
	if (write_all(fd, f->bytes, strlen(f->bytes)) < 0 || fchmod(fd, f->mode) < 0) {
		int err = errno;
		unlinkat(dir, name, 0);
		errno = err;
		return -1;
	}
	return 0;
}

unsigned seed_place(const struct seed_file *v, size_t n, int dirfd, int *err)
{
	unsigned placed = 0;
	*err = 0;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].path)
			continue;
		if (place_one(&v[i], dirfd) == 0)
			placed |= 1u << i;
		else if (!*err)
			*err = errno ? errno : EIO;
	}
	return placed;
}
