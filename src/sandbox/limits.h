/* limits.h - where a session's limits (`limit KIND VALUE`, policy.h) are
 * enforced, and what warden sees when the sandbox reaches one.
 *
 *   pids    pids.max of the session's cgroup when a cgroup with the pids
 *           controller is usable; else RLIMIT_NPROC, which the supervisor
 *           sets on sandbox init before init starts anything. In the user
 *           namespace it counts the processes of the sandbox's uid in that
 *           namespace only (not the invoking user's outside); the kernel
 *           never applies it to uid 0, so warden run as root has none.
 *   memory  memory.max and memory.oom.group=1 (cgroup v1: memory.limit_in_bytes);
 *           a share (`limit memory 50%`, the default) is of the memory warden
 *           may give: MemTotal, or the lowest memory limit of the cgroup the
 *           session's is made in and of those above it, when lower; in
 *           whole MiB, at least 16M. Where no cgroup is usable there is
 *           none, said by `warden policy show` and doctor, never a note.
 *   cpu     cpu.max (cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us)
 *   tmp     the size of the tmpfs behind /tmp, /var/tmp and /dev/shm (mounts.c)
 *   home    the size of the home tmpfs (mounts.c)
 *
 * A usable cgroup: in cgroup v2, a directory warden may make children in and
 * move its processes to, whose controllers it can enable for them: the root
 * of the hierarchy when warden's own cgroup is the root (as root, a
 * container's namespace), the cgroup systemd delegates to the user
 * (user@UID.service) when warden runs inside it, and as root the root of the
 * hierarchy. In cgroup v1 (a controller bound to a v1 hierarchy, as on
 * hybrid hosts) warden's own cgroup of that controller when it is writable
 * (as root). The session's cgroup "warden-SESSION" is made below it and
 * removed at the end. The sandbox's init is cloned straight into the v2
 * one (clone3's CLONE_INTO_CGROUP): a move of a running process takes the
 * kernel's cgroup lock for writing, which waits for an RCU grace period
 * (10-15 ms on a virtual machine with lazy RCU); init moves itself into
 * v1 ones, which takes no such lock (limits_self_move), and the supervisor
 * moves it into those it could not, and into the v2 one should the clone
 * into it be refused, before it starts anything.
 *
 * Where a cgroup v2 is usable but no limit puts a controller there (a
 * hybrid host, whose controllers are bound to v1, or no limit set), the
 * session still gets a v2 cgroup of its own: without controllers it has
 * what the kernel gives every v2 cgroup, cgroup.freeze and cgroup.kill
 * (the kill switch, src/supervisor/freeze.h) and an id that scopes the
 * in-kernel exec checks to the session.
 *
 * Reaching a limit is a `limit` event (kind, limit, detail) when the kernel
 * lets warden see it: the pids.events "max" and memory.events
 * "oom_group_kill" counters of the session's cgroup (one for each kill of
 * the whole sandbox; "oom_kill", which counts each process killed, before
 * Linux 5.17 and on cgroup v1), and a tmpfs with no free block or inode
 * (statfs). Both are read every second while the sandbox runs and at its
 * end. A fork refused by RLIMIT_NPROC is seen only by the process that made
 * it (EAGAIN). CPU time is throttled, never refused: the first throttling
 * (cpu.stat nr_throttled) is an event, and then one a minute at most while
 * it goes on. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../policy/policy.h"

enum limits_ctl { CTL_PIDS, CTL_MEMORY, CTL_CPU, CTL_COUNT };
/* Their names, as the kernel's files spell them ("pids", "memory", "cpu"). */
extern const char *const limits_ctl_names[CTL_COUNT];
/* Does the comma-separated list (a mount's options, cgroup.controllers
 * with its blanks made commas) hold name? */
bool limits_list_has(const char *list, const char *name);

