/* reader.h - reading the session logs that log.c writes: finding sessions in
 * the log directory, reading a log line by line, parsing and filtering its
 * events, verifying its hash chain, and one-line summaries that are safe to
 * print on a terminal. Nothing here follows a symbolic link in the log
 * directory or accepts a session id that is a path. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/err.h"
#include "../common/util.h"

/* A line longer than this is treated as broken (the writer bounds argv; no
 * real event comes near it). */
#define AUDIT_LINE_MAX (8u << 20)

/* ---- session ids and times ------------------------------------------- */

/* [A-Za-z0-9._-], 1 to 200 characters, not starting with '.' (so never "."
 * or "..", never a path). The same rule as the writer's. */
bool audit_session_id_valid(const char *s);

struct audit_time {
	int64_t sec;  /* seconds since the epoch, UTC */
	long nsec;
};

/* The log's own format, strictly: YYYY-MM-DDTHH:MM:SS[.F{1,9}]Z, a real
 * calendar date. 0, or -1 when malformed. */
int audit_parse_ts(const char *s, struct audit_time *t);

/* A --since/--until argument: the log format (fraction and Z optional, 'T'
 * or ' ' between date and time), YYYY-MM-DD, YYYY-MM-DDTHH:MM, all UTC;
 * @EPOCH; "now"; or a time ago: N followed by s, m, h or d ("10m"). */
int audit_parse_time_arg(const char *s, const struct audit_time *now, struct audit_time *t);

int audit_time_cmp(const struct audit_time *a, const struct audit_time *b);

/* "2026-11-21 12:48:38.221" (UTC, milliseconds). */
void audit_format_time(const struct audit_time *t, char *buf, size_t len);

/* ---- the log directory ------------------------------------------------- */

/* Open the log directory (O_DIRECTORY|O_NOFOLLOW). -1 with e->errnum ENOENT
 * when it does not exist yet (no session was ever logged). */
int audit_dir_open(const char *dir, struct werr *e);

/* Open DIR/ID.jsonl for reading: O_NOFOLLOW, never blocking on a FIFO, a
 * regular file or refused. `dir` is only for messages. */
int audit_log_open(int dfd, const char *dir, const char *id, struct werr *e);

struct audit_session_info {
	char *id;
	json_t *start;           /* the first line if it is a session.start event */
	json_t *end;             /* the last line if it is a session.end event */
	unsigned long events;    /* seq of the last complete line, else lines */
	struct audit_time t;     /* ts of the first line (when has_time) */
	bool has_time;
};

/* Every DIR/ID.jsonl with a valid id (symlinks and non-regular files skipped),
 * sorted by start time, then id. Reads the first and the last line of each. */
int audit_list_sessions(int dfd, const char *dir, struct audit_session_info **out, size_t *n,
			struct werr *e);
void audit_sessions_free(struct audit_session_info *s, size_t n);

/* The session `arg` names: NULL = the latest; an exact id; or a prefix of
 * exactly one id. *id is malloc'd. Errors say what is wrong (invalid id, no
 * such session, ambiguous prefix and its matches, no sessions at all). */
int audit_resolve_session(int dfd, const char *dir, const char *arg, char **id, struct werr *e);

/* ---- lines --------------------------------------------------------------- */

struct audit_reader {
	int fd;
	char *buf;
	size_t start, len, cap;  /* unread bytes are buf[start..len) */
	unsigned long lineno;    /* lines returned so far */
	bool skipping;           /* discarding the rest of a too-long line */
};

struct audit_line {
	const char *text;        /* the bytes, without the newline; valid until the next call */
	size_t len;
	unsigned long lineno;    /* from 1 */
	bool complete;           /* ended by a newline */
	bool too_long;           /* cut at AUDIT_LINE_MAX (the rest is skipped) */
};

void audit_reader_init(struct audit_reader *r, int fd);
/* 1 with the next line; 0 when no whole line is there yet (end of file);
 * -1 on a read error. With `flush`, a last line without its newline is
 * returned at end of file (complete = false); without, it waits for more
 * (following a live log). */
int audit_reader_next(struct audit_reader *r, struct audit_line *l, bool flush, struct werr *e);
void audit_reader_free(struct audit_reader *r); /* does not close fd */

/* ---- events and the chain ------------------------------------------------ */

/* Parse one line as an event: a JSON object (no duplicate keys) with v == 1,
 * ts in the log format, session a string, seq an integer >= 1, event a
 * non-empty string and prev 64 lowercase hex digits. NULL with `why` filled
 * (display-safe) otherwise. */
json_t *audit_parse_line(const char *text, size_t len, char *why, size_t whylen);

/* Chain verification, fed line by line. Line N must parse, carry the file's
 * session, seq N, a ts not earlier than line N-1's, and prev = SHA-256 of
 * line N-1's bytes (64 zeros for line 1). When a prev does not match, the
 * next line tells which of the two lines was changed, so a single edited
 * line is reported as itself, and a removed line as the line after the gap.
 * Nothing may follow a session.end (an appended line is reported). The
 * chain cannot tell that the last lines were removed: check `ended`. */
struct audit_chain {
	char session[208];
	unsigned long lines;     /* lines fed */
	char last_hash[65];      /* SHA-256 of the last line fed */
	struct audit_time last_ts;
	unsigned long pending;   /* a line whose prev did not match, 0 if none */
	bool ended;              /* the last line fed is a session.end */
	unsigned long broken;    /* the first broken line, 0 while intact */
	char why[512];           /* display-safe */
};

void audit_chain_init(struct audit_chain *c, const char *session);
/* Feed the next line. *ev (if ev) gets the parsed event, or NULL, whatever
 * the chain's state. Returns false once the chain is broken. */
bool audit_chain_feed(struct audit_chain *c, const struct audit_line *l, json_t **ev);
/* No more lines: settles a pending mismatch. False if broken. */
bool audit_chain_finish(struct audit_chain *c);

/* Verify a whole log. 0 intact (c->lines events), 1 broken (c->broken,
 * c->why), -1 read error. */
int audit_verify_fd(int fd, const char *session, struct audit_chain *c, struct werr *e);
int audit_verify_buffer(const char *buf, size_t len, const char *session, struct audit_chain *c);

/* ---- filters and summaries ----------------------------------------------- */

struct audit_filter {
	struct strv events;      /* any of: the event name, or a dotted prefix of it ("session") */
	bool has_pid;
	long long pid;           /* the event's "pid" */
	bool has_since, has_until;
	struct audit_time since, until; /* inclusive */
	const char *decision;    /* the event's "decision", NULL = any */
};

bool audit_filter_match(const struct audit_filter *f, json_t *ev);
void audit_filter_free(struct audit_filter *f);

/* A string made safe for a terminal: control characters, DEL, C1 controls,
 * bidirectional and invisible format characters escaped (\n, \x1b, \u202e);
 * quoted with "" when empty or holding spaces, quotes, '=', brackets or
 * escapes. At most `max` characters of s are shown, then "...". */
char *audit_display_string(const char *s, size_t max);

/* A JSON array of strings as a command line: words, quoted as above. */
char *audit_display_argv(json_t *argv);

/* One line describing the event's fields (not v, ts, session, seq, event,
 * prev): the kind's main fields first, key=value. Display-safe. */
char *audit_event_summary(json_t *ev);
