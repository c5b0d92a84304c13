/* reviewer.h - the reviewer command (`approve command CMD ARG...`, issue
 * 15): the user's own program, run on the host (outside the sandbox) for
 * each question before any human sees it.
 *
 * In: the question as one JSON object on its stdin, then end of file:
 *   {"id","kind","subject","summary","detail","asked","timeout_s","remaining_s",
 *    "session","reviewer_timeout_s"}
 * (the fields of `warden approve --json`'s questions, control.h, plus the
 * session and the reviewer's own time limit; a detail that would make the
 * object larger than REVIEWER_QUESTION_MAX is replaced by
 * {"truncated":true}).
 * Out: one JSON object on its stdout, then exit status 0:
 *   {"decision": "allow" | "deny" | "ask", "reason": TEXT}   ("reason" optional)
 * "allow" and "deny" answer the question (approval event, "by":"reviewer");
 * "ask" hands it to the humans (the terminal, `warden approve`, the
 * webhook). Everything else is a denial, and its reason says which: a
 * non-zero exit status, death by a signal, no output, output that is not
 * one JSON object with a known decision, more than REVIEWER_OUTPUT_MAX
 * bytes, or no answer within the reviewer's limit: min(timeout_s / 2, 30)
 * seconds, at least 1 (`approve timeout`, 60 s by default: 30 s), after
 * which its process group is killed. A reviewer that fails is also an
 * `alert` (rule approval.reviewer-failed).
 *
 * How it runs: posix_spawn, in a session and process group of its own
 * (no controlling terminal), in / (not the workspace, which the agent
 * writes), with warden's own environment (the user's: a reviewer is
 * trusted host code, like the shell that started warden; the sandbox's
 * environment and the secrets' phantoms are never in it), signals at
 * their defaults, no descriptor but 0-2: stdin a
 * sealed copy of the question (a memfd: nothing to block on, no SIGPIPE),
 * stdout and stderr pipes read on the supervisor's loop. Its stderr never
 * reaches the terminal (the agent's words could be in it): its last line
 * (printable ASCII, cut at 200 bytes) goes into the reason of a failure.
 * At most REVIEWER_MAX_RUNNING run at once; later questions wait their
 * turn in order (their own timeout still runs). A program inside the
 * workspace or another path the agent can write is refused at the
 * session's start: the agent could rewrite its own judge.
 *
 * Everything runs on the supervisor's loop, one epoll fd (the pipes, a
 * pidfd per process, a timerfd for the limits); verdicts are handed to the
 * broker from reviewer_dispatch only, never from inside a broker callback. */
#pragma once
#include <stddef.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "../policy/policy.h"
#include "approval.h"

#define REVIEWER_OUTPUT_MAX (64 * 1024)    /* bytes of stdout read */
#define REVIEWER_QUESTION_MAX (64 * 1024)  /* bytes of the question on stdin */
#define REVIEWER_REASON_MAX 256            /* bytes of the answer's reason kept */
#define REVIEWER_MAX_RUNNING 8
#define REVIEWER_LIMIT_MAX_S 30

/* ---- the answer (reviewer_answer.c; pure: the fuzz target's) ---- */

struct reviewer_answer {
	enum review_verdict verdict;
	/* the answer's "reason": valid UTF-8, control characters made spaces,
	 * cut at a character boundary within REVIEWER_REASON_MAX bytes; "" when
	 * it gave none */
	char reason[REVIEWER_REASON_MAX + 1];
};

/* Parse what a reviewer printed, buf[0..len) (not NUL-terminated): one
 * JSON object, white space around it allowed, nothing else, no duplicate
 * keys, "decision" one of "allow", "deny", "ask", "reason" a string or
 * null when present; other keys are ignored. 0 with *out filled; -1 with
 * e saying what was wrong (printable ASCII: the output's own bytes are
 * escaped or left out). */
int reviewer_parse_answer(const char *buf, size_t len, struct reviewer_answer *out, struct werr *e);

/* The name of a verdict ("allow", "deny", "ask"). */
const char *reviewer_verdict_name(enum review_verdict v);

/* The reviewer's time limit for questions of timeout_s seconds. */
unsigned reviewer_limit_s(unsigned timeout_s);

/* ---- the command (reviewer.c) ---- */

struct reviewer;

/* The reviewer of p's `approve command` for session's questions, set on
 * a (approvals_set_reviewer); alerts go to log. NULL with e set when the
 * program is not an executable file, or lies where the agent can write
 * (the workspace, a `path rw` of p). */
struct reviewer *reviewer_new(struct approvals *a, const struct policy *p, const char *session,
			      const char *workspace, struct audit *log, struct werr *e);
/* Kill what still runs (its process groups) and free. Call after
 * approvals_free (which tells the reviewer of the questions' end). */
void reviewer_free(struct reviewer *r);
/* Its commands (one epoll fd) watched by l; -1 with e naming it when l
 * cannot take it. */
int reviewer_watch(struct loop *l, struct reviewer *r, struct werr *e);
