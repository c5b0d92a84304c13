/* format.h - audit events made safe to print on a terminal: strings with
 * control, bidirectional and invisible characters escaped, argv as a command
 * line, and one-line summaries of an event's fields (for `warden log`). */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A string made safe for a terminal: control characters, DEL, C1 controls,
 * bidirectional and invisible format characters escaped (\n, \x1b, \u202e);
 * quoted with "" when empty or holding spaces, quotes, '=', brackets or
 * escapes. At most `max` characters of s are shown, then "...". */
char *audit_display_string(const char *s, size_t max);

/* A JSON array of strings as a command line: words, quoted as above; esc:
 * its strings escaped (escape.h), shown as the bytes they stand for. */
char *audit_display_argv(json_t *argv, bool esc);

/* One line describing the event's fields (not v, ts, session, seq, event,
 * prev): the kind's main fields first, key=value. Display-safe; a field its
 * object lists in "escaped" shown as the bytes it stands for. */
char *audit_event_summary(json_t *ev);

/* The same escapes as audit_display_string, never quoted (for messages). */
char *audit_display_plain(const char *s, size_t max);
