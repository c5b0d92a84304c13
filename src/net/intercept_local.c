/* intercept_local.c - the state of an intercepted connection that the
 * loop (intercept.c) and warden's own answers share (intercept_int.h): the
 * first error, the queue to the upstream, the requests in flight, a
 * refusal; and the requests warden answers itself: one held whole until
 * its owner decides (an MCP server's JSON-RPC, job->hold), one on_req
 * refuses (request rules), the answer put between two responses, the
 * connection kept. */
#include "intercept_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "reqrules.h"

/* ---- the bridge's own state: the first error, the queue to the upstream,
 * the requests in flight, a refusal ---------------------------------- */

void ix_set_error(struct bridge *b, const char *fmt, ...)
{
	if (b->job->error[0])
		return; /* the first reason stands */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->job->error, sizeof b->job->error, fmt, ap);
	va_end(ap);
}

size_t ix_pending(const struct outbuf *o)
{
	return bytebuf_pending(&o->q);
}

void ix_out_put(struct outbuf *o, const void *d, size_t n)
{
	bytebuf_put(&o->q, d, n, BUF);
	o->total += n;
}

/* Stop taking the client's requests and answer status/reason in place of
 * whatever would follow. cut: the upstream has part of the refused request:
 * send it nothing more, and end it once the responses to the requests
 * before that one are through. */
void ix_refuse(struct bridge *b, int status, const char *reason, bool by_callback, bool cut)
{
	ix_set_error(b, "%s", reason);
	b->job->refused |= by_callback;
	if (!b->answer_pending) {
		b->answer_pending = true;
		b->answer_status = status;
		snprintf(b->answer_reason, sizeof b->answer_reason, "%s", reason);
	}
	bool in_body = b->cs == C_BODY;
	b->cs = C_STOPPED;
	b->cin_off = b->cin_len;
	if (!cut || b->cutting)
		return;
	/* what the requests before it still have to send goes; the rest of
	 * this one does not */
	uint64_t sent = b->to_u.total - ix_pending(&b->to_u);
	size_t keep = b->cur_start > sent ? (size_t)(b->cur_start - sent) : 0;
	if (keep < ix_pending(&b->to_u))
		b->to_u.q.len = b->to_u.q.off + keep;
	if (in_body && b->cur_start >= sent && b->qn > 0) {
		/* none of it left: as if it never came, and nothing to cut */
		b->qn--;
		b->job->requests--;
		return;
	}
	b->cutting = true;
}

void ix_q_push(struct bridge *b, unsigned f)
{
	b->q[(b->qhead + b->qn) % MAX_INFLIGHT] = (unsigned char)f;
	b->qn++;
}

void ix_resume_requests(struct bridge *b)
{
	http_parser_init_origin(b->hp, b->job->any_host ? NULL : &b->job->host, b->job->port,
				b->sctx != NULL);
	b->cs = C_HEAD;
}

void ix_request_done(struct bridge *b)
{
	if (b->cur_upgrade)
		b->cs = C_WAIT_UPGRADE;
	else
		ix_resume_requests(b);
}

/* ---- the requests warden answers itself ----------------------------- */

/* warden's own answer (reply, malloc'd: taken) owed to the request just
 * read; status and reason end the connection should it find no place. */
static void ix_local_owed(struct bridge *b, char *reply, size_t len, int status, const char *reason,
		       bool by_callback)
{
	free(b->reply);
	b->reply = reply;
	b->reply_len = len;
	b->local_status = status;
	b->local_by_callback = by_callback;
	snprintf(b->local_reason, sizeof b->local_reason, "%s", reason);
	b->cs = C_LOCAL;
}

static const char *bb_data(const struct bytebuf *q)
{
	return q->p ? q->p + q->off : "";
}

/* A request's head goes upstream: its response is owed. */
void ix_send_head(struct bridge *b, const char *h, size_t n)
{
	b->cur_start = b->to_u.total;
	ix_out_put(&b->to_u, h, n);
	b->job->requests++;
	ix_q_push(b, (strcmp(b->hp->req.method, "HEAD") == 0 ? Q_HEAD : 0) |
			  (b->cur_upgrade ? Q_UPGRADE : 0));
	if (b->qn == 1 && http_resp_idle(&b->rw))
		http_resp_next(&b->rw, b->q[b->qhead] & Q_HEAD);
}

