/* probes_proc.c - the process and kernel probes of `warden check` (other
 * processes, namespaces, mounts, privileged syscalls and ioctls, setuid and
 * capabilities). Privileged calls get arguments that fail harmlessly after
 * the permission check, or run in a forked child that exits at once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "probe_groups.h"
#include "probe_util.h"

#define W_BPF_PROG_LOAD 5
#define W_KEYCTL_GET_KEYRING_ID 0
#define W_KEY_SPEC_SESSION_KEYRING (-3)
#define W_UFFD_USER_MODE_ONLY 1
#define W_FSOPEN_CLOEXEC 1
/* kexec_load flags that no kernel accepts: an unknown flag bit and an
 * unknown architecture, so the call ends in EINVAL after the permission
 * check and can never load or unload an image. */
#define W_KEXEC_INVALID_FLAGS 0xABCD8000UL

struct w_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* ---- helpers ---------------------------------------------------------- */

/* A privileged call: refused (EPERM, EACCES, ENOSYS) or let through to the
 * kernel, which then failed it harmlessly (or it succeeded). */
static void syscall_result(struct probe_result *r, long ret, int err, const char *ok)
{
	if (ret >= 0)
		allowed(r, "%s", ok);
	else if (err == EPERM || err == EACCES || err == ENOSYS)
		denied_errno(r, err);
	else
		allowed(r, "%s: past the permission check", ename(err));
}

/* Run fn in a forked child that exits right after; 0 or the errno it saw. */
typedef int child_fn(const struct probe_ctx *c);
static int in_child(child_fn *fn, const struct probe_ctx *c)
{
	int rfd, wfd;
	pid_t pid = fork_with_pipe(&rfd, &wfd);
	if (pid < 0)
		return errno;
	if (pid == 0) {
		int err = fn(c) < 0 ? errno : 0;
		ignore_result(write(wfd, &err, sizeof err));
		_exit(0);
	}
	int err = EIO, st;
	if (child_report(rfd, pid, &err, &st) != (ssize_t)sizeof err)
		err = EIO;
	return err;
}

/* ---- process and kernel ----------------------------------------------- */

void p_ptrace(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* a probe that cannot set itself up tried nothing: it fails, as
	 * in_child's probes do, rather than hold */
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		allowed(r, "not tried: pipe: %s", ename(errno));
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		allowed(r, "not tried: fork: %s", ename(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) { /* our own child: waits until the parent closes the pipe */
		char b;
		close(p[1]);
		ignore_result(read(p[0], &b, 1));
		_exit(0);
	}
	close(p[0]);
	long ret = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
	int err = errno;
	syscall_result(r, ret, err, "attached to a child process");
	kill(pid, SIGKILL);
	close(p[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void p_process_vm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char src[16] = "warden", dst[16] = "";
	struct iovec local = { dst, sizeof dst }, remote = { src, sizeof src };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	syscall_result(r, n, errno, "read process memory");
}

void p_signal_host(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->host_pid <= 0) {
		denied(r, "no host pid given");
		return;
	}
	if (kill(c->host_pid, 0) < 0) {
		denied_errno(r, errno);
		return;
	}
	unsigned long long st;
	if (proc_starttime(c->host_pid, &st) && st != c->host_start)
		denied(r, "pid %d is a sandbox process, not the host's", (int)c->host_pid);
	else
		allowed(r, "signal 0 delivered to host pid %d", (int)c->host_pid);
}

void p_host_processes(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->host_start) { /* without it every process would pass for the sandbox's */
		denied(r, "no host start time given");
		return;
	}
	DIR *d = opendir("/proc");
	if (!d) {
		denied_errno(r, errno);
		return;
	}
	size_t total = 0, older = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		total++;
		unsigned long long st;
		/* Started before the check itself: not one of the sandbox's. */
		if (proc_starttime((pid_t)pid, &st) && st < c->host_start)
			older++;
	}
	closedir(d);
	if (older)
		allowed(r, "%zu of %zu visible processes predate the check", older, total);
	else
		denied(r, "only the sandbox's %zu processes", total);
}

static int child_unshare_user(const struct probe_ctx *c) { return unshare(CLONE_NEWUSER); }
static int child_unshare_mount(const struct probe_ctx *c) { return unshare(CLONE_NEWNS); }
static int child_unshare_net(const struct probe_ctx *c) { return unshare(CLONE_NEWNET); }
static int child_chroot(const struct probe_ctx *c) { return chroot("."); }

