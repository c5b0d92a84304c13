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
#include <sys/stat.h>
#include <unistd.h>

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

/* where the notes of one thread go while raw (wnote_terminal_put) */
static void (*raw_put)(void *ctx, const char *buf, size_t n);
static void *raw_put_ctx;
static pid_t raw_put_tid;

void wnote_terminal_put(void (*put)(void *ctx, const char *buf, size_t n), void *ctx)
{
	raw_put = put;
	raw_put_ctx = ctx;
	raw_put_tid = gettid();
}

/* where the notes of one thread go without waiting (wnote_nowait) */
#define NOWAIT_HELD_MAX (64 * 1024)
static int nowait_fd = -1;
static pid_t nowait_tid;
static char *nowait_held;
static size_t nowait_n;
static unsigned long long nowait_dropped;

void wnote_nowait(int on)
{
	if (on) {
		struct stat st;
		if (nowait_fd >= 0 || fstat(STDERR_FILENO, &st) < 0 ||
		    !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
			return;
		/* a description of its own: O_NONBLOCK not set on the shell's */
		nowait_fd = open("/proc/self/fd/2", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		nowait_tid = gettid();
		return;
	}
	if (nowait_fd < 0)
		return;
	close(nowait_fd);
	nowait_fd = -1;
	for (size_t done = 0; done < nowait_n;) { /* now waiting, as any note */
		ssize_t w = write(STDERR_FILENO, nowait_held + done, nowait_n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* stderr gone */
		done += (size_t)w;
	}
	if (nowait_dropped)
		fprintf(stderr, "warden: %llu bytes of warden's notes were dropped: stderr took "
			"none of them meanwhile\n", nowait_dropped);
	free(nowait_held);
	nowait_held = NULL;
	nowait_n = 0;
	nowait_dropped = 0;
}

/* A note's line to stderr without waiting, after what is kept; false when
 * this thread's notes wait as before. */
static bool nowait_write(const char *line, size_t n)
{
	if (nowait_fd < 0 || gettid() != nowait_tid)
		return false;
	size_t done = 0;
	while (done < nowait_n) {
		ssize_t w = write(nowait_fd, nowait_held + done, nowait_n - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (done) {
		memmove(nowait_held, nowait_held + done, nowait_n - done);
		nowait_n -= done;
	}
	size_t wrote = 0;
	while (!nowait_n && wrote < n) {
		ssize_t w = write(nowait_fd, line + wrote, n - wrote);
		if (w <= 0)
			break;
		wrote += (size_t)w;
	}
	size_t rest = n - wrote, room = NOWAIT_HELD_MAX - nowait_n;
	if (rest > room) {
		nowait_dropped += rest - room;
		rest = room;
	}
	if (rest) {
		if (!nowait_held && !(nowait_held = malloc(NOWAIT_HELD_MAX)))
			abort();
		memcpy(nowait_held + nowait_n, line + wrote, rest);
		nowait_n += rest;
	}
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
	/* the relay's queue (the terminal it relays), else stderr without
	 * waiting (the loop's notes), else stderr */
	char *line = NULL;
	int len = asprintf(&line, "%swarden: %s%s", terminal_raw ? "\r\n" : "", said,
			   terminal_raw ? "\r\n" : "\n");
	if (len < 0)
		line = NULL; /* (undefined after a failure) */
	if (len > 0 && raw_put && gettid() == raw_put_tid)
		raw_put(raw_put_ctx, line, (size_t)len);
	else if (len < 0 || !nowait_write(line, (size_t)len)) {
		fputs(terminal_raw ? "\r\nwarden: " : "warden: ", stderr);
		fputs(said, stderr);
		fputs(terminal_raw ? "\r\n" : "\n", stderr);
	}
	free(line);
	free(shown);
	free(text);
}

