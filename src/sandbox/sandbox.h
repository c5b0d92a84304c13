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
#include "../common/util.h"
#include "../net/forward.h"
#include "../net/proxy.h"
#include "../policy/policy.h"
#include "hostid.h"
#include "paths.h"
#include "../workspace/phstash.h"

/* A mount inside the workspace, relative to the workspace root. */
enum ws_mount_kind {
	WS_PIN,        /* directory bound onto itself read-write: cannot be renamed or removed */
	WS_PROTECT,    /* existing file or directory bound onto itself read-only */
	WS_PLACEHOLDER,/* entry warden created for a missing protected path, read-only */
	WS_MASK_FILE,  /* file masked by an unreadable empty file */
	WS_MASK_DIR,   /* directory masked by an unreadable empty tmpfs */
};

struct ws_mount {
	enum ws_mount_kind kind;
	char *rel;
	char *abs;      /* WS_PLACEHOLDER: the host path to create */
	/* WS_PLACEHOLDER: what making it gave: errno (0: created) and the
	 * inode created, which is what the removal checks before unlinking */
	struct ws_made {
		int err;
		dev_t dev;
		ino_t ino;
	} made;
	bool adopted;   /* WS_PLACEHOLDER: another session's, there already */
	bool dir;       /* WS_PLACEHOLDER: an empty directory (the name is one by
			 * convention: .claude, .vscode, ...), not a socket entry */
};

struct wswatch;

struct ws_plan {
	struct ws_mount *m;
	size_t n, cap;
	bool placed;              /* placeholders made: remove what `made` says was created */
	int lock_fd;              /* shared flock on this workspace's lock file, or -1 */
	int ws_fd;                /* the workspace directory, opened by workspace_plan and
				     kept for the session (placeholders, the sweep), or -1 */
	struct strv git;          /* .git entries and git redirects present at start */
	struct strv git_ids;      /* and what each was: "dev:ino:birth", same order */
	struct strv bare;         /* directories that look like bare repositories at start */
	struct strv bare_ids;
	struct strv names;        /* the protected names that apply at any depth */
	struct strv named;        /* entries below the top with one of those names at start */
	struct strv named_ids;    /* "bound" (read-only inside) or what it was */
	struct strv links;        /* symlinks on the way to a gitdir, a hooksPath or an
				     included configuration at start */
	struct strv link_targets; /* and what each pointed at, same order */
	struct timespec t0;       /* when the plan began: an inode changed since has a
				     later ctime (the sweep's test for setuid bits) */
	struct wswatch *watch;    /* its directories watched from the start (wswatch.h) */
	struct phstash stash;     /* directory placeholders kept between sessions */
};

/* What the sweep did to one entry: moved it aside, or cleared its setuid
 * and setgid bits. */
enum ws_swept_kind {
	WS_SWEPT_GIT,             /* a new .git or git redirect, moved aside */
	WS_SWEPT_BARE,            /* a new bare-repository lookalike: its HEAD moved aside */
	WS_SWEPT_CONFIG,          /* a new protected name below the top, moved aside */
	WS_SWEPT_SETID,           /* setuid/setgid bits cleared */
};
struct ws_swept {
	enum ws_swept_kind kind;
	char *rel;                /* workspace-relative path */
	char *to;                 /* moved: where to (absolute); NULL: bits cleared */
	mode_t mode_was, mode;    /* bits cleared: the mode before and after */
};
struct ws_sweep {
	struct ws_swept *v;
	size_t n, cap;
	char *ws;                 /* the workspace's path at the sweep (a new one when it
				     was renamed during the session) */
};
void ws_sweep_free(struct ws_sweep *s);

/* Does a mask pattern of the policy cover this workspace path (name: its
 * last component)? */
bool workspace_masked(const struct policy *pol, const char *rel, const char *name);
/* Is st one of the placeholders warden makes for missing protected paths
 * (a running session's, or a killed one's)? */
struct stat;
bool workspace_is_placeholder(const struct stat *st);

