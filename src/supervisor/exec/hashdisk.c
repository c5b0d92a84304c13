/* hashdisk.c - the exec hashes kept between sessions (hashdisk.h).
 *
 * The file: "warden-exec-hashes 1 BOOT_ID\n", then one line per entry,
 * oldest first:
 *   DEV INO SIZE MTIME_S MTIME_NS CTIME_S CTIME_NS SHA256 CODE INTERP
 * CODE the code hash, or "-" for no ELF; INTERP the rest of the line (the
 * #! line, possibly empty). */
#include "hashdisk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/sbuf.h"
#include "../../common/util.h"

#define FILE_NAME "exec-hashes"
#define MAGIC "warden-exec-hashes 1 "
#define FILE_MAX (1u << 20)

struct hashdisk {
	int dirfd;
	char boot[64];
	struct hashdisk_entry *v;
	size_t n, cap;
	bool dirty;
};

bool hashdisk_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* A decimal field ending at a space (at most UINT64_MAX, no sign): *p
 * moved past the space. */
static bool field(char **p, uintmax_t *v)
{
	char *s = *p;
	uintmax_t n = 0;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINTMAX_MAX - (uintmax_t)(*s - '0')) / 10)
			return false;
		n = n * 10 + (uintmax_t)(*s - '0');
	}
	if (*s != ' ')
		return false;
	*v = n;
	*p = s + 1;
	return true;
}

/* A 64-digit hex field ending at a space into out; *p moved past it. */
static bool hexfield(char **p, char out[SHA256_HEX_LEN])
{
	if (strlen(*p) < 65 || (*p)[64] != ' ')
		return false;
	memcpy(out, *p, 64);
	out[64] = '\0';
	*p += 65;
	return sha256_hex_ok(out);
}

/* One line (NUL-terminated, no newline) into en; false when malformed. */
static bool parse_line(char *line, struct hashdisk_entry *en)
{
	uintmax_t f[7];
	char *p = line;
	for (int i = 0; i < 7; i++)
		if (!field(&p, &f[i]))
			return false;
	*en = (struct hashdisk_entry){ 0 };
	if (f[4] >= 1000000000 || f[6] >= 1000000000 || f[2] > (uintmax_t)INT64_MAX ||
	    f[3] > (uintmax_t)INT64_MAX || f[5] > (uintmax_t)INT64_MAX || !hexfield(&p, en->hex))
		return false;
	if (strncmp(p, "- ", 2) == 0) {
		en->code_err = ENOEXEC;
		p += 2;
	} else if (!hexfield(&p, en->code)) {
		return false;
	}
	/* the #! line: all that follows the one space after CODE */
	if (strlen(p) >= sizeof en->interp)
		return false;
	en->st.st_dev = (dev_t)f[0];
	en->st.st_ino = (ino_t)f[1];
	en->st.st_size = (off_t)f[2];
	en->st.st_mtim = (struct timespec){ (time_t)f[3], (long)f[4] };
	en->st.st_ctim = (struct timespec){ (time_t)f[5], (long)f[6] };
	if ((uintmax_t)en->st.st_dev != f[0] || (uintmax_t)en->st.st_ino != f[1])
		return false;
	memcpy(en->interp, p, strlen(p) + 1);
	return true;
}

/* The file's text when it can be trusted (hashdisk.h), else NULL. */
static char *read_trusted(int dirfd)
{
	struct stat st;
	size_t len;
	char *text = read_regular_at(dirfd, FILE_NAME, O_NOFOLLOW, FILE_MAX, &len, &st);
	if (text && (st.st_uid != geteuid() || (st.st_mode & 022) || len == 0)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Whether en may be kept: a code hash or no ELF (not why a code hash
 * failed), a one-line #! line, no size or time before 1970 (the file has
 * no sign). */
static bool keepable(const struct hashdisk_entry *en)
{
	return (en->code_err == 0 || en->code_err == ENOEXEC) && !strchr(en->interp, '\n') &&
	       en->st.st_size >= 0 && en->st.st_mtim.tv_sec >= 0 && en->st.st_ctim.tv_sec >= 0;
}

/* en appended as the newest entry, its key alone kept of its stat. */
static void push(struct hashdisk *d, const struct hashdisk_entry *en)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->v = xrealloc(d->v, d->cap * sizeof *d->v);
	}
	d->v[d->n] = *en;
	d->v[d->n].st = (struct stat){ .st_dev = en->st.st_dev, .st_ino = en->st.st_ino,
				       .st_size = en->st.st_size, .st_mtim = en->st.st_mtim,
				       .st_ctim = en->st.st_ctim };
	d->n++;
	d->dirty = true;
}

struct devino {
	dev_t dev;
	ino_t ino;
};

