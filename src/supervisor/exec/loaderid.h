/* loaderid.h - the dynamic loader: the system's known by its content, and
 * the one an ELF file names (PT_INTERP). A copy of
 * it under any name (`cp /lib64/ld-linux-x86-64.so.2 ./myld; ./myld ./x`)
 * runs the program it is given as the loader does, so exec control judges
 * that program as it judges `ld.so ./x` (program.h). The loader the
 * sandbox's programs name (PT_INTERP) is looked at once, when an exec
 * first names a file of its size, and its SHA-256 compared with that
 * file's. A loader changed in any byte is not recognized: it is a program
 * of the agent's own that maps code itself, which `exec strict` refuses,
 * and `exec default deny` too (nothing allows it). */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>

#include "../../common/hash.h"

struct loader_id {
	int state; /* 0: not looked at yet; 1: known; -1: none to be had */
	int fd;    /* the loader, opened for reading until hashed (-1: none) */
	struct stat st;
	bool hashed;
	char hex[SHA256_HEX_LEN];
};

#define LOADER_ID_INIT { .state = 0, .fd = -1 }

/* Is the file of st and SHA-256 hex the loader, by its content? root: the
 * sandbox's root (O_PATH), where the loader is looked for. */
bool loader_id_is(struct loader_id *l, int root, const struct stat *st, const char *hex);

void loader_id_free(struct loader_id *l);

/* Is st the loader itself (the same file)? False when it is not known. */
bool loader_id_same(struct loader_id *l, int root, const struct stat *st);

/* The interpreter a 64-bit ELF file names (PT_INTERP), read from fd (open
 * for reading) into out (cap bytes): 1, 0 when it names none (static, or
 * not a 64-bit ELF), -1 when its headers are malformed or unreadable. */
int elf_interp_read(int fd, char *out, size_t cap);
