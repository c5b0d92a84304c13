/* seccomp.c - the syscall filter applied to everything in the sandbox (init
 * included): kernel attack surface and sandbox-escape primitives are refused,
 * and syscalls of foreign architectures too; so are the calls that would
 * leave something that hurts the host in the files the agent can write: a
 * mode with the setuid or setgid bit (chmod and its kin, a file created
 * with such a mode: open/openat/creat/mknod), and device nodes (mknod of a
 * character or block device, renameat2 with RENAME_WHITEOUT). openat2, whose mode the filter cannot see
 * (it sits in a struct), gets ENOSYS like clone3: libc and programs fall
 * back to openat. Refusals and every execve /
 * execveat go to the supervisor through a user-notification fd, so each is
 * logged: the supervisor answers a refusal with EPERM (the process lives) and
 * lets an exec continue. clone3 gets ENOSYS directly, a compatibility answer
 * (libc falls back to clone, whose flags the filter can see), not a denial.
 * Code mapped from files goes by the supervisor too, only where it needs
 * it: an mmap of a file with PROT_EXEC in `exec strict`, and with the exec
 * rules in the kernel (src/supervisor/exec/bpfexec.h) that mmap and each
 * mprotect/pkey_mprotect adding PROT_EXEC, whose files get their verdicts
 * before the call goes on.
 *
 * Two halves: the supervisor compiles the filter with libseccomp before it
 * clones init, which inherits the BPF program in its copy of the memory and
 * installs it as its last step. A filter compiled once is kept in warden's
 * cache directory and taken from there while nothing it is made from
 * changes (seccache.h). */
#include "sandbox.h"
#include "features.h"
#include "seccache.h"
#include "../common/sysnr.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h> /* RENAME_WHITEOUT */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Refused outright. Names unknown to this libseccomp/arch are skipped. */
static const char *const denied[] = {
	/* tracing and other processes' memory */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise",
	/* namespaces and the mount API */
	"setns", "mount", "umount", "umount2", "pivot_root", "chroot", "open_tree",
	"open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr",
	/* kernel attack surface */
	"bpf", "perf_event_open", "keyctl", "add_key", "request_key", "io_uring_setup",
	"io_uring_enter", "io_uring_register", "userfaultfd", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "acct", "swapon", "swapoff", "reboot",
	"syslog", "quotactl", "quotactl_fd", "lookup_dcookie", "nfsservctl", "uselib",
	"name_to_handle_at", "open_by_handle_at", "iopl", "ioperm", "vhangup",
	"settimeofday", "clock_settime", "clock_adjtime", "fanotify_init",
};

static const unsigned long ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static const unsigned long tty_inject[] = { TIOCSTI, TIOCLINUX };

/* The socket families a program in the sandbox may make: unix sockets, IP
 * (through the sandbox's own network namespace, to warden's proxy) and
 * netlink (libc's getaddrinfo asks the routes; the namespace's only).
 * The others are refused: AF_VSOCK is in no network namespace and reaches
 * the hypervisor and the host's vsock services past every wall; the rest
 * (AF_ALG, AF_XDP, AF_TIPC, AF_RDS, AF_KEY, AF_BLUETOOTH, AF_CAN, ...)
 * are kernel attack surface nothing in a sandbox needs. */
static bool family_allowed(unsigned long af)
{
	return af == AF_UNIX || af == AF_INET || af == AF_INET6 || af == AF_NETLINK;
}

/* A rule for each named syscall; names unknown to this libseccomp (and to
 * sysnr.h) or architecture are skipped. */
