/* wfault.c - a fault injector for the integration suite (t_faults.sh),
 * loaded into warden with LD_PRELOAD; each fault is asked for by an
 * environment variable, none by default:
 *   WFAULT_SECCOMP_PROBES=1  every seccomp(SECCOMP_SET_MODE_FILTER, flags,
 *                            NULL) fails with EPERM: libseccomp's probes of
 *                            the kernel, refused as a seccomp filter
 *                            outside warden's may refuse them (a real
 *                            filter, with a program, goes through);
 *   WFAULT_NOTIF_RECV=N      the Nth SECCOMP_IOCTL_NOTIF_RECV and every
 *                            one after it fail with EFAULT: a listener that
 *                            cannot be received from;
 *   WFAULT_READY=1           a sendmsg carrying 3 descriptors or more (sandbox
 *                            init's SEALED) fails with ENOBUFS; =2: one
 *                            carrying a single descriptor and over 4096
 *                            bytes (init's READY, its seccomp listener);
 *                            =3: SEALED goes out with its first int (the
 *                            message's type) READY's, 1: out of turn; =4:
 *                            SEALED goes out as its first two bytes alone,
 *                            no message (init told it was sent);
 *   WFAULT_EXITED=1          a sendmsg without descriptors whose first int
 *                            is 4 (sandbox init's EXITED, the command's
 *                            status) fails with ENOBUFS; =2: it goes out as
 *                            its first two bytes alone, no message;
 *   WFAULT_RUNNING_RESET=1   the first one-byte recv with MSG_PEEK (the
 *                            supervisor's look for init's "s") fails with
 *                            ECONNRESET, as the kernel reports once a peer
 *                            that ended with data unread, ahead of what it
 *                            sent before;
 *   WFAULT_GO=B              a send of the one byte B from the supervisor
 *                            to sandbox init ("c": its cgroups are set, "r":
 *                            start the command) fails with ENOBUFS;
 *   WFAULT_END_HOLD=MS       the supervisor's first kill(PID, SIGKILL) of
 *                            sandbox init (the PID its clone3 returned; as
 *                            the run ends, before the services stop, the
 *                            sweep and session.end) returns MS late: the
 *                            session's end held, a signal sent meanwhile
 *                            comes during it;
 *   WFAULT_SELF_MOVE=1       a write of "0" to a cgroup v1 `tasks` file (sandbox
 *                            init's move of itself into the session's
 *                            cgroups) fails with EACCES, said on stderr
 *                            ("wfault: refused PATH");
 *   WFAULT_EVENTFD=N         the Nth eventfd() and every one after it fail
 *                            with EMFILE: the supervisor out of descriptors
 *                            at that point of its start.
 * Counted per process (a fork inherits the count). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/seccomp.h>

long syscall(long nr, ...);
int ioctl(int fd, unsigned long req, ...);
ssize_t sendmsg(int fd, const struct msghdr *m, int flags);
ssize_t recv(int fd, void *buf, size_t len, int flags);
ssize_t send(int fd, const void *buf, size_t len, int flags);
int kill(pid_t pid, int sig);
ssize_t write(int fd, const void *buf, size_t len);
int eventfd(unsigned int initval, int flags);

static pid_t init_pid; /* sandbox init's, once cloned (WFAULT_END_HOLD) */

long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	const char *probes = getenv("WFAULT_SECCOMP_PROBES");
	if (nr == SYS_seccomp && probes && *probes == '1' && a[0] == SECCOMP_SET_MODE_FILTER &&
	    a[2] == 0) {
		errno = EPERM;
		return -1;
	}
	long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	long r = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == SYS_clone3 && r > 0)
		init_pid = (pid_t)r; /* the supervisor's clone of sandbox init */
	return r;
}

static int recvs, eventfds;

int eventfd(unsigned int initval, int flags)
{
	const char *n = getenv("WFAULT_EVENTFD");
	if (n && ++eventfds >= atoi(n)) {
		errno = EMFILE;
		return -1;
	}
	int (*real)(unsigned int, int) = (int (*)(unsigned int, int))dlsym(RTLD_NEXT, "eventfd");
	return real(initval, flags);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	const char *n = getenv("WFAULT_NOTIF_RECV");
	if (req == SECCOMP_IOCTL_NOTIF_RECV && n && ++recvs >= atoi(n)) {
		errno = EFAULT;
		return -1;
	}
	int (*real)(int, unsigned long, ...) = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
											      "ioctl");
	return real(fd, req, arg);
}

