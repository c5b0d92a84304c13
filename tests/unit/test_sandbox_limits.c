/* test_sandbox_limits.c - unit tests of the pure parts of the limits
 * (src/sandbox/limits.c): warden's own cgroup from /proc/self/cgroup, the
 * cgroup mounts from mountinfo (v2, v1 by controller, hybrid hosts, hidden
 * mounts, escapes), the counters of pids.events and memory.events, the
 * plan: what enforces each limit with a cgroup, without one, and as root,
 * a share of the memory (`limit memory 50%`) worked out from MemTotal and
 * the memory.max of the cgroups above the session's,
 * the `limit` events of the memory limit from a memory.events file, and
 * init's move of itself into the session's cgroup v1 ones (limits_self_open,
 * limits_self_move): only as root and for a v1 controller a limit uses,
 * "0" written to its tasks file, and the supervisor's move of init
 * (limits_attach) only where that was not made; checked on stand-in
 * files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/audit/audit.h"
#include "src/sandbox/limits.h"
#include "check.h"
#include "files.h"
#include "profile.h"

static const char self_cgroup[] =
	"9:name=systemd:/\n"
	"8:pids:/user.slice\n"
	"4:memory:/process_api/5655\n"
	"2:cpu,cpuacct:/a b\n"
	"1:cpuset:/set\n"
	"0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n";

static void test_own_cgroup(void)
{
	char out[128];
	CHECK(limits_parse_own_cgroup(self_cgroup, NULL, out, sizeof out) == 1);
	CHECK_STR(out, "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope");
	CHECK(limits_parse_own_cgroup(self_cgroup, "memory", out, sizeof out) == 1);
	CHECK_STR(out, "/process_api/5655");
	CHECK(limits_parse_own_cgroup(self_cgroup, "cpu", out, sizeof out) == 1);
	CHECK_STR(out, "/a b");
	CHECK(limits_parse_own_cgroup(self_cgroup, "cpuacct", out, sizeof out) == 1);
	CHECK_STR(out, "/a b");
	CHECK(limits_parse_own_cgroup(self_cgroup, "pids", out, sizeof out) == 1);
	CHECK_STR(out, "/user.slice");
	CHECK(limits_parse_own_cgroup(self_cgroup, "cpus", out, sizeof out) == 0);
	CHECK(limits_parse_own_cgroup(self_cgroup, "hugetlb", out, sizeof out) == 0);
	CHECK(limits_parse_own_cgroup("1:cpu:/\n", NULL, out, sizeof out) == 0);
	CHECK(limits_parse_own_cgroup("0::/\n", NULL, out, sizeof out) == 1 && strcmp(out, "/") == 0);
	CHECK(limits_parse_own_cgroup("0::/\n", "pids", out, sizeof out) == 0);
	CHECK(limits_parse_own_cgroup(self_cgroup, NULL, out, 8) == -1);
	CHECK(limits_parse_own_cgroup("", NULL, out, sizeof out) == 0);
}

/* This machine's shape: v1 controllers under a tmpfs, cgroup2 at unified. */
static const char hybrid[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"35 30 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime shared:7 master:3 - cgroup cgroup rw,pids\n"
	"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void test_mounts(void)
{
	char point[128], root[128];
	CHECK(limits_parse_cgroup_mount(hybrid, NULL, point, sizeof point, root, sizeof root) == 1);
	CHECK_STR(point, "/sys/fs/cgroup/unified");
	CHECK_STR(root, "/");
	CHECK(limits_parse_cgroup_mount(hybrid, "pids", point, sizeof point, root, sizeof root) == 1);
	CHECK_STR(point, "/sys/fs/cgroup/pids");
	CHECK(limits_parse_cgroup_mount(hybrid, "cpu", point, sizeof point, root, sizeof root) == 1);
	CHECK_STR(point, "/sys/fs/cgroup/cpu");
	CHECK(limits_parse_cgroup_mount(hybrid, "hugetlb", point, sizeof point, root, sizeof root) == 0);
	CHECK_STR(point, "");
	CHECK(limits_parse_cgroup_mount(hybrid, "memory", point, 8, root, sizeof root) == -1);

	/* a unified host, a container's view (its root is a sub-tree), escapes */
	static const char unified[] =
		"30 22 0:26 /docker/abc /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
		"31 22 0:27 / /mnt/my\\040cg rw - cgroup cgroup rw,cpu,cpuacct\n";
	CHECK(limits_parse_cgroup_mount(unified, NULL, point, sizeof point, root, sizeof root) == 1);
	CHECK_STR(point, "/sys/fs/cgroup");
	CHECK_STR(root, "/docker/abc");
	CHECK(limits_parse_cgroup_mount(unified, "cpuacct", point, sizeof point, root, sizeof root) == 1);
	CHECK_STR(point, "/mnt/my cg");
	CHECK(limits_parse_cgroup_mount(unified, "memory", point, sizeof point, root, sizeof root) == 0);

	/* a later mount on the same point hides the cgroup */
	static const char hidden[] =
		"40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
		"41 40 0:38 / /sys/fs/cgroup/unified rw - tmpfs tmpfs rw\n";
	CHECK(limits_parse_cgroup_mount(hidden, NULL, point, sizeof point, root, sizeof root) == 0);
	/* lines too short or without a separator are skipped */
	CHECK(limits_parse_cgroup_mount("1 2 3\nx y z - cgroup2\n", NULL, point, sizeof point, root,
					sizeof root) == 0);
}

static void test_counters(void)
{
	unsigned long long v = 7;
	CHECK(limits_parse_counter("max 3\n", "max", &v) && v == 3);
	CHECK(limits_parse_counter("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n",
				   "oom_kill", &v) && v == 1);
	CHECK(limits_parse_counter("oom_kill_disable 0\nunder_oom 0\noom_kill 4\n", "oom_kill", &v) &&
	      v == 4);
	v = 7;
	CHECK(!limits_parse_counter("max\n", "max", &v) && v == 7);
	CHECK(!limits_parse_counter("max x\n", "max", &v));
	CHECK(!limits_parse_counter("max 3 4\n", "max", &v));
	CHECK(!limits_parse_counter("maximum 3\n", "max", &v));
	CHECK(!limits_parse_counter("", "max", &v) && v == 7);
}

static void test_plan(void)
{
	struct policy p;
	load_profile(&p, "limit memory 1G\nlimit cpu 2\n");
	struct limits_probe none = { .root = false };
	for (int i = 0; i < CTL_COUNT; i++)
		snprintf(none.ctl[i].why, sizeof none.ctl[i].why, "nothing here");
	struct limits l;

	/* no cgroup: pids by RLIMIT_NPROC, memory and cpu not at all */
	limits_plan(&l, &p, &none);
	CHECK(l.how[LIMIT_PIDS] == HOW_RLIMIT);
	CHECK(l.how[LIMIT_MEMORY] == HOW_NONE && strstr(limits_how_text(&l, LIMIT_MEMORY), "nothing here"));
	CHECK(l.how[LIMIT_CPU] == HOW_NONE);
	CHECK(l.how[LIMIT_TMP] == HOW_TMPFS && l.how[LIMIT_HOME] == HOW_TMPFS);

	/* as root RLIMIT_NPROC does not apply */
	none.root = true;
	limits_plan(&l, &p, &none);
	CHECK(l.how[LIMIT_PIDS] == HOW_NONE);
	CHECK(strstr(limits_how_text(&l, LIMIT_PIDS), "uid 0") != NULL);

	/* a cgroup for each */
	struct limits_probe cg = { .root = false };
	for (int i = 0; i < CTL_COUNT; i++) {
		cg.ctl[i].version = i == CTL_CPU ? 1 : 2;
		snprintf(cg.ctl[i].parent, sizeof cg.ctl[i].parent, "/cg/%d", i);
	}
	limits_plan(&l, &p, &cg);
	CHECK(l.how[LIMIT_PIDS] == HOW_CGROUP && l.how[LIMIT_MEMORY] == HOW_CGROUP);
	CHECK(l.how[LIMIT_CPU] == HOW_CGROUP);
	CHECK(strstr(limits_how_text(&l, LIMIT_MEMORY), "memory.max") != NULL);
	CHECK(strstr(limits_how_text(&l, LIMIT_CPU), "cpu.cfs_quota_us") != NULL);
	policy_free(&p);

	/* unlimited is never enforced, whatever is there; the probe may be the
	 * plan's own */
	load_profile(&p, "limit pids unlimited\nlimit tmp unlimited\nlimit memory unlimited\n");
	limits_plan(&l, &p, &cg);
	limits_plan(&l, &p, &l.probe);
	CHECK(l.how[LIMIT_PIDS] == HOW_UNLIMITED && l.how[LIMIT_TMP] == HOW_UNLIMITED);
	CHECK(l.how[LIMIT_MEMORY] == HOW_UNLIMITED && l.how[LIMIT_CPU] == HOW_UNLIMITED);
	CHECK(l.how[LIMIT_HOME] == HOW_TMPFS);
	CHECK(l.probe.ctl[CTL_PIDS].version == 2);
	json_t *j = limits_to_json(&l);
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "home"), "by")), "tmpfs");
	CHECK_STR(json_string_value(json_object_get(json_object_get(j, "pids"), "value")), "unlimited");
	CHECK(json_object_get(json_object_get(j, "pids"), "by") == NULL);
	json_decref(j);
	limits_end(&l, NULL); /* nothing made: nothing to undo */
	policy_free(&p);
}

