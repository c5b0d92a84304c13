/* sandbox.h - the sandbox specification the supervisor computes on the host
 * side and hands to sandbox init (by memory copy across clone), and the
 * entry points of each layer. Everything that reads host state (environment,
 * workspace scan, home, uid) happens in the supervisor before clone; init only
 * builds what the spec says. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "../common/err.h"
#include "../common/seed.h"
#include "../common/selflimits.h"
#include "../common/util.h"
#include "../net/forward.h"
#include "../net/proxy.h"
#include "../policy/policy.h"
#include "hostid.h"
#include "paths.h"
#include "../workspace/workspace.h" /* struct ws_plan, in the spec */

/* A name in the agent's home inside (HOME=/home/agent, otherwise an empty
 * tmpfs) backed read-write by a host path: agent state that persists
 * (src/agents/state.h), a directory kept for the workspace's next sessions
 * (src/session/caches.h). */
struct home_bind {
	char *src;      /* host path (resolved), a directory or a regular file */
	char *name;     /* in the home inside: ".claude", ".cargo/registry" */
	bool dir;
};

struct limits;

/* The exec rules' part of the file system (execplan.c on the supervisor
 * side; mounts.c and landlock.c build it in init). Every writable mount is
 * noexec (the workspace too in strict mode) but the `exec allow-writable`
 * paths, each bound onto itself without noexec (nosuid and nodev kept) and
 * given Landlock's EXECUTE; in strict mode the denied programs the sandbox
 * shows read-only are hidden under the empty mode-0 mask file. */
struct exec_writable {
	char *path;     /* inside the sandbox, absolute */
	char *place;    /* the writable place holding it, inside: the workspace, /tmp,
			   /var/tmp, /dev/shm, AGENT_HOME, an agent's state, a read-write
			   path of the profile */
	bool tmpfs;     /* the place is a tmpfs of the sandbox's own: init makes the
			   path there (the supervisor made the others on the host) */
};
struct exec_layout {
	bool strict;              /* `exec strict`: the workspace noexec too, and Landlock
				     grants EXECUTE on nothing writable */
	struct exec_writable *w;  /* shallow first */
	size_t n;
	struct strv hidden;       /* strict: files hidden (exec deny FILE and its hard
				     links beside it) */
};

/* What the seccomp filter depends on (seccomp.c). */
struct seccomp_kind {
	bool files;  /* file operations recorded: `audit files`, `write ask`, a read-only workspace */
	bool fd_times; /* `audit files`: a file's times set through a descriptor (futimens)
			  recorded too (seccomp.c's add_file_audit) */
	bool strict; /* `exec strict`: code mapped from files goes by the supervisor */
	bool made;   /* secret names to mask: the names the sandbox makes are noted
			(workspace/wsmade.h) */
	bool kernel; /* the exec rules in the kernel (supervisor/exec/bpfexec.h): a file
			mapped or made executable goes by the supervisor, which gives the
			kernel its verdict first */
};

struct sandbox_spec {
	/* identity on the host */
	uid_t uid;
	gid_t gid;
	struct hostid ids;          /* as root: the agent's own host uid/gid and init's
				       mount trees (hostid.h); else not active */
	char *home;                 /* invoking user's home (host), may be NULL */

	char *workspace;            /* real absolute path */
	bool workspace_ro;          /* mounted read-only (--read-only, `workspace read-only`) */
	char *logdir;               /* the audit log directory: never reachable inside */
	char *cachedir;             /* warden's cache directory: never reachable inside */
	char *storedir;             /* the checkpoint store: never reachable inside */
	char *runtimedir;           /* RUNTIME/warden, the control sockets' (ctldir.h):
				       never reachable inside */
	char *review_upper;         /* --review: the overlay's upper and work directories */
	char *review_work;          /* (under the log directory), else NULL */
	struct ws_plan plan;        /* protected paths and masks inside the workspace */
	const struct policy *policy;
	struct net_forwards forwards; /* host loopback ports (from the policy's allow rules) */

	const struct home_bind *home_binds; /* borrowed: agent state and caches, bound into
					       the home */
	size_t nhome_binds;

	struct strv argv;           /* command to run (argv[0] looked up in PATH inside): a
				     * copy, out of warden's argument area (proctitle.h) */
	char *exec_path;            /* or, when set, the file executed for it (found on the host) */
	struct strv envp;           /* environment of the command */
	struct user_limits limits;  /* the command's: the user's, which warden raised for
				     * itself (selflimits.h) */

