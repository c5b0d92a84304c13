/* elfhash.c - the code hash of an ELF file (elfhash.h): the PT_LOAD
 * segments as the loader maps them, hashed in program header order, with
 * the ELF header's section header fields (what `strip` rewrites) as zeros.
 * Every number comes from the file, so each is checked against the file's
 * size before it is used, and nothing is read past what the checks
 * allowed: a truncated file, a table out of the file, segments past its
 * end or overlapping without end are refused with a reason, never read. */
#define OPENSSL_API_COMPAT 10101
#define OPENSSL_SUPPRESS_DEPRECATED
#include "elfhash.h"

#include <errno.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 65536

struct elf {
	bool is64, big;
	uint64_t phoff;
	unsigned phentsize, phnum;
	/* the header's section header fields, as file ranges [a, b) */
	uint64_t mask[2][2];
};

static uint64_t get(const unsigned char *p, unsigned n, bool big)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
	return v;
}

static void put_le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int fail(int err, const char **why, const char *what)
{
	*why = what;
	errno = err;
	return -1;
}

/* Exactly len bytes at off, or -1 (a short read: the file ended). */
static int read_all(const struct elfhash_src *s, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		long n = s->read(s->ctx, (char *)buf + got, len - got, off + got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EINVAL;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

/* The ELF header: ENOEXEC when the file is no ELF, EINVAL when it is a
 * broken one. */
static int read_header(const struct elfhash_src *s, struct elf *e, const char **why)
{
	unsigned char h[64];
	if (s->size < 16)
		return fail(ENOEXEC, why, "not an ELF file");
	if (read_all(s, h, 16, 0) < 0)
		return fail(errno, why, "the ELF header could not be read");
	if (memcmp(h, "\177ELF", 4) != 0 || (h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2))
		return fail(ENOEXEC, why, "not an ELF file");
	e->is64 = h[4] == 2;
	e->big = h[5] == 2;
	unsigned ehsize = e->is64 ? 64 : 52;
	if (s->size < ehsize || read_all(s, h, ehsize, 0) < 0)
		return fail(EINVAL, why, "a truncated ELF header");
	if (e->is64) {
		e->phoff = get(h + 32, 8, e->big);
		e->phentsize = (unsigned)get(h + 54, 2, e->big);
		e->phnum = (unsigned)get(h + 56, 2, e->big);
		memcpy(e->mask, (uint64_t[2][2]){ { 40, 48 }, { 58, 64 } }, sizeof e->mask);
	} else {
		e->phoff = get(h + 28, 4, e->big);
		e->phentsize = (unsigned)get(h + 42, 2, e->big);
		e->phnum = (unsigned)get(h + 44, 2, e->big);
		memcpy(e->mask, (uint64_t[2][2]){ { 32, 36 }, { 46, 52 } }, sizeof e->mask);
	}
	if (e->phentsize != (e->is64 ? 56u : 32u))
		return fail(EINVAL, why, "program headers of the wrong size");
	if (e->phnum == 0 || e->phnum > ELFHASH_MAX_PHDRS)
		return fail(EINVAL, why, "no program headers, or too many");
	uint64_t table = (uint64_t)e->phnum * e->phentsize;
	if (e->phoff > s->size || table > s->size - e->phoff)
		return fail(EINVAL, why, "the program headers lie past the end of the file (truncated?)");
	return 0;
}

struct seg {
	uint64_t off, filesz, vaddr, memsz;
	uint32_t flags;
};

/* Program header i of the table t as a segment; false when not PT_LOAD. */
static bool load_seg(const struct elf *e, const unsigned char *t, unsigned i, struct seg *g)
{
	const unsigned char *p = t + (size_t)i * e->phentsize;
	if (get(p, 4, e->big) != 1 /* PT_LOAD */)
		return false;
	if (e->is64)
		*g = (struct seg){ .flags = (uint32_t)get(p + 4, 4, e->big), .off = get(p + 8, 8, e->big),
				   .vaddr = get(p + 16, 8, e->big), .filesz = get(p + 32, 8, e->big),
				   .memsz = get(p + 40, 8, e->big) };
	else
		*g = (struct seg){ .off = get(p + 4, 4, e->big), .vaddr = get(p + 8, 4, e->big),
				   .filesz = get(p + 16, 4, e->big), .memsz = get(p + 20, 4, e->big),
				   .flags = (uint32_t)get(p + 24, 4, e->big) };
	return true;
}

/* Every segment inside the file, their bytes within the bounds. */
static int check_segs(const struct elfhash_src *s, const struct elf *e, const unsigned char *t,
		      const char **why)
{
	uint64_t total = 0;
	unsigned loads = 0;
	for (unsigned i = 0; i < e->phnum; i++) {
		struct seg g;
		if (!load_seg(e, t, i, &g))
			continue;
		loads++;
		if (g.off > s->size || g.filesz > s->size - g.off)
			return fail(EINVAL, why, "a segment lies past the end of the file (truncated?)");
		total += g.filesz; /* at most ELFHASH_MAX_PHDRS times the size: no overflow */
		if (total > 2 * s->size)
			return fail(EOVERFLOW, why, "the segments overlap beyond twice the file's size");
		if (s->max && total > s->max)
			return fail(EFBIG, why, "the segments are larger than the hash limit");
	}
	return loads ? 0 : fail(EINVAL, why, "no loadable segment");
}

static bool past(const struct timespec *d)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

/* Segment g's bytes into c, the header's masked fields as zeros. */
static int hash_seg(const struct elfhash_src *s, const struct elf *e, const struct seg *g,
		    SHA256_CTX *c, unsigned char *buf, const char **why)
{
	unsigned char head[28];
	put_le(head, g->vaddr, 8);
	put_le(head + 8, g->memsz, 8);
	put_le(head + 16, g->flags, 4);
	put_le(head + 20, g->filesz, 8);
	SHA256_Update(c, head, sizeof head);
	for (uint64_t done = 0; done < g->filesz;) {
		size_t n = g->filesz - done < CHUNK ? (size_t)(g->filesz - done) : CHUNK;
		uint64_t at = g->off + done;
		if (read_all(s, buf, n, at) < 0)
			return fail(errno, why, errno == EINVAL ? "the file ended inside a segment"
							     : "a segment could not be read");
		for (int k = 0; k < 2; k++)
			for (uint64_t b = e->mask[k][0]; b < e->mask[k][1]; b++)
				if (b >= at && b < at + n)
					buf[b - at] = 0;
		SHA256_Update(c, buf, n);
		done += n;
		if (s->stop && *s->stop)
			return fail(ECANCELED, why, "stopped");
		if (s->deadline && past(s->deadline))
			return fail(ETIMEDOUT, why, "not read within the time limit");
	}
	return 0;
}

int elfhash(const struct elfhash_src *s, char out[SHA256_HEX_LEN], const char **why)
{
	struct elf e;
	*why = NULL;
	if (read_header(s, &e, why) < 0)
		return -1;
	size_t tlen = (size_t)e.phnum * e.phentsize;
	unsigned char *t = malloc(tlen), *buf = malloc(CHUNK);
	int r = -1;
	if (!t || !buf) {
		fail(ENOMEM, why, "out of memory");
		goto out;
	}
	if (read_all(s, t, tlen, e.phoff) < 0) {
		fail(errno, why, "the program headers could not be read");
		goto out;
	}
	if (check_segs(s, &e, t, why) < 0)
		goto out;
	SHA256_CTX c;
	if (!SHA256_Init(&c))
		abort();
	for (unsigned i = 0; i < e.phnum; i++) {
		struct seg g;
		if (load_seg(&e, t, i, &g) && hash_seg(s, &e, &g, &c, buf, why) < 0)
			goto out;
	}
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_Final(md, &c);
	hex_encode(md, sizeof md, out);
	r = 0;
out:
	free(t);
	free(buf);
	return r;
}

static long read_fd(void *ctx, void *buf, size_t len, uint64_t off)
{
	return pread(*(int *)ctx, buf, len, (off_t)off);
}

int elfhash_fd(int fd, uint64_t size, unsigned long long max, const struct timespec *deadline,
	       const volatile int *stop, char out[SHA256_HEX_LEN], const char **why)
{
	return elfhash(&(struct elfhash_src){ .read = read_fd, .ctx = &fd, .size = size, .max = max,
					      .deadline = deadline, .stop = stop }, out, why);
}

struct mem {
	const unsigned char *p;
	size_t len;
};

static long read_mem(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem *m = ctx;
	if (off >= m->len)
		return 0;
	size_t n = m->len - off < len ? (size_t)(m->len - off) : len;
	memcpy(buf, m->p + off, n);
	return (long)n;
}

int elfhash_mem(const void *buf, size_t len, char out[SHA256_HEX_LEN], const char **why)
{
	struct mem m = { .p = buf, .len = len };
	return elfhash(&(struct elfhash_src){ .read = read_mem, .ctx = &m, .size = len }, out, why);
}
