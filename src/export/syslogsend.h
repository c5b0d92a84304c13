/* syslogsend.h - a copy of the audit log's lines for syslog (`warden run
 * --log syslog`): each line, as written to the file, one message on the
 * local syslog socket (/dev/log: rsyslog's, or journald's syslog socket),
 * facility authpriv, ident "warden" with the pid, level warning for an
 * alert and info for the rest, in the local socket's usual form
 * ("<PRI>Mmm dd hh:mm:ss warden[PID]: LINE").
 *
 * Written here rather than through syslog(3), whose send waits while the
 * daemon does not read (a stalled rsyslog stopped the whole session, its
 * kill too): sending never blocks the session (dgram.h); lines the daemon
 * cannot take yet wait in warden's queue, the end of the session waits for
 * them a bounded time, and one that cannot be sent is lost: counted in
 * session.end ("syslog": {"sent": N, "dropped": N}), said once on stderr.
 * Something must listen when the session starts, else `--log syslog` is
 * refused. The log file stays the record. */
#pragma once
#include <jansson.h>
#include <stddef.h>

#include "../audit/events.h"
#include "../common/err.h"

/* Where a syslog daemon listens. */
#define SYSLOG_SOCKET "/dev/log"
/* How long the end of a session waits for the daemon to take what waits. */
#define SYSLOG_END_WAIT_MS 1000

struct syslogsend;

/* Whether something listens on the syslog socket at path: 0, or -1 with e
 * saying what is wrong. */
int syslogsend_probe(const char *path, struct werr *e);

/* A sender to the syslog socket at path (SYSLOG_SOCKET), refused (-1, e
 * filled) when nothing listens there. */
int syslogsend_open(struct syslogsend **out, const char *path, struct werr *e);

/* The audit log's line (n bytes, no newline) of ev: sent, queued or lost
 * (the shape of audit_also's callback; ctx the sender). */
void syslogsend_line(void *ctx, const struct event *ev, const char *line, size_t n);

/* The end of a session, before session.end counts: send what waits
 * (SYSLOG_END_WAIT_MS) and count what is left as lost. */
void syslogsend_end(struct syslogsend *s);

/* {"sent": N, "dropped": N} (new reference). */
json_t *syslogsend_stats(const struct syslogsend *s);

/* Flush (SYSLOG_END_WAIT_MS), count what still waits as lost, close; NULL
 * is fine. */
void syslogsend_free(struct syslogsend *s);
