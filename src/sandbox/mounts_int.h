/* mounts_int.h - what the two halves of init's file system share: mounts.c
 * (the root, /etc, /dev, /proc, the system directories, the home, the
 * order of it all) and wsmounts.c (the workspace's protected paths,
 * placeholders and masks, and their remasking during the session). Paths
 * are init's while it builds: the new root staged at STAGE, the masks'
 * sources at /mask_file and /mask_dir of the staging root. Nothing outside
 * src/sandbox/ includes it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "../common/err.h"
#include "mountapi.h"
#include "sandbox.h"

#define RO_ATTRS MOUNT_RO_ATTRS
#define RW_ATTRS MOUNT_RW_ATTRS

/* The masks' sources, /mask_file and /mask_dir on the staging root, are
 * mounts of their own with these attributes, set once (mask_sources): a
 * mask is a clone of one, which keeps them, so it needs no attributes of
 * its own (MASK_ATTRS: no mount_setattr for each of some 40 masks). */
#define MASK_SRC_ATTRS (RO_ATTRS | W_MOUNT_ATTR_NOEXEC)
#define MASK_ATTRS 0

#define STAGE "/newroot"
/* The masks' sources inside, for the masks made during the session. */
#define MASK_FILE "/.warden/mask-file"
#define MASK_DIR "/.warden/mask-dir"

/* Set attrs on the mount at (fd, path; "" the fd itself), and on the
 * mounts beneath it when recursive. -1 with errno. */
int mnt_setattr_fd(int fd, const char *path, uint64_t attrs, bool recursive);
/* Clone the mount tree at (srcfd, src), set the attributes set and clear
 * those in clr on all of it, attach it at (dstfd, dst). Empty paths mean
 * the fd itself; what names it in an error. */
int mnt_bind_attrs(int srcfd, const char *src, int dstfd, const char *dst, uint64_t set,
		   uint64_t clr, struct werr *e, const char *what);
/* The same, setting attrs only. */
int mnt_bind_at(int srcfd, const char *src, int dstfd, const char *dst, uint64_t attrs,
		struct werr *e, const char *what);
/* A staging directory holding the detached tree the supervisor made of a
 * host directory (hostid.h), for an overlay's lower layer or a clone's
 * source; its name in the staging root, or NULL with errno. */
const char *mnt_stage_tree(int tree, const char *name);

/* The workspace's protected paths, placeholders and masks (the plan),
 * each resolved beneath the staged workspace with no symlink followed
 * (wsmounts.c). */
int mounts_workspace_plan(const struct sandbox_spec *s, struct werr *e);
