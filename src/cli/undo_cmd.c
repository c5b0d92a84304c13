/* undo_cmd.c - `warden undo [SESSION] [--force] [--yes]`: the workspace
 * brought back to the session's checkpoint, byte for byte with modes,
 * symlinks and mtimes. The session's log chain and the manifests' hashes
 * are verified first; what will change is shown; files changed since the
 * session ended (against its end-of-session checkpoint; an mtime alone
 * does not count) stop it unless --force; the tree
 * as it is now is checkpointed first and the undo logged as a session of
 * its own, so `warden undo` undoes the undo. And for a session run with
 * --review, `warden apply` (the same, toward the tree the session would
 * have left; files changed since it started stop it) and `warden
 * discard`. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../checkpoint/changes.h"
#include "../checkpoint/checkpoint.h"
#include "../checkpoint/leftover.h"
#include "../checkpoint/restore.h"
#include "../checkpoint/snapshot.h"
#include "../checkpoint/store.h"
#include "../common/shown.h"
#include "../common/util.h"
#include "../sandbox/sandbox.h"
#include "cli.h"
#include "cmdtab.h"
#include "config.h"

static const char undo_usage[] =
	"usage: warden undo [SESSION] [--force] [--yes]\n"
	"\n"
	"Bring the workspace back to SESSION's checkpoint (taken before it started):\n"
	"files, directories, modes, symlinks and mtimes as they were; paths the\n"
	"profile's `checkpoint exclude` left out are left alone. What will change is\n"
	"shown first and confirmed on the terminal (--yes: without asking). SESSION is\n"
	"an id or a unique prefix (warden log list); without it, the newest session\n"
	"with a checkpoint in the current directory's workspace.\n"
	"\n"
	"A path that changed after the session ended (compared with the checkpoint\n"
	"taken at its end; a file whose mtime alone changed does not count) stops the\n"
	"undo: --force restores it too. The tree as it is now is checkpointed first\n"
	"and the undo logged as a session of its own, so `warden undo` run again\n"
	"undoes the undo.\n";

static const char apply_usage[] =
	"usage: warden apply [SESSION] [--force] [--yes]\n"
	"\n"
	"Write what a session run with --review would have left into the workspace\n"
	"(warden diff SESSION shows it). What will change is shown first and confirmed\n"
	"on the terminal (--yes: without asking). Without SESSION, the newest --review\n"
	"session of the current directory's workspace. A path changed since the session\n"
	"started stops it: --force writes over it. What the sweep at the end of an\n"
	"ordinary session would move aside is left out (a .git or a protected name the\n"
	"session created or changed, a directory made to look like a repository, and in\n"
	"a git directory all but its objects, refs, logs, index and HEAD files), and\n"
	"setuid/setgid bits are cleared. The tree before is checkpointed and the apply\n"
	"logged as a session of its own: `warden undo` takes it back.\n";

static const char discard_usage[] =
	"usage: warden discard [SESSION]\n"
	"       warden discard --list\n"
	"\n"
	"Drop the changes of a session run with --review (the newest of the current\n"
	"directory's workspace without SESSION). The workspace was never written.\n"
	"\n"
	"A --review session that was killed leaves what it wrote in a review directory\n"
	"under warden's state directory: `warden apply SESSION` records and writes it,\n"
	"`warden discard SESSION` removes it, and --list names the ones that are left.\n";

/* A file an undo or apply was writing when it was killed
 * (restore.c's temporary name): warden's, not a change of the user's. */
static bool own_temp(const char *path)
{
	const char *base = strrchr(path, '/');
	return strncmp(base ? base + 1 : path, ".warden-undo.", 13) == 0;
}

/* Paths both changed since the session's end (end -> now) and about to
 * change (now -> target), but for own_temp's and those whose mtime alone
 * changed since (overwriting it loses nothing of the user's: the content
 * is the one the session left). */
