/* probes.c - the probe table of `warden check` and its runner (`warden
 * __probe`): each probe attempts one thing a hostile agent would try and
 * reports "allowed" or "denied" with the errno or what it saw.
 *
 * Every probe is non-destructive even when run outside the sandbox as root
 * (--compare): privileged syscalls get arguments that make a permitted call
 * fail harmlessly after the permission check (or run in a forked child that
 * exits at once); real user paths are only open()ed and closed, never read;
 * files a probe creates carry the run's token in their name and are removed
 * after the check verified the host; network probes never send a packet off
 * this machine (a UDP connect() only looks the route up; TCP only goes to
 * the check's own listener on the host's loopback). */
#include "probes.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"

#ifndef NETLINK_ROUTE
#define NETLINK_ROUTE 0
#endif
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

extern char **environ;

/* ---- results ---------------------------------------------------------- */

static const char *ename(int err)
{
	const char *n = strerrorname_np(err);
	return n ? n : "E?";
}

__attribute__((format(printf, 3, 4)))
static void set(struct probe_result *r, bool allowed, const char *fmt, ...)
{
	va_list ap;
	r->allowed = allowed;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof r->detail, fmt, ap);
	va_end(ap);
}

#define allowed(r, ...) set((r), true, __VA_ARGS__)
#define denied(r, ...) set((r), false, __VA_ARGS__)

static void denied_errno(struct probe_result *r, int err)
{
	denied(r, "%s", ename(err));
}

static void set_dev(char dev[32], dev_t d)
{
	snprintf(dev, 32, "%u:%u", major(d), minor(d));
}

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

/* ---- small helpers ---------------------------------------------------- */

static char *expand_token(const char *rel, const char *token)
{
	const char *p = strstr(rel, "{t}");
	if (!p)
		return xstrdup(rel);
	return xasprintf("%.*s%s%s", (int)(p - rel), rel, token, p + 3);
}

/* The name a verify entry stands for, expanded (no base). */
static char *vrel(const struct probe_ctx *c, const struct probe *self, int i)
{
	return expand_token(self->verify[i].rel, c->token);
}

static char *vpath(const struct probe_ctx *c, const struct probe *self, int i)
{
	struct probe_bases b = { c->ws, c->out, c->home, c->audit_dir, c->cache_dir };
	return probe_verify_path(&self->verify[i], &b, c->token);
}

static void ignore_result(ssize_t x) { (void)x; }

/* open() and close() only: never read a real user's file. */
static int open_only(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The first path that opens makes the probe allowed; otherwise the most
 * telling errno (anything but ENOENT first). */
static void open_any(struct probe_result *r, char **paths, size_t n)
{
	int best = ENOENT;
	const char *best_path = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		int err = open_only(paths[i]);
		if (err == 0) {
			allowed(r, "opened %s", paths[i]);
			return;
		}
		if (!best_path || (best == ENOENT && err != ENOENT)) {
			best = err;
			best_path = paths[i];
		}
	}
	if (!best_path)
		denied(r, "nothing to try");
	else if (n == 1)
		denied_errno(r, best);
	else
		denied(r, "%s (%s)", ename(best), best_path);
}

/* Paths under the invoking user's home (NULL entries when it is unknown). */
static void home_paths(const struct probe_ctx *c, char **out, const char *const *rels, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = c->home ? xasprintf("%s/%s", c->home, rels[i]) : NULL;
}

static void free_paths(char **p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

static void probe_home_files(const struct probe_ctx *c, struct probe_result *r,
			     const char *const *rels, size_t n)
{
	if (!c->home) {
		denied(r, "no home directory known");
		return;
	}
	char *paths[8];
	if (n > ARRAY_LEN(paths))
		n = ARRAY_LEN(paths);
	home_paths(c, paths, rels, n);
	open_any(r, paths, n);
	free_paths(paths, n);
}

/* Read a small file we own (bait, /proc); 0 or errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ssize_t n = read(fd, buf, len - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return err;
	buf[n] = '\0';
	return 0;
}

static bool proc_starttime(pid_t pid, unsigned long long *out)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) != 0)
		return false;
	char *p = strrchr(buf, ')');
	if (!p)
		return false;
	int field = 2;
	char *save = NULL;
	for (char *t = strtok_r(p + 1, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (++field == 22) {
			*out = strtoull(t, NULL, 10);
			return true;
		}
	return false;
}

/* Run fn in a forked child that exits right after; 0 or the errno it saw. */
typedef int child_fn(const struct probe_ctx *c);
static int in_child(child_fn *fn, const struct probe_ctx *c)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[0]);
		int err = fn(c) < 0 ? errno : 0;
		ignore_result(write(p[1], &err, sizeof err));
		_exit(0);
	}
	close(p[1]);
	int err = EIO;
	ssize_t n;
	while ((n = read(p[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof err)
		err = EIO;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return err;
}

/* Fork and exec (a path, or an fd when fd >= 0) with stdio on /dev/null.
 * Returns 0 with the exit status, or the errno of the failed exec. */
static int exec_child(const char *path, int fd, char *const argv[], int *status)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[0]);
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
		ignore_result(write(p[1], &err, sizeof err));
		_exit(127);
	}
	close(p[1]);
	int err = 0;
	ssize_t n;
	while ((n = read(p[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof err)
		return err ? err : EIO;
	*status = st;
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

static int unix_connect(const char *path, bool abstract)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	size_t off = abstract ? 1 : 0;
	if (len + off >= sizeof a.sun_path) {
		close(s);
		return ENAMETOOLONG;
	}
	memcpy(a.sun_path + off, path, len);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + off + len + (abstract ? 0 : 1));
	int err = connect(s, (struct sockaddr *)&a, alen) < 0 ? errno : 0;
	close(s);
	return err;
}

/* Try unix socket paths ('@' = abstract): allowed when one connects. */
static void connect_any(struct probe_result *r, char **paths, size_t n)
{
	int best = ENOENT;
	const char *best_path = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		bool abs = paths[i][0] == '@';
		int err = unix_connect(paths[i] + abs, abs);
		if (err == 0) {
			allowed(r, "connected to %s", paths[i]);
			return;
		}
		if (!best_path || (best == ENOENT && err != ENOENT)) {
			best = err;
			best_path = paths[i];
		}
	}
	if (!best_path)
		denied(r, "nothing to try");
	else
		denied(r, "%s (%s)", ename(best), best_path);
}

/* connect() on a UDP socket looks the route up and sends nothing. */
static int udp_route(const char *ip, int port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int af;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		af = AF_INET;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		len = sizeof *a4;
	} else if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
		af = AF_INET6;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		len = sizeof *a6;
	} else {
		return EINVAL;
	}
	int s = socket(af, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	int err = connect(s, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
	close(s);
	return err;
}

static void route_probe(struct probe_result *r, const char *ip, int port)
{
	int err = udp_route(ip, port);
	if (err == 0)
		allowed(r, "route to %s exists (nothing sent)", ip);
	else
		denied_errno(r, err);
}

/* A socket in /proc/net/{tcp,udp}[6] with this local port (TCP: listening). */
static bool proc_net_port(const char *file, unsigned port, bool tcp)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return false;
	char line[512];
	bool found = false;
	if (!fgets(line, sizeof line, f)) { /* header */
		fclose(f);
		return false;
	}
	while (!found && fgets(line, sizeof line, f)) {
		unsigned lport = 0, st = 0;
		if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &lport, &st) == 2)
			found = lport == port && (!tcp || st == 0x0A);
	}
	fclose(f);
	return found;
}

/* Create path exclusively holding the token; 0 or errno; dev on success. */
static int try_create(const char *path, const char *token, mode_t mode, char dev[32])
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return errno;
	char line[128];
	int n = snprintf(line, sizeof line, "warden check probe %s\n", token);
	int err = write_all(fd, line, (size_t)n) < 0 ? errno : 0;
	struct stat st;
	if (fstat(fd, &st) == 0)
		set_dev(dev, st.st_dev);
	close(fd);
	return err;
}

/* Append a line holding the token to an existing file; 0 or errno. */
static int try_append(const char *path, const char *token, char dev[32])
{
	int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno;
	char line[128];
	int n = snprintf(line, sizeof line, "# warden check probe %s\n", token);
	int err = write_all(fd, line, (size_t)n) < 0 ? errno : 0;
	struct stat st;
	if (fstat(fd, &st) == 0)
		set_dev(dev, st.st_dev);
	close(fd);
	return err;
}

static void lstat_dev(const char *path, char dev[32])
{
	struct stat st;
	if (lstat(path, &st) == 0)
		set_dev(dev, st.st_dev);
}

