/* checkpoint.c - a session's checkpoints, and finding them again from its
 * log (checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/shown.h"
#include "../common/walk.h"
#include "../audit/reader.h"
#include "../audit/escape.h"
#include "review.h"

/* Retention (store_prune) runs at most this often for a workspace: it reads
 * each of the workspace's references (through their index, refs.c). */
#define CKPT_PRUNE_INTERVAL_S 300
#include "snapshot.h"

#define EXCLUDED_SHOWN 100

/* Paths nested deeper than a manifest holds, left out (snapshot.c): said
 * on the terminal and counted in the checkpoint's field. */
static void too_deep_said(const struct snap_result *r, const char *when, json_t *field)
{
	if (!r->too_deep)
		return;
	const char *p = r->too_deep_first;
	size_t n = strlen(p);
	wnote("checkpoint%s: %zu path%s nested deeper than %d characters not recorded (%.60s ... "
	      "%s): `warden undo` removes them with the directory above them, but cannot bring "
	      "them back", when, r->too_deep, r->too_deep == 1 ? "" : "s", MF_MAX_PATH, p,
	      n > 60 ? p + n - 60 : p);
	if (field)
		json_object_set_new(field, "too_deep", json_integer((json_int_t)r->too_deep));
}

/* A store the session cannot write to: what the user can change, since
 * no session runs without its checkpoint. Only a write fails with ENOSPC
 * or EDQUOT; a denial is the store's only while it is opened (the
 * workspace's unreadable files are recorded as such, not errors). */
static int store_hint(struct werr *e, bool opening)
{
	int n = e->errnum;
	if (n == ENOSPC || n == EDQUOT)
		return werr_hint(e, "free space there, give warden's store a place elsewhere "
				 "(XDG_DATA_HOME), leave large files out (`checkpoint exclude GLOB` "
				 "in the profile) or run without a checkpoint (`checkpoint off`)");
	if (n == EFBIG)
		return werr_hint(e, "your limit of a file's size (`ulimit -f`) is below a file of "
				 "the workspace: raise it, leave large files out (`checkpoint exclude "
				 "GLOB` in the profile) or run without a checkpoint (`checkpoint off`)");
	if (opening && (n == EROFS || n == EACCES || n == EPERM))
		return werr_hint(e, "give warden's store a place you can write (XDG_DATA_HOME), or "
				 "run without a checkpoint (`checkpoint off` in the profile)");
	return -1;
}

static int take(struct ckpt_session *cs, const struct policy *pol, int ws_fd,
		const struct strv *unrecorded, bool (*interrupted)(void), struct snap_result *r,
		struct werr *e)
{
	struct snap_opts o = { .st = &cs->st, .store_blobs = true, .ws = cs->ws,
			       .exclude = &pol->checkpoint.exclude, .unrecorded = unrecorded,
			       .interrupted = interrupted, .max_size = pol->checkpoint.max_size };
	return snapshot_take_dir(ws_fd, &o, r, e);
}

int ckpt_session_start(struct ckpt_session *cs, const struct policy *pol, const char *store_path,
		       const char *ws, int ws_fd, const struct strv *unrecorded,
		       bool (*interrupted)(void), const char *session, json_t **field,
		       struct werr *e)
{
	*cs = (struct ckpt_session){ .st.fd = -1, .st.lock_fd = -1, .st.blobs_fd = -1,
				     .st.manifests_fd = -1, .st.tmp_fd = -1, .st.packs_fd = -1 };
	if (pol->checkpoint.off) {
		*field = json_pack("{s:b}", "off", true);
		return 0;
	}
	if (!store_path)
		return werr_set(e, 0, "checkpoint: no store directory (HOME and XDG_DATA_HOME are not "
				"absolute paths); set `checkpoint off` to run without one");
	if (store_open(&cs->st, store_path, true, e) < 0)
		return store_hint(e, true);
	cs->on = true;
	cs->ws = xstrdup(ws);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct snap_result r;
	if (take(cs, pol, ws_fd, unrecorded, interrupted, &r, e) < 0) {
		snap_result_free(&r);
		return store_hint(e, false);
	}
	if (store_ref(&cs->st, session, "start", r.hash, ws, e) < 0) {
		snap_result_free(&r);
		return store_hint(e, false);
	}
	memcpy(cs->start, r.hash, sizeof cs->start);
	*field = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:f}", "manifest", r.hash,
			   "entries", (json_int_t)r.m.n, "files", (json_int_t)r.files,
			   "bytes", (json_int_t)r.bytes, "bytes_read", (json_int_t)r.read,
			   "excluded_count", (json_int_t)r.excluded.n, "ms", ms_since(&t0));
	/* the patterns and the paths are any bytes: kept losslessly, as the
	 * rest of session.start (escape.h), never dropped */
	json_t *esc = NULL;
	size_t shown = r.excluded.n < EXCLUDED_SHOWN ? r.excluded.n : EXCLUDED_SHOWN;
	if (*field) {
		json_set_bytes_array(*field, "exclude", pol->checkpoint.exclude.v,
				     pol->checkpoint.exclude.n, &esc);
		json_set_bytes_array(*field, "excluded", r.excluded.v, shown, &esc);
		if (esc)
			json_object_set(*field, "escaped", esc);
	}
	json_decref(esc);
	too_deep_said(&r, "", *field);
	if (r.excluded.n) {
		char list[600] = "";
		size_t i = 0;
		for (; i < r.excluded.n && strlen(list) + strlen(r.excluded.v[i]) + 3 < sizeof list;
		     i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
				 r.excluded.v[i]);
		if (i < r.excluded.n)
			wnote("checkpoint: not recorded (checkpoint exclude): %s and %zu more", list,
			      r.excluded.n - i);
		else
			wnote("checkpoint: not recorded (checkpoint exclude): %s", list);
	}
	snap_result_free(&r);
	return 0;
}

