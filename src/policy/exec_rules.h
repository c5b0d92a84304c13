/* exec_rules.h - the content side of `exec deny TARGET` (parser.c): a
 * file's SHA-256 taken when the profile is read, a SHA-256 written out, a
 * file of them. The supervisor refuses an exec whose program (or the
 * program the loader is given, or a script's interpreter) has one of these
 * hashes, whatever its name or path (notify.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../common/hash.h"
#include "../common/util.h"

/* s is 64 hex digits (either case). */
bool exec_hex_valid(const char *s);
/* The SHA-256 of the regular file at path into out (lower-case hex),
 * reading at most max bytes; -1 with errno (EINVAL: not a regular file,
 * EFBIG: larger than max). */
int exec_hash_path(const char *path, unsigned long long max, char out[SHA256_HEX_LEN]);
/* The same file's SHA-256 into out and, when it is an ELF file, its code
 * hash (src/common/elfhash.h) into code (else code is ""). */
int exec_hash_path_code(const char *path, unsigned long long max, char out[SHA256_HEX_LEN],
			char code[SHA256_HEX_LEN]);
/* The hashes listed in the file at path, one per line as sha256sum writes
 * them ("HEX  NAME", or HEX alone; # comments and blank lines skipped),
 * appended to out lower-cased. The file is read as a profile is: a regular
 * file of at most EXEC_HASHES_MAX bytes, opened without blocking. -1 with
 * *bad_line set (0: the file could not be read, errno set: EINVAL not a
 * regular file, EFBIG too large). */
#define EXEC_HASHES_MAX (64u << 20)
int exec_read_hashes(const char *path, struct strv *out, unsigned long *bad_line);
