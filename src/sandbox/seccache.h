/* seccache.h - the compiled seccomp filter kept in warden's cache directory
 * and reused, so that a session does not run libseccomp's compiler again
 * for a filter it already has.
 *
 * A filter is a function of its kind (struct seccomp_kind: the only way
 * the policy reaches it), of warden's build (its rules and the libseccomp
 * linked into it: the ELF build-id), and of the kernel it was made on
 * (release, version, machine). All of these make its key; the file carries
 * the key and a SHA-256 of its content, and is taken only when it is a
 * regular file of the user's own, written by no one else, whose key and
 * checksum match. Anything else is a miss: the caller compiles, and puts. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

/* The filter of kind k from cachedir: true with *prog (malloc'd) and *len
 * instructions, or false (no cache, no such file, or one not trusted). */
bool seccache_get(const char *cachedir, struct seccomp_kind k, void **prog, size_t *len);

/* prog (len instructions) kept in cachedir for kind k, in place of a
 * previous one; the files of other builds or kernels removed once there
 * are more than a few dozen. Failing to write is not an error: the next
 * session compiles again. */
void seccache_put(const char *cachedir, struct seccomp_kind k, const void *prog, size_t len);
