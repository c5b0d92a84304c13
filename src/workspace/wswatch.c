/* wswatch.c - the workspace watched on the host during a session
 * (wswatch.h). A table of inotify watch descriptors to workspace-relative
 * directories (sorted: watch descriptors only grow), filled by the plan's
 * walk of the workspace at start (workspace.c) and as directories appear
 * (a new tree walked whole: what it holds may have been made before its
 * watch was); each name that appears is judged by the plan (was the path
 * masked or protected at start?) and the policy's secret patterns, then
 * the re-masker is asked and its answer waited for. */
#include "wswatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/notifylimit.h"
#include "../common/util.h"
#include "../common/walk.h"
#include "wsmade.h"
#include "wsrules.h"

#define WATCH_EVENTS (IN_CREATE | IN_MOVED_TO | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)
#define ANSWER_MS 2000

struct watched {
	int wd;
	char *rel; /* "" for the workspace itself */
};

struct wswatch {
	int ino, wsfd;
	int sock;               /* the re-masker's, once started (remask.c) */
	wswatch_starter start;  /* how it is */
	void *start_ctx;
	pid_t helper;           /* the re-masker's pid, or 0 */
	bool started;           /* it was: a closed socket now means it is gone */
	const struct ws_plan *plan;
	const struct policy *pol;
	struct wsmade *made;    /* what the sandbox made (wsmade.h), or NULL */
	struct audit *log;      /* the cfg's: where the loop's events go */
	void (*lost)(void *ctx);
	void *lost_ctx;
	struct watched *v;
	size_t n, cap;
	bool overflow_said;
	struct strv alerted;    /* paths with an alert already: one each per session */
	size_t unwatched;       /* directories that could not be watched */
	int unwatched_why;      /* the last reason: 0 (WSWATCH_MAX), ENOSPC or ENOMEM */
	size_t reported;        /* unwatched when last said */
	unsigned reports;       /* how often it was said */
};

bool wswatch_add(struct wswatch *w, int dirfd, const char *name, const char *rel)
{
	if (w->n >= WSWATCH_MAX) {
		w->unwatched++;
		w->unwatched_why = 0;
		return true;
	}
	char path[64 + NAME_MAX];
	/* "/." for the directory itself: the magic link is then not the last
	 * component, which IN_DONT_FOLLOW would not follow */
	snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, *name ? name : ".");
	int wd = inotify_add_watch(w->ino, path, WATCH_EVENTS);
	if (wd < 0) {
		if (errno == ENOSPC || errno == ENOMEM) { /* the kernel's limit */
			w->unwatched++;
			w->unwatched_why = errno;
		}
		return true; /* else gone, or not a directory any more */
	}
	/* the table stays sorted by descriptor (a reused one can come back
	 * lower); the same directory again (a rename) takes its new path */
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (w->v[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->n && w->v[lo].wd == wd) {
		if (strcmp(w->v[lo].rel, rel) == 0)
			return false;
		free(w->v[lo].rel);
		w->v[lo].rel = xstrdup(rel);
		return true;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->v = xrealloc(w->v, w->cap * sizeof *w->v);
	}
	memmove(&w->v[lo + 1], &w->v[lo], (w->n - lo) * sizeof *w->v);
	w->v[lo] = (struct watched){ .wd = wd, .rel = xstrdup(rel) };
	w->n++;
	return true;
}

