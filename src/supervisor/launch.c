/* launch.c - the first phase of a session (launch.h): clone sandbox init
 * into new user, mount, pid, ipc, uts and cgroup namespaces, write its
 * identity maps, make its network namespace beside it (the maker, below),
 * put it under the session's limits before it starts, and wait for it to
 * report every layer built (or the one that failed). The
 * supervisor makes itself non-dumpable on the way, and init dies with it
 * (PR_SET_PDEATHSIG), taking the whole pid namespace along. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/bgjob.h"
#include "../common/cpupin.h"
#include "../common/vmchild.h"
#include "../sandbox/limits.h"
#include "exec/bpfexec.h"
#include "fanread.h"
#include "freeze.h"
#include "llaudit.h"
#include "../sandbox/features.h"

/* and the network namespace, made beside init (start_maker) */
#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | \
		  CLONE_NEWCGROUP)

/* The sandbox's network namespace is made beside init while init builds
 * the mounts, by a helper on the supervisor's memory (net_make_main,
 * sandbox.h): made by the clone, it held the clone up for about 0.6 ms
 * (the kernel's set-up of a network namespace), during which neither
 * process could go on. One maker at a time (its stack is kept), reaped by
 * the session that started it (await_init, launched_free). */
static struct vmchild maker = VMCHILD_NONE;

/* Why init's clone into its namespaces failed. ENOSYS from clone3 (Linux
 * 5.3 and later has it) is a seccomp filter's: Docker's and containerd's
 * defaults answer so to a container without CAP_SYS_ADMIN, and warden's
 * own does inside a session. */
static int userns_error(int err, struct werr *e)
{
	if (err == ENOSYS)
		return werr_set(e, err, "user namespaces: a seccomp filter outside warden refuses "
				"sandbox init's clone into its namespaces (clone3). In a container "
				"(Docker's and containerd's default profiles refuse it): "
				FEATURES_CONTAINER_PROFILE_HINT ". Inside a warden session: sandboxes "
				"do not nest, run warden outside it");
	return werr_set(e, err, "user namespaces: the kernel refused to create the sandbox's "
		"namespaces (check the sysctls kernel.unprivileged_userns_clone=1, "
		"user.max_user_namespaces>0 and kernel.apparmor_restrict_unprivileged_userns=0; "
		"`warden doctor` reports them%s)",
		features_self_filtered() ? "; or a seccomp filter outside warden, under which warden "
		"runs: in a container, " FEATURES_CONTAINER_PROFILE_HINT : "");
}

/* Init's "s" (it runs), taken: the bits of the cgroups it moved itself
 * into (limits_self_move), after the "s"; -1 when init sent something
 * else instead (its error, left for initmsg_recv) or is gone. */
