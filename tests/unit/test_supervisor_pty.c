/* test_supervisor_pty.c - unit tests of the host side of the agent's
 * terminal (src/supervisor/pty.c) on pseudo-terminals of the test's own:
 * struct host_tty puts a raw terminal back when its scope ends, on an early
 * return too, only once, and not at all when it never went raw; the
 * settings and window size reach the agent's pty; the answers the terminal
 * owes to queries passed and not answered by the keys relayed are read
 * away before it goes back (warden's own device attributes query last, up
 * to its answer, PTY_SETTLE_MS at most), and nothing is asked when the
 * keys answered them. With keep_output, the keys go raw and the output
 * processing stays (others write to that terminal), off only while the
 * agent's pty has it off. */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "src/supervisor/pty.h"
#include "check.h"

/* A new pty pair: the master, and its slave in *slave (cooked, as opened). */
static int open_pair(int *slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0) {
		perror("test: posix_openpt");
		exit(2);
	}
	*slave = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0) {
		perror("test: opening the slave");
		exit(2);
	}
	return m;
}

static tcflag_t lflag(int fd)
{
	struct termios t;
	if (tcgetattr(fd, &t) < 0)
		abort();
	return t.c_lflag;
}

static bool cooked(int fd)
{
	return (lflag(fd) & (ICANON | ECHO)) == (ICANON | ECHO);
}

static bool same_settings(const struct termios *a, int fd)
{
	struct termios b;
	return tcgetattr(fd, &b) == 0 && a->c_iflag == b.c_iflag && a->c_oflag == b.c_oflag &&
	       a->c_cflag == b.c_cflag && a->c_lflag == b.c_lflag &&
	       memcmp(a->c_cc, b.c_cc, sizeof a->c_cc) == 0;
}

/* The shape of supervisor_run's failure after the terminal went raw. */
static int fail_after_raw(int fd, bool *was_raw)
{
	_cleanup_host_tty_ struct host_tty t = HOST_TTY_NONE;
	if (pty_host_raw(&t, fd, -1, NULL, false) < 0)
		return 0;
	*was_raw = !(lflag(fd) & (ICANON | ECHO));
	return -1;
}

static void test_scope(void)
{
	int slave, m = open_pair(&slave);
	struct termios before;
	tcgetattr(slave, &before);
	CHECK(cooked(slave));
	{
		_cleanup_host_tty_ struct host_tty t = HOST_TTY_NONE;
		CHECK(pty_host_raw(&t, slave, -1, NULL, false) == 0);
		CHECK(t.fd == slave);
		CHECK(!(lflag(slave) & (ICANON | ECHO | ISIG)));
	}
	CHECK(same_settings(&before, slave));

	bool was_raw = false;
	CHECK(fail_after_raw(slave, &was_raw) == -1);
	CHECK(was_raw);
	CHECK(same_settings(&before, slave));
	close(slave);
	close(m);
}

static void test_once(void)
{
	int slave, m = open_pair(&slave);
	struct host_tty t = HOST_TTY_NONE;
	CHECK(pty_host_raw(&t, slave, -1, NULL, false) == 0);
	pty_host_restore(&t);
	CHECK(cooked(slave));
	CHECK(t.fd == -1);
	/* Settings changed after the restore stay: a second restore does nothing. */
	struct termios noecho;
	tcgetattr(slave, &noecho);
	noecho.c_lflag &= ~(tcflag_t)ECHO;
	tcsetattr(slave, TCSANOW, &noecho);
	pty_host_restore(&t);
	CHECK(!(lflag(slave) & ECHO));
	close(slave);
	close(m);
}

static void test_not_a_tty(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct host_tty t = HOST_TTY_NONE;
	CHECK(pty_host_raw(&t, fd, -1, NULL, false) < 0);
	CHECK(t.fd == -1);
	pty_host_restore(&t); /* nothing to do, nothing touched */
	CHECK(t.fd == -1);
	close(fd);
}

static void test_copy(void)
{
	int host, hm = open_pair(&host);
	int agent, am = open_pair(&agent);
	struct termios t;
	tcgetattr(host, &t);
	t.c_lflag &= ~(tcflag_t)ECHO;
	tcsetattr(host, TCSANOW, &t);
	struct winsize ws = { .ws_row = 33, .ws_col = 111 };
	ioctl(host, TIOCSWINSZ, &ws);
	pty_copy_settings(host, am);
	CHECK(!(lflag(agent) & ECHO));
	CHECK(lflag(agent) & ICANON);
	struct winsize got = { 0 };
	CHECK(ioctl(agent, TIOCGWINSZ, &got) == 0);
	CHECK(got.ws_row == 33 && got.ws_col == 111);
	ws.ws_row = 44;
	ioctl(host, TIOCSWINSZ, &ws);
	pty_copy_winsize(host, am);
	CHECK(ioctl(agent, TIOCGWINSZ, &got) == 0 && got.ws_row == 44);
	close(host);
	close(hm);
	close(agent);
	close(am);
}

/* What is readable on fd within ms, NUL-terminated into buf. */
static size_t readable(int fd, char *buf, size_t size, int ms)
{
	size_t o = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	while (o + 1 < size && poll(&p, 1, ms) == 1 && (p.revents & POLLIN)) {
		ssize_t n = read(fd, buf + o, size - 1 - o);
		if (n <= 0)
			break;
		o += (size_t)n;
		ms = 0;
	}
	buf[o] = '\0';
	return o;
}

