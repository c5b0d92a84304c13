/* features.c - the one probe of kernel features (features.h): what doctor
 * prints, what a session requires before building anything, and what its
 * session.start event records. Reading only: sysctls and mountinfo from
 * /proc, the LSMs from lsm_list_modules(2) or what the kernel exposes
 * elsewhere, Landlock and seccomp by asking for their versions; user
 * namespaces are tried for real in children, on request. Also the
 * privileged tiers' own probes: Landlock's denials on the record (the
 * audit netlink socket, here); in-kernel exec enforcement's (a BPF LSM
 * program loaded for real) is bpfexec_probe, src/supervisor/exec/bpfprobe.c. */
#include "features.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef SYS_lsm_list_modules
#define SYS_lsm_list_modules 461 /* the same number on every architecture */
#endif
#define W_SECCOMP_GET_NOTIF_SIZES 3

/* The namespaces a sandbox session creates (supervisor.c). */
#define SESSION_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | \
		    CLONE_NEWUTS | CLONE_NEWCGROUP)

#define CGROUP_DEFAULT "/sys/fs/cgroup"

static const char *const sysctl_names[SYSCTL_COUNT] = {
	[SYSCTL_UNPRIV_USERNS_CLONE] = "kernel.unprivileged_userns_clone",
	[SYSCTL_APPARMOR_RESTRICT_USERNS] = "kernel.apparmor_restrict_unprivileged_userns",
	[SYSCTL_MAX_USER_NAMESPACES] = "user.max_user_namespaces",
	[SYSCTL_LEGACY_TIOCSTI] = "dev.tty.legacy_tiocsti",
	[SYSCTL_YAMA_PTRACE_SCOPE] = "kernel.yama.ptrace_scope",
};

const char *features_sysctl_name(enum feature_sysctl s)
{
	return s < SYSCTL_COUNT ? sysctl_names[s] : NULL;
}

const char *features_lsm_source_name(enum lsm_source s)
{
	switch (s) {
	case LSM_FROM_SYSCALL: return "lsm_list_modules";
	case LSM_FROM_SECURITYFS: return "/sys/kernel/security/lsm";
	case LSM_FROM_CMDLINE: return "lsm= boot parameter";
	case LSM_UNKNOWN: break;
	}
	return "unknown";
}

bool features_self_filtered(void)
{
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
}

int landlock_abi_version(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return v < 0 ? -errno : (int)v;
}

/* ---- pure parts ------------------------------------------------------------ */

/* The LSM_ID_* values of <linux/lsm.h> (uapi since 6.8). */
const char *features_lsm_name(uint64_t id)
{
	static const char *const names[] = {
		"capability", "selinux", "smack", "tomoyo", "apparmor", "yama", "loadpin",
		"safesetid", "lockdown", "bpf", "landlock", "ima", "evm", "ipe",
	};
	return id >= 100 && id - 100 < ARRAY_LEN(names) ? names[id - 100] : NULL;
}

/* Append name (len bytes) to the list in out, comma-separated. */
static int list_append(char *out, size_t outlen, size_t *used, const char *name, size_t len)
{
	size_t need = len + (*used ? 1 : 0);
	if (*used + need + 1 > outlen)
		return -1;
	if (*used)
		out[(*used)++] = ',';
	memcpy(out + *used, name, len);
	*used += len;
	out[*used] = '\0';
	return 0;
}

int features_parse_lsm_list(const char *text, char *out, size_t outlen)
{
	if (!outlen)
		return -1;
	out[0] = '\0';
	size_t used = 0;
	int n = 0;
	for (const char *p = text; *p;) {
		p += strspn(p, ", \t\n");
		size_t len = strcspn(p, ", \t\n");
		if (!len)
			break;
		if (list_append(out, outlen, &used, p, len) < 0)
			return -1;
		n++;
		p += len;
	}
	return n;
}

