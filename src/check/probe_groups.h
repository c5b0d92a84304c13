/* probe_groups.h - the probe and cleanup functions of each group file,
 * declared for the table in probes.c (internal to src/check). One file per
 * group of `enum probe_group`, except where two groups share their helpers:
 *   probes_fs.c    visibility, write scope
 *   probes_proc.c  process and kernel
 *   probes_exec.c  exec
 *   probes_env.c   inherited state, sockets and IPC
 *   probes_net.c   network */
#pragma once
#include "probes.h"

/* probes_fs.c: visibility */
probe_fn p_list_root, p_list_home, p_list_root_home, p_etc_shadow, p_etc_host, p_home_dir,
	p_home_ssh, p_home_aws, p_home_gcloud, p_home_kube, p_home_docker, p_home_netrc,
	p_home_git_credentials, p_home_history, p_home_gnupg, p_home_gitconfig, p_dotdot,
	p_symlink_etc, p_symlink_home, p_symlink_out, p_proc1_root, p_proc_self_root, p_proc_cwd,
	p_proc_hostpid, p_audit_list, p_cache_list, p_mountinfo_paths, p_other_home, p_sysfs, p_proc_kernel,
	p_dev_nodes, p_masked_env, p_masked_pem, p_ws_read;

/* probes_fs.c: write scope */
probe_fn p_ws_write, p_write_out, p_write_symlink, p_write_dotdot, p_write_proc_root,
	p_create_there, p_append_outside, p_rename_out, p_rename_in, p_hardlink_out,
	p_git_hook_create, p_git_hook_modify, p_git_config, p_shell_rc, p_masked_write,
	p_protected_dir, p_protected_file, p_rename_protected, p_rename_parent, p_delete_protected;
probe_cleanup_fn cleanup_rename_out, cleanup_rename_in, cleanup_protected_dir,
	cleanup_rename_protected, cleanup_rename_parent, cleanup_delete_protected;

/* probes_proc.c: process and kernel */
probe_fn p_ptrace, p_process_vm, p_signal_host, p_host_processes, p_userns, p_mountns, p_netns,
	p_chroot, p_setns, p_clone_newuser, p_clone3, p_mount, p_mount_api, p_pivot_root, p_bpf,
	p_io_uring, p_perf, p_keyctl, p_userfaultfd, p_tiocsti, p_tiocsti_high, p_tioclinux,
	p_kexec, p_finit_module, p_syslog, p_x32, p_mknod, p_whiteout,
	p_setid_mode, p_setuid, p_capabilities;

/* probes_exec.c: exec, ordinary programs (recorded) */
probe_fn p_exec_ws, p_exec_script, p_exec_tmp, p_exec_shm, p_ldso, p_memfd, p_exec_proc_root;

/* probes_exec.c: exec, the denied bait by each way around a rule by content */
probe_fn p_deny_as_is, p_deny_copy, p_deny_rename, p_deny_hardlink, p_deny_symlink,
	p_deny_proc_root, p_deny_proc_fd, p_deny_memfd, p_deny_ldso, p_deny_script, p_deny_recreated;

/* probes_env.c: inherited state */
probe_fn p_env_secrets, p_env_ssh, p_env_proxy, p_env_git, p_leaked_fd, p_open_fds,
	p_parent_environ, p_terminal;

/* probes_env.c: sockets and IPC */
probe_fn p_docker, p_dbus_system, p_dbus_session, p_ssh_agent, p_ws_host_sock, p_ws_host_dgram, p_x11, p_abstract, p_sysv_shm,
	p_sysvipc_list, p_posix_shm, p_proc_net_unix;

/* probes_net.c: network */
probe_fn p_dns, p_route_public, p_route_testnet, p_route_metadata, p_route_ipv6, p_tcp_loopback,
	p_tcp_listeners, p_proxy_unknown, p_proxy_metadata, p_proxy_socks, p_raw_socket,
	p_packet_socket, p_vsock_socket, p_netlink;
