/* log_cmd.c - `warden log list|show|verify|export|prune`: the session audit
 * logs as a table or JSON Lines, filtered, followed while a session runs,
 * their hash chains verified, exported as OCSF or OTLP (after the chain is
 * verified), and the old ones removed at the user's word. Reading and
 * checking live in src/audit (reader.h), the mappings in src/export/ocsf.h
 * and otlp.h. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../audit/escape.h"
#include "../control/client.h"
#include "../export/ocsf.h"
#include "../export/otlp.h"
#include "../audit/reader.h"
#include "../checkpoint/store.h"
#include "../common/clock.h"
#include "cli.h"
#include "cmdtab.h"
#include "config.h"
#include "log_help.h"

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("warden log: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	/* the synopsis, not the 60 lines after it, which would push the
	 * error off the screen */
	const char *end = strstr(log_usage, "\n\n");
	fwrite(log_usage, 1, end ? (size_t)(end - log_usage) + 1 : strlen(log_usage), stderr);
	fputs("warden log --help says more\n", stderr);
	return EXIT_USAGE;
}

static int fail(const struct werr *e)
{
	werr_print(e);
	return EXIT_WARDEN;
}

/* The log directory, opened. -1 with e filled, e->errnum ENOENT if there is
 * no directory yet. */
static int open_log_dir(char **dir, struct werr *e)
{
	*dir = audit_dir(user_home());
	if (!*dir)
		return werr_set(e, 0, "no audit log directory: HOME and XDG_STATE_HOME are not absolute paths");
	return audit_dir_open(*dir, e);
}

/* The log directory, opened, and the session `arg` names there (NULL: the
 * latest), for show and verify. */
static int open_session(char **dir, int *dfd, const char *arg, char **id, struct werr *e)
{
	*dfd = open_log_dir(dir, e);
	if (*dfd < 0)
		return -1;
	return audit_resolve_session(*dfd, *dir, arg, id, e);
}

/* The sessions of the log directory, for list and verify --all: 1 when
 * there are none (a missing directory is none too), saying so on stderr
 * unless quiet; 0 with the directory open and its sessions; -1 on an error
 * (printed). */
static int open_sessions_or_note(char **dir, int *dfd, struct audit_session_info **s, size_t *n,
				 bool quiet)
{
	struct werr e = { 0 };
	*dfd = open_log_dir(dir, &e);
	if (*dfd < 0 && e.errnum != ENOENT)
		return fail(&e), -1;
	if (*dfd >= 0 && audit_list_sessions(*dfd, *dir, s, n, &e) < 0)
		return fail(&e), -1;
	if (*dfd >= 0 && *n > 0)
		return 0;
	if (*dfd >= 0)
		audit_sessions_free(*s, *n);
	if (!quiet)
		fprintf(stderr, "warden: no sessions in %s\n", *dir);
	return 1;
}

/* The options of verify: one flag and --help. -1 to go on, else the exit
 * status (help printed, or a usage error). */
static int parse_flag(int argc, char **argv, const char *cmd, const char *path, bool *set)
{
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, path)) != -1) {
		if (c == 'f')
			*set = true;
		else if (c == 'h')
			return fputs(log_usage, stdout), 0;
		else
			return usage_error("bad option for %s", cmd);
	}
	return -1;
}

/* Display width of a display-safe string (code points). */
static int width(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static int finish_output(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		struct werr e;
		werr_errno(&e, "cannot write the output");
		return fail(&e);
	}
	return 0;
}

/* ---- list ------------------------------------------------------------------ */

static int parse_time_opt(const char *opt, const char *arg, struct audit_time *t)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct audit_time n = { .sec = now.tv_sec, .nsec = now.tv_nsec };
	if (audit_parse_time_arg(arg, &n, t) == 0)
		return 0;
	usage_error("%s: cannot read time '%s' (use 2026-11-21T12:00:00Z, '2026-11-21 12:00', "
		    "2026-11-21, @EPOCH, now, or 30s, 10m, 2h, 7d ago)", opt, arg);
	return -1;
}

/* What `log list` keeps: the sessions of a workspace (its real path, or
 * as named when it is gone), those started since a time. */
struct list_opts {
	bool json;
	char *ws;
	struct audit_time since;
	bool has_since;
};

/* The workspace --workspace names: its real path, or (one gone since its
 * sessions) the path itself when absolute. NULL: neither. */
