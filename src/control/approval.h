/* approval.h - questions for a human, asked where the agent cannot
 * answer. An `ask` rule of the policy (net ask, exec ask, write ask,
 * tool ask) holds the action it matched (a proxy connection, an exec in its
 * seccomp notification, a write, a tool call) and puts a question here. The
 * broker answers at once from what was already answered for the session
 * (a remembered answer, its scope and time to live), else hands the
 * question to the reviewer command first, if there is one, and then to the
 * human channels (the user's terminal, `warden approve` over the control
 * socket, a webhook); the first answer wins, no answer before the timeout
 * is a denial, and so is the session's end; a no to an exec also answers
 * the same exec for the next 3 s (a shell retrying down its PATH), kept
 * apart from the channels' answers so that the agent's refused execs never
 * push one of those out (1024 of them a session: when more come, an
 * expired one goes first, then the oldest yes, then the oldest no). In CI
 * mode (the policy's approve.ci: `warden run --ci`) the webhook is the only
 * human channel (others are not added), and a question with nobody to go
 * to is refused at once (by "ci"). Every question and its end is an
 * `approval` event.
 *
 * Everything here runs on the supervisor's event loop: channels call in
 * from their own handlers there; nothing is thread-safe. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../audit/audit.h"
#include "../common/loop.h"
#include "../policy/policy.h"

/* APPROVAL_RISK: the detector's `ask` threshold (src/detect/detect.h): the
 * sandbox is frozen while it waits; allowed, it goes on, else it ends. */
/* APPROVAL_SSH: a signature with an SSH key (`ssh-agent ask`,
 * src/supervisor/sshagent_srv.h); the subject is the key's fingerprint. */
enum approval_kind { APPROVAL_NET, APPROVAL_EXEC, APPROVAL_WRITE, APPROVAL_TOOL, APPROVAL_RISK,
		     APPROVAL_SSH };

/* How far an answer reaches: this question only, every later question with
 * the same subject in this session, or every later question of the same
 * kind whose subject the pattern (fnmatch) matches. */
enum approval_scope { SCOPE_ONCE, SCOPE_SESSION, SCOPE_PATTERN };

struct approval_answer {
	bool allow;
	enum approval_scope scope;
	const char *pattern;       /* SCOPE_PATTERN */
	unsigned ttl_s;            /* SCOPE_SESSION, SCOPE_PATTERN: 0 for the whole session */
	const char *by;            /* the channel: "terminal", "approve", "reviewer", "webhook" */
	const char *who;           /* who answered, as the channel knows it ("uid 1000"), or NULL */
	const char *reason;        /* or NULL */
};

/* A question as channels see it (read-only; valid until its `ended` call). */
struct question {
	char id[48];               /* "SESSION8-N": unique across sessions */
	enum approval_kind kind;
	const char *kind_name;     /* "net", "exec", "write", "tool" */
	const char *subject;       /* what an answer is bound to: "host:port", "sha256:HEX ARGV... @ CWD",
				      "/path", "TOOL: what" */
	const char *summary;       /* one line for a human: "connect to example.com:443" */
	json_t *detail;            /* the fields of the action (borrowed) */
	struct timespec asked;     /* CLOCK_REALTIME */
	struct timespec deadline;  /* CLOCK_MONOTONIC */
	unsigned timeout_s;
	bool reviewed;             /* the reviewer has said `ask` (or there is none) */
};

/* Told of each question put to the humans, and of its end (answered, timed
 * out, cancelled), whatever the channel. */
struct approval_channel {
	const char *name;
	void (*asked)(void *ctx, const struct question *q);
	void (*ended)(void *ctx, const struct question *q, bool allow, const char *by);
	void *ctx;
};

/* The reviewer command (`approve command`): told of each question first;
 * it calls approvals_review with its verdict. */
enum review_verdict { REVIEW_ALLOW, REVIEW_DENY, REVIEW_ASK };

/* The asker's callback: the answer (allow, and why in words). */
typedef void (*approval_done)(void *ctx, bool allow, const char *why);

struct approvals;

/* For the session (its id names the questions), logging to log, with the
 * policy's `approve` settings. NULL only when the timer cannot be had. */
struct approvals *approvals_new(struct audit *log, const char *session, const struct policy *p);
/* Every open question is denied ("the session ended") first. */
void approvals_free(struct approvals *a);

/* Put a question: subject binds the answer's scope, summary is what a human
 * reads, detail (taken) the action's fields. An answer remembered for the
 * subject comes at once (done is called before this returns, and NULL is
 * returned); else the question is open and returned, and done comes once,
 * later. */
const struct question *approvals_ask(struct approvals *a, enum approval_kind kind, const char *subject,
				     const char *summary, json_t *detail, approval_done done, void *ctx);
/* approvals_ask for a subject that may stand for more than one action
 * (an exec's argv longer than warden reads): a yes for the session or a
 * pattern is taken for this question only (said in its event's reason);
 * a no is remembered as usual. */
const struct question *approvals_ask_once(struct approvals *a, enum approval_kind kind,
					  const char *subject, const char *summary, json_t *detail,
					  approval_done done, void *ctx);
/* The asker no longer waits (its connection closed, its process died): the
 * question ends without calling done. */
void approvals_cancel(struct approvals *a, const struct question *q);

/* An answer from a channel to the open question id. 0; -1 with errno
 * ENOENT (no such open question: answered already, timed out) or EINVAL (a
 * bad scope, a pattern that does not match the question's own subject). */
int approvals_answer(struct approvals *a, const char *id, const struct approval_answer *ans);

/* The reviewer's verdict on question id: REVIEW_ASK hands it to the
 * humans; a verdict for a question not under review is -1 (ENOENT). */
int approvals_review(struct approvals *a, const char *id, enum review_verdict v, const char *reason);

void approvals_add_channel(struct approvals *a, const struct approval_channel *ch);
void approvals_set_reviewer(struct approvals *a, const struct approval_channel *ch);

/* The open questions that wait for a human (for listings), up to max; with
 * out NULL, how many there are. */
size_t approvals_open(const struct approvals *a, const struct question **out, size_t max);
/* The question id, open, or NULL. */
const struct question *approvals_find(const struct approvals *a, const char *id);

/* The deadlines' timer fired: the questions past theirs ended. */
void approvals_on_timer(struct approvals *a);
/* The timer watched by l (approvals_on_timer); -1 with e naming it when l
 * cannot take it. */
int approvals_watch(struct loop *l, struct approvals *a, struct werr *e);

/* "net", "exec", ... */
const char *approval_kind_name(enum approval_kind k);
