/* lateclose.c - fds closed on a thread of their own (lateclose.h). */
#include "lateclose.h"

#include <unistd.h>

static int close_all(void *arg, struct werr *e)
{
	struct late_close *l = arg;
	for (size_t i = 0; i < l->n; i++) {
		if (l->sync[i])
			fsync(l->fd[i]);
		close(l->fd[i]);
	}
	return 0;
}

static void add(struct late_close *l, int fd, bool sync)
{
	if (fd < 0)
		return;
	if (l->job.started || l->n == LATE_CLOSE_MAX) {
		if (sync)
			fsync(fd);
		close(fd);
		return;
	}
	l->sync[l->n] = sync;
	l->fd[l->n++] = fd;
}

void late_close_add(struct late_close *l, int fd)
{
	add(l, fd, false);
}

void late_close_add_synced(struct late_close *l, int fd)
{
	add(l, fd, true);
}

void late_close_start(struct late_close *l)
{
	if (!l->job.started && l->n)
		bgjob_start(&l->job, close_all, l);
}

void late_close_wait(struct late_close *l)
{
	late_close_start(l);
	bgjob_join(&l->job);
	l->n = 0;
}
