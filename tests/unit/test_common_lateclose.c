/* test_common_lateclose.c - unit tests of src/common/lateclose.c: the caller
 * does not wait for a close that blocks (a lingering TCP socket on loopback
 * stands for an inotify instance's grace period), fds handed over are
 * closed in the caller at once and by the closing process after, the
 * closing process lets go of the caller's other fds at once, not when its
 * slow close is over (what `$(warden run ...)` waits on), a synced fd stays
 * the caller's until late_close_wait, and rounds back to back in one
 * process each get a closing process of their own. A closing process
 * whose close_range fails (this file's syscall stands in for libc's and
 * refuses it) still closes what it was handed: it never keeps the gate
 * that holds it back until the caller let go. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/common/lateclose.h"
#include "check.h"

/* libc's syscall, found before any closing process runs (that one shares
 * this memory: no lookups there), and whether close_range fails. */
static long (*real_syscall)(long, ...);
static volatile int refuse_close_range;

long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_close_range && refuse_close_range)
		return -1; /* (errno left alone: the closing process's is the caller's) */
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Does the reader of a pipe see its end within ms? */
static bool eof_within(int rfd, int ms)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	if (poll(&p, 1, ms) != 1)
		return false;
	char b;
	return read(rfd, &b, 1) == 0;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* A connected TCP socket on loopback whose close blocks for about 3 s: its
 * peer (*peer, and the listener *lsn, kept open by the caller) never
 * reads, both buffers are full, and SO_LINGER waits for data that cannot
 * go. */
static int lingering_socket(int *peer, int *lsn)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof a;
	*lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lsn < 0 || bind(*lsn, (struct sockaddr *)&a, sizeof a) < 0 || listen(*lsn, 1) < 0 ||
	    getsockname(*lsn, (struct sockaddr *)&a, &alen) < 0)
		return -1;
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c < 0 || (connect(c, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS))
		return -1;
	*peer = accept4(*lsn, NULL, NULL, SOCK_CLOEXEC);
	if (*peer < 0)
		return -1;
	static char junk[65536];
	for (int i = 0; i < 4096; i++) {
		struct pollfd p = { .fd = c, .events = POLLOUT };
		if (poll(&p, 1, 100) != 1)
			break; /* full: the peer's window is shut */
		if (write(c, junk, sizeof junk) < 0 && errno != EAGAIN)
			return -1;
	}
	struct linger lg = { .l_onoff = 1, .l_linger = 3 };
	return setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) == 0 ? c : -1;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

static void round_trip(void)
{
	int listed[2], other[2], peer = -1, lsn = -1;
	CHECK(pipe2(listed, O_CLOEXEC) == 0);
	CHECK(pipe2(other, O_CLOEXEC) == 0);
	int ino = inotify_init1(IN_CLOEXEC);
	CHECK(ino >= 0);
	CHECK(inotify_add_watch(ino, "/tmp", IN_CREATE) >= 0);
	int slow = lingering_socket(&peer, &lsn);
	CHECK(slow >= 0);
	char path[] = "/tmp/warden-test-lateclose-XXXXXX";
	int synced = mkstemp(path);
	CHECK(synced >= 0);
	unlink(path);

	struct late_close l = { 0 };
	late_close_add(&l, listed[1]);
	late_close_add(&l, ino);
	late_close_add(&l, slow);
	late_close_add_synced(&l, synced);
	double t0 = now_ms();
	late_close_start(&l);
	/* not waited for: the socket's close takes 3 s (the bounds here leave
	 * room for a loaded machine, and stay under those 3 s) */
	CHECK(now_ms() - t0 < 1500);
	/* the caller's copies of what was handed over are gone at once */
	CHECK(!is_open(listed[1]));
	CHECK(!is_open(ino));
	CHECK(!is_open(slow));
	/* the synced one is the waiter's to close */
	CHECK(is_open(synced));
	/* the caller closes its own end of the other pipe: the closing
	 * process, which got a copy of every fd, let go of it at once, while
	 * its close of the socket still waits */
	close(other[1]);
	CHECK(eof_within(other[0], 2000));
	CHECK(eof_within(listed[0], 2000));
	late_close_wait(&l);
	CHECK(!is_open(synced));
	close(listed[0]);
	close(other[0]);
	close(peer);
	close(lsn);
}

/* Every close_range refused in the closing process: what it was handed is
 * closed all the same (the write end of a pipe here: its reader sees the
 * end), and it ends. */
static void close_range_refused(void)
{
	int p[2];
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	struct late_close l = { 0 };
	late_close_add(&l, p[1]);
	refuse_close_range = 1;
	late_close_start(&l);
	CHECK(eof_within(p[0], 3000));
	refuse_close_range = 0;
	late_close_wait(&l);
	close(p[0]);
}

int main(void)
{
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!real_syscall) {
		fprintf(stderr, "test: dlsym syscall: %s\n", dlerror());
		return 2;
	}
	close_range_refused();
	round_trip();
	round_trip(); /* while the first closing process still waits */
	/* nothing handed over: nothing started, nothing to wait for */
	struct late_close l = { 0 };
	late_close_add(&l, -1);
	late_close_start(&l);
	late_close_wait(&l);
	CHECK(l.n == 0);
	return check_status();
}