static int child_setns(const struct probe_ctx *c)
{
	/* Re-join our own UTS namespace: a no-op when allowed. Without
	 * /proc's namespace file, by a pidfd of our own (Linux 5.8), so that
	 * setns itself is what answers, not the open. */
	int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0)
		return -1;
	return setns(fd, CLONE_NEWUTS);
}

static void child_probe(struct probe_result *r, child_fn *fn, const struct probe_ctx *c, const char *ok)
{
	int err = in_child(fn, c);
	syscall_result(r, err ? -1 : 0, err, ok);
}

void p_userns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_unshare_user, c, "new user namespace");
}

void p_mountns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_unshare_mount, c, "new mount namespace");
}

void p_netns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_unshare_net, c, "new network namespace");
}

void p_chroot(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_chroot, c, "chroot (in a child)");
}

void p_setns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_setns, c, "setns (own namespace, in a child)");
}

static void clone_result(struct probe_result *r, long pid, int err, const char *ok)
{
	if (pid > 0)
		while (waitpid((pid_t)pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	syscall_result(r, pid, err, ok);
}

void p_clone_newuser(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	fflush(stdout);
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(0);
	clone_result(r, pid, errno, "clone into a new user namespace");
}

void p_clone3(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	struct w_clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	fflush(stdout);
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0)
		_exit(0);
	clone_result(r, pid, errno, "clone3 into a new user namespace");
}

void p_mount(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* MS_MOVE of a source that never exists: past the permission check it
	 * fails with ENOENT, and nothing can be moved. */
	_cleanup_free_ char *src = xasprintf("/nonexistent-warden-check-%s", c->token);
	long ret = mount(src, "/", NULL, MS_MOVE, NULL);
	syscall_result(r, ret, errno, "mount");
}

void p_mount_api(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* A file system context only; nothing is created or mounted. */
	long fd = syscall(SYS_fsopen, "tmpfs", W_FSOPEN_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		close((int)fd);
	syscall_result(r, fd, err, "fsopen(tmpfs) gave a context");
}

void p_pivot_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/nonexistent-warden-check-%s", c->token);
	long ret = syscall(SYS_pivot_root, p, p);
	syscall_result(r, ret, errno, "pivot_root");
}

void p_bpf(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_bpf, W_BPF_PROG_LOAD, NULL, 0);
	syscall_result(r, ret, errno, "bpf");
}

void p_io_uring(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_io_uring_setup, 1, NULL);
	int err = errno;
	if (ret >= 0)
		close((int)ret);
	syscall_result(r, ret, err, "io_uring");
}

void p_perf(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	int err = errno;
	if (ret >= 0)
		close((int)ret);
	syscall_result(r, ret, err, "perf_event_open");
}

void p_keyctl(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_keyctl, W_KEYCTL_GET_KEYRING_ID, W_KEY_SPEC_SESSION_KEYRING, 0);
	syscall_result(r, ret, errno, "session keyring reachable");
}

void p_userfaultfd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | W_UFFD_USER_MODE_ONLY);
	int err = errno;
	if (fd >= 0)
		close((int)fd);
	syscall_result(r, fd, err, "userfaultfd");
}

/* TIOCSTI on fd -1: a permitted call ends in EBADF; nothing is injected. */
void p_tiocsti(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char ch = 'x';
	long ret = syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI, &ch);
	syscall_result(r, ret, errno, "TIOCSTI");
}

void p_tiocsti_high(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char ch = 'x';
	/* The kernel reads the request as 32 bits; a filter comparing 64 would miss this. */
	long ret = syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI | 0x100000000UL, &ch);
	syscall_result(r, ret, errno, "TIOCSTI");
}

void p_tioclinux(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char sub = 0;
	long ret = syscall(SYS_ioctl, -1, (unsigned long)TIOCLINUX, &sub);
	syscall_result(r, ret, errno, "TIOCLINUX");
}

void p_kexec(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_kexec_load, 0UL, 0UL, NULL, W_KEXEC_INVALID_FLAGS);
	syscall_result(r, ret, errno, "kexec_load");
}

void p_finit_module(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_finit_module, -1, "", 0);
	syscall_result(r, ret, errno, "finit_module");
}

void p_syslog(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	syscall_result(r, ret, errno, "kernel log reachable");
}

/* Bit 30 of the syscall number selects the x32 ABI on x86_64: a filter
 * that looks only at native numbers lets it by (kernels without x32 answer
 * ENOSYS themselves, which counts as refused). */
