/* audit.h - a session's event stream and its audit log: events go to the
 * stream's subscribers in order, the first of them the log writer, which
 * appends each as a JSON line carrying "prev", the SHA-256 of the previous
 * line, so an edited or removed line breaks the chain. Logs live under
 * $XDG_STATE_HOME/warden/ (default ~/.local/state/warden/), outside any
 * sandbox. The format itself is defined in events.h. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../common/err.h"
#include "events.h"

struct audit;

/* The log directory for this user: $XDG_STATE_HOME/warden or
 * $HOME/.local/state/warden (malloc'd). `home` is the invoking user's home. */
char *audit_dir(const char *home);

/* A new session id: UTC time plus 8 random hex digits, e.g.
 * "20261121T123456Z-1a2b3c4d" (buf at least 32 bytes). */
void audit_new_session_id(char *buf, size_t len);

/* Create the directory (0700) and the session's log file (0600, O_EXCL):
 * DIR/SESSION.jsonl; the stream of the session, with the log writer as its
 * first subscriber. */
int audit_open(struct audit **out, const char *dir, const char *session, struct werr *e);
/* The same in two steps: the stream (its path known, its subscribers
 * attached), then its file, made by audit_begin (0 when made already). An
 * event before the file is made fails (nothing happens unrecorded): the
 * session makes the file while init builds the sandbox, before its first
 * event (session.c). */
int audit_new(struct audit **out, const char *dir, const char *session, struct werr *e);
int audit_begin(struct audit *a, struct werr *e);
/* The log directory dir made and checked as audit_open does (yours, not a
 * symbolic link, not writable by others), before anything else is made
 * in it; 0, or -1 with e saying why. */
int audit_dir_check(const char *dir, struct werr *e);

/* Emit one event (ev.fields stolen), made by a constructor of events.h. */
int audit_emit_event(struct audit *a, struct event ev, struct werr *e);

/* (Every event comes from a constructor of events.h: the raw form, a kind
 * and any fields, is the audit layer's own: emit.h.) */

/* A subscriber of the stream: called with each event once it is stamped
 * (session, ts, seq), in the order of subscription. The log writer comes
 * first, so later subscribers see only events that are in the log. A
 * subscriber returning -1 (e filled) stops the event there and makes the
 * emission fail; when the writer refuses it, the event did not happen (its
 * seq is used by the next one). */
typedef int (*audit_subscriber_fn)(void *ctx, const struct event *ev, struct werr *e);
void audit_subscribe(struct audit *a, audit_subscriber_fn fn, void *ctx);
/* Remove the subscriber fn with ctx (a module that goes before the stream). */
void audit_unsubscribe(struct audit *a, audit_subscriber_fn fn, void *ctx);

/* The severity an alert without one is rated (a check other than the
 * detector's rules raised it: exec.denied, secret.phantom, ...): rate
 * names it ("low" to "critical", or NULL: none) and it is written into the
 * alert before the log and every subscriber see it, so that the record,
 * the exports and --fail-on read the severity the risk score counts. */
typedef const char *(*audit_rate_fn)(void *ctx, const json_t *fields);
void audit_rate_alerts(struct audit *a, audit_rate_fn rate, void *ctx);

/* Also hand every line written (n bytes, its newline left out) to also,
 * once it is in the file: `--log syslog` (src/export/syslogsend.h). The
 * file stays the record. */
void audit_also(struct audit *a, void (*also)(void *ctx, const struct event *ev, const char *line,
					     size_t n), void *ctx);

/* Number of events of one kind written so far. */
unsigned long audit_count(const struct audit *a, const char *event);

/* Counts per event kind as a JSON object (new reference). */
json_t *audit_counts(const struct audit *a);

/* fsync the log. */
int audit_sync(struct audit *a, struct werr *e);

/* Path of the session's log file. */
const char *audit_path(const struct audit *a);

/* The last line written: its SHA-256 (the next line's "prev") and its own
 * "prev", in hex (AUDIT_PREV_FIRST before any line). A subscriber after the
 * writer, handed an event, gets that event's line: what ties a copy of the
 * event elsewhere (src/export/journald.h) to its place in the chain. */
const char *audit_last_line_hash(const struct audit *a);
const char *audit_last_line_prev(const struct audit *a);

/* fsync and close; NULL is fine. */
void audit_close(struct audit *a);
/* The same, the log's fsync and close left to l (lateclose.h), its
 * writeback begun now: the caller frees what it holds meanwhile, and
 * waits for l (the fsync) before it ends. */
struct late_close;
void audit_close_late(struct audit *a, struct late_close *l);

/* Called once when the log cannot take an event (the disk full, an I/O
 * error, the file removed from its directory), with why; a last `log.failed`
 * line was written where it could be. Every event after is refused. */
typedef void (*audit_failure_fn)(void *ctx, const char *why);
void audit_on_failure(struct audit *a, audit_failure_fn fn, void *ctx);
/* `limit log`: once a line takes the log past bytes (text: as the profile
 * writes it), a `limit` event (kind "log") is written and fn called (the
 * supervisor ends the session); the log takes LIMIT_ROOM bytes more for
 * the session's end, then fails as a full disk makes it fail (EFBIG).
 * bytes 0: no limit. fn is called at once when the limit was reached
 * before it was set. */
void audit_set_limit(struct audit *a, unsigned long long bytes, const char *text);
void audit_on_limit(struct audit *a, audit_failure_fn fn, void *ctx);
/* Why the session was ended for `limit log` (the `limit` event's detail),
 * or NULL. */
const char *audit_limit_reached(const struct audit *a);

/* Why the log failed, or NULL. */
const char *audit_failed(const struct audit *a);
