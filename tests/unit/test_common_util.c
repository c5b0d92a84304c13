/* test_common_util.c - unit tests of the small helpers in src/common/util.c
 * that the security checks stand on: path_is_within (is this path inside
 * that directory), path_has_dot_components (a profile path that could walk
 * out), the string vectors, mkdir_p, xdg_warden_dir (where the audit log and
 * the cache go), copy_symlink (the curated /etc), write_all, closep and
 * closedirp (closed once, whatever calls them twice), dir_open_at (a
 * stream that owns its fd, nothing left open when it fails) and
 * read_regular_file's reasons, in the caller's buffer, read_fd_all (bounded,
 * grown past its hint) and read_regular_at
 * (a FIFO or a link refused at once, a bound that holds, the file's stat
 * handed back, nothing left open); open_beneath of a path longer than
 * PATH_MAX, still beneath its start; remove_tree_at of a tree deeper
 * than the open files allowed; err.c's messages about such a path,
 * which keep their end; and clock.h's UTC fields, which the
 * log's stamps are made of, the same as gmtime_r's from 1601 to 2400 and
 * at the days that make a calendar go wrong. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/bytebuf.h"
#include "src/common/clock.h"
#include "src/common/err.h"
#include "src/common/filecopy.h"
#include "src/common/notifylimit.h"
#include "src/common/selflimits.h"
#include "src/common/util.h"
#include "check.h"

static char tmpdir[] = "/tmp/warden-test-util-XXXXXX";

static char *tmp_path(const char *rel) { return xasprintf("%s/%s", tmpdir, rel); }

static mode_t mode_of(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	struct stat st;
	if (lstat(p, &st) < 0)
		return (mode_t)-1;
	return st.st_mode;
}

static void test_path_is_within(void)
{
	/* descendant-or-self */
	CHECK(path_is_within("/a", "/a"));
	CHECK(path_is_within("/a/b", "/a"));
	CHECK(path_is_within("/a/b/c", "/a"));
	CHECK(path_is_within("/home/u/.ssh", "/home/u"));
	/* a shared prefix is not a parent: the boundary is a slash */
	CHECK(!path_is_within("/ab", "/a"));
	CHECK(!path_is_within("/a", "/ab"));
	CHECK(!path_is_within("/home/user2", "/home/user"));
	CHECK(!path_is_within("/procfoo", "/proc"));
	CHECK(!path_is_within("/a.b/c", "/a"));
	/* a parent is not within its child */
	CHECK(!path_is_within("/a", "/a/b"));
	CHECK(!path_is_within("/", "/a"));
	/* "/" holds every absolute path, itself included */
	CHECK(path_is_within("/", "/"));
	CHECK(path_is_within("/a", "/"));
	CHECK(path_is_within("/a/b", "/"));
	/* relative paths are outside the contract: never inside "/", nor
	 * inside an absolute directory whose name they happen to spell */
	CHECK(!path_is_within("a", "/"));
	CHECK(!path_is_within("", "/"));
	CHECK(!path_is_within("a/b", "/a"));
	CHECK(!path_is_within("proc", "/proc"));
	/* unrelated */
	CHECK(!path_is_within("/b", "/a"));
	/* overlapping: either within the other, and relative names alike */
	CHECK(path_overlaps("/a", "/a/b") && path_overlaps("/a/b", "/a") && path_overlaps("/a", "/a"));
	CHECK(!path_overlaps("/a", "/ab") && !path_overlaps("/ab", "/a"));
	CHECK(path_overlaps(".cargo", ".cargo/registry") && !path_overlaps(".cargo", ".cargo2"));
	CHECK(path_in_git(".git") && path_in_git(".git/hooks") && path_in_git("a/.git") &&
	      path_in_git("a/.git/worktrees/x"));
	CHECK(!path_in_git(".gitignore") && !path_in_git("a/.github/x") && !path_in_git("a.git") &&
	      !path_in_git("x/b.git/y"));
	CHECK(path_overlaps("/", "/x"));
	CHECK(!path_is_within("/b/a", "/a"));
}

static void check_lexical(const char *in, bool dotdot, const char *want)
{
	_cleanup_free_ char *got = path_lexical(in, dotdot);
	CHECK_STR(got, want);
}

/* path_lexical: a path written plainly, ".." taken away only when asked. */
static void test_path_lexical(void)
{
	check_lexical("/ws/./docs/a.md", false, "/ws/docs/a.md");
	check_lexical("/ws//docs///a.md", false, "/ws/docs/a.md");
	check_lexical("/ws/docs/", false, "/ws/docs");
	check_lexical("/ws/docs/../docs/a.md", false, "/ws/docs/../docs/a.md");
	check_lexical("/ws/docs/../docs/a.md", true, "/ws/docs/a.md");
	check_lexical("/ws/a/b/../../c", true, "/ws/c");
	check_lexical("/../..", true, "/");
	check_lexical("/..", false, "/..");
	check_lexical("/", false, "/");
	check_lexical("//", true, "/");
	check_lexical("/./.", false, "/");
	check_lexical("/ws/.../x", true, "/ws/.../x");
	check_lexical("/ws/..x/./y", true, "/ws/..x/y");
}

static void test_path_has_dot_components(void)
{
	CHECK(path_has_dot_components("."));
	CHECK(path_has_dot_components(".."));
	CHECK(path_has_dot_components("./a"));
	CHECK(path_has_dot_components("../a"));
	CHECK(path_has_dot_components("a/."));
	CHECK(path_has_dot_components("a/.."));
	CHECK(path_has_dot_components("a/./b"));
	CHECK(path_has_dot_components("a/../b"));
	CHECK(path_has_dot_components("/a/../../etc"));
	CHECK(path_has_dot_components("/.."));
	/* an empty component */
	CHECK(path_has_dot_components("a//b"));
	CHECK(path_has_dot_components("//a"));
	CHECK(path_has_dot_components("a//"));
	/* names that merely contain dots are fine */
	CHECK(!path_has_dot_components("a"));
	CHECK(!path_has_dot_components(".git/hooks"));
	CHECK(!path_has_dot_components("..."));
	CHECK(!path_has_dot_components("a/..b"));
	CHECK(!path_has_dot_components("a/b.."));
	CHECK(!path_has_dot_components(".../a"));
	CHECK(!path_has_dot_components("/home/u/.config"));
	/* one trailing slash is not an empty component */
	CHECK(!path_has_dot_components("a/b/"));
	CHECK(!path_has_dot_components("/"));
	CHECK(!path_has_dot_components(""));
}

