/* doctor_cmd.c - `warden doctor`: what this machine offers the sandbox, as the
 * probe of features.h sees it (kernel, Landlock ABI, seccomp and its user
 * notification, user namespaces and the sysctls that restrict them, TIOCSTI,
 * Yama, cgroup v2, the active LSMs), whether the systemd journal listens
 * (`warden run --log journald`), whether warden's TLS module loads (the
 * sessions that use TLS: src/net/tlsmod.h) and whether Landlock's denials are on the
 * record (src/supervisor/llaudit.h), one line per row of a table with
 * OK/WARN/FAIL and the fix to apply, then the layers warden will put in
 * force, and each limit of the profile (--profile FILE on the built-in
 * default) with what enforces it here or why nothing does (limits.h). Exit
 * 0 when the default profile can run here (no FAIL row: user namespaces,
 * Landlock ABI 2+, seccomp with user notification). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../export/journald.h"
#include "../export/syslogsend.h"
#include "../net/tlsmod.h"
#include "../common/util.h"
#include "../policy/policy.h"
#include "../sandbox/apparmor.h"
#include "../sandbox/features.h"
#include "../sandbox/hostid.h"
#include "../sandbox/limits.h"
#include "../supervisor/exec/bpfexec.h"
#include "cli.h"
#include "cmdtab.h"

enum status { ST_SKIP, ST_OK, ST_WARN, ST_FAIL };

/* What one row says: a status line (unless ST_SKIP) and a fix (if any). */
struct verdict {
	enum status status;
	const char *item;  /* the row's name unless the check changes it */
	char note[512];
	const char *fix;
	char fixbuf[640];  /* a fix written for this machine (fix points here) */
};

struct row;
typedef void check_fn(const struct kernel_features *f, const struct row *r, struct verdict *v);

/* A row: what is checked and how. The sysctl rows share check_sysctl and
 * say in data what a bad value is, how bad it is and how to fix it. */
struct row {
	const char *what;
	check_fn *check;
	enum feature_sysctl sysctl;
	const char *bad;      /* this value weakens the sandbox... */
	const char *good;     /* ...or every value but this one does */
	bool userns;          /* the value can forbid user namespaces: FAIL when they failed */
	bool absent_warn;     /* the sysctl's absence is itself a warning */
	const char *absent;   /* the note when it is absent */
	const char *bad_note; /* said after a bad value */
	const char *fix;
};

static check_fn check_release, check_landlock, check_seccomp, check_notify, check_userns,
	check_userns_nobody, check_sysctl, check_userns_unexplained, check_cgroup, check_lsms,
	check_bpf_lsm, check_hostid, check_session_cgroup, check_journal, check_syslog,
	check_exec_kernel,
	check_llaudit, check_apparmor, check_tls, check_outer_filter;

static const struct row rows[] = {
	{ .what = "kernel", .check = check_release },
	{ .what = "Landlock", .check = check_landlock },
	{ .what = "Landlock denials on the record", .check = check_llaudit },
	{ .what = "seccomp filter", .check = check_seccomp,
	  .fix = "a kernel with CONFIG_SECCOMP_FILTER=y" },
	{ .what = "seccomp user notification", .check = check_notify,
	  .fix = "a kernel 5.0 or later with CONFIG_SECCOMP_FILTER=y" },
	{ .what = "seccomp filter around warden", .check = check_outer_filter },
	{ .what = "user namespaces", .check = check_userns },
	{ .what = "unprivileged user namespaces", .check = check_userns_nobody },
	{ .what = "kernel.unprivileged_userns_clone", .check = check_sysctl,
	  .sysctl = SYSCTL_UNPRIV_USERNS_CLONE, .bad = "0", .userns = true,
	  .absent = "absent (no such switch on this kernel)",
	  .fix = "sysctl -w kernel.unprivileged_userns_clone=1" },
	{ .what = "kernel.apparmor_restrict_unprivileged_userns", .check = check_apparmor,
	  .sysctl = SYSCTL_APPARMOR_RESTRICT_USERNS, .good = "0", .userns = true, .absent = "absent" },
	{ .what = "user.max_user_namespaces", .check = check_sysctl,
	  .sysctl = SYSCTL_MAX_USER_NAMESPACES, .bad = "0", .userns = true, .absent = "absent",
	  .fix = "sysctl -w user.max_user_namespaces=15000" },
	{ .what = NULL, .check = check_userns_unexplained,
	  .fix = "no sysctl explains it: a container runtime or seccomp profile may forbid "
		 "unshare (run warden on the host, or allow unshare/clone with namespace flags)" },
	{ .what = "dev.tty.legacy_tiocsti", .check = check_sysctl,
	  .sysctl = SYSCTL_LEGACY_TIOCSTI, .good = "0", .absent_warn = true,
	  .absent = "absent: TIOCSTI is always enabled on this kernel (warden refuses it by "
		    "seccomp and gives the agent its own pty)",
	  .bad_note = ": terminal input injection is enabled (warden refuses it by seccomp)",
	  .fix = "sysctl -w dev.tty.legacy_tiocsti=0" },
	{ .what = "kernel.yama.ptrace_scope", .check = check_sysctl,
	  .sysctl = SYSCTL_YAMA_PTRACE_SCOPE, .bad = "0", .absent_warn = true,
	  .absent = "absent: Yama is not enabled (warden refuses ptrace by seccomp)",
	  .bad_note = ": any process may trace its user's others",
	  .fix = "sysctl -w kernel.yama.ptrace_scope=1" },
	{ .what = "cgroup v2", .check = check_cgroup },
	{ .what = "session cgroup", .check = check_session_cgroup },
	{ .what = "host identity", .check = check_hostid },
	{ .what = "active LSMs", .check = check_lsms },
	{ .what = "BPF LSM", .check = check_bpf_lsm },
	{ .what = "journal socket", .check = check_journal },
	{ .what = "syslog socket", .check = check_syslog },
	{ .what = "TLS module", .check = check_tls },
	{ .what = "in-kernel exec enforcement", .check = check_exec_kernel },
};

