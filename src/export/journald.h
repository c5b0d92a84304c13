/* journald.h - a copy of the audit stream in the systemd journal
 * (`warden run --log journald`): each event one structured entry, sent in
 * journald's native protocol (no libsystemd) by a subscriber of the stream
 * placed after the log writer, so that only events in the log are sent and
 * each entry names its line in the chain.
 *
 * An entry carries MESSAGE (the kind and the event's key facts, one line),
 * PRIORITY (journald_priority), SYSLOG_IDENTIFIER=warden,
 * SYSLOG_FACILITY=10 (authpriv, as `--log syslog`), WARDEN_SESSION,
 * WARDEN_SEQ, WARDEN_TS, WARDEN_EVENT (the kind), WARDEN_PREV (the line's
 * "prev") and WARDEN_LINE_SHA256 (the line's own SHA-256, the next line's
 * "prev"); then each field of the event as WARDEN_<NAME>:
 *   - names: "WARDEN_" and the key, a-z upper-cased, every byte that is not
 *     A-Z or 0-9 made '_'; a nested object's fields as WARDEN_<KEY>_<SUBKEY>
 *     (to JOURNALD_DEPTH_MAX levels, deeper ones as JSON text); a name longer
 *     than journald takes (64) cut, with 8 hex digits of the whole name's
 *     SHA-256 at its end; a name equal to one of the fields above gets a
 *     '_' appended;
 *   - values: a string's bytes (a string the log escapes because it is not
 *     UTF-8 (escape.h) as its raw bytes), a number as the log writes it,
 *     true/false, an array as its JSON text (the journal neither keeps the
 *     order of a field given many times nor its repeats), an empty object as
 *     {}; null is left out. WARDEN_ESCAPED lists the arrays whose JSON text
 *     still holds escaped strings;
 *   - at most JOURNALD_FIELDS_MAX of them; past that WARDEN_FIELDS_LEFT_OUT
 *     says how many were not sent.
 * A value holding a newline goes in the protocol's binary-safe form.
 *
 * Sending never blocks the session (dgram.h): a datagram on a non-blocking
 * socket, an entry too large for one in a sealed memfd passed with
 * SCM_RIGHTS; entries journald cannot take yet wait in warden's queue
 * (DGRAM_QUEUE_MAX) and the end of the session waits for them a bounded
 * time; one that cannot be sent is lost: counted (journald_stats, in
 * session.end), said once on stderr. The log file stays the record. */
#pragma once
#include <jansson.h>
#include <stddef.h>

#include "../audit/audit.h"
#include "../audit/events.h"
#include "../common/bytebuf.h"
#include "../common/err.h"

/* Where journald listens for its native protocol. */
#define JOURNALD_SOCKET "/run/systemd/journal/socket"

/* The longest field name journald accepts. */
#define JOURNALD_NAME_MAX 64
/* Fields of an event sent at most (journald takes 1024 per entry). */
#define JOURNALD_FIELDS_MAX 512
/* Levels of nested objects flattened; deeper ones are JSON text. */
#define JOURNALD_DEPTH_MAX 8
/* How long the end of a session waits for journald to take what waits. */
#define JOURNALD_END_WAIT_MS 1000

struct journald;

/* Whether something listens on the journal socket at path: 0, or -1 with e
 * saying what is wrong (absent, not a socket, refused). */
int journald_probe(const char *path, struct werr *e);

/* A sender to the journal socket at path (JOURNALD_SOCKET), refused (-1, e
 * filled) when journald_probe finds nothing listening there. */
int journald_open(struct journald **out, const char *path, struct werr *e);

/* Subscribe j to a's stream (after the log writer): each event one entry
 * from then on. j must outlive a's events: free it after audit_close. */
void journald_attach(struct journald *j, struct audit *a);

/* Send what waits for room in journald's queue, waiting for it up to
 * timeout_ms: the end of a session, before session.end counts them. Once a
 * wait ran out, later flushes do not wait (the end waits once). */
void journald_flush(struct journald *j, int timeout_ms);

/* The end of a session, before session.end counts: flush
 * (JOURNALD_END_WAIT_MS) and count what still waits as lost. */
void journald_end(struct journald *j);

/* {"sent": N, "dropped": N}: the entries sent so far and those lost (new
 * reference). */
json_t *journald_stats(const struct journald *j);
unsigned long journald_dropped(const struct journald *j);

/* Flush (JOURNALD_END_WAIT_MS), count what still waits as lost, close;
 * NULL is fine. */
void journald_free(struct journald *j);
void journald_freep(struct journald **j);

/* ---- the encoding ------------------------------------------------------ */

/* The field name of prefix + key (prefix a valid name, e.g. "WARDEN_"),
 * mapped as above, into out. */
void journald_field_name(const char *prefix, const char *key, char out[JOURNALD_NAME_MAX + 1]);

/* Append one field to b: NAME=VALUE\n, or when the value holds a newline
 * NAME\n, its length as 64-bit little-endian, the bytes, \n. */
void journald_put_field(struct bytebuf *b, const char *name, const void *val, size_t n);

/* The syslog level of ev: an alert by its severity (critical 2, high 3,
 * else 4); log.failed and a session.end with an error 3; a refusal
 * (decision "deny"), kill, limit, risk, action and syscall.suppressed 4; a
 * syscall answered without being done (decision "ignore") 5; the rest 6. */
int journald_priority(const struct event *ev);

/* MESSAGE of ev: "KIND key=value ..." with the facts of its kind, on one
 * line (malloc'd). */
char *journald_message(const struct event *ev);

/* The entry of ev (stamped) appended to b; prev and hash: the line's, as
 * audit_last_line_prev and audit_last_line_hash give them (NULL: left
 * out). */
void journald_encode(struct bytebuf *b, const struct event *ev, const char *prev, const char *hash);