/* A name in the agent's home inside (HOME=/home/agent, otherwise an empty
 * tmpfs) backed read-write by a host path: agent state that persists
 * (src/agents/state.h). */
struct home_bind {
	char *src;      /* host path (resolved), a directory or a regular file */
	char *name;     /* in the home inside: ".claude" (one component) */
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
	bool strict; /* `exec strict`: code mapped from files goes by the supervisor */
	bool made;   /* secret names to mask: the names the sandbox makes are noted (wsmade.h) */
	bool kernel; /* the exec rules in the kernel (bpfexec.h): a file mapped or made
			executable goes by the supervisor, which gives the kernel its verdict first */
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
	char *review_upper;         /* --review: the overlay's upper and work directories */
	char *review_work;          /* (under the log directory), else NULL */
	struct ws_plan plan;        /* protected paths and masks inside the workspace */
	const struct policy *policy;
	struct net_forwards forwards; /* host loopback ports (from the policy's allow rules) */

	const struct home_bind *home_binds; /* borrowed: agent state, bound into the home */
	size_t nhome_binds;

	char **argv;                /* command to run (argv[0] looked up in PATH inside) */
	char *exec_path;            /* or, when set, the file executed for it (found on the host) */
	struct strv envp;           /* environment of the command */

	bool use_pty;               /* one of 0-2 is a terminal: give the command its own pty */
	unsigned pty_fds;           /* bit i: the command's fd i is that pty (the host's is a
				     * terminal); the others stay what the host's are */
	bool self_exe;              /* warden's own binary at /.warden/warden (check, ssh) */
	char *self_cache;           /* a cached copy's directory (selfbin.c), or NULL: copy */
	char *ca_bundle;            /* host file bound at SANDBOX_CA_BUNDLE (and over
				       SYSTEM_CA_BUNDLE), or NULL: no TLS terminated */
	int sync_fd;                /* init's end of the supervisor socket */
	char *etc_cache;            /* the cached curated /etc (host path), or NULL: copy */
	struct strv etc_binds;      /* host /etc paths to bind live over the cache */
	int etc_lock;               /* shared flock on the cache version in use, or -1 */
	void *seccomp_prog;         /* the BPF filter init installs (struct sock_filter[]) */
	size_t seccomp_len;         /* its length in instructions */
	struct seccomp_kind seccomp_kind; /* what it was compiled for */
	bool exec_kernel;         /* the exec rules are enforced in the kernel (bpfexec.h) */
	int landlock_abi;           /* probed by the supervisor */
	bool landlock_log;          /* the supervisor reads Landlock's audit records
				       (src/supervisor/llaudit.h): init restricts itself
				       with LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON */
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

/* workspace.c (supervisor side) */
/* Home-relative names of credential stores (".ssh", ".aws", ...): a
 * workspace or an exposed install tree holding one is refused. */
extern const char *const credential_stores[];
extern const size_t credential_stores_n;
int workspace_resolve(const char *requested, const char *home, char **out, struct werr *e);
/* The checks workspace_resolve makes of a resolved directory path buf
 * (what names it in the error: "workspace", "--output"): not /, /tmp, a
 * home or a system directory, not holding the home or a credential store. */
int workspace_place_check(const char *buf, const char *home, const char *what, struct werr *e);
int workspace_plan(const char *ws, const struct policy *p, struct ws_plan *plan, struct werr *e);
/* Sessions in one workspace share its placeholders: each holds a shared
 * flock on a lock file of that workspace in lockdir (warden's own, out of
 * every sandbox's reach) from before it plans until it ends; the last one
 * out, the one that gets the lock exclusively, removes them. A session that
 * starts finds the placeholders of one still running and adopts them. Without
 * this, one session's removal would unmount the other's (an unlink of a mount
 * point in another namespace detaches the mount). */
int workspace_lock(const char *ws, const char *lockdir, struct ws_plan *plan, struct werr *e);
/* The lock file of workspace ws in lockdir, opened (made when missing; not
 * locked): what workspace_lock holds shared and `warden undo` exclusively. */
int workspace_lock_open(const char *ws, const char *lockdir, struct werr *e);
/* Create the plan's placeholders. The supervisor calls it before it clones
 * init, so init never waits for them.
 *
 * A placeholder for a name that is a directory by convention (.claude,
 * .vscode, .idea, .warden, .git/hooks, ...) is an empty directory of mode
 * 01555, each its own inode: tools that expect a directory there find one,
 * and git ignores an empty directory. Any other placeholder is a unix-socket
 * entry of mode 0444 (mknod; nothing listens), all of a session's being hard
 * links of one inode: git ignores sockets (they never reach `git add -A`,
 * inside or out), open() on one fails with ENXIO so no tool reads a
 * configuration from it, and one inode plus links costs a fraction of what
 * a directory each does (about 0.2 ms against 2 ms for 16 on ext4). Inside,
 * each is bound read-only onto itself: the agent can neither remove, rename
 * nor replace it, nor create anything in a directory one. */
int workspace_make_placeholders(struct ws_plan *plan, struct werr *e);
/* After the session, with every sandbox process gone: move aside each .git
 * (at any depth) and each git redirect (.git/commondir, config.worktree,
 * worktrees, modules) that was not there at start, so configuration and
 * hooks the agent planted never run on the host, and clear the setuid and
 * setgid bits of every regular file whose inode changed during the session
 * (its ctime later than the plan's start: a chmod, a new link, a write; a
 * file untouched since before keeps its bits). It works from the workspace directory
 * the plan opened (plan->ws_fd), wherever it was moved meanwhile (ws, its
 * path at start, only names it when its new path cannot be had), walks the
 * whole tree (walk.h: no depth limit, what the user owns but made
 * unreadable opened up for the walk) and records what it did in out. */
int workspace_sweep(const char *ws, const struct ws_plan *plan, const char *session,
		    struct ws_sweep *out, struct werr *e);
/* Remove the placeholders (once the sandbox is gone): each name that still
 * holds the inode warden made, with its mode (a directory only while empty:
 * rmdir); anything else there (a host process replaced or filled it) is left
 * alone with a note. workspace_cleanup does it too when this was
 * not called. */
void workspace_remove_placeholders(struct ws_plan *plan);
/* The placeholders a killed session left (rels, relative to the workspace
 * wsfd, the plan's WS_PLACEHOLDER paths as its session.start recorded
 * them), removed where each is still one (an empty directory of mode 01555,
 * a socket entry of mode 0444); the caller holds the workspace's lock
 * exclusively, so no session has them mounted. */
void workspace_remove_stale_placeholders(int wsfd, const struct strv *rels);
void workspace_cleanup(struct ws_plan *plan);

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

/* mounts.c (init): build the new root and pivot into it. The hook
 * socket's listener, bound at SANDBOX_HOOK_SOCK before the root becomes
 * read-only, goes to *hook_fd (net_hook_listener). */
int mounts_build(const struct sandbox_spec *s, int *hook_fd, struct werr *e);
/* After mounts_build, in the new root: mask (an empty file or directory of
 * mode 0, bound read-only) or protect (bound read-only onto itself) the
 * workspace path rel, opened beneath wsfd with no symlink followed. */
int mounts_rebind(int wsfd, const char *rel, bool mask, struct werr *e);

/* remask.c: the process that masks or protects a path again during the
 * session, started by the supervisor when first needed: it joins the
 * sandbox's user and mount namespaces (userns, mntns: their files), and serves
 * requests on *sock (the supervisor's end) for the workspace at the path
 * the sandbox sees it by. Returns its pid, or -1 with e filled. */
enum remask_kind { REMASK_MASK = 1, REMASK_PROTECT = 2 };
struct remask_req {
	unsigned kind;
	char rel[4096];
};
pid_t remask_spawn(int userns, int mntns, const char *workspace, int *sock, struct werr *e);

/* net.c (init): bring lo up. */
int net_lo_up(struct werr *e);
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
 * instructions. */
int seccomp_prepare(struct seccomp_kind k, void **prog, size_t *len, struct werr *e);
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

