/* fanread.c - the helper that reports the reads outside the workspace
 * (fanread.h). Its body makes only system calls (forked from a process
 * with threads). */
#include "fanread.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/cpupin.h"
#include "../common/fdpass.h"
#include "../policy/policy.h"
#include "../sandbox/sandbox.h"

#define MARKS 4

struct marked {
	int fd;             /* a directory on the mount, for open_by_handle_at */
	fsid_t fsid;
};

static void say_errno(int err)
{
	struct fanread_msg m = { .pid = -err };
	(void)send(3, &m, sizeof m.pid, MSG_NOSIGNAL);
}

/* The marks refused: said, and the helper stays until the session ends,
 * idle. It is in the sandbox's user namespace, whose RLIMIT_NPROC counts
 * it and was raised for it (limits.h): its leaving would give the sandbox
 * one process more than its limit. */
static __attribute__((noreturn)) void refused(int err)
{
	say_errno(err);
	close(3);
	for (;;)
		pause();
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
		int d = open_by_handle_at(mk[i].fd, fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d < 0)
			continue;
		if (fchdir(d) == 0 && getcwd(out, cap) && out[0] == '/')
			l = (ssize_t)strlen(out);
		close(d);
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
			if (l && send(3, &out, sizeof out.pid + l, MSG_NOSIGNAL) < 0 && errno != EAGAIN)
				_exit(0);
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
	if (fdpass_recv(sock, &b, 1, &fd, 0) != 1 || fd < 0)
		_exit(0);
	return fd;
}

static __attribute__((noreturn)) void serve(const char *const *where, int sock, pid_t parent)
{
	/* nothing of the supervisor's kept while it waits (the init socket's
	 * copy would keep init from seeing the supervisor go): only sock, at 3 */
	if (sock != 3 && dup2(sock, 3) < 0)
		_exit(1);
	syscall(SYS_close_range, 4, ~0U, 0);
	int userns = ns_received(3), mntns = ns_received(3);
	nshelper_enter("warden-fanread", userns, mntns, CLONE_NEWNS, 3, parent);
	int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_REPORT_DFID_NAME,
				O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	if (fan < 0)
		refused(errno);
	struct marked mk[MARKS];
	size_t n = 0;
	for (size_t i = 0; i < MARKS && where[i]; i++) {
		int fd = open(where[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct statfs st;
		if (fd < 0 || fstatfs(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			continue; /* not there in this sandbox */
		}
		if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_CLOSE_NOWRITE, fd, NULL) < 0)
			refused(errno);
		mk[n++] = (struct marked){ .fd = fd, .fsid = st.f_fsid };
	}
	say_errno(0); /* marked: the supervisor goes on */
	for (;;) {
		static char buf[16384] __attribute__((aligned(8)));
		ssize_t len = read(fan, buf, sizeof buf);
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			_exit(1);
		relay(buf, len, mk, n);
	}
}

pid_t fanread_spawn(const char *home, int *sock, struct werr *e)
{
	const char *where[MARKS + 1] = { "/", "/tmp", "/var/tmp", home, NULL };
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "file reads: socketpair");
	pid_t parent = getpid();
	/* _Fork: the child makes system calls only, so libc's fork adds
	 * nothing it needs (its atfork handlers and the locks of malloc and
	 * stdio taken and reset), and each of those writes would copy a page
	 * shared with init, here and in the helper. */
	pid_t pid = _Fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return werr_errno(e, "file reads: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		serve(where, sv[1], parent);
	}
	cpupin_release(pid); /* at once (cpupin.h) */
	close(sv[1]);
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
	return werr_set(e, (int)-m.pid, "file reads outside the workspace are not recorded: "
			"the kernel refuses the sandbox a fanotify mark on its mounts (Linux 6.8 "
			"or later lets it)");
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
