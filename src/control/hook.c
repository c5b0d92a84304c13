/* hook.c - the hook socket (hook.h): its listener and clients in an epoll
 * set of their own; each client a line buffer in (its sender's pid from
 * SCM_CREDENTIALS), a queue out, and at most one pre report waiting for a
 * human; the decision by the tool rules, the `tool` events, the refusals. */
#include "hook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/util.h"
#include "../sandbox/sandbox.h"
#include "../supervisor/target.h"
#include "hookmsg.h"
#include "toollink.h"

#define MAX_CLIENTS 64
#define OUT_MAX (64 * 1024)
#define REFUSALS_LOGGED 100    /* hook.refused alerts per session; the rest counted, said at the end */
#define EVENT_WHAT_MAX 8192    /* what a tool event shows of the call */
#define SUBJECT_WHAT_MAX 2000  /* what a question's subject holds of it */

struct pending;

struct client {
	int fd;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	pid_t pid;                  /* host pid of the last sender, 0: unknown */
	bool closing;
	struct pending *ask;        /* a pre waiting for a human's answer */
};

/* A pre report whose answer a human gives. */
struct pending {
	struct hook *h;
	size_t slot;                /* its client */
	const struct question *q;  /* valid while open; gone before its answer comes */
	char qid[48];
	struct hook_call call;
	char id[24];
	char rule[1400];
	pid_t pid;
};

struct hook {
	int ep, listener;
	const struct policy *p;
	struct audit *log;
	struct approvals *ap;
	struct toollink *link;
	unsigned long next_id;
	unsigned long refusals;
	bool full_said;
	bool asking;                /* inside approvals_ask */
	struct client *clients[MAX_CLIENTS];
};

static void watch(struct hook *h, size_t i)
{
	struct client *cl = h->clients[i];
	/* while a human is asked, nothing more is read: only its end is
	 * watched (the hook gone, the question withdrawn) */
	uint32_t in = cl->ask ? EPOLLRDHUP : EPOLLIN;
	struct epoll_event ev = { .events = in | (cl->out_len > cl->out_off ? EPOLLOUT : 0),
				  .data.u64 = i + 1 };
	epoll_ctl(h->ep, EPOLL_CTL_MOD, cl->fd, &ev);
}

static void pending_free(struct pending *pd)
{
	hook_call_clear(&pd->call);
	free(pd);
}

static void client_close(struct hook *h, size_t i)
{
	struct client *cl = h->clients[i];
	if (!cl)
		return;
	if (cl->ask) {
		approvals_cancel(h->ap, cl->ask->q);
		pending_free(cl->ask);
	}
	epoll_ctl(h->ep, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	free(cl->in);
	free(cl->out);
	free(cl);
	h->clients[i] = NULL;
}

/* Queue one JSON line to client i (taken); past OUT_MAX it is closed. */
static void send_json(struct hook *h, size_t i, json_t *j)
{
	struct client *cl = h->clients[i];
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!s || !cl) {
		free(s);
		return;
	}
	size_t n = strlen(s);
	if (cl->out_len - cl->out_off + n + 1 > OUT_MAX) {
		cl->closing = true;
		cl->out_off = cl->out_len; /* what it did not read is dropped */
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
	/* MSG_NOSIGNAL: a client gone is no SIGPIPE for the supervisor (which
	 * would take it for its own output gone, stop.c) */
	ssize_t w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w > 0)
		cl->out_off += (size_t)w;
}

/* A line that is not a report: said once in the log (up to
 * REFUSALS_LOGGED a session), answered, and the client closed. */
static void refuse(struct hook *h, size_t i, const char *why, const char *line, size_t len)
{
	h->refusals++;
	if (h->refusals <= REFUSALS_LOGGED) {
		char action[800];
		if (h->refusals == REFUSALS_LOGGED)
			snprintf(action, sizeof action, "%s (refusals past this one are not logged)", why);
		else
			snprintf(action, sizeof action, "%s; the line began: %.*s", why,
				 (int)(len < 200 ? len : 200), line ? line : "");
		audit_emit_event(h->log, ev_alert(&(struct ev_alert){ .rule = "hook.refused",
			.path = SANDBOX_HOOK_SOCK, .action = action, .reported = true }), NULL);
	}
	send_json(h, i, json_pack("{s:s}", "error", why));
	h->clients[i]->closing = true;
}

