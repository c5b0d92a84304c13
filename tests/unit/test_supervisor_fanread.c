/* test_supervisor_fanread.c - unit tests of the file reads' helper
 * (src/supervisor/fanread.c), the clone that shares the supervisor's
 * memory: given the user and mount namespaces of a process that made
 * them (a tmpfs root, as a sandbox's), it marks their mounts and reports
 * a file that process read, by its path inside; a helper whose socket closes before it was told
 * anything ends; the next helper's start waits for the last one (their
 * stack is one) and reaps it. Skipped where the kernel refuses a user
 * namespace or fanotify marks in one (before Linux 6.8). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/rawsys.h"
#include "src/common/util.h"
#include "src/supervisor/fanread.h"
#include "check.h"

#define SKIP 77

static char dir[] = "/tmp/warden-test-fanread-XXXXXX";

static void say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(1);
}

static char heard(int fd)
{
	char c = 0;
	return read(fd, &c, 1) == 1 ? c : 0;
}

static void write_map(const char *what, unsigned id)
{
	char path[64], map[64];
	snprintf(path, sizeof path, "/proc/self/%s", what);
	snprintf(map, sizeof map, "0 %u 1\n", id);
	if (write_file(path, map) < 0)
		_exit(1);
}

static bool made(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, "read me\n", 8) == 8;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A process in new user and mount namespaces whose root is a tmpfs of
 * theirs (as a sandbox's is: the helper marks the root's mount, which
 * must be the namespace's own), with the file at /tmp/readme: says 'n'
 * once there, reads the file when told 'r' and says 'd', ends when told
 * 'e'. */
static pid_t reader(const char *root, int to[2], int from[2])
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	close(to[1]);
	close(from[0]);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		say(from[1], 'x');
		_exit(1);
	}
	(void)write_file("/proc/self/setgroups", "deny");
	write_map("uid_map", uid);
	write_map("gid_map", gid);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", root, "tmpfs", 0, "mode=0755") < 0 || chdir(root) < 0 ||
	    mkdir("old", 0700) < 0 || mkdir("tmp", 0755) < 0 ||
	    !made("tmp/readme") ||
	    syscall(SYS_pivot_root, ".", "old") < 0 || umount2("/old", MNT_DETACH) < 0 ||
	    chdir("/") < 0) {
		say(from[1], 'x');
		_exit(1);
	}
	say(from[1], 'n');
	char c = heard(to[0]);
	if (c == 'r') {
		int fd = open("/tmp/readme", O_RDONLY | O_CLOEXEC);
		char b[8];
		if (fd >= 0 && read(fd, b, sizeof b) >= 0)
			close(fd);
		say(from[1], 'd');
		c = heard(to[0]);
	}
	_exit(0);
}

static int ns_fd(pid_t pid, const char *ns)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* the helper's messages until one names the file, for at most 5 s */
static bool reported(int sock)
{
	for (int i = 0; i < 50; i++) {
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		if (poll(&pf, 1, 100) != 1)
			continue;
		struct fanread_msg m;
		ssize_t n = recv(sock, &m, sizeof m - 1, 0);
		if (n <= (ssize_t)sizeof m.pid)
			return false;
		((char *)&m)[n] = '\0';
		if (strcmp(m.path, "/tmp/readme") == 0)
			return true;
	}
	return false;
}

int main(void)
{
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	struct werr e = { 0 };
	/* a helper told nothing: it ends when its socket closes */
	int s1 = -1;
	pid_t h1 = fanread_spawn("/home/agent", &s1, &e);
	CHECK(h1 > 0 && s1 >= 0);
	close(s1);
	/* the next one waits for it, and reaps it */
	int s2 = -1;
	pid_t h2 = fanread_spawn("/home/agent", &s2, &e);
	CHECK(h2 > 0 && h2 != h1 && s2 >= 0);
	if (RAWSYS_NATIVE) /* a fork elsewhere: no stack shared, none waited for */
		CHECK(waitpid(h1, NULL, WNOHANG) == -1 && errno == ECHILD);

	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return perror("pipe"), 1;
	pid_t r = reader(dir, to, from);
	close(to[0]);
	close(from[1]);
	int rc = 0;
	if (heard(from[0]) != 'n') {
		printf("skipped: no user namespace with a tmpfs root here\n");
		rc = SKIP;
	} else {
		int userns = ns_fd(r, "user"), mntns = ns_fd(r, "mnt");
		CHECK(userns >= 0 && mntns >= 0 && fanread_enter(s2, userns, mntns) == 0);
		close(userns);
		close(mntns);
		if (fanread_ready(h2, &s2, &e) < 0) {
			printf("skipped: %s\n", e.msg);
			rc = SKIP;
		} else {
			say(to[1], 'r');
			CHECK(heard(from[0]) == 'd');
			CHECK(reported(s2));
		}
	}
	say(to[1], 'e');
	waitpid(r, NULL, 0);
	fanread_end(h2);
	if (s2 >= 0)
		close(s2);
	rmdir(dir);
	return rc && !failures ? rc : check_status();
}
