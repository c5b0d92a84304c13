/* swept.c - the end-of-session sweep run (workspace_sweep,
 * workspace_sweep_gitdir) and what it did told on stderr, with how to undo
 * a move, and recorded as alert events (swept.h). */
#include "swept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../audit/events.h"
#include "../common/walk.h"
#include "objcheck.h"

static const char *setid_bits(mode_t bits)
{
	bool u = bits & S_ISUID, g = bits & S_ISGID;
	return u && g ? "setuid and setgid bits" : u ? "setuid bit" : "setgid bit";
}

static const char *odd_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symlink"
		: "a device";
}

/* With the sandbox gone: move aside git repositories and redirects the
 * agent created, and a rebase's state that would run its commands, clear
 * setuid/setgid bits that appeared, remove what is neither a file nor a
 * directory from git directories (ws's, or with gitdir that one, outside
 * it: workspace_sweep_gitdir), check the objects written into their stores
 * (objcheck.h), record each as an alert and tell the user (how to undo a
 * move). */
int session_sweep(const char *ws, const char *gitdir, const struct ws_plan *plan,
		  struct audit *log, const char *session, struct werr *e)
{
	/* removed from the host meanwhile: said once, never a walk's bare
	 * ENOENT (the end's checkpoint records the same: checkpoint.c) */
	if (!gitdir && plan->ws_fd >= 0 && walk_dir_removed(plan->ws_fd)) {
		wnote("%s was removed while the session ran: there was nothing left in it to sweep "
		      "or to record at the end", ws);
		return 0;
	}
	struct ws_sweep sw = { 0 };
	int r = gitdir ? workspace_sweep_gitdir(gitdir, plan, session, &sw, e)
		       : workspace_sweep(ws, plan, session, &sw, e);
	for (size_t i = 0; i < sw.n; i++) {
		const struct ws_swept *it = &sw.v[i];
		/* outside the workspace: the whole path */
		_cleanup_free_ char *full = gitdir ? xasprintf("%s/%s", sw.ws, it->rel) : NULL;
		struct event a;
		char was[8], now[8];
		switch (it->kind) {
		case WS_SWEPT_GIT:
			wnote("the sandboxed command created %s/%s%s%s%s; its git configuration and "
			      "hooks would run on your next git command there, so it was moved to %s "
			      "(review it, then `mv` it back if you trust it)", sw.ws, it->rel,
			      it->why ? " (" : "", it->why ? it->why : "", it->why ? ")" : "", it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "git.created-in-sandbox",
				.path = it->rel, .moved_to = it->to, .action = "quarantined",
				.detail = it->why });
			break;
		case WS_SWEPT_BARE:
			wnote("the sandboxed command made %s/%.*s look like a git repository (HEAD, "
			      "objects/, refs/), whose configuration and hooks git would run; its HEAD "
			      "was moved to %s so git no longer takes it for one (review it, then `mv` "
			      "it back if you trust it)", sw.ws, (int)(strlen(it->rel) - strlen("HEAD")),
			      it->rel, it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "git.bare-created-in-sandbox",
				.path = it->rel, .moved_to = it->to, .action = "quarantined" });
			break;
		case WS_SWEPT_CONFIG:
			wnote("the sandboxed command created %s/%s, a configuration that tools on your "
			      "host read to start commands; it was moved to %s (review it, then `mv` it "
			      "back if you trust it)", sw.ws, it->rel, it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "config.created-in-sandbox",
				.path = it->rel, .moved_to = it->to, .action = "quarantined" });
			break;
		case WS_SWEPT_REBASE:
			wnote("the sandboxed command left %s/%s, a rebase or cherry-pick in progress "
			      "whose next --continue would run a program on your host: %s; it was "
			      "moved to %s, so git sees none in progress (review it, then `mv` it back "
			      "if you trust it; a rebased branch is as it was before the rebase, HEAD "
			      "where the rebase left it)", sw.ws, it->rel, it->why ? it->why : "",
			      it->to);
			a = ev_alert(&(struct ev_alert){ .rule = "git.rebase-runs-in-sandbox",
				.path = full ? full : it->rel, .moved_to = it->to,
				.action = "quarantined", .detail = it->why });
			break;
		case WS_SWEPT_CONFIG_KEPT:
			a = ev_alert(&(struct ev_alert){ .rule = "config.created-in-sandbox",
				.path = it->rel, .action = "kept", .severity = "low",
				.detail = "the same as the workspace's own at its top (a new "
					  "checkout of the repository)" });
			break;
		case WS_SWEPT_GIT_KEPT:
			/* on the record, not on stderr: nothing to review */
			a = ev_alert(&(struct ev_alert){ .rule = "git.created-in-sandbox",
				.path = it->rel, .action = "kept", .severity = "low",
				.detail = it->why ? it->why : "git init's own: its settings and sample "
					  "hooks only, nothing git runs" });
			break;
		case WS_SWEPT_ODD:
		case WS_SWEPT_ODD_TREE:
			wnote("removed %s at %s/%s%s%s after the session: git on your host %s (and "
			      "waits on a FIFO forever)", odd_kind(it->mode_was), sw.ws, it->rel,
			      it->to ? " -> " : "", it->to ? it->to : "", it->kind == WS_SWEPT_ODD ?
			      "opens what it finds in a git directory" : "reads that name");
			a = ev_alert(&(struct ev_alert){ .rule = "git.odd-file-in-sandbox",
				.path = full ? full : it->rel, .action = "removed",
				.detail = odd_kind(it->mode_was) });
			break;
		default:
			snprintf(was, sizeof was, "%04o", (unsigned)it->mode_was);
			snprintf(now, sizeof now, "%04o", (unsigned)it->mode);
			wnote("%s/%s got the %s during the session; warden cleared %s (mode %s, was %s)",
			      sw.ws, it->rel, setid_bits(it->mode_was & ~it->mode),
			      (it->mode_was & ~it->mode) == (S_ISUID | S_ISGID) ? "them" : "it", now, was);
			a = ev_alert(&(struct ev_alert){ .rule = "setid.appeared-in-sandbox",
				.path = it->rel, .action = "cleared", .mode_was = was, .mode = now });
			break;
		}
		if (audit_emit_event(log, a, e) < 0 || audit_sync(log, e) < 0)
			r = -1;
	}
	/* and the objects it wrote into git's stores, by their content */
	if (sw.objects.n && objcheck_run(&sw.objects, gitdir ? NULL : sw.ws, log, session, e) < 0)
		r = -1;
	ws_sweep_free(&sw);
	return r;
}