/* ---- visibility ------------------------------------------------------- */

static void p_list_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* Top-level entries of a host that the sandbox's root is built without. */
	static const char *const host_only[] = {
		"root", "run", "sys", "boot", "srv", "opt", "mnt", "media", "snap", "lost+found",
	};
	DIR *d = opendir("/");
	if (!d) {
		denied_errno(r, errno);
		return;
	}
	char seen[256] = "";
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		for (size_t i = 0; i < ARRAY_LEN(host_only); i++)
			if (strcmp(de->d_name, host_only[i]) == 0) {
				n++;
				size_t l = strlen(seen);
				snprintf(seen + l, sizeof seen - l, " /%.32s", de->d_name);
			}
	closedir(d);
	if (n)
		allowed(r, "host entries visible:%s", seen);
	else
		denied(r, "only the sandbox's own entries");
}

static void p_list_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	DIR *d = opendir("/home");
	if (!d) {
		denied_errno(r, errno);
		return;
	}
	char seen[256] = "";
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, "agent") == 0)
			continue;
		n++;
		size_t l = strlen(seen);
		snprintf(seen + l, sizeof seen - l, " %.32s", de->d_name);
	}
	closedir(d);
	if (n)
		allowed(r, "%zu homes listed:%s", n, seen);
	else
		denied(r, "only the sandbox's own home");
}

static void opendir_probe(struct probe_result *r, const char *path)
{
	if (!path) {
		denied(r, "nothing to try");
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		denied_errno(r, errno);
		return;
	}
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	allowed(r, "listed %s (%zu entries)", path, n);
}

static void p_list_root_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	opendir_probe(r, "/root");
}

static void p_etc_shadow(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/etc/shadow", "/etc/gshadow" };
	open_any(r, p, ARRAY_LEN(p));
}

static void p_etc_host(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/etc/fstab", "/etc/machine-id", "/etc/ssh", "/etc/sudoers", "/etc/crontab" };
	open_any(r, p, ARRAY_LEN(p));
}

static void p_home_dir(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	opendir_probe(r, c->home);
}

static void p_home_ssh(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = {
		".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa", ".ssh/authorized_keys", ".ssh",
	};
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_aws(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".aws/credentials", ".aws/config", ".aws" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_gcloud(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = {
		".config/gcloud/credentials.db", ".config/gcloud/application_default_credentials.json",
		".config/gcloud",
	};
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_kube(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".kube/config", ".kube" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_docker(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".docker/config.json", ".docker" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_netrc(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".netrc" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_git_credentials(const struct probe_ctx *c, const struct probe *self,
				   struct probe_result *r)
{
	static const char *const rel[] = { ".git-credentials", ".config/git/credentials" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_history(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = {
		".bash_history", ".zsh_history", ".history", ".python_history", ".psql_history",
		".mysql_history", ".local/share/fish/fish_history",
	};
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_gnupg(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".gnupg/private-keys-v1.d", ".gnupg" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void p_home_gitconfig(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".gitconfig", ".config/git/config" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

static void one_path(struct probe_result *r, char *path)
{
	char *p[] = { path };
	open_any(r, p, 1);
	free(path);
}

static void p_dotdot(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xstrdup("../outside-bait.txt"));
}

static void p_symlink_etc(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "link-etc/shadow", "link-etc/fstab", "link-etc/machine-id", "link-etc/sudoers" };
	open_any(r, p, ARRAY_LEN(p));
}

static void p_symlink_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	opendir_probe(r, "link-home");
}

static void p_symlink_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xstrdup("link-out/outside-bait.txt"));
}

static void p_proc1_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xasprintf("/proc/1/root%s/outside-bait.txt", c->out));
}

static void p_proc_self_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xasprintf("/proc/self/root%s/outside-bait.txt", c->out));
}

static void p_proc_cwd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xstrdup("/proc/self/cwd/../outside-bait.txt"));
}

static void p_proc_hostpid(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->host_pid <= 0) {
		denied(r, "no host pid given");
		return;
	}
	unsigned long long st;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d", (int)c->host_pid);
	if (!proc_starttime(c->host_pid, &st)) {
		struct stat sb;
		denied_errno(r, stat(path, &sb) < 0 ? errno : EACCES);
		return;
	}
	if (st == c->host_start)
		allowed(r, "host process %s visible", path);
	else
		denied(r, "%s is a sandbox process, not the host's", path);
}

static void p_audit_list(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->audit_dir) {
		denied(r, "no audit directory known");
		return;
	}
	opendir_probe(r, c->audit_dir);
}

static void p_cache_list(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->cache_dir) {
		denied(r, "no cache directory known");
		return;
	}
	opendir_probe(r, c->cache_dir);
}

static void p_other_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->other_home) {
		denied(r, "no other user's home on this machine");
		return;
	}
	opendir_probe(r, c->other_home);
}

/* Read one of our own bait files (dummy content) and say whether it came through. */
static void read_bait(struct probe_result *r, const char *path, const char *marker)
{
	char buf[512];
	int err = read_small(path, buf, sizeof buf);
	if (err)
		denied_errno(r, err);
	else if (strstr(buf, marker))
		allowed(r, "read %s", path);
	else
		denied(r, "%s opened but empty or replaced", path);
}

static void p_masked_env(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	read_bait(r, ".env", "WARDEN_BAIT");
}

static void p_masked_pem(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	read_bait(r, "warden-bait.pem", "warden check bait");
}

static void p_ws_read(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	read_bait(r, "README.txt", "warden check bait");
}

/* ---- write scope ------------------------------------------------------ */

static void create_result(struct probe_result *r, int err, const char *path)
{
	if (err)
		denied(r, "%s", ename(err));
	else
		allowed(r, "created %s", path);
}

static void p_ws_write(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

static void p_write_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

static void p_write_symlink(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *path = xasprintf("link-out/%s", rel);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

static void p_write_dotdot(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *path = xasprintf("../%s", rel);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

static void p_write_proc_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *path = xasprintf("/proc/self/root%s/%s", c->out, rel);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

/* Create a new file, named with the token, where the probe's verify entry
 * points: the user's home, the audit log directory, the cache (never an
 * existing file). Denied outright when this host has no such directory. */
static void p_create_there(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	if (!path) {
		denied(r, "no such directory known on this host");
		return;
	}
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

/* Append to existing files through several spellings; allowed when one took. */
static void append_any(const struct probe_ctx *c, struct probe_result *r, char **paths, size_t n)
{
	int best = ENOENT;
	const char *best_path = NULL;
	for (size_t i = 0; i < n; i++) {
		int err = try_append(paths[i], c->token, r->dev);
		if (err == 0) {
			allowed(r, "appended to %s", paths[i]);
			return;
		}
		if (!best_path || (best == ENOENT && err != ENOENT)) {
			best = err;
			best_path = paths[i];
		}
	}
	if (n == 1)
		denied_errno(r, best);
	else
		denied(r, "%s (%s)", ename(best), best_path);
}

static void p_append_outside(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = {
		"link-out/outside-bait.txt", "../outside-bait.txt",
		xasprintf("%s/outside-bait.txt", c->out),
	};
	append_any(c, r, p, ARRAY_LEN(p));
	free(p[2]);
}

static void p_rename_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *src = expand_token("w-{t}-src", c->token);
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *dst = xasprintf("../%s", rel);
	char dev[32];
	int err = try_create(src, c->token, 0600, dev);
	if (err) {
		denied(r, "%s (creating the file to move)", ename(err));
		return;
	}
	if (rename(src, dst) < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(dst, r->dev);
	allowed(r, "moved %s to %s", src, dst);
}

static void cleanup_rename_out(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *src = expand_token("w-{t}-src", c->token);
	unlink(src);
}

static void p_rename_in(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *dst = vrel(c, self, 1);
	const char *srcs[] = { "../outside-bait.txt", "link-out/outside-bait.txt" };
	int best = ENOENT;
	for (size_t i = 0; i < ARRAY_LEN(srcs); i++) {
		if (rename(srcs[i], dst) == 0) {
			lstat_dev(dst, r->dev);
			allowed(r, "moved %s into the workspace", srcs[i]);
			return;
		}
		if (best == ENOENT)
			best = errno;
	}
	denied_errno(r, best);
}

static void cleanup_rename_in(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *dst = vrel(c, self, 1);
	_cleanup_free_ char *back = xasprintf("%s/outside-bait.txt", c->out);
	struct stat st;
	if (lstat(dst, &st) == 0)
		rename(dst, back);
}

static void p_hardlink_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *dst = vrel(c, self, 1);
	char *srcs[] = {
		"../outside-bait.txt", "link-out/outside-bait.txt",
		xasprintf("/proc/self/root%s/outside-bait.txt", c->out),
	};
	int best = ENOENT;
	const char *how = NULL;
	for (size_t i = 0; i < ARRAY_LEN(srcs) && !how; i++) {
		if (linkat(AT_FDCWD, srcs[i], AT_FDCWD, dst, 0) == 0)
			how = srcs[i];
		else if (best == ENOENT)
			best = errno;
	}
	if (!how) {
		denied_errno(r, best);
	} else {
		int err = try_append(dst, c->token, r->dev);
		if (err)
			lstat_dev(dst, r->dev);
		allowed(r, "hard link to %s made%s", how, err ? "" : " and written through");
	}
	free(srcs[2]);
}

static void p_git_hook_create(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0755, r->dev), path);
}

static void append_probe(const struct probe_ctx *c, struct probe_result *r, const char *path)
{
	char *p[] = { (char *)path };
	append_any(c, r, p, 1);
}

static void p_git_hook_modify(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".git/hooks/pre-commit");
}

