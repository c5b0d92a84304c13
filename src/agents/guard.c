/* guard.c - the settings in an agent's state that decide which hooks run
 * and which calls need no question (state.h: Claude Code's
 * .claude/settings.json, its "hooks", "permissions" and "disableAllHooks"),
 * kept as warden checked them when the session started and compared with
 * what is there once the session ends. The agent can write that file
 * inside: a difference is undone before the next session reads it (the
 * guarded keys back as checked, the agent's other keys kept; a file deleted,
 * replaced by another kind of file, or no longer a JSON object: the checked
 * file back, the agent's set aside) and told to the caller, which records
 * it as an alert. Never through a link the agent planted. */
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

#define GUARD_MAX (1 << 20)

/* The directory of a.guard_path (relative to the state, opened beneath
 * dfd) and the file's name in it. */
static int open_parent(const struct agent_def *a, int dfd, const char **name)
{
	const char *slash = strrchr(a->guard_path, '/');
	*name = slash ? slash + 1 : a->guard_path;
	if (!slash)
		return fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(slash - a->guard_path), a->guard_path);
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
	if (st.st_size > GUARD_MAX) {
		*why = "made larger than 1 MiB";
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

/* The guarded keys of settings j (those present), as an object. */
static json_t *guarded(const struct agent_def *a, json_t *j)
{
	json_t *g = json_object();
	for (const char *const *k = a->guard_keys; *k; k++) {
		json_t *v = json_object_get(j, *k);
		if (v)
			json_object_set(g, *k, v);
	}
	return g;
}

/* The guarded keys of the record's text into st (false: no usable record). */
static bool from_record(const struct agent_def *a, const char *text, struct agent_state *st)
{
	_cleanup_json_ json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j))
		return false;
	st->guard = guarded(a, j);
	st->guard_text = xstrdup(text);
	return true;
}

static char *restored(const struct agent_def *a, const struct agent_state *st, json_t *j);
static char *differing(const struct agent_def *a, json_t *was, json_t *now);

/* A session ended without its check: the file (j, now) compared with the
 * record's checked settings (in st), and put back when a guarded key
 * differs; st->recovered says what. */
static int recover(const struct agent_def *a, int pfd, const char *name, json_t *j,
		   struct agent_state *st, struct werr *e)
{
	_cleanup_json_ json_t *now = guarded(a, j);
	char *what = differing(a, st->guard, now);
	if (!what)
		return 0;
	struct state_guard_change *c = xcalloc(1, sizeof *c);
	c->what = what;
	c->path = xasprintf("%s/%s", st->dir, a->guard_path);
	st->recovered = c;
	_cleanup_free_ char *text = restored(a, st, j);
	if (!text || replace_beneath(pfd, name, text) < 0)
		return werr_errno(e, "restoring %s (%s since a session that ended without its check)",
				  c->path, c->what);
	return 0;
}

