/* test_supervisor_pty.c - unit tests of the host side of the agent's
 * terminal (src/supervisor/pty.c) on pseudo-terminals of the test's own:
 * struct host_tty puts a raw terminal back when its scope ends, on an early
 * return too, only once, and not at all when it never went raw; the
 * settings and window size reach the agent's pty. */
#include <fcntl.h>
#include <stdlib.h>
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
	if (pty_host_raw(&t, fd) < 0)
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
		CHECK(pty_host_raw(&t, slave) == 0);
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
	CHECK(pty_host_raw(&t, slave) == 0);
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
	CHECK(pty_host_raw(&t, fd) < 0);
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

int main(void)
{
	test_scope();
	test_once();
	test_not_a_tty();
	test_copy();
	return check_status_counted("supervisor_pty");
}