int features_parse_cmdline_lsm(const char *cmdline, char *out, size_t outlen)
{
	const char *val = NULL;
	size_t vlen = 0;
	for (const char *p = cmdline; *p;) {
		p += strspn(p, " \t\n");
		size_t len = strcspn(p, " \t\n");
		if (!len || (len == 2 && strncmp(p, "--", 2) == 0))
			break;
		if (len > 4 && strncmp(p, "lsm=", 4) == 0) {
			val = p + 4;
			vlen = len - 4;
		}
		p += len;
	}
	if (outlen)
		out[0] = '\0';
	if (!val)
		return outlen ? 0 : -1;
	_cleanup_free_ char *copy = strndup(val, vlen);
	if (!copy)
		return -1;
	return features_parse_lsm_list(copy, out, outlen);
}

/* The mount point and file system type of one mountinfo line (modified in
 * place); -1 when it is not a well-formed line. */
static int mountinfo_line(char *line, char **point, char **fstype)
{
	char *save = NULL, *tok;
	int i = 0;
	*point = *fstype = NULL;
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++) {
		if (i == 4)
			*point = tok;
		else if (i > 5 && strcmp(tok, "-") == 0) {
			*fstype = strtok_r(NULL, " ", &save);
			break;
		}
	}
	if (!*point || !*fstype)
		return -1;
	unescape_octal(*point);
	return 0;
}

int features_parse_mountinfo_cgroup2(const char *mountinfo, char *out, size_t outlen)
{
	_cleanup_free_ char *text = xstrdup(mountinfo);
	_cleanup_free_ char *cand = NULL;
	bool dflt = false;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *point, *fstype;
		if (mountinfo_line(l, &point, &fstype) < 0)
			continue;
		bool cg2 = strcmp(fstype, "cgroup2") == 0;
		/* a later mount on the same point hides the earlier one */
		if (strcmp(point, CGROUP_DEFAULT) == 0)
			dflt = cg2;
		if (cand && strcmp(point, cand) == 0 && !cg2) {
			free(cand);
			cand = NULL;
		} else if (!cand && cg2) {
			cand = xstrdup(point);
		}
	}
	const char *found = dflt ? CGROUP_DEFAULT : cand;
	if (!outlen)
		return -1;
	out[0] = '\0';
	if (!found)
		return 0;
	if (strlen(found) >= outlen)
		return -1;
	strcpy(out, found);
	return 1;
}