static int init_running(int sock)
{
	char b[2];
	ssize_t n;
	/* past a reset (initmsg_recv_again): else the "s" queued behind it,
	 * left unread, would be taken for init's next message */
	bool reset = false;
	while ((n = recv(sock, b, 1, MSG_PEEK)) < 0 && initmsg_recv_again(errno, &reset))
		;
	if (n != 1 || b[0] != 's')
		return -1;
	while ((n = recv(sock, b, sizeof b, 0)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof b ? (unsigned char)b[1] : -1;
}

/* One byte that init waits for: 0 when sent, or when init is gone (its
 * message or status tells why); -1 with errno when a running init would
 * wait for it for ever. */
static int send_byte(int sock, char c)
{
	ssize_t n;
	while ((n = send(sock, &c, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n == 1 || errno == EPIPE || errno == ECONNRESET ? 0 : -1;
}

struct child launched_leave_init(struct launched *L)
{
	struct child c = L->c;
	if (c.pid > 0)
		kill(c.pid, SIGKILL);
	L->c = CHILD_NONE;
	return c;
}

void launched_free(struct launched *L)
{
	init_fds_close(&L->fds);
	sbctl_free(L->sb);
	L->sb = NULL;
	llaudit_free(L->la);
	L->la = NULL;
	child_end(&L->c);
	(void)vmchild_reap(&maker, true);
	bpfexec_free(L->bx);
	L->bx = NULL;
	closep(&L->sock);
}

/* Whether the exec rules are enforced in the kernel too (`exec kernel
 * auto|on|off`, exec/bpfexec.h): *out loaded for the session, or NULL when not
 * asked for (off; auto without root or rules) or, under auto, not
 * available here (*why says why). -1 when on and not available, or when
 * available and failing. */
static int kernel_exec(const struct sandbox_spec *s, struct limits *lim, struct bpfexec **out,
		       char *why, size_t len, struct werr *e)
{
	const struct policy_exec *x = &s->policy->exec;
	*out = NULL;
	snprintf(why, len, "%s", x->kernel == EXEC_KERNEL_OFF ? "exec kernel off"
				 : "no exec deny or default deny rules");
	if (x->kernel == EXEC_KERNEL_OFF ||
	    (x->kernel == EXEC_KERNEL_AUTO && !x->deny.n && !x->default_deny))
		return 0;
	if (x->kernel == EXEC_KERNEL_AUTO && !caps_admin()) {
		snprintf(why, len, "not root");
		return 0;
	}
	bool unavailable = false;
	*out = bpfexec_new(s->policy, lim ? limits_cgroup_v2(lim) : NULL, &unavailable, e);
	if (*out)
		return 0;
	if (x->kernel == EXEC_KERNEL_ON)
		return werr_wrap(e, "exec kernel on: the exec rules cannot be enforced in the kernel here");
	if (!unavailable)
		return werr_wrap(e, "exec kernel auto: this host offers BPF LSM, but enforcing the exec "
				 "rules with it failed (`exec kernel off` runs without)");
	werr_str(e, why, len);
	memset(e, 0, sizeof *e);
	return 0;
}

struct maker_arg {
	int userns; /* init's user namespace */
	int sock;   /* init's socket, the supervisor's end */
	pid_t parent;
};

static int maker_main(void *p)
{
	const struct maker_arg *a = p;
	return net_make_main(a->userns, a->sock, a->parent);
}

/* Init's user namespace, opened while init can still be looked at (it
 * makes itself non-dumpable once mapped): -1 with e set. */
static int init_userns(pid_t init, struct werr *e)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)init);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return werr_errno(e, "network namespace: opening sandbox init's user namespace (%s)",
				  path);
	return fd;
}

/* Started once init has its "g", so that nothing of the maker's holds up
 * what init waits for; init needs the namespace only once its mounts are
 * built. Set apart from the supervisor's CPU at once (cpupin.h): left on
 * it, the maker waited there for the supervisor's next wait (the
 * placeholders, Landlock's records, the checkpoint's start come first),
 * and init, its mounts built, waited for the maker; set apart, a session
 * took 0.5-0.6 ms less as root and 0.25 ms less as a user, on the same CPU
 * time (bench/README.md, "Night, 2026-12-07"). */
static int start_maker(int userns, int sock, struct werr *e)
{
	struct maker_arg a = { .userns = userns, .sock = sock, .parent = getpid() };
	pid_t pid = vmchild_start(&maker, maker_main, &a, sizeof a, "network namespace: its maker",
				  e);
	if (pid < 0)
		return -1;
	cpupin_apart(pid);
	return 0;
}

/* The maker's end, once it came (its pidfd readable): 0 when it handed
 * init the namespace or told it why not (its status 0: init says what
 * then), or when init has something to say already (its error, or its
 * end, which the maker's failure to send it anything then was); -1 when
 * it ended without either (killed, or refused its way into init's user
 * namespace), which init would wait for for ever. */
static int maker_ended(int init_sock, struct werr *e)
{
	int st = vmchild_reap(&maker, false);
	struct pollfd pf = { .fd = init_sock, .events = POLLIN };
	if (st < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 0) || poll(&pf, 1, 0) == 1)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		return werr_set(e, 0, "network namespace: its maker (warden-netns) could not enter "
				"sandbox init's user namespace (setns refused: by a seccomp filter "
				"outside warden? In a container, run it with warden's seccomp profile, "
				"see doc/containers.md)");
	if (WIFEXITED(st))
		return werr_set(e, 0, "network namespace: its maker (warden-netns) ended (status %d) "
				"without handing the namespace to sandbox init", WEXITSTATUS(st));
	return werr_set(e, 0, "network namespace: its maker (warden-netns) was killed by signal "
			"%d before it handed the namespace to sandbox init", WTERMSIG(st));
}

/* Clone init into its namespaces, with sync_fd its end of the socket whose
 * other end, sock, it closes; c holds it on success. Into the session's
 * cgroup v2 when there is one (limits.h: no move afterwards, whose kernel
 * lock waits for an RCU grace period); should the kernel refuse that, a
 * clone as before, and limits_attach moves it. Init moves itself into the
 * session's cgroup v1 ones once its maps are written (limits_self_move, as
 * it says it runs), when it has left the supervisor's CPU (below): a clone
 * into a new cgroup wakes a kernel worker on the cloning CPU, which
 * preempts the supervisor, and init then runs there first, until it
 * blocks; made as its first step, the move held the supervisor up 0.4 ms
 * more (bench/README.md, "Evening, 2026-12-03"). */
static int start_init(struct sandbox_spec *s, struct limits *lim, int sock, int sync_fd,
		      struct child *c, struct werr *e)
{
	int pidfd = -1;
	_cleanup_close_ int cgfd = lim ? limits_clone_fd(lim) : -1;
	int tasks[CTL_COUNT] = { -1, -1, -1 };
	_Static_assert(sizeof tasks == sizeof s->cgroup_tasks, "one tasks file per controller");
	if (lim)
		limits_self_open(lim, tasks);
	struct clone_args ca = {
		.flags = NS_FLAGS | CLONE_PIDFD | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0),
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = cgfd >= 0 ? (uint64_t)cgfd : 0,
	};
	/* init is a clone made without libc's fork: no other thread of the
	 * setup may run now (bgjob.h), whose locks of libc's would stay held
	 * in init for ever */
	if (!bgjob_idle())
		return werr_set(e, 0, "internal error: a job of the session's setup still runs at "
				"sandbox init's clone");
	fflush(NULL);
	/* the sandbox on the user's CPUs but the supervisor's while init
	 * builds it, on all of them from then on (cpupin.h): until set apart
	 * init can run only where the supervisor does, and a clone into a
	 * new cgroup made it run there first (cpupin_clone_begin) */
	bool rt = cgfd >= 0 && cpupin_clone_begin();
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid < 0 && cgfd >= 0) {
		ca.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		ca.cgroup = 0;
		pid = syscall(SYS_clone3, &ca, sizeof ca);
	} else if (pid > 0 && cgfd >= 0) {
		lim->born_v2 = true;
	}
	int err = errno;
	if (pid > 0)
		cpupin_apart((pid_t)pid); /* before the priority is back */
	if (pid != 0)
		cpupin_clone_end(rt);
	if (pid == 0) {
		memcpy(s->cgroup_tasks, tasks, sizeof tasks);
		close(sock);
		if (cgfd >= 0)
			close(cgfd); /* a host directory: nothing of init's */
		s->sync_fd = sync_fd;
		sandbox_init_main(s);
	}
	limits_self_close(tasks);
	if (pid < 0 && err == EAGAIN)
		return werr_fork(e, err, "sandbox init: its clone into the sandbox's namespaces");
	if (pid < 0)
		return userns_error(err, e);
	*c = (struct child){ .pid = (pid_t)pid, .pidfd = pidfd };
	return 0;
}

