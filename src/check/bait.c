/* bait.c - the bait `warden check` plants on the host before the probes
 * run and removes on every path out: one function per probe group plants
 * what that group's probes look for (the table in probes.c says where),
 * bait_env sets the environment variables in the session's child,
 * bait_exec_deny names the hashes the session must refuse to exec, and
 * bait_runner_argv tells the runner where everything is. All of it is
 * dummy content; nothing of the user's is touched. */
#include "bait.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/random.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../policy/exec_rules.h"
#include "../sandbox/sandbox.h"
#include "fspath.h"
#include "probes.h"

/* ---- helpers ---------------------------------------------------------- */

/* Create a new file (exclusive, no symlink followed) holding text. */
int write_file_new(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int r = write_all(fd, text, strlen(text));
	close(fd);
	return r;
}

static int write_bait(const char *dir, const char *rel, mode_t mode, struct werr *e)
{
	char buf[256];
	const char *text = probe_bait_content(rel, buf, sizeof buf);
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0) {
		werr_errno(e, "check: writing bait %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int bait_dir(const char *dir, const char *rel, struct werr *e)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, rel);
	if (mkdir(path, 0755) < 0)
		return werr_errno(e, "check: creating bait directory %s", path);
	return 0;
}

static int bait_link(const char *dir, const char *rel, const char *target, struct werr *e)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, rel);
	if (symlink(target, path) < 0)
		return werr_errno(e, "check: creating bait link %s", path);
	return 0;
}

