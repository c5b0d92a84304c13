/* probes_exec.c - the exec probes of `warden check`. Ordinary programs run
 * the ways an agent would (a copy in the workspace, /tmp or /dev/shm, the
 * dynamic loader, a memfd, a /proc/self/root spelling): recorded, to show
 * which of them the mounts allow. And the check's denied bait (a marked copy
 * of true, and a marked script, whose SHA-256s the check adds to the
 * session's `exec deny`) run by each way around a rule by content: these
 * hold only when the exec is refused with EACCES. Each attempt runs in a
 * forked child with its stdio on /dev/null; the exec's errno comes back on a
 * close-on-exec pipe, and an exit status 0 is the program having run (the
 * bait is true: it does nothing else). */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "probe_groups.h"
#include "probe_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* Fork and exec (a path, or an fd when fd >= 0, by execveat(AT_EMPTY_PATH))
 * with stdio on /dev/null. Returns 0 with the exit status, or the errno of
 * the failed exec. */
static int exec_child(const char *path, int fd, char *const argv[], int *status)
{
	int rfd, wfd;
	pid_t pid = fork_with_pipe(&rfd, &wfd);
	if (pid < 0)
		return errno;
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 1);
			dup2(dn, 2);
		}
		char *envp[] = { "PATH=/usr/bin:/bin", NULL };
		if (fd >= 0)
			syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
		else
			execve(path, argv, envp);
		int err = errno;
		ignore_result(write(wfd, &err, sizeof err));
		_exit(127);
	}
	int err = 0;
	if (child_report(rfd, pid, &err, status) == (ssize_t)sizeof err)
		return err ? err : EIO;
	return 0;
}

static void exec_result(struct probe_result *r, int err, int st, const char *what)
{
	if (err)
		denied(r, "%s (%s)", ename(err), what);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		allowed(r, "%s ran (exit 0)", what);
	else if (WIFEXITED(st))
		denied(r, "%s started but failed (exit %d)", what, WEXITSTATUS(st));
	else
		denied(r, "%s killed by signal %d", what, WTERMSIG(st));
}

/* Copy a file into a new one at dst (exclusive); 0 or errno. */
static int copy_to_fd(const char *src, int out)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno;
	char buf[65536];
	ssize_t n;
	int err = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write_all(out, buf, (size_t)n) < 0) {
			err = errno;
			break;
		}
	if (n < 0)
		err = errno;
	close(in);
	return err;
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (out < 0)
		return errno;
	int err = copy_to_fd(src, out);
	if (close(out) < 0 && !err)
		err = errno;
	if (err)
		unlink(dst);
	return err;
}

static const char *true_binary(void)
{
	return access("/usr/bin/true", X_OK) == 0 ? "/usr/bin/true" : "/bin/true";
}

/* The dynamic loader of this very binary (its PT_INTERP). */
static const char *loader_path(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	uintptr_t bias = 0;
	if (!ph)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			bias = (uintptr_t)ph - ph[i].p_vaddr;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return (const char *)(bias + ph[i].p_vaddr);
	return NULL;
}

/* ---- exec (recorded) -------------------------------------------------- */

static void exec_copy(struct probe_result *r, const char *dst)
{
	int err = copy_file(true_binary(), dst, 0755);
	if (err) {
		denied(r, "%s (copying %s)", ename(err), dst);
		return;
	}
	char *argv[] = { (char *)dst, NULL };
	int st = 0;
	err = exec_child(dst, -1, argv, &st);
	exec_result(r, err, st, dst);
	unlink(dst);
}

void p_exec_ws(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("%s/w-%s-true", c->ws, c->token);
	exec_copy(r, p);
}

void p_exec_tmp(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/tmp/w-%s-true", c->token);
	exec_copy(r, p);
}

void p_exec_shm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/dev/shm/w-%s-true", c->token);
	exec_copy(r, p);
}