static char *list_workspace(const char *dir)
{
	char buf[PATH_MAX];
	if (realpath(dir, buf))
		return xstrdup(buf);
	return dir[0] == '/' && !path_has_dot_components(dir + 1) ? xstrdup(dir) : NULL;
}

/* The options of list: -1 to go on, else the exit status. */
static int list_parse(int argc, char **argv, struct list_opts *o)
{
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "log list")) != -1) {
		if (c == 'f')
			o->json = true;
		else if (c == 'w' && !(o->ws = list_workspace(optarg)))
			return usage_error("--workspace: '%s' is no directory here (a workspace that "
					   "is gone: name it by its absolute path)", optarg);
		else if (c == 'S' && parse_time_opt("--since", optarg, &o->since) < 0)
			return EXIT_USAGE;
		else if (c == 'S')
			o->has_since = true;
		else if (c == 'h')
			return fputs(log_usage, stdout), 0;
		else if (c != 'w')
			return usage_error("bad option for list");
	}
	if (optind < argc)
		return usage_error("list takes no argument (got '%s')", argv[optind]);
	return -1;
}

/* Whether session s is one `log list` keeps: of the workspace (or of one
 * within it: a task's), started at or after --since. */
static bool list_keeps(const struct audit_session_info *s, const struct list_opts *o)
{
	if (o->has_since && (!s->has_time || audit_time_cmp(&s->t, &o->since) < 0))
		return false;
	if (!o->ws)
		return true;
	_cleanup_free_ char *ws = s->start ? json_get_bytes(s->start, "workspace") : NULL;
	return ws && (strcmp(ws, o->ws) == 0 || path_is_within(ws, o->ws));
}

/* The sessions kept moved to the front, the others freed: how many. */
static size_t list_filter(struct audit_session_info *s, size_t n, const struct list_opts *o)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (list_keeps(&s[i], o)) {
			s[k++] = s[i];
			continue;
		}
		free(s[i].id);
		json_decref(s[i].start);
		json_decref(s[i].end);
	}
	return k;
}



static json_t *list_json(const struct audit_session_info *s)
{
	json_t *o = json_object();
	json_t *start = s->start, *end = s->end;
	json_object_set_new(o, "session", json_string(s->id));
	json_object_set(o, "start", start ? json_object_get(start, "ts") : json_null());
	json_object_set(o, "end", end ? json_object_get(end, "ts") : json_null());
	json_t *ex = end ? json_object_get(end, "exit") : NULL;
	json_object_set(o, "exit", ex ? ex : json_null());
	json_object_set_new(o, "events", json_integer((json_int_t)s->events));
	json_t *argv = start ? json_object_get(start, "argv") : NULL;
	json_object_set(o, "argv", argv ? argv : json_null());
	json_t *ws = start ? json_object_get(start, "workspace") : NULL;
	json_object_set(o, "workspace", ws ? ws : json_null());
	/* as session.start wrote them (escape.h) */
	json_t *esc = json_array();
	for (size_t i = 0; i < 2; i++)
		if (json_is_escaped(start, i ? "workspace" : "argv"))
			json_array_append_new(esc, json_string(i ? "workspace" : "argv"));
	if (json_array_size(esc))
		json_object_set(o, "escaped", esc);
	json_decref(esc);
	return o;
}