static unsigned long long self_starttime(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	int field = 2;
	char *save = NULL;
	for (char *t = strtok_r(p + 1, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (++field == 22)
			return strtoull(t, NULL, 10);
	return 0;
}

/* Another user's home that exists here: /root for a user, else a /home one. */
static char *find_other_home(void)
{
	uid_t me = getuid();
	char *found = NULL;
	setpwent();
	struct passwd *pw;
	while (!found && (pw = getpwent())) {
		struct stat st;
		if (pw->pw_uid == me || !pw->pw_dir || pw->pw_dir[0] != '/' || strcmp(pw->pw_dir, "/") == 0)
			continue;
		bool good = (me != 0 && strcmp(pw->pw_dir, "/root") == 0) ||
			    strncmp(pw->pw_dir, "/home/", 6) == 0;
		if (good && stat(pw->pw_dir, &st) == 0 && S_ISDIR(st.st_mode))
			found = xstrdup(pw->pw_dir);
	}
	endpwent();
	return found;
}

static int bind_unix(const char *name, bool abstract, int type, struct werr *e)
{
	int s = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (s < 0)
		return werr_errno(e, "check: unix socket");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(name), off = abstract ? 1 : 0;
	if (len + off >= sizeof a.sun_path) {
		close(s);
		return werr_set(e, ENAMETOOLONG, "check: socket name %s", name);
	}
	memcpy(a.sun_path + off, name, len);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + off + len + (abstract ? 0 : 1));
	if (bind(s, (struct sockaddr *)&a, alen) < 0 || (type == SOCK_STREAM && listen(s, 16) < 0)) {
		close(s);
		return werr_errno(e, "check: listening on %s%s", abstract ? "@" : "", name);
	}
	return s;
}

static int listen_unix(const char *name, bool abstract, struct werr *e)
{
	return bind_unix(name, abstract, SOCK_STREAM, e);
}

/* ---- one function per probe group ------------------------------------- */

/* Visibility and write scope: the workspace (a git-like .git, secrets to
 * mask, files to protect, links out of it, an ordinary file) and bait
 * beside it, outside the workspace. */
static int bait_files(struct bait *b, struct werr *e)
{
	if (bait_dir(b->ws, ".git", e) < 0 || bait_dir(b->ws, ".git/hooks", e) < 0 ||
	    bait_dir(b->ws, ".git/refs", e) < 0 || write_bait(b->ws, ".git/config", 0644, e) < 0 ||
	    write_bait(b->ws, ".git/hooks/pre-commit", 0755, e) < 0 ||
	    write_bait(b->ws, ".env", 0600, e) < 0 || write_bait(b->ws, "warden-bait.pem", 0600, e) < 0 ||
	    write_bait(b->ws, ".bashrc", 0644, e) < 0 || write_bait(b->ws, "README.txt", 0644, e) < 0 ||
	    bait_link(b->ws, "link-etc", "/etc", e) < 0 || bait_link(b->ws, "link-out", b->base, e) < 0 ||
	    (b->home && bait_link(b->ws, "link-home", b->home, e) < 0))
		return -1;
	_cleanup_free_ char *head = xasprintf("%s/.git/HEAD", b->ws);
	if (write_file_new(head, "ref: refs/heads/main\n") < 0)
		return werr_errno(e, "check: writing %s", head);
	return write_bait(b->base, "outside-bait.txt", 0644, e);
}

/* Process and kernel: the check's own pid and start time, the host
 * process the probes look for. */
static void bait_process(struct bait *b)
{
	b->pid = getpid();
	b->start = self_starttime();
}

/* Inherited state: a leaked fd (no O_CLOEXEC, at a high number) and the
 * user's terminal. The environment variables are bait_env's. */
static int bait_inherited(struct bait *b, struct werr *e)
{
	if (write_bait(b->base, "leaked-fd-bait.txt", 0644, e) < 0)
		return -1;
	_cleanup_free_ char *lp = xasprintf("%s/leaked-fd-bait.txt", b->base);
	int fd = open(lp, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return werr_errno(e, "check: opening %s", lp);
	b->leak_fd = fcntl(fd, F_DUPFD, 100);
	close(fd);
	if (b->leak_fd < 0)
		return werr_errno(e, "check: moving the leaked fd up");
	for (int i = 0; i <= 2 && !b->tty; i++) {
		char name[PATH_MAX];
		if (isatty(i) && ttyname_r(i, name, sizeof name) == 0)
			b->tty = xstrdup(name);
	}
	return 0;
}

/* Sockets and IPC: an abstract unix socket, one posing as an ssh agent, a
 * System V shared memory segment with a random key and a POSIX shared
 * memory object (skipped without /dev/shm). */
static int bait_ipc(struct bait *b, struct werr *e)
{
	snprintf(b->abstract, sizeof b->abstract, "warden-check-%s", b->token);
	if ((b->abs_fd = listen_unix(b->abstract, true, e)) < 0)
		return -1;
	b->ssh_sock = xasprintf("%s/ssh-agent.sock", b->base);
	if ((b->ssh_fd = listen_unix(b->ssh_sock, false, e)) < 0)
		return -1;
	/* a host tool's socket in the workspace (a language server, a dev server) */
	b->ws_sock = xasprintf("%s/w-%s.sock", b->ws, b->token);
	if ((b->ws_sock_fd = listen_unix(b->ws_sock, false, e)) < 0)
		return -1;
	/* and a datagram one, which a sendmsg could reach by its address */
	b->ws_dgram = xasprintf("%s/d-%s.sock", b->ws, b->token);
	if ((b->ws_dgram_fd = bind_unix(b->ws_dgram, false, SOCK_DGRAM, e)) < 0)
		return -1;

	for (int tries = 0; tries < 16 && b->shm_id < 0; tries++) {
		unsigned int k;
		if (getrandom(&k, sizeof k, 0) != (ssize_t)sizeof k)
			return werr_errno(e, "check: getrandom");
		b->shm_key = (long)(k & 0x3fffffff) + 1;
		b->shm_id = shmget((key_t)b->shm_key, 4096, IPC_CREAT | IPC_EXCL | 0600);
		if (b->shm_id < 0 && errno != EEXIST)
			return werr_errno(e, "check: creating a System V shm segment");
	}
	if (b->shm_id < 0)
		return werr_set(e, EEXIST, "check: no free System V shm key");

	snprintf(b->posix_shm, sizeof b->posix_shm, "warden-check-%s", b->token);
	_cleanup_free_ char *sp = xasprintf("/dev/shm/%s", b->posix_shm);
	int fd = open(sp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		b->posix_made = true;
		close(fd);
	} else {
		b->posix_shm[0] = '\0';
	}
	return 0;
}

/* Network: a TCP listener on the host's loopback. */
static int bait_network(struct bait *b, struct werr *e)
{
	b->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (b->tcp_fd < 0)
		return werr_errno(e, "check: TCP socket");
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t alen = sizeof a;
	if (bind(b->tcp_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(b->tcp_fd, 16) < 0 ||
	    getsockname(b->tcp_fd, (struct sockaddr *)&a, &alen) < 0)
		return werr_errno(e, "check: listening on 127.0.0.1");
	b->tcp_port = ntohs(a.sin_port);
	return 0;
}

/* Exec: a copy of true with the run's marker after its last byte (the
 * loader never reads it), so that its SHA-256 is the run's alone, and a
 * #!/bin/sh script with the marker; both in the workspace, where the probes
 * can read them, and both denied by hash for the session (check.c). */
static int bait_exec(struct bait *b, struct werr *e)
{
	const char *src = access("/usr/bin/true", R_OK) == 0 ? "/usr/bin/true" : "/bin/true";
	b->exec_bait = xasprintf("%s/warden-bait-exec", b->ws);
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return werr_errno(e, "check: opening %s for the exec bait", src);
	_cleanup_close_ int out = open(b->exec_bait, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				       0755);
	if (out < 0)
		return werr_errno(e, "check: creating %s", b->exec_bait);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write_all(out, buf, (size_t)n) < 0)
			return werr_errno(e, "check: writing %s", b->exec_bait);
	_cleanup_free_ char *marker = xasprintf("\nwarden check exec bait, not a secret: %s\n", b->token);
	if (n < 0 || write_all(out, marker, strlen(marker)) < 0)
		return werr_errno(e, "check: copying %s to %s", src, b->exec_bait);
	b->exec_script = xasprintf("%s/warden-bait-exec.sh", b->ws);
	_cleanup_free_ char *script = xasprintf("#!/bin/sh\n# warden check exec bait, not a secret: "
						 "%s\nexit 0\n", b->token);
	int fd = open(b->exec_script, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
	if (fd < 0 || write_all(fd, script, strlen(script)) < 0) {
		werr_errno(e, "check: writing %s", b->exec_script);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (exec_hash_path(b->exec_bait, POLICY_EXEC_HASH_MAX_SIZE, b->exec_sha256) < 0 ||
	    exec_hash_path(b->exec_script, POLICY_EXEC_HASH_MAX_SIZE, b->script_sha256) < 0)
		return werr_errno(e, "check: hashing the exec bait");
	return 0;
}

/* ---- planting and removing -------------------------------------------- */

/* How the mount table spells path when that differs from path itself (its
 * file system mounted below /, as a /home partition, or path a symbolic
 * link): fspath_format's text, malloc'ed, or NULL when path is NULL,
 * unknown, or spelt as itself. */
static char *fs_spelling(const char *path)
{
	struct fspath f;
	if (!path || !fspath_of(path, &f) || (strcmp(f.within, path) == 0 && strcmp(f.real, path) == 0))
		return NULL;
	return fspath_format(&f);
}

void bait_init(struct bait *b)
{
	memset(b, 0, sizeof *b);
	b->leak_fd = b->tcp_fd = b->abs_fd = b->ssh_fd = b->ws_sock_fd = b->ws_dgram_fd = b->shm_id = -1;
}

int bait_create(struct bait *b, struct werr *e)
{
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return werr_errno(e, "check: getrandom");
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(b->token + 2 * i, 3, "%02x", rnd[i]);

	char tmpl[] = "/tmp/warden-check-XXXXXX";
	if (!mkdtemp(tmpl))
		return werr_errno(e, "check: creating a temporary workspace under /tmp");
	b->base = xstrdup(tmpl);
	b->ws = xasprintf("%s/ws", b->base);
	if (mkdir(b->ws, 0700) < 0)
		return werr_errno(e, "check: creating %s", b->ws);
	const char *home = user_home();
	b->home = home ? xstrdup(home) : NULL;
	/* "/root/" is "/root": the probes look for the home's path as text too
	 * (the mount table), and a trailing slash would match nothing */
	for (size_t l = b->home ? strlen(b->home) : 0; l > 1 && b->home[l - 1] == '/'; l--)
		b->home[l - 1] = '\0';
	b->other_home = find_other_home();
	b->audit_dir = audit_dir(b->home);
	b->cache_dir = etc_cache_dir(b->home);
	b->home_fs = fs_spelling(b->home);
	b->audit_fs = fs_spelling(b->audit_dir);
	b->cache_fs = fs_spelling(b->cache_dir);

	if (bait_files(b, e) < 0)
		return -1;
	bait_process(b);
	if (bait_inherited(b, e) < 0 || bait_ipc(b, e) < 0 || bait_network(b, e) < 0 ||
	    bait_exec(b, e) < 0)
		return -1;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_DP || type == FTW_D)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static int chmod_dir(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_D && (st->st_mode & 0700) != 0700)
		chmod(path, 0700);
	return 0;
}

void bait_remove(struct bait *b)
{
	int *fds[] = { &b->leak_fd, &b->tcp_fd, &b->abs_fd, &b->ssh_fd, &b->ws_sock_fd, &b->ws_dgram_fd };
	for (size_t i = 0; i < ARRAY_LEN(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	if (b->shm_id >= 0) {
		shmctl(b->shm_id, IPC_RMID, NULL);
		b->shm_id = -1;
	}
	if (b->posix_made) {
		_cleanup_free_ char *sp = xasprintf("/dev/shm/%s", b->posix_shm);
		unlink(sp);
		b->posix_made = false;
	}
	if (b->base) {
		/* Never across a mount point, never through a symlink. */
		nftw(b->base, chmod_dir, 16, FTW_PHYS | FTW_MOUNT);
		nftw(b->base, rm_entry, 16, FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
		rmdir(b->base);
	}
	free(b->base);
	free(b->ws);
	free(b->home);
	free(b->other_home);
	free(b->audit_dir);
	free(b->cache_dir);
	free(b->home_fs);
	free(b->audit_fs);
	free(b->cache_fs);
	free(b->ssh_sock);
	free(b->ws_sock);
	free(b->ws_dgram);
	free(b->tty);
	free(b->exec_bait);
	free(b->exec_script);
	b->exec_bait = b->exec_script = NULL;
	b->base = b->ws = b->home = b->other_home = b->audit_dir = b->cache_dir = b->ssh_sock = NULL;
	b->ws_sock = b->ws_dgram = b->tty = b->home_fs = b->audit_fs = b->cache_fs = NULL;
}

void bait_env(const struct bait *b)
{
	setenv("AWS_SECRET_ACCESS_KEY", "warden-bait", 1);
	setenv("GITHUB_TOKEN", "warden-bait", 1);
	setenv("SSH_AUTH_SOCK", b->ssh_sock, 1);
	setenv("HTTPS_PROXY", "http://bait:bait@127.0.0.1:9/", 1);
	setenv("GIT_AUTHOR_NAME", "bait", 1);
}

void bait_exec_deny(const struct bait *b, struct strv *v)
{
	if (b->exec_sha256[0])
		strv_push(v, b->exec_sha256);
	if (b->script_sha256[0])
		strv_push(v, b->script_sha256);
}

void bait_runner_argv(const struct bait *b, const char *exe, struct strv *v)
{
	strv_push(v, exe);
	strv_push(v, "__probe");
	strv_push(v, "--sync");
#define ARG(name, val) (strv_push(v, name), strv_push(v, (val) ? (val) : ""))
#define ARGN(name, fmt, val) (strv_push(v, name), strv_push_owned(v, xasprintf(fmt, val)))
	ARG("--ws", b->ws);
	ARG("--out", b->base);
	ARG("--home", b->home);
	ARG("--other-home", b->other_home);
	ARG("--audit-dir", b->audit_dir);
	ARG("--cache-dir", b->cache_dir);
	if (b->home_fs)
		ARG("--home-fs", b->home_fs);
	if (b->audit_fs)
		ARG("--audit-fs", b->audit_fs);
	if (b->cache_fs)
		ARG("--cache-fs", b->cache_fs);
	ARG("--token", b->token);
	ARGN("--fd", "%d", b->leak_fd);
	ARGN("--tcp-port", "%d", b->tcp_port);
	ARG("--abstract", b->abstract);
	ARG("--ssh-sock", b->ssh_sock);
	ARG("--ws-sock", b->ws_sock);
	ARG("--ws-dgram", b->ws_dgram);
	ARGN("--shm-key", "%ld", b->shm_key);
	ARGN("--shm-id", "%d", b->shm_id);
	ARG("--posix-shm", b->posix_shm);
	ARGN("--host-pid", "%d", (int)b->pid);
	ARGN("--host-start", "%llu", b->start);
	ARGN("--uid", "%u", (unsigned)getuid());
	if (b->tty)
		ARG("--tty", b->tty);
	if (b->exec_bait)
		ARG("--exec-bait", b->exec_bait);
	if (b->exec_script)
		ARG("--exec-script", b->exec_script);
#undef ARG
#undef ARGN
}