__attribute__((format(printf, 2, 3)))
static void say(struct verdict *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->note, sizeof v->note, fmt, ap);
	va_end(ap);
}

static void check_release(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	v->status = f->release[0] ? ST_OK : ST_SKIP;
	say(v, "%s %s (%s)", f->sysname, f->release, f->machine);
}

static void check_landlock(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	int abi = f->landlock_abi, err = -abi;
	v->status = abi >= 2 ? ST_OK : ST_FAIL;
	if (abi >= 6)
		say(v, "ABI %d (file system rules; signal and abstract socket scopes)", abi);
	else if (abi >= 2)
		say(v, "ABI %d (file system rules; no scopes before ABI 6)", abi);
	else if (abi == 1) {
		say(v, "ABI 1: warden needs ABI 2 or later");
		v->fix = "a kernel 5.19 or later";
	} else {
		say(v, "not available (%s)",
		    err == EOPNOTSUPP ? "built in but disabled at boot" : strerror(err));
		v->fix = err == EOPNOTSUPP ? "add landlock to the lsm= kernel boot parameter"
					   : "a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm=";
	}
}

/* Read from the kernel's audit records, as root, when the host has audit
 * on; warden never turns it on (host state). */
static void check_llaudit(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	char why[256];
	int on = llaudit_probe(f->landlock_abi, why, sizeof why, NULL);
	v->status = on ? ST_OK : ST_WARN;
	say(v, "%s", why);
}

static void check_seccomp(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	v->status = f->seccomp ? ST_OK : ST_FAIL;
	say(v, f->seccomp ? "available" : "not available");
	v->fix = f->seccomp ? NULL : r->fix;
}

/* The filter hands refusals and execs to the supervisor through it. */
static void check_notify(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	v->status = f->seccomp_notify ? ST_OK : ST_FAIL;
	v->fix = f->seccomp_notify ? NULL : r->fix;
	if (f->seccomp_notify)
		say(v, "available (notification %u bytes)", f->seccomp_notif_size);
	else
		say(v, "not available (%s): warden reports execs and refused syscalls through it",
		    strerror(f->seccomp_notify_err));
}

/* A filter warden runs under (a container's profile, a sandbox it was
 * started in): not a fault by itself, but what the rows below were tried
 * under, and what refuses a session when they fail. */
static void check_outer_filter(const struct kernel_features *f, const struct row *r,
			       struct verdict *v)
{
	v->status = ST_OK;
	if (features_self_filtered())
		say(v, "present: warden runs under a seccomp filter set outside it (a container's "
		    "profile, or a sandbox warden was started in); the rows below were tried under it");
	else
		say(v, "none");
}

/* What the probe's ENOSYS means (features_probe_userns). */
#define CLONE3_FILTERED "clone3 refused (ENOSYS) by a seccomp filter outside warden: in a " \
	"container, " FEATURES_CONTAINER_PROFILE_HINT "; inside a warden session, sandboxes do not nest"

