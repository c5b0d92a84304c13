/* hook.c - the hook socket (hook.h): a line server (linesrv.h) whose
 * lines carry their sender's pid (SCM_CREDENTIALS); each client at most one
 * pre report waiting for a human (the client held, unread, meanwhile); the
 * decision by the tool rules, the `tool` events, the refusals. */
#include "hook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/util.h"
#include "../sandbox/paths.h"
#include "../common/procfacts.h"
#include "hookmsg.h"
#include "linesrv.h"
#include "toollink.h"

#define MAX_CLIENTS 64
#define OUT_MAX (64 * 1024)
#define REFUSALS_LOGGED 100    /* hook.refused alerts per session; the rest counted, said at the end */
#define EVENT_WHAT_MAX 8192    /* what a tool event shows of the call */
#define SUBJECT_WHAT_MAX 2000  /* what a question's subject holds of it */

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
	struct linesrv *srv;
	const struct policy *p;
	struct audit *log;
	struct approvals *ap;
	struct toollink *link;
	unsigned long next_id;
	unsigned long refusals;
	bool full_said;
	struct pending *ask[MAX_CLIENTS]; /* each client's pre waiting for a human */
};

static void pending_free(struct pending *pd)
{
	hook_call_clear(&pd->call);
	free(pd);
}

/* A client gone: its question is withdrawn. */
static void on_gone(void *ctx, size_t i)
{
	struct hook *h = ctx;
	struct pending *pd = h->ask[i];
	h->ask[i] = NULL;
	if (pd) {
		approvals_cancel(h->ap, pd->q);
		pending_free(pd);
	}
}

static void send_json(struct hook *h, size_t i, json_t *j)
{
	linesrv_send(h->srv, i, j);
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
	linesrv_close_after(h->srv, i);
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
	send_json(h, i, ans);
}

/* A human's answer (approval.h): decided, and the client read again (at
 * once when the answer came inside on_pre: the line server's loop goes on
 * by itself then). */
static void answered(void *ctx, bool allow, const char *why)
{
	struct pending *pd = ctx;
	struct hook *h = pd->h;
	char reason[600];
	snprintf(reason, sizeof reason, "warden: %s", why ? why : allow ? "allowed" : "denied");
	decided(h, pd->slot, pd->id, &pd->call, allow, pd->rule, reason, pd->qid[0] ? pd->qid : NULL,
		pd->pid);
	if (h->ask[pd->slot] == pd) {
		h->ask[pd->slot] = NULL;
		linesrv_hold(h->srv, pd->slot, false);
	}
	pending_free(pd);
}

static void on_pre(struct hook *h, size_t i, struct hook_call *c)
{
	pid_t pid = linesrv_pid(h->srv, i);
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
		decided(h, i, id, c, false, rule[0] ? rule : NULL, reason, NULL, pid);
		return;
	}
	if (v == RULES_ALLOW) {
		decided(h, i, id, c, true, rule[0] ? rule : NULL, NULL, NULL, pid);
		return;
	}
	if (v == RULES_DENY || !h->ap) {
		snprintf(reason, sizeof reason, "warden: %s by the policy (%s)",
			 v == RULES_DENY ? "denied" : "refused: it asks a human, and none can be asked",
			 rule);
		decided(h, i, id, c, false, rule[0] ? rule : NULL, reason, NULL, pid);
		return;
	}
	/* ask: the hook's connection waits for the answer, unread */
	struct pending *pd = xcalloc(1, sizeof *pd);
	*pd = (struct pending){ .h = h, .slot = i, .call = *c, .pid = pid };
	*c = (struct hook_call){ 0 };
	snprintf(pd->id, sizeof pd->id, "%s", id);
	snprintf(pd->rule, sizeof pd->rule, "%s", rule[0] ? rule : "tool default ask");
	h->ask[i] = pd;
	linesrv_hold(h->srv, i, true);
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
	const struct question *q = approvals_ask(h->ap, APPROVAL_TOOL, subject, summary, detail,
						 answered, pd);
	if (!q)
		return; /* answered at once, by an earlier answer: pd is gone */
	pd->q = q;
	snprintf(pd->qid, sizeof pd->qid, "%s", q->id);
	send_json(h, i, json_pack("{s:s, s:s, s:I}", "pending", q->id, "id", id, "timeout_s",
				  (json_int_t)q->timeout_s));
}

static void on_post(struct hook *h, size_t i, const struct hook_call *c)
{
	pid_t pid = linesrv_pid(h->srv, i);
	const char *open = toollink_close(h->link, pid, c->tool_use_id, c->tool, c->what);
	char id[24];
	if (open)
		snprintf(id, sizeof id, "%s", open);
	else
		snprintf(id, sizeof id, "t%lu", ++h->next_id);
	emit_tool(h, id, c, -1, NULL, NULL, NULL, pid);
	send_json(h, i, json_pack("{s:b, s:s}", "ok", 1, "id", id));
}

static void on_line(void *ctx, size_t i, const char *line, size_t len)
{
	struct hook *h = ctx;
	if (!line) {
		refuse(h, i, "a line longer than the hook socket takes", NULL, 0);
		return;
	}
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

/* A client more than the socket takes is told so (said once in the log). */
static bool on_accept(void *ctx, int fd, size_t slot, const struct ucred *peer)
{
	struct hook *h = ctx;
	if (slot != SIZE_MAX)
		return true;
	static const char full[] = "{\"error\":\"too many hook clients at once\"}\n";
	(void)!send(fd, full, sizeof full - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (!h->full_said) {
		h->full_said = true;
		audit_emit_event(h->log, ev_alert(&(struct ev_alert){ .rule = "hook.refused",
			.path = SANDBOX_HOOK_SOCK, .reported = true,
			.action = "more than 64 hook clients at once: the others are closed (said once)" }),
			NULL);
	}
	return false;
}

static void hook_dispatch(struct loop *l, const struct source *src, uint32_t events)
{
	struct hook *h = src->ctx;
	linesrv_dispatch(h->srv);
}

struct hook *hook_new(int listener, const struct policy *p, struct audit *log,
		      struct approvals *ap, int diag, pid_t init)
{
	struct hook *h = xcalloc(1, sizeof *h);
	h->p = p;
	h->log = log;
	h->ap = ap;
	h->link = toollink_new(log, diag, init);
	int one = 1;
	setsockopt(listener, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
	h->srv = linesrv_new(listener, &(struct linesrv_limits){ .clients = MAX_CLIENTS,
		.line_max = HOOKMSG_LINE_MAX, .out_max = OUT_MAX, .creds = true },
		&(struct linesrv_ops){ .accept = on_accept, .line = on_line, .gone = on_gone, .ctx = h });
	if (!h->srv) {
		hook_free(h);
		return NULL;
	}
	return h;
}

void hook_free(struct hook *h)
{
	if (!h)
		return;
	linesrv_free(h->srv);
	if (h->refusals > REFUSALS_LOGGED) {
		char action[200];
		snprintf(action, sizeof action, "%lu lines refused in all this session (the last %lu not "
			 "logged one by one)", h->refusals, h->refusals - REFUSALS_LOGGED);
		audit_emit_event(h->log, ev_alert(&(struct ev_alert){ .rule = "hook.refused",
			.path = SANDBOX_HOOK_SOCK, .action = action, .reported = true }), NULL);
	}
	toollink_free(h->link);
	free(h);
}

int hook_watch(struct loop *l, struct hook *h, struct werr *e)
{
	return loop_add(l, "the hook socket", linesrv_fd(h->srv), hook_dispatch, h, e);
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