static int log_list(int argc, char **argv)
{
	struct list_opts lo = { 0 };
	int rc = list_parse(argc, argv, &lo);
	_cleanup_free_ __attribute__((unused)) char *only_ws = lo.ws; /* freed on every way out */
	if (rc >= 0)
		return rc;
	bool json = lo.json;

	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	struct audit_session_info *s;
	size_t n;
	int got = open_sessions_or_note(&dir, &dfd, &s, &n, json);
	if (got != 0)
		return got < 0 ? EXIT_WARDEN : finish_output();
	n = list_filter(s, n, &lo);
	if (n == 0) {
		audit_sessions_free(s, 0);
		if (!json)
			fprintf(stderr, "warden: no session is of that workspace or started since that "
				"time\n");
		return finish_output();
	}
	if (json) {
		for (size_t i = 0; i < n; i++) {
			json_t *o = list_json(&s[i]);
			json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
			putchar('\n');
			json_decref(o);
		}
		audit_sessions_free(s, n);
		return finish_output();
	}
	/* Columns: the widths of the widest id and workspace. */
	char **ids = xcalloc(n + 1, sizeof *ids), **wss = xcalloc(n + 1, sizeof *wss);
	int wid = (int)strlen("SESSION"), wws = (int)strlen("WORKSPACE");
	for (size_t i = 0; i < n; i++) {
		ids[i] = audit_display_string(s[i].id, 200);
		_cleanup_free_ char *ws = s[i].start ? json_get_bytes(s[i].start, "workspace") : NULL;
		wss[i] = ws ? audit_display_string(ws, 120) : xstrdup("-");
		if (width(ids[i]) > wid)
			wid = width(ids[i]);
		if (width(wss[i]) > wws)
			wws = width(wss[i]);
	}
	printf("%-*s  %-19s  %4s  %6s  %-*s  %s\n", wid, "SESSION", "START (UTC)", "EXIT", "EVENTS",
		       wws, "WORKSPACE", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		char start[64] = "-", ex[32] = "-";
		if (s[i].has_time) {
			audit_format_time(&s[i].t, start, sizeof start);
			start[19] = '\0'; /* seconds are enough here */
		}
		json_t *x = s[i].end ? json_object_get(s[i].end, "exit") : NULL;
		if (json_is_integer(x))
			snprintf(ex, sizeof ex, "%lld", (long long)json_integer_value(x));
		json_t *av = s[i].start ? json_object_get(s[i].start, "argv") : NULL;
		char *cmd = json_is_array(av) ? audit_display_argv(av, json_is_escaped(s[i].start, "argv"))
					      : xstrdup("-");
		printf("%-*s  %-19s  %4s  %6lu  %-*s  %s\n", wid + (int)strlen(ids[i]) - width(ids[i]), ids[i],
		       start, ex, s[i].events, wws + (int)strlen(wss[i]) - width(wss[i]), wss[i], cmd);
		free(cmd);
		free(ids[i]);
		free(wss[i]);
	}
	free(ids);
	free(wss);
	audit_sessions_free(s, n);
	return finish_output();
}

/* The ids of the sessions whose control socket answers: running. */
static void running_sessions(struct strv *ids)
{
	_cleanup_strv_ struct strv dirs = { 0 }, paths = { 0 };
	control_client_dirs(&dirs);
	control_client_sockets(&dirs, &paths, CONTROL_SOCKETS_MAX);
	for (size_t i = 0; i < paths.n; i++) {
		_cleanup_close_ int fd = control_client_connect(paths.v[i]);
		const char *name = control_client_name(paths.v[i]);
		const char *dot = strrchr(name, '.');
		if (fd >= 0 && dot)
			strv_push_owned(ids, xasprintf("%.*s", (int)(dot - name), name));
	}
}

/* Whether session id runs: its control socket answers. */
static bool session_running(const char *id)
{
	_cleanup_strv_ struct strv ids = { 0 };
	running_sessions(&ids);
	return strv_contains(&ids, id);
}

/* ---- show ------------------------------------------------------------------ */

struct show {
	const char *id;
	bool json, follow;
	struct audit_filter filter;
	struct audit_chain chain;
	bool warned, ended;
};

static void warn_broken(struct show *sh)
{
	if (sh->warned || !sh->chain.broken)
		return;
	sh->warned = true;
	fflush(stdout);
	fprintf(stderr, "warden: warning: %s: line %lu: %s (see `warden log verify %s`)\n", sh->id,
		sh->chain.broken, sh->chain.why, sh->id);
}

static void print_event(const struct show *sh, const struct audit_line *l, json_t *ev)
{
	if (sh->json) {
		fwrite(l->text, 1, l->len, stdout);
		putchar('\n');
		return;
	}
	struct audit_time t;
	char when[64] = "?";
	if (audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &t) == 0)
		audit_format_time(&t, when, sizeof when);
	char *kind = audit_display_string(json_string_value(json_object_get(ev, "event")), 40);
	char *sum = audit_event_summary(ev);
	printf("%-23s  %6lld  %-*s  %s\n", when, (long long)json_integer_value(json_object_get(ev, "seq")),
	       13 + (int)strlen(kind) - width(kind), kind, sum);
	free(kind);
	free(sum);
}