void p_ldso(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	const char *ld = loader_path();
	if (!ld) {
		denied(r, "no dynamic loader known");
		return;
	}
	_cleanup_free_ char *p = xasprintf("/tmp/w-%s-ldso", c->token);
	int err = copy_file(true_binary(), p, 0644);
	if (err) {
		denied(r, "%s (copying %s)", ename(err), p);
		return;
	}
	char *argv[] = { (char *)ld, p, NULL };
	int st = 0;
	err = exec_child(ld, -1, argv, &st);
	_cleanup_free_ char *what = xasprintf("%s %s", ld, p);
	exec_result(r, err, st, what);
	unlink(p);
}

void p_memfd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int fd = memfd_create("warden-check", MFD_CLOEXEC);
	if (fd < 0) {
		denied(r, "memfd_create: %s", ename(errno));
		return;
	}
	int err = copy_to_fd(true_binary(), fd);
	if (err) {
		denied(r, "%s (filling the memfd)", ename(err));
		close(fd);
		return;
	}
	char *argv[] = { "true", NULL };
	int st = 0;
	err = exec_child(NULL, fd, argv, &st);
	exec_result(r, err, st, "execveat(memfd)");
	close(fd);
}

void p_exec_proc_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/proc/self/root%s", true_binary());
	char *argv[] = { p, NULL };
	int st = 0;
	int err = exec_child(p, -1, argv, &st);
	exec_result(r, err, st, p);
}

void p_exec_script(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("%s/w-%s-script.sh", c->ws, c->token);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
	if (fd < 0) {
		denied(r, "%s (writing %s)", ename(errno), p);
		return;
	}
	static const char script[] = "#!/bin/sh\nexit 0\n";
	write_all(fd, script, sizeof script - 1);
	close(fd);
	char *argv[] = { p, NULL };
	int st = 0;
	int err = exec_child(p, -1, argv, &st);
	exec_result(r, err, st, p);
	unlink(p);
}

/* ---- exec of the denied bait ------------------------------------------- */

/* The last argument of each attempt, so that the session's log names the
 * probe behind each refusal (true and sh ignore it). */
#define TAG_PREFIX "warden-check:"

/* The wall that refused an exec of the file at path with EACCES, as the
 * detail says it: a noexec mount refuses any program; where the mount
 * allows exec (an ordinary program runs there: the exec probes above), exec
 * control refused it by its content. */
static const char *wall_of(const char *path)
{
	struct statvfs sv;
	if (statvfs(path, &sv) < 0)
		return ", its mount unknown";
	return (sv.f_flag & ST_NOEXEC) ? ", noexec mount" : " by exec control (mount allows exec)";
}

/* A memfd has no mount flag; vm.memfd_noexec may refuse it by itself. */
static const char *memfd_wall(void)
{
	char v[16] = "";
	if (read_small_file("/proc/sys/vm/memfd_noexec", v, sizeof v, O_NONBLOCK) >= 0 && v[0] != '0' &&
	    v[0])
		return ", vm.memfd_noexec set";
	return " by exec control (a memfd)";
}

/* An attempt at the denied bait holds only when the exec was refused with
 * EACCES. It ran (exit 0), it started and failed, or the exec failed some
 * other way (the bait missing, a broken route): not shown refused, so the
 * row fails and says what happened. */
static void deny_result(struct probe_result *r, int err, int st, const char *what, const char *wall)
{
	if (err == EACCES)
		denied(r, "EACCES%s: %s", wall, what);
	else if (err)
		allowed(r, "not refused but %s: %s", ename(err), what);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		allowed(r, "ran (exit 0): %s", what);
	else if (WIFEXITED(st))
		allowed(r, "started, exit %d: %s", WEXITSTATUS(st), what);
	else
		allowed(r, "started, killed by signal %d: %s", WTERMSIG(st), what);
}