static int cmp_devino(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Whether two entries are of one file (device and inode): sorted, so that
 * a full file loads in O(n log n), not one linear search an entry. */
static bool any_file_twice(const struct hashdisk *d)
{
	if (d->n < 2)
		return false;
	_cleanup_free_ struct devino *k = xmalloc(d->n * sizeof *k);
	for (size_t i = 0; i < d->n; i++)
		k[i] = (struct devino){ d->v[i].st.st_dev, d->v[i].st.st_ino };
	qsort(k, d->n, sizeof *k, cmp_devino);
	for (size_t i = 1; i < d->n; i++)
		if (cmp_devino(&k[i - 1], &k[i]) == 0)
			return true;
	return false;
}

/* The entries of text, all of them or none. */
static void parse_all(struct hashdisk *d, char *text)
{
	char *nl = strchr(text, '\n');
	size_t mlen = strlen(MAGIC);
	if (!nl || strncmp(text, MAGIC, mlen) != 0)
		return;
	*nl = '\0';
	if (strcmp(text + mlen, d->boot) != 0)
		return; /* another boot's */
	for (char *line = nl + 1; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break; /* a last line cut short */
		*nl = '\0';
		struct hashdisk_entry en;
		if (!parse_line(line, &en) || (keepable(&en) && d->n == HASHDISK_MAX)) {
			d->n = 0; /* not warden's: none taken */
			return;
		}
		if (keepable(&en))
			push(d, &en);
	}
	if (any_file_twice(d))
		d->n = 0; /* warden writes one entry a file: none taken */
	d->dirty = false;
}

static struct hashdisk *hashdisk_new(const char *boot)
{
	struct hashdisk *d = xcalloc(1, sizeof *d);
	d->dirfd = -1;
	snprintf(d->boot, sizeof d->boot, "%s", boot);
	return d;
}

struct hashdisk *hashdisk_parse(const char *boot, char *text)
{
	struct hashdisk *d = hashdisk_new(boot);
	parse_all(d, text);
	return d;
}

struct hashdisk *hashdisk_load(const char *cachedir)
{
	char boot[64];
	int dirfd = cachedir ? open(cachedir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (dirfd < 0 || !kernel_boot_id(boot, sizeof boot)) {
		if (dirfd >= 0)
			close(dirfd);
		return NULL;
	}
	_cleanup_free_ char *text = read_trusted(dirfd);
	struct hashdisk *d = text ? hashdisk_parse(boot, text) : hashdisk_new(boot);
	d->dirfd = dirfd;
	return d;
}

size_t hashdisk_count(const struct hashdisk *d)
{
	return d ? d->n : 0;
}

const struct hashdisk_entry *hashdisk_at(const struct hashdisk *d, size_t i)
{
	return &d->v[i];
}

bool hashdisk_find(const struct hashdisk *d, const struct stat *st, struct hashdisk_entry *out)
{
	for (size_t i = 0; d && i < d->n; i++)
		if (hashdisk_same_file(&d->v[i].st, st)) {
			*out = d->v[i];
			return true;
		}
	return false;
}

void hashdisk_put(struct hashdisk *d, const struct hashdisk_entry *en)
{
	if (!d || !keepable(en))
		return;
	/* one entry a file (dev, ino): a newer one takes the older's place */
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].st.st_dev == en->st.st_dev && d->v[i].st.st_ino == en->st.st_ino) {
			memmove(&d->v[i], &d->v[i + 1], (d->n - i - 1) * sizeof *d->v);
			d->n--;
			break;
		}
	if (d->n == HASHDISK_MAX) {
		memmove(&d->v[0], &d->v[1], (d->n - 1) * sizeof *d->v);
		d->n--;
	}
	push(d, en);
}

char *hashdisk_text(const struct hashdisk *d)
{
	struct sbuf b = { 0 };
	sb_printf(&b, MAGIC "%s\n", d->boot);
	for (size_t i = 0; i < d->n; i++) {
		const struct hashdisk_entry *en = &d->v[i];
		sb_printf(&b, "%ju %ju %jd %jd %ld %jd %ld %s %s %s\n", (uintmax_t)en->st.st_dev,
			  (uintmax_t)en->st.st_ino, (intmax_t)en->st.st_size,
			  (intmax_t)en->st.st_mtim.tv_sec, en->st.st_mtim.tv_nsec,
			  (intmax_t)en->st.st_ctim.tv_sec, en->st.st_ctim.tv_nsec, en->hex,
			  en->code_err ? "-" : en->code, en->interp);
	}
	return b.p;
}

void hashdisk_close(struct hashdisk *d)
{
	if (!d)
		return;
	if (d->dirty && d->dirfd >= 0) {
		_cleanup_free_ char *text = hashdisk_text(d);
		replace_beneath(d->dirfd, FILE_NAME, text);
	}
	if (d->dirfd >= 0)
		close(d->dirfd);
	free(d->v);
	free(d);
}