/* Read and print every whole line there is now. -1 on a read error. */
static int show_available(struct show *sh, struct audit_reader *r, struct werr *e)
{
	struct audit_line l;
	int got;
	while (!sh->ended && (got = audit_reader_next(r, &l, !sh->follow, e)) == 1) {
		json_t *ev;
		audit_chain_feed(&sh->chain, &l, &ev);
		if (ev && audit_filter_match(&sh->filter, ev))
			print_event(sh, &l, ev);
		if (ev && strcmp(json_string_value(json_object_get(ev, "event")), "session.end") == 0)
			sh->ended = true;
		json_decref(ev);
	}
	return sh->ended ? 0 : got;
}

/* Following stops for a session that does not run and has no session.end
 * (warden was killed): no line for FOLLOW_DEAD_MS and its control socket
 * not answering, looked at twice that far apart (a session that has just
 * begun writes before its socket listens). */
#define FOLLOW_DEAD_MS 2000

/* Whether the session followed is gone without its end: the log quiet
 * since *quiet_since (reset when it grew: *size), its socket silent. */
static bool follow_gone(const struct show *sh, int fd, off_t *size, double *quiet_since,
			double *silent_since)
{
	struct stat st;
	double now = mono_ms();
	if (fstat(fd, &st) == 0 && st.st_size != *size) {
		*size = st.st_size;
		*quiet_since = now;
		*silent_since = 0;
		return false;
	}
	if (now - *quiet_since < FOLLOW_DEAD_MS)
		return false;
	if (session_running(sh->id)) {
		*silent_since = 0;
		return false;
	}
	if (!*silent_since)
		*silent_since = now;
	return now - *silent_since >= FOLLOW_DEAD_MS;
}

/* After what is there: wait for more (inotify on the open file), until a
 * session.end, a signal, or the session gone without one (follow_gone:
 * said, 1). Returns 0, 1, 128+signal, or -1. */
static int follow(struct show *sh, struct audit_reader *r, int fd, int sfd, struct werr *e)
{
	off_t size = -1;
	double quiet_since = mono_ms(), silent_since = 0;
	_cleanup_close_ int ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd >= 0) {
		/* The magic link names the very file we have open, not whatever
		 * is at its path now. */
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		if (inotify_add_watch(ifd, proc, IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB) < 0) {
			close(ifd);
			ifd = -1; /* no /proc: poll the file every 200 ms instead */
		}
	}
	for (;;) {
		if (show_available(sh, r, e) < 0)
			return -1;
		if (fflush(stdout) != 0)
			return werr_errno(e, "cannot write the output");
		if (sh->chain.broken)
			warn_broken(sh);
		if (sh->ended)
			return 0;
		if (follow_gone(sh, fd, &size, &quiet_since, &silent_since)) {
			fprintf(stderr, "warden log: session %s has no session.end and does not run (its "
					"control socket does not answer): warden was killed; `warden log "
					"verify %s` says more\n", sh->id, sh->id);
			return 1;
		}
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = ifd, .events = POLLIN } };
		int n = poll(p, ifd >= 0 ? 2 : 1, ifd >= 0 ? 1000 : 200);
		if (n < 0 && errno != EINTR)
			return werr_errno(e, "poll");
		if (n > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
				return 128 + (int)si.ssi_signo;
		}
		if (n > 0 && ifd >= 0 && (p[1].revents & POLLIN)) {
			char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
			while (read(ifd, buf, sizeof buf) > 0)
				;
		}
	}
}

/* show, options parsed: find the session, print it, maybe follow it. */
static int show_session(struct show *sh, const char *arg)
{
	struct werr e = { 0 };
	_cleanup_free_ char *dir = NULL, *id = NULL;
	_cleanup_close_ int dfd = -1;
	if (open_session(&dir, &dfd, arg, &id, &e) < 0)
		return fail(&e);
	_cleanup_close_ int fd = audit_log_open(dfd, dir, id, &e);
	if (fd < 0)
		return fail(&e);
	sh->id = id;
	audit_chain_init(&sh->chain, id);

	/* Signals that end --follow arrive on a signalfd, read between lines:
	 * output is never cut in the middle of one. */
	sigset_t mask, old;
	_cleanup_close_ int sfd = -1;
	if (sh->follow) {
		sigemptyset(&mask);
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGTERM);
		sigaddset(&mask, SIGHUP);
		sigprocmask(SIG_BLOCK, &mask, &old);
		sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sfd < 0) {
			werr_errno(&e, "signalfd");
			sigprocmask(SIG_SETMASK, &old, NULL);
			return fail(&e);
		}
	}
	if (!sh->json)
		printf("session %s\n%-23s  %6s  %-13s  %s\n", id, "TIME (UTC)", "SEQ", "EVENT", "DETAILS");

	struct audit_reader r;
	audit_reader_init(&r, fd);
	int st = sh->follow ? follow(sh, &r, fd, sfd, &e) : show_available(sh, &r, &e);
	audit_reader_free(&r);
	if (sh->follow)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (st < 0) {
		fflush(stdout);
		return fail(&e);
	}
	/* Interrupted, the lines still to come may settle a pending mismatch. */
	if (st == 0)
		audit_chain_finish(&sh->chain);
	warn_broken(sh);
	int rc = finish_output();
	return rc ? rc : st;
}