/* A share of the memory (`limit memory 50%`, the default): MemTotal, or a
 * lower limit of the cgroups from the parent up; whole MiB, at least 16M. */
static void test_share(void)
{
	unsigned long long v = 0;
	CHECK(limits_parse_memtotal("MemTotal:       24683656 kB\nMemFree:  1 kB\n", &v) &&
	      v == 24683656ULL * 1024);
	CHECK(limits_parse_memtotal("MemFree: 1 kB\nMemTotal: 2048 kB\n", &v) && v == 2048 * 1024);
	CHECK(!limits_parse_memtotal("MemFree: 1 kB\n", &v));
	CHECK(!limits_parse_memtotal("MemTotal: kB\n", &v));
	CHECK(!limits_parse_memtotal("MemTotal: 0 kB\n", &v));
	CHECK(limits_parse_memory_max("1073741824\n", &v) && v == 1ULL << 30);
	CHECK(!limits_parse_memory_max("max\n", &v));
	CHECK(!limits_parse_memory_max("9223372036854771712\n", &v)); /* v1: none */
	CHECK(!limits_parse_memory_max("12x\n", &v) && !limits_parse_memory_max("", &v));
	CHECK(limits_share(50, 24683656ULL * 1024) == 12052ULL << 20);
	CHECK(limits_share(50, 8ULL << 30) == 4ULL << 30);
	CHECK(limits_share(100, (1ULL << 30) + 12345) == 1ULL << 30);
	CHECK(limits_share(1, 1ULL << 30) == 16ULL << 20); /* 10M: the minimum */
	CHECK(limits_share(50, 1ULL << 62) == 1ULL << 61);

	/* the plan, with a parent whose own parent has memory.max 1G */
	tmpdir_make("warden-limits-share");
	char *a = xasprintf("%s/a", tmpdir), *b = xasprintf("%s/a/b", tmpdir);
	CHECK(mkdir(a, 0755) == 0 && mkdir(b, 0755) == 0);
	char *fa = xasprintf("%s/memory.max", a), *fb = xasprintf("%s/memory.max", b);
	spit(fa, "1073741824\n", 11);
	spit(fb, "max\n", 4);
	char *mi = read_text_file("/proc/meminfo");
	unsigned long long total = 0;
	CHECK(mi && limits_parse_memtotal(mi, &total));
	free(mi);
	struct policy p;
	load_profile(&p, "");
	CHECK(p.limits[LIMIT_MEMORY].percent == 50);
	struct limits_probe cg = { .root = false };
	cg.ctl[CTL_MEMORY].version = 2;
	snprintf(cg.ctl[CTL_MEMORY].parent, sizeof cg.ctl[CTL_MEMORY].parent, "%s", b);
	struct limits l;
	limits_plan(&l, &p, &cg);
	CHECK(l.how[LIMIT_MEMORY] == HOW_CGROUP);
	bool lower = total > 1ULL << 30;
	CHECK(l.value[LIMIT_MEMORY] == limits_share(50, lower ? 1ULL << 30 : total));
	char *want = xasprintf("memory.max of %s", a);
	CHECK(!lower || strstr(limits_how_text(&l, LIMIT_MEMORY), want) != NULL);
	CHECK(strstr(limits_how_text(&l, LIMIT_MEMORY), "50% of ") != NULL);
	json_t *j = limits_to_json(&l);
	json_t *m = json_object_get(j, "memory");
	CHECK_STR(json_string_value(json_object_get(m, "share")), "50%");
	CHECK_STR(json_string_value(json_object_get(m, "by")), "cgroup");
	CHECK_STR(json_string_value(json_object_get(m, "value")), lower ? "512M" :
		  json_string_value(json_object_get(m, "value")));
	json_decref(j);
	free(want);
	/* no cgroup: not in force, and the share is what is said */
	struct limits_probe none = { .root = false };
	snprintf(none.ctl[CTL_MEMORY].why, sizeof none.ctl[CTL_MEMORY].why, "nothing here");
	limits_plan(&l, &p, &none);
	CHECK(l.how[LIMIT_MEMORY] == HOW_NONE && l.value[LIMIT_MEMORY] == 0);
	j = limits_to_json(&l);
	m = json_object_get(j, "memory");
	CHECK_STR(json_string_value(json_object_get(m, "value")), "50%");
	CHECK_STR(json_string_value(json_object_get(m, "why")), "nothing here");
	json_decref(j);
	policy_free(&p);
	CHECK(unlink(fb) == 0 && unlink(fa) == 0 && rmdir(b) == 0 && rmdir(a) == 0);
	free(a), free(b), free(fa), free(fb);
	tmpdir_remove();
}

