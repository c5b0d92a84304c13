/* exec_rules.c - hashes for `exec deny` (exec_rules.h): files' SHA-256s
 * and code hashes, and lists of hashes. */
#include "exec_rules.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/elfhash.h"
#include "../common/lines.h"

bool exec_hex_valid(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdefABCDEF") == 64;
}

int exec_hash_path(const char *path, unsigned long long max, char out[SHA256_HEX_LEN])
{
	char code[SHA256_HEX_LEN];
	return exec_hash_path_code(path, max, out, code);
}

int exec_hash_path_code(const char *path, unsigned long long max, char out[SHA256_HEX_LEN],
			char code[SHA256_HEX_LEN])
{
	code[0] = '\0';
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if ((unsigned long long)st.st_size > max) {
		errno = EFBIG;
		return -1;
	}
	if (sha256_fd_bounded(fd, max, NULL, NULL, out) < 0)
		return -1;
	const char *why;
	if (elfhash_fd(fd, (uint64_t)st.st_size, max, NULL, NULL, code, &why) < 0)
		code[0] = '\0'; /* no ELF, or one whose segments cannot be hashed */
	return 0;
}

/* One line of a hash list into w's strv; -1 (w->bad set) on a bad one. */
struct hash_walk {
	struct strv *out;
	unsigned long bad;
};

static int hash_line(const char *s, size_t n, unsigned long lineno, void *ctx)
{
	struct hash_walk *w = ctx;
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n || s[i] == '#')
		return 0;
	size_t len = 0;
	while (i + len < n && s[i + len] != ' ' && s[i + len] != '\t')
		len++;
	char hash[65];
	if (len != 64) {
		w->bad = lineno;
		return -1;
	}
	for (size_t k = 0; k < 64; k++)
		hash[k] = (char)tolower((unsigned char)s[i + k]);
	hash[64] = '\0';
	if (!exec_hex_valid(hash)) {
		w->bad = lineno;
		return -1;
	}
	if (!strv_contains(w->out, hash))
		strv_push(w->out, hash);
	return 0;
}

int exec_read_hashes(const char *path, struct strv *out, unsigned long *bad_line)
{
	*bad_line = 0;
	/* as the profile reader reads: a regular file, bounded, never a FIFO
	 * waited on or a device read for ever (hashes:/dev/zero) */
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(AT_FDCWD, path, 0, EXEC_HASHES_MAX, &len, NULL);
	if (!text)
		return -1;
	struct hash_walk w = { .out = out };
	if (lines_each(text, len, hash_line, &w) < 0) {
		*bad_line = w.bad;
		return -1;
	}
	return 0;
}
