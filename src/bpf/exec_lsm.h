/* exec_lsm.h - what the exec BPF LSM program (exec_lsm.bpf.c) and its
 * loader (src/supervisor/exec/bpfexec.c) share: the verdict map's key and
 * value, and the records the program sends up its ring buffer. Included by
 * both sides: only fixed-size integer types. */
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define EXEC_LSM_PATH_MAX 1024

/* A file as the kernel knows it: its superblock's device and its inode. */
struct exec_lsm_key {
	__u64 dev;
	__u64 ino;
};

/* DENY_CODE: refused as machine code only (`exec default deny` does not
 * allow it), so a script exec'd by name goes on (its interpreter is
 * checked in turn); DENY: refused always (`exec deny`); NONE: no verdict
 * can be had now (the file is not found as the task sees it: replaced
 * under its name, say), so the task waiting is refused at once rather than
 * at the end of its wait, and the next try asks again. */
enum exec_lsm_verdict {
	EXEC_LSM_ALLOW = 1,
	EXEC_LSM_DENY = 2,
	EXEC_LSM_DENY_CODE = 3,
	EXEC_LSM_NONE = 4,
};

/* The verdict on a file while its ctime (ns) is this: any change to the
 * file moves its ctime, and the old verdict no longer applies. */
struct exec_lsm_val {
	__u64 ctime;
	__u32 verdict;
	__u32 pad;
};

enum exec_lsm_kind { EXEC_LSM_REQUEST = 1, EXEC_LSM_REFUSED = 2 };
enum exec_lsm_hook { EXEC_LSM_BPRM = 1, EXEC_LSM_MMAP = 2, EXEC_LSM_MPROTECT = 3 };
enum exec_lsm_reason {
	EXEC_LSM_RULE = 0,    /* the verdict said deny */
	EXEC_LSM_TIMEOUT = 1, /* no verdict in time */
	EXEC_LSM_NOROOM = 2,  /* the request could not be sent */
	EXEC_LSM_BUSY = 3,    /* as many tasks already wait as may (a spare CPU each) */
	EXEC_LSM_NONE_NOW = 4, /* userspace answered that it has no verdict (NONE) */
};

/* A request for a verdict, or a refusal, as the program sends it up. */
struct exec_lsm_rec {
	__u32 kind;
	__u32 hook;
	__u32 pid;            /* the task's thread group, as the host numbers it */
	__u32 reason;
	__u64 dev, ino, ctime;
	__u64 ts;             /* when sent, CLOCK_MONOTONIC ns */
	char path[EXEC_LSM_PATH_MAX]; /* bpf_d_path, as the task sees it; "" when none */
};