static char *dupn(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static long inner_pid(pid_t host)
{
	long inner = -1;
	if (host > 0)
		target_pid_info(host, &inner, NULL);
	return inner;
}

static const char *const action_words[] = { "?", "allow", "deny", "ask" };

/* The length of s cut to at most max bytes, not inside a UTF-8 sequence. */
static size_t cut_len(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* The tool event of a report. */
static void emit_tool(struct hook *h, const char *id, const struct hook_call *c, int decision,
		      const char *rule, const char *reason, const char *question, pid_t pid)
{
	size_t k = cut_len(c->what, EVENT_WHAT_MAX);
	char *what = c->what[k] ? dupn(c->what, k) : NULL;
	audit_emit_event(h->log, ev_tool(&(struct ev_tool){
		.id = id, .phase = c->phase == HOOK_PRE ? "pre" : "post", .client = c->client,
		.tool = c->tool, .what = what ? what : c->what, .what_truncated = what || c->truncated,
		.decision = decision, .rule = rule, .reason = reason, .question = question,
		.pid = inner_pid(pid), .session_id = c->session_id, .tool_use_id = c->tool_use_id,
		.cwd = c->cwd }), NULL);
	free(what);
}

/* A pre report decided: recorded, opened for linking when allowed, and
 * answered. */
static void decided(struct hook *h, size_t i, const char *id, const struct hook_call *c, bool allow,
		    const char *rule, const char *reason, const char *question, pid_t pid)
{
	emit_tool(h, id, c, allow, rule, allow ? NULL : reason, question, pid);
	if (allow)
		toollink_open(h->link, id, c->tool, c->what, pid, c->tool_use_id);
	json_t *ans = json_pack("{s:s, s:s}", "decision", allow ? "allow" : "deny", "id", id);
	if (ans && rule)
		json_object_set_new(ans, "rule", json_string(rule));
	if (ans && reason)
		json_object_set_new(ans, "reason", json_string(reason));
	if (h->clients[i])
		send_json(h, i, ans);
	else
		json_decref(ans);
}

static void handle_lines(struct hook *h, size_t i);

/* A human's answer (approval.h). */
static void answered(void *ctx, bool allow, const char *why)
{
	struct pending *pd = ctx;
	struct hook *h = pd->h;
	struct client *cl = h->clients[pd->slot];
	char reason[600];
	snprintf(reason, sizeof reason, "warden: %s", why ? why : allow ? "allowed" : "denied");
	decided(h, pd->slot, pd->id, &pd->call, allow, pd->rule, reason, pd->qid[0] ? pd->qid : NULL,
		pd->pid);
	if (cl && cl->ask == pd) {
		cl->ask = NULL;
		/* what it sent meanwhile, unless this answer came at once, inside
		 * on_pre's handle_lines loop, which goes on by itself */
		if (!h->asking) {
			handle_lines(h, pd->slot);
			if (h->clients[pd->slot] && cl->closing && cl->out_off >= cl->out_len)
				client_close(h, pd->slot);
			else if (h->clients[pd->slot])
				watch(h, pd->slot);
		}
	}
	pending_free(pd);
}

static void on_pre(struct hook *h, size_t i, struct hook_call *c)
{
	struct client *cl = h->clients[i];
	char id[24];
	snprintf(id, sizeof id, "t%lu", ++h->next_id);
	const struct policy_tool_rule *r;
	enum rules_verdict v = hookmsg_decide(h->p, c->tool, c->what, &r);
	/* the rule that decided; none: the default, named when a profile set it */
	char rule[1400] = "";
	if (r)
		snprintf(rule, sizeof rule, "tool %s %s%s%s (%s)", action_words[r->action], r->name,
			 r->pattern ? " " : "", r->pattern ? r->pattern : "", r->origin);
	else if (h->p->tool_default != RULES_UNKNOWN)
		snprintf(rule, sizeof rule, "tool default %s", action_words[v]);
	char reason[1600];
	if (c->truncated && v != RULES_DENY && hookmsg_pattern_rules(h->p, c->tool)) {
		snprintf(reason, sizeof reason, "warden: refused: the call was cut to %d KiB before warden "
			 "saw it, too long for the policy's tool rules to judge", HOOKMSG_WHAT_MAX / 1024);
		decided(h, i, id, c, false, rule[0] ? rule : NULL, reason, NULL, cl->pid);
		return;
	}
	if (v == RULES_ALLOW) {
		decided(h, i, id, c, true, rule[0] ? rule : NULL, NULL, NULL, cl->pid);
		return;
	}
	if (v == RULES_DENY || !h->ap) {
		snprintf(reason, sizeof reason, "warden: %s by the policy (%s)",
			 v == RULES_DENY ? "denied" : "refused: it asks a human, and none can be asked",
			 rule);
		decided(h, i, id, c, false, rule[0] ? rule : NULL, reason, NULL, cl->pid);
		return;
	}
	/* ask: the hook's connection waits for the answer */
	struct pending *pd = xcalloc(1, sizeof *pd);
	*pd = (struct pending){ .h = h, .slot = i, .call = *c, .pid = cl->pid };
	*c = (struct hook_call){ 0 };
	snprintf(pd->id, sizeof pd->id, "%s", id);
	snprintf(pd->rule, sizeof pd->rule, "%s", rule[0] ? rule : "tool default ask");
	cl->ask = pd;
	watch(h, i);
	char subject[SUBJECT_WHAT_MAX + 300], summary[700];
	size_t wl = cut_len(pd->call.what, SUBJECT_WHAT_MAX);
	snprintf(subject, sizeof subject, "%s: %.*s", pd->call.tool, (int)wl, pd->call.what);
	snprintf(summary, sizeof summary, "tool call %s: %.*s (%s, reported by %s)", pd->call.tool,
		 (int)cut_len(pd->call.what, 300), pd->call.what, id,
		 pd->call.client ? pd->call.client : "the agent");
	json_t *detail = json_pack("{s:s, s:s%, s:s?, s:s?, s:s?, s:s?, s:I, s:s, s:s, s:b}",
				   "tool", pd->call.tool, "what", pd->call.what, wl,
				   "client", pd->call.client, "session_id", pd->call.session_id,
				   "tool_use_id", pd->call.tool_use_id, "cwd", pd->call.cwd, "pid",
				   (json_int_t)inner_pid(pd->pid), "rule", pd->rule, "tool_call", id,
				   "reported", 1);
	h->asking = true;
	const struct question *q = approvals_ask(h->ap, APPROVAL_TOOL, subject, summary, detail,
						 answered, pd);
	h->asking = false;
	if (!q)
		return; /* answered at once, by an earlier answer: pd is gone */
	pd->q = q;
	snprintf(pd->qid, sizeof pd->qid, "%s", q->id);
	send_json(h, i, json_pack("{s:s, s:s, s:I}", "pending", q->id, "id", id, "timeout_s",
				  (json_int_t)q->timeout_s));
}

static void on_post(struct hook *h, size_t i, const struct hook_call *c)
{
	struct client *cl = h->clients[i];
	const char *open = toollink_close(h->link, cl->pid, c->tool_use_id, c->tool, c->what);
	char id[24];
	if (open)
		snprintf(id, sizeof id, "%s", open);
	else
		snprintf(id, sizeof id, "t%lu", ++h->next_id);
	emit_tool(h, id, c, -1, NULL, NULL, NULL, cl->pid);
	send_json(h, i, json_pack("{s:b, s:s}", "ok", 1, "id", id));
}

static void handle_line(struct hook *h, size_t i, const char *line, size_t len)
{
	struct hook_call c;
	char why[300];
	if (hookmsg_parse(line, len, &c, why, sizeof why) < 0) {
		refuse(h, i, why, line, len);
		return;
	}
	if (c.phase == HOOK_PRE)
		on_pre(h, i, &c);
	else
		on_post(h, i, &c);
	hook_call_clear(&c);
}

/* Read what the client sent, with who sent it; fds passed along are
 * closed. >0 bytes, 0 at the end, -1 nothing now (or an error: *gone). */
static ssize_t read_creds(struct client *cl, char *buf, size_t len, bool *gone)
{
	union {
		char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(32 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			     .msg_controllen = sizeof u.b };
	ssize_t n = recvmsg(cl->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	*gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof cr);
			cl->pid = cr.pid > 0 ? cr.pid : 0;
		} else if (c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t j = 0; j < k; j++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + j * sizeof(int), sizeof fd);
				close(fd);
			}
		}
	}
	return n;
}

