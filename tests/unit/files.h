/* files.h - helpers of the unit tests that work with files: a private
 * temporary directory (made at start, removed at the end), and reading or
 * writing a whole small file. */
#ifndef WARDEN_TESTS_UNIT_FILES_H
#define WARDEN_TESTS_UNIT_FILES_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "src/common/util.h"

static char tmpdir[PATH_MAX];

/* mkdtemp /tmp/PREFIX-XXXXXX into tmpdir; exits 2 when it cannot. */
static inline void tmpdir_make(const char *prefix)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/%s-XXXXXX", prefix);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(2);
	}
}

static inline void tmpdir_remove(void)
{
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	free(cmd);
}

/* The file's bytes (up to 1 MiB), NUL-terminated, malloc'd; NULL if it
 * cannot be opened. */
static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *buf = xmalloc(1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* Write the file whole (aborts on failure). */
static inline void spit(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "we");
	if (!f || fwrite(buf, 1, len, f) != len)
		abort();
	fclose(f);
}

#endif