/* User namespaces, tried for real. */
static void check_userns(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	v->item = f->root ? "user namespaces (as root)" : "unprivileged user namespaces";
	v->status = f->userns_err == 0 ? ST_OK : ST_FAIL;
	if (f->userns_err == 0)
		say(v, "created user, mount, pid, net, ipc, uts and cgroup namespaces");
	else if (f->userns_err == ENOSYS)
		say(v, CLONE3_FILTERED);
	else
		say(v, "unshare failed: %s", strerror(f->userns_err));
}

static void check_userns_nobody(const struct kernel_features *f, const struct row *r,
				struct verdict *v)
{
	if (!f->root)
		return; /* the row above was already the unprivileged case */
	v->status = f->userns_nobody_err == 0 ? ST_OK : ST_WARN;
	if (f->userns_nobody_err == 0)
		say(v, "a user without privilege (nobody) can create them");
	else if (f->userns_nobody_err == ENOSYS)
		say(v, "as nobody: " CLONE3_FILTERED);
	else
		say(v, "unshare as nobody failed: %s; only root can run warden here",
		    strerror(f->userns_nobody_err));
}

static bool sysctl_bad(const struct kernel_features *f, const struct row *r)
{
	const struct feature_sysctl_value *s = &f->sysctl[r->sysctl];
	if (s->state <= 0)
		return false;
	return r->bad ? strcmp(s->value, r->bad) == 0 : strcmp(s->value, r->good) != 0;
}

static void check_sysctl(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	const struct feature_sysctl_value *s = &f->sysctl[r->sysctl];
	if (s->state == 0) {
		v->status = r->absent_warn ? ST_WARN : ST_OK;
		say(v, "%s", r->absent);
	} else if (s->state < 0) {
		v->status = ST_WARN;
		say(v, "unreadable: %s", strerror(s->err));
	} else if (sysctl_bad(f, r)) {
		v->status = r->userns && f->userns_err != 0 ? ST_FAIL : ST_WARN;
		say(v, "%s%s", s->value, r->bad_note ? r->bad_note : "");
		v->fix = r->fix;
	} else {
		v->status = ST_OK;
		say(v, "%s", s->value);
	}
}

/* Ubuntu 23.10 and later: AppArmor lets a program create user namespaces
 * only if a profile grants it `userns`. When that is what refused them, the
 * one fix is warden's profile (apparmor.h), not the sysctl switched off for
 * every program. */
static void check_apparmor(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	const struct feature_sysctl_value *s = &f->sysctl[r->sysctl];
	if (s->state != 1 || !sysctl_bad(f, r)) {
		check_sysctl(f, r, v);
		return;
	}
	if (!apparmor_userns_restricted(f)) {
		v->status = ST_OK;
		say(v, "%s (warden may create user namespaces: an AppArmor profile grants it userns)",
		    s->value);
		return;
	}
	char self[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n >= 0)
		self[n] = '\0';
	v->status = f->userns_err != 0 ? ST_FAIL : ST_WARN;
	say(v, "%s: AppArmor refuses user namespaces to %s without a profile granting userns",
	    s->value, f->userns_err != 0 ? "warden" : "users without privilege");
	apparmor_userns_fix(APPARMOR_PROFILE_PATH, n >= 0 ? self : NULL, v->fixbuf,
			    sizeof v->fixbuf);
	v->fix = v->fixbuf;
}

/* User namespaces failed and no sysctl row above says why. */
static void check_userns_unexplained(const struct kernel_features *f, const struct row *r,
				     struct verdict *v)
{
	if (f->userns_err == 0)
		return;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i].userns && sysctl_bad(f, &rows[i]))
			return;
	v->fix = r->fix;
}

static void check_cgroup(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	v->status = f->cgroup2_default ? ST_OK : ST_WARN;
	if (f->cgroup2_default)
		say(v, "mounted at %s", f->cgroup2);
	else if (f->cgroup2[0])
		say(v, "mounted at %s (a hybrid hierarchy: /sys/fs/cgroup is not cgroup2; the "
		    "limits below say what a cgroup enforces)", f->cgroup2);
	else
		say(v, "not mounted (/sys/fs/cgroup is v1 or absent; the limits below say what a "
		    "cgroup enforces)");
}

static void check_session_cgroup(const struct kernel_features *f, const struct row *r,
				 struct verdict *v)
{
	struct limits_probe p;
	limits_probe(&p);
	if (p.v2[0]) {
		v->status = ST_OK;
		say(v, "each session gets a cgroup v2 of its own below %s (warden freeze and kill "
		    "act on it at once)", p.v2);
	} else {
		v->status = ST_WARN;
		say(v, "none usable (%s): warden freeze stops the sandbox's processes by signals, "
		    "warden kill ends its init", f->cgroup2[0] ? geteuid() == 0 ? "the cgroup v2 "
		    "hierarchy is not writable" : "not root, and warden does not run in a cgroup "
		    "systemd delegates to you" : "no cgroup v2 hierarchy");
	}
}

