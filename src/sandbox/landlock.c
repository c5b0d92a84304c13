/* landlock.c - Landlock, the second wall: the same allowlist as the mounts,
 * enforced by the LSM on every open, so a mistake in the mount layer does
 * not become access. Execute only where the mounts allow it: the system
 * directories, read-only paths, the workspace (not in strict mode) and the
 * `exec allow-writable` paths. On ABI >= 6 also scopes signals and abstract
 * unix sockets to the sandbox. On ABI >= 7, when the supervisor reads the
 * kernel's audit records (root, audit enabled: src/supervisor/llaudit.h),
 * the agent's denials after its exec are logged too (by default the kernel
 * logs a domain's denials only until the first exec). Constants newer than
 * the build host's headers are defined here. */
#include "sandbox.h"
#include "features.h" /* landlock_abi_version */

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */
#define LL_MIN_ABI 2
/* landlock_restrict_self's flags (ABI 7) */
#define LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define LL_MIN_ABI_LOG 7

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_WRITE (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | \
		  LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM |       \
		  LL_FS_REFER | LL_FS_TRUNCATE)
#define LL_DEV (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV | LL_FS_READ_DIR)

static uint64_t handled_fs(int abi)
{
	uint64_t h = (1ULL << 13) - 1; /* ABI 1 */
	if (abi >= 2)
		h |= LL_FS_REFER;
	if (abi >= 3)
		h |= LL_FS_TRUNCATE;
	if (abi >= 5)
		h |= LL_FS_IOCTL_DEV;
	return h;
}

/* The rule for path; nofollow: opened with no symlink followed on its way
 * (a path in a place the agent writes). */
static int add_rule_how(int ruleset, const char *path, uint64_t access, uint64_t handled,
			bool required, bool nofollow, struct werr *e)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = nofollow ? RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS : 0,
	};
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd < 0) {
		if (!required && errno == ENOENT)
			return 0;
		return werr_errno(e, "Landlock: opening %s", path);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return werr_errno(e, "Landlock: stat %s", path);
	access &= handled;
	if (!S_ISDIR(st.st_mode)) /* only file rights make sense on a file */
		access &= LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE |
			  LL_FS_IOCTL_DEV;
	struct ll_path_beneath pb = { .allowed_access = access, .parent_fd = fd };
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return werr_errno(e, "Landlock: adding the rule for %s", path);
	return 0;
}

static int add_rule(int ruleset, const char *path, uint64_t access, uint64_t handled,
		    bool required, struct werr *e)
{
	return add_rule_how(ruleset, path, access, handled, required, false, e);
}

static const char *const scratch[] = { "/tmp", "/var/tmp", "/dev/shm", AGENT_HOME };

/* Does dir hold a place the agent writes (the workspace, the scratch
 * space, the home, a read-write path)? In strict mode a read-only path that
 * does gets no EXECUTE: Landlock's rights hold beneath a rule's directory,
 * so EXECUTE there would reach the writable place too. */
static bool holds_writable(const struct sandbox_spec *s, const char *dir)
{
	if (path_is_within(s->workspace, dir))
		return true;
	for (size_t i = 0; i < ARRAY_LEN(scratch); i++)
		if (path_is_within(scratch[i], dir))
			return true;
	for (size_t i = 0; i < s->policy->npaths; i++)
		if (s->policy->paths[i].mode == POLICY_RW &&
		    path_is_within(s->policy->paths[i].path, dir))
			return true;
	return false;
}

/* The ruleset for this ABI: the file rights it knows handled (h), and on
 * ABI >= 6 signals and abstract unix sockets scoped to the sandbox. */
static int create_ruleset(int abi, uint64_t *h, struct werr *e)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = handled_fs(abi) };
	size_t size = sizeof(uint64_t);
	if (abi >= 4)
		size = 2 * sizeof(uint64_t);
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof attr;
	}
	*h = attr.handled_access_fs;
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return werr_errno(e, "Landlock: creating the ruleset");
	return rs;
}