	bool use_pty;               /* one of 0-2 is a terminal: give the command its own pty */
	unsigned pty_fds;           /* bit i: the command's fd i is that pty (the host's is a
				     * terminal); the others stay what the host's are */
	bool job_control;           /* the pty stands for the user's terminal, whose keys warden
				     * relays: init leads the pty's session and the command is
				     * a process group of its own in it, its foreground, so
				     * that Ctrl-Z stops it and init reports the stop
				     * (INIT_MSG_STOPPED; supervisor/jobctl.c) */
	bool self_exe;              /* warden's own binary at /.warden/warden (check, ssh) */
	char *self_cache;           /* a cached copy's directory (selfbin.c), or NULL: copy */
	char *ca_bundle;            /* host file bound at SANDBOX_CA_BUNDLE (and over
				       SYSTEM_CA_BUNDLE), or NULL: no TLS terminated */
	int sync_fd;                /* init's end of the supervisor socket */
	int cgroup_tasks[3];        /* in init: the `tasks` files of the session's
				     * cgroup v1 ones (limits.h, CTL_COUNT; -1 none),
				     * opened by the supervisor, which init moves
				     * itself through once mapped (limits_self_move),
				     * saying which with "s" */
	char *etc_cache;            /* the cached curated /etc (host path), or NULL: copy */
	struct strv etc_binds;      /* host /etc paths to bind live over the cache */
	int etc_lock;               /* shared flock on the cache version in use, or -1 */
	void *seccomp_prog;         /* the BPF filter init installs (struct sock_filter[]) */
	size_t seccomp_len;         /* its length in instructions */
	struct seccomp_kind seccomp_kind; /* what it was compiled for */
	bool exec_kernel;         /* the exec rules are enforced in the kernel
				     (supervisor/exec/bpfexec.h) */
	bool vfork_command;         /* the supervisor reads a non-dumpable
				       process's memory (CAP_SYS_PTRACE): init
				       starts the command with vfork; else a
				       vfork too for the first exec init plans
				       and says (init_msg.exec_path), which the
				       supervisor takes from there */
	int landlock_abi;           /* probed by the supervisor */
	bool landlock_log;          /* the supervisor reads Landlock's audit records
				       (src/supervisor/llaudit.h), asked after the
				       clone: init learns it from the byte that says
				       its cgroups are set (initmsg.h) and restricts
				       itself with LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON */
	char landlock_log_why[256]; /* on, or why not (llaudit_probe), for session.start */
	struct exec_layout exec;    /* allow-writable paths and hidden files (execplan.c) */
	/* a file warden adds to /etc inside, read-only like the rest of it
	 * (an agent's system-wide settings: Codex's /etc/codex/config.toml
	 * with warden's tool-call hook), or NULL; borrowed */
	const char *etc_extra_path; /* relative to /etc: "codex/config.toml" */
	const char *etc_extra_text;
	/* files init writes into the home before anything of the agent runs
	 * (the decoys of canary credentials, src/detect/canary.h: none with
	 * `canary off`); their strings borrowed */
	struct seed_file seeds[SEED_MAX];
	size_t nseeds;
};

/* spec.c: release what the supervisor side filled in (not the policy); for
 * _cleanup_(sandbox_spec_free). */
void sandbox_spec_free(struct sandbox_spec *s);

/* Layer entry points. Each returns 0 or -1 with e filled, naming its layer. */

/* etc.c: the curated /etc. etc_populate fills dirfd with it from the host
 * tree at srcroot ("" or init's view of the old root): symlinks recreated,
 * small files copied, warden's own passwd, group, hostname and hosts, and
 * empty mount points for what must be bound live (directories, large files),
 * whose /etc paths go to binds. etc_cache_prepare (supervisor) finds or builds
 * the user's cached copy in the cache directory and holds it for the session;
 * -1 when there is none to use (the session copies instead). */
int etc_populate(const char *srcroot, int dirfd, struct strv *binds, struct werr *e);
/* What the curated /etc shows of a host path (absolute, normalised):
 * ETC_HOST the host's entry (or a directory on the way to one), ETC_OWN
 * warden's own file in its place (passwd, group, hostname, hosts), ETC_NONE
 * nothing (not under /etc, or not kept). */
enum etc_view { ETC_NONE, ETC_HOST, ETC_OWN };
enum etc_view etc_view_of(const char *path);
char *etc_cache_dir(const char *home); /* $XDG_CACHE_HOME/warden, NULL: none */
int etc_cache_prepare(const char *cachedir, char **dir, struct strv *binds, int *lockfd);
/* selfbin.c: the directory in cachedir holding a copy of warden's own
 * binary ("warden") and the hook client ("warden-hook"), made when this
 * build has none; NULL when it cannot be had (init then copies the binary
 * onto the sandbox's root, and writes the hook client there). */