/* memory.events with TEXT, then the watch's check: the number of `limit`
 * events logged so far. */
static unsigned long oom_check(struct limits *l, struct audit *a, const char *text)
{
	char *path = xasprintf("%s/memory.events", l->dir[CTL_MEMORY]);
	spit(path, text, strlen(text));
	free(path);
	limits_check(l, a);
	return audit_count(a, "limit");
}

/* The memory limit reached on cgroup v2: one event for each kill of the
 * whole sandbox (oom_group_kill), however many processes it killed one by
 * one (oom_kill counts each); oom_kill where the kernel has no
 * oom_group_kill (before 5.17). */
static void test_oom_events(void)
{
	tmpdir_make("warden-limits");
	struct policy p;
	load_profile(&p, "limit memory 64M\n");
	struct limits_probe cg = { .root = false };
	cg.ctl[CTL_MEMORY].version = 2;
	snprintf(cg.ctl[CTL_MEMORY].parent, sizeof cg.ctl[CTL_MEMORY].parent, "%.200s", tmpdir);
	struct limits l;
	limits_plan(&l, &p, &cg);
	CHECK(l.how[LIMIT_MEMORY] == HOW_CGROUP);
	snprintf(l.dir[CTL_MEMORY], sizeof l.dir[CTL_MEMORY], "%.200s", tmpdir);
	struct audit *a = NULL;
	struct werr e;
	char *logdir = xasprintf("%s/log", tmpdir);
	CHECK(audit_open(&a, logdir, "s", &e) == 0);
	if (a) {
		/* dd killed, the group kill under way */
		CHECK(oom_check(&l, a, "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\noom_group_kill 0\n") == 0);
		CHECK(oom_check(&l, a, "low 0\nhigh 0\nmax 9\noom 1\noom_kill 3\noom_group_kill 1\n") == 1);
		CHECK(oom_check(&l, a, "low 0\nhigh 0\nmax 9\noom 1\noom_kill 4\noom_group_kill 1\n") == 1);
		CHECK(oom_check(&l, a, "low 0\nhigh 0\nmax 9\noom 2\noom_kill 6\noom_group_kill 2\n") == 2);
		/* an older kernel: each process killed */
		l.seen[CTL_MEMORY] = 0;
		CHECK(oom_check(&l, a, "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n") == 3);
		CHECK(oom_check(&l, a, "low 0\nhigh 0\nmax 9\noom 1\noom_kill 2\n") == 4);
		audit_close(a);
	}
	free(logdir);
	policy_free(&p);
	tmpdir_remove();
}

