/* linkwalk.h - a program of several hard links that the agent still cannot
 * change: every one of its links found on the read-only mount it was
 * reached through.
 *
 * immutable.h's rule takes a file of more than one link, on a device that
 * a writable mount also reaches, for one the agent may write through
 * another link (a pnpm store's files hard-linked into a workspace's
 * node_modules are such links). Claude Code's npm package links its one
 * program under two names (bin/claude.exe and the platform package's
 * claude, 245 MB): by that rule alone, every `warden run -- claude` read
 * and hashed it again. When the file's link count equals the links found
 * on its own read-only mount, no link is anywhere else: none in the
 * workspace or any other writable mount, and the agent cannot make one
 * (link(2) refuses to cross mounts, and nothing on a read-only mount can
 * be made). A link made on the host later changes the file's ctime, with
 * which the answer is kept (execpath.c) and the hash keyed (hashdisk.h).
 *
 * The search starts in the file's own directory and widens one directory
 * up at a time, never above its mount, across another mount or through a
 * symlink, and looks at LINKWALK_MAX entries at most: a file whose links
 * are not all found by then is not taken for immutable. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#define LINKWALK_MAX 4096

/* Are all st->st_nlink links of the file (st: its stat; resolved: where it
 * lies inside the sandbox whose root is the O_PATH fd root; mnt_id: its
 * mount, read-only) on that mount, found from resolved's directory? */
bool linkwalk_all_here(int root, const char *resolved, const struct stat *st, uint64_t mnt_id);
