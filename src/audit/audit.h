/* audit.h - the session audit log: JSON Lines, one event per line, each line
 * carrying "prev", the SHA-256 of the previous line, so an edited or removed
 * line breaks the chain. Logs live under $XDG_STATE_HOME/warden/ (default
 * ~/.local/state/warden/), outside any sandbox. */
#pragma once
#include <jansson.h>
#include <stdbool.h>

#include "../common/err.h"

struct audit;

/* The log directory for this user: $XDG_STATE_HOME/warden or
 * $HOME/.local/state/warden (malloc'd). `home` is the invoking user's home. */
char *audit_dir(const char *home);

/* A new session id: UTC time plus 8 random hex digits, e.g.
 * "20261121T123456Z-1a2b3c4d" (buf at least 32 bytes). */
void audit_new_session_id(char *buf, size_t len);

/* Create the directory (0700) and the session's log file (0600, O_EXCL):
 * DIR/SESSION.jsonl. */
int audit_open(struct audit **out, const char *dir, const char *session, struct werr *e);

/* Append one event. `fields` (stolen, may be NULL) holds the kind's fields;
 * the writer adds v, ts, session, seq, event in front and prev at the end. */
int audit_emit(struct audit *a, const char *event, json_t *fields, struct werr *e);

/* Also send every line to syslog (facility authpriv, ident "warden"), where
 * journald or a syslog daemon picks it up; the file stays the record. */
void audit_also_syslog(struct audit *a);

/* Number of events of one kind written so far. */
unsigned long audit_count(const struct audit *a, const char *event);

/* Counts per event kind as a JSON object (new reference). */
json_t *audit_counts(const struct audit *a);

/* fsync the log. */
int audit_sync(struct audit *a, struct werr *e);

/* Path of the session's log file. */
const char *audit_path(const struct audit *a);

/* fsync and close; NULL is fine. */
void audit_close(struct audit *a);
