/* askq.h - questions and events an interception thread hands to the
 * session's event loop, which alone may talk to the asker (proxy.h's
 * proxy_asker, the approvals broker) and the log: the thread posts, an
 * eventfd wakes the loop, the loop emits the events and puts the
 * questions; a thread that asked waits for the answer, or for its stop fd
 * (the session ends: refused). Used by the MCP rules (proxy_mcp.h) and by
 * the request rules of intercepted connections (proxy_req.c). */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "proxy.h"

struct askq;

/* log borrowed (it outlives the queue); asker copied, NULL: every question
 * refused ("no one to ask"). NULL with e filled. */
struct askq *askq_new(struct audit *log, const struct proxy_asker *asker, struct werr *e);
/* The eventfd the loop watches (readable: askq_drain). */
int askq_fd(const struct askq *q);
/* On the loop's thread: emit what was posted, put the questions. */
void askq_drain(struct askq *q);
/* Once no thread can post any more: what is left emitted, its questions
 * refused. NULL is fine. */
void askq_free(struct askq *q);
/* Is there someone to ask (an asker was given)? */
bool askq_can_ask(const struct askq *q);

/* From any thread: the event, emitted by the loop. */
void askq_emit(struct askq *q, struct event ev);
/* From an interception thread: put the question (subject, summary and the
 * fields, detail taken, as proxy_asker's ask) and wait for the answer;
 * stop_fd (> 0) readable or hung up ends the wait, refused; so does
 * client_fd (>= 0) shut by its peer, the question then withdrawn (the
 * asker's cancel). true: allowed; why: the answer in words ("allowed by
 * approve", "denied by ci: ...", "the session ended before an answer"). */
bool askq_ask(struct askq *q, const char *subject, const char *summary, json_t *detail,
	      int stop_fd, int client_fd, char *why, size_t whylen);
