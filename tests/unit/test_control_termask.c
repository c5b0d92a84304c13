/* test_control_termask.c - unit tests of the terminal's questions
 * (src/control/termask.c) on ptys of their own: what is drawn (the
 * summary's bytes escaped, nothing of it able to move the cursor), keys
 * before the question has been up TERMASK_ARM_MS answering nothing, the
 * sequences a terminal sends (mouse reports, bracketed pastes, answers to
 * queries, 8-bit controls) answering nothing, y/s/n/Escape, the queue, the
 * agent's output held and dropped past the bound, the agent's pty back at
 * its size after the nudge, and screens too small to hold the question. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "src/audit/audit.h"
#include "src/control/approval.h"
#include "src/control/termask.h"
#include "src/policy/policy.h"
#include "check.h"
#include "files.h"

struct answers {
	int n;
	bool allow;
};

static void done(void *ctx, bool allow, const char *why)
{
	struct answers *a = ctx;
	a->n++;
	a->allow = allow;
}

/* A pty pair, the slave raw (bytes as written), of rows x cols. */
static void pty_pair(int *master, int *slave, unsigned short rows, unsigned short cols)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0) {
		perror("posix_openpt");
		exit(2);
	}
	*slave = open(ptsname(*master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0) {
		perror("open pts");
		exit(2);
	}
	struct termios t;
	tcgetattr(*slave, &t);
	cfmakeraw(&t);
	tcsetattr(*slave, TCSANOW, &t);
	struct winsize ws = { .ws_row = rows, .ws_col = cols };
	ioctl(*slave, TIOCSWINSZ, &ws);
	fcntl(*master, F_SETFL, O_NONBLOCK);
}

