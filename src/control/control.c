/* control.c - the session's control socket (control.h): a listener and its
 * clients in an epoll set of their own, which the supervisor's loop watches
 * as one fd; each client a line buffer in, a queue out, and whether it
 * follows the questions (an approval channel tells the followers). Every
 * write is a send with MSG_NOSIGNAL: a client gone must not raise SIGPIPE,
 * which the supervisor would take for its own and pass to the sandbox. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/util.h"

#define MAX_CLIENTS 64
#define LINE_MAX_BYTES (64 * 1024)
#define OUT_MAX_BYTES (4 * 1024 * 1024)

struct client {
	int fd;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	bool follow, closing;
	uid_t uid;
};

struct control {
	int ep, listener;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char session[64];
	struct approvals *a;
	struct audit *log;
	struct client *clients[MAX_CLIENTS];
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

static void client_close(struct control *c, size_t i)
{
	struct client *cl = c->clients[i];
	if (!cl)
		return;
	epoll_ctl(c->ep, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	free(cl->in);
	free(cl->out);
	free(cl);
	c->clients[i] = NULL;
}

static void watch(struct control *c, size_t i)
{
	struct client *cl = c->clients[i];
	struct epoll_event ev = { .events = EPOLLIN | (cl->out_len > cl->out_off ? EPOLLOUT : 0),
				  .data.u64 = i + 1 };
	epoll_ctl(c->ep, EPOLL_CTL_MOD, cl->fd, &ev);
}

/* Queue one JSON line to client i (dropped past the cap: a follower that
 * does not read). */
static void send_json(struct control *c, size_t i, json_t *j)
{
	struct client *cl = c->clients[i];
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!s || !cl) {
		free(s);
		return;
	}
	size_t n = strlen(s);
	if (cl->out_len - cl->out_off + n + 1 > OUT_MAX_BYTES) {
		cl->closing = true;
		free(s);
		return;
	}
	if (cl->out_off) {
		memmove(cl->out, cl->out + cl->out_off, cl->out_len - cl->out_off);
		cl->out_len -= cl->out_off;
		cl->out_off = 0;
	}
	cl->out = xrealloc(cl->out, cl->out_len + n + 1);
	memcpy(cl->out + cl->out_len, s, n);
	cl->out[cl->out_len + n] = '\n';
	cl->out_len += n + 1;
	free(s);
	/* write what can go now */
	ssize_t w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off, MSG_NOSIGNAL);
	if (w > 0)
		cl->out_off += (size_t)w;
	watch(c, i);
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
	size_t all = approvals_open(c->a, NULL, 0);
	const struct question **qs = xcalloc(all + 1, sizeof *qs);
	size_t n = approvals_open(c->a, qs, all);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, control_question_json(qs[i]));
	free(qs);
	return json_pack("{s:b,s:s,s:o}", "ok", 1, "session", c->session, "questions", arr);
}

static json_t *do_answer(struct control *c, struct client *cl, json_t *req)
{
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
	snprintf(who, sizeof who, "uid %u", (unsigned)cl->uid);
	ans.who = who;
	if (approvals_answer(c->a, id, &ans) < 0)
		return errno == EINVAL ? error_json("the pattern must match the question's own subject")
				       : ERROR_FMT("no open question %.100s (answered, timed out, or not "
						   "this session's)", id);
	return json_pack("{s:b}", "ok", 1);
}

static void handle_line(struct control *c, size_t i, const char *line, size_t len)
{
	struct client *cl = c->clients[i];
	json_error_t err;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	if (!req || !json_is_object(req)) {
		json_decref(req);
		send_json(c, i, ERROR_FMT("not a JSON object: %s", err.text));
		return;
	}
	const char *op = json_string_value(json_object_get(req, "op"));
	if (op && strcmp(op, "list") == 0) {
		send_json(c, i, list_json(c));
	} else if (op && strcmp(op, "follow") == 0) {
		cl->follow = true;
		send_json(c, i, list_json(c));
	} else if (op && strcmp(op, "answer") == 0) {
		send_json(c, i, do_answer(c, cl, req));
	} else {
		send_json(c, i, ERROR_FMT("unknown op '%.100s' (list, answer or follow)", op));
	}
	json_decref(req);
}

