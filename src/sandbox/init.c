/* init.c - sandbox init: PID 1 of the sandbox's pid namespace. It waits for
 * the supervisor to map its identity, builds every layer in order (mounts,
 * network, pty, capabilities, Landlock, seccomp), reports ready or the layer
 * that failed, then forks the command, passes signals on (SIGINT, SIGTERM
 * and SIGHUP to every process in the sandbox, any other to the command),
 * stops and continues every other process of the sandbox when the
 * supervisor asks (a freeze without the session's cgroup: sandbox.h,
 * SANDBOX_SIG_FREEZE), reports the command's stops when the user's keys
 * come through a pty (job control: Ctrl-Z), reaps every orphan and exits
 * with the command's status. When init exits, the kernel kills whatever
 * is left in the namespace. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/netlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "features.h"
#include "initfreeze.h"
#include "initmsg.h"
#include "limits.h"
#include "../common/fdpass.h"
#include "../common/cpupin.h"
#include "../common/proctitle.h"
#include "../workspace/wswatch.h"

extern char **environ;

__attribute__((noreturn)) static void fail(const struct sandbox_spec *s, const struct werr *e)
{
	initmsg_send_error(s->sync_fd, e->errnum, e->msg);
	_exit(125);
}

/* The pty: its master for the supervisor, its slave held by init (its
 * controlling terminal only with job control, and never read nor written
 * by it) from now until the command's process holds it: a slave closed by all, even for an instant (a planned exec's process
 * that ends to be made again as a fork), is a hangup the supervisor's
 * relay would read as the command's end. */
static int open_pty(int *master, int *slave, struct werr *e)
{
	char name[64];
	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0)
		return werr_errno(e, "terminal: opening /dev/ptmx");
	if (unlockpt(*master) < 0 || ptsname_r(*master, name, sizeof name) != 0)
		return werr_errno(e, "terminal: preparing the pty");
	*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return werr_errno(e, "terminal: opening %s", name);
	return 0;
}

/* The first executable `name` in PATH, the sandbox's (as execvp would
 * find it); -1 with errno when there is none. */
static int path_search(const char *name, const char *path, char *out, size_t len)
{
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int err = ENOENT;
	while (*path) {
		const char *end = strchrnul(path, ':');
		int n = snprintf(out, len, "%.*s%s%s", (int)(end - path), path,
				 end > path ? "/" : "", name);
		path = *end ? end + 1 : end;
		if (n < 0 || (size_t)n >= len)
			continue;
		struct stat st;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			err = EACCES;
		}
	}
	errno = err;
	return -1;
}

/* The command's exec failed with err: said (via, when not NULL, the path
 * its file was named by: a profile's program), and the command's process
 * ends as a shell's would, 127 for nothing there, 126 for the rest. */
