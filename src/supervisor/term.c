/* term.c - the agent's terminal on the host side during a session
 * (term.h): the pty's set-up against the user's terminal and the relay
 * between them. */
#include "term.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "../common/util.h"
#include "freeze.h"

void term_start(struct term *t, const struct sandbox_spec *s, int master)
{
	/* The pty stands for each of fds 0-2 that is a terminal. Its output
	 * goes to the user's terminal on 1, else 2, else 0; the user's keys go
	 * in when stdin is the terminal. In the background of its terminal,
	 * warden leaves the terminal's modes alone and does not read it
	 * (SIGTTOU, SIGTTIN would stop it): the command keeps a pty of its own,
	 * with default settings, and an end-of-file for input. */
	unsigned pf = s->pty_fds;
	*t = (struct term){
		.master = master,
		.tty = pf & 1 ? STDIN_FILENO : pf & 2 ? STDOUT_FILENO : STDERR_FILENO,
		.out = pf & 2 ? STDOUT_FILENO : pf & 4 ? STDERR_FILENO : STDIN_FILENO,
		.host = HOST_TTY_NONE,
	};
	t->relay_input = master >= 0 && (pf & 1) && pty_host_foreground(STDIN_FILENO);
	/* queries only where their answers come back: the user's keys are
	 * relayed */
	ttyfilter_init(&t->filter, s->policy->terminal_clipboard, !t->relay_input);
	t->sink = (struct pty_sink){ .fd = t->out };
	if (master < 0)
		return;
	if (t->relay_input) {
		pty_copy_settings(STDIN_FILENO, master);
		pty_host_raw(&t->host, STDIN_FILENO, t->out, &t->filter);
	} else if (pf & 1) {
		pty_copy_winsize(STDIN_FILENO, master);
		pty_send_eof(master);
	} else {
		/* the command's stdin is the host's own (a pipe, a file): the
		 * pty is its output only, set up like the terminal it goes to */
		pty_copy_settings(t->tty, master);
	}
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
}

void term_end(struct term *t)
{
	pty_host_restore(&t->host);
}

void term_drain(struct term *t)
{
	if (t->master < 0)
		return;
	t->filter.drop_queries = true; /* the agent is gone: its queries' answers too */
	while (pty_pump_filtered(t->master, &t->sink, &t->filter) == 1) {
		struct pollfd p = { .fd = t->master, .events = POLLIN };
		if (poll(&p, 1, 0) <= 0)
			break;
	}
	pty_filter_flush(&t->sink, &t->filter);
}

void term_resize(struct term *t)
{
	if (t->master >= 0)
		pty_copy_winsize(t->tty, t->master);
	termask_resize(t->ask);
}

/* The agent's terminal to the user's, and the user's keys to the agent;
 * while a question is on the screen (termask.h), the output is held and
 * the keys are the question's. */
static void on_output(struct loop *l, const struct source *src, uint32_t events)
{
	struct term *t = src->ctx;
	if (pty_pump_filtered(src->fd, &t->sink, &t->filter) <= 0)
		loop_remove(l, src);
}

/* The user's keys while the sandbox is frozen: Ctrl-C (or the pty's
 * interrupt character, whether or not the agent made the pty raw) is the
 * user's SIGINT to warden, which ends a frozen sandbox (stop.h); other keys
 * go in, to be read when it goes on. 1, 0 at the end of the keys, -1 on an
 * error, as pty_pump. */
static int frozen_keys(struct term *t, int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n <= 0)
		return n == 0 ? 0 : errno == EAGAIN || errno == EINTR ? 1 : -1;
	struct termios tio;
	cc_t intr = tcgetattr(t->master, &tio) == 0 ? tio.c_cc[VINTR] : _POSIX_VDISABLE;
	if (memchr(buf, 0x03, (size_t)n) || (intr != _POSIX_VDISABLE && memchr(buf, intr, (size_t)n))) {
		/* (0: the kernel's, as for a key on warden's own terminal) */
		stopper_signal(t->stop, &(struct signalfd_siginfo){ .ssi_signo = SIGINT });
		return 1;
	}
	return write_all(t->master, buf, (size_t)n) < 0 ? -1 : 1;
}

static void on_input(struct loop *l, const struct source *src, uint32_t events)
{
	struct term *t = src->ctx;
	int r = termask_up(t->ask)                            ? termask_keys(t->ask, src->fd)
		: t->stop && sbctl_frozen(t->stop->ctl) ? frozen_keys(t, src->fd)
							: pty_pump_keys(&t->host, src->fd, t->master);
	if (r <= 0)
		loop_remove(l, src);
}

int term_watch(struct term *t, struct termask *ask, struct stopper *stop, struct loop *l,
	       struct werr *e)
{
	t->ask = ask;
	t->stop = stop;
	t->sink = (struct pty_sink){ .fd = t->out, .hold = ask ? termask_hold : NULL, .ctx = ask };
	if (t->master < 0)
		return 0;
	if (loop_add(l, "the agent's terminal", t->master, on_output, t, e) < 0)
		return -1;
	/* A stdin that epoll cannot watch (a regular file) is not relayed
	 * (relay_input: it is the terminal) */
	if (t->relay_input && loop_add(l, "the user's keys", STDIN_FILENO, on_input, t, e) < 0)
		return -1;
	return 0;
}
