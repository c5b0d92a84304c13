/* guard.c - the files in an agent's state whose keys decide which hooks
 * run, which MCP servers start and which calls need no question (state.h,
 * agents.h's agent_guard: Claude Code's .claude/settings.json, its "hooks",
 * "permissions" and "disableAllHooks"; its .claude.json, its "mcpServers"
 * and those keys of each project's entry), kept as warden checked them
 * when the session started and compared with what is there once the
 * session ends. The agent can write those files inside: a difference is
 * undone before the next session reads them (each guarded key that
 * differs back as checked, down to a project's key, the agent's other
 * changes kept; a file deleted, replaced by another kind of file, or no
 * longer a JSON object: the checked file back, the agent's set aside) and
 * told to the caller, which records it as an alert. A key whose value
 * grants nothing (null, false, [], {}) is as one absent: Claude Code writes
 * a new project's entry with empty ones. Never through a link the agent
 * planted. */
#include "state.h"
#include "guardrec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* how many guarded keys a change names before "..." */
#define NAMED_MAX 8

/* The directory of g.path (relative to the state, opened beneath dfd) and
 * the file's name in it. */
static int open_parent(const struct agent_guard *g, int dfd, const char **name)
{
	const char *slash = strrchr(g->path, '/');
	*name = slash ? slash + 1 : g->path;
	if (!slash)
		return fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(slash - g->path), g->path);
	return open_beneath(dfd, dir, O_RDONLY | O_DIRECTORY, 0);
}

/* What stands in place of a regular file, in words. */
static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "replaced by a symlink" : S_ISDIR(m) ? "replaced by a directory"
		: "replaced by a special file";
}

/* The agent's file name in pfd (at path) renamed to NAME.agent-TAG for
 * review: its path then, or NULL (errno) when it could not be. */
static char *set_aside(int pfd, const char *name, const char *path, const char *tag)
{
	_cleanup_free_ char *aside = xasprintf("%s.agent-%s", name, tag);
	return renameat(pfd, name, pfd, aside) == 0 ? xasprintf("%s.agent-%s", path, tag) : NULL;
}

/* The file name in pfd as a JSON object with its text (*text, may be
 * NULL): NULL with *why when it is missing, not a regular file, too large
 * or not a JSON object. */
static json_t *load(int pfd, const char *name, char **text, const char **why)
{
	struct stat st;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		*why = errno == ENOENT ? "deleted" : "unreadable";
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = kind_of(st.st_mode);
		return NULL;
	}
	_cleanup_close_ int fd = open_beneath(pfd, name, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "unreadable";
		return NULL;
	}
	if (st.st_size > GUARDREC_MAX) {
		*why = "made larger than 64 MiB";
		return NULL;
	}
	_cleanup_free_ char *buf = xmalloc((size_t)st.st_size + 1);
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	json_t *j = n < 0 ? NULL : json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		*why = "no longer a JSON object";
		return NULL;
	}
	if (text) {
		buf[n] = '\0';
		*text = steal_ptr(&buf);
	}
	return j;
}

/* v, or NULL when it grants nothing (missing, null, false, [], {}). */
static json_t *granting(json_t *v)
{
	if (!v || json_is_null(v) || json_is_false(v))
		return NULL;
	if ((json_is_array(v) && !json_array_size(v)) || (json_is_object(v) && !json_object_size(v)))
		return NULL;
	return v;
}

/* Whether x and y grant the same. */
static bool same(json_t *x, json_t *y)
{
	x = granting(x);
	y = granting(y);
	return (!x && !y) || (x && y && json_equal(x, y));
}

/* The keys of object o that grant something, set in view v. */
static void pick(json_t *v, json_t *o, const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		json_t *x = granting(json_object_get(o, *k));
		if (x)
			json_object_set(v, *k, x);
	}
}

/* The guarded keys of file j that grant something, as an object: g.keys,
 * and under g.each the members with such each_keys, those only. */
static json_t *guarded(const struct agent_guard *g, json_t *j)
{
	json_t *v = json_object();
	pick(v, j, g->keys);
	json_t *each = g->each ? json_object_get(j, g->each) : NULL, *o;
	if (!json_is_object(each))
		return v;
	json_t *sub = json_object();
	const char *m;
	json_object_foreach(each, m, o) {
		json_t *mv = json_object();
		pick(mv, o, g->each_keys);
		if (json_object_size(mv))
			json_object_set_new(sub, m, mv);
		else
			json_decref(mv);
	}
	if (json_object_size(sub))
		json_object_set_new(v, g->each, sub);
	else
		json_decref(sub);
	return v;
}