static bool asked(const char *var)
{
	const char *v = getenv(var);
	return v && *v == '1';
}

/* WFAULT_EXITED, read as the library loads: init sends EXITED after the
 * command's vfork, whose child set the sandbox's environment in init's
 * memory. */
static const char *exited;

__attribute__((constructor)) static void wfault_load(void)
{
	exited = getenv("WFAULT_EXITED");
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	const char *ready = getenv("WFAULT_READY");
	size_t len = 0;
	for (size_t i = 0; i < m->msg_iovlen; i++)
		len += m->msg_iov[i].iov_len;
	bool retype = false;
	for (struct cmsghdr *c = ready ? CMSG_FIRSTHDR(m) : NULL; c;
	     c = CMSG_NXTHDR((struct msghdr *)m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			bool sealed = c->cmsg_len >= CMSG_LEN(3 * sizeof(int));
			if ((ready[0] == '1' && sealed) ||
			    (ready[0] == '2' && c->cmsg_len == CMSG_LEN(sizeof(int)) && len > 4096)) {
				errno = ENOBUFS;
				return -1;
			}
			retype = retype || (ready[0] == '3' && sealed && m->msg_iovlen == 1 &&
					    m->msg_iov[0].iov_len >= sizeof(int));
			if (ready[0] == '4' && sealed && m->msg_iovlen == 1 && m->msg_iov[0].iov_len > 2) {
				ssize_t (*real_send)(int, const void *, size_t, int) =
					(ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
				return real_send(fd, m->msg_iov[0].iov_base, 2, flags) == 2
					       ? (ssize_t)len : -1;
			}
		}
	if (retype)
		*(int *)m->msg_iov[0].iov_base = 1;
	if (exited && !m->msg_controllen && m->msg_iovlen == 1 &&
	    m->msg_iov[0].iov_len > sizeof(int) && *(const int *)m->msg_iov[0].iov_base == 4) {
		if (exited[0] == '1') {
			errno = ENOBUFS;
			return -1;
		}
		if (exited[0] == '2') {
			ssize_t (*real_send)(int, const void *, size_t, int) =
				(ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
			return real_send(fd, m->msg_iov[0].iov_base, 2, flags) == 2 ? (ssize_t)len : -1;
		}
	}
	ssize_t (*real)(int, const struct msghdr *, int) =
		(ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	return real(fd, m, flags);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	const char *go = getenv("WFAULT_GO");
	if (go && len == 1 && go[0] && memcmp(buf, go, 1) == 0) {
		errno = ENOBUFS;
		return -1;
	}
	ssize_t (*real)(int, const void *, size_t, int) =
		(ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
	return real(fd, buf, len, flags);
}

static bool reset_told;

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	if ((flags & MSG_PEEK) && len == 1 && !reset_told && asked("WFAULT_RUNNING_RESET")) {
		reset_told = true;
		errno = ECONNRESET;
		return -1;
	}
	ssize_t (*real)(int, void *, size_t, int) =
		(ssize_t (*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
	return real(fd, buf, len, flags);
}

/* MS milliseconds, the signals that come meanwhile handled */
static void hold_ms(const char *ms_text)
{
	long ms = atol(ms_text);
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int kill(pid_t pid, int sig)
{
	static bool held;
	int (*real)(pid_t, int) = (int (*)(pid_t, int))dlsym(RTLD_NEXT, "kill");
	int r = real(pid, sig);
	const char *hold = getenv("WFAULT_END_HOLD");
	if (pid > 0 && pid == init_pid && sig == SIGKILL && hold && !held) {
		held = true;
		hold_ms(hold);
	}
	return r;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	ssize_t (*real)(int, const void *, size_t) =
		(ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (len == 1 && *(const char *)buf == '0' && asked("WFAULT_SELF_MOVE")) {
		char link[64], path[512];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, path, sizeof path - 1);
		path[n > 0 ? n : 0] = '\0';
		size_t l = strlen(path);
		if (l > 6 && strcmp(path + l - 6, "/tasks") == 0) {
			char say[600];
			int m = snprintf(say, sizeof say, "wfault: refused %s\n", path);
			real(2, say, m > 0 && (size_t)m < sizeof say ? (size_t)m : 0);
			errno = EACCES;
			return -1;
		}
	}
	return real(fd, buf, len);
}
