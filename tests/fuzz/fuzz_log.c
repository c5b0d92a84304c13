/* fuzz_log.c - libFuzzer target for the audit log reader: the input is a
 * session log. It is verified from memory and through a file descriptor (the
 * line reader), and the two verdicts must agree; every line that parses as an
 * event is summarised (the summary must hold no control character) and
 * filtered. Compiled with -DWARDEN_FUZZ_REPLAY it gets a main() that feeds
 * every file named on the command line (directories: every file in them) to
 * the same entry point, so the seed corpus replays without clang. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/audit/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct audit_chain a, b;
	int ra = audit_verify_buffer(buf, size, "s-1", &a);
	if (ra != 0 && (a.broken == 0 || a.why[0] == '\0'))
		abort();
	check_safe(a.why);

	/* The line reader over a file gives the same verdict. */
	int fd = memfd_create("fuzz-log", MFD_CLOEXEC);
	if (fd >= 0) {
		size_t off = 0;
		while (off < size) {
			ssize_t w = write(fd, buf + off, size - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		struct werr e;
		if (off == size && lseek(fd, 0, SEEK_SET) == 0) {
			int rb = audit_verify_fd(fd, "s-1", &b, &e);
			if (rb != ra || a.broken != b.broken || strcmp(a.why, b.why) != 0)
				abort();
		}
		close(fd);
	}

	struct audit_filter f = { .has_pid = true, .pid = 1, .decision = "deny", .has_since = true };
	strv_push(&f.events, "session");
	for (size_t i = 0; i < size;) {
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - buf) - i : size - i;
		char why[256];
		json_t *ev = audit_parse_line(buf + i, n, why, sizeof why);
		if (ev) {
			char *s = audit_event_summary(ev);
			check_safe(s);
			free(s);
			audit_filter_match(&f, ev);
			json_decref(ev);
		} else {
			check_safe(why);
		}
		i += n + 1;
	}
	audit_filter_free(&f);
	return 0;
}

#ifdef WARDEN_FUZZ_REPLAY
static int replay_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fuzz-log-replay: %s: %s\n", path, strerror(errno));
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
		if (got <= 0) {
			int err = errno;
			close(fd);
			if (got < 0) {
				fprintf(stderr, "fuzz-log-replay: %s: %s\n", path, strerror(err));
				free(buf);
				return -1;
			}
			break;
		}
		n += (size_t)got;
	}
	/* An exact-size copy, so ASan/valgrind catch reads past the input. */
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
	int count = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "fuzz-log-replay: %s: %s\n", argv[i], strerror(errno));
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
			fprintf(stderr, "fuzz-log-replay: %s: %s\n", argv[i], strerror(errno));
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
	printf("fuzz-log-replay: %d input(s), %d unreadable\n", count, failed);
	return failed || count == 0 ? 1 : 0;
}
#endif
