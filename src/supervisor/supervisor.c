/* supervisor.c - the host side of a session: clone sandbox init into new
 * user, mount, pid, net, ipc, uts and cgroup namespaces, write its identity
 * maps, wait for it to report every layer built (or the one that failed),
 * then run the event loop: relay the pty, forward signals, and collect the
 * exit status through a pidfd. The supervisor is non-dumpable, and init dies
 * with it (PR_SET_PDEATHSIG), taking the whole pid namespace along. */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../net/proxy.h"
#include "notify.h"
#include "pty.h"

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | \
		  CLONE_NEWUTS | CLONE_NEWCGROUP)

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP };

static int userns_error(int err, struct werr *e)
{
	return werr_set(e, err, "user namespaces: the kernel refused to create the sandbox's "
		"namespaces (check the sysctls kernel.unprivileged_userns_clone=1, "
		"user.max_user_namespaces>0 and kernel.apparmor_restrict_unprivileged_userns=0; "
		"`warden doctor` reports them)");
}

/* Receive init's message and the fds it carries (-1 when absent). 0 on
 * EOF. */
static ssize_t recv_msg(int sock, struct init_msg *m, int fds[INIT_MSG_MAX_FDS])
{
	union {
		char buf[CMSG_SPACE(INIT_MSG_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof *m };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	for (int i = 0; i < INIT_MSG_MAX_FDS; i++)
		fds[i] = -1;
	ssize_t n;
	while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds, CMSG_DATA(c), (k > INIT_MSG_MAX_FDS ? INIT_MSG_MAX_FDS : k) * sizeof(int));
		}
	return n;
}

static int exit_status_of(int pidfd)
{
	siginfo_t si = { 0 };
	while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return 125;
	if (si.si_code == CLD_EXITED)
		return si.si_status;
	return 128 + si.si_status;
}

/* The event loop after init reported ready: runs until init exits. */
static int event_loop(int pidfd, int sigfd, int master, struct notifier *nt, int listener,
		      struct proxy *px, struct werr *e)
{
	_cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return werr_errno(e, "supervisor: epoll");
	struct epoll_event ev = { .events = EPOLLIN };
	ev.data.fd = pidfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev);
	ev.data.fd = sigfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sigfd, &ev);
	ev.data.fd = listener;
	epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
	ev.data.fd = proxy_fd(px);
	epoll_ctl(ep, EPOLL_CTL_ADD, proxy_fd(px), &ev);
	if (master >= 0) {
		ev.data.fd = master;
		epoll_ctl(ep, EPOLL_CTL_ADD, master, &ev);
		ev.data.fd = STDIN_FILENO;
		/* A stdin that epoll cannot watch (a regular file) is not relayed. */
		(void)epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev);
	}
	for (;;) {
		struct epoll_event evs[8];
		int n = epoll_wait(ep, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return werr_errno(e, "supervisor: epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == pidfd) {
				/* Drain what the command wrote before it ended. */
				if (master >= 0)
					while (pty_pump(master, STDOUT_FILENO) == 1) {
						struct pollfd p = { .fd = master, .events = POLLIN };
						if (poll(&p, 1, 0) <= 0)
							break;
					}
				return exit_status_of(pidfd);
			} else if (fd == sigfd) {
				struct signalfd_siginfo si;
				if (read(sigfd, &si, sizeof si) != sizeof si)
					continue;
				if (si.ssi_signo == SIGWINCH) {
					if (master >= 0)
						pty_copy_winsize(STDIN_FILENO, master);
				} else if (si.ssi_signo != SIGCHLD) {
					syscall(SYS_pidfd_send_signal, pidfd, si.ssi_signo, NULL, 0);
				}
			} else if (fd == proxy_fd(px)) {
				proxy_dispatch(px);
			} else if (fd == listener) {
				if (evs[i].events & (EPOLLHUP | EPOLLERR))
					epoll_ctl(ep, EPOLL_CTL_DEL, listener, NULL);
				else
					notifier_handle(nt);
			} else if (fd == master) {
				if (pty_pump(master, STDOUT_FILENO) <= 0)
					epoll_ctl(ep, EPOLL_CTL_DEL, master, NULL);
			} else if (fd == STDIN_FILENO) {
				if (pty_pump(STDIN_FILENO, master) <= 0)
					epoll_ctl(ep, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
			}
		}
	}
}

