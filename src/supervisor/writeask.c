/* writeask.c - the questions of `write ask` (writeask.h): the operations
 * held, each with a copy of its event, until the broker's answer. */
#include "writeask.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../control/approval.h"
#include "answer.h"

struct held {
	struct writeask *w;
	struct held *next;
	__u64 id;
	struct ev_file x;          /* its paths, target and attr owned */
	const struct question *question;
};

struct writeask {
	const struct strv *globs;
	char *workspace;
	struct approvals *ap;
	int listener;
	struct audit *log;
	struct held *held;
};

struct writeask *writeask_new(const struct strv *globs, const char *workspace, struct approvals *ap,
			      int listener, struct audit *log)
{
	if (!globs->n || !ap)
		return NULL;
	struct writeask *w = xcalloc(1, sizeof *w);
	w->globs = globs;
	w->workspace = xstrdup(workspace);
	w->ap = ap;
	w->listener = listener;
	w->log = log;
	return w;
}

static void held_free(struct held *h)
{
	for (int i = 0; i < h->x.npaths; i++)
		free((char *)h->x.paths[i]);
	free((char *)h->x.target);
	free((char *)h->x.attr);
	free(h);
}

void writeask_free(struct writeask *w)
{
	if (!w)
		return;
	while (w->held) {
		struct held *h = w->held;
		w->held = h->next;
		approvals_cancel(w->ap, h->question);
		held_free(h);
	}
	free(w->workspace);
	free(w);
}

/* The glob that names path (absolute, written plainly), or NULL. */
static const char *named_as(const struct writeask *w, const char *path)
{
	if (!path || !path_is_within(path, w->workspace))
		return NULL;
	size_t wl = strlen(w->workspace);
	const char *rel = path + wl + (path[wl] == '/');
	if (!*rel)
		return NULL;
	const char *name = strrchr(rel, '/');
	name = name ? name + 1 : rel;
	for (size_t i = 0; i < w->globs->n; i++) {
		const char *g = w->globs->v[i];
		if (strchr(g, '/') ? fnmatch(g, rel, FNM_PATHNAME) == 0 : fnmatch(g, name, 0) == 0)
			return g;
	}
	return NULL;
}

/* The glob that names path, as written or with its ".." taken lexically
 * (docs/../docs/a.md is docs/a.md unless a symlink came before the ".."):
 * either asks. */
static const char *named(const struct writeask *w, const char *path)
{
	const char *g = named_as(w, path);
	if (g || !path || !strstr(path, "/.."))
		return g;
	_cleanup_free_ char *lex = path_lexical(path, true);
	return named_as(w, lex);
}

/* The glob that could name a partial path (relative to a directory too
 * deep to name, notefile.c): one whose last component matches the path's
 * last. A glob of one component names files by their name at any depth,
 * as for a whole path; one of several cannot be told from here, and asks
 * (fail closed: the guardrail holds such a write for the question). */
static const char *named_partial(const struct writeask *w, const char *path)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return NULL;
	for (size_t i = 0; i < w->globs->n; i++) {
		const char *g = w->globs->v[i];
		const char *last = strrchr(g, '/');
		if (fnmatch(last ? last + 1 : g, name, 0) == 0)
			return g;
	}
	return NULL;
}

static void unlink_held(struct writeask *w, struct held *h)
{
	for (struct held **pp = &w->held; *pp; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			return;
		}
}

static void answered(void *ctx, bool allow, const char *why)
{
	struct held *h = ctx;
	struct writeask *w = h->w;
	h->question = NULL;
	h->x.decision = allow ? "allow" : "deny";
	h->x.reason = why;
	h->x.access = "write"; /* as every write's event says */
	bool unlogged = audit_emit_event(w->log, ev_file(&h->x), NULL) < 0 && audit_failed(w->log);
	notify_answer(w->listener, h->id, allow && !unlogged ? 0 : EACCES, true, 0);
	unlink_held(w, h);
	held_free(h);
}

bool writeask_check(struct writeask *w, const struct seccomp_notif *req, const struct ev_file *x)
{
	if (!w)
		return false;
	const char *glob = NULL, *path = NULL;
	bool partial = false;
	for (int i = 0; i < x->npaths && !glob; i++)
		if ((glob = x->partial[i] && x->paths[i] ? named_partial(w, x->paths[i])
							 : named(w, x->paths[i]))) {
			path = x->paths[i];
			partial = x->partial[i];
		}
	if (!glob)
		return false;
	struct held *h = xcalloc(1, sizeof *h);
	h->w = w;
	h->id = req->id;
	/* the strings read from the notification's memory (the caller's) are
	 * kept: the event is written when the answer comes */
	h->x = *x;
	for (int i = 0; i < x->npaths; i++)
		h->x.paths[i] = x->paths[i] ? xstrdup(x->paths[i]) : NULL;
	h->x.target = x->target ? xstrdup(x->target) : NULL;
	h->x.attr = x->attr ? xstrdup(x->attr) : NULL;
	h->next = w->held;
	w->held = h;
	char summary[PATH_MAX + 64];
	snprintf(summary, sizeof summary, "%s %s%s", x->op, path,
		 partial ? " (in a directory too deep to name: it may not be the rule's)" : "");
	json_t *detail = json_pack("{s:s,s:s,s:s,s:I,s:s}", "op", x->op, "syscall", x->syscall, "path", path,
				   "pid", (json_int_t)x->pid, "rule", glob);
	if (partial)
		json_object_set_new(detail, "path_partial", json_true());
	const struct question *q = approvals_ask(w->ap, APPROVAL_WRITE, path, summary, detail, answered, h);
	/* answered at once: h is gone */
	if (q)
		h->question = q;
	return true;
}
