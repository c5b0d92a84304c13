/* hashq.h - SHA-256s of the files the sandbox execs, taken off the
 * supervisor's event loop by a few worker threads: a large file, a file on a
 * slow file system, or one held by a lease costs the loop nothing, and each
 * job is bounded in size and time. The loop learns of finished jobs through
 * an eventfd. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "../../common/hash.h"

#define HASH_HEAD_LEN 256 /* the first bytes a job also reads: a script's #! line */

struct hash_job {
	/* in, set before hashq_submit */
	int fd;                        /* O_PATH of the file; the job owns it */
	unsigned long long max;        /* bytes at most (EFBIG beyond) */
	struct timespec deadline;      /* CLOCK_MONOTONIC (ETIMEDOUT after) */
	void *owner;                   /* the submitter's; NULL once abandoned */
	bool no_code;                  /* no code hash wanted (code_err stays ENOEXEC) */
	/* out, set by the worker */
	int err;                       /* 0: hex is the SHA-256; else why not */
	char hex[SHA256_HEX_LEN];
	char head[HASH_HEAD_LEN];      /* the file's first bytes */
	size_t headlen;
	struct stat st;                /* of the file as read */
	/* its code hash (src/common/elfhash.h), for an ELF file: code_err 0
	 * and code the hex, else code_err ENOEXEC (no ELF) or why not, in
	 * code_why */
	int code_err;
	char code[SHA256_HEX_LEN];
	const char *code_why;
	/* the queue's */
	volatile int stop;
	struct hash_job *next;
};

struct hashq;
struct nsread;

/* A queue with up to max_workers threads, started when jobs wait. NULL when
 * its eventfd cannot be had. reader (NULL: none; not taken) opens the
 * files warden may not read, as the sandbox's own user (nsread.h). */
struct hashq *hashq_new(unsigned max_workers, struct nsread *reader);
/* Readable while finished jobs wait for hashq_done. */
int hashq_fd(const struct hashq *q);
/* A new job for fd (taken: closed with the job). */
struct hash_job *hash_job_new(int fd, unsigned long long max, unsigned timeout_ms, void *owner);
void hashq_submit(struct hashq *q, struct hash_job *j);
/* The next finished job, or NULL; the caller frees it (hash_job_free). */
struct hash_job *hashq_done(struct hashq *q);
/* The submitter no longer waits for j: a worker stops hashing it at its
 * next read, and hashq_done hands it back with owner NULL to be freed. */
void hash_job_abandon(struct hash_job *j);
void hash_job_free(struct hash_job *j);
/* The code hash of j's file, open for reading at rfd, once its file hash
 * and head are in (j->st, j->head): into code, code_err, code_why. */
void hash_job_code(struct hash_job *j, int rfd);
/* How long hashq_free waits for a worker still hashing (monotonic). */
#define HASHQ_END_WAIT_MS 200

/* Stop the workers; one still busy after HASHQ_END_WAIT_MS (stuck in a
 * read of a hung file system, or hashing a large file) is left behind
 * (the queue is then not freed, and false returned: the process ends soon
 * after). */
bool hashq_free(struct hashq *q);