/* The complete lines in client i's buffer, while it is not waiting for a
 * human. */
static void handle_lines(struct hook *h, size_t i)
{
	struct client *cl = h->clients[i];
	char *nl;
	while (h->clients[i] && !cl->closing && !cl->ask && (nl = memchr(cl->in, '\n', cl->in_len))) {
		size_t len = (size_t)(nl - cl->in);
		/* the line leaves the buffer first: handling it may answer at once */
		char *line = dupn(cl->in, len);
		memmove(cl->in, nl + 1, cl->in_len - len - 1);
		cl->in_len -= len + 1;
		handle_line(h, i, line, len);
		free(line);
	}
	if (h->clients[i] && !cl->closing && cl->in_len >= HOOKMSG_LINE_MAX)
		refuse(h, i, "a line longer than the hook socket takes", cl->in, 200);
}

static void on_client(struct hook *h, size_t i, uint32_t events)
{
	struct client *cl = h->clients[i];
	if (events & EPOLLOUT) {
		ssize_t w = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0)
			cl->out_off += (size_t)w;
		else if (w < 0 && errno != EAGAIN)
			cl->closing = true;
	}
	if (cl->ask && (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		/* the hook gave up waiting: its question is withdrawn */
		client_close(h, i);
		return;
	}
	if (!cl->ask && !cl->closing && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		size_t room = HOOKMSG_LINE_MAX - cl->in_len;
		char buf[65536];
		bool gone;
		ssize_t n = read_creds(cl, buf, room < sizeof buf ? room : sizeof buf, &gone);
		if (gone) {
			client_close(h, i);
			return;
		}
		if (n > 0) {
			cl->in = xrealloc(cl->in, cl->in_len + (size_t)n);
			memcpy(cl->in + cl->in_len, buf, (size_t)n);
			cl->in_len += (size_t)n;
		}
		handle_lines(h, i);
	}
	if (!h->clients[i])
		return;
	if (cl->closing && cl->out_off >= cl->out_len)
		client_close(h, i);
	else
		watch(h, i);
}