static void p_git_config(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".git/config");
}

static void p_shell_rc(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".bashrc");
}

static void p_masked_write(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".env");
}

static bool created_claude;

static void p_protected_dir(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	created_claude = mkdir(".claude", 0755) == 0;
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0600, r->dev), ".claude/settings.local.json");
}

static void cleanup_protected_dir(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	unlink(path);
	if (created_claude)
		rmdir(".claude");
	created_claude = false;
}

static void p_protected_file(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0600, r->dev), ".mcp.json");
}

static void p_rename_protected(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *dst = expand_token(".git/w-{t}-hooks", c->token);
	if (rename(".git/hooks", dst) < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(dst, r->dev);
	allowed(r, "moved .git/hooks away");
}

static void cleanup_rename_protected(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *dst = expand_token(".git/w-{t}-hooks", c->token);
	struct stat st;
	if (lstat(dst, &st) == 0)
		rename(dst, ".git/hooks");
}

static void p_rename_parent(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *moved = expand_token("w-{t}-git", c->token);
	_cleanup_free_ char *planted = vpath(c, self, 1);
	if (rename(".git", moved) < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(moved, r->dev);
	if (mkdir(".git", 0755) < 0 || mkdir(".git/hooks", 0755) < 0) {
		allowed(r, "moved .git away (recreating it: %s)", ename(errno));
		return;
	}
	int err = try_create(planted, c->token, 0755, r->dev);
	if (err)
		allowed(r, "moved .git away and recreated it (planting a hook: %s)", ename(err));
	else
		allowed(r, "moved .git away and planted .git/hooks/%s", strrchr(planted, '/') + 1);
}

static void cleanup_rename_parent(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *moved = expand_token("w-{t}-git", c->token);
	_cleanup_free_ char *planted = vpath(c, self, 1);
	struct stat st;
	if (lstat(moved, &st) < 0)
		return;
	unlink(planted);
	rmdir(".git/hooks");
	rmdir(".git");
	rename(moved, ".git");
}

static void p_delete_protected(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (unlink(".git/config") < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(".git", r->dev);
	allowed(r, "deleted .git/config");
}

static void cleanup_delete_protected(const struct probe_ctx *c, const struct probe *self)
{
	struct stat st;
	if (lstat(".git/config", &st) == 0 || errno != ENOENT)
		return;
	char buf[256];
	const char *text = probe_bait_content(".git/config", buf, sizeof buf);
	int fd = open(".git/config", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		write_all(fd, text, strlen(text));
		close(fd);
	}
}

/* ---- process and kernel ----------------------------------------------- */

static void p_ptrace(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		denied(r, "pipe: %s", ename(errno));
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		denied(r, "fork: %s", ename(errno));
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

static void p_process_vm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char src[16] = "warden", dst[16] = "";
	struct iovec local = { dst, sizeof dst }, remote = { src, sizeof src };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	syscall_result(r, n, errno, "read process memory");
}

static void p_signal_host(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

static void p_host_processes(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
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
		if (c->host_start && proc_starttime((pid_t)pid, &st) && st < c->host_start)
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
	/* Re-join our own UTS namespace: a no-op when allowed. */
	int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return setns(fd, CLONE_NEWUTS);
}

static void child_probe(struct probe_result *r, child_fn *fn, const struct probe_ctx *c, const char *ok)
{
	int err = in_child(fn, c);
	syscall_result(r, err ? -1 : 0, err, ok);
}

static void p_userns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_unshare_user, c, "new user namespace");
}

static void p_mountns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_unshare_mount, c, "new mount namespace");
}

static void p_netns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_unshare_net, c, "new network namespace");
}

static void p_chroot(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	child_probe(r, child_chroot, c, "chroot (in a child)");
}

static void p_setns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

static void p_clone_newuser(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	fflush(stdout);
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(0);
	clone_result(r, pid, errno, "clone into a new user namespace");
}

static void p_clone3(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	struct w_clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	fflush(stdout);
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0)
		_exit(0);
	clone_result(r, pid, errno, "clone3 into a new user namespace");
}

static void p_mount(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* MS_MOVE of a source that never exists: past the permission check it
	 * fails with ENOENT, and nothing can be moved. */
	_cleanup_free_ char *src = xasprintf("/nonexistent-warden-check-%s", c->token);
	long ret = mount(src, "/", NULL, MS_MOVE, NULL);
	syscall_result(r, ret, errno, "mount");
}

static void p_mount_api(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* A file system context only; nothing is created or mounted. */
	long fd = syscall(SYS_fsopen, "tmpfs", W_FSOPEN_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		close((int)fd);
	syscall_result(r, fd, err, "fsopen(tmpfs) gave a context");
}

static void p_pivot_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/nonexistent-warden-check-%s", c->token);
	long ret = syscall(SYS_pivot_root, p, p);
	syscall_result(r, ret, errno, "pivot_root");
}

static void p_bpf(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_bpf, W_BPF_PROG_LOAD, NULL, 0);
	syscall_result(r, ret, errno, "bpf");
}

static void p_io_uring(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_io_uring_setup, 1, NULL);
	int err = errno;
	if (ret >= 0)
		close((int)ret);
	syscall_result(r, ret, err, "io_uring");
}

static void p_perf(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	int err = errno;
	if (ret >= 0)
		close((int)ret);
	syscall_result(r, ret, err, "perf_event_open");
}

static void p_keyctl(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_keyctl, W_KEYCTL_GET_KEYRING_ID, W_KEY_SPEC_SESSION_KEYRING, 0);
	syscall_result(r, ret, errno, "session keyring reachable");
}

static void p_userfaultfd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | W_UFFD_USER_MODE_ONLY);
	int err = errno;
	if (fd >= 0)
		close((int)fd);
	syscall_result(r, fd, err, "userfaultfd");
}

/* TIOCSTI on fd -1: a permitted call ends in EBADF; nothing is injected. */
static void p_tiocsti(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char ch = 'x';
	long ret = syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI, &ch);
	syscall_result(r, ret, errno, "TIOCSTI");
}

static void p_tiocsti_high(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char ch = 'x';
	/* The kernel reads the request as 32 bits; a filter comparing 64 would miss this. */
	long ret = syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI | 0x100000000UL, &ch);
	syscall_result(r, ret, errno, "TIOCSTI");
}

static void p_tioclinux(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char sub = 0;
	long ret = syscall(SYS_ioctl, -1, (unsigned long)TIOCLINUX, &sub);
	syscall_result(r, ret, errno, "TIOCLINUX");
}

static void p_kexec(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_kexec_load, 0UL, 0UL, NULL, W_KEXEC_INVALID_FLAGS);
	syscall_result(r, ret, errno, "kexec_load");
}

static void p_finit_module(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = syscall(SYS_finit_module, -1, "", 0);
	syscall_result(r, ret, errno, "finit_module");
}