static int add_by_name(scmp_filter_ctx ctx, uint32_t action, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = sysnr(names[i]);
		if (nr < 0)
			continue;
		int r = seccomp_rule_add(ctx, action, nr, 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A syscall and the argument a flag word sits in. */
struct flag_arg {
	int nr;
	unsigned arg;
};

/* For each flag of `bits` and each syscall of `on`: a rule for calls whose
 * argument has that flag set. */
static int add_flag_rules(scmp_filter_ctx ctx, uint32_t action, const struct flag_arg *on,
			  size_t non, const unsigned long *bits, size_t nbits)
{
	for (size_t i = 0; i < nbits; i++)
		for (size_t j = 0; j < non; j++) {
			struct scmp_arg_cmp cmp = { .arg = on[j].arg, .op = SCMP_CMP_MASKED_EQ,
						    .datum_a = bits[i], .datum_b = bits[i] };
			int r = seccomp_rule_add_array(ctx, action, on[j].nr, 1, &cmp);
			if (r < 0)
				return r;
		}
	return 0;
}

#ifndef __NR_fchmodat2
#if defined(__x86_64__) || defined(__aarch64__)
#define __NR_fchmodat2 452 /* Linux 6.6; older headers and libseccomp lack it */
#endif
#endif

static const unsigned long setid_bits[] = { S_ISUID, S_ISGID };

/* The calls that take a mode, and where: refused when it has a set-id bit
 * (notefile.c's refused_mode says the same for the calls, which `audit
 * files` also notifies). The opens only when they create (O_CREAT,
 * O_TMPFILE). */
static int add_setid_rules(scmp_filter_ctx ctx, uint32_t action)
{
	struct flag_arg modes[] = {
		{ SCMP_SYS(chmod), 1 }, { SCMP_SYS(fchmod), 1 }, { SCMP_SYS(fchmodat), 2 },
		{ SCMP_SYS(creat), 1 }, { SCMP_SYS(mknod), 1 }, { SCMP_SYS(mknodat), 2 },
#ifdef __NR_fchmodat2
		{ __NR_fchmodat2, 2 },
#endif
	};
	int r = add_flag_rules(ctx, action, modes, ARRAY_LEN(modes), setid_bits,
			       ARRAY_LEN(setid_bits));
	if (r < 0)
		return r;
	static const unsigned long creating[] = { O_CREAT, O_TMPFILE };
	const struct { int nr; unsigned flags, mode; } opens[] = {
		{ SCMP_SYS(open), 1, 2 }, { SCMP_SYS(openat), 2, 3 },
	};
	for (size_t i = 0; i < ARRAY_LEN(opens); i++)
		for (size_t c = 0; c < ARRAY_LEN(creating); c++)
			for (size_t b = 0; b < ARRAY_LEN(setid_bits); b++) {
				struct scmp_arg_cmp cmp[2] = {
					{ .arg = opens[i].flags, .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = creating[c], .datum_b = creating[c] },
					{ .arg = opens[i].mode, .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = setid_bits[b], .datum_b = setid_bits[b] },
				};
				if ((r = seccomp_rule_add_array(ctx, action, opens[i].nr, 2, cmp)) < 0)
					return r;
			}
	/* device nodes: the file type in the mode */
	static const unsigned long devices[] = { S_IFCHR, S_IFBLK };
	const struct flag_arg mknods[] = { { SCMP_SYS(mknod), 1 }, { SCMP_SYS(mknodat), 2 } };
	for (size_t i = 0; i < ARRAY_LEN(mknods); i++)
		for (size_t d = 0; d < ARRAY_LEN(devices); d++) {
			struct scmp_arg_cmp cmp = { .arg = mknods[i].arg, .op = SCMP_CMP_MASKED_EQ,
						    .datum_a = S_IFMT, .datum_b = devices[d] };
			if ((r = seccomp_rule_add_array(ctx, action, mknods[i].nr, 1, &cmp)) < 0)
				return r;
		}
	/* and the device node a rename leaves with RENAME_WHITEOUT (a 0:0
	 * character device where the source was, overlayfs's whiteout):
	 * renameat2's flags (notefile.c's refused_mode says the same);
	 * RENAME_NOREPLACE and RENAME_EXCHANGE go on */
	static const unsigned long whiteout = RENAME_WHITEOUT;
	const struct flag_arg renames[] = { { SCMP_SYS(renameat2), 4 } };
	return add_flag_rules(ctx, action, renames, ARRAY_LEN(renames), &whiteout, 1);
}

/* Calls let through once the supervisor has seen them (like execs): each
 * of names, and the opens whose flags have one of open_bits. */
static int add_notified(scmp_filter_ctx ctx, const char *const *names, size_t n,
			const unsigned long *open_bits, size_t nbits)
{
	const struct flag_arg opens[] = { { SCMP_SYS(open), 1 }, { SCMP_SYS(openat), 2 } };
	int r = add_by_name(ctx, SCMP_ACT_NOTIFY, names, n);
	if (r < 0)
		return r;
	return add_flag_rules(ctx, SCMP_ACT_NOTIFY, opens, ARRAY_LEN(opens), open_bits, nbits);
}

/* File actions on the record (all levels but `audit minimal`):
 * write-intent opens and the calls that add, remove or rename names, or
 * change a mode, an owner, a file's times or its extended attributes (an
 * ACL among them), go by the supervisor, which
 * predicts the walls' answer (src/supervisor/filewhy.h) and lets them
 * continue. A file's times set through a descriptor (utimensat with no
 * path: futimens, what touch, cp -p and tar call once per file, most
 * often on a file they have just opened for writing, recorded already)
 * only with `audit files` (fd_times): a notification costs each call a
 * round trip to the supervisor. */
static int add_file_audit(scmp_filter_ctx ctx, bool fd_times)
{
	static const char *const always[] = {
		"creat", "unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2",
		"link", "linkat", "symlink", "symlinkat", "truncate", "mkdir", "mkdirat",
		"mknod", "mknodat", "chmod", "fchmod", "fchmodat", "fchmodat2",
		"chown", "fchown", "lchown", "fchownat", "utime", "utimes", "futimesat",
		"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
		"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
	};
	static const unsigned long write_bits[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC };
	int r = add_notified(ctx, always, ARRAY_LEN(always), write_bits, ARRAY_LEN(write_bits));
	if (r < 0)
		return r;
	if (fd_times)
		return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(utimensat), 0);
	struct scmp_arg_cmp named = { .arg = 1, .op = SCMP_CMP_NE, .datum_a = 0 };
	return seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(utimensat), 1, &named);
}

