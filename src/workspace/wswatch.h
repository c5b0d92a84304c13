/* wswatch.h - the workspace watched on the host during a session, so that
 * what the host replaces or creates there is masked or protected again
 * inside (sandbox/remask.c does the mounting; the kernel detaches a bind mount whose
 * name is replaced). inotify on every directory of the workspace at start
 * and every one made since: a path the session masked at start that is
 * created or moved in again is masked again, a protected one bound
 * read-only again (an `alert` each, rule `workspace.replaced`), and a
 * secret name new since the start is masked too (rule
 * `workspace.secret_created`) unless a sandboxed process made that file
 * (wsmade.h: the supervisor notes the secret names the sandbox makes
 * before it makes them): a secret the host writes must not be read inside,
 * the agent's own `.env` stays its own. There is a window, from the host's rename to the
 * new mount, in which the agent can open the new file: doc/threat-model.md states it
 * and test_remask_race measures it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "../policy/policy.h"
#include "workspace.h"

#define WSWATCH_MAX 65536 /* directories watched, at most */

struct wswatch;

/* An empty watch of the workspace (wsfd, kept open by the plan), made by
 * workspace_plan, whose walk adds each directory with wswatch_add (one walk
 * for both); NULL with e filled when inotify cannot be had. */
struct wswatch *wswatch_new(int wsfd, struct werr *e);
/* Watch the directory name of dirfd ("" for dirfd itself), rel its
 * workspace-relative path. false when it was watched at that path already
 * (nothing new to look at inside), true otherwise (also when it cannot be
 * watched). */
bool wswatch_add(struct wswatch *w, int dirfd, const char *name, const char *rel);
/* How the re-masker is started, the first time a path needs it: a pid and
 * *sock its socket, or -1 with e filled (remask_spawn, which lives with the
 * rest of the sandbox's mounting). */
typedef pid_t (*wswatch_starter)(void *ctx, int *sock, struct werr *e);
struct wsmade;
/* What the session's watch works with once the sandbox runs. The watch is
 * made earlier, by the plan's walk, before the sandbox (and these) exist:
 * they are given to it once, here, not one by one. */
struct wswatch_cfg {
	/* what the events are judged by: the plan's masks and protections,
	 * and the policy's secret patterns */
	const struct ws_plan *plan;
	const struct policy *policy;
	/* where the names the sandbox made are noted (wsmade.h); NULL: every
	 * new secret name is masked, the agent's own too */
	struct wsmade *made;
	/* the re-masker's starter; its ctx must outlive the watch's events */
	wswatch_starter remasker;
	void *remasker_ctx;
	/* where its events go, once it is watched by the loop; and what ends
	 * the session when masks can no longer follow what the host replaces
	 * (fail closed), with its ctx */
	struct audit *log;
	void (*lost)(void *ctx);
	void *lost_ctx;
};
void wswatch_attach(struct wswatch *w, const struct wswatch_cfg *cfg);
/* Sandbox init's copy: the fd closed, nothing else touched. */
void wswatch_forget(struct wswatch *w);
/* The same, the fd handed to the caller (to close off the main thread,
 * lateclose.h); -1 without one. */
int wswatch_take_fd(struct wswatch *w);
/* Say how many directories are not watched, past WSWATCH_MAX or the
 * kernel's limit of inotify watches for the user (ENOSPC): a line on stderr
 * and an `alert` (rule `workspace.unwatched`, the count and the reason in
 * its action). The supervisor calls it at the start; dispatch, when more
 * were left unwatched since (said once more at most). */
void wswatch_report(struct wswatch *w, struct audit *log);
/* Read what inotify has and act on it: 0, or -1 when the re-masker is gone
 * (masks can no longer follow the host: the session must end). */
int wswatch_dispatch(struct wswatch *w, struct audit *log);
/* The inotify fd watched by l (wswatch_dispatch, to the log of its cfg);
 * when the re-masker is gone, an `alert` (rule `workspace.remask-lost`),
 * the cfg's lost, and the watch ends. -1 with e naming it when l cannot
 * take it. */
int wswatch_watch(struct loop *l, struct wswatch *w, struct werr *e);
void wswatch_free(struct wswatch *w);
