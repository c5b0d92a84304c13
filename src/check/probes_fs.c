/* probes_fs.c - the file system probes of `warden check`: visibility (what
 * of the host's files, the user's home, warden's own directories and the
 * kernel's files can be opened or listed) and write scope (what can be
 * created, appended, renamed, linked or deleted outside the workspace or in
 * its protected paths). Write probes name their files with the run's token;
 * the check verifies the host through the table's verify entries. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../common/util.h"
#include "../sandbox/paths.h"
#include "fspath.h"
#include "probe_groups.h"
#include "probe_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* The name a verify entry stands for, expanded (no base). */
static char *vrel(const struct probe_ctx *c, const struct probe *self, int i)
{
	return expand_token(self->verify[i].rel, c->token);
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

/* The device of the sandbox's own home: AGENT_HOME when it is a tmpfs of
 * its own (a mount apart from /home), as warden makes it; false otherwise.
 * A device alone says "the sandbox's home" only then: on a host, or were a
 * host directory ever bound there, a device shared with the host's files
 * would pass them for the sandbox's. */
static bool own_home_dev(dev_t *dev)
{
	struct stat own, parent;
	struct statfs fs;
	if (stat(AGENT_HOME, &own) < 0 || stat(AGENT_HOME "/..", &parent) < 0 ||
	    statfs(AGENT_HOME, &fs) < 0 || own.st_dev == parent.st_dev ||
	    fs.f_type != TMPFS_MAGIC)
		return false;
	*dev = own.st_dev;
	return true;
}

/* Open path unless it lies on the device of *ctx (the sandbox's own home):
 * a user whose home is AGENT_HOME (a container's user named agent) finds
 * warden's decoys at its home's paths inside, not its own files. */
static int try_open_host(const char *path, void *ctx)
{
	const dev_t *own = ctx;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return errno;
	return fstat(fd, &st) == 0 && st.st_dev == *own ? ENOENT : 0;
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
	dev_t own;
	if (path_is_within(c->home, AGENT_HOME) && own_home_dev(&own))
		first_of(r, paths, n, "opened", try_open_host, &own, false);
	else
		open_any(r, paths, n);
	free_paths(paths, n);
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

/* try_create at a name that may be taken (a protected name, where warden
 * puts a placeholder): when it is, a file of the token's made beside it
 * and renamed over it. 0 when path now holds the token; else the errno of
 * the refusal (EBUSY for a mount, EROFS, EACCES): a name that is merely
 * taken (EEXIST) is no wall. */
static int try_create_or_replace(const char *path, const char *token, char dev[32])
{
	int err = try_create(path, token, 0600, dev);
	if (err != EEXIST)
		return err;
	_cleanup_free_ char *tmp = xasprintf("%s.warden-check-%s", path, token);
	if ((err = try_create(tmp, token, 0600, dev)) != 0)
		return err;
	err = rename(tmp, path) == 0 ? 0 : errno;
	if (err)
		unlink(tmp);
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

/* ---- visibility ------------------------------------------------------- */

void p_list_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_list_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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
	/* the sandbox's own home (a user whose home is AGENT_HOME reaches it
	 * by its home's path): warden's, not the host's */
	struct stat st;
	dev_t own;
	if (fstat(dirfd(d), &st) == 0 && own_home_dev(&own) && st.st_dev == own) {
		closedir(d);
		denied(r, "%s is the sandbox's own home, not the host's", path);
		return;
	}
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	allowed(r, "listed %s (%zu entries)", path, n);
}

void p_list_root_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	opendir_probe(r, "/root");
}

void p_etc_shadow(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/etc/shadow", "/etc/gshadow" };
	open_any(r, p, ARRAY_LEN(p));
}

void p_etc_host(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/etc/fstab", "/etc/machine-id", "/etc/ssh", "/etc/sudoers", "/etc/crontab" };
	open_any(r, p, ARRAY_LEN(p));
}

void p_home_dir(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	opendir_probe(r, c->home);
}

void p_home_ssh(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = {
		".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa", ".ssh/authorized_keys", ".ssh",
	};
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_aws(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".aws/credentials", ".aws/config", ".aws" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_gcloud(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = {
		".config/gcloud/credentials.db", ".config/gcloud/application_default_credentials.json",
		".config/gcloud",
	};
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_kube(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".kube/config", ".kube" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_docker(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".docker/config.json", ".docker" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_netrc(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".netrc" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_git_credentials(const struct probe_ctx *c, const struct probe *self,
				   struct probe_result *r)
{
	static const char *const rel[] = { ".git-credentials", ".config/git/credentials" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_history(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = {
		".bash_history", ".zsh_history", ".history", ".python_history", ".psql_history",
		".mysql_history", ".local/share/fish/fish_history",
	};
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_gnupg(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".gnupg/private-keys-v1.d", ".gnupg" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_home_gitconfig(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	static const char *const rel[] = { ".gitconfig", ".config/git/config" };
	probe_home_files(c, r, rel, ARRAY_LEN(rel));
}

void p_dotdot(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xstrdup("../outside-bait.txt"));
}

void p_symlink_etc(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "link-etc/shadow", "link-etc/fstab", "link-etc/machine-id", "link-etc/sudoers" };
	open_any(r, p, ARRAY_LEN(p));
}

void p_symlink_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	opendir_probe(r, "link-home");
}

void p_symlink_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xstrdup("link-out/outside-bait.txt"));
}

void p_proc1_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xasprintf("/proc/1/root%s/outside-bait.txt", c->out));
}

void p_proc_self_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xasprintf("/proc/self/root%s/outside-bait.txt", c->out));
}

void p_proc_cwd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	one_path(r, xstrdup("/proc/self/cwd/../outside-bait.txt"));
}

void p_proc_hostpid(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_audit_list(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->audit_dir) {
		denied(r, "no audit directory known");
		return;
	}
	opendir_probe(r, c->audit_dir);
}

void p_cache_list(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->cache_dir) {
		denied(r, "no cache directory known");
		return;
	}
	opendir_probe(r, c->cache_dir);
}

