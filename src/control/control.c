/* control.c - the session's control socket (control.h): a line server
 * (linesrv.h) whose clients are checked to be warden's own uid, each
 * remembered with its uid and whether it follows the questions (an
 * approval channel tells the followers, when the session asks any); the
 * session's status, and freeze, resume and kill handed to the kill switch
 * the supervisor set. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../audit/escape.h"
#include "../common/procfacts.h"
#include "../common/util.h"
#include "ctldir.h"
#include "linesrv.h"

#define MAX_CLIENTS 64
#define LINE_MAX_BYTES (64 * 1024)
#define OUT_MAX_BYTES (4 * 1024 * 1024)

struct control {
	struct linesrv *srv;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char session[64];
	struct approvals *a;        /* NULL: the session asks nothing */
	struct audit *log;
	char **argv;                /* the session's command */
	char *workspace;
	time_t started;
	struct control_actions act; /* act.ctx NULL: none */
	json_t *(*status_fn)(void *ctx);
	void *status_ctx;
	uid_t uid[MAX_CLIENTS];     /* each client's */
	bool follow[MAX_CLIENTS];
};

static void iso(const struct timespec *t, char *buf, size_t len)
{
	struct tm tm;
	gmtime_r(&t->tv_sec, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *control_question_json(const struct question *q)
{
	char asked[32];
	iso(&q->asked, asked, sizeof asked);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long left = (long)(q->deadline.tv_sec - now.tv_sec);
	return json_pack("{s:s,s:s,s:s,s:s,s:O,s:s,s:I,s:I}", "id", q->id, "kind", q->kind_name,
			 "subject", q->subject, "summary", q->summary, "detail", q->detail, "asked",
			 asked, "timeout_s", (json_int_t)q->timeout_s, "remaining_s",
			 (json_int_t)(left > 0 ? left : 0));
}

static json_t *error_json(const char *msg)
{
	return json_pack("{s:b,s:s}", "ok", 0, "error", msg);
}

/* An error naming a string of the request (cut at 100 bytes). */
#define ERROR_FMT(fmt, arg)                                                                       \
	({                                                                                        \
		char m_[300];                                                                     \
		snprintf(m_, sizeof m_, fmt, (arg) ? (arg) : "");                                 \
		error_json(m_);                                                                   \
	})

static json_t *list_json(struct control *c)
{
	if (!c->a)
		return json_pack("{s:b,s:s,s:[]}", "ok", 1, "session", c->session, "questions");
	size_t all = approvals_open(c->a, NULL, 0);
	const struct question **qs = xcalloc(all + 1, sizeof *qs);
	size_t n = approvals_open(c->a, qs, all);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, control_question_json(qs[i]));
	free(qs);
	return json_pack("{s:b,s:s,s:o}", "ok", 1, "session", c->session, "questions", arr);
}

static json_t *do_answer(struct control *c, size_t slot, json_t *req)
{
	if (!c->a)
		return error_json("this session asks no questions (its policy has no ask rules)");
	const char *id = json_string_value(json_object_get(req, "id"));
	const char *d = json_string_value(json_object_get(req, "decision"));
	const char *scope = json_string_value(json_object_get(req, "scope"));
	const char *pattern = json_string_value(json_object_get(req, "pattern"));
	const char *reason = json_string_value(json_object_get(req, "reason"));
	json_t *ttl = json_object_get(req, "ttl");
	if (!id || !d || (strcmp(d, "allow") != 0 && strcmp(d, "deny") != 0))
		return error_json("an answer needs \"id\" and \"decision\" (allow or deny)");
	struct approval_answer ans = { .allow = d[0] == 'a', .scope = SCOPE_ONCE, .by = "approve",
				       .reason = reason };
	if (scope && strcmp(scope, "session") == 0)
		ans.scope = SCOPE_SESSION;
	else if (scope && strcmp(scope, "pattern") == 0)
		ans.scope = SCOPE_PATTERN;
	else if (scope && strcmp(scope, "once") != 0)
		return ERROR_FMT("unknown scope '%.100s' (once, session or pattern)", scope);
	ans.pattern = pattern;
	if (ttl && (!json_is_integer(ttl) || json_integer_value(ttl) < 0 ||
		    json_integer_value(ttl) > 30 * 86400))
		return error_json("\"ttl\" is a number of seconds (0 to 2592000)");
	ans.ttl_s = ttl ? (unsigned)json_integer_value(ttl) : 0;
	char who[32];
	snprintf(who, sizeof who, "uid %u", (unsigned)c->uid[slot]);
	ans.who = who;
	if (approvals_answer(c->a, id, &ans) < 0)
		return errno == EINVAL ? error_json("the pattern must match the question's own subject")
				       : ERROR_FMT("no open question %.100s (answered, timed out, or not "
						   "this session's)", id);
	return json_pack("{s:b}", "ok", 1);
}

static json_t *status_json(struct control *c)
{
	size_t n = 0;
	while (c->argv && c->argv[n])
		n++;
	char started[32];
	iso(&(struct timespec){ .tv_sec = c->started }, started, sizeof started);
	time_t now = time(NULL);
	json_t *r = json_pack("{s:b,s:s,s:s,s:I,s:I,s:b}", "ok", 1, "session", c->session,
			      "started", started, "age_s",
			      (json_int_t)(now > c->started ? now - c->started : 0), "pid",
			      (json_int_t)getpid(), "frozen",
			      c->act.frozen ? c->act.frozen(c->act.ctx) : false);
	/* the command and the workspace are any bytes: escaped as the log
	 * escapes them (escape.h), never left out */
	json_t *esc = NULL;
	if (r) {
		json_set_bytes_array(r, "command", c->argv, n, &esc);
		if (c->workspace)
			json_set_bytes(r, "workspace", c->workspace, &esc);
		if (esc)
			json_object_set(r, "escaped", esc);
	}
	json_decref(esc);
	if (r && c->act.suspended && c->act.suspended(c->act.ctx))
		json_object_set_new(r, "suspended", json_true());
	long left = c->act.freeze_left ? c->act.freeze_left(c->act.ctx) : -1;
	if (r && left >= 0)
		json_object_set_new(r, "freeze_left_s", json_integer(left));
	json_t *more = c->status_fn && r ? c->status_fn(c->status_ctx) : NULL;
	if (json_is_object(more))
		json_object_update_missing(r, more);
	json_decref(more);
	return r ? r : error_json("the status cannot be written as JSON");
}

/* freeze, resume or kill, through the kill switch. */
static json_t *do_action(struct control *c, size_t slot, const char *op, json_t *req)
{
	if (!c->act.freeze)
		return ERROR_FMT("this session cannot %s: the supervisor gave no kill switch", op);
	const char *reason = json_string_value(json_object_get(req, "reason"));
	long uid = (long)c->uid[slot];
	struct werr e = { 0 };
	int r = op[0] == 'f' ? c->act.freeze(c->act.ctx, uid, reason, &e)
		: op[0] == 'r' ? c->act.resume(c->act.ctx, uid, &e)
			       : c->act.kill(c->act.ctx, uid, reason, &e);
	if (r < 0) {
		char buf[1200];
		return error_json(werr_str(&e, buf, sizeof buf));
	}
	return json_pack("{s:b}", "ok", 1);
}

static void on_line(void *ctx, size_t i, const char *line, size_t len)
{
	struct control *c = ctx;
	if (!line) {
		linesrv_send(c->srv, i, error_json("a line longer than 64 KiB"));
		return;
	}
	json_error_t err;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	if (!req || !json_is_object(req)) {
		json_decref(req);
		linesrv_send(c->srv, i, ERROR_FMT("not a JSON object: %s", err.text));
		return;
	}
	const char *op = json_string_value(json_object_get(req, "op"));
	if (op && strcmp(op, "list") == 0) {
		linesrv_send(c->srv, i, list_json(c));
	} else if (op && strcmp(op, "follow") == 0) {
		c->follow[i] = true;
		linesrv_send(c->srv, i, list_json(c));
	} else if (op && strcmp(op, "answer") == 0) {
		linesrv_send(c->srv, i, do_answer(c, i, req));
	} else if (op && strcmp(op, "status") == 0) {
		linesrv_send(c->srv, i, status_json(c));
	} else if (op && (strcmp(op, "freeze") == 0 || strcmp(op, "resume") == 0 ||
			  strcmp(op, "kill") == 0)) {
		linesrv_send(c->srv, i, do_action(c, i, op, req));
	} else {
		linesrv_send(c->srv, i, ERROR_FMT("unknown op '%.100s' (status, freeze, resume, kill, "
						  "list, answer or follow)", op));
	}
	json_decref(req);
}

/* Only warden's own uid is served; another is said in an alert. */
static bool on_accept(void *ctx, int fd, size_t slot, const struct ucred *peer)
{
	struct control *c = ctx;
	if (peer->uid != geteuid()) {
		static const char no[] = "{\"ok\":false,\"error\":\"not warden's user\"}\n";
		(void)!send(fd, no, sizeof no - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		char who[64];
		snprintf(who, sizeof who, "uid %d pid %d", (int)peer->uid, (int)peer->pid);
		audit_emit_event(c->log, ev_alert(&(struct ev_alert){ .rule = "control.refused",
			.path = c->path, .action = who }), NULL);
		return false;
	}
	if (slot == SIZE_MAX)
		return false;
	c->uid[slot] = peer->uid;
	c->follow[slot] = false;
	return true;
}

static void on_gone(void *ctx, size_t slot)
{
	struct control *c = ctx;
	c->follow[slot] = false;
}

void control_dispatch(struct control *c)
{
	linesrv_dispatch(c->srv);
}

/* The followers hear of each question put to the humans, and of its end. */
static void ch_asked(void *ctx, const struct question *q)
{
	struct control *c = ctx;
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		if (c->follow[i] && linesrv_alive(c->srv, i))
			linesrv_send(c->srv, i, json_pack("{s:s,s:o}", "event", "asked", "question",
							  control_question_json(q)));
}

static void ch_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct control *c = ctx;
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		if (c->follow[i] && linesrv_alive(c->srv, i))
			linesrv_send(c->srv, i, json_pack("{s:s,s:s,s:s,s:s}", "event", "ended", "id", q->id,
							  "decision", allow ? "allow" : "deny", "by", by));
}

/* dir, made 0700 if missing, must be ours and closed to others. */
static int private_dir(const char *dir, struct werr *e)
{
	if (mkdir_p(dir, 0700, NULL) < 0)
		return werr_errno(e, "control socket: making %s", dir);
	struct stat st;
	if (lstat(dir, &st) < 0)
		return werr_errno(e, "control socket: %s", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return werr_set(e, 0, "control socket: %s is not a directory of warden's user", dir);
	if ((st.st_mode & 077) && chmod(dir, 0700) < 0)
		return werr_errno(e, "control socket: making %s private", dir);
	return 0;
}

char *control_dir_of(const char *logdir)
{
	return xasprintf("%s/control", logdir);
}

/* The session as status tells it (control_cfg). */
static void set_session(struct control *c, char *const *argv, const char *workspace,
			time_t started)
{
	size_t n = 0;
	while (argv && argv[n])
		n++;
	c->argv = xcalloc(n + 1, sizeof *c->argv);
	for (size_t i = 0; i < n; i++)
		c->argv[i] = xstrdup(argv[i]);
	c->workspace = workspace ? xstrdup(workspace) : NULL;
	c->started = started ? started : time(NULL);
}

struct control *control_new(const struct control_cfg *cfg, struct werr *e)
{
	const char *dir = cfg->dir, *session = cfg->session;
	struct approvals *a = cfg->approvals;
	if (private_dir(dir, e) < 0)
		return NULL;
	struct control *c = xcalloc(1, sizeof *c);
	c->a = a;
	c->log = cfg->log;
	c->started = time(NULL);
	snprintf(c->session, sizeof c->session, "%s", session);
	if (snprintf(c->path, sizeof c->path, "%s/%s.sock", dir, session) >= (int)sizeof c->path) {
		werr_set(e, ENAMETOOLONG, "control socket: %s/%s.sock is longer than a unix socket's "
			 "path may be", dir, session);
		free(c);
		return NULL;
	}
	/* Bound and listening under a name of its own first, then renamed into
	 * place: a client never finds the session's name refusing connections
	 * (`warden status` removes such a socket as stale). */
	char tmp[sizeof c->path];
	if (snprintf(tmp, sizeof tmp, "%s/.%s.new", dir, session) >= (int)sizeof tmp) {
		werr_set(e, ENAMETOOLONG, "control socket: %s/.%s.new is longer than a unix socket's "
			 "path may be", dir, session);
		free(c);
		return NULL;
	}
	int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
	unlink(tmp);
	mode_t old = umask(0177);
	int r = listener < 0 ? -1 : bind(listener, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (r < 0 || chmod(tmp, 0600) < 0 || listen(listener, 16) < 0 || rename(tmp, c->path) < 0) {
		werr_errno(e, "control socket: %s", c->path);
		if (listener >= 0)
			close(listener);
		unlink(tmp);
		free(c);
		return NULL;
	}
	c->srv = linesrv_new(listener, &(struct linesrv_limits){ .clients = MAX_CLIENTS,
		.line_max = LINE_MAX_BYTES, .out_max = OUT_MAX_BYTES },
		&(struct linesrv_ops){ .accept = on_accept, .line = on_line, .gone = on_gone, .ctx = c });
	if (!c->srv) {
		werr_errno(e, "control socket: its epoll set");
		unlink(c->path);
		free(c);
		return NULL;
	}
	set_session(c, cfg->argv, cfg->workspace, cfg->started);
	if (cfg->actions)
		c->act = *cfg->actions;
	c->status_fn = cfg->status_fn;
	c->status_ctx = cfg->status_ctx;
	if (a)
		approvals_add_channel(a, &(struct approval_channel){ .name = "approve",
			.asked = ch_asked, .ended = ch_ended, .ctx = c });
	return c;
}

void control_free(struct control *c)
{
	if (!c)
		return;
	linesrv_free(c->srv);
	unlink(c->path);
	for (char **a = c->argv; a && *a; a++)
		free(*a);
	free(c->argv);
	free(c->workspace);
	free(c);
}

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	control_dispatch(src->ctx);
}

int control_watch(struct loop *l, struct control *c, struct werr *e)
{
	return loop_add(l, "the control socket", linesrv_fd(c->srv), on_ready, c, e);
}

void control_mark_stopped(const struct control *c, bool on)
{
	char m[sizeof c->path + 8], tmp[sizeof m + 4];
	if (!ctldir_marker(c->path, m, sizeof m))
		return;
	if (!on) {
		unlink(m);
		return;
	}
	unsigned long long start;
	if (!proc_state_start(getpid(), NULL, &start))
		return;
	char line[64];
	int n = snprintf(line, sizeof line, "%d %llu\n", (int)getpid(), start);
	snprintf(tmp, sizeof tmp, "%s.new", m);
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				      0600);
	if (fd < 0 || write_all(fd, line, (size_t)n) < 0 || rename(tmp, m) < 0)
		unlink(tmp); /* no marker: status says nothing of it once its backlog is full */
}

const char *control_path(const struct control *c)
{
	return c->path;
}