/* The calls that make a name, for the workspace watch to tell the agent's
 * new files from the host's (src/workspace/wsmade.h): the supervisor notes
 * the secret names among them. A subset of add_file_audit's. */
static int add_made(scmp_filter_ctx ctx)
{
	static const char *const always[] = {
		"creat", "rename", "renameat", "renameat2", "link", "linkat",
		"symlink", "symlinkat", "mkdir", "mkdirat",
	};
	static const unsigned long creating[] = { O_CREAT };
	return add_notified(ctx, always, ARRAY_LEN(always), creating, ARRAY_LEN(creating));
}

/* socket() of a family not family_allowed: refused (recorded). The family
 * is an int to the kernel: only its low 32 bits are compared, or one with
 * high bits set would slip past. */
static int add_socket_families(scmp_filter_ctx ctx, uint32_t action)
{
	for (unsigned long af = 1; af < AF_MAX; af++) {
		if (family_allowed(af))
			continue;
		int r = seccomp_rule_add(ctx, action, SCMP_SYS(socket), 1,
					 SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffUL, af));
		if (r < 0)
			return r;
	}
	return 0;
}

/* The calls that make memory executable, and their protection's argument. */
static const unsigned long prot_exec = PROT_EXEC;

/* The filter as a libseccomp context (no_new_privs is seccomp_install's). */
static int build(scmp_filter_ctx *out, struct seccomp_kind k)
{
	const struct flag_arg exec_prot[] = {
		{ SCMP_SYS(mprotect), 2 },
#ifdef __NR_pkey_mprotect
		{ SCMP_SYS(pkey_mprotect), 2 },
#endif
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	int r;
	const uint32_t eperm = SCMP_ACT_NOTIFY; /* answered EPERM by the supervisor */
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_NOTIFY)) < 0)
		goto fail;
	if ((r = add_by_name(ctx, eperm, denied, ARRAY_LEN(denied))) < 0)
		goto fail;
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0)) < 0)
		goto fail;
	if ((r = add_setid_rules(ctx, eperm)) < 0)
		goto fail;
	const struct flag_arg ns_calls[] = { { SCMP_SYS(clone), 0 }, { SCMP_SYS(unshare), 0 } };
	if ((r = add_flag_rules(ctx, eperm, ns_calls, ARRAY_LEN(ns_calls), ns_flags,
				ARRAY_LEN(ns_flags))) < 0)
		goto fail;
	if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(unshare), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME))) < 0)
		goto fail;
	/* Memory is shared by the threads of a process, and by a vfork child
	 * with its parent (who waits); not by two processes that both run:
	 * then neither could tell whether an exec's path can change under it
	 * (src/supervisor/exec/execpath.h). */
	if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM | CLONE_THREAD | CLONE_VFORK,
					  CLONE_VM))) < 0)
		goto fail;
	if ((r = add_socket_families(ctx, eperm)) < 0)
		goto fail;
	/* ioctl's request is an unsigned int in the kernel: compare the low 32
	 * bits only, or a request with high bits set slips past. */
	for (size_t i = 0; i < ARRAY_LEN(tty_inject); i++)
		if ((r = seccomp_rule_add(ctx, eperm, SCMP_SYS(ioctl), 1,
					  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, tty_inject[i]))) < 0)
			goto fail;
	/* A process does not hide from the supervisor: making itself
	 * non-dumpable would keep its memory (an exec's path, a connect's
	 * address) from being read. Answered success, not done, recorded. */
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(prctl), 2,
				  SCMP_A0(SCMP_CMP_EQ, PR_SET_DUMPABLE, 0),
				  SCMP_A1(SCMP_CMP_EQ, 0, 0))) < 0)
		goto fail;
	/* Recorded, not refused here: execs, connects and datagrams sent to an
	 * address (the network namespace is what refuses a way out; unix
	 * sockets: unixconn.h). */
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execve), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(execveat), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 1,
				  SCMP_A4(SCMP_CMP_NE, 0, 0))) < 0)
		goto fail;
	/* `exec strict`: a file mapped as code (the loader's way, and a
	 * hand-written loader's) goes by the supervisor, which records the
	 * ones the kernel refuses (a file on a noexec mount): the kernel tells
	 * no one. Anonymous memory (a JIT's) is not asked about. The exec
	 * rules in the kernel (src/supervisor/exec/bpfexec.h): the same mmaps go
	 * by the supervisor, which puts the file's verdict in the kernel's map
	 * before the call goes on, so that the kernel never waits for one (exec_lsm.bpf.c). */
	if ((k.strict || k.kernel) &&
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mmap), 2,
				  SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
				  SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0))) < 0)
		goto fail;
	/* and memory made executable: the filter cannot tell a file's mapping
	 * from anonymous memory here, the supervisor looks (notify.c) */
	if (k.kernel && (r = add_flag_rules(ctx, SCMP_ACT_NOTIFY, exec_prot, ARRAY_LEN(exec_prot),
					  &prot_exec, 1)) < 0)
		goto fail;
	if (k.files ? (r = add_file_audit(ctx, k.fd_times)) < 0 : k.made && (r = add_made(ctx)) < 0)
		goto fail;
	/* binds: the supervisor notes the unix sockets the sandbox binds, so
	 * that the workspace watch masks only the host's (src/workspace/wswatch.h) */
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(bind), 0)) < 0)
		goto fail;
	*out = ctx;
	return 0;
