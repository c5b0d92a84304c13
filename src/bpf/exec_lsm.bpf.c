/* exec_lsm.bpf.c - the exec rules enforced in the kernel (BPF LSM): for the
 * tasks of one session's cgroup (or a cgroup below it), an exec
 * (bprm_check_security) and a file mapped executable (mmap_file,
 * file_mprotect) go ahead only when userspace said the file may run. The
 * kernel cannot hash a file, so the verdict is userspace's
 * (src/supervisor/exec/bpfexec.c), kept per file (device, inode) and valid
 * while the file's ctime stays the same.
 *
 * Userspace puts the verdicts here before they are needed: the file of an
 * exec once the seccomp record has hashed it (execs.c), and, through the
 * seccomp user notification of every mmap of a file with PROT_EXEC and of
 * every mprotect or pkey_mprotect adding PROT_EXEC (seccomp.c, notify.c),
 * the file about to be mapped, before the call goes on. So this program
 * normally finds the verdict in its map.
 *
 * The wait below is only a backstop, for a mapping the filter does not see:
 * those the kernel makes itself (an exec's ELF interpreter, binfmt_elf's
 * own mappings of a file unknown yet), a file changed between userspace's
 * look and this check (its ctime moved), an overlay file (userspace's fstat
 * names its layer's device, the kernel the overlay's), more than eight
 * files under one mprotect. The filter refuses io_uring and every foreign
 * ABI (i386, x32), so no mapping comes by those. A file with no verdict is
 * sent up as a request and the task waits, spinning in bpf_loop, a bounded
 * time, for the answer; none in time is a refusal (fail closed), and so is
 * a request while as many tasks wait as there are spare CPUs (max_waiters:
 * the wait spins, on a kernel without preemption it keeps its CPU, and the
 * thread that answers needs one). Every refusal is sent up too.
 *
 * file_mprotect is not among the kernel's sleepable LSM hooks (6.1's
 * verifier: "bpf_lsm_file_mprotect is not sleepable"; the hook runs with
 * the mmap lock held), so its program is not sleepable and may not call
 * bpf_d_path: its records carry no path, and userspace finds the file
 * among the task's open files only (the task holds its mmap lock while it
 * waits, so /proc/PID/map_files would block until the wait is over; the
 * seccomp notification comes before the lock is taken, where userspace
 * reads /proc/PID/maps and map_files freely). */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "exec_lsm.h"

#define EPERM 1
#define EACCES 13
#define PROT_EXEC 0x4
#define WAIT_ITERATIONS (1 << 23)

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load: the session cgroup's level in the v2
 * hierarchy, and how long a task waits for a verdict. */
const volatile __u32 session_level = 0;
const volatile __u64 wait_ns = 50000000;
/* How many tasks may wait at once: the wait spins (on a kernel without
 * preemption it keeps its CPU), and the thread that answers needs one. */
const volatile __u32 max_waiters = 1;
__u32 waiters = 0;

/* v2 cgroup id -> 1: the sessions enforced */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u32);
} sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct exec_lsm_key);
	__type(value, struct exec_lsm_val);
} verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} records SEC(".maps");

/* The inode's ctime before 6.6 and from 6.6 to 6.10 (CO-RE flavours). */
struct inode___old {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));
struct inode___66 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

static __u64 inode_ctime(struct inode *inode)
{
	if (bpf_core_field_exists(inode->i_ctime_sec)) {
		/* the top bit of the nanoseconds says "queried" (multigrain) */
		return inode->i_ctime_sec * 1000000000ull + (inode->i_ctime_nsec & 0x7fffffffu);
	}
	struct inode___66 *i66 = (void *)inode;
	if (bpf_core_field_exists(i66->__i_ctime))
		return i66->__i_ctime.tv_sec * 1000000000ull + i66->__i_ctime.tv_nsec;
	struct inode___old *io = (void *)inode;
	return io->i_ctime.tv_sec * 1000000000ull + io->i_ctime.tv_nsec;
}

static bool in_session(void)
{
	__u64 id = bpf_get_current_ancestor_cgroup_id(session_level);
	return id && bpf_map_lookup_elem(&sessions, &id);
}

/* with_path: the program may call bpf_d_path (a sleepable hook); a
 * constant, so that the others' copies have no call to it at all. */
