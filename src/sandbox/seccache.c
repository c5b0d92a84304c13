/* seccache.c - the compiled seccomp filter kept in warden's cache directory
 * ($XDG_CACHE_HOME/warden, which no sandbox reaches: etc.c), one file per
 * kind, named after what it was made for (seccache.h says what makes its
 * key). The file: a header (magic, the full key, a SHA-256 of the file
 * with that field zeroed, the number of instructions) and the BPF program.
 * It is read through O_NOFOLLOW and taken only when it is a regular file
 * owned by the effective uid, writable by no group or other, of a size
 * that fits a filter, and when its key and checksum match; written through
 * a new file renamed into place (replace_beneath_n). */
#include "seccache.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <linux/filter.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../common/hash.h"
#include "config.h"

#define PREFIX "seccomp-"
#define MAGIC "warden-seccomp1\n"

struct seccache_head {
	char magic[16];
	char key[SHA256_HEX_LEN - 1];
	char sum[SHA256_HEX_LEN - 1];
	uint32_t insns;
	uint32_t zero;
};

/* The build-id note of the loaded object that holds this code. */
struct build_id {
	const void *addr; /* an address in the object */
	char hex[2 * 64 + 1];
};

static bool in_object(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && a >= lo && a - lo < p->p_memsz)
			return true;
	}
	return false;
}

/* The GNU build-id among the notes of segment p, as hex into id. */
static bool note_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *p, struct build_id *id)
{
	const unsigned char *n = (const unsigned char *)(info->dlpi_addr + p->p_vaddr);
	size_t off = 0, align = p->p_align == 8 ? 8 : 4;
	while (off + sizeof(ElfW(Nhdr)) <= p->p_memsz) {
		const ElfW(Nhdr) *h = (const ElfW(Nhdr) *)(n + off);
		size_t name = (h->n_namesz + align - 1) & ~(align - 1);
		size_t desc = (h->n_descsz + align - 1) & ~(align - 1);
		const unsigned char *d = n + off + sizeof *h + name;
		if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 &&
		    memcmp(n + off + sizeof *h, "GNU", 4) == 0 && h->n_descsz > 0 && h->n_descsz <= 64) {
			for (size_t i = 0; i < h->n_descsz; i++)
				snprintf(id->hex + 2 * i, 3, "%02x", d[i]);
			return true;
		}
		off += sizeof *h + name + desc;
	}
	return false;
}

static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct build_id *id = arg;
	if (!in_object(info, (uintptr_t)id->addr))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE && note_build_id(info, &info->dlpi_phdr[i], id))
			return 1;
	return 1; /* the object, without a build-id */
}

/* What a filter of kind k is made from: name (PREFIX, the build's digest
 * cut short, the kind's bits in hex) and key (the full digest). False when
 * warden's build cannot be told (no build-id): then nothing is cached. The
 * build-id changes with any change of the rules; the number after
 * "warden-seccomp" says so once more, raised when what a kind's filter
 * notifies changes (2: the owners, times, rmdir and mknod of `audit`; 3:
 * the socket families refused). */
static bool key_of(struct seccomp_kind k, char name[64], char key[SHA256_HEX_LEN])
{
	struct build_id id = { .addr = (const void *)key_of };
	struct utsname u;
	if (dl_iterate_phdr(find_build_id, &id) != 1 || !id.hex[0] || uname(&u) < 0)
		return false;
	_cleanup_free_ char *build = xasprintf("warden-seccomp 3\n%s\n%s\n%zu\n%s\n%s\n%s\n%s\n",
					       WARDEN_VERSION, id.hex, sizeof(struct sock_filter),
					       u.sysname, u.release, u.version, u.machine);
	char bd[SHA256_HEX_LEN];
	sha256_hex(build, strlen(build), bd);
	unsigned bits = (unsigned)k.files | (unsigned)k.strict << 1 | (unsigned)k.made << 2 |
			(unsigned)k.kernel << 3 | (unsigned)k.fd_times << 4;
	snprintf(name, 64, PREFIX "%.32s-%x", bd, bits);
	_cleanup_free_ char *full = xasprintf("%s\nkind %u\n", bd, bits);
	sha256_hex(full, strlen(full), key);
	return true;
}