static long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* The agent's output (through f) asked what `out` says; the terminal (the
 * master, m) answers `answers` at once; the keys relayed before the end
 * were `keys`. Returns how long the restore took (ms); what the terminal
 * was sent at the end in sent, what the user's shell would read in left. */
static long settle_case(const char *out, const char *keys, const char *answers, char *sent,
			char *left)
{
	int slave, m = open_pair(&slave);
	struct ttyfilter f;
	ttyfilter_init(&f, false, false);
	char buf[256];
	ttyfilter_run(&f, out, strlen(out), buf);
	struct host_tty t = HOST_TTY_NONE;
	CHECK(pty_host_raw(&t, slave, slave, &f, false) == 0);
	int p[2];
	if (pipe(p) < 0)
		abort();
	if (*keys) {
		CHECK(write(m, keys, strlen(keys)) == (ssize_t)strlen(keys));
		struct bytebuf q = { 0 };
		CHECK(pty_pump_keys(&t, slave, p[1], &q) == 1 && !bytebuf_pending(&q));
		bytebuf_free(&q);
	}
	if (*answers)
		CHECK(write(m, answers, strlen(answers)) == (ssize_t)strlen(answers));
	long t0 = ms_now();
	pty_host_restore(&t);
	long took = ms_now() - t0;
	CHECK(cooked(slave));
	readable(m, sent, 64, 0);
	/* the shell reads its terminal's input without waiting for a line */
	struct termios raw;
	tcgetattr(slave, &raw);
	cfmakeraw(&raw);
	tcsetattr(slave, TCSANOW, &raw);
	readable(slave, left, 64, 20);
	close(p[0]);
	close(p[1]);
	close(slave);
	close(m);
	return took;
}

static void test_settle(void)
{
	char sent[64], left[64];
	/* a query passed, the agent ended: its answer and warden's own read away */
	long took = settle_case("x\033[c", "", "\033[?62c\033[?62c", sent, left);
	CHECK(strcmp(sent, "\033[c") == 0);
	CHECK(strcmp(left, "") == 0);
	CHECK(took < PTY_SETTLE_MS);
	/* other queries: read up to warden's device attributes' answer, and not
	 * what the user typed after it */
	settle_case("\033]11;?\007\033[6n", "", "\033]11;rgb:0/0/0\007\033[9;1R\033[?1;2cls\r", sent,
		    left);
	CHECK(strcmp(sent, "\033[c") == 0);
	CHECK(strcmp(left, "ls\r") == 0);
	/* a terminal that does not answer: PTY_SETTLE_MS, and what came is dropped */
	took = settle_case("\033[6n", "", "\033[9;1R", sent, left);
	CHECK(strcmp(left, "") == 0);
	CHECK(took >= PTY_SETTLE_MS - 1 && took < PTY_SETTLE_MS + 500);
	/* answered by the keys relayed: nothing asked, the keys after kept */
	took = settle_case("\033[c\033[6n", "\033[?62c\033[9;1R", "ls", sent, left);
	CHECK(strcmp(sent, "") == 0);
	CHECK(strcmp(left, "ls") == 0);
	/* an escape key with no query passed: nothing asked */
	settle_case("a", "\033[A", "", sent, left);
	CHECK(strcmp(sent, "") == 0);
	/* no query passed: nothing asked, nothing read */
	settle_case("\033[2J", "", "ls", sent, left);
	CHECK(strcmp(sent, "") == 0);
	CHECK(strcmp(left, "ls") == 0);
}

static tcflag_t oflag(int fd)
{
	struct termios t;
	if (tcgetattr(fd, &t) < 0)
		abort();
	return t.c_oflag;
}

/* keep_output: ICANON, ECHO, ISIG off, OPOST on; the agent's pty (a pair
 * of the test's) turning OPOST off turns it off on the user's, and on
 * again; all back at the end. */
static void test_keep_output(void)
{
	int slave, m = open_pair(&slave), aslave, am = open_pair(&aslave);
	struct termios before, agent;
	tcgetattr(slave, &before);
	CHECK(oflag(slave) & OPOST);
	struct host_tty t = HOST_TTY_NONE;
	CHECK(pty_host_raw(&t, slave, -1, NULL, true) == 0);
	CHECK(!(lflag(slave) & (ICANON | ECHO | ISIG)));
	CHECK(oflag(slave) == before.c_oflag);
	pty_host_follow(&t, am);
	CHECK(oflag(slave) & OPOST);
	tcgetattr(aslave, &agent);
	agent.c_oflag &= ~(tcflag_t)OPOST;
	tcsetattr(aslave, TCSANOW, &agent);
	pty_host_follow(&t, am);
	CHECK(!(oflag(slave) & OPOST));
	CHECK(!(lflag(slave) & ICANON));
	agent.c_oflag |= OPOST;
	tcsetattr(aslave, TCSANOW, &agent);
	pty_host_follow(&t, am);
	CHECK(oflag(slave) == before.c_oflag);
	pty_host_restore(&t);
	CHECK(same_settings(&before, slave));

	/* without keep_output: raw, OPOST off, and the agent's pty not followed */
	CHECK(pty_host_raw(&t, slave, -1, NULL, false) == 0);
	CHECK(!(oflag(slave) & OPOST));
	pty_host_follow(&t, am);
	CHECK(!(oflag(slave) & OPOST));
	pty_host_restore(&t);
	CHECK(same_settings(&before, slave));
	close(slave);
	close(m);
	close(aslave);
	close(am);
}

int main(void)
{
	test_scope();
	test_once();
	test_not_a_tty();
	test_copy();
	test_settle();
	test_keep_output();
	return check_status_counted("supervisor_pty");
}