static size_t conflicts(const struct manifest *end, const struct manifest *now,
			const struct changes *todo, struct strv *out)
{
	struct changes since;
	changes_compute(end, now, &since);
	if (since.root_mode && todo->root_mode)
		strv_push(out, ".");
	size_t i = 0, j = 0;
	while (i < since.n && j < todo->n) {
		const char *a = since.v[i].b ? since.v[i].b->path : since.v[i].a->path;
		const char *b = todo->v[j].b ? todo->v[j].b->path : todo->v[j].a->path;
		int c = strcmp(a, b);
		if (c == 0 && !own_temp(a) && since.v[i].kind != CH_MTIME)
			strv_push(out, a);
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	changes_free(&since);
	return out->n;
}

static bool confirm(void)
{
	if (!isatty(STDIN_FILENO))
		return false;
	fputs("Restore these paths? [y/N] ", stderr);
	char buf[16];
	if (!fgets(buf, sizeof buf, stdin))
		return false;
	return buf[0] == 'y' || buf[0] == 'Y';
}

struct undo {
	bool apply, force, yes;
	const char *verb;        /* "apply" or "undo" */
	struct ckpt_dirs d;
	struct ckpt_record rec;
	struct store st;
	struct manifest target, end;
	struct snap_result now, after;
	struct changes todo;
	struct strv conflicted;
	struct strv unmade;      /* FIFOs, sockets, devices not made again */
	struct audit *log;
	int lock_fd, wsfd;
	char *wshown;            /* the workspace as shown */
	char id[40];             /* the undo's own session */
};

static void undo_free(struct undo *u)
{
	audit_close(u->log);
	changes_free(&u->todo);
	strv_free(&u->conflicted);
	strv_free(&u->unmade);
	snap_result_free(&u->now);
	snap_result_free(&u->after);
	manifest_free(&u->target);
	manifest_free(&u->end);
	store_close(&u->st);
	ckpt_record_free(&u->rec);
	closep(&u->wsfd);
	closep(&u->lock_fd);
	free(u->wshown);
	ckpt_dirs_free(&u->d);
}

/* The session found and fit for the verb, its store open, and the two
 * manifests read: the target and (when the session recorded its end) the
 * baseline of what changed since. */
static int undo_load(struct undo *u, const char *arg, struct werr *e)
{
	bool apply = u->apply;
	if (ckpt_find(u->d.logdir, arg, u->d.cwd, apply, &u->rec, e) < 0)
		return -1;
	/* the newest is an undo that did not finish: going back to its start
	 * would put back what it was taking away; which way is the user's */
	if (!arg && u->rec.undo_of && !u->rec.end[0]) {
		const char *v = u->rec.undo_of_apply ? "apply" : "undo";
		return werr_set(e, 0, "session %s is `warden %s %s`, which did not finish (it was "
				"killed, or the machine stopped): the workspace may be partly written. "
				"`warden %s %s` finishes it (where it lists paths changed since, the "
				"ones the stopped %s was writing read as such: check the list, then "
				"add --force); `warden undo %s --force` brings the tree back to how it "
				"was before it", u->rec.session, v, u->rec.undo_of, v, u->rec.undo_of, v,
				u->rec.session);
	}
	if (apply && !u->rec.review)
		return werr_set(e, 0, "session %s was not run with --review: nothing to apply "
				"(warden undo brings back its checkpoint)", u->rec.session);
	if (store_open(&u->st, u->d.storedir, true, e) < 0)
		return -1;
	/* a killed --review session: its review directory recorded now */
	if (apply && review_recover(&u->st, u->d.logdir, &u->rec, e) < 0)
		return -1;
	if (apply && !u->rec.end[0])
		return werr_set(e, 0, "session %s (--review) recorded no changes%s%s", u->rec.session,
				u->rec.end_error ? ": " : "", u->rec.end_error ? u->rec.end_error : "");
	if (apply && !store_ref_exists(&u->st, u->rec.session, "end"))
		return werr_set(e, 0, "session %s's changes were discarded", u->rec.session);
	/* undo: toward the start, what the session left as the baseline;
	 * apply: toward what it would have left, the start as the baseline */
	if (store_get_manifest(&u->st, apply ? u->rec.end : u->rec.start, &u->target, e) < 0)
		return -1;
	if (u->rec.end[0] &&
	    store_get_manifest(&u->st, apply ? u->rec.start : u->rec.end, &u->end, e) < 0)
		return -1;
	return 0;
}

/* What will change, shown; -1 (e set) when it may not go on: changes
 * since the session that --force did not allow, or no confirmation. */
static int undo_check(struct undo *u, struct werr *e)
{
	printf("%s of session %s in %s: %zu change%s\n", u->verb, u->rec.session, u->wshown,
	       u->todo.n + u->todo.root_mode, u->todo.n + u->todo.root_mode == 1 ? "" : "s");
	changes_print(stdout, &u->todo, &u->now.m, &u->target);
	fflush(stdout);
	if (!u->rec.end[0] && !u->force)
		return werr_set(e, 0, "session %s has no checkpoint of its end (%s): whether files "
				"changed since cannot be told; --force to restore anyway",
				u->rec.session, u->rec.end_error ? u->rec.end_error :
				"it did not end normally");
	if (u->rec.end[0] && conflicts(&u->end, &u->now.m, &u->todo, &u->conflicted) && !u->force) {
		fprintf(stderr, "warden: these paths changed after session %s %s:\n",
			u->rec.session, u->apply ? "started" : "ended");
		bool index = false;
		for (size_t i = 0; i < u->conflicted.n; i++) {
			_cleanup_free_ char *p = path_shown(u->conflicted.v[i]);
			fprintf(stderr, "  %s\n", p);
			const char *c = u->conflicted.v[i];
			size_t n = strlen(c);
			index |= n >= 10 && strcmp(c + n - 10, ".git/index") == 0 &&
				 (n == 10 || c[n - 11] == '/');
		}
		if (index)
			fprintf(stderr, "  (git's index: `git status`, `git diff` and an editor's git "
				"view rewrite it, refreshing what git knows of the files; --force "
				"takes it back to how the session found it, with the rest)\n");
		return werr_set(e, 0, "%s refused: it would overwrite changes made %s the "
				"session (--force to write them over)", u->verb,
				u->apply ? "since" : "after");
	}
	/* every content it will write, read and checked now: a damaged store
	 * stops it before the workspace is touched */
	if (restore_verify(&u->st, &u->todo, e) < 0)
		return werr_wrap(e, "%s refused, nothing was changed", u->verb);
	if (!u->yes && !confirm())
		return werr_set(e, 0, "%s not confirmed (on a terminal answer y; else pass --yes)",
				u->verb);
	return 0;
}

/* The undo as a session of its own: its id, its start checkpoint (the tree
 * now) and its log opened with session.start. */
static int undo_log_start(struct undo *u, struct werr *e)
{
	audit_new_session_id(u->id, sizeof u->id);
	char *const argv[] = { "warden", (char *)u->verb, u->rec.session, NULL };
	char *const none[] = { NULL };
	const char *ws = u->rec.workspace;
	if (store_ref(&u->st, u->id, "start", u->now.hash, ws, e) < 0 ||
	    audit_open(&u->log, u->d.logdir, u->id, e) < 0)
		return -1;
	return audit_emit_event(u->log, ev_session_start(&(struct ev_session_start){
		.version = WARDEN_VERSION, .argv = argv, .workspace = ws, .policy_digest = "",
		.profiles = none, .uid = (int)getuid(), .kernel = json_object(),
		.checkpoint = json_pack("{s:s, s:s}", "manifest", u->now.hash,
					u->apply ? "apply_of" : "undo_of", u->rec.session) }), e);
}

/* After a failed restore: the tree brought back to the checkpoint taken
 * before it (u->now), from a fresh look at what it is now. */
static int undo_rollback(struct undo *u, int rootfd, const struct snap_opts *o, struct werr *e)
{
	struct snap_opts ro = *o;
	ro.store_blobs = false;
	struct snap_result cur;
	int r = snapshot_take(rootfd, &ro, &cur, e);
	if (r == 0)
		r = restore_tree(rootfd, &u->st, &cur.m, &u->now.m, e);
	snap_result_free(&cur);
	return r;
}

/* What a failed undo says: nothing changed (rolled back), or how to finish
 * it or go back, each as a command that parses and does what it says. */
static int undo_failed(struct undo *u, bool rolled, struct werr *eb, struct werr *e)
{
	char why[1200], why2[1200];
	werr_str(e, why, sizeof why);
	if (rolled)
		return werr_set(e, 0, "%s failed (%s); nothing was changed: the workspace was put "
				"back as it was. Once the cause is fixed, `warden %s %s%s` tries again",
				u->verb, why, u->verb, u->rec.session, u->force ? " --force" : "");
	werr_str(eb, why2, sizeof why2);
	return werr_set(e, 0, "%s failed (%s), and putting the workspace back as it was failed too "
			"(%s): it is partly written. `warden %s %s%s` finishes the %s; `warden undo "
			"%s%s` brings the tree back to how it was before it", u->verb, why, why2,
			u->verb, u->rec.session, u->force ? " --force" : "", u->verb, u->id,
			u->after.hash[0] ? "" : " --force");
}

/* The tree written toward the target (put back as it was when that
 * fails), then checkpointed again (what `warden undo` of this undo would
 * compare with) and session.end logged. -1 with e set when the restore
 * failed. */
static int undo_restore(struct undo *u, const struct snap_opts *o, struct werr *e)
{
	mode_t restore;
	int rootfd = snapshot_open_root(u->wsfd, &restore, e);
	int r = rootfd < 0 ? -1 : restore_tree(rootfd, &u->st, &u->now.m, &u->target, e);
	struct werr eb = { 0 };
	bool rolled = r < 0 && rootfd >= 0 && undo_rollback(u, rootfd, o, &eb) == 0;
	if (rootfd >= 0)
		close(rootfd); /* the root's mode is the checkpoint's now */
	struct werr e2 = { 0 };
	json_t *endck;
	if (snapshot_take_dir(u->wsfd, o, &u->after, &e2) < 0 ||
	    store_ref(&u->st, u->id, "end", u->after.hash, u->rec.workspace, &e2) < 0) {
		char buf[1200];
		u->after.hash[0] = '\0';
		endck = json_pack("{s:s}", "error", werr_str(&e2, buf, sizeof buf));
	} else {
		endck = json_pack("{s:s}", "manifest", u->after.hash);
	}
	if (rolled)
		json_object_set_new(endck, "rolled_back", json_true());
	audit_emit_event(u->log, ev_session_end(&(struct ev_session_end){
		.exit = r < 0 ? 125 : 0, .error = r < 0 ? e->msg : NULL, .counts = audit_counts(u->log),
		.checkpoint = endck }), NULL);
	return r < 0 ? undo_failed(u, rolled, &eb, e) : 0;
}

/* The FIFOs, sockets and devices the checkpoint names that are not
 * there now: not content, so not made again; said, not counted. */
static void say_unmade(const struct undo *u)
{
	for (size_t i = 0; i < u->unmade.n; i++) {
		const struct mf_entry *en = manifest_find(&u->target, u->unmade.v[i]);
		_cleanup_free_ char *p = path_shown(u->unmade.v[i]);
		fprintf(stderr, "warden: %s (a %s) is not there now; %s makes no FIFO, socket or "
			"device (not content): it stays missing\n", p,
			en ? mf_special_word(en->type) : "special file", u->verb);
	}
}

static int run_undo(struct undo *u, const char *arg, struct werr *e)
{
	if (ckpt_dirs_get(&u->d, e) < 0 || undo_load(u, arg, e) < 0)
		return -1;
	const char *ws = u->rec.workspace;
	/* no session meanwhile */
	u->lock_fd = review_lock_workspace(u->d.logdir, ws, u->verb, e);
	if (u->lock_fd < 0)
		return -1;
	u->wsfd = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u->wsfd < 0)
		return werr_errno(e, "the workspace %s", ws);
	/* the tree now, into the store: what undoes this undo */
	struct snap_opts o = { .st = &u->st, .store_blobs = true, .ws = ws,
			       .exclude = &u->target.exclude };
	if (snapshot_take_dir(u->wsfd, &o, &u->now, e) < 0) {
		werr_wrap(e, "checkpoint of the workspace before the %s", u->verb);
		if (e->errnum != ENOSPC && e->errnum != EDQUOT)
			return -1;
		/* a session that filled the disk must not keep its work from
		 * being undone: the way out, named */
		if (u->apply)
			return werr_hint(e, "free space on that file system and run it again");
		return werr_hint(e, "free space on that file system and run it again (what the "
				 "session added, which the undo removes anyway: `warden diff --list "
				 "%s`)", u->rec.session);
	}
	changes_compute(&u->now.m, &u->target, &u->todo);
	restore_unmade(&u->todo, &u->unmade);
	u->wshown = path_shown(ws);
	say_unmade(u);
	if (!u->todo.n && !u->todo.root_mode) {
		printf("%s is as session %s%s: nothing to %s\n", u->wshown, u->rec.session,
		       u->apply ? " would have left it" : "'s checkpoint recorded it", u->verb);
		return 0;
	}
	if (undo_check(u, e) < 0 || undo_log_start(u, e) < 0 || undo_restore(u, &o, e) < 0)
		return -1;
	struct changes left;
	changes_compute(&u->target, &u->after.m, &left);
	size_t nleft = restore_left(&left);
	changes_free(&left);
	if (u->after.hash[0] && nleft)
		return werr_set(e, 0, "%s: %zu path%s still differ%s from the checkpoint (did "
				"something write to the workspace meanwhile?)", u->verb, nleft,
				nleft == 1 ? "" : "s", nleft == 1 ? "s" : "");
	if (u->apply)
		printf("applied session %s's changes to %s; `warden undo %s` undoes them\n",
		       u->rec.session, u->wshown, u->id);
	else
		printf("restored %s to session %s's checkpoint; `warden undo %s` undoes this undo\n",
		       u->wshown, u->rec.session, u->id);
	return 0;
}