static int log_show(int argc, char **argv)
{
	struct show sh = { 0 };
	int c, rc = EXIT_WARDEN;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "log show")) != -1) {
		char *end;
		switch (c) {
		case 'j': sh.json = true; break;
		case 'f': sh.follow = true; break;
		case 'E':
			if (!optarg[0]) {
				rc = usage_error("--event: empty kind");
				goto out;
			}
			strv_push(&sh.filter.events, optarg);
			break;
		case 'P':
			errno = 0;
			sh.filter.pid = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || sh.filter.pid < 0) {
				rc = usage_error("--pid: not a process id: '%s'", optarg);
				goto out;
			}
			sh.filter.has_pid = true;
			break;
		case 'S':
		case 'U':
			if (parse_time_opt(c == 'S' ? "--since" : "--until", optarg,
					   c == 'S' ? &sh.filter.since : &sh.filter.until) < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			*(c == 'S' ? &sh.filter.has_since : &sh.filter.has_until) = true;
			break;
		case 'D':
			if (strcmp(optarg, "allow") != 0 && strcmp(optarg, "deny") != 0) {
				rc = usage_error("--decision: '%s' is neither allow nor deny", optarg);
				goto out;
			}
			sh.filter.decision = optarg;
			break;
		case 'T':
			sh.filter.tool = optarg;
			break;
		case 'h':
			fputs(log_usage, stdout);
			rc = 0;
			goto out;
		default:
			rc = usage_error("bad option for show");
			goto out;
		}
	}
	if (argc - optind > 1)
		rc = usage_error("show takes one SESSION (got also '%s')", argv[optind + 1]);
	else
		rc = show_session(&sh, optind < argc ? argv[optind] : NULL);
out:
	audit_filter_free(&sh.filter);
	return rc;
}

/* ---- verify ---------------------------------------------------------------- */

/* 0 intact (or a session that never started: nothing to verify), 1
 * broken, -1 error (e filled). Prints the verdict. */
static int verify_one(int dfd, const char *dir, const char *id, bool named, struct werr *e)
{
	_cleanup_close_ int fd = audit_log_open(dfd, dir, id, e);
	if (fd < 0)
		return -1;
	struct audit_chain ch;
	int r = audit_verify_log(fd, id, &ch, e);
	if (r < 0)
		return werr_wrap(e, "%s", id);
	if (r == 1 && ch.never[0]) {
		printf("%s: never started (no session.start record): %s\n", id, ch.never);
		return 0;
	}
	if (r == 1) {
		printf("%s: line %lu: %s\n", id, ch.broken, ch.why);
		return 1;
	}
	printf("%s%schain ok (%lu event%s)\n", named ? id : "", named ? ": " : "", ch.lines,
	       ch.lines == 1 ? "" : "s");
	if (!ch.ended && !named) {
		fflush(stdout);
		if (ch.failed)
			fprintf(stderr, "warden: note: %s's log stopped where warden could no longer write "
				"it (its last line, log.failed, says why); the sandbox was stopped then\n", id);
		else
			fprintf(stderr, "warden: note: %s has no session.end (yet): it is running, warden was "
				"killed, or its last lines were removed\n", id);
	}
	return 0;
}

