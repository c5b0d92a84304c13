/* probes.c - the probe table of `warden check` and its runner (`warden
 * __probe`): each probe attempts one thing a hostile agent would try and
 * reports "allowed" or "denied" with the errno or what it saw. The probes
 * themselves live in one file per group (see probe_groups.h); this file
 * holds their order, expectations and verify entries, and runs them.
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

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/util.h"
#include "probe_groups.h"
#include "probe_util.h"

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
	{ "mountinfo-host-paths", G_VISIBILITY, D,
	  "find the home, audit log or cache path in /proc/self/mountinfo", p_mountinfo_paths, NULL,
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
	{ "x32-abi", G_PROCESS, D, "a syscall through the x32 ABI's numbers", p_x32, NULL, { { 0 } } },
	{ "mknod-device", G_PROCESS, D, "make a device node in the workspace", p_mknod, NULL,
	  { { V_NOFILE, VB_WS, "w-{t}-devnode" } } },
	{ "rename-whiteout", G_PROCESS, D, "make a device node by a rename (RENAME_WHITEOUT)",
	  p_whiteout, NULL, { { 0 } } },
	{ "setid-mode", G_PROCESS, D, "leave a setuid or setgid file in the workspace", p_setid_mode,
	  NULL, { { 0 } } },
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
	{ "workspace-host-socket", G_IPC, D, "a host tool's unix socket in the workspace (bait)",
	  p_ws_host_sock, NULL, { { 0 } } },
	{ "workspace-host-dgram", G_IPC, D, "a datagram by sendmsg to a host tool's unix datagram "
	  "socket in the workspace (bait)", p_ws_host_dgram, NULL, { { 0 } } },
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
	{ "vsock-socket", G_NETWORK, D, "a vsock socket (the hypervisor's, in no network namespace)",
	  p_vsock_socket, NULL, { { 0 } } },
	{ "netlink-interfaces", G_NETWORK, D, "netlink: see the host's interfaces", p_netlink, NULL,
	  { { 0 } } },

	/* exec: ordinary programs, recorded (which ways the mounts allow) */
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
	/* exec: the check's bait, denied by its SHA-256 (exec deny), by each
	 * way around a rule by content; refused with EACCES or not held */
	{ "exec-deny-as-is", G_EXEC, D, "run the denied bait (a marked copy of true)", p_deny_as_is,
	  NULL, { { 0 } } },
	{ "exec-deny-copy", G_EXEC, D, "run a copy of the denied bait in the workspace", p_deny_copy,
	  NULL, { { 0 } } },
	{ "exec-deny-rename", G_EXEC, D, "run the denied bait renamed", p_deny_rename, NULL,
	  { { 0 } } },
	{ "exec-deny-hardlink", G_EXEC, D, "run a hard link to the denied bait", p_deny_hardlink,
	  NULL, { { 0 } } },
	{ "exec-deny-symlink", G_EXEC, D, "run a symlink to the denied bait", p_deny_symlink, NULL,
	  { { 0 } } },
	{ "exec-deny-proc-root", G_EXEC, D, "run the denied bait as /proc/self/root/...",
	  p_deny_proc_root, NULL, { { 0 } } },
	{ "exec-deny-proc-fd", G_EXEC, D, "run /proc/self/fd/N, the denied bait open on N",
	  p_deny_proc_fd, NULL, { { 0 } } },
	{ "exec-deny-memfd", G_EXEC, D, "memfd_create + execveat(AT_EMPTY_PATH) of its bytes",
	  p_deny_memfd, NULL, { { 0 } } },
	{ "exec-deny-ldso", G_EXEC, D, "the dynamic loader given the denied bait", p_deny_ldso, NULL,
	  { { 0 } } },
	{ "exec-deny-script-by-name", G_EXEC, D, "sh given the denied script bait by name",
	  p_deny_script, NULL, { { 0 } } },
	{ "exec-deny-recreated", G_EXEC, D, "its bytes written anew at its path (a download again)",
	  p_deny_recreated, NULL, { { 0 } } },
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

/* Run one probe, print its line and clean up after it; with sync, a probe
 * the check verifies on the host waits for the check's go-ahead first. */
static void run_probe(const struct probe_ctx *c, const struct probe *p, bool sync)
{
	struct probe_result r = { 0 };
	p->run(c, p, &r);
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
			p->cleanup(c, p);
		for (int k = 0; k < PROBE_MAX_VERIFY; k++) {
			if (p->verify[k].kind != V_NOFILE && p->verify[k].kind != V_FILE)
				continue;
			_cleanup_free_ char *path = vpath(c, p, k);
			if (path)
				unlink(path);
		}
	} else if (p->cleanup) {
		p->cleanup(c, p);
	}
}

static const char runner_usage[] =
	"usage: warden __probe [--sync] [--only NAME] --ws DIR --out DIR [--home DIR]\n"
	"       [--other-home DIR] [--audit-dir DIR] [--cache-dir DIR] [--home-fs|--audit-fs|--cache-fs SPELLING]\n"
	"       --token HEX [--fd N] [--tcp-port N] [--abstract NAME]\n"
	"       [--ssh-sock PATH] [--shm-key N] [--shm-id N] [--posix-shm NAME]\n"
	"       [--host-pid N] [--host-start N] [--uid N] [--tty PATH]\n"
	"       [--exec-bait PATH] [--exec-script PATH]\n"
	"The probe runner of `warden check` (internal): prints one JSON line per probe\n"
	"(with --only GLOB, of the probes whose name matches).\n";

