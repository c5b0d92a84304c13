/* test_common_elfhash.c - the code hash of ELF files (src/common/elfhash.c):
 * its definition on a small ELF built here (the expected digest computed
 * from the definition's bytes), a real program with bytes appended and
 * with its section header fields changed (what `strip` rewrites) keeps its
 * hash while a changed code byte does not, 32-bit and big-endian files,
 * and the malformed ones refused with a reason: not an ELF, truncated
 * headers, a table or a segment past the end, overlapping segments. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/elfhash.h"
#include "check.h"

static void le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void be(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[n - 1 - i] = (unsigned char)(v >> (8 * i));
}

/* A 64-bit little-endian ELF of 512 bytes: the header, two program
 * headers at 64 (PT_LOAD over [0, 256) at 0x400000, flags 5; a PT_NOTE),
 * code bytes after. */
static void tiny64(unsigned char *f)
{
	memset(f, 0, 512);
	memcpy(f, "\177ELF\2\1\1", 7);
	le(f + 32, 64, 8);   /* e_phoff */
	le(f + 40, 400, 8);  /* e_shoff */
	le(f + 52, 64, 2);   /* e_ehsize */
	le(f + 54, 56, 2);   /* e_phentsize */
	le(f + 56, 2, 2);    /* e_phnum */
	le(f + 58, 64, 2);   /* e_shentsize */
	le(f + 60, 1, 2);    /* e_shnum */
	unsigned char *ph = f + 64;
	le(ph, 1, 4);
	le(ph + 4, 5, 4);
	le(ph + 8, 0, 8);
	le(ph + 16, 0x400000, 8);
	le(ph + 32, 256, 8);
	le(ph + 40, 4096, 8);
	le(ph + 56, 4, 4); /* PT_NOTE */
	for (int i = 184; i < 512; i++)
		f[i] = (unsigned char)i;
}

/* The expected code hash of tiny64's file f, from the definition. */
static void expected64(const unsigned char *f, char out[SHA256_HEX_LEN])
{
	unsigned char b[28 + 256];
	le(b, 0x400000, 8);
	le(b + 8, 4096, 8);
	le(b + 16, 5, 4);
	le(b + 20, 256, 8);
	memcpy(b + 28, f, 256);
	memset(b + 28 + 40, 0, 8);
	memset(b + 28 + 58, 0, 6);
	sha256_hex(b, sizeof b, out);
}

static void test_definition(void)
{
	unsigned char f[512];
	char got[SHA256_HEX_LEN], want[SHA256_HEX_LEN], again[SHA256_HEX_LEN];
	const char *why;
	tiny64(f);
	expected64(f, want);
	CHECK(elfhash_mem(f, sizeof f, got, &why) == 0);
	CHECK_STR(got, want);
	/* what strip rewrites: the section header fields */
	le(f + 40, 0, 8);
	le(f + 58, 0, 2);
	le(f + 60, 0, 2);
	le(f + 62, 0, 2);
	CHECK(elfhash_mem(f, sizeof f, again, &why) == 0);
	CHECK_STR(again, want);
	/* past the segment: not hashed */
	f[300] ^= 1;
	CHECK(elfhash_mem(f, sizeof f, again, &why) == 0);
	CHECK_STR(again, want);
	/* inside: another program */
	f[200] ^= 1;
	CHECK(elfhash_mem(f, sizeof f, again, &why) == 0);
	CHECK(strcmp(again, want) != 0);
	f[200] ^= 1;
	/* where it is mapped, or with what rights: another program */
	le(f + 64 + 4, 7, 4);
	CHECK(elfhash_mem(f, sizeof f, again, &why) == 0);
	CHECK(strcmp(again, want) != 0);
}

/* The same file in 32-bit big-endian form hashes the same way, fields
 * read in its byte order. */
static void test_32_big(void)
{
	unsigned char f[256] = { 0 };
	memcpy(f, "\177ELF\1\2\1", 7);
	be(f + 28, 52, 4); /* e_phoff */
	be(f + 32, 200, 4); /* e_shoff */
	be(f + 42, 32, 2);
	be(f + 44, 1, 2);
	unsigned char *ph = f + 52;
	be(ph, 1, 4);
	be(ph + 4, 0, 4);     /* p_offset */
	be(ph + 8, 0x10000, 4);
	be(ph + 16, 128, 4);  /* p_filesz */
	be(ph + 20, 128, 4);
	be(ph + 24, 5, 4);
	for (int i = 84; i < 256; i++)
		f[i] = (unsigned char)(i * 7);
	unsigned char b[28 + 128];
	le(b, 0x10000, 8);
	le(b + 8, 128, 8);
	le(b + 16, 5, 4);
	le(b + 20, 128, 8);
	memcpy(b + 28, f, 128);
	memset(b + 28 + 32, 0, 4);
	memset(b + 28 + 46, 0, 6);
	char got[SHA256_HEX_LEN], want[SHA256_HEX_LEN];
	const char *why;
	sha256_hex(b, sizeof b, want);
	CHECK(elfhash_mem(f, sizeof f, got, &why) == 0);
	CHECK_STR(got, want);
}

