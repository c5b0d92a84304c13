/* test_sandbox_initmsg.c - unit tests of init's SEALED and READY messages
 * (src/sandbox/initmsg.c) over a socketpair: for every combination of
 * the flags (pty, diag, /tmp, home, namespaces, hook) and several sets of
 * host loopback ports, each fd sent arrives in its own slot (the same
 * pipe: st_ino) and each one absent is -1, SEALED carrying all but the
 * seccomp listener and READY that listener alone, the two taken together
 * (init_fds_take) the whole set; the namespaces go both or neither;
 * SEALED without a proxy listener, or READY without the listener, is not
 * sent; ERROR carries its text and no fds, and still arrives when init
 * died with a byte of the supervisor's unread (the kernel then reports
 * ECONNRESET once, ahead of the queued message). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/sandbox/initmsg.h"
#include "check.h"

static ino_t ino_of(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* A pipe's read end (the write end closed) standing for one fd. */
static int stand_in(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("test: pipe");
		exit(2);
	}
	close(p[1]);
	return p[0];
}

/* The fds of f as an array, in the struct's order (not the wire's). */
static int *slot(struct init_fds *f, size_t i)
{
	int *head[] = { &f->listener, &f->http, &f->socks, &f->master };
	int *tail[] = { &f->diag, &f->tmp, &f->home, &f->userns, &f->mntns, &f->hook };
	if (i < 4)
		return head[i];
	if (i < 4 + FORWARD_MAX)
		return &f->fwd[i - 4];
	return tail[i - 4 - FORWARD_MAX];
}
#define NSLOT (10 + FORWARD_MAX)

static void round_trip(int sv[2], unsigned flags, unsigned fwd)
{
	struct init_fds out, in;
	init_fds_none(&out);
	out.listener = stand_in();
	out.http = stand_in();
	out.socks = stand_in();
	if (flags & 1)
		out.master = stand_in();
	if (flags & 2)
		out.diag = stand_in();
	if (flags & 4)
		out.tmp = stand_in();
	if (flags & 8)
		out.home = stand_in();
	if (flags & 16)
		out.userns = stand_in(), out.mntns = stand_in();
	if (flags & 32)
		out.hook = stand_in();
	for (unsigned i = 0; i < FORWARD_MAX; i++)
		if (fwd & (1u << i))
			out.fwd[i] = stand_in();
	struct init_msg m = { .canary_placed = flags, .canary_err = (int)fwd };
	CHECK(initmsg_send_sealed(sv[0], &m, &out) == 0);
	struct init_msg r;
	CHECK(initmsg_recv(sv[1], &r, &in) == sizeof r);
	CHECK(r.type == INIT_MSG_SEALED);
	CHECK(r.canary_placed == flags && r.canary_err == (int)fwd);
	CHECK(r.fwd_mask == fwd);
	CHECK(in.listener == -1);
	/* READY: the listener alone, taken in with the rest */
	CHECK(initmsg_send_ready(sv[0], &m, &out) == 0);
	struct init_fds late;
	CHECK(initmsg_recv(sv[1], &r, &late) == sizeof r);
	CHECK(r.type == INIT_MSG_READY && r.fwd_mask == 0 && !r.has_proxy && !r.has_pty);
	for (size_t i = 1; i < NSLOT; i++)
		CHECK(*slot(&late, i) == -1);
	CHECK(late.listener >= 0);
	init_fds_take(&in, &late);
	CHECK(late.listener == -1);
	for (size_t i = 0; i < NSLOT; i++) {
		int o = *slot(&out, i), n = *slot(&in, i);
		CHECK((o < 0) == (n < 0));
		if (o >= 0 && n >= 0)
			CHECK(ino_of(o) == ino_of(n) && o != n);
	}
	init_fds_close(&out);
	init_fds_close(&in);
	for (size_t i = 0; i < NSLOT; i++)
		CHECK(*slot(&in, i) == -1);
}

static void test_every_combination(int sv[2])
{
	static const unsigned fwds[] = { 0, 1, 0x8000, 0x8001, 0x5555, 0xaaaa, 0xffff };
	for (unsigned flags = 0; flags < 64; flags++)
		for (size_t k = 0; k < sizeof fwds / sizeof fwds[0]; k++)
			round_trip(sv, flags, fwds[k] & ((1u << FORWARD_MAX) - 1));
}

static void test_half_namespaces(int sv[2])
{
	struct init_fds out, in;
	init_fds_none(&out);
	out.listener = stand_in();
	out.http = stand_in();
	out.socks = stand_in();
	out.userns = stand_in();
	out.hook = stand_in();
	struct init_msg m = { 0 }, r;
	CHECK(initmsg_send_sealed(sv[0], &m, &out) == 0);
	CHECK(initmsg_recv(sv[1], &r, &in) > 0);
	CHECK(!r.has_ns && in.userns == -1 && in.mntns == -1);
	CHECK(in.hook >= 0 && ino_of(in.hook) == ino_of(out.hook));
	init_fds_close(&out);
	init_fds_close(&in);
}

static void test_listeners_required(int sv[2])
{
	struct init_fds out;
	init_fds_none(&out);
	out.listener = stand_in();
	out.http = stand_in();
	struct init_msg m = { 0 };
	errno = 0;
	CHECK(initmsg_send_sealed(sv[0], &m, &out) == -1 && errno == EBADF);
	close(out.listener);
	out.listener = -1;
	out.socks = stand_in();
	errno = 0;
	CHECK(initmsg_send_ready(sv[0], &m, &out) == -1 && errno == EBADF);
	init_fds_close(&out);
}

static void test_error(int sv[2])
{
	initmsg_send_error(sv[0], EACCES, "mounts: /proc");
	struct init_msg r;
	struct init_fds in;
	CHECK(initmsg_recv(sv[1], &r, &in) > 0);
	CHECK(r.type == INIT_MSG_ERROR && r.errnum == EACCES);
	CHECK_STR(r.text, "mounts: /proc");
	for (size_t i = 0; i < NSLOT; i++)
		CHECK(*slot(&in, i) == -1);
}

/* Init fails while the supervisor's "c" waits unread in its socket: its
 * close resets the connection, and the error it sent must still be read. */
static void test_error_after_reset(void)
{
	int p[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0) {
		perror("test: socketpair");
		exit(2);
	}
	CHECK(send(p[1], "c", 1, 0) == 1);
	initmsg_send_error(p[0], EPERM, "uts namespace: setting the hostname");
	close(p[0]);
	struct init_msg r;
	struct init_fds in;
	CHECK(initmsg_recv(p[1], &r, &in) > 0);
	CHECK(r.type == INIT_MSG_ERROR && r.errnum == EPERM);
	CHECK_STR(r.text, "uts namespace: setting the hostname");
	CHECK(initmsg_recv(p[1], &r, &in) == 0);
	close(p[1]);
}

static void test_eof(int sv[2])
{
	close(sv[0]);
	struct init_msg r;
	struct init_fds in;
	CHECK(initmsg_recv(sv[1], &r, &in) == 0);
	CHECK(in.listener == -1 && in.hook == -1);
}

int main(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("test: socketpair");
		return 2;
	}
	test_every_combination(sv);
	test_half_namespaces(sv);
	test_listeners_required(sv);
	test_error(sv);
	test_error_after_reset();
	test_eof(sv);
	close(sv[1]);
	return check_status_counted("sandbox-initmsg");
}