/* What must be in place before init starts: the exec rules in the kernel
 * (its cgroup is registered, and nothing of it runs unchecked; before the
 * filter: with them, code mapped from files goes by the supervisor); then,
 * while nothing else runs, what init never waits for (a hand-over between
 * processes can cost more than the work on a busy machine): the filter,
 * and as root the host paths init shows, as trees it inherits (hostid.h).
 * The placeholders only under --review: its overlay, mounted by init
 * first, would not show a file made in its lower layer afterwards; else
 * they are made while init starts (launch). */
static int prepare(struct sandbox_spec *s, struct limits *lim, struct launched *L,
		   struct werr *e)
{
	if (kernel_exec(s, lim, &L->bx, L->kernel_why, sizeof L->kernel_why, e) < 0)
		return -1;
	s->exec_kernel = L->bx != NULL;
	if ((s->review_upper && workspace_make_placeholders(&s->plan, e) < 0) ||
	    seccomp_compile(s, e) < 0)
		return -1;
	if (s->ids.active && hostid_trees(&s->ids, s, e) < 0)
		return -1;
	if (s->ids.active)
		hostid_stdio(&s->ids, s->pty_fds);
	/* The command's process shares init's memory until its exec (vfork:
	 * no copy of init's page tables, no page copied on write). That
	 * memory stays non-dumpable: when this process can read it anyway
	 * (CAP_SYS_PTRACE), the exec's arguments are read from it as from
	 * any; else init plans the exec and says it (initmsg.h, exec_path),
	 * and a fork made dumpable is the way for any other (sandbox/init.c,
	 * exec/execs.h) */
	s->vfork_command = caps_ptrace();
	return 0;
}

