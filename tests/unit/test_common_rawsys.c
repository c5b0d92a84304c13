/* test_common_rawsys.c - unit tests of src/common/rawsys.h and
 * fdpass_recv_raw, which the file reads' helper stands on while it runs on
 * the supervisor's memory: a failed call gives -errno and leaves the
 * caller's errno as it was; arguments reach the kernel as given (six of
 * them); rawsys_exit ends the process with its status; a descriptor
 * passed over a socket arrives, and a receive that fails says why
 * without errno. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/fdpass.h"
#include "src/common/rawsys.h"
#include "check.h"

static void test_errors(void)
{
	errno = 1234;
	CHECK(rawsys(SYS_close, -1) == -EBADF);
	CHECK(rawsys(SYS_openat, AT_FDCWD, "/nonexistent/rawsys", O_RDONLY) == -ENOENT);
	CHECK(!RAWSYS_NATIVE || errno == 1234); /* libc's syscall() elsewhere */
	/* a successful call returns its result */
	CHECK(rawsys(SYS_getpid) == getpid());
}

static void test_arguments(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	CHECK(rawsys(SYS_write, p[1], "raw", 3) == 3);
	char b[8] = "";
	CHECK(rawsys(SYS_read, p[0], b, sizeof b) == 3);
	CHECK(memcmp(b, "raw", 3) == 0);
	/* six arguments: sendto's address and its length among them */
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
	CHECK(rawsys(SYS_sendto, sv[0], "six", 3, MSG_NOSIGNAL, NULL, 0) == 3);
	CHECK(rawsys(SYS_recvfrom, sv[1], b, sizeof b, MSG_DONTWAIT, NULL, NULL) == 3);
	CHECK(memcmp(b, "six", 3) == 0);
	/* a descriptor passed, and a receive that fails */
	CHECK(fdpass_send(sv[0], "f", 1, p[1]) == 0);
	int fd = -2;
	CHECK(fdpass_recv_raw(sv[1], b, 1, &fd, 0) == 1 && fd >= 0 && fd != p[1]);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1 && read(p[0], b, 1) == 1 && b[0] == 'x');
	if (fd >= 0)
		close(fd);
	errno = 1234;
	CHECK(fdpass_recv_raw(sv[1], b, 1, &fd, MSG_DONTWAIT) == -EAGAIN && fd == -1);
	CHECK(!RAWSYS_NATIVE || errno == 1234); /* libc's syscall() elsewhere */
	CHECK(fdpass_recv(sv[1], b, 1, &fd, MSG_DONTWAIT) == -1 && errno == EAGAIN);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_exit(void)
{
	pid_t pid = fork();
	if (pid == 0)
		rawsys_exit(42);
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 42);
}

int main(void)
{
	test_errors();
	test_arguments();
	test_exit();
	return check_status();
}