static int undo_main(int argc, char **argv, bool apply)
{
	const char *usage = apply ? apply_usage : undo_usage;
	bool force = false, yes = false;
	int c;
	while ((c = cli_getopt(argc, argv, apply ? "apply" : "undo")) != -1) {
		if (c == 'f') {
			force = true;
		} else if (c == 'y') {
			yes = true;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		fputs(usage, stderr);
		return 2;
	}
	struct undo u = { .apply = apply, .force = force, .yes = yes,
			  .verb = apply ? "apply" : "undo", .lock_fd = -1, .wsfd = -1 };
	struct werr e = { 0 };
	int r = run_undo(&u, optind < argc ? argv[optind] : NULL, &e);
	if (r < 0)
		werr_print(&e);
	undo_free(&u);
	return r < 0 ? EXIT_WARDEN : 0;
}

int cmd_undo(int argc, char **argv)
{
	return undo_main(argc, argv, false);
}

int cmd_apply(int argc, char **argv)
{
	return undo_main(argc, argv, true);
}

/* `warden discard --list`: the review directories left (leftover.h), each
 * with its workspace, or why it has none. */
static int discard_list(const char *logdir)
{
	_cleanup_strv_ struct strv ids = { 0 };
	struct werr e = { 0 };
	if (review_leftovers(logdir, &ids, &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	if (!ids.n) {
		printf("no review directory is left in %s/review\n", logdir);
		return 0;
	}
	printf("%zu review director%s left in %s/review (sessions run with --review that were "
	       "killed, or whose changes could not be recorded):\n", ids.n,
	       ids.n == 1 ? "y is" : "ies are", logdir);
	for (size_t i = 0; i < ids.n; i++) {
		struct ckpt_record rec = { 0 };
		struct werr e2 = { 0 };
		if (ckpt_find(logdir, ids.v[i], "/", true, &rec, &e2) < 0) {
			printf("  %s  (%s)\n", ids.v[i], e2.msg);
			continue;
		}
		int lock = review_lock_workspace(logdir, rec.workspace, "discard", &e2);
		if (lock >= 0)
			close(lock);
		_cleanup_free_ char *shown = path_shown(rec.workspace);
		printf("  %s  %s%s\n", rec.session, shown, lock < 0 ? "  (a session runs there)" : "");
		ckpt_record_free(&rec);
	}
	printf("`warden apply SESSION` writes a session's changes, `warden discard SESSION` drops "
	       "them\n");
	return 0;
}

/* A note when review directories other than session's are left. */
static void note_leftovers(const char *logdir, const char *session)
{
	_cleanup_strv_ struct strv ids = { 0 };
	struct werr e = { 0 };
	if (review_leftovers(logdir, &ids, &e) < 0)
		return;
	size_t n = ids.n - (session && strv_contains(&ids, session));
	if (n)
		wnote("%zu review director%s of other --review sessions that did not finish %s left: "
		      "`warden discard --list` names them", n, n == 1 ? "y" : "ies",
		      n == 1 ? "is" : "are");
}

/* `warden discard [SESSION]`: a --review session's changes dropped (its
 * reference in the store; the data goes with the next removal of what no
 * reference reaches), and its review directory when a killed session left
 * one. The workspace was never written. */
static int discard_one(const char *logdir, const char *storedir, const char *cwd, const char *arg,
		       struct werr *e)
{
	_cleanup_(ckpt_record_free) struct ckpt_record rec = { 0 };
	if (ckpt_find(logdir, arg, cwd, true, &rec, e) < 0)
		return -1;
	if (!rec.review)
		return werr_set(e, 0, "session %s was not run with --review: nothing to discard",
				rec.session);
	_cleanup_close_ int lock = review_lock_workspace(logdir, rec.workspace, "discard", e);
	if (lock < 0)
		return -1;
	_cleanup_free_ char *by = NULL;
	if (ckpt_applied_by(logdir, rec.session, &by, e) < 0)
		return -1;
	if (by)
		return werr_set(e, 0, "session %s's changes were applied to the workspace by `warden "
				"apply` (session %s): nothing was discarded; `warden undo %s` takes "
				"them out of the workspace", rec.session, by, by);
	int removed = review_remove_dir(logdir, rec.session, e);
	if (removed < 0)
		return -1;
	if (removed)
		review_clear_placeholders(&rec);
	_cleanup_(store_closep) struct store st = { .fd = -1 };
	if (store_open(&st, storedir, false, e) < 0)
		return -1;
	bool had = store_ref_exists(&st, rec.session, "end");
	if (had && store_unref(&st, rec.session, "end", e) < 0)
		return -1;
	if (!removed && !had)
		return werr_set(e, 0, "session %s's changes were already discarded (or never "
				"recorded)", rec.session);
	_cleanup_free_ char *shown = path_shown(rec.workspace);
	printf("discarded session %s's changes%s; %s was never written\n", rec.session,
	       removed ? " (its review directory removed)" : "", shown);
	note_leftovers(logdir, rec.session);
	return 0;
}

int cmd_discard(int argc, char **argv)
{
	int c;
	bool list = false;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "discard")) != -1) {
		if (c == 'l') {
			list = true;
			continue;
		}
		fputs(discard_usage, c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : 2;
	}
	if (argc - optind > 1 || (list && argc - optind > 0)) {
		fputs(discard_usage, stderr);
		return 2;
	}
	const char *arg = optind < argc ? argv[optind] : NULL;
	struct werr e = { 0 };
	_cleanup_(ckpt_dirs_free) struct ckpt_dirs d = { 0 };
	if (ckpt_dirs_get(&d, &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	if (list)
		return discard_list(d.logdir);
	if (discard_one(d.logdir, d.storedir, d.cwd, arg, &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	return 0;
}
