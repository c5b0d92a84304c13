/* wswatch.c - the workspace watched on the host during a session
 * (wswatch.h). A table of inotify watch descriptors to workspace-relative
 * directories (sorted: watch descriptors only grow), filled by the plan's
 * walk of the workspace at start (workspace.c) and as directories appear;
 * each event on a name decides by the plan alone (was the path masked or
 * protected at start?), then asks the re-masker and waits for its answer. */
#include "wswatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/util.h"

#define WATCH_EVENTS (IN_CREATE | IN_MOVED_TO | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)
#define ANSWER_MS 2000

struct watched {
	int wd;
	char *rel; /* "" for the workspace itself */
};

struct wswatch {
	int ino, wsfd, sock;
	const struct ws_plan *plan;
	struct watched *v;
	size_t n, cap;
	bool full_said;
	struct strv alerted;    /* paths with an alert already: one each per session */
};

void wswatch_add(struct wswatch *w, int dirfd, const char *name, const char *rel)
{
	if (w->n >= WSWATCH_MAX) {
		if (!w->full_said)
			wnote("workspace watch: more than %d directories; what the host replaces "
			      "in the others during the session is not masked again", WSWATCH_MAX);
		w->full_said = true;
		return;
	}
	char path[64 + NAME_MAX];
	/* "/." for the directory itself: the magic link is then not the last
	 * component, which IN_DONT_FOLLOW would not follow */
	snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, *name ? name : ".");
	int wd = inotify_add_watch(w->ino, path, WATCH_EVENTS);
	if (wd < 0)
		return; /* gone, or not a directory any more */
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].wd == wd) { /* the same directory again (a rename) */
			free(w->v[i].rel);
			w->v[i].rel = xstrdup(rel);
			return;
		}
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->v = xrealloc(w->v, w->cap * sizeof *w->v);
	}
	/* keep the table sorted: a reused descriptor can come back lower */
	size_t at = w->n;
	while (at > 0 && w->v[at - 1].wd > wd)
		at--;
	memmove(&w->v[at + 1], &w->v[at], (w->n - at) * sizeof *w->v);
	w->v[at] = (struct watched){ .wd = wd, .rel = xstrdup(rel) };
	w->n++;
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
		free(w);
		werr_errno(e, "workspace watch: inotify");
		return NULL;
	}
	w->wsfd = wsfd;
	w->sock = -1;
	return w;
}

void wswatch_attach(struct wswatch *w, const struct ws_plan *plan)
{
	w->plan = plan;
}

void wswatch_forget(struct wswatch *w)
{
	if (w && w->ino >= 0) {
		close(w->ino);
		w->ino = -1;
	}
}

int wswatch_fd(const struct wswatch *w)
{
	return w ? w->ino : -1;
}

void wswatch_set_remask(struct wswatch *w, int sock)
{
	if (w->sock >= 0)
		close(w->sock);
	w->sock = sock;
}

/* What the session covered at start at this path: REMASK_MASK,
 * REMASK_PROTECT, or 0. Only those follow a replacement: a name the agent
 * itself makes during the session stays its own (its new .env readable, a
 * new protected name moved aside by the sweep), since nothing tells the
 * host's writes from the sandbox's here. */
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

/* Ask the re-masker; 0 done, >0 its errno, -1 it is gone. */
static int ask(struct wswatch *w, unsigned kind, const char *rel)
{
	if (w->sock < 0)
		return -1;
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

static int handle(struct wswatch *w, const struct inotify_event *ev, struct audit *log)
{
	const char *dir = rel_of(w, ev->wd);
	if (!dir || !ev->len)
		return 0;
	const char *name = ev->name;
	_cleanup_free_ char *rel = *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
	if (ev->mask & IN_ISDIR) {
		/* a directory made or moved in: watched, and what it holds judged */
		_cleanup_close_ int fd = openat(w->wsfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							      O_CLOEXEC);
		if (fd >= 0 && strcmp(name, ".git") != 0) {
			wswatch_add(w, fd, "", rel);
			DIR *d = fdopendir(dup(fd));
			struct dirent *de;
			int r = 0;
			while (d && r == 0 && (de = readdir(d))) {
				if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
					continue;
				/* judged as if just made there */
				_cleanup_free_ char *crel = xasprintf("%s/%s", rel, de->d_name);
				unsigned k = covered(w, crel);
				if (k && ask(w, k, crel) < 0)
					r = -1;
			}
			if (d)
				closedir(d);
			if (r < 0)
				return -1;
		}
	}
	unsigned kind = covered(w, rel);
	if (!kind)
		return 0;
	bool mask = kind == REMASK_MASK;
	int r = ask(w, kind, rel);
	if (r < 0)
		return -1;
	if (r == ENOENT)
		return 0; /* replaced again meanwhile: its own event follows */
	for (size_t i = 0; i < w->alerted.n; i++)
		if (!r && strcmp(w->alerted.v[i], rel) == 0)
			return 0; /* said once (an editor saves often) */
	if (!r)
		strv_push(&w->alerted, rel);
	char detail[64];
	snprintf(detail, sizeof detail, "%s%s%s", mask ? "masked again" : "read-only again",
		 r ? ": " : "", r ? strerror(r) : "");
	audit_emit_event(log, ev_alert(&(struct ev_alert){
		.rule = "workspace.replaced", .path = rel, .action = detail }), NULL);
	return 0;
}

int wswatch_dispatch(struct wswatch *w, struct audit *log)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(w->ino, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
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
	free(w);
}
