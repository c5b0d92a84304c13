/* fanread.c - the helper that reports the reads outside the workspace
 * (fanread.h). Its body makes only rawsys's system calls and writes only
 * its own stack: it runs on the supervisor's memory (spawn, below). */
#include "fanread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cpupin.h"
#include "../common/fdpass.h"
#include "../common/notifylimit.h"
#include "../common/rawsys.h"
#include "../common/util.h"
#include "../common/vmchild.h"
#include "../policy/policy.h"
#include "../sandbox/features.h"
#include "../sandbox/sandbox.h"

#define MARKS 4

struct marked {
	int fd;             /* a directory on the mount, for open_by_handle_at */
	fsid_t fsid;
};

static void say_errno(long err)
{
	int32_t pid = (int32_t)-err;
	(void)rawsys(SYS_sendto, 3, &pid, sizeof pid, MSG_NOSIGNAL, NULL, 0);
}

/* The marks refused: said, and the helper stays until the session ends,
 * idle. It is in the sandbox's user namespace, whose RLIMIT_NPROC counts
 * it and was raised for it (limits.h): its leaving would give the sandbox
 * one process more than its limit. */
static __attribute__((noreturn)) void refused(long err)
{
	say_errno(err);
	rawsys(SYS_close, 3);
	for (;;)
		rawsys(SYS_ppoll, NULL, 0, NULL, NULL, 0);
}

/* The path of the file named name in the directory that handle fh is, on
 * the mount whose fsid is fsid: written to out (at most cap bytes); its
 * length, 0 when it cannot be had. */
static size_t resolve(const struct marked *mk, size_t n, const fsid_t *fsid,
		      struct file_handle *fh, const char *name, char *out, size_t cap)
{
	/* O_PATH is refused here to a user namespace; a directory opened for
	 * reading is not reported (no FAN_ONDIR). Each mount on the file
	 * system tried: through a bind of part of it (/tmp and /var/tmp are
	 * two directories of one tmpfs) a directory outside that part has no
	 * path ("(unreachable)"). Its path from the sandbox's root by getcwd:
	 * /proc inside is the sandbox's pid namespace's, where the helper has
	 * no entry. */
	ssize_t l = -1;
	for (size_t i = 0; i < n && l < 0; i++) {
		if (memcmp(&mk[i].fsid, fsid, sizeof *fsid) != 0)
			continue;
		long d = rawsys(SYS_open_by_handle_at, mk[i].fd, fh,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d < 0)
			continue;
		if (rawsys(SYS_fchdir, d) == 0 && rawsys(SYS_getcwd, out, cap) > 0 && out[0] == '/')
			l = (ssize_t)strlen(out);
		rawsys(SYS_close, d);
	}
	size_t nl = strlen(name);
	if (l <= 0 || (size_t)l + 1 + nl > cap)
		return 0;
	size_t o = (size_t)l;
	if (o > 1 || out[0] != '/')
		out[o++] = '/';
	memcpy(out + o, name, nl);
	return o + nl;
}

/* The events in buf (len bytes), each sent as a fanread_msg. */
static void relay(const char *buf, ssize_t len, const struct marked *mk, size_t n)
{
	for (const char *p = buf; p + (ssize_t)sizeof(struct fanotify_event_metadata) <= buf + len;) {
		const struct fanotify_event_metadata *m = (const void *)p;
		if (m->event_len < sizeof *m || p + m->event_len > buf + len)
			return;
		const struct fanotify_event_info_fid *fi = (const void *)(m + 1);
		if (m->event_len > sizeof *m + sizeof *fi &&
		    fi->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
			struct file_handle *fh = (struct file_handle *)(void *)fi->handle;
			const char *name = (const char *)fh->f_handle + fh->handle_bytes;
			struct fanread_msg out = { .pid = m->pid };
			size_t l = resolve(mk, n, (const fsid_t *)&fi->fsid, fh, name, out.path,
					   sizeof out.path);
			long r = l ? rawsys(SYS_sendto, 3, &out, sizeof out.pid + l, MSG_NOSIGNAL,
					    NULL, 0) : 0;
			if (r < 0 && r != -EAGAIN)
				rawsys_exit(0);
		}
		p += m->event_len;
	}
}

/* The namespaces, one message each (fanread_enter); the helper ends when
 * the supervisor closes the socket instead (the sandbox was never built). */
static int ns_received(int sock)
{
	char b;
	int fd = -1;
	if (fdpass_recv_raw(sock, &b, 1, &fd, 0) != 1 || fd < 0)
		rawsys_exit(0);
	return fd;
}

/* What the helper is given: copied to the top of its stack, where it
 * reads them (the spawner's frame is gone by then). */
struct start {
	char home[256];               /* the agent's home inside, marked too */
	int sock;                     /* its end of the socket */
	pid_t parent;                 /* the supervisor */
};

/* A mark on the mount of directory fd, for files closed after a read. */
static long mark(long fan, long fd)
{
#if RAWSYS_NATIVE
	return rawsys(SYS_fanotify_mark, fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_CLOSE_NOWRITE, fd,
		      NULL);
#else
	/* forked (spawn): libc's call, which also splits the 64-bit mask
	 * where a register is narrower */
	return fanotify_mark((int)fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_CLOSE_NOWRITE, (int)fd,
			     NULL) < 0 ? -errno : 0;
#endif
}

/* Whether a file can be opened by the handle fanotify gives (each read's
 * directory: resolve), asked once of the first mark's directory: 0, or
 * -errno. Where the kernel or a seccomp filter outside warden refuses it
 * (a container engine's default refuses open_by_handle_at without
 * CAP_DAC_READ_SEARCH) no read could be named, and each would be dropped
 * unsaid. */