/* Whether Landlock's denials are on the record (llaudit.h): asked of the
 * kernel by launch once init has its "g" (llaudit_probe_ask), the answer
 * taken here, once the maker and the placeholders are under way. The
 * audit status's answer comes from a kernel thread started for it, a wait
 * of 0.1-2 ms (more on a busy host) that, asked before the clone, held up
 * all of the session's start, and asked and waited for here, held up the
 * supervisor by 0.2-2.6 ms while init waited for it (its cgroups byte says
 * how to restrict itself). The multicast group is joined now too, by the
 * probe, whose socket and lost count llaudit_open takes (one question to
 * the kernel a session): before init restricts itself, and not before the
 * clone, so init never holds the socket, nor the question's (the network
 * namespace's maker, a copy of the supervisor's fds, closes it first). */
static void landlock_records(struct sandbox_spec *s, struct launched *L, int asked,
			     const struct stat *pidns, struct audit *log)
{
	struct llaudit_probed probed = { .fd = -1 };
	s->landlock_log = llaudit_probe_answer(asked, s->landlock_log_why,
					       sizeof s->landlock_log_why, &probed) == 1;
	if (!s->landlock_log)
		return;
	char why[200];
	if ((L->la = llaudit_open(L->c.pid, pidns, &probed, log, why, sizeof why)))
		return;
	wnote("Landlock's denials are not on this session's record: %s", why);
	s->landlock_log = false;
	snprintf(s->landlock_log_why, sizeof s->landlock_log_why, "off: %s", why);
}

/* Init's message of type want (SEALED, then READY) with its fds taken
 * into L's, or its error. READY's m keeps SEALED's but for the planned
 * exec it says. */