/* Exec prog (or fd, when >= 0) with the arguments argv0 [arg1] TAG. */
static void try_bait(struct probe_result *r, const struct probe *self, const char *prog, int fd,
		     const char *argv0, const char *arg1, const char *what, const char *wall)
{
	_cleanup_free_ char *tag = xasprintf(TAG_PREFIX "%s", self->name);
	char *argv[] = { (char *)argv0, (char *)(arg1 ? arg1 : tag), arg1 ? tag : NULL, NULL };
	int st = 0;
	int err = exec_child(prog, fd, argv, &st);
	deny_result(r, err, st, what, wall);
}

/* A runner started without the bait (by hand) tries nothing, and shows
 * nothing refused. */
static bool have_bait(struct probe_result *r, const char *bait, const char *opt)
{
	if (!bait)
		allowed(r, "nothing tried: no denied bait given (%s)", opt);
	return bait != NULL;
}

/* path relative to the workspace (the runner's cwd) when it lies there. */
static const char *ws_rel(const struct probe_ctx *c, const char *path)
{
	size_t l = strlen(c->ws);
	return strncmp(path, c->ws, l) == 0 && path[l] == '/' ? path + l + 1 : path;
}

/* A new file of the run in the workspace: "./w-TOKEN-deny-SUFFIX". */
static char *deny_file(const struct probe_ctx *c, const char *suffix)
{
	return xasprintf("./w-%s-deny-%s", c->token, suffix);
}

void p_deny_as_is(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (have_bait(r, c->exec_bait, "--exec-bait"))
		try_bait(r, self, c->exec_bait, -1, c->exec_bait, NULL, ws_rel(c, c->exec_bait),
			 wall_of(c->exec_bait));
}

/* A copy as cp makes it: by the kernel (copy_file_range, which shares the
 * extents where the file system can), by read and write where it cannot.
 * 0 or errno; nothing left behind on failure. */
static int copy_like_cp(const char *src, const char *dst)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno;
	_cleanup_close_ int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
	if (out < 0)
		return errno;
	ssize_t n;
	off_t done = 0;
	while ((n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0)) > 0)
		done += n;
	int err = n < 0 ? errno : 0;
	if (n < 0 && done == 0)
		err = copy_to_fd(src, out);
	if (err)
		unlink(dst);
	return err;
}

void p_deny_copy(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	_cleanup_free_ char *p = deny_file(c, "copy");
	int err = copy_like_cp(c->exec_bait, p);
	if (err == EROFS || err == EACCES) {
		/* a workspace the agent cannot write (`workspace read-only`):
		 * the copy it can make is in /tmp, and that one must be refused */
		free(p);
		p = xasprintf("/tmp/w-%s-deny-copy", c->token);
		err = copy_like_cp(c->exec_bait, p);
	}
	if (err) {
		denied(r, "copying into the workspace or /tmp: %s", ename(err));
		return;
	}
	try_bait(r, self, p, -1, p, NULL, p, wall_of(p));
	unlink(p);
}

void p_deny_rename(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	_cleanup_free_ char *p = deny_file(c, "renamed");
	if (rename(c->exec_bait, p) < 0) {
		denied(r, "rename: %s", ename(errno));
		return;
	}
	try_bait(r, self, p, -1, p, NULL, p, wall_of(p));
	rename(p, c->exec_bait); /* the later probes run it where it was */
}

void p_deny_hardlink(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	_cleanup_free_ char *p = deny_file(c, "hardlink");
	if (link(c->exec_bait, p) < 0) {
		denied(r, "link: %s", ename(errno));
		return;
	}
	try_bait(r, self, p, -1, p, NULL, p, wall_of(p));
	unlink(p);
}

void p_deny_symlink(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	_cleanup_free_ char *p = deny_file(c, "symlink");
	int made = symlink(c->exec_bait, p);
	if (made < 0 && (errno == EROFS || errno == EACCES)) { /* as for the copy: in /tmp */
		free(p);
		p = xasprintf("/tmp/w-%s-deny-symlink", c->token);
		made = symlink(c->exec_bait, p);
	}
	if (made < 0) {
		denied(r, "symlink in the workspace or /tmp: %s", ename(errno));
		return;
	}
	_cleanup_free_ char *what = xasprintf("%s -> %s", p, ws_rel(c, c->exec_bait));
	try_bait(r, self, p, -1, p, NULL, what, wall_of(c->exec_bait));
	unlink(p);
}

