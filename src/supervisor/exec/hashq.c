/* hashq.c - worker threads that hash the files of execs (hashq.h). A job
 * opens its file for reading itself (an open can block on a slow file
 * system, or fail on a lease: O_NONBLOCK; a file warden may not read, an
 * execute-only one, is opened inside the sandbox's user namespace by
 * nsread.h), reads its first bytes, and hashes it within the job's size
 * and time bounds, and an ELF file's loaded segments too (elfhash.h: read
 * again from the page cache the file's hash just filled). Workers start on demand up to
 * the maximum and stay for the session; a job abandoned by its submitter
 * (its time is up) is stopped at the worker's next read. */
#include "hashq.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/cpupin.h"
#include "../../common/elfhash.h"
#include "../../common/util.h"
#include "nsread.h"

struct hashq {
	pthread_mutex_t mu;
	pthread_cond_t work, gone;
	struct hash_job *head, *tail;  /* waiting */
	struct hash_job *done;         /* finished, newest first */
	unsigned workers, idle, max;
	bool quit;
	int efd;
	struct nsread *reader;
};

struct hash_job *hash_job_new(int fd, unsigned long long max, unsigned timeout_ms, void *owner)
{
	struct hash_job *j = xcalloc(1, sizeof *j);
	j->fd = fd;
	j->max = max ? max : ~0ULL;
	j->deadline = mono_after_ms(timeout_ms);
	j->owner = owner;
	j->err = EINPROGRESS;
	j->code_err = ENOEXEC;
	return j;
}

void hash_job_free(struct hash_job *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	free(j);
}

void hash_job_abandon(struct hash_job *j)
{
	j->owner = NULL;
	j->stop = 1;
}

/* The code hash of an ELF file whose file hash is in (the same bounds). */
void hash_job_code(struct hash_job *j, int rfd)
{
	j->code_err = ENOEXEC;
	if (j->headlen < 4 || memcmp(j->head, "\177ELF", 4) != 0)
		return;
	j->code_err = elfhash_fd(rfd, (uint64_t)j->st.st_size, j->max, &j->deadline, &j->stop,
				 j->code, &j->code_why) < 0 ? errno : 0;
}

/* The work of one job, outside the lock. */
static void run_job(struct hash_job *j, struct nsread *reader)
{
	int rfd = nsread_reopen(reader, j->fd, &j->deadline);
	if (rfd < 0) {
		j->err = errno;
		return;
	}
	int bad = fstat(rfd, &j->st) < 0 ? errno : !S_ISREG(j->st.st_mode) ? EINVAL : 0;
	if (bad) {
		j->err = bad;
		close(rfd);
		return;
	}
	ssize_t h = pread(rfd, j->head, sizeof j->head, 0);
	j->headlen = h > 0 ? (size_t)h : 0;
	if ((unsigned long long)j->st.st_size > j->max)
		j->err = EFBIG;
	else
		j->err = sha256_fd_bounded(rfd, j->max, &j->deadline, &j->stop, j->hex) < 0 ? errno : 0;
	if (j->err == 0 && !j->no_code)
		hash_job_code(j, rfd);
	close(rfd);
}

static void *worker(void *arg)
{
	struct hashq *q = arg;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->head && !q->quit)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->quit)
			break;
		struct hash_job *j = q->head;
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		q->idle--;
		pthread_mutex_unlock(&q->mu);
		if (j->stop)
			j->err = ECANCELED;
		else
			run_job(j, q->reader);
		pthread_mutex_lock(&q->mu);
		q->idle++;
		j->next = q->done;
		q->done = j;
		uint64_t one = 1;
		(void)!write(q->efd, &one, sizeof one);
	}
	q->workers--;
	q->idle--;
	pthread_cond_broadcast(&q->gone);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct hashq *hashq_new(unsigned max_workers, struct nsread *reader)
{
	struct hashq *q = xcalloc(1, sizeof *q);
	q->reader = reader;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0) {
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	/* the end's wait for the workers on the monotonic clock: a step of
	 * the wall clock (NTP, an admin) neither stretches nor cuts it */
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->gone, &ca);
	pthread_condattr_destroy(&ca);
	q->max = max_workers ? max_workers : 1;
	return q;
}

int hashq_fd(const struct hashq *q)
{
	return q->efd;
}

void hashq_submit(struct hashq *q, struct hash_job *j)
{
	j->next = NULL;
	pthread_mutex_lock(&q->mu);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	if (q->idle == 0 && q->workers < q->max) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		cpupin_thread_attr(&a); /* every CPU of the user's (cpupin.h) */
		if (pthread_create(&t, &a, worker, q) == 0) {
			q->workers++;
			q->idle++;
		}
		pthread_attr_destroy(&a);
	}
	if (q->workers == 0) {
		/* no thread to be had: the job fails at once rather than wait
		 * for nobody */
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		j->err = EAGAIN;
		j->next = q->done;
		q->done = j;
		uint64_t one = 1;
		(void)!write(q->efd, &one, sizeof one);
	}
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
}

struct hash_job *hashq_done(struct hashq *q)
{
	uint64_t n;
	(void)!read(q->efd, &n, sizeof n);
	pthread_mutex_lock(&q->mu);
	struct hash_job *j = q->done;
	if (j)
		q->done = j->next;
	bool more = q->done != NULL;
	pthread_mutex_unlock(&q->mu);
	if (more) {
		uint64_t one = 1;
		(void)!write(q->efd, &one, sizeof one);
	}
	return j;
}

bool hashq_free(struct hashq *q)
{
	if (!q)
		return true;
	pthread_mutex_lock(&q->mu);
	q->quit = true;
	for (struct hash_job *j = q->head; j; j = j->next)
		j->stop = 1;
	pthread_cond_broadcast(&q->work);
	struct timespec until = mono_after_ms(HASHQ_END_WAIT_MS);
	while (q->workers > 0)
		if (pthread_cond_timedwait(&q->gone, &q->mu, &until) == ETIMEDOUT)
			break;
	bool stuck = q->workers > 0;
	pthread_mutex_unlock(&q->mu);
	if (stuck)
		return false; /* a worker still reads: it keeps the queue */
	struct hash_job *lists[2] = { q->head, q->done };
	for (int i = 0; i < 2; i++)
		for (struct hash_job *j = lists[i], *next; j; j = next) {
			next = j->next;
			hash_job_free(j);
		}
	close(q->efd);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->gone);
	free(q);
	return true;
}
