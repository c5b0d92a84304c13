/* hash.c - SHA-256 through libcrypto's direct digest functions. The EVP
 * interface would load and index every provider algorithm first, a cost
 * paid on every `warden run`; the direct functions compute the same digest
 * without it. */
#define OPENSSL_API_COMPAT 10101
#define OPENSSL_SUPPRESS_DEPRECATED
#include "hash.h"

#include <openssl/sha.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define HASH_BUF 65536 /* bytes read at a time */

void hex_encode(const unsigned char *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;
	if (!SHA256_Init(&c) || !SHA256_Update(&c, buf, len) || !SHA256_Final(md, &c))
		abort();
	hex_encode(md, sizeof md, out);
}

bool sha256_hex_ok(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

int sha256_fd(int fd, char out[SHA256_HEX_LEN])
{
	return sha256_fd_bounded(fd, ~0ULL, NULL, NULL, out);
}

static bool past(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

int sha256_fd_bounded(int fd, unsigned long long max, const struct timespec *deadline,
		      const volatile int *stop, char out[SHA256_HEX_LEN])
{
	/* the buffer on the heap, not the stack: a hash job's thread would
	 * touch 16 fresh pages of its stack for it, where the heap's are reused */
	_cleanup_free_ unsigned char *buf = xmalloc(HASH_BUF);
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;
	off_t off = 0;
	if (!SHA256_Init(&c))
		abort();
	for (;;) {
		ssize_t n = pread(fd, buf, HASH_BUF, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		SHA256_Update(&c, buf, (size_t)n);
		off += n;
		if ((unsigned long long)off > max) {
			errno = EFBIG;
			return -1;
		}
		if (stop && *stop) {
			errno = ECANCELED;
			return -1;
		}
		if (deadline && past(deadline)) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	SHA256_Final(md, &c);
	hex_encode(md, sizeof md, out);
	return 0;
}