/* The checksum of a file: its bytes with the sum field zeroed. */
static void sum_of(const unsigned char *file, size_t size, char out[SHA256_HEX_LEN])
{
	_cleanup_free_ unsigned char *copy = xmalloc(size);
	memcpy(copy, file, size);
	memset(copy + offsetof(struct seccache_head, sum), 0, sizeof((struct seccache_head *)0)->sum);
	sha256_hex(copy, size, out);
}

#define MAX_SIZE (sizeof(struct seccache_head) + BPF_MAXINSNS * sizeof(struct sock_filter))

/* The file's bytes when it is one to trust the content of, else NULL. */
static unsigned char *read_trusted(const char *path, size_t *size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size <= (off_t)sizeof(struct seccache_head) ||
	    st.st_size > (off_t)MAX_SIZE)
		return NULL;
	unsigned char *buf = xmalloc((size_t)st.st_size);
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return NULL;
	}
	*size = (size_t)st.st_size;
	return buf;
}

bool seccache_get(const char *cachedir, struct seccomp_kind k, void **prog, size_t *len)
{
	char name[64], key[SHA256_HEX_LEN], sum[SHA256_HEX_LEN];
	if (!cachedir || !key_of(k, name, key))
		return false;
	_cleanup_free_ char *path = xasprintf("%s/%s", cachedir, name);
	size_t size;
	_cleanup_free_ unsigned char *file = read_trusted(path, &size);
	if (!file)
		return false;
	struct seccache_head h;
	memcpy(&h, file, sizeof h);
	size_t body = size - sizeof h;
	if (memcmp(h.magic, MAGIC, sizeof h.magic) != 0 || memcmp(h.key, key, sizeof h.key) != 0 ||
	    h.zero != 0 || body % sizeof(struct sock_filter) != 0 ||
	    h.insns != body / sizeof(struct sock_filter))
		return false;
	sum_of(file, size, sum);
	if (memcmp(h.sum, sum, sizeof h.sum) != 0)
		return false;
	*prog = xmalloc(body);
	memcpy(*prog, file + sizeof h, body);
	*len = h.insns;
	return true;
}

/* The filters of other builds or kernels than name's kept at most: two
 * builds used in turn (an installed one and one being worked on) each keep
 * theirs rather than remove the other's every time. */
#define OTHERS_MAX 32

/* Remove the filters made for another build or kernel than name's, once
 * there are more than OTHERS_MAX of them. */
static void prune(int dirfd, const char *name)
{
	_cleanup_dir_ DIR *d = dir_open_at(dirfd, ".", 0);
	if (!d)
		return;
	size_t same = (size_t)(strrchr(name, '-') - name) + 1; /* all but the kind */
	_cleanup_strv_ struct strv others = { 0 };
	struct dirent *de;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) == 0 &&
		    strncmp(de->d_name, name, same) != 0)
			strv_push(&others, de->d_name);
	for (size_t i = 0; others.n > OTHERS_MAX && i < others.n; i++)
		unlinkat(dirfd, others.v[i], 0);
}

void seccache_put(const char *cachedir, struct seccomp_kind k, const void *prog, size_t len)
{
	char name[64], key[SHA256_HEX_LEN];
	if (!cachedir || !len || len > BPF_MAXINSNS || !key_of(k, name, key) ||
	    mkdir_p(cachedir, 0700, NULL) < 0)
		return;
	_cleanup_close_ int dirfd = open(cachedir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return;
	size_t size = sizeof(struct seccache_head) + len * sizeof(struct sock_filter);
	_cleanup_free_ unsigned char *file = xmalloc(size);
	struct seccache_head h = { .insns = (uint32_t)len };
	memcpy(h.magic, MAGIC, sizeof h.magic);
	memcpy(h.key, key, sizeof h.key);
	memcpy(file, &h, sizeof h);
	memcpy(file + sizeof h, prog, size - sizeof h);
	char sum[SHA256_HEX_LEN];
	sum_of(file, size, sum);
	memcpy(file + offsetof(struct seccache_head, sum), sum, sizeof h.sum);
	if (replace_beneath_n(dirfd, name, file, size) == 0)
		prune(dirfd, name);
}
