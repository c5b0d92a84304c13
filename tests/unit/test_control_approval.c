/* test_control_approval.c - the question broker (src/control/approval.c):
 * a question open until an answer, once, remembered for the session, for a
 * pattern and until a ttl; the reviewer first (allow, deny, or ask: then the
 * humans); bad answers refused; the timeout a denial; a cancel calls no one;
 * the channels told of each question and its end; every step an approval
 * event in the log. CI mode: only a webhook is a human channel, and a
 * question with none, or one the reviewer hands on, is refused at once.
 * The agent's refused execs push out no human's answer; a question asked
 * once only takes a yes for the session as this question's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "src/audit/audit.h"
#include "src/control/approval.h"

struct got {
	int calls;
	bool allow;
	char why[512];
};

static void done(void *ctx, bool allow, const char *why)
{
	struct got *g = ctx;
	g->calls++;
	g->allow = allow;
	snprintf(g->why, sizeof g->why, "%s", why);
}

struct seen {
	int asked, ended;
	char last[48];
};

static void ch_asked(void *ctx, const struct question *q)
{
	struct seen *s = ctx;
	s->asked++;
	snprintf(s->last, sizeof s->last, "%s", q->id);
}

static void ch_ended(void *ctx, const struct question *q, bool allow, const char *by)
{
	struct seen *s = ctx;
	s->ended++;
}

static char dir[] = "/tmp/warden-approval-XXXXXX";

static const char *session = "20261125T000000Z-abcd1234";

static struct audit *open_log(void)
{
	struct audit *a = NULL;
	struct werr e = { 0 };
	CHECK(audit_open(&a, dir, session, &e) == 0);
	return a;
}

static unsigned long count(const char *needle)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s.jsonl", dir, session);
	FILE *f = fopen(path, "r");
	unsigned long n = 0;
	char line[8192];
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

static void test_answers(void)
{
	struct audit *log = open_log();
	struct policy p = { 0 };
	p.approve.timeout_s = 60;
	struct approvals *a = approvals_new(log, session, &p);
	CHECK(a != NULL);
	struct seen s = { 0 };
	approvals_add_channel(a, &(struct approval_channel){ .name = "t", .asked = ch_asked,
							     .ended = ch_ended, .ctx = &s });
	struct got g1 = { 0 };
	const struct question *q = approvals_ask(a, APPROVAL_NET, "a.example:443", "connect to a.example:443",
						 NULL, done, &g1);
	CHECK(q != NULL && g1.calls == 0 && s.asked == 1);
	CHECK_STR(q->id, "abcd1234-1");
	CHECK(approvals_find(a, "abcd1234-1") == q);
	const struct question *open[4];
	CHECK(approvals_open(a, open, 4) == 1 && approvals_open(a, NULL, 0) == 1);

	/* a pattern that does not match the question itself is refused */
	struct approval_answer bad = { .allow = true, .scope = SCOPE_PATTERN, .pattern = "*.other", .by = "t" };
	errno = 0;
	CHECK(approvals_answer(a, q->id, &bad) < 0 && errno == EINVAL && g1.calls == 0);
	errno = 0;
	CHECK(approvals_answer(a, "abcd1234-99", &bad) < 0 && errno == ENOENT);

	/* yes for the session */
	struct approval_answer yes = { .allow = true, .scope = SCOPE_SESSION, .by = "t", .reason = "fine" };
	CHECK(approvals_answer(a, q->id, &yes) == 0);
	CHECK(g1.calls == 1 && g1.allow && strstr(g1.why, "allowed by t: fine") && s.ended == 1);
	CHECK(approvals_find(a, "abcd1234-1") == NULL);
	/* the same subject again: answered at once */
	struct got g2 = { 0 };
	CHECK(approvals_ask(a, APPROVAL_NET, "a.example:443", "again", NULL, done, &g2) == NULL);
	CHECK(g2.calls == 1 && g2.allow && s.asked == 1);
	/* another kind with the same text is not covered */
	struct got g3 = { 0 };
	q = approvals_ask(a, APPROVAL_WRITE, "a.example:443", "w", NULL, done, &g3);
	CHECK(q != NULL && g3.calls == 0);
	/* no, for a pattern with a ttl */
	struct approval_answer no = { .allow = false, .scope = SCOPE_PATTERN, .pattern = "a.*", .ttl_s = 1,
				      .by = "t" };
	CHECK(approvals_answer(a, q->id, &no) == 0 && g3.calls == 1 && !g3.allow);
	struct got g4 = { 0 };
	CHECK(approvals_ask(a, APPROVAL_WRITE, "a.b", "w", NULL, done, &g4) == NULL && !g4.allow);
	sleep(2);
	struct got g5 = { 0 };
	q = approvals_ask(a, APPROVAL_WRITE, "a.b", "w", NULL, done, &g5);
	CHECK(q != NULL && g5.calls == 0); /* the ttl is over */
	/* a cancel calls no one */
	approvals_cancel(a, q);
	CHECK(g5.calls == 0 && approvals_open(a, NULL, 0) == 0);
	/* once is once */
	struct got g6 = { 0 }, g7 = { 0 };
	q = approvals_ask(a, APPROVAL_EXEC, "x", "x", NULL, done, &g6);
	struct approval_answer once = { .allow = true, .scope = SCOPE_ONCE, .by = "t" };
	CHECK(approvals_answer(a, q->id, &once) == 0 && g6.allow);
	CHECK(approvals_ask(a, APPROVAL_EXEC, "x", "x", NULL, done, &g7) != NULL && g7.calls == 0);
	/* a no to an exec stands a moment for the same exec (a shell's PATH
	 * retry), not for another */
	struct got g8 = { 0 }, g9 = { 0 }, g10 = { 0 };
	const struct question *qx = approvals_ask(a, APPROVAL_EXEC, "y @ /w", "y", NULL, done, &g8);
	struct approval_answer no_once = { .allow = false, .scope = SCOPE_ONCE, .by = "t" };
	CHECK(qx && approvals_answer(a, qx->id, &no_once) == 0 && !g8.allow);
	CHECK(approvals_ask(a, APPROVAL_EXEC, "y @ /w", "y", NULL, done, &g9) == NULL && g9.calls == 1 &&
	      !g9.allow && strstr(g9.why, "a moment ago") != NULL);
	CHECK(approvals_ask(a, APPROVAL_EXEC, "z @ /w", "z", NULL, done, &g10) != NULL && g10.calls == 0);
	/* the end of the broker calls no asker */
	approvals_free(a);
	CHECK(g7.calls == 0);
	audit_close(log);
	CHECK(count("\"phase\":\"asked\"") == 7);
	CHECK(count("\"phase\":\"remembered\"") == 3);
	CHECK(count("\"phase\":\"cancelled\"") == 1);
	CHECK(count("\"phase\":\"ended\"") == 2);
	CHECK(count("\"scope\":\"pattern\",\"pattern\":\"a.*\",\"ttl_s\":1") == 1);
}

