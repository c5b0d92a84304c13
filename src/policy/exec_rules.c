/* exec_rules.c - hashes for `exec deny` (exec_rules.h). */
#include "exec_rules.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool exec_hex_valid(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdefABCDEF") == 64;
}

int exec_hash_path(const char *path, unsigned long long max, char out[SHA256_HEX_LEN])
{
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
	return sha256_fd_bounded(fd, max, NULL, NULL, out);
}

int exec_read_hashes(const char *path, struct strv *out, unsigned long *bad_line)
{
	*bad_line = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[4096];
	unsigned long n = 0;
	int r = 0;
	while (fgets(line, sizeof line, f)) {
		n++;
		char *hash = line + strspn(line, " \t");
		if (*hash == '#' || *hash == '\n' || *hash == '\0')
			continue;
		size_t len = strcspn(hash, " \t\n");
		char save = hash[len];
		hash[len] = '\0';
		if (!exec_hex_valid(hash) || (save != '\0' && save != '\n' && save != ' ' && save != '\t')) {
			*bad_line = n;
			r = -1;
			break;
		}
		for (char *c = hash; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (!strv_contains(out, hash))
			strv_push(out, hash);
	}
	if (r == 0 && ferror(f)) {
		r = -1;
		errno = EIO;
	}
	fclose(f);
	return r;
}