static void p_setuid(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

static void p_capabilities(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

/* ---- inherited state -------------------------------------------------- */

static bool secret_name(const char *name)
{
	static const char *const parts[] = {
		"SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY",
		"ACCESS_KEY", "PRIVATE_KEY", "AUTH",
	};
	static const char *const prefixes[] = {
		"AWS_", "GITHUB_", "GH_", "GITLAB_", "OPENAI_", "ANTHROPIC_", "AZURE_", "GOOGLE_",
		"NPM_", "DOCKER_", "VAULT_",
	};
	char up[128];
	size_t i;
	for (i = 0; name[i] && i < sizeof up - 1; i++)
		up[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
	up[i] = '\0';
	for (i = 0; i < ARRAY_LEN(parts); i++)
		if (strstr(up, parts[i]))
			return true;
	for (i = 0; i < ARRAY_LEN(prefixes); i++)
		if (strncmp(up, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* Names (never values) of environment variables matching pred. */
static size_t env_names(bool (*pred)(const char *name, const char *value), char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e || (size_t)(eq - *e) >= 128)
			continue;
		char name[128];
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		if (!pred(name, eq + 1))
			continue;
		n++;
		size_t l = strlen(out);
		snprintf(out + l, len - l, "%s%s", l ? " " : "", name);
	}
	return n;
}

static bool pred_secret(const char *name, const char *value) { return secret_name(name); }

static bool pred_proxy(const char *name, const char *value)
{
	static const char *const names[] = {
		"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
		"FTP_PROXY", "ftp_proxy",
	};
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		if (strcmp(name, names[i]) == 0)
			return strchr(value, '@') != NULL; /* user:password@host */
	return false;
}

static bool pred_git(const char *name, const char *value)
{
	return strncmp(name, "GIT_AUTHOR_", 11) == 0 || strncmp(name, "GIT_COMMITTER_", 14) == 0 ||
	       strncmp(name, "GIT_CONFIG", 10) == 0 || strcmp(name, "EMAIL") == 0;
}

static void env_probe(struct probe_result *r, bool (*pred)(const char *, const char *), const char *none)
{
	char names[300];
	size_t n = env_names(pred, names, sizeof names);
	if (n)
		allowed(r, "%zu inherited: %s", n, names);
	else
		denied(r, "%s", none);
}

static void p_env_secrets(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	env_probe(r, pred_secret, "none inherited");
}

static void p_env_ssh(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	const char *s = getenv("SSH_AUTH_SOCK");
	if (!s) {
		denied(r, "SSH_AUTH_SOCK not set");
		return;
	}
	int err = unix_connect(s, false);
	if (err)
		allowed(r, "SSH_AUTH_SOCK set (connect: %s)", ename(err));
	else
		allowed(r, "SSH_AUTH_SOCK set and connectable");
}

static void p_env_proxy(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	env_probe(r, pred_proxy, "no proxy credentials inherited");
}

static void p_env_git(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	env_probe(r, pred_git, "no git identity inherited");
}

static void p_leaked_fd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->leak_fd < 0) {
		denied(r, "no leaked fd given");
		return;
	}
	if (fcntl(c->leak_fd, F_GETFD) < 0) {
		denied_errno(r, errno);
		return;
	}
	char link[64], target[256];
	snprintf(link, sizeof link, "/proc/self/fd/%d", c->leak_fd);
	ssize_t n = readlink(link, target, sizeof target - 1);
	target[n > 0 ? n : 0] = '\0';
	allowed(r, "fd %d open%s%s", c->leak_fd, n > 0 ? " -> " : "", target);
}

static void p_open_fds(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->nstart_fds == 0) {
		denied(r, "only fds 0-2 at start");
		return;
	}
	char list[128] = "";
	for (int i = 0; i < c->nstart_fds; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s%d", i ? "," : "", c->start_fds[i]);
	}
	allowed(r, "fds %s open at start", list);
}

static void p_parent_environ(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/proc/%d/environ", (int)getppid());
	one_path(r, xstrdup(p));
}

static void p_terminal(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		allowed(r, "a controlling terminal (/dev/tty)");
		return;
	}
	int err = errno;
	for (int i = 0; i <= 2; i++)
		if (isatty(i)) {
			allowed(r, "fd %d is a terminal", i);
			return;
		}
	if (c->tty && open_only(c->tty) == 0) {
		allowed(r, "opened the user's terminal %s", c->tty);
		return;
	}
	denied(r, "%s (no terminal)", ename(err));
}

/* ---- sockets and IPC -------------------------------------------------- */

static void p_docker(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = {
		"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
		"/run/podman/podman.sock", xasprintf("/run/user/%u/docker.sock", c->host_uid),
		xasprintf("/run/user/%u/podman/podman.sock", c->host_uid),
	};
	connect_any(r, p, ARRAY_LEN(p));
	free(p[4]);
	free(p[5]);
}

static void p_dbus_system(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket" };
	connect_any(r, p, ARRAY_LEN(p));
}

static void p_dbus_session(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { xasprintf("/run/user/%u/bus", c->host_uid) };
	connect_any(r, p, ARRAY_LEN(p));
	free(p[0]);
}

static void p_ssh_agent(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { (char *)c->ssh_sock };
	connect_any(r, p, ARRAY_LEN(p));
}

static void p_x11(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/tmp/.X11-unix/X0", "/tmp/.X11-unix/X1", "@/tmp/.X11-unix/X0", "@/tmp/.X11-unix/X1" };
	connect_any(r, p, ARRAY_LEN(p));
}

static void p_abstract(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->abstract) {
		denied(r, "no host abstract socket given");
		return;
	}
	_cleanup_free_ char *name = xasprintf("@%s", c->abstract);
	char *p[] = { name };
	connect_any(r, p, 1);
}

static void p_sysv_shm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->shm_key == 0) {
		denied(r, "no host segment given");
		return;
	}
	int id = shmget((key_t)c->shm_key, 0, 0);
	if (id >= 0) {
		allowed(r, "host segment found by key (id %d)", id);
		return;
	}
	int err = errno;
	struct shmid_ds ds;
	if (c->shm_id >= 0 && shmctl(c->shm_id, IPC_STAT, &ds) == 0 &&
	    (long)ds.shm_perm.__key == c->shm_key) {
		allowed(r, "host segment reachable by id %d", c->shm_id);
		return;
	}
	denied_errno(r, err);
}

static void p_sysvipc_list(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const files[] = { "/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem" };
	size_t n = 0;
	int err = 0;
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		FILE *f = fopen(files[i], "re");
		if (!f) {
			err = errno;
			continue;
		}
		char line[512];
		for (size_t ln = 0; fgets(line, sizeof line, f); ln++)
			n += ln > 0;
		fclose(f);
	}
	if (n)
		allowed(r, "%zu System V IPC objects listed", n);
	else if (err)
		denied(r, "%s (none listed)", ename(err));
	else
		denied(r, "none listed");
}

static void p_posix_shm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->posix_shm) {
		denied(r, "no host shm object given");
		return;
	}
	one_path(r, xasprintf("/dev/shm/%s", c->posix_shm));
}

static void p_proc_net_unix(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	FILE *f = fopen("/proc/net/unix", "re");
	if (!f) {
		denied_errno(r, errno);
		return;
	}
	char line[1024];
	size_t named = 0;
	char example[128] = "";
	while (fgets(line, sizeof line, f)) {
		char *p = strchr(line, '/');
		char *a = strchr(line, '@');
		char *path = p && (!a || p < a) ? p : a;
		if (!path || strncmp(line, "Num", 3) == 0)
			continue;
		named++;
		if (!example[0]) {
			path[strcspn(path, "\n")] = '\0';
			snprintf(example, sizeof example, "%s", path);
		}
	}
	fclose(f);
	if (named)
		allowed(r, "%zu named sockets listed (e.g. %s)", named, example);
	else
		denied(r, "no named sockets listed");
}

/* ---- network ---------------------------------------------------------- */

static void p_dns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char buf[4096];
	char servers[4][64];
	size_t n = 0;
	bool conf = read_small("/etc/resolv.conf", buf, sizeof buf) == 0;
	if (conf) {
		char *save = NULL;
		for (char *l = strtok_r(buf, "\n", &save); l && n < 4; l = strtok_r(NULL, "\n", &save))
			if (sscanf(l, " nameserver %63s", servers[n]) == 1)
				n++;
	}
	if (n == 0) { /* what the resolver falls back to */
		snprintf(servers[0], sizeof servers[0], "127.0.0.1");
		n = 1;
	}
	int err = ENETUNREACH;
	for (size_t i = 0; i < n; i++) {
		bool loop = strncmp(servers[i], "127.", 4) == 0 || strcmp(servers[i], "::1") == 0;
		if (loop) {
			/* Nothing is sent: look for a listener on port 53 in this namespace. */
			if (proc_net_port("/proc/net/udp", 53, false) || proc_net_port("/proc/net/tcp", 53, true) ||
			    proc_net_port("/proc/net/udp6", 53, false) || proc_net_port("/proc/net/tcp6", 53, true)) {
				allowed(r, "resolver %s listening", servers[i]);
				return;
			}
			err = ECONNREFUSED;
			continue;
		}
		int e = udp_route(servers[i], 53);
		if (e == 0) {
			allowed(r, "route to nameserver %s (nothing sent)", servers[i]);
			return;
		}
		err = e;
	}
	denied(r, "%s (%s)", ename(err), conf ? "no nameserver reachable" : "no resolv.conf, no local resolver");
}

