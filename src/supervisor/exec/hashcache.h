/* hashcache.h - the exec record's hashes of files the agent cannot change
 * (execs.c takes them instead of reading the file again): the session's
 * own, the last HASH_CACHE files, in front of those kept between sessions
 * in warden's cache directory (hashdisk.h). A file is known by fstat's
 * device, inode, size, mtime and ctime. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "hashdisk.h"

#define HASH_CACHE 1024

struct hc_entry {
	struct stat key;            /* dev, ino, size, mtim, ctim */
	char hex[SHA256_HEX_LEN];
	char interp[HASH_HEAD_LEN]; /* the #! line, "" for none */
	int code_err;               /* the code hash, as execs_int.h's struct subject's */
	char code[SHA256_HEX_LEN];
	const char *code_why;
};

struct hashcache {
	struct hc_entry *v;    /* grown as files are hashed, up to HASH_CACHE */
	size_t n, cap, next;
	struct hashdisk *disk; /* NULL: nothing kept between sessions */
	unsigned long kept;    /* entries taken from it */
};

/* Empty, in front of the hashes kept between sessions (hashdisk_load;
 * taken; NULL: none). */
void hashcache_open(struct hashcache *c, struct hashdisk *kept);
/* The entry for the file st describes: the session's, else (kept_too) one
 * kept by an earlier session, taken into the session's; NULL when none. */
const struct hc_entry *hashcache_get(struct hashcache *c, const struct stat *st, bool kept_too);
/* The hashes of the file st describes, for this session and the next. */
void hashcache_put(struct hashcache *c, const struct stat *st, const char *hex, const char *interp,
		   int code_err, const char *code, const char *code_why);
/* What this session added kept (hashdisk_close), the entries freed. */
void hashcache_close(struct hashcache *c);
