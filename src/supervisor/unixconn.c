/* unixconn.c - connects to pathname unix sockets on the sandbox's behalf
 * (unixconn.h). */
#include "unixconn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/util.h"
#include "../net/sockdiag.h"
#include "../sandbox/paths.h"
#include "target.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* The kernel's dev_t in sock_diag (major << 20 | minor). */
static bool same_dev(uint32_t kdev, dev_t dev)
{
	return (kdev >> 20) == major(dev) && (kdev & 0xfffff) == minor(dev);
}

struct bound_q {
	dev_t dev;
	ino_t ino;
	int found;
};

/* One unix socket of the dump: bound to the file asked about? */
static int bound_to(const struct nlmsghdr *h, void *arg)
{
	struct bound_q *b = arg;
	if (h->nlmsg_type == NLMSG_DONE)
		return 1;
	if (h->nlmsg_type == NLMSG_ERROR)
		return -1;
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	size_t alen = h->nlmsg_len - NLMSG_LENGTH(sizeof *m);
	for (const struct rtattr *a = (const struct rtattr *)(m + 1); RTA_OK(a, alen);
	     a = RTA_NEXT(a, alen))
		if (a->rta_type == UNIX_DIAG_VFS && RTA_PAYLOAD(a) >= sizeof(struct unix_diag_vfs)) {
			struct unix_diag_vfs v;
			memcpy(&v, RTA_DATA(a), sizeof v);
			if (v.udiag_vfs_ino == b->ino && same_dev(v.udiag_vfs_dev, b->dev))
				b->found = 1;
		}
	return 0;
}

int unixconn_bound(int diag, dev_t dev, ino_t ino)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} q = {
		.nh = { .nlmsg_len = sizeof q, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = AF_UNIX, .udiag_states = ~0U, .udiag_show = UDIAG_SHOW_VFS },
	};
	struct bound_q b = { .dev = dev, .ino = ino };
	return sockdiag_ask(diag, &q, sizeof q, bound_to, &b) < 0 ? -1 : b.found;
}

/* The hook socket (SANDBOX_HOOK_SOCK), once sock_diag has found it bound
 * inside: on the sandbox's read-only root, that name and its inode stay
 * the session's, so a hook's connect (one per tool call) skips the dump. */
static struct {
	bool known;
	dev_t dev;
	ino_t ino;
} hook_sock;

/* Resolve sun_path for process pid and decide: the O_PATH fd of a socket
 * bound inside, or -1 with r filled (refused or no socket). */
static int resolve(int diag, pid_t pid, const char *sun_path, struct unixconn_result *r)
{
	memset(r, 0, sizeof *r);
	r->verdict = UNIXCONN_NONE;
	char cwd[4096] = "";
	if (sun_path[0] != '/')
		target_cwd(pid, cwd, sizeof cwd);
	_cleanup_close_ int fd = target_open(pid, AT_FDCWD, false, sun_path, 0, O_PATH | O_CLOEXEC,
					     cwd, r->resolved, sizeof r->resolved);
	if (fd < 0) {
		r->err = errno == ENOTDIR || errno == ENOENT || errno == EACCES || errno == ELOOP ||
				 errno == ENAMETOOLONG
			? errno : ENOENT;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		r->err = ECONNREFUSED; /* what connect(2) says of a file that is no socket */
		return -1;
	}
	bool hook = strcmp(r->resolved, SANDBOX_HOOK_SOCK) == 0;
	if (hook && hook_sock.known && st.st_dev == hook_sock.dev && st.st_ino == hook_sock.ino)
		return steal_fd(&fd);
	int in = diag >= 0 ? unixconn_bound(diag, st.st_dev, st.st_ino) : -1;
	if (in == 1 && hook)
		hook_sock.known = true, hook_sock.dev = st.st_dev, hook_sock.ino = st.st_ino;
	if (in != 1) {
		/* not the sandbox's: the host's (refused), or nobody's */
		int out = sockdiag_own() >= 0 ? unixconn_bound(sockdiag_own(), st.st_dev, st.st_ino) : -1;
		if (out != 0 || in < 0) {
			r->verdict = UNIXCONN_HOST;
			r->err = EPERM;
		} else {
			r->err = ECONNREFUSED; /* bound nowhere: a stale socket file */
		}
		return -1;
	}
	return steal_fd(&fd);
}

/* A duplicate of the process's socket, or -1 with r->err set. */
static int their_socket(pid_t pid, int sockfd, struct unixconn_result *r)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int sfd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, sockfd, 0) : -1;
	if (sfd < 0)
		r->err = errno == EBADF ? EBADF : EPERM;
	return sfd;
}

/* Both ends for the supervisor's call: the socket inode decided on (its
 * O_PATH fd, returned: the caller closes it), addressed in *un through
 * /proc/self/fd, and a duplicate of the process's socket in *sfd. -1 with r
 * filled when there is nothing to call. */
static int both_ends(int diag, pid_t pid, int sockfd, const char *sun_path,
		     struct unixconn_result *r, int *sfd, struct sockaddr_un *un)
{
	_cleanup_close_ int fd = resolve(diag, pid, sun_path, r);
	if (fd < 0)
		return -1;
	if ((*sfd = their_socket(pid, sockfd, r)) < 0)
		return -1;
	*un = (struct sockaddr_un){ .sun_family = AF_UNIX };
	snprintf(un->sun_path, sizeof un->sun_path, "/proc/self/fd/%d", fd);
	r->verdict = UNIXCONN_CONNECTED;
	return steal_fd(&fd);
}

void unixconn_connect(int diag, pid_t pid, int sockfd, const char *sun_path,
		      struct unixconn_result *r)
{
	struct sockaddr_un un;
	_cleanup_close_ int sfd = -1;
	_cleanup_close_ int fd = both_ends(diag, pid, sockfd, sun_path, r, &sfd, &un);
	if (fd < 0)
		return;
	/* Never block the supervisor: a full backlog is EAGAIN, as for a
	 * non-blocking socket. */
	int fl = fcntl(sfd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(sfd, F_SETFL, fl | O_NONBLOCK);
	r->err = connect(sfd, (struct sockaddr *)&un, sizeof un) == 0 ? 0 : errno;
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(sfd, F_SETFL, fl);
}

void unixconn_sendto(int diag, pid_t pid, int sockfd, const char *sun_path, const void *data,
		     size_t len, int flags, struct unixconn_result *r, size_t *sent)
{
	*sent = 0;
	struct sockaddr_un un;
	_cleanup_close_ int sfd = -1;
	_cleanup_close_ int fd = both_ends(diag, pid, sockfd, sun_path, r, &sfd, &un);
	if (fd < 0)
		return;
	ssize_t n = sendto(sfd, data, len, flags | MSG_DONTWAIT | MSG_NOSIGNAL,
			   (struct sockaddr *)&un, sizeof un);
	r->err = n < 0 ? errno : 0;
	*sent = n > 0 ? (size_t)n : 0;
}

void unixconn_masked(struct unixconn_result *r, const char *ws)
{
	struct stat st;
	if (r->verdict != UNIXCONN_NONE || r->err != ECONNREFUSED || !ws || !*r->resolved ||
	    !path_is_within(r->resolved, ws) || lstat(r->resolved, &st) < 0 || !S_ISSOCK(st.st_mode))
		return;
	r->verdict = UNIXCONN_HOST;
	r->err = EPERM;
}