/* Where the session's cgroup of one controller would be made. */
struct limits_cgroup {
	int version;       /* 2 or 1; 0: none usable */
	char parent[512];  /* the directory it is made in */
	char why[400];     /* version 0: why none is usable */
};

/* What this host offers (limits_probe reads /proc and the cgroup files;
 * it makes nothing). */
struct limits_probe {
	bool root;         /* euid 0 */
	char v2[512];      /* the usable cgroup v2 directory, "" none */
	struct limits_cgroup ctl[CTL_COUNT];
};
void limits_probe(struct limits_probe *p);

enum limits_how {
	HOW_UNLIMITED,     /* the policy sets none */
	HOW_NONE,          /* set, but not enforced here (why says why) */
	HOW_TMPFS,
	HOW_RLIMIT,
	HOW_CGROUP,
	HOW_LOG,           /* `limit log`: warden's log writer (src/audit/log.c) */
};

/* One session's limits: decided (limits_plan), made (limits_create,
 * limits_attach), watched (limits_watch, limits_check) and undone
 * (limits_end). */
struct limits {
	struct limits_probe probe;
	const struct policy *policy;
	enum limits_how how[LIMIT_KINDS];
	unsigned long long value[LIMIT_KINDS]; /* in force: the policy's, or its share worked out */
	char why[LIMIT_KINDS][480];   /* HOW_NONE: why; else by what */
	char dir[CTL_COUNT][600];     /* the session's cgroup per controller; "" none */
	char core[600];               /* its v2 cgroup when no controller made one; "" */
	int fs_fd[2];                 /* O_PATH: the sandbox's /tmp and home; -1 */
	bool fs_full[2];              /* said full already (said again once freed) */
	unsigned long long seen[CTL_COUNT]; /* the counters as last reported */
	long cpu_said;                /* CLOCK_MONOTONIC seconds of the last cpu event */
	bool born_v2;                 /* init was cloned into limits_cgroup_v2() */
	unsigned helpers;             /* warden's processes kept in the sandbox's user
				       * namespace, which RLIMIT_NPROC counts too */
};

/* Decide how each of p's limits is enforced with what probe offers. */
void limits_plan(struct limits *l, const struct policy *p, const struct limits_probe *probe);

/* Make the session's cgroups and write their limits. What fails falls back
 * (pids to RLIMIT_NPROC unless root) or is not enforced; never an error. */
void limits_create(struct limits *l, const char *session);

/* A note on stderr for each limit a profile asked for (not the built-in
 * default) that is not enforced, saying why. */
void limits_notes(const struct limits *l);

/* The session's cgroup v2 directory opened for clone3's CLONE_INTO_CGROUP
 * (O_PATH), or -1 when there is none. */
int limits_clone_fd(const struct limits *l);

/* As root, init moves itself into the session's cgroup v1 ones (hybrid
 * hosts: no clone straight into a v1 cgroup). A move of another process
 * (a pid written to cgroup.procs) takes the kernel's cgroup lock for
 * writing, whose first use after a quiet spell waits for an RCU grace
 * period: 7-15 ms on a virtual machine with lazy RCU, on the session's
 * path. A thread's move of itself ("0" written to the v1 `tasks` file)
 * takes no such lock (the kernel's cgroup_procs_write_start: the thread
 * cannot exit or exec meanwhile) and takes some 30 us; init, a clone of
 * the supervisor's one calling thread, is one thread then, so its move is
 * the process's. The kernel checks the right to move by the credentials
 * of whoever opened the file, so the supervisor opens them:
 * limits_self_open, before init's clone, fds[i] the `tasks` file of the
 * session's cgroup of controller i, O_WRONLY and close-on-exec, -1 where
 * there is none to move into (not root, no limit on a v1 controller, its
 * cgroup given up, or the open failed: limits_attach moves init then).
 * limits_self_move, in init once its identity maps are written (before it
 * says it runs, and before it forks anything), writes each and closes it;
 * bit i of the result set when the move into controller i's cgroup was
 * made.
 * limits_self_close closes the supervisor's copies once init is cloned. */
