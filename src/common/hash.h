/* hash.h - SHA-256 as lowercase hex, the one digest the tree uses (audit
 * chain, policy digest, later executable hashes). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define SHA256_HEX_LEN 65 /* 64 digits and the NUL */

void sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN]);

/* The n bytes at p as 2n lower-case hex digits and a NUL into out (a
 * digest's, an object id's). */
void hex_encode(const unsigned char *p, size_t n, char *out);

/* s is a digest as sha256_hex writes it: 64 lower-case hex digits. */
bool sha256_hex_ok(const char *s);

/* SHA-256 of what is readable from fd, from offset 0; -1 on a read error. */
int sha256_fd(int fd, char out[SHA256_HEX_LEN]);

/* The same within bounds: -1 with errno EFBIG past max bytes, ETIMEDOUT
 * when the CLOCK_MONOTONIC time deadline passes between two reads,
 * ECANCELED when *stop becomes true (read between two reads, may be NULL),
 * or the read's own errno. */
int sha256_fd_bounded(int fd, unsigned long long max, const struct timespec *deadline,
		      const volatile int *stop, char out[SHA256_HEX_LEN]);
