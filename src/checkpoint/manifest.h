/* manifest.h - a checkpoint's manifest: the tree of a workspace as entries
 * (path, type, mode, size, mtime, content hash, symlink target), its text
 * form, and a strict parser for that form. A manifest read back from the
 * store is input like any other: every path relative and normalised, the
 * entries in byte order, each below a directory of the manifest.
 *
 * Text form (one entry a line, fields separated by one space, a newline
 * after every line):
 *   warden-manifest 2       (1: written before the special files' lines; read)
 *   root MODE                      the workspace directory's own mode
 *   exclude PATTERN                (any number) patterns in force when taken
 *   d MODE 0 MTIME - PATH
 *   f MODE SIZE MTIME SHA256 PATH
 *   l MODE SIZE MTIME - PATH TARGET
 *   p|s|c|b MODE 0 MTIME - PATH    a FIFO, socket, character or block device:
 *                                  its name and mode, no content
 * MODE is octal (at most 07777), MTIME SECONDS.NANOSECONDS; PATH, TARGET and
 * PATTERN escape every byte below 0x21, 0x7f and '%' as %XX. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../common/err.h"
#include "../common/hash.h"
#include "../common/util.h"

#define MF_MAX_PATH 16384      /* a decoded path or target, bytes */
#define MF_MAX_ENTRIES 20000000u

enum mf_type {
	MF_DIR = 'd', MF_FILE = 'f', MF_LINK = 'l',
	/* special files: named, never made again (restore.h) */
	MF_FIFO = 'p', MF_SOCK = 's', MF_CHR = 'c', MF_BLK = 'b',
};

/* A FIFO, socket or device: what a manifest names without content. */
static inline bool mf_special(char type)
{
	return type == MF_FIFO || type == MF_SOCK || type == MF_CHR || type == MF_BLK;
}

/* Its kind in words ("FIFO", "socket", "device"), for a special type. */
static inline const char *mf_special_word(char type)
{
	return type == MF_FIFO ? "FIFO" : type == MF_SOCK ? "socket" : "device";
}

struct mf_entry {
	char *path;                 /* relative, normalised, never empty */
	char type;                  /* enum mf_type */
	mode_t mode;                /* permission bits, setuid/setgid/sticky included */
	unsigned long long size;    /* files: bytes; links: the target's length; else 0 */
	long long mtime_sec;
	long mtime_nsec;
	char hash[SHA256_HEX_LEN];  /* files: the content's SHA-256; else "" */
	char *target;               /* links: the target; else NULL */
};

struct manifest {
	struct mf_entry *v;
	size_t n, cap;
	mode_t root_mode;
	struct strv exclude;
	/* read from a version 1 manifest, written before FIFOs, sockets and
	 * devices were named: what it holds of them is not known, and no
	 * change to one is seen against it (changes_compute) */
	bool specials_unknown;
};

/* Append a copy of e (path and target copied). */
void manifest_add(struct manifest *m, const struct mf_entry *e);
/* Sort by path (byte order); the writer calls it before formatting. */
void manifest_sort(struct manifest *m);
/* The entry for path, or NULL (m sorted). */
const struct mf_entry *manifest_find(const struct manifest *m, const char *path);
void manifest_free(struct manifest *m);

/* The text form (malloc'd, *len bytes, NUL-terminated). m must be sorted. */
char *manifest_format(const struct manifest *m, size_t *len);
/* Parse the text form strictly: anything out of form, a path that is
 * absolute or has an empty, "." or ".." component, entries out of order or
 * repeated, an entry whose parent is not a directory of the manifest, a hash
 * that is not 64 lowercase hex digits. -1 with e naming the line. */
int manifest_parse(const char *text, size_t len, struct manifest *m, struct werr *e);

/* %XX escaping of the text form (malloc'd). */
char *mf_escape(const char *s);
/* The same, appended to b. */
struct sbuf;
void mf_escape_put(struct sbuf *b, const char *s);

/* The reverse: NULL when a byte that must be escaped is raw, an escape is
 * bad or decodes to NUL, or the result is longer than MF_MAX_PATH. */
char *mf_unescape(const char *s);

/* Two entries record the same thing (type, mode, content or target). */
bool mf_same_content(const struct mf_entry *a, const struct mf_entry *b);
