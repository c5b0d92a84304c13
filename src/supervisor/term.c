/* term.c - the agent's terminal on the host side during a session
 * (term.h): the pty's set-up against the user's terminal and the relay
 * between them, which waits on neither: what one side does not take yet
 * is queued, and the loop told to wait for that side to be writable. */
#include "term.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "freeze.h"

/* out opened again, not blocking: a file description of warden's own, so
 * that O_NONBLOCK is not set on the one the user's shell shares. -1 when
 * it cannot be: the relay then writes to out, waiting as it must. */
static int reopen_nonblocking(int out)
{
	char path[32];
	snprintf(path, sizeof path, "/proc/self/fd/%d", out);
	return open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
}

void term_start(struct term *t, const struct sandbox_spec *s, int master)
{
	/* The pty stands for each of fds 0-2 that is a terminal. Its output
	 * goes to the user's terminal on 1, else 2, else 0; the user's keys go
	 * in when stdin is the terminal. In the background of its terminal,
	 * warden leaves the terminal's modes alone and does not read it
	 * (SIGTTOU, SIGTTIN would stop it): the command keeps a pty of its own,
	 * with default settings, and an end-of-file for input. The terminal's
	 * output processing stays the user's unless all the command writes
	 * goes through warden (stdout and stderr the terminal): with one of
	 * them a pipe or a file, what reads it may write to the terminal too
	 * (`| tee log`, `| less`), and must not find "\n" left as it is. */
	unsigned pf = s->pty_fds;
	*t = (struct term){
		.master = master,
		.tty = pf & 1 ? STDIN_FILENO : pf & 2 ? STDOUT_FILENO : STDERR_FILENO,
		.out = pf & 2 ? STDOUT_FILENO : pf & 4 ? STDERR_FILENO : STDIN_FILENO,
		.wout = -1,
		.host = HOST_TTY_NONE,
	};
	t->relay_input = master >= 0 && (pf & 1) && pty_host_foreground(STDIN_FILENO);
	/* queries only where their answers come back: the user's keys are
	 * relayed */
	ttyfilter_init(&t->filter, s->policy->terminal_clipboard, !t->relay_input);
	if (master < 0) {
		t->sink = (struct pty_sink){ .fd = t->out };
		return;
	}
	t->wout = reopen_nonblocking(t->out);
	t->sink = t->wout >= 0 ? (struct pty_sink){ .fd = t->wout, .q = &t->outq }
			       : (struct pty_sink){ .fd = t->out };
	if (t->relay_input) {
		pty_copy_settings(STDIN_FILENO, master);
		pty_host_raw(&t->host, STDIN_FILENO, t->sink.fd, &t->filter, (pf & 6) != 6);
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

/* What was dropped, said on the user's terminal without waiting for it: a
 * terminal that took none of the output would hold warden here, before
 * the session's record is whole, and would not show it anyway. */
static void term_say_dropped(const struct term *t)
{
	char msg[800];
	int n = 0;
	if (t->out_dropped)
		n = snprintf(msg, sizeof msg, "warden: the terminal took none of the command's "
			     "output for %d s: the last %zu bytes of it were not shown\n",
			     TERM_STALL_MS / 1000, t->out_dropped);
	if (t->keys_dropped)
		n += snprintf(msg + n, sizeof msg - (size_t)n, "warden: %llu bytes typed were "
			      "dropped: the command did not read its input, and warden keeps at "
			      "most %d KiB of it\n", t->keys_dropped, TERM_KEYS_MAX / 1024);
	if (n > 0 && t->wout >= 0 && write(t->wout, msg, (size_t)n) < 0) { /* not read: unsaid */ }
}

void term_end(struct term *t)
{
	wnote_loop_end();
	pty_host_restore(&t->host);
	term_say_dropped(t);
	if (t->wout >= 0)
		close(t->wout);
	t->wout = -1;
	bytebuf_free(&t->outq);
	bytebuf_free(&t->inq);
}

/* Whether a and b are one terminal (stderr and the output's). */
static bool same_terminal(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && S_ISCHR(sa.st_mode) &&
	       S_ISCHR(sb.st_mode) && sa.st_rdev == sb.st_rdev;
}

/* What the loop waits for, from what each queue holds: the pty read while
 * no output waits for the user's terminal, written to while keys wait;
 * the terminal written to while output waits. */
static void term_masks(struct term *t)
{
	if (!t->loop)
		return;
	bool out_waits = bytebuf_pending(&t->outq), keys_wait = bytebuf_pending(&t->inq);
	if (t->master_watched)
		loop_want(t->loop, t->master, (out_waits ? 0 : EPOLLIN) | (keys_wait ? EPOLLOUT : 0));
	if (t->wout >= 0)
		loop_want(t->loop, t->wout, out_waits ? EPOLLOUT : 0);
}

/* n bytes of the agent's output (or of a question drawn over it) to the
 * user's terminal, after what waits (termask_out's put). */
void term_put(void *ctx, const char *buf, size_t n)
{
	struct term *t = ctx;
	if (t->sink.q) {
		if (bytebuf_write(t->sink.fd, t->sink.q, buf, n) == 0)
			term_masks(t);
	} else if (write_all(t->sink.fd, buf, n) < 0) { /* the user's terminal is gone */ }
}

/* The keys waiting past TERM_KEYS_MAX, the newest, dropped (counted): a
 * pty nobody reads takes no more, and the user's terminal is still read
 * (a question on the screen, or Ctrl-C for a frozen sandbox, must be). */
static void keys_bound(struct term *t)
{
	t->keys_dropped += bytebuf_bound(&t->inq, TERM_KEYS_MAX);
}

/* The keys waiting, to the agent's pty as far as it takes them. */
static void keys_flush(struct term *t)
{
	if (bytebuf_flush(t->master, &t->inq) < 0)
		bytebuf_free(&t->inq); /* the agent's pty is gone: nobody to type to */
}

/* What waits for a terminal that takes some of it every TERM_STALL_MS,
 * written; false once it takes none for that long (or is gone). */
static bool out_drain(struct term *t)
{
	long last = (long)mono_ms();
	while (t->sink.q && bytebuf_pending(t->sink.q)) {
		size_t before = bytebuf_pending(t->sink.q);
		if (bytebuf_flush(t->sink.fd, t->sink.q) < 0)
			return false;
		if (bytebuf_pending(t->sink.q) < before)
			last = (long)mono_ms();
		long left = last + TERM_STALL_MS - (long)mono_ms();
		struct pollfd p = { .fd = t->sink.fd, .events = POLLOUT };
		if (bytebuf_pending(t->sink.q) && (left <= 0 || poll(&p, 1, (int)left) < 0))
			return false;
	}
	return true;
}

void term_drain(struct term *t)
{
	/* the loop is over: notes to stderr, what was kept of them first */
	wnote_loop_end();
	if (t->master < 0)
		return;
	t->filter.drop_queries = true; /* the agent is gone: its queries' answers too */
	bool flows = out_drain(t);
	while (flows && pty_pump_filtered(t->master, &t->sink, &t->filter) == 1) {
		flows = out_drain(t);
		struct pollfd p = { .fd = t->master, .events = POLLIN };
		if (!flows || poll(&p, 1, 0) <= 0)
			break;
	}
	if (flows) {
		pty_filter_flush(&t->sink, &t->filter);
		flows = out_drain(t);
	}
	if (!flows && t->sink.q)
		t->out_dropped += bytebuf_pending(t->sink.q);
	if (t->sink.q)
		bytebuf_free(t->sink.q);
}

bool term_suspend(struct term *t)
{
	out_drain(t);
	bool raw = t->host.fd >= 0;
	pty_host_restore(&t->host);
	/* the keys unread until `fg`: a read in the background would stop
	 * warden (SIGTTIN), and they are the shell's meanwhile */
	if (t->relay_input && t->loop)
		loop_want(t->loop, STDIN_FILENO, 0);
	return raw;
}

bool term_continue(struct term *t, bool raw)
{
	if (t->master < 0 || !pty_host_foreground(t->tty))
		return false;
	if (raw)
		pty_host_raw(&t->host, STDIN_FILENO, t->host.out, t->host.shown, t->host.keep_output);
	if (t->relay_input && t->loop)
		loop_want(t->loop, STDIN_FILENO, EPOLLIN);
	term_resize(t);
	return true;
}

void term_resize(struct term *t)
{
	if (t->master >= 0)
		pty_copy_winsize(t->tty, t->master);
	termask_resize(t->ask);
}

/* The agent's pty: its output to the user's terminal (through the filter,
 * or held while a question is up), and the keys waiting for it once it
 * takes them. A hang-up while output still waits for the terminal (the
 * pty's last writer gone) ends its watch: the rest is term_drain's. */
static void on_output(struct loop *l, const struct source *src, uint32_t events)
{
	struct term *t = src->ctx;
	if (events & EPOLLOUT)
		keys_flush(t);
	if (!bytebuf_pending(&t->outq)) {
		if (events & EPOLLIN)
			pty_host_follow(&t->host, src->fd);
		if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
		    pty_pump_filtered(src->fd, &t->sink, &t->filter) <= 0) {
			loop_remove(l, src);
			t->master_watched = false;
		}
	} else if (events & (EPOLLHUP | EPOLLERR)) {
		loop_remove(l, src);
		t->master_watched = false;
	}
	term_masks(t);
}

/* The user's terminal, writable again: the output waiting for it. Gone
 * (an error, a hang-up): what waits is dropped, and the pty no longer
 * read (as when a write to it fails in on_output). */
static void on_terminal_writable(struct loop *l, const struct source *src, uint32_t events)
{
	struct term *t = src->ctx;
	/* (a hang-up is reported whatever is asked: once gone, never again) */
	if ((events & (EPOLLHUP | EPOLLERR)) || bytebuf_flush(src->fd, &t->outq) < 0) {
		bytebuf_free(&t->outq);
		loop_remove(l, src);
		if (t->master_watched) {
			loop_remove(l, &(struct source){ .fd = t->master });
			t->master_watched = false;
		}
		t->loop = NULL; /* nothing left to ask for */
		return;
	}
	term_masks(t);
}

/* The user's keys while the sandbox is frozen: Ctrl-C (or the pty's
 * interrupt character, whether or not the agent made the pty raw) is the
 * user's SIGINT to warden, which ends a frozen sandbox (stop.h); other keys
 * go in, to be read when it goes on. 1, 0 at the end of the keys, -1 on an
 * error, as pty_pump_keys. */
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
	return bytebuf_write(t->master, &t->inq, buf, (size_t)n) < 0 ? -1 : 1;
}