static int log_verify(int argc, char **argv)
{
	bool all = false;
	int rc = parse_flag(argc, argv, "verify", "log verify", &all);
	if (rc >= 0)
		return rc;
	if (argc - optind > 1)
		return usage_error("verify takes one SESSION (got also '%s')", argv[optind + 1]);
	if (all && optind < argc)
		return usage_error("verify: --all and a SESSION ('%s') exclude each other", argv[optind]);

	struct werr e = { 0 };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	if (!all) {
		_cleanup_free_ char *id = NULL;
		if (open_session(&dir, &dfd, optind < argc ? argv[optind] : NULL, &id, &e) < 0)
			return fail(&e);
		int r = verify_one(dfd, dir, id, false, &e);
		if (r < 0)
			return fail(&e);
		int w = finish_output();
		return w ? w : r;
	}
	struct audit_session_info *s;
	size_t n;
	int got = open_sessions_or_note(&dir, &dfd, &s, &n, false);
	if (got != 0)
		return got < 0 ? EXIT_WARDEN : finish_output();
	bool broken = false, failed = false;
	for (size_t i = 0; i < n; i++) {
		int r = verify_one(dfd, dir, s[i].id, true, &e);
		if (r < 0) {
			fflush(stdout);
			werr_print(&e);
			failed = true;
		}
		broken |= r == 1;
	}
	audit_sessions_free(s, n);
	int w = finish_output();
	return w ? w : broken ? 1 : failed ? EXIT_WARDEN : 0;
}

/* ---- export ---------------------------------------------------------------- */

struct export {
	bool otlp;
	struct ocsf_ctx ocsf;
	struct otlp_export x;
	json_t *skipped;         /* OCSF: kind -> events with no class */
	unsigned long written;
};

/* One event out. -1 with e set. */
static int export_event(struct export *ex, json_t *ev, const struct audit_line *l, struct werr *e)
{
	if (ex->otlp)
		return otlp_add(&ex->x, ev, l->text, l->len, e);
	_cleanup_json_ json_t *o = ocsf_event(ev, &ex->ocsf);
	if (!o) {
		const char *k = json_string_value(json_object_get(ev, "event"));
		json_object_set_new(ex->skipped, k, json_integer(json_integer_value(json_object_get(ex->skipped, k)) + 1));
		return 0;
	}
	if (json_dumpf(o, stdout, JSON_COMPACT) < 0 || putchar('\n') == EOF)
		return werr_errno(e, "cannot write the output");
	ex->written++;
	return 0;
}

/* Export the first `lines` lines of session id (verified: it had that many
 * then), checking the chain again as they are read: 0, 1 when the file
 * changed under us (broken now), -1 on an error. */
static int export_session(struct export *ex, int dfd, const char *dir, const char *id, unsigned long lines,
			  struct werr *e)
{
	_cleanup_close_ int fd = audit_log_open(dfd, dir, id, e);
	if (fd < 0)
		return -1;
	struct audit_chain ch;
	audit_chain_init(&ch, id);
	struct audit_reader r;
	audit_reader_init(&r, fd);
	struct audit_line l;
	int got = 0, rc = 0;
	while (ch.lines < lines && (got = audit_reader_next(&r, &l, true, e)) == 1) {
		json_t *ev;
		bool ok = audit_chain_feed(&ch, &l, &ev) && ev && !ch.pending;
		if (!ok) {
			json_decref(ev);
			rc = werr_set(e, 0, "%s: line %lu changed while it was exported", id, l.lineno);
			break;
		}
		rc = export_event(ex, ev, &l, e);
		json_decref(ev);
		if (rc < 0)
			break;
	}
	if (rc == 0 && got < 0)
		rc = -1;
	audit_reader_free(&r);
	return rc;
}

struct export_args {
	const char *format, *url, *ca;
	unsigned long timeout_s;
};

/* The options of `log export`: -1 to go on, else the exit status. */
static int export_parse(int argc, char **argv, struct export_args *a, struct export *ex)
{
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "log export")) != -1) {
		char *end;
		switch (c) {
		case 'F': a->format = optarg; break;
		case 'u': a->url = optarg; break;
		case 'c': a->ca = optarg; break;
		case 't':
			errno = 0;
			a->timeout_s = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || a->timeout_s < 1 || a->timeout_s > 600)
				return usage_error("--timeout: not a number of seconds from 1 to 600: '%s'", optarg);
			break;
		case 'h': return fputs(log_usage, stdout), 0;
		default: return usage_error("bad option for export");
		}
	}
	if (!a->format)
		return usage_error("export: --format ocsf|otlp is required");
	if (strcmp(a->format, "otlp") == 0)
		ex->otlp = true;
	else if (strcmp(a->format, "ocsf") != 0)
		return usage_error("export: --format: '%s' is neither ocsf nor otlp", a->format);
	if (!ex->otlp && (a->url || a->ca))
		return usage_error("export: --url and --ca are for --format otlp (OCSF goes to stdout)");
	if (a->ca && !a->url)
		return usage_error("export: --ca without --url");
	return -1;
}

