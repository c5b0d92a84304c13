/* doctor.c - `warden doctor`: what this machine offers the sandbox (kernel,
 * Landlock ABI, seccomp and its user notification, user namespaces and the
 * sysctls that restrict them, TIOCSTI, Yama, cgroup v2, BPF LSM), one line
 * per item with OK/WARN/FAIL and the fix to apply, then the layers warden
 * will put in force. Exit 0 when the default profile can run here (user
 * namespaces, Landlock ABI 2+, seccomp with user notification). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "cli.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define W_SECCOMP_GET_NOTIF_SIZES 3

/* The namespaces a sandbox session creates (supervisor.c). */
#define SESSION_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | \
		    CLONE_NEWUTS | CLONE_NEWCGROUP)

struct seccomp_notif_sizes_w {
	unsigned short seccomp_notif, seccomp_notif_resp, seccomp_data;
};

__attribute__((format(printf, 3, 4)))
static void line(const char *status, const char *item, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printf("%-4s  %-44s %s\n", status, item, buf);
}

static void fix(const char *text)
{
	printf("      %-44s fix: %s\n", "", text);
}

/* A sysctl's value: 1 and the text, 0 when the file does not exist, -1 with
 * errno when it cannot be read. */
static int read_sysctl(const char *name, char *buf, size_t len)
{
	char path[256];
	snprintf(path, sizeof path, "/proc/sys/%s", name);
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	ssize_t n = read(fd, buf, len - 1);
	int err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 1;
}

/* Fork a child that creates the namespaces of a session (as nobody when
 * drop is set); 0 or the errno it got. */
static int try_userns(bool drop)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		if (drop && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			     setresuid(65534, 65534, 65534) < 0))
			_exit(255);
		_exit(unshare(SESSION_NS) < 0 ? (errno & 0xff) : 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(st))
		return EIO;
	return WEXITSTATUS(st) == 255 ? EPERM : WEXITSTATUS(st);
}