/* The names of the members of x and of y (either may be no object), as the
 * keys of a new object. */
static json_t *members(json_t *x, json_t *y)
{
	json_t *set = json_object(), *o;
	const char *m;
	if (json_is_object(x))
		json_object_foreach(x, m, o)
			json_object_set_new(set, m, json_null());
	if (json_is_object(y))
		json_object_foreach(y, m, o)
			json_object_set_new(set, m, json_null());
	return set;
}

/* The guarded keys of the record's text into sg (false: no usable record). */
static bool from_record(const struct agent_guard *g, const char *text, struct state_guarded *sg)
{
	_cleanup_json_ json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j))
		return false;
	sg->keys = guarded(g, j);
	sg->text = xstrdup(text);
	return true;
}

/* One more changed key named on f (n: how many so far): K, or
 * EACH["MEMBER"].K. */
static void name_key(FILE *f, size_t *n, const char *each, const char *m, const char *k)
{
	if (*n < NAMED_MAX) {
		fputs(*n ? ", " : "", f);
		if (each)
			fprintf(f, "%s[\"%.200s\"].", each, m);
		fputs(k, f);
	} else if (*n == NAMED_MAX) {
		fputs(", ...", f);
	}
	(*n)++;
}

/* "K1, projects["/p"].K2 changed": the guarded keys that differ between
 * views was and now; NULL when none does. */
static char *differing(const struct agent_guard *g, json_t *was, json_t *now)
{
	char *buf = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return xstrdup("changed (unsaid: out of memory)");
	for (const char *const *k = g->keys; *k; k++)
		if (!same(json_object_get(was, *k), json_object_get(now, *k)))
			name_key(f, &n, NULL, NULL, *k);
	if (g->each) {
		json_t *w = json_object_get(was, g->each), *y = json_object_get(now, g->each), *o;
		_cleanup_json_ json_t *set = members(w, y);
		const char *m;
		json_object_foreach(set, m, o)
			for (const char *const *k = g->each_keys; *k; k++)
				if (!same(json_object_get(json_object_get(w, m), *k),
					  json_object_get(json_object_get(y, m), *k)))
					name_key(f, &n, g->each, m, *k);
	}
	fclose(f);
	char *out = n ? xasprintf("%s changed", buf) : NULL;
	free(buf);
	return out;
}

/* Key k of object o as was (NULL: removed). */
static void put_back(json_t *o, const char *k, json_t *was)
{
	if (was)
		json_object_set_new(o, k, json_deep_copy(was));
	else
		json_object_del(o, k);
}

/* Under j's g.each, each member's guarded keys that differ from view was
 * put back; a member or g.each itself that is no longer an object made
 * one again when a key needs putting back in it. */
static void restore_each(const struct agent_guard *g, json_t *was, json_t *j)
{
	json_t *w = json_object_get(was, g->each), *p = json_object_get(j, g->each), *unused;
	_cleanup_json_ json_t *set = members(w, p);
	const char *m;
	json_object_foreach(set, m, unused) {
		json_t *o = json_object_get(p, m);
		for (const char *const *k = g->each_keys; *k; k++) {
			json_t *x = json_object_get(json_object_get(w, m), *k);
			if (same(x, json_object_get(o, *k)))
				continue;
			if (!json_is_object(p)) {
				p = json_object();
				json_object_set_new(j, g->each, p);
			}
			if (!json_is_object(o)) {
				o = json_object();
				json_object_set_new(p, m, o);
			}
			put_back(o, *k, x);
		}
	}
}

/* File j with its guarded keys that differ put back as in view was, as
 * text (NULL: no memory). */
static char *restored(const struct agent_guard *g, json_t *was, json_t *j)
{
	for (const char *const *k = g->keys; *k; k++) {
		json_t *x = json_object_get(was, *k);
		if (!same(x, json_object_get(j, *k)))
			put_back(j, *k, x);
	}
	if (g->each)
		restore_each(g, was, j);
	char *text = json_dumps(j, JSON_INDENT(2));
	if (!text)
		return NULL;
	char *out = xasprintf("%s\n", text);
	free(text);
	return out;
}

