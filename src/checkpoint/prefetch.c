/* prefetch.c - the small regular files of one directory read and hashed
 * for a checkpoint on two threads (prefetch.h). The jobs are taken one at
 * a time under a mutex by whichever thread is free; the walk's thread
 * takes its share too, so a worker that is slow to be scheduled costs
 * nothing but its help. */
#include "prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bgjob.h"
#include "../common/cpupin.h"
#include "../common/util.h"

ssize_t pf_read_small(int fd, char *buf, size_t size)
{
	size_t n = 0;
	while (n < size) {
		ssize_t r = pread(fd, buf + n, size - n, (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

bool pf_unchanged(const struct stat *s, const struct stat *b, ssize_t n, bool chmodded)
{
	return b->st_ino == s->st_ino && b->st_dev == s->st_dev && S_ISREG(b->st_mode) &&
	       b->st_size == s->st_size && b->st_mtim.tv_sec == s->st_mtim.tv_sec &&
	       b->st_mtim.tv_nsec == s->st_mtim.tv_nsec && n <= s->st_size &&
	       (n < 0 || n == s->st_size) &&
	       (chmodded || (b->st_ctim.tv_sec == s->st_ctim.tv_sec &&
			     b->st_ctim.tv_nsec == s->st_ctim.tv_nsec));
}

/* Job i: opened as the walk opens a file (never through a symlink, without
 * blocking or taking a terminal), looked at through the open file, read
 * whole when it is a regular file of at most max bytes, and its fstat
 * after the read compared (pf_unchanged). */
static void read_one(struct prefetch *p, size_t i)
{
	struct pf_job *j = &p->v[i];
	char *buf = p->data + i * (p->max + 1);
	j->status = PF_BY_NAME;
	int fd = openat(p->dirfd, p->names + j->name,
			CKPT_OPEN_FLAGS);
	if (fd < 0)
		return;
	struct stat b;
	ssize_t n;
	if (fstat(fd, &j->s) < 0 || !S_ISREG(j->s.st_mode) || j->s.st_size > (off_t)p->max) {
		/* left to the walk's look by name */
	} else if ((n = pf_read_small(fd, buf, (size_t)j->s.st_size)) < 0 || fstat(fd, &b) < 0) {
		j->err = errno;
		j->status = errno == ESPIPE || errno == EISDIR ? PF_CHANGED : PF_FAILED;
	} else if (!pf_unchanged(&j->s, &b, n, false)) {
		j->status = PF_CHANGED;
	} else {
		j->n = (size_t)n;
		sha256_hex(buf, j->n, j->hash);
		j->status = PF_READ;
	}
	close(fd);
}

/* Take and do jobs of the open batch until none is left; mu held on entry
 * and on return, not while a job is done. */
static void work(struct prefetch *p)
{
	while (p->open && p->next < p->n) {
		size_t i = p->next++;
		p->inflight++;
		pthread_mutex_unlock(&p->mu);
		read_one(p, i);
		pthread_mutex_lock(&p->mu);
		p->inflight--;
	}
}

static void *worker(void *arg)
{
	struct prefetch *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->quit) {
		if (p->open && p->next < p->n) {
			work(p);
			if (!p->inflight)
				pthread_cond_signal(&p->done);
			continue;
		}
		pthread_cond_wait(&p->go, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void prefetch_init(struct prefetch *p, size_t max)
{
	memset(p, 0, sizeof *p);
	p->max = max;
	p->dirfd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->may_start = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

static void worker_start(struct prefetch *p)
{
	p->may_start = false;
	/* the worker takes no signal: they stay the walk's thread's; it may
	 * run on every CPU of the user's (cpupin.h) */
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0)
		return;
	cpupin_thread_attr(&a);
	p->worker = thread_create_blocked(&p->thread, &a, worker, p) == 0;
	pthread_attr_destroy(&a);
}

void prefetch_free(struct prefetch *p)
{
	if (p->worker) {
		pthread_mutex_lock(&p->mu);
		p->quit = true;
		pthread_cond_signal(&p->go);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	free(p->names);
	free(p->data);
	memset(p, 0, sizeof *p);
}

void prefetch_add(struct prefetch *p, const char *name, const char *rel)
{
	size_t nl = strlen(name) + 1, rl = strlen(rel) + 1;
	if (p->names_len + nl + rl > p->names_cap) {
		p->names_cap = (p->names_len + nl + rl) * 2;
		p->names = xrealloc(p->names, p->names_cap);
	}
	struct pf_job *j = &p->v[p->n++];
	*j = (struct pf_job){ .name = p->names_len, .rel = p->names_len + nl };
	memcpy(p->names + p->names_len, name, nl);
	memcpy(p->names + p->names_len + nl, rel, rl);
	p->names_len += nl + rl;
}

void prefetch_run(struct prefetch *p, int dirfd)
{
	if (p->n > p->slots) {
		while (p->slots < p->n)
			p->slots = p->slots ? p->slots * 2 : 4;
		free(p->data); /* the last batch's, read already */
		p->data = xmalloc(p->slots * (p->max + 1));
	}
	if (p->may_start && p->n > 1)
		worker_start(p);
	pthread_mutex_lock(&p->mu);
	p->dirfd = dirfd;
	p->next = 0;
	p->open = true;
	if (p->worker && p->n > 1)
		pthread_cond_signal(&p->go);
	work(p);
	p->open = false;
	while (p->inflight)
		pthread_cond_wait(&p->done, &p->mu);
	p->dirfd = -1;
	pthread_mutex_unlock(&p->mu);
}

void prefetch_clear(struct prefetch *p)
{
	p->n = 0;
	p->names_len = 0;
}