void p_x32(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
#ifdef __x86_64__
	long ret = syscall(0x40000000L | SYS_getpid);
	syscall_result(r, ret, errno, "getpid through the x32 ABI");
#else
	denied(r, "not x86_64");
#endif
}

void p_mknod(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	if (mknodat(AT_FDCWD, path, S_IFCHR | 0600, makedev(1, 3)) < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(path, r->dev);
	allowed(r, "made a character device (1:3) in the workspace");
}

/* The other way to a device node: a rename with RENAME_WHITEOUT leaves a
 * 0:0 character device where its source was. Both names removed after. */
void p_whiteout(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *from = xasprintf("%s/w-%s-whiteout", c->ws, c->token);
	_cleanup_free_ char *to = xasprintf("%s-moved", from);
	int fd = open(from, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		denied_errno(r, errno);
		return;
	}
	close(fd);
	long ret = syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_WHITEOUT);
	int err = errno;
	struct stat st;
	bool dev = ret == 0 && lstat(from, &st) == 0 && S_ISCHR(st.st_mode);
	if (dev)
		lstat_dev(from, r->dev);
	unlink(from);
	unlink(to);
	if (dev)
		allowed(r, "made a whiteout (a 0:0 character device) in the workspace");
	else if (ret == 0)
		denied(r, "the rename left no device node");
	else
		denied_errno(r, err);
}

/* Every way to a set-id mode: chmod, and a file made with one; the first
 * that leaves a set-id bit makes the probe allowed. */
void p_setid_mode(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = xasprintf("%s/w-%s-setid", c->ws, c->token);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	if (fd < 0) {
		denied_errno(r, errno);
		return;
	}
	close(fd);
	int err = 0;
	if (chmod(path, 04755) < 0)
		err = errno;
	_cleanup_free_ char *made = xasprintf("%s-new", path);
	fd = open(made, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 02755);
	if (fd >= 0)
		close(fd);
	else if (!err)
		err = errno;
	struct stat st;
	bool a = stat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID));
	bool b = stat(made, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID));
	unlink(made);
	unlink(path);
	if (a || b)
		allowed(r, "%s has mode %04o", a ? "chmod: the file" : "a new file",
			(unsigned)(st.st_mode & 07777));
	else
		denied_errno(r, err ? err : EPERM);
}

void p_setuid(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const bins[] = {
		"/usr/bin/su", "/usr/bin/sudo", "/usr/bin/passwd", "/usr/bin/mount", "/usr/bin/newgrp",
		"/usr/bin/chsh", "/bin/su", "/usr/bin/pkexec",
	};
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	const char *found = NULL;
	bool nosuid = false, root_owned = false;
	for (size_t i = 0; i < ARRAY_LEN(bins) && !found; i++) {
		struct stat st;
		struct statvfs sv;
		if (stat(bins[i], &st) < 0 || !(st.st_mode & S_ISUID))
			continue;
		found = bins[i];
		root_owned = st.st_uid == 0;
		nosuid = statvfs(bins[i], &sv) == 0 && (sv.f_flag & ST_NOSUID);
	}
	if (!found) {
		denied(r, "no setuid binary visible%s", nnp == 1 ? "; no_new_privs set" : "");
		return;
	}
	if (nnp != 1 && !nosuid && root_owned)
		allowed(r, "setuid-root %s would run with privilege", found);
	else
		denied(r, "%s: %s%s%s", found, nnp == 1 ? "no_new_privs set, " : "",
		       nosuid ? "mounted nosuid, " : "", root_owned ? "owned by root" : "owner unmapped");
}

void p_capabilities(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f) {
		denied(r, "/proc/self/status: %s", ename(errno));
		return;
	}
	unsigned long long eff = 0, prm = 0, amb = 0, bnd = 0;
	char line[256];
	while (fgets(line, sizeof line, f)) {
		sscanf(line, "CapEff: %llx", &eff);
		sscanf(line, "CapPrm: %llx", &prm);
		sscanf(line, "CapAmb: %llx", &amb);
		sscanf(line, "CapBnd: %llx", &bnd);
	}
	fclose(f);
	if (eff || prm || amb)
		allowed(r, "CapEff=%llx CapPrm=%llx CapAmb=%llx CapBnd=%llx", eff, prm, amb, bnd);
	else
		denied(r, "none held (CapBnd=%llx)", bnd);
}