/* How a runner option fills its field of struct probe_ctx. */
enum ctx_kind {
	CK_STR,      /* the text as given */
	CK_ABS,      /* an absolute path, else NULL */
	CK_NONEMPTY, /* the text, NULL when empty */
	CK_NAME,     /* a name without '/', else NULL */
	CK_INT,      /* a number within [lo, hi], by the field's type */
	CK_LONG,
	CK_UINT,
	CK_ULL,
};

struct ctx_opt {
	const char *name; /* the long option, without "--" */
	enum ctx_kind kind;
	size_t off;       /* of the field in struct probe_ctx */
	long lo, hi;      /* numbers only */
};

#define CTX_FIELD(f) (((struct probe_ctx *)0)->f)
/* A text field (a compile error unless the field is a string). */
#define STR(name, field, kind) \
	{ name, _Generic(CTX_FIELD(field), const char *: kind), offsetof(struct probe_ctx, field), 0, 0 }
/* A number field: the kind follows the field's type. */
#define NUM(name, field, lo, hi)                                                                    \
	{ name,                                                                                     \
	  _Generic(CTX_FIELD(field), int: CK_INT, long: CK_LONG, unsigned: CK_UINT,                 \
		   unsigned long long: CK_ULL),                                                     \
	  offsetof(struct probe_ctx, field), lo, hi }

static const struct ctx_opt ctx_opts[] = {
	STR("ws", ws, CK_STR),
	STR("out", out, CK_STR),
	STR("home", home, CK_ABS),
	STR("other-home", other_home, CK_ABS),
	STR("audit-dir", audit_dir, CK_ABS),
	STR("cache-dir", cache_dir, CK_ABS),
	STR("home-fs", home_fs, CK_NONEMPTY),
	STR("audit-fs", audit_fs, CK_NONEMPTY),
	STR("cache-fs", cache_fs, CK_NONEMPTY),
	STR("token", token, CK_STR),
	STR("abstract", abstract, CK_NONEMPTY),
	STR("ssh-sock", ssh_sock, CK_NONEMPTY),
	STR("ws-sock", ws_sock, CK_NONEMPTY),
	STR("ws-dgram", ws_dgram, CK_NONEMPTY),
	STR("posix-shm", posix_shm, CK_NAME),
	STR("tty", tty, CK_ABS),
	STR("exec-bait", exec_bait, CK_ABS),
	STR("exec-script", exec_script, CK_ABS),
	NUM("fd", leak_fd, -1, 1 << 20),
	NUM("tcp-port", tcp_port, 0, 65535),
	NUM("shm-key", shm_key, INT32_MIN, INT32_MAX),
	NUM("shm-id", shm_id, -1, INT32_MAX),
	NUM("host-pid", host_pid, 0, INT32_MAX),
	NUM("host-start", host_start, 0, LONG_MAX),
	NUM("uid", host_uid, 0, UINT32_MAX),
};

#undef STR
#undef NUM
#undef CTX_FIELD

/* Set the field of o from arg; false when arg is not a number in range. */
static bool ctx_set(struct probe_ctx *c, const struct ctx_opt *o, const char *arg)
{
	char *f = (char *)c + o->off;
	long v = 0;
	if (o->kind >= CK_INT && !parse_long(arg, o->lo, o->hi, &v))
		return false;
	switch (o->kind) {
	case CK_STR: *(const char **)f = arg; break;
	case CK_ABS: *(const char **)f = arg[0] == '/' ? arg : NULL; break;
	case CK_NONEMPTY: *(const char **)f = arg[0] ? arg : NULL; break;
	case CK_NAME: *(const char **)f = arg[0] && !strchr(arg, '/') ? arg : NULL; break;
	case CK_INT: *(int *)f = (int)v; break;
	case CK_LONG: *(long *)f = v; break;
	case CK_UINT: *(unsigned *)f = (unsigned)v; break;
	case CK_ULL: *(unsigned long long *)f = (unsigned long long)v; break;
	}
	return true;
}

int probe_main(int argc, char **argv)
{
	struct probe_ctx c = { .leak_fd = -1, .shm_id = -1 };
	record_start_fds(&c); /* before anything here opens a file */
	enum { OPT_SYNC = 256, OPT_ONLY, OPT_CTX };
	struct option opts[ARRAY_LEN(ctx_opts) + 3] = {
		{ "sync", no_argument, NULL, OPT_SYNC },
		{ "only", required_argument, NULL, OPT_ONLY },
	};
	for (size_t i = 0; i < ARRAY_LEN(ctx_opts); i++)
		opts[i + 2] = (struct option){ ctx_opts[i].name, required_argument, NULL, OPT_CTX + (int)i };
	bool sync = false;
	const char *only = NULL;
	int o;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (o) {
		case OPT_SYNC: sync = true; break;
		case OPT_ONLY: only = optarg; break;
		default:
			ok = o >= OPT_CTX && o < OPT_CTX + (int)ARRAY_LEN(ctx_opts) &&
			     ctx_set(&c, &ctx_opts[o - OPT_CTX], optarg);
			break;
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
	for (size_t i = 0; i < probe_count; i++)
		if (!only || fnmatch(only, probe_table[i].name, 0) == 0)
			run_probe(&c, &probe_table[i], sync);
	emit(json_pack("{s:s}", "runner", "end"));
	return 0;
}