/* the text of path ("" when it cannot be read) */
static char *text_of(const char *path)
{
	char *t = read_text_file(path);
	return t ? t : xstrdup("");
}

/* limits_self_open for p planned with pr, the pids cgroup at dir */
static void self_open(const struct limits_probe *pr, const struct policy *p, const char *dir,
		      struct limits *l, int fds[CTL_COUNT])
{
	limits_plan(l, p, pr);
	snprintf(l->dir[CTL_PIDS], sizeof l->dir[CTL_PIDS], "%s", dir);
	limits_self_open(l, fds);
}

static void test_self_move(void)
{
	struct policy p;
	load_profile(&p, "limit pids 100\nlimit memory unlimited\n");
	char dir[] = "/tmp/test-limits-self-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *tasks = xasprintf("%s/tasks", dir), *procs = xasprintf("%s/cgroup.procs", dir);
	spit(tasks, "", 0);
	spit(procs, "", 0);
	struct limits_probe pr = { .root = true };
	for (int i = 0; i < CTL_COUNT; i++) {
		pr.ctl[i].version = 1;
		snprintf(pr.ctl[i].parent, sizeof pr.ctl[i].parent, "%s", dir);
	}
	struct limits l;
	int fds[CTL_COUNT];
	/* not root (RLIMIT_NPROC then, no cgroup), or the pids limit's
	 * controller in v2 (init is cloned into it): nothing to open */
	pr.root = false;
	self_open(&pr, &p, dir, &l, fds);
	CHECK(fds[CTL_PIDS] < 0 && fds[CTL_MEMORY] < 0 && fds[CTL_CPU] < 0);
	pr.root = true;
	pr.ctl[CTL_PIDS].version = 2;
	self_open(&pr, &p, dir, &l, fds);
	CHECK(fds[CTL_PIDS] < 0);
	/* no limit on a cgroup at all */
	struct policy none;
	load_profile(&none, "limit pids unlimited\nlimit memory unlimited\n");
	pr.ctl[CTL_PIDS].version = 1;
	self_open(&pr, &none, dir, &l, fds);
	CHECK(fds[CTL_PIDS] < 0 && fds[CTL_MEMORY] < 0 && fds[CTL_CPU] < 0);
	/* a cgroup given up (no directory): nothing */
	limits_plan(&l, &p, &pr);
	l.dir[CTL_PIDS][0] = '\0';
	limits_self_open(&l, fds);
	CHECK(fds[CTL_PIDS] < 0);
	/* as root, pids in v1: its tasks file, and only that one */
	self_open(&pr, &p, dir, &l, fds);
	CHECK(fds[CTL_PIDS] >= 0 && fds[CTL_MEMORY] < 0 && fds[CTL_CPU] < 0);
	/* the move: "0" (the calling thread) written, the fd closed, its bit set */
	CHECK(limits_self_move(fds) == 1U << CTL_PIDS);
	CHECK(fds[CTL_PIDS] < 0);
	char *t = text_of(tasks);
	CHECK_STR(t, "0");
	free(t);
	/* moved: the supervisor writes nothing */
	limits_attach(&l, 4242, 1U << CTL_PIDS);
	t = text_of(procs);
	CHECK_STR(t, "");
	free(t);
	CHECK(l.how[LIMIT_PIDS] == HOW_CGROUP);
	/* not moved (the write refused, or no fd): the supervisor moves init */
	limits_attach(&l, 4242, 0);
	t = text_of(procs);
	CHECK_STR(t, "4242");
	free(t);
	CHECK(l.how[LIMIT_PIDS] == HOW_CGROUP);
	/* a write that fails: no bit, the fd closed all the same */
	fds[CTL_PIDS] = open(tasks, O_RDONLY | O_CLOEXEC);
	CHECK(fds[CTL_PIDS] >= 0);
	CHECK(limits_self_move(fds) == 0);
	CHECK(fds[CTL_PIDS] < 0);
	/* a cgroup without a tasks file (a symlink is not followed): nothing
	 * opened, and the supervisor's move of init is the way */
	CHECK(unlink(tasks) == 0);
	CHECK(symlink(procs, tasks) == 0);
	self_open(&pr, &p, dir, &l, fds);
	CHECK(fds[CTL_PIDS] < 0);
	CHECK(unlink(tasks) == 0 && unlink(procs) == 0);
	CHECK(rmdir(dir) == 0);
	free(tasks);
	free(procs);
	policy_free(&p);
	policy_free(&none);
}

int main(void)
{
	test_own_cgroup();
	test_mounts();
	test_counters();
	test_plan();
	test_share();
	test_oom_events();
	test_self_move();
	return check_status_counted("sandbox_limits");
}
