/* test_supervisor_exec_linkwalk.c - unit tests of the search for every
 * link of a hard-linked program on its mount (src/supervisor/exec/
 * linkwalk.c), from the host's root: two links in sibling directories are
 * found (the search widens one directory up); a symlink to it is no
 * link; a third one elsewhere on the mount is found as the search widens
 * again; a path with "..", a relative one, a file of one link and a wrong
 * mount id are refused. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/util.h"
#include "src/supervisor/exec/linkwalk.h"
#include "check.h"

static char tmpdir[] = "/tmp/warden-test-linkwalk-XXXXXX";

static uint64_t mnt_of(const char *path)
{
	struct statx sx;
	CHECK(statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) == 0);
	return sx.stx_mnt_id;
}

static bool all_here(int root, const char *rel)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, rel);
	struct stat st;
	CHECK(lstat(p, &st) == 0);
	return linkwalk_all_here(root, p, &st, mnt_of(p));
}

static void mk(const char *rel)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, rel);
	CHECK(mkdir(p, 0700) == 0);
}

static void ln(const char *from, const char *to)
{
	_cleanup_free_ char *a = xasprintf("%s/%s", tmpdir, from), *b = xasprintf("%s/%s", tmpdir, to);
	CHECK(link(a, b) == 0);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0);
	mk("pkg");
	mk("pkg/bin");
	mk("pkg/lib");
	mk("other");
	_cleanup_free_ char *prog = xasprintf("%s/pkg/lib/prog", tmpdir);
	int fd = open(prog, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	CHECK(fd >= 0 && write_all(fd, "#!/bin/sh\n", 10) == 0);
	close(fd);
	CHECK(!all_here(root, "pkg/lib/prog")); /* one link: not this search's to answer */
	ln("pkg/lib/prog", "pkg/bin/prog");
	CHECK(all_here(root, "pkg/bin/prog"));
	CHECK(all_here(root, "pkg/lib/prog"));
	/* a symlink to it beside a link is no link: were it followed, three
	 * would be found for two */
	_cleanup_free_ char *sym = xasprintf("%s/pkg/bin/prog-sym", tmpdir);
	CHECK(symlink("../lib/prog", sym) == 0);
	CHECK(all_here(root, "pkg/bin/prog"));
	ln("pkg/lib/prog", "other/prog3");
	CHECK(all_here(root, "pkg/bin/prog")); /* found as the search widens */
	/* refused: a wrong mount id, a path with "..", a relative one */
	_cleanup_free_ char *p = xasprintf("%s/pkg/bin/prog", tmpdir);
	struct stat st;
	CHECK(lstat(p, &st) == 0);
	CHECK(!linkwalk_all_here(root, p, &st, mnt_of(p) + 1000000));
	_cleanup_free_ char *dots = xasprintf("%s/pkg/bin/../bin/prog", tmpdir);
	CHECK(!linkwalk_all_here(root, dots, &st, mnt_of(p)));
	CHECK(!linkwalk_all_here(root, p + 1, &st, mnt_of(p)));
	close(root);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_status_counted("supervisor_exec_linkwalk");
}
