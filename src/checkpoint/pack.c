/* pack.c - packs of small blobs: loading their indexes, and writing one
 * (pack.h). */
#include "pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/sbuf.h"
#include "../common/util.h"

#define WBUF_MAX (1u << 20)
#define INDEX_LINE_MAX 100   /* 64 + 1 + 20 + 1 + 10 + 1, with room */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool pack_hash_bin(const char *hex, unsigned char out[32])
{
	for (int i = 0; i < 32; i++) {
		int a = hexval(hex[2 * i]), b = a < 0 ? -1 : hexval(hex[2 * i + 1]);
		if (b < 0)
			return false;
		out[i] = (unsigned char)(a << 4 | b);
	}
	return hex[64] == '\0' || hex[64] == ' ';
}

void pack_hash_hex(const unsigned char h[32], char out[SHA256_HEX_LEN])
{
	hex_encode(h, 32, out);
}

static int cmp_ref(const void *a, const void *b)
{
	return memcmp(((const struct pack_ref *)a)->h, ((const struct pack_ref *)b)->h, 32);
}

static int pread_full(int fd, void *buf, size_t len, off_t off)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

/* One index line "HASH OFFSET SIZE" (NUL-terminated), checked against
 * the data region [PACK_MAGIC_LEN, end). */
static bool parse_line(const char *l, unsigned long long end, struct pack_ref *r)
{
	if (!pack_hash_bin(l, r->h) || l[64] != ' ')
		return false;
	char *q;
	errno = 0;
	unsigned long long off = strtoull(l + 65, &q, 10);
	if (errno || q == l + 65 || *q != ' ' || q[1] < '0' || q[1] > '9')
		return false;
	const char *s = q + 1;
	unsigned long long size = strtoull(s, &q, 10);
	if (errno || q == s || *q || size > UINT32_MAX || off < PACK_MAGIC_LEN || off > end ||
	    size > end - off)
		return false;
	r->off = off;
	r->size = (uint32_t)size;
	return true;
}

bool pack_trailer_parse(const char *tr, unsigned long long fsize, unsigned long long *ioff,
			unsigned long long *count)
{
	char t[PACK_TRAILER_LEN + 1];
	memcpy(t, tr, PACK_TRAILER_LEN);
	t[PACK_TRAILER_LEN] = '\0';
	int used = 0;
	if (fsize < PACK_MAGIC_LEN + PACK_TRAILER_LEN || strncmp(t, "idx ", 4) != 0 ||
	    t[24] != ' ' || t[37] != '\n' || strspn(t + 4, "0123456789") != 20 ||
	    strspn(t + 25, "0123456789") != 12 ||
	    sscanf(t, "idx %20llu %12llu\n%n", ioff, count, &used) != 2 || used != PACK_TRAILER_LEN)
		return false;
	unsigned long long iend = fsize - PACK_TRAILER_LEN;
	return *ioff >= PACK_MAGIC_LEN && *ioff <= iend && iend - *ioff <= *count * INDEX_LINE_MAX &&
	       iend - *ioff <= (1ULL << 31);
}

struct pack_ref *pack_index_parse(const char *name, char *idx, size_t ilen,
				  unsigned long long ioff, unsigned long long count, uint32_t pack)
{
	char sum[SHA256_HEX_LEN];
	sha256_hex(idx, ilen, sum);
	if (strcmp(sum, name) != 0 || count > ilen / 66)
		return NULL;
	struct pack_ref *v = xcalloc(count + 1, sizeof *v);
	size_t n = 0;
	for (char *l = idx, *nl; n < count && (nl = memchr(l, '\n', ilen - (size_t)(l - idx)));
	     l = nl + 1, n++) {
		*nl = '\0';
		if (!parse_line(l, ioff, &v[n]) || (n && memcmp(v[n - 1].h, v[n].h, 32) >= 0))
			break;
		v[n].pack = pack;
	}
	/* every line read, and nothing after the last */
	if (n != count || (count && idx[ilen - 1] != '\0') || (!count && ilen)) {
		free(v);
		return NULL;
	}
	return v;
}

