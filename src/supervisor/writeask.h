/* writeask.h - `write ask GLOB`: a write-intent open, a rename, a link, an
 * unlink or a truncate of a workspace path that a glob names (relative to
 * the workspace; without a '/', the name at any depth, as `mask` takes it)
 * waits in its seccomp notification while a human is asked
 * (src/control/approval.h), and goes on or fails with EACCES; each is a
 * `file` event with the decision. A guardrail: the path is the text the
 * process gave, so a symlink or a string rewritten meanwhile can write
 * elsewhere; the kernel walls (mounts, Landlock) are what hold. */
#pragma once
#include <linux/seccomp.h>
#include <stdbool.h>

#include "../audit/audit.h"
#include "../audit/events.h"
#include "../common/util.h"

struct approvals;
struct writeask;

/* For the globs of the policy, the workspace (as the sandbox sees it: its
 * real path), the broker, the seccomp listener (answers go there) and the
 * log. NULL when there is no glob. */
struct writeask *writeask_new(const struct strv *globs, const char *workspace, struct approvals *ap,
			      int listener, struct audit *log);
void writeask_free(struct writeask *w);
/* The file operation x (paths made absolute) of notification req: true
 * when a glob names one of its paths, the question then put and the
 * notification answered later, from here. */
bool writeask_check(struct writeask *w, const struct seccomp_notif *req, const struct ev_file *x);
