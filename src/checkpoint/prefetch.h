/* prefetch.h - the small regular files of one directory read and hashed
 * for a checkpoint on two threads (snapshot.c): the walk names them, the
 * batch is read by the walk's thread and a worker together while the
 * directory is open, and the walk's thread then records each in order,
 * alone. Also the reading of one small file and the check that it did not
 * change meanwhile, which the walk's own reads share. */
#pragma once
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../common/hash.h"

enum pf_status {
	PF_BY_NAME,   /* not read here: look at it by name (not opened, not a regular
		       * file by then, larger than the batch reads) */
	PF_READ,      /* read and hashed: s, n, hash, data */
	PF_CHANGED,   /* it changed while it was read */
	PF_FAILED,    /* a read or fstat failed: err */
};

struct pf_job {
	size_t name, rel;             /* offsets in the batch's names */
	enum pf_status status;
	int err;
	struct stat s;                /* the open file's, before the read */
	size_t n;                     /* bytes read (s.st_size) */
	char hash[SHA256_HEX_LEN];
};

/* How a checkpoint opens a workspace file, wherever it does: never through
 * a symlink, without blocking on a FIFO put in its place, without taking a
 * terminal. */
#define CKPT_OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

#define PF_BATCH 128

struct prefetch {
	struct pf_job v[PF_BATCH];
	size_t n;
	char *names;                  /* "NAME\0REL\0" per job */
	size_t names_len, names_cap;
	char *data;                   /* slots of max + 1 bytes, one a job: grown
				       * to the largest batch yet (a small workspace
				       * maps no 2 MB buffer a checkpoint) */
	size_t slots;
	size_t max;                   /* files up to this size read */
	int dirfd;                    /* the directory of the batch, while it is read */
	/* the worker, started at the first batch of two files or more: none
	 * when one CPU or it could not start (the walk's thread then reads
	 * the batch alone) */
	bool worker;
	bool may_start;               /* a second CPU, and no start tried yet */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	bool open;                    /* a batch is being read */
	size_t next;                  /* its next job to take */
	size_t inflight;              /* jobs taken and not done */
	bool quit;
};

/* Ready for files up to max bytes (at most STORE_SMALL_MAX); the worker
 * started by the first batch of two files or more, when there is a second
 * CPU (a workspace without one costs no thread). */
void prefetch_init(struct prefetch *p, size_t max);
/* Stop the worker; free. */
void prefetch_free(struct prefetch *p);

/* A file of the directory being walked, to read. */
void prefetch_add(struct prefetch *p, const char *name, const char *rel);
static inline bool prefetch_full(const struct prefetch *p) { return p->n == PF_BATCH; }
/* Read every job of the batch from dirfd, on both threads; each job's
 * status says what came of it. */
void prefetch_run(struct prefetch *p, int dirfd);
static inline const char *prefetch_name(const struct prefetch *p, size_t i)
{
	return p->names + p->v[i].name;
}
static inline const char *prefetch_rel(const struct prefetch *p, size_t i)
{
	return p->names + p->v[i].rel;
}
static inline const char *prefetch_data(const struct prefetch *p, size_t i)
{
	return p->data + i * (p->max + 1);
}
/* The batch emptied, for the next. */
void prefetch_clear(struct prefetch *p);

/* A small file of size bytes into buf (size + 1 bytes at least) from
 * offset 0: its length, less than size when it shrank (one that grew shows
 * in the fstat after); -1 with errno. Mostly one read. */
ssize_t pf_read_small(int fd, char *buf, size_t size);
/* b, the fstat after reading n bytes (-1: not read whole here) of the file
 * whose stat before was s: the same regular file, its size, mtime and
 * (unless chmodded: given u+r for the read) ctime as before, and all of it
 * read. */
bool pf_unchanged(const struct stat *s, const struct stat *b, ssize_t n, bool chmodded);
