/* userns.c - the throwaway identity: map the invoking user to uid/gid 1000
 * (`agent`) inside the sandbox's user namespace. Written by the supervisor,
 * which alone holds the privilege to write the child's maps. */
#include "sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static int write_proc(pid_t pid, const char *file, const char *text, struct werr *e)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	if (write_file(path, text) < 0)
		return werr_errno(e, "user namespace: writing %s (\"%s\")", path, text);
	return 0;
}

int userns_write_maps(pid_t child, uid_t uid, gid_t gid, struct werr *e)
{
	char map[64];
	/* An unprivileged user may only map its own gid after denying setgroups.
	 * Root keeps setgroups allowed so init can drop supplementary groups. */
	if (geteuid() != 0 && write_proc(child, "setgroups", "deny", e) < 0)
		return -1;
	snprintf(map, sizeof map, "%d %u 1\n", AGENT_UID, (unsigned)uid);
	if (write_proc(child, "uid_map", map, e) < 0)
		return -1;
	snprintf(map, sizeof map, "%d %u 1\n", AGENT_GID, (unsigned)gid);
	return write_proc(child, "gid_map", map, e);
}