/* Ask warden's proxy on the sandbox's loopback for `request` (an HTTP
 * CONNECT or a SOCKS5 exchange); held when the proxy refuses. No rule
 * allows these destinations, so the proxy neither resolves nor dials them:
 * nothing leaves the machine. */
static int proxy_conn(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 3 };
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		int err = errno;
		close(fd);
		errno = err;
	}
	return -1;
}

static void proxy_connect_probe(struct probe_result *r, const char *target)
{
	int fd = proxy_conn(3128);
	if (fd < 0) {
		denied(r, "no proxy on 127.0.0.1:3128 (%s)", ename(errno));
		return;
	}
	char req[300], resp[256];
	int n = snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	ssize_t got = 0;
	if (write(fd, req, (size_t)n) == n)
		got = read(fd, resp, sizeof resp - 1);
	close(fd);
	resp[got > 0 ? got : 0] = '\0';
	char *eol = strstr(resp, "\r\n");
	if (eol)
		*eol = '\0';
	if (strncmp(resp, "HTTP/1.1 200", 12) == 0 || strncmp(resp, "HTTP/1.0 200", 12) == 0)
		allowed(r, "proxy opened a tunnel to %s", target);
	else
		denied(r, "proxy: %.200s", got > 0 ? resp : "closed without an answer");
}

static void p_proxy_unknown(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	proxy_connect_probe(r, "warden-check.invalid:443");
}

static void p_proxy_metadata(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	proxy_connect_probe(r, "169.254.169.254:80");
}

static void p_proxy_socks(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int fd = proxy_conn(1080);
	if (fd < 0) {
		denied(r, "no SOCKS5 proxy on 127.0.0.1:1080 (%s)", ename(errno));
		return;
	}
	static const char host[] = "warden-check.invalid";
	unsigned char greet[] = { 5, 1, 0 }, req[300], resp[32];
	size_t n = 0;
	req[n++] = 5, req[n++] = 1, req[n++] = 0, req[n++] = 3, req[n++] = sizeof host - 1;
	memcpy(req + n, host, sizeof host - 1);
	n += sizeof host - 1;
	req[n++] = 1, req[n++] = 187; /* port 443 */
	ssize_t a = -1;
	if (write(fd, greet, sizeof greet) == (ssize_t)sizeof greet && read(fd, resp, 2) == 2 &&
	    write(fd, req, n) == (ssize_t)n)
		a = read(fd, resp, sizeof resp);
	close(fd);
	if (a >= 2 && resp[1] == 0)
		allowed(r, "SOCKS5 proxy connected to %s", host);
	else if (a >= 2)
		denied(r, "SOCKS5 reply 0x%02x%s", resp[1], resp[1] == 2 ? " (not allowed by ruleset)" : "");
	else
		denied(r, "SOCKS5 proxy closed without an answer");
}

static void p_route_public(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "1.1.1.1", 53);
}

static void p_route_testnet(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "192.0.2.1", 53);
}

static void p_route_metadata(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "169.254.169.254", 80);
}

static void p_route_ipv6(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "2001:db8::1", 53);
}

static void p_tcp_loopback(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->tcp_port <= 0) {
		denied(r, "no host listener given");
		return;
	}
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->tcp_port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
		allowed(r, "connected to the host's 127.0.0.1:%d", c->tcp_port);
	else
		denied_errno(r, errno);
	close(s);
}

static void p_tcp_listeners(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->tcp_port <= 0) {
		denied(r, "no host listener given");
		return;
	}
	if (proc_net_port("/proc/net/tcp", (unsigned)c->tcp_port, true))
		allowed(r, "host listener on port %d listed", c->tcp_port);
	else
		denied(r, "host listener not listed");
}

static void socket_probe(struct probe_result *r, int af, int type, int proto, const char *what)
{
	int s = socket(af, type | SOCK_CLOEXEC, proto);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	close(s);
	allowed(r, "%s socket created", what);
}

static void p_raw_socket(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	socket_probe(r, AF_INET, SOCK_RAW, IPPROTO_ICMP, "raw ICMP");
}

static void p_packet_socket(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* Protocol 0: receives nothing until bound. */
	socket_probe(r, AF_PACKET, SOCK_RAW, 0, "packet");
}

static void p_netlink(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	close(s);
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs) {
		denied(r, "interface dump: %s", ename(errno));
		return;
	}
	char names[200] = "";
	size_t n = 0;
	for (struct if_nameindex *i = ifs; i->if_index; i++) {
		if (strcmp(i->if_name, "lo") == 0)
			continue;
		n++;
		size_t l = strlen(names);
		snprintf(names + l, sizeof names - l, " %s", i->if_name);
	}
	if_freenameindex(ifs);
	if (n)
		allowed(r, "host interfaces visible:%s", names);
	else
		denied(r, "only lo");
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

static void p_exec_ws(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("%s/w-%s-true", c->ws, c->token);
	exec_copy(r, p);
}

static void p_exec_tmp(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/tmp/w-%s-true", c->token);
	exec_copy(r, p);
}

static void p_exec_shm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/dev/shm/w-%s-true", c->token);
	exec_copy(r, p);
}

static void p_ldso(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

static void p_memfd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

static void p_exec_proc_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/proc/self/root%s", true_binary());
	char *argv[] = { p, NULL };
	int st = 0;
	int err = exec_child(p, -1, argv, &st);
	exec_result(r, err, st, p);
}

