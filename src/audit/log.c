/* log.c - a session's event stream and its first subscriber, the audit log
 * writer: events are stamped (session, ts, seq) and handed to each
 * subscriber in turn; the writer appends each to the session's JSON Lines
 * file, one event per line, each line carrying "prev", the SHA-256 of the
 * previous line.
 *
 * The log never fails quietly: when a line cannot be written (ENOSPC, EIO)
 * or the file is gone from its directory (the directory removed), the
 * writer cuts any partial line, frees the space reserved for this (a file
 * of RESERVE bytes in the log directory), writes a last `log.failed`
 * line there, and calls the owner's failure hook (the supervisor stops the
 * sandbox); every later event is refused. */
#include "audit.h"
#include "emit.h"
#include "../common/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/lateclose.h"
#include "../common/sbuf.h"
#include "../common/util.h"

/* The log writer: the stream's first subscriber. */
struct writer {
	int fd;                  /* -1 until audit_begin */
	void (*also)(void *ctx, const struct event *ev, const char *line, size_t n);
	void *also_ctx;          /* each line also to also (--log syslog) */
	char *dir;               /* DIR */
	char *path;              /* DIR/SESSION.jsonl */
	char prev[65];           /* SHA-256 of the last line written (hex) */
	char last_prev[65];      /* that line's own "prev" */
	off_t size;              /* bytes of whole lines written */
	off_t fsize_max;         /* a line past this fails as EFBIG before it is written,
				    leaving room for log.failed (FAILED_ROOM under the
				    file-size limit, ulimit -f); 0: no limit */
	off_t limit;             /* `limit log`: past it, the session is ended; 0: none */
	char limit_text[32];     /* as the profile writes it: "512M" */
	bool over;               /* a line took the log past it */
	int dirfd;               /* the log's directory (the reserve's too) */
	bool reserve;            /* the reserve is there (reserve_make) */
	bool failed;
	char why[900];           /* what failed, the log named, and what to do */
	audit_failure_fn on_fail;
	void *fail_ctx;
};

#define RESERVE (16 * 1024)
#define FAILED_ROOM 4096 /* a log.failed line's room, its reason at most 900 bytes */
/* Past `limit log`, the room for the end of the session (the `limit` and
 * `kill` events, what was on its way, the summaries, session.end); past
 * that too, the log fails as a full disk makes it fail. */
#define LIMIT_ROOM (256 * 1024)

struct subscriber {
	audit_subscriber_fn fn;
	void *ctx;
};

struct audit {
	char *session;
	struct timespec last_ts; /* ts of the last event, the floor for the next */
	time_t base_sec;         /* the second of base, ts's date and time */
	char base[64];
	unsigned long seq;       /* seq of the last event */
	json_t *counts;          /* event kind -> number emitted */
	struct subscriber *subs; /* subs[0] is the writer */
	size_t nsubs;
	audit_rate_fn rate;      /* an alert's severity when it has none (or NULL) */
	audit_failure_fn on_limit; /* `limit log` reached (audit_on_limit) */
	void *limit_ctx;
	bool limit_said;         /* its `limit` event written */
	char limit_why[400];
	void *rate_ctx;
	struct writer w;
};

char *audit_dir(const char *home)
{
	return xdg_warden_dir("XDG_STATE_HOME", home, ".local/state");
}