static long handles_open(const struct marked *mk, size_t n)
{
	if (n == 0)
		return 0;
	char b[sizeof(struct file_handle) + MAX_HANDLE_SZ] __attribute__((aligned(8)));
	struct file_handle *fh = (struct file_handle *)(void *)b;
	fh->handle_bytes = MAX_HANDLE_SZ;
	int mnt;
	long r = rawsys(SYS_name_to_handle_at, mk[0].fd, "", fh, &mnt, AT_EMPTY_PATH);
	if (r < 0)
		return r;
	long d = rawsys(SYS_open_by_handle_at, mk[0].fd, fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return d;
	rawsys(SYS_close, d);
	return 0;
}

static __attribute__((noreturn)) void serve(const struct start *st)
{
	/* nothing of the supervisor's kept while it waits (the init socket's
	 * copy would keep init from seeing the supervisor go): only sock, at 3 */
	if (st->sock != 3 && rawsys(SYS_dup3, st->sock, 3, 0) < 0)
		rawsys_exit(1);
	rawsys(SYS_close_range, 4, ~0U, 0);
	int userns = ns_received(3), mntns = ns_received(3);
	nshelper_enter("warden-fanread", userns, mntns, CLONE_NEWNS, 3, st->parent);
	long fan = rawsys(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_REPORT_DFID_NAME,
			  O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	if (fan < 0)
		refused(-fan);
	const char *const where[MARKS] = { "/", "/tmp", "/var/tmp", st->home };
	struct marked mk[MARKS];
	size_t n = 0;
	for (size_t i = 0; i < MARKS; i++) {
		long fd = rawsys(SYS_openat, AT_FDCWD, where[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct statfs sf;
		if (fd < 0 || rawsys(SYS_fstatfs, fd, &sf) < 0) {
			if (fd >= 0)
				rawsys(SYS_close, fd);
			continue; /* not there in this sandbox */
		}
		long r = mark(fan, fd);
		if (r < 0)
			refused(-r);
		mk[n++] = (struct marked){ .fd = (int)fd, .fsid = sf.f_fsid };
	}
	long h = handles_open(mk, n);
	if (h < 0)
		refused(-h);
	say_errno(0); /* marked: the supervisor goes on */
	for (;;) {
		char buf[16384] __attribute__((aligned(8)));
		long len = rawsys(SYS_read, fan, buf, sizeof buf);
		if (len == -EINTR)
			continue;
		if (len <= 0)
			rawsys_exit(1);
		relay(buf, len, mk, n);
	}
}

/* The helper runs on the supervisor's memory (vmchild.h); one for warden's
 * life, the last session's killed at its end (fanread_end), reaped there
 * or before the next starts. */
static struct vmchild helper = VMCHILD_NONE;

static int helper_main(void *arg)
{
	serve(arg);
}

pid_t fanread_spawn(const char *home, int *sock, struct werr *e)
{
	struct start st = { .parent = getpid() };
	if (strlen(home) >= sizeof st.home)
		return werr_set(e, ENAMETOOLONG, "file reads: the home inside is too long");
	strcpy(st.home, home);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "file reads: socketpair");
	st.sock = sv[1];
	(void)vmchild_reap(&helper, true);
	pid_t pid = vmchild_start(&helper, helper_main, &st, sizeof st, "file reads: the helper", e);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	cpupin_release(pid); /* at once (cpupin.h) */
	*sock = sv[0];
	return pid;
}

int fanread_enter(int sock, int userns, int mntns)
{
	return fdpass_send(sock, "u", 1, userns) < 0 || fdpass_send(sock, "m", 1, mntns) < 0 ? -1 : 0;
}

int fanread_ready(pid_t pid, int *sock, struct werr *e)
{
	struct pollfd pf = { .fd = *sock, .events = POLLIN };
	struct fanread_msg m = { .pid = -ETIMEDOUT };
	int ready = poll(&pf, 1, 5000);
	if (ready == 1 && recv(*sock, &m, sizeof m.pid, 0) != (ssize_t)sizeof m.pid)
		m.pid = -ECHILD; /* it ended before it could say */
	if (m.pid == 0)
		return 0;
	close(*sock);
	*sock = -1;
	/* the user's limit of groups (fanotify_init) or of marks (each
	 * mark's): the kernel lets it, the count is full */
	char said[400];
	if (notify_limit_said(NOTIFY_FANOTIFY_GROUPS, (int)-m.pid, said, sizeof said) ||
	    notify_limit_said(NOTIFY_FANOTIFY_MARKS, (int)-m.pid, said, sizeof said)) {
		werr_set(e, (int)-m.pid, "file reads outside the workspace are not recorded");
		return werr_hint(e, "%s", said);
	}
	if (features_self_filtered())
		return werr_set(e, (int)-m.pid, "file reads outside the workspace are not "
				"recorded: the kernel, or a seccomp filter outside warden, refuses "
				"the sandbox a fanotify group, a mark or a file opened by its handle. "
				"The kernel lets it from Linux 6.10; in a container, "
				FEATURES_CONTAINER_PROFILE_HINT);
	return werr_set(e, (int)-m.pid, "file reads outside the workspace are not recorded: "
			"the kernel refuses the sandbox a fanotify mark on its mounts or a file "
			"opened by its handle (Linux 6.10 or later lets it)");
}

bool fanread_wanted(const struct policy *p)
{
	return !p->audit_minimal;
}

void fanread_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, WNOHANG);
}