/* The index of one pack, its name checked; its refs appended to ps. */
static bool load_one(int packs_fd, const char *fname, struct pack_set *ps)
{
	char name[SHA256_HEX_LEN];
	unsigned char bin[32];
	if (strlen(fname) != 69 || strcmp(fname + 64, ".pack") != 0)
		return false;
	memcpy(name, fname, 64);
	name[64] = '\0';
	if (!pack_hash_bin(name, bin))
		return false;
	_cleanup_close_ int fd = openat(packs_fd, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					O_CLOEXEC);
	struct stat s;
	char magic[PACK_MAGIC_LEN], tr[PACK_TRAILER_LEN];
	unsigned long long ioff, count;
	if (fd < 0 || fstat(fd, &s) < 0 || !S_ISREG(s.st_mode) ||
	    (unsigned long long)s.st_size < PACK_MAGIC_LEN + PACK_TRAILER_LEN ||
	    pread_full(fd, magic, sizeof magic, 0) < 0 || memcmp(magic, PACK_MAGIC, sizeof magic) ||
	    pread_full(fd, tr, PACK_TRAILER_LEN, s.st_size - PACK_TRAILER_LEN) < 0 ||
	    !pack_trailer_parse(tr, (unsigned long long)s.st_size, &ioff, &count))
		return false;
	size_t ilen = (size_t)((unsigned long long)s.st_size - PACK_TRAILER_LEN - ioff);
	_cleanup_free_ char *idx = xmalloc(ilen + 1);
	if (pread_full(fd, idx, ilen, (off_t)ioff) < 0)
		return false;
	idx[ilen] = '\0';
	struct pack_ref *v = pack_index_parse(name, idx, ilen, ioff, count, (uint32_t)ps->npacks);
	if (!v)
		return false;
	ps->packs = xrealloc(ps->packs, (ps->npacks + 1) * sizeof *ps->packs);
	ps->packs[ps->npacks] = (struct pack_file){ .fd = -1 };
	memcpy(ps->packs[ps->npacks++].name, name, SHA256_HEX_LEN);
	ps->v = xrealloc(ps->v, (ps->n + count + 1) * sizeof *ps->v);
	memcpy(ps->v + ps->n, v, count * sizeof *v);
	ps->n += count;
	free(v);
	return true;
}

void pack_set_load(int packs_fd, struct pack_set *ps)
{
	*ps = (struct pack_set){ .loaded = true };
	_cleanup_dir_ DIR *d = dir_open_at(packs_fd, ".", 0);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			load_one(packs_fd, de->d_name, ps);
	if (ps->n > 1)
		qsort(ps->v, ps->n, sizeof *ps->v, cmp_ref);
}

const struct pack_ref *pack_set_find(const struct pack_set *ps, const char *h)
{
	struct pack_ref key;
	if (!ps->n || !pack_hash_bin(h, key.h))
		return NULL;
	return bsearch(&key, ps->v, ps->n, sizeof *ps->v, cmp_ref);
}