static int await_message(struct launched *L, int want, struct werr *e)
{
	struct init_msg m;
	struct init_fds f;
	ssize_t n = initmsg_recv(L->sock, &m, &f);
	int err = errno;
	if (n > 0 && m.type == want) {
		init_fds_take(&L->fds, &f);
		if (want == INIT_MSG_SEALED)
			L->m = m;
		else
			memcpy(L->m.exec_path, m.exec_path, sizeof m.exec_path);
		L->m.type = want;
		if (want == INIT_MSG_SEALED && (L->fds.http < 0 || L->fds.socks < 0))
			return werr_set(e, 0, "cannot build the sandbox: init sent no proxy listeners");
		if (want == INIT_MSG_READY && L->fds.listener < 0)
			return werr_set(e, 0, "cannot build the sandbox: init sent no seccomp listener");
		return 0;
	}
	init_fds_close(&f);
	if (n <= 0 || m.type != INIT_MSG_ERROR)
		kill(L->c.pid, SIGKILL); /* maybe alive: not waited for so */
	int st = child_reap(&L->c);
	if (n > 0 && m.type == INIT_MSG_ERROR) {
		m.text[sizeof m.text - 1] = '\0';
		return werr_set(e, m.errnum, "cannot build the sandbox: %s", m.text);
	}
	if (n > 0)
		return werr_set(e, 0, "cannot build the sandbox: init's message %d came out of turn",
				m.type);
	if (n < 0)
		return werr_set(e, err, "cannot build the sandbox: init's message could not be read");
	return werr_set(e, 0, "cannot build the sandbox: init ended (status %d) before reporting", st);
}

int launched_error(struct launched *L, struct werr *e)
{
	struct pollfd pf = { .fd = L->sock, .events = POLLIN };
	if (L->sock < 0 || poll(&pf, 1, 0) != 1)
		return 0;
	struct init_msg m;
	struct init_fds none;
	ssize_t n = initmsg_recv(L->sock, &m, &none);
	init_fds_close(&none);
	if (n <= 0 || m.type != INIT_MSG_ERROR)
		return 0;
	m.text[sizeof m.text - 1] = '\0';
	return werr_set(e, m.errnum, "%s", m.text);
}

int launch(struct sandbox_spec *s, struct limits *lim, struct audit *log, struct launched *L,
	   struct werr *e)
{
	init_fds_none(&L->fds); /* first: launched_free closes what is there */
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return werr_errno(e, "supervisor: socketpair");
	L->sock = sv[0];
	_cleanup_close_ int init_sock = sv[1];
	if (prepare(s, lim, L, e) < 0)
		return -1;
	if (lim)
		lim->helpers = fanread_wanted(s->policy) ? 1 : 0;
	if (start_init(s, lim, L->sock, init_sock, &L->c, e) < 0)
		return -1;
	/* What is read of init while it can still be looked at: it makes
	 * itself non-dumpable once mapped, and an unprivileged supervisor
	 * could no longer open its namespaces. Nothing more before its "g":
	 * until then init waits, and each first write of the supervisor's to
	 * a page it shares with init is a copy. */
	_cleanup_close_ int userns = init_userns(L->c.pid, e);
	if (userns < 0)
		return -1;
	struct stat pidns;
	bool pidns_known = sbctl_pidns(L->c.pid, &pidns);
	closep(&init_sock);
	/* Non-dumpable only now: a child cloned from a non-dumpable parent has
	 * root-owned /proc files, and an unprivileged supervisor could not write
	 * its identity maps. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return werr_errno(e, "supervisor: making itself non-dumpable");
	if (userns_write_maps(L->c.pid, s->ids.active ? s->ids.uid : s->uid,
			      s->ids.active ? s->ids.gid : s->gid, e) < 0)
		return -1;
	if (write(L->sock, &(char){ INIT_BYTE_MAPPED }, 1) != 1)
		return werr_errno(e, "supervisor: starting init");
	/* asked now, answered in landlock_records below */
	_cleanup_close_ int asked = llaudit_probe_ask(s->landlock_abi, s->landlock_log_why,
						      sizeof s->landlock_log_why);
	hostid_close_trees(&s->ids); /* init has its copies */
	/* The kill switch (freeze.h): the control socket's freeze, resume and
	 * kill, and the grace period's hold while frozen; a module of the loop
	 * that acts on the whole sandbox is handed sb (freed after the socket
	 * and everything that holds it, before init). */
	L->sb = sbctl_new(L->c.pidfd, L->c.pid, L->sock, pidns_known ? &pidns : NULL,
			  lim ? limits_cgroup_v2(lim) : NULL, s->policy, log);
	if (start_maker(userns, L->sock, e) < 0)
		return -1; /* init killed by launched_free */
	/* The placeholders while init starts its mounts: it covers them only
	 * once it has the byte below (made before the clone, they held up
	 * everything after by 0.3 ms) */
	if (!s->plan.placed && workspace_make_placeholders(&s->plan, e) < 0)
		return -1; /* init killed by launched_free */
	landlock_records(s, L, steal_fd(&asked), pidns_known ? &pidns : NULL, log);
	/* Under its limits before init forks anything: init builds its mounts
	 * meanwhile and waits for the second byte. Only once init says it
	 * runs, and only into the cgroups init could not move itself into: a
	 * move of another process holds back processes still on their way
	 * out of fork (an RCU grace period on cgroup v1, a millisecond or
	 * more), and init would wait for it before its first step. */
	int moved = init_running(L->sock);
	if (moved >= 0 && lim)
		limits_attach(lim, L->c.pid, (unsigned)moved);
	/* The kernel enforces the exec rules on the session's cgroup: init
	 * must be in it before it forks anything. */
	if (L->bx && !bpfexec_holds(L->bx, L->c.pid))
		return werr_set(e, 0, "in-kernel exec enforcement: the sandbox is not in the session's "
				"cgroup %s", limits_cgroup_v2(lim));
	/* (init may have failed meanwhile: its message, read by launch_sealed,
	 * says why) */
	if (send_byte(L->sock, s->landlock_log ? INIT_BYTE_CGROUPS_LOGGED : INIT_BYTE_CGROUPS) < 0)
		return werr_errno(e, "supervisor: telling sandbox init its cgroups are set");
	return 0;
}