/* The answers of humans are kept apart from the nos that stand a moment:
 * 2,000 refused execs (the agent's doing) push out no `deny --session`;
 * a full store of answers drops its oldest yes before any no. A yes for
 * the session to a question asked with approvals_ask_once covers it
 * alone, and says so; a no to it is remembered. */
static void test_grants_kept(void)
{
	struct audit *log = open_log();
	struct policy p = { 0 };
	p.approve.timeout_s = 60;
	struct approvals *a = approvals_new(log, session, &p);
	struct got g = { 0 };
	const struct question *q = approvals_ask(a, APPROVAL_EXEC, "evil @ /w", "evil", NULL, done, &g);
	struct approval_answer no = { .allow = false, .scope = SCOPE_SESSION, .by = "t" };
	CHECK(q && approvals_answer(a, q->id, &no) == 0 && !g.allow);
	struct approval_answer no_once = { .allow = false, .scope = SCOPE_ONCE, .by = "t" };
	char subj[64];
	for (int i = 0; i < 2000; i++) {
		snprintf(subj, sizeof subj, "n%d @ /w", i);
		q = approvals_ask(a, APPROVAL_EXEC, subj, "n", NULL, done, &g);
		CHECK(q && approvals_answer(a, q->id, &no_once) == 0);
	}
	struct approval_answer yes = { .allow = true, .scope = SCOPE_SESSION, .by = "t" };
	for (int i = 0; i < 1100; i++) {
		snprintf(subj, sizeof subj, "y%d @ /w", i);
		q = approvals_ask(a, APPROVAL_EXEC, subj, "y", NULL, done, &g);
		CHECK(q && approvals_answer(a, q->id, &yes) == 0);
	}
	memset(&g, 0, sizeof g);
	CHECK(approvals_ask(a, APPROVAL_EXEC, "evil @ /w", "evil", NULL, done, &g) == NULL &&
	      g.calls == 1 && !g.allow);
	/* the oldest yes went, the newest stays */
	memset(&g, 0, sizeof g);
	q = approvals_ask(a, APPROVAL_EXEC, "y0 @ /w", "y", NULL, done, &g);
	CHECK(q != NULL && g.calls == 0);
	approvals_cancel(a, q);
	CHECK(approvals_ask(a, APPROVAL_EXEC, "y1099 @ /w", "y", NULL, done, &g) == NULL && g.allow);

	/* asked once only: a yes for the session is this question's */
	memset(&g, 0, sizeof g);
	q = approvals_ask_once(a, APPROVAL_EXEC, "cut @ /w", "cut", NULL, done, &g);
	CHECK(q && approvals_answer(a, q->id, &yes) == 0 && g.allow);
	memset(&g, 0, sizeof g);
	q = approvals_ask_once(a, APPROVAL_EXEC, "cut @ /w", "cut", NULL, done, &g);
	CHECK(q != NULL && g.calls == 0);
	CHECK(approvals_answer(a, q->id, &no) == 0 && !g.allow);
	memset(&g, 0, sizeof g);
	CHECK(approvals_ask_once(a, APPROVAL_EXEC, "cut @ /w", "cut", NULL, done, &g) == NULL &&
	      g.calls == 1 && !g.allow);
	approvals_free(a);
	audit_close(log);
	CHECK(count("\"scope\":\"once\"") >= 1 && count("taken for this question only") == 1);
}