json_t *ckpt_session_end(struct ckpt_session *cs, const struct policy *pol, int ws_fd,
			 const struct strv *unrecorded, const char *session)
{
	if (!cs->on)
		return NULL;
	struct snap_result r = { 0 };
	struct werr e = { 0 };
	json_t *field;
	if (walk_dir_removed(ws_fd)) {
		/* the user was told by the sweep (swept.c) */
		field = json_pack("{s:s}", "error", "the workspace was removed during the session");
	} else if (take(cs, pol, ws_fd, unrecorded, NULL, &r, &e) < 0 ||
	    store_ref(&cs->st, session, "end", r.hash, cs->ws, &e) < 0) {
		char buf[1200];
		wnote("checkpoint at the end of the session failed: %s (`warden undo` will need "
		      "--force)", werr_str(&e, buf, sizeof buf));
		field = json_pack("{s:s}", "error", buf);
	} else {
		field = json_pack("{s:s, s:I}", "manifest", r.hash, "entries", (json_int_t)r.m.n);
		too_deep_said(&r, " at the end of the session", field);
	}
	snap_result_free(&r);
	if (store_prune_due(&cs->st, cs->ws, CKPT_PRUNE_INTERVAL_S) &&
	    store_prune(&cs->st, cs->ws, session, pol->checkpoint.keep, pol->checkpoint.keep_days,
			&e) < 0) {
		char buf[1200];
		wnote("checkpoint retention: %s", werr_str(&e, buf, sizeof buf));
	}
	return field;
}

json_t *ckpt_review_end(struct ckpt_session *cs, const char *upper,
			const struct strv *protected, const char *session, struct audit *log)
{
	if (!cs->on)
		return NULL;
	struct werr e = { 0 };
	_cleanup_free_ char *dir = xstrdup(upper);
	*strrchr(dir, '/') = '\0';
	char hash[SHA256_HEX_LEN];
	json_t *f = NULL;
	if (review_record(&cs->st, cs->start, dir, protected, session, cs->ws, log, hash, &f,
			  &e) == 0) {
		/* the workspace was never written: where its changes wait */
		if (strcmp(hash, cs->start) == 0)
			wnote("review: the session changed nothing; there is nothing to apply");
		else
			wnote("review: the session's changes wait for you: `warden diff %s` shows them, "
			      "`warden apply %s` writes them to the workspace, `warden discard %s` "
			      "drops them", session, session, session);
		return f;
	}
	char buf[1200];
	werr_str(&e, buf, sizeof buf);
	wnote("review: the session's changes could not be recorded (%s); they are kept in %s "
	      "(`warden apply` or `warden discard` takes them from there)", buf, upper);
	return json_pack("{s:s, s:s}", "error", buf, "kept", upper);
}

void ckpt_session_free(struct ckpt_session *cs)
{
	store_close(&cs->st);
	free(cs->ws);
	cs->ws = NULL;
	cs->on = false;
}

/* ---- from a session id to its manifests ------------------------------------ */