int supervisor_run(struct sandbox_spec *s, struct audit *log, int *status, struct werr *e)
{
	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_LEN(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGPIPE);
	sigset_t old;
	sigprocmask(SIG_BLOCK, &mask, &old);
	_cleanup_close_ int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return werr_errno(e, "supervisor: signalfd");

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "supervisor: socketpair");
	_cleanup_close_ int sock = sv[0];

	int pidfd = -1;
	struct clone_args ca = {
		.flags = NS_FLAGS | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
	};
	/* Before the clone, while nothing else runs: init never waits for
	 * these (a hand-over between processes can cost more than the work on
	 * a busy machine). */
	if (workspace_make_placeholders(&s->plan, e) < 0 || seccomp_compile(s, e) < 0) {
		close(sv[1]);
		return -1;
	}
	fflush(NULL);
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid < 0) {
		int err = errno;
		close(sv[1]);
		return userns_error(err, e);
	}
	if (pid == 0) {
		close(sv[0]);
		s->sync_fd = sv[1];
		sandbox_init_main(s);
	}
	close(sv[1]);
	_cleanup_close_ __attribute__((unused)) int pfd = pidfd; /* closes pidfd */
	/* Non-dumpable only now: a child cloned from a non-dumpable parent has
	 * root-owned /proc files, and an unprivileged supervisor could not write
	 * its identity maps. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0) {
		kill((pid_t)pid, SIGKILL);
		exit_status_of(pidfd);
		return werr_errno(e, "supervisor: making itself non-dumpable");
	}

	if (userns_write_maps((pid_t)pid, s->uid, s->gid, e) < 0) {
		kill((pid_t)pid, SIGKILL);
		exit_status_of(pidfd);
		return -1;
	}
	if (write(sock, "g", 1) != 1) {
		kill((pid_t)pid, SIGKILL);
		exit_status_of(pidfd);
		return werr_errno(e, "supervisor: starting init");
	}

	struct init_msg m;
	int fds[INIT_MSG_MAX_FDS];
	ssize_t n = recv_msg(sock, &m, fds);
	_cleanup_close_ int listener = fds[0];
	int http_l = fds[1], socks_l = fds[2]; /* owned by the proxy from here */
	_cleanup_close_ int master = n > 0 && m.has_pty ? fds[3] : -1;
	if (n > 0 && m.type == INIT_MSG_READY && listener < 0) {
		kill((pid_t)pid, SIGKILL);
		exit_status_of(pidfd);
		return werr_set(e, 0, "cannot build the sandbox: init sent no seccomp listener");
	}
	if (n <= 0 || m.type != INIT_MSG_READY) {
		if (http_l >= 0)
			close(http_l);
		if (socks_l >= 0)
			close(socks_l);
		int st = exit_status_of(pidfd);
		if (n > 0 && m.type == INIT_MSG_ERROR) {
			m.text[sizeof m.text - 1] = '\0';
			return werr_set(e, m.errnum, "cannot build the sandbox: %s", m.text);
		}
		return werr_set(e, 0, "cannot build the sandbox: init ended (status %d) "
				"before reporting", st);
	}
	if (master >= 0) {
		pty_copy_settings(STDIN_FILENO, master);
		pty_host_raw(STDIN_FILENO);
		fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
		if (write(sock, "r", 1) != 1) { /* init died meanwhile: its status tells */ }
	}

	struct proxy *px = NULL;
	struct notifier *nt = notifier_new(listener, log);
	if (!nt || !(px = proxy_new(http_l, socks_l, &s->policy->net_rules, log, e))) {
		if (!nt)
			werr_set(e, ENOMEM, "supervisor: seccomp notification buffers");
		kill((pid_t)pid, SIGKILL);
		exit_status_of(pidfd);
		notifier_free(nt);
		return -1;
	}
	int r = event_loop(pidfd, sigfd, master, nt, listener, px, e);
	proxy_free(px); /* logs the connections still open */
	notifier_free(nt);
	if (master >= 0)
		pty_host_restore(STDIN_FILENO);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		kill((pid_t)pid, SIGKILL);
		exit_status_of(pidfd);
		return -1;
	}
	*status = r;
	return 0;
}