static void test_reviewer_and_timeout(void)
{
	struct audit *log = open_log();
	struct policy p = { 0 };
	p.approve.timeout_s = 1;
	struct approvals *a = approvals_new(log, session, &p);
	struct seen human = { 0 }, rev = { 0 };
	approvals_add_channel(a, &(struct approval_channel){ .name = "h", .asked = ch_asked,
							     .ended = ch_ended, .ctx = &human });
	approvals_set_reviewer(a, &(struct approval_channel){ .name = "r", .asked = ch_asked,
							      .ended = ch_ended, .ctx = &rev });
	struct got g1 = { 0 }, g2 = { 0 }, g3 = { 0 };
	const struct question *q1 = approvals_ask(a, APPROVAL_TOOL, "Bash: ls", "ls", NULL, done, &g1);
	CHECK(rev.asked == 1 && human.asked == 0);
	/* under review: not for the humans */
	CHECK(approvals_open(a, NULL, 0) == 0);
	struct approval_answer yes = { .allow = true, .by = "h" };
	errno = 0;
	CHECK(approvals_answer(a, q1->id, &yes) < 0 && errno == ENOENT);
	CHECK(approvals_review(a, q1->id, REVIEW_DENY, "no ls") == 0 && g1.calls == 1 && !g1.allow);
	CHECK(strstr(g1.why, "denied by reviewer: no ls") != NULL);
	const struct question *q2 = approvals_ask(a, APPROVAL_TOOL, "Bash: pwd", "pwd", NULL, done, &g2);
	CHECK(approvals_review(a, q2->id, REVIEW_ASK, NULL) == 0 && human.asked == 1 && g2.calls == 0);
	CHECK(approvals_review(a, q2->id, REVIEW_ALLOW, NULL) < 0); /* not under review any more */
	CHECK(approvals_answer(a, q2->id, &yes) == 0 && g2.allow);
	/* nobody answers: a denial after the timeout */
	const struct question *q3 = approvals_ask(a, APPROVAL_TOOL, "Bash: id", "id", NULL, done, &g3);
	CHECK(q3 && approvals_review(a, q3->id, REVIEW_ASK, NULL) == 0);
	struct timespec t = { .tv_sec = 1, .tv_nsec = 300000000 };
	nanosleep(&t, NULL);
	approvals_on_timer(a);
	CHECK(g3.calls == 1 && !g3.allow && strstr(g3.why, "no answer within 1 s") != NULL);
	approvals_free(a);
	audit_close(log);
	CHECK(count("\"phase\":\"timeout\"") == 1);
	CHECK(count("\"phase\":\"reviewed\"") == 2);
	CHECK(count("\"by\":\"reviewer\"") >= 3);
}

