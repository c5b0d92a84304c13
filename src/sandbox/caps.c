/* caps.c - capabilities: drop the bounding set and ambient set, lock the
 * securebits, and finally clear the permitted, effective and inheritable
 * sets, so nothing in the sandbox holds a capability even inside its own
 * user namespace. */
#include "sandbox.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CAPS_MAX 1024 /* a bound on the loop below; the kernel has 41 */

int caps_drop_bounding(struct werr *e)
{
	/* Each capability the kernel knows, up to the first it calls invalid
	 * (EINVAL is its answer to a number past its last, and only to that:
	 * they are numbered from 0 without gaps), rather than up to
	 * /proc/sys/kernel/cap_last_cap: init read it through the session's
	 * new procfs, whose sysctl tree is made anew each session, on its way
	 * to the command (0.4 ms a session on the project's VM: bench/README.md,
	 * "Noon, 2026-12-04"). */
	int c = 0;
	for (; c < CAPS_MAX; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			/* past the last, as PR_CAPBSET_READ says too (it
			 * answers EINVAL only for a number past it) */
			if (errno == EINVAL && prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0 &&
			    errno == EINVAL)
				break;
			return werr_errno(e, "capabilities: dropping %d from the bounding set", c);
		}
	if (c == 0 || c == CAPS_MAX)
		return werr_set(e, 0, "capabilities: the bounding set could not be dropped (the kernel "
				"%s)", c ? "named no last capability under 1024" : "knows no capability 0");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return werr_errno(e, "capabilities: clearing the ambient set");
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
			     SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
			     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
			     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return werr_errno(e, "capabilities: locking securebits");
	return 0;
}

/* The system calls, not glibc's wrappers: init is a raw clone of the
 * supervisor, a process with threads, and glibc's set*id wrappers change
 * every thread glibc knows of, waiting for each one still being created;
 * in the clone none of them exists, and one that was mid-creation at the
 * clone is waited for for ever (a hang seen 1 session in 400 under load).
 * Init has one thread: the call's change is the whole process's (init.c
 * drops the supplementary groups the same way). */
static int set_ids(uid_t uid, gid_t gid)
{
	if (syscall(SYS_setresgid, gid, gid, gid) < 0)
		return -1;
	return (int)syscall(SYS_setresuid, uid, uid, uid);
}

int caps_become(uid_t uid, gid_t gid, struct werr *e)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || set_ids(uid, gid) < 0 ||
	    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return werr_errno(e, "identity: becoming uid %u", (unsigned)uid);
	if (syscall(SYS_capget, &hdr, data) < 0)
		return werr_errno(e, "identity: reading the capabilities kept");
	data[0].effective = data[0].permitted;
	data[1].effective = data[1].permitted;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return werr_errno(e, "identity: raising the capabilities kept");
	return 0;
}

int caps_drop_all(struct werr *e)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };
	if (syscall(SYS_capset, &hdr, data) < 0)
		return werr_errno(e, "capabilities: clearing all sets");
	return 0;
}