/* What every sandbox has: the root's listing, the system directories
 * (read and execute), /etc and /proc (read), /dev, the scratch space and
 * the home (read and write). */
static int add_system_rules(int rs, uint64_t h, struct werr *e)
{
	static const char *const sys_rx[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32" };
	if (add_rule(rs, "/", LL_FS_READ_DIR, h, true, e) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(sys_rx); i++)
		if (add_rule(rs, sys_rx[i], LL_READ | LL_FS_EXECUTE, h, false, e) < 0)
			return -1;
	if (add_rule(rs, "/etc", LL_READ, h, true, e) < 0 ||
	    add_rule(rs, "/proc", LL_READ, h, true, e) < 0 ||
	    add_rule(rs, "/dev", LL_DEV, h, true, e) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_LEN(scratch); i++)
		if (add_rule(rs, scratch[i], LL_READ | LL_WRITE, h, true, e) < 0)
			return -1;
	return 0;
}

/* What this session's spec adds: the workspace, the trust store, warden's
 * own binary and the hook client, the profile's paths and the `exec
 * allow-writable` paths. */
static int add_session_rules(const struct sandbox_spec *s, int rs, uint64_t h, struct werr *e)
{
	/* strict mode: nothing writable executes, but the allow-writable paths */
	bool strict = s->exec.strict;
	/* a read-only workspace: read-only here too (the outputs in it are
	 * read-write paths below) */
	if (add_rule(rs, s->workspace, LL_READ | (s->workspace_ro ? 0 : LL_WRITE) |
		     (strict ? 0 : LL_FS_EXECUTE), h, true, e) < 0)
		return -1;
	if (s->ca_bundle && add_rule(rs, SANDBOX_CA_BUNDLE, LL_FS_READ_FILE, h, true, e) < 0)
		return -1;
	if (s->self_exe && (add_rule(rs, SANDBOX_SELF_EXE, LL_FS_READ_FILE | LL_FS_EXECUTE, h, true, e) < 0 ||
			    add_rule(rs, SANDBOX_HOOK_EXE, LL_FS_READ_FILE | LL_FS_EXECUTE, h, true, e) < 0))
		return -1;
	for (size_t i = 0; i < s->policy->npaths; i++) {
		const struct policy_path *pp = &s->policy->paths[i];
		uint64_t acc = pp->mode == POLICY_RW ? LL_READ | LL_WRITE : LL_READ | LL_FS_EXECUTE;
		if (strict && pp->mode != POLICY_RW && holds_writable(s, pp->path))
			acc &= ~LL_FS_EXECUTE;
		if (add_rule(rs, pp->path, acc, h, false, e) < 0)
			return -1;
	}
	for (size_t i = 0; i < s->exec.n; i++)
		if (add_rule_how(rs, s->exec.w[i].path, LL_READ | LL_WRITE | LL_FS_EXECUTE, h, true,
				 true, e) < 0)
			return -1;
	return 0;
}

int landlock_apply(const struct sandbox_spec *s, struct werr *e)
{
	int abi = landlock_abi_version();
	if (abi < LL_MIN_ABI)
		return werr_set(e, abi < 0 ? -abi : 0, "Landlock: ABI %d available, %d needed", abi,
				LL_MIN_ABI);
	uint64_t h;
	_cleanup_close_ int rs = create_ruleset(abi, &h, e);
	if (rs < 0 || add_system_rules(rs, h, e) < 0 || add_session_rules(s, rs, h, e) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return werr_errno(e, "no_new_privs");
	unsigned flags = s->landlock_log && abi >= LL_MIN_ABI_LOG ? LL_RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;
	if (syscall(SYS_landlock_restrict_self, rs, flags) < 0)
		return werr_errno(e, "Landlock: restricting the sandbox");
	return 0;
}