static int rv_asked_n;
static void rv_asked(void *ctx, const struct question *q)
{
	rv_asked_n++;
}

static void test_ci(void)
{
	struct audit *log = open_log();
	struct policy p = { 0 };
	p.approve.timeout_s = 60;
	p.approve.ci = true;
	struct approvals *a = approvals_new(log, session, &p);
	CHECK(a != NULL);
	struct seen term = { 0 };
	approvals_add_channel(a, &(struct approval_channel){ .name = "terminal", .asked = ch_asked,
							     .ended = ch_ended, .ctx = &term });
	struct got g = { 0 };
	CHECK(approvals_ask(a, APPROVAL_EXEC, "x", "run x", NULL, done, &g) == NULL);
	CHECK(g.calls == 1 && !g.allow && strstr(g.why, "denied by ci") && strstr(g.why, "CI mode"));
	CHECK(term.asked == 0 && approvals_open(a, NULL, 0) == 0);
	CHECK(count("\"by\":\"ci\"") == 1);
	/* the reviewer first; its `ask` finds nobody: refused then */
	approvals_set_reviewer(a, &(struct approval_channel){ .name = "reviewer", .asked = rv_asked });
	struct got g2 = { 0 };
	const struct question *q = approvals_ask(a, APPROVAL_NET, "h:1", "connect to h:1", NULL, done, &g2);
	CHECK(q != NULL && rv_asked_n == 1 && g2.calls == 0);
	CHECK(approvals_review(a, q->id, REVIEW_ASK, NULL) == 0);
	CHECK(g2.calls == 1 && !g2.allow && count("\"by\":\"ci\"") == 2);
	approvals_free(a);
	/* a webhook is someone to ask */
	a = approvals_new(log, session, &p);
	struct seen wh = { 0 };
	approvals_add_channel(a, &(struct approval_channel){ .name = "webhook", .asked = ch_asked,
							     .ended = ch_ended, .ctx = &wh });
	struct got g3 = { 0 };
	CHECK(approvals_ask(a, APPROVAL_NET, "h:2", "connect to h:2", NULL, done, &g3) != NULL);
	CHECK(wh.asked == 1 && g3.calls == 0);
	approvals_free(a);
	CHECK(g3.calls == 0 && wh.ended == 1);
	audit_close(log);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_answers();
	session = "20261125T000001Z-abcd1234";
	test_reviewer_and_timeout();
	session = "20261125T000002Z-abcd1234";
	test_ci();
	session = "20261125T000003Z-abcd1234";
	test_grants_kept();
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return check_status();
}