static void on_client(struct control *c, size_t i, uint32_t events)
{
	struct client *cl = c->clients[i];
	if (events & EPOLLOUT) {
		ssize_t w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off, MSG_NOSIGNAL);
		if (w > 0)
			cl->out_off += (size_t)w;
		else if (w < 0 && errno != EAGAIN)
			cl->closing = true;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		char buf[4096];
		ssize_t n = read(cl->fd, buf, sizeof buf);
		if (n <= 0 && !(n < 0 && errno == EAGAIN)) {
			client_close(c, i);
			return;
		}
		if (n > 0) {
			cl->in = xrealloc(cl->in, cl->in_len + (size_t)n);
			memcpy(cl->in + cl->in_len, buf, (size_t)n);
			cl->in_len += (size_t)n;
		}
		char *nl;
		while (c->clients[i] && (nl = memchr(cl->in, '\n', cl->in_len))) {
			size_t len = (size_t)(nl - cl->in);
			handle_line(c, i, cl->in, len);
			memmove(cl->in, nl + 1, cl->in_len - len - 1);
			cl->in_len -= len + 1;
		}
		if (cl->in_len > LINE_MAX_BYTES) {
			send_json(c, i, error_json("a line longer than 64 KiB"));
			cl->closing = true;
		}
	}
	if (cl->closing && cl->out_off >= cl->out_len)
		client_close(c, i);
	else
		watch(c, i);
}

static void on_accept(struct control *c)
{
	for (;;) {
		int fd = accept4(c->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cr;
		socklen_t crl = sizeof cr;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 || cr.uid != geteuid()) {
			static const char no[] = "{\"ok\":false,\"error\":\"not warden's user\"}\n";
			(void)!send(fd, no, sizeof no - 1, MSG_NOSIGNAL);
			close(fd);
			char who[64];
			snprintf(who, sizeof who, "uid %d pid %d", (int)cr.uid, (int)cr.pid);
			audit_emit_event(c->log, ev_alert(&(struct ev_alert){ .rule = "control.refused",
				.path = c->path, .action = who }), NULL);
			continue;
		}
		size_t i = 0;
		while (i < MAX_CLIENTS && c->clients[i])
			i++;
		if (i == MAX_CLIENTS) {
			close(fd);
			continue;
		}
		struct client *cl = xcalloc(1, sizeof *cl);
		cl->fd = fd;
		cl->uid = cr.uid;
		c->clients[i] = cl;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i + 1 };
		if (epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			client_close(c, i);
	}
}

void control_dispatch(struct control *c)
{
	struct epoll_event evs[16];
	int n = epoll_wait(c->ep, evs, ARRAY_LEN(evs), 0);
	for (int k = 0; k < n; k++) {
		if (evs[k].data.u64 == 0)
			on_accept(c);
		else if (c->clients[evs[k].data.u64 - 1])
			on_client(c, (size_t)evs[k].data.u64 - 1, evs[k].events);
	}
}

/* The followers hear of each question put to the humans, and of its end. */
static void ch_asked(void *ctx, const struct question *q)
{
	struct control *c = ctx;
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		if (c->clients[i] && c->clients[i]->follow)
			send_json(c, i, json_pack("{s:s,s:o}", "event", "asked", "question",
						  control_question_json(q)));
}

static void ch_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct control *c = ctx;
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		if (c->clients[i] && c->clients[i]->follow)
			send_json(c, i, json_pack("{s:s,s:s,s:s,s:s}", "event", "ended", "id", q->id,
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

struct control *control_new(const char *dir, const char *session, struct approvals *a,
			    struct audit *log, struct werr *e)
{
	if (private_dir(dir, e) < 0)
		return NULL;
	struct control *c = xcalloc(1, sizeof *c);
	c->a = a;
	c->log = log;
	c->listener = -1;
	snprintf(c->session, sizeof c->session, "%s", session);
	if (snprintf(c->path, sizeof c->path, "%s/%s.sock", dir, session) >= (int)sizeof c->path) {
		werr_set(e, ENAMETOOLONG, "control socket: %s/%s.sock is longer than a unix socket's "
			 "path may be", dir, session);
		free(c);
		return NULL;
	}
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
	unlink(c->path);
	mode_t old = umask(0177);
	int r = c->ep < 0 || c->listener < 0 ? -1 : bind(c->listener, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
	if (r < 0 || chmod(c->path, 0600) < 0 || listen(c->listener, 16) < 0 ||
	    epoll_ctl(c->ep, EPOLL_CTL_ADD, c->listener, &ev) < 0) {
		werr_errno(e, "control socket: %s", c->path);
		control_free(c);
		return NULL;
	}
	approvals_add_channel(a, &(struct approval_channel){ .name = "approve", .asked = ch_asked,
							     .ended = ch_ended, .ctx = c });
	return c;
}

void control_free(struct control *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		client_close(c, i);
	if (c->listener >= 0) {
		close(c->listener);
		unlink(c->path);
	}
	if (c->ep >= 0)
		close(c->ep);
	free(c);
}

int control_fd(const struct control *c)
{
	return c->ep;
}

const char *control_path(const struct control *c)
{
	return c->path;
}
