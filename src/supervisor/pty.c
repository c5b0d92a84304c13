/* pty.c - the host side of the agent's terminal: put the user's terminal in
 * raw mode and restore it (struct host_tty, released by a cleanup attribute
 * on every way out of the supervisor), copy window sizes and terminal
 * settings to the agent's pty, and move bytes between the two (the agent's
 * output through ttyfilter.h, to a sink that a question on the screen can
 * hold back). A warden in the background of its terminal
 * only reads it (pty_host_foreground). */
#include "pty.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/util.h"

int pty_host_raw(struct host_tty *t, int fd)
{
	if (tcgetattr(fd, &t->saved) < 0)
		return -1;
	struct termios raw = t->saved;
	cfmakeraw(&raw);
	if (tcsetattr(fd, TCSADRAIN, &raw) < 0)
		return -1;
	t->fd = fd;
	wnote_terminal_raw(1);
	return 0;
}

void pty_host_restore(struct host_tty *t)
{
	if (t->fd >= 0) {
		tcsetattr(t->fd, TCSADRAIN, &t->saved);
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

/* n bytes to the sink: held, or written to its fd. */
static int sink_write(const struct pty_sink *to, const char *buf, size_t n)
{
	if (!n || (to->hold && to->hold(to->ctx, buf, n)))
		return 0;
	return write_all(to->fd, buf, n);
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

int pty_pump(int from, int to)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof buf);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	return write_all(to, buf, (size_t)n) < 0 ? -1 : 1;
}