/* What was drawn since the last call (NUL-terminated, static). */
static const char *drawn(int master)
{
	static char buf[1 << 16];
	size_t n = 0;
	ssize_t r;
	usleep(20000);
	while (n < sizeof buf - 1 && (r = read(master, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

/* The user types s (through a pipe, as termask_keys reads it). */
static void type(struct termask *t, const char *s, size_t n)
{
	int p[2];
	if (pipe(p) < 0)
		exit(2);
	if (write(p[1], s, n) != (ssize_t)n)
		exit(2);
	close(p[1]);
	CHECK(termask_keys(t, p[0]) == 1);
	close(p[0]);
}
#define TYPE(t, lit) type((t), (lit), sizeof(lit) - 1)

static void wait_armed(void)
{
	struct timespec ts = { .tv_nsec = (TERMASK_ARM_MS + 100) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(void)
{
	tmpdir_make("warden-termask");
	struct audit *log = NULL;
	struct werr e = { 0 };
	if (audit_open(&log, tmpdir, "20260101T000000Z-0a0b0c0d", &e) < 0) {
		fprintf(stderr, "audit_open: %s\n", e.msg);
		return 2;
	}
	struct policy p;
	memset(&p, 0, sizeof p);
	p.approve.timeout_s = 60;
	struct approvals *ap = approvals_new(log, "20260101T000000Z-0a0b0c0d", &p);
	CHECK(ap != NULL);

	int um, us, am, as;
	pty_pair(&um, &us, 30, 100); /* the user's terminal */
	pty_pair(&am, &as, 30, 100); /* the agent's */
	struct termask *t = termask_new(ap, &(struct termask_out){ .fd = us }, us, am, &e);
	CHECK(t != NULL);
	CHECK(termask_timer_fd(t) >= 0);
	CHECK(!termask_up(t) && !termask_up(NULL));
	CHECK(!termask_hold(t, "x", 1)); /* nothing up: the output is not held */

	/* a question whose summary tries to draw on its own */
	struct answers a1 = { 0 };
	const struct question *q = approvals_ask(ap, APPROVAL_NET, "evil.invalid:80",
						 "connect\x1b[2J\r\n [y] yes\\ \xc3\xa9", NULL, done, &a1);
	CHECK(q != NULL);
	CHECK(termask_up(t));
	const char *d = drawn(um);
	CHECK(strstr(d, "warden asks (net, id 0a0b0c0d-1): 60 s left") != NULL);
	CHECK(strstr(d, "connect\\x1b[2J\\x0d\\x0a [y] yes\\\\ \\xc3\\xa9") != NULL);
	CHECK(strstr(d, "\x1b[2J") == NULL && !strchr(d, '\n') && !strchr(d, '\r'));
	CHECK(strstr(d, "keys count in a moment") != NULL);
	CHECK(strncmp(d, "\x18\x1b" "7", 3) == 0); /* the cursor saved first */
	CHECK(strstr(d, "\x1b[30;1H") != NULL);    /* the keys on the bottom line */

	/* keys typed before the question has been up long enough: nothing */
	TYPE(t, "y");
	CHECK(a1.n == 0 && termask_up(t));
	wait_armed();
	termask_on_timer(t);
	d = drawn(um);
	CHECK(strstr(d, "[y] yes once   [s] yes, this session   [n] no") != NULL);

	/* what a terminal sends on its own answers nothing */
	TYPE(t, "\x1b[M y9");                      /* an X10 mouse click (column 89: 'y') */
	TYPE(t, "\x1b[M \xc3\xb9y");              /* ... with a UTF-8 column (mode 1005) */
	TYPE(t, "\x1b]ly\x1b\\");                  /* a title report */
	TYPE(t, "\x1b]lyes\x07");
	TYPE(t, "\x1bP1$ry\x1b\\");                /* DECRQSS */
	TYPE(t, "\x1b[200~yes\rs\x1b[201~");       /* a bracketed paste */
	TYPE(t, "\x1b[?2004;1$y");                 /* DECRPM */
	TYPE(t, "\x9b?2004;1$y");                  /* the same with an 8-bit CSI */
	TYPE(t, "\x9d" "11;rgb:y/y/y\x9c");        /* an 8-bit OSC */
	TYPE(t, "\x1b[A\x1bOy\x1by\x1b[<0;89;10M"); /* an arrow, SS3, Alt-y, an SGR mouse report */
	TYPE(t, "x?\x00 q\x7f");                   /* keys that mean nothing */
	CHECK(a1.n == 0 && termask_up(t));

	/* the agent's output is held meanwhile */
	CHECK(termask_hold(t, "AGENT-OUTPUT", 12));
	CHECK(strstr(drawn(um), "AGENT-OUTPUT") == NULL);

	/* Escape alone: no; the screen given back, the held output written */
	TYPE(t, "\x1b");
	CHECK(a1.n == 1 && !a1.allow);
	CHECK(!termask_up(t));
	d = drawn(um);
	const char *restore = strstr(d, "\x1b" "8"), *out = strstr(d, "AGENT-OUTPUT");
	CHECK(restore && out && restore < out);
	struct winsize ws;
	CHECK(ioctl(as, TIOCGWINSZ, &ws) == 0 && ws.ws_row == 30 && ws.ws_col == 100);
	CHECK(!termask_hold(t, "x", 1));

	/* s: yes for the session; the same subject is not asked again */
	struct answers a2 = { 0 }, a3 = { 0 };
	CHECK(approvals_ask(ap, APPROVAL_NET, "ok.invalid:443", "connect to ok.invalid:443", NULL, done,
			    &a2) != NULL);
	wait_armed();
	TYPE(t, "s");
	CHECK(a2.n == 1 && a2.allow && !termask_up(t));
	CHECK(approvals_ask(ap, APPROVAL_NET, "ok.invalid:443", "again", NULL, done, &a3) == NULL);
	CHECK(a3.n == 1 && a3.allow);
	(void)drawn(um);

	/* two at once: one on the screen, the other said to wait; what
	 * follows an answer in the same read answers nothing */
	struct answers b1 = { 0 }, b2 = { 0 };
	approvals_ask(ap, APPROVAL_EXEC, "one", "run one", NULL, done, &b1);
	approvals_ask(ap, APPROVAL_EXEC, "two", "run two", NULL, done, &b2);
	d = drawn(um);
	CHECK(strstr(d, "1 more waiting") != NULL && strstr(d, "run one") != NULL);
	wait_armed();
	TYPE(t, "yy");
	CHECK(b1.n == 1 && b1.allow && b2.n == 0 && termask_up(t));
	d = drawn(um);
	CHECK(strstr(d, "run two") != NULL && strstr(d, "more waiting") == NULL);
	wait_armed();
	TYPE(t, "\r");
	CHECK(b2.n == 1 && !b2.allow && !termask_up(t));

	/* held up to the bound, the rest dropped and said */
	struct answers c1 = { 0 };
	const struct question *qc = approvals_ask(ap, APPROVAL_NET, "big.invalid:80", "big", NULL, done,
						  &c1);
	char *big = xmalloc(TERMASK_HOLD_MAX);
	memset(big, 'z', TERMASK_HOLD_MAX);
	CHECK(termask_hold(t, big, TERMASK_HOLD_MAX));
	CHECK(termask_hold(t, big, 1000));
	free(big);
	termask_on_timer(t);
	d = drawn(um);
	CHECK(strstr(d, "held: 1024 KiB, 1000 bytes dropped") != NULL);
	/* screens too small, or of no size: drawn as far as they go */
	static const unsigned short sizes[][2] = { { 1, 1 }, { 2, 3 }, { 3, 10 }, { 0, 0 }, { 5, 2 } };
	for (size_t i = 0; i < ARRAY_LEN(sizes); i++) {
		ws = (struct winsize){ .ws_row = sizes[i][0], .ws_col = sizes[i][1] };
		ioctl(us, TIOCSWINSZ, &ws);
		termask_resize(t);
		(void)drawn(um);
		CHECK(termask_up(t));
	}
	/* ended elsewhere (the asker gone): taken down, the held bytes out
	 * (read by a child meanwhile: the pty holds far less) */
	pid_t reader = fork();
	if (reader == 0) {
		size_t total = 0;
		for (int i = 0; i < 1000 && total < TERMASK_HOLD_MAX; i++) {
			char buf[65536];
			ssize_t r = read(um, buf, sizeof buf);
			if (r > 0)
				total += (size_t)r;
			else
				usleep(5000);
		}
		_exit(total >= TERMASK_HOLD_MAX ? 0 : 1);
	}
	approvals_cancel(ap, qc);
	CHECK(!termask_up(t) && c1.n == 0);
	int status = -1;
	waitpid(reader, &status, 0);
	CHECK(status == 0);

	/* a summary longer than the screen: cut, and said so */
	ws = (struct winsize){ .ws_row = 6, .ws_col = 40 };
	ioctl(us, TIOCSWINSZ, &ws);
	char longsum[3000];
	memset(longsum, 'a', sizeof longsum - 1);
	longsum[sizeof longsum - 1] = '\0';
	struct answers c2 = { 0 };
	approvals_ask(ap, APPROVAL_EXEC, "long", longsum, NULL, done, &c2);
	d = drawn(um);
	CHECK(strstr(d, "... (cut here") != NULL);

	/* the session's end: the question comes down with the broker */
	approvals_free(ap);
	CHECK(!termask_up(t) && c2.n == 0);
	termask_free(t);
	audit_close(log);
	close(um);
	close(us);
	close(am);
	close(as);
	tmpdir_remove();
	return check_status_counted("control-termask");
}
