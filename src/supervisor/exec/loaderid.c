/* loaderid.c - the dynamic loader: the system's known by its content, and
 * the one an ELF file names (loaderid.h). */
#include "loaderid.h"

#include <elf.h>
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

bool loader_id_same(struct loader_id *l, int root, const struct stat *st)
{
	if (l->state == 0)
		look(l, root);
	return l->state > 0 && st->st_dev == l->st.st_dev && st->st_ino == l->st.st_ino;
}

int elf_interp_read(int fd, char *out, size_t cap)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
		return -1;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 1170)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) !=
		    (ssize_t)sizeof ph)
			return -1;
		if (ph.p_type != PT_INTERP)
			continue;
		/* the kernel's own bounds: 2..PATH_MAX bytes, NUL-terminated */
		if (ph.p_filesz < 2 || ph.p_filesz > cap ||
		    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz ||
		    out[ph.p_filesz - 1] != '\0')
			return -1;
		return 1;
	}
	return 0;
}