void audit_new_session_id(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct utc_fields u = utc_fields_of(now); /* (clock.h: not gmtime_r) */
	char stamp[64];
	snprintf(stamp, sizeof stamp, "%04d%02d%02dT%02d%02d%02dZ", u.year, u.mon, u.day, u.hour,
		 u.min, u.sec);

	uint32_t rnd;
	ssize_t r;
	do
		r = getrandom(&rnd, sizeof rnd, 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof rnd) {
		/* No getrandom: the id need not be secret, only unlikely to
		 * repeat, and O_EXCL catches a repeat anyway. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rnd = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 16;
	}
	snprintf(buf, len, "%s-%08x", stamp, (unsigned)rnd);
}

/* Open the log directory, refusing a symlink, a directory owned by someone
 * else, or one others can write to. */
static int open_dir(const char *dir, struct werr *e)
{
	bool created;
	if (!dir[0])
		return werr_set(e, EINVAL, "empty audit log directory");
	if (mkdir_p(dir, 0700, &created) < 0)
		return werr_errno(e, "cannot create audit log directory %s (give warden a state "
				  "directory it can write: XDG_STATE_HOME)", dir);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat lst;
		int err = errno;
		if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
			return werr_set(e, 0, "audit log directory %s is a symbolic link, refusing to use it", dir);
		return werr_set(e, err, "cannot open audit log directory %s", dir);
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		werr_errno(e, "cannot stat audit log directory %s", dir);
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		werr_set(e, 0, "audit log directory %s is owned by uid %u, not by you (uid %u), refusing to use it",
			 dir, (unsigned)st.st_uid, (unsigned)geteuid());
		goto fail;
	}
	if (created && fchmod(fd, 0700) < 0) {
		werr_errno(e, "cannot chmod audit log directory %s", dir);
		goto fail;
	}
	if (!created && (st.st_mode & 022)) {
		werr_set(e, 0, "audit log directory %s is writable by group or others (mode %03o), refusing to use it; chmod 700 it",
			 dir, (unsigned)(st.st_mode & 0777));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* A reserve of RESERVE bytes in the log directory (.log-reserve), given
 * back when the disk is full so that the last line fits. Made once and kept
 * for the sessions after (a file made and removed per session costs the
 * start a few hundred microseconds); the sessions of one directory share it. */
static void reserve_make(struct writer *w)
{
	static const char name[] = ".log-reserve";
	struct stat st;
	if (fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size >= RESERVE && st.st_uid == geteuid()) {
		w->reserve = true;
		return;
	}
	int fd = openat(w->dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd >= 0 && posix_fallocate(fd, 0, RESERVE) == 0)
		w->reserve = true;
	else if (fd >= 0)
		unlinkat(w->dirfd, name, 0);
	if (fd >= 0)
		close(fd);
}

static void reserve_free(struct writer *w)
{
	if (w->reserve)
		unlinkat(w->dirfd, ".log-reserve", 0);
	w->reserve = false;
}

/* What stopped the log (err, or 0: the file left its directory) into
 * w->why: the file, the cause in words, and what the user can do. */
static void failure_why(struct writer *w, int err)
{
	const char *slash = strrchr(w->path, '/');
	int dl = slash ? (int)(slash - w->path) : 1;
	const char *dir = slash ? w->path : ".";
	const char *cause, *todo;
	switch (err) {
	case 0:
		snprintf(w->why, sizeof w->why, "the audit log %s was removed from its directory (%.*s "
			 "was removed or cleaned while the session ran); keep warden's state directory "
			 "(XDG_STATE_HOME) for as long as a session runs", w->path, dl, dir);
		return;
	case ENOSPC:
		cause = "the file system is full";
		todo = "free space there, or give warden a state directory elsewhere (XDG_STATE_HOME)";
		break;
	case EDQUOT:
		cause = "your disk quota there is used up";
		todo = "free space there, or give warden a state directory elsewhere (XDG_STATE_HOME)";
		break;
	case EFBIG:
		if (w->over) {
			snprintf(w->why, sizeof w->why, "the audit log %s reached its limit (limit log "
				 "%s) and the room after it for the session's end", w->path, w->limit_text);
			return;
		}
		cause = "the file reached the largest size allowed (ulimit -f, or the file system's limit)";
		todo = "raise the limit, or give warden a state directory elsewhere (XDG_STATE_HOME)";
		break;
	case EIO:
		cause = "the disk reported an I/O error";
		todo = "check the disk (dmesg), or give warden a state directory elsewhere (XDG_STATE_HOME)";
		break;
	default:
		cause = "the write failed";
		todo = "give warden a state directory it can write (XDG_STATE_HOME)";
		break;
	}
	snprintf(w->why, sizeof w->why, "cannot write the audit log %s: %s (%s); %s", w->path, cause,
		 strerror(err), todo);
}

/* The log could not take ev (err, or 0: the file left its directory): cut
 * what was written of it, give the reserve back, write a last line saying
 * so, and tell the owner. Once. */
static void fail(struct writer *w, const struct event *ev, int err)
{
	if (w->failed)
		return;
	w->failed = true;
	failure_why(w, err);
	if (ftruncate(w->fd, w->size) == 0 && err) {
		reserve_free(w);
		_cleanup_json_ json_t *o = json_pack("{s:i, s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "v",
			AUDIT_FORMAT_VERSION, "ts", ev->ts, "session", ev->session, "seq",
			(json_int_t)ev->seq, "event", "log.failed", "lost", ev->kind, "reason", w->why,
			"prev", w->prev);
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		if (s) {
			size_t n = strlen(s);
			s[n] = '\n';
			if (write_all(w->fd, s, n + 1) == 0)
				fsync(w->fd);
			s[n] = '\0';
		}
		free(s);
	}
	if (w->on_fail)
		w->on_fail(w->fail_ctx, w->why);
}

/* Written into a JSON string as they are (no escape needed)? */
static bool plain(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:+-") ==
	       strlen(s);
}

/* The line of ev as one object built and dumped (any event name). */
static char *line_built(const struct writer *w, const struct event *ev)
{
	_cleanup_json_ json_t *o = json_object();
	json_object_set_new(o, "v", json_integer(AUDIT_FORMAT_VERSION));
	json_object_set_new(o, "ts", json_string(ev->ts));
	json_object_set_new(o, "session", json_string(ev->session));
	json_object_set_new(o, "seq", json_integer((json_int_t)ev->seq));
	json_object_set_new(o, "event", json_string(ev->kind));
	const char *k;
	json_t *v;
	json_object_foreach(ev->fields, k, v)
		json_object_set(o, k, v);
	json_object_set_new(o, "prev", json_string(w->prev));
	return json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

static int dump_to_sbuf(const char *buf, size_t size, void *data)
{
	sb_put(data, buf, size);
	return 0;
}

/* The same bytes, the header written here around the fields' own dump, in
 * one buffer: no copy of the fields into a new object (the header's
 * strings are plain, the fields hold no header key: audit_emit refuses
 * them), nor of their dump into the line. */
static char *line_of(const struct writer *w, const struct event *ev)
{
	if (!plain(ev->kind) || !plain(ev->ts) || !plain(ev->session))
		return line_built(w, ev);
	struct sbuf b = { 0 };
	sb_puts(&b, "{\"v\":");
	sb_put_num(&b, false, AUDIT_FORMAT_VERSION, 10, 0);
	sb_puts(&b, ",\"ts\":\"");
	sb_puts(&b, ev->ts);
	sb_puts(&b, "\",\"session\":\"");
	sb_puts(&b, ev->session);
	sb_puts(&b, "\",\"seq\":");
	sb_put_num(&b, false, ev->seq, 10, 0);
	sb_puts(&b, ",\"event\":\"");
	sb_puts(&b, ev->kind);
	sb_putc(&b, '"');
	size_t at = b.n;
	if (ev->fields && json_dump_callback(ev->fields, dump_to_sbuf, &b,
					     JSON_COMPACT | JSON_PRESERVE_ORDER) < 0) {
		free(b.p);
		return NULL;
	}
	/* "{...}" less its braces: its members, after the header's */
	if (b.n - at > 2) {
		b.p[at] = ',';
		b.n--;
	} else {
		b.n = at;
	}
	sb_puts(&b, ",\"prev\":\"");
	sb_puts(&b, w->prev);
	sb_puts(&b, "\"}");
	return b.p;
}

/* The first subscriber: the event as one JSON line, header, fields, then
 * prev; the line's SHA-256 becomes the next line's prev. */
static int write_event(void *ctx, const struct event *ev, struct werr *e)
{
	struct writer *w = ctx;
	char *s = line_of(w, ev);
	if (!s)
		return werr_set(e, EINVAL, "audit event %s: cannot encode as JSON", ev->kind);

	size_t n = strlen(s);
	_cleanup_free_ char *line = xrealloc(s, n + 1 + 1);
	line[n] = '\n';
	if (w->failed)
		return werr_set(e, 0, "%s", w->why);
	if (w->fd < 0) /* audit_begin not yet: nothing may happen unrecorded */
		return werr_set(e, 0, "audit log %s: an event (%s) before the log's file was made",
				w->path, ev->kind);
	if ((w->fsize_max && w->size + (off_t)n + 1 > w->fsize_max) ||
	    (w->limit && w->size + (off_t)n + 1 > w->limit + LIMIT_ROOM)) {
		/* the limit near: fail now, while log.failed still fits */
		fail(w, ev, EFBIG);
		return werr_set(e, 0, "%s", w->why);
	}
	if (write_all(w->fd, line, n + 1) < 0) {
		fail(w, ev, errno);
		return werr_set(e, 0, "%s", w->why);
	}
	w->size += (off_t)n + 1;
	if (w->limit && w->size > w->limit)
		w->over = true; /* said by audit_emit once this event is through */
	struct stat st;
	if (fstat(w->fd, &st) == 0 && st.st_nlink == 0) {
		/* written, but to a file no longer in any directory */
		fail(w, ev, 0);
		return werr_set(e, 0, "%s", w->why);
	}
	if (w->also)
		w->also(w->also_ctx, ev, line, n);
	memcpy(w->last_prev, w->prev, sizeof w->last_prev);
	sha256_hex(line, n, w->prev);
	return 0;
}

int audit_dir_check(const char *dir, struct werr *e)
{
	int fd = open_dir(dir, e);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int audit_new(struct audit **out, const char *dir, const char *session, struct werr *e)
{
	*out = NULL;
	if (!audit_session_id_valid(session))
		return werr_set(e, EINVAL, "invalid audit session id '%.100s'", session);
	if (!dir[0])
		return werr_set(e, EINVAL, "empty audit log directory");
	struct audit *a = xcalloc(1, sizeof *a);
	a->w.fd = -1;
	a->w.dirfd = -1;
	a->w.dir = xstrdup(dir);
	a->w.path = xasprintf("%s/%s.jsonl", dir, session);
	snprintf(a->w.prev, sizeof a->w.prev, "%s", AUDIT_PREV_FIRST);
	snprintf(a->w.last_prev, sizeof a->w.last_prev, "%s", AUDIT_PREV_FIRST);
	a->session = xstrdup(session);
	a->counts = json_object();
	if (!a->counts)
		abort();
	audit_subscribe(a, write_event, &a->w);
	*out = a;
	return 0;
}

int audit_begin(struct audit *a, struct werr *e)
{
	if (a->w.fd >= 0)
		return 0;
	_cleanup_close_ int dfd = open_dir(a->w.dir, e);
	if (dfd < 0)
		return -1;
	_cleanup_free_ char *name = xasprintf("%s.jsonl", a->session);
	int fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return werr_errno(e, "audit log %s already exists", a->w.path);
		return werr_errno(e, "cannot create audit log %s", a->w.path);
	}
	a->w.fd = fd;
	a->w.dirfd = steal_fd(&dfd);
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		a->w.fsize_max = rl.rlim_cur > FAILED_ROOM ? (off_t)(rl.rlim_cur - FAILED_ROOM) : 1;
	reserve_make(&a->w);
	return 0;
}

int audit_open(struct audit **out, const char *dir, const char *session, struct werr *e)
{
	if (audit_new(out, dir, session, e) < 0)
		return -1;
	if (audit_begin(*out, e) < 0) {
		audit_close(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* UTC time of the event, never earlier than the previous event's: a clock
 * stepped back during a session must not make the log look reordered. */
static void timestamp(struct audit *a, char *out, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec < a->last_ts.tv_sec ||
	    (ts.tv_sec == a->last_ts.tv_sec && ts.tv_nsec < a->last_ts.tv_nsec))
		ts = a->last_ts;
	a->last_ts = ts;
	/* the date and time to the second, written once a second */
	if (ts.tv_sec != a->base_sec || !a->base[0]) {
		struct utc_fields u = utc_fields_of(ts.tv_sec); /* (clock.h: not gmtime_r) */
		snprintf(a->base, sizeof a->base, "%04d-%02d-%02dT%02d:%02d:%02d", u.year, u.mon,
			 u.day, u.hour, u.min, u.sec);
		a->base_sec = ts.tv_sec;
	}
	snprintf(out, len, "%s.%06ldZ", a->base, ts.tv_nsec / 1000);
}

void audit_subscribe(struct audit *a, audit_subscriber_fn fn, void *ctx)
{
	a->subs = xrealloc(a->subs, (a->nsubs + 1) * sizeof *a->subs);
	a->subs[a->nsubs++] = (struct subscriber){ fn, ctx };
}

void audit_unsubscribe(struct audit *a, audit_subscriber_fn fn, void *ctx)
{
	for (size_t i = 1; i < a->nsubs; i++)
		if (a->subs[i].fn == fn && a->subs[i].ctx == ctx) {
			memmove(&a->subs[i], &a->subs[i + 1], (a->nsubs - i - 1) * sizeof *a->subs);
			a->nsubs--;
			return;
		}
}

/* The log past `limit log`: a `limit` event says so (the one after the
 * event that took it past), and the owner ends the session. Once. */
static void limit_reached(struct audit *a)
{
	a->limit_said = true;
	snprintf(a->limit_why, sizeof a->limit_why, "the session's audit log reached its limit "
		 "(limit log %s): the session was ended, so that it cannot fill the disk; a "
		 "profile line `limit log SIZE` (or `limit log unlimited`) raises it", a->w.limit_text);
	audit_emit_event(a, ev_limit(&(struct ev_limit){ .kind = "log", .limit = a->w.limit_text,
		.detail = a->limit_why }), NULL);
	if (a->on_limit)
		a->on_limit(a->limit_ctx, a->limit_why);
}

int audit_emit(struct audit *a, const char *event, json_t *fields, struct werr *e)
{
	_cleanup_json_ json_t *f = fields;
	if (f && !json_is_object(f))
		return werr_set(e, EINVAL, "audit event %s: fields are not a JSON object", event);
	/* the name is written as a JSON string: non-empty UTF-8 */
	_cleanup_json_ json_t *name = event && event[0] ? json_string(event) : NULL;
	if (!name)
		return werr_set(e, EINVAL, "invalid audit event name");
	const char *k;
	json_t *v;
	json_object_foreach(f, k, v)
		if (audit_is_header_key(k))
			return werr_set(e, EINVAL, "audit event %s: field name '%s' is reserved", event, k);

	if (a->rate && f && strcmp(event, "alert") == 0 && !json_object_get(f, "severity")) {
		const char *sev = a->rate(a->rate_ctx, f);
		if (sev)
			json_object_set_new(f, "severity", json_string(sev));
	}
	char ts[128];
	timestamp(a, ts, sizeof ts);
	struct event ev = { .kind = event, .fields = f, .session = a->session, .ts = ts,
			    .seq = a->seq + 1 };
	for (size_t i = 0; i < a->nsubs; i++) {
		int r = a->subs[i].fn(a->subs[i].ctx, &ev, e);
		if (i == 0 && r == 0) { /* in the log: its seq is taken */
			a->seq++;
			json_object_set_new(a->counts, event, json_integer((json_int_t)audit_count(a, event) + 1));
		}
		if (r < 0)
			return -1;
	}
	if (a->w.over && !a->limit_said)
		limit_reached(a);
	return 0;
}

int audit_emit_event(struct audit *a, struct event ev, struct werr *e)
{
	return audit_emit(a, ev.kind, ev.fields, e);
}

unsigned long audit_count(const struct audit *a, const char *event)
{
	if (!a || !event)
		return 0;
	return (unsigned long)json_integer_value(json_object_get(a->counts, event));
}

json_t *audit_counts(const struct audit *a)
{
	return a ? json_deep_copy(a->counts) : json_object();
}

int audit_sync(struct audit *a, struct werr *e)
{
	if (a->w.fd < 0)
		return 0;
	if (fsync(a->w.fd) < 0)
		return werr_errno(e, "cannot sync audit log %s", a->w.path);
	return 0;
}

const char *audit_path(const struct audit *a) { return a->w.path; }

const char *audit_last_line_hash(const struct audit *a) { return a->w.prev; }

const char *audit_last_line_prev(const struct audit *a) { return a->w.last_prev; }

static void audit_free(struct audit *a)
{
	if (a->w.dirfd >= 0)
		close(a->w.dirfd);
	free(a->w.dir);
	free(a->w.path);
	free(a->session);
	free(a->subs);
	json_decref(a->counts);
	free(a);
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	if (a->w.fd >= 0) {
		fsync(a->w.fd);
		close(a->w.fd);
	}
	audit_free(a);
}

void audit_close_late(struct audit *a, struct late_close *l)
{
	if (!a)
		return;
	if (a->w.fd >= 0)
		late_close_add_synced(l, a->w.fd); /* its writeback begins there */
	audit_free(a);
}

void audit_set_limit(struct audit *a, unsigned long long bytes, const char *text)
{
	a->w.limit = (off_t)bytes;
	snprintf(a->w.limit_text, sizeof a->w.limit_text, "%s", text);
}

void audit_on_limit(struct audit *a, audit_failure_fn fn, void *ctx)
{
	a->on_limit = fn;
	a->limit_ctx = ctx;
	if (fn && a->limit_said)
		fn(ctx, a->limit_why); /* reached before anyone could act on it */
}

const char *audit_limit_reached(const struct audit *a)
{
	return a && a->limit_said ? a->limit_why : NULL;
}

void audit_on_failure(struct audit *a, audit_failure_fn fn, void *ctx)
{
	a->w.on_fail = fn;
	a->w.fail_ctx = ctx;
}

const char *audit_failed(const struct audit *a)
{
	return a && a->w.failed ? a->w.why : NULL;
}

void audit_rate_alerts(struct audit *a, audit_rate_fn rate, void *ctx)
{
	a->rate = rate;
	a->rate_ctx = ctx;
}

void audit_also(struct audit *a, void (*also)(void *ctx, const struct event *ev, const char *line,
					     size_t n), void *ctx)
{
	a->w.also = also;
	a->w.also_ctx = ctx;
}
