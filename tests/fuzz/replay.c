/* replay.c - the main() of every fuzz-*-replay executable: feeds each file
 * named on the command line (directories: every file in them, by name,
 * dot files skipped) to the target's LLVMFuzzerTestOneInput, so a seed
 * corpus replays as an ordinary test with any compiler. Exits 1 when a
 * path cannot be read or no input was found. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/util.h"
#include "replay.h"

/* Targets without one-time setup leave it undefined. */
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static const char *prog;

/* One input, as an exact-size copy so ASan and valgrind see reads past it. */
static int replay_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n == cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			close(fd);
			free(buf);
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	uint8_t *input = xmalloc(n);
	memcpy(input, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(input, n);
	free(input);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	prog = argc > 0 ? argv[0] : "fuzz-replay";
	if (strrchr(prog, '/'))
		prog = strrchr(prog, '/') + 1;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);

	int count = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, argv[i], strerror(errno));
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed += replay_file(argv[i]) < 0;
			count++;
			continue;
		}
		struct dirent **ents;
		int n = scandir(argv[i], &ents, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, argv[i], strerror(errno));
			failed++;
			continue;
		}
		for (int k = 0; k < n; k++) {
			if (ents[k]->d_name[0] != '.') {
				char *path = xasprintf("%s/%s", argv[i], ents[k]->d_name);
				failed += replay_file(path) < 0;
				count++;
				free(path);
			}
			free(ents[k]);
		}
		free(ents);
	}
	printf("%s: %d input(s), %d unreadable\n", prog, count, failed);
	return failed || count == 0 ? 1 : 0;
}