static __always_inline bool send(struct file *file, __u32 kind, __u32 hook, __u32 reason,
				 const struct exec_lsm_key *k, __u64 ctime, bool with_path)
{
	struct exec_lsm_rec *r = bpf_ringbuf_reserve(&records, sizeof *r, 0);
	if (!r)
		return false;
	r->kind = kind;
	r->hook = hook;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->reason = reason;
	r->dev = k->dev;
	r->ino = k->ino;
	r->ctime = ctime;
	r->ts = bpf_ktime_get_ns();
	r->path[0] = '\0';
	if (with_path && bpf_d_path((struct path *)&file->f_path, r->path, sizeof r->path) < 0)
		r->path[0] = '\0';
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return true;
}

struct wait_ctx {
	struct exec_lsm_key key;
	__u64 ctime, deadline;
	__u32 verdict;
};

static long wait_one(__u64 i, void *arg)
{
	struct wait_ctx *w = arg;
	struct exec_lsm_val *v = bpf_map_lookup_elem(&verdicts, &w->key);
	if (v && v->ctime == w->ctime) {
		w->verdict = v->verdict;
		return 1;
	}
	return bpf_ktime_get_ns() > w->deadline;
}

/* Does a verdict let it run? script: a #! file exec'd by name. */
static bool allows(__u32 verdict, bool script)
{
	return verdict == EXEC_LSM_ALLOW || (script && verdict == EXEC_LSM_DENY_CODE);
}

static __always_inline int check(struct file *file, __u32 hook, bool script, bool with_path)
{
	if (!in_session())
		return 0;
	/* direct reads (BTF pointers), no bpf_probe_read_kernel: nothing
	 * here depends on what lockdown allows of it */
	struct inode *inode = file->f_inode;
	if (!inode)
		return -EACCES;
	struct exec_lsm_key k = { .dev = inode->i_sb->s_dev, .ino = inode->i_ino };
	__u64 ctime = inode_ctime(inode);
	struct exec_lsm_val *v = bpf_map_lookup_elem(&verdicts, &k);
	if (v && v->ctime == ctime && v->verdict != EXEC_LSM_NONE) {
		if (allows(v->verdict, script))
			return 0;
		send(file, EXEC_LSM_REFUSED, hook, EXEC_LSM_RULE, &k, ctime, with_path);
		return -EPERM;
	}
	/* an earlier NONE would end this wait before its own answer */
	if (v && v->verdict == EXEC_LSM_NONE)
		bpf_map_delete_elem(&verdicts, &k);
	/* Unknown: ask, and wait for the answer. */
	if (!send(file, EXEC_LSM_REQUEST, hook, 0, &k, ctime, with_path)) {
		send(file, EXEC_LSM_REFUSED, hook, EXEC_LSM_NOROOM, &k, ctime, with_path);
		return -EACCES;
	}
	if (__sync_fetch_and_add(&waiters, 1) >= max_waiters) {
		__sync_fetch_and_add(&waiters, -1);
		/* the request went up: the next try finds its verdict */
		send(file, EXEC_LSM_REFUSED, hook, EXEC_LSM_BUSY, &k, ctime, with_path);
		return -EACCES;
	}
	struct wait_ctx w = { .key = k, .ctime = ctime, .deadline = bpf_ktime_get_ns() + wait_ns };
	bpf_loop(WAIT_ITERATIONS, wait_one, &w, 0);
	__sync_fetch_and_add(&waiters, -1);
	if (allows(w.verdict, script))
		return 0;
	__u32 reason = !w.verdict ? EXEC_LSM_TIMEOUT
		       : w.verdict == EXEC_LSM_NONE ? EXEC_LSM_NONE_NOW : EXEC_LSM_RULE;
	send(file, EXEC_LSM_REFUSED, hook, reason, &k, ctime, with_path);
	return reason == EXEC_LSM_RULE ? -EPERM : -EACCES;
}

SEC("lsm.s/bprm_check_security")
int BPF_PROG(exec_bprm, struct linux_binprm *bprm, int ret)
{
	if (ret)
		return ret;
	/* the file's first bytes, read by the kernel for the binfmts */
	bool script = bprm->buf[0] == '#' && bprm->buf[1] == '!';
	return check(bprm->file, EXEC_LSM_BPRM, script, true);
}

SEC("lsm.s/mmap_file")
int BPF_PROG(exec_mmap, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	if (ret)
		return ret;
	if (!file || !(prot & PROT_EXEC))
		return 0;
	return check(file, EXEC_LSM_MMAP, false, true);
}

SEC("lsm/file_mprotect")
int BPF_PROG(exec_mprotect, struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot,
	     int ret)
{
	if (ret)
		return ret;
	struct file *file = vma->vm_file;
	if (!file || !(prot & PROT_EXEC))
		return 0;
	return check(file, EXEC_LSM_MPROTECT, false, false);
}