fail:
	seccomp_release(ctx);
	return r;
}

struct seccomp_kind seccomp_kind_of(const struct policy *pol, bool workspace_ro)
{
	/* a read-only workspace: its refused writes are recorded (notefile.c);
	 * secret names to mask: the names the sandbox makes are noted
	 * (src/workspace/wsmade.h) */
	const struct policy_exec *x = &pol->exec;
	bool kernel = x->kernel == EXEC_KERNEL_ON ||
		      (x->kernel == EXEC_KERNEL_AUTO && caps_admin() && (x->deny.n || x->default_deny));
	bool files = !pol->audit_minimal || pol->write_ask.n || workspace_ro;
	return (struct seccomp_kind){ .files = files,
				      .fd_times = files && pol->audit_files && !pol->audit_minimal,
				      .strict = pol->exec.strict, .made = pol->mask.n > 0,
				      .kernel = kernel };
}

int seccomp_compile(struct sandbox_spec *s, struct werr *e)
{
	struct seccomp_kind k = seccomp_kind_of(s->policy, s->workspace_ro);
	k.kernel = s->exec_kernel;
	if (s->seccomp_prog && s->seccomp_kind.files == k.files && s->seccomp_kind.strict == k.strict &&
	    s->seccomp_kind.made == k.made && s->seccomp_kind.kernel == k.kernel &&
	    s->seccomp_kind.fd_times == k.fd_times)
		return 0;
	void *prog;
	size_t len;
	if (seccomp_prepare(k, s->cachedir, &prog, &len, e) < 0)
		return -1;
	free(s->seccomp_prog);
	s->seccomp_prog = prog;
	s->seccomp_len = len;
	s->seccomp_kind = k;
	return 0;
}

