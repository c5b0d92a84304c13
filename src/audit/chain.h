/* chain.h - reading a session log: lines (following a growing file), each
 * line parsed as an event, the hash chain verified line by line, and the
 * filters of `warden log show`. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "../common/util.h"
#include "times.h"

/* A line longer than this is treated as broken (the writer bounds argv; no
 * real event comes near it). */
#define AUDIT_LINE_MAX (8u << 20)

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
	bool started;            /* line 1 is a session.start */
	bool ended;              /* the last line fed is a session.end */
	bool failed;             /* the last line fed is a log.failed: the log stopped there */
	unsigned long broken;    /* the first broken line, 0 while intact */
	char why[512];           /* display-safe */
	/* audit_verify_log: why the session never started, when its log holds
	 * nothing else (display-safe; "" when it started, or is broken some
	 * other way): empty, or one line, the log.failed of a first record the
	 * disk could not take, or a first line cut short. */
	char never[320];
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

/* A whole log as `warden log verify` judges it: audit_verify_fd, and line 1
 * a session.start (a 0-byte log has none, and is broken at line 1). A log
 * of a session that never started is broken at line 1 too, with c->never
 * saying so (`warden log verify` tells it from tampering by that). */
int audit_verify_log(int fd, const char *session, struct audit_chain *c, struct werr *e);

/* ---- filters ------------------------------------------------------------- */

struct audit_filter {
	struct strv events;      /* any of: the event name, or a dotted prefix of it ("session") */
	bool has_pid;
	long long pid;           /* the event's "pid" */
	bool has_since, has_until;
	struct audit_time since, until; /* inclusive */
	const char *decision;    /* the event's "decision", NULL = any */
	const char *tool;        /* a tool call's id: its tool events ("id") and the events
				    that carry it ("tool"), NULL = any */
};

bool audit_filter_match(const struct audit_filter *f, json_t *ev);
void audit_filter_free(struct audit_filter *f);