/* The user's keys: to a question on the screen, to the stopper (the
 * interrupt key of a frozen sandbox), or to the agent's pty (queued while
 * it does not take them). Read whatever waits for the pty. */
static void on_input(struct loop *l, const struct source *src, uint32_t events)
{
	struct term *t = src->ctx;
	int r = termask_up(t->ask)                            ? termask_keys(t->ask, src->fd)
		: t->stop && sbctl_frozen(t->stop->ctl) ? frozen_keys(t, src->fd)
							: pty_pump_keys(&t->host, src->fd, t->master, &t->inq);
	if (r <= 0)
		loop_remove(l, src);
	keys_bound(t);
	term_masks(t);
}

int term_watch(struct term *t, struct termask *ask, struct stopper *stop, struct loop *l,
	       struct werr *e)
{
	t->ask = ask;
	t->stop = stop;
	t->sink.hold = ask ? termask_hold : NULL;
	t->sink.ctx = ask;
	if (t->master < 0) {
		wnote_loop_begin(NULL, NULL); /* until the drain: notes never wait */
		return 0;
	}
	if (loop_add(l, "the agent's terminal", t->master, on_output, t, e) < 0)
		return -1;
	t->master_watched = true;
	/* the user's terminal, watched for room only while output waits */
	if (t->wout >= 0 &&
	    loop_add(l, "the user's terminal", t->wout, on_terminal_writable, t, e) < 0)
		return -1;
	t->loop = l;
	term_masks(t);
	/* until the drain, warden's notes never wait for stderr; on the
	 * relayed terminal they go the output's way, after it */
	wnote_loop_begin(t->wout >= 0 && same_terminal(STDERR_FILENO, t->out) ? term_put : NULL, t);
	/* A stdin that epoll cannot watch (a regular file) is not relayed
	 * (relay_input: it is the terminal) */
	if (t->relay_input && loop_add(l, "the user's keys", STDIN_FILENO, on_input, t, e) < 0)
		return -1;
	return 0;
}
