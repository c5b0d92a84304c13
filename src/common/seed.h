/* seed.h - files written beneath a directory before anything else runs
 * there: a generic list the host side makes (the decoys of canary
 * credentials: detect/canary.c, canary_seeds) and sandbox init writes into
 * the home, knowing nothing of what they are. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

#define SEED_MAX 8

struct seed_file {
	const char *path;  /* relative: ".aws/credentials"; NULL: none (a hole in the list) */
	mode_t mode;
	const char *bytes; /* NUL-terminated contents */
};

/* Write each of v[0..n) beneath dirfd, its directories made (0700) on the
 * way, none followed if a symlink, the file new (O_EXCL). Returns the
 * bitmask of the files placed (bit i: v[i]); one that cannot be placed is
 * removed again, and the first failure's errno goes to *err (0: none). */
unsigned seed_place(const struct seed_file *v, size_t n, int dirfd, int *err);
