/* blob.c - reading a blob back from the checkpoint store (store.h): its
 * range of a pack, or a loose blob looked at before it is opened (a FIFO,
 * a device or a symlink put in its place is refused, never opened or
 * waited on), opened without blocking, and its size the one the manifest
 * recorded; its content checked against its hash before it is trusted. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/filecopy.h"
#include "pack.h"
#include "store_int.h"

#define PACKED_MAX (1u << 20) /* a blob in a pack, at most (pack.c writes no larger) */

struct src {
	int fd;
	bool own;                 /* a loose blob's fd, closed with it */
	off_t off;
	unsigned long long size;
};

static void src_close(struct src *s)
{
	if (s->own)
		closep(&s->fd);
}

static int damaged(struct werr *e, const char *hash, const char *what)
{
	return werr_set(e, 0, "its stored content (%.16s) %s: the checkpoint store was changed or "
			"is damaged", hash, what);
}

static int open_loose(const struct store *st, const char *hash, unsigned long long size,
		      struct src *s, struct werr *e)
{
	char name[70];
	snprintf(name, sizeof name, "%.2s/%s", hash, hash + 2);
	struct stat a, b;
	if (fstatat(st->blobs_fd, name, &a, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? damaged(e, hash, "is missing")
				       : werr_errno(e, "its stored content (%.16s)", hash);
	if (!S_ISREG(a.st_mode))
		return damaged(e, hash, "is not a regular file");
	int fd = openat(st->blobs_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "its stored content (%.16s)", hash);
	if (fstat(fd, &b) < 0 || !S_ISREG(b.st_mode) || b.st_ino != a.st_ino || b.st_dev != a.st_dev) {
		close(fd);
		return damaged(e, hash, "is not a regular file");
	}
	if ((unsigned long long)b.st_size != size) {
		close(fd);
		char what[96];
		snprintf(what, sizeof what, "has %llu bytes where %llu were recorded",
			 (unsigned long long)b.st_size, size);
		return damaged(e, hash, what);
	}
	*s = (struct src){ .fd = fd, .own = true, .size = size };
	return 0;
}

/* The blob's source: its range of a pack, else its loose file. */
static int src_open(const struct store *st, const char *hash, unsigned long long size,
		    struct src *s, struct werr *e)
{
	*s = (struct src){ .fd = -1 };
	if (!store_hash_ok(hash))
		return werr_set(e, EINVAL, "'%.80s' is not a content hash", hash);
	struct pack_set *ps = store_packs(st);
	const struct pack_ref *r = pack_set_find(ps, hash);
	if (!r)
		return open_loose(st, hash, size, s, e);
	if (r->size != size || r->size > PACKED_MAX) {
		char what[96];
		snprintf(what, sizeof what, "has %u bytes in its pack where %llu were recorded",
			 (unsigned)r->size, size);
		return damaged(e, hash, what);
	}
	int fd = pack_set_fd(ps, st->packs_fd, r);
	if (fd < 0)
		return werr_errno(e, "its stored content (%.16s, in a pack)", hash);
	*s = (struct src){ .fd = fd, .off = (off_t)r->off, .size = size };
	return 0;
}

static int pread_exact(int fd, char *buf, size_t len, off_t off)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = pread(fd, buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO; /* shorter than its fstat or index said */
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

char *store_blob_read(const struct store *st, const char *hash, unsigned long long size,
		      struct werr *e)
{
	struct src s;
	if (src_open(st, hash, size, &s, e) < 0)
		return NULL;
	if (size > SIZE_MAX - 1) {
		src_close(&s);
		werr_set(e, EFBIG, "its stored content (%.16s) is too large to read", hash);
		return NULL;
	}
	char *buf = xmalloc((size_t)size + 1);
	int r = pread_exact(s.fd, buf, (size_t)size, s.off);
	int err = errno;
	src_close(&s);
	if (r < 0) {
		free(buf);
		werr_set(e, err, "reading its stored content (%.16s)", hash);
		return NULL;
	}
	buf[size] = '\0';
	char sum[SHA256_HEX_LEN];
	sha256_hex(buf, (size_t)size, sum);
	if (strcmp(sum, hash) != 0) {
		free(buf);
		damaged(e, hash, "does not match its hash");
		return NULL;
	}
	return buf;
}

int store_blob_verify(const struct store *st, const char *hash, unsigned long long size,
		      struct werr *e)
{
	struct src s;
	if (src_open(st, hash, size, &s, e) < 0)
		return -1;
	if (!s.own) { /* in a pack: small */
		src_close(&s);
		char *buf = store_blob_read(st, hash, size, e);
		free(buf);
		return buf ? 0 : -1;
	}
	char sum[SHA256_HEX_LEN];
	int r = sha256_fd_bounded(s.fd, size, NULL, NULL, sum);
	int err = errno;
	src_close(&s);
	if (r < 0)
		return err == EFBIG ? damaged(e, hash, "grew beyond its recorded size")
				    : werr_set(e, err, "reading its stored content (%.16s)", hash);
	if (strcmp(sum, hash) != 0)
		return damaged(e, hash, "does not match its hash");
	return 0;
}

int store_blob_copy(const struct store *st, const char *hash, unsigned long long size, int out,
		    struct werr *e)
{
	struct src s;
	if (src_open(st, hash, size, &s, e) < 0)
		return -1;
	int r = 0;
	if (!s.own || ioctl(out, FICLONE, s.fd) < 0)
		r = ftruncate(out, 0) < 0 || copy_sparse(s.fd, s.off, (off_t)size, out) < 0 ? -1 : 0;
	/* a stored content shorter than recorded (copy_sparse stops where its
	 * file ends): damaged, as a short read said before */
	struct stat os;
	if (r == 0 && (fstat(out, &os) < 0 || (unsigned long long)os.st_size != size)) {
		errno = EIO;
		r = -1;
	}
	int err = errno;
	src_close(&s);
	if (r < 0)
		return werr_set(e, err, "copying its stored content (%.16s)", hash);
	return 0;
}