/* The n sessions named (none: the latest) resolved into ids[] and each
 * verified before anything is sent, its length into lines[]: 0, or the
 * exit status (said). */
static int export_verify(int dfd, const char *dir, char **names, int n, char **ids,
			 unsigned long *lines, struct werr *e)
{
	for (int i = 0; i < n; i++) {
		if (audit_resolve_session(dfd, dir, names ? names[i] : NULL, &ids[i], e) < 0)
			return fail(e);
		_cleanup_close_ int fd = audit_log_open(dfd, dir, ids[i], e);
		struct audit_chain ch;
		int r = fd < 0 ? -1 : audit_verify_log(fd, ids[i], &ch, e);
		if (r < 0) {
			werr_wrap(e, "%s", ids[i]);
			return fail(e);
		}
		if (r == 1) {
			fprintf(stderr, "warden: %s: line %lu: %s: the chain is broken, nothing exported "
				"(see `warden log verify %s`)\n", ids[i], ch.broken, ch.why, ids[i]);
			return 1;
		}
		lines[i] = ch.lines;
	}
	return 0;
}

/* The verified sessions out, and what was sent or skipped said: 0, or the
 * exit status. */
static int export_all(struct export *ex, const struct export_args *a, int dfd, const char *dir,
		      char **ids, const unsigned long *lines, int n, struct werr *e)
{
	if (ex->otlp && otlp_open(&ex->x, a->url, a->ca, (unsigned)a->timeout_s * 1000, WARDEN_VERSION, e) < 0)
		return fail(e);
	for (int i = 0; i < n; i++)
		if (export_session(ex, dfd, dir, ids[i], lines[i], e) < 0)
			return fail(e);
	if (ex->otlp && otlp_flush(&ex->x, e) < 0)
		return fail(e);
	int rc = finish_output();
	if (rc)
		return rc;
	if (ex->otlp && a->url)
		fprintf(stderr, "warden: exported %lu event%s in %lu request%s\n", ex->x.sent,
			ex->x.sent == 1 ? "" : "s", ex->x.requests, ex->x.requests == 1 ? "" : "s");
	if (!ex->otlp && json_object_size(ex->skipped)) {
		fprintf(stderr, "warden: not exported (no OCSF class):");
		const char *k;
		json_t *v;
		json_object_foreach(ex->skipped, k, v)
			fprintf(stderr, " %s %lld", k, (long long)json_integer_value(v));
		fputc('\n', stderr);
	}
	return 0;
}

static int log_export(int argc, char **argv)
{
	struct export_args a = { .timeout_s = 10 };
	struct export ex = { .ocsf = { .product_version = WARDEN_VERSION } };
	int rc = export_parse(argc, argv, &a, &ex);
	if (rc >= 0)
		return rc;

	struct werr e = { 0 };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = open_log_dir(&dir, &e);
	if (dfd < 0)
		return fail(&e);
	int n = argc - optind > 0 ? argc - optind : 1;
	char **ids = xcalloc((size_t)n, sizeof *ids);
	unsigned long *lines = xcalloc((size_t)n, sizeof *lines);
	rc = export_verify(dfd, dir, argc - optind > 0 ? argv + optind : NULL, n, ids, lines, &e);
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) == 0)
		ex.ocsf.hostname = host;
	ex.skipped = json_object();
	if (rc == 0)
		rc = export_all(&ex, &a, dfd, dir, ids, lines, n, &e);
	if (ex.otlp)
		otlp_close(&ex.x);
	json_decref(ex.skipped);
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(lines);
	return rc;
}

/* Does the store still keep a checkpoint of session id (its retention's
 * to drop: `checkpoint keep`)? warden diff, undo, apply and discard read
 * its log, a --review session's changes are only reached through it. */