/* Until init has something to say (its SEALED or READY, or its error, or
 * its end), or a stopping signal comes first: 1 with *stop filled. The
 * other signals meanwhile (the loop's to handle, SIGCHLD, SIGWINCH and
 * those passed on to the command) are raised again for the loop; after a
 * stopping one there is no command to pass them to. */
static int await_init(struct launched *L, int sigfd, struct signalfd_siginfo *stop,
		      struct werr *e)
{
	sigset_t later;
	sigemptyset(&later);
	int r = 0;
	struct pollfd pf[3] = { { .fd = L->sock, .events = POLLIN }, { .fd = sigfd, .events = POLLIN },
				{ .fd = maker.pidfd, .events = POLLIN } };
	while (r == 0 && !pf[0].revents) {
		if (poll(pf, 3, -1) < 0 && errno != EINTR) {
			r = werr_errno(e, "supervisor: waiting for sandbox init");
			break;
		}
		if (pf[2].revents) {
			r = maker_ended(L->sock, e);
			pf[2].fd = -1;
			pf[2].revents = 0;
		}
		struct signalfd_siginfo si;
		while (!pf[0].revents && pf[1].revents && r == 0 &&
		       read(sigfd, &si, sizeof si) == sizeof si) {
			if (sandbox_signal_stops((int)si.ssi_signo)) {
				*stop = si;
				r = 1;
			} else {
				sigaddset(&later, (int)si.ssi_signo);
			}
		}
	}
	for (int sig = 1; sig < NSIG && r == 0; sig++)
		if (sigismember(&later, sig) == 1)
			raise(sig);
	return r;
}

int launched_go(struct launched *L, struct werr *e)
{
	if (send_byte(L->sock, 'r') < 0)
		return werr_errno(e, "supervisor: telling sandbox init to start the command");
	return 0;
}

int launch_sealed(struct launched *L, int sigfd, struct signalfd_siginfo *stop, struct werr *e)
{
	int r = await_init(L, sigfd, stop, e);
	return r != 0 ? r : await_message(L, INIT_MSG_SEALED, e);
}

int launch_ready(struct launched *L, int sigfd, struct signalfd_siginfo *stop, struct werr *e)
{
	int r = await_init(L, sigfd, stop, e);
	return r != 0 ? r : await_message(L, INIT_MSG_READY, e);
}