/* Does s name the path p: p in s where a path starts (s's start, after a
 * blank or a separator of mount options: ',', '=', ':'), ending there or
 * before a '/', a separator or a blank? (/srv/c/root/usr, a container's
 * root, does not name the home /root.) */
static bool names_path(const char *s, const char *p)
{
	size_t n = strlen(p);
	for (const char *q = strstr(s, p); q; q = strstr(q + 1, p))
		if ((q == s || strchr(",=: \t", q[-1])) && (strchr("/,: \n", q[n]) || q[n] == '\0'))
			return true;
	return false;
}

/* One of the paths the mount table must not name, with its spelling on its
 * file system (fspath.h) when the check gave one. */
struct hidden {
	const char *path;
	struct fspath fs;
	bool has_fs;
};

/* Does this mount name h? In its source and options (super) by the path's
 * text; in its root by the text or, on the path's own file system, by the
 * path within it. A mount at the very place its root stands for (on the
 * host: the path as given or as its links resolve, then the rest: a
 * profile's path is bound as given, the workspace where getcwd puts it)
 * shows nothing its mount point does not. Fills what it names into why. */
static bool mount_names(const struct hidden *h, unsigned maj, unsigned min, const char *root,
			const char *point, const char *super, char *why, size_t len)
{
	if (strcmp(root, point) != 0 && names_path(root, h->path)) {
		snprintf(why, len, "mount at %.100s names %.100s: %.100s", point, h->path, root);
		return true;
	}
	const char *rest = h->has_fs ? fspath_below(&h->fs, maj, min, root) : NULL;
	if (rest) {
		_cleanup_free_ char *as_given = xasprintf("%s%s", h->path, rest);
		_cleanup_free_ char *as_real = xasprintf("%s%s", h->fs.real, rest);
		if (strcmp(as_given, point) != 0 && strcmp(as_real, point) != 0) {
			snprintf(why, len, "mount at %.100s names %.100s: %.100s on %u:%u", point,
				 h->path, root, maj, min);
			return true;
		}
	}
	if (super && names_path(super, h->path)) {
		snprintf(why, len, "mount at %.100s names %.100s: %.100s", point, h->path, super + 3);
		return true;
	}
	return false;
}

void p_mountinfo_paths(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	struct hidden hidden[] = { { .path = c->home }, { .path = c->audit_dir }, { .path = c->cache_dir } };
	const char *fs[] = { c->home_fs, c->audit_fs, c->cache_fs };
	for (size_t i = 0; i < ARRAY_LEN(hidden); i++) {
		hidden[i].has_fs = fs[i] && fspath_parse(fs[i], &hidden[i].fs);
		if (fs[i] && !hidden[i].has_fs) { /* looking by text alone would be weaker */
			allowed(r, "not tried: %.200s is no spelling of a path on a mount", fs[i]);
			return;
		}
	}
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		denied_errno(r, errno);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned mounts = 0;
	char why[400];
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER */
		unsigned maj, min;
		char root[PATH_MAX], point[PATH_MAX];
		/* the paths decoded, or a home with a space in its name would
		 * never be found */
		if (!fspath_mount_line(line, &maj, &min, root, point))
			continue;
		mounts++;
		char *super = strstr(line, " - ");
		if (super)
			unescape_octal(super);
		for (size_t i = 0; i < ARRAY_LEN(hidden); i++) {
			const char *h = hidden[i].path;
			if (!h || h[0] != '/' || !h[1])
				continue;
			if (mount_names(&hidden[i], maj, min, root, point, super, why, sizeof why)) {
				allowed(r, "%s", why);
				free(line);
				fclose(f);
				return;
			}
		}
	}
	free(line);
	fclose(f);
	denied(r, "%u mounts, none naming the home, the audit log or the cache", mounts);
}

void p_other_home(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->other_home) {
		denied(r, "no other user's home on this machine");
		return;
	}
	opendir_probe(r, c->other_home);
}

