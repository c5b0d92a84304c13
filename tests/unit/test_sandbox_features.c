/* test_sandbox_features.c - unit tests of the pure parts of the kernel
 * feature probe: where cgroup v2 is mounted, from mountinfo text (unified,
 * hybrid, v1 only, hidden by a later mount, escaped mount points), the LSM
 * lists of securityfs and of the lsm= boot parameter, the names of
 * lsm_list_modules' ids, and the JSON session.start records; the probe of
 * Landlock's denials on the record where it says no before trying. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/sandbox/features.h"
#include "check.h"

static const char unified[] =
	"22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
	"rw,nsdelegate,memory_recursiveprot\n";

/* This machine's shape: tmpfs at /sys/fs/cgroup, v1 controllers below it,
 * cgroup2 at /sys/fs/cgroup/unified. */
static const char hybrid[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static const char v1_only[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";

/* cgroup2 mounted on /sys/fs/cgroup, then a tmpfs over it (hidden), and one
 * more cgroup2 elsewhere: with optional fields (shared:, master:). */
static const char hidden[] =
	"30 22 0:26 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw\n"
	"31 22 0:40 / /sys/fs/cgroup rw shared:10 master:3 - tmpfs tmpfs rw\n"
	"32 22 0:41 / /mnt/cg rw - cgroup2 none rw\n";

static const char first_hidden[] =
	"32 22 0:41 / /mnt/cg rw - cgroup2 none rw\n"
	"33 22 0:42 / /mnt/cg rw - tmpfs none rw\n"
	"34 22 0:43 / /run/cg2 rw - cgroup2 none rw\n";

static const char escaped[] =
	"40 30 0:37 / /mnt/my\\040cgroups rw,relatime - cgroup2 cgroup2 rw\n";

/* a mount point named like a file system type, and a malformed line */
static const char tricky[] =
	"garbage\n"
	"41 30 0:38 / /cgroup2 rw - ext4 /dev/sda1 rw\n"
	"42 30 0:39 / /srv/x rw - cgroup2 cgroup2 rw";

static void cgroup(int line, const char *text, int want_rc, const char *want)
{
	char out[128] = "unchanged";
	int rc = features_parse_mountinfo_cgroup2(text, out, sizeof out);
	checks++;
	if (rc != want_rc || strcmp(out, want) != 0) {
		fprintf(stderr, "%s:%d: cgroup2 mount: got %d '%s', expected %d '%s'\n", __FILE__,
			line, rc, out, want_rc, want);
		failures++;
	}
}

static void lsm_list(int line, const char *text, int want_n, const char *want)
{
	char out[64];
	int n = features_parse_lsm_list(text, out, sizeof out);
	checks++;
	if (n != want_n || (n >= 0 && strcmp(out, want) != 0)) {
		fprintf(stderr, "%s:%d: LSM list of '%s': got %d '%s', expected %d '%s'\n", __FILE__,
			line, text, n, n >= 0 ? out : "", want_n, want);
		failures++;
	}
}

static void cmdline(int line, const char *text, int want_n, const char *want)
{
	char out[64];
	int n = features_parse_cmdline_lsm(text, out, sizeof out);
	checks++;
	if (n != want_n || (n >= 0 && strcmp(out, want) != 0)) {
		fprintf(stderr, "%s:%d: lsm= of '%s': got %d '%s', expected %d '%s'\n", __FILE__, line,
			text, n, n >= 0 ? out : "", want_n, want);
		failures++;
	}
}

static void test_cgroup2(void)
{
	cgroup(__LINE__, unified, 1, "/sys/fs/cgroup");
	cgroup(__LINE__, hybrid, 1, "/sys/fs/cgroup/unified");
	cgroup(__LINE__, v1_only, 0, "");
	cgroup(__LINE__, "", 0, "");
	cgroup(__LINE__, hidden, 1, "/mnt/cg");
	cgroup(__LINE__, first_hidden, 1, "/run/cg2");
	cgroup(__LINE__, escaped, 1, "/mnt/my cgroups");
	cgroup(__LINE__, tricky, 1, "/srv/x");
	char small[8];
	CHECK(features_parse_mountinfo_cgroup2(hybrid, small, sizeof small) == -1);
}

static void test_lsm_lists(void)
{
	lsm_list(__LINE__, "lockdown,capability,landlock,bpf\n", 4, "lockdown,capability,landlock,bpf");
	lsm_list(__LINE__, "capability,yama,apparmor", 3, "capability,yama,apparmor");
	lsm_list(__LINE__, ",landlock,,bpf,\n", 2, "landlock,bpf");
	lsm_list(__LINE__, "\n", 0, "");
	lsm_list(__LINE__, "", 0, "");
	lsm_list(__LINE__, "a-very-long-lsm-name,another-very-long-lsm-name,and-a-third-long-one", -1, "");

	cmdline(__LINE__, "quiet lsm=landlock,lockdown,yama,bpf root=/dev/vda\n", 4,
		"landlock,lockdown,yama,bpf");
	cmdline(__LINE__, "lsm=selinux lsm=landlock,bpf", 2, "landlock,bpf"); /* the last wins */
	cmdline(__LINE__, "quiet -- lsm=bpf", 0, "");                          /* init's, not the kernel's */
	cmdline(__LINE__, "console=ttyS0 quiet", 0, "");
	cmdline(__LINE__, "security=apparmor nolsm=bpf", 0, "");
	cmdline(__LINE__, "", 0, "");

	CHECK_STR(features_lsm_name(100), "capability");
	CHECK_STR(features_lsm_name(108), "lockdown");
	CHECK_STR(features_lsm_name(109), "bpf");
	CHECK_STR(features_lsm_name(110), "landlock");
	CHECK_STR(features_lsm_name(113), "ipe");
	CHECK(features_lsm_name(0) == NULL);
	CHECK(features_lsm_name(99) == NULL);
	CHECK(features_lsm_name(114) == NULL);

	struct kernel_features f = { .lsms = "lockdown,capability,landlock,bpf" };
	CHECK(features_lsm_active(&f, "bpf"));
	CHECK(features_lsm_active(&f, "lockdown"));
	CHECK(features_lsm_active(&f, "landlock"));
	CHECK(!features_lsm_active(&f, "land"));
	CHECK(!features_lsm_active(&f, "selinux"));
}

/* session.start keeps release, landlock_abi and seccomp under their names. */
static void test_json(void)
{
	struct kernel_features f = {
		.release = "6.18.0", .sysname = "Linux", .machine = "x86_64", .landlock_abi = 7,
		.seccomp = true, .seccomp_notify = true, .lsms = "capability,landlock,bpf",
		.lsm_source = LSM_FROM_SYSCALL, .cgroup2 = "/sys/fs/cgroup/unified",
	};
	f.sysctl[SYSCTL_MAX_USER_NAMESPACES] = (struct feature_sysctl_value){ .state = 1, .value = "15000" };
	f.sysctl[SYSCTL_LEGACY_TIOCSTI] = (struct feature_sysctl_value){ .state = -1, .err = 13 };
	json_t *o = features_to_json(&f);
	CHECK(o != NULL);
	CHECK_STR(json_string_value(json_object_get(o, "release")), "6.18.0");
	CHECK(json_integer_value(json_object_get(o, "landlock_abi")) == 7);
	CHECK(json_is_true(json_object_get(o, "seccomp")));
	CHECK(json_is_true(json_object_get(o, "seccomp_notify")));
	CHECK_STR(json_string_value(json_object_get(o, "cgroup2")), "/sys/fs/cgroup/unified");
	json_t *lsms = json_object_get(o, "lsms");
	CHECK(json_array_size(lsms) == 3);
	CHECK_STR(json_string_value(json_array_get(lsms, 2)), "bpf");
	json_t *sys = json_object_get(o, "sysctls");
	CHECK_STR(json_string_value(json_object_get(sys, "user.max_user_namespaces")), "15000");
	CHECK(json_is_null(json_object_get(sys, "kernel.yama.ptrace_scope")));
	CHECK(json_is_object(json_object_get(sys, "dev.tty.legacy_tiocsti")));
	CHECK(json_object_get(o, "userns") == NULL); /* not probed: not claimed */
	json_decref(o);

	f.landlock_abi = -95; /* EOPNOTSUPP */
	f.lsm_source = LSM_UNKNOWN;
	f.cgroup2[0] = '\0';
	o = features_to_json(&f);
	CHECK(json_integer_value(json_object_get(o, "landlock_abi")) == 0);
	CHECK(json_is_string(json_object_get(o, "landlock_error")));
	CHECK(json_is_null(json_object_get(o, "lsms")));
	CHECK(json_is_null(json_object_get(o, "cgroup2")));
	json_decref(o);
}

/* The messages a session stops with (tests and users match on them). */
static void test_require(void)
{
	struct kernel_features f = { .landlock_abi = 3, .seccomp = true };
	struct werr e = { 0 };
	CHECK(features_require(&f, &e) == 0);
	f.landlock_abi = -38; /* ENOSYS */
	CHECK(features_require(&f, &e) == -1);
	CHECK(e.errnum == 38);
	CHECK_STR(e.msg, "Landlock is not available (ABI 0; warden needs 2 or later): the kernel "
			 "must be 5.19+ with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= "
			 "boot parameter");
	f.landlock_abi = 1;
	CHECK(features_require(&f, &e) == -1);
	CHECK(strstr(e.msg, "(ABI 1;") != NULL);
	f.landlock_abi = 2;
	f.seccomp = false;
	CHECK(features_require(&f, &e) == -1);
	CHECK_STR(e.msg, "seccomp is not available: the kernel needs CONFIG_SECCOMP_FILTER");
}

/* Landlock's denials on the record: off, and why, before any socket is
 * opened (not root; as root, an ABI without audit records); the host's pid
 * namespace is one deep here or more. */
static void test_llaudit_probe(void)
{
	char why[256];
	if (geteuid() != 0) {
		CHECK(llaudit_probe(7, why, sizeof why, NULL) == 0);
		CHECK(strstr(why, "off: warden is not running as root") == why);
	} else {
		CHECK(llaudit_probe(6, why, sizeof why, NULL) == 0);
		CHECK(strstr(why, "off: Landlock ABI 6;") == why);
		CHECK(llaudit_probe(-95, why, sizeof why, NULL) == 0);
		CHECK(strstr(why, "off: Landlock ABI 0;") == why);
	}
	/* in two steps: a no decided by the asking (nothing asked of the
	 * kernel, -1) is kept by the answer; with ABI 7 as root in the host's
	 * pid namespace (this project's CI) the question is a socket, and its
	 * answer says on or off and why; elsewhere the asking says off */
	CHECK(llaudit_probe_ask(6, why, sizeof why) == -1);
	CHECK(llaudit_probe_answer(-1, why, sizeof why, NULL) == 0);
	CHECK(strncmp(why, "off: ", 5) == 0);
	int q = llaudit_probe_ask(7, why, sizeof why);
	if (q < 0) {
		CHECK(strncmp(why, "off: ", 5) == 0);
	} else {
		int on = llaudit_probe_answer(q, why, sizeof why, NULL);
		CHECK(strncmp(why, on ? "on: " : "off: ", on ? 4 : 5) == 0);
		CHECK(fcntl(q, F_GETFD) < 0 && errno == EBADF); /* taken and closed */
	}
	if (caps_admin() && features_nspid_count(getpid()) == 1)
		CHECK(q >= 0 || strstr(why, "audit netlink socket")); /* asked, unless refused */
	CHECK(features_nspid_count(getpid()) >= 1);
	CHECK(features_nspid_count(-1) == -1);
}

int main(void)
{
	test_cgroup2();
	test_lsm_lists();
	test_json();
	test_require();
	test_llaudit_probe();
	return check_status_counted("sandbox_features");
}
