/* llaudit.h - Landlock's denials on the record: as root, with Landlock ABI 7
 * or later and the kernel's audit enabled, the supervisor reads the audit
 * records the kernel multicasts (AUDIT_NLGRP_READLOG: read only, beside
 * auditd, never instead of it), keeps those of its own session, and turns
 * each into a `file`, `net` or `signal` event with "by": "landlock"
 * (llrecord.h). warden never enables audit itself: that is the host's
 * setting (see llaudit_probe, src/sandbox/features.h). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/loop.h"

struct llaudit;
struct llaudit_probed; /* src/sandbox/features.h */

/* Read the multicast group's socket the probe joined (probed->fd, taken
 * here in any case: -1 after) for the session whose sandbox init is
 * init_pid (the Landlock domain's creator; its pid namespace, pidns, as
 * sbctl_pidns took it, or NULL when unknown, is the session's), with its
 * events going to log; the kernel's lost records counted from the probe's
 * count. Open before init restricts itself. NULL and why filled when it
 * cannot. */
struct llaudit *llaudit_open(pid_t init_pid, const struct stat *pidns,
			     struct llaudit_probed *probed, struct audit *log, char *why, size_t len);

/* Read the records the socket has. */
void llaudit_dispatch(struct llaudit *la);
/* The socket watched by l (llaudit_dispatch); -1 with e naming it when l
 * cannot take it. */
int llaudit_watch(struct loop *l, struct llaudit *la, struct werr *e);

/* The sandbox is gone: read what the kernel still has on its way (a short
 * wait), emit every event gathered, then one `landlock.suppressed` event
 * when some were not logged one by one (the rate limit, the session's cap,
 * a socket overrun). */
void llaudit_end(struct llaudit *la);

/* NULL is fine. */
void llaudit_free(struct llaudit *la);