static void take_hash(json_t *ev, char out[SHA256_HEX_LEN], char **err)
{
	json_t *c = ev ? json_object_get(ev, "checkpoint") : NULL;
	const char *h = json_string_value(json_object_get(c, "manifest"));
	const char *why = json_string_value(json_object_get(c, "error"));
	out[0] = '\0';
	if (h && strlen(h) == 64)
		memcpy(out, h, SHA256_HEX_LEN);
	if (why && err)
		*err = xstrdup(why);
}

/* Does the workspace session.start names (its bytes, escape.h) hold cwd? */
static bool ws_holds(json_t *start, const char *cwd)
{
	_cleanup_free_ char *ws = json_get_bytes(start, "workspace");
	return ws && cwd && path_is_within(cwd, ws);
}

/* Each string of ck's array key, as bytes (escape.h). */
static void bytes_list(json_t *ck, const char *key, struct strv *out)
{
	for (size_t i = 0; i < json_array_size(json_object_get(ck, key)); i++) {
		char *s = json_get_bytes_at(ck, key, i);
		if (s)
			strv_push_owned(out, s);
	}
}

/* The record's fields from its log's first event (session.start, of
 * workspace ws, which it takes) and last (session.end when it ended). */
static void record_fill(struct ckpt_record *r, char *ws, json_t *first, json_t *last)
{
	r->workspace = ws;
	take_hash(first, r->start, NULL);
	json_t *ck = json_object_get(first, "checkpoint");
	r->review = json_is_true(json_object_get(ck, "review"));
	bytes_list(ck, "protected", &r->protected);
	bytes_list(ck, "placeholders", &r->placeholders);
	const char *uo = json_string_value(json_object_get(ck, "undo_of"));
	const char *ao = json_string_value(json_object_get(ck, "apply_of"));
	if (uo || ao) {
		r->undo_of = xstrdup(uo ? uo : ao);
		r->undo_of_apply = !uo;
	}
	const char *lk = json_string_value(json_object_get(last, "event"));
	if (lk && strcmp(lk, "session.end") == 0) {
		take_hash(last, r->end, &r->end_error);
		r->rolled_back = json_is_true(json_object_get(json_object_get(last, "checkpoint"),
							      "rolled_back"));
	}
}

/* A session that failed and left the workspace as it found it (its start's
 * and end's manifests the same): one whose sandbox was never made (a port
 * in use, a bad flag found late), which no one means by "the last
 * session". */
static bool failed_unchanged(json_t *start, json_t *end)
{
	const char *a = json_string_value(json_object_get(json_object_get(start, "checkpoint"),
							  "manifest"));
	const char *b = json_string_value(json_object_get(json_object_get(end, "checkpoint"),
							  "manifest"));
	return json_string_value(json_object_get(end, "error")) && a && b && strcmp(a, b) == 0;
}

/* The newest session with a checkpoint whose workspace holds cwd (its id,
 * or NULL), as ckpt_find says. */
static char *newest_with_checkpoint(struct audit_session_info *v, size_t n, const char *cwd,
				    bool review_only)
{
	for (size_t i = n; i-- > 0;) {
		json_t *c = json_object_get(v[i].start, "checkpoint");
		json_t *ce = json_object_get(v[i].end, "checkpoint");
		if (json_object_get(c, "manifest") &&
		    !json_is_true(json_object_get(ce, "rolled_back")) &&
		    !failed_unchanged(v[i].start, v[i].end) &&
		    (!review_only || json_is_true(json_object_get(c, "review"))) &&
		    ws_holds(v[i].start, cwd))
			return xstrdup(v[i].id);
	}
	return NULL;
}

/* The session taken by default is one of a workspace above the current
 * directory: said, since diff, undo and apply work on that whole
 * workspace, not only below here. */
static void said_above(struct audit_session_info *v, size_t n, const char *id, const char *cwd)
{
	for (size_t i = 0; id && i < n; i++) {
		if (strcmp(v[i].id, id) != 0)
			continue;
		_cleanup_free_ char *ws = json_get_bytes(v[i].start, "workspace");
		if (ws && cwd && strcmp(ws, cwd) != 0) {
			_cleanup_free_ char *shown = text_shown(ws);
			wnote("session %s is of the workspace %s, which holds the current directory: "
			      "it covers that whole workspace", id, shown);
		}
		return;
	}
}