/* A session ended without its check: file i (j, now, in pfd as name)
 * compared with the record's checked keys (in st), and put back when a
 * guarded key differs; st->recovered[i] says what. */
static int recover(const struct agent_def *a, size_t i, int pfd, const char *name, json_t *j,
		   struct agent_state *st, struct werr *e)
{
	const struct agent_guard *g = &a->guards[i];
	_cleanup_json_ json_t *now = guarded(g, j);
	char *what = differing(g, st->guard[i].keys, now);
	if (!what)
		return 0;
	struct state_guard_change *c = &st->recovered[i];
	c->what = what;
	c->path = xasprintf("%s/%s", st->dir, g->path);
	_cleanup_free_ char *text = restored(g, st->guard[i].keys, j);
	if (!text || replace_beneath(pfd, name, text) < 0)
		return werr_errno(e, "restoring %s (%s since a session that ended without its check)",
				  c->path, c->what);
	return 0;
}

/* File i, left by a session that ended without its check as something
 * other than a regular file (mode), set aside (tag) and its checked text
 * (rec) written back; st->recovered[i] says so. */
static int mend_one(const struct agent_def *a, size_t i, int dfd, mode_t mode, const char *rec,
		    const char *tag, struct agent_state *st, struct werr *e)
{
	const struct agent_guard *g = &a->guards[i];
	const char *name;
	_cleanup_close_ int pfd = open_parent(g, dfd, &name);
	struct state_guard_change *c = &st->recovered[i];
	c->what = xstrdup(kind_of(mode));
	c->path = xasprintf("%s/%s", st->dir, g->path);
	if (pfd < 0 || !(c->moved_to = set_aside(pfd, name, c->path, tag)) ||
	    replace_beneath(pfd, name, rec) < 0)
		return werr_errno(e, "restoring %s (%s during a session that ended without its "
				  "check)", c->path, c->what);
	return 0;
}

int state_guard_mend(const struct agent_def *a, int dfd, struct agent_state *st, struct werr *e)
{
	mode_t odd[AGENT_GUARDS_MAX] = { 0 };
	bool any = false;
	for (size_t i = 0; i < a->nguards; i++) {
		const char *name;
		_cleanup_close_ int pfd = open_parent(&a->guards[i], dfd, &name);
		struct stat s;
		if (pfd >= 0 && fstatat(pfd, name, &s, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(s.st_mode)) {
			odd[i] = s.st_mode;
			any = true;
		}
	}
	/* (the record is opened only here: opening it takes the markers of
	 * sessions that ended unchecked, said to the snapshot in
	 * st->guard_dead) */
	if (!any)
		return 0;
	struct guardrec r;
	if (guardrec_open(dfd, &r, e) < 0)
		return -1;
	st->guard_dead = r.dead;
	char tag[48];
	time_t now = time(NULL);
	struct tm tm;
	strftime(tag, sizeof tag, "unchecked-%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < a->nguards && r.dead && !r.live; i++) {
		_cleanup_free_ char *rec = odd[i] ? guardrec_read(&r, a->guards[i].record) : NULL;
		if (rec)
			rc = mend_one(a, i, dfd, odd[i], rec, tag, st, e);
	}
	guardrec_close(&r);
	return rc;
}

/* A guarded file as read at the start. */
struct loaded {
	int pfd;
	const char *name;
	json_t *j;
	char *text;
};

static void loaded_free(struct loaded *l)
{
	if (l->pfd >= 0)
		close(l->pfd);
	json_decref(l->j);
	free(l->text);
}

/* File i as read at the start into l: -1 with e filled when it cannot be
 * opened or is no JSON object. */
static int load_one(const struct agent_def *a, size_t i, int dfd, const struct agent_state *st,
		    struct loaded *l, struct werr *e)
{
	const struct agent_guard *g = &a->guards[i];
	const char *why = NULL;
	if ((l->pfd = open_parent(g, dfd, &l->name)) < 0)
		return werr_errno(e, "%s/%s", st->dir, g->path);
	if (!(l->j = load(l->pfd, l->name, &l->text, &why)))
		return werr_set(e, 0, "%s/%s: %s: warden checks it at the session's start (`warden "
				"state reset %s` starts afresh)", st->dir, g->path, why, a->name);
	return 0;
}

/* File i (l) checked, the record open (r): its guarded keys kept in st,
 * the record's when another session runs or one ended without its check
 * (a change then undone, when none runs), else the file's (recorded). */
static int snapshot_one(const struct agent_def *a, size_t i, struct guardrec *r, struct loaded *l,
			struct agent_state *st, struct werr *e)
{
	const struct agent_guard *g = &a->guards[i];
	struct state_guarded *sg = &st->guard[i];
	_cleanup_free_ char *rec = guardrec_read(r, g->record);
	bool dead = r->dead || st->guard_dead;
	/* Another session runs (its agent may have changed the file), or one
	 * ended without its check: the keys checked are the record's. */
	if (rec && (r->live || dead) && from_record(g, rec, sg))
		return r->live ? 0 : recover(a, i, l->pfd, l->name, l->j, st, e);
	sg->keys = guarded(g, l->j);
	sg->text = steal_ptr(&l->text);
	/* the record already holds this text (the usual case for settings:
	 * the last session ended with its check): no new file for it */
	if ((!rec || strcmp(rec, sg->text) != 0) && guardrec_write(r, g->record, sg->text) < 0)
		return werr_errno(e, "%s/.warden-guard: recording %s as checked", st->dir, g->path);
	return 0;
}

int state_guard_snapshot(const struct agent_def *a, int dfd, struct agent_state *st, struct werr *e)
{
	if (!a->nguards)
		return 0;
	struct loaded l[AGENT_GUARDS_MAX];
	for (size_t i = 0; i < AGENT_GUARDS_MAX; i++)
		l[i] = (struct loaded){ .pfd = -1 };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < a->nguards; i++)
		rc = load_one(a, i, dfd, st, &l[i], e);
	struct guardrec r = { .dfd = -1 };
	if (rc == 0)
		rc = guardrec_open(dfd, &r, e);
	for (size_t i = 0; rc == 0 && i < a->nguards; i++)
		rc = snapshot_one(a, i, &r, &l[i], st, e);
	if (rc == 0 && (st->guard_marker = guardrec_enter(&r, &st->guard_marker_name)) < 0)
		rc = werr_errno(e, "%s/.warden-guard: this session's marker", st->dir);
	guardrec_close(&r);
	for (size_t i = 0; i < AGENT_GUARDS_MAX; i++)
		loaded_free(&l[i]);
	return rc;
}