static void test_strv(void)
{
	struct strv s = { 0 };
	CHECK(!strv_contains(&s, "a"));
	strv_remove(&s, "a"); /* on an empty vector: nothing to do */
	CHECK(s.n == 0);

	char src[] = "a";
	strv_push(&s, src);
	src[0] = 'z'; /* strv_push copies */
	CHECK_STR(s.v[0], "a");
	strv_push_owned(&s, xstrdup("b"));
	strv_push(&s, "a");
	CHECK(s.n == 3);
	CHECK(s.v[3] == NULL);
	CHECK(strv_contains(&s, "a"));
	CHECK(strv_contains(&s, "b"));
	CHECK(!strv_contains(&s, "z"));
	CHECK(!strv_contains(&s, ""));

	/* every equal entry goes, the order of the rest stays */
	strv_push(&s, "c");
	strv_remove(&s, "a");
	CHECK(s.n == 2);
	CHECK_STR(s.v[0], "b");
	CHECK_STR(s.v[1], "c");
	CHECK(s.v[2] == NULL);
	CHECK(!strv_contains(&s, "a"));

	/* growth keeps every entry and the NULL at the end */
	for (int i = 0; i < 100; i++)
		strv_push_owned(&s, xasprintf("n%d", i));
	CHECK(s.n == 102);
	CHECK(s.cap > s.n);
	CHECK(s.v[102] == NULL);
	CHECK_STR(s.v[0], "b");
	CHECK_STR(s.v[101], "n99");
	CHECK(strv_contains(&s, "n50"));

	strv_free(&s);
	CHECK(s.v == NULL && s.n == 0 && s.cap == 0);
	strv_free(&s); /* twice is harmless */

	{
		_cleanup_strv_ struct strv t = { 0 };
		strv_push(&t, "freed at scope exit (ASan would tell otherwise)");
		CHECK(t.n == 1);
	}
}

static void test_mkdir_p(void)
{
	mode_t old = umask(0);
	bool created = true;

	/* every missing component, with the mode given */
	_cleanup_free_ char *abc = tmp_path("m/a/b/c");
	CHECK(mkdir_p(abc, 0750, &created) == 0);
	CHECK(created);
	CHECK(S_ISDIR(mode_of("m/a/b/c")));
	CHECK((mode_of("m") & 07777) == 0750);
	CHECK((mode_of("m/a/b") & 07777) == 0750);
	CHECK((mode_of("m/a/b/c") & 07777) == 0750);

	/* already there: success, nothing created */
	created = true;
	CHECK(mkdir_p(abc, 0700, &created) == 0);
	CHECK(!created);
	CHECK((mode_of("m/a/b/c") & 07777) == 0750);

	/* existing components keep their mode; only the new ones get it */
	_cleanup_free_ char *abd = tmp_path("m/a/b/d/e");
	CHECK(mkdir_p(abd, 0700, &created) == 0);
	CHECK(created);
	CHECK((mode_of("m/a/b") & 07777) == 0750);
	CHECK((mode_of("m/a/b/d") & 07777) == 0700);
	CHECK((mode_of("m/a/b/d/e") & 07777) == 0700);

	/* only the last missing: the fast path */
	_cleanup_free_ char *last = tmp_path("m/a/b/f");
	CHECK(mkdir_p(last, 0711, NULL) == 0); /* created may be NULL */
	CHECK((mode_of("m/a/b/f") & 07777) == 0711);

	/* the umask still applies, as for mkdir */
	umask(022);
	_cleanup_free_ char *masked = tmp_path("m/u/v");
	CHECK(mkdir_p(masked, 0777, NULL) == 0);
	CHECK((mode_of("m/u") & 07777) == 0755);
	CHECK((mode_of("m/u/v") & 07777) == 0755);
	umask(0);

	/* a file in the way of a directory: ENOTDIR, nothing made */
	_cleanup_free_ char *file = tmp_path("m/file");
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	_cleanup_free_ char *under = tmp_path("m/file/x/y");
	created = true;
	errno = 0;
	CHECK(mkdir_p(under, 0700, &created) == -1);
	CHECK(errno == ENOTDIR);
	CHECK(!created);
	CHECK(S_ISREG(mode_of("m/file")));

	/* a symlink to a directory is walked through, like mkdir -p does */
	_cleanup_free_ char *link = tmp_path("m/link");
	CHECK(symlink("a", link) == 0);
	_cleanup_free_ char *via = tmp_path("m/link/g");
	CHECK(mkdir_p(via, 0700, &created) == 0);
	CHECK(created);
	CHECK(S_ISDIR(mode_of("m/a/g")));

	/* too long for the buffer: ENAMETOOLONG, not a truncated path made */
	char *lng = xmalloc(5000);
	memset(lng, 'x', 4999);
	lng[0] = '/';
	lng[4999] = '\0';
	errno = 0;
	CHECK(mkdir_p(lng, 0700, &created) == -1);
	CHECK(errno == ENAMETOOLONG);
	free(lng);

	umask(old);
}