bool features_lsm_active(const struct kernel_features *f, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = f->lsms; *p;) {
		size_t n = strcspn(p, ",");
		if (n == len && strncmp(p, name, len) == 0)
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* ---- probes ---------------------------------------------------------------- */

static void probe_sysctl(const char *name, struct feature_sysctl_value *v)
{
	char path[256];
	snprintf(path, sizeof path, "/proc/sys/%s", name);
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	v->state = 1;
	v->err = 0;
	if (read_small_file(path, v->value, sizeof v->value, 0) < 0) {
		v->state = errno == ENOENT ? 0 : -1;
		v->err = errno;
		v->value[0] = '\0';
		return;
	}
	v->value[strcspn(v->value, "\n")] = '\0';
}

static void probe_seccomp(struct kernel_features *f)
{
	f->seccomp = !(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL);
	/* the filter hands refusals and execs to the supervisor through it */
	struct { unsigned short notif, resp, data; } sizes;
	f->seccomp_notify = syscall(SYS_seccomp, W_SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0;
	f->seccomp_notify_err = f->seccomp_notify ? 0 : errno;
	f->seccomp_notif_size = f->seccomp_notify ? sizes.notif : 0;
}

/* The active LSMs: the syscall, else securityfs, else what was asked at boot. */
static void probe_lsms(struct kernel_features *f)
{
	uint64_t ids[64];
	uint32_t size = sizeof ids;
	long n = syscall(SYS_lsm_list_modules, ids, &size, 0);
	f->lsm_err = n < 0 ? errno : 0;
	if (n >= 0) {
		size_t used = 0;
		f->lsms[0] = '\0';
		for (long i = 0; i < n && i < (long)ARRAY_LEN(ids); i++) {
			const char *name = features_lsm_name(ids[i]);
			char unknown[32];
			if (!name) {
				snprintf(unknown, sizeof unknown, "lsm%llu", (unsigned long long)ids[i]);
				name = unknown;
			}
			if (list_append(f->lsms, sizeof f->lsms, &used, name, strlen(name)) < 0)
				break;
		}
		f->lsm_source = LSM_FROM_SYSCALL;
		return;
	}
	char buf[512];
	if (read_small_file("/sys/kernel/security/lsm", buf, sizeof buf, 0) >= 0 &&
	    features_parse_lsm_list(buf, f->lsms, sizeof f->lsms) > 0) {
		f->lsm_source = LSM_FROM_SECURITYFS;
		return;
	}
	_cleanup_free_ char *cmdline = read_text_file("/proc/cmdline");
	if (cmdline && features_parse_cmdline_lsm(cmdline, f->lsms, sizeof f->lsms) > 0) {
		f->lsm_source = LSM_FROM_CMDLINE;
		return;
	}
	f->lsms[0] = '\0';
	f->lsm_source = LSM_UNKNOWN;
}

static void probe_cgroup2(struct kernel_features *f)
{
	_cleanup_free_ char *mi = read_text_file("/proc/self/mountinfo");
	if (mi && features_parse_mountinfo_cgroup2(mi, f->cgroup2, sizeof f->cgroup2) >= 0) {
		f->cgroup2_default = strcmp(f->cgroup2, CGROUP_DEFAULT) == 0;
		return;
	}
	struct statfs sf; /* no mountinfo: the default place is all we can ask about */
	f->cgroup2_default = statfs(CGROUP_DEFAULT, &sf) == 0 &&
			     (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC;
	snprintf(f->cgroup2, sizeof f->cgroup2, "%s", f->cgroup2_default ? CGROUP_DEFAULT : "");
}

void features_probe(struct kernel_features *f)
{
	memset(f, 0, sizeof *f);
	struct utsname un;
	if (uname(&un) == 0) {
		snprintf(f->sysname, sizeof f->sysname, "%s", un.sysname);
		snprintf(f->release, sizeof f->release, "%s", un.release);
		snprintf(f->machine, sizeof f->machine, "%s", un.machine);
	}
	f->landlock_abi = landlock_abi_version();
	probe_seccomp(f);
	for (int i = 0; i < SYSCTL_COUNT; i++)
		probe_sysctl(sysctl_names[i], &f->sysctl[i]);
	probe_lsms(f);
	probe_cgroup2(f);
	f->root = caps_admin();
}

/* Fork a child that creates the namespaces of a session (as nobody when
 * drop is set), by the calls a session makes: clone3, which a seccomp
 * filter outside warden may refuse alone (ENOSYS: Docker's and
 * containerd's default profiles), then unshare; 0 or the errno it got. */
static int try_userns(bool drop)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		if (drop && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			     setresuid(65534, 65534, 65534) < 0))
			_exit(255);
		struct clone_args ca = { .flags = SESSION_NS, .exit_signal = SIGCHLD };
		long c = syscall(SYS_clone3, &ca, sizeof ca);
		if (c == 0)
			_exit(0);
		if (c < 0)
			_exit(errno & 0xff);
		while (waitpid((pid_t)c, NULL, 0) < 0 && errno == EINTR)
			;
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

void features_probe_userns(struct kernel_features *f)
{
	f->root = caps_admin();
	f->userns_err = try_userns(false);
	f->userns_nobody_err = f->root ? try_userns(true) : f->userns_err;
	f->userns_probed = true;
}

/* The layers a session cannot do without; checked before anything is built
 * so that the error names the missing piece. */
int features_require(const struct kernel_features *f, struct werr *e)
{
	int abi = f->landlock_abi;
	if (abi < 2)
		return werr_set(e, abi < 0 ? -abi : 0,
			"Landlock is not available (ABI %d; warden needs 2 or later): the kernel "
			"must be 5.19+ with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= "
			"boot parameter", abi < 0 ? 0 : abi);
	if (!f->seccomp)
		return werr_set(e, 0, "seccomp is not available: the kernel needs CONFIG_SECCOMP_FILTER");
	return 0;
}

static json_t *sysctl_json(const struct feature_sysctl_value *v)
{
	if (v->state > 0)
		return json_string(v->value);
	if (v->state == 0)
		return json_null();
	return json_pack("{s:s}", "error", strerror(v->err));
}

static json_t *lsms_json(const char *list)
{
	json_t *a = json_array();
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		json_array_append_new(a, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
	return a;
}

json_t *features_to_json(const struct kernel_features *f)
{
	json_t *o = json_pack("{s:s, s:i, s:b, s:b, s:s, s:s}", "release", f->release,
			      "landlock_abi", f->landlock_abi < 0 ? 0 : f->landlock_abi,
			      "seccomp", f->seccomp, "seccomp_notify", f->seccomp_notify,
			      "sysname", f->sysname, "machine", f->machine);
	if (!o)
		return NULL;
	if (f->landlock_abi < 0)
		json_object_set_new(o, "landlock_error", json_string(strerror(-f->landlock_abi)));
	json_t *sysctls = json_object();
	for (int i = 0; i < SYSCTL_COUNT; i++)
		json_object_set_new(sysctls, sysctl_names[i], sysctl_json(&f->sysctl[i]));
	json_object_set_new(o, "sysctls", sysctls);
	json_object_set_new(o, "lsms", f->lsm_source == LSM_UNKNOWN ? json_null() : lsms_json(f->lsms));
	json_object_set_new(o, "lsm_source", json_string(features_lsm_source_name(f->lsm_source)));
	json_object_set_new(o, "cgroup2", f->cgroup2[0] ? json_string(f->cgroup2) : json_null());
	if (f->userns_probed) {
		json_object_set_new(o, "userns", json_boolean(f->userns_err == 0));
		json_object_set_new(o, "userns_unprivileged", json_boolean(f->userns_nobody_err == 0));
	}
	return o;
}

/* ---- Landlock's denials on the record (llaudit.h) ---- */

#define LL_MIN_ABI_AUDIT 7

/* NLMSG_OK compares the header's __u32 length with the int its users pass:
 * clang's -Wsign-compare sees that inside the macro, gcc does not. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
/* AUDIT_GET asked: the socket the answer will come on, or -errno. The
 * kernel answers from a thread it starts for that (audit_send_reply), so
 * the answer comes 0.1-2 ms later, whatever the asker does meanwhile. */
static int audit_status_ask(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct nlmsghdr req = { .nlmsg_len = NLMSG_LENGTH(0), .nlmsg_type = AUDIT_GET,
				.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1 };
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, req.nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* The answer to audit_status_ask's question on fd (waited for, a second
 * at most): 0 and st filled, or -errno. */
static int audit_status_answer(int fd, struct audit_status *st)
{
	bool got = false;
	for (int i = 0; i < 4 && !got; i++) {
		union {
			char b[8192];
			struct nlmsghdr align;
		} u;
		ssize_t n = recv(fd, u.b, sizeof u.b, 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		int left = (int)n;
		for (struct nlmsghdr *h = &u.align; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *ne = NLMSG_DATA(h);
				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof *ne) && ne->error)
					return ne->error;
			} else if (h->nlmsg_type == AUDIT_GET) {
				memset(st, 0, sizeof *st);
				size_t len = h->nlmsg_len - NLMSG_HDRLEN;
				memcpy(st, NLMSG_DATA(h), len < sizeof *st ? len : sizeof *st);
				got = true;
			}
		}
	}
	return got ? 0 : -EPROTO;
}

int features_audit_status(struct audit_status *st)
{
	_cleanup_close_ int fd = audit_status_ask();
	return fd < 0 ? fd : audit_status_answer(fd, st);
}
#pragma GCC diagnostic pop

/* The read-only multicast group (AUDIT_NLGRP_READLOG) joined: a socket
 * with room for a burst, or -errno. */
static int audit_readlog(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	/* room for a burst while the loop is busy elsewhere */
	int sz = 4 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	return fd;
}

int features_nspid_count(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[256];
	int n = -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "NSpid:", 6) == 0) {
			n = 0;
			char *sp;
			for (char *t = strtok_r(line + 6, " \t\n", &sp); t; t = strtok_r(NULL, " \t\n", &sp))
				n++;
			break;
		}
	fclose(f);
	return n;
}