void p_sysfs(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/sys/kernel", "/sys/class/net", "/sys/fs/cgroup" };
	open_any(r, p, ARRAY_LEN(p));
}

void p_proc_kernel(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/proc/kcore", "/proc/kallsyms", "/proc/keys", "/proc/timer_list", "/proc/sched_debug" };
	open_any(r, p, ARRAY_LEN(p));
}

void p_dev_nodes(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/dev/kmsg", "/dev/mem", "/dev/kvm", "/dev/port", "/dev/fuse", "/dev/net/tun" };
	open_any(r, p, ARRAY_LEN(p));
}

/* Read one of our own bait files (dummy content) and say whether it came through. */
static void read_bait(struct probe_result *r, const char *path, const char *marker)
{
	char buf[512];
	int err = read_small_file(path, buf, sizeof buf, O_NONBLOCK) < 0 ? errno : 0;
	if (err)
		denied_errno(r, err);
	else if (strstr(buf, marker))
		allowed(r, "read %s", path);
	else
		denied(r, "%s opened but empty or replaced", path);
}

void p_masked_env(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	read_bait(r, ".env", "WARDEN_BAIT");
}

void p_masked_pem(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	read_bait(r, "warden-bait.pem", "warden check bait");
}

void p_ws_read(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_ws_write(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

void p_write_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

void p_write_symlink(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *path = xasprintf("link-out/%s", rel);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

void p_write_dotdot(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *path = xasprintf("../%s", rel);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

void p_write_proc_root(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *rel = vrel(c, self, 0);
	_cleanup_free_ char *path = xasprintf("/proc/self/root%s/%s", c->out, rel);
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

/* Create a new file, named with the token, where the probe's verify entry
 * points: the user's home, the audit log directory, the cache (never an
 * existing file). Denied outright when this host has no such directory. */
void p_create_there(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	if (!path) {
		denied(r, "no such directory known on this host");
		return;
	}
	create_result(r, try_create(path, c->token, 0600, r->dev), path);
}

struct append_ctx {
	const char *token;
	char *dev;
};

static int try_append_one(const char *path, void *ctx)
{
	struct append_ctx *a = ctx;
	return try_append(path, a->token, a->dev);
}

/* Append to existing files through several spellings; allowed when one took. */
static void append_any(const struct probe_ctx *c, struct probe_result *r, char **paths, size_t n)
{
	struct append_ctx a = { .token = c->token, .dev = r->dev };
	first_of(r, paths, n, "appended to", try_append_one, &a, false);
}

void p_append_outside(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = {
		"link-out/outside-bait.txt", "../outside-bait.txt",
		xasprintf("%s/outside-bait.txt", c->out),
	};
	append_any(c, r, p, ARRAY_LEN(p));
	free(p[2]);
}

void p_rename_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void cleanup_rename_out(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *src = expand_token("w-{t}-src", c->token);
	unlink(src);
}

void p_rename_in(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void cleanup_rename_in(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *dst = vrel(c, self, 1);
	_cleanup_free_ char *back = xasprintf("%s/outside-bait.txt", c->out);
	struct stat st;
	if (lstat(dst, &st) == 0)
		rename(dst, back);
}

void p_hardlink_out(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_git_hook_create(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create(path, c->token, 0755, r->dev), path);
}

static void append_probe(const struct probe_ctx *c, struct probe_result *r, const char *path)
{
	char *p[] = { (char *)path };
	append_any(c, r, p, 1);
}

void p_git_hook_modify(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".git/hooks/pre-commit");
}

void p_git_config(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".git/config");
}

void p_shell_rc(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".bashrc");
}

void p_masked_write(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	append_probe(c, r, ".env");
}

static bool created_claude;

void p_protected_dir(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	created_claude = mkdir(".claude", 0755) == 0;
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create_or_replace(path, c->token, r->dev), ".claude/settings.local.json");
}

void cleanup_protected_dir(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	unlink(path);
	if (created_claude)
		rmdir(".claude");
	created_claude = false;
}

void p_protected_file(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *path = vpath(c, self, 0);
	create_result(r, try_create_or_replace(path, c->token, r->dev), ".mcp.json");
}

void p_rename_protected(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *dst = expand_token(".git/w-{t}-hooks", c->token);
	if (rename(".git/hooks", dst) < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(dst, r->dev);
	allowed(r, "moved .git/hooks away");
}

void cleanup_rename_protected(const struct probe_ctx *c, const struct probe *self)
{
	_cleanup_free_ char *dst = expand_token(".git/w-{t}-hooks", c->token);
	struct stat st;
	if (lstat(dst, &st) == 0)
		rename(dst, ".git/hooks");
}

void p_rename_parent(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void cleanup_rename_parent(const struct probe_ctx *c, const struct probe *self)
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

void p_delete_protected(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (unlink(".git/config") < 0) {
		denied_errno(r, errno);
		return;
	}
	lstat_dev(".git", r->dev);
	allowed(r, "deleted .git/config");
}

void cleanup_delete_protected(const struct probe_ctx *c, const struct probe *self)
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
