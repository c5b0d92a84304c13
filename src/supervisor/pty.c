/* pty.c - the host side of the agent's terminal: put the user's terminal in
 * raw mode and restore it (struct host_tty, released by a cleanup attribute
 * on every way out of the supervisor; its output processing left on when
 * others write to it, following the agent's pty), copy window sizes and terminal
 * settings to the agent's pty, and move bytes between the two (the agent's
 * output through ttyfilter.h, to a sink that a question on the screen can
 * hold back). A warden in the background of its terminal
 * only reads it (pty_host_foreground). Before the terminal goes back, the
 * answers it still owes to the agent's queries are read away, so that the
 * user's shell never reads them as typed. */
#include "pty.h"

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../common/bytebuf.h"
#include "../common/clock.h"
#include "../common/err.h"
#include "../common/util.h"

int pty_host_raw(struct host_tty *t, int fd, int out, const struct ttyfilter *shown,
		 bool keep_output)
{
	if (tcgetattr(fd, &t->saved) < 0)
		return -1;
	struct termios raw = t->saved;
	cfmakeraw(&raw);
	if (keep_output)
		raw.c_oflag = t->saved.c_oflag;
	if (tcsetattr(fd, TCSADRAIN, &raw) < 0)
		return -1;
	t->fd = fd;
	t->out = out;
	t->shown = shown;
	t->keep_output = keep_output;
	t->posting = keep_output;
	wnote_terminal_raw(1);
	return 0;
}

void pty_host_follow(struct host_tty *t, int master)
{
	struct termios in, now;
	if (t->fd < 0 || !t->keep_output || tcgetattr(master, &in) < 0)
		return;
	bool post = (in.c_oflag & OPOST) != 0;
	if (post == t->posting || tcgetattr(t->fd, &now) < 0)
		return;
	now.c_oflag = post ? t->saved.c_oflag : t->saved.c_oflag & ~(tcflag_t)OPOST;
	/* at once: what was written before is past the settings already */
	if (tcsetattr(t->fd, TCSANOW, &now) == 0)
		t->posting = post;
}

#define ESC 0x1b

/* Device attributes' answers (ESC [ ? digits and ';' c) in n bytes of the
 * terminal's, t->scan carried from one read to the next. */
static unsigned long scan_da(struct host_tty *t, const char *buf, size_t n)
{
	unsigned long da = 0;
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];
		if (c == ESC)
			t->scan = 1;
		else if ((t->scan == 1 && c == '[') || (t->scan == 2 && c == '?'))
			t->scan++;
		else if (t->scan == 3 && c == 'c')
			da++, t->scan = 0;
		else if (!(t->scan == 3 && ((c >= '0' && c <= '9') || c == ';')))
			t->scan = 0;
	}
	return da;
}

/* Keys relayed to the agent: the answers among them (each starts with an
 * ESC that is not an ST's), counted up to the queries passed, so that the
 * escape keys pressed while none was asked do not count for later ones. */
static void note_answers(struct host_tty *t, const char *buf, size_t n)
{
	if (!t->shown)
		return;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == ESC && (i + 1 == n || buf[i + 1] != '\\'))
			t->answered++;
	t->answered_da += scan_da(t, buf, n);
	if (t->answered > t->shown->asked)
		t->answered = t->shown->asked;
	if (t->answered_da > t->shown->asked_da)
		t->answered_da = t->shown->asked_da;
}

/* The answers the terminal owes, read and dropped: warden's own device
 * attributes query goes last, and its answer is the last of them (a
 * terminal answers in order), wanted once the agent's own device
 * attributes' are in. For PTY_SETTLE_MS at most (a terminal that does not
 * answer); the keys typed before its answer are dropped with them. */
static void settle(struct host_tty *t)
{
	if (!t->shown || t->shown->asked <= t->answered || t->out < 0)
		return;
	unsigned long want = t->shown->asked_da - t->answered_da + 1;
	if (write_all(t->out, "\033[c", 3) < 0)
		return;
	long end = (long)mono_ms() + PTY_SETTLE_MS;
	while (want) {
		long left = end - (long)mono_ms();
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) <= 0 || !(p.revents & POLLIN))
			break; /* the time is up (or a signal), the terminal is gone */
		/* a byte at a time: what the user types after the last answer
		 * stays for the shell */
		char c;
		if (read(t->fd, &c, 1) != 1)
			break;
		want -= scan_da(t, &c, 1);
	}
}

void pty_host_restore(struct host_tty *t)
{
	if (t->fd >= 0) {
		settle(t);
		/* now, not once the output is drained: a terminal that reads
		 * none would hold warden here for good (what was written to it
		 * is past the settings already) */
		tcsetattr(t->fd, TCSANOW, &t->saved);
		t->fd = -1;
		wnote_terminal_raw(0);
	}
}

void pty_copy_settings(int host, int master)
{
	struct termios t;
	if (tcgetattr(host, &t) == 0)
		tcsetattr(master, TCSANOW, &t);
	pty_copy_winsize(host, master);
}

void pty_copy_winsize(int host, int master)
{
	struct winsize ws;
	if (ioctl(host, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

bool pty_host_foreground(int fd)
{
	pid_t fg = tcgetpgrp(fd);
	return fg >= 0 && fg == getpgrp();
}

void pty_send_eof(int master)
{
	struct termios t;
	char eof = 4; /* ^D, the default VEOF */
	if (tcgetattr(master, &t) == 0 && t.c_cc[VEOF] != _POSIX_VDISABLE)
		eof = (char)t.c_cc[VEOF];
	if (write(master, &eof, 1) != 1) { /* a full or closed pty: the command ends anyway */ }
}

/* n bytes to the sink: held, or written to its fd (or queued). */
static int sink_write(const struct pty_sink *to, const char *buf, size_t n)
{
	if (!n || (to->hold && to->hold(to->ctx, buf, n)))
		return 0;
	return to->q ? bytebuf_write(to->fd, to->q, buf, n) : write_all(to->fd, buf, n);
}

int pty_pump_filtered(int from, const struct pty_sink *to, struct ttyfilter *f)
{
	char buf[16384], out[sizeof buf + 2 * TTYFILTER_HOLD];
	ssize_t n = read(from, buf, sizeof buf);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	size_t o = ttyfilter_run(f, buf, (size_t)n, out);
	return sink_write(to, out, o) < 0 ? -1 : 1;
}

void pty_filter_flush(const struct pty_sink *to, struct ttyfilter *f)
{
	char out[2 * TTYFILTER_HOLD];
	size_t o = ttyfilter_flush(f, out);
	if (sink_write(to, out, o) < 0) { /* the user's terminal is gone */ }
}

int pty_pump_keys(struct host_tty *t, int from, int to, struct bytebuf *q)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof buf);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	note_answers(t, buf, (size_t)n);
	return bytebuf_write(to, q, buf, (size_t)n) < 0 ? -1 : 1;
}
