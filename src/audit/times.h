/* times.h - the times of audit logs: the log's own UTC timestamps, the
 * --since/--until arguments of `warden log show`, comparing and printing
 * them, and the time in a session id. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The time in a session id from audit_new_session_id ("20261121T123456Z-..."):
 * false when the id does not start with one. */
bool audit_session_id_time(const char *id, struct audit_time *t);