char *selfbin_prepare(const char *cachedir);
/* The hook client's bytes (src/hookbin, embedded at build time). */
extern const unsigned char hookbin_data[];
extern const size_t hookbin_size;

/* execplan.c (supervisor side): the spec's exec layout from the policy,
 * after workspace_plan (the workspace's protected and masked paths count):
 * each `exec allow-writable` path placed inside the writable place that
 * holds it, made as a directory when missing (on the host; in a tmpfs of
 * the sandbox, by init), never through a symlink; one anywhere else, or in
 * a read-only, protected or masked path, is an error naming it. In strict
 * mode, the denied files to hide. */
int exec_layout_plan(struct sandbox_spec *s, struct werr *e);
/* {"strict": bool, "allow_writable": [paths inside], "hidden": [files]} */
json_t *exec_layout_to_json(const struct exec_layout *x);
void exec_layout_free(struct exec_layout *x);
/* The directory rel beneath dirfd (O_PATH), each component made first
 * (mode 0755) when make, none followed if it is a symlink; "" is dirfd's
 * own. -1 with errno: ELOOP a symlink on the way, ENOTDIR something else
 * that is no directory, EINVAL a "." or ".." component. */
int exec_open_dir_beneath(int dirfd, const char *rel, bool make);

/* userns.c (supervisor side): write the child's uid/gid maps: the agent's
 * 1000 is uid/gid on the host. */
int userns_write_maps(pid_t child, uid_t uid, gid_t gid, struct werr *e);
/* AGENT_UID, AGENT_GID, AGENT_HOME, SANDBOX_* paths: paths.h */

/* env.c (supervisor side) */
void env_build(const struct policy *p, const struct strv *cli_env, struct strv *out);
/* Set NAME=VALUE in out, replacing any NAME there (secrets' phantoms and the
 * trust store's variables, which nothing else may override). */
void env_override(struct strv *out, const char *assignment);

/* mounts.c (init): build the new root and pivot into it, in two halves:
 * what needs nothing of the workspace's placeholders (the system, /etc,
 * the scratch and home tmpfs, /dev, /proc, the workspace and the profile's
 * paths bound), then, once the supervisor has made the placeholders (its
 * "c", initmsg.h), the workspace's protections, placeholders and masks and
 * the rest. */
int mounts_build_start(const struct sandbox_spec *s, struct werr *e);
int mounts_build_finish(const struct sandbox_spec *s, struct werr *e);
/* mounts.c (init), once in the sandbox's network namespace: the hook
 * socket's listener, bound by its own path (the one /proc/net/unix shows)
 * at SANDBOX_HOOK_SOCK, goes to *hook_fd (net_hook_listener); the SSH
 * agent socket's, at SANDBOX_SSH_AGENT_SOCK, to *ssh_fd when the policy
 * has `ssh-agent`; then the root becomes read-only. A socket belongs to
 * the network namespace it was made in, and the supervisor lets the
 * sandbox connect only to those of the sandbox's (unixconn.h). */
int mounts_seal(const struct sandbox_spec *s, int *hook_fd, int *ssh_fd, struct werr *e);
/* After mounts_build_finish, in the new root: mask (an empty file or directory of
 * mode 0, bound read-only) or protect (bound read-only onto itself) the
 * workspace path rel, opened beneath wsfd with no symlink followed. */
int mounts_rebind(int wsfd, const char *rel, bool mask, struct werr *e);

/* nshelper.c: a helper the supervisor (parent) forked or cloned enters the
 * sandbox's user namespace and ns (of type nstype; -1: none), dies with parent, is
 * not dumpable, keeps only sock (as fd 3) and /dev/null on 0-2; it exits
 * when it cannot. Raw system calls only (src/common/rawsys.h): the file
 * reads' helper runs it on the supervisor's memory. */
void nshelper_enter(const char *name, int userns, int ns, int nstype, int sock, pid_t parent);

/* remask.c: the process that masks or protects a path again during the
 * session, started by the supervisor when first needed: it joins the
 * sandbox's user and mount namespaces (userns, mntns: their files), and
 * serves requests (struct remask_req, src/workspace/workspace.h) on *sock
 * (the supervisor's end) for the workspace at the path the sandbox sees it
 * by. Returns its pid, or -1 with e filled. */
pid_t remask_spawn(int userns, int mntns, const char *workspace, int *sock, struct werr *e);

/* net.c: the sandbox's network namespace, made beside init while init
 * builds the mounts, by a helper on the supervisor's memory (launch.c,
 * src/common/vmchild.h), which the namespace's creation thus no longer
 * holds up: it enters init's user namespace (userns: its file), makes the
 * network namespace there, brings lo up, and sends init on sock (init's
 * socket, the supervisor's end) NETNS_MADE with the namespace's fd, or a
 * struct netns_failed. Its exit status: 0 once either went, 1 when it could
 * not enter init's user namespace (nshelper_enter), 2 when nothing could be
 * sent. */
