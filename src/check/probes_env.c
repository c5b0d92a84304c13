/* probes_env.c - the probes of what the sandbox inherits or can reach on
 * the host without the network: inherited state (environment variables,
 * open fds, the parent's environ, the terminal) and sockets and IPC (unix
 * sockets of container runtimes, D-Bus, ssh-agent and X11, abstract
 * sockets, System V and POSIX shared memory). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/util.h"
#include "../sandbox/paths.h"
#include "probe_groups.h"
#include "probe_util.h"

extern char **environ;

/* ---- helpers ---------------------------------------------------------- */

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

static int try_connect(const char *path, void *ctx)
{
	bool abstract = path[0] == '@';
	return unix_connect(path + abstract, abstract);
}

/* Try unix socket paths ('@' = abstract): allowed when one connects. */
static void connect_any(struct probe_result *r, char **paths, size_t n)
{
	first_of(r, paths, n, "connected to", try_connect, NULL, true);
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
	/* what the default profile sets (src/policy/builtin.c): a switch
	 * under one of those prefixes, no secret */
	static const char *const switches[] = { "NPM_CONFIG_UPDATE_NOTIFIER" };
	char up[128];
	size_t i;
	for (i = 0; name[i] && i < sizeof up - 1; i++)
		up[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
	up[i] = '\0';
	for (i = 0; i < ARRAY_LEN(switches); i++)
		if (strcmp(up, switches[i]) == 0)
			return false;
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

void p_env_secrets(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	env_probe(r, pred_secret, "none inherited");
}

void p_env_ssh(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_env_proxy(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	env_probe(r, pred_proxy, "no proxy credentials inherited");
}

void p_env_git(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	env_probe(r, pred_git, "no git identity inherited");
}

void p_leaked_fd(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_open_fds(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_parent_environ(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	_cleanup_free_ char *p = xasprintf("/proc/%d/environ", (int)getppid());
	one_path(r, xstrdup(p));
}

void p_terminal(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_docker(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_dbus_system(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket" };
	connect_any(r, p, ARRAY_LEN(p));
}

void p_dbus_session(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { xasprintf("/run/user/%u/bus", c->host_uid) };
	connect_any(r, p, ARRAY_LEN(p));
	free(p[0]);
}

void p_ssh_agent(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { (char *)c->ssh_sock };
	connect_any(r, p, ARRAY_LEN(p));
}

void p_ws_host_sock(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { (char *)c->ws_sock };
	connect_any(r, p, ARRAY_LEN(p));
}

/* sendmsg carries its address inside the message, where seccomp cannot
 * see it: the socket must be out of reach itself (masked). */
void p_ws_host_dgram(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (!c->ws_dgram || strlen(c->ws_dgram) >= sizeof a.sun_path) {
		denied(r, "no host datagram socket given");
		return;
	}
	strcpy(a.sun_path, c->ws_dgram);
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	char data[] = "warden-check";
	struct iovec iov = { .iov_base = data, .iov_len = sizeof data - 1 };
	struct msghdr mh = { .msg_name = &a, .msg_namelen = sizeof a, .msg_iov = &iov, .msg_iovlen = 1 };
	if (sendmsg(s, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		denied_errno(r, errno);
	else
		allowed(r, "sendmsg reached %s", c->ws_dgram);
}

void p_x11(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char *p[] = { "/tmp/.X11-unix/X0", "/tmp/.X11-unix/X1", "@/tmp/.X11-unix/X0", "@/tmp/.X11-unix/X1" };
	connect_any(r, p, ARRAY_LEN(p));
}

void p_abstract(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->abstract) {
		denied(r, "no host abstract socket given");
		return;
	}
	_cleanup_free_ char *name = xasprintf("@%s", c->abstract);
	char *p[] = { name };
	connect_any(r, p, 1);
}

void p_sysv_shm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_sysvipc_list(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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

void p_posix_shm(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (!c->posix_shm) {
		denied(r, "no host shm object given");
		return;
	}
	one_path(r, xasprintf("/dev/shm/%s", c->posix_shm));
}

void p_proc_net_unix(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
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
		/* warden's own hook socket and SSH agent socket, made inside
		 * (src/control/hook.h, src/supervisor/sshagent_srv.h) */
		if ((strncmp(path, SANDBOX_HOOK_SOCK, strlen(SANDBOX_HOOK_SOCK)) == 0 &&
		     strchr("\n", path[strlen(SANDBOX_HOOK_SOCK)])) ||
		    (strncmp(path, SANDBOX_SSH_AGENT_SOCK, strlen(SANDBOX_SSH_AGENT_SOCK)) == 0 &&
		     strchr("\n", path[strlen(SANDBOX_SSH_AGENT_SOCK)])))
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
