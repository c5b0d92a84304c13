/* test_sandbox_seccomp.c - which calls that make memory executable the
 * seccomp filter (src/sandbox/seccomp.c) hands to the supervisor: none
 * without the exec rules in the kernel (a notification would cost every
 * program's loading for nothing), and with them an mmap of a file with
 * PROT_EXEC and every mprotect adding PROT_EXEC (the filter cannot tell a
 * file's mapping from anonymous memory there), never an mmap of anonymous
 * memory or one without PROT_EXEC; and a file's times set, recorded by
 * path, through a descriptor only with `audit files`. The filter is
 * installed in a child;
 * a grandchild makes the calls while the child answers its notifications. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/sandbox/sandbox.h"
#include "check.h"

enum { MPROTECT_ANON, MMAP_ANON, MMAP_FILE, MMAP_FILE_NOEXEC, MPROTECT_FILE, UTIME_PATH, UTIME_FD,
       NCALLS };

/* The calls, each announced on w (its number) just before it is made. */
static void calls(int w)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char c;
	void *anon = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c = MPROTECT_ANON;
	(void)!write(w, &c, 1);
	(void)mprotect(anon, (size_t)page, PROT_READ | PROT_EXEC);
	c = MMAP_ANON;
	(void)!write(w, &c, 1);
	(void)mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = memfd_create("seccomp-test", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, page) < 0)
		_exit(2);
	c = MMAP_FILE;
	(void)!write(w, &c, 1);
	(void)mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	c = MMAP_FILE_NOEXEC;
	(void)!write(w, &c, 1);
	void *file = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, 0);
	c = MPROTECT_FILE;
	(void)!write(w, &c, 1);
	(void)mprotect(file, (size_t)page, PROT_READ | PROT_EXEC);
	c = UTIME_PATH;
	(void)!write(w, &c, 1);
	(void)utimensat(AT_FDCWD, "/nonexistent-warden-test", NULL, 0);
	c = UTIME_FD;
	(void)!write(w, &c, 1);
	(void)futimens(fd, NULL);
}

/* In the child, under the filter: the calls the grandchild was notified
 * for, as bits; 100 and up: the test could not run. */
static int watch(const struct sandbox_spec *s)
{
	struct werr e = { 0 };
	int listener, p[2];
	if (seccomp_install(s, &listener, &e) < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return 100;
	pid_t g = fork();
	if (g < 0)
		return 101;
	if (g == 0) {
		close(p[0]);
		calls(p[1]);
		_exit(0);
	}
	close(p[1]);
	int mask = 0, cur = -1;
	bool done = false;
	while (!done) {
		struct pollfd f[2] = { { .fd = listener, .events = POLLIN }, { .fd = p[0], .events = POLLIN } };
		if (poll(f, 2, 10000) <= 0)
			return 102;
		unsigned char c;
		ssize_t n;
		while ((n = read(p[0], &c, 1)) == 1)
			cur = c;
		done = n == 0;
		if (f[0].revents & POLLIN) {
			struct seccomp_notif req;
			memset(&req, 0, sizeof req);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
				return 103;
			if (cur >= 0)
				mask |= 1 << cur;
			struct seccomp_notif_resp resp = { .id = req.id,
							   .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
				return 104;
			done = false;
		}
	}
	int st;
	if (waitpid(g, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 105;
	return mask;
}

/* The calls notified under the filter of kind k, as bits; -1: not run. */
static int notified(struct seccomp_kind k)
{
	struct werr e = { 0 };
	struct sandbox_spec s;
	memset(&s, 0, sizeof s);
	if (seccomp_prepare(k, NULL, &s.seccomp_prog, &s.seccomp_len, &e) < 0) {
		fprintf(stderr, "seccomp_prepare: %s\n", e.msg);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(watch(&s));
	free(s.seccomp_prog);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) >= 100) {
		fprintf(stderr, "the filter's child failed (status %d)\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	return WEXITSTATUS(st);
}

int main(void)
{
	/* without the rules in the kernel: not one of these goes by the
	 * supervisor (strict mode has its own mmap rule, tested by the
	 * integration tests) */
	CHECK(notified((struct seccomp_kind){ 0 }) == 0);
	/* the file operations' record: a file's times set by its path; through
	 * a descriptor (futimens) only with `audit files` (fd_times) */
	CHECK(notified((struct seccomp_kind){ .files = true, .made = true }) == 1 << UTIME_PATH);
	CHECK(notified((struct seccomp_kind){ .files = true, .fd_times = true }) ==
	      (1 << UTIME_PATH | 1 << UTIME_FD));
	/* with them: a file's mmap with PROT_EXEC, and mprotect adding it */
	int want = 1 << MPROTECT_ANON | 1 << MMAP_FILE | 1 << MPROTECT_FILE;
	CHECK(notified((struct seccomp_kind){ .kernel = true }) == want);
	/* strict's mmap rule and the kernel's together: the same calls */
	CHECK(notified((struct seccomp_kind){ .kernel = true, .strict = true }) == want);
	CHECK(notified((struct seccomp_kind){ .strict = true }) == 1 << MMAP_FILE);
	return check_status_counted("sandbox-seccomp");
}