__attribute__((noreturn)) static void exec_failed(const struct sandbox_spec *s, const char *via,
						  int err)
{
	if (via)
		fprintf(stderr, "warden: %s (%s): %s\n", s->argv.v[0], via, strerror(err));
	else
		fprintf(stderr, "warden: %s: %s\n", s->argv.v[0], strerror(err));
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* How the command's process came to be (sandbox_init_main). */
enum start_how {
	START_FORKED,  /* a fork: made dumpable for its exec to be read */
	START_VFORKED, /* init's memory, which the supervisor reads by its
			* CAP_SYS_PTRACE: execs as a fork would */
	START_PLANNED, /* init's memory, which the supervisor cannot read:
			* the one exec init planned and said, or an end that
			* asks init for a fork (the refork flag) */
};

/* Set by a START_PLANNED child, in init's memory, as it ends without its
 * exec to ask for a fork instead (vfork returns once it has ended). */
static volatile sig_atomic_t refork;

/* The command's process: its own session, the pty as controlling terminal
 * when there is one (with job control, a process group of init's session,
 * the pty's foreground) (in place of each of fds 0-2 that is a terminal on the
 * host; a pipe or file stays as it is), fds 0-2 only, default signal
 * state, then exec: of planned (START_PLANNED), else of the command as
 * the sandbox's PATH finds it. */
__attribute__((noreturn)) static void exec_command(const struct sandbox_spec *s,
						   int slave, enum start_how how,
						   const char *planned)
{
	/* Under vfork this runs in init's memory, init suspended until the
	 * exec or the end: it changes nothing init reads after (environ and
	 * the refork flag aside) and returns never. */
	/* Neither the supervisor nor init installs handlers (init only blocks
	 * signals), so the dispositions are already the defaults but for
	 * SIGXFSZ, which warden's main ignores: that back, and the mask
	 * cleared. */
	sigset_t none;
	sigemptyset(&none);
	signal(SIGXFSZ, SIG_DFL);
	if (slave >= 0 && s->job_control) {
		/* A process group of its own in init's session, the pty's
		 * foreground (SIGTTOU still blocked, as tcsetpgrp from the
		 * background needs): its parent, init, is in that session, so
		 * the group is not orphaned and a Ctrl-Z stops it rather than
		 * being dropped by the kernel. */
		if (setpgid(0, 0) < 0 || tcsetpgrp(slave, getpid()) < 0) {
			fprintf(stderr, "warden: terminal: %s\n", strerror(errno));
			_exit(125);
		}
	} else {
		setsid();
		if (slave >= 0 && ioctl(slave, TIOCSCTTY, 0) < 0) {
			fprintf(stderr, "warden: terminal: %s\n", strerror(errno));
			_exit(125);
		}
	}
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (slave >= 0)
		for (int i = 0; i < 3; i++)
			if (s->pty_fds & (1u << i))
				dup2(slave, i);
	syscall(SYS_close_range, 3, ~0U, 0);
	/* the user's own limits back; warden's own were raised */
	selflimits_give_back(&s->limits);
	if (chdir(s->workspace) < 0) {
		fprintf(stderr, "warden: workspace %s: %s\n", s->workspace, strerror(errno));
		_exit(125);
	}
	/* Forked from non-dumpable init: readable again, so the supervisor can
	 * read this exec's arguments (nothing else in the sandbox runs yet).
	 * Not under vfork: the memory is init's, which stays non-dumpable. */
	if (how == START_FORKED)
		prctl(PR_SET_DUMPABLE, 1);
	environ = s->envp.v;
	if (how == START_PLANNED) {
		execv(planned, s->argv.v);
		int err = errno;
		/* the supervisor must watch this exec through to its stop,
		 * which it cannot on memory it cannot read (INIT_EXEC_REFORK),
		 * or a script for sh (execvp's way): as a fork */
		if (err == INIT_EXEC_REFORK || err == ENOEXEC) {
			refork = 1;
			_exit(125);
		}
		exec_failed(s, s->exec_path ? planned : NULL, err);
	}
	/* Search PATH here rather than through execvp: each miss of execvp's
	 * search would be an execve the supervisor is notified of. */
	char found[4096];
	if (s->exec_path) {
		execv(s->exec_path, s->argv.v);
		exec_failed(s, s->exec_path, errno);
	}
	if (!strchr(s->argv.v[0], '/') &&
	    path_search(s->argv.v[0], getenv("PATH"), found, sizeof found) == 0) {
		execv(found, s->argv.v);
		if (errno != ENOEXEC)
			exec_failed(s, NULL, errno);
	}
	execvp(s->argv.v[0], s->argv.v); /* a path given, or a script for sh */
	int err = errno;
	fprintf(stderr, "warden: %s: %s\n", s->argv.v[0], strerror(err));
	if (err == ENOENT && !strchr(s->argv.v[0], '/'))
		fprintf(stderr, "warden: %s was not found on the host's PATH nor on the sandbox's "
			"(%s): install it there, or run it by its path, or show its directory with "
			"`read-only DIR` in a profile (--profile FILE)\n", s->argv.v[0],
			getenv("PATH") ? getenv("PATH") : "");
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* What the supervisor holds on the host that init has no use for: the
 * workspace directory (kept for the sweep; init builds the sandbox by
 * path, and the command's fds are closed anyway), the placeholders'
 * stash in warden's state directory, the workspace watch's inotify fd. */
static void forget_host(struct sandbox_spec *s)
{
	if (s->plan.ws_fd >= 0)
		close(s->plan.ws_fd);
	s->plan.ws_fd = -1;
	phstash_forget(&s->plan.stash);
	wswatch_forget(s->plan.watch);
}

/* The network namespace's maker's message (sandbox.h, net_make_main),
 * which comes on init's socket whenever the namespace is made, before or
 * after any of the supervisor's bytes: kept until init joins it. */
static struct {
	bool got;
	int fd; /* the namespace; -1: why says why not */
	struct netns_failed why;
} inbox = { .fd = -1 };

/* The next message: 1 for a byte of the supervisor's (into *b), 0 for the
 * maker's (kept in inbox), -1 when the socket ends first. */
static int inbox_next(int sock, char *b)
{
	union {
		char tag;
		struct netns_failed why;
	} m = { .tag = 0 };
	int fd;
	ssize_t n;
	while ((n = fdpass_recv(sock, &m, sizeof m, &fd, 0)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return -1;
	if (!inbox.got && n == 1 && m.tag == NETNS_MADE && fd >= 0) {
		inbox.got = true;
		inbox.fd = fd;
		return 0;
	}
	if (!inbox.got && n == (ssize_t)sizeof m.why && m.tag == NETNS_FAILED) {
		inbox.got = true;
		inbox.why = m.why;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	if (n != 1)
		return -1;
	*b = m.tag;
	return 1;
}

/* The supervisor's next byte (its "g", its "c") into *b; -1 when the
 * socket ends first. */
static int await_byte(int sock, char *b)
{
	int r;
	while ((r = inbox_next(sock, b)) == 0)
		;
	return r;
}

/* Into the sandbox's network namespace, before anything of the network is
 * made (the listeners) and before anything is forked. */
static void join_network(struct sandbox_spec *s, struct werr *e)
{
	char b;
	int r = inbox.got ? 0 : inbox_next(s->sync_fd, &b);
	if (r > 0) /* the supervisor sends nothing more before READY */
		werr_set(e, EPROTO, "network namespace: a byte of the supervisor's came, not its "
			 "maker's"), fail(s, e);
	if (r < 0)
		_exit(125); /* the supervisor is gone */
	if (net_join(&inbox.why, inbox.fd, e) < 0)
		fail(s, e);
	closep(&inbox.fd);
}

/* Dies with the supervisor; waits for its identity maps, moves itself
 * into the session's cgroup v1 ones and says it runs, with those it moved
 * itself into (the supervisor moves it into the others then: see below);
 * then takes its identity in the sandbox. */
static void become_init(struct sandbox_spec *s, struct werr *e)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		werr_errno(e, "lifetime: PR_SET_PDEATHSIG"), fail(s, e);
	char go;
	if (await_byte(s->sync_fd, &go) < 0) /* supervisor gone before mapping us */
		_exit(125);
	char running[2] = { 's', (char)limits_self_move(s->cgroup_tasks) };
	if (send(s->sync_fd, running, sizeof running, MSG_NOSIGNAL) != (ssize_t)sizeof running)
		_exit(125);
	/* only now: until the "g" init may run on the supervisor's CPU (as
	 * root, cloned into a new cgroup, it runs first there: launch.c),
	 * and the supervisor waits for it. Cloned from the supervisor, init
	 * would show warden's host path and options as /proc/1/cmdline inside
	 * (the command's words are a copy of them: sandbox.h). */
	proctitle_set("warden-init");
	forget_host(s);
	/* Mapped now; from here on nothing in the sandbox may read or write
	 * init's memory through /proc/1/mem. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		werr_errno(e, "processes: making init non-dumpable"), fail(s, e);
	if (s->uid == 0 && syscall(SYS_setgroups, 0, NULL) < 0) /* not glibc's: caps.c, set_ids */
		werr_errno(e, "identity: dropping supplementary groups"), fail(s, e);
	/* As root, init still has root's host identity (the maps name the
	 * agent's only): it becomes the agent, keeping its capabilities in
	 * the namespace, so that what it makes belongs to the agent and
	 * nothing of the sandbox ever runs as host root (hostid.h). */
	if (s->ids.active && caps_become(AGENT_UID, AGENT_GID, e) < 0)
		fail(s, e);
	/* a change of identity clears the parent-death signal: armed again
	 * (should the supervisor have died meanwhile, init's next read of the
	 * socket ends it) */
	if (s->ids.active && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		werr_errno(e, "lifetime: PR_SET_PDEATHSIG"), fail(s, e);
	if (sethostname(SANDBOX_HOSTNAME, strlen(SANDBOX_HOSTNAME)) < 0)
		werr_errno(e, "uts namespace: setting the hostname (refused by a seccomp filter "
			   "outside warden: in a container, the engine's default profile; "
			   FEATURES_CONTAINER_PROFILE_HINT ")"), fail(s, e);
}

/* The seed files (the decoys), into the home tmpfs before anything of the
 * agent runs; one that cannot be placed is the supervisor's to tell (m's
 * canary fields). */
static void place_seeds(const struct sandbox_spec *s, struct init_msg *m)
{
	if (!s->nseeds)
		return;
	_cleanup_close_ int home = open(AGENT_HOME, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (home < 0)
		m->canary_err = errno;
	else
		m->canary_placed = seed_place(s->seeds, s->nseeds, home, &m->canary_err);
}

/* The fds for the supervisor (initmsg.h) past the listeners, for SEALED:
 * the sock_diag socket (made here: a netlink socket belongs to the
 * namespace it was made in), the scratch space whose free space the
 * supervisor watches, the namespaces the re-masker joins should it be
 * needed. */
static void fds_for_supervisor(const struct sandbox_spec *s, struct init_fds *fds, struct werr *e)
{
	fds->diag = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	fds->root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fds->tmp = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fds->home = open(AGENT_HOME, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fds->userns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	fds->mntns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fds->userns < 0 || fds->mntns < 0)
		werr_errno(e, "namespaces: opening their files for the re-masker"), fail(s, e);
}

/* The command's first exec as init will make it when the supervisor
 * cannot read init's memory (!s->vfork_command): the file's path into out,
 * for READY to say. Only an absolute path outside /proc, which the
 * supervisor opens in the sandbox's root as the kernel will: the
 * profile's program, the command named by a path, or the first the
 * sandbox's PATH finds. "" (no plan: the command's process is a fork)
 * otherwise. */
static void plan_exec(const struct sandbox_spec *s, char *out, size_t len)
{
	out[0] = '\0';
	const char *path = NULL;
	for (size_t i = 0; i < s->envp.n && !path; i++)
		if (strncmp(s->envp.v[i], "PATH=", 5) == 0)
			path = s->envp.v[i] + 5;
	if (s->exec_path)
		snprintf(out, len, "%s", s->exec_path);
	else if (strchr(s->argv.v[0], '/'))
		snprintf(out, len, "%s", s->argv.v[0]);
	else if (path_search(s->argv.v[0], path, out, len) < 0)
		out[0] = '\0';
	if (out[0] != '/' || strncmp(out, "/proc/", 6) == 0 || strlen(out) + 1 >= len)
		out[0] = '\0';
}

/* What init holds of the host once the command runs: nothing but its
 * end of the supervisor's socket and the command's stdio. The rest came
 * with the clone (the session's log, the checkpoint store's directories,
 * the state directory, the published ports' listeners: the supervisor's,
 * all close-on-exec, so the command never had them) and stays out of the
 * sandbox's PID 1 for the session's length. */
static void keep_only_sync(int sync_fd)
{
	if (sync_fd > 3)
		syscall(SYS_close_range, 3, (unsigned)sync_fd - 1, 0);
	syscall(SYS_close_range, (unsigned)(sync_fd < 3 ? 3 : sync_fd + 1), ~0U, 0);
}

/* How long init waits for what the command left to be gone before it
 * leaves that to the kernel (its kill at init's exit) and the supervisor
 * to init's pidfd. */
#define END_REAP_MS 1000

/* The command ended with status: what it left is killed and reaped, as
 * the kernel would do at init's exit, but before it; then the supervisor
 * is told the status, and begins the session's end while init's own exit
 * runs (mostly the unmapping of its memory: 0.5-1 ms on the project's VM),
 * with nothing of the sandbox left but init on its way out. Each orphan
 * is init's by the time its parent can be reaped, so none is left once
 * waitpid says ECHILD; one still there after END_REAP_MS (one that a
 * tracer holds, say) is not waited for. SIGCHLD is blocked (reap). */
__attribute__((noreturn)) static void sandbox_end(int sync_fd, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	kill(-1, SIGKILL);
	int killed = 0;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int st = 0;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid > 0) {
			killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL; /* not one ended before */
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= END_REAP_MS)
			_exit(code);
		long left = END_REAP_MS - ms;
		struct timespec wait = { left / 1000, (left % 1000) * 1000000 };
		(void)sigtimedwait(&chld, NULL, &wait);
	}
	initmsg_send_exited(sync_fd, code, killed);
	cpupin_apart(0);
	_exit(code);
}

/* A freeze or resume the supervisor asked for (sandbox.h,
 * SANDBOX_SIG_FREEZE): sig sent to every process of the sandbox but init,
 * whose answer says it was. kill(-1) fails with ESRCH only when there is
 * no other process. */
static void freeze_all(int sync_fd, int sig)
{
	int err = sig == SIGSTOP ? initfreeze_stop() : kill(-1, sig) < 0 ? errno : 0;
	initmsg_send_signalled(sync_fd, sig, err);
}

/* A signal passed on to the command: with job control, a SIGCONT or a
 * SIGTSTP to its whole process group (what `fg` and Ctrl-Z reach), else,
 * and when the command has left its group, to the command alone. */
static void pass_on(pid_t child, int sig, bool jobctl)
{
	if (jobctl && (sig == SIGCONT || sig == SIGTSTP) && kill(-child, sig) == 0)
		return;
	kill(child, sig);
}

/* PID 1 from here on: each signal passed on, every orphan reaped, and
 * the command's exit status init's own; the supervisor's freezes and
 * resumes done; with job control, the command's stops reported (but
 * those a freeze made). */
__attribute__((noreturn)) static void reap(pid_t child, sigset_t *fwd, int sync_fd, bool jobctl)
{
	bool frozen = false, escaped;
	struct timespec look = { 0 }; /* frozen: the next look at the sandbox */
	for (;;) {
		siginfo_t si;
		long wait = frozen ? initfreeze_next(&look, &escaped) : -1;
		/* a process found running while frozen ends the sandbox at
		 * once, as the supervisor may be stopped itself (a suspension:
		 * jobctl.c) */
		if (frozen && escaped) {
			kill(-1, SIGKILL);
			initmsg_send_escaped(sync_fd);
		}
		struct timespec w = { .tv_sec = wait / 1000, .tv_nsec = wait % 1000 * 1000000L };
		int sig = frozen ? sigtimedwait(fwd, &si, &w) : sigwaitinfo(fwd, &si);
		if (sig < 0)
			continue;
		/* from outside the namespace (no process inside can send
		 * SI_USER with pid 0): the supervisor's */
		bool outside = si.si_code == SI_USER && si.si_pid == 0;
		if ((sig == SANDBOX_SIG_FREEZE || sig == SANDBOX_SIG_RESUME) && outside) {
			frozen = sig == SANDBOX_SIG_FREEZE;
			look = (struct timespec){ 0 };
			freeze_all(sync_fd, frozen ? SIGSTOP : SIGCONT);
			continue;
		}
		/* a SIGCONT warden passed on (its shell's `fg`) would let the
		 * command alone go on in a frozen sandbox */
		if (sig == SIGCONT && frozen)
			continue;
		if (sig != SIGCHLD) {
			/* kill(-1) from PID 1 reaches every process of the
			 * namespace but init: the command, what it left in
			 * the background, what ignores the command's exit. */
			if (sandbox_signal_stops(sig))
				kill(-1, sig);
			else if (sig != SIGKILL && sig != SIGSTOP)
				pass_on(child, sig, jobctl);
			continue;
		}
		int status;
		pid_t pid;
		while ((pid = waitpid(-1, &status, WNOHANG | (jobctl ? WUNTRACED : 0))) > 0) {
			if (WIFSTOPPED(status)) {
				if (pid == child && !frozen)
					initmsg_send_stopped(sync_fd, WSTOPSIG(status));
				continue;
			}
			if (pid == child)
				sandbox_end(sync_fd, status);
		}
	}
}

/* The command's process, started how says. _Fork, not fork: init is one
 * thread (a clone of the supervisor's calling thread, and it starts
 * none), so no lock of libc's can be held by another, and what fork adds
 * is bookkeeping for threads: the atfork handlers, the locks of malloc and
 * stdio taken and reset, the dead threads' stacks reclaimed. Each of those
 * writes copies a page shared with the supervisor, in init and in the
 * command's process: some 15 page faults on the way to the command's exec
 * (bench/README.md, "Afternoon, 2026-12-01"). vfork copies not even the
 * page tables (1.5 ms a session as root, 2 ms unprivileged:
 * bench/README.md, 2026-12-02). A planned exec that ended asking for a
 * fork (the refork flag) is made again so. */
static pid_t start_command(const struct sandbox_spec *s, int slave, enum start_how how,
			   const char *planned, struct werr *e)
{
	pid_t child = how == START_FORKED ? _Fork() : vfork();
	if (child < 0 && errno == EAGAIN)
		werr_errno(e, "starting the command: fork (at the sandbox's process limit: "
			   "raise `limit pids` in the profile)"), fail(s, e);
	if (child < 0)
		werr_errno(e, "starting the command: fork"), fail(s, e);
	if (child == 0)
		exec_command(s, slave, how, planned);
	if (how != START_PLANNED || !refork)
		return child;
	waitpid(child, NULL, 0); /* ended already: vfork returned */
	return start_command(s, slave, START_FORKED, NULL, e);
}

void sandbox_init_main(struct sandbox_spec *s)
{
	struct werr e = { 0 };
	char go;
	int slave = -1;
	struct init_fds fds;
	init_fds_none(&fds);
	struct init_msg ready = { 0 };

	become_init(s, &e);
	if (mounts_build_start(s, &e) < 0)
		fail(s, &e);
	/* Meanwhile the supervisor made the workspace's placeholders, which
	 * the rest of the mounts cover, and moved init into the session's
	 * cgroups it did not move itself into (limits.h; such a move can wait
	 * on the kernel for a millisecond or more, so it overlaps the mounts);
	 * it says when, and whether Landlock's denials are on the record
	 * (initmsg.h). Nothing was forked before. */
	if (await_byte(s->sync_fd, &go) < 0)
		_exit(125);
	s->landlock_log = go == INIT_BYTE_CGROUPS_LOGGED;
	if (mounts_build_finish(s, &e) < 0)
		fail(s, &e);
	hostid_close_trees(&s->ids); /* attached now */
	place_seeds(s, &ready);
	if (s->use_pty && open_pty(&fds.master, &slave, &e) < 0)
		fail(s, &e);
	/* With job control init leads the pty's session (its controlling
	 * terminal, which init never reads nor writes), the command a group
	 * of it (exec_command); without (either refused), the command leads
	 * a session of its own, as when warden relays no keys. */
	if (slave >= 0 && s->job_control && (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0))
		s->job_control = false;
	/* kept off the supervisor's CPU while it built the mounts; the
	 * sandbox has every CPU of the user's (cpupin.h) */
	cpupin_widen();
	/* A cgroup namespace rooted there, so /proc/self/cgroup inside shows "/". */
	if (unshare(CLONE_NEWCGROUP) < 0)
		werr_errno(&e, "cgroup namespace"), fail(s, &e);
	/* The listeners the supervisor serves, in the sandbox's network
	 * namespace; then the last layers. */
	join_network(s, &e);
	if (mounts_seal(s, &fds.hook, &fds.ssh, &e) < 0 ||
	    net_proxy_listeners(&fds.http, &fds.socks, &e) < 0 ||
	    net_forward_listeners(&s->forwards, fds.fwd, &e) < 0)
		fail(s, &e);
	/* The supervisor starts the services on these while init applies the
	 * last layers; nothing of the sandbox's runs before READY. Unsent,
	 * either message would be waited for for ever: init ends, and the
	 * supervisor reads the end of the socket. */
	fds_for_supervisor(s, &fds, &e);
	if (initmsg_send_sealed(s->sync_fd, &ready, &fds) < 0)
		_exit(125);
	bool placed = ready.canary_placed, pty = fds.master >= 0;
	init_fds_close(&fds);
	if (caps_drop_bounding(&e) < 0 || landlock_apply(s, &e) < 0 ||
	    seccomp_install(s, &fds.listener, &e) < 0 || caps_drop_all(&e) < 0)
		fail(s, &e);
	if (!s->vfork_command)
		plan_exec(s, ready.exec_path, sizeof ready.exec_path);
	if (initmsg_send_ready(s->sync_fd, &ready, &fds) < 0)
		_exit(125);
	init_fds_close(&fds);
	/* With a pty, the supervisor answers once it has set up the terminal,
	 * with decoys once it watches them; without either the command starts
	 * now (its first exec waits for the supervisor to read the notification
	 * anyway). */
	if ((pty || placed) && read(s->sync_fd, &go, 1) != 1)
		_exit(125);

	sigset_t fwd;
	sigfillset(&fwd);
	sigprocmask(SIG_SETMASK, &fwd, NULL);
	enum start_how how = s->vfork_command ? START_VFORKED
			   : ready.exec_path[0] ? START_PLANNED : START_FORKED;
	pid_t child = start_command(s, slave, how, ready.exec_path, &e);
	keep_only_sync(s->sync_fd);
	reap(child, &fwd, s->sync_fd, s->job_control && slave >= 0);
}