int state_guard_mend(const struct agent_def *a, int dfd, struct agent_state *st, struct werr *e)
{
	if (!a->guard_path)
		return 0;
	const char *name;
	_cleanup_close_ int pfd = open_parent(a, dfd, &name);
	struct stat s;
	/* (the record is opened only here: opening it takes the markers of
	 * sessions that ended unchecked, which the snapshot compares with) */
	if (pfd < 0 || fstatat(pfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0 || S_ISREG(s.st_mode))
		return 0;
	struct guardrec r;
	if (guardrec_open(dfd, &r, e) < 0)
		return -1;
	int rc = 0;
	if (r.checked && r.dead && !r.live) {
		char tag[48];
		time_t now = time(NULL);
		struct tm tm;
		strftime(tag, sizeof tag, "unchecked-%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
		struct state_guard_change *c = xcalloc(1, sizeof *c);
		c->what = xstrdup(kind_of(s.st_mode));
		c->path = xasprintf("%s/%s", st->dir, a->guard_path);
		st->recovered = c;
		if (!(c->moved_to = set_aside(pfd, name, c->path, tag)) ||
		    replace_beneath(pfd, name, r.checked) < 0)
			rc = werr_errno(e, "restoring %s (%s during a session that ended without its "
					"check)", c->path, c->what);
	}
	guardrec_close(&r);
	return rc;
}

int state_guard_snapshot(const struct agent_def *a, int dfd, struct agent_state *st, struct werr *e)
{
	if (!a->guard_path)
		return 0;
	const char *name, *why = NULL;
	_cleanup_close_ int pfd = open_parent(a, dfd, &name);
	if (pfd < 0)
		return werr_errno(e, "%s/%s", st->dir, a->guard_path);
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ json_t *j = load(pfd, name, &text, &why);
	if (!j)
		return werr_set(e, 0, "%s/%s: %s: warden checks it at the session's start (`warden "
				"state reset %s` starts afresh)", st->dir, a->guard_path, why, a->name);
	struct guardrec r;
	int rc = guardrec_open(dfd, &r, e);
	/* Another session runs (its agent may have changed the file), or one
	 * ended without its check: the settings checked are the record's. */
	if (rc == 0 && r.checked && (r.live || r.dead) && from_record(a, r.checked, st)) {
		if (!r.live)
			rc = recover(a, pfd, name, j, st, e);
	} else if (rc == 0) {
		st->guard = guarded(a, j);
		st->guard_text = steal_ptr(&text);
		/* the record already holds these settings (the usual case: the
		 * last session ended with its check): no new file for it */
		bool same = r.checked && strcmp(r.checked, st->guard_text) == 0;
		if (!same && guardrec_write(&r, st->guard_text) < 0)
			rc = werr_errno(e, "%s/.warden-guard: recording the settings checked", st->dir);
	}
	if (rc == 0 && (st->guard_marker = guardrec_enter(&r, &st->guard_marker_name)) < 0)
		rc = werr_errno(e, "%s/.warden-guard: this session's marker", st->dir);
	guardrec_close(&r);
	return rc;
}


/* "K1, K2 changed": the guarded keys that differ between was and now;
 * NULL when none does. */
static char *differing(const struct agent_def *a, json_t *was, json_t *now)
{
	char buf[256] = "";
	for (const char *const *k = a->guard_keys; *k; k++) {
		json_t *x = json_object_get(was, *k), *y = json_object_get(now, *k);
		if (!x && !y)
			continue;
		if (x && y && json_equal(x, y))
			continue;
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", *buf ? ", " : "", *k);
	}
	return *buf ? xasprintf("%s changed", buf) : NULL;
}

/* The settings j with its guarded keys as they were (st->guard). */
static char *restored(const struct agent_def *a, const struct agent_state *st, json_t *j)
{
	for (const char *const *k = a->guard_keys; *k; k++) {
		json_t *v = json_object_get(st->guard, *k);
		if (v)
			json_object_set_new(j, *k, json_deep_copy(v));
		else
			json_object_del(j, *k);
	}
	char *text = json_dumps(j, JSON_INDENT(2));
	if (!text)
		return NULL;
	char *out = xasprintf("%s\n", text);
	free(text);
	return out;
}

void state_guard_leave(struct agent_state *st)
{
	if (st->guard_marker_name && st->lock_fd >= 0)
		guardrec_leave(st->lock_fd, st->guard_marker_name);
	free(st->guard_marker_name);
	st->guard_marker_name = NULL;
}

int state_guard_check(const struct agent_def *a, struct agent_state *st, const char *session,
		      struct state_guard_change *c, struct werr *e)
{
	*c = (struct state_guard_change){ 0 };
	if (!a->guard_path || !st->guard || st->lock_fd < 0)
		return 0;
	const char *name, *why = NULL;
	_cleanup_close_ int pfd = open_parent(a, st->lock_fd, &name);
	if (pfd < 0)
		return werr_errno(e, "checking %s/%s", st->dir, a->guard_path);
	_cleanup_json_ json_t *j = load(pfd, name, NULL, &why);
	_cleanup_free_ char *text = NULL;
	c->path = xasprintf("%s/%s", st->dir, a->guard_path);
	if (j) {
		_cleanup_json_ json_t *now = guarded(a, j);
		if (!(c->what = differing(a, st->guard, now))) {
			state_guard_leave(st);
			return 0;
		}
		if (!(text = restored(a, st, j)))
			return werr_set(e, ENOMEM, "restoring %s", c->path);
	} else {
		c->what = xstrdup(why);
		/* the agent's file (not a JSON object, a directory, a link) set
		 * aside for review, the checked one back */
		if (strcmp(why, "deleted") != 0)
			c->moved_to = set_aside(pfd, name, c->path, session);
		text = xstrdup(st->guard_text);
	}
	if (replace_beneath(pfd, name, text) < 0)
		return werr_errno(e, "restoring %s (%s during the session)", c->path, c->what);
	state_guard_leave(st);
	return 1;
}

void state_guard_change_free(struct state_guard_change *c)
{
	free(c->path);
	free(c->what);
	free(c->moved_to);
	*c = (struct state_guard_change){ 0 };
}
