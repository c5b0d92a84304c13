/* limits.c - a session's limits: where each is enforced (a cgroup, an
 * rlimit, the tmpfs mounts), the session's cgroups made and removed, and the
 * `limit` events when the sandbox reaches one. The rules are in limits.h;
 * what the host offers for them is found by limits_probe.c. */
#include "limits.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "features.h"

static const enum policy_limit_kind ctl_kind[CTL_COUNT] = { LIMIT_PIDS, LIMIT_MEMORY, LIMIT_CPU };
#define CPU_PERIOD_US 100000ULL

/* The cgroup file dir/file written. */
static int write_text(const char *dir, const char *file, const char *text)
{
	char path[700];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return write_file(path, text);
}

/* ---- the plan ---------------------------------------------------------------- */

/* The memory warden may give a session whose cgroup is made in parent
 * (cgroup version v): MemTotal, or the lowest limit of parent and the
 * cgroups above it when lower (the root of a v2 hierarchy has none); from
 * says which. 0 when /proc/meminfo cannot be read. */
static unsigned long long memory_room(const char *parent, int v, char *from, size_t flen)
{
	_cleanup_free_ char *mi = read_text_file("/proc/meminfo");
	unsigned long long room;
	if (!mi || !limits_parse_memtotal(mi, &room))
		return 0;
	snprintf_cut(from, flen, "MemTotal");
	const char *file = v == 2 ? "memory.max" : "memory.limit_in_bytes";
	char dir[600];
	snprintf(dir, sizeof dir, "%s", parent);
	for (;;) {
		char path[700];
		snprintf(path, sizeof path, "%s/%s", dir, file);
		_cleanup_free_ char *t = read_text_file(path);
		if (!t)
			break; /* above the hierarchy's root, or its root */
		unsigned long long x;
		if (limits_parse_memory_max(t, &x) && x < room) {
			room = x;
			snprintf_cut(from, flen, "%s of %s", file, dir);
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	return room;
}

static int kind_ctl(enum policy_limit_kind k)
{
	for (int i = 0; i < CTL_COUNT; i++)
		if (ctl_kind[i] == k)
			return i;
	return -1;
}

static void by_cgroup(struct limits *l, int i)
{
	static const char *const files[2][CTL_COUNT] = {
		{ "pids.max", "memory.limit_in_bytes", "cpu.cfs_quota_us" },
		{ "pids.max", "memory.max and memory.oom.group", "cpu.max" },
	};
	const struct limits_cgroup *c = &l->probe.ctl[i];
	enum policy_limit_kind k = ctl_kind[i];
	unsigned pct = l->policy->limits[k].percent;
	char from[700] = "", room_text[32] = "", v[32];
	if (pct) { /* a share: of what, here */
		unsigned long long room = memory_room(c->parent, c->version, from, sizeof from);
		if (!room) {
			l->how[k] = HOW_NONE;
			snprintf_cut(l->why[k], sizeof l->why[k], "%u%% of the memory: MemTotal of /proc/meminfo "
				 "is unreadable (set a size: `limit memory SIZE`)", pct);
			return;
		}
		l->value[k] = limits_share(pct, room);
		if (room >= 1ULL << 30) /* a round figure: the value itself is exact */
			snprintf_cut(room_text, sizeof room_text, "%.1fG", (double)room / (1ULL << 30));
		else
			snprintf_cut(room_text, sizeof room_text, "%lluM", room >> 20);
	}
	l->how[k] = HOW_CGROUP;
	snprintf_cut(l->why[k], sizeof l->why[k], "%s of a cgroup v%d below %s", files[c->version == 2][i],
		 c->version, c->parent);
	if (pct) {
		policy_limit_format(k, l->value[k], v, sizeof v);
		size_t n = strlen(l->why[k]);
		snprintf_cut(l->why[k] + n, sizeof l->why[k] - n, ": %s, %u%% of %s (%s)", v, pct, room_text,
			 from);
	}
}

/* Not by a cgroup: pids by RLIMIT_NPROC unless root, the others not. */
static void without_cgroup(struct limits *l, int i, const char *why)
{
	enum policy_limit_kind k = ctl_kind[i];
	if (k == LIMIT_PIDS && !l->probe.root) {
		l->how[k] = HOW_RLIMIT;
		snprintf_cut(l->why[k], sizeof l->why[k], "RLIMIT_NPROC in the sandbox's user namespace "
			 "(a cgroup would count better: %s)", why);
	} else if (k == LIMIT_PIDS) {
		l->how[k] = HOW_NONE;
		snprintf_cut(l->why[k], sizeof l->why[k], "%s; and RLIMIT_NPROC never applies to "
			 "processes of uid 0, as the sandbox's are when warden runs as root", why);
	} else {
		l->how[k] = HOW_NONE;
		snprintf_cut(l->why[k], sizeof l->why[k], "%s", why);
	}
}

void limits_plan(struct limits *l, const struct policy *p, const struct limits_probe *probe)
{
	struct limits_probe pr = *probe; /* probe may be l's own */
	memset(l, 0, sizeof *l);
	l->probe = pr;
	l->policy = p;
	l->fs_fd[0] = l->fs_fd[1] = -1;
	for (int k = 0; k < LIMIT_KINDS; k++) {
		int i = kind_ctl(k);
		l->value[k] = p->limits[k].value; /* a share's, worked out by by_cgroup */
		if (!p->limits[k].value && !p->limits[k].percent)
			l->how[k] = HOW_UNLIMITED;
		else if (k == LIMIT_TMP || k == LIMIT_HOME)
			l->how[k] = HOW_TMPFS;
		else if (k == LIMIT_LOG)
			l->how[k] = HOW_LOG;
		else if (l->probe.ctl[i].version)
			by_cgroup(l, i);
		else
			without_cgroup(l, i, l->probe.ctl[i].why);
		if (l->how[k] == HOW_LOG)
			snprintf_cut(l->why[k], sizeof l->why[k], "warden ends the session when its audit "
				     "log reaches this size");
		if (l->how[k] == HOW_TMPFS)
			snprintf_cut(l->why[k], sizeof l->why[k], "the size of the tmpfs %s",
				 k == LIMIT_TMP ? "behind /tmp, /var/tmp and /dev/shm" : "of the home " AGENT_HOME);
	}
}

const char *limits_how_text(const struct limits *l, enum policy_limit_kind k)
{
	return l->why[k];
}

/* ---- the session's cgroups --------------------------------------------------- */

static bool ctl_used(const struct limits *l, int i)
{
	return l->how[ctl_kind[i]] == HOW_CGROUP;
}

/* Give up the cgroup of controller i (made or not), saying why. */
static void give_up(struct limits *l, int i, const char *what, int err)
{
	char why[400];
	snprintf_cut(why, sizeof why, "%s: %s", what, strerror(err));
	if (l->dir[i][0]) {
		bool shared = false; /* v2: one directory for every controller */
		for (int j = 0; j < CTL_COUNT; j++)
			shared = shared || (j != i && strcmp(l->dir[j], l->dir[i]) == 0);
		if (!shared)
			rmdir(l->dir[i]);
		l->dir[i][0] = '\0';
	}
	without_cgroup(l, i, why);
}

/* The limit of controller i written into dir; -1 with errno and *what. */
static int write_limit(const struct limits *l, int i, int version, const char *dir, const char **what)
{
	unsigned long long v = l->value[ctl_kind[i]];
	char buf[64];
	switch (i) {
	case CTL_PIDS:
		snprintf(buf, sizeof buf, "%llu", v);
		*what = "pids.max";
		return write_text(dir, "pids.max", buf);
	case CTL_MEMORY:
		snprintf(buf, sizeof buf, "%llu", v);
		if (version == 1) {
			*what = "memory.limit_in_bytes";
			return write_text(dir, "memory.limit_in_bytes", buf);
		}
		*what = "memory.max";
		if (write_text(dir, "memory.max", buf) < 0)
			return -1;
		*what = "memory.oom.group";
		return write_text(dir, "memory.oom.group", "1");
	case CTL_CPU:
		if (version == 1) {
			snprintf(buf, sizeof buf, "%llu", CPU_PERIOD_US);
			*what = "cpu.cfs_period_us";
			if (write_text(dir, "cpu.cfs_period_us", buf) < 0)
				return -1;
			snprintf(buf, sizeof buf, "%llu", v * CPU_PERIOD_US / 1000);
			*what = "cpu.cfs_quota_us";
			return write_text(dir, "cpu.cfs_quota_us", buf);
		}
		snprintf(buf, sizeof buf, "%llu %llu", v * CPU_PERIOD_US / 1000, CPU_PERIOD_US);
		*what = "cpu.max";
		return write_text(dir, "cpu.max", buf);
	}
	return 0;
}

/* v2: the controller enabled for the children of parent. */
static int enable(const char *parent, const char *ctl)
{
	char path[600];
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", parent);
	_cleanup_free_ char *on = read_text_file(path);
	if (on) {
		char *nl = strchr(on, '\n');
		if (nl)
			*nl = '\0';
		for (char *t = on; *t; t++)
			if (*t == ' ')
				*t = ',';
		if (limits_list_has(on, ctl))
			return 0;
	}
	char plus[32];
	snprintf(plus, sizeof plus, "+%s", ctl);
	return write_file(path, plus);
}

/* Remove the cgroups of sessions that ended without removing theirs
 * (warden killed): empty "warden-*" directories of parent made more than a
 * minute ago (a session's own is populated from a moment after it made it,
 * and rmdir refuses a populated cgroup). */
static void sweep_stale(const char *parent)
{
	_cleanup_dir_ DIR *d = dir_open_at(AT_FDCWD, parent, 0);
	if (!d)
		return;
	int fd = dirfd(d);
	time_t now = time(NULL);
	for (struct dirent *de; (de = readdir(d));) {
		struct stat st;
		if (de->d_type != DT_DIR || strncmp(de->d_name, "warden-", 7) != 0 ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || now - st.st_mtime < 60)
			continue;
		unlinkat(fd, de->d_name, AT_REMOVEDIR);
	}
}

void limits_create(struct limits *l, const char *session)
{
	for (int i = 0; i < CTL_COUNT; i++) {
		if (!ctl_used(l, i))
			continue;
		const struct limits_cgroup *c = &l->probe.ctl[i];
		char dir[600], what[700];
		snprintf(dir, sizeof dir, "%s/warden-%s", c->parent, session);
		if (c->version == 2 && enable(c->parent, limits_ctl_names[i]) < 0) {
			snprintf_cut(what, sizeof what, "enabling %s in %s/cgroup.subtree_control", limits_ctl_names[i],
				 c->parent);
			give_up(l, i, what, errno);
			continue;
		}
		if (mkdir(dir, 0755) < 0 && !(errno == EEXIST && c->version == 2)) {
			snprintf_cut(what, sizeof what, "making %s", dir);
			give_up(l, i, what, errno);
			continue;
		}
		snprintf(l->dir[i], sizeof l->dir[i], "%s", dir);
		const char *file = "";
		if (write_limit(l, i, c->version, dir, &file) < 0) {
			snprintf_cut(what, sizeof what, "writing %s/%s", dir, file);
			give_up(l, i, what, errno);
		}
	}
	/* a v2 cgroup of the session's own, controllers or not */
	if (l->probe.v2[0] && !limits_cgroup_v2(l)) {
		char dir[600];
		snprintf(dir, sizeof dir, "%s/warden-%s", l->probe.v2, session);
		if (mkdir(dir, 0755) == 0)
			snprintf(l->core, sizeof l->core, "%s", dir);
		else
			wnote("could not make the session's cgroup %s: %s (freeze and kill act "
			      "by signals)", dir, strerror(errno));
	}
}

void limits_notes(const struct limits *l)
{
	for (int k = 0; k < LIMIT_KINDS; k++) {
		const struct policy_limit *pl = &l->policy->limits[k];
		if (l->how[k] != HOW_NONE || !policy_limit_explicit(pl))
			continue;
		char v[32];
		policy_limit_text(k, pl, v, sizeof v);
		wnote("limit %s %s (%s) is not enforced here: %s", policy_limit_name(k), v, pl->origin,
		      l->why[k]);
	}
}

int limits_clone_fd(const struct limits *l)
{
	const char *v2 = limits_cgroup_v2(l);
	return v2 ? open(v2, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
}

void limits_attach(struct limits *l, pid_t init, unsigned moved)
{
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)init);
	for (int i = 0; i < CTL_COUNT; i++) {
		if (!ctl_used(l, i) || !l->dir[i][0] || (l->born_v2 && l->probe.ctl[i].version == 2) ||
		    (moved & (1U << i)))
			continue;
		bool done = false; /* v2: one move for the directory every controller shares */
		for (int j = 0; j < i; j++)
			done = done || (ctl_used(l, j) && strcmp(l->dir[j], l->dir[i]) == 0);
		if (done || write_text(l->dir[i], "cgroup.procs", pid) == 0)
			continue;
		char what[700];
		snprintf_cut(what, sizeof what, "moving the sandbox into %s", l->dir[i]);
		give_up(l, i, what, errno);
		enum policy_limit_kind k = ctl_kind[i];
		if (l->how[k] == HOW_NONE && policy_limit_explicit(&l->policy->limits[k]))
			wnote("limit %s is not enforced: %s", policy_limit_name(k), l->why[k]);
	}
	if (l->core[0] && !l->born_v2 && write_text(l->core, "cgroup.procs", pid) < 0) {
		wnote("could not move the sandbox into %s: %s (freeze and kill act by "
		      "signals)", l->core, strerror(errno));
		rmdir(l->core);
		l->core[0] = '\0';
	}
	if (l->how[LIMIT_PIDS] == HOW_RLIMIT) {
		rlim_t n = (rlim_t)l->value[LIMIT_PIDS] + l->helpers;
		struct rlimit r = { .rlim_cur = n, .rlim_max = n };
		size_t w = strlen(l->why[LIMIT_PIDS]);
		if (l->helpers)
			snprintf_cut(l->why[LIMIT_PIDS] + w, sizeof l->why[LIMIT_PIDS] - w, "; set to %llu: "
			    "warden's file-read helper is counted too", (unsigned long long)n);
		if (prlimit(init, RLIMIT_NPROC, &r, NULL) < 0) {
			int err = errno;
			l->how[LIMIT_PIDS] = HOW_NONE;
			snprintf_cut(l->why[LIMIT_PIDS], sizeof l->why[LIMIT_PIDS], "setting RLIMIT_NPROC: %s",
				 strerror(err));
			if (policy_limit_explicit(&l->policy->limits[LIMIT_PIDS]))
				wnote("limit pids is not enforced: %s", l->why[LIMIT_PIDS]);
		}
	}
}

/* ---- init's move of itself (limits_self_open, limits_self_move) ------------- */

void limits_self_open(const struct limits *l, int fds[CTL_COUNT])
{
	for (int i = 0; i < CTL_COUNT; i++) {
		fds[i] = -1;
		if (!l->probe.root || !ctl_used(l, i) || !l->dir[i][0] || l->probe.ctl[i].version != 1)
			continue;
		char path[700];
		snprintf(path, sizeof path, "%s/tasks", l->dir[i]);
		fds[i] = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	}
}

unsigned limits_self_move(int fds[CTL_COUNT])
{
	unsigned moved = 0;
	for (int i = 0; i < CTL_COUNT; i++) {
		if (fds[i] < 0)
			continue;
		if (write(fds[i], "0", 1) == 1)
			moved |= 1U << i;
		close(fds[i]);
		fds[i] = -1;
	}
	return moved;
}

void limits_self_close(int fds[CTL_COUNT])
{
	for (int i = 0; i < CTL_COUNT; i++)
		closep(&fds[i]);
}

/* ---- watching ------------------------------------------------------------------ */

bool limits_watch(struct limits *l, int tmp_fd, int home_fd)
{
	static const enum policy_limit_kind kinds[2] = { LIMIT_TMP, LIMIT_HOME };
	int fds[2] = { tmp_fd, home_fd };
	bool any = false;
	for (int i = 0; i < 2; i++) {
		if (l->how[kinds[i]] != HOW_TMPFS || l->fs_fd[i] >= 0) {
			if (fds[i] >= 0)
				close(fds[i]);
			continue;
		}
		l->fs_fd[i] = fds[i];
		any = any || fds[i] >= 0;
	}
	for (int i = 0; i < CTL_COUNT; i++)
		any = any || (ctl_used(l, i) && l->dir[i][0]);
	return any;
}

static void emit(struct audit *log, enum policy_limit_kind k, unsigned long long value,
		 const char *detail)
{
	if (!log)
		return;
	char v[32];
	policy_limit_format(k, value, v, sizeof v);
	audit_emit_event(log, ev_limit(&(struct ev_limit){ .kind = policy_limit_name(k), .limit = v,
		.detail = detail }), NULL);
}

static void check_fs(struct limits *l, int i, struct audit *log)
{
	static const char *const what[2] = { "/tmp, /var/tmp and /dev/shm (one tmpfs) are",
					     "the home " AGENT_HOME " is" };
	enum policy_limit_kind k = i == 0 ? LIMIT_TMP : LIMIT_HOME;
	struct statfs sf;
	if (l->fs_fd[i] < 0 || fstatfs(l->fs_fd[i], &sf) < 0)
		return;
	bool blocks = sf.f_bfree == 0, inodes = sf.f_files > 0 && sf.f_ffree == 0;
	if (!blocks && !inodes) {
		l->fs_full[i] = false;
		return;
	}
	if (l->fs_full[i])
		return;
	l->fs_full[i] = true;
	char detail[300];
	if (blocks)
		snprintf_cut(detail, sizeof detail, "%s full: writing more there fails with ENOSPC "
			 "(raise it with `limit %s SIZE`)", what[i], policy_limit_name(k));
	else
		snprintf_cut(detail, sizeof detail, "%s out of inodes (%llu files): creating more fails "
			 "with ENOSPC (raise it with `limit %s SIZE`)", what[i],
			 (unsigned long long)sf.f_files, policy_limit_name(k));
	emit(log, k, l->value[k], detail);
}

/* CPU time is throttled, never refused: a `limit` event when the kernel
 * first throttles the sandbox, then at most one a minute while it goes on
 * (nr_throttled of cpu.stat, v1 and v2 alike). */
static void check_cpu(struct limits *l, struct audit *log)
{
	char path[700];
	snprintf(path, sizeof path, "%s/cpu.stat", l->dir[CTL_CPU]);
	_cleanup_free_ char *text = read_text_file(path);
	unsigned long long n;
	if (!text || !limits_parse_counter(text, "nr_throttled", &n) || n <= l->seen[CTL_CPU])
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (l->seen[CTL_CPU] && now.tv_sec - l->cpu_said < 60)
		return;
	l->seen[CTL_CPU] = n;
	l->cpu_said = now.tv_sec;
	char detail[300];
	snprintf_cut(detail, sizeof detail, "the sandbox used its share of CPU time: the kernel held it "
		 "back %llu times so far, a tenth of a second each at most (nr_throttled of "
		 "cpu.stat, cgroup v%d; said again at most once a minute)", n,
		 l->probe.ctl[CTL_CPU].version);
	emit(log, LIMIT_CPU, l->value[LIMIT_CPU], detail);
}

static void check_cgroup(struct limits *l, int i, struct audit *log)
{
	if (!ctl_used(l, i) || !l->dir[i][0])
		return;
	if (i == CTL_CPU) {
		check_cpu(l, log);
		return;
	}
	int version = l->probe.ctl[i].version;
	const char *file = i == CTL_PIDS ? "pids.events" : version == 2 ? "memory.events"
									: "memory.oom_control";
	char path[700];
	snprintf(path, sizeof path, "%s/%s", l->dir[i], file);
	_cleanup_free_ char *text = read_text_file(path);
	/* v2: one group kill (memory.oom.group) counts each process it kills
	 * in oom_kill, one by one: oom_group_kill (from 5.17) counts it once */
	bool group = version == 2 && i == CTL_MEMORY && text &&
		     limits_parse_counter(text, "oom_group_kill", &(unsigned long long){ 0 });
	const char *key = i == CTL_PIDS ? "max" : group ? "oom_group_kill" : "oom_kill";
	unsigned long long n;
	if (!text || !limits_parse_counter(text, key, &n) || n <= l->seen[i])
		return;
	l->seen[i] = n;
	enum policy_limit_kind k = ctl_kind[i];
	char detail[300];
	if (i == CTL_PIDS)
		snprintf_cut(detail, sizeof detail, "the sandbox reached its number of processes: a fork "
			 "or clone failed with EAGAIN (%llu so far, %s of cgroup v%d)", n, file, version);
	else if (group)
		snprintf_cut(detail, sizeof detail, "the sandbox reached its memory limit: the kernel "
			 "killed every process of the sandbox (memory.oom.group; %llu times so far, "
			 "oom_group_kill of %s)", n, file);
	else
		snprintf_cut(detail, sizeof detail, "the sandbox reached its memory limit: the kernel "
			 "killed %s (%llu kills so far, %s of cgroup v%d)",
			 version == 2 ? "every process of the sandbox (memory.oom.group)"
				      : "a process of the sandbox", n, file, version);
	emit(log, k, l->value[k], detail);
}

void limits_check(struct limits *l, struct audit *log)
{
	for (int i = 0; i < 2; i++)
		check_fs(l, i, log);
	for (int i = 0; i < CTL_COUNT; i++)
		check_cgroup(l, i, log);
}

/* rmdir a cgroup whose processes are gone or going: exiting tasks leave it
 * a moment after their parent saw them end. */
static void remove_cgroup(const char *dir)
{
	for (int tries = 0; tries < 200; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		if (tries == 20)
			write_text(dir, "cgroup.kill", "1"); /* v2: anything left */
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	wnote("could not remove the session's cgroup %s: %s", dir, strerror(errno));
}

const char *limits_cgroup_v2(const struct limits *l)
{
	for (int i = 0; l && i < CTL_COUNT; i++)
		if (l->dir[i][0] && l->probe.ctl[i].version == 2)
			return l->dir[i];
	return l && l->core[0] ? l->core : NULL;
}

void limits_last_check(struct limits *l, struct audit *log)
{
	/* (without a log there is nothing to say, and no check after this
	 * one for what it would note: limits_end's, after sandbox_gone's,
	 * reads the counters no more) */
	if (log)
		limits_check(l, log);
	for (int i = 0; i < 2; i++) {
		if (l->fs_fd[i] >= 0)
			close(l->fs_fd[i]);
		l->fs_fd[i] = -1;
	}
}

void limits_end(struct limits *l, struct audit *log)
{
	limits_last_check(l, log);
	/* its cgroups (v2: one for all controllers), then stale ones beside each */
	for (int i = 0; i <= CTL_COUNT; i++) {
		const char *dir = i < CTL_COUNT ? l->dir[i] : l->core;
		bool again = false;
		for (int j = 0; j < i; j++)
			again = again || strcmp(l->dir[j], dir) == 0;
		if (!dir[0] || again)
			continue;
		remove_cgroup(dir);
		sweep_stale(i < CTL_COUNT ? l->probe.ctl[i].parent : l->probe.v2);
	}
	memset(l->dir, 0, sizeof l->dir);
	l->core[0] = '\0';
}

json_t *limits_to_json(const struct limits *l)
{
	static const char *const how[] = {
		[HOW_UNLIMITED] = NULL, [HOW_NONE] = NULL, [HOW_TMPFS] = "tmpfs",
		[HOW_RLIMIT] = "RLIMIT_NPROC", [HOW_CGROUP] = "cgroup",
		[HOW_LOG] = "warden",
	};
	json_t *o = json_object();
	for (int k = 0; k < LIMIT_KINDS; k++) {
		char v[32];
		const struct policy_limit *pl = &l->policy->limits[k];
		if (l->value[k])
			policy_limit_format(k, l->value[k], v, sizeof v);
		else
			policy_limit_text(k, pl, v, sizeof v);
		json_t *x = json_pack("{s:s}", "value", v);
		if (how[l->how[k]]) {
			json_object_set_new(x, "by", json_string(how[l->how[k]]));
			json_object_set_new(x, "detail", json_string(l->why[k]));
		} else if (l->how[k] == HOW_NONE) {
			json_object_set_new(x, "by", json_null());
			json_object_set_new(x, "why", json_string(l->why[k]));
		}
		if (pl->percent)
			json_object_set_new(x, "share", json_sprintf("%u%%", pl->percent));
		json_object_set_new(o, policy_limit_name(k), x);
	}
	return o;
}
