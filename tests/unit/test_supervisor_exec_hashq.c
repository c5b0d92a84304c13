/* test_supervisor_exec_hashq.c - the exec hashes' worker threads
 * (src/supervisor/exec/hashq.c): a file's hash and head, a job past its
 * deadline, and the end's wait for a worker still busy, bounded on the
 * monotonic clock whatever the wall clock does (this test's clock_gettime
 * moves the wall clock, as an NTP step would). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/common/clock.h"
#include "src/supervisor/exec/hashq.h"
#include "src/supervisor/exec/nsread.h"
#include "check.h"

/* The queues here have no reader (hashq_new's NULL): never called. */
int nsread_open(struct nsread *r, int fd, const struct timespec *deadline)
{
	(void)r, (void)fd, (void)deadline;
	errno = EACCES;
	return -1;
}

/* Seconds added to the wall clock as this process reads it. */
static long wall_step;

/* Every clock_gettime of the test's objects, hashq.c's among them. */
int clock_gettime(clockid_t clk, struct timespec *ts)
{
	int rc = (int)syscall(SYS_clock_gettime, clk, ts);
	if (rc == 0 && clk == CLOCK_REALTIME)
		ts->tv_sec += wall_step;
	return rc;
}

static char dir[] = "/tmp/warden-hashq-XXXXXX";

static int path_fd(const char *name)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return open(p, O_PATH | O_CLOEXEC);
}

/* The next finished job, waiting up to 30 s for it. */
static struct hash_job *next_done(struct hashq *q)
{
	for (int i = 0; i < 3000; i++) {
		struct hash_job *j = hashq_done(q);
		if (j)
			return j;
		usleep(10000);
	}
	return NULL;
}

static void test_hash(void)
{
	char p[256];
	snprintf(p, sizeof p, "%s/small", dir);
	FILE *f = fopen(p, "w");
	CHECK(f && fputs("#!/bin/sh\necho hi\n", f) >= 0 && fclose(f) == 0);
	struct hashq *q = hashq_new(2, NULL);
	CHECK(q != NULL);
	hashq_submit(q, hash_job_new(path_fd("small"), 0, 5000, q));
	struct hash_job *j = next_done(q);
	CHECK(j && j->err == 0 && j->headlen == 18 && !memcmp(j->head, "#!/bin/sh\n", 10));
	/* sha256("#!/bin/sh\necho hi\n") */
	CHECK(j && !strcmp(j->hex, "299001868fb8c02fd431c336c6d058f5558c5dff5b5af5e6fe04b870a6a9cbba"));
	hash_job_free(j);
	CHECK(hashq_free(q));
}

/* A worker hashing a large file when the session ends, the wall clock
 * stepped an hour ahead meanwhile (or back: the same wait): the end waits
 * HASHQ_END_WAIT_MS for it, not an hour, nor until its job is done. */
static void test_end_wait(long step)
{
	char p[256];
	snprintf(p, sizeof p, "%s/large", dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 64LL << 30) == 0); /* 64 GiB, sparse */
	close(fd);
	struct hashq *q = hashq_new(1, NULL);
	hashq_submit(q, hash_job_new(path_fd("large"), 0, 20000, NULL));
	usleep(100000); /* the worker is reading */
	wall_step = step;
	double t0 = mono_ms();
	bool freed = hashq_free(q);
	double waited = mono_ms() - t0;
	wall_step = 0;
	CHECK(!freed); /* the worker is still busy: left behind */
	CHECK(waited >= HASHQ_END_WAIT_MS - 5 && waited < 2000);
	if (waited >= 2000)
		fprintf(stderr, "hashq_free waited %.0f ms (wall clock stepped %ld s)\n", waited, step);
	unlink(p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_hash();
	test_end_wait(-3600);
	test_end_wait(3600);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_status_counted("supervisor_exec_hashq");
}