static bool has_checkpoint(const struct store *st, const char *id)
{
	static const char *const kinds[] = { "start", "end" };
	for (size_t i = 0; st->fd >= 0 && i < ARRAY_LEN(kinds); i++)
		if (store_ref_exists(st, id, kinds[i]))
			return true;
	return false;
}

/* One session's log: removed (or said, dry) when last written before cut,
 * not running and its checkpoint no longer kept. 1 removed, 0 kept, -1
 * failed (said). */
static int prune_one(int dfd, const char *dir, const char *id, const struct audit_time *cut,
		     const struct strv *running, const struct store *ckpts, bool dry)
{
	_cleanup_free_ char *name = xasprintf("%s.jsonl", id);
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0; /* gone meanwhile, or not a log */
	struct audit_time t = { .sec = st.st_mtim.tv_sec, .nsec = st.st_mtim.tv_nsec };
	if (audit_time_cmp(&t, cut) >= 0)
		return 0;
	_cleanup_free_ char *shown = audit_display_string(id, 200);
	if (strv_contains(running, id)) {
		printf("kept %s: the session is running\n", shown);
		return 0;
	}
	if (has_checkpoint(ckpts, id)) {
		printf("kept %s: its checkpoint is kept (warden diff and undo read this log)\n", shown);
		return 0;
	}
	char when[48];
	audit_format_time(&t, when, sizeof when);
	if (!dry && unlinkat(dfd, name, 0) < 0) {
		fprintf(stderr, "warden: cannot remove %s/%s: %s\n", dir, name, strerror(errno));
		return -1;
	}
	printf("%s %s (last written %s)\n", dry ? "would remove" : "removed", shown, when);
	return 1;
}

static int log_prune(int argc, char **argv)
{
	const char *older = NULL;
	bool dry = false;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "log prune")) != -1) {
		if (c == 'o')
			older = optarg;
		else if (c == 'n')
			dry = true;
		else if (c == 'h')
			return fputs(log_usage, stdout), 0;
		else
			return usage_error("bad option for prune");
	}
	if (optind < argc)
		return usage_error("prune takes no argument (got '%s')", argv[optind]);
	if (!older)
		return usage_error("prune needs --older-than TIME (30d: thirty days ago)");
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct audit_time now = { .sec = ts.tv_sec, .nsec = ts.tv_nsec }, cut;
	if (audit_parse_time_arg(older, &now, &cut) < 0)
		return usage_error("--older-than: not a time: '%s' (2026-11-21, '2026-11-21 12:00', "
				   "@EPOCH, now, or 30s, 10m, 2h, 7d ago)", older);
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	struct audit_session_info *s;
	size_t n;
	int got = open_sessions_or_note(&dir, &dfd, &s, &n, false);
	if (got != 0)
		return got < 0 ? EXIT_WARDEN : finish_output();
	_cleanup_strv_ struct strv running = { 0 };
	running_sessions(&running);
	_cleanup_(store_closep) struct store ckpts = { .fd = -1 };
	_cleanup_free_ char *store_dir = store_default_path(user_home());
	struct werr e = { 0 };
	if (store_dir && store_open(&ckpts, store_dir, false, &e) < 0 && e.errnum != ENOENT)
		return fail(&e); /* cannot tell which logs the checkpoints need */
	size_t removed = 0;
	bool failed = false;
	for (size_t i = 0; i < n; i++) {
		int r = prune_one(dfd, dir, s[i].id, &cut, &running, &ckpts, dry);
		removed += r > 0;
		failed |= r < 0;
	}
	printf("%s %zu of %zu sessions' logs\n", dry ? "would remove" : "removed", removed, n);
	audit_sessions_free(s, n);
	int rc = finish_output();
	return failed ? EXIT_WARDEN : rc;
}

int cmd_log(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("a subcommand is needed (list, show, verify, export or prune)");
	const char *sub = argv[1];
	if (strcmp(sub, "list") == 0)
		return log_list(argc - 1, argv + 1);
	if (strcmp(sub, "show") == 0)
		return log_show(argc - 1, argv + 1);
	if (strcmp(sub, "verify") == 0)
		return log_verify(argc - 1, argv + 1);
	if (strcmp(sub, "export") == 0)
		return log_export(argc - 1, argv + 1);
	if (strcmp(sub, "prune") == 0)
		return log_prune(argc - 1, argv + 1);
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(log_usage, stdout);
		return 0;
	}
	return usage_error("unknown subcommand '%s'", sub);
}