enum { NETNS_MADE = 'n', NETNS_FAILED = 'N' };
enum netns_step { NETNS_STEP_MAKE, NETNS_STEP_LO, NETNS_STEP_OPEN };
struct netns_failed {
	char tag;           /* NETNS_FAILED */
	unsigned char step; /* enum netns_step */
	int err;            /* its errno */
};
int net_make_main(int userns, int sock, pid_t parent);
/* net.c (init): into the namespace of fd, or e says why its maker failed
 * (fd -1, why its message). */
int net_join(const struct netns_failed *why, int fd, struct werr *e);
/* net.c (init): the proxy's listening sockets on the sandbox's loopback
 * (127.0.0.1:3128 HTTP, 127.0.0.1:1080 SOCKS5), for the supervisor. */
int net_proxy_listeners(int *http, int *socks, struct werr *e);
/* net.c (init): the hook socket's listener (src/control/hook.h), a unix
 * socket bound at path in the sandbox's network namespace (so the sandbox
 * may connect to it: unixconn.h), mode 0666, for the supervisor. */
int net_hook_listener(const char *path, struct werr *e);
/* The listeners of the host loopback ports in f, in its order: fds[i] for
 * f->v[i], or -1 for an optional one the namespace cannot have (::1 without
 * IPv6). On error none is left open. */
int net_forward_listeners(const struct net_forwards *f, int fds[FORWARD_MAX], struct werr *e);

/* landlock.c */
int landlock_apply(const struct sandbox_spec *s, struct werr *e);

/* seccomp.c. The supervisor compiles the filter into s->seccomp_prog
 * before it clones init (whose memory is a copy), unless it is there
 * already, compiled for the same kind (seccomp_prepare); init installs it,
 * with no_new_privs, and *notify_fd receives the listener. */
int seccomp_compile(struct sandbox_spec *s, struct werr *e);
/* The kind of filter a session needs, from its policy and whether its
 * workspace is read-only; its kernel only as likely (seccomp_compile
 * takes s->exec_kernel, known once the BPF program is loaded). */
struct seccomp_kind seccomp_kind_of(const struct policy *pol, bool workspace_ro);
/* The filter of that kind compiled ahead (on the session's preparing
 * thread, while nothing else uses libseccomp): *prog (malloc'd), *len
 * instructions; taken from cachedir (warden's cache directory, may be
 * NULL) when it holds it, and put there when compiled (seccache.h). */
int seccomp_prepare(struct seccomp_kind k, const char *cachedir, void **prog, size_t *len,
		    struct werr *e);
int seccomp_install(const struct sandbox_spec *s, int *notify_fd, struct werr *e);

/* caps.c (init) */
int caps_drop_bounding(struct werr *e);
/* Become uid/gid (ids in the sandbox's namespace) keeping the
 * capabilities held there, effective. */
int caps_become(uid_t uid, gid_t gid, struct werr *e);
int caps_drop_all(struct werr *e);

/* init.c: the body of sandbox init, PID 1 of the new pid namespace. Never
 * returns: exits with the command's status (125 on failure, after telling the
 * supervisor why). */
__attribute__((noreturn)) void sandbox_init_main(struct sandbox_spec *s);

/* The signals that stop the sandbox: init passes them to every process in
 * the sandbox (kill(-1, sig)), any other signal to the command alone. When
 * warden received one, it kills the sandbox after the grace period. */
static inline bool sandbox_signal_stops(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* The supervisor's requests to init, sent through init's pidfd
 * (src/supervisor/freeze.c: a freeze by signals, without the session's
 * cgroup): freeze, on which init sends SIGSTOP to every other process of
 * the sandbox at once (kill(-1): the kernel walks the namespace's
 * processes under the lock a fork takes to become one, and a fork racing
 * the signal is restarted, so none is left running, however fast it
 * forks), and resume (SIGCONT), each answered INIT_MSG_SIGNALLED
 * (initmsg.h). Init takes them only from outside its pid namespace
 * (si_code SI_USER, si_pid 0: what a process inside sends says its pid,
 * and one cannot send SI_USER with sigqueue); from inside they are any
 * other signal, passed to the command. FREEZE is the lower: of the two
 * pending at once the kernel hands over the lower first, so a freeze
 * undone as soon as it is asked (init's answer late) ends resumed. */
#define SANDBOX_SIG_FREEZE (SIGRTMIN + 6)
#define SANDBOX_SIG_RESUME (SIGRTMIN + 7)

