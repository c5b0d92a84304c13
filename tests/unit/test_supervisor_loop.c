/* test_supervisor_loop.c - unit tests of the event loop
 * (src/common/loop.c): a source the loop cannot take is an error that
 * names it, for an fd epoll refuses (a regular file) and for a full table;
 * a ready source's handler gets its context and ends the loop with a
 * status; a removed source is no longer served. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/loop.h"
#include "check.h"

static int calls;

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	calls++;
	char b;
	(void)!read(src->fd, &b, 1);
	loop_quit(l, *(int *)src->ctx);
}

static void must_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("test: pipe");
		exit(2);
	}
}

static void test_regular_file_refused(void)
{
	struct werr e = { 0 };
	struct loop *l = loop_new(4, &e);
	CHECK(l != NULL);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC); /* a regular file */
	CHECK(fd >= 0);
	CHECK(loop_add(l, "the test's file", fd, on_ready, NULL, &e) == -1);
	CHECK(strstr(e.msg, "the test's file") != NULL);
	CHECK(e.errnum == EPERM);
	close(fd);
	loop_free(l);
}

static void test_full_table(void)
{
	struct werr e = { 0 };
	struct loop *l = loop_new(2, &e);
	int a[2], b[2], c[2];
	must_pipe(a);
	must_pipe(b);
	must_pipe(c);
	CHECK(loop_add(l, "a", a[0], on_ready, NULL, &e) == 0);
	CHECK(loop_add(l, "b", b[0], on_ready, NULL, &e) == 0);
	CHECK(loop_add(l, "the third source", c[0], on_ready, NULL, &e) == -1);
	CHECK(strstr(e.msg, "the third source") != NULL);
	CHECK(strstr(e.msg, "full") != NULL);
	loop_free(l);
	for (int i = 0; i < 2; i++)
		close(a[i]), close(b[i]), close(c[i]);
}

static void test_run_and_remove(void)
{
	struct werr e = { 0 };
	struct loop *l = loop_new(4, &e);
	int a[2], b[2];
	must_pipe(a);
	must_pipe(b);
	int sa = 7, sb = 9;
	CHECK(loop_add(l, "a", a[0], on_ready, &sa, &e) == 0);
	CHECK(loop_add(l, "b", b[0], on_ready, &sb, &e) == 0);
	calls = 0;
	CHECK(write(b[1], "x", 1) == 1);
	CHECK(loop_run(l, &e) == 9);
	CHECK(calls == 1);
	/* b drained; a's byte ends the next run, with a's status */
	CHECK(write(a[1], "x", 1) == 1);
	CHECK(loop_run(l, &e) == 7);
	loop_free(l);
	for (int i = 0; i < 2; i++)
		close(a[i]), close(b[i]);
}

static void on_remove(struct loop *l, const struct source *src, uint32_t events)
{
	calls++;
	loop_remove(l, src);
}

static void test_removed_not_served(void)
{
	struct werr e = { 0 };
	struct loop *l = loop_new(4, &e);
	int a[2], b[2];
	must_pipe(a);
	must_pipe(b);
	int sb = 3;
	CHECK(loop_add(l, "a", a[0], on_remove, NULL, &e) == 0);
	CHECK(write(a[1], "x", 1) == 1); /* never read: stays ready */
	CHECK(loop_add(l, "b", b[0], on_ready, &sb, &e) == 0);
	calls = 0;
	CHECK(write(b[1], "x", 1) == 1);
	int r = loop_run(l, &e);
	CHECK(r == 3);
	/* a's handler ran at most once (removed), b's once */
	CHECK(calls >= 1 && calls <= 2);
	calls = 0;
	CHECK(write(b[1], "x", 1) == 1);
	CHECK(loop_run(l, &e) == 3);
	CHECK(calls == 1);
	loop_free(l);
	for (int i = 0; i < 2; i++)
		close(a[i]), close(b[i]);
}

int main(void)
{
	test_regular_file_refused();
	test_full_table();
	test_run_and_remove();
	test_removed_not_served();
	return check_status_counted("supervisor-loop");
}