static void test_xdg_warden_dir(void)
{
	unsetenv("XDG_TEST_HOME");
	char *d;
	/* unset: under the home */
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u", ".cache");
	CHECK_STR(d, "/home/u/.cache/warden");
	free(d);
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u/", ".local/state");
	CHECK_STR(d, "/home/u/.local/state/warden");
	free(d);
	d = xdg_warden_dir("XDG_TEST_HOME", "/", ".cache");
	CHECK_STR(d, "/.cache/warden");
	free(d);
	/* no usable base at all */
	CHECK(xdg_warden_dir("XDG_TEST_HOME", NULL, ".cache") == NULL);
	CHECK(xdg_warden_dir("XDG_TEST_HOME", "", ".cache") == NULL);
	CHECK(xdg_warden_dir("XDG_TEST_HOME", "home/u", ".cache") == NULL);

	/* an absolute variable wins, without home_rel */
	setenv("XDG_TEST_HOME", "/xdg/cache", 1);
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u", ".cache");
	CHECK_STR(d, "/xdg/cache/warden");
	free(d);
	d = xdg_warden_dir("XDG_TEST_HOME", NULL, ".cache");
	CHECK_STR(d, "/xdg/cache/warden");
	free(d);
	setenv("XDG_TEST_HOME", "/xdg/cache//", 1);
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u", ".cache");
	CHECK_STR(d, "/xdg/cache/warden");
	free(d);
	setenv("XDG_TEST_HOME", "/", 1);
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u", ".cache");
	CHECK_STR(d, "/warden");
	free(d);
	/* relative or empty: ignored, as the XDG base directory spec says */
	setenv("XDG_TEST_HOME", "cache", 1);
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u", ".cache");
	CHECK_STR(d, "/home/u/.cache/warden");
	free(d);
	setenv("XDG_TEST_HOME", "", 1);
	d = xdg_warden_dir("XDG_TEST_HOME", "/home/u", ".cache");
	CHECK_STR(d, "/home/u/.cache/warden");
	free(d);
	CHECK(xdg_warden_dir("XDG_TEST_HOME", NULL, ".cache") == NULL);
	unsetenv("XDG_TEST_HOME");
}

static void test_copy_symlink(void)
{
	_cleanup_close_ int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0);
	char got[PATH_MAX];
	ssize_t n;

	/* the target is copied as written: relative, dangling, not resolved */
	_cleanup_free_ char *l1 = tmp_path("l1");
	CHECK(symlink("../some/where", l1) == 0);
	CHECK(copy_symlink(l1, dfd, "l1.copy") == 0);
	_cleanup_free_ char *c1 = tmp_path("l1.copy");
	n = readlink(c1, got, sizeof got - 1);
	CHECK(n == (ssize_t)strlen("../some/where"));
	got[n < 0 ? 0 : n] = '\0';
	CHECK_STR(got, "../some/where");

	/* a long target survives whole */
	char target[4001];
	memset(target, 'y', sizeof target - 1);
	target[0] = '/';
	target[sizeof target - 1] = '\0';
	_cleanup_free_ char *l2 = tmp_path("l2");
	CHECK(symlink(target, l2) == 0);
	CHECK(copy_symlink(l2, dfd, "l2.copy") == 0);
	_cleanup_free_ char *c2 = tmp_path("l2.copy");
	n = readlink(c2, got, sizeof got - 1);
	got[n < 0 ? 0 : n] = '\0';
	CHECK_STR(got, target);

	/* not a symlink: EINVAL; the destination exists: EEXIST, untouched */
	_cleanup_free_ char *dir = tmp_path("m");
	errno = 0;
	CHECK(copy_symlink(dir, dfd, "m.copy") == -1);
	CHECK(errno == EINVAL);
	CHECK(mode_of("m.copy") == (mode_t)-1);
	errno = 0;
	CHECK(copy_symlink(l1, dfd, "l2.copy") == -1);
	CHECK(errno == EEXIST);
	n = readlink(c2, got, sizeof got - 1);
	got[n < 0 ? 0 : n] = '\0';
	CHECK_STR(got, target);
	_cleanup_free_ char *missing = tmp_path("missing");
	errno = 0;
	CHECK(copy_symlink(missing, dfd, "missing.copy") == -1);
	CHECK(errno == ENOENT);
}

static void on_alarm(int sig) { (void)sig; }

/* A large write into a pipe read slowly by a child, with a timer signal
 * (no SA_RESTART) interrupting it: short writes and EINTR both happen, and
 * every byte must arrive once, in order. */
static void test_write_all_pipe(void)
{
	enum { LEN = 4 << 20 };
	unsigned char *buf = xmalloc(LEN);
	for (size_t i = 0; i < LEN; i++)
		buf[i] = (unsigned char)(i * 7 + i / 4096);
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		size_t off = 0;
		unsigned char rb[3000];
		ssize_t r;
		while ((r = read(p[0], rb, sizeof rb)) > 0) {
			for (ssize_t i = 0; i < r; i++, off++)
				if (off >= LEN || rb[i] != buf[off])
					_exit(1);
			if (off % (256 << 10) < sizeof rb)
				usleep(2000);
		}
		_exit(off == LEN ? 0 : 2);
	}
	close(p[0]);
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { .it_interval = { 0, 500 }, .it_value = { 0, 500 } };
	setitimer(ITIMER_REAL, &it, NULL);
	CHECK(write_all(p[1], buf, LEN) == 0);
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	close(p[1]);
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(buf);
}