int cmd_doctor(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
			puts("usage: warden doctor\n\nReport what this machine supports and which "
			     "sandbox layers warden will put\nin force. Exit status 0 when warden can run "
			     "with its default profile.");
			return 0;
		}
		fprintf(stderr, "warden doctor: unexpected argument '%s'\nusage: warden doctor\n", argv[1]);
		return 2;
	}
	bool root = geteuid() == 0;
	char v[128];

	struct utsname un;
	if (uname(&un) == 0)
		line("OK", "kernel", "%s %s (%s)", un.sysname, un.release, un.machine);

	/* Landlock */
	int abi = landlock_abi_version();
	bool landlock_ok = abi >= 2;
	if (abi >= 6)
		line("OK", "Landlock", "ABI %d (file system rules; signal and abstract socket scopes)", abi);
	else if (abi >= 2)
		line("OK", "Landlock", "ABI %d (file system rules; no scopes before ABI 6)", abi);
	else if (abi == 1) {
		line("FAIL", "Landlock", "ABI 1: warden needs ABI 2 or later");
		fix("a kernel 5.19 or later");
	} else {
		int err = -abi;
		line("FAIL", "Landlock", "not available (%s)",
		     err == EOPNOTSUPP ? "built in but disabled at boot" : strerror(err));
		fix(err == EOPNOTSUPP ? "add landlock to the lsm= kernel boot parameter"
				      : "a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm=");
	}

	/* seccomp */
	bool seccomp_ok = !(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL);
	if (seccomp_ok)
		line("OK", "seccomp filter", "available");
	else {
		line("FAIL", "seccomp filter", "not available");
		fix("a kernel with CONFIG_SECCOMP_FILTER=y");
	}
	/* The filter hands refusals and execs to the supervisor through it. */
	struct seccomp_notif_sizes_w sizes;
	bool notify_ok = syscall(SYS_seccomp, W_SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0;
	if (notify_ok) {
		line("OK", "seccomp user notification", "available (notification %u bytes)",
		     sizes.seccomp_notif);
	} else {
		line("FAIL", "seccomp user notification", "not available (%s): warden reports "
		     "execs and refused syscalls through it", strerror(errno));
		fix("a kernel 5.0 or later with CONFIG_SECCOMP_FILTER=y");
	}

	/* user namespaces, tried for real */
	int err = try_userns(false);
	bool userns_ok = err == 0;
	if (userns_ok)
		line("OK", root ? "user namespaces (as root)" : "unprivileged user namespaces",
		     "created user, mount, pid, net, ipc, uts and cgroup namespaces");
	else
		line("FAIL", root ? "user namespaces (as root)" : "unprivileged user namespaces",
		     "unshare failed: %s", strerror(err));
	int err_nobody = root ? try_userns(true) : err;
	if (root && err_nobody == 0)
		line("OK", "unprivileged user namespaces", "a user without privilege (nobody) can create them");
	else if (root)
		line("WARN", "unprivileged user namespaces", "unshare as nobody failed: %s; only root "
		     "can run warden here", strerror(err_nobody));
	bool userns_blocked = err_nobody != 0 || err != 0;
	const char *bad = userns_ok ? "WARN" : "FAIL";

	int r = read_sysctl("kernel.unprivileged_userns_clone", v, sizeof v);
	bool culprit = false;
	if (r == 0)
		line("OK", "kernel.unprivileged_userns_clone", "absent (no such switch on this kernel)");
	else if (r < 0)
		line("WARN", "kernel.unprivileged_userns_clone", "unreadable: %s", strerror(errno));
	else if (strcmp(v, "0") == 0) {
		culprit = true;
		line(userns_blocked ? bad : "WARN", "kernel.unprivileged_userns_clone", "%s", v);
		fix("sysctl -w kernel.unprivileged_userns_clone=1");
	} else
		line("OK", "kernel.unprivileged_userns_clone", "%s", v);

	r = read_sysctl("kernel.apparmor_restrict_unprivileged_userns", v, sizeof v);
	if (r == 0)
		line("OK", "kernel.apparmor_restrict_unprivileged_userns", "absent");
	else if (r < 0)
		line("WARN", "kernel.apparmor_restrict_unprivileged_userns", "unreadable: %s", strerror(errno));
	else if (strcmp(v, "0") != 0) {
		culprit = true;
		line(userns_blocked ? bad : "WARN", "kernel.apparmor_restrict_unprivileged_userns", "%s", v);
		fix("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor "
		    "profile granting userns to warden)");
	} else
		line("OK", "kernel.apparmor_restrict_unprivileged_userns", "%s", v);

	r = read_sysctl("user.max_user_namespaces", v, sizeof v);
	if (r == 0)
		line("OK", "user.max_user_namespaces", "absent");
	else if (r < 0)
		line("WARN", "user.max_user_namespaces", "unreadable: %s", strerror(errno));
	else if (strcmp(v, "0") == 0) {
		culprit = true;
		line(bad, "user.max_user_namespaces", "0");
		fix("sysctl -w user.max_user_namespaces=15000");
	} else
		line("OK", "user.max_user_namespaces", "%s", v);
	if (!userns_ok && !culprit)
		fix("no sysctl explains it: a container runtime or seccomp profile may forbid "
		    "unshare (run warden on the host, or allow unshare/clone with namespace flags)");

	r = read_sysctl("dev.tty.legacy_tiocsti", v, sizeof v);
	if (r == 0)
		line("WARN", "dev.tty.legacy_tiocsti", "absent: TIOCSTI is always enabled on this kernel "
		     "(warden refuses it by seccomp and gives the agent its own pty)");
	else if (r < 0)
		line("WARN", "dev.tty.legacy_tiocsti", "unreadable: %s", strerror(errno));
	else if (strcmp(v, "0") != 0) {
		line("WARN", "dev.tty.legacy_tiocsti", "%s: terminal input injection is enabled "
		     "(warden refuses it by seccomp)", v);
		fix("sysctl -w dev.tty.legacy_tiocsti=0");
	} else
		line("OK", "dev.tty.legacy_tiocsti", "0");

	r = read_sysctl("kernel.yama.ptrace_scope", v, sizeof v);
	if (r == 0)
		line("WARN", "kernel.yama.ptrace_scope", "absent: Yama is not enabled (warden refuses "
		     "ptrace by seccomp)");
	else if (r < 0)
		line("WARN", "kernel.yama.ptrace_scope", "unreadable: %s", strerror(errno));
	else if (strcmp(v, "0") == 0) {
		line("WARN", "kernel.yama.ptrace_scope", "0: any process may trace its user's others");
		fix("sysctl -w kernel.yama.ptrace_scope=1");
	} else
		line("OK", "kernel.yama.ptrace_scope", "%s", v);

	struct statfs sf;
	if (statfs("/sys/fs/cgroup", &sf) == 0 && (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC)
		line("OK", "cgroup v2", "mounted at /sys/fs/cgroup");
	else
		line("WARN", "cgroup v2", "/sys/fs/cgroup is not a cgroup2 mount (v1 or hybrid): "
		     "resource limits will not be available");

	char lsm[512];
	int fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, lsm, sizeof lsm - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		line("WARN", "BPF LSM", "unknown (/sys/kernel/security/lsm unreadable)");
	} else {
		lsm[n] = '\0';
		bool bpf = false;
		char *save = NULL;
		for (char *t = strtok_r(lsm, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save))
			bpf = bpf || strcmp(t, "bpf") == 0;
		if (bpf)
			line("OK", "BPF LSM", "enabled");
		else
			line("WARN", "BPF LSM", "not enabled (not used by warden yet)");
	}

	bool can_run = userns_ok && landlock_ok && seccomp_ok && notify_ok;
	printf("\n");
	if (!can_run) {
		printf("warden cannot run its default profile here: fix the FAIL lines above.\n");
		return 1;
	}
	printf("layers warden will put in force:\n");
	printf("  identity     user namespace: uid 1000 agent, no groups, empty home\n");
	printf("  filesystem   mount namespace built from nothing; Landlock ABI %d as a second wall\n", abi);
	printf("  processes    pid namespace, seccomp filter, no_new_privs, no capabilities%s\n",
	       abi >= 6 ? ", Landlock signal and abstract socket scopes" : "");
	printf("  audit        every exec and refused syscall reported by seccomp user notification\n");
	printf("  network      network namespace with lo only\n");
	printf("  environment  allowlist of variables\n");
	printf("  terminal     its own pty when stdin is a terminal\n");
	printf("not in force yet: cgroup limits\n");
	return 0;
}
