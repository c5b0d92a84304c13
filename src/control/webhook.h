/* webhook.h - the webhook (`approve webhook URL`): a channel of
 * the question broker that tells a URL of each question put to the humans,
 * for a chat or a phone; the answer comes back the way every human answer
 * does, through `warden approve ID allow|deny` on the control socket.
 *
 * Each question is one POST of a JSON body (at most WEBHOOK_BODY_MAX bytes:
 * a detail that would not fit is replaced by {"truncated":true}):
 *   {"event":"approval.asked","session":S,
 *    "question":{"id","kind","subject","summary","detail","asked","timeout_s","remaining_s"},
 *    "answer":{"allow":"warden approve ID allow","deny":"warden approve ID deny"},
 *    "text":"warden asks: SUMMARY (question ID, session S, N s to answer). Answer with ..."}
 * ("text" is for chats that show a field of that name; the subject and
 * summary are the agent's doing: its words, not warden's.)
 * HTTP/1.1 to an http:// URL; to an https:// one, TLS 1.2 or later verified
 * against the system's trust store (tls_client_ctx: SSL_CERT_DIR or the
 * default certificate directory, as OpenSSL finds them), the host name or
 * address checked, never without verification. The connection is the
 * host's own (the supervisor's: not through the sandbox's proxy, no proxy
 * variables), one attempt, within WEBHOOK_DEADLINE_S from name lookup to
 * the response's status line; nothing more of the response is read. A 2xx
 * is "delivered"; anything else, or a failure, is an `alert` (rule
 * approval.webhook-failed, the URL's host and port: its path may hold a
 * token and is never logged) and the question stays open for the other
 * channels. The webhook's answer is never the question's answer.
 *
 * Threads: a delivery runs on a worker thread (at most WEBHOOK_WORKERS at
 * once, started when needed; at most WEBHOOK_QUEUE_MAX wait, the rest are
 * dropped with an alert): name lookup (getaddrinfo) cannot be done without
 * blocking otherwise. A worker touches only its delivery and the queue's
 * lock; results come back to the loop through an eventfd. At the session's
 * end the workers are told to stop (a second eventfd their polls watch) and
 * given a moment; one still in a name lookup is left to finish alone (the
 * shared part is reference-counted). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "../net/post.h"
#include "../net/rules.h"
#include "approval.h"

#define WEBHOOK_BODY_MAX (64 * 1024)
#define WEBHOOK_DEADLINE_S 10
#define WEBHOOK_WORKERS 4
#define WEBHOOK_QUEUE_MAX 64

/* The URL's rules are post_url_parse's (src/net/post.h); its errors say
 * "approve webhook". */
int webhook_url_parse(const char *url, struct post_url *u, struct werr *e);

/* The POST's body for q of session (malloc'd, *len its length), or NULL
 * when even without the detail it would exceed WEBHOOK_BODY_MAX. */
char *webhook_body(const struct question *q, const char *session, size_t *len);

struct webhook;

/* The channel for url on a (approvals_add_channel), alerts to log. NULL
 * with e set for a URL it cannot use, or no TLS context. */
struct webhook *webhook_new(struct approvals *a, const char *url, const char *session,
			    struct audit *log, struct werr *e);
/* The same with a delivery's deadline of deadline_ms instead of
 * WEBHOOK_DEADLINE_S (tests use a shorter one). */
struct webhook *webhook_new_within(struct approvals *a, const char *url, const char *session,
				   struct audit *log, unsigned deadline_ms, struct werr *e);
/* Stop the workers (given 2 s), drop what waits, free.
 * Call after approvals_free. */
void webhook_free(struct webhook *w);
/* The loop's source: an eventfd, readable when deliveries ended. */
int webhook_fd(const struct webhook *w);
void webhook_dispatch(struct webhook *w);
/* Its deliveries' ends watched by l (webhook_dispatch); -1 with e naming
 * it when l cannot take it. */
int webhook_watch(struct loop *l, struct webhook *w, struct werr *e);
