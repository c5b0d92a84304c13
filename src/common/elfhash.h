/* elfhash.h - the code hash of an ELF file: a SHA-256 of what the loader
 * maps (its PT_LOAD segments), the same for a copy with bytes appended or
 * with its symbols stripped, which change the file's own SHA-256.
 *
 * Definition (version 1): SHA-256 over, for each PT_LOAD entry of the
 * program header table in table order,
 *     p_vaddr (8 bytes), p_memsz (8), p_flags (4), p_filesz (8),
 *     all little-endian whatever the file's byte order, then
 *     the p_filesz bytes of the file from p_offset,
 * where the bytes of the ELF header that name the section headers
 * (e_shoff, e_shentsize, e_shnum, e_shstrndx) count as zeros wherever a
 * segment maps them. Section headers, non-loaded sections (symbols, debug
 * information, comments) and bytes past the last segment are left out:
 * `strip` and appended bytes change only those. p_offset is left out too:
 * where a segment sits in the file is not what runs. Bytes a segment maps
 * that differ (changed code or data) give another hash: this hash does not
 * name "the same program, recompiled or patched".
 *
 * Bounded: at most ELFHASH_MAX_PHDRS program headers (the kernel's own
 * bound), every segment inside the file, the segments' bytes at most twice
 * the file's size (overlaps beyond it are refused, so that many segments
 * over one range cost no more than two reads), and the caller's byte, time
 * and stop limits as sha256_fd_bounded's. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "hash.h"

#define ELFHASH_MAX_PHDRS 1170 /* 64 KiB of 56-byte headers, as the kernel */

/* How the file is read: up to len bytes at off into buf; the count read
 * (short only at the end of the file), or -1 with errno. */
typedef long (*elfhash_read_fn)(void *ctx, void *buf, size_t len, uint64_t off);

struct elfhash_src {
	elfhash_read_fn read;
	void *ctx;
	uint64_t size;                   /* the file's size */
	unsigned long long max;          /* bytes hashed at most (0: no bound) */
	const struct timespec *deadline; /* CLOCK_MONOTONIC; NULL: none */
	const volatile int *stop;        /* NULL: none */
};

/* The code hash of the file src reads into out: 0, or -1 with errno and
 * *why (a static string) saying what is wrong: ENOEXEC not an ELF file
 * (not an error for the caller: no code hash), EINVAL a malformed one
 * (truncated, headers out of the file), EOVERFLOW segments overlapping
 * beyond the bound, EFBIG past max, ETIMEDOUT, ECANCELED, or a read's
 * errno. */
int elfhash(const struct elfhash_src *src, char out[SHA256_HEX_LEN], const char **why);

/* The same for the file open at fd (read with pread), of size bytes. */
int elfhash_fd(int fd, uint64_t size, unsigned long long max, const struct timespec *deadline,
	       const volatile int *stop, char out[SHA256_HEX_LEN], const char **why);

/* The same for len bytes in memory. */
int elfhash_mem(const void *buf, size_t len, char out[SHA256_HEX_LEN], const char **why);