/* The filter of kind k compiled by libseccomp. */
static int compile(struct seccomp_kind k, void **out, size_t *out_len, struct werr *e)
{
	scmp_filter_ctx ctx;
	int r = build(&ctx, k);
	if (r < 0)
		return werr_set(e, -r, "seccomp: building the filter");
	/* libseccomp 2.5 exports to an fd only */
	_cleanup_close_ int mfd = memfd_create("warden-seccomp", MFD_CLOEXEC);
	if (mfd < 0) {
		seccomp_release(ctx);
		return werr_errno(e, "seccomp: memfd for the filter");
	}
	r = seccomp_export_bpf(ctx, mfd);
	seccomp_release(ctx);
	if (r < 0)
		return werr_set(e, -r, "seccomp: exporting the filter");
	struct stat st;
	if (fstat(mfd, &st) < 0 || st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
	    st.st_size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter)))
		return werr_set(e, EINVAL, "seccomp: the exported filter has an unexpected size");
	void *prog = xmalloc((size_t)st.st_size);
	if (pread(mfd, prog, (size_t)st.st_size, 0) != st.st_size) {
		free(prog);
		return werr_errno(e, "seccomp: reading the exported filter");
	}
	*out = prog;
	*out_len = (size_t)st.st_size / sizeof(struct sock_filter);
	return 0;
}

int seccomp_prepare(struct seccomp_kind k, const char *cachedir, void **prog, size_t *len,
		    struct werr *e)
{
	if (seccache_get(cachedir, k, prog, len))
		return 0;
	if (compile(k, prog, len, e) < 0)
		return -1;
	seccache_put(cachedir, k, *prog, *len);
	return 0;
}

int seccomp_install(const struct sandbox_spec *s, int *notify_fd, struct werr *e)
{
	if (!s->seccomp_prog || !s->seccomp_len)
		return werr_set(e, EINVAL, "seccomp: no filter compiled");
	struct sock_fprog fprog = { .len = (unsigned short)s->seccomp_len, .filter = s->seccomp_prog };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return werr_errno(e, "seccomp: setting no_new_privs");
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			      &fprog);
	if (fd < 0)
		return werr_errno(e, "seccomp: loading the filter (user notification needs kernel 5.0+)");
	*notify_fd = fd;
	return 0;
}