/* How many identities of [first, last] are in use: their lock files held. */
static unsigned hostids_in_use(void)
{
	unsigned n = 0;
	_cleanup_dir_ DIR *d = opendir(HOSTID_LOCK_DIR);
	for (struct dirent *de; d && (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		char path[300];
		snprintf(path, sizeof path, "%s/%s", HOSTID_LOCK_DIR, de->d_name);
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
			n++;
	}
	return n;
}

static void check_hostid(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	if (!hostid_wanted()) {
		v->status = ST_OK;
		say(v, "the agent is you (uid %u) on the host, as without root it must be%s",
		    (unsigned)getuid(), geteuid() == 0 ? " (root of a user namespace, not of the "
		    "host)" : "");
		return;
	}
	uid_t first, last;
	struct werr e = { 0 };
	if (hostid_range(&first, &last, &e) < 0) {
		v->status = ST_FAIL;
		say(v, "%s", e.msg);
		return;
	}
	v->status = ST_OK;
	say(v, "each session's agent runs as a uid/gid of its own from %u-%u (%u in use now), "
	    "never root; the workspace and profile paths idmapped to their owners", (unsigned)first,
	    (unsigned)last, hostids_in_use());
}

static void check_lsms(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	if (f->lsm_source == LSM_UNKNOWN) {
		v->status = ST_WARN;
		say(v, "unknown (lsm_list_modules: %s; /sys/kernel/security/lsm unreadable; no "
		    "lsm= boot parameter)", strerror(f->lsm_err));
		return;
	}
	v->status = ST_OK;
	say(v, "%s (%s%s)", f->lsms, f->lsm_source == LSM_FROM_CMDLINE ? "asked for by the " : "from ",
	    features_lsm_source_name(f->lsm_source));
}

static void check_bpf_lsm(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	if (f->lsm_source == LSM_UNKNOWN) {
		v->status = ST_WARN;
		say(v, "unknown (the active LSMs are unknown)");
	} else if (features_lsm_active(f, "bpf")) {
		v->status = ST_OK;
		say(v, "enabled");
	} else {
		v->status = ST_WARN;
		say(v, "not enabled (the exec rules are enforced without it)");
	}
}

/* Not walls of the sandbox: whether `--log target` can be used here, its
 * socket at path probed (rc, e). */
static void say_log_socket(struct verdict *v, const char *target, const char *path, int rc,
			   const struct werr *e)
{
	if (rc == 0) {
		v->status = ST_OK;
		say(v, "%s (`warden run --log %s` can use it)", path, target);
		return;
	}
	v->status = ST_WARN;
	char buf[1200];
	say(v, "%s; `warden run --log %s` is refused here", werr_str(e, buf, sizeof buf), target);
}

static void check_journal(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	struct werr e = { 0 };
	int rc = journald_probe(JOURNALD_SOCKET, &e);
	say_log_socket(v, "journald", JOURNALD_SOCKET, rc, &e);
}

static void check_syslog(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	struct werr e = { 0 };
	int rc = syslogsend_probe(SYSLOG_SOCKET, &e);
	say_log_socket(v, "syslog", SYSLOG_SOCKET, rc, &e);
}

/* Not a wall of the sandbox either: whether warden's TLS module loads here,
 * which the sessions with secrets, inspected hosts or MCP rules and the
 * https exports need (loaded for real: made in the cache when missing). */
static void check_tls(const struct kernel_features *f, const struct row *r, struct verdict *v)
{
	struct werr e = { 0 };
	if (tlsmod_get(&e)) {
		v->status = ST_OK;
		say(v, "loads, from %s (secrets, inspected hosts and https exports can be used)",
		    tlsmod_source());
		return;
	}
	v->status = ST_WARN;
	char buf[1200];
	say(v, "%s; sessions with secrets, inspected hosts or MCP rules are refused here",
	    werr_str(&e, buf, sizeof buf));
}

/* `exec kernel auto|on`: tried for real (loaded, attached, checked on a
 * cgroup of its own). */
static void check_exec_kernel(const struct kernel_features *f, const struct row *r,
			      struct verdict *v)
{
	char why[1100];
	if (bpfexec_probe(why, sizeof why)) {
		v->status = ST_OK;
		say(v, "available: as root, the exec rules are enforced in the kernel too (exec, "
		    "mmap and mprotect of executable code), `exec kernel auto`");
		return;
	}
	v->status = ST_WARN;
	say(v, "not available: %s (the exec rules are enforced by seccomp and ptrace; `exec "
	    "strict` stops hand-written loaders)", why);
}

static void print_verdict(const struct verdict *v)
{
	static const char *const names[] = { [ST_OK] = "OK", [ST_WARN] = "WARN", [ST_FAIL] = "FAIL" };
	if (v->status != ST_SKIP)
		printf("%-4s  %-44s %s\n", names[v->status], v->item, v->note);
	if (v->fix)
		printf("      %-44s fix: %s\n", "", v->fix);
}

static void print_layers(const struct kernel_features *f)
{
	int abi = f->landlock_abi;
	printf("layers warden will put in force:\n");
	if (hostid_wanted())
		printf("  identity     user namespace: uid 1000 agent, a host uid of the session's own "
		       "(never root), no groups, empty home\n");
	else
		printf("  identity     user namespace: uid 1000 agent, no groups, empty home\n");
	printf("  filesystem   mount namespace built from nothing; Landlock ABI %d as a second wall\n", abi);
	printf("  processes    pid namespace, seccomp filter, no_new_privs, no capabilities%s\n",
	       abi >= 6 ? ", Landlock signal and abstract socket scopes" : "");
	printf("  audit        every exec and refused syscall reported by seccomp user notification\n");
	printf("  network      network namespace with lo only\n");
	printf("  environment  allowlist of variables\n");
	printf("  terminal     its own pty when stdin is a terminal\n");
}

/* Each limit of the policy, and how it is enforced here or why not; for an
 * unlimited memory or cpu, whether a `limit` line would be. */
static void print_limits(const struct policy *p, const char *profile)
{
	struct limits_probe probe;
	limits_probe(&probe);
	struct limits l, would;
	limits_plan(&l, p, &probe);
	struct policy asked = *p; /* shallow: only its limits change, never freed */
	for (int k = 0; k < LIMIT_KINDS; k++)
		if (!asked.limits[k].value && !asked.limits[k].percent)
			asked.limits[k].value = 1;
	limits_plan(&would, &asked, &probe);
	printf("\nlimits (%s; `limit KIND VALUE` in a profile changes them):\n",
	       profile ? profile : "the built-in default profile");
	for (int k = 0; k < LIMIT_KINDS; k++) {
		char v[32];
		policy_limit_text(k, &p->limits[k], v, sizeof v);
		const char *name = policy_limit_name(k);
		switch (l.how[k]) {
		case HOW_UNLIMITED:
			if (would.how[k] == HOW_NONE)
				printf("  %-7s %-10s a `limit %s` would not be enforced here: %s\n", name, v,
				       name, limits_how_text(&would, k));
			else
				printf("  %-7s %-10s a `limit %s` would be enforced by %s\n", name, v, name,
				       limits_how_text(&would, k));
			break;
		case HOW_NONE:
			printf("  %-7s %-10s NOT enforced here: %s\n", name, v, limits_how_text(&l, k));
			break;
		default:
			printf("  %-7s %-10s in force: %s\n", name, v, limits_how_text(&l, k));
		}
	}
	printf("  reaching one is a `limit` event in the session's log, except a fork refused by "
	       "RLIMIT_NPROC (only the process that forked sees it); CPU time is throttled, "
	       "an event when it starts and at most one a minute after\n");
}

int cmd_doctor(int argc, char **argv)
{
	static const char usage[] = "usage: warden doctor [--profile FILE]\n";
	const char *profile = NULL;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "doctor")) != -1) {
		if (c == 'h') {
			puts("usage: warden doctor [--profile FILE]\n\nReport what this machine supports "
			     "and which sandbox layers and limits\nwarden will put in force (the limits "
			     "of FILE layered on the built-in default\nprofile). Exit status 0 when warden "
			     "can run with its default profile.");
			return 0;
		}
		if (c == 'p') {
			profile = optarg;
			continue;
		}
		fputs(usage, stderr);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "warden doctor: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	struct werr e = { 0 };
	_cleanup_(policy_free) struct policy p = { 0 };
	if (policy_load(&p, profile, user_home(), &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	struct kernel_features f;
	features_probe(&f);
	features_probe_userns(&f);
	bool can_run = true;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct verdict v = { .status = ST_SKIP, .item = rows[i].what };
		rows[i].check(&f, &rows[i], &v);
		print_verdict(&v);
		can_run = can_run && v.status != ST_FAIL;
	}
	printf("\n");
	if (!can_run) {
		printf("warden cannot run its default profile here: fix the FAIL lines above.\n");
		print_limits(&p, profile);
		return 1;
	}
	print_layers(&f);
	print_limits(&p, profile);
	return 0;
}