int pack_set_fd(struct pack_set *ps, int packs_fd, const struct pack_ref *r)
{
	struct pack_file *p = &ps->packs[r->pack];
	if (p->fd >= 0)
		return p->fd;
	char fname[80];
	snprintf(fname, sizeof fname, "%s.pack", p->name);
	int fd = openat(packs_fd, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat s;
	if (fd >= 0 && (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	p->fd = fd;
	return fd;
}

void pack_set_free(struct pack_set *ps)
{
	for (size_t i = 0; i < ps->npacks; i++)
		closep(&ps->packs[i].fd);
	free(ps->packs);
	free(ps->v);
	*ps = (struct pack_set){ 0 };
}

/* ---- writing ------------------------------------------------------------ */

static size_t slot_of(const unsigned char h[32], size_t nslots)
{
	size_t x;
	memcpy(&x, h, sizeof x);
	return x & (nslots - 1);
}

/* The slot holding h, or the empty one where it would go (value 0: empty;
 * else the index in v plus one). */
static size_t *slot_find(const struct pack_writer *w, const unsigned char h[32])
{
	for (size_t i = slot_of(h, w->nslots);; i = (i + 1) & (w->nslots - 1))
		if (!w->slots[i] || memcmp(w->v[w->slots[i] - 1].h, h, 32) == 0)
			return &w->slots[i];
}

static void slots_grow(struct pack_writer *w)
{
	free(w->slots);
	w->nslots = w->nslots ? w->nslots * 2 : 1024;
	w->slots = xcalloc(w->nslots, sizeof *w->slots);
	for (size_t k = 0; k < w->n; k++)
		*slot_find(w, w->v[k].h) = k + 1;
}

bool pack_writer_has(const struct pack_writer *w, const char *h)
{
	unsigned char bin[32];
	return w->n && pack_hash_bin(h, bin) && *slot_find(w, bin) != 0;
}

static int flush(struct pack_writer *w)
{
	if (w->buflen && write_all(w->fd, w->buf, w->buflen) < 0)
		return -1;
	w->buflen = 0;
	return 0;
}

static void put(struct pack_writer *w, const void *p, size_t len)
{
	memcpy(w->buf + w->buflen, p, len);
	w->buflen += len;
	w->off += len;
}

static unsigned long pack_seq;

int pack_writer_add(struct pack_writer *w, int tmp_fd, const char *h, const void *data,
		    size_t len, struct werr *e)
{
	struct pack_ref r = { .size = (uint32_t)len };
	if (len > WBUF_MAX || !pack_hash_bin(h, r.h))
		return werr_set(e, EINVAL, "checkpoint store: a blob too large for a pack");
	/* (the hash read once, its slot found once: a pack_writer_has) */
	size_t *slot = w->n ? slot_find(w, r.h) : NULL;
	if (slot && *slot)
		return 0;
	if (w->fd < 0) {
		w->tmp = xasprintf("p.%d.%lu", (int)getpid(), ++pack_seq);
		w->fd = openat(tmp_fd, w->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (w->fd < 0) {
			int err = errno;
			pack_writer_abort(w, tmp_fd);
			return werr_set(e, err, "checkpoint store: cannot write a pack");
		}
		w->buf = xmalloc(WBUF_MAX);
		w->off = 0;
		put(w, PACK_MAGIC, PACK_MAGIC_LEN);
	}
	if (w->buflen + len > WBUF_MAX && flush(w) < 0)
		return werr_errno(e, "checkpoint store: writing a pack");
	r.off = w->off;
	put(w, data, len);
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->v = xrealloc(w->v, w->cap * sizeof *w->v);
	}
	w->v[w->n++] = r;
	if (!slot || w->n * 2 > w->nslots)
		slots_grow(w);
	else
		*slot = w->n;
	return 0;
}

void pack_writer_abort(struct pack_writer *w, int tmp_fd)
{
	if (w->fd >= 0 && w->tmp)
		unlinkat(tmp_fd, w->tmp, 0);
	closep(&w->fd);
	free(w->tmp);
	free(w->v);
	free(w->slots);
	free(w->buf);
	*w = (struct pack_writer){ .fd = -1 };
}

int pack_writer_finish(struct pack_writer *w, int tmp_fd, int packs_fd,
		       char name[SHA256_HEX_LEN], struct werr *e)
{
	name[0] = '\0';
	if (!w->n) {
		pack_writer_abort(w, tmp_fd);
		return 0;
	}
	qsort(w->v, w->n, sizeof *w->v, cmp_ref);
	struct sbuf idx = { 0 };
	for (size_t k = 0; k < w->n; k++) {
		char hex[SHA256_HEX_LEN];
		pack_hash_hex(w->v[k].h, hex); /* "HASH OFFSET SIZE\n", a line per blob */
		sb_put(&idx, hex, 64);
		sb_putc(&idx, ' ');
		sb_put_ull(&idx, (unsigned long long)w->v[k].off);
		sb_putc(&idx, ' ');
		sb_put_ull(&idx, w->v[k].size);
		sb_putc(&idx, '\n');
	}
	sha256_hex(idx.p, idx.n, name);
	char tr[PACK_TRAILER_LEN + 1];
	snprintf(tr, sizeof tr, "idx %020llu %012llu\n", w->off, (unsigned long long)w->n);
	_cleanup_free_ char *fname = xasprintf("%s.pack", name);
	int r = flush(w) < 0 || write_all(w->fd, idx.p, idx.n) < 0 ||
			write_all(w->fd, tr, PACK_TRAILER_LEN) < 0 || fchmod(w->fd, 0444) < 0 ||
			fsync(w->fd) < 0
		? -1 : 0;
	free(idx.p);
	if (r == 0 && renameat2(tmp_fd, w->tmp, packs_fd, fname, RENAME_NOREPLACE) < 0 &&
	    errno != EEXIST)
		r = -1;
	if (r == 0 && fsync(packs_fd) < 0)
		r = -1;
	int err = errno;
	pack_writer_abort(w, tmp_fd); /* (the temporary name is gone when renamed) */
	if (r < 0) {
		name[0] = '\0';
		return werr_set(e, err, "checkpoint store: writing a pack of small files");
	}
	return 0;
}
