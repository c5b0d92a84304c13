/* fuzz_log.c - libFuzzer target for the audit log reader: the input is a
 * session log. It is verified from memory and through a file descriptor (the
 * line reader), and the two verdicts must agree; every line that parses as an
 * event is summarised (the summary must hold no control character) and
 * filtered. Linked with replay.c it is fuzz-log-replay, which replays the
 * seed corpus without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/audit/reader.h"
#include "replay.h"

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