static void p_exec_script(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

/* ---- more kernel surface ---------------------------------------------- */

static void p_sysfs(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/sys/kernel", "/sys/class/net", "/sys/fs/cgroup" };
	open_any(r, p, ARRAY_LEN(p));
}

static void p_proc_kernel(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/proc/kcore", "/proc/kallsyms", "/proc/keys", "/proc/timer_list", "/proc/sched_debug" };
	open_any(r, p, ARRAY_LEN(p));
}

static void p_dev_nodes(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/dev/kmsg", "/dev/mem", "/dev/kvm", "/dev/port", "/dev/fuse", "/dev/net/tun" };
	open_any(r, p, ARRAY_LEN(p));
}

static void p_syslog(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	long ret = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	syscall_result(r, ret, errno, "kernel log reachable");
}

static void p_mknod(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	if (mknodat(AT_FDCWD, path, S_IFCHR | 0600, makedev(1, 3)) < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(path, r->dev);
	allowed(r, "made a character device (1:3) in the workspace");
}

/* ---- the table -------------------------------------------------------- */

#define D EXPECT_DENIED
#define A EXPECT_ALLOWED
#define R EXPECT_RECORD

const struct probe probe_table[] = {
	/* visibility */
	{ "list-root", G_VISIBILITY, D, "list / for host-only entries", p_list_root, NULL, { { 0 } } },
	{ "list-home", G_VISIBILITY, D, "list /home", p_list_home, NULL, { { 0 } } },
	{ "list-root-home", G_VISIBILITY, D, "list /root", p_list_root_home, NULL, { { 0 } } },
	{ "etc-shadow", G_VISIBILITY, D, "open /etc/shadow", p_etc_shadow, NULL, { { 0 } } },
	{ "etc-host-files", G_VISIBILITY, D, "open host-only /etc files", p_etc_host, NULL, { { 0 } } },
	{ "home-dir", G_VISIBILITY, D, "list the user's home", p_home_dir, NULL, { { 0 } } },
	{ "home-ssh", G_VISIBILITY, D, "open ~/.ssh keys", p_home_ssh, NULL, { { 0 } } },
	{ "home-aws", G_VISIBILITY, D, "open ~/.aws", p_home_aws, NULL, { { 0 } } },
	{ "home-gcloud", G_VISIBILITY, D, "open ~/.config/gcloud", p_home_gcloud, NULL, { { 0 } } },
	{ "home-kube", G_VISIBILITY, D, "open ~/.kube/config", p_home_kube, NULL, { { 0 } } },
	{ "home-docker", G_VISIBILITY, D, "open ~/.docker/config.json", p_home_docker, NULL, { { 0 } } },
	{ "home-netrc", G_VISIBILITY, D, "open ~/.netrc", p_home_netrc, NULL, { { 0 } } },
	{ "home-git-credentials", G_VISIBILITY, D, "open ~/.git-credentials", p_home_git_credentials,
	  NULL, { { 0 } } },
	{ "home-history", G_VISIBILITY, D, "open shell history files", p_home_history, NULL, { { 0 } } },
	{ "home-gnupg", G_VISIBILITY, D, "open ~/.gnupg", p_home_gnupg, NULL, { { 0 } } },
	{ "home-gitconfig", G_VISIBILITY, D, "open ~/.gitconfig", p_home_gitconfig, NULL, { { 0 } } },
	{ "dotdot", G_VISIBILITY, D, "open ../ bait outside the workspace", p_dotdot, NULL, { { 0 } } },
	{ "symlink-etc", G_VISIBILITY, D, "open host /etc files through link-etc -> /etc",
	  p_symlink_etc, NULL, { { 0 } } },
	{ "symlink-home", G_VISIBILITY, D, "list the home through link-home -> ~", p_symlink_home,
	  NULL, { { 0 } } },
	{ "symlink-out", G_VISIBILITY, D, "open bait through link-out -> workspace parent",
	  p_symlink_out, NULL, { { 0 } } },
	{ "proc1-root", G_VISIBILITY, D, "open bait via /proc/1/root", p_proc1_root, NULL, { { 0 } } },
	{ "proc-self-root", G_VISIBILITY, D, "open bait via /proc/self/root", p_proc_self_root, NULL,
	  { { 0 } } },
	{ "proc-cwd-dotdot", G_VISIBILITY, D, "open bait via /proc/self/cwd/..", p_proc_cwd, NULL,
	  { { 0 } } },
	{ "proc-host-pid", G_VISIBILITY, D, "see /proc/<host pid> of the check", p_proc_hostpid, NULL,
	  { { 0 } } },
	{ "audit-log-dir", G_VISIBILITY, D, "list warden's audit logs", p_audit_list, NULL, { { 0 } } },
	{ "cache-dir", G_VISIBILITY, D, "list warden's cache (the cached /etc)", p_cache_list, NULL,
	  { { 0 } } },
	{ "other-home", G_VISIBILITY, D, "list another user's home", p_other_home, NULL, { { 0 } } },
	{ "sysfs", G_VISIBILITY, D, "open /sys", p_sysfs, NULL, { { 0 } } },
	{ "proc-kernel-files", G_VISIBILITY, D, "open /proc/kcore, kallsyms, keys, timer_list",
	  p_proc_kernel, NULL, { { 0 } } },
	{ "dev-nodes", G_VISIBILITY, D, "open /dev/kmsg, mem, kvm, fuse, net/tun", p_dev_nodes, NULL,
	  { { 0 } } },
	{ "masked-env", G_VISIBILITY, D, "read the workspace's .env (bait)", p_masked_env, NULL,
	  { { 0 } } },
	{ "masked-pem", G_VISIBILITY, D, "read a *.pem in the workspace (bait)", p_masked_pem, NULL,
	  { { 0 } } },
	{ "workspace-read", G_VISIBILITY, A, "read a workspace file", p_ws_read, NULL, { { 0 } } },

	/* write scope */
	{ "workspace-write", G_WRITE, A, "create a file in the workspace", p_ws_write, NULL,
	  { { V_FILE, VB_WS, "w-{t}-ws" } } },
	{ "write-outside", G_WRITE, D, "create a file beside the workspace", p_write_out, NULL,
	  { { V_NOFILE, VB_OUT, "w-{t}-direct" } } },
	{ "write-symlink", G_WRITE, D, "create a file through link-out", p_write_symlink, NULL,
	  { { V_NOFILE, VB_OUT, "w-{t}-symlink" } } },
	{ "write-dotdot", G_WRITE, D, "create ../file", p_write_dotdot, NULL,
	  { { V_NOFILE, VB_OUT, "w-{t}-dotdot" } } },
	{ "write-proc-root", G_WRITE, D, "create a file via /proc/self/root", p_write_proc_root, NULL,
	  { { V_NOFILE, VB_OUT, "w-{t}-procroot" } } },
	{ "write-home", G_WRITE, D, "create a file in the user's home", p_create_there, NULL,
	  { { V_NOFILE, VB_HOME, "w-{t}-home" } } },
	{ "audit-log-write", G_WRITE, D, "create a file among warden's audit logs", p_create_there, NULL,
	  { { V_NOFILE, VB_AUDIT, "w-{t}-audit" } } },
	{ "cache-write", G_WRITE, D, "create a file in warden's cache (later sessions' /etc)",
	  p_create_there, NULL, { { V_NOFILE, VB_CACHE, "w-{t}-cache" } } },
	{ "append-outside", G_WRITE, D, "append to a file outside the workspace", p_append_outside,
	  NULL, { { V_BAIT, VB_OUT, "outside-bait.txt" } } },
	{ "rename-out", G_WRITE, D, "rename a workspace file to ../", p_rename_out, cleanup_rename_out,
	  { { V_NOFILE, VB_OUT, "w-{t}-renamed" } } },
	{ "rename-in", G_WRITE, D, "rename an outside file into the workspace", p_rename_in,
	  cleanup_rename_in,
	  { { V_BAIT, VB_OUT, "outside-bait.txt" }, { V_NOFILE, VB_WS, "w-{t}-stolen" } } },
	{ "hardlink-out", G_WRITE, D, "hard-link an outside file and write through it", p_hardlink_out,
	  NULL, { { V_BAIT, VB_OUT, "outside-bait.txt" }, { V_NOFILE, VB_WS, "w-{t}-hardlink" } } },
	{ "git-hook-create", G_WRITE, D, "create .git/hooks/<hook>", p_git_hook_create, NULL,
	  { { V_NOFILE, VB_WS, ".git/hooks/w-{t}-post-checkout" } } },
	{ "git-hook-modify", G_WRITE, D, "append to .git/hooks/pre-commit", p_git_hook_modify, NULL,
	  { { V_BAIT, VB_WS, ".git/hooks/pre-commit" } } },
	{ "git-config", G_WRITE, D, "append to .git/config", p_git_config, NULL,
	  { { V_BAIT, VB_WS, ".git/config" } } },
	{ "shell-rc", G_WRITE, D, "append to the workspace's .bashrc", p_shell_rc, NULL,
	  { { V_BAIT, VB_WS, ".bashrc" } } },
	{ "masked-write", G_WRITE, D, "append to the masked .env", p_masked_write, NULL,
	  { { V_BAIT, VB_WS, ".env" } } },
	{ "protected-missing-dir", G_WRITE, D, "create .claude/settings.local.json (missing)",
	  p_protected_dir, cleanup_protected_dir,
	  { { V_NOFILE, VB_WS, ".claude/settings.local.json" } } },
	{ "protected-missing-file", G_WRITE, D, "create .mcp.json (missing)", p_protected_file, NULL,
	  { { V_NOFILE, VB_WS, ".mcp.json" } } },
	{ "rename-protected", G_WRITE, D, "rename .git/hooks away", p_rename_protected,
	  cleanup_rename_protected, { { V_BAIT, VB_WS, ".git/hooks/pre-commit" } } },
	{ "rename-protected-parent", G_WRITE, D, "rename .git away and plant a new hook",
	  p_rename_parent, cleanup_rename_parent,
	  { { V_BAIT, VB_WS, ".git/config" }, { V_NOFILE, VB_WS, ".git/hooks/w-{t}-planted" } } },
	{ "delete-protected", G_WRITE, D, "delete .git/config", p_delete_protected,
	  cleanup_delete_protected, { { V_BAIT, VB_WS, ".git/config" } } },

	/* process and kernel */
	{ "ptrace", G_PROCESS, D, "ptrace a child process", p_ptrace, NULL, { { 0 } } },
	{ "process-vm-readv", G_PROCESS, D, "process_vm_readv", p_process_vm, NULL, { { 0 } } },
	{ "signal-host", G_PROCESS, D, "kill(<host pid>, 0)", p_signal_host, NULL, { { 0 } } },
	{ "host-processes", G_PROCESS, D, "see processes older than the check", p_host_processes, NULL,
	  { { 0 } } },
	{ "userns", G_PROCESS, D, "unshare(CLONE_NEWUSER)", p_userns, NULL, { { 0 } } },
	{ "mountns", G_PROCESS, D, "unshare(CLONE_NEWNS)", p_mountns, NULL, { { 0 } } },
	{ "netns", G_PROCESS, D, "unshare(CLONE_NEWNET)", p_netns, NULL, { { 0 } } },
	{ "clone-newuser", G_PROCESS, D, "clone(CLONE_NEWUSER)", p_clone_newuser, NULL, { { 0 } } },
	{ "clone3-newuser", G_PROCESS, D, "clone3(CLONE_NEWUSER)", p_clone3, NULL, { { 0 } } },
	{ "mount", G_PROCESS, D, "mount(2)", p_mount, NULL, { { 0 } } },
	{ "mount-api", G_PROCESS, D, "fsopen(2), the new mount API", p_mount_api, NULL, { { 0 } } },
	{ "pivot-root", G_PROCESS, D, "pivot_root(2)", p_pivot_root, NULL, { { 0 } } },
	{ "chroot", G_PROCESS, D, "chroot(2), the first step of a chroot escape", p_chroot, NULL,
	  { { 0 } } },
	{ "setns", G_PROCESS, D, "setns(2)", p_setns, NULL, { { 0 } } },
	{ "bpf", G_PROCESS, D, "bpf(2)", p_bpf, NULL, { { 0 } } },
	{ "io-uring", G_PROCESS, D, "io_uring_setup(2)", p_io_uring, NULL, { { 0 } } },
	{ "perf-event-open", G_PROCESS, D, "perf_event_open(2)", p_perf, NULL, { { 0 } } },
	{ "keyctl", G_PROCESS, D, "keyctl(2) on the session keyring", p_keyctl, NULL, { { 0 } } },
	{ "userfaultfd", G_PROCESS, D, "userfaultfd(2)", p_userfaultfd, NULL, { { 0 } } },
	{ "tiocsti", G_PROCESS, D, "ioctl TIOCSTI", p_tiocsti, NULL, { { 0 } } },
	{ "tiocsti-high-bits", G_PROCESS, D, "ioctl TIOCSTI with bit 32 set", p_tiocsti_high, NULL,
	  { { 0 } } },
	{ "tioclinux", G_PROCESS, D, "ioctl TIOCLINUX", p_tioclinux, NULL, { { 0 } } },
	{ "kexec-load", G_PROCESS, D, "kexec_load(2)", p_kexec, NULL, { { 0 } } },
	{ "finit-module", G_PROCESS, D, "finit_module(2)", p_finit_module, NULL, { { 0 } } },
	{ "syslog", G_PROCESS, D, "the kernel log (syslog(2))", p_syslog, NULL, { { 0 } } },
	{ "mknod-device", G_PROCESS, D, "make a device node in the workspace", p_mknod, NULL,
	  { { V_NOFILE, VB_WS, "w-{t}-devnode" } } },
	{ "setuid-exec", G_PROCESS, D, "gain privilege through a setuid binary", p_setuid, NULL,
	  { { 0 } } },
	{ "capabilities", G_PROCESS, D, "hold capabilities", p_capabilities, NULL, { { 0 } } },

	/* inherited state */
	{ "env-secrets", G_INHERITED, D, "secret-looking environment variables", p_env_secrets, NULL,
	  { { 0 } } },
	{ "env-ssh-auth-sock", G_INHERITED, D, "SSH_AUTH_SOCK", p_env_ssh, NULL, { { 0 } } },
	{ "env-proxy-credentials", G_INHERITED, D, "proxy URLs with credentials", p_env_proxy, NULL,
	  { { 0 } } },
	{ "env-git-identity", G_INHERITED, D, "GIT_AUTHOR_* / GIT_COMMITTER_*", p_env_git, NULL,
	  { { 0 } } },
	{ "leaked-fd", G_INHERITED, D, "the fd the check leaked on purpose", p_leaked_fd, NULL,
	  { { 0 } } },
	{ "open-fds", G_INHERITED, D, "any fd above 2 at start", p_open_fds, NULL, { { 0 } } },
	{ "parent-environ", G_INHERITED, D, "open the parent's /proc/<ppid>/environ", p_parent_environ,
	  NULL, { { 0 } } },
	{ "terminal", G_INHERITED, D, "the supervisor's or the user's terminal", p_terminal, NULL,
	  { { 0 } } },

	/* sockets and IPC */
	{ "docker-sock", G_IPC, D, "container runtime sockets", p_docker, NULL, { { 0 } } },
	{ "dbus-system", G_IPC, D, "the D-Bus system bus", p_dbus_system, NULL, { { 0 } } },
	{ "dbus-session", G_IPC, D, "the D-Bus session bus", p_dbus_session, NULL, { { 0 } } },
	{ "ssh-agent-sock", G_IPC, D, "a host ssh-agent socket (bait)", p_ssh_agent, NULL, { { 0 } } },
	{ "x11", G_IPC, D, "X11 sockets", p_x11, NULL, { { 0 } } },
	{ "abstract-socket", G_IPC, D, "a host abstract unix socket (bait)", p_abstract, NULL,
	  { { 0 } } },
	{ "sysv-shm", G_IPC, D, "a host System V shm segment (bait)", p_sysv_shm, NULL, { { 0 } } },
	{ "sysvipc-list", G_IPC, D, "list System V IPC objects", p_sysvipc_list, NULL, { { 0 } } },
	{ "posix-shm", G_IPC, D, "a host /dev/shm object (bait)", p_posix_shm, NULL, { { 0 } } },
	{ "proc-net-unix", G_IPC, D, "list the host's unix sockets", p_proc_net_unix, NULL, { { 0 } } },

	/* network */
	{ "dns", G_NETWORK, D, "a DNS resolver to ask", p_dns, NULL, { { 0 } } },
	{ "route-public", G_NETWORK, D, "route to 1.1.1.1", p_route_public, NULL, { { 0 } } },
	{ "route-testnet", G_NETWORK, D, "route to 192.0.2.1", p_route_testnet, NULL, { { 0 } } },
	{ "route-metadata", G_NETWORK, D, "route to 169.254.169.254", p_route_metadata, NULL,
	  { { 0 } } },
	{ "route-ipv6", G_NETWORK, D, "route to [2001:db8::1]", p_route_ipv6, NULL, { { 0 } } },
	{ "tcp-host-loopback", G_NETWORK, D, "TCP to the check's listener on the host's 127.0.0.1",
	  p_tcp_loopback, NULL, { { 0 } } },
	{ "tcp-host-listeners", G_NETWORK, D, "see the host's listening sockets", p_tcp_listeners,
	  NULL, { { 0 } } },
	{ "proxy-unknown", G_NETWORK, D, "warden's proxy tunnels to a destination no rule allows",
	  p_proxy_unknown, NULL, { { 0 } } },
	{ "proxy-metadata", G_NETWORK, D, "warden's proxy tunnels to 169.254.169.254",
	  p_proxy_metadata, NULL, { { 0 } } },
	{ "proxy-socks-unknown", G_NETWORK, D, "SOCKS5 to a destination no rule allows",
	  p_proxy_socks, NULL, { { 0 } } },
	{ "raw-socket", G_NETWORK, D, "a raw IP socket", p_raw_socket, NULL, { { 0 } } },
	{ "packet-socket", G_NETWORK, D, "a packet socket", p_packet_socket, NULL, { { 0 } } },
	{ "netlink-interfaces", G_NETWORK, D, "netlink: see the host's interfaces", p_netlink, NULL,
	  { { 0 } } },

	/* exec: recorded until the exec-control issue */
	{ "exec-workspace-copy", G_EXEC, R, "run a copied binary from the workspace", p_exec_ws, NULL,
	  { { 0 } } },
	{ "exec-workspace-script", G_EXEC, R, "run a script from the workspace", p_exec_script, NULL,
	  { { 0 } } },
	{ "exec-tmp-copy", G_EXEC, R, "run a copied binary from /tmp", p_exec_tmp, NULL, { { 0 } } },
	{ "exec-shm-copy", G_EXEC, R, "run a copied binary from /dev/shm", p_exec_shm, NULL, { { 0 } } },
	{ "exec-ldso", G_EXEC, R, "ld.so /tmp/<binary>", p_ldso, NULL, { { 0 } } },
	{ "exec-memfd", G_EXEC, R, "memfd_create + execveat", p_memfd, NULL, { { 0 } } },
	{ "exec-proc-self-root", G_EXEC, R, "run /proc/self/root/usr/bin/true", p_exec_proc_root,
	  NULL, { { 0 } } },
};

#undef D
#undef A
#undef R

const size_t probe_count = ARRAY_LEN(probe_table);

const char *probe_group_name(enum probe_group g)
{
	static const char *const names[] = {
		"visibility", "write scope", "process and kernel", "inherited state",
		"sockets and IPC", "network", "exec",
	};
	return (unsigned)g < ARRAY_LEN(names) ? names[g] : "?";
}

const char *probe_expect_name(enum probe_expect x)
{
	return x == EXPECT_DENIED ? "denied" : x == EXPECT_ALLOWED ? "allowed" : "record";
}

bool probe_has_verify(const struct probe *p)
{
	return p->verify[0].kind != V_NONE;
}

char *probe_verify_path(const struct probe_verify *v, const struct probe_bases *b,
			const char *token)
{
	const char *base = v->base == VB_WS ? b->ws : v->base == VB_OUT ? b->out :
			   v->base == VB_HOME ? b->home : v->base == VB_AUDIT ? b->audit : b->cache;
	if (!base || v->kind == V_NONE)
		return NULL;
	_cleanup_free_ char *rel = expand_token(v->rel, token);
	return xasprintf("%s/%s", base, rel);
}

const char *probe_bait_content(const char *rel, char *buf, size_t len)
{
	if (strcmp(rel, ".env") == 0)
		snprintf(buf, len, "WARDEN_BAIT=not-a-secret\n");
	else if (strcmp(rel, ".git/hooks/pre-commit") == 0)
		snprintf(buf, len, "#!/bin/sh\n# warden check bait, not a secret: %s\nexit 0\n", rel);
	else
		snprintf(buf, len, "# warden check bait, not a secret: %s\n", rel);
	return buf;
}

/* ---- the runner ------------------------------------------------------- */

/* JSON strings must be UTF-8: keep printable ASCII only. */
static void ascii_only(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

static void emit(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
	fflush(stdout);
	json_decref(o);
}

static void record_start_fds(struct probe_ctx *c)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || de->d_name[0] == '\0' || fd <= 2 || fd == dirfd(d))
			continue;
		if (c->nstart_fds < (int)ARRAY_LEN(c->start_fds))
			c->start_fds[c->nstart_fds++] = (int)fd;
	}
	closedir(d);
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static const char runner_usage[] =
	"usage: warden __probe [--sync] [--only NAME] --ws DIR --out DIR [--home DIR]\n"
	"       [--other-home DIR] [--audit-dir DIR] [--cache-dir DIR] --token HEX [--fd N] [--tcp-port N] [--abstract NAME]\n"
	"       [--ssh-sock PATH] [--shm-key N] [--shm-id N] [--posix-shm NAME]\n"
	"       [--host-pid N] [--host-start N] [--uid N] [--tty PATH]\n"
	"The probe runner of `warden check` (internal): prints one JSON line per probe.\n";

int probe_main(int argc, char **argv)
{
	struct probe_ctx c = { .leak_fd = -1, .shm_id = -1 };
	record_start_fds(&c); /* before anything here opens a file */
	enum { OPT_WS = 256, OPT_OUT, OPT_HOME, OPT_OTHER, OPT_TOKEN, OPT_FD, OPT_TCP, OPT_ABS, OPT_SSH, OPT_SHMKEY,
	       OPT_SHMID, OPT_PSHM, OPT_HPID, OPT_HSTART, OPT_UID, OPT_TTY, OPT_SYNC, OPT_ONLY,
	       OPT_AUDIT, OPT_CACHE };
	static const struct option opts[] = {
		{ "ws", required_argument, NULL, OPT_WS },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "home", required_argument, NULL, OPT_HOME },
		{ "other-home", required_argument, NULL, OPT_OTHER },
		{ "token", required_argument, NULL, OPT_TOKEN },
		{ "fd", required_argument, NULL, OPT_FD },
		{ "tcp-port", required_argument, NULL, OPT_TCP },
		{ "abstract", required_argument, NULL, OPT_ABS },
		{ "ssh-sock", required_argument, NULL, OPT_SSH },
		{ "shm-key", required_argument, NULL, OPT_SHMKEY },
		{ "shm-id", required_argument, NULL, OPT_SHMID },
		{ "posix-shm", required_argument, NULL, OPT_PSHM },
		{ "host-pid", required_argument, NULL, OPT_HPID },
		{ "host-start", required_argument, NULL, OPT_HSTART },
		{ "uid", required_argument, NULL, OPT_UID },
		{ "tty", required_argument, NULL, OPT_TTY },
		{ "sync", no_argument, NULL, OPT_SYNC },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "audit-dir", required_argument, NULL, OPT_AUDIT },
		{ "cache-dir", required_argument, NULL, OPT_CACHE },
		{ 0 },
	};
	bool sync = false;
	const char *only = NULL;
	long v = 0;
	int o;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (o) {
		case OPT_WS: c.ws = optarg; break;
		case OPT_OUT: c.out = optarg; break;
		case OPT_HOME: c.home = optarg[0] == '/' ? optarg : NULL; break;
		case OPT_OTHER: c.other_home = optarg[0] == '/' ? optarg : NULL; break;
		case OPT_AUDIT: c.audit_dir = optarg[0] == '/' ? optarg : NULL; break;
		case OPT_CACHE: c.cache_dir = optarg[0] == '/' ? optarg : NULL; break;
		case OPT_TOKEN: c.token = optarg; break;
		case OPT_ABS: c.abstract = optarg[0] ? optarg : NULL; break;
		case OPT_SSH: c.ssh_sock = optarg[0] ? optarg : NULL; break;
		case OPT_PSHM: c.posix_shm = optarg[0] && !strchr(optarg, '/') ? optarg : NULL; break;
		case OPT_TTY: c.tty = optarg[0] == '/' ? optarg : NULL; break;
		case OPT_FD: ok = parse_long(optarg, -1, 1 << 20, &v); c.leak_fd = (int)v; break;
		case OPT_TCP: ok = parse_long(optarg, 0, 65535, &v); c.tcp_port = (int)v; break;
		case OPT_SHMKEY: ok = parse_long(optarg, INT32_MIN, INT32_MAX, &v); c.shm_key = v; break;
		case OPT_SHMID: ok = parse_long(optarg, -1, INT32_MAX, &v); c.shm_id = (int)v; break;
		case OPT_HPID: ok = parse_long(optarg, 0, INT32_MAX, &v); c.host_pid = (pid_t)v; break;
		case OPT_HSTART: ok = parse_long(optarg, 0, LONG_MAX, &v); c.host_start = (unsigned long long)v; break;
		case OPT_UID: ok = parse_long(optarg, 0, UINT32_MAX, &v); c.host_uid = (unsigned)v; break;
		case OPT_SYNC: sync = true; break;
		case OPT_ONLY: only = optarg; break;
		default: ok = false; break;
		}
		if (!ok) {
			fprintf(stderr, "warden __probe: bad option or value: %s\n", argv[optind - 1]);
			fputs(runner_usage, stderr);
			return 2;
		}
	}
	if (!c.ws || c.ws[0] != '/' || !c.out || c.out[0] != '/' || !c.token || !c.token[0] ||
	    strchr(c.token, '/') || optind < argc) {
		fputs(runner_usage, stderr);
		return 2;
	}
	if (chdir(c.ws) < 0) {
		fprintf(stderr, "warden __probe: workspace %s: %s\n", c.ws, strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_DFL);
	alarm(60); /* a hung probe must not hang the check */

	emit(json_pack("{s:s, s:i, s:i, s:i}", "runner", "start", "probes", (int)probe_count,
		       "uid", (int)getuid(), "pid", (int)getpid()));
	for (size_t i = 0; i < probe_count; i++) {
		const struct probe *p = &probe_table[i];
		if (only && strcmp(only, p->name) != 0)
			continue;
		struct probe_result r = { 0 };
		p->run(&c, p, &r);
		ascii_only(r.detail);
		json_t *line = json_pack("{s:s, s:s, s:s}", "probe", p->name, "observed",
					 r.allowed ? "allowed" : "denied", "detail", r.detail);
		if (line && r.dev[0])
			json_object_set_new(line, "dev", json_string(r.dev));
		emit(line);
		if (probe_has_verify(p)) {
			if (sync) { /* the check looks at the host now; wait for its go-ahead */
				char go;
				ssize_t n;
				while ((n = read(STDIN_FILENO, &go, 1)) < 0 && errno == EINTR)
					;
			}
			if (p->cleanup)
				p->cleanup(&c, p);
			for (int k = 0; k < PROBE_MAX_VERIFY; k++) {
				if (p->verify[k].kind != V_NOFILE && p->verify[k].kind != V_FILE)
					continue;
				_cleanup_free_ char *path = vpath(&c, p, k);
				if (path)
					unlink(path);
			}
		} else if (p->cleanup) {
			p->cleanup(&c, p);
		}
	}
	emit(json_pack("{s:s}", "runner", "end"));
	return 0;
}