void p_deny_proc_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	_cleanup_free_ char *p = xasprintf("/proc/self/root%s", c->exec_bait);
	_cleanup_free_ char *what = xasprintf("/proc/self/root/.../%s", ws_rel(c, c->exec_bait));
	try_bait(r, self, p, -1, p, NULL, what, wall_of(c->exec_bait));
}

void p_deny_proc_fd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	/* close-on-exec: the kernel opens the path before it closes the fd */
	_cleanup_close_ int fd = open(c->exec_bait, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		allowed(r, "nothing tried: opening the bait: %s", ename(errno));
		return;
	}
	_cleanup_free_ char *p = xasprintf("/proc/self/fd/%d", fd);
	try_bait(r, self, p, -1, p, NULL, p, wall_of(c->exec_bait));
}

void p_deny_memfd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	_cleanup_close_ int fd = memfd_create("warden-bait", MFD_CLOEXEC);
	if (fd < 0) {
		denied(r, "memfd_create: %s", ename(errno));
		return;
	}
	int err = copy_to_fd(c->exec_bait, fd);
	if (err) {
		allowed(r, "nothing tried: filling the memfd: %s", ename(err));
		return;
	}
	try_bait(r, self, NULL, fd, "warden-bait", NULL, "execveat(memfd, \"\", AT_EMPTY_PATH)",
		 memfd_wall());
}

void p_deny_ldso(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const known[] = { "/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1" };
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	const char *ld = loader_path();
	for (size_t i = 0; i < ARRAY_LEN(known) && (!ld || access(ld, X_OK) != 0); i++)
		ld = known[i];
	if (!ld || access(ld, X_OK) != 0) {
		denied(r, "skipped: no dynamic loader here");
		return;
	}
	const char *rel = ws_rel(c, c->exec_bait);
	_cleanup_free_ char *prog = rel[0] == '/' ? xstrdup(rel) : xasprintf("./%s", rel);
	_cleanup_free_ char *what = xasprintf("%s %s", ld, prog);
	try_bait(r, self, ld, -1, ld, prog, what, wall_of(ld));
}

void p_deny_script(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_script, "--exec-script"))
		return;
	const char *script = ws_rel(c, c->exec_script);
	_cleanup_free_ char *what = xasprintf("sh %s", script);
	try_bait(r, self, "/bin/sh", -1, "sh", script, what, wall_of("/bin/sh"));
}

/* The whole of a small file into memory (malloc'ed, *len its size); NULL
 * with errno. */
static char *read_all(const char *path, size_t max, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		errno = EFBIG;
		return NULL;
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	ssize_t n;
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			free(buf);
			errno = err;
			return NULL;
		}
		got += (size_t)n;
	}
	*len = got;
	return buf;
}

/* The bait's bytes written anew at its path, as a download run again
 * would: a new file (a new inode, new times) with the same content. */
void p_deny_recreated(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!have_bait(r, c->exec_bait, "--exec-bait"))
		return;
	size_t len = 0;
	_cleanup_free_ char *bytes = read_all(c->exec_bait, 64u << 20, &len);
	if (!bytes) {
		allowed(r, "nothing tried: reading the bait: %s", ename(errno));
		return;
	}
	if (unlink(c->exec_bait) < 0) {
		denied(r, "unlink: %s", ename(errno));
		return;
	}
	int fd = open(c->exec_bait, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
	if (fd < 0 || write_all(fd, bytes, len) < 0) {
		denied(r, "writing it anew: %s", ename(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	_cleanup_free_ char *what = xasprintf("%s (written anew)", ws_rel(c, c->exec_bait));
	try_bait(r, self, c->exec_bait, -1, c->exec_bait, NULL, what, wall_of(c->exec_bait));
}
