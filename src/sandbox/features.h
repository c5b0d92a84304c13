/* features.h - one probe of what this kernel offers the sandbox: the release,
 * the Landlock ABI, seccomp and its user notification, user namespaces and
 * the sysctls that restrict them, TIOCSTI and Yama, the active LSMs and where
 * cgroup v2 is mounted. `warden doctor` prints it, a session checks it
 * (features_require) and records it whole in its session.start event. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/err.h"

/* The sysctls probed, in this order (names in features_sysctl_name). */
enum feature_sysctl {
	SYSCTL_UNPRIV_USERNS_CLONE,      /* kernel.unprivileged_userns_clone (Debian) */
	SYSCTL_APPARMOR_RESTRICT_USERNS, /* kernel.apparmor_restrict_unprivileged_userns (Ubuntu) */
	SYSCTL_MAX_USER_NAMESPACES,      /* user.max_user_namespaces */
	SYSCTL_LEGACY_TIOCSTI,           /* dev.tty.legacy_tiocsti */
	SYSCTL_YAMA_PTRACE_SCOPE,        /* kernel.yama.ptrace_scope */
	SYSCTL_COUNT
};

struct feature_sysctl_value {
	int state;       /* 1 read (value holds it), 0 absent, -1 unreadable (err) */
	int err;
	char value[64];  /* the first line, without its newline */
};

/* Where the list of active LSMs came from. */
enum lsm_source {
	LSM_UNKNOWN,          /* none of the below answered (lsm_err says why) */
	LSM_FROM_SYSCALL,     /* lsm_list_modules(2), Linux 6.8+: no securityfs needed */
	LSM_FROM_SECURITYFS,  /* /sys/kernel/security/lsm */
	LSM_FROM_CMDLINE,     /* the lsm= boot parameter: asked for, not necessarily active */
};

struct kernel_features {
	char sysname[65], release[65], machine[65];
	int landlock_abi;          /* the ABI version, or -errno when Landlock is unavailable */
	bool seccomp;              /* seccomp filter mode exists */
	bool seccomp_notify;       /* SECCOMP_RET_USER_NOTIF: the audit of execs and refusals */
	int seccomp_notify_err;    /* errno when not */
	unsigned seccomp_notif_size;
	struct feature_sysctl_value sysctl[SYSCTL_COUNT];
	char lsms[256];            /* comma-separated, in the kernel's order; "" when unknown */
	enum lsm_source lsm_source;
	int lsm_err;
	bool cgroup2_default;      /* /sys/fs/cgroup itself is a cgroup2 mount */
	char cgroup2[512];         /* where cgroup v2 is mounted; "" when nowhere */
	/* Only after features_probe_userns (it forks; doctor asks, sessions do not). */
	bool userns_probed;
	bool root;                 /* the probe ran as root */
	int userns_err;            /* 0, or the errno of unshare(2) of a session's namespaces */
	int userns_nobody_err;     /* the same as nobody (root only; else = userns_err) */
};

/* Fill f. Cheap (no process is created): reads /proc, /sys and asks the
 * kernel by syscalls. Never fails: what cannot be learnt is recorded so. */
void features_probe(struct kernel_features *f);

/* Fork children that create a session's namespaces (and, as root, one that
 * does so as nobody); fills the userns fields. */
void features_probe_userns(struct kernel_features *f);

/* 0 when every layer a session needs is there, else -1 and an error naming
 * the missing one (Landlock ABI 2+, seccomp filters). */
int features_require(const struct kernel_features *f, struct werr *e);

/* The whole struct as a JSON object: release, landlock_abi, seccomp, ...
 * (a new reference). */
json_t *features_to_json(const struct kernel_features *f);

const char *features_sysctl_name(enum feature_sysctl s);
const char *features_lsm_source_name(enum lsm_source s);

/* What an error says to a user whose container's seccomp profile refuses
 * what warden needs (doc/containers.md). */
#define FEATURES_CONTAINER_PROFILE_HINT \
	"run it with the profile /usr/share/warden/container/make-seccomp-profile writes " \
	"(packaging/container/ in the source), see doc/containers.md"

