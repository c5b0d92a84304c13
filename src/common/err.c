/* err.c - the error struct of err.h: fill, wrap, format and print. */
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytebuf.h"
#include "shown.h"

/* text (len bytes) into msg: whole when it fits, else its start and its
 * end around " ... ", so that what a long path pushed out is the middle,
 * not the end that says why. */
static void msg_fit(char *msg, size_t cap, const char *text, size_t len)
{
	static const char mark[] = " ... ";
	if (len < cap) {
		memcpy(msg, text, len + 1);
		return;
	}
	size_t room = cap - 1 - (sizeof mark - 1);
	size_t head = room * 3 / 5, tail = room - head;
	memcpy(msg, text, head);
	memcpy(msg + head, mark, sizeof mark - 1);
	memcpy(msg + head + sizeof mark - 1, text + len - tail, tail);
	msg[cap - 1] = '\0';
}

/* Formatted on the stack, not the heap: an error is also set in a child
 * forked from threads (init, with _Fork), where malloc's lock may be
 * held by a thread that is gone. Twice PATH_MAX holds any one path whole. */
#define MSG_TEXT_MAX (2 * PATH_MAX)

__attribute__((format(printf, 2, 0)))
static void msg_vset(struct werr *e, const char *fmt, va_list ap)
{
	char text[MSG_TEXT_MAX];
	if (vsnprintf(text, sizeof text, fmt, ap) < 0)
		text[0] = '\0';
	msg_fit(e->msg, sizeof e->msg, text, strnlen(text, sizeof text - 1));
}

int werr_set(struct werr *e, int errnum, const char *fmt, ...)
{
	if (!e)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	msg_vset(e, fmt, ap);
	va_end(ap);
	e->errnum = errnum;
	return -1;
}

int werr_wrap(struct werr *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	char prefix[MSG_TEXT_MAX], old[sizeof e->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	snprintf(old, sizeof old, "%.*s", (int)sizeof old - 1, e->msg);
	werr_set(e, e->errnum, "%s: %s", prefix, old);
	return -1;
}

int werr_hint(struct werr *e, const char *fmt, ...)
{
	if (!e)
		return -1;
	char hint[MSG_TEXT_MAX], old[sizeof e->msg + 128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(hint, sizeof hint, fmt, ap);
	va_end(ap);
	werr_str(e, old, sizeof old);
	werr_set(e, 0, "%s; %s", old, hint);
	return -1;
}

int werr_fork(struct werr *e, int err, const char *fmt, ...)
{
	if (!e)
		return -1;
	char what[MSG_TEXT_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	werr_set(e, err, "%s", what);
	if (err != EAGAIN)
		return -1;
	struct rlimit rl;
	char now[32] = "unlimited";
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(now, sizeof now, "%llu", (unsigned long long)rl.rlim_cur);
	return werr_hint(e, "a limit of processes is reached: your user's (`ulimit -u`, %s here, "
			 "counts every process and thread of your user; `nproc` in "
			 "/etc/security/limits.conf) or your cgroup's (pids.max: TasksMax= of a "
			 "systemd unit, --pids-limit of a container): end some processes or raise it",
			 now);
}

const char *werr_str(const struct werr *e, char *buf, unsigned long len)
{
	if (e->errnum)
		snprintf(buf, len, "%s: %s", e->msg, strerror(e->errnum));
	else
		snprintf(buf, len, "%s", e->msg);
	return buf;
}

void werr_print(const struct werr *e)
{
	char buf[sizeof e->msg + 128];
	char *shown = text_shown(werr_str(e, buf, sizeof buf));
	fprintf(stderr, "warden: %s\n", shown);
	free(shown);
}

/* Whether the user's terminal is raw now: one terminal per process, set
 * by the supervisor's main thread around its session (pty.c). */
static int terminal_raw;

void wnote_terminal_raw(int raw)
{
	terminal_raw = raw;
}

/* The supervisor's loop's notes (wnote_loop_begin): its thread, the
 * relay's put, else a description of stderr's own that does not block (or
 * stderr's socket, sent to with loop_send's flags) and what it has not
 * taken yet (at most NOTES_KEPT_MAX). */
#define NOTES_KEPT_MAX (64 * 1024)
static pid_t loop_tid;
static void (*loop_put)(void *ctx, const char *buf, size_t n);
static void *loop_put_ctx;
static int loop_fd = -1;
static int loop_send;
static struct bytebuf loop_kept;
static unsigned long long loop_dropped;

void wnote_loop_begin(void (*put)(void *ctx, const char *buf, size_t n), void *ctx)
{
	loop_tid = gettid();
	loop_put = put;
	loop_put_ctx = ctx;
	struct stat st;
	if (put || loop_fd >= 0 || fstat(STDERR_FILENO, &st) < 0)
		return;
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		/* a description of its own: O_NONBLOCK not set on the shell's */
		loop_fd = open("/proc/self/fd/2", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	} else if (S_ISSOCK(st.st_mode)) {
		/* a socket (a service's stderr to the journal) is not opened
		 * again: each send does not wait, its flags left as they are */
		loop_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		loop_send = MSG_DONTWAIT | MSG_NOSIGNAL;
	}
}

void wnote_loop_end(void)
{
	loop_put = NULL;
	if (loop_fd < 0)
		return;
	close(loop_fd);
	loop_fd = -1;
	loop_send = 0;
	/* what was kept, now waiting for stderr as any note does */
	if (bytebuf_flush(STDERR_FILENO, &loop_kept) < 0) { /* stderr gone */ }
	if (loop_dropped)
		fprintf(stderr, "warden: %llu bytes of warden's notes were dropped: stderr took "
			"none of them meanwhile\n", loop_dropped);
	bytebuf_free(&loop_kept);
	loop_dropped = 0;
}

/* A note's line from the loop's thread: through the relay's put, or to
 * stderr without waiting, after what is kept; false from another thread
 * or when stderr is written as before. */
static bool loop_note(const char *line, size_t n)
{
	if (gettid() != loop_tid || (!loop_put && loop_fd < 0))
		return false;
	if (loop_put) {
		loop_put(loop_put_ctx, line, n);
		return true;
	}
	if (bytebuf_send_flush(loop_fd, &loop_kept, loop_send) < 0 ||
	    bytebuf_send_write(loop_fd, &loop_kept, line, n, loop_send) < 0)
		bytebuf_free(&loop_kept); /* stderr gone: nothing to keep for */
	loop_dropped += bytebuf_bound(&loop_kept, NOTES_KEPT_MAX);
	return true;
}

void wnote(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	/* the names in it may be the sandbox's: shown, never acting (shown.h) */
	char *shown = n >= 0 ? text_shown(text) : NULL;
	const char *said = shown ? shown : "(a note that could not be formatted)";
	char *line = NULL;
	int len = asprintf(&line, "%swarden: %s%s", terminal_raw ? "\r\n" : "", said,
			   terminal_raw ? "\r\n" : "\n");
	if (len < 0) { /* (line undefined) */
		fputs(terminal_raw ? "\r\nwarden: " : "warden: ", stderr);
		fputs(said, stderr);
		fputs(terminal_raw ? "\r\n" : "\n", stderr);
	} else {
		if (!loop_note(line, (size_t)len))
			fputs(line, stderr);
		free(line);
	}
	free(shown);
	free(text);
}

