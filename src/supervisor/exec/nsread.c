/* nsread.c - the reader of files warden may not read (nsread.h): a helper
 * in the sandbox's user namespace, on a SEQPACKET socket. A request is a
 * sequence number with the file's O_PATH fd (SCM_RIGHTS); the answer the
 * same number, 0 or an errno, and the file opened O_RDONLY when 0. An
 * answer that comes after its asker gave up is read and dropped by the
 * next request (its number is not the one asked). */
#include "nsread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/fdpass.h"
#include "../../common/util.h"
#include "../../sandbox/sandbox.h"

struct nsread {
	pthread_mutex_t mu;
	int userns, sock;
	pid_t pid;
	uint32_t seq;
	bool failed; /* the helper could not be started: said once */
};

struct msg {
	uint32_t seq;
	int err;
};

/* The helper's body: only system calls (forked from a process with
 * threads). Every capability in the sandbox's user namespace, used for
 * one thing: reopening a file it is given, for reading. */
static __attribute__((noreturn)) void serve(int userns, int sock, pid_t parent)
{
	nshelper_enter("warden-nsread", userns, -1, 0, sock, parent);
	for (;;) {
		struct msg m;
		int fd;
		ssize_t n = fdpass_recv(3, &m, sizeof m, &fd, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof m)
			_exit(0); /* the supervisor is gone, or speaks nonsense */
		int rfd = -1;
		m.err = 0;
		if (fd < 0) {
			m.err = EBADF;
		} else {
			char self[32] = "/proc/self/fd/", digits[12];
			size_t nd = 0, at = strlen(self);
			for (unsigned v = (unsigned)fd; nd == 0 || v; v /= 10)
				digits[nd++] = (char)('0' + v % 10);
			while (nd)
				self[at++] = digits[--nd];
			self[at] = '\0';
			rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
			m.err = rfd < 0 ? errno : 0;
			close(fd);
		}
		int r = fdpass_send(3, &m, sizeof m, rfd);
		if (rfd >= 0)
			close(rfd);
		if (r < 0)
			_exit(0);
	}
}

struct nsread *nsread_new(int userns)
{
	struct nsread *r = xcalloc(1, sizeof *r);
	pthread_mutex_init(&r->mu, NULL);
	r->userns = userns >= 0 ? fcntl(userns, F_DUPFD_CLOEXEC, 3) : -1;
	r->sock = -1;
	return r;
}

void nsread_free(struct nsread *r)
{
	if (!r)
		return;
	if (r->sock >= 0)
		close(r->sock);
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	if (r->userns >= 0)
		close(r->userns);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* The helper, under r->mu; false when it cannot be had. */
static bool started(struct nsread *r)
{
	if (r->sock >= 0)
		return true;
	if (r->failed || r->userns < 0)
		return false;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		r->failed = true;
		return false;
	}
	if (pid == 0) {
		close(sv[0]);
		serve(r->userns, sv[1], parent);
	}
	close(sv[1]);
	r->sock = sv[0];
	r->pid = pid;
	return true;
}

/* Milliseconds until deadline, at least 0, at most a minute (a poll's). */
static int poll_ms(const struct timespec *d)
{
	long ms = ms_left(d);
	return ms > 60000 ? 60000 : (int)ms;
}

static int ask(struct nsread *r, int fd, const struct timespec *deadline)
{
	if (!started(r)) {
		errno = EACCES;
		return -1;
	}
	uint32_t seq = ++r->seq;
	struct msg q = { .seq = seq };
	if (fdpass_send(r->sock, &q, sizeof q, fd) < 0)
		return -1;
	for (;;) {
		struct pollfd pf = { .fd = r->sock, .events = POLLIN };
		int n = poll(&pf, 1, poll_ms(deadline));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct msg m;
		int got;
		ssize_t len = fdpass_recv(r->sock, &m, sizeof m, &got, MSG_DONTWAIT);
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (len != (ssize_t)sizeof m) {
			if (got >= 0)
				close(got);
			/* the helper is gone: no more asking */
			close(r->sock);
			r->sock = -1;
			r->failed = true;
			errno = EACCES;
			return -1;
		}
		if (m.seq != seq) {
			if (got >= 0)
				close(got); /* an answer to an asker who gave up */
			continue;
		}
		if (m.err || got < 0) {
			if (got >= 0)
				close(got);
			errno = m.err ? m.err : EBADF;
			return -1;
		}
		return got;
	}
}

int nsread_open(struct nsread *r, int fd, const struct timespec *deadline)
{
	pthread_mutex_lock(&r->mu);
	int got = ask(r, fd, deadline);
	int err = errno;
	pthread_mutex_unlock(&r->mu);
	errno = err;
	return got;
}
