/* test_supervisor_exec_immutable.c - unit tests of the one rule of "the
 * agent cannot change this file" (src/supervisor/exec/immutable.c), shared
 * by the exec pipeline and the rules the kernel enforces: a file on a
 * writable mount never is; on a read-only mount a file of one link is; a
 * hard link is in the system directories, or on a device no writable mount
 * is on, and never when the writable devices are unknown (the kernel's
 * path); the file's own mount flags through fstatvfs (a temporary file:
 * writable, so not immutable). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "src/supervisor/exec/immutable.h"
#include "check.h"

static struct stat file(dev_t dev, nlink_t links)
{
	struct stat st = { .st_dev = dev, .st_nlink = links, .st_mode = S_IFREG | 0755 };
	return st;
}

int main(void)
{
	const dev_t wdev[] = { 7, 9 };
	struct stat one = file(7, 1), linked_w = file(7, 2), linked_ro = file(3, 2), linked_w9 = file(9, 3);

	/* a writable mount: never, whatever the rest */
	CHECK(!exec_immutable_rule(0, &one, "/usr/bin/true", wdev, 2));
	CHECK(!exec_immutable_rule(ST_NOEXEC, &linked_ro, "/usr/bin/true", NULL, 0));
	/* read-only, one link: yes, even on a writable device's number */
	CHECK(exec_immutable_rule(ST_RDONLY, &one, "/work/x", wdev, 2));
	CHECK(exec_immutable_rule(ST_RDONLY, &one, NULL, NULL, 0));
	/* a hard link in a system directory: yes */
	for (const char *const *d = (const char *const[]){ "/usr/bin/x", "/bin/x", "/sbin/x",
		"/lib/x.so", "/lib32/x", "/lib64/ld.so", "/libx32/x", "/etc/x", "/usr", NULL }; *d; d++) {
		CHECK(exec_immutable_rule(ST_RDONLY, &linked_w, *d, wdev, 2));
		CHECK(exec_immutable_rule(ST_RDONLY, &linked_w, *d, NULL, 0));
	}
	/* ... but not in a look-alike of one, nor with no name */
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_w, "/usrx/bin/x", wdev, 2));
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_w, "/opt/usr/x", wdev, 2));
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_w, NULL, wdev, 2));
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_w, "", wdev, 2));
	/* a hard link elsewhere: on a writable device no, on another yes */
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_w, "/work/x", wdev, 2));
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_w9, "/work/x", wdev, 2));
	CHECK(exec_immutable_rule(ST_RDONLY, &linked_ro, "/work/x", wdev, 2));
	CHECK(exec_immutable_rule(ST_RDONLY, &linked_ro, "/work/x", wdev, 0));
	/* the writable devices unknown: any device may be one */
	CHECK(!exec_immutable_rule(ST_RDONLY, &linked_ro, "/work/x", NULL, 0));
	CHECK(!exec_immutable_rule(ST_RDONLY | ST_NOSUID, &linked_ro, "/opt/x", NULL, 0));

	/* through fstatvfs: a temporary file is on a writable mount */
	char tmpl[] = "/tmp/warden-immutable-XXXXXX";
	int fd = mkstemp(tmpl);
	CHECK(fd >= 0);
	if (fd >= 0) {
		struct stat st;
		struct statvfs v;
		CHECK(fstat(fd, &st) == 0 && fstatvfs(fd, &v) == 0);
		int path = open(tmpl, O_PATH | O_CLOEXEC);
		CHECK(path >= 0);
		bool noexec = true;
		CHECK(!exec_file_immutable(path, &st, tmpl, NULL, 0, &noexec));
		CHECK(noexec == ((v.f_flag & ST_NOEXEC) != 0));
		CHECK(!exec_file_immutable(path, &st, tmpl, &st.st_dev, 1, NULL));
		close(path);
		unlink(tmpl);
		close(fd);
	}
	/* an fd that is none: not immutable, not noexec */
	bool noexec = true;
	struct stat st = file(1, 1);
	CHECK(!exec_file_immutable(-1, &st, "/usr/bin/true", NULL, 0, &noexec));
	CHECK(!noexec);
	return check_status_counted("supervisor-exec-immutable");
}
