/* loaderid.c - the system's dynamic loader known by its content
 * (loaderid.h). */
#include "loaderid.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The loader this architecture's programs name, relative to the root. */
#if defined(__x86_64__)
#define LOADER_PATH "lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define LOADER_PATH "lib/ld-linux-aarch64.so.1"
#else
#define LOADER_PATH NULL
#endif

#define LOADER_MAX (64ULL << 20) /* bytes hashed at most: a loader is some 200 KiB */

/* The loader inside the sandbox's root, opened for reading: absolute links
 * resolved in that root, never through /proc's magic links. */
static void look(struct loader_id *l, int root)
{
	l->state = -1;
	if (!LOADER_PATH || root < 0)
		return;
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, root, LOADER_PATH, &how, sizeof how);
	if (fd < 0)
		return;
	if (fstat(fd, &l->st) < 0 || !S_ISREG(l->st.st_mode)) {
		close(fd);
		return;
	}
	l->fd = fd;
	l->state = 1;
}

bool loader_id_is(struct loader_id *l, int root, const struct stat *st, const char *hex)
{
	if (l->state == 0)
		look(l, root);
	if (l->state < 0 || st->st_size != l->st.st_size || !hex || !hex[0])
		return false;
	if (!l->hashed) {
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += 2;
		if (sha256_fd_bounded(l->fd, LOADER_MAX, &deadline, NULL, l->hex) < 0) {
			l->state = -1;
			return false;
		}
		l->hashed = true;
		close(l->fd);
		l->fd = -1;
	}
	return strcmp(l->hex, hex) == 0;
}

void loader_id_free(struct loader_id *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