/* A held request is whole: the owner decides whether it goes, is
 * answered here, or is refused. */
void ix_release_held(struct bridge *b)
{
	struct intercept_job *j = b->job;
	char why[256] = "";
	char *reply = NULL;
	size_t rlen = 0;
	b->holding = false;
	int d = j->hold.decide(j->hold.ctx, bb_data(&b->hhead), bytebuf_pending(&b->hhead),
			       bb_data(&b->hbody), bytebuf_pending(&b->hbody), &reply, &rlen,
			       why, sizeof why);
	if (d == 0) {
		ix_send_head(b, bb_data(&b->hhead), bytebuf_pending(&b->hhead));
		ix_out_put(&b->to_u, bb_data(&b->hbody), bytebuf_pending(&b->hbody));
	}
	b->hhead.off = b->hhead.len = b->hbody.off = b->hbody.len = 0;
	if (d == 0) {
		ix_request_done(b);
	} else if (d == 1 && reply && rlen <= BUF) {
		ix_local_owed(b, reply, rlen, 403, "a refused request's answer found no place between "
			   "responses", true);
	} else {
		free(reply);
		why[sizeof why - 1] = '\0';
		ix_refuse(b, 403, why[0] ? why : "request refused", true, false);
	}
}

/* Body bytes of a held request: kept, within the bound. */
bool ix_hold_data(struct bridge *b, const char *d, size_t n)
{
	struct intercept_job *j = b->job;
	char why[256] = "";
	if (bytebuf_pending(&b->hbody) + n > j->hold.body_max) {
		snprintf(why, sizeof why, "request body over %zu bytes toward a server whose requests "
			 "warden reads", j->hold.body_max);
		ix_refuse(b, 413, why, true, false);
		return false;
	}
	if (j->on_data && j->on_data(j->ctx, d, n, why, sizeof why) != 0) {
		why[sizeof why - 1] = '\0';
		ix_refuse(b, 403, why[0] ? why : "request refused", true, false);
		return false;
	}
	bytebuf_put(&b->hbody, d, n, BUF);
	return true;
}

/* on_req refuses the request just read: its body read and dropped, then
 * our answer (local_answer), the connection kept. true when refused. */
bool ix_request_refused(struct bridge *b)
{
	struct intercept_job *j = b->job;
	size_t tl = 0;
	const char *t = http_path(b->hp, &tl);
	char why[sizeof b->local_reason] = "";
	int st = j->on_req(j->req_ctx, b->hp->req.method, t, tl, why, sizeof why);
	if (!st)
		return false;
	char *reply = xmalloc(BUF);
	long n = reqrules_response(st, why[0] ? why : "request refused",
				   strcmp(b->hp->req.method, "HEAD") == 0, reply, BUF);
	ix_local_owed(b, reply, n > 0 ? (size_t)n : 0, st, why[0] ? why : "request refused", false);
	http_body_init(&b->body, &b->hp->req);
	b->cs = b->body.state == HTTP_COMPLETE ? C_LOCAL : C_DROP;
	return true;
}

/* warden's own answer, once the responses before it are through (the
 * server idle between two): then the next request. Where it cannot fall
 * between two responses, it is the connection's last word (refuse). */
bool ix_local_answer(struct bridge *b)
{
	if (b->cs != C_LOCAL || b->answer_pending || b->uin_off < b->uin_len || b->held)
		return false;
	if (b->qn > 0 || !b->watching || !http_resp_idle(&b->rw)) {
		if (b->watching && !b->u.eof && !b->u.dead && !b->c.dead)
			return false; /* a response is still coming */
		free(steal_ptr(&b->reply));
		ix_refuse(b, b->local_status, b->local_reason, b->local_by_callback, false);
		return true;
	}
	memcpy(b->uin, b->reply, b->reply_len);
	b->uin_off = 0;
	b->uin_len = b->reply_len;
	b->uin_ours = true;
	free(steal_ptr(&b->reply));
	ix_resume_requests(b);
	return true;
}

