/* mountapi.h - the new mount API's constants and attribute struct (kept
 * local: glibc's and the kernel's headers clash), and the attribute sets
 * warden's mounts use; shared by mounts.c (init) and hostid.c (the
 * supervisor's trees). */
#pragma once
#include <stdint.h>

#define W_OPEN_TREE_CLONE 1
#define W_AT_RECURSIVE 0x8000
#define W_MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define W_MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#define W_MOUNT_ATTR_RDONLY 0x00000001
#define W_MOUNT_ATTR_NOSUID 0x00000002
#define W_MOUNT_ATTR_NODEV 0x00000004
#define W_MOUNT_ATTR_NOEXEC 0x00000008
#define W_MOUNT_ATTR_IDMAP 0x00100000

struct w_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

#define MOUNT_RO_ATTRS (W_MOUNT_ATTR_RDONLY | W_MOUNT_ATTR_NOSUID | W_MOUNT_ATTR_NODEV)
#define MOUNT_RW_ATTRS (W_MOUNT_ATTR_NOSUID | W_MOUNT_ATTR_NODEV)
#define MOUNT_SCRATCH_ATTRS (W_MOUNT_ATTR_NOSUID | W_MOUNT_ATTR_NODEV | W_MOUNT_ATTR_NOEXEC)