void state_guard_leave(struct agent_state *st)
{
	if (st->guard_marker_name && st->lock_fd >= 0)
		guardrec_leave(st->lock_fd, st->guard_marker_name);
	free(st->guard_marker_name);
	st->guard_marker_name = NULL;
}

int state_guard_check(const struct agent_def *a, struct agent_state *st, size_t i,
		      const char *session, struct state_guard_change *c, struct werr *e)
{
	*c = (struct state_guard_change){ 0 };
	if (i >= a->nguards || !st->guard[i].keys || st->lock_fd < 0)
		return 0;
	const struct agent_guard *g = &a->guards[i];
	const char *name, *why = NULL;
	_cleanup_close_ int pfd = open_parent(g, st->lock_fd, &name);
	if (pfd < 0)
		return werr_errno(e, "checking %s/%s", st->dir, g->path);
	_cleanup_json_ json_t *j = load(pfd, name, NULL, &why);
	_cleanup_free_ char *text = NULL;
	c->path = xasprintf("%s/%s", st->dir, g->path);
	if (j) {
		_cleanup_json_ json_t *now = guarded(g, j);
		if (!(c->what = differing(g, st->guard[i].keys, now)))
			return 0;
		if (!(text = restored(g, st->guard[i].keys, j)))
			return werr_set(e, ENOMEM, "restoring %s", c->path);
	} else {
		c->what = xstrdup(why);
		/* the agent's file (not a JSON object, a directory, a link) set
		 * aside for review, the checked one back */
		if (strcmp(why, "deleted") != 0)
			c->moved_to = set_aside(pfd, name, c->path, session);
		text = xstrdup(st->guard[i].text);
	}
	if (replace_beneath(pfd, name, text) < 0)
		return werr_errno(e, "restoring %s (%s during the session)", c->path, c->what);
	return 1;
}

void state_guard_change_free(struct state_guard_change *c)
{
	free(c->path);
	free(c->what);
	free(c->moved_to);
	*c = (struct state_guard_change){ 0 };
}