static void test_write_all(void)
{
	test_write_all_pipe();

	/* a plain file gets exactly the bytes, NULs included */
	_cleanup_free_ char *path = tmp_path("w");
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(write_all(fd, "a\0b", 3) == 0);
	CHECK(write_all(fd, "", 0) == 0);
	char got[8] = { 0 };
	CHECK(pread(fd, got, sizeof got, 0) == 3);
	CHECK(memcmp(got, "a\0b", 3) == 0);
	close(fd);

	/* errors come back as -1 with errno */
	errno = 0;
	CHECK(write_all(-1, "x", 1) == -1);
	CHECK(errno == EBADF);
	int p[2];
	CHECK(pipe(p) == 0);
	close(p[0]);
	errno = 0;
	CHECK(write_all(p[1], "x", 1) == -1);
	CHECK(errno == EPIPE);
	close(p[1]);

	/* write_file: an existing file only (no O_CREAT) */
	CHECK(write_file(path, "hello") == 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	memset(got, 0, sizeof got);
	CHECK(read(fd, got, sizeof got) == 5);
	CHECK(memcmp(got, "hello", 5) == 0);
	close(fd);
	_cleanup_free_ char *none = tmp_path("not-there");
	errno = 0;
	CHECK(write_file(none, "x") == -1);
	CHECK(errno == ENOENT);
	CHECK(mode_of("not-there") == (mode_t)-1);
}

/* A path that may not exist yet, compared with resolved ones: the log
 * directory under a HOME reached through a symlink. */
static void test_path_resolve_existing(void)
{
	_cleanup_free_ char *real = tmp_path("real");
	_cleanup_free_ char *link = tmp_path("link");
	_cleanup_free_ char *rtmp = path_resolve_existing(tmpdir);
	CHECK(rtmp != NULL);
	CHECK(mkdir(real, 0700) == 0);
	CHECK(symlink(real, link) == 0);
	_cleanup_free_ char *want = xasprintf("%s/real/.local/state/warden", rtmp);
	_cleanup_free_ char *via = xasprintf("%s/.local/state/warden", link);
	_cleanup_free_ char *got = path_resolve_existing(via);
	CHECK_STR(got, want);
	/* existing all the way: plain realpath */
	_cleanup_free_ char *want2 = xasprintf("%s/real", rtmp);
	_cleanup_free_ char *got2 = path_resolve_existing(link);
	CHECK_STR(got2, want2);
	_cleanup_free_ char *got3 = path_resolve_existing("/");
	CHECK_STR(got3, "/");
	_cleanup_free_ char *got4 = path_resolve_existing("/no-such-dir-warden/x");
	CHECK_STR(got4, "/no-such-dir-warden/x");
	/* refused: relative, dot components */
	CHECK(path_resolve_existing("rel/x") == NULL);
	_cleanup_free_ char *dots = xasprintf("%s/../x", link);
	CHECK(path_resolve_existing(dots) == NULL);
}

/* closep closes once: an explicit closep and then the cleanup of the same
 * variable must not close the number again, by then another fd's (the
 * supervisor's reviewer read EOF, closed its pipe, and closed the number
 * again when the process ended: another reviewer's pipe or pidfd). */
static void test_closep_once(void)
{
	int a = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(a >= 0);
	int number = a;
	closep(&a);
	CHECK(a == -1);
	int b = open("/dev/null", O_RDONLY | O_CLOEXEC); /* takes the lowest free number */
	CHECK(b == number);
	closep(&a);
	CHECK(fcntl(b, F_GETFD) >= 0);
	{
		_cleanup_close_ int c = open("/dev/null", O_RDONLY | O_CLOEXEC);
		closep(&c);
		CHECK(c == -1);
	} /* its cleanup: nothing to close */
	close(b);
}

/* The number the next open gets (the lowest free one). */
static int next_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fd);
	return fd;
}

static size_t count_entries(DIR *d)
{
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	return n;
}

