/* hashdisk.h - the hashes of files the agent cannot change, kept between
 * sessions in warden's cache directory ($XDG_CACHE_HOME/warden, which no
 * sandbox reaches: session.c keeps it out of the workspace and the
 * writable paths), so that a session does not read a 100 MB program (node,
 * for `warden run -- claude`) again to hash it when the same file was
 * hashed before.
 *
 * An entry is the file as fstat saw it: device, inode, size, mtime and
 * ctime to the nanosecond. A change to the file's bytes changes its ctime,
 * which no one can set back (utimensat sets mtime; ctime becomes now), and
 * a file replaced by a new one has another inode or another ctime. The
 * file's first line holds the kernel's boot id: after a reboot, device
 * numbers may name other file systems, and the whole file is dropped.
 *
 * The file is read through O_NOFOLLOW and taken only when it is a regular
 * file of the effective uid, writable by no group or other, of at most
 * 1 MiB, and parses whole as warden writes it (at most HASHDISK_MAX
 * entries, one a file); anything else reads as empty. It is written
 * (when a session added entries) through a new file renamed into place;
 * the newest HASHDISK_MAX entries are kept. Only the entries the exec
 * record could use as they are go in: a file hash, its #! line, and its
 * code hash or no ELF (not why a code hash failed). */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>

#include "../../common/hash.h"
#include "hashq.h"

#define HASHDISK_MAX 1024

struct hashdisk_entry {
	struct stat st;             /* dev, ino, size, mtim, ctim (the rest unused) */
	char hex[SHA256_HEX_LEN];
	char interp[HASH_HEAD_LEN]; /* the #! line, "" for none */
	int code_err;               /* 0 (code holds the code hash) or ENOEXEC (no ELF) */
	char code[SHA256_HEX_LEN];
};

struct hashdisk;

/* Whether a and b describe the same file as a kept entry knows it: device,
 * inode, size, mtime and ctime. */
bool hashdisk_same_file(const struct stat *a, const struct stat *b);
/* The cache of cachedir (NULL: none, nothing kept: NULL returned). */
struct hashdisk *hashdisk_load(const char *cachedir);
/* The entries of a file's text for boot id boot (none when the text is of
 * another boot or does not parse whole), kept nowhere: what hashdisk_load
 * reads, for the fuzz target too. */
struct hashdisk *hashdisk_parse(const char *boot, char *text);
/* The file's text for d's entries (malloc'd). */
char *hashdisk_text(const struct hashdisk *d);
/* The number of entries, and entry i (oldest first). */
size_t hashdisk_count(const struct hashdisk *d);
const struct hashdisk_entry *hashdisk_at(const struct hashdisk *d, size_t i);
/* The entry for the file st describes: true with *out. */
bool hashdisk_find(const struct hashdisk *d, const struct stat *st, struct hashdisk_entry *out);
/* en kept (in place of an older entry of the same file); ignored for a
 * code_err other than 0 and ENOEXEC, a time before 1970, and when d is
 * NULL. */
void hashdisk_put(struct hashdisk *d, const struct hashdisk_entry *en);
/* Written back when entries were put (and d came from hashdisk_load);
 * then freed. */
void hashdisk_close(struct hashdisk *d);