static const char *rel_of(const struct wswatch *w, int wd)
{
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (w->v[mid].wd == wd)
			return w->v[mid].rel;
		if (w->v[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct wswatch *wswatch_new(int wsfd, struct werr *e)
{
	struct wswatch *w = xcalloc(1, sizeof *w);
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino < 0) {
		int err = errno;
		char said[400];
		free(w);
		werr_set(e, err, "workspace watch: inotify");
		if (notify_limit_said(NOTIFY_INOTIFY_INSTANCES, err, said, sizeof said))
			werr_hint(e, "%s", said);
		return NULL;
	}
	w->wsfd = wsfd;
	w->sock = -1;
	return w;
}

void wswatch_attach(struct wswatch *w, const struct wswatch_cfg *cfg)
{
	w->plan = cfg->plan;
	w->pol = cfg->policy;
	w->made = cfg->made;
	w->start = cfg->remasker;
	w->start_ctx = cfg->remasker_ctx;
	w->log = cfg->log;
	w->lost = cfg->lost;
	w->lost_ctx = cfg->lost_ctx;
}

void wswatch_forget(struct wswatch *w)
{
	if (w && w->ino >= 0) {
		close(w->ino);
		w->ino = -1;
	}
}

int wswatch_take_fd(struct wswatch *w)
{
	if (!w)
		return -1;
	int fd = w->ino;
	w->ino = -1;
	return fd;
}

/* What the host replaced, masked or protected again; when that can no
 * longer be done, the session ends (fail closed). */
static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	struct wswatch *w = src->ctx;
	if (wswatch_dispatch(w, w->log) == 0)
		return;
	audit_emit_event(w->log, ev_alert(&(struct ev_alert){
		.rule = "workspace.remask-lost", .action = "session killed: masks can no longer "
		"follow what the host replaces" }), NULL);
	if (w->lost)
		w->lost(w->lost_ctx);
	loop_remove(l, src);
}

int wswatch_watch(struct loop *l, struct wswatch *w, struct werr *e)
{
	return loop_add(l, "the workspace watch", w->ino, on_ready, w, e);
}

/* What the session covered at start at this path: REMASK_MASK,
 * REMASK_PROTECT, or 0. */
static unsigned covered(const struct wswatch *w, const char *rel)
{
	for (size_t i = 0; i < w->plan->n; i++) {
		const struct ws_mount *m = &w->plan->m[i];
		if (strcmp(m->rel, rel) != 0)
			continue;
		if (m->kind == WS_MASK_FILE || m->kind == WS_MASK_DIR)
			return REMASK_MASK;
		if (m->kind == WS_PROTECT)
			return REMASK_PROTECT;
	}
	return 0;
}

/* Is the file at rel one masked at the start, moved here (a directory
 * holding it renamed, by the agent or the host)? Its mask moved with it. */
static bool masked_at_start(const struct wswatch *w, const char *rel)
{
	struct stat st;
	if (fstatat(w->wsfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	for (size_t i = 0; i < w->plan->n; i++) {
		const struct ws_mount *m = &w->plan->m[i];
		if ((m->kind == WS_MASK_FILE || m->kind == WS_MASK_DIR) && m->mask_ino &&
		    m->mask_ino == st.st_ino && m->mask_dev == st.st_dev)
			return true;
	}
	return false;
}

/* rel is masked (at start, or by its name now): not looked into. */
static bool masked_here(const struct wswatch *w, const char *rel, const char *name)
{
	return covered(w, rel) == REMASK_MASK || (w->pol && workspace_masked(w->pol, rel, name));
}

/* Ask the re-masker, started the first time; 0 done, >0 its errno, -1 it
 * is gone (or could not be started). */
static int ask(struct wswatch *w, unsigned kind, const char *rel)
{
	if (w->sock < 0) {
		if (w->started || !w->start)
			return -1;
		w->started = true;
		struct werr e = { 0 };
		pid_t pid = w->start(w->start_ctx, &w->sock, &e);
		if (pid < 0) {
			werr_print(&e);
			return -1;
		}
		w->helper = pid;
	}
	struct remask_req req = { .kind = kind };
	if (strlen(rel) >= sizeof req.rel)
		return ENAMETOOLONG;
	strcpy(req.rel, rel);
	if (send(w->sock, &req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req)
		return -1;
	struct pollfd p = { .fd = w->sock, .events = POLLIN };
	int answer;
	if (poll(&p, 1, ANSWER_MS) != 1 || recv(w->sock, &answer, sizeof answer, 0) != (ssize_t)sizeof answer)
		return -1;
	return answer;
}

/* Did the sandbox make the file at rel (name its last component)? Its
 * directory opened beneath the workspace, no symlink on the way; anything
 * that cannot be told is the host's. */
static bool sandbox_made(const struct wswatch *w, const char *rel, const char *name)
{
	if (!w->made)
		return false;
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return wsmade_claims(w->made, w->wsfd, name);
	_cleanup_free_ char *dir = xasprintf("%.*s", (int)(slash - rel), rel);
	_cleanup_close_ int fd = open_beneath(w->wsfd, dir, O_PATH | O_DIRECTORY, 0);
	return fd >= 0 && wsmade_claims(w->made, fd, name);
}

/* Is rel a unix socket that the host made (a server started in the
 * workspace during the session), neither one the sandbox bound nor a
 * placeholder (warden's, nothing listens there)? Not looked at when it
 * appeared as a directory (dir). */
static bool host_socket(const struct wswatch *w, const char *rel, const char *name, bool dir)
{
	struct stat st;
	if (dir || fstatat(w->wsfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) ||
	    workspace_is_placeholder(&st))
		return false;
	for (size_t i = 0; i < w->plan->n; i++) {
		const struct ws_mount *m = &w->plan->m[i];
		if (m->kind == WS_PLACEHOLDER && m->made.dev == st.st_dev && m->made.ino == st.st_ino)
			return false;
	}
	return !sandbox_made(w, rel, name);
}

/* The alert for rel masked or protected again (kind; fresh: a secret
 * name new since the start, sock: a host's socket; r: the re-masker's
 * errno, 0 done): once per path when done, every time when not; none for
 * a secret of the start moved with its directory. */
static void said(struct wswatch *w, const char *rel, unsigned kind, bool fresh, bool sock, int r,
		 struct audit *log)
{
	for (size_t i = 0; i < w->alerted.n; i++)
		if (!r && strcmp(w->alerted.v[i], rel) == 0)
			return; /* said once (an editor saves often) */
	if (!r && fresh && masked_at_start(w, rel))
		return; /* a secret of the start moved with its directory: no news */
	if (!r)
		strv_push(&w->alerted, rel);
	char detail[96];
	snprintf(detail, sizeof detail, "%s%s%s",
		 fresh ? "masked: a secret name the host made during the session"
		 : sock ? "masked: a unix socket the host made during the session"
		 : kind == REMASK_MASK ? "masked again" : "read-only again",
		 r ? ": " : "", r ? strerror(r) : "");
	audit_emit_event(log, ev_alert(&(struct ev_alert){
		.rule = fresh ? "workspace.secret_created" : sock ? "workspace.host_socket"
		      : "workspace.replaced",
		.path = rel, .action = detail }), NULL);
}

/* One name that appeared at rel (a file, or a directory not to be looked
 * into): masked or protected again when the plan covered it at start; a
 * secret name new since the start masked too, unless a sandboxed process
 * made that very file (wsmade.h: the agent's own `cp template .env` stays
 * its own); a secret the host writes must not be read inside. A unix
 * socket the host made is masked too: nothing inside reaches it, not even
 * sendmsg (unixconn.h). An alert once per path masked again (one that
 * still fails after three more tries, every time). dir: the name was a
 * directory when it appeared (no socket: nothing to look at for one; a
 * socket put in its place since is an event of its own). 0, or -1 when
 * the re-masker is gone. */
static int judge(struct wswatch *w, const char *rel, const char *name, bool dir,
		 struct audit *log)
{
	unsigned kind = covered(w, rel);
	bool fresh = !kind && w->pol && workspace_masked(w->pol, rel, name);
	if (fresh && sandbox_made(w, rel, name))
		return 0;
	bool sock = !kind && !fresh && host_socket(w, rel, name, dir);
	if (fresh || sock)
		kind = REMASK_MASK;
	if (!kind)
		return 0;
	/* A re-mask that failed because the host replaced the name again
	 * between the re-masker's open and its bind is tried again at once on
	 * what is there now; only a failure that persists is one to report
	 * (each time: a path left open is not said once). */
	int r = ask(w, kind, rel);
	for (int again = 0; r > 0 && r != ENOENT && !(fresh && r == EINVAL) && again < 3; again++)
		r = ask(w, kind, rel);
	if (r < 0)
		return -1;
	if (r == ENOENT || (fresh && r == EINVAL))
		return 0; /* gone again (its own event follows), or a symlink or a
			     FIFO made under a secret name: no secret to read there */
	said(w, rel, kind, fresh, sock, r, log);
	return 0;
}

/* A directory that appeared: watched, and everything in it judged as if
 * just made there, at any depth (a tree moved in, or made faster than its
 * watches were added). A .git is neither watched nor looked into here (a
 * new repository is the sweep's), but what it holds under a secret name
 * is masked. */
struct newtree {
	struct wswatch *w;
	struct audit *log;
	const char *top;
	bool git;  /* the tree is a .git or inside one: nothing in it watched */
	bool gone; /* the re-masker is */
};

static int newtree_entry(void *ctx, const struct walk_entry *we, struct werr *e)
{
	struct newtree *t = ctx;
	_cleanup_free_ char *rel = *t->top ? xasprintf("%s/%s", t->top, we->rel) : xstrdup(we->rel);
	if (judge(t->w, rel, we->name, we->type == DT_DIR, t->log) < 0) {
		t->gone = true;
		return werr_set(e, 0, "workspace watch: the re-masker is gone");
	}
	if (we->type != DT_DIR || masked_here(t->w, rel, we->name))
		return WALK_SKIP;
	bool git = strcmp(we->name, ".git") == 0;
	if (!git && !we->tagged && !t->git && !wswatch_add(t->w, we->dirfd, we->name, rel))
		return WALK_SKIP; /* watched at this path already: judged then, its events since */
	return git ? WALK_DESCEND_TAGGED : WALK_DESCEND;
}

static int judge_tree(struct wswatch *w, int fd, const char *rel, bool git, struct audit *log)
{
	struct newtree t = { .w = w, .log = log, .top = rel, .git = git };
	const struct walk_ops ops = { .entry = newtree_entry };
	struct werr e = { 0 };
	/* a walk that fails otherwise met a tree moved away meanwhile: its
	 * events follow */
	return walk_tree(fd, &ops, &t, &e) < 0 && t.gone ? -1 : 0;
}

/* rel is one of the session's own directory placeholders, made on the
 * host just after the plan: empty and read-only inside, nothing to watch. */
static bool placeholder(const struct wswatch *w, const char *rel)
{
	for (size_t i = 0; i < w->plan->n; i++)
		if (w->plan->m[i].kind == WS_PLACEHOLDER && w->plan->m[i].dir &&
		    strcmp(w->plan->m[i].rel, rel) == 0)
			return true;
	return false;
}

static int handle(struct wswatch *w, const struct inotify_event *ev, struct audit *log)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		/* events were lost: look at the whole workspace again */
		if (!w->overflow_said)
			wnote("workspace watch: the kernel dropped events (a burst of changes); "
			      "the workspace is looked at again whole");
		w->overflow_said = true;
		return judge_tree(w, w->wsfd, "", false, log);
	}
	const char *dir = rel_of(w, ev->wd);
	if (!dir || !ev->len)
		return 0;
	const char *name = ev->name;
	_cleanup_free_ char *rel = *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
	/* the name itself first (a protected directory read-only again, a
	 * secret-named one masked), then what a directory holds */
	if (judge(w, rel, name, ev->mask & IN_ISDIR, log) < 0)
		return -1;
	if (!(ev->mask & IN_ISDIR) || masked_here(w, rel, name) || placeholder(w, rel))
		return 0;
	_cleanup_close_ int fd = openat(w->wsfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0; /* gone again */
	bool git = path_in_git(rel);
	if (!git && !wswatch_add(w, fd, "", rel))
		return 0; /* watched at this path already (a walk above found it) */
	return judge_tree(w, fd, rel, git, log);
}

/* At most twice a session: the start's count, and the first that grew. */
#define UNWATCHED_REPORTS 2

void wswatch_report(struct wswatch *w, struct audit *log)
{
	if (w->unwatched == w->reported || w->reports >= UNWATCHED_REPORTS)
		return;
	w->reported = w->unwatched;
	w->reports++;
	char why[400];
	if (w->unwatched_why == 0)
		snprintf(why, sizeof why, "warden watches at most %d", WSWATCH_MAX);
	else if (w->unwatched_why == ENOSPC)
		notify_limit_said(NOTIFY_INOTIFY_WATCHES, ENOSPC, why, sizeof why);
	else
		snprintf(why, sizeof why, "the kernel has no memory for more inotify watches");
	wnote("workspace watch: %zu director%s of the workspace %s not watched (%s); what the "
	      "host replaces or creates in %s during the session is not masked or protected "
	      "again", w->unwatched, w->unwatched == 1 ? "y" : "ies", w->unwatched == 1 ? "is" : "are",
	      why, w->unwatched == 1 ? "it" : "them");
	_cleanup_free_ char *action = xasprintf("%zu director%s not watched: %s", w->unwatched,
						w->unwatched == 1 ? "y" : "ies", why);
	audit_emit_event(log, ev_alert(&(struct ev_alert){ .rule = "workspace.unwatched",
		.action = action }), NULL);
}

int wswatch_dispatch(struct wswatch *w, struct audit *log)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(w->ino, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			wswatch_report(w, log); /* directories made since, left unwatched */
			return 0;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (handle(w, ev, log) < 0)
				return -1;
			p += sizeof *ev + ev->len;
		}
	}
}

void wswatch_free(struct wswatch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].rel);
	free(w->v);
	strv_free(&w->alerted);
	if (w->ino >= 0)
		close(w->ino);
	if (w->sock >= 0)
		close(w->sock);
	if (w->helper > 0) {
		kill(w->helper, SIGKILL);
		while (waitpid(w->helper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(w);
}