/* Whether this process already runs under a seccomp filter (a container
 * engine's profile, or another sandbox's): one that may refuse what
 * warden's own set-up needs, which the errors then name. */
bool features_self_filtered(void);

/* The Landlock ABI version, or -errno (EOPNOTSUPP: built in, disabled). */
int landlock_abi_version(void);

/* --- pure parts, unit tested ----------------------------------------------- */

/* The name of an LSM id of lsm_list_modules(2) (LSM_ID_*); NULL if unknown. */
const char *features_lsm_name(uint64_t id);

/* Normalise a comma-separated LSM list (securityfs "a,b,c\n", or the value of
 * lsm=) into out: names separated by single commas, no blanks or empty
 * entries. Returns the number of names, -1 when out is too small. */
int features_parse_lsm_list(const char *text, char *out, size_t outlen);

/* The value of the last lsm= parameter of a kernel command line (the kernel
 * stops at "--": the rest is init's), normalised as above. Returns the number
 * of names, 0 when there is no lsm=, -1 when out is too small. */
int features_parse_cmdline_lsm(const char *cmdline, char *out, size_t outlen);

/* From the text of /proc/self/mountinfo: the mount point of cgroup v2 into
 * out ("" when there is none). /sys/fs/cgroup wins when it is cgroup2; else the
 * first cgroup2 mount not hidden by a later mount on the same point. Octal
 * escapes (\040) are decoded. Returns 1 found, 0 not, -1 out too small. */
int features_parse_mountinfo_cgroup2(const char *mountinfo, char *out, size_t outlen);

/* true when the comma-separated list has this name. */
bool features_lsm_active(const struct kernel_features *f, const char *name);

/* --- the privileged tiers ---------------------------------------------------- */

/* What a probe that said yes found, for the session that goes on to
 * llaudit_open: the multicast group's socket, joined (-1: none), and the
 * kernel's count of lost records at the time. */
struct llaudit_probed {
	int fd;
	unsigned long lost;
};

/* Whether this session's Landlock denials can be on the record here
 * (src/supervisor/llaudit.h): 1 yes (why says how: auditd running or not),
 * 0 no and why (not root, Landlock ABI < 7, no audit in the kernel, audit
 * disabled, audit's failure mode is panic, the multicast group refused, not
 * in the host's pid namespace). As root it waits for the kernel's answer to
 * AUDIT_GET, sent by a kernel thread started for it (0.1-2 ms). With keep
 * (and 1), the group's socket and the lost count are kept there, for
 * llaudit_open, which so asks nothing of the kernel a second time; without,
 * or with 0, nothing stays open. `warden doctor` prints it; a session asks
 * it while init starts (supervisor/launch.c), records it and, when 1, has
 * init restrict itself with LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON so that
 * the agent's denials after its exec are logged too. */
int llaudit_probe(int landlock_abi, char *why, size_t len, struct llaudit_probed *keep);

/* llaudit_probe in two steps, so that the kernel's thread answers while the
 * asker does other work (a session asks once init has its mapped byte,
 * and takes the answer after the maker and the placeholders): _ask returns
 * the question's socket, or -1 with why filled (the answer is no, asked of
 * nothing); _answer takes the socket (closed) or the -1, waits for the
 * answer and says as llaudit_probe. */
int llaudit_probe_ask(int landlock_abi, char *why, size_t len);
int llaudit_probe_answer(int asked, char *why, size_t len, struct llaudit_probed *keep);

/* The kernel's audit over netlink, for the probe and for llaudit.c:
 * AUDIT_GET (0 and st filled, or -errno); the number of pid namespaces
 * /proc/PID/status's NSpid lists (1: the host's), -1 when unreadable. (The
 * read-only multicast group is the probe's to join: llaudit_probed.) */
struct audit_status;
int features_audit_status(struct audit_status *st);
int features_nspid_count(pid_t pid);

/* Root in earnest: euid 0 with CAP_SYS_ADMIN effective. Root without it (a
 * container's root, by default) takes the unprivileged path: a user
 * namespace of its own, no host identities, no cgroups of its own. */
bool caps_admin(void);
/* CAP_SYS_PTRACE effective: warden reads the memory of a process that is
 * not dumpable (of its own user namespace or below). */
bool caps_ptrace(void);
