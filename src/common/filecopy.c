/* filecopy.c - copies that keep holes (filecopy.h). */
#include "filecopy.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

enum { COPY_BUF = 1 << 17 };

/* len bytes of in at off into out at out_off, by reads and writes; 1 when
 * in ended first. */
static int copy_by_reads(int in, off_t off, int out, off_t out_off, off_t len, char **buf)
{
	if (!*buf)
		*buf = xmalloc(COPY_BUF);
	while (len > 0) {
		ssize_t n = pread(in, *buf, len < COPY_BUF ? (size_t)len : COPY_BUF, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 1;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = pwrite(out, *buf + w, (size_t)(n - w), out_off + w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return -1;
			w += k;
		}
		off += n;
		out_off += n;
		len -= n;
	}
	return 0;
}

/* One extent of data: copy_file_range, else reads and writes; 1 when in
 * ended first. */
static int copy_extent(int in, off_t off, int out, off_t out_off, off_t len, char **buf)
{
	while (len > 0) {
		loff_t io = off, oo = out_off;
		ssize_t n = copy_file_range(in, &io, out, &oo, (size_t)len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP ||
			      errno == ENOSYS))
			return copy_by_reads(in, off, out, out_off, len, buf);
		if (n < 0)
			return -1;
		if (n == 0)
			return 1;
		off += n;
		out_off += n;
		len -= n;
	}
	return 0;
}

int copy_sparse(int in, off_t in_off, off_t size, int out)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	if (fstat(in, &st) < 0)
		return -1;
	if (in_off + size > st.st_size) /* as far as in goes */
		size = st.st_size > in_off ? st.st_size - in_off : 0;
	off_t end = in_off + size, pos = in_off;
	while (pos < end) {
		off_t data = lseek(in, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* a hole to the end */
		off_t hole = end;
		if (data < 0) {
			data = pos; /* no SEEK_DATA here: all of it data */
		} else {
			if (data >= end)
				break;
			hole = lseek(in, data, SEEK_HOLE);
			if (hole < 0 || hole > end)
				hole = end;
		}
		int r = copy_extent(in, data, out, data - in_off, hole - data, &buf);
		if (r < 0)
			return -1;
		if (r > 0)
			return 0; /* in ended first: as far as it went */
		pos = hole;
	}
	return ftruncate(out, size);
}
