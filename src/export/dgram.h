/* dgram.h - a sender of records to a local log daemon's datagram socket
 * (journald's native socket, syslog's /dev/log) that never blocks the
 * session: each record one datagram on a non-blocking socket; while the
 * daemon's queue is full (net.unix.max_dgram_qlen datagrams), records wait
 * in ours (DGRAM_QUEUE_MAX) and go, in order, before the next one; only the
 * end of a session waits for them, a bounded time (dgram_flush). A record
 * that cannot be sent (the daemon gone, both queues full) is lost: counted
 * (dgram_stats, in session.end), said once on stderr. A daemon that went
 * away and came back (a new socket at the path) is connected to again. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"

/* Records waiting for room in the daemon's queue at most. */
#define DGRAM_QUEUE_MAX 256

struct dgram_target {
	const char *path;  /* the socket, e.g. /dev/log */
	const char *name;  /* what the notes call it: "journald", "syslog" */
	const char *noun;  /* what the errors call the socket: "journal socket" */
	const char *hint;  /* what the errors ask: "is systemd-journald running?" */
	bool memfd;        /* a record too large for a datagram goes in a sealed
			    * memfd (journald's protocol), else it is lost */
};

struct dgram;

/* Whether something listens on t's socket: 0, or -1 with e saying what is
 * wrong (absent, not a socket, refused). */
int dgram_probe(const struct dgram_target *t, struct werr *e);

/* A sender to t's socket (its path copied; the other strings static),
 * refused (-1, e filled) as dgram_probe does when nothing listens there. */
int dgram_open(struct dgram **out, const struct dgram_target *t, struct werr *e);

/* One record of the event seq (of kind, static): sent now, or queued
 * behind those waiting, or lost (counted, said once). */
void dgram_send(struct dgram *d, const void *p, size_t n, unsigned long seq, const char *kind);

/* Send what waits, waiting for room up to timeout_ms. Once a wait ran out,
 * later flushes do not wait (the end waits once). */
void dgram_flush(struct dgram *d, int timeout_ms);

/* The end of a session: send what waits, waiting up to timeout_ms, and
 * count what is left as lost, so that session.end's counts are whole. */
void dgram_end(struct dgram *d, int timeout_ms);

/* {"sent": N, "dropped": N} (new reference). */
json_t *dgram_stats(const struct dgram *d);
unsigned long dgram_dropped(const struct dgram *d);

/* Flush (end_wait_ms), count what still waits as lost, close; NULL is fine. */
void dgram_free(struct dgram *d, int end_wait_ms);