int ckpt_find(const char *logdir, const char *arg, const char *cwd, bool review_only,
	      struct ckpt_record *r, struct werr *e)
{
	*r = (struct ckpt_record){ 0 };
	int dfd = audit_dir_open(logdir, e);
	if (dfd < 0)
		return e->errnum == ENOENT ? werr_set(e, 0, "no session was ever logged (%s)", logdir)
					   : -1;
	_cleanup_close_ __attribute__((unused)) int dfdc = dfd;
	_cleanup_free_ char *id = NULL;
	if (arg) {
		if (audit_resolve_session(dfd, logdir, arg, &id, e) < 0)
			return -1;
	} else {
		struct audit_session_info *v;
		size_t n;
		if (audit_list_sessions(dfd, logdir, &v, &n, e) < 0)
			return -1;
		id = newest_with_checkpoint(v, n, cwd, review_only);
		said_above(v, n, id, cwd);
		audit_sessions_free(v, n);
		if (!id)
			return werr_set(e, 0, "no session %s in %s (pass a session id: warden log list)",
					review_only ? "run with --review" : "with a checkpoint", cwd);
	}
	_cleanup_close_ int fd = audit_log_open(dfd, logdir, id, e);
	if (fd < 0)
		return -1;
	struct audit_chain c;
	int v = audit_verify_log(fd, id, &c, e);
	if (v < 0)
		return -1;
	if (v > 0)
		return werr_set(e, 0, "session %s: its log is broken at line %lu (%s): its "
				"checkpoints are not trusted", id, c.broken, c.why);
	/* the chain holds: read its first and last events */
	if (lseek(fd, 0, SEEK_SET) < 0)
		return werr_errno(e, "session %s", id);
	struct audit_reader rd;
	audit_reader_init(&rd, fd);
	struct audit_line l;
	json_t *first = NULL, *last = NULL;
	int got;
	while ((got = audit_reader_next(&rd, &l, true, e)) > 0) {
		char why[256];
		json_t *ev = audit_parse_line(l.text, l.len, why, sizeof why);
		if (!ev)
			continue;
		if (!first) {
			first = ev;
		} else {
			json_decref(last);
			last = ev;
		}
	}
	audit_reader_free(&rd);
	if (got < 0) {
		json_decref(first);
		json_decref(last);
		return -1;
	}
	const char *kind = json_string_value(json_object_get(first, "event"));
	char *ws = json_get_bytes(first, "workspace");
	if (!kind || strcmp(kind, "session.start") != 0 || !ws) {
		free(ws);
		json_decref(first);
		json_decref(last);
		return werr_set(e, 0, "session %s: its log does not start with a session.start", id);
	}
	r->session = steal_ptr(&id);
	record_fill(r, ws, first, last);
	json_decref(first);
	json_decref(last);
	if (!r->start[0]) {
		return werr_set(e, 0, "session %s has no checkpoint (it ran with `checkpoint off`, "
				"or before warden kept them)", r->session);
	}
	return 0;
}

/* v is an apply or an undo (key "apply_of" or "undo_of") of session that
 * wrote the workspace: it ended with its checkpoint, not rolled back. */
static bool done_of(const struct audit_session_info *v, const char *key, const char *session)
{
	const char *of = json_string_value(json_object_get(json_object_get(v->start, "checkpoint"),
							   key));
	json_t *ce = json_object_get(v->end, "checkpoint");
	return of && strcmp(of, session) == 0 && json_object_get(ce, "manifest") &&
	       !json_is_true(json_object_get(ce, "rolled_back"));
}

int ckpt_applied_by(const char *logdir, const char *session, char **by, struct werr *e)
{
	*by = NULL;
	int dfd = audit_dir_open(logdir, e);
	if (dfd < 0)
		return -1;
	_cleanup_close_ __attribute__((unused)) int dfdc = dfd;
	struct audit_session_info *v;
	size_t n;
	if (audit_list_sessions(dfd, logdir, &v, &n, e) < 0)
		return -1;
	/* the newest apply of it, unless an undo of that apply came after */
	for (size_t i = n; i-- > 0;) {
		if (!done_of(&v[i], "apply_of", session))
			continue;
		bool undone = false;
		for (size_t j = i + 1; j < n && !undone; j++)
			undone = done_of(&v[j], "undo_of", v[i].id);
		if (!undone)
			*by = xstrdup(v[i].id);
		break;
	}
	audit_sessions_free(v, n);
	return 0;
}

void ckpt_record_free(struct ckpt_record *r)
{
	free(r->session);
	free(r->workspace);
	free(r->end_error);
	free(r->undo_of);
	strv_free(&r->protected);
	strv_free(&r->placeholders);
	*r = (struct ckpt_record){ 0 };
}