void limits_self_open(const struct limits *l, int fds[CTL_COUNT]);
unsigned limits_self_move(int fds[CTL_COUNT]);
void limits_self_close(int fds[CTL_COUNT]);

/* Put init (not started yet: it waits for the supervisor) under the
 * limits: into the session's cgroups (but the v2 one when born there,
 * l->born_v2, and those init moved itself into, bit i of moved), or its
 * RLIMIT_NPROC (the limit and l->helpers: warden's own processes there
 * count, but not against the sandbox). A cgroup that refuses it is given
 * up (noted when asked for). */
void limits_attach(struct limits *l, pid_t init, unsigned moved);

/* The session's cgroup v2 directory, or NULL when none was made (no cgroup
 * v2 usable): where freeze and kill act on the whole sandbox at once
 * (src/supervisor/freeze.h). */
const char *limits_cgroup_v2(const struct limits *l);

/* Once init reported ready: the sandbox's /tmp and home (O_PATH fds init
 * opened, taken over; -1: none) to watch their space. true when there is
 * anything to watch (tmpfs or cgroup counters). */
bool limits_watch(struct limits *l, int tmp_fd, int home_fd);

/* Emit a `limit` event for each limit reached since the last check. */
void limits_check(struct limits *l, struct audit *log);

/* With the sandbox gone: a last check (none when log is NULL), the fds
 * of the tmpfs closed. */
void limits_last_check(struct limits *l, struct audit *log);
/* limits_last_check, then the session's cgroups removed, and the stale
 * ones of the directories they were made in (cgroups of sessions whose
 * warden was killed: empty "warden-*" directories made over a minute ago;
 * the removal of a session's own is after its record is closed, this
 * sweep with it, off the way of the next session's start). Safe to call
 * more than once. */
void limits_end(struct limits *l, struct audit *log);

/* What is in force, for session.start and `warden policy show`: {KIND:
 * {"value": V (a share's worked out when it is in force), "share": "N%"
 * (a share), "by": HOW, "detail": HOW IT IS (in force) or "why": WHY (not
 * enforced)}} (a new reference). */
json_t *limits_to_json(const struct limits *l);

/* How a limit is enforced, or why not, one line for `warden doctor`. */
const char *limits_how_text(const struct limits *l, enum policy_limit_kind k);

/* --- pure parts, unit tested ----------------------------------------------- */

/* From /proc/self/cgroup text: the cgroup of the v2 hierarchy ("0::PATH";
 * controller NULL) or of the v1 hierarchy holding controller. 1 found, 0
 * not, -1 out too small. */
int limits_parse_own_cgroup(const char *text, const char *controller, char *out, size_t len);

/* From /proc/self/mountinfo text: the mount point and the root of the
 * cgroup2 mount (controller NULL), or of the cgroup v1 mount with
 * controller among its options. A later mount on the same point hides an
 * earlier one. 1 found, 0 not, -1 out too small. */
int limits_parse_cgroup_mount(const char *text, const char *controller, char *point, size_t plen,
			      char *root, size_t rlen);

/* MemTotal of /proc/meminfo text, in bytes: true when found. */
bool limits_parse_memtotal(const char *meminfo, unsigned long long *bytes);

/* A cgroup's memory limit (memory.max, memory.limit_in_bytes): true and
 * the bytes when it has one ("max" and v1's near-2^63 are none). */
bool limits_parse_memory_max(const char *text, unsigned long long *bytes);

/* percent of room, down to whole MiB, at least 16M (a profile's minimum). */
unsigned long long limits_share(unsigned percent, unsigned long long room);

/* The value of "KEY N" lines (pids.events, memory.events,
 * memory.oom_control): true when found. */
bool limits_parse_counter(const char *text, const char *key, unsigned long long *v);
