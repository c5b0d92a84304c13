/* pty.h - host-side terminal handling for the agent's pty (see pty.c). */
#pragma once
#include <stdbool.h>
#include <termios.h>

#include "../common/bytebuf.h"
#include "../common/util.h"
#include "ttyfilter.h"

/* The user's terminal while it is raw: what to put back, and where; and
 * the answers it owes to the queries the agent's output put to it. */
struct host_tty {
	int fd;                 /* -1: nothing to restore */
	struct termios saved;
	/* Its keys raw, its output processing (OPOST: "\n" written as
	 * "\r\n") left as the user had it: other processes write to that
	 * terminal (the command's stdout a pipe to `tee` or `less`). It goes
	 * off only while the command's own pty has it off (a full-screen
	 * program, as it would have turned it off on the user's terminal
	 * without warden): posting says which is in force. */
	bool keep_output;
	bool posting;
	int out;                /* where the agent's output goes to the terminal */
	const struct ttyfilter *shown; /* that output's filter: the queries passed (or NULL) */
	unsigned long answered; /* answers among the keys relayed (at most shown->asked) */
	unsigned long answered_da; /* device attributes' answers (CSI ? ... c) among them */
	int scan;               /* how far into a CSI ? ... c the keys are */
};
#define HOST_TTY_NONE ((struct host_tty){ .fd = -1, .out = -1 })
#define _cleanup_host_tty_ _cleanup_(pty_host_restore)
/* How long the answers the agent left are waited for at the end (ms). */
#define PTY_SETTLE_MS 100

/* Save fd's settings in t and make it raw (its output processing too
 * unless keep_output); t->fd stays -1 when it fails. The agent's output
 * goes to the terminal on out through shown (NULL: no queries pass). */
int pty_host_raw(struct host_tty *t, int fd, int out, const struct ttyfilter *shown,
		 bool keep_output);
/* With keep_output, the user's terminal's output processing on or off as
 * the agent's pty (master) has it now: called before its output is
 * relayed. */
void pty_host_follow(struct host_tty *t, int master);
/* Put back what pty_host_raw saved (once; nothing when it was not raw).
 * First, when queries passed that the keys relayed have not answered
 * (the agent printed one and ended), their answers are read and dropped
 * while the terminal is still raw: warden asks for the device attributes
 * itself and reads up to that answer, which the terminal sends after all
 * the others, for PTY_SETTLE_MS at most. Else the terminal's answers would
 * be typed into the user's shell. */
void pty_host_restore(struct host_tty *t);
/* Copy the host terminal's settings and window size to the agent's pty;
 * called before the host terminal goes raw. */
void pty_copy_settings(int host, int master);
void pty_copy_winsize(int host, int master);
/* Whether this process is in the foreground process group of the terminal
 * fd. Only then may it change the terminal's modes or read from it: a
 * background process (warden under timeout(1), or started with &) would be
 * stopped by SIGTTOU or SIGTTIN. */
bool pty_host_foreground(int fd);
/* Type an end-of-file into the agent's pty (its default, canonical mode):
 * the command's first read of stdin returns 0, as from /dev/null. */
void pty_send_eof(int master);
/* The user's keys (from, the terminal t) to the agent's pty (to, which
 * does not block; what it cannot take yet queued in q), the answers among
 * them counted against the queries passed: 1 moved or nothing ready yet,
 * 0 end of file, -1 error. */
int pty_pump_keys(struct host_tty *t, int from, int to, struct bytebuf *q);
/* Where the agent's filtered output goes: fd, unless hold takes it (a
 * question on the user's screen holds it back, termask.h); hold NULL:
 * always fd. With q, fd does not block and what it cannot take yet is
 * queued there (bytebuf_write); without, fd is written to until all is. */
struct pty_sink {
	int fd;
	struct bytebuf *q;
	bool (*hold)(void *ctx, const char *buf, size_t n); /* true: taken */
	void *ctx;
};
/* The same through the output filter (ttyfilter.h) to a sink, and what the
 * filter still holds at the end. */
int pty_pump_filtered(int from, const struct pty_sink *to, struct ttyfilter *f);
void pty_filter_flush(const struct pty_sink *to, struct ttyfilter *f);
