/* fanread.h - the reads outside the workspace on the record: a helper
 * in the sandbox's user and mount namespaces (nshelper.c) marks
 * the mounts that are neither the workspace nor the system directories
 * (the root tmpfs, which holds the agent's home, /tmp, /var/tmp, and the
 * home's own mount when it has one) with fanotify (FAN_CLOSE_NOWRITE: a
 * file opened without write access, closed), and sends the supervisor each
 * such file's pid and path. fanotify_mark on a mount needs CAP_SYS_ADMIN
 * over the mount namespace's owner, which the helper has there (Linux 6.8
 * and later); the events carry a directory handle and a name (FID mode,
 * the only one a user namespace may have), which only a process inside
 * can turn into a path (open_by_handle_at, in a user namespace from Linux
 * 6.10), so the helper stays and sends paths, not the fanotify fd. Where
 * the kernel or a seccomp filter outside warden refuses either, nothing is
 * recorded (fanread_ready fails and says why). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/err.h"

struct policy;

/* One message on the socket: the reader's pid as fanotify gives it (0:
 * the kernel tells a listener in a user namespace none; -errno: the marks
 * refused), then the path
 * (absolute inside the sandbox, not NUL-terminated; the rest of the
 * message). */
struct fanread_msg {
	int32_t pid;
	char path[4096];
};

/* The helper, started while init builds the sandbox: its pid, *sock the
 * supervisor's end of a SEQPACKET socket (CLOEXEC) carrying fanread_msg;
 * -1 with e filled when it cannot be started. home: the agent's home
 * inside. A clone that shares the supervisor's memory (a fork where
 * src/common/rawsys.h has no system call of its own: fanread.c says what
 * makes the sharing safe). It holds nothing of the supervisor's but its
 * socket, and waits for the namespaces (fanread_enter); it ends when the
 * socket closes first. The last session's helper is waited for here
 * (killed if need be): its stack is this one's. */
pid_t fanread_spawn(const char *home, int *sock, struct werr *e);

/* The sandbox built: its user and mount namespaces to the helper, which
 * joins them and makes its marks meanwhile (fanread_ready waits for
 * them, so that the rest of the session's start overlaps). -1 (errno)
 * when the helper cannot be told. */
int fanread_enter(int sock, int userns, int mntns);

/* The helper's first message: 0 when its marks are made; when the kernel
 * refuses them (a message with pid -errno), or the helper says nothing
 * within 5 s, sock is closed (-1) and e names the errno; the helper stays,
 * idle, until fanread_end (the sandbox's RLIMIT_NPROC counts it). */
int fanread_ready(pid_t pid, int *sock, struct werr *e);

/* Whether a session of policy p runs the helper (not under `audit
 * minimal`): one process in the sandbox's user namespace from the start
 * to the end of the session, which the limits count (limits.h). */
bool fanread_wanted(const struct policy *p);

/* The helper ended, not waited for: its exit drops the last hold on the
 * sandbox's mount namespace, whose teardown (every mount) would hold the
 * caller for milliseconds. Reaped when warden ends. */
void fanread_end(pid_t pid);
