/* stream.h - the audit stream sent live as the session runs (`stream otlp
 * URL [ca FILE]`, `stream ocsf FILE`, `warden run --stream otlp=URL
 * --stream ocsf=FILE`): to an OpenTelemetry collector as OTLP/HTTP JSON log
 * records (otlp.h's, the records `warden log export --format otlp` sends),
 * and/or appended to FILE as OCSF events, one JSON line each (ocsf.h's), for
 * a log shipper that tails it.
 *
 * The sender is a process of its own, forked when the log is opened, that
 * tails the session's log file: the log is the spool. Nothing of the
 * supervisor waits for it (the supervisor's only part is to start it, to ask
 * for its figures before session.end and to stop it after); it cannot slow
 * the sandbox's event loop, take its memory (it reads at most STREAM_READ_MAX
 * bytes of the log at once) or lose an event: what it has not sent stays in
 * the log, and each target keeps its own place in it (the byte offset of
 * the first line not sent). It reads what was appended every
 * STREAM_POLL_MS, sends it in batches of at most STREAM_BATCH_LINES lines
 * (each event in order, once: a batch that fails is read again and sent
 * again whole), and after a failure (no connection, a status other than
 * 2xx, no answer within STREAM_POST_MS, a file that cannot be written) waits
 * STREAM_BACKOFF_MIN_MS, doubling to STREAM_BACKOFF_MAX_MS, before it tries
 * again from the same place. An OCSF line the file took only in part is cut
 * off again.
 *
 * At the end: stream_report asks for each target's figures (after trying,
 * for at most wait_ms, to send what is left), which go into session.end as
 * its "stream" field: {"otlp": {"url", "sent", "unsent", "first_unsent",
 * "error"}, "ocsf": {"file", "sent", "skipped", "unsent", "first_unsent",
 * "error"}} (url: scheme, host and port only; "skipped": events OCSF has no
 * class for). stream_end then gives it wait_ms more for session.end itself,
 * stops it and says on stderr what was not sent, with the `warden log
 * export` line that sends it. */
#pragma once
#include <jansson.h>
#include <stdio.h>

#include "../common/err.h"

#define STREAM_POLL_MS 200
#define STREAM_BATCH_LINES 256
#define STREAM_READ_MAX (512 * 1024)
#define STREAM_POST_MS 5000
/* the least time an attempt is started with, near the end */
#define STREAM_POST_MIN_MS 100
#define STREAM_BACKOFF_MIN_MS 250
#define STREAM_BACKOFF_MAX_MS 4000
/* what the end of a session waits for the sender, each of the two times */
#define STREAM_END_WAIT_MS 2000
/* a POST under way when the supervisor asks for a report goes on this
 * long: one the collector has taken would otherwise be a failure, sent
 * again (a repeat). ask() waits a second past the report's time. */
#define STREAM_CANCEL_GRACE_MS 500

struct stream_conf {
	const char *otlp_url;   /* NULL: none */
	const char *otlp_ca;    /* PEM trust anchors beside the system's, or NULL */
	const char *ocsf_file;  /* NULL: none */
	const char *version;    /* warden's */
};

struct streamer;

/* The OCSF file before anything of the session is made: not a symbolic
 * link (never followed: one an agent left where it could write would take
 * warden's appends elsewhere), a regular file when it is there, and not in
 * the workspace (resolved), where the agent could rewrite the events or
 * put a link there for the next session. -1 with e filled, naming it. */
int stream_ocsf_check(const char *file, const char *workspace, struct werr *e);

/* Check the targets (the URL, the CA file, the OCSF file opened for
 * appending, made 0600 if missing) and start the sender on the log at
 * log_path (session id `session`). *out NULL when c names no target. */
int stream_start(struct streamer **out, const struct stream_conf *c, const char *log_path,
		 const char *session, struct werr *e);
/* The figures for session.end (new), after at most wait_ms more of
 * sending; NULL when the sender did not answer. */
json_t *stream_report(struct streamer *s, unsigned wait_ms);
/* Stop the sender (after at most wait_ms more of sending), say on err what
 * was not sent, and free s. NULL is fine. */
void stream_end(struct streamer *s, unsigned wait_ms, FILE *err);