static void on_accept(struct hook *h)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(h->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		size_t i = 0;
		while (i < MAX_CLIENTS && h->clients[i])
			i++;
		if (i == MAX_CLIENTS) {
			static const char full[] = "{\"error\":\"too many hook clients at once\"}\n";
			(void)!send(fd, full, sizeof full - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			if (!h->full_said) {
				h->full_said = true;
				audit_emit_event(h->log, ev_alert(&(struct ev_alert){ .rule = "hook.refused",
					.path = SANDBOX_HOOK_SOCK, .reported = true,
					.action = "more than 64 hook clients at once: the others are "
						  "closed (said once)" }), NULL);
			}
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
		struct client *cl = xcalloc(1, sizeof *cl);
		cl->fd = fd;
		h->clients[i] = cl;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i + 1 };
		if (epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			client_close(h, i);
	}
}

void hook_dispatch(struct hook *h)
{
	struct epoll_event evs[16];
	int n = epoll_wait(h->ep, evs, ARRAY_LEN(evs), 0);
	for (int k = 0; k < n; k++) {
		if (evs[k].data.u64 == 0)
			on_accept(h);
		else if (h->clients[evs[k].data.u64 - 1])
			on_client(h, (size_t)evs[k].data.u64 - 1, evs[k].events);
	}
}

struct hook *hook_new(int listener, const struct policy *p, struct audit *log,
		      struct approvals *ap, int diag, pid_t init)
{
	struct hook *h = xcalloc(1, sizeof *h);
	h->listener = listener;
	h->p = p;
	h->log = log;
	h->ap = ap;
	h->link = toollink_new(log, diag, init);
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	int one = 1;
	setsockopt(listener, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
	if (h->ep < 0 || epoll_ctl(h->ep, EPOLL_CTL_ADD, listener, &ev) < 0) {
		hook_free(h);
		return NULL;
	}
	return h;
}

void hook_free(struct hook *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		client_close(h, i);
	if (h->refusals > REFUSALS_LOGGED) {
		char action[200];
		snprintf(action, sizeof action, "%lu lines refused in all this session (the last %lu not "
			 "logged one by one)", h->refusals, h->refusals - REFUSALS_LOGGED);
		audit_emit_event(h->log, ev_alert(&(struct ev_alert){ .rule = "hook.refused",
			.path = SANDBOX_HOOK_SOCK, .action = action, .reported = true }), NULL);
	}
	if (h->listener >= 0)
		close(h->listener);
	if (h->ep >= 0)
		close(h->ep);
	toollink_free(h->link);
	free(h);
}

int hook_fd(const struct hook *h)
{
	return h->ep;
}

const char *hook_link_exec(void *ctx, pid_t pid, pid_t ppid, const char *path,
			   const char *resolved, char *const *argv, size_t argc, const char *deny)
{
	struct hook *h = ctx;
	return h ? toollink_exec(h->link, pid, ppid, path, resolved, argv, argc, deny) : NULL;
}

const char *hook_link_conn(void *ctx, int fd)
{
	struct hook *h = ctx;
	return h ? toollink_conn(h->link, fd) : NULL;
}
