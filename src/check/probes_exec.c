/* probes_exec.c - the exec probes of `warden check`: ordinary programs run
 * by the ways an agent would use (a copy in the workspace, /tmp or /dev/shm,
 * the dynamic loader, a memfd, a /proc/self/root spelling), recorded to show
 * which of them the mounts allow. Each attempt runs in a forked child with
 * its stdio on /dev/null; the child's exit status tells that it ran. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "probe_groups.h"
#include "probe_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* Fork and exec (a path, or an fd when fd >= 0) with stdio on /dev/null.
 * Returns 0 with the exit status, or the errno of the failed exec. */
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
			fexecve(fd, argv, envp);
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