static void expect_err(const unsigned char *f, size_t len, int err)
{
	char got[SHA256_HEX_LEN];
	const char *why = NULL;
	errno = 0;
	CHECK(elfhash_mem(f, len, got, &why) == -1);
	CHECK(errno == err);
	CHECK(why && why[0]);
	if (errno != err)
		fprintf(stderr, "  errno %d (%s), wanted %d\n", errno, why ? why : "", err);
}

static void test_malformed(void)
{
	unsigned char f[512];
	tiny64(f);
	expect_err((const unsigned char *)"#!/bin/sh\necho hi\n", 18, ENOEXEC);
	expect_err(f, 4, ENOEXEC);
	expect_err(f, 40, EINVAL);  /* a truncated header */
	expect_err(f, 100, EINVAL); /* the table past the end */
	expect_err(f, 200, EINVAL); /* the segment past the end */
	tiny64(f);
	le(f + 54, 32, 2);
	expect_err(f, sizeof f, EINVAL); /* the wrong header size */
	tiny64(f);
	le(f + 56, 0, 2);
	expect_err(f, sizeof f, EINVAL);
	tiny64(f);
	le(f + 56, 0xffff, 2);
	expect_err(f, sizeof f, EINVAL);
	tiny64(f);
	le(f + 64 + 32, ~0ULL, 8); /* a huge segment */
	expect_err(f, sizeof f, EINVAL);
	tiny64(f);
	le(f + 64 + 8, ~0ULL - 10, 8); /* an offset that wraps */
	expect_err(f, sizeof f, EINVAL);
	tiny64(f);
	le(f + 64 + 56, 4, 4);
	le(f + 64, 4, 4); /* no PT_LOAD */
	expect_err(f, sizeof f, EINVAL);
	/* many segments over the whole file: refused, not hashed many times */
	size_t n = 64 + 9 * 56;
	unsigned char *g = calloc(1, 4096);
	memcpy(g, "\177ELF\2\1\1", 7);
	le(g + 32, 64, 8);
	le(g + 54, 56, 2);
	le(g + 56, 9, 2);
	for (int i = 0; i < 9; i++) {
		le(g + 64 + i * 56, 1, 4);
		le(g + 64 + i * 56 + 32, 4096, 8);
		le(g + 64 + i * 56 + 40, 4096, 8);
	}
	CHECK(n < 4096);
	expect_err(g, 4096, EOVERFLOW);
	free(g);
}

/* A real program: bytes appended keep its code hash, not its file hash. */
static void test_real_program(void)
{
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "skipped: no /bin/true\n");
		return;
	}
	size_t len = (size_t)st.st_size;
	unsigned char *f = malloc(len + 4096);
	CHECK(pread(fd, f, len, 0) == (ssize_t)len);
	char a[SHA256_HEX_LEN], b[SHA256_HEX_LEN], fa[SHA256_HEX_LEN], fb[SHA256_HEX_LEN];
	const char *why;
	CHECK(elfhash_fd(fd, len, 0, NULL, NULL, a, &why) == 0);
	CHECK(elfhash_mem(f, len, b, &why) == 0);
	CHECK_STR(a, b);
	memset(f + len, 0x5a, 4096);
	CHECK(elfhash_mem(f, len + 4096, b, &why) == 0);
	CHECK_STR(a, b);
	sha256_hex(f, len, fa);
	sha256_hex(f, len + 4096, fb);
	CHECK(strcmp(fa, fb) != 0);
	CHECK(strcmp(a, fa) != 0);
	/* a hash limit below the segments' size */
	errno = 0;
	CHECK(elfhash_fd(fd, len, 1024, NULL, NULL, a, &why) == -1 && errno == EFBIG);
	free(f);
	close(fd);
}

int main(void)
{
	test_definition();
	test_32_big();
	test_malformed();
	test_real_program();
	return check_status();
}