int llaudit_probe_ask(int landlock_abi, char *why, size_t len)
{
	if (!caps_admin()) {
		snprintf(why, len, "off: warden is not running as root (only root may read the "
			 "kernel's audit records)");
		return -1;
	}
	if (landlock_abi < LL_MIN_ABI_AUDIT) {
		snprintf(why, len, "off: Landlock ABI %d; its audit records need ABI %d (Linux 6.15)",
			 landlock_abi < 0 ? 0 : landlock_abi, LL_MIN_ABI_AUDIT);
		return -1;
	}
	if (features_nspid_count(getpid()) != 1) {
		snprintf(why, len, "off: warden does not run in the host's pid namespace (the "
			 "records name host pids)");
		return -1;
	}
	int fd = audit_status_ask();
	if (fd < 0) {
		snprintf(why, len, "off: the audit netlink socket: %s%s", strerror(-fd),
			 fd == -EPROTONOSUPPORT ? " (a kernel without CONFIG_AUDIT)" : "");
		return -1;
	}
	return fd;
}

int llaudit_probe_answer(int asked, char *why, size_t len, struct llaudit_probed *keep)
{
	if (asked < 0)
		return 0;
	_cleanup_close_ int q = asked;
	struct audit_status st;
	int r = audit_status_answer(q, &st);
	if (r < 0) {
		snprintf(why, len, "off: the audit netlink socket: %s", strerror(-r));
		return 0;
	}
	if (!st.enabled) {
		snprintf(why, len, "off: the kernel's audit is disabled; warden does not enable it "
			 "(host state): `auditctl -e 1`, audit=1 on the kernel command line, or auditd "
			 "does");
		return 0;
	}
	if (st.failure == AUDIT_FAIL_PANIC) {
		snprintf(why, len, "off: audit's failure mode is panic (auditctl -f 2): a flood of "
			 "denials from the agent could overrun the backlog and panic the host; "
			 "`auditctl -f 1` allows it");
		return 0;
	}
	int fd = audit_readlog();
	if (fd < 0) {
		snprintf(why, len, "off: joining the audit multicast group (AUDIT_NLGRP_READLOG): %s",
			 strerror(-fd));
		return 0;
	}
	if (keep)
		*keep = (struct llaudit_probed){ .fd = fd, .lost = st.lost };
	else
		close(fd);
	if (st.pid)
		snprintf(why, len, "on: audit enabled; auditd (pid %u) records the agent's denials too",
			 st.pid);
	else
		snprintf(why, len, "on: audit enabled, no auditd (the kernel log gets the records "
			 "too, rate-limited)");
	return 1;
}

int llaudit_probe(int landlock_abi, char *why, size_t len, struct llaudit_probed *keep)
{
	return llaudit_probe_answer(llaudit_probe_ask(landlock_abi, why, len), why, len, keep);
}

/* Whether cap is in this process's effective set. */
static bool cap_effective(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	return syscall(SYS_capget, &h, d) == 0 && (d[cap / 32].effective & (1u << (cap % 32)));
}

bool caps_admin(void)
{
	static int cached = -1;
	if (cached < 0)
		cached = geteuid() == 0 && cap_effective(CAP_SYS_ADMIN);
	return cached;
}

bool caps_ptrace(void)
{
	static int cached = -1;
	if (cached < 0)
		cached = cap_effective(CAP_SYS_PTRACE);
	return cached;
}
