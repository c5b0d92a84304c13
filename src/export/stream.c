/* stream.c - the live stream's sender (stream.h): a process that tails the
 * session's log and sends it on, each target from its own place in it, and
 * the supervisor's side that starts it, asks it for its figures and stops
 * it. The two speak over a socket pair: the supervisor sends 'R' (report)
 * or 'E' (end), each with the milliseconds the sender may still take; the
 * sender answers each with one JSON line of figures. */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../audit/chain.h"
#include "../common/clock.h"
#include "../common/cpupin.h"
#include "../common/util.h"
#include "ocsf.h"
#include "otlp.h"

enum { T_OTLP, T_OCSF, T_MAX };

struct target {
	bool on;
	off_t off;                /* the first line not sent */
	unsigned long sent, skipped;
	char why[300];            /* the last failure, "" when none since */
	double retry_at;          /* ms (monotonic): not before */
	unsigned backoff_ms;
	bool caught_up;           /* the last look found nothing to send */
};

/* the sender's state (in its own process) */
struct sender {
	int log_fd, sock, ocsf_fd;
	struct otlp_export x;
	struct ocsf_ctx oc;
	char hostname[256];
	const char *shown[T_MAX]; /* the URL without its path, the file */
	struct target t[T_MAX];
	char *buf;
	size_t cap;
};

struct streamer {
	pid_t pid;
	int sock;
	char session[64];
	char *otlp_url, *ocsf_file;
};

/* ---- the sender -------------------------------------------------------- */

/* Read complete lines of the log from off into s->buf: their bytes (0: none
 * yet). A line longer than the buffer grows it. */
static size_t read_lines(struct sender *s, off_t off)
{
	size_t have = 0;
	for (;;) {
		ssize_t n = pread(s->log_fd, s->buf + have, s->cap - have, off + (off_t)have);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have < s->cap)
			break;
		if (memrchr(s->buf, '\n', have))
			break;
		s->cap *= 2;
		s->buf = xrealloc(s->buf, s->cap);
	}
	char *nl = have ? memrchr(s->buf, '\n', have) : NULL;
	return nl ? (size_t)(nl - s->buf) + 1 : 0;
}

static void failed(struct target *t, const char *why, unsigned cap_ms)
{
	snprintf(t->why, sizeof t->why, "%s", why);
	t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : STREAM_BACKOFF_MIN_MS;
	if (t->backoff_ms > STREAM_BACKOFF_MAX_MS)
		t->backoff_ms = STREAM_BACKOFF_MAX_MS;
	t->retry_at = mono_ms() + (t->backoff_ms < cap_ms ? t->backoff_ms : cap_ms);
}

/* Append the batch's OCSF lines to the file in one write; a part written
 * is cut off again. */