static void test_dir_open_at(void)
{
	_cleanup_free_ char *dir = tmp_path("dirs");
	_cleanup_free_ char *a = tmp_path("dirs/a"), *b = tmp_path("dirs/b");
	_cleanup_free_ char *link = tmp_path("dirs-link");
	CHECK(mkdir(dir, 0700) == 0);
	close(open(a, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	close(open(b, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	CHECK(symlink("dirs", link) == 0);
	int free_fd = next_fd();

	/* the stream owns its fd: closedir gives the number back */
	DIR *d = dir_open_at(AT_FDCWD, dir, O_NOFOLLOW);
	CHECK(d != NULL && count_entries(d) == 2);
	CHECK(fcntl(dirfd(d), F_GETFD) == FD_CLOEXEC);
	closedir(d);
	CHECK(next_fd() == free_fd);

	/* failures leave nothing open */
	errno = 0;
	CHECK(dir_open_at(AT_FDCWD, a, 0) == NULL && errno == ENOTDIR);
	CHECK(dir_open_at(AT_FDCWD, link, O_NOFOLLOW) == NULL && errno != 0);
	CHECK(dir_open_at(AT_FDCWD, "/nonexistent/warden", 0) == NULL && errno == ENOENT);
	CHECK(next_fd() == free_fd);
	d = dir_open_at(AT_FDCWD, link, 0); /* followed without O_NOFOLLOW */
	CHECK(d != NULL && count_entries(d) == 2);
	closedir(d);

	/* "." of an open directory: read from its start, that fd stays */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int round = 0; round < 2; round++) {
		_cleanup_dir_ DIR *again = dir_open_at(dfd, ".", 0);
		CHECK(again != NULL && count_entries(again) == 2);
	}
	CHECK(fcntl(dfd, F_GETFD) >= 0);
	close(dfd);

	/* closedirp closes once: explicitly, then the cleanup of the same variable */
	{
		_cleanup_dir_ DIR *c = dir_open_at(AT_FDCWD, dir, 0);
		CHECK(c != NULL);
		closedirp(&c);
		CHECK(c == NULL);
	}
	CHECK(next_fd() == free_fd);
}

/* "dd/" levels times, then tail: a path under the deep tree below. */
static char *deep_rel(size_t levels, const char *tail)
{
	size_t tl = strlen(tail);
	char *rel = xmalloc(levels * 3 + tl + 1);
	for (size_t i = 0; i < levels; i++)
		memcpy(rel + 3 * i, "dd/", 3);
	memcpy(rel + 3 * levels, tail, tl + 1);
	return rel;
}

/* open_beneath of a path longer than PATH_MAX (a tree an agent nested
 * that deep, which `warden undo` must still remove): opened a run of whole
 * components at a time, each beneath the last, so still beneath its start,
 * still refusing a symlink or a ".." out of it on the way, nothing left
 * open. */
static void test_open_beneath_long(void)
{
	enum { LEVELS = 1500, LINK_AT = 1400 };
	_cleanup_free_ char *top = tmp_path("deep");
	CHECK(mkdir(top, 0700) == 0);
	_cleanup_close_ int root = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int cur = dup(root);
	for (int i = 0; i < LEVELS && cur >= 0; i++) {
		if (i == LINK_AT)
			CHECK(symlinkat("dd", cur, "ln") == 0);
		CHECK(mkdirat(cur, "dd", 0700) == 0);
		int next = openat(cur, "dd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	CHECK(cur >= 0);
	int fd = openat(cur, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "deep", 4) == 4);
	close(fd);
	close(cur);
	int free_fd = next_fd();

	_cleanup_free_ char *rel = deep_rel(LEVELS, "f");
	CHECK(strlen(rel) >= PATH_MAX);
	fd = open_beneath(root, rel, O_RDONLY, 0);
	char buf[8] = { 0 };
	CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 4 && !memcmp(buf, "deep", 4));
	CHECK(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	/* made there too (O_CREAT), as a restore does */
	_cleanup_free_ char *made = deep_rel(LEVELS, "g");
	fd = open_beneath(root, made, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(next_fd() == free_fd);

	/* a symlink past the first run refused, as one in it would be */
	_cleanup_free_ char *via_link = deep_rel(LINK_AT, "ln/");
	_cleanup_free_ char *tail = deep_rel(LEVELS - LINK_AT - 1, "f");
	_cleanup_free_ char *linked = xasprintf("%s%s", via_link, tail);
	errno = 0;
	CHECK(open_beneath(root, linked, O_RDONLY, 0) < 0 && errno == ELOOP);
	/* ".." back out of the tree, in a later run: refused */
	_cleanup_free_ char *down = deep_rel(LEVELS, "");
	_cleanup_free_ char *ups = xmalloc(3 * (LEVELS + 1) + 1);
	for (int i = 0; i <= LEVELS; i++)
		memcpy(ups + 3 * i, "../", 3);
	ups[3 * (LEVELS + 1)] = '\0';
	_cleanup_free_ char *out = xasprintf("%s%sdeep", down, ups);
	errno = 0;
	CHECK(open_beneath(root, out, O_RDONLY, 0) < 0 && errno == EXDEV);
	/* no component boundary within reach */
	_cleanup_free_ char *flat = xmalloc(PATH_MAX + 8);
	memset(flat, 'a', PATH_MAX + 7);
	flat[PATH_MAX + 7] = '\0';
	errno = 0;
	CHECK(open_beneath(root, flat, O_RDONLY, 0) < 0 && errno == ENAMETOOLONG);
	CHECK(next_fd() == free_fd);
}

/* remove_tree_at of a tree 3,000 levels deep, a directory of mode 000 and
 * files on the way, with RLIMIT_NOFILE at 100: removed whole (its deep
 * parts moved up into its top rather than entered), nothing left open. */
static void test_remove_tree_deep(void)
{
	enum { LEVELS = 3000, LOCKED_AT = 2000 };
	_cleanup_free_ char *top = tmp_path("rmdeep");
	CHECK(mkdir(top, 0700) == 0);
	int cur = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < LEVELS && cur >= 0; i++) {
		if (i % 100 == 0)
			close(openat(cur, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
		CHECK(mkdirat(cur, "d", 0700) == 0);
		int next = openat(cur, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (i == LOCKED_AT)
			CHECK(fchmodat(cur, "d", 0, 0) == 0);
		close(cur);
		cur = next;
	}
	CHECK(cur >= 0);
	close(cur);
	int free_fd = next_fd();
	struct rlimit old, low;
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = 100;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	int r = remove_tree_at(AT_FDCWD, top);
	int err = errno;
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	CHECK(r == 0);
	if (r < 0)
		fprintf(stderr, "remove_tree_at: %s\n", strerror(err));
	CHECK(access(top, F_OK) < 0 && errno == ENOENT);
	CHECK(next_fd() == free_fd);
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && !strcmp(s + n - m, end);
}

/* An error about a path longer than its message (err.c): the start and
 * the end kept around " ... ", so the end that says what went wrong is
 * not what is cut; short ones whole; a wrap keeps both ends too. */
static void test_werr_long(void)
{
	struct werr e = { 0 };
	werr_set(&e, ENOENT, "undo: %s: %s", "removing", "short/f");
	CHECK(!strcmp(e.msg, "undo: removing: short/f") && e.errnum == ENOENT);
	werr_wrap(&e, "undo failed");
	CHECK(!strcmp(e.msg, "undo failed: undo: removing: short/f") && e.errnum == ENOENT);

	_cleanup_free_ char *path = deep_rel(2000, "f");
	werr_set(&e, ENAMETOOLONG, "undo: removing %s (the end)", path);
	size_t n = strlen(e.msg);
	CHECK(n == sizeof e.msg - 1);
	CHECK(!strncmp(e.msg, "undo: removing dd/dd/", 21));
	CHECK(ends_with(e.msg, "/dd/dd/f (the end)"));
	CHECK(strstr(e.msg, " ... ") != NULL);
	werr_wrap(&e, "undo failed");
	CHECK(!strncmp(e.msg, "undo failed: undo: removing dd/", 31));
	CHECK(strlen(e.msg) == sizeof e.msg - 1 && ends_with(e.msg, "/dd/f (the end)"));
	char buf[sizeof e.msg + 128];
	CHECK(strstr(werr_str(&e, buf, sizeof buf), "(the end): File name too long") != NULL);
	/* a hint after a long message keeps the errno's words and the hint */
	werr_hint(&e, "free space (%s)", "XDG_DATA_HOME");
	CHECK(e.errnum == 0 && strlen(e.msg) == sizeof e.msg - 1);
	CHECK(ends_with(e.msg, "(the end): File name too long; free space (XDG_DATA_HOME)"));
	CHECK(!strncmp(e.msg, "undo failed: undo: removing dd/", 31));
}

/* A file of data, holes and data again, copied from an offset: the same
 * bytes, the holes still holes (where the file system has them). */
static void test_copy_sparse(void)
{
	_cleanup_free_ char *src = tmp_path("sparse-in"), *dst = tmp_path("sparse-out");
	int in = open(src, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int out = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(in >= 0 && out >= 0);
	char a[4096], b[4096];
	memset(a, 'a', sizeof a);
	memset(b, 'b', sizeof b);
	CHECK(pwrite(in, "head", 4, 0) == 4 && pwrite(in, a, sizeof a, 8192) == (ssize_t)sizeof a &&
	      pwrite(in, b, sizeof b, 8 << 20) == (ssize_t)sizeof b && ftruncate(in, 16 << 20) == 0);
	/* from offset 4 (as a blob inside a pack): 16 MiB - 4 bytes */
	CHECK(copy_sparse(in, 4, (16 << 20) - 4, out) == 0);
	struct stat st;
	CHECK(fstat(out, &st) == 0 && st.st_size == (16 << 20) - 4);
	CHECK(st.st_blocks * 512 < (1 << 20)); /* not 16 MiB written */
	char got[4096];
	CHECK(pread(out, got, sizeof got, 8192 - 4) == (ssize_t)sizeof got && !memcmp(got, a, sizeof a));
	CHECK(pread(out, got, sizeof got, (8 << 20) - 4) == (ssize_t)sizeof got &&
	      !memcmp(got, b, sizeof b));
	CHECK(pread(out, got, 8, (12 << 20)) == 8 && !memcmp(got, "\0\0\0\0\0\0\0\0", 8));
	/* asked for more than there is: as far as the file goes */
	CHECK(ftruncate(out, 0) == 0 && copy_sparse(in, 0, 32 << 20, out) == 0);
	CHECK(fstat(out, &st) == 0 && st.st_size <= (16 << 20));
	close(in);
	close(out);
}

/* A side that does not take everything (a pipe, not blocking, whose
 * buffer fills): the rest queued, in order, nothing written past what
 * waits, and all of it there once the side reads again. */
static void test_queue(void)
{
	int p[2];
	CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);
	int cap = fcntl(p[1], F_GETPIPE_SZ);
	CHECK(cap > 0);
	size_t total = (size_t)cap * 3;
	char *data = malloc(total), *got = malloc(total);
	for (size_t i = 0; i < total; i++)
		data[i] = (char)('a' + i % 26);
	struct bytebuf q = { 0 };
	CHECK(bytebuf_write(p[1], &q, data, (size_t)cap / 2) == 0 && !bytebuf_pending(&q));
	CHECK(bytebuf_write(p[1], &q, data + cap / 2, (size_t)cap) == 0 &&
	      bytebuf_pending(&q) == (size_t)cap / 2);
	/* with something queued, nothing is written ahead of it */
	CHECK(read(p[0], got, 10) == 10);
	CHECK(bytebuf_write(p[1], &q, data + cap / 2 + cap, total - cap / 2 - cap) == 0 &&
	      bytebuf_pending(&q) == total - (size_t)cap);
	size_t have = 10;
	while (have < total) {
		int r = bytebuf_flush(p[1], &q);
		CHECK(r >= 0);
		ssize_t n = read(p[0], got + have, total - have);
		if (n > 0)
			have += (size_t)n;
		else if (r == 1)
			break;
	}
	CHECK(have == total && !bytebuf_pending(&q) && !memcmp(got, data, total));
	CHECK(bytebuf_flush(p[1], &q) == 1);
	close(p[0]); /* a side gone: an error, not a queue */
	signal(SIGPIPE, SIG_IGN);
	CHECK(bytebuf_write(p[1], &q, "x", 1) == -1 && errno == EPIPE);
	close(p[1]);
	/* bounded: the newest dropped, counted */
	CHECK(bytebuf_pending(&q) == 0);
	bytebuf_put(&q, "abcdef", 6, 16);
	CHECK(bytebuf_bound(&q, 10) == 0 && bytebuf_bound(&q, 4) == 2 && bytebuf_pending(&q) == 4 &&
	      !memcmp(q.p + q.off, "abcd", 4));
	bytebuf_free(&q);
	free(data);
	free(got);
}

/* A socket whose file blocks: sent to with MSG_DONTWAIT, what it does not
 * take is queued and the file's flags stay as they were. */
static void test_queue_socket(void)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	int small = 16384; /* whatever the host's default buffers */
	CHECK(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
	size_t total = 4u << 20; /* more than the socket's buffer */
	char *data = malloc(total), *got = malloc(total);
	for (size_t i = 0; i < total; i++)
		data[i] = (char)('A' + i % 26);
	struct bytebuf q = { 0 };
	const int fl = MSG_DONTWAIT | MSG_NOSIGNAL;
	CHECK(bytebuf_send_write(sv[1], &q, data, total, fl) == 0 && bytebuf_pending(&q) > 0 &&
	      bytebuf_pending(&q) < total);
	CHECK(!(fcntl(sv[1], F_GETFL) & O_NONBLOCK));
	CHECK(bytebuf_send_flush(sv[1], &q, fl) == 0);
	size_t have = 0;
	while (have < total) {
		int r = bytebuf_send_flush(sv[1], &q, fl);
		CHECK(r >= 0);
		ssize_t n = recv(sv[0], got + have, total - have, MSG_DONTWAIT);
		if (n > 0)
			have += (size_t)n;
		else if (r == 1)
			break;
	}
	CHECK(have == total && !bytebuf_pending(&q) && !memcmp(got, data, total));
	close(sv[0]); /* the reader gone: an error without SIGPIPE */
	signal(SIGPIPE, SIG_DFL);
	CHECK(bytebuf_send_write(sv[1], &q, "x", 1, fl) == -1 && errno == EPIPE);
	signal(SIGPIPE, SIG_IGN);
	close(sv[1]);
	bytebuf_free(&q);
	free(data);
	free(got);
}

/* In a child: the limits it lowers are its own. */
static void test_selflimits(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int bad = 0;
		struct rlimit rl, now, st;
		bad |= getrlimit(RLIMIT_NOFILE, &rl) != 0 || getrlimit(RLIMIT_STACK, &st) != 0;
		if (rl.rlim_max < SELFLIMITS_NOFILE_MIN || st.rlim_max < SELFLIMITS_STACK)
			_exit(0); /* (a host whose limits are that low: nothing to see) */
		rl = (struct rlimit){ 20, rl.rlim_max < 600 ? rl.rlim_max : 600 };
		bad |= setrlimit(RLIMIT_NOFILE, &rl) != 0;
		st.rlim_cur = 80 * 1024;
		bad |= setrlimit(RLIMIT_STACK, &st) != 0;
		selflimits_raise();
		bad |= getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur != rl.rlim_max ||
		       now.rlim_max != rl.rlim_max;
		bad |= getrlimit(RLIMIT_STACK, &now) != 0 || now.rlim_cur != SELFLIMITS_STACK;
		pthread_attr_t a;
		size_t size = 0;
		bad |= pthread_getattr_default_np(&a) != 0 ||
		       pthread_attr_getstacksize(&a, &size) != 0 || size != SELFLIMITS_STACK;
		struct user_limits u = selflimits_user();
		bad |= u.nofile != 20 || u.stack != 80 * 1024;
		selflimits_raise(); /* again: the user's limits stay the first ones */
		u = selflimits_user();
		bad |= u.nofile != 20 || u.stack != 80 * 1024;
		struct werr e = { 0 };
		bad |= selflimits_check(&e) != 0;
		/* given back, as to the command */
		selflimits_give_back(&u);
		bad |= getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur != 20;
		bad |= getrlimit(RLIMIT_STACK, &now) != 0 || now.rlim_cur != 80 * 1024;
		bad |= selflimits_check(&e) != -1 || !strstr(e.msg, "the limit of the stack is 80 KiB");
		rl = (struct rlimit){ 100, 100 };
		bad |= setrlimit(RLIMIT_NOFILE, &rl) != 0;
		bad |= selflimits_check(&e) != -1 ||
		       !strstr(e.msg, "the hard limit of open files is 100 here") ||
		       !strstr(e.msg, "needs at least 256");
		_exit(bad);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Which limit an errno is: the sysctl named for its own errno only, and an
 * EMFILE that is the process's own limit of descriptors left to strerror. */
static void test_notify_limit(void)
{
	char b[400];
	CHECK(notify_limit_said(NOTIFY_INOTIFY_WATCHES, ENOSPC, b, sizeof b) &&
	      strstr(b, "limit of inotify watches for your user is reached (sysctl "
			"fs.inotify.max_user_watches, ") &&
	      strstr(b, "`sysctl -w fs.inotify.max_user_watches=524288`"));
	CHECK(notify_limit_said(NOTIFY_FANOTIFY_MARKS, ENOSPC, b, sizeof b) &&
	      strstr(b, "fs.fanotify.max_user_marks"));
	CHECK(notify_limit_said(NOTIFY_INOTIFY_INSTANCES, EMFILE, b, sizeof b) &&
	      strstr(b, "fs.inotify.max_user_instances"));
	CHECK(!notify_limit_said(NOTIFY_INOTIFY_WATCHES, EMFILE, b, sizeof b));
	CHECK(!notify_limit_said(NOTIFY_FANOTIFY_GROUPS, EPERM, b, sizeof b));
	CHECK(!notify_limit_said(NOTIFY_INOTIFY_INSTANCES, ENOMEM, b, sizeof b));
	/* cut to the buffer, NUL-terminated */
	CHECK(notify_limit_said(NOTIFY_FANOTIFY_GROUPS, EMFILE, b, 20) && strlen(b) == 19);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) { /* every descriptor taken: that limit, not the sysctl's */
		struct rlimit rl = { 8, 8 };
		int bad = setrlimit(RLIMIT_NOFILE, &rl) != 0;
		while (open("/", O_PATH | O_CLOEXEC) >= 0)
			;
		bad |= errno != EMFILE;
		bad |= notify_limit_said(NOTIFY_INOTIFY_INSTANCES, EMFILE, b, sizeof b) != NULL;
		_exit(bad);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_werr_hint(void)
{
	struct werr e = { 0 };
	werr_set(&e, ENOSPC, "checkpoint store %s", "/s");
	CHECK(werr_hint(&e, "free %s", "space") == -1);
	char buf[sizeof e.msg + 128];
	CHECK(!strcmp(werr_str(&e, buf, sizeof buf),
		      "checkpoint store /s: No space left on device; free space"));
	werr_set(&e, 0, "no errno");
	werr_hint(&e, "hint");
	CHECK(!strcmp(e.msg, "no errno; hint") && e.errnum == 0);
	CHECK(werr_hint(NULL, "x") == -1);
	/* a process not made: EAGAIN names the limits, another errno not */
	CHECK(werr_fork(&e, EAGAIN, "the %s: fork", "helper") == -1 && e.errnum == 0);
	CHECK(!strncmp(e.msg, "the helper: fork: Resource temporarily unavailable; a limit of "
		       "processes is reached: your user's (`ulimit -u`, ", 97));
	CHECK(strstr(e.msg, "pids.max") != NULL);
	werr_fork(&e, ENOMEM, "the helper: fork");
	CHECK(!strcmp(e.msg, "the helper: fork") && e.errnum == ENOMEM);
}

static void test_read_regular_file(void)
{
	_cleanup_free_ char *big = tmp_path("big"), *small = tmp_path("small");
	int fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, (1 << 20) + 1) == 0);
	close(fd);
	fd = open(small, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write_all(fd, "hello", 5) == 0);
	close(fd);

	char *text = NULL, what[READ_WHY_MAX] = "";
	size_t len = 0;
	CHECK(read_regular_file(small, 1 << 20, &text, &len, what) == 0);
	CHECK(len == 5 && text && memcmp(text, "hello", 5) == 0);
	free(text);
	CHECK(read_regular_file(big, 1 << 20, &text, &len, what) < 0 && errno == 0);
	CHECK_STR(what, "file too large (max 1 MiB)");
	char what2[READ_WHY_MAX]; /* each caller's own: the first is left as it was */
	CHECK(read_regular_file(big, 2u << 20, &text, &len, what2) == 0 && len == (1 << 20) + 1);
	free(text);
	CHECK(read_regular_file(tmpdir, 1 << 20, &text, &len, what2) < 0 && errno == 0);
	CHECK_STR(what2, "not a regular file");
	CHECK_STR(what, "file too large (max 1 MiB)");
	CHECK(read_regular_file("/nonexistent/warden", 1 << 20, &text, &len, what) < 0 &&
	      errno == ENOENT);
	CHECK_STR(what, "cannot open");
}

/* read_regular_at: what the checkpoint store, the kept exec hashes and the
 * settings guard read their files with. A FIFO nobody writes is refused at
 * once (EINVAL), not waited on; a symlink under O_NOFOLLOW is not followed;
 * a file past the bound is EFBIG; the stat is the file's own, st_mode 0
 * when nothing was opened; no descriptor stays open. */
static void test_read_regular_at(void)
{
	int free_fd = next_fd();
	_cleanup_close_ int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0);
	CHECK(mkfifoat(dfd, "at-fifo", 0600) == 0);
	CHECK(symlinkat("small", dfd, "at-link") == 0);
	struct stat st;
	size_t len = 0;
	char *t = read_regular_at(dfd, "small", O_NOFOLLOW, 5, &len, &st);
	CHECK(t && len == 5 && strcmp(t, "hello") == 0 && S_ISREG(st.st_mode) &&
	      st.st_uid == geteuid() && st.st_size == 5);
	free(t);
	CHECK(read_regular_at(dfd, "small", O_NOFOLLOW, 4, &len, &st) == NULL && errno == EFBIG);
	CHECK(read_regular_at(dfd, "at-fifo", O_NOFOLLOW, 4096, &len, &st) == NULL &&
	      errno == EINVAL && S_ISFIFO(st.st_mode));
	CHECK(read_regular_at(dfd, "at-link", O_NOFOLLOW, 4096, &len, &st) == NULL &&
	      errno == ELOOP && st.st_mode == 0);
	t = read_regular_at(dfd, "at-link", 0, 4096, &len, NULL); /* followed when asked */
	CHECK(t && len == 5);
	free(t);
	CHECK(read_regular_at(dfd, "at-none", 0, 4096, &len, &st) == NULL && errno == ENOENT &&
	      st.st_mode == 0);
	/* an empty file reads as "" */
	_cleanup_close_ int e = openat(dfd, "at-empty", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(e >= 0);
	t = read_regular_at(dfd, "at-empty", O_NOFOLLOW, 4096, &len, NULL);
	CHECK(t && len == 0 && t[0] == '\0');
	free(t);
	closep(&e);
	closep(&dfd);
	CHECK(next_fd() == free_fd);
}

/* read_fd_all: a pipe read to its end (100,000 bytes, more than the pipe
 * holds, from a writer of its own) past the size hinted, the buffer grown,
 * NUL-terminated; one byte over max is EFBIG. */
static void test_read_fd_all(void)
{
	for (size_t max = 100000; max >= 99999; max--) {
		int p[2];
		CHECK(pipe(p) == 0);
		pid_t w = fork();
		if (w == 0) {
			char block[1000];
			memset(block, 'x', sizeof block);
			for (int k = 0; k < 100; k++)
				if (write_all(p[1], block, sizeof block) < 0)
					_exit(1);
			_exit(0);
		}
		close(p[1]);
		size_t len = 0;
		char *t = read_fd_all(p[0], 10, max, &len);
		if (max == 100000)
			CHECK(t && len == 100000 && t[len] == '\0' && t[99999] == 'x');
		else
			CHECK(!t && errno == EFBIG);
		free(t);
		close(p[0]); /* the writer, if still writing, ends on EPIPE */
		CHECK(w > 0 && waitpid(w, NULL, 0) == w);
	}
}

static bool same_as_gmtime(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	struct utc_fields u = utc_fields_of(t);
	return gmtime_r(&tt, &tm) && u.year == tm.tm_year + 1900 && u.mon == tm.tm_mon + 1 &&
	       u.day == tm.tm_mday && u.hour == tm.tm_hour && u.min == tm.tm_min &&
	       u.sec == tm.tm_sec;
}

static void test_utc_fields(void)
{
	/* the days around the epoch, leap days (2000 is one, 1900 and 2100
	 * are not), the ends of years, and times before 1970 */
	const int64_t at[] = { 0, -1, 1, 86399, 86400, 951782400, 951868799, 951868800,
			       4107542399, 4107542400, 4107628800, -2208988800, -2203891201,
			       -11644473600, 1767225599, 1767225600, 2147483647, 2147483648 };
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
		CHECK(same_as_gmtime(at[i]));
	/* every day from 1601 to 2400 (the seconds of the day varied) */
	bool all = true;
	for (int64_t t = -11644473600; t < 13569465600 && all; t += 86400 + 3607)
		all = same_as_gmtime(t);
	CHECK(all);
	struct utc_fields u = utc_fields_of(1796312569); /* 2026-12-03T15:42:49Z */
	CHECK(u.year == 2026 && u.mon == 12 && u.day == 3 && u.hour == 15 && u.min == 42 &&
	      u.sec == 49);
}

int main(void)
{
	test_utc_fields();
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN); /* a reader gone is EPIPE, not death */
	test_path_is_within();
	test_path_has_dot_components();
	test_path_lexical();
	test_strv();
	test_mkdir_p();
	test_xdg_warden_dir();
	test_copy_symlink();
	test_write_all();
	test_path_resolve_existing();
	test_closep_once();
	test_dir_open_at();
	test_open_beneath_long();
	test_werr_long();
	test_werr_hint();
	test_notify_limit();
	test_selflimits();
	test_copy_sparse();
	test_queue();
	test_queue_socket();
	test_remove_tree_deep();
	test_read_regular_file();
	test_read_regular_at();
	test_read_fd_all();

	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_status_counted("common_util");
}