static int ocsf_write(struct sender *s, const char *out, size_t len, char *why, size_t whylen)
{
	struct stat st;
	if (fstat(s->ocsf_fd, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	ssize_t n = len ? write(s->ocsf_fd, out, len) : 0;
	if (n == (ssize_t)len)
		return 0;
	snprintf(why, whylen, "%s", n < 0 ? strerror(errno) : "the file took only part of it (is the disk full?)");
	if (n > 0 && ftruncate(s->ocsf_fd, st.st_size) < 0)
		snprintf(why, whylen, "%s; a part written could not be cut off", strerror(errno));
	return -1;
}

/* Send one batch from target k's place: 1 sent, 0 nothing to send, -1
 * failed (t->why). cancel and post_ms bound a POST. */
static int step(struct sender *s, int k, int cancel, unsigned post_ms)
{
	struct target *t = &s->t[k];
	size_t len = read_lines(s, t->off);
	t->caught_up = len == 0;
	if (len == 0)
		return 0;
	size_t used = 0, lines = 0, skipped = 0;
	_cleanup_free_ char *out = NULL;
	size_t outlen = 0;
	FILE *o = k == T_OCSF ? open_memstream(&out, &outlen) : NULL;
	while (used < len && lines < STREAM_BATCH_LINES) {
		char *p = s->buf + used;
		size_t n = (size_t)((char *)memchr(p, '\n', len - used) - p);
		char why[200];
		_cleanup_json_ json_t *ev = audit_parse_line(p, n, why, sizeof why);
		_cleanup_json_ json_t *rec = !ev ? NULL : k == T_OTLP ? otlp_record(ev, p, n) : ocsf_event(ev, &s->oc);
		if (!rec)
			skipped++;
		else if (k == T_OTLP)
			json_array_append(s->x.records, rec);
		else if (json_dumpf(rec, o, JSON_COMPACT) < 0 || fputc('\n', o) == EOF)
			skipped++;
		used += n + 1;
		lines++;
	}
	char why[300] = "";
	int r;
	if (k == T_OTLP) {
		r = !json_array_size(s->x.records) ? 0 :
		    otlp_send_once(&s->x, cancel, STREAM_CANCEL_GRACE_MS, post_ms, why, sizeof why);
	} else {
		fclose(o);
		r = ocsf_write(s, out, outlen, why, sizeof why);
	}
	if (r < 0) {
		failed(t, why, post_ms);
		return -1;
	}
	t->off += (off_t)used;
	t->sent += lines - skipped;
	t->skipped += skipped;
	t->backoff_ms = 0;
	t->why[0] = '\0';
	return 1;
}

/* Lines from off to the end of the log, and the first one's seq (-1: none). */
static unsigned long unsent(struct sender *s, off_t off, long long *first)
{
	unsigned long n = 0;
	*first = -1;
	char b[65536];
	ssize_t got;
	bool head = true;
	while ((got = pread(s->log_fd, b, sizeof b, off)) > 0) {
		if (head) {
			char *nl = memchr(b, '\n', (size_t)got);
			char why[200];
			_cleanup_json_ json_t *ev = nl ? audit_parse_line(b, (size_t)(nl - b), why, sizeof why) : NULL;
			if (ev)
				*first = json_integer_value(json_object_get(ev, "seq"));
			head = false;
		}
		for (ssize_t i = 0; i < got; i++)
			n += b[i] == '\n';
		off += got;
	}
	return n;
}

static void report(struct sender *s)
{
	static const char *const kinds[T_MAX] = { "otlp", "ocsf" };
	json_t *j = json_object();
	for (int k = 0; k < T_MAX; k++) {
		struct target *t = &s->t[k];
		if (!t->on)
			continue;
		long long first;
		unsigned long left = unsent(s, t->off, &first);
		json_t *o = json_pack("{s:s, s:I, s:I}", k == T_OTLP ? "url" : "file", s->shown[k],
				      "sent", (json_int_t)t->sent, "unsent", (json_int_t)left);
		if (k == T_OCSF)
			json_object_set_new(o, "skipped", json_integer((json_int_t)t->skipped));
		if (left && first >= 0)
			json_object_set_new(o, "first_unsent", json_integer(first));
		if (t->why[0])
			json_object_set_new(o, "error", json_string(t->why));
		json_object_set_new(j, kinds[k], o);
	}
	char *line = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (line) {
		size_t n = strlen(line);
		line[n] = '\n'; /* json_dumps's NUL: the line's end instead */
		(void)!send(s->sock, line, n + 1, MSG_NOSIGNAL);
		free(line);
	}
}

/* One round over the targets: whether one sent something. */
static bool round_once(struct sender *s, bool ending, double deadline)
{
	bool busy = false;
	for (int k = 0; k < T_MAX; k++) {
		if (!s->t[k].on || mono_ms() < s->t[k].retry_at)
			continue;
		unsigned post_ms = STREAM_POST_MS;
		if (deadline > 0) {
			/* too little time left for an attempt: its failure would
			 * hide the last real one */
			double left = deadline - mono_ms();
			if (left < STREAM_POST_MIN_MS)
				continue;
			post_ms = left < post_ms ? (unsigned)left : post_ms;
		}
		busy |= step(s, k, ending ? -1 : s->sock, post_ms) > 0;
	}
	return busy;
}

static bool all_caught_up(const struct sender *s)
{
	for (int k = 0; k < T_MAX; k++)
		if (s->t[k].on && !s->t[k].caught_up)
			return false;
	return true;
}

static void sender_run(struct sender *s)
{
	double deadline = 0; /* > 0: a report is due by then */
	bool ending = false;
	for (;;) {
		bool busy = round_once(s, ending, deadline);
		if (deadline > 0 && (all_caught_up(s) || mono_ms() >= deadline)) {
			report(s);
			if (ending)
				return;
			deadline = 0;
		}
		/* busy: a look at the socket between batches, without
		 * waiting (a POST lets a message wait at most its grace) */
		int wait = busy ? 0 : deadline > 0 ? 20 /* a back-off, or the next look */ : STREAM_POLL_MS;
		struct pollfd p = { .fd = s->sock, .events = POLLIN };
		if (ending || poll(&p, 1, wait) <= 0) {
			if (ending && !busy)
				poll(NULL, 0, wait);
			continue;
		}
		unsigned char m[5];
		if (recv(s->sock, m, sizeof m, MSG_WAITALL) != (ssize_t)sizeof m)
			return; /* the supervisor is gone */
		uint32_t ms;
		memcpy(&ms, m + 1, sizeof ms);
		deadline = mono_ms() + ms;
		ending = m[0] == 'E';
		for (int k = 0; k < T_MAX; k++)
			s->t[k].retry_at = 0; /* try at once */
	}
}

/* The child's start: nothing of the supervisor's but what it needs. */
static void sender_main(struct sender *s)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	s->cap = STREAM_READ_MAX;
	s->buf = xmalloc(s->cap);
	sender_run(s);
	_exit(0);
}

/* ---- the supervisor's side ------------------------------------------- */

int stream_ocsf_check(const char *file, const char *workspace, struct werr *e)
{
	struct stat ls;
	if (lstat(file, &ls) == 0 && S_ISLNK(ls.st_mode))
		return werr_set(e, 0, "stream ocsf %s: a symbolic link (name the file it leads to)",
				file);
	if (lstat(file, &ls) == 0 && !S_ISREG(ls.st_mode) && !S_ISFIFO(ls.st_mode))
		return werr_set(e, 0, "stream ocsf %s: not a regular file (the stream appends whole "
				"batches to a file)", file);
	/* its directory resolved (a missing one fails the open, said there) */
	const char *slash = strrchr(file, '/');
	_cleanup_free_ char *dir = slash ? xasprintf("%.*s", (int)(slash - file), file)
					 : xstrdup(".");
	char real[PATH_MAX];
	if (!workspace || !realpath(dir[0] ? dir : "/", real))
		return 0;
	_cleanup_free_ char *res = xasprintf("%s/%s", strcmp(real, "/") ? real : "",
					     slash ? slash + 1 : file);
	if (path_overlaps(res, workspace))
		return werr_set(e, 0, "stream ocsf %s: it lies in the workspace %s, where the agent "
				"could rewrite the events (name a file outside it)", file, workspace);
	return 0;
}

static int open_targets(struct sender *s, const struct stream_conf *c, struct streamer *st,
			struct werr *e)
{
	if (c->otlp_url) {
		if (otlp_open(&s->x, c->otlp_url, c->otlp_ca, STREAM_POST_MS, c->version, e) < 0)
			return werr_wrap(e, "stream otlp");
		s->t[T_OTLP].on = true;
		st->otlp_url = xstrdup(c->otlp_url);
		s->shown[T_OTLP] = xasprintf("%s://%s", s->x.url.tls ? "https" : "http", s->x.url.authority);
	}
	if (c->ocsf_file) {
		/* without waiting: a FIFO nothing reads is refused here, not
		 * waited on */
		s->ocsf_fd = open(c->ocsf_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY |
				  O_NONBLOCK | O_NOFOLLOW, 0600);
		if (s->ocsf_fd < 0 && errno == ELOOP)
			return werr_set(e, 0, "stream ocsf %s: a symbolic link (name the file it "
					"leads to)", c->ocsf_file);
		if (s->ocsf_fd < 0 && errno == ENXIO)
			return werr_set(e, 0, "stream ocsf %s: a FIFO nothing reads (the stream "
					"appends to a regular file)", c->ocsf_file);
		if (s->ocsf_fd < 0)
			return werr_errno(e, "stream ocsf %s: cannot open the file for appending", c->ocsf_file);
		struct stat fst;
		if (fstat(s->ocsf_fd, &fst) < 0 || !S_ISREG(fst.st_mode))
			return werr_set(e, 0, "stream ocsf %s: not a regular file (the stream appends "
					"whole batches to a file, and cuts off one written in part)",
					c->ocsf_file);
		int fl = fcntl(s->ocsf_fd, F_GETFL);
		if (fl < 0 || fcntl(s->ocsf_fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			return werr_errno(e, "stream ocsf %s", c->ocsf_file);
		s->t[T_OCSF].on = true;
		st->ocsf_file = xstrdup(c->ocsf_file);
		s->shown[T_OCSF] = c->ocsf_file;
	}
	return 0;
}

static void streamer_free(struct streamer *st)
{
	if (!st)
		return;
	if (st->sock >= 0)
		close(st->sock);
	free(st->otlp_url);
	free(st->ocsf_file);
	free(st);
}

int stream_start(struct streamer **out, const struct stream_conf *c, const char *log_path,
		 const char *session, struct werr *e)
{
	*out = NULL;
	if (!c->otlp_url && !c->ocsf_file)
		return 0;
	struct streamer *st = xcalloc(1, sizeof *st);
	st->sock = -1;
	snprintf(st->session, sizeof st->session, "%s", session);
	struct sender s = { .log_fd = -1, .ocsf_fd = -1, .oc.product_version = c->version };
	if (gethostname(s.hostname, sizeof s.hostname - 1) == 0)
		s.oc.hostname = s.hostname;
	int sv[2] = { -1, -1 };
	int r = open_targets(&s, c, st, e);
	if (r == 0 && (s.log_fd = open(log_path, O_RDONLY | O_CLOEXEC)) < 0)
		r = werr_errno(e, "stream: cannot read the log %s", log_path);
	if (r == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		r = werr_errno(e, "stream: socketpair");
	pid_t pid = r == 0 ? fork() : -1;
	if (r == 0 && pid < 0)
		r = werr_errno(e, "stream: cannot start the sender");
	if (pid == 0) {
		/* a copy of the supervisor's memory, secrets included: no
		 * process of the user may read it (ptrace, /proc/PID/mem) */
		prctl(PR_SET_DUMPABLE, 0);
		close(sv[0]);
		s.sock = sv[1];
		sender_main(&s);
	}
	if (pid > 0)
		cpupin_release(pid); /* every CPU of the user's (cpupin.h) */
	if (s.t[T_OTLP].on)
		otlp_close(&s.x);
	if (s.t[T_OTLP].on)
		free((char *)s.shown[T_OTLP]);
	if (s.ocsf_fd >= 0)
		close(s.ocsf_fd);
	if (s.log_fd >= 0)
		close(s.log_fd);
	if (sv[1] >= 0)
		close(sv[1]);
	if (r < 0) {
		if (sv[0] >= 0)
			close(sv[0]);
		streamer_free(st);
		return -1;
	}
	st->pid = pid;
	st->sock = sv[0];
	*out = st;
	return 0;
}

/* Send m with wait_ms and read the answer line, within wait_ms and a
 * second more. */
static json_t *ask(struct streamer *st, char m, unsigned wait_ms)
{
	if (st->sock < 0)
		return NULL;
	unsigned char msg[5] = { (unsigned char)m };
	uint32_t ms = wait_ms;
	memcpy(msg + 1, &ms, sizeof ms);
	if (send(st->sock, msg, sizeof msg, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof msg)
		return NULL;
	char line[8192];
	size_t have = 0;
	double deadline = mono_ms() + wait_ms + 1000;
	while (have < sizeof line - 1) {
		double left = deadline - mono_ms();
		struct pollfd p = { .fd = st->sock, .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)left + 1) : 0;
		if (r < 0 && errno == EINTR) /* a signal during the session's end */
			continue;
		if (r <= 0)
			return NULL;
		ssize_t n = recv(st->sock, line + have, sizeof line - 1 - have, MSG_DONTWAIT);
		if (n <= 0)
			return NULL;
		have += (size_t)n;
		char *nl = memchr(line, '\n', have);
		if (nl)
			return json_loadb(line, (size_t)(nl - line), 0, NULL);
	}
	return NULL;
}

json_t *stream_report(struct streamer *st, unsigned wait_ms)
{
	return st ? ask(st, 'R', wait_ms) : NULL;
}

static void say_unsent(const struct streamer *st, json_t *rep, FILE *err)
{
	json_t *o = json_object_get(rep, "otlp");
	json_t *f = json_object_get(rep, "ocsf");
	json_int_t n;
	if (o && (n = json_integer_value(json_object_get(o, "unsent"))) > 0)
		fprintf(err, "warden: stream otlp %s: %lld events not sent (seq %lld on; the last error: %s); "
			     "the log holds them: `warden log export --format otlp %s --url URL` sends "
			     "the session again\n",
			json_string_value(json_object_get(o, "url")), (long long)n,
			(long long)json_integer_value(json_object_get(o, "first_unsent")),
			json_string_value(json_object_get(o, "error")) ?: "none", st->session);
	if (f && (n = json_integer_value(json_object_get(f, "unsent"))) > 0)
		fprintf(err, "warden: stream ocsf %s: %lld events not written (seq %lld on; the last error: %s); "
			     "the log holds them: `warden log export --format ocsf %s` writes the session "
			     "again\n",
			st->ocsf_file, (long long)n,
			(long long)json_integer_value(json_object_get(f, "first_unsent")),
			json_string_value(json_object_get(f, "error")) ?: "none", st->session);
}

void stream_end(struct streamer *st, unsigned wait_ms, FILE *err)
{
	if (!st)
		return;
	_cleanup_json_ json_t *rep = ask(st, 'E', wait_ms);
	if (rep)
		say_unsent(st, rep, err);
	else
		fprintf(err, "warden: stream: the sender did not say what it sent; the log holds every "
			     "event: `warden log export --format otlp|ocsf %s` sends the session again\n",
			st->session);
	kill(st->pid, SIGKILL);
	while (waitpid(st->pid, NULL, 0) < 0 && errno == EINTR)
		;
	streamer_free(st);
}
